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
from pathlib import Path

from kiosk.audit import AUDIT_FILE, AuditError, AuditLog, AuditType, VerifyResult, log_moment
from kiosk.db import KIOSK_DB, SECRET_FILE
from kiosk.signing import KEY_FILE as EVIDENCE_KEY
from vision.aim import view_path
from vision.record import HOLD, RECORDINGS, folder_time, sha256_file

PREFIX = "niuniu-backup-"
# The session secret, and the key evidence packages are signed with: a table restored without
# its key would sign with a new one nobody published.
PRIVATE_FILES = (SECRET_FILE, EVIDENCE_KEY)
MANIFEST = "MANIFEST.json"
STALE_S = 2 * 86400     # the timer runs nightly: two nights missed is a backup that stopped


class BackupError(AuditError):
    pass


@dataclass(frozen=True)
class Backup:
    folder: Path
    head_seq: int         # = the number of records: the chain's seqs run 1, 2, 3, ...
    head_hash: str
    bytes: int
    seconds: float
    removed: list[str]
    held: list[str]


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
                now: float | None = None) -> Backup:
    """Copy the data directory's databases and secret (and the table files) into a new
    folder under ``destination``; check the copy's chain; drop the oldest beyond ``keep``.

    Raises :class:`BackupError` (one line: what, where, how to fix) and leaves no partial
    folder behind."""
    data_dir, destination = Path(data_dir), Path(destination)
    started = time.monotonic()
    if not (data_dir / AUDIT_FILE).is_file():
        raise BackupError(f"no audit log at {data_dir / AUDIT_FILE}; check --data-dir")
    if not destination.is_dir():
        raise BackupError(f"backup destination {destination} is not a directory: mount the backup drive there "
                          "(and give the niuniu user write access), or pass another --to")
    for config in configs:
        if not Path(config).is_file():
            raise BackupError(f"table file {config} does not exist; pass the --config the kiosk runs with")
    _still_the_backed_up_history(data_dir, destination)
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
        if configs:
            (partial / "config").mkdir()
            for config in configs:
                shutil.copy2(config, partial / "config" / Path(config).name)
                view = view_path(config)     # the camera's aim is checked against it
                if view.is_file():
                    shutil.copy2(view, partial / "config" / view.name)
        held = _copy_held_recordings(data_dir / RECORDINGS, partial / RECORDINGS)
        result = _verified(partial / AUDIT_FILE, "the copied audit log",
                           "the live log may be damaged: run niuniu audit verify on it")
        files = {p.relative_to(partial).as_posix(): sha256_file(p) for p in sorted(partial.rglob("*")) if p.is_file()}
        manifest = {"made_at": stamp, "from": str(data_dir), "head_seq": result.count, "head_hash": result.head_hash,
                    "held_recordings": held, "files": files}
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
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    removed = _drop_oldest(destination, keep) if keep else []
    return Backup(folder, result.count, result.head_hash, size, time.monotonic() - started, removed, held)


def _still_the_backed_up_history(data_dir: Path, destination: Path) -> None:
    """Before copying: does the live log still hold the head each earlier backup copied
    (``kiosk.anchors``)?  A history rewritten and re-hashed is not backed up over its proof:
    the backup fails (and says why on the admin page) and no older backup is rotated away."""
    from kiosk.anchors import check_against_backups

    try:
        log = AuditLog(data_dir / AUDIT_FILE, create=False)
        try:
            failed = [a for a in check_against_backups(log, destination) if a.failed]
        finally:
            log.close()
    except (OSError, sqlite3.Error, AuditError) as exc:
        raise BackupError(f"cannot read the audit log {data_dir / AUDIT_FILE}: {exc}") from None
    if failed:
        raise BackupError(f"not backed up, and no older backup removed: {failed[0].message}")


def _verified(path: Path, what: str, fix: str) -> VerifyResult:
    """Walk a copied log's chain: a copy counts only if it is whole."""
    copy = AuditLog(path, create=False)
    try:
        result = copy.verify()
    finally:
        copy.close()
    if not result.ok:
        raise BackupError(f"{what} does not verify ({result.summary()}); {fix}")
    return result


def _copy_held_recordings(source: Path, target: Path) -> list[str]:
    """The recordings surveillance holds for a dispute (a few, each ~10 MB): the one kind of
    recording whose loss with the disk would cost more than its space."""
    copied = []
    for held in sorted(source.glob(f"*/*/{HOLD}")) if source.is_dir() else []:
        folder = held.parent
        shutil.copytree(folder, target / folder.parent.name / folder.name)
        copied.append(f"{folder.parent.name}/{folder.name}")
    return copied


def _drop_oldest(destination: Path, keep: int) -> list[str]:
    """Delete all but the newest ``keep`` backups (by their names, which sort by time)."""
    backups = sorted(p for p in destination.iterdir() if p.is_dir() and p.name.startswith(PREFIX))
    removed = []
    for old in backups[:-keep]:
        shutil.rmtree(old)
        removed.append(old.name)
    return removed


def log_backup(log: AuditLog, backup: Backup | None, *, actor: str, destination: Path, error: str = "") -> None:
    # The console opens the log without a table id; the record is still the table's.
    table = log.table()
    if backup is None:
        log.append(AuditType.BACKUP_FAILED, actor, {"to": str(destination), "error": error}, table_id=table)
        return
    log.append(AuditType.BACKUP_MADE, actor, {
        "to": str(backup.folder), "head_seq": backup.head_seq, "head_hash": backup.head_hash,
        "bytes": backup.bytes, "seconds": round(backup.seconds, 2), "removed": backup.removed,
        "held_recordings": backup.held}, table_id=table)


def backup_status(log: AuditLog, now: float | None = None) -> dict | None:
    """The newest backup record (made or failed) as the admin and surveillance read it; a
    copy older than two days is flagged, as bad as none."""
    found = log.records(types=[AuditType.BACKUP_MADE, AuditType.BACKUP_FAILED], newest_first=True, limit=1)
    if not found:
        return None
    record = found[0]
    age_s = (time.time() if now is None else now) - log_moment(record.ts).timestamp()
    return {"ok": record.type == AuditType.BACKUP_MADE, "ts": record.ts, "stale": age_s > STALE_S,
            "age_days": int(age_s // 86400), **record.data}


@dataclass(frozen=True)
class Restored:
    records: int
    replaced: Path | None          # where the data directory's previous files were moved
    held: list[str]
    configs: list[str]             # table files in the backup, for the technician to put back
    recovered: dict | None = None  # what the collector's copy gave back after the backup (kiosk.recovery)


def check_backup(folder: str | Path) -> dict:
    """The backup's manifest, once every file it lists is there as it was written and its
    audit log walks whole; :class:`BackupError` naming what is wrong otherwise."""
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
    _verified(folder / AUDIT_FILE, "the backup's audit log", "use another backup")
    return manifest


def restore_backup(folder: str | Path, data_dir: str | Path, *, actor: str, replace: bool = False,
                   now: float | None = None, collector: list[str | Path] | None = None) -> Restored:
    """Put a checked backup back into ``data_dir`` (the kiosk stopped).

    Never loses a record: a data directory whose log already holds the backup's head and
    more is refused outright (there is nothing to restore), and any other existing log is
    replaced only with ``replace``, its files moved aside to ``replaced-<time>/``, not deleted.
    ``collector``: the log collector's files; the records written after the backup that they
    hold, signed for by the table, are appended as they were (``kiosk.recovery``)."""
    folder, data_dir = Path(folder), Path(data_dir)
    manifest = check_backup(folder)
    # Read before anything in the data directory moves: a collector file that cannot be read
    # stops the restore with nothing changed.
    recovery = _recovery(folder, collector) if collector else None
    data_dir.mkdir(parents=True, exist_ok=True)
    existing = data_dir / AUDIT_FILE
    replaced = None
    if existing.exists():
        log = AuditLog(existing, create=False)
        try:
            count, same = log.count(), log.records(after_seq=manifest["head_seq"] - 1,
                                                   upto_seq=manifest["head_seq"])
        finally:
            log.close()
        if same and same[0].hash == manifest["head_hash"]:
            more = count - manifest["head_seq"]
            raise BackupError(f"{existing} already holds this backup's {manifest['head_seq']} records"
                              f"{f' and {more} more' if more else ''}; there is nothing to restore")
        if count and not replace:
            raise BackupError(f"{existing} holds {count} records of another history; pass --replace to move it "
                              f"aside (into {data_dir}/replaced-<time>/) and restore the backup in its place")
        stamp = folder_time(time.time() if now is None else now)
        replaced = data_dir / f"replaced-{stamp}"
        replaced.mkdir()
        for name in (AUDIT_FILE, f"{AUDIT_FILE}-wal", f"{AUDIT_FILE}-shm", KIOSK_DB, f"{KIOSK_DB}-wal",
                     f"{KIOSK_DB}-shm", *PRIVATE_FILES):
            if (data_dir / name).exists():
                (data_dir / name).rename(replaced / name)
    for name in (AUDIT_FILE, KIOSK_DB, *PRIVATE_FILES):
        if (folder / name).is_file():
            shutil.copy2(folder / name, data_dir / name)
            os.chmod(data_dir / name, 0o600)
    held = []
    for name in manifest.get("held_recordings", []):
        target = data_dir / RECORDINGS / name
        if not target.exists():
            shutil.copytree(folder / RECORDINGS / name, target)
            held.append(name)
    configs = sorted(p.name for p in (folder / "config").glob("*")) if (folder / "config").is_dir() else []
    log = AuditLog(data_dir / AUDIT_FILE, create=False)
    try:
        recovered = None
        if recovery is not None:
            log.extend(recovery.records)
            recovered = {**recovery.to_json(), "files": [str(p) for p in collector]}
        log.append(AuditType.BACKUP_RESTORED, actor, {
            "from": str(folder), "head_seq": manifest["head_seq"], "head_hash": manifest["head_hash"],
            "replaced": str(replaced) if replaced else None, "held_recordings": held,
            **({"recovered": recovered} if recovered else {})}, table_id=log.table())
    finally:
        log.close()
    return Restored(manifest["head_seq"], replaced, held, configs, recovered)


def _recovery(folder: Path, collector: list[str | Path]):
    """What the collector's copy holds after the backup's head, as far as a key the backup
    holds or its log made signed for it."""
    from kiosk.recovery import recover_after
    from kiosk.signing import SigningError, fingerprint, read_table_key

    log = AuditLog(folder / AUDIT_FILE, create=False)
    try:
        head, table = log.last(), log.table()
        keys = {r.data.get("fingerprint") for r in log.records(types=[AuditType.SIGNING_KEY_CREATED])}
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
