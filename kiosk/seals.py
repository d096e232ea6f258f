"""Every sealed recording against its seal: surveillance's sweep for frames changed on disk.

The review page checks one round's recording when it is opened, and an evidence package is
checked when it is handed over; a key frame changed on the kiosk's disk in a round nobody
has disputed yet shows only here (``niuniu audit check-recordings``), which reads every
file of every recording in the period once (a busy table's day: about 10 GB).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kiosk.audit import AuditLog, AuditType
from vision.record import recording_digests, recordings_dir, seal_changes


@dataclass
class SealSweep:
    intact: int = 0
    gone: list[str] = field(default_factory=list)          # folders no longer on disk (retention, or moved)
    changed: dict[str, list[str]] = field(default_factory=dict)   # "round N (folder)" -> what differs

    @property
    def ok(self) -> bool:
        return not self.changed


def check_recordings(log: AuditLog, data_dir: str | Path, *, table_id: str | None = None,
                     since: str | None = None, until: str | None = None) -> SealSweep:
    """Each recording sealed between ``since`` and ``until`` (audit times) against its seal."""
    sweep = SealSweep()
    for seal in log.records(types=[AuditType.RECORDING_SEALED], table_id=table_id, since=since, until=until):
        name = str(seal.data.get("folder", ""))
        folder = recordings_dir(data_dir, seal.table_id) / name
        label = f"round {seal.round_no} ({name}, sealed at seq {seal.seq})"
        if not name or not folder.is_dir():
            sweep.gone.append(label)
            continue
        changes = seal_changes(recording_digests(folder), seal.data.get("files", {}))
        if changes:
            sweep.changed[label] = changes
        else:
            sweep.intact += 1
    return sweep
