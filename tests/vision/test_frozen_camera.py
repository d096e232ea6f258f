"""A live camera that keeps sending the same picture (QA 48 dealing M4): seen, named, logged.

A stalled RTSP encoder or a driver returning its last buffer delivers frames at full rate:
"no frame for offline_after_s" never fires, the picture matches the calibration view, and the
round just stops changing while the dealer deals on.  After ``camera.frozen_after_s`` of the
same picture (on the frames' monotonic clock) the camera is reported offline with why, as an
unplugged one is, and online again when the picture changes.  A live picture of a still table
is not frozen: its sensor noise changes every frame, through JPEG too.  Recordings and frame
folders are played as filmed, repeated frames and all.

``vision.sources`` is imported as a module so that this file loads on code without the watch,
where each test fails on what it checks.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision import sources
from vision.pipeline import TablePipeline
from vision.round import EventKind
from vision.sources import FrameSource, ImageFilesSource, LatestFrameReader
from vision.table import ConfigError, load_table_config, table_config_from_dict

DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo"
CONFIG = table_config_from_dict({
    "table_id": "t1", "rules": "cambodia",
    "seats": [
        {"name": "banker", "polygon": [[0.25, 0.0], [0.75, 0.0], [0.75, 0.4], [0.25, 0.4]]},
        {"name": "1", "polygon": [[0.0, 0.5], [0.5, 0.5], [0.5, 1.0], [0.0, 1.0]]},
    ],
    # the aim watch is another matter: off, so only the frozen watch speaks
    "camera": {"offline_after_s": 5.0, "reconnect_initial_s": 0.01, "reconnect_max_s": 0.02, "move_limit": 0},
})


@pytest.fixture(scope="module")
def table() -> np.ndarray:
    """The demo's empty table (felt, printed layout, rail), at half size to keep the tests quick."""
    return cv2.resize(cv2.imread(str(DEMO / "frames" / "000000.jpg")), (640, 360), interpolation=cv2.INTER_AREA)


def still_live(table: np.ndarray, rng: np.random.Generator, sigma: float = 1.0, quality: int = 70) -> np.ndarray:
    """What a live camera over a still table sends: the same scene, fresh sensor noise,
    JPEG-compressed as an MJPEG or RTSP stream is."""
    noisy = np.clip(table.astype(np.float32) + rng.normal(0.0, sigma, table.shape), 0, 255).astype(np.uint8)
    ok, data = cv2.imencode(".jpg", noisy, [cv2.IMWRITE_JPEG_QUALITY, quality])
    assert ok
    return cv2.imdecode(data, cv2.IMREAD_COLOR)


def frozen_over(watch, images, start: float = 100.0, step: float = 0.1) -> list[bool]:
    return [watch.see(image, start + step * i) for i, image in enumerate(images)]


# ------------------------------------------------------------------ the watch


def test_the_same_picture_for_frozen_after_s_is_frozen_and_a_changed_one_ends_it(table):
    watch = sources.FrozenPictureWatch(10.0)
    states = frozen_over(watch, [table] * 102)                 # 10.1 s of one buffer, 10 fps
    assert not any(states[:100]) and states[100] and states[101]   # frozen at 10.0 s, not before
    assert watch.reason == sources.CAMERA_FROZEN.format(seconds=10)
    assert watch.reason.startswith("the camera has sent the same picture for 10 s: it is frozen")
    assert "restart the camera" in watch.reason
    assert watch.see(still_live(table, np.random.default_rng(1)), 110.3) is False
    assert not watch.frozen and watch.reason is None


@pytest.mark.parametrize(("sigma", "quality"), [(1.0, 70), (0.7, 50), (2.0, 90)])
def test_a_live_picture_of_a_still_table_is_never_frozen(table, sigma, quality):
    """Sensor noise through JPEG: low noise and a low quality (a cheap stream) included."""
    rng = np.random.default_rng(7)
    watch = sources.FrozenPictureWatch(10.0)
    assert not any(frozen_over(watch, [still_live(table, rng, sigma, quality) for _ in range(25)], step=1.0))


def test_a_frozen_picture_with_a_ticking_clock_burnt_in_is_still_frozen(table):
    """Many IP cameras draw the time into the picture after the sensor: it keeps ticking
    while the picture under it stands still."""
    images = []
    for second in range(15):
        image = table.copy()
        cv2.putText(image, f"2025-01-01 12:00:{second:02d}", (20, 40), cv2.FONT_HERSHEY_SIMPLEX, 0.8,
                    (255, 255, 255), 2)
        images.append(image)
    watch = sources.FrozenPictureWatch(10.0)
    assert frozen_over(watch, images, step=1.0)[-1]


def test_a_blank_picture_that_stays_says_covered_or_frozen():
    grey = np.full((720, 1280, 3), 128, np.uint8)          # what a broken stream may decode to
    watch = sources.FrozenPictureWatch(10.0)
    assert frozen_over(watch, [grey] * 12, step=1.0)[-1]
    assert watch.reason.startswith("the camera has sent the same blank picture for 10 s: it is covered, or frozen")


def test_time_is_measured_on_the_monotonic_clock_and_a_clock_going_back_restarts_the_run(table):
    watch = sources.FrozenPictureWatch(10.0)
    assert not watch.see(table, 100.0) and not watch.see(table, 109.0)
    assert not watch.see(table, 50.0)                       # not a clock to measure on: start again
    assert not watch.see(table, 59.0) and watch.see(table, 60.0)


def test_frozen_after_s_is_a_table_setting_checked_like_the_others():
    assert CONFIG.camera.frozen_after_s == 10.0
    with pytest.raises(ConfigError, match="frozen_after_s"):
        table_config_from_dict({**CONFIG.model_dump(mode="json"),
                                "camera": {**CONFIG.camera.model_dump(mode="json"), "frozen_after_s": -1}})
    example = Path(__file__).resolve().parents[2] / "deploy" / "table.example.yaml"
    assert load_table_config(example).camera.frozen_after_s == 10.0


# ------------------------------------------------------------------ the live camera's reader


class StuckCamera(FrameSource):
    """A live camera on a clock that ticks ``step`` seconds a frame: ``live`` frames of a
    still table, then ``stuck`` repeats of its last one, then live frames again (after
    ``gate`` is set, when one is given)."""

    live = True
    description = "stuck test camera"

    def __init__(self, table, live: int, stuck: int, step: float = 1.0, gate: threading.Event | None = None):
        self.table, self.live_frames, self.stuck, self.step, self.gate = table, live, stuck, step, gate
        self.rng = np.random.default_rng(3)
        self.reads, self.mono = 0, 1000.0
        self.last = None

    def open(self):
        pass

    def read(self):
        self.reads += 1
        time.sleep(0.002)
        if self.reads == self.live_frames + self.stuck + 1 and self.gate is not None:
            self.gate.wait(10)
        self.mono += self.step
        if self.live_frames < self.reads <= self.live_frames + self.stuck:
            return self.last
        self.last = still_live(self.table, self.rng)
        return self.last

    def monotonic(self):
        return self.mono


def test_the_reader_reports_a_frozen_camera_offline_with_why_and_online_when_it_changes(table):
    statuses = []
    camera = StuckCamera(table, live=5, stuck=15)         # 15 s of one picture, then live again
    reader = LatestFrameReader(camera, lambda online, reason: statuses.append((online, reason)),
                               frozen_after_s=10).start()
    try:
        deadline = time.monotonic() + 10
        while len(statuses) < 2 and time.monotonic() < deadline:
            reader.get(timeout=0.1)
    finally:
        reader.stop()
    assert statuses[:2] == [(False, sources.CAMERA_FROZEN.format(seconds=10)),
                            (True, "the camera's picture changes again")]
    assert "it is frozen" in statuses[0][1]


def read_through(camera, reads, frozen_after_s):
    """Every camera status change while a reader takes ``reads`` frames, and the reader."""
    statuses = []
    reader = LatestFrameReader(camera, lambda online, reason: statuses.append((online, reason)),
                               frozen_after_s=frozen_after_s).start()
    try:
        deadline = time.monotonic() + 10
        while camera.reads < reads and time.monotonic() < deadline:
            reader.get(timeout=0.1)
    finally:
        reader.stop()
    return statuses, reader


def test_a_still_live_table_keeps_the_camera_online(table):
    camera = StuckCamera(table, live=40, stuck=0)          # 40 s of a still table
    statuses, reader = read_through(camera, 40, frozen_after_s=10)
    assert camera.reads >= 40 and statuses == [] and reader.online


def test_frozen_after_s_zero_turns_the_check_off(table):
    statuses, reader = read_through(StuckCamera(table, live=1, stuck=60), 60, frozen_after_s=0)
    assert statuses == [] and reader.online


# ------------------------------------------------------------------ the table


class Blind:
    name = "blind-v1"

    def detect(self, image, regions=None):
        return []


def test_a_frozen_camera_reaches_the_round_and_the_screen_as_camera_offline(table):
    events = []
    gate = threading.Event()
    camera = StuckCamera(table, live=3, stuck=15, gate=gate)
    pipeline = TablePipeline(CONFIG, camera, Blind(), on_event=events.append)
    pipeline.start()
    try:
        deadline = time.monotonic() + 10
        while not any(e.kind == EventKind.camera_offline for e in events) and time.monotonic() < deadline:
            time.sleep(0.01)
        offline = [e for e in events if e.kind == EventKind.camera_offline]
        assert len(offline) == 1
        assert offline[0].data["reason"].startswith("the camera has sent the same picture for 10 s: it is frozen")
        assert offline[0].data["source"] == "stuck test camera"
        time.sleep(0.1)                                    # its frames are still read: the pill says offline
        assert pipeline.status()["camera"] == "offline"
        gate.set()
        while not any(e.kind == EventKind.camera_online for e in events) and time.monotonic() < deadline:
            time.sleep(0.01)
        online = [e for e in events if e.kind == EventKind.camera_online]
        assert online and online[0].data["reason"] == "the camera's picture changes again"
        time.sleep(0.1)
        assert pipeline.status()["camera"] == "online"
    finally:
        gate.set()
        pipeline.stop()


def test_a_frame_folder_that_repeats_a_picture_plays_as_filmed(tmp_path, table):
    """A replay, or the demo played as a camera: a recording may hold the same picture for
    long (a paused deal, a file's last frame) and is no camera to call frozen."""
    cv2.imwrite(str(tmp_path / "still.png"), table)
    events = []
    source = ImageFilesSource([tmp_path / "still.png"] * 150, "frame folder of one picture", fps=10.0)  # 15 s
    pipeline = TablePipeline(CONFIG, source, Blind(), on_event=events.append)
    pipeline.start()
    assert pipeline.wait(20)
    pipeline.stop()
    assert pipeline.frames_processed == 150
    assert not [e for e in events if e.kind in (EventKind.camera_offline, EventKind.camera_online)]
    assert pipeline.status()["camera"] == "finished"
