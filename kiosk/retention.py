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

A hold is kept in two places: the ``hold.json`` in the folder and the ``recording_held``
record in the log.  The file is what a person with shell access can delete; the log is not.
So retention keeps a recording either one holds (:func:`log_holds`), and a held recording
whose hold file has gone is logged once (``recording_hold_lost``) for surveillance to see.
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
from vision.record import HOLD, round_in_name
from vision.retention import ThisRun, Unprunable, disk_of, prune_recordings, unprunable
from vision.table import RecordingSettings

log = logging.getLogger(__name__)
PERIOD_S = 60.0
LIMIT = 50


class RecordingRetention(threading.Thread):
    def __init__(self, root: Path, settings: RecordingSettings, audit: AuditLog, *,
                 busy: Callable[[], list[Path]] = list, period_s: float = PERIOD_S,
                 free_bytes: Callable[[Path], int] = lambda p: shutil.disk_usage(p).free,
                 warn: Callable[[str | None], None] = lambda message: None,
                 clock: Callable[[], float] = time.time, seals: SealWatch | None = None,
                 table_id: str | None = None, uptime: Callable[[], float] = time.monotonic):
        super().__init__(name="recording-retention", daemon=True)
        self.root, self.settings, self.audit, self.busy = Path(root), settings, audit, busy
        self.period_s, self.free_bytes, self.warn, self.clock = period_s, free_bytes, warn, clock
        self.stop_event = threading.Event()
        self._low = False
        self.seals = seals        # checks a few sealed recordings against their seals each pass
        # The table whose holds apply: the recordings folder is recordings/<table id>.
        self.table_id = self.root.name if table_id is None else table_id
        self._told_lost = {r.data["held_seq"] for r in audit.records(types=[AuditType.RECORDING_HOLD_LOST])
                           if isinstance(r.data.get("held_seq"), int)}
        # The recordings there are now, and a clock no NTP step moves: see vision.retention.ThisRun.
        self._earlier = frozenset(f.name for f in self.root.iterdir() if f.is_dir()) if self.root.is_dir() \
            else frozenset()
        self._since = uptime()
        self.uptime = uptime

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
        run = ThisRun(self._earlier, self.uptime() - self._since)
        holds = {name: record for (table, name), record in log_holds(self.audit).items() if table == self.table_id}
        self._tell_lost_holds(holds)
        removed = prune_recordings(self.root, self.settings, busy=busy, held=set(holds), now=now,
                                   free_bytes=self.free_bytes, limit=LIMIT, run=run)
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
        kept = unprunable(self.root, self.settings, busy=busy, held=set(holds), now=now, run=run)
        message = disk_low_message(free, self.settings, kept)
        if not self._low:
            self.audit.append(AuditType.DISK_LOW, "system", {
                "free_bytes": free, "min_free_gb": self.settings.min_free_gb, "held": kept.held,
                "too_young": kept.too_young, "message": message})
        self._low = True
        self.warn(message)

    def _tell_lost_holds(self, holds: dict[str, AuditRecord]) -> None:
        """Log, once per hold, a recording the log holds whose ``hold.json`` is gone: retention
        keeps it all the same, but someone removed the file, and surveillance must hear of it."""
        for name, held in holds.items():
            folder = self.root / name
            if held.seq in self._told_lost or not folder.is_dir() or (folder / HOLD).exists():
                continue
            self._told_lost.add(held.seq)
            self.audit.append(AuditType.RECORDING_HOLD_LOST, "system", {
                "folder": name, "held_seq": held.seq, "held_by": held.actor,
                "held_reason": held.data.get("reason"),
                "message": f"{name} is held in the audit log (seq {held.seq}, by {held.actor}, never released) "
                           f"but its {HOLD} is gone; retention keeps it as held"}, round_no=held.round_no,
                table_id=held.table_id)


def log_holds(log: AuditLog) -> dict[tuple[str, str], AuditRecord]:
    """The holds the audit log records and no release has lifted: ``(table id, folder)`` ->
    its ``recording_held`` record.  What a hold is, whatever became of the hold file: the
    file can be deleted by hand, the log cannot."""
    held: dict[tuple[str, str], AuditRecord] = {}
    for record in log.iter_records(types=[AuditType.RECORDING_HELD, AuditType.RECORDING_RELEASED]):
        name = record.data.get("folder")
        if not isinstance(name, str) or not name:
            continue
        if record.type == AuditType.RECORDING_HELD:
            held[(record.table_id, name)] = record
        else:
            held.pop((record.table_id, name), None)
    return held


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


def folder_deletion(log: AuditLog, folder: str, *, since: str | None, table_id: str) -> AuditRecord | None:
    """The retention record that deleted one recording folder (by its exact name), if one did."""
    for record in log.iter_records(since=since, types=[AuditType.RECORDINGS_PRUNED]):
        if record.table_id == table_id and folder in record.data.get("folders", []):
            return record
    return None
