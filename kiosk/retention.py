"""Keeping the data disk from filling: old round recordings go, the audit log stays.

A busy table records about 10 GB of key frames a day.  Once the disk is full the audit log
cannot be written, and the table stops (the dealer's screen raises its alarm rather than
settle money off the record).  So every minute this thread deletes the oldest recordings
the table file's ``recordings`` settings allow (``vision.retention``: never a held one, nor
one under the minimum retention), and writes what it deleted to the audit log: surveillance
must be able to tell a recording that aged out from one that went missing.  If the disk is
still short of space with nothing left it may delete, that is logged once (``disk_low``,
saying what it had to keep) and shown on the dealer's screen until there is room again:
days before the audit log would fill the disk, someone can still free it.
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
from pathlib import Path
from typing import Callable

from kiosk.audit import AuditLog, AuditRecord, AuditType
from kiosk.seals import SealWatch
from vision.record import round_in_name
from vision.retention import Unprunable, disk_of, prune_recordings, unprunable
from vision.table import RecordingSettings

log = logging.getLogger(__name__)
PERIOD_S = 60.0
LIMIT = 50


class RecordingRetention(threading.Thread):
    def __init__(self, root: Path, settings: RecordingSettings, audit: AuditLog, *,
                 busy: Callable[[], list[Path]] = list, period_s: float = PERIOD_S,
                 free_bytes: Callable[[Path], int] = lambda p: shutil.disk_usage(p).free,
                 warn: Callable[[str | None], None] = lambda message: None,
                 clock: Callable[[], float] = time.time, seals: SealWatch | None = None):
        super().__init__(name="recording-retention", daemon=True)
        self.root, self.settings, self.audit, self.busy = Path(root), settings, audit, busy
        self.period_s, self.free_bytes, self.warn, self.clock = period_s, free_bytes, warn, clock
        self.stop_event = threading.Event()
        self._low = False
        self.seals = seals        # checks a few sealed recordings against their seals each pass

    def run(self) -> None:
        while True:
            try:
                self.check()
            except Exception:   # a failed check must never take the kiosk down; the next one retries
                log.exception("recording retention check failed")
            try:
                if self.seals is not None:
                    self.seals.step()
            except Exception:
                log.exception("checking recordings against their seals failed")
            if self.stop_event.wait(self.period_s):
                return

    def check(self) -> None:
        """One pass: prune, log what went, and say (once in the log, on the screen until
        it passes) when the disk stays short of room."""
        busy, now = self.busy(), self.clock()
        removed = prune_recordings(self.root, self.settings, busy=busy, now=now, free_bytes=self.free_bytes,
                                   limit=LIMIT)
        if removed:
            self.audit.append(AuditType.RECORDINGS_PRUNED, "system", {
                "count": len(removed), "bytes": sum(r.bytes for r in removed),
                "reasons": sorted({r.reason for r in removed}), "folders": [r.folder for r in removed]})
        free = self.free_bytes(disk_of(self.root))
        if free >= self.settings.min_free_gb * 1e9:
            if self._low:
                self.warn(None)
            self._low = False
            return
        if len(removed) >= LIMIT:
            return              # still deleting: the next pass goes on
        kept = unprunable(self.root, self.settings, busy=busy, now=now)
        message = disk_low_message(free, self.settings, kept)
        if not self._low:
            self.audit.append(AuditType.DISK_LOW, "system", {
                "free_bytes": free, "min_free_gb": self.settings.min_free_gb, "held": kept.held,
                "too_young": kept.too_young, "message": message})
        self._low = True
        self.warn(message)


def disk_low_message(free: int, settings: RecordingSettings, kept: Unprunable) -> str:
    """What the supervisor reads: how short, what retention had to keep, what frees it."""
    why = [f"{kept.held} held by surveillance" if kept.held else "",
           f"{kept.too_young} younger than the {settings.min_keep_days:g}-day minimum retention"
           if kept.too_young else ""]
    why_text = "; ".join(t for t in why if t)
    return (f"the data disk has {free / 1e9:.1f} GB free, under the {settings.min_free_gb:g} GB it should keep, "
            f"and no recording is left to delete{f' (kept: {why_text})' if why_text else ''}; free space "
            "(release holds, copy old recordings off, or lower recordings.min_free_gb) before the audit log "
            "fills it and the table stops")


def deletion_of(log: AuditLog, round_no: int, *, since: str | None, table_id: str) -> AuditRecord | None:
    """The retention record that deleted a round's recording, if one did: surveillance (and
    whoever receives the round's evidence) must tell a recording that aged out from one that
    went missing.  Read from the round's start on: a recording is never deleted before it."""
    for record in log.iter_records(since=since, types=[AuditType.RECORDINGS_PRUNED]):
        names = record.data.get("folders", [])
        if record.table_id == table_id and any(round_in_name(n) == round_no for n in names):
            return record
    return None
