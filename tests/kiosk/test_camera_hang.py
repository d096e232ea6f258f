"""A camera call that never returns (QA 45, finding 8) brings the kiosk back by a restart.

picamera2's capture after a CSI frontend timeout or a pulled cable, or a stream read with
no timeout, blocks forever without raising: the reader's reconnect never runs, and the
heartbeat used to go on feeding systemd's watchdog because the camera was "offline".  Now
the reader names the stuck call once it has run past its bound, the heartbeat stops, and
the kiosk stops with that cause (``kiosk_stop``'s reason) and a non-zero exit status, so
``Restart=on-failure`` starts a process that can open the camera again.
"""

from __future__ import annotations

import logging
import socket
import threading
import time

import numpy as np
import pytest

from kiosk.server import CAMERA_STUCK_EXIT, serve
from vision import sources
from vision.pipeline import TablePipeline
from vision.sources import FrameSource, LatestFrameReader, SourceError
from vision.table import table_config_from_dict


class HangingCamera(FrameSource):
    """A live camera whose reads block, without raising, after ``frames`` good ones."""

    live = True
    description = "hanging test camera"

    def __init__(self, frames: int = 3):
        self.frames = frames
        self.reads = 0
        self.opens = 0
        self.release = threading.Event()   # set at the end of a test: the stuck call returns

    def open(self):
        self.opens += 1

    def read(self):
        self.reads += 1
        if self.reads > self.frames:
            self.release.wait(30)
            raise OSError("released by the test")
        time.sleep(0.01)
        return np.zeros((48, 64, 3), dtype=np.uint8)


class Unplugged(FrameSource):
    """A camera every open of which fails at once: reconnecting, never stuck."""

    live = True
    description = "unplugged test camera"

    def open(self):
        raise SourceError("camera 0 cannot be opened")

    def read(self):
        raise AssertionError("never opened")


def wait_until(condition, timeout=5.0, step=0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step)
    return condition()


def test_a_read_that_never_returns_is_named_stuck_once_past_its_bound(caplog):
    camera = HangingCamera()
    statuses = []
    reader = LatestFrameReader(camera, lambda online, reason: statuses.append((online, reason)),
                               offline_after_s=0.05, stuck_after_s=1.0).start()
    try:
        assert wait_until(lambda: reader.get(timeout=0.05) is None and statuses)
        assert statuses == [(False, "no frame for 0.05 s")]   # offline first, as before ...
        assert reader.stuck() is None                         # ... but not yet stuck
        with caplog.at_level(logging.ERROR, logger="vision.sources"):
            assert wait_until(lambda: reader.get(timeout=0.05) is None and reader.stuck() is not None)
            for _ in range(5):
                reader.get(timeout=0.01)
                reader.stuck()
        assert reader.stuck() == "hanging test camera: read() has not returned in 1 s (a stuck camera driver or stream)"
        logged = [r.getMessage() for r in caplog.records if "has not returned" in r.getMessage()]
        assert len(logged) == 1 and "must be restarted" in logged[0]   # the cause, once
        assert camera.opens == 1 and reader.reconnects == 0            # nothing can reopen it in place
        started = time.monotonic()
        reader.stop(timeout=5)
        assert time.monotonic() - started < 1    # no waiting on a thread that will not come back
    finally:
        camera.release.set()


def test_the_stuck_bound_follows_offline_after_s():
    camera = HangingCamera()
    assert LatestFrameReader(camera).stuck_after_s == sources.STUCK_MIN_S == 60.0
    assert LatestFrameReader(camera, offline_after_s=12).stuck_after_s == 120.0
    assert LatestFrameReader(camera, offline_after_s=12, stuck_after_s=5).stuck_after_s == 5


def test_a_reconnecting_camera_is_never_called_stuck():
    reader = LatestFrameReader(Unplugged(), initial_backoff_s=0.3, max_backoff_s=0.3, stuck_after_s=0.1).start()
    try:
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:    # backing off between failed opens is not a stuck call
            assert reader.stuck() is None
            time.sleep(0.02)
        assert reader.reconnects >= 2
    finally:
        reader.stop()


class NoCards:
    name = "no-cards"

    def detect(self, image, regions=None):
        return []


CONFIG = table_config_from_dict({
    "table_id": "t1", "rules": "cambodia",
    "seats": [
        {"name": "banker", "polygon": [[0.25, 0.0], [0.75, 0.0], [0.75, 0.4], [0.25, 0.4]]},
        {"name": "1", "polygon": [[0.0, 0.5], [0.5, 0.5], [0.5, 1.0], [0.0, 1.0]]},
    ],
    # called offline within the pipeline's 0.5 s wait for a frame, past that stuck at 10 x 0.1 s
    "camera": {"offline_after_s": 0.1, "move_limit": 0},
    "thresholds": {"motion_gate": False},
})


def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok"]


@pytest.fixture
def systemd(tmp_path, monkeypatch):
    """The datagrams the kiosk sends systemd, in order, read as they come (as systemd does:
    a socket left full would block the sender)."""
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(0.05)
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    monkeypatch.setenv("WATCHDOG_USEC", "200000")   # beats due every 50 ms, checked every 25 ms
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    messages: list[str] = []
    done = threading.Event()

    def listen():
        while not done.is_set():
            try:
                messages.append(sock.recv(4096).decode())
            except TimeoutError:
                pass

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    yield messages
    done.set()
    listener.join(2)
    sock.close()


def test_a_stuck_camera_stops_the_watchdog_and_the_kiosk_exits_to_be_restarted(systemd, monkeypatch):
    monkeypatch.setattr(sources, "STUCK_MIN_S", 0.0)   # the bound is then 10 x offline_after_s: 1 s
    camera = HangingCamera(frames=5)
    pipeline = TablePipeline(CONFIG, camera, NoCards())
    stops, result = [], {}

    def stopped(why):
        stops.append(why)
        pipeline.stop()                 # as the kiosk command's on_stop does

    def run():
        result["exit"] = serve(app, "127.0.0.1", 0, on_stop=stopped, pipeline=pipeline)

    pipeline.start()
    kiosk = threading.Thread(target=run, daemon=True)
    started = time.monotonic()
    kiosk.start()
    try:
        kiosk.join(10)
        assert not kiosk.is_alive(), "the kiosk kept running (and feeding the watchdog) with its camera stuck"
        assert time.monotonic() - started < 5
        assert result["exit"] == CAMERA_STUCK_EXIT != 0          # Restart=on-failure starts it again
        assert stops == ["camera stuck: hanging test camera: read() has not returned in 1 s "
                         "(a stuck camera driver or stream)"]    # kiosk_stop's reason in the audit log
        time.sleep(0.2)                 # a beat still due would have come by now
        messages = list(systemd)
        stuck_at = next(i for i, m in enumerate(messages) if m.startswith("STATUS=camera stuck"))
        before, after = messages[:stuck_at], messages[stuck_at:]
        assert any(m.startswith("STATUS=camera offline") for m in before)
        offline_at = next(i for i, m in enumerate(before) if m.startswith("STATUS=camera offline"))
        assert "WATCHDOG=1" in before[offline_at:]   # offline and reconnecting: still fed, as before ...
        assert "WATCHDOG=1" not in after             # ... stuck: never again, so a hung stop is killed too
        assert "STOPPING=1" not in messages          # the watchdog stays armed until the process is gone
        assert camera.opens == 1
    finally:
        camera.release.set()
        pipeline.stop()
