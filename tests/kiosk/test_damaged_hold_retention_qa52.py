"""Retention and the recordings sweep past a damaged audit record (QA52): a hold or release the
disk damaged cannot say which recording it held, so retention keeps its round's recording and
says so once, instead of its DamagedRecord ending every pass (the disk then fills) or the
kiosk's start; `audit check-recordings` names it instead of stopping at it."""

from __future__ import annotations

import logging
import shutil

from kiosk.audit import AuditLog, AuditType
from kiosk.retention import RecordingRetention
from test_damaged_record_kiosk import damage
from test_retention import NOW, Disk, held_in_log, recording
from vision.record import recording_digests
from vision.table import RecordingSettings

SHORT = RecordingSettings(keep_days=30, min_free_gb=1e-5)       # every recording here is old enough to go


def test_a_damaged_hold_keeps_its_rounds_recording_until_it_is_released_and_is_said_once(tmp_path, caplog):
    root = tmp_path / "recordings" / "t1"
    held, old = recording(root, 40, 7), recording(root, 35, 8)
    log = AuditLog.in_dir(tmp_path, "t1")
    hold_seq = held_in_log(log, held, 7)
    (held / "hold.json").unlink()                 # only the log's hold keeps it now
    damage(log.path, hold_seq)
    caplog.set_level(logging.WARNING, logger="kiosk.retention")
    retention = RecordingRetention(root, SHORT, log, free_bytes=Disk(root, capacity=2_500), clock=lambda: NOW)
    retention.check()
    retention.check()
    assert held.exists() and not old.exists()     # the pass still deletes what it may
    assert log.records(types=[AuditType.RECORDINGS_PRUNED])[0].data["folders"] == [old.name]
    said = [m for m in caplog.messages if f"seq {hold_seq} (recording_held) cannot be read" in m]
    assert len(said) == 1 and "run niuniu audit verify" in said[0]
    assert "keeps round 7's recording as held until a release of it is logged" in said[0]
    # Released from the round page (its hold file gone, by the folder's name): it goes as any other.
    log.append(AuditType.RECORDING_RELEASED, "watch1", {"folder": held.name, "reason": "closed"}, round_no=7)
    retention.check()
    assert not held.exists()


def test_a_damaged_release_lifts_nothing(tmp_path):
    root = tmp_path / "recordings" / "t1"
    held = recording(root, 40, 7)
    log = AuditLog.in_dir(tmp_path, "t1")
    held_in_log(log, held, 7)
    (held / "hold.json").unlink()
    released = log.append(AuditType.RECORDING_RELEASED, "watch1", {"folder": held.name, "reason": "closed"},
                          round_no=7)
    damage(log.path, released.seq)
    RecordingRetention(root, SHORT, log, free_bytes=Disk(root, capacity=2_500), clock=lambda: NOW).check()
    assert held.exists()


def test_the_kiosks_retention_starts_past_a_damaged_hold_lost_record(tmp_path):
    root = tmp_path / "recordings" / "t1"
    old = recording(root, 40, 8)
    log = AuditLog.in_dir(tmp_path, "t1")
    lost = log.append(AuditType.RECORDING_HOLD_LOST, "system", {"folder": "x", "held_seq": 1}, round_no=7)
    damage(log.path, lost.seq)
    # As the kiosk's start builds it (kiosk.commands._retention): it used to raise here.
    RecordingRetention(root, SHORT, log, free_bytes=Disk(root, capacity=2_500), clock=lambda: NOW).check()
    assert not old.exists()


def test_check_recordings_names_a_held_recording_gone_whose_hold_cannot_be_read(tmp_path, runner):
    root = tmp_path / "recordings" / "t1"
    folder, kept = recording(root, 40, 7), recording(root, 35, 8)
    log = AuditLog.in_dir(tmp_path, "t1")
    seal = log.append(AuditType.RECORDING_SEALED, "system", {"folder": folder.name,
                                                             "files": recording_digests(folder)}, round_no=7)
    log.append(AuditType.RECORDING_SEALED, "system", {"folder": kept.name, "files": recording_digests(kept)},
               round_no=8)
    hold_seq = held_in_log(log, folder, 7)
    pruned = log.append(AuditType.RECORDINGS_PRUNED, "system", {"count": 1, "folders": [folder.name]})
    log.close()
    shutil.rmtree(folder)                          # as the old retention did once it stopped at the damaged hold
    damage(tmp_path / "audit.sqlite3", hold_seq)
    damage(tmp_path / "audit.sqlite3", pruned.seq)
    code, out, err = runner(["audit", "check-recordings", "--data-dir", str(tmp_path)])
    assert code == 1, err
    assert f"round 7 ({folder.name}, sealed at seq {seal.seq})" in out
    assert f"held at seq {hold_seq} by watch1 (its record cannot be read (its payload is not JSON" in out
    assert "never released, but no longer on disk: no record says who deleted it" in out
    assert "1 recording as sealed" in out          # the rest of the sweep went on
