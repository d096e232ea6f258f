"""A restore whose disk fills (QA51 operator M5): the files are put in place whole or not at
all, and a restore whose record could not be written says so and is recorded by a rerun."""

from __future__ import annotations

import errno
import shutil
import sqlite3
from pathlib import Path

import pytest

import kiosk.audit
from kiosk.audit import AuditLog, AuditType
from kiosk.backup import make_backup


@pytest.fixture
def backup(app, audit, tmp_path):
    from kiosk.signing import table_key

    data_dir = app.extensions["niuniu"].data_dir
    drive = tmp_path / "usb"
    drive.mkdir()
    table_key(data_dir, audit, "watch1")
    return make_backup(data_dir, drive)


def _disk_full(*_args, **_kwargs):
    raise sqlite3.OperationalError("database or disk is full")


def _restored(target: Path) -> list:
    log = AuditLog.in_dir(target, create=False)
    try:
        assert log.verify().ok
        return log.records(types=[AuditType.BACKUP_RESTORED])
    finally:
        log.close()


def test_a_replace_that_runs_out_of_room_before_its_record_is_recorded_by_running_it_again(
        backup, runner, tmp_path, monkeypatch):
    target = tmp_path / "table"
    other = AuditLog.in_dir(target, "other")
    other.append(AuditType.ALERT, "vision", {"message": "another history"})
    other.close()
    command = ["restore", str(backup.folder), "--data-dir", str(target), "--replace"]

    monkeypatch.setattr(kiosk.audit, "_insert", _disk_full)      # the disk fills at the backup_restored record
    code, out, err = runner(command)
    assert code == 2 and out == ""
    assert "the backup's files are in place" in err and "could not be recorded" in err, err
    assert "run the same command again to record it" in err and "nothing was written" not in err
    assert "replaced-" in err                       # where the other history went
    monkeypatch.undo()
    assert _restored(target) == []                   # the backup's log, without the record

    # Space freed, the same command: only the missing record is appended, and it says so.
    code, out, err = runner(command)
    assert code == 0, err
    assert "recorded the restore" in out and "nothing to restore" not in out
    records = _restored(target)
    assert [(r.data["head_seq"], r.data["head_hash"]) for r in records] == [(backup.head_seq, backup.head_hash)]
    assert records[0].seq == backup.head_seq + 1 and records[0].data["recorded_later"] is True
    assert len(list(target.glob("replaced-*"))) == 1  # nothing moved aside a second time

    # Recorded: a third run has nothing left to do.
    code, _, err = runner(command)
    assert code == 2 and "there is nothing to restore" in err


def test_a_copy_cut_short_on_a_fresh_directory_leaves_no_empty_accounts_database(backup, runner, tmp_path,
                                                                                   monkeypatch):
    target = tmp_path / "new-device"
    real_copy = shutil.copy2

    def copy_until_full(src, dst, *args, **kwargs):
        if Path(src).name == "kiosk.sqlite3":
            Path(dst).write_bytes(b"")               # the disk filled at its first block
            raise OSError(errno.ENOSPC, "No space left on device", str(dst))
        return real_copy(src, dst, *args, **kwargs)

    monkeypatch.setattr(shutil, "copy2", copy_until_full)
    code, _, err = runner(["restore", str(backup.folder), "--data-dir", str(target)])
    # No 0-byte kiosk.sqlite3 a kiosk would take for a first run, no log without its accounts.
    assert code == 2 and [p.name for p in target.iterdir()] == []
    assert "No space left on device" in err and "nothing in it was changed" in err, err
    monkeypatch.undo()

    code, out, err = runner(["restore", str(backup.folder), "--data-dir", str(target)])
    assert code == 0, err
    assert f"restored {backup.head_seq} audit records" in out
    assert (target / "kiosk.sqlite3").read_bytes() == (backup.folder / "kiosk.sqlite3").read_bytes()
    assert len(_restored(target)) == 1
