"""Serving: loopback by default, and systemd's watchdog fed only while frames flow."""

from __future__ import annotations

import socket
import time

from kiosk.server import FrameLoopHeartbeat, default_data_dir, is_loopback


def test_loopback_detection():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.20")


def test_default_data_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("NIUNIU_DATA_DIR", str(tmp_path / "x"))
    assert default_data_dir() == tmp_path / "x"
    monkeypatch.delenv("NIUNIU_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_data_dir() == tmp_path / "niuniu"


class FakePipeline:
    def __init__(self):
        self.frames = 0
        self.camera = "online"

    def status(self):
        return {"frames_processed": self.frames, "camera": self.camera, "fps": 9.5, "model": "m", "round_no": 1}


def drain(sock) -> list[str]:
    out = []
    sock.setblocking(False)
    try:
        while True:
            out.append(sock.recv(4096).decode())
    except BlockingIOError:
        return out


def test_watchdog_beats_only_while_the_frame_loop_moves(tmp_path, monkeypatch):
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    monkeypatch.setenv("WATCHDOG_USEC", "200000")   # beats due every 50 ms, checked every 25 ms
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    pipeline = FakePipeline()
    beat = FrameLoopHeartbeat(pipeline)
    beat.start()
    try:
        for _ in range(10):
            pipeline.frames += 1
            time.sleep(0.03)
        moving = [m for m in drain(sock) if m == "WATCHDOG=1"]
        assert len(moving) >= 2
        time.sleep(0.2)                      # the loop hangs: no new frames
        drain(sock)
        time.sleep(0.2)
        assert [m for m in drain(sock) if m == "WATCHDOG=1"] == []
        pipeline.camera = "offline"          # a reconnecting camera is alive, not hung
        time.sleep(0.2)
        assert [m for m in drain(sock) if m == "WATCHDOG=1"]
    finally:
        beat.stop_event.set()
        beat.join(2)
        sock.close()


def test_a_busy_port_is_a_one_line_error(tmp_path):
    import pytest

    from kiosk.server import serve
    from scoring.errors import NiuniuError

    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    try:
        with pytest.raises(NiuniuError, match="cannot listen on 127.0.0.1:.*another --port"):
            serve(object(), "127.0.0.1", busy.getsockname()[1])
    finally:
        busy.close()
