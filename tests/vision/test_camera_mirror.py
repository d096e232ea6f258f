"""A table camera that saves mirror images: found now and then, named on the screen, mended by config."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from scoring.cards import Card
from vision.corners import Detection
from vision.mirror import CAMERA_MIRRORED, CameraMirrorWatch
from vision.pipeline import TablePipeline
from vision.round import CAMERA_KINDS, EventKind
from vision.sources import Frame, ImageFilesSource
from vision.table import load_table_config, table_config_from_dict

SEATS = [(0, 0, 200, 150), (200, 0, 400, 150)]
TWO_IN_SECOND = [Detection(Card.parse(c), 0.9, (220 + 40 * i, 20, 250 + 40 * i, 60))
                 for i, c in enumerate(("7S", "2H"))]
DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo"


class Judge:
    def __init__(self, *odds):
        self.odds, self.crops = list(odds), []

    def __call__(self, crop):
        self.crops.append(crop.shape)
        return self.odds.pop(0)


def test_three_sure_checks_in_a_row_warn_and_three_the_other_way_clear_it():
    """A seat judged mirrored three times running (30 s apart) raises the warning; undecided
    checks (aces and 8s) do not count either way; three printed ones clear it."""
    judge = Judge(5.0, 0.5, 6.0, 7.0, -4.0, -5.0, -6.0)
    turns = []
    watch = CameraMirrorWatch(judge, on_change=lambda *turn: turns.append(turn))
    image = np.zeros((150, 400, 3), np.uint8)
    seen = []
    for ts in (0, 10, 30, 60, 90, 120, 150, 180):
        watch.check(image, float(ts), SEATS, TWO_IN_SECOND)
        seen.append(watch.warning is not None)
    assert seen == [False, False, False, False, True, True, True, False]
    assert judge.crops == [(150, 200, 3)] * 7   # the seat with the cards, as cut from the frame
    assert turns == [(True, 90.0, 7.0), (False, 180.0, -6.0)]   # each turn told once, when it is decided


def test_no_seat_with_two_cards_is_no_check_and_a_failing_judge_stops_nothing():
    judge = Judge()
    watch = CameraMirrorWatch(judge)
    watch.check(np.zeros((150, 400, 3), np.uint8), 0.0, SEATS, TWO_IN_SECOND[:1])
    assert judge.crops == []

    def broken(crop):
        raise RuntimeError("judge model unreadable")

    watch = CameraMirrorWatch(broken)
    for ts in (0.0, 30.0, 60.0):
        watch.check(np.zeros((150, 400, 3), np.uint8), ts, SEATS, TWO_IN_SECOND)
    assert watch.warning is None


@pytest.fixture(scope="module")
def table_reader():
    pytest.importorskip("ultralytics", reason="the card model needs the ml extra: pip install -e '.[ml]'")
    from vision.detector import CardDetector

    return CardDetector(unmirror=True)   # as `niuniu serve` builds it


@pytest.fixture(scope="module")
def dealt_frame():
    """A demo frame with the banker's and players' cards down (round 1 settled)."""
    return cv2.imread(str(DEMO / "frames" / "000120.jpg"))


def test_a_camera_saving_mirror_images_is_named_on_the_status_and_config_mends_it(table_reader, dealt_frame, tmp_path):
    """The demo table seen through a camera that mirrors: the shipped table reader's judge
    finds it within three checks and the status names the fix; the same frames with
    camera.mirror set (and the zones of the picture mirrored back, as `niuniu calibrate
    --mirror` writes them) are mirrored back before anything reads them, and three checks
    say nothing.  The frames as they are raise nothing either."""
    config = load_table_config(DEMO / "table.yaml")
    flipped = cv2.flip(dealt_frame, 1)
    for frame, warned in ((flipped, True), (dealt_frame, False)):
        pipeline = TablePipeline(config, None, table_reader)
        for i, ts in enumerate((0.0, 30.0, 60.0)):
            pipeline.step(Frame(frame, ts, i))
        assert pipeline.status()["camera_warning"] == (CAMERA_MIRRORED if warned else None)
        told = [(e.kind, e.ts, e.data["checks"]) for e in pipeline.recent_events if e.kind in CAMERA_KINDS]
        assert told == ([(EventKind.camera_mirrored, 60.0, 3)] if warned else [])   # for the audit log
    for i in range(3):
        cv2.imwrite(str(tmp_path / f"{i:04d}.png"), flipped)
    mended = table_config_from_dict({**config.model_dump(mode="json"),
                                     "camera": {**config.camera.model_dump(mode="json"), "mirror": True}})
    seen = []
    reader = table_reader

    class Watched:   # the table reader, remembering what it was given
        name, mirror_judge = "watched", reader.mirror_judge

        def detect(self, image, regions=None):
            seen.append(image)
            return reader.detect(image, regions=regions)

        def mirrored_odds(self, image):
            return reader.mirrored_odds(image)

    pipeline = TablePipeline(mended, ImageFilesSource.from_folder(tmp_path, start_ts=0.0, fps=1 / 30), Watched())
    pipeline.start()
    assert pipeline.wait(60)
    pipeline.stop()
    assert np.array_equal(seen[0], dealt_frame)
    assert pipeline.mirror_watch.checks == 3 and pipeline.status()["camera_warning"] is None
