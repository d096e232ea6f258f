"""Backups and restores past a damaged audit record (QA52 follow-up): the nightly backup goes on
where a logged restore's record is damaged (its origin said unknown), and a backup whose log was
damaged before it was made restores on purpose (``--accept-damaged``), naming its damaged
records there and in the ``backup_restored`` record: on a dead kiosk disk it may be the only
copy of the records written since the last clean backup."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from kiosk.audit import AuditLog, AuditType
from kiosk.backup import make_backup
from test_damaged_record_kiosk import damage


@pytest.fixture
def data_dir(app):
    return app.extensions["niuniu"].data_dir


def stored(path, seq: int) -> str:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT payload FROM audit WHERE seq = ?", (seq,)).fetchone()[0]
    finally:
        conn.close()


def test_the_backup_goes_on_past_a_damaged_restore_record_and_says_its_origin_is_unknown(
        data_dir, audit, runner, tmp_path):
    drive = tmp_path / "usb"
    drive.mkdir()
    older = make_backup(data_dir, drive, now=time.time() - 120)
    audit.append(AuditType.ALERT, "vision", {"message": "lost with the disk"})
    newer = make_backup(data_dir, drive, now=time.time() - 60)       # superseded by the restore below
    new = tmp_path / "new-device"
    assert runner(["restore", str(older.folder), "--data-dir", str(new)])[0] == 0
    restored = older.head_seq + 1                                     # its backup_restored record
    damage(new / "audit.sqlite3", restored)

    code, _, err = runner(["backup", "--data-dir", str(new), "--to", str(drive)])
    assert code == 2 and err.count("\n") == 1
    assert "holds every record as the log has them" in err                # made, the damage named
    assert err.count(f"seq {restored} (backup_restored) cannot be read") == 1
    assert len(list(drive.iterdir())) == 3 and older.folder.is_dir() and newer.folder.is_dir()

    _, out, _ = runner(["audit", "verify", "--data-dir", str(new), "--against", str(drive), "--json"])
    [superseded] = [b for b in json.loads(out)["backups"] if b["name"] == newer.folder.name]
    assert superseded["verdict"] == "superseded"
    assert f"from a backup not known: audit record seq {restored} (backup_restored) cannot be read" in \
        superseded["message"]


@pytest.fixture
def damaged_backup(data_dir, audit, runner, tmp_path):
    """A backup of a log whose round_void record the disk damaged, with a record written after it."""
    drive = tmp_path / "usb"
    drive.mkdir()
    bad = audit.append(AuditType.ROUND_VOID, "dealer1", {"reason": "misdeal"}, round_no=1)
    damage(audit.path, bad.seq)
    audit.append(AuditType.ALERT, "vision", {"message": "written after the damage"})
    assert runner(["backup", "--data-dir", str(data_dir), "--to", str(drive)])[0] == 2
    [folder] = list(drive.iterdir())
    return folder, bad.seq


def test_a_damaged_backup_is_refused_naming_the_way_on_and_restored_with_accept_damaged(
        damaged_backup, audit, runner, tmp_path):
    folder, bad = damaged_backup
    new = tmp_path / "new-device"
    code, out, err = runner(["restore", str(folder), "--data-dir", str(new)])
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"MANIFEST.json names seq {bad} (round_void)" in err
    assert "use a backup made before the damage if the drive holds an older one" in err
    assert "or pass --accept-damaged to restore this one with them as they are" in err
    assert not new.exists() or not (new / "audit.sqlite3").exists()

    code, out, err = runner(["restore", str(folder), "--data-dir", str(new), "--accept-damaged"])
    assert code == 0, err
    assert out.count(f"audit record seq {bad} (round_void) cannot be read (its payload is not JSON") == 1
    assert "run niuniu audit verify, keep the data directory as it is and call surveillance" in out
    assert "an older backup made before the damage may hold those records as they were written" in out
    log = AuditLog(new / "audit.sqlite3", create=False)
    try:
        record = log.last()
        assert record.type == AuditType.BACKUP_RESTORED and [d["seq"] for d in record.data["damaged"]] == [bad]
        assert record.data["damaged"][0]["type"] == "round_void"
        assert log.count() == record.data["head_seq"] + 1          # every record of the backup, and the restore's
    finally:
        log.close()
    assert stored(new / "audit.sqlite3", bad) == stored(audit.path, bad)    # the damaged one as it is


def test_accept_damaged_restores_only_the_damage_the_manifest_names(damaged_backup, runner, tmp_path):
    folder, bad = damaged_backup
    manifest = json.loads((folder / "MANIFEST.json").read_text())
    manifest["damaged"][0]["seq"] = bad - 1                 # edited: it names another record
    (folder / "MANIFEST.json").write_text(json.dumps(manifest))
    code, out, err = runner(["restore", str(folder), "--data-dir", str(tmp_path / "new"), "--accept-damaged",
                             "--json"])
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"names the damaged records seq {bad - 1} (round_void), but those the backup's audit log cannot " \
           f"read are seq {bad} (round_void): the manifest was edited" in err
