"""Is the live audit log still the history its backups copied?

The hash chain shows an edit to one record: every later hash stops matching.  It cannot
show a history rewritten whole — the database's guards dropped, a record changed and every
later hash recomputed — because the chain is then consistent again and ``audit verify``
says OK.  What does show it is a copy of the chain's head kept where the kiosk's disk is
not: each nightly backup's ``MANIFEST.json`` names the head it copied (seq and hash), and
the live log must still hold exactly that record at that seq.

The nightly backup asks this before it copies anything (``kiosk.backup.make_backup``), so a
rewrite is found within a day and no older backup — the proof — is rotated away;
``niuniu audit verify --against DIR`` asks it on demand.  A backup whose head the live log
lost to a logged restore (``niuniu restore --replace`` of an older backup, after a disk
died) is told apart: superseded, not rewritten.  A head written down anywhere else — the
printed shift report ends with one — is checked the same way (``verify --head``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from kiosk.audit import AuditError, AuditLog, AuditType, DamagedRecord, log_moment
from kiosk.backup import MANIFEST, PREFIX
from vision.record import FOLDER_TIME

HELD, SUPERSEDED, REWRITTEN, MISSING, UNREADABLE = "held", "superseded", "rewritten", "missing", "unreadable"
FAILURES = (REWRITTEN, MISSING)
# What to do on a failed comparison.  A device reinstalled and started before its backup was
# restored runs a new log that no backup knows: the same finding, with its everyday cause.
WHAT_NOW = ("keep the backups and this data directory as they are and call surveillance (a device reinstalled "
            "and started before `niuniu restore` shows so too: restore the newest backup with --replace)")


@dataclass(frozen=True)
class Anchor:
    name: str                # the backup folder, or the head as written down
    head_seq: int | None
    verdict: str             # HELD, SUPERSEDED, REWRITTEN, MISSING or UNREADABLE
    message: str

    @property
    def failed(self) -> bool:
        return self.verdict in FAILURES

    def line(self) -> str:
        """As the console prints it: the verdict in capitals where it failed."""
        return f"{self.verdict.upper()}: {self.message}" if self.failed else f"ok: {self.message}"

    def to_json(self) -> dict:
        return asdict(self)


def check_against_backups(log: AuditLog, destination: str | Path) -> list[Anchor]:
    """One :class:`Anchor` per backup folder in ``destination``, oldest first."""
    destination = Path(destination)
    folders = sorted(p for p in destination.iterdir() if p.is_dir() and p.name.startswith(PREFIX)) \
        if destination.is_dir() else []
    restores = log.records(types=[AuditType.BACKUP_RESTORED])
    return [_anchor(log, folder, restores) for folder in folders]


def _anchor(log: AuditLog, folder: Path, restores) -> Anchor:
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        seq, digest = int(manifest["head_seq"]), str(manifest["head_hash"])
        made = datetime.strptime(manifest["made_at"], FOLDER_TIME).replace(tzinfo=timezone.utc)
        if seq < 1 or len(digest) != 64:
            raise ValueError(f"head {seq}:{digest}")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return Anchor(folder.name, None, UNREADABLE, f"{folder.name}: no readable {MANIFEST} ({exc}); not compared")
    return _compare(log, folder.name, f"the backup made {made.strftime('%Y-%m-%d %H:%M UTC')} ({folder.name})",
                    seq, digest, made, restores)


def parse_head(text: str) -> tuple[int, str]:
    """``SEQ:HASH`` as a person copies it off a printed shift report (the hash may be cut to
    its first 16 hex digits); :class:`AuditError` before anything is read if it is not one."""
    seq, _, digest = text.partition(":")
    digest = digest.strip().lower()
    if not seq.strip().isdigit() or int(seq) < 1:
        raise AuditError(f"--head {text!r} is not SEQ:HASH (e.g. 1234:3f9a0c2e51b7d4a8, as the shift report "
                         "prints it)")
    if len(digest) < 16 or any(c not in "0123456789abcdef" for c in digest):
        raise AuditError(f"{text} is not a head: give SEQ:HASH, the hash in hex (at least its first 16 digits)")
    return int(seq), digest


def check_head(log: AuditLog, seq: int, digest: str) -> Anchor:
    """A head written down elsewhere (``parse_head``) — the printed shift report's, a
    surveillance note, an evidence package's manifest — compared with the log as a backup's is."""
    return _compare(log, f"head {seq}:{digest[:16]}", f"the head written down as {seq}:{digest[:16]}", seq,
                    digest, None, [])


def _compare(log: AuditLog, name: str, source: str, seq: int, digest: str, made: datetime | None,
             restores) -> Anchor:
    held = log.records(after_seq=seq - 1, upto_seq=seq)
    if held and len(digest) >= 16 and held[0].hash.startswith(digest):   # a bare prefix proves nothing
        return Anchor(name, seq, HELD, f"{name}: the log still holds its head, seq {seq}")
    restore = next((r for r in restores if made is not None and log_moment(r.ts) > made), None)
    if restore is not None:
        # A damaged restore record still says, by its kind and time, that a restore replaced the
        # history; only which backup it put back is lost with its payload.
        restored, damage = restore.read()
        origin = f"from {restored.get('from')}" if damage is None else \
            f"from a backup not known: {DamagedRecord(restore, damage)}"
        return Anchor(name, seq, SUPERSEDED,
                      f"{name} (seq {seq}) was made before the restore logged at seq {restore.seq} "
                      f"({restore.ts}, by {restore.actor}, {origin}), which replaced that history")
    if not held:
        # Said seq-first: the head's own text ("999:5702...") in ``source`` already holds a number.
        last = log.last()
        return Anchor(name, seq, MISSING,
                      f"the log holds no record seq {seq} (it has {log.count()} records, up to seq "
                      f"{last.seq if last else 0}), but {source} names it: records were removed; {WHAT_NOW}")
    return Anchor(name, seq, REWRITTEN,
                  f"the log's record seq {seq} is not the one in {source}: its hash was {digest[:16]}..., now "
                  f"{held[0].hash[:16]}... — the history up to it was changed and the chain recomputed; {WHAT_NOW}")


COMPARED = (HELD, SUPERSEDED, REWRITTEN, MISSING)


def nothing_compared(anchors: list[Anchor], destination: str | Path, data_dir: str | Path) -> str | None:
    """Why ``verify --against`` must not pass where no backup was compared, or None where one was.

    An unmounted backup drive leaves its mount point, an empty folder on the SD card: "none to
    compare with" and exit 0 read as "history confirmed" (QA51 operator M7).  The nightly backup
    refuses the same case (``--other-disk``); here it is said, with its likely cause."""
    if any(a.verdict in COMPARED for a in anchors):
        return None
    unreadable = sum(a.verdict == UNREADABLE for a in anchors)
    found = (f"{destination} holds {unreadable} backup folder{'s' if unreadable > 1 else ''} but no readable "
             f"{MANIFEST}" if unreadable else f"{destination} holds no backup (no {PREFIX}* folder)")
    try:
        same = Path(destination).stat().st_dev == Path(data_dir).stat().st_dev
    except OSError:
        same = False
    cause = (f"it is on the same disk as {data_dir}, so the backup drive is most likely not mounted there"
             if same else "the backup drive may not be mounted, or this is not the folder the nightly backup "
             "writes to (NIUNIU_BACKUP_DIR)")
    return (f"NOT CHECKED: {found}, so the log was compared with nothing: {cause}; mount the drive (or name the "
            "right folder) and run this again")


def summary(anchors: list[Anchor]) -> str:
    """One line for the console: how many backups agree, or the first that does not."""
    failed = [a for a in anchors if a.failed]
    if failed:
        return failed[0].line()
    held = [a for a in anchors if a.verdict == HELD]
    superseded = sum(a.verdict == SUPERSEDED for a in anchors)
    text = (f"backups: the log holds the head of all {len(held)} ({held[-1].name}, seq {held[-1].head_seq})"
            if held else "backups: none to compare with")
    if superseded:
        text += f"; {superseded} older superseded by a logged restore"
    unreadable = sum(a.verdict == UNREADABLE for a in anchors)
    if unreadable:
        text += f"; {unreadable} without a readable {MANIFEST}, not compared"
    return text


def against_last_backup(log: AuditLog, backup: dict | None) -> tuple[bool, str] | None:
    """``(failed, summary)`` against the drive the last backup went to (``backup_status``);
    None when there is no backup yet or its drive is not mounted now."""
    if not backup or not backup.get("to"):
        return None
    # A made backup names its folder, a failed one the directory it was to go to.
    destination = Path(backup["to"]).parent if backup["ok"] else Path(backup["to"])
    if not destination.is_dir():
        return None
    anchors = check_against_backups(log, destination)
    return any(a.failed for a in anchors), summary(anchors)
