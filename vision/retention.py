"""Which round recordings the disk keeps: the oldest go first, held ones never.

A busy table records about 10 GB of key frames a day, so recordings must be deleted, but
two kinds must not be: one surveillance holds for a dispute (a ``hold.json`` in its folder,
put there from the round's review page, or a hold the audit log still records: the caller
passes those folders as ``held``, since a hold file deleted by hand must not be what frees a
disputed recording for deletion), and, where the regulator fixes a minimum
retention (``recordings.min_keep_days``), one younger than it, even when the disk is short.
The rule lives here, beside the recorder that writes the folders; the kiosk runs it and
logs what it did (``kiosk.retention``), since vision never writes the audit log.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from vision.record import FOLDER_TIME, HOLD, write_json_atomic
from vision.table import RecordingSettings

log = logging.getLogger(__name__)
DAY_S = 86400.0


@dataclass(frozen=True)
class PrunedRecording:
    folder: str
    started: float        # UTC epoch seconds, from the folder's name
    bytes: int
    reason: str


@dataclass(frozen=True)
class Unprunable:
    """Why the disk could not be freed: what retention had to leave."""
    held: int             # folders surveillance holds
    too_young: int        # folders younger than min_keep_days


@dataclass(frozen=True)
class ThisRun:
    """What the running kiosk knows of its own recordings whatever the clock says: the folders
    there were when it started (``earlier``), and how long it has run by a clock no NTP step
    moves (``uptime_s``).  A folder made since is no older than the run: named by a clock
    still behind after a power cut, it read as a month old once NTP set the clock, and the
    rounds of the last hour were deleted as "older than 14 days"."""
    earlier: frozenset[str]
    uptime_s: float


def recording_age(folder: Path, started: float, now: float, run: ThisRun | None) -> float:
    age = now - started
    if run is not None and folder.name not in run.earlier:
        age = min(age, run.uptime_s)
    return age


def folder_started(folder: Path) -> float:
    """A round folder's start from its name (``20250101T200000Z-round-0007``): no file read,
    so a disk of 30,000 recordings is sorted in milliseconds; its mtime if renamed."""
    try:
        return datetime.strptime(folder.name[:16], FOLDER_TIME).replace(tzinfo=timezone.utc).timestamp()
    except ValueError:
        return folder.stat().st_mtime


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def hold_of(folder: Path) -> dict | None:
    """The hold on a recording, or None.  An unreadable hold file still holds: a torn write
    must never be what lets a disputed recording be deleted."""
    path = Path(folder) / HOLD
    if not path.exists():
        return None
    unreadable = {"by": None, "reason": f"the hold file {path} cannot be read", "ts": None}
    try:
        hold = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return unreadable
    if not isinstance(hold, dict):
        return unreadable
    ts = hold.get("ts")
    return {"by": str(hold["by"]) if hold.get("by") else None, "reason": str(hold.get("reason") or ""),
            "ts": float(ts) if isinstance(ts, (int, float)) and not isinstance(ts, bool) and 0 < ts < 1e11 else None}


def hold_recording(folder: Path, *, by: str, reason: str, ts: float | None = None) -> dict:
    hold = {"by": by, "reason": reason, "ts": time.time() if ts is None else ts}
    write_json_atomic(Path(folder) / HOLD, hold)
    return hold


def release_recording(folder: Path) -> dict | None:
    """Lift the hold; returns the hold lifted (None if there was none)."""
    hold = hold_of(folder)
    (Path(folder) / HOLD).unlink(missing_ok=True)
    return hold


def prune_recordings(root: str | Path, settings: RecordingSettings, *, busy: Collection[Path] = (),
                     held: Collection[str] = (), now: float | None = None, limit: int = 50,
                     free_bytes: Callable[[Path], int] = lambda p: shutil.disk_usage(p).free,
                     run: ThisRun | None = None) -> list[PrunedRecording]:
    """Delete the oldest round folders under ``root`` as ``settings`` ask: those older than
    ``keep_days``, then more while the disk has less than ``min_free_gb`` free, but none
    younger than ``min_keep_days``.  Never a held folder (a ``hold.json`` in it, or its name in
    ``held``: the holds the audit log records) nor one in ``busy`` (being recorded); at most
    ``limit`` a call, so one call stays short.  Ages as :func:`recording_age` has them (``run``:
    the kiosk's own recordings are no older than it has run)."""
    root = Path(root)
    min_free = settings.min_free_gb * 1e9
    if not root.is_dir() or (settings.keep_days is None and free_bytes(root) >= min_free):
        return []
    now = time.time() if now is None else now
    keep = {Path(b).resolve() for b in busy}
    removed: list[PrunedRecording] = []
    aged = []
    for folder in (f for f in root.iterdir() if f.is_dir()):
        started = folder_started(folder)
        aged.append((recording_age(folder, started, now, run), started, folder))
    for age, started, folder in sorted(aged, key=lambda entry: -entry[0]):     # oldest first
        if len(removed) >= limit:
            break
        if folder.resolve() in keep or folder.name in held or (folder / HOLD).exists():
            continue
        if settings.keep_days is not None and age > settings.keep_days * DAY_S:
            reason = f"older than {_days(settings.keep_days)}"
        elif settings.min_keep_days is not None and age < settings.min_keep_days * DAY_S:
            break                # oldest first: the rest are younger still
        elif free_bytes(root) < min_free:
            reason = f"less than {settings.min_free_gb:g} GB free"
        else:
            break                # oldest first: the rest are newer, and there is room
        size = folder_bytes(folder)
        try:
            shutil.rmtree(folder)
        except OSError as exc:
            log.error("recording retention: cannot delete %s: %s", folder, exc)
            break
        removed.append(PrunedRecording(folder.name, started, size, reason))
    return removed


def unprunable(root: str | Path, settings: RecordingSettings, *, busy: Collection[Path] = (),
               held: Collection[str] = (), now: float | None = None, run: ThisRun | None = None) -> Unprunable:
    """What retention must leave on the disk: said when the disk stays short, so whoever
    frees it knows whether holds, the minimum retention or plain size is the cause."""
    root = Path(root)
    now = time.time() if now is None else now
    keep = {Path(b).resolve() for b in busy}
    folders = [f for f in root.iterdir() if f.is_dir()] if root.is_dir() else []
    kept = {f for f in folders if f.name in held or (f / HOLD).exists()}
    young = 0
    if settings.min_keep_days is not None:
        young = sum(1 for f in folders if f not in kept and f.resolve() not in keep
                    and recording_age(f, folder_started(f), now, run) < settings.min_keep_days * DAY_S)
    return Unprunable(held=len(kept), too_young=young)


def storage_status(root: str | Path) -> dict:
    """The data disk and the recordings on it, for the technician tuning ``recordings``:
    one directory listing and one ``statvfs``, never a walk of every file."""
    root = Path(root)
    folders = [f for f in root.iterdir() if f.is_dir()] if root.is_dir() else []
    usage = shutil.disk_usage(disk_of(root))
    return {"free_bytes": usage.free, "total_bytes": usage.total, "recordings": len(folders),
            "oldest": min((folder_started(f) for f in folders), default=None),
            "held": sum(1 for f in folders if (f / HOLD).exists())}


def disk_of(path: Path) -> Path:
    """The nearest existing folder at or above ``path``: what to ask the disk's free space
    of before the recordings folder exists."""
    return next(p for p in (path, *path.parents) if p.exists())


def _days(days: float) -> str:
    return f"{days:g} day{'' if days == 1 else 's'}"
