"""`niuniu audit check-forwarded` past a damaged record (QA52): a damaged `backup_restored` is
named and the check made, instead of the whole check ending in its DamagedRecord (the log's) or
the line being taken for one the collector cut short (the collector's copy of it); a record sent
already damaged is not said to have changed at the collector."""

from __future__ import annotations

from pathlib import Path

from kiosk.audit import AuditLog, AuditType
from kiosk.forward import record_message, syslog_line
from kiosk_testing import fill
from test_damaged_record_kiosk import damage
from test_damaged_record_more import flip_high_bit


def restored_history(tmp_path: Path) -> tuple[Path, AuditLog, AuditLog, int]:
    """Two histories of table t1 (as test_forward's restore): the first, and in ``data`` the one
    a restore of its backup of seq 1..4 put back (the restore is seq 5)."""
    first = AuditLog(tmp_path / "a.sqlite3", "t1")
    fill(first, 2)
    first.close()
    data = tmp_path / "data"
    data.mkdir()
    (data / "audit.sqlite3").write_bytes((tmp_path / "a.sqlite3").read_bytes())
    first = AuditLog(tmp_path / "a.sqlite3", "t1")
    fill(first, 1, start=3)
    second = AuditLog.in_dir(data, "t1")
    restore = second.append(AuditType.BACKUP_RESTORED, "admin", {"from": "/mnt/backup/x", "head_seq": 4,
                                                                 "head_hash": "ab"})
    fill(second, 1, start=3)
    return data, first, second, restore.seq


def collector_copy(path: Path, *logs: AuditLog) -> Path:
    path.write_text("".join(syslog_line(record_message(r, "t1"), table_id="t1", kind="audit").decode() + "\n"
                            for log in logs for r in log.records()))
    return path


def test_a_damaged_restore_in_the_log_is_named_and_the_copy_still_checked(tmp_path, runner):
    data, first, second, restore = restored_history(tmp_path)
    copy = collector_copy(tmp_path / "collector.log", first, second)     # forwarded while it was whole
    first.close(), second.close()
    damage(data / "audit.sqlite3", restore)
    code, out, err = runner(["audit", "check-forwarded", str(copy), "--data-dir", str(data)])
    assert code == 1, err
    assert f"PROBLEM: the log's audit record seq {restore} (backup_restored) cannot be read" in out
    assert "which backup it put back is not known" in out and "run niuniu audit verify" in out
    assert "ok: table t1: 7 records, seq 1..7" in out                    # the rest of the check was made


def test_a_damaged_restore_in_the_collectors_copy_is_named_not_taken_for_a_cut_line(tmp_path, runner):
    data, first, second, restore = restored_history(tmp_path)
    damage(data / "audit.sqlite3", restore)
    copy = collector_copy(tmp_path / "collector.log", first, second)     # forwarded after the damage
    first.close(), second.close()
    code, out, _ = runner(["audit", "check-forwarded", str(copy)])
    assert code == 1
    assert f"PROBLEM: the collector's copy of audit record seq {restore} (backup_restored) cannot be read" in out
    assert "cut short or garbled" not in out
    # Not excused by a restore the copy cannot read: the history sent again reads as a rewrite.
    assert "seq 6 reached the collector twice, differently" in out


def test_a_record_sent_damaged_is_not_said_to_have_changed_at_the_collector(tmp_path, runner):
    log = AuditLog.in_dir(tmp_path / "data", "t1")
    fill(log, 2)
    flip_high_bit(log.path, 2)                     # bit rot before the forwarder sent it
    copy = collector_copy(tmp_path / "collector.log", log)
    log.close()
    code, out, _ = runner(["audit", "check-forwarded", str(copy), "--data-dir", str(tmp_path / "data")])
    assert code == 1
    assert ("PROBLEM: the collector's record seq 2 does not hash to its own hash: it left the table so, damaged on "
            "the kiosk's disk (its payload is not UTF-8") in out
    assert "changed after it left the table" not in out and "run niuniu audit verify on the kiosk" in out
