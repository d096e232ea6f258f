"""Presets are validated data files; typos are refused with the file and key named."""

from decimal import Decimal

import pytest
import yaml

from scoring.categories import Category
from scoring.evaluate import evaluate
from scoring.rules import PRESET_DIR, Banking, PresetError, list_presets, load_preset

PRESETS = ["cambodia", "ultimate", "classic", "haodan", "grab-banker"]


def test_builtin_presets():
    assert list_presets() == PRESETS
    for name in PRESETS:
        preset = load_preset(name)
        assert preset.name == name and (PRESET_DIR / f"{name}.toml").is_file()
        assert preset.source and preset.title
        assert load_preset(name) is preset                     # cached: compiled tables are reused
        text = (PRESET_DIR / f"{name}.toml").read_text()
        assert "# Source:" in text and "# Interpretation" in text


def test_api_fields():
    cambodia = load_preset("cambodia")
    assert cambodia.banking is Banking.HOUSE and cambodia.bet_kinds == ("equal", "double")
    assert cambodia.commission_rate == Decimal("0.05") and cambodia.order[0] is Category.FIVE_FACE
    haodan = load_preset("haodan")
    assert haodan.banking == "player" and haodan.bet_kinds == ("standard", "points")
    assert haodan.order.index(Category.FIVE_FACE) < haodan.order.index(Category.BOMB)
    assert load_preset("grab-banker").five_small_limit == 9
    assert load_preset("classic").banker.rotate_at is Category.BULL_9


def write(tmp_path, text, name="custom.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def classic_text():
    return (PRESET_DIR / "classic.toml").read_text()


def test_custom_preset_by_path_changes_the_rules(tmp_path):
    # Same as classic but five face outranks bomb: the data alone changes the result.
    text = classic_text().replace('name = "classic"', 'name = "house-rules"')
    text = text.replace('    "bomb",\n    "five_face",', '    "five_face",\n    "bomb",')
    path = write(tmp_path, text)
    jjjjq = "JS JH JD JC QS"
    assert evaluate(jjjjq, "classic").category is Category.BOMB
    assert evaluate(jjjjq, str(path)).category is Category.FIVE_FACE
    assert load_preset(path).name == "house-rules"


def test_yaml_preset(tmp_path):
    data = load_preset("ultimate").to_json()
    spec = {
        "name": "ultimate-yaml", "title": data["title"], "source": "test", "banking": "house",
        "hands": {"order": data["order"]}, "compare": {"suits": data["suits"]},
        "bets": {"standard": {"multipliers": data["bets"]["standard"]["multipliers"]}},
        "commission": {"rate": 0.05}, "banker": {"selection": "house"},
    }
    path = write(tmp_path, yaml.safe_dump(spec), "u.yaml")
    preset = load_preset(str(path))
    assert preset.commission_rate == Decimal("0.05")       # a float in the file is read as typed
    assert evaluate("JS JH QS QH KS", preset).multiplier == 5


@pytest.mark.parametrize(
    "edit, message",
    [
        (('[hands]', '[hands]\nfive_smal_limit = 9'), "unknown key 'hands.five_smal_limit'"),
        (('decks = 1', 'decks = 1\ncolour = "red"'), "unknown key 'colour'"),
        (('"bull_9", "bull_8",', '"bull_8", "bull_9",'), "niuniu, bull_9, ..., bull_1, no_bull"),
        (('    "five_face",\n', ''), "bets.standard.multipliers.five_face"),
        (('"bull_2", "bull_1",', '"bull_2",'), "missing bull_1"),
        (('"bomb",\n', '"bomb",\n    "bomb",\n'), "bomb is listed twice"),
        (('suits = ["S", "H", "C", "D"]', 'suits = ["S", "H", "C"]'), "each of S, H, D, C exactly once"),
        (('rate = "0"', 'rate = "1.5"'), "key 'commission.rate'"),
        (('rotate_at = "bull_9"', ''), "banker.rotate_at"),
        (('selection = "rotation"', 'selection = "house"'), "player-banked preset uses"),
        (('banking = "player"', 'banking = "casino"'), "key 'banking'"),
        (('rounding = "half_up"', 'rounding = "bankers"'), "key 'commission.rounding'"),
        (('name = "classic"\n', ''), "missing key 'name'"),
        (('bull_7 = 2,', 'bull_7 = 0,'), "bets.standard.multipliers.bull_7"),
        (('rate = "0"', 'rate = "zero"'), "commission.rate"),
    ],
)
def test_invalid_presets_name_the_file_and_key(tmp_path, edit, message):
    old, new = edit
    text = classic_text()
    assert old in text
    path = write(tmp_path, text.replace(old, new, 1))
    with pytest.raises(PresetError) as err:
        load_preset(str(path))
    assert message in str(err.value) and str(path) in str(err.value)
    assert "\n" not in str(err.value)


def test_unreadable_or_unknown_presets(tmp_path):
    with pytest.raises(PresetError, match="unknown preset 'vegas'.*cambodia, ultimate"):
        load_preset("vegas")
    with pytest.raises(PresetError, match="does not exist"):
        load_preset(str(tmp_path / "missing.toml"))
    with pytest.raises(PresetError, match="invalid TOML"):
        load_preset(write(tmp_path, "name = [", "bad.toml"))
    with pytest.raises(PresetError, match="top level"):
        load_preset(write(tmp_path, "- a\n- b\n", "list.yaml"))
    with pytest.raises(PresetError, match="expected a .toml"):
        load_preset(write(tmp_path, "x", "preset.txt"))


def test_house_banked_preset_cannot_charge_itself(tmp_path):
    text = (PRESET_DIR / "cambodia.toml").read_text().replace("on_banker = false", "on_banker = true")
    with pytest.raises(PresetError, match="commission.on_banker"):
        load_preset(write(tmp_path, text))


def test_preset_json_lists_every_multiplier():
    data = load_preset("cambodia").to_json()
    assert data["bets"]["double"]["multipliers"]["niuniu"] == 3
    assert data["bets"]["double"]["multipliers"]["bull_6"] == 1
    assert data["commission"]["rate"] == "0.05"
