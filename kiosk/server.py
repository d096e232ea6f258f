"""Serving the kiosk: a threaded WSGI server on loopback, a clean stop, systemd's watchdog.

The threaded server from werkzeug is enough for one table: a handful of browsers, each
holding one event stream and one camera stream.  A stop (Ctrl-C, SIGTERM from systemd)
writes ``kiosk_stop`` to the audit log; a kill -9 cannot, which is how the next start
knows the last run crashed.  A camera stuck in a call that never returns stops the kiosk
the same way, with the cause as the reason and exit status ``CAMERA_STUCK_EXIT``, so
systemd starts it afresh: only a new process can open that camera again.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import Callable

from werkzeug.serving import make_server

from kiosk import watchdog
from scoring.errors import NiuniuError

log = logging.getLogger(__name__)

CAMERA_STUCK_EXIT = 75
"""Exit status after a stuck camera (EX_TEMPFAIL: try again): not 0, so ``Restart=on-failure``
in niuniu.service starts the kiosk again."""


def default_data_dir() -> Path:
    """``$NIUNIU_DATA_DIR``, else the XDG data folder (``~/.local/share/niuniu``)."""
    env = os.environ.get("NIUNIU_DATA_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "niuniu"


def is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class FrameLoopHeartbeat(threading.Thread):
    """Feed systemd's watchdog only while the camera loop is making progress.

    The pipeline's frame loop is not ours to edit, so this thread watches its frame
    counter: it beats when a new frame was processed since the last look, or while the
    camera is reported offline and its reader is reconnecting.  A loop that hangs stops
    the counter, the beats stop, and systemd restarts the service.

    An offline camera whose reader is stuck inside one call (``LatestFrameReader.stuck``:
    a read that never returns) is not reconnecting, and never will in this process: the
    beats stop for good and ``on_camera_stuck`` is told the cause once, so the kiosk can
    stop with it on record; if that stop itself hangs, systemd's watchdog kills the kiosk.
    Either way systemd starts a new process, which can open the camera again.
    """

    def __init__(self, pipeline, period: float | None = None,
                 on_camera_stuck: Callable[[str], None] | None = None) -> None:
        super().__init__(name="watchdog", daemon=True)
        self.pipeline = pipeline
        self.beat = watchdog.Heartbeat()
        self.period = period or (self.beat.period or 5.0) / 2
        self.stop_event = threading.Event()
        self.on_camera_stuck = on_camera_stuck
        self.camera_stuck: str | None = None
        self._last = -1

    def run(self) -> None:
        if not self.beat.enabled:
            return
        while not self.stop_event.wait(self.period):
            if self.camera_stuck is None:
                self.camera_stuck = _camera_stuck(self.pipeline)
                if self.camera_stuck is not None:
                    self._stuck(self.camera_stuck)
            if self.camera_stuck is not None:
                continue  # no more beats: a restart is the only way back
            status = self.pipeline.status()
            processed = status.get("frames_processed", 0)
            if processed != self._last or status.get("camera") == "offline":
                self._last = processed
                self.beat.beat()
                watchdog.status(f"camera {status.get('camera')}, {status.get('fps')} FPS, "
                                f"model {status.get('model')}, round {status.get('round_no')}")

    def _stuck(self, why: str) -> None:
        log.error("camera stuck: %s; stopping the kiosk so systemd starts it afresh", why)
        watchdog.status(f"camera stuck: {why}; restarting")
        if self.on_camera_stuck is not None:
            try:
                self.on_camera_stuck(why)
            except Exception:  # the watchdog, no longer fed, still restarts the kiosk
                log.exception("stopping the kiosk after a stuck camera failed")


def _camera_stuck(pipeline) -> str | None:
    """:meth:`~vision.pipeline.TablePipeline.camera_stuck`, guarded: a broken check must not
    stop the beats of a healthy loop."""
    stuck = getattr(pipeline, "camera_stuck", None)
    if not callable(stuck):
        return None
    try:
        return stuck()
    except Exception:  # a broken check must not stop the beats of a healthy loop
        log.exception("checking the camera reader failed")
        return None


def listen(host: str, port: int) -> socket.socket:
    """Bind the port ourselves, so a busy port is one readable error instead of the
    development server's own exit."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        raise NiuniuError(f"cannot listen on {host}:{port}: {exc.strerror or exc}; is another kiosk already "
                          "running there? Stop it or choose another --port") from None
    return sock


def serve(app, host: str, port: int, *, on_ready: Callable[[str], None] | None = None,
          on_stop: Callable[[str], None] | None = None, pipeline=None, listener: socket.socket | None = None) -> int:
    """Run until Ctrl-C or SIGTERM; return the exit code.  ``listener``: the port already
    bound (:func:`listen`) by a caller that must know it is free before it writes anything."""
    listener = listener or listen(host, port)
    server = make_server(host, listener.getsockname()[1], app, threaded=True, fd=listener.fileno())
    url = f"http://{host if ':' not in host else '[' + host + ']'}:{listener.getsockname()[1]}/"
    reason: dict = {"why": "stopped"}

    def _terminate(signum, _frame):
        reason["why"] = f"signal {signal.Signals(signum).name}"
        watchdog.stopping()
        threading.Thread(target=server.shutdown, daemon=True).start()

    def _stop_for_stuck_camera(why: str) -> None:
        # Not watchdog.stopping(): the watchdog stays armed, so a stop that hangs on the
        # stuck camera is still killed and restarted by systemd.
        reason["why"] = f"camera stuck: {why}"   # kiosk_stop's reason in the audit log
        reason["exit"] = CAMERA_STUCK_EXIT
        threading.Thread(target=server.shutdown, daemon=True).start()

    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if in_main else None
    beat = FrameLoopHeartbeat(pipeline, on_camera_stuck=_stop_for_stuck_camera) if pipeline is not None else None
    if beat is not None:
        beat.start()
    try:
        if on_ready is not None:
            on_ready(url)
        watchdog.ready(f"serving on {url}")
        sys.stdout.flush()
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        reason["why"] = "Ctrl-C"
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)
        if beat is not None:
            beat.stop_event.set()
        server.server_close()
        listener.close()
        if on_stop is not None:
            on_stop(reason["why"])
    return int(reason.get("exit", 0))
