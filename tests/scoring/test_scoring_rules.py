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


# --- A games manager's own preset: mistakes found by exploratory QA -----------------------

def cambodia_text():
    return (PRESET_DIR / "cambodia.toml").read_text()


def refused(path):
    with pytest.raises(PresetError) as err:
        load_preset(str(path))
    message = str(err.value)
    assert str(path) in message and "\n" not in message
    return message


@pytest.mark.parametrize("edit", [
    ('    "five_face",\n', ''),                                            # then appended after no_bull
    ('"bull_9", "bull_8",', '"bull_9", "bomb", "bull_8",'),               # between the bulls
])
def test_a_special_hand_ranked_below_niuniu_is_refused(tmp_path, edit):
    # Five face listed last was accepted and never reached (a five face hand is a niu niu
    # too): it scored Niu Niu x3 instead of Five Face x5.
    text = cambodia_text().replace(*edit)
    if edit[1] == '':
        text = text.replace('"no_bull",\n', '"no_bull",\n    "five_face",\n')
    else:
        text = text.replace("five_face = 5 }", "five_face = 5, bomb = 6 }")
    message = refused(write(tmp_path, text))
    assert "key 'hands.order'" in message and "below niuniu" in message and "before niuniu" in message


def test_five_small_limit_without_five_small_is_refused(tmp_path):
    # The limit was silently ignored: the author believes five small is played.
    message = refused(write(tmp_path, cambodia_text().replace("[hands]", "[hands]\nfive_small_limit = 9")))
    assert "key 'hands'" in message and 'add "five_small" to order' in message


@pytest.mark.parametrize("rate, says", [
    ("5", "500% of the winnings"), ('"5"', "500% of the winnings"), ("1", "100% of the winnings"),
    ('"0.5"', "50% of the winnings"), ('"0.25"', "25% of the winnings"),
    ('"5%"', "'5%' is a percentage"),
])
def test_a_commission_rate_written_as_a_percentage_says_how_to_write_it(tmp_path, rate, says):
    message = refused(write(tmp_path, cambodia_text().replace('rate = "0.05"', f"rate = {rate}")))
    assert "key 'commission.rate'" in message and says in message and '"0.05" for 5%' in message


@pytest.mark.parametrize("edit", [
    ('quantum = "0.01"', "quantum = 1e-30"),
    ('quantum = "0.01"', 'quantum = "0.0100000000000000000000000000000000"'),
    ('rate = "0.05"', 'rate = "0.0500000000000000000000000000000000001"'),
])
def test_a_rate_or_money_unit_with_too_many_places_is_refused_at_load(tmp_path, edit):
    # It loaded, and `niuniu settle` then died with decimal.InvalidOperation (a traceback).
    message = refused(write(tmp_path, cambodia_text().replace(*edit)))
    assert "more than 6 decimal places" in message


@pytest.mark.parametrize("edit, key", [
    (("niuniu: 3", "niuniu: 3\n      niuniu: 30"), "niuniu"),
    (("banker:\n", "commission:\n  rate: '0.5'\nbanker:\n"), "commission"),
])
def test_a_yaml_key_given_twice_is_refused_not_the_last_kept(tmp_path, edit, key):
    data = load_preset("cambodia").to_json()
    spec = {
        "name": "cam-yaml", "title": "t", "source": "s", "banking": "house", "main_bet": "double",
        "hands": {"order": data["order"]}, "compare": {"suits": data["suits"]},
        "bets": {"double": {"multipliers": {"default": 1, "niuniu": 3}}},
        "commission": {"rate": "0.05"}, "banker": {"selection": "house"},
    }
    text = yaml.safe_dump(spec, sort_keys=False)
    assert edit[0] in text
    path = write(tmp_path, text.replace(*edit, 1), "dup.yaml")
    message = refused(path)
    assert f"key {key!r} is given twice" in message
    assert load_preset(write(tmp_path, text, "ok.yaml")).multiplier("double", Category.NIUNIU) == 3


@pytest.mark.parametrize("edit, says", [
    (("niuniu = 3", 'niuniu = "x2"'), "(got 'x2'); write a whole number from 1 to 1000"),
    (("niuniu = 3", "niuniu = 1.5"), "(got 1.5); write a whole number from 1 to 1000"),
    (('suits = ["S", "H", "C", "D"]', 'suits = ["spades", "H", "C", "D"]'), "(got 'spades'); list S, H, D and C"),
    (('quantum = "0.01"', "quantum = 0"), '(got 0); write the smallest money unit as text, e.g. "0.01"'),
])
def test_a_bad_value_is_named_with_how_to_write_it(tmp_path, edit, says):
    assert says in refused(write(tmp_path, cambodia_text().replace(*edit)))


def test_a_yaml_word_read_as_another_type_says_to_quote_it(tmp_path):
    data = load_preset("ultimate").to_json()
    spec = {"name": "no", "title": "t", "source": "s", "banking": "house", "hands": {"order": data["order"]},
            "compare": {"suits": data["suits"]}, "bets": {"standard": {"multipliers": {"default": 1}}},
            "commission": {"rate": "0.05"}, "banker": {"selection": "house"}}
    text = yaml.safe_dump(spec).replace("name: 'no'", "name: no")
    assert "(got False); put the text in quotes" in refused(write(tmp_path, text, "u.yaml"))


@pytest.mark.parametrize("text, name", [("", "empty.toml"), ("# rules\n", "comment.toml"), ("", "empty.yaml")])
def test_an_empty_preset_file_says_so(tmp_path, text, name):
    message = refused(write(tmp_path, text, name))
    assert "is empty" in message and "cambodia.toml" in message and "missing key" not in message


def test_a_preset_saved_with_a_byte_order_mark_is_read(tmp_path):
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + cambodia_text().encode("utf-8"))   # Notepad's "UTF-8 with BOM"
    assert load_preset(path).rules_digest == load_preset("cambodia").rules_digest


def test_an_upper_case_suffix_is_a_file_not_a_preset_name(tmp_path, monkeypatch):
    write(tmp_path, cambodia_text().replace('name = "cambodia"', 'name = "upper"'), "house.TOML")
    monkeypatch.chdir(tmp_path)
    assert load_preset("house.TOML").name == "upper"
    with pytest.raises(PresetError, match="does not exist"):
        load_preset("other.YAML")


def test_a_bet_kind_name_is_ascii(tmp_path):
    message = refused(write(tmp_path, cambodia_text().replace("[bets.equal]", '[bets."équal"]')))
    assert "bets.équal: a bet kind name is lower-case letters" in message


def test_a_preset_file_reusing_a_builtin_name_is_pointed_out(tmp_path, capsys):
    from kiosk.cli import main

    other = write(tmp_path, cambodia_text().replace('rate = "0.05"', 'rate = "0.10"'), "house.toml")
    same = write(tmp_path, cambodia_text(), "copy.toml")
    assert main(["rules", "show", str(other)]) == 0
    out, err = capsys.readouterr()
    assert f"  file: {other}\n" in out
    assert f"preset file {other} is named 'cambodia' like the built-in preset, but its rules differ" in err
    assert main(["score", "--rules", str(other), "KS", "QS", "JS", "10S", "5H"]) == 0
    assert "its rules differ" in capsys.readouterr().err
    assert main(["score", "--rules", str(same), "KS", "QS", "JS", "10S", "5H"]) == 0   # same rules: no note
    assert capsys.readouterr().err == ""
    for name in PRESETS:                            # the built-ins show no file line and no note
        assert main(["rules", "show", name]) == 0
        out, err = capsys.readouterr()
        assert "  file:" not in out and err == ""
