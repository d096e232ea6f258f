"""`niuniu calibrate` and `niuniu replay` as a user runs them."""

from __future__ import annotations

import json
from decimal import Decimal

import cv2
import numpy as np
import yaml
import pytest

from kiosk.cli import build_parser, main
from scoring.cards import Card
from scoring.settle import Bet
from vision.corners import Detection
from vision.pipeline import TablePipeline
from vision.replay import replay
from vision.round import RoundState
from vision.sources import Frame
from vision.table import load_table_config, point_in_polygon


@pytest.fixture(autouse=True)
def headless(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_both_commands_are_registered():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert {"calibrate", "replay"} <= set(sub.choices)


def test_calibrate_headless_even_layout_for_banker_and_five(tmp_path, capsys):
    out = tmp_path / "table.yaml"
    code, stdout, _ = run(capsys, "calibrate", "--players", 5, "--table-id", "vip-3", "--out", out)
    assert code == 0 and f"wrote {out}" in stdout
    config = load_table_config(out)
    assert config.table_id == "vip-3" and config.rules == "cambodia"
    assert config.seat_names == ("banker", "1", "2", "3", "4", "5")
    banker = config.zone("banker").polygon
    assert point_in_polygon((0.5, 0.2), banker)            # banker: top middle
    assert point_in_polygon((0.1, 0.75), config.zone("1").polygon)   # seat 1 bottom left
    assert point_in_polygon((0.9, 0.75), config.zone("5").polygon)   # seat 5 bottom right


def test_calibrate_grid_to_toml(tmp_path, capsys):
    out = tmp_path / "table.toml"
    code, stdout, _ = run(capsys, "calibrate", "--seats", "banker,1,2,3", "--grid", "2x2", "--out", out, "--json")
    assert code == 0
    config = load_table_config(out)
    assert json.loads(stdout)["seats"][3]["name"] == "3"
    assert point_in_polygon((0.75, 0.75), config.zone("3").polygon)


def test_calibrate_from_pixel_json_and_a_source_frame(tmp_path, capsys):
    frame = np.zeros((600, 800, 3), np.uint8)
    cv2.imwrite(str(tmp_path / "frame.png"), frame)
    zones = {"banker": [[200, 0], [600, 0], [600, 240], [200, 240]], "1": [[0, 300], [400, 300], [400, 600]]}
    (tmp_path / "zones.json").write_text(json.dumps(zones))
    out, preview = tmp_path / "t.yaml", tmp_path / "preview.jpg"
    code, _, err = run(capsys, "calibrate", "--source", tmp_path / "frame.png", "--from-json", tmp_path / "zones.json",
                       "--out", out, "--preview", preview)
    assert code == 0, err
    config = load_table_config(out)
    assert config.zone("banker").polygon[1] == (0.75, 0.0)
    assert (config.camera.width, config.camera.height) == (800, 600)
    drawn = cv2.imread(str(preview))
    assert drawn.shape == (600, 800, 3) and drawn.max() > 100  # zones drawn on the frame


def test_calibrate_for_a_mirroring_camera_marks_zones_on_the_picture_mirrored_back(tmp_path, capsys):
    """`--mirror`: the preview (and the clicked zones) show the frame mirrored back, and the
    table file tells the table to mirror every frame back too."""
    frame = np.zeros((600, 800, 3), np.uint8)
    frame[:, :100] = 255   # a white strip at the camera's left
    cv2.imwrite(str(tmp_path / "frame.png"), frame)
    out, preview = tmp_path / "t.yaml", tmp_path / "preview.png"
    code, _, err = run(capsys, "calibrate", "--source", tmp_path / "frame.png", "--players", 2, "--mirror",
                       "--out", out, "--preview", preview)
    assert code == 0, err
    assert load_table_config(out).camera.mirror is True
    drawn = cv2.imread(str(preview))
    assert drawn[300, 750].min() > 200 and drawn[300, 20].max() < 200   # the strip now at the right
    run(capsys, "calibrate", "--players", 2, "--out", tmp_path / "plain.yaml")
    assert load_table_config(tmp_path / "plain.yaml").camera.mirror is False


def test_calibrate_errors_are_one_line_and_nothing_is_overwritten(tmp_path, capsys):
    out = tmp_path / "table.yaml"
    out.write_text("precious: true\n")
    code, _, err = run(capsys, "calibrate", "--players", 3, "--out", out)
    assert code == 2 and err.strip() == f"niuniu calibrate: error: {out} exists; pass --force to calibrate it " \
                                         "again (its settings are kept, and its zones unless --from-json, --grid " \
                                         "or --even gives new ones), or choose another --out"
    assert out.read_text() == "precious: true\n"
    # --force over a file whose settings cannot be read refuses too: its table id, rules and
    # limits would be lost (QA finding 5); the file is left as it was.
    code, _, err = run(capsys, "calibrate", "--players", 3, "--out", out, "--force")
    assert code == 2 and "precious: unknown key" in err and "move it aside to start afresh" in err
    assert out.read_text() == "precious: true\n"
    out.unlink()
    assert run(capsys, "calibrate", "--players", 3, "--out", out)[0] == 0
    (tmp_path / "px.json").write_text('{"banker": [[0, 0], [500, 0], [500, 300]]}')
    code, _, err = run(capsys, "calibrate", "--from-json", tmp_path / "px.json", "--out", tmp_path / "b.yaml")
    assert code == 2 and "is in pixels; give the image size" in err
    code, _, err = run(capsys, "calibrate", "--players", 9, "--out", tmp_path / "c.yaml")
    assert code == 2 and "1 to 7 player seats" in err
    code, _, err = run(capsys, "calibrate", "--click", "--players", 2, "--out", tmp_path / "d.yaml")
    assert code == 2 and "--click needs --source" in err


def test_calibrating_again_replaces_the_zones_and_keeps_the_tables_settings(tmp_path, capsys):
    out = tmp_path / "table.yaml"
    assert run(capsys, "calibrate", "--players", 3, "--table-id", "vip-3", "--rules", "ultimate",
               "--currency", "HKD", "--mirror", "--out", out)[0] == 0
    data = yaml.safe_load(out.read_text())       # the table's own settings, as someone edits them in
    data.update(bet_limits={"minimum": 25, "maximum": 5000}, recordings={"keep_days": 14}, timezone="Asia/Macau")
    data.setdefault("thresholds", {})["k"] = 4
    out.write_text(yaml.safe_dump(data))
    first = load_table_config(out)

    frame = np.zeros((480, 640, 3), np.uint8)
    cv2.imwrite(str(tmp_path / "frame.png"), frame)
    code, stdout, err = run(capsys, "calibrate", "--source", tmp_path / "frame.png", "--grid", "2x2",
                            "--out", out, "--force")
    assert code == 0, err
    assert "kept from the file it replaces" in stdout and "bet limits" in stdout
    again = load_table_config(out)
    assert (again.table_id, again.rules, again.currency) == ("vip-3", "ultimate", "HKD")
    assert again.bet_limits == first.bet_limits and again.thresholds == first.thresholds
    assert again.recordings.keep_days == 14 and again.timezone == "Asia/Macau"
    assert again.camera.mirror and (again.camera.width, again.camera.height) == (640, 480)
    assert again.seats != first.seats                     # the zones are the new ones
    assert point_in_polygon((0.25, 0.25), again.zone("banker").polygon)

    code, _, err = run(capsys, "calibrate", "--grid", "2x2", "--table-id", "vip-4", "--no-mirror",
                       "--out", out, "--force")
    assert code == 0, err
    latest = load_table_config(out)
    assert latest.table_id == "vip-4" and not latest.camera.mirror and latest.rules == "ultimate"


# ------------------------------------------------------------------ replay

HANDS = {"1": "KH QH JH 10H 9H", "banker": "AS 2H 3D 4C 5S"}


class Scripted:
    name = "scripted-v1"

    def __init__(self):
        placed, self.script = [], []
        for i in range(5):
            for seat, y in (("1", 200), ("banker", 40)):
                placed.append((seat, y, i))
                self.script += [[Detection(Card.parse(HANDS[s].split()[j]), 0.9,
                                           (20 + 30 * j, yy, 44 + 30 * j, yy + 34))
                                 for s, yy, j in placed]] * 3
        self.script += [self.script[-1]] * 4 + [[] for _ in range(35)]   # the last card in view 0.7 s
        self.index = 0

    def detect(self, image, regions=None):
        self.index += 1
        return self.script[self.index - 1]


@pytest.fixture
def recording(tmp_path):
    config_path = tmp_path / "table.yaml"
    assert main(["calibrate", "--players", "1", "--grid", "2x1", "--out", str(config_path)]) == 0
    config = load_table_config(config_path).with_thresholds(motion_gate=False)  # scripted, blank frames
    detector = Scripted()
    pipeline = TablePipeline(config, None, detector, data_dir=tmp_path / "data")
    image = np.zeros((300, 400, 3), np.uint8)
    for i in range(len(detector.script)):
        pipeline.step(Frame(image, 1_700_000_000 + i / 10, i))
        if pipeline.machine.state == RoundState.complete:
            pipeline.machine.settle({"1": Bet("1", Decimal(100), "equal")}, ts=1_700_000_000 + i / 10 + 0.05)
    pipeline.recorder.flush()            # the recorder's writer thread is behind the camera's
    return tmp_path / "data" / "recordings"


def test_replay_json_prints_the_rounds(recording, capsys):
    capsys.readouterr()
    code, stdout, err = run(capsys, "replay", recording, "--json")
    assert code == 0, err
    rounds = json.loads(stdout)
    assert rounds == json.loads(json.dumps(replay(recording), default=str))
    assert rounds[0]["round"] == 1 and rounds[0]["seats"] == {s: HANDS[s].split() for s in ("banker", "1")}
    assert rounds[0]["settlement"]["lines"][0]["net"] == "95.00"   # equal bet, 5 % commission
    assert rounds[0]["matches_recording"] is True


def test_replay_text_for_a_person(recording, capsys):
    code, stdout, _ = run(capsys, "replay", recording)
    assert code == 0
    assert "Round 1: settled" in stdout
    assert "seat 1   KH QH JH 10H 9H" in stdout and "Bull 9  win  net 95.00" in stdout
    assert "replay matches the recording" in stdout


def test_replay_of_a_doctored_recording_exits_1(recording, capsys):
    [folder] = list(recording.glob("*/*"))
    events = (folder / "events.jsonl").read_text().replace('"KH"', '"KD"')
    (folder / "events.jsonl").write_text(events)
    code, stdout, _ = run(capsys, "replay", folder)
    assert code == 1 and "replay DIFFERS from the recording" in stdout


def test_replay_errors_are_one_line(tmp_path, capsys):
    code, stdout, err = run(capsys, "replay", tmp_path / "missing")
    assert code == 2 and stdout == ""
    assert err.count("\n") == 1 and err.startswith("niuniu replay: error: ") and "does not exist" in err
    (tmp_path / "bad.yaml").write_text("table_id: t\nrules: cambodia\nseats: []\nextra: 1\n")
    (tmp_path / "frames").mkdir()
    cv2.imwrite(str(tmp_path / "frames" / "0.png"), np.zeros((10, 10, 3), np.uint8))
    code, _, err = run(capsys, "replay", tmp_path / "frames", "--config", tmp_path / "bad.yaml")
    assert code == 2 and "extra: unknown key" in err and str(tmp_path / "bad.yaml") in err
