"""The kiosk's systemd notifications reach a real AF_UNIX datagram socket, as systemd's would.

If these datagrams are wrong the service never becomes "active" (READY=1 missing) or
is killed by the watchdog every WatchdogSec= although the camera loop is healthy.
"""

from __future__ import annotations

import os
import socket
import uuid

import pytest

from kiosk import watchdog


@pytest.fixture()
def notify_socket(tmp_path):
    """A bound datagram socket standing in for systemd's notification socket."""
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(2)
    yield sock, {"NOTIFY_SOCKET": str(path)}
    sock.close()


def _received(sock) -> str:
    return sock.recv(4096).decode()


def _nothing_pending(sock) -> bool:
    sock.setblocking(False)
    try:
        sock.recv(4096)
    except BlockingIOError:
        return True
    finally:
        sock.settimeout(2)
    return False


def test_ready_status_stopping_arrive_as_separate_datagrams(notify_socket):
    sock, env = notify_socket
    assert watchdog.ready("serving on 127.0.0.1:8000", env=env) is True
    assert _received(sock) == "READY=1\nSTATUS=serving on 127.0.0.1:8000"
    assert watchdog.status("camera ok\n 7.9 FPS", env=env) is True
    assert _received(sock) == "STATUS=camera ok 7.9 FPS"  # one line, as systemctl shows it
    assert watchdog.watchdog_ping(env=env) is True
    assert _received(sock) == "WATCHDOG=1"
    assert watchdog.extend_timeout(90, env=env) is True
    assert _received(sock) == "EXTEND_TIMEOUT_USEC=90000000"
    assert watchdog.stopping(env=env) is True
    assert _received(sock) == "STOPPING=1"


def test_abstract_namespace_socket_is_supported():
    name = f"niuniu-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(2)
        assert watchdog.notify("READY=1", env={"NOTIFY_SOCKET": "@" + name}) is True
        assert sock.recv(64) == b"READY=1"


def test_without_systemd_every_call_is_a_silent_no_op():
    env: dict[str, str] = {}
    assert watchdog.ready(env=env) is False
    assert watchdog.stopping(env=env) is False
    assert watchdog.watchdog_ping(env=env) is False
    assert watchdog.watchdog_interval(env) is None
    assert watchdog.Heartbeat(env=env).beat() is False


def test_a_vanished_socket_does_not_crash_the_caller(tmp_path):
    env = {"NOTIFY_SOCKET": str(tmp_path / "gone.sock")}
    assert watchdog.ready(env=env) is False
    assert watchdog.watchdog_ping(env=env) is False


@pytest.mark.parametrize("value", ["", "0", "abc", "-5"])
def test_unusable_watchdog_usec_means_unwatched(value):
    assert watchdog.watchdog_interval({"WATCHDOG_USEC": value}) is None


def test_watchdog_interval_reads_usec_and_honours_watchdog_pid():
    assert watchdog.watchdog_interval({"WATCHDOG_USEC": "30000000"}) == 30.0
    mine = {"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid())}
    assert watchdog.watchdog_interval(mine) == 30.0
    # systemd addressed another process (e.g. we are a child of the kiosk): not ours to feed.
    other = {"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid() + 1)}
    assert watchdog.watchdog_interval(other) is None


def test_heartbeat_from_a_fast_frame_loop_is_rate_limited(notify_socket):
    sock, env = notify_socket
    now = [100.0]
    beat = watchdog.Heartbeat(env={**env, "WATCHDOG_USEC": "20000000"}, clock=lambda: now[0])
    assert beat.enabled and beat.period == 5.0  # a quarter of WatchdogSec=20
    assert beat.beat() is True
    assert _received(sock) == "WATCHDOG=1"
    for _ in range(50):  # 50 frames within 4.9 s: no further datagram
        now[0] += 0.098
        assert beat.beat() is False
    assert _nothing_pending(sock)
    now[0] += 0.2  # 5.1 s after the first beat
    assert beat.beat() is True
    assert _received(sock) == "WATCHDOG=1"


def test_heartbeat_retries_on_the_next_frame_after_a_failed_send(tmp_path):
    path = tmp_path / "late.sock"
    now = [0.0]
    beat = watchdog.Heartbeat(env={"NOTIFY_SOCKET": str(path), "WATCHDOG_USEC": "8000000"},
                              clock=lambda: now[0])
    assert beat.beat() is False  # systemd's socket not there yet
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
        sock.settimeout(2)
        now[0] += 0.05
        assert beat.beat() is True  # not held back by the failed attempt
        assert sock.recv(64) == b"WATCHDOG=1"
