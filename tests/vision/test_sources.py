"""Frame sources: choosing one from --source, files in order, live cameras newest-first and reconnected."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.sources import (CameraLibraryError, FrameSource, ImageFilesSource, LatestFrameReader, OpenCVSource,
                            Picamera2Source, SourceError, VideoFileSource, open_source)


def coded_image(i: int, size=(64, 48)) -> np.ndarray:
    """An image whose pixels all hold ``i`` (so a test can tell frames apart after a codec)."""
    return np.full((size[1], size[0], 3), i, dtype=np.uint8)


def write_video(path, count, fps=5.0):
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, (64, 48))
    assert writer.isOpened()
    for i in range(count):
        writer.write(coded_image(i * 20))
    writer.release()


class FlakyCamera(FrameSource):
    """A live camera that fails on purpose.

    Reads numbered in ``fail_at`` (counted over its life) raise, as a USB camera does when
    unplugged; the next ``reopen_failures`` opens then fail too.  ``fail_opens``: opens that
    fail from the start.
    """

    live = True
    description = "flaky test camera"

    def __init__(self, fail_at=(), reopen_failures=0, fail_opens=0, delay=0.0):
        self.fail_at = set(fail_at)
        self.reopen_failures = reopen_failures
        self.failing_opens = fail_opens
        self.delay = delay
        self.reads = 0
        self.opens = 0
        self.is_open = False

    def open(self):
        self.opens += 1
        if self.failing_opens > 0:
            self.failing_opens -= 1
            raise SourceError("camera unplugged")
        self.is_open = True

    def read(self):
        assert self.is_open, "read() on a closed camera"
        self.reads += 1
        if self.delay:
            time.sleep(self.delay)
        if self.reads in self.fail_at:
            self.is_open = False
            self.failing_opens = self.reopen_failures
            raise OSError(f"USB error on read {self.reads}")
        return coded_image(self.reads % 250)

    def close(self):
        self.is_open = False


def test_open_source_chooses_by_spec(tmp_path):
    assert isinstance(open_source("0"), OpenCVSource) and open_source("0").target == 0
    assert open_source("rtsp://user:secret@10.0.0.5/stream").description == "stream rtsp://user:***@10.0.0.5/stream"
    folder = tmp_path / "frames"
    folder.mkdir()
    cv2.imwrite(str(folder / "0001.png"), coded_image(1))
    assert isinstance(open_source(str(folder)), ImageFilesSource)
    assert isinstance(open_source(str(folder / "*.png")), ImageFilesSource)
    write_video(tmp_path / "clip.avi", 2)
    assert isinstance(open_source(str(tmp_path / "clip.avi")), VideoFileSource)
    with pytest.raises(SourceError, match="'nowhere.mp4' is not picamera2, a camera index"):
        open_source("nowhere.mp4")
    with pytest.raises(SourceError, match="holds no images"):
        open_source(str(tmp_path / "*.jpg"))


def test_picamera2_is_imported_only_when_opened():
    sys.modules.pop("picamera2", None)
    source = open_source("picamera2", width=1280, height=720)
    assert isinstance(source, Picamera2Source) and "picamera2" not in sys.modules
    try:
        import picamera2  # noqa: F401
    except ImportError:
        with pytest.raises(SourceError, match="apt install python3-picamera2"):
            source.open()


@pytest.fixture
def apt_picamera2(tmp_path, monkeypatch):
    """A stand-in for apt's picamera2 in /usr/lib/python3/dist-packages, beside the numpy it
    was built for (Debian's egg-info), that fails to import as the real one does beside a
    numpy 2 in the venv.  Call it with the exception the import raises."""
    site = tmp_path / "dist-packages"
    (site / "picamera2").mkdir(parents=True)
    (site / "numpy-1.24.2.egg-info").mkdir()
    (site / "numpy-1.24.2.egg-info" / "PKG-INFO").write_text("Metadata-Version: 1.2\nName: numpy\nVersion: 1.24.2\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "picamera2", raising=False)

    def failing_with(raise_line: str) -> None:
        (site / "picamera2" / "__init__.py").write_text(f"import numpy\n{raise_line}\n")
    return failing_with


@pytest.mark.parametrize("raise_line, cause", [
    ('raise ValueError("numpy.dtype size changed, may indicate binary incompatibility. Expected 96 from C header, '
     'got 88 from PyObject")', "ValueError: numpy.dtype size changed, may indicate binary incompatibility"),
    ('raise AttributeError("_ARRAY_API not found")', "AttributeError: _ARRAY_API not found"),
    ('raise ImportError("numpy.core.multiarray failed to import")',
     "ImportError: numpy.core.multiarray failed to import"),
])
def test_a_picamera2_built_for_another_numpy_is_one_line_with_the_fix(apt_picamera2, raise_line, cause):
    """QA 45, finding 1: on a Pi, apt's picamera2 stack is built for Debian's numpy 1.24;
    a numpy 2 in the venv makes its import raise ValueError (not ImportError), which used
    to escape open() and look like a camera outage that never ends."""
    apt_picamera2(raise_line)
    source = open_source("picamera2")
    with pytest.raises(CameraLibraryError) as first:
        source.open()
    message = str(first.value)
    assert "\n" not in message and message.startswith("picamera2 cannot be loaded (")
    assert cause in message
    assert f"this Python loads numpy {np.__version__}" in message
    assert "apt's picamera2 stack was built for numpy 1.24.2" in message
    assert "reinstall the project with its pi extra" in message and "sudo deploy/install.sh" in message
    with pytest.raises(CameraLibraryError) as again:   # a reconnect says the same, not a half-import's error
        source.open()
    assert str(again.value) == message


def test_a_missing_picamera2_module_still_says_to_install_it(apt_picamera2):
    apt_picamera2("import libcamera")                 # python3-libcamera missing from the apt stack
    with pytest.raises(CameraLibraryError, match=r"picamera2 is not installed \(no module libcamera\); .*"
                                                 r"apt install python3-picamera2"):
        open_source("picamera2").open()


def test_niuniu_check_fails_the_camera_with_that_line(apt_picamera2, tmp_path):
    from kiosk.preflight import FAIL, check_device

    apt_picamera2('raise ValueError("numpy.dtype size changed, may indicate binary incompatibility")')
    table = Path(__file__).resolve().parents[2] / "deploy/table.example.yaml"
    (tmp_path / "data").mkdir()
    camera = next(f for f in check_device(table, tmp_path / "data", source="picamera2") if f.part == "camera")
    assert camera.level == FAIL
    assert camera.message.startswith("picamera2 cannot be loaded (ValueError: numpy.dtype size changed")
    assert "pi extra" in camera.message
    assert "is the kiosk running" not in camera.message   # no other process is to blame


def test_frame_folder_is_read_in_order_with_file_timing(tmp_path):
    for i in (3, 1, 2):
        cv2.imwrite(str(tmp_path / f"f{i:03d}.png"), coded_image(i * 10))
    frames = list(open_source(str(tmp_path), fps=4.0, start_ts=100.0).frames())
    assert [f.frame_no for f in frames] == [0, 1, 2]
    assert [int(f.image[0, 0, 0]) for f in frames] == [10, 20, 30]
    assert [f.ts for f in frames] == [100.0, 100.25, 100.5]


def test_unreadable_image_names_the_file(tmp_path):
    (tmp_path / "bad.jpg").write_bytes(b"not a jpeg")
    with pytest.raises(SourceError, match="bad.jpg is not a readable image"):
        list(open_source(str(tmp_path)).frames())


def test_a_truncated_frame_is_refused_not_read_half_grey(tmp_path):
    """OpenCV decodes a JPEG cut short without an error, its missing part grey: a frame
    folder copied off a failing disk would have lost the cards there without a word."""
    ok, data = cv2.imencode(".jpg", np.random.default_rng(1).integers(0, 255, (240, 320, 3), dtype=np.uint8))
    (tmp_path / "cut.jpg").write_bytes(data.tobytes()[: len(data) // 2])
    with pytest.raises(SourceError, match=r"cut.jpg is truncated or corrupt \(its JPEG data ends early\)"):
        list(open_source(str(tmp_path)).frames())


def test_video_file_gives_every_frame_in_order_and_can_loop(tmp_path):
    path = tmp_path / "clip.avi"
    write_video(path, 6, fps=5.0)
    frames = list(VideoFileSource(path, start_ts=0.0).frames())
    assert len(frames) == 6
    assert [f.ts for f in frames] == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    levels = [int(f.image.mean()) for f in frames]
    assert levels == sorted(levels) and levels[-1] - levels[0] > 80  # in order, not repeated

    looping = VideoFileSource(path, start_ts=0.0, loop=True)
    looping.open()
    stamps = []
    for _ in range(9):
        assert looping.read() is not None
        stamps.append(round(looping.timestamp(), 3))
    looping.close()
    assert stamps == [round(i * 0.2, 3) for i in range(9)]  # time keeps going forward across loops


def test_missing_or_broken_video_is_a_clear_error(tmp_path):
    with pytest.raises(SourceError, match="does not exist"):
        VideoFileSource(tmp_path / "gone.mp4").open()
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"\x00" * 100)
    with pytest.raises(SourceError, match="cannot be decoded"):
        VideoFileSource(broken).open()


def test_camera_that_raises_mid_stream_is_reported_and_reconnected_with_backoff():
    camera = FlakyCamera(fail_at={5}, reopen_failures=2)  # read 5 fails, then two reopens fail
    statuses, sleeps = [], []
    reader = LatestFrameReader(camera, lambda online, reason: statuses.append((online, reason)),
                               initial_backoff_s=0.01, max_backoff_s=0.04, sleep=sleeps.append)
    reader.start()
    numbers = []
    deadline = time.monotonic() + 5
    while len(numbers) < 8 and time.monotonic() < deadline:
        frame = reader.get(timeout=0.5)
        if frame is not None:
            numbers.append(frame.frame_no)
    reader.stop()
    assert statuses[0][0] is False and "USB error on read 5" in statuses[0][1]
    assert [s[0] for s in statuses] == [False, True]      # one outage, reported once each way
    assert statuses[1] == (True, "frames arriving")
    assert sleeps[:3] == [0.01, 0.02, 0.04]               # exponential backoff over the failed reopens
    assert camera.opens == 4 and reader.reconnects == 3
    assert max(numbers) >= 5                              # frames flow again after the outage ...
    assert numbers == sorted(set(numbers))                # ... numbered on, never reused


def test_backoff_is_capped():
    camera = FlakyCamera(fail_opens=10**6)
    sleeps = []
    done = threading.Event()

    def sleep(seconds):
        sleeps.append(seconds)
        if len(sleeps) >= 6:
            done.set()
            reader._stop.set()

    reader = LatestFrameReader(camera, initial_backoff_s=1.0, max_backoff_s=4.0, sleep=sleep)
    reader.start()
    assert done.wait(5)
    reader.stop()
    assert sleeps[:6] == [1.0, 2.0, 4.0, 4.0, 4.0, 4.0]
    assert not reader.online


def test_a_slow_consumer_always_gets_the_newest_frame():
    camera = FlakyCamera(delay=0.002)
    reader = LatestFrameReader(camera).start()
    first = reader.get(timeout=2)
    time.sleep(0.15)  # the pipeline is busy; the camera keeps sending
    second = reader.get(timeout=2)
    latest_read = camera.reads
    reader.stop()
    assert second.frame_no > first.frame_no + 5          # the backlog was skipped ...
    assert second.frame_no >= latest_read - 3            # ... to (nearly) the newest frame
    assert reader.dropped > 0


def test_a_silent_camera_is_reported_offline_then_online():
    gate = threading.Event()

    class Hanging(FlakyCamera):
        def read(self):
            if self.reads == 3:
                gate.wait(5)  # a hung stream: read() blocks instead of failing
            return super().read()

    camera = Hanging()
    statuses = []
    reader = LatestFrameReader(camera, lambda online, reason: statuses.append((online, reason)),
                               offline_after_s=0.2).start()
    frame = reader.get(timeout=2)
    while frame is not None and frame.frame_no < 2:  # reads 1..3 arrive (newest first), the 4th hangs
        frame = reader.get(timeout=2)
    assert frame is not None and frame.frame_no == 2 and statuses == []
    deadline = time.monotonic() + 3
    while not statuses and time.monotonic() < deadline:
        reader.get(timeout=0.1)
    assert statuses and statuses[0] == (False, "no frame for 0.2 s")
    gate.set()
    assert reader.get(timeout=2) is not None
    reader.stop()
    assert statuses[-1] == (True, "frames arriving")
