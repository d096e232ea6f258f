"""Keeping the data disk from filling: old round recordings go, the audit log stays.

A busy table records about 10 GB of key frames a day.  Once the disk is full the audit log
cannot be written, and the table stops (the dealer's screen raises its alarm rather than
settle money off the record).  So every minute this thread deletes the oldest recordings
the table file's ``recordings`` settings allow, and writes what it deleted to the audit log:
surveillance must be able to tell a recording that aged out from one that went missing.
If the disk is still short of space with nothing left to delete, that is logged once
(``disk_low``) until there is room again.
"""

from __future__ import annotations

import logging
import shutil
import threading
from pathlib import Path
from typing import Callable

from kiosk.audit import AuditLog, AuditType
from vision.record import prune_recordings
from vision.table import RecordingSettings

log = logging.getLogger(__name__)
PERIOD_S = 60.0


class RecordingRetention(threading.Thread):
    def __init__(self, root: Path, settings: RecordingSettings, audit: AuditLog, *,
                 busy: Callable[[], list[Path]] = list, period_s: float = PERIOD_S,
                 free_bytes: Callable[[Path], int] = lambda p: shutil.disk_usage(p).free):
        super().__init__(name="recording-retention", daemon=True)
        self.root, self.settings, self.audit, self.busy = Path(root), settings, audit, busy
        self.period_s, self.free_bytes = period_s, free_bytes
        self.stop_event = threading.Event()
        self._low = False

    def run(self) -> None:
        while True:
            try:
                self.check()
            except Exception:   # a failed check must never take the kiosk down; the next one retries
                log.exception("recording retention check failed")
            if self.stop_event.wait(self.period_s):
                return

    def check(self) -> None:
        """One pass: prune, log what went, and say once when the disk stays short of room."""
        removed = prune_recordings(self.root, self.settings, busy=self.busy(), free_bytes=self.free_bytes)
        if removed:
            self.audit.append(AuditType.RECORDINGS_PRUNED, "system", {
                "count": len(removed), "bytes": sum(r.bytes for r in removed),
                "reasons": sorted({r.reason for r in removed}), "folders": [r.folder for r in removed]})
        free = self.free_bytes(next(p for p in (self.root, *self.root.parents) if p.exists()))
        low = free < self.settings.min_free_gb * 1e9
        if low and not self._low and len(removed) < 50:   # nothing (more) to delete, yet short of room
            self.audit.append(AuditType.DISK_LOW, "system", {
                "free_bytes": free, "min_free_gb": self.settings.min_free_gb,
                "message": "the data disk is short of space and no recording is left to delete; "
                           "free space (or lower recordings.min_free_gb) before the audit log fills it"})
        self._low = low
