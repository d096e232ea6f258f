"""The chain page's check, kept quick on a log of millions of records.

Walking the whole chain costs about 15 µs a record on the development machine: a busy
table's year (~13 million records) takes minutes, more on a Pi — far too long for a page
view, and a request that long ties up the kiosk.  So a full walk runs in the background
(when none has finished in the last hour, or the append-only guards are found missing),
and each view walks only the records added since its verified head.  The page says when
the full walk finished, so nobody mistakes the quick check for a full one.  Editing an
old record needs the guards dropped first, and every view checks them.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable

from kiosk.audit import AuditLog, VerifyResult

FULL_EVERY_S = 3600.0
WAIT_FOR_FULL_S = 5.0     # a small log's full walk is shown at once


@dataclass(frozen=True)
class ChainStatus:
    full: VerifyResult | None       # the last finished full walk
    full_at: float | None           # when it finished (epoch seconds)
    running: bool                   # a full walk is under way
    since: VerifyResult | None      # the records after the full walk's head, walked now
    guards_present: bool

    @property
    def ok(self) -> bool:
        return bool(self.full and self.full.ok and self.since and self.since.ok and self.guards_present)

    @property
    def first_bad_seq(self) -> int | None:
        for result in (self.full, self.since):
            if result is not None and result.first_bad_seq is not None:
                return result.first_bad_seq
        return None


class ChainCheck:
    def __init__(self, log: AuditLog, *, full_every_s: float = FULL_EVERY_S, clock: Callable[[], float] = time.time):
        self.log, self.full_every_s, self.clock = log, full_every_s, clock
        self._lock = threading.Lock()
        self._full: tuple[VerifyResult, float] | None = None
        self._thread: threading.Thread | None = None

    def _walk(self) -> None:
        result = self.log.verify()
        with self._lock:
            self._full = (result, self.clock())

    def _start_full(self) -> threading.Thread:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._walk, name="audit-chain-walk", daemon=True)
                self._thread.start()
            return self._thread

    def status(self) -> ChainStatus:
        guards = self.log.guards_present()
        with self._lock:
            full = self._full
        # Guards gone since the last walk: old records may have been edited since, so walk again.
        urgent = full is None or (not guards and full[0].guards_present)
        if urgent or self.clock() - full[1] > self.full_every_s:
            thread = self._start_full()
            if urgent:
                thread.join(WAIT_FOR_FULL_S)
            with self._lock:
                full = self._full
        result, at = full if full else (None, None)
        since = None
        if result is not None and result.first_bad_seq is None:
            since = self.log.verify(after=(result.count, result.head_hash))
        with self._lock:
            running = self._thread is not None and self._thread.is_alive()
        return ChainStatus(result, at, running, since, guards)
