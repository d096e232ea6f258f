"""Copies of the table's records that survive the Pi: made while the kiosk runs.

The audit log and the accounts live on one SD card or SSD; when it dies, the money's
record goes with it.  A nightly copy to another disk (a USB drive, a NAS share) must not
stop the table, so the databases are copied with SQLite's online backup (a consistent
snapshot while the kiosk keeps appending), the copy's hash chain is walked before it
counts, and the live log records each backup (``backup_made``) or its failure
(``backup_failed``): the admin page shows the last one, so a backup that silently stopped
(a drive unplugged months ago) is seen.

A backup is a folder ``niuniu-backup-<UTC time>`` holding ``audit.sqlite3``,
``kiosk.sqlite3``, ``secret_key``, ``evidence_key``, the table file(s) given, the recordings
surveillance holds (``recordings/<table>/<round folder>``), and ``MANIFEST.json`` (the chain
head it holds and each file's SHA-256: the head is also what later shows a history rewritten
since, ``kiosk.anchors``).  Restoring is copying those files back into the data
directory (README, "Backup and restore").  Other recordings are not copied: they are
large, and retention deletes them anyway.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from kiosk.audit import (AUDIT_FILE, AuditDiskError, AuditError, AuditLog, AuditType, DamagedRecord, VerifyResult,
                         log_moment)
from kiosk.db import KIOSK_DB, SECRET_FILE
from kiosk.signing import KEY_FILE as EVIDENCE_KEY
from vision.aim import view_path
from vision.record import FOLDER_TIME, HOLD, RECORDINGS, folder_time, sha256_file

PREFIX = "niuniu-backup-"
# The session secret, and the key evidence packages are signed with: a table restored without
# its key would sign with a new one nobody published.
PRIVATE_FILES = (SECRET_FILE, EVIDENCE_KEY)
MANIFEST = "MANIFEST.json"
STALE_S = 2 * 86400     # the timer runs nightly: two nights missed is a backup that stopped
# A backup record stamped later than now by more than this was stamped by a clock that ran
# ahead (a Pi has no battery clock) or now runs behind: its age says nothing.
FUTURE_S = 300


class BackupError(AuditError):
    pass


# The damaged records a failed backup's record names, at most: the rest are counted.
DAMAGED_NAMED = 20


class DamagedLogBackedUp(BackupError):
    """The backup was made, whole, of a log holding records the disk damaged, and the damage
    is new (the last backup did not name it): failed all the same (the admin must act on the
    damage), with the backup's ``folder`` and the ``damaged`` records (``{seq, type, problem,
    since}``, as its manifest lists them) for the log's ``backup_failed`` record, so the pages
    name the damage itself, not only the failure."""

    def __init__(self, message: str, folder: Path, damaged: list[dict]) -> None:
        super().__init__(message)
        self.folder, self.damaged = folder, damaged


def _config_files(configs) -> dict[str, tuple[str, Path]]:
    """``{name in the backup: (kind, file)}`` for each table file given, the calibration
    picture its camera's aim is checked against, and the house preset file it names: a
    new device restored with a table file that names a ``house.toml`` it does not have
    cannot start, and the house's rules (commission, cover) would be gone with the disk."""
    found: dict[str, tuple[str, Path]] = {}
    for config in configs:
        config = Path(config)
        found[config.name] = ("table file", config)
        view = view_path(config)
        if view.is_file():
            found[view.name] = ("calibration picture", view)
        preset = _preset_named(config)
        if preset is not None:
            if preset.name in found and found[preset.name][1] != preset:
                raise BackupError(f"the preset file {preset} has the name of another file in the backup "
                                  f"({found[preset.name][1]}); rename it and the table file's rules")
            found[preset.name] = ("rule preset", preset)
    return found


def _preset_named(config: Path) -> Path | None:
    """The preset file a table file's ``rules`` names, if it names an existing file."""
    from vision.table import ConfigError, parse_config_text, preset_file

    try:
        data = parse_config_text(config.read_text(encoding="utf-8"), config)
    except (OSError, UnicodeDecodeError, ConfigError):
        return None         # the kiosk would not start on it either; the table file is copied as it is
    path = preset_file(data, config)
    return path if path is not None and path.is_file() else None


@dataclass(frozen=True)
class Backup:
    folder: Path
    head_seq: int         # = the number of records: the chain's seqs run 1, 2, 3, ...
    head_hash: str
    bytes: int
    seconds: float
    removed: list[str]
    held: list[str]
    # The log's damaged records ({seq, type, problem, since}), all named by the backup before this one.
    damaged: tuple[dict, ...] = ()


def _copy_database(source: Path, target: Path) -> None:
    """A consistent copy of a live WAL database (what a plain file copy is not)."""
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=30)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()


def make_backup(data_dir: str | Path, destination: str | Path, *, configs: list[Path] = (), keep: int | None = None,
                now: float | None = None, other_disk: bool = False) -> Backup:
    """Copy the data directory's databases and secret (and the table files) into a new
    folder under ``destination``; check the copy's chain; drop the oldest beyond ``keep``.

    Raises :class:`BackupError` (one line: what, where, how to fix) and leaves no partial
    folder behind, with one exception: a log whose only faults are records changed where they
    lie (each fails its own hash, payload unreadable or not, while the next record still links
    to it: bit rot, or an edit) is backed up whole all the same — a card that rots is the one
    most in need of a copy — and the manifest names the damaged records.  The rotation then
    keeps every older backup that holds one of those records as it was written (made before
    the damage).

    Damage the last backup of this history on the drive did not name (the same record, the same
    problem) is new: the backup fails (:class:`DamagedLogBackedUp`, naming the backup made and
    the records), so that it is seen.  Damage it did name is known, and permanent (the chain
    holds it for good): the backup is made (``Backup.damaged``, each record with ``since``, the
    backup that first met it).  Failing every night on it would leave the admin page red for
    good and fire the nightly unit's failure alarm each morning, until a real failure read the
    same as the old damage (QA52 review M5).

    Both paths are resolved first: the ``backup_made`` record, the manifest and the admin page
    name where the backup is, wherever the command was run from (a path relative to the
    console's working directory says nothing a day later)."""
    data_dir, destination = Path(data_dir).resolve(), Path(destination).resolve()
    started = time.monotonic()
    if not (data_dir / AUDIT_FILE).is_file():
        raise BackupError(f"no audit log at {data_dir / AUDIT_FILE}; check --data-dir")
    if not destination.is_dir():
        raise BackupError(f"backup destination {destination} is not a directory: mount the backup drive there "
                          "(and give the niuniu user write access), or pass another --to")
    if destination.is_relative_to(data_dir):
        # A copy on the disk it copies dies with it, and one under recordings/ sits among the
        # round folders that retention sweeps.
        where = "is the data directory" if destination == data_dir else f"is inside the data directory {data_dir}"
        raise BackupError(f"backup destination {destination} {where}, so it would die with the same disk; pass --to "
                          "a directory on another disk (a USB drive, a NAS mount)")
    if other_disk and destination.stat().st_dev == data_dir.stat().st_dev:
        # The nightly unit asks for this: a USB drive or NAS not mounted at the mount point
        # leaves an empty folder on the SD card, and a backup written there would be called
        # made while it dies with the card it was meant to outlive.
        raise BackupError(f"backup destination {destination} is on the same disk as the data directory {data_dir}: "
                          "is the backup drive mounted there? Mount it (see README, Backup and restore), or run "
                          "niuniu backup without --other-disk to copy onto this disk on purpose")
    for config in configs:
        if not Path(config).is_file():
            raise BackupError(f"table file {config} does not exist; pass the --config the kiosk runs with")
    config_files = _config_files(configs)
    anchors, restores = _still_the_backed_up_history(data_dir, destination)
    stamp = folder_time(time.time() if now is None else now)
    folder = destination / f"{PREFIX}{stamp}"
    partial = destination / f".{PREFIX}{stamp}.partial"
    try:
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(mode=0o700)          # owner-only from the start, not only once complete
        _copy_database(data_dir / AUDIT_FILE, partial / AUDIT_FILE)
        if (data_dir / KIOSK_DB).is_file():
            _copy_database(data_dir / KIOSK_DB, partial / KIOSK_DB)
        for secret in PRIVATE_FILES:
            if (data_dir / secret).is_file():
                shutil.copy2(data_dir / secret, partial / secret)
                os.chmod(partial / secret, 0o600)
        if config_files:
            (partial / "config").mkdir()
            for name, (_kind, source) in config_files.items():
                shutil.copy2(source, partial / "config" / name)
        held = _copy_held_recordings(data_dir / RECORDINGS, partial / RECORDINGS)
        result, damaged = _verified(partial / AUDIT_FILE, "the copied audit log",
                                    "the live log may be damaged: run niuniu audit verify on it", past_damage=True)
        known = _damage_known(_last_backup_manifest(destination, anchors))
        listed = [{**d, "since": known.get(_damage_key(d), stamp)} for d in _damaged_listed(damaged)]
        files = {p.relative_to(partial).as_posix(): sha256_file(p) for p in sorted(partial.rglob("*")) if p.is_file()}
        manifest = {"made_at": stamp, "from": str(data_dir), "head_seq": result.count, "head_hash": result.head_hash,
                    "held_recordings": held, "files": files,
                    **({"damaged": listed} if listed else {}),
                    "config_files": {name: {"kind": kind, "from": str(Path(source).resolve())}
                                     for name, (kind, source) in config_files.items()}}
        (partial / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        for p in partial.rglob("*"):      # password hashes and the session key: the owner's only
            os.chmod(p, 0o700 if p.is_dir() else 0o600)
        os.chmod(partial, 0o700)
        n = 1
        while folder.exists():              # two backups within one second
            n += 1
            folder = destination / f"{PREFIX}{stamp}-{n}"
        partial.rename(folder)
    except BackupError:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    except (OSError, sqlite3.Error, AuditError) as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise BackupError(f"backup to {destination} failed: {exc}; check the drive is mounted, writable "
                          "and has room") from None
    removed = _drop_oldest(destination, keep, folder, anchors, restores, frozenset(r.seq for r in damaged)) \
        if keep else []
    new = [d for d in listed if _damage_key(d) not in known]
    if new:
        others = len(listed) - 1
        more = f" ({others} more damaged record{'s' if others > 1 else ''}: its {MANIFEST} names each)" \
            if others else ""
        raise DamagedLogBackedUp(f"backup {folder} holds every record as the log has them, but the log is damaged: "
                                 f"{damaged_record_text(new[0])}{more}; the log was damaged (on the disk, or edited): "
                                 "run niuniu audit verify, keep the data directory as it is and call surveillance; "
                                 "any older backup made before the damage, which holds the record as it was written, "
                                 f"is kept{_removed_words(removed)}", folder, listed)
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    return Backup(folder, result.count, result.head_hash, size, time.monotonic() - started, removed, held,
                  tuple(listed))


def _damaged_listed(records: list) -> list[dict]:
    """The damaged records as a manifest, a backup's record and a restore's record name them, in
    the words of :meth:`AuditRecord.problem`: a record that fails its hash and one that also
    cannot be read are told apart, and a later backup knows the same damage by the same words."""
    return [{"seq": r.seq, "type": r.type, "problem": r.problem()} for r in records]


def damaged_record_text(damaged: dict) -> str:
    """One damaged record as the console, the error and the restore's line say it."""
    return f"audit record seq {damaged.get('seq')} ({damaged.get('type')}) {damaged.get('problem')}"


def _damage_key(damaged: dict) -> tuple:
    """What makes damage the same damage: the record, and what is wrong with it now.  Rot that
    goes on in a record already named changes its problem, and is new again."""
    return damaged.get("seq"), damaged.get("type"), damaged.get("problem")


def _damage_known(manifest: dict) -> dict[tuple, str]:
    """The damage an earlier backup's manifest named (:func:`_damage_key`), each with when a
    backup first met it: the ``since`` it carries, or (a manifest written before ``since`` was)
    that backup's own time."""
    return {_damage_key(d): str(d.get("since") or manifest.get("made_at")) for d in _damaged_named(manifest)}


def _last_backup_manifest(destination: Path, anchors: list) -> dict:
    """The manifest of the newest backup on the drive that the live log still holds the head of
    (``{}`` where there is none): the backup before the one being made.  Within one history
    each backup's head is later than the one before; a backup of a history that a restore
    replaced, or of another table's, says nothing of this log's damage."""
    from kiosk.anchors import HELD

    held = [a for a in anchors if a.verdict == HELD]
    return _manifest_of(destination / max(held, key=lambda a: (a.head_seq, a.name)).name) if held else {}


def _still_the_backed_up_history(data_dir: Path, destination: Path) -> tuple[list, list]:
    """Before copying: does the live log still hold the head each earlier backup copied
    (``kiosk.anchors``)?  A history rewritten and re-hashed is not backed up over its proof:
    the backup fails (and says why on the admin page) and no older backup is rotated away.
    Returns the backups found (``Anchor``) and the log's ``backup_restored`` records: what the
    rotation orders them by."""
    from kiosk.anchors import check_against_backups

    try:
        log = AuditLog(data_dir / AUDIT_FILE, create=False)
        try:
            anchors = check_against_backups(log, destination)
            restores = log.records(types=[AuditType.BACKUP_RESTORED])
        finally:
            log.close()
    except AuditError as exc:
        raise BackupError(str(exc)) from None     # it names the log already ("cannot open the audit log X: ...")
    except (OSError, sqlite3.Error) as exc:
        raise BackupError(f"cannot read the audit log {data_dir / AUDIT_FILE}: {exc}; run niuniu audit verify "
                          "on it") from None
    failed = [a for a in anchors if a.failed]
    if failed:
        raise BackupError(f"not backed up, and no older backup removed: {failed[0].message}")
    return anchors, restores


def _verified(path: Path, what: str, fix: str, *, past_damage: bool = False) -> tuple[VerifyResult, list]:
    """Walk a copied log's chain: a copy counts only if it is whole.

    ``past_damage``: walk on past each record changed where it lies: it fails its own hash, yet
    it links to the record before it and the next record still links to it (the next walk,
    from its stored hash, checks that).  Rot that leaves the payload JSON (a digit flipped) is
    that as much as rot that leaves it unreadable, and so is a hand edit of one record: the
    copy holds it as stored, named, and launders nothing (QA52 review M7).  Those records are
    returned beside the result for the whole log.  A broken link or a missing seq (a record
    removed, or replaced with its hash recomputed) is :class:`BackupError` either way: what
    ``verify --against`` and the older backups prove stays refused."""
    copy = AuditLog(path, create=False)
    try:
        damaged, after, count = [], None, 0
        while True:
            result = copy.verify(after=after)
            count += result.count
            bad = copy.records(after_seq=result.first_bad_seq - 1, upto_seq=result.first_bad_seq) \
                if past_damage and result.first_bad_seq is not None else []
            if not bad or bad[0].prev_hash != result.head_hash or bad[0].expected_hash() == bad[0].hash:
                break
            damaged.append(bad[0])
            after, count = (bad[0].seq, bad[0].hash), count + 1
    finally:
        copy.close()
    if not result.ok:
        raise BackupError(f"{what} does not verify ({result.summary()}); {fix}")
    return VerifyResult(count, None, "", result.guards_present, result.head_hash), damaged


def _copy_held_recordings(source: Path, target: Path) -> list[str]:
    """The recordings surveillance holds for a dispute (a few, each ~10 MB): the one kind of
    recording whose loss with the disk would cost more than its space."""
    copied = []
    for held in sorted(source.glob(f"*/*/{HOLD}")) if source.is_dir() else []:
        folder = held.parent
        shutil.copytree(folder, target / folder.parent.name / folder.name)
        copied.append(f"{folder.parent.name}/{folder.name}")
    return copied


def _removed_words(removed: list[str]) -> str:
    """The rotation's part of a failed run's line: the run failed, yet older backups went."""
    return f" (removed {len(removed)} older)" if removed else ""


def _drop_oldest(destination: Path, keep: int, made: Path, anchors: list, restores: list,
                 damaged: frozenset[int] = frozenset()) -> list[str]:
    """Delete all but the newest ``keep`` backups, counting the one just ``made``, which is
    never deleted, nor one that holds a record of ``damaged`` (the seqs the log's disk
    damaged) that the backups after it hold damaged: the record as it was written.

    Only a folder that is a backup by its manifest (``anchors``: read by ``kiosk.anchors``
    before the copy) is deleted; one named like a backup without a readable manifest (a copy
    cut short, an operator's own ``niuniu-backup-old``) is not ours to remove.  They are
    ordered by the chain, not by their names or ``made_at``: a Pi has no battery clock, so a
    backup made while its clock ran ahead carries a time from the future, and ordering by
    time would keep it and delete tonight's.  Within one history each backup's head is later
    than the one before; a logged restore (``restores``) starts a new one, later than every
    backup made before it, those of the history it replaced (superseded) included."""
    from kiosk.anchors import HELD, SUPERSEDED

    def made_after(anchor) -> tuple[int, int, str]:
        if anchor.verdict == HELD:       # the restores its log had logged when it was made
            epoch = sum(r.seq < anchor.head_seq for r in restores)
        else:                             # made before the restore that replaced its history
            made_at = _made_at(destination / anchor.name)
            epoch = sum(made_at is not None and log_moment(r.ts) <= made_at for r in restores)
        return epoch, anchor.head_seq, anchor.name

    def holds_as_written(anchor) -> bool:
        known = {d.get("seq") for d in _damaged_named(_manifest_of(destination / anchor.name))}
        return any(seq <= anchor.head_seq and seq not in known for seq in damaged)

    ours = [a for a in anchors if a.verdict in (HELD, SUPERSEDED) and a.name != made.name
            and (destination / a.name).is_dir() and not (destination / a.name).is_symlink()
            and not holds_as_written(a)]
    ours.sort(key=made_after)
    removed = []
    for old in ours[:max(len(ours) - (keep - 1), 0)]:
        try:
            shutil.rmtree(destination / old.name)
        except OSError:
            continue             # the backup is made; an old one that will not go is tried again next night
        removed.append(old.name)
    return removed


def _manifest_of(folder: Path) -> dict:
    """A backup's manifest, empty where it cannot be read (the rotation then goes by the rest)."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) else {}


def _damaged_named(manifest: dict) -> list[dict]:
    """The records a backup's manifest says the log's disk had damaged when it was made
    (``{seq, type, problem}``); none where it names none (or holds something else there)."""
    named = manifest.get("damaged")
    return [d for d in named if isinstance(d, dict)] if isinstance(named, list) else []


def _made_at(folder: Path) -> datetime | None:
    try:
        return datetime.strptime(_manifest_of(folder)["made_at"], FOLDER_TIME).replace(tzinfo=timezone.utc)
    except (ValueError, KeyError, TypeError):
        return None


def log_backup(log: AuditLog, backup: Backup | None, *, actor: str, destination: Path,
               error: str | BackupError = "") -> None:
    """The ``backup_made`` record, or ``backup_failed`` with the ``error`` (its words, or the
    :class:`BackupError` itself: a :class:`DamagedLogBackedUp` adds the backup it made and the
    damaged records, ``made`` and ``damaged``, up to ``DAMAGED_NAMED`` of them and their count).
    A backup made of a log whose damage the backup before it named carries ``damaged`` the same
    way, with ``damaged_since``: the admin page says it, not as a failure."""
    # The console opens the log without a table id; the record is still the table's.
    table = log.table()
    if backup is None:     # resolved, as make_backup resolves the folder of one made
        damage = {"made": str(error.folder), "damaged": error.damaged[:DAMAGED_NAMED],
                  "damaged_count": len(error.damaged)} if isinstance(error, DamagedLogBackedUp) else {}
        log.append(AuditType.BACKUP_FAILED, actor, {"to": str(Path(destination).resolve()), "error": str(error),
                                                    **damage}, table_id=table)
        return
    known = {"damaged": list(backup.damaged[:DAMAGED_NAMED]), "damaged_count": len(backup.damaged),
             "damaged_since": min(d["since"] for d in backup.damaged)} if backup.damaged else {}
    log.append(AuditType.BACKUP_MADE, actor, {
        "to": str(backup.folder), "head_seq": backup.head_seq, "head_hash": backup.head_hash,
        "bytes": backup.bytes, "seconds": round(backup.seconds, 2), "removed": backup.removed,
        "held_recordings": backup.held, **known}, table_id=table)


def backup_status(log: AuditLog, now: float | None = None) -> dict | None:
    """The newest backup record (made or failed) as the admin and surveillance read it; a
    copy older than two days is flagged, as bad as none.

    One dated in the future (``future``) is flagged too (``stale``): a clock that ran ahead
    stamped it, or the clock now runs behind, and its age says nothing (it read as fresh for
    as long as the stamp was ahead, a year of no backups unflagged).  ``records_since``: the
    log's records that a backup made does not hold (the log's head against its
    ``head_seq``), what tells how much a backup dated wrongly has missed.

    A newest record that cannot be read (:class:`kiosk.audit.DamagedRecord`) reads as a failed
    backup whose ``error`` names the record: where that backup went and what it holds are lost
    with it, so none is known to hold the log until the next one is made."""
    found = log.records(types=[AuditType.BACKUP_MADE, AuditType.BACKUP_FAILED], newest_first=True, limit=1)
    if not found:
        return None
    record = found[0]
    age_s = (time.time() if now is None else now) - log_moment(record.ts).timestamp()
    future = age_s < -FUTURE_S
    data, damage = record.read()
    if damage:
        data = {"error": f"{DamagedRecord(record, damage)}; where that backup went and what it holds is not known: "
                         "make one now (niuniu backup)"}
    head, held = log.last(), data.get("head_seq")
    since = head.seq - held if head is not None and type(held) is int and head.seq >= held else None
    return {**data, "ok": record.type == AuditType.BACKUP_MADE and not damage, "ts": record.ts, "seq": record.seq,
            "stale": future or age_s > STALE_S, "future": future, "age_days": int(age_s // 86400),
            "records_since": since}


def restored_after(log: AuditLog, backup: dict | None) -> dict | None:
    """The newest ``backup_restored`` where no backup was made or failed after it, else None.

    A restored log holds the records of the backups older than the one restored (that one's
    own ``backup_made`` was written after its copy of the log), so read alone it names an older
    backup as the last, or none: the restore is the newest backup it knows, until the next is
    made.  ``niuniu check``, the Accounts page and the chain page say so from this one rule.
    A restore with ``--collector`` may bring back the record of a backup newer than the one
    restored (made after its copy): that one is then the newest, as ``backup_status`` reads it."""
    found = log.records(types=[AuditType.BACKUP_RESTORED], newest_first=True, limit=1)
    if not found or (backup is not None and found[0].seq < backup["seq"]):
        return None
    record = found[0]
    data, damage = record.read()
    data = data or {}            # a damaged restore record is named by its damage, not a crash
    held = data.get("head_seq")
    if backup is not None and type(held) is int and backup["seq"] > held:
        return None              # a newer backup's record, given back from the collector (--collector)
    return {"ts": record.ts, "seq": record.seq, "from": data.get("from"), "head_seq": data.get("head_seq"),
            "damage": str(damage) if damage else None}


@dataclass(frozen=True)
class Restored:
    records: int
    replaced: Path | None          # where the data directory's previous files were moved
    held: list[str]
    configs: list[dict]            # {name, kind, from}: the table's files in the backup, to put back
    recovered: dict | None = None  # what the collector's copy gave back after the backup (kiosk.recovery)
    # Only the record was written: an earlier run put the files in place and could not record it.
    recorded_later: bool = False
    # The records the backup's log holds damaged ({seq, type, problem}), restored with --accept-damaged.
    damaged: tuple[dict, ...] = ()

    def damage_line(self) -> str:
        """What the console says of a log restored with its damaged records: which, and what to do."""
        named = "; ".join(damaged_record_text(d) for d in self.damaged)
        return (f"restored as backed up, damaged: {named}; the log was damaged (on the disk, or edited) before "
                "this backup was made: run niuniu audit verify, keep the data directory as it is and call "
                "surveillance; an older backup made before the damage may hold those records as they were written")


def check_backup(folder: str | Path, *, accept_damaged: bool = False) -> dict:
    """The backup's manifest, once every file it lists is there as it was written, its audit
    log walks whole, and the head it names is that log's last record; :class:`BackupError`
    naming what is wrong otherwise.

    A log backed up damaged (its manifest names the records that could not be read) walks
    whole only with ``accept_damaged``, and then only past the very records the manifest
    names: on a dead kiosk disk it may be the one copy of the records written since the last
    clean backup, so it is restored on purpose rather than never.

    The head is checked as the files are: it is what ``verify --against`` compares the live
    log with later, what the ``backup_restored`` record copies, and what tells a data
    directory that already holds this backup."""
    folder = Path(folder)
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        files = dict(manifest["files"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BackupError(f"{folder} has no readable {MANIFEST} ({exc}); it is not a niuniu backup folder") from None
    for name, digest in files.items():
        path = folder / name
        if not path.is_file():
            raise BackupError(f"{path} is missing from the backup; use another backup")
        if sha256_file(path) != digest:
            raise BackupError(f"{path} differs from the file backed up (SHA-256 mismatch); use another backup")
    # a log backed up damaged (make_backup keeps such a copy): its manifest says the damage came with it
    named = _damaged_named(manifest)
    damaged = ", ".join(f"seq {d.get('seq')} ({d.get('type')})" for d in named)
    result, found = _verified(folder / AUDIT_FILE, "the backup's audit log",
                              f"the kiosk's log was damaged before it was backed up ({MANIFEST} names {damaged}): "
                              "use a backup made before the damage if the drive holds an older one (it holds "
                              "those records as they were written, but none written after it), or pass "
                              "--accept-damaged to restore this one with them as they are"
                              if damaged else "use another backup", past_damage=accept_damaged and bool(named))
    if [r.seq for r in found] != [d.get("seq") for d in named]:
        unread = ", ".join(f"seq {r.seq} ({r.type})" for r in found) or "none"
        raise BackupError(f"{folder / MANIFEST} names the damaged records {damaged}, but those the backup's audit "
                          f"log cannot read are {unread}: the manifest was edited or is another backup's; use "
                          "another backup")
    seq, digest = manifest.get("head_seq"), manifest.get("head_hash")
    if type(seq) is not int or seq != result.count or digest != result.head_hash:
        raise BackupError(f"{folder / MANIFEST} names the head {_shown(seq)}:{_shown(digest)}, but the backup's "
                          f"audit log ends at seq {result.count}, hash {result.head_hash[:16]}...: the manifest "
                          "was edited or is another backup's; use another backup")
    return manifest


def _shown(value) -> str:
    """A manifest's value in an error line, cut short: whatever an edited file holds."""
    if isinstance(value, str) and len(value) > 16:
        return value[:16] + "..."          # a hash, as the console prints heads
    text = repr(value)
    return text if len(text) <= 24 else text[:24] + "..."


# The databases the kiosk and ``users add`` write in place, each with SQLite's companions.
DATABASES = (AUDIT_FILE, f"{AUDIT_FILE}-wal", f"{AUDIT_FILE}-shm", KIOSK_DB, f"{KIOSK_DB}-wal", f"{KIOSK_DB}-shm")


def writable_dir(path: str | Path, *, files: tuple[str, ...] = ()) -> None:
    """Refuse, before anything is written, a data directory that cannot be one: a file, a
    path under a file, or a directory (or the nearest one to be created under) this user
    cannot write to.  ``restore``, ``users add`` and ``kiosk`` ask this first, so a mistyped
    --data-dir or a read-only disk is one line naming the fix, not a traceback halfway
    through (a restore that has moved the old files aside, an account without its record).

    ``files`` (``DATABASES`` for a command that writes them in place): those of them that
    exist must be writable too.  A writable directory holding an ``audit.sqlite3`` left owned
    by root (a ``sudo sqlite3``, a ``sudo cp``) otherwise passes, and the kiosk dies at its
    first record.  A restore moves the old files aside instead, so it asks about none."""
    path = Path(path)
    _writable_parent(path)
    for name in files:
        file = path / name
        if file.exists() and not os.access(file, os.W_OK):
            raise BackupError(unwritable_file(file))


def unwritable_file(file: Path) -> str:
    """One line for a file in the data directory this user cannot write, naming its owner and the fix."""
    try:
        import pwd
        owner = pwd.getpwuid(file.stat().st_uid).pw_name
    except (ImportError, KeyError, OSError):
        owner = "another user"
    return (f"cannot write {file}: it belongs to {owner} and is not writable by this user; give it back to the "
            f"kiosk's user (sudo chown niuniu:niuniu {file}; chmod u+w if it is read-only), or run the command as "
            "that user (sudo -u niuniu ...)")


def _writable_parent(path: Path) -> None:
    """The directory half of :func:`writable_dir`."""
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        where = f"{path} is a file" if existing == path else f"{existing} is a file, so {path} cannot be a directory"
        raise BackupError(f"{where}; pass --data-dir the kiosk's data directory (e.g. /var/lib/niuniu)")
    if not os.access(existing, os.W_OK | os.X_OK):
        try:
            read_only = bool(os.statvfs(existing).f_flag & os.ST_RDONLY)
        except OSError:
            read_only = False
        why = ("is on a read-only file system: remount it read-write, or work on a copy on a writable disk"
               if read_only else "is not writable by this user: run the command as the kiosk's user "
               "(sudo -u niuniu ...)")
        what = f"write in the data directory {path}: it" if existing == path else \
            f"create the data directory {path}: {existing}"
        raise BackupError(f"cannot {what} {why}")


# What a restore writes into the data directory, each database with SQLite's companions: a
# -wal left beside a database it did not come from would be applied to it at the next open.
_RESTORED = (*DATABASES, *PRIVATE_FILES)


def restore_backup(folder: str | Path, data_dir: str | Path, *, actor: str, replace: bool = False,
                   now: float | None = None, collector: list[str | Path] | None = None,
                   accept_damaged: bool = False) -> Restored:
    """Put a checked backup back into ``data_dir`` (the kiosk stopped).

    Never loses a record, an account or a key: a data directory whose log already holds the
    backup's head and more is refused outright (there is nothing to restore), and whatever
    else the restore would overwrite — a log, readable or not, the accounts, the keys, with
    their -wal files — is replaced only with ``replace``, moved aside to ``replaced-<time>/``,
    not deleted.  Every check runs before anything in the data directory changes, and each
    file is copied whole before any is moved aside.  A disk that fills after the files are in
    place, before the ``backup_restored`` record, is said so; the same command run again then
    finds the log ending at the backup's head and appends only the record (``recorded_later``).
    ``collector``: the log collector's files; the records written after the backup that they
    hold, signed for by the table, are appended as they were (``kiosk.recovery``).
    ``accept_damaged``: restore a backup of a log the disk had damaged (:func:`check_backup`);
    the ``backup_restored`` record names its damaged records, as ``Restored.damaged`` does."""
    folder, data_dir = Path(folder), Path(data_dir)
    manifest = check_backup(folder, accept_damaged=accept_damaged)
    damaged = tuple({"seq": d.get("seq"), "type": d.get("type"), "problem": d.get("problem")}
                    for d in _damaged_named(manifest))
    writable_dir(data_dir)
    # Read before anything in the data directory moves: a collector file that cannot be read
    # stops the restore with nothing changed.
    recovery = _recovery(folder, collector) if collector else None
    present = [name for name in _RESTORED if os.path.lexists(data_dir / name)]
    unrecorded = _unrecorded(data_dir, manifest, recovery) if present else None
    if present and unrecorded is None:
        _may_replace(folder, data_dir, manifest, present, replace)
    replaced = None
    if unrecorded is None:
        staged = {}
        try:
            data_dir.mkdir(parents=True, exist_ok=True)
            # Each file is copied whole under a temporary name first: a disk that fills
            # part-way leaves no 0-byte kiosk.sqlite3 (a kiosk would offer the first-run
            # setup on it) and nothing moved aside.
            for name in (KIOSK_DB, *PRIVATE_FILES, AUDIT_FILE):     # the log last: it tells a restore done
                if (folder / name).is_file():
                    staged[name] = data_dir / f".{name}.restoring"
                    shutil.copy2(folder / name, staged[name])
                    os.chmod(staged[name], 0o600)
        except OSError as exc:
            for temp in staged.values():
                temp.unlink(missing_ok=True)
            raise BackupError(f"restore into {data_dir} failed: {exc}; nothing in it was changed: free space or fix "
                              "the disk, then run the same command again") from None
        try:
            if present:
                replaced = _move_aside(data_dir, present, now)
            for name, temp in staged.items():
                temp.rename(data_dir / name)
        except OSError as exc:
            aside = f"; the previous files are in {replaced}" if replaced else ""
            raise BackupError(f"restore into {data_dir} failed: {exc}{aside}; fix the disk, and restore again with "
                              "--replace") from None
    named = manifest.get("config_files") or {}
    configs = [{"name": p.name, **(named.get(p.name) if isinstance(named.get(p.name), dict) else {})}
               for p in sorted((folder / "config").glob("*"))] if (folder / "config").is_dir() else []
    held, recovered = [], None
    try:
        for name in manifest.get("held_recordings", []):
            target = data_dir / RECORDINGS / name
            if not target.exists():
                _copy_whole(folder / RECORDINGS / name, target)
                held.append(name)
        log = AuditLog(data_dir / AUDIT_FILE, create=False)
        try:
            if recovery is not None:
                if unrecorded is not False:          # an earlier run may have appended them already
                    log.extend(recovery.records)
                recovered = {**recovery.to_json(), "files": [str(p) for p in collector]}
            log.append(AuditType.BACKUP_RESTORED, actor, {
                "from": str(folder.resolve()), "head_seq": manifest["head_seq"], "head_hash": manifest["head_hash"],
                "replaced": str(replaced.resolve()) if replaced else None, "held_recordings": held,
                **({"recovered": recovered} if recovered else {}), **({"damaged": list(damaged)} if damaged else {}),
                **({"recorded_later": True} if unrecorded is not None else {})}, table_id=log.table())
        finally:
            log.close()
    except (OSError, sqlite3.Error, AuditError) as exc:
        # The files are in place: "nothing was written" (what the log's own error says of the
        # record) would send the operator to restore again, which the log then refuses.
        reason = exc.__cause__ if isinstance(exc, AuditDiskError) and exc.__cause__ else exc
        aside = f" (the previous files are in {replaced})" if replaced else ""
        raise BackupError(f"the backup's files are in place in {data_dir}{aside}; the restore could not be recorded "
                          f"({reason}): free space, then run the same command again to record it") from None
    return Restored(manifest["head_seq"], replaced, held, configs, recovered, recorded_later=unrecorded is not None,
                    damaged=damaged)


def _unrecorded(data_dir: Path, manifest: dict, recovery) -> bool | None:
    """Whether the data directory holds this backup as an earlier run of the restore left it
    when the disk filled before its ``backup_restored`` record: the log ends at the backup's
    head (``True``: the collector's records, if any, are still to append) or at the last record
    the collector gives back (``False``).  ``None`` otherwise (:func:`_may_replace` decides).

    Such a log holds no record after the backup's, so the rerun that appends the missing
    record hides nothing that happened since; refused, the restore could never be recorded."""
    try:
        log = AuditLog(data_dir / AUDIT_FILE, read_only=True)
        try:
            last = log.last()
        finally:
            log.close()
    except (AuditError, sqlite3.Error, OSError):
        return None
    if last is None:
        return None
    if (last.seq, last.hash) == (manifest["head_seq"], manifest["head_hash"]):
        return True
    tail = recovery.records[-1] if recovery is not None and recovery.records else None
    if tail is not None and (last.seq, last.hash) == (tail.seq, tail.hash):
        return False
    return None


def _copy_whole(source: Path, target: Path) -> None:
    """Copy a held recording's folder under a temporary name and rename it into place once
    whole: a folder cut short would be taken for the recording, and a rerun skips it."""
    temp = target.with_name(f".{target.name}.restoring")
    shutil.rmtree(temp, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        shutil.copytree(source, temp)
        temp.rename(target)
    except OSError:
        shutil.rmtree(temp, ignore_errors=True)
        raise


def _may_replace(folder: Path, data_dir: Path, manifest: dict, present: list[str], replace: bool) -> None:
    """Raise unless the data directory's ``present`` files may be moved aside: never when its
    log already holds the backup's head, otherwise only with ``replace``.  The refusal says
    what the files are, so that whoever restores knows what --replace would move aside."""
    head_seq, head_hash = manifest["head_seq"], manifest["head_hash"]
    aside = f"(into {data_dir}/replaced-<time>/) and restore the backup in its place"
    existing = data_dir / AUDIT_FILE
    if os.path.lexists(existing):
        try:
            count, last, at_head = _log_head(existing, head_seq)
        except (AuditError, sqlite3.Error, OSError) as exc:
            # A log the dead disk damaged (truncated, garbage) is the case restore exists for.
            if replace:
                return
            raise BackupError(f"{existing} cannot be read as an audit log ({exc}); if it is the damaged one, "
                              f"pass --replace to move it aside {aside}") from None
        if at_head == head_hash:
            more = count - head_seq
            raise BackupError(f"{existing} already holds this backup's {head_seq} records"
                              f"{f' and {more} more' if more else ''}; there is nothing to restore")
        if replace:
            return
        if count:
            _, _, backups = _log_head(folder / AUDIT_FILE, last[0])
            if backups == last[1]:       # the hash covers the link before it: the whole history up to it
                raise BackupError(f"{existing} holds the first {count} of this backup's {head_seq} records (an older "
                                  f"copy of the same history); pass --replace to move it aside {aside}")
            raise BackupError(f"{existing} holds {count} records of another history; pass --replace to move it "
                              f"aside {aside}")
    if replace:
        return
    raise BackupError(f"{data_dir} already holds {', '.join(present)}, which the restore would overwrite (accounts, "
                      f"keys or a log); pass --replace to move them aside {aside}")


def _log_head(path: Path, seq: int) -> tuple[int, tuple[int, str] | None, str | None]:
    """A log's record count, its last record's (seq, hash), and the hash it holds at ``seq``,
    read without writing a byte (``AuditLog(read_only=True)``): a damaged log that a refused
    restore leaves where it was is left as it was."""
    log = AuditLog(path, read_only=True)
    try:
        last = log.last()
        at = log.records(after_seq=seq - 1, upto_seq=seq) if seq >= 1 else []
        return log.count(), ((last.seq, last.hash) if last else None), (at[0].hash if at else None)
    finally:
        log.close()


def _move_aside(data_dir: Path, present: list[str], now: float | None) -> Path:
    stamp = folder_time(time.time() if now is None else now)
    replaced, n = data_dir / f"replaced-{stamp}", 1
    while os.path.lexists(replaced):       # two restores within one second
        n += 1
        replaced = data_dir / f"replaced-{stamp}-{n}"
    replaced.mkdir()
    for name in present:
        (data_dir / name).rename(replaced / name)
    return replaced


def _recovery(folder: Path, collector: list[str | Path]):
    """What the collector's copy holds after the backup's head, as far as a key the backup
    holds or its log made signed for it."""
    from kiosk.recovery import recover_after
    from kiosk.seals import readable
    from kiosk.signing import SigningError, fingerprint, read_table_key

    log = AuditLog(folder / AUDIT_FILE, create=False)
    try:
        head, table = log.last(), log.table()
        # a key whose record cannot be read vouches for nothing: its records stay with the collector
        keys = {readable(r).get("fingerprint") for r in log.records(types=[AuditType.SIGNING_KEY_CREATED])}
    finally:
        log.close()
    try:
        key = read_table_key(folder)
    except SigningError:
        key = None                 # the keys its log made still vouch
    if key is not None:
        keys.add(fingerprint(key.public_key()))
    if head is None or not table:
        return None               # a log of no table's records: nothing the collector could hold for it
    return recover_after(collector, head, keys, table)
