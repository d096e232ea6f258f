"""Retention on a full disk (QA52 review L1): it deletes recordings (that frees the room) while the
log refuses their ``recordings_pruned`` record, and nothing wrote it later, so once there was room
the seal watch called each one missing: retention's own routine deletion read as a recording
removed by hand.  The deleted folders are kept until a pass can write their record."""

from __future__ import annotations

from kiosk.audit import AuditLog, AuditType
from kiosk.retention import RecordingRetention
from kiosk.seals import SealWatch
from test_damaged_hold_retention_qa52 import SHORT
from test_disk_full import disk_full
from test_retention import NOW, Disk, recording
from test_retention_full_disk_qa52 import Passes
from vision.record import recording_digests


def test_a_recording_deleted_on_a_full_disk_is_recorded_once_there_is_room_not_called_missing(tmp_path):
    root = tmp_path / "recordings" / "t1"
    old = recording(root, 40, 8)
    log = AuditLog.in_dir(tmp_path, "t1")
    log.append(AuditType.RECORDING_SEALED, "system", {"folder": old.name, "files": recording_digests(old)},
               round_no=8)
    seals = SealWatch(log, root, "t1")
    retention = RecordingRetention(root, SHORT, log, free_bytes=Disk(root, capacity=2_500), clock=lambda: NOW,
                                   seals=seals)
    retention.stop_event = Passes(2)
    with disk_full():
        retention.run()
    assert not old.exists()                          # deleted while the log refused its record
    assert log.records(types=[AuditType.RECORDINGS_PRUNED]) == []
    retention.stop_event = Passes(2)
    retention.run()                                  # room again: passes with nothing left to delete
    [pruned] = log.records(types=[AuditType.RECORDINGS_PRUNED])     # written once, not at every pass
    assert pruned.data["folders"] == [old.name] and pruned.data["count"] == 1
    written = seals.step() + SealWatch(log, root, "t1").step()      # this run's watch, and the next start's
    assert not [r for r in log.records(types=[AuditType.RECORDING_CHANGED])], [r.data for r in written]
