"""Table files: what an installer writes, and the errors they get when it is wrong."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from scoring.rules import PRESET_DIR
from vision.table import (ConfigError, ZoneMap, dump_table_config, load_table_config, point_in_polygon,
                          table_config_from_dict, zone_box)

EXAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "tables" / "example-table.yaml"

GOOD_YAML = """\
table_id: t1
rules: cambodia
seats:
  - name: banker
    polygon: [[0.3, 0.0], [0.7, 0.0], [0.7, 0.4], [0.3, 0.4]]
  - name: 1
    polygon: [[0.0, 0.5], [0.5, 0.5], [0.5, 1.0], [0.0, 1.0]]
thresholds:
  k: 2
  n: 4
"""

GOOD_TOML = """\
table_id = "t1"
rules = "cambodia"

[thresholds]
k = 2
n = 4

[[seats]]
name = "banker"
polygon = [[0.3, 0.0], [0.7, 0.0], [0.7, 0.4], [0.3, 0.4]]

[[seats]]
name = "1"
polygon = [[0.0, 0.5], [0.5, 0.5], [0.5, 1.0], [0.0, 1.0]]
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load_error(tmp_path: Path, text: str, name: str = "table.yaml") -> str:
    path = write(tmp_path, name, text)
    with pytest.raises(ConfigError) as info:
        load_table_config(path)
    message = str(info.value)
    assert str(path) in message  # every error names the file
    return message


def test_example_table_is_banker_and_five_players_at_cambodia():
    config = load_table_config(EXAMPLE)
    assert config.rules == "cambodia"
    assert config.seat_names == ("banker", "1", "2", "3", "4", "5")
    assert config.camera.source == "picamera2"


def test_yaml_and_toml_give_the_same_config(tmp_path):
    from_yaml = load_table_config(write(tmp_path, "t.yaml", GOOD_YAML))
    from_toml = load_table_config(write(tmp_path, "t.toml", GOOD_TOML))
    assert from_yaml == from_toml
    assert from_yaml.seat_names == ("banker", "1")  # an integer seat name in YAML reads as the seat "1"
    assert (from_yaml.thresholds.k, from_yaml.thresholds.n) == (2, 4)


def test_unknown_key_is_named_with_the_allowed_keys(tmp_path):
    message = load_error(tmp_path, GOOD_YAML.replace("  k: 2", "  kk: 2"))
    assert "thresholds.kk: unknown key" in message
    assert "needs_confirmation_below" in message  # the allowed keys are listed


@pytest.mark.parametrize("name, text, key", [
    ("table.yaml", GOOD_YAML.replace("table_id: t1\n", "table_id: t1\ntable_id: t2\n"), "'table_id'"),
    ("table.yaml", GOOD_YAML.replace("  n: 4", "  n: 4\n  k: 3"), "'k'"),
    ("table.json", '{"table_id": "t1", "rules": "cambodia", "table_id": "t2", "seats": []}', "'table_id'"),
])
def test_a_key_given_twice_is_refused_not_the_last_one_kept(tmp_path, name, text, key):
    # YAML and JSON kept the last silently: a second table_id renamed the table in its log
    message = load_error(tmp_path, text, name)
    assert f"key {key} is given twice" in message and "keep one" in message


def test_unknown_top_level_key(tmp_path):
    message = load_error(tmp_path, GOOD_YAML + "colour: red\n")
    assert "colour: unknown key" in message


def test_point_outside_the_image_names_seat_and_point(tmp_path):
    message = load_error(tmp_path, GOOD_YAML.replace("[0.5, 1.0], [0.0, 1.0]]", "[0.5, 1.0], [0.0, 1.5]]"))
    assert "seats[1].polygon" in message
    assert "outside 0..1" in message


def test_k_larger_than_n_is_refused(tmp_path):
    message = load_error(tmp_path, GOOD_YAML.replace("k: 2", "k: 9"))
    assert "thresholds" in message and "k (9) cannot exceed n (4)" in message


@pytest.mark.parametrize("extra,needle", [
    ("bet_limits: {minimum: 100, maximum: 50}", "bet_limits: minimum 100 is above maximum 50; swap them"),
    ("bet_limits: {minimum: 10.005, maximum: 50}",
     "bet_limits.minimum 10.005 is not a whole number of the money unit 0.01 of preset 'cambodia'"),
    ("bet_limits: {minimum: '1e400', maximum: '1e401'}", "bet_limits.minimum: Input should be less than or equal"),
    ("bet_limits: {minimum: .inf, maximum: 50}", "bet_limits.minimum: Input should be a finite number"),
    ("bet_limits: {min: 1, maximum: 5}", "bet_limits.min: unknown key"),
    ("recordings: {min_free_gb: .inf}", "recordings.min_free_gb: Input should be a finite number"),
    ("recordings: {keep_days: 0}", "recordings.keep_days: Input should be greater than 0"),
    ("recordings: {keep_days: 7, min_keep_days: 30}", "recordings: min_keep_days (30) is more than keep_days (7)"),
    ("timezone: Asia/Phnom Penh", "timezone: 'Asia/Phnom Penh' is not a time zone"),
])
def test_bad_limits_retention_and_time_zone_are_one_line_each(tmp_path, extra, needle):
    assert needle in load_error(tmp_path, GOOD_YAML + extra + "\n")


def test_limits_are_checked_against_the_presets_money_unit_not_cents(tmp_path):
    """A dinar table posts limits in fils (0.001), which two decimals refused; a whole-riel
    table cannot take 25.5, which two decimals let through to the dealer's first stake."""
    cambodia = (PRESET_DIR / "cambodia.toml").read_text()
    for name, unit in (("fils", "0.001"), ("riel", "100")):
        (tmp_path / f"{name}.toml").write_text(cambodia.replace('name = "cambodia"', f'name = "{name}"')
                                               .replace('quantum = "0.01"', f'quantum = "{unit}"'))
    path = tmp_path / "fils.yaml"
    path.write_text(GOOD_YAML.replace("rules: cambodia", "rules: fils.toml")
                    + "bet_limits: {minimum: '0.125', maximum: '500.250'}\n")
    assert load_table_config(path).bet_limits.minimum == Decimal("0.125")
    message = load_error(tmp_path, GOOD_YAML.replace("rules: cambodia", "rules: riel.toml")
                         + "bet_limits: {minimum: 2550, maximum: 100000}\n")
    assert "bet_limits.minimum 2550 is not a whole number of the money unit 100" in message


def test_missing_banker_and_repeated_seat(tmp_path):
    no_banker = GOOD_YAML.replace("name: banker", "name: 2")
    assert "no 'banker' seat" in load_error(tmp_path, no_banker)
    twice = GOOD_YAML.replace("name: 1", "name: banker")
    assert "seat 'banker' is given twice" in load_error(tmp_path, twice)


def test_unknown_seat_name_and_missing_key(tmp_path):
    assert "seat name '9'" in load_error(tmp_path, GOOD_YAML.replace("name: 1", "name: 9"))
    assert "table_id: required key is missing" in load_error(tmp_path, GOOD_YAML.replace("table_id: t1\n", ""))


def test_unknown_rule_preset_is_refused(tmp_path):
    message = load_error(tmp_path, GOOD_YAML.replace("rules: cambodia", "rules: texas-holdem"))
    assert message.startswith(f"table file {tmp_path / 'table.yaml'}: rules:")
    assert "texas-holdem" in message


def test_collinear_polygon_is_refused(tmp_path):
    flat = GOOD_YAML.replace("[[0.0, 0.5], [0.5, 0.5], [0.5, 1.0], [0.0, 1.0]]", "[[0.0, 0.5], [0.2, 0.5], [0.4, 0.5]]")
    assert "no area" in load_error(tmp_path, flat)


def test_syntax_errors_say_where(tmp_path):
    assert "not valid YAML at line 3, column 6" in load_error(tmp_path, "table_id: t1\nrules: [cambodia\nseats: x\n")
    assert "not valid TOML" in load_error(tmp_path, "table_id = \n", "t.toml")
    assert "is empty" in load_error(tmp_path, "")
    assert "must be a mapping" in load_error(tmp_path, "- a\n- b\n")


def test_missing_file_and_unknown_format(tmp_path):
    with pytest.raises(ConfigError, match="does not exist; create one with `niuniu calibrate"):
        load_table_config(tmp_path / "nope.yaml")
    assert "unknown format '.ini'" in load_error(tmp_path, "x", "table.ini")


@pytest.mark.parametrize("suffix", [".yaml", ".toml", ".json"])
def test_written_config_reads_back_identical(tmp_path, suffix):
    config = load_table_config(EXAMPLE)
    path = tmp_path / f"out{suffix}"
    dump_table_config(config, path)
    assert load_table_config(path) == config


def test_point_in_polygon_counts_edges_as_inside():
    square = [(0, 0), (10, 0), (10, 10), (0, 10)]
    assert point_in_polygon((5, 5), square)
    assert point_in_polygon((10, 5), square)  # on an edge
    assert not point_in_polygon((10.1, 5), square)
    triangle = [(0, 0), (10, 0), (0, 10)]
    assert not point_in_polygon((6, 6), triangle)


def test_zone_box_pads_and_clips_to_the_image():
    assert zone_box([(0.25, 0.25), (0.75, 0.25), (0.75, 0.75)], 400, 200, padding=0.1) == (80, 40, 320, 160)
    assert zone_box([(0.0, 0.0), (1.0, 0.0), (1.0, 1.0)], 400, 200, padding=0.5) == (0, 0, 400, 200)


def test_zone_map_assigns_by_box_centre_and_first_zone_wins():
    config = table_config_from_dict({"table_id": "t", "rules": "cambodia", "seats": [
        {"name": "banker", "polygon": [[0, 0], [0.6, 0], [0.6, 0.5], [0, 0.5]]},
        {"name": "1", "polygon": [[0.4, 0], [1, 0], [1, 1], [0.4, 1]]},
    ]})
    zones = ZoneMap(config, 100, 100)
    assert zones.seat_of((10, 10, 20, 20)) == "banker"
    assert zones.seat_of((45, 10, 55, 20)) == "banker"      # overlap: first listed
    assert zones.seat_of((30, 40, 90, 90)) == "1"           # centre (60, 65)
    assert zones.seat_of((0, 80, 10, 90)) is None           # no zone


def test_a_preset_file_named_beside_the_table_file_is_found_from_any_directory(tmp_path, monkeypatch):
    """The service runs from /: `rules: house.toml` was read against the current directory."""
    from scoring.rules import PRESET_DIR
    from vision.table import load_table_config

    folder = tmp_path / "etc-niuniu"
    folder.mkdir()
    (folder / "house.toml").write_text((PRESET_DIR / "classic.toml").read_text().replace('name = "classic"',
                                                                                       'name = "house"'))
    (folder / "table.yaml").write_text(
        "table_id: t1\nrules: house.toml\nseats:\n"
        "  - {name: banker, polygon: [[0, 0], [1, 0], [1, 0.4], [0, 0.4]]}\n"
        "  - {name: '1', polygon: [[0, 0.5], [1, 0.5], [1, 1], [0, 1]]}\n")
    monkeypatch.chdir(tmp_path)
    config = load_table_config(folder / "table.yaml")
    assert config.rules == str(folder / "house.toml")


def test_a_preset_file_missing_beside_the_table_file_is_not_looked_for_elsewhere(tmp_path, monkeypatch):
    """QA47 docs F3: with no house.toml beside the table file, one in the current directory
    was read: `niuniu check` said OK from the folder holding it, and the service (run from
    /var/lib/niuniu) failed at start."""
    from scoring.rules import PRESET_DIR
    from vision.table import ConfigError, load_table_config

    folder = tmp_path / "etc-niuniu"
    folder.mkdir()
    (folder / "table.yaml").write_text(
        "table_id: t1\nrules: house.toml\nseats:\n"
        "  - {name: banker, polygon: [[0, 0], [1, 0], [1, 0.4], [0, 0.4]]}\n"
        "  - {name: '1', polygon: [[0, 0.5], [1, 0.5], [1, 1], [0, 1]]}\n")
    (tmp_path / "house.toml").write_text((PRESET_DIR / "classic.toml").read_text().replace('name = "classic"',
                                                                                         'name = "house"'))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as refused:
        load_table_config(folder / "table.yaml")
    assert str(folder / "house.toml") in str(refused.value)


def test_a_table_file_saved_in_latin_1_names_the_line_and_says_to_save_it_as_utf_8(tmp_path):
    """An editor's Latin-1 (QA51 operator L9): the codec's byte offset alone told the technician nothing."""
    text = GOOD_YAML + "# croupier: José\n"
    path = tmp_path / "table.yaml"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(ConfigError, match=r"table\.yaml is not UTF-8 text \(byte 0xe9 on line 11\); save it as UTF-8"):
        load_table_config(path)
    path.write_text(text, encoding="utf-8")
    assert load_table_config(path).table_id == "t1"
