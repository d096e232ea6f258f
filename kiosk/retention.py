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
So retention keeps a recording either one holds (:func:`read_holds`), and a held recording
whose hold file has gone is logged once (``recording_hold_lost``) for surveillance to see.
A hold or release record the disk damaged (:class:`kiosk.audit.DamagedRecord`) cannot say
which recording it held or released: retention then keeps every recording of its round as
held (:class:`LogHolds`), and says so once in the journal, rather than delete a recording it
cannot prove unheld or stop at that record every minute.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from kiosk.audit import AuditError, AuditLog, AuditRecord, AuditType, DamagedRecord
from kiosk.seals import SealWatch, readable
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
        self._failing: dict[str, str] = {}     # what failed last pass -> its words, told once
        self.seals = seals        # checks a few sealed recordings against their seals each pass
        # The table whose holds apply: the recordings folder is recordings/<table id>.
        self.table_id = self.root.name if table_id is None else table_id
        # a damaged recording_hold_lost record is passed over: at worst its hold's loss is logged once more
        self._told_lost = {data["held_seq"] for data in (readable(r) for r in audit.records(
            types=[AuditType.RECORDING_HOLD_LOST])) if isinstance(data.get("held_seq"), int)}
        self._told_damaged: set[int] = set()     # seqs of damaged hold and release records told of
        self._unlogged: list = []     # deleted on passes whose recordings_pruned record the log refused
        # The recordings there are now, and a clock no NTP step moves: see vision.retention.ThisRun.
        self._earlier = frozenset(f.name for f in self.root.iterdir() if f.is_dir()) if self.root.is_dir() \
            else frozenset()
        self._since = uptime()
        self.uptime = uptime

    def run(self) -> None:
        while True:
            self._step("recording retention check", self.check)
            # Not while a deletion waits for its record: the seal watch would call those recordings missing.
            if self.seals is not None and not self._unlogged:
                self._step("checking recordings against their seals", self.seals.step)
            if self.stop_event.wait(self.period_s):
                return

    def _step(self, what: str, step: Callable[[], None]) -> None:
        """One part of a pass; a failure never takes the kiosk down, the next pass retries.  A
        failure with its own words (a full disk refusing the log's append, a folder that cannot be
        deleted) is one journal line, said again only when the words change: a full disk stays
        full for hours, and a traceback every minute buried the line that says what to do (QA52).
        Anything else is a defect: its traceback, every time."""
        try:
            step()
        except (AuditError, sqlite3.Error, OSError) as exc:
            if self._failing.get(what) != str(exc):
                log.error("%s failed: %s", what, exc)
            self._failing[what] = str(exc)
            return
        except Exception:
            log.exception("%s failed", what)
        if self._failing.pop(what, None) is not None:
            log.info("%s works again", what)

    def check(self) -> None:
        """One pass: prune, log what went, and say (once in the log, on the screen until
        it passes) when the disk stays short of room."""
        busy, now = self.busy(), self.clock()
        run = ThisRun(self._earlier, self.uptime() - self._since)
        logged = read_holds(self.audit)
        holds = {name: record for (table, name), record in logged.held.items() if table == self.table_id}
        self._tell_lost_holds(holds)
        held = set(holds) | self._kept_for_damage(logged)
        removed = prune_recordings(self.root, self.settings, busy=busy, held=held, now=now,
                                   free_bytes=self.free_bytes, limit=LIMIT, run=run)
        self._log_pruned(removed)
        free = self.free_bytes(disk_of(self.root))
        if free >= self.settings.min_free_gb * 1e9:
            if self._low:
                self.warn(None)
            self._low = False
            return
        if len(removed) >= LIMIT:
            return              # still deleting: the next pass goes on
        kept = unprunable(self.root, self.settings, busy=busy, held=held, now=now, run=run)
        message = disk_low_message(free, self.settings, kept)
        if not self._low:
            self.audit.append(AuditType.DISK_LOW, "system", {
                "free_bytes": free, "min_free_gb": self.settings.min_free_gb, "held": kept.held,
                "too_young": kept.too_young, "message": message})
        self._low = True
        self.warn(message)

    def _log_pruned(self, removed: list) -> None:
        """Write the ``recordings_pruned`` record of what this pass deleted, and of what earlier
        passes deleted while the log refused their record, until one is written.

        The deletion is never held back for the record: on a full disk it is what frees the room
        the log's next append needs, and a record written first would be refused with nothing
        deleted, leaving the disk full and the table stopped.  Kept instead: a deletion never
        recorded reads to the seal watch as a recording removed by hand ("missing"), a false
        tamper flag on retention's own routine work (QA52 review L1)."""
        pending = [*self._unlogged, *removed]
        if not pending:
            return
        self._unlogged = pending         # until the append below goes through
        self.audit.append(AuditType.RECORDINGS_PRUNED, "system", {
            "count": len(pending), "bytes": sum(r.bytes for r in pending),
            "reasons": sorted({r.reason for r in pending}), "folders": [r.folder for r in pending]})
        self._unlogged = []

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

    def _kept_for_damage(self, logged: LogHolds) -> set[str]:
        """The folders kept because a damaged hold may be theirs; each damaged hold or release
        said once in the journal, in the words every reader of a damaged record uses."""
        for record in logged.damaged:
            if record.table_id != self.table_id or record.seq in self._told_damaged:
                continue
            self._told_damaged.add(record.seq)
            log.warning("%s; %s", DamagedRecord(record, record.damage), damaged_hold_words(record))
        folders = self.root.iterdir() if self.root.is_dir() else ()
        return {f.name for f in folders if f.is_dir() and logged.damaged_hold(self.table_id, f.name) is not None}


@dataclass(frozen=True)
class LogHolds:
    """The log's holds as retention must read them: the holds no release has lifted
    (``held``: ``(table id, folder)`` -> its ``recording_held`` record), and the hold and release
    records that cannot be read (``damaged``, oldest first).

    A damaged release lifts nothing: the hold it may have lifted stays.  A damaged hold holds
    every recording of its round (its round is stored beside the payload, not in it) until a
    readable release of the recording is logged after it: a recording it may hold is never one
    retention can prove unheld."""

    held: dict[tuple[str, str], AuditRecord]
    damaged: tuple[AuditRecord, ...]
    released: dict[tuple[str, str], int]     # (table id, folder) -> the seq of its last readable release

    def damaged_hold(self, table_id: str, folder: str) -> AuditRecord | None:
        """The damaged ``recording_held`` record that may be this folder's, unreleased since."""
        return next((r for r in self.damaged if r.type == AuditType.RECORDING_HELD and r.table_id == table_id
                     and r.round_no in (None, round_in_name(folder)) and not self.lifted(r, folder)), None)

    def lifted(self, record: AuditRecord, folder: str | None = None) -> bool:
        """Whether a readable release logged after a damaged ``record`` lifts it: the release of
        ``folder``, or (None) of any recording of the record's round, as the round list asks.
        One rule for retention and the review pages: a release is the only word that ends a hold."""
        return any(seq > record.seq for (table, name), seq in self.released.items()
                   if table == record.table_id
                   and (name == folder if folder is not None else
                        record.round_no is not None and round_in_name(name) == record.round_no))


def damaged_hold_words(record: AuditRecord) -> str:
    """What a damaged hold or release record means for its round's recordings, in the words the
    journal and the Holds page both say after the record's own :class:`DamagedRecord` line."""
    whose = "every recording of this table" if record.round_no is None else f"round {record.round_no}'s recording"
    if record.type == AuditType.RECORDING_HELD:
        return (f"it cannot say which recording it held, so retention keeps {whose} as held until a release of "
                "it is logged")
    return (f"it cannot say which recording it released, so retention keeps {whose} held, if it was, until a "
            "release of it is logged again")


def read_holds(log: AuditLog) -> LogHolds:
    """The holds the audit log records (:class:`LogHolds`), whatever became of the hold files:
    a file can be deleted by hand, the log cannot."""
    held: dict[tuple[str, str], AuditRecord] = {}
    released: dict[tuple[str, str], int] = {}
    damaged = []
    for record in log.iter_records(types=[AuditType.RECORDING_HELD, AuditType.RECORDING_RELEASED]):
        data, damage = record.read()
        if damage:
            damaged.append(record)
            continue
        name = data.get("folder")
        if not isinstance(name, str) or not name:
            continue
        if record.type == AuditType.RECORDING_HELD:
            held[(record.table_id, name)] = record
        else:
            held.pop((record.table_id, name), None)
            released[(record.table_id, name)] = record.seq
    return LogHolds(held, tuple(damaged), released)


def pruned_folders(record: AuditRecord) -> list[str]:
    """The folders a ``recordings_pruned`` record says retention deleted; none where the record
    is damaged: a damaged record excuses nothing, its folders read as missing."""
    folders = readable(record).get("folders", [])
    return [name for name in folders if isinstance(name, str)] if isinstance(folders, list) else []


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
        if record.table_id == table_id and any(round_in_name(n) == round_no for n in pruned_folders(record)):
            return record
    return None


def folder_deletion(log: AuditLog, folder: str, *, since: str | None, table_id: str) -> AuditRecord | None:
    """The retention record that deleted one recording folder (by its exact name), if one did."""
    for record in log.iter_records(since=since, types=[AuditType.RECORDINGS_PRUNED]):
        if record.table_id == table_id and folder in pruned_folders(record):
            return record
    return None
