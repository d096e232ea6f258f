"""Talk to systemd (readiness, watchdog heartbeats) and check the system clock.

On the table device the kiosk runs as a ``Type=notify`` service with ``WatchdogSec=``:
systemd restarts it when the heartbeats stop, which is how a camera loop that hangs
(a stuck driver call, a dead RTSP stream that never times out) gets recovered
without anyone at the table touching the box.  The heartbeat must therefore come
from the frame loop itself, never from a timer thread, or a hung loop would keep
"beating".

The protocol is one datagram per message to the ``AF_UNIX`` socket named in
``$NOTIFY_SOCKET`` (see ``sd_notify(3)``), so it is written here directly with the
standard library: no libsystemd binding to install on the Pi, and every function is
a harmless no-op (returning ``False``) when the process is not run by systemd --
on a laptop, in tests, under ``niuniu demo``.  Nothing here ever raises: a failed
notification must not take down the dealer's screen.

Audit timestamps are only as good as the system clock, and a Pi has no battery
clock: after a power cut it boots with the time it last saved until NTP answers.
:func:`clock_status` says whether the kernel considers the clock synchronised, so
the kiosk can warn the dealer and the supervisor.

Typical use in the kiosk process::

    from kiosk import watchdog

    beat = watchdog.Heartbeat()          # reads WATCHDOG_USEC once
    ...                                  # load model, open camera, bind HTTP
    watchdog.ready("serving on 127.0.0.1:8000")
    while running:
        frame = source.read()
        ...
        beat.beat()                      # cheap; sends at most every interval/4
    watchdog.stopping()
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum

log = logging.getLogger(__name__)

__all__ = [
    "ClockStatus",
    "ClockSync",
    "Heartbeat",
    "clock_status",
    "extend_timeout",
    "notify",
    "ready",
    "status",
    "stopping",
    "watchdog_interval",
    "watchdog_ping",
]

# Heartbeats are sent at this fraction of the watchdog interval, so that one late
# frame (a slow model call, a GC pause) never trips the watchdog; sd_watchdog_enabled(3)
# recommends at most half.
_BEATS_PER_INTERVAL = 4

_warned_send_failure = False


def _socket_address(env: Mapping[str, str]) -> str | None:
    address = env.get("NOTIFY_SOCKET", "")
    if address.startswith("@"):  # abstract namespace socket
        return "\0" + address[1:]
    if address.startswith("/"):
        return address
    return None  # unset, or a transport (vsock) this module does not speak


def notify(message: str, *, env: Mapping[str, str] | None = None) -> bool:
    """Send one raw sd_notify message (e.g. ``"READY=1"``); True if it was delivered.

    Returns False without sending when ``$NOTIFY_SOCKET`` is absent, so callers never
    need to know whether they run under systemd.  Send errors are logged once and
    swallowed: the service manager disappearing must not crash the kiosk.
    """
    global _warned_send_failure
    address = _socket_address(os.environ if env is None else env)
    if address is None:
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(address)
            sock.sendall(message.encode("utf-8"))
    except OSError as exc:
        if not _warned_send_failure:
            log.warning("could not notify systemd at %r: %s", address.replace("\0", "@"), exc)
            _warned_send_failure = True
        return False
    return True


def ready(status_text: str | None = None, *, env: Mapping[str, str] | None = None) -> bool:
    """Tell systemd start-up is finished: call once the HTTP server accepts connections.

    With ``Type=notify`` systemd holds back units ordered after the kiosk (and counts
    ``TimeoutStartSec=``) until this arrives.
    """
    lines = ["READY=1"]
    if status_text:
        lines.append(f"STATUS={_one_line(status_text)}")
    return notify("\n".join(lines), env=env)


def stopping(*, env: Mapping[str, str] | None = None) -> bool:
    """Tell systemd a clean shutdown has begun, so a slow stop is not mistaken for a hang."""
    return notify("STOPPING=1", env=env)


def status(text: str, *, env: Mapping[str, str] | None = None) -> bool:
    """Set the one-line status ``systemctl status niuniu`` shows (camera, FPS, model)."""
    return notify(f"STATUS={_one_line(text)}", env=env)


def watchdog_ping(*, env: Mapping[str, str] | None = None) -> bool:
    """Send one ``WATCHDOG=1`` heartbeat now; prefer :class:`Heartbeat` in loops."""
    return notify("WATCHDOG=1", env=env)


def extend_timeout(seconds: float, *, env: Mapping[str, str] | None = None) -> bool:
    """Ask for more start/stop time (``EXTEND_TIMEOUT_USEC``), e.g. while a model loads."""
    usec = max(0, int(seconds * 1_000_000))
    return notify(f"EXTEND_TIMEOUT_USEC={usec}", env=env)


def watchdog_interval(env: Mapping[str, str] | None = None) -> float | None:
    """Seconds systemd waits between heartbeats before restarting us, or None if unwatched.

    Mirrors ``sd_watchdog_enabled(3)``: ``$WATCHDOG_USEC`` must be a positive integer,
    and when ``$WATCHDOG_PID`` is set it must be this process (a child started by the
    kiosk, e.g. a browser, must not feed the parent's watchdog).
    """
    env = os.environ if env is None else env
    raw = env.get("WATCHDOG_USEC", "").strip()
    if not raw.isdigit() or int(raw) == 0:
        return None
    pid = env.get("WATCHDOG_PID", "").strip()
    if pid and (not pid.isdigit() or int(pid) != os.getpid()):
        return None
    return int(raw) / 1_000_000


class Heartbeat:
    """Rate-limited ``WATCHDOG=1`` for a loop that may spin much faster than needed.

    Call :meth:`beat` once per frame.  It costs one clock read when nothing is due, and
    sends a datagram at most every ``interval / 4`` seconds.  Without a watchdog
    (``$WATCHDOG_USEC`` unset) it never sends.
    """

    def __init__(self, env: Mapping[str, str] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._env = dict(os.environ if env is None else env)
        self._clock = clock
        interval = watchdog_interval(self._env)
        self.period: float | None = None if interval is None else interval / _BEATS_PER_INTERVAL
        self._last: float | None = None

    @property
    def enabled(self) -> bool:
        return self.period is not None

    def beat(self) -> bool:
        """Send a heartbeat if one is due; True when a datagram was delivered."""
        if self.period is None:
            return False
        now = self._clock()
        if self._last is not None and now - self._last < self.period:
            return False
        sent = notify("WATCHDOG=1", env=self._env)
        if sent:
            self._last = now
        return sent


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


# --------------------------------------------------------------------------- clock


class ClockSync(StrEnum):
    SYNCHRONISED = "synchronised"
    NOT_SYNCHRONISED = "not_synchronised"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class ClockStatus:
    """Whether the system clock can be trusted for audit timestamps, and how we know."""

    state: ClockSync
    source: str  # "adjtimex", "timedatectl" or "none"
    max_error_s: float | None = None
    detail: str = ""

    @property
    def synchronised(self) -> bool | None:
        """True / False, or None when it could not be determined."""
        if self.state is ClockSync.UNKNOWN:
            return None
        return self.state is ClockSync.SYNCHRONISED

    @property
    def message(self) -> str:
        """What the kiosk shows the dealer and the supervisor."""
        if self.state is ClockSync.SYNCHRONISED:
            return "System clock synchronised."
        if self.state is ClockSync.NOT_SYNCHRONISED:
            return ("System clock is NOT synchronised: audit timestamps may be wrong. "
                    "Check the network connection and the NTP server (timedatectl status).")
        return ("Cannot tell whether the system clock is synchronised; "
                "audit timestamps are unverified (timedatectl status).")

    def to_json(self) -> dict:
        return {"state": self.state.value, "source": self.source,
                "max_error_s": self.max_error_s, "detail": self.detail}


# Kernel <sys/timex.h> constants.
_STA_UNSYNC = 0x0040
_TIME_ERROR = 5
# systemd's timedated calls the clock synchronised while the kernel's maximum error
# estimate stays below 16 s; the kernel grows it by 500 ppm when NTP stops updating.
_MAX_SYNC_ERROR_US = 16_000_000


class _Timex(ctypes.Structure):
    # struct timex from <sys/timex.h>; only the leading fields are read, the padding
    # at the end covers the reserved ints so the kernel never writes past our buffer.
    _fields_ = [
        ("modes", ctypes.c_uint),
        ("offset", ctypes.c_long),
        ("freq", ctypes.c_long),
        ("maxerror", ctypes.c_long),
        ("esterror", ctypes.c_long),
        ("status", ctypes.c_int),
        ("constant", ctypes.c_long),
        ("precision", ctypes.c_long),
        ("tolerance", ctypes.c_long),
        ("time_sec", ctypes.c_long),
        ("time_usec", ctypes.c_long),
        ("tick", ctypes.c_long),
        ("ppsfreq", ctypes.c_long),
        ("jitter", ctypes.c_long),
        ("shift", ctypes.c_int),
        ("stabil", ctypes.c_long),
        ("jitcnt", ctypes.c_long),
        ("calcnt", ctypes.c_long),
        ("errcnt", ctypes.c_long),
        ("stbcnt", ctypes.c_long),
        ("tai", ctypes.c_int),
        ("_reserved", ctypes.c_int * 32),
    ]


def classify_timex(rc: int, status_bits: int, maxerror_us: int) -> ClockStatus:
    """Turn an ``adjtimex(2)`` reading into a :class:`ClockStatus` (pure, for tests)."""
    max_error_s = maxerror_us / 1_000_000
    if rc < 0:
        return ClockStatus(ClockSync.UNKNOWN, "adjtimex", None, "adjtimex failed")
    if rc == _TIME_ERROR or status_bits & _STA_UNSYNC:
        return ClockStatus(ClockSync.NOT_SYNCHRONISED, "adjtimex", max_error_s,
                           "kernel reports the clock unsynchronised (STA_UNSYNC)")
    if maxerror_us >= _MAX_SYNC_ERROR_US:
        return ClockStatus(ClockSync.NOT_SYNCHRONISED, "adjtimex", max_error_s,
                           f"maximum clock error {max_error_s:.1f} s")
    return ClockStatus(ClockSync.SYNCHRONISED, "adjtimex", max_error_s,
                       f"maximum clock error {max_error_s * 1000:.0f} ms")


def _adjtimex_status() -> ClockStatus | None:
    libc_name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(libc_name, use_errno=True)
        adjtimex = libc.adjtimex
    except (OSError, AttributeError, TypeError):
        return None  # not Linux/glibc
    adjtimex.argtypes = [ctypes.POINTER(_Timex)]
    adjtimex.restype = ctypes.c_int
    tx = _Timex()  # modes = 0: read only, needs no privilege
    rc = adjtimex(ctypes.byref(tx))
    if rc < 0:
        return None
    return classify_timex(rc, tx.status, tx.maxerror)


def parse_timedatectl(output: str) -> ClockStatus:
    """Read ``timedatectl show -p NTPSynchronized`` output (pure, for tests)."""
    for line in output.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "NTPSynchronized":
            value = value.strip().lower()
            if value == "yes":
                return ClockStatus(ClockSync.SYNCHRONISED, "timedatectl", None, "NTPSynchronized=yes")
            if value == "no":
                return ClockStatus(ClockSync.NOT_SYNCHRONISED, "timedatectl", None, "NTPSynchronized=no")
    return ClockStatus(ClockSync.UNKNOWN, "timedatectl", None, "no NTPSynchronized in timedatectl output")


def _timedatectl_status(timeout_s: float) -> ClockStatus | None:
    exe = shutil.which("timedatectl")
    if exe is None:
        return None
    try:
        done = subprocess.run([exe, "show", "-p", "NTPSynchronized"], capture_output=True,
                              text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None  # e.g. no D-Bus / timedated in a container
    return parse_timedatectl(done.stdout)


def clock_status(*, use_adjtimex: bool = True, timeout_s: float = 2.0) -> ClockStatus:
    """Is the system clock synchronised?  Never raises; UNKNOWN when it cannot tell.

    ``adjtimex(2)`` is asked first (no subprocess, no D-Bus, cheap enough to poll every
    few seconds); ``timedatectl`` is the fallback.  Both read the same kernel state.
    """
    if use_adjtimex:
        try:
            result = _adjtimex_status()
        except Exception as exc:  # ctypes surprises must not reach the kiosk
            log.debug("adjtimex failed: %s", exc)
            result = None
        if result is not None:
            return result
    result = _timedatectl_status(timeout_s)
    if result is not None:
        return result
    return ClockStatus(ClockSync.UNKNOWN, "none", None, "neither adjtimex nor timedatectl answered")
