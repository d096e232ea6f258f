"""`niuniu calibrate` and `niuniu replay` on bad input (QA passes qa45 vision.md and cli.md).

The rule every test here checks: bad input never crashes and never loses data.  Everything
is validated before anything is written, so a failed command leaves the old table file and
its calibration picture as they were; each error is one line (what, where, how to fix) and
exits 2.  A folder of recordings or frames with one bad member still gives the rest.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml
from scripted_frames import coded_image, decode_index

from kiosk.cli import main
from scoring.settle import Bet
from vision.aim import view_path
from vision.calibrate import CalibrationError, seat_names, zones_from_json
from vision.pipeline import TablePipeline
from vision.record import find_recordings
from vision.replay import ReplayError, replay
from vision.round import RoundState
from vision.sources import Frame, ImageFilesSource
from vision.table import ConfigError, dump_table_config, load_table_config, table_config_from_dict


# The CLI tests' runner, and their autouse fixture that keeps calibrate from opening a window.
from test_vision_cli import headless, run  # noqa: E402,F401


def one_error(err: str, command: str = "calibrate") -> str:
    """The single error line a failed command printed (and nothing else on stderr)."""
    assert err.count("\n") == 1 and err.startswith(f"niuniu {command}: error: "), err
    return err.strip()


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture
def frame_png(tmp_path):
    path = tmp_path / "frame.png"
    image = np.full((480, 640, 3), 90, np.uint8)
    cv2.rectangle(image, (100, 100), (300, 250), (250, 250, 250), -1)
    cv2.imwrite(str(path), image)
    return path


@pytest.fixture
def calibrated(tmp_path, frame_png, capsys):
    """A table file with its calibration picture, as an installer left it."""
    out = tmp_path / "t1.yaml"
    code, _, err = run(capsys, "calibrate", "--source", frame_png, "--out", out, "--table-id", "vip-3",
                       "--rules", "classic", "--currency", "KHR", "--players", 3, "--even")
    assert code == 0, err
    assert view_path(out).is_file()
    return out


# ------------------------------------------------------------------ calibrate: nothing changes on failure


def test_preview_without_a_source_fails_before_the_table_file_or_its_picture_is_touched(calibrated, capsys):
    """QA 4 / H2: the check came after the file was rewritten and the picture deleted."""
    before = snapshot(calibrated.parent)
    code, _, err = run(capsys, "calibrate", "--out", calibrated, "--force", "--players", 3,
                       "--preview", calibrated.parent / "prev.jpg")
    assert code == 2 and "--preview needs --source" in one_error(err)
    assert snapshot(calibrated.parent) == before


@pytest.mark.parametrize("name", ["prev.txt", "prev", "a-folder"])
def test_a_preview_that_cannot_be_written_is_one_line_and_changes_nothing(calibrated, frame_png, capsys, name):
    """H2: --preview with a bad extension or naming a folder was a traceback, after writing."""
    (calibrated.parent / "a-folder").mkdir(exist_ok=True)
    before = snapshot(calibrated.parent)
    code, _, err = run(capsys, "calibrate", "--out", calibrated, "--force", "--players", 2, "--source", frame_png,
                       "--preview", calibrated.parent / name)
    line = one_error(err)
    assert code == 2 and f"--preview {calibrated.parent / name}" in line
    assert snapshot(calibrated.parent) == before


def test_a_write_that_fails_midway_leaves_the_old_files_and_no_tmp(calibrated, frame_png, capsys):
    """All or nothing: the preview cannot be written (its .tmp is taken by a folder), so the
    table file and the calibration picture stay as they were, and no .tmp is left."""
    preview = calibrated.parent / "prev.jpg"
    (calibrated.parent / "prev.jpg.tmp").mkdir()
    before = snapshot(calibrated.parent)
    code, _, err = run(capsys, "calibrate", "--out", calibrated, "--force", "--players", 2, "--even",
                       "--source", frame_png, "--preview", preview)
    assert code == 2 and "nothing was changed" in one_error(err)
    assert snapshot(calibrated.parent) == before
    assert sorted(p.name for p in calibrated.parent.glob("*.tmp")) == ["prev.jpg.tmp"]   # the folder, not ours


def test_out_naming_a_folder_is_refused_and_leaves_no_tmp(tmp_path, capsys):
    """L5: a failed write left d.yaml.tmp behind."""
    (tmp_path / "d.yaml").mkdir()
    code, _, err = run(capsys, "calibrate", "--out", tmp_path / "d.yaml", "--force")
    assert code == 2 and "is a folder" in one_error(err)
    assert not (tmp_path / "d.yaml.tmp").exists()


def test_dump_table_config_leaves_no_tmp_when_the_rename_fails(tmp_path):
    config = table_config_from_dict({"table_id": "t", "rules": "cambodia", "seats": [
        {"name": "banker", "polygon": [[0, 0], [1, 0], [1, 0.4]]},
        {"name": "1", "polygon": [[0, 0.5], [1, 0.5], [1, 1]]}]})
    (tmp_path / "t.yaml").mkdir()
    with pytest.raises(OSError):
        dump_table_config(config, tmp_path / "t.yaml")
    assert not (tmp_path / "t.yaml.tmp").exists()


# ------------------------------------------------------------------ calibrate: the replaced file's settings


def test_force_over_a_file_with_a_typo_refuses_and_keeps_it(calibrated, capsys):
    """QA 5: one bad key reset the table id, rules, currency and seats, exit 0."""
    text = calibrated.read_text().replace("currency: KHR", "currency: KHR\ncurency: KHR")
    calibrated.write_text(text)
    before = snapshot(calibrated.parent)
    code, _, err = run(capsys, "calibrate", "--out", calibrated, "--force")
    line = one_error(err)
    assert code == 2 and "curency: unknown key" in line and "move it aside to start afresh" in line
    assert snapshot(calibrated.parent) == before
    calibrated.write_text(text.replace("\ncurency: KHR", ""))       # fixed: the settings are kept
    code, out, err = run(capsys, "calibrate", "--out", calibrated, "--force")
    assert code == 0, err
    again = load_table_config(calibrated)
    assert (again.table_id, again.rules, again.currency, again.seat_names) == ("vip-3", "classic", "KHR",
                                                                             ("banker", "1", "2", "3"))


def test_a_bad_setting_given_again_on_the_command_line_is_replaced(calibrated, capsys):
    calibrated.write_text(calibrated.read_text().replace("rules: classic", "rules: no-such-preset"))
    code, _, err = run(capsys, "calibrate", "--out", calibrated, "--force")
    assert code == 2 and "rules:" in one_error(err)
    code, _, err = run(capsys, "calibrate", "--out", calibrated, "--force", "--rules", "classic")
    assert code == 0, err
    assert load_table_config(calibrated).table_id == "vip-3"


@pytest.mark.parametrize("breakage", ["off the picture", "overlapping"])
def test_broken_zones_are_what_recalibrating_replaces_the_settings_are_kept(calibrated, capsys, breakage):
    """Zones that no longer validate (off the picture, or overlapping since the check came)
    are the reason to calibrate again: the table id and the rest are kept (the old code
    kept nothing of a file that did not load)."""
    data = load_table_config(calibrated).model_dump(mode="json")
    if breakage == "overlapping":
        data["seats"][1]["polygon"] = data["seats"][0]["polygon"]
    else:
        data["seats"][1]["polygon"][0] = [1.5, 0.5]
    calibrated.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError):
        load_table_config(calibrated)
    code, out, err = run(capsys, "calibrate", "--out", calibrated, "--force")
    assert code == 0, err
    again = load_table_config(calibrated)
    assert (again.table_id, again.rules, again.currency) == ("vip-3", "classic", "KHR")
    assert again.seat_names == ("banker", "1", "2", "3") and "kept from the file it replaces: seats" in out


def test_seats_that_cannot_be_read_must_be_named(calibrated, capsys):
    data = load_table_config(calibrated).model_dump(mode="json")
    data["seats"] = "everyone"
    calibrated.write_text(yaml.safe_dump(data))
    before = snapshot(calibrated.parent)
    code, _, err = run(capsys, "calibrate", "--out", calibrated, "--force")
    assert code == 2 and "--players N or --seats" in one_error(err)
    assert snapshot(calibrated.parent) == before
    assert run(capsys, "calibrate", "--out", calibrated, "--force", "--players", 2)[0] == 0
    assert load_table_config(calibrated).table_id == "vip-3"


def test_no_empty_kept_line_when_every_setting_was_given(tmp_path, capsys):
    """L5: "kept from the file it replaces: " with nothing after it."""
    out = tmp_path / "t.yaml"
    out.write_text("table_id: a\nrules: cambodia\nseats:\n- {name: banker, polygon: [[0, 0], [1, 0], [1, 0.4]]}\n"
                   "- {name: '1', polygon: [[0, 0.5], [1, 0.5], [1, 1]]}\n")
    code, stdout, err = run(capsys, "calibrate", "--out", out, "--force", "--table-id", "b", "--rules", "classic",
                            "--players", 2, "--even")
    assert code == 0, err
    assert "kept from" not in stdout


# ------------------------------------------------------------------ calibrate: flags are named as flags


@pytest.mark.parametrize("argv,needle", [
    (["--seats", ""], "--seats '' names no seat"),
    (["--seats", "banker,,2"], "--seats 'banker,,2' has an empty seat name"),
    (["--seats", "banker"], "at least one player seat"),
    (["--seats", "banker,9"], "--seats 'banker,9': seat '9' is not one of"),
    (["--currency", "dollars"], "--currency 'dollars': write the three-letter ISO 4217 code"),
    (["--currency", ""], "--currency is empty"),
    (["--table-id", "vip 3"], "--table-id 'vip 3': use only letters"),
    (["--rules", "texas"], "--rules 'texas': unknown preset"),
])
def test_a_bad_flag_is_reported_as_the_flag_not_as_the_table_file(tmp_path, capsys, argv, needle):
    """QA 14 / L5: `--seats ''` was "table file c.yaml: seats: List should have at least 2
    items"; `--seats banker,,2` dropped the empty name; `--currency dollars` and `''` passed."""
    out = tmp_path / "c.yaml"
    code, _, err = run(capsys, "calibrate", "--out", out, *argv)
    line = one_error(err)
    assert code == 2 and needle in line and "table file" not in line
    assert not out.exists()


def test_a_lower_case_currency_flag_is_written_in_capitals(tmp_path, capsys):
    assert run(capsys, "calibrate", "--out", tmp_path / "c.yaml", "--currency", "usd")[0] == 0
    assert load_table_config(tmp_path / "c.yaml").currency == "USD"


def test_seat_names_refuse_an_empty_name():
    with pytest.raises(CalibrationError, match="empty seat name"):
        seat_names(seats="banker,1,")


def test_zones_mixing_pixels_and_fractions_say_so(tmp_path, capsys):
    """QA 14: all were converted as pixels, then "seats[1].polygon: the polygon has no area"."""
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps({"banker": [[10, 10], [500, 10], [500, 300], [10, 300]],
                                "1": [[0.1, 0.6], [0.5, 0.6], [0.5, 0.9], [0.1, 0.9]]}))
    with pytest.raises(CalibrationError, match=r"mixes units: seat banker in pixels, seat 1 in fractions"):
        zones_from_json(path, (1000, 800))
    code, _, err = run(capsys, "calibrate", "--out", tmp_path / "m.yaml", "--from-json", path, "--size", "1000x800")
    assert code == 2 and "mixes units" in one_error(err)


def test_help_names_the_rules_command_that_exists(capsys):
    with pytest.raises(SystemExit):
        main(["calibrate", "--help"])
    out = capsys.readouterr().out
    assert "niuniu rules list" not in out and "niuniu rules" in out


# ------------------------------------------------------------------ overlapping zones


BASE = {"table_id": "t", "rules": "cambodia"}


def seats(**zones):
    return [{"name": name.removeprefix("s"), "polygon": pts} for name, pts in zones.items()]


def rect(x1, y1, x2, y2):
    return [[x1, y1], [x2, y1], [x2, y2], [x1, y2]]


@pytest.mark.parametrize("zones,needle", [
    (dict(banker=rect(0.1, 0.1, 0.5, 0.5), s1=rect(0.1, 0.1, 0.5, 0.5)),
     "the zones of the banker and seat 1 overlap: 100% of the banker's zone"),
    (dict(banker=rect(0.3, 0, 0.7, 0.3), s1=rect(0, 0, 1, 1)),            # seat 1 swallows the banker
     "100% of the banker's zone lies in seat 1's"),
    (dict(banker=rect(0, 0, 1, 0.5), s1=rect(0.2, 0.1, 0.6, 0.45)),        # seat 1 under the banker: no card
     "100% of seat 1's zone lies in the banker's, and a card there counts to the banker alone"),
])
def test_zones_that_overlap_so_a_seat_cannot_win_a_card_are_refused(tmp_path, zones, needle):
    """QA 10: identical zones and a zone over the whole picture were accepted silently."""
    path = tmp_path / "t.json"
    path.write_text(json.dumps({**BASE, "seats": seats(**zones)}))
    with pytest.raises(ConfigError) as info:
        load_table_config(path)
    message = str(info.value)
    assert message.startswith(f"table file {path}: seats: ") and needle in message
    assert "redraw the zones" in message and "\n" not in message


def test_neighbours_sharing_a_border_strip_are_fine():
    config = table_config_from_dict({**BASE, "seats": seats(banker=rect(0, 0, 0.6, 0.5), s1=rect(0.5, 0, 1, 1))})
    assert config.seat_names == ("banker", "1")


def test_calibrate_from_json_names_the_zones_file_for_overlapping_zones(tmp_path, capsys):
    path = tmp_path / "overlap.json"
    path.write_text(json.dumps({"banker": rect(0.1, 0.1, 0.5, 0.5), "1": rect(0.1, 0.1, 0.5, 0.5),
                                "2": rect(0, 0, 1, 1)}))
    code, _, err = run(capsys, "calibrate", "--out", tmp_path / "ov.yaml", "--from-json", path)
    line = one_error(err)
    assert code == 2 and line.startswith(f"niuniu calibrate: error: zones file {path}: the zones of")
    assert not (tmp_path / "ov.yaml").exists()


# ------------------------------------------------------------------ table files: true/false only for switches


@pytest.mark.parametrize("extra,needle", [
    ({"thresholds": {"k": True}}, "thresholds.k: true is a switch value; this key takes a number"),
    ({"camera": {"fps": True}}, "camera.fps: true is a switch value"),
    ({"camera": {"rotate": False}}, "camera.rotate: false is a switch value"),
    ({"camera": {"mirror": "yes"}}, "camera.mirror: write true or false"),
    ({"thresholds": {"motion_gate": 1}}, "thresholds.motion_gate: write true or false"),
    ({"seats": seats(banker=[[True, 0], [0.5, 0], [0.5, 0.5]], s1=rect(0.5, 0.5, 1, 1))},
     "seats[0].polygon: a corner is two numbers"),
])
def test_true_false_where_a_number_goes_and_back_are_refused(tmp_path, extra, needle):
    """QA 14: `k: true` loaded as k=1, `camera.fps: true` as 1.0, `mirror: "yes"` as true."""
    data = {**BASE, "seats": seats(banker=rect(0, 0, 1, 0.4), s1=rect(0, 0.5, 1, 1)), **extra}
    with pytest.raises(ConfigError, match=f"^table file x.yaml: {needle}".replace("[", r"\[").replace(".", r"\.")):
        table_config_from_dict(data, "x.yaml")


def test_a_table_files_currency_is_kept_as_written_or_in_capitals(tmp_path):
    """A file from before codes were checked must still start its kiosk after an upgrade."""
    data = {**BASE, "seats": seats(banker=rect(0, 0, 1, 0.4), s1=rect(0, 0.5, 1, 1))}
    assert table_config_from_dict({**data, "currency": "usd"}, "x.yaml").currency == "USD"
    assert table_config_from_dict({**data, "currency": "HK$"}, "x.yaml").currency == "HK$"


# ------------------------------------------------------------------ replay


# The replay tests' table and rounds: a recording made by the pipeline, replayed.
from test_record_replay import CONFIG, ROUND_A, ROUND_B, dealing  # noqa: E402


class ScriptedDetector:
    name = "scripted-v1"

    def __init__(self, script):
        self.script, self.calls = script, []

    def detect(self, image, regions=None):
        index = decode_index(image)
        self.calls.append(index)
        return self.script[index] if index < len(self.script) else []


def settle_when_complete(machine):
    if machine.state == RoundState.complete:
        machine.settle({"1": Bet("1", Decimal("100"), "double"), "2": Bet("2", Decimal("20"), "equal")},
                       ts=machine.last_ts + 0.05, actor="dealer7")


def record(script, data_dir, config=CONFIG):
    pipeline = TablePipeline(config, None, ScriptedDetector(script), data_dir=data_dir)
    for i in range(len(script)):
        pipeline.step(Frame(coded_image(i), 1_700_000_000.0 + i * 0.1, i))
        settle_when_complete(pipeline.machine)
    pipeline.stop()
    return find_recordings(data_dir)


@pytest.fixture(scope="module")
def two_rounds(tmp_path_factory):
    root = tmp_path_factory.mktemp("rec")
    record(dealing(ROUND_A) + dealing(ROUND_B), root)
    return root


def copy_rounds(two_rounds, tmp_path) -> list[Path]:
    import shutil

    dest = tmp_path / "day"
    shutil.copytree(two_rounds, dest)
    return find_recordings(dest)


def test_a_new_deal_soon_after_the_sweep_replays_as_it_was_settled(tmp_path, capsys):
    """QA M11: round A's cards, swept just before round B was dealt, lie in B's pre-roll; a
    replay's machine, starting idle, dealt them again as a phantom round (alerts, DIFFERS).
    The live machine spent those frames on round A; the replay's machine now starts where
    the recording says round B started."""
    config = CONFIG.with_thresholds(remove_after_s=0.3)
    first, second = record(dealing(ROUND_A, tail=6) + dealing(ROUND_B), tmp_path, config)
    lines = [json.loads(line) for line in (second / "detections.jsonl").read_text().splitlines()]
    cards_b = set(ROUND_B["banker"].split())
    assert any(d["card"] in ROUND_A["banker"].split() for line in lines for d in line["detections"])  # pre-roll
    rounds = replay(tmp_path)
    assert [r["round"] for r in rounds] == [1, 2]
    assert all(r["matches_recording"] for r in rounds), [r["differences"] for r in rounds]
    assert set(rounds[1]["seats"]["banker"]) == cards_b and rounds[1]["alerts"] == []
    code, out, _ = run(capsys, "replay", second)
    assert code == 0 and out.count("Round ") == 1 and "ALERT" not in out


def test_settlement_money_written_by_an_older_release_is_not_a_difference(two_rounds, tmp_path):
    """Recordings made before amounts were written to the money unit's places ("100" where
    today writes "100.00") pay the same; the same amount must not read as tampering."""
    folder = copy_rounds(two_rounds, tmp_path)[0]
    events = folder / "events.jsonl"
    text = events.read_text()
    assert '"gross":"200.00"' in text
    events.write_text(text.replace('"gross":"200.00"', '"gross":"200"'))
    [same] = replay(folder)
    assert same["matches_recording"], same["differences"]
    events.write_text(text.replace('"gross":"200.00"', '"gross":"201.00"'))
    [changed] = replay(folder)
    assert not changed["matches_recording"]


def test_a_recording_without_meta_json_is_called_damaged_not_read_as_frames(two_rounds, tmp_path, capsys):
    """QA 6: the key frames were read as a 6 fps frame folder: a made-up round, exit 0."""
    folder = copy_rounds(two_rounds, tmp_path)[0]
    (folder / "meta.json").unlink()
    dump_table_config(CONFIG, tmp_path / "table.yaml")
    with pytest.raises(ReplayError, match="holds detections.jsonl and events.jsonl but no meta.json: the "
                                          "recording is damaged; restore meta.json"):
        replay(folder, config=tmp_path / "table.yaml", detector=ScriptedDetector([]))
    code, out, err = run(capsys, "replay", folder, "--config", tmp_path / "table.yaml")
    assert code == 2 and out == "" and "no meta.json" in one_error(err, "replay")


def test_one_damaged_recording_does_not_hide_the_others(two_rounds, tmp_path, capsys):
    """QA 8: a cut-off meta.json in one round of a day stopped the replay of the whole day."""
    first, second = copy_rounds(two_rounds, tmp_path)
    (first / "meta.json").write_text('{"format": "niuniu-round/1",\n')
    damaged = tmp_path / "day" / "t1" / "20990101T000000Z-round-0099"
    damaged.mkdir(parents=True)
    (damaged / "events.jsonl").write_text("")
    rounds = replay(tmp_path / "day")
    good = [r for r in rounds if "error" not in r]
    assert [r["round"] for r in good] == [2] and good[0]["matches_recording"]
    errors = {r["recording"]: r["error"] for r in rounds if "error" in r}
    assert set(errors) == {str(first), str(damaged)}
    code, out, err = run(capsys, "replay", tmp_path / "day")
    assert code == 2 and "Round 2: settled" in out and "replay matches the recording" in out
    assert err.count("\n") == 2 and all(line.startswith("niuniu replay: error: ") for line in err.splitlines())
    code, out, _ = run(capsys, "replay", tmp_path / "day", "--json")
    assert code == 2 and {r.get("recording") for r in json.loads(out) if "error" in r} == set(errors)


@pytest.mark.parametrize("shape", ["a list", "a round number that is not one"])
def test_a_meta_json_of_the_wrong_shape_is_one_error(two_rounds, tmp_path, capsys, shape):
    folder = copy_rounds(two_rounds, tmp_path)[0]
    meta = json.loads((folder / "meta.json").read_text())
    if shape == "a list":
        meta = [1, 2]
    else:
        meta["round_no"] = "x"
    (folder / "meta.json").write_text(json.dumps(meta))
    code, _, err = run(capsys, "replay", folder)
    assert code == 2 and "meta.json" in one_error(err, "replay")


def test_an_event_line_that_is_not_an_object_is_one_error(two_rounds, tmp_path, capsys):
    folder = copy_rounds(two_rounds, tmp_path)[0]
    (folder / "events.jsonl").write_text("5\n" + (folder / "events.jsonl").read_text())
    code, _, err = run(capsys, "replay", folder)
    assert code == 2 and "events.jsonl: entry 1 is not a JSON object" in one_error(err, "replay")


@pytest.fixture
def frame_folder(tmp_path):
    script = dealing(ROUND_A) + dealing(ROUND_B)
    frames = tmp_path / "frames"
    frames.mkdir()
    for i in range(len(script)):
        cv2.imwrite(str(frames / f"{i:05d}.png"), coded_image(i))
    dump_table_config(CONFIG, frames / "table.yaml")
    return frames, script


def test_an_unreadable_frame_is_skipped_as_a_dropped_frame_not_every_round(frame_folder, capsys, monkeypatch):
    """QA 9: one broken frame near the end threw away the rounds read before it."""
    frames, script = frame_folder
    broken = frames / f"{len(script) - 3:05d}.png"
    broken.write_text("broken")
    detector = ScriptedDetector(script)
    rounds = replay(frames, detector=detector)
    assert [r["seats"]["banker"] for r in rounds if "round" in r] == [ROUND_A["banker"].split(),
                                                                      ROUND_B["banker"].split()]
    assert [r for r in rounds if "error" in r] == [
        {"frame": str(broken), "error": f"frame {broken} is not a readable image (JPEG, PNG, BMP, ...); skipped, "
                                        "as a dropped frame"}]
    assert len(script) - 3 not in detector.calls and len(detector.calls) == len(script) - 1

    monkeypatch.setattr("vision.replay.load_detector", lambda model: ScriptedDetector(script))
    code, out, err = run(capsys, "replay", frames)
    assert code == 2 and out.count("Round ") == 2 and str(broken) in one_error(err, "replay")


def test_a_skipped_frame_keeps_the_next_frames_number_and_time(tmp_path):
    for i in range(4):
        cv2.imwrite(str(tmp_path / f"{i}.png"), coded_image(i))
    (tmp_path / "1.png").write_text("broken")
    source = ImageFilesSource.from_folder(tmp_path, fps=10.0, skip_unreadable=True)
    frames = list(source.frames())
    assert [(f.frame_no, round(f.ts, 2), decode_index(f.image)) for f in frames] == [(0, 0.0, 0), (2, 0.2, 2),
                                                                                    (3, 0.3, 3)]
    assert [p.name for p, _ in source.skipped] == ["1.png"]


def test_a_gif_in_a_frame_folder_is_read_not_skipped(tmp_path):
    """QA 14: `.gif` was read when named, skipped without a word in a folder."""
    from PIL import Image

    cv2.imwrite(str(tmp_path / "0.png"), coded_image(0))
    Image.fromarray(coded_image(1)[:, :, ::-1]).save(tmp_path / "1.gif")
    source = ImageFilesSource.from_folder(tmp_path)
    assert [p.name for p in source.paths] == ["0.png", "1.gif"]
    assert [decode_index(f.image) for f in source.frames()] == [0, 1]


def test_an_empty_folder_says_so_before_asking_for_a_table_file(tmp_path, capsys):
    """QA 14: `replay empty` first asked for --config, and only then said there was nothing."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("x")
    for folder in ("empty", "notes"):
        code, _, err = run(capsys, "replay", tmp_path / folder)
        line = one_error(err, "replay")
        assert code == 2 and "holds no recording (meta.json), no video and no images" in line
        assert "--config" not in line


@pytest.mark.parametrize("fps", ["-6", "nan", "0", "inf", "six"])
def test_fps_must_be_a_frame_rate_above_zero(frame_folder, capsys, fps):
    """QA 11: a negative --fps ran time backwards (no card ever left: the alerts vanished)."""
    frames, _ = frame_folder
    with pytest.raises(SystemExit) as info:
        main(["replay", str(frames), f"--fps={fps}"])
    assert info.value.code == 2
    assert f"argument --fps: {fps} is not a frame rate above 0" in capsys.readouterr().err
    with pytest.raises(ReplayError, match="give a frame rate above 0"):
        replay(frames, fps=-6.0, detector=ScriptedDetector([]))


def test_a_recording_made_with_zones_that_now_overlap_still_replays(tmp_path):
    """The overlap check is new: a table that ran a round before it must still replay that
    round as it ran (the recording's own table is read as recorded)."""
    overlapping = table_config_from_dict({**CONFIG.model_dump(mode="json"), "seats": [
        {"name": "banker", "polygon": [[0, 0], [1, 0], [1, 0.5], [0, 0.5]]},
        {"name": "1", "polygon": [[0, 0.5], [0.5, 0.5], [0.5, 1], [0, 1]]},
        {"name": "2", "polygon": [[0.5, 0.5], [1, 0.5], [1, 1], [0.5, 1]]},
        {"name": "3", "polygon": [[0.55, 0.55], [0.95, 0.55], [0.95, 0.95], [0.55, 0.95]]},   # inside seat 2
    ]}, as_recorded=True)
    with pytest.raises(ConfigError, match="overlap"):
        table_config_from_dict(overlapping.model_dump(mode="json"))
    [folder] = record(dealing(ROUND_A), tmp_path, overlapping)
    [result] = replay(folder)
    assert result["matches_recording"] and result["seats"]["banker"] == ROUND_A["banker"].split()

