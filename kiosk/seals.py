"""Every sealed recording against its seal: the sweep for frames changed on disk.

The review page checks one round's recording when it is opened, and an evidence package is
checked when it is handed over; a key frame changed on the kiosk's disk in a round nobody
has disputed yet shows only in a sweep.  ``niuniu audit check-recordings`` sweeps a period
at once (a busy table's day: about 10 GB read); :class:`SealWatch` runs inside the kiosk
and checks the sealed recordings in turn, a few each minute, so a change is logged
(``recording_changed``, under the round) without anyone asking.  A sealed recording whose
folder is gone with nothing in the log to say why (no ``recordings_pruned``, no restore), or
gone while the log still holds it, is logged the same way (``recording_changed`` with
``"missing": true``): a deleted recording is the most thorough change of all, and a sweep
that only lists the folders on disk would never see it.

The other way round, a folder on disk with no seal at all (recorded by a release before sealing,
or left by a kiosk that stopped before sealing it and not among the few its next start sealed) is
one the sweep cannot check: it is named and counted, never passed over as if checked (QA52 L1).
One the log shows was recorded before the table's first run of a sealing release (an upgraded
table's old rounds, until retention deletes them) is counted apart, as made before sealing: nothing
was ever meant to vouch for it, and failing every nightly check on it would read as tampering for
weeks (QA53).  Which rounds those are comes from the hash-chained log alone (which run recorded the
round, and where the first seal or sealing start stands), never from the folder's own meta.json.
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import cached_property
from pathlib import Path

from kiosk.audit import AuditLog, AuditRecord, AuditType, log_moment, utc_iso
from vision.record import FOLDER_TIME, RECORDINGS, recording_digests, recordings_dir, round_in_name, seal_changes

# Why a start seals only the newest few folders it finds unsealed (kiosk.table_service.LEFT_OVER_FOLDERS),
# in the words the kiosk_start record, the journal and check-recordings use.
OLDER_UNSEALED_WHY = ("a start seals only the newest recordings left unsealed (those the last run may have been "
                      "cut off in): hashing every old one (about 10 MB a round) would hold up the table's start, "
                      "and a seal made now would vouch for the files only from now on")


def against_seal(folder: Path, seal: AuditRecord) -> list[str]:
    """What differs between a recording folder on disk and the ``recording_sealed`` record of it."""
    return seal_changes(recording_digests(folder), seal.data.get("files", {}))


@dataclass
class SealSweep:
    intact: int = 0
    gone: list[str] = field(default_factory=list)          # no longer on disk, and the log says why
    missing: list[str] = field(default_factory=list)       # no longer on disk, and nothing in the log says why
    changed: dict[str, list[str]] = field(default_factory=dict)   # "round N (folder)" -> what differs
    # "round N: what its recording lost": the recorder logged it (recording_failed, QA51 H4); a
    # recording never made leaves no seal, so nothing else here would name the round
    failed: list[str] = field(default_factory=list)
    # "round N (folder)": on disk with no seal in the log, so nothing here can say whether it
    # changed (a release before sealing made it, or a kiosk stopped before sealing it)
    unsealed: list[str] = field(default_factory=list)
    # "round N (folder)": recorded by the kiosk's last run, which has no kiosk_stop yet: the round
    # is being played, or the kiosk stopped in it and its next start seals it
    not_yet_sealed: list[str] = field(default_factory=list)
    # "round N (folder)": no seal, and the log shows the round began before this table's first run
    # that sealed recordings (KioskRuns.made_before_sealing): nothing to check it against, and no
    # seal was missed
    made_before_sealing: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        # A recording gone with no record of its deletion is as much a finding as a changed one:
        # retention logs every folder it deletes, so surveillance can tell the two apart.  One
        # with no seal is not a finding of change, but an "all checked" answer over it would be
        # untrue: it fails the check like a failed recording or a damaged seal does.  One made
        # before the table's log had any sealing was never to be sealed: it is counted, not failed.
        return not self.changed and not self.missing and not self.failed and not self.unsealed

    def made_before_sealing_dates(self) -> str:
        """The days the recordings made before sealing start on, oldest to newest, from their
        folders' names ("2026-11-02 to 2026-12-01"): what tells the technician when retention
        will have deleted them all."""
        days = sorted({_folder_start(label.partition("(")[2].rstrip(")")) for label in self.made_before_sealing}
                      - {None})
        if not days:
            return "dates not known from their folders' names"
        first, last = days[0].date().isoformat(), days[-1].date().isoformat()
        return first if first == last else f"{first} to {last}"


def check_recordings(log: AuditLog, data_dir: str | Path, *, table_id: str | None = None,
                     since: str | None = None, until: str | None = None) -> SealSweep:
    """Each recording sealed between ``since`` and ``until`` (audit times) against its seal.

    A sealed folder no longer on disk is accounted for (``gone``) when a ``recordings_pruned``
    record names it, or when a ``backup_restored`` record follows its seal (a backup carries
    only the held recordings: the others stayed on the disk it replaced); otherwise it is
    ``missing`` — deleted or moved by hand."""
    gone_why = _Whereabouts(log)
    sweep = SealSweep()
    for seal in log.records(types=[AuditType.RECORDING_SEALED], table_id=table_id, since=since, until=until):
        data, damage = seal.read()
        if damage:
            # one damaged seal is one problem line, not the end of the whole check (QA51 review M2):
            # the folder cannot be checked against a seal the log no longer holds
            sweep.changed[f"round {seal.round_no} (sealed at seq {seal.seq})"] = [
                f"its seal record cannot be read ({damage}): run niuniu audit verify and call surveillance"]
            continue
        name = str(data.get("folder", ""))
        folder = recordings_dir(data_dir, seal.table_id) / name
        label = f"round {seal.round_no} ({name}, sealed at seq {seal.seq})"
        if not name or not folder.is_dir():
            kind, why = gone_why.of(seal)
            if kind == "held":
                # Not "missing" (the console's line for that says no record names the
                # deletion, which may be untrue here): a problem line of its own.
                sweep.changed[label] = [why]
            elif kind == "gone":
                sweep.gone.append(f"{label}: {why}")
            else:
                sweep.missing.append(label)
            continue
        changes = against_seal(folder, seal)
        if changes:
            sweep.changed[label] = changes
        else:
            sweep.intact += 1
    for failed in log.records(types=[AuditType.RECORDING_FAILED], table_id=table_id, since=since, until=until):
        data, damage = failed.read()
        what = (f"its record cannot be read ({damage})" if damage
                else data.get("error") or "no error given")
        sweep.failed.append(f"round {failed.round_no} (logged at seq {failed.seq}): {what}")
    _unsealed(log, data_dir, sweep, gone_why, table_id=table_id, since=since, until=until)
    return sweep


def _unsealed(log: AuditLog, data_dir: str | Path, sweep: SealSweep, gone_why: _Whereabouts, *,
              table_id: str | None,
              since: str | None, until: str | None) -> None:
    """Add to ``sweep`` the recording folders on disk that no seal names.

    A round whose seal cannot be read, or whose recording failed, is named above already (a
    folder of its may be the one the seal names, or one the recorder never finished).  The
    period is the folder's start, from its name: an unsealed folder has no seal time."""
    sealed, named = set(), set()
    for seal in log.iter_records(types=[AuditType.RECORDING_SEALED, AuditType.RECORDING_FAILED]):
        data = readable(seal)
        if seal.type == AuditType.RECORDING_SEALED and isinstance(data.get("folder"), str):
            sealed.add((seal.table_id, data["folder"]))
        else:
            named.add((seal.table_id, seal.round_no))
    root = Path(data_dir) / RECORDINGS
    tables = [table_id] if table_id is not None else sorted(
        p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    for table in tables:
        runs = KioskRuns(log, table)
        folders = recordings_dir(data_dir, table)
        # A folder's name is anyone's to change: a round with two folders, or whose recording
        # retention has deleted already, has one that is not what it says (review R1 M2).
        on_disk = Counter(round_in_name(f.name) for f in folders.iterdir()) if folders.is_dir() else Counter()
        deleted = {round_in_name(name) for pruned_table, name in gone_why.pruned if pruned_table == table}
        for folder in sorted(folders.iterdir()) if folders.is_dir() else []:
            round_no = round_in_name(folder.name)
            if (round_no is None or not folder.is_dir() or (table, folder.name) in sealed
                    or (table, round_no) in named or not _started_within(folder.name, since, until)):
                continue
            label = f"round {round_no} ({folder.name})"
            if runs.recorded_by_open_run(round_no):
                sweep.not_yet_sealed.append(label)
            elif (runs.made_before_sealing(round_no, folder.name) and on_disk[round_no] == 1
                  and round_no not in deleted):
                sweep.made_before_sealing.append(label)
            else:
                sweep.unsealed.append(label)


def _started_within(name: str, since: str | None, until: str | None) -> bool:
    if since is None and until is None:
        return True
    start = _folder_start(name)
    if start is None:
        return False        # a folder whose name gives no start is in no period asked for
    started = utc_iso(start.timestamp())
    return (since is None or started >= since) and (until is None or started <= until)


# How far a round folder's name (the round's first frame) may lie from the round's first audit
# record and still be that round's: seconds apart at a table; minutes leave room for a slow start.
FOLDER_SLACK = timedelta(minutes=5)


def _folder_start(name: str) -> datetime | None:
    """A round folder's start, from its name (UTC), None where the name gives none."""
    try:
        return datetime.strptime(name.split("-round-")[0], FOLDER_TIME).replace(tzinfo=timezone.utc)
    except ValueError:
        return None


@dataclass(frozen=True)
class RunOfRound:
    """The kiosk run a round was recorded in: the seq of its ``kiosk_start``, how it ended
    (None: it has not, as far as the log says: no stop and no later start), and how many runs
    started after it."""
    start_seq: int
    ended: str | None
    runs_since: int


class KioskRuns:
    """One table's kiosk runs, from its ``kiosk_start`` and ``kiosk_stop`` records: which run
    recorded a round (by seq, not by time: a clock set back would move a round into another run),
    and how that run ended (QA52 L1: a recording left unsealed two runs ago was stamped with the
    last run's crash)."""

    def __init__(self, log: AuditLog, table_id: str) -> None:
        self.log, self.table_id = log, table_id
        marks = log.records(types=[AuditType.KIOSK_START, AuditType.KIOSK_STOP], table_id=table_id)
        self.starts = [r.seq for r in marks if r.type == AuditType.KIOSK_START]
        self.ended: dict[int, str] = {}
        self._first: dict[int, AuditRecord | None] = {}
        for here, after in zip(marks, marks[1:]):
            if here.type == AuditType.KIOSK_START:
                self.ended[here.seq] = "clean shutdown" if after.type == AuditType.KIOSK_STOP else "crashed or killed"

    def first_record(self, round_no: int) -> AuditRecord | None:
        """The round's first record, looked up once: which run recorded it and whether sealing
        had begun both turn on it, for each unsealed folder of a disk of thousands."""
        if round_no not in self._first:
            found = self.log.records(round_no=round_no, table_id=self.table_id, limit=1)
            self._first[round_no] = found[0] if found else None
        return self._first[round_no]

    def of_round(self, round_no: int) -> RunOfRound | None:
        """None where the log cannot say: no record of the round, or none before it started a run."""
        first = self.first_record(round_no)
        if first is None:
            return None
        at = bisect.bisect_left(self.starts, first.seq)
        if at == 0:
            return None
        start = self.starts[at - 1]
        return RunOfRound(start, self.ended.get(start), len(self.starts) - at)

    def recorded_by_open_run(self, round_no: int) -> bool:
        run = self.of_round(round_no)
        return run is not None and run.ended is None

    def made_before_sealing(self, round_no: int, folder: str) -> bool:
        """Whether the log shows the round began before this table's first run of a release that
        sealed recordings (:meth:`sealing_began`), and the folder's name says it began then too.
        A round the log holds no record of, or a log that shows no sealing at all, proves
        nothing: False.  The round's place in the chain is what tells, not the folder's
        meta.json (anyone with the disk can edit that); the name's time within
        ``FOLDER_SLACK`` of the round's first record keeps a later recording renamed to an old
        round's number from passing as it (review R1 M2)."""
        began = self.sealing_began
        if began is None:
            return False
        first = self.first_record(round_no)
        start = _folder_start(folder)
        return (first is not None and first.seq < began and start is not None
                and abs(start - log_moment(first.ts)) <= FOLDER_SLACK)

    @cached_property
    def sealing_began(self) -> int | None:
        """The seq of the ``kiosk_start`` of this table's first run that sealed recordings, from the
        log's earliest sign of it: a ``kiosk_start`` that counted older recordings left unsealed
        (``unsealed_recordings``), or the first ``recording_sealed`` / ``recording_failed`` record.

        A seal a start makes of a left-over (``after_restart``) is written on its own thread
        while that start writes its records, before or after its ``kiosk_start``: written before
        it, it lies in the run that recorded the folder, which did not seal it, so the sealing run
        is the next one.  Any other seal, or a damaged one, is its own run's (the earlier answer,
        where in doubt).  None where the log shows no sealing."""
        found = []
        counted = next((r.seq for r in self.log.records(types=[AuditType.KIOSK_START], table_id=self.table_id)
                        if "unsealed_recordings" in readable(r)), None)
        if counted is not None:
            found.append(counted)
        first = self.log.records(types=[AuditType.RECORDING_SEALED, AuditType.RECORDING_FAILED],
                                 table_id=self.table_id, limit=1)
        if first:
            found.append(self._run_that_sealed(first[0]))
        return min(found) if found else None

    def _run_that_sealed(self, seal: AuditRecord) -> int:
        at = bisect.bisect_left(self.starts, seal.seq)
        before = self.starts[at - 1] if at else None
        after = self.starts[at] if at < len(self.starts) else None
        left_over = seal.type == AuditType.RECORDING_SEALED and "after_restart" in readable(seal)
        recorded = self.of_round(seal.round_no) if left_over and seal.round_no is not None else None
        if left_over and (before is None or (recorded is not None and recorded.start_seq == before)):
            return after if after is not None else seal.seq
        return before if before is not None else seal.seq


class _Whereabouts:
    """Why a sealed recording is no longer on disk, from the log: deleted by retention (a
    ``recordings_pruned`` record), left behind by a restore, or nothing — and whether the log
    still held it, which no deletion excuses."""

    def __init__(self, log: AuditLog) -> None:
        from kiosk.retention import pruned_folders, read_holds     # kiosk.retention imports this module

        self.pruned = {(r.table_id, name): r.seq for r in log.iter_records(types=[AuditType.RECORDINGS_PRUNED])
                       for name in pruned_folders(r)}
        self.restores = [r.seq for r in log.records(types=[AuditType.BACKUP_RESTORED])]
        self.holds = read_holds(log)

    def of(self, seal: AuditRecord) -> tuple[str, str]:
        """``("held" | "gone" | "missing", why)``."""
        key = (seal.table_id, str(seal.data.get("folder", "")))
        pruned = self.pruned.get(key)
        # a damaged hold of the round may be this recording's: retention kept it as held (kiosk.retention.LogHolds)
        held = self.holds.held.get(key) or self.holds.damaged_hold(*key)
        if held is not None:
            how = (f"deleted by retention at seq {pruned}" if pruned is not None
                   else "no record says who deleted it")
            data, damage = held.read()
            reason = (f"its record cannot be read ({damage}): run niuniu audit verify and call surveillance"
                      if damage else data.get("reason") or "no reason")
            return "held", (f"held at seq {held.seq} by {held.actor} ({reason}), never released, but no longer on "
                            f"disk: {how}")
        if pruned is not None:
            return "gone", "deleted by retention"
        restore = next((seq for seq in self.restores if seq > seal.seq), None)
        if restore is not None:
            return "gone", f"not restored from the backup (restore at seq {restore})"
        return "missing", "no longer on disk, and no recordings_pruned record says retention deleted it"


class SealWatch:
    """Checks the recordings on disk against their seals one after another, oldest first,
    round and round.

    Each :meth:`step` reads up to ``budget_bytes`` of recordings (50 MB: about five rounds,
    a fraction of a second's hashing a minute) and carries on from there the next time; when
    every folder has been checked it lists the folders again.  A folder's seal is found by
    its round number (the log's round index), so the folders retention deleted cost nothing.
    A change is logged once per seal: the log itself remembers which seals it has told of,
    so a restarted kiosk does not log the same change again every run.

    Each time it lists the folders again it also goes through the seals of folders that are
    not on disk (:meth:`missing`): one read of the seal records per round of the disk, not per
    minute."""

    def __init__(self, log: AuditLog, root: str | Path, table_id: str, budget_bytes: int = 50_000_000) -> None:
        self.log, self.root, self.table_id, self.budget = log, Path(root), table_id, budget_bytes
        self.checked = 0
        self._queue: list[Path] = []
        told = [data for data in (readable(r) for r in log.records(types=[AuditType.RECORDING_CHANGED],
                                                                   table_id=table_id))
                if isinstance(data.get("seal_seq"), int)]
        self._told: set[int] = {data["seal_seq"] for data in told if not data.get("missing")}
        self._told_missing: set[int] = {data["seal_seq"] for data in told if data.get("missing")}
        self._seen_upto = 0                            # the last seal record read (see missing)
        self._open: dict[int, AuditRecord] = {}        # seals whose folder may still go missing

    def step(self) -> list[AuditRecord]:
        """Check folders until the budget is spent or the listing is done; return the
        ``recording_changed`` records written."""
        written, spent = [], 0
        if not self._queue:
            self._queue = sorted(p for p in self.root.iterdir() if p.is_dir()) if self.root.is_dir() else []
            written += self.missing({p.name for p in self._queue})
        while self._queue and spent < self.budget:
            folder = self._queue.pop(0)
            seal = self._seal_of(folder)
            if seal is None or not folder.is_dir():
                continue            # not finished, not sealed (recorded before sealing), or deleted since
            spent += int(seal.data.get("bytes") or 0)
            self.checked += 1
            changes = against_seal(folder, seal)
            if changes and seal.seq not in self._told:
                self._told.add(seal.seq)
                written.append(self.log.append(AuditType.RECORDING_CHANGED, "system", {
                    "folder": folder.name, "seal_seq": seal.seq, "changes": changes[:50],
                    "changed_files": len(changes)}, round_no=seal.round_no))
        return written

    def missing(self, on_disk: set[str]) -> list[AuditRecord]:
        """Log each sealed recording of this table that is not on disk and that nothing in the
        log accounts for (nor one deleted while held), once per seal.

        Seals are read once, as they are written (``_seen_upto``): only those whose folder
        may yet go missing are kept (``_open``), and a seal accounted for (retention's, a
        restore's) or told of leaves them for good.  A year's seals are not parsed again at
        every round of the disk, beside the frame loop."""
        for seal in self.log.iter_records(types=[AuditType.RECORDING_SEALED], after_seq=self._seen_upto):
            self._seen_upto = seal.seq
            if (seal.table_id == self.table_id and isinstance(readable(seal).get("folder"), str)
                    and seal.seq not in self._told_missing):
                self._open[seal.seq] = seal
        gone_why = None
        written = []
        for seq, seal in list(self._open.items()):
            name = seal.data["folder"]
            if name in on_disk:
                continue
            gone_why = gone_why or _Whereabouts(self.log)
            kind, why = gone_why.of(seal)
            if (self.root / name).is_dir():
                continue
            del self._open[seq]
            if kind == "gone":
                continue
            self._told_missing.add(seq)
            files = seal.data.get("files", {})
            written.append(self.log.append(AuditType.RECORDING_CHANGED, "system", {
                "folder": name, "seal_seq": seq, "missing": True,
                "changes": [f"the whole recording (sealed at seq {seq}) is missing: {why}"],
                "changed_files": len(files) if isinstance(files, dict) else 0}, round_no=seal.round_no,
                table_id=seal.table_id))
        return written

    def _seal_of(self, folder: Path) -> AuditRecord | None:
        round_no = round_in_name(folder.name)
        if round_no is None:
            return None
        seals = self.log.records(round_no=round_no, table_id=self.table_id, types=[AuditType.RECORDING_SEALED])
        return next((s for s in reversed(seals) if readable(s).get("folder") == folder.name), None)


def readable(record: AuditRecord) -> dict:
    """The record's data, empty where it is damaged: a reader that passes a damaged record over
    (the watch in the kiosk skips a damaged seal, ``audit check-recordings`` names it) instead of
    its DamagedRecord stopping the reader."""
    return record.read()[0] or {}
