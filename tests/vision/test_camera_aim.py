"""A table camera knocked, turned or covered after its zones were marked: seen, named, logged."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from kiosk.cli import main
from scoring.cards import Card
from vision.aim import AT_CALIBRATION, AT_START, CameraAimWatch, ViewError, load_view, view_path
from vision.corners import Detection
from vision.pipeline import TablePipeline
from vision.round import CAMERA_KINDS, EventKind
from vision.sources import Frame
from vision.table import ConfigError, load_table_config, table_config_from_dict

DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo"
CONFIG = load_table_config(DEMO / "table.yaml")
ZONES = [z.polygon for z in CONFIG.seats]


def frame(no: int) -> np.ndarray:
    return cv2.imread(str(DEMO / "frames" / f"{no:06d}.jpg"))


def moved(image: np.ndarray, dx: float = 0.0, dy: float = 0.0, degrees: float = 0.0) -> np.ndarray:
    """The picture a camera turned by ``degrees`` and shifted by (dx, dy) pixels would take."""
    h, w = image.shape[:2]
    turn = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
    turn[:, 2] += (dx, dy)
    return cv2.warpAffine(image, turn, (w, h), borderMode=cv2.BORDER_REFLECT)


@pytest.fixture(scope="module")
def empty_table():
    return frame(0)


# Frames across all three demo rounds: an empty table, cards being dealt, full tables, a sweep.
DEALT = (60, 100, 147, 200, 260, 330, 400)


def watch_over(watch, images, cards_on_table=True, start=0.0):
    states = []
    for i, image in enumerate(images):
        watch.check(image, start + 10.0 * i, cards_on_table)
        states.append(watch.state)
    return states


def test_a_camera_that_stays_put_never_warns_while_the_table_fills_and_empties(empty_table):
    """Cards, chips and the dealer's hands change the picture all the time; they are not a move."""
    turns = []
    watch = CameraAimWatch(ZONES, 0.03, empty_table, on_change=lambda *t: turns.append(t))
    assert set(watch_over(watch, [frame(n) for n in DEALT])) == {"aimed"}
    assert turns == [] and watch.warning is None and watch.checks == len(DEALT)
    assert watch.shift < 0.005
    # The room's lights dimmed by 40 %, the sensor noisier, the picture compressed harder: still put.
    noise = np.random.default_rng(0).normal(0, 8, empty_table.shape)
    dim = [np.clip(frame(n) * 0.6 + noise, 0, 255).astype(np.uint8) for n in DEALT]
    dim = [cv2.imdecode(cv2.imencode(".jpg", im, [cv2.IMWRITE_JPEG_QUALITY, 40])[1], cv2.IMREAD_COLOR) for im in dim]
    assert set(watch_over(watch, dim, start=100.0)) == {"aimed"} and watch.shift < 0.005


def test_a_knocked_camera_is_named_after_three_checks_and_cleared_when_put_back(empty_table):
    turns = []
    watch = CameraAimWatch(ZONES, 0.03, empty_table, on_change=lambda *t: turns.append(t))
    knocked = [moved(frame(n), dx=60) for n in DEALT[:4]]      # 60 px of 1280: 4.7 % of the width
    assert watch_over(watch, knocked) == ["aimed", "aimed", "moved", "moved"]
    (aim, ts, check), = turns
    assert (aim, ts) == ("moved", 20.0) and check.shift == pytest.approx(60 / 1280, abs=0.003)
    assert "the camera has moved: the table lies 5% of the picture's width" in watch.warning
    assert AT_CALIBRATION in watch.warning and "calibrate the table again" in watch.warning
    assert watch_over(watch, [frame(n) for n in DEALT[4:]], start=100.0) == ["moved", "moved", "aimed"]
    assert [t[0] for t in turns] == ["moved", "aimed"] and watch.warning is None


def test_a_turned_camera_warns_and_a_nudge_within_the_limit_does_not(empty_table):
    watch = CameraAimWatch(ZONES, 0.03, empty_table)
    assert watch_over(watch, [moved(frame(n), degrees=5) for n in DEALT[:3]])[-1] == "moved"
    # Turned about the picture's centre: seat 1's far corner (0.01, 0.30) moves most.
    far = np.hypot(0.0124 - 0.5, (0.2964 - 0.5) * 720 / 1280)
    assert watch.shift == pytest.approx(2 * far * np.sin(np.radians(5) / 2), abs=0.003)
    watch = CameraAimWatch(ZONES, 0.03, empty_table)
    assert set(watch_over(watch, [moved(frame(n), dx=8, dy=-6) for n in DEALT])) == {"aimed"}
    assert 0.005 < watch.shift < 0.03   # measured, and under the limit


def test_a_covered_camera_warns_on_an_empty_table_but_not_while_a_dealer_leans_over_a_round(empty_table):
    dark = np.full_like(empty_table, 12)
    watch = CameraAimWatch(ZONES, 0.03, empty_table)
    assert set(watch_over(watch, [dark] * 5, cards_on_table=True)) == {"aimed"}   # a round is on: undecided
    assert watch_over(watch, [dark] * 3, cards_on_table=False, start=100.0)[-1] == "lost"
    assert "no longer sees the table" in watch.warning and "covered, turned away" in watch.warning


def test_without_a_calibration_picture_the_first_empty_table_stands_in(empty_table):
    watch = CameraAimWatch(ZONES, 0.03, None)
    watch.check(frame(147), 0.0, cards_on_table=True)      # cards down: not a view of the table
    assert watch.view is None
    watch.check(empty_table, 10.0, cards_on_table=False)
    assert watch.view is not None and watch.since == AT_START
    watch_over(watch, [moved(frame(n), dy=50) for n in DEALT[:3]], start=20.0)
    assert watch.state == "moved" and AT_START in watch.warning


def test_a_dark_first_frame_at_start_is_not_kept_as_the_view(empty_table):
    """A camera's first frames come before its exposure settles: the next empty table is taken."""
    watch = CameraAimWatch(ZONES, 0.03, None)
    watch.check(np.zeros_like(empty_table), 0.0, cards_on_table=False)
    watch.check(np.zeros_like(empty_table), 10.0, cards_on_table=False)
    assert watch.view is None and "features outside the seat zones" in watch.unchecked
    watch.check(empty_table, 20.0, cards_on_table=False)
    watch_over(watch, [moved(frame(n), dx=70) for n in DEALT[:4]], start=30.0)
    assert watch.state == "moved" and watch.unchecked is None


def test_plain_cloth_cannot_be_compared_so_nothing_is_said(empty_table):
    plain = np.full_like(empty_table, (40, 110, 30))
    watch = CameraAimWatch(ZONES, 0.03, plain)
    assert set(watch_over(watch, [moved(frame(n), dx=90) for n in DEALT], cards_on_table=False)) == {"aimed"}
    assert watch.checks == 0 and "features outside the seat zones" in watch.unchecked


def test_a_camera_now_giving_another_shape_is_compared_with_its_view_at_start(empty_table):
    watch = CameraAimWatch(ZONES, 0.03, cv2.resize(empty_table, (640, 640)))
    watch.check(empty_table, 0.0, cards_on_table=False)
    assert watch.since == AT_START and watch.state == "aimed"


def test_the_running_table_logs_the_move_and_its_status_names_it(empty_table):
    """The pipeline checks every 10 s of the stream; the turn is in the round's event stream
    (the audit log's source) and the status the dealer's screen shows."""

    class Reader:
        name = "scripted"

        def detect(self, image, regions=None):
            return [Detection(Card.parse("7S"), 0.9, (600, 600, 630, 640))]

    pipeline = TablePipeline(CONFIG, None, Reader(), view=empty_table)
    for i, n in enumerate(DEALT[:4]):
        pipeline.step(Frame(moved(frame(n), dx=-70), 10.0 * i, i))
    told = [(e.kind, e.data["aim"], e.data["since"]) for e in pipeline.recent_events if e.kind in CAMERA_KINDS]
    assert told == [(EventKind.camera_moved, "moved", AT_CALIBRATION)]
    status = pipeline.status()
    assert status["camera_aim"]["state"] == "moved" and status["camera_aim"]["shift"] > 0.05
    assert status["camera_warning"].startswith("the camera has moved")
    off = table_config_from_dict({**CONFIG.model_dump(mode="json"),
                                  "camera": {**CONFIG.camera.model_dump(mode="json"), "move_limit": 0}})
    assert TablePipeline(off, None, Reader()).status()["camera_aim"] == {"state": "off"}


def test_move_limit_is_checked_like_every_setting():
    with pytest.raises(ConfigError, match="move_limit"):
        table_config_from_dict({**CONFIG.model_dump(mode="json"),
                                "camera": {**CONFIG.camera.model_dump(mode="json"), "move_limit": -0.1}})


def test_calibrate_keeps_the_picture_its_zones_were_marked_on_and_a_blind_recalibration_drops_it(
        tmp_path, capsys, monkeypatch, empty_table):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    cv2.imwrite(str(tmp_path / "frame.png"), empty_table)
    out = tmp_path / "table.yaml"
    assert main(["calibrate", "--source", str(tmp_path / "frame.png"), "--players", "5", "--mirror",
                 "--out", str(out)]) == 0
    assert f"wrote {view_path(out)}" in capsys.readouterr().out
    assert view_path(out) == tmp_path / "table.view.jpg"
    view = load_view(view_path(out))
    # The picture the table reads: mirrored back, as its frames will be.
    assert np.abs(view.astype(int) - cv2.flip(empty_table, 1)).mean() < 4
    # Calibrating again without a picture or a zone source keeps the zones, and so the picture
    # they were marked on still fits them.
    before = view_path(out).read_bytes()
    assert main(["calibrate", "--players", "5", "--table-id", "vip-3", "--out", str(out), "--force"]) == 0
    assert view_path(out).read_bytes() == before
    capsys.readouterr()
    assert main(["calibrate", "--players", "5", "--even", "--out", str(out), "--force"]) == 0
    assert not view_path(out).exists()   # zones placed blind: the old picture no longer fits them
    assert f"removed {view_path(out)}" in capsys.readouterr().out


def test_an_unreadable_calibration_picture_is_one_warning_and_the_table_runs(tmp_path, capsys):
    from kiosk.commands import _calibration_view

    view_path(tmp_path / "table.yaml").write_bytes(b"not a jpeg")
    with pytest.raises(ViewError, match="cannot be read as an image"):
        load_view(view_path(tmp_path / "table.yaml"))
    assert _calibration_view(tmp_path / "table.yaml") is None
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "table.view.jpg cannot be read" in err[0] and "niuniu calibrate" in err[0]
    assert _calibration_view(tmp_path / "other.yaml") is None and capsys.readouterr().err == ""
