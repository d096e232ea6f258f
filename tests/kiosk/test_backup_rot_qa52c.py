"""Bit rot that leaves a payload JSON (QA52 review M7): a digit flipped reads as before and only
fails the record's hash, and the backup refused the whole log over it, every night, so nothing
written after it ever got a copy.  A record that fails its own hash while the next record still
links to it is one record changed where it lies, rot or a hand edit: the log is copied whole with
the record as stored and named, under the same rule as unreadable damage.  A history whose links
were rewritten is still refused (test_backup.py)."""

from __future__ import annotations

import json
import sqlite3

from kiosk.audit import AuditLog, AuditType
from tamper_testing import edit_in_place, rot_in_place


def stored_row(path, seq: int) -> tuple:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT actor, payload, hash FROM audit WHERE seq = ?", (seq,)).fetchone()
    finally:
        conn.close()


def test_a_digit_that_rots_gets_the_log_backed_up_whole_with_the_record_named(app, audit, runner, tmp_path):
    data_dir, drive = app.extensions["niuniu"].data_dir, tmp_path / "usb"
    drive.mkdir()
    bad = audit.append(AuditType.ROUND_VOID, "dealer1", {"reason": "misdeal 1"}, round_no=1)
    rot_in_place(audit.path, bad.seq, "1", "9")              # 0x31 -> 0x39: one bit, still JSON
    after = audit.append(AuditType.ALERT, "vision", {"message": "written after the rot"})
    code, _, err = runner(["backup", "--data-dir", str(data_dir), "--to", str(drive)])
    assert code == 2 and err.count("\n") == 1                # new damage: failed, to be seen
    assert f"audit record seq {bad.seq} (round_void) does not match its hash" in err
    assert "holds every record as the log has them" in err
    [made] = list(drive.iterdir())
    manifest = json.loads((made / "MANIFEST.json").read_text())
    assert [(d["seq"], d["problem"]) for d in manifest["damaged"]] == [(bad.seq, "does not match its hash")]
    assert manifest["head_seq"] == after.seq                 # what was written after the rot has a copy
    assert stored_row(made / "audit.sqlite3", bad.seq) == stored_row(audit.path, bad.seq)   # as stored
    failed = audit.last()
    assert failed.type == AuditType.BACKUP_FAILED and failed.data["damaged"][0]["problem"] == "does not match its hash"

    code, _, err = runner(["backup", "--data-dir", str(data_dir), "--to", str(drive)])
    assert code == 0 and err.startswith("WARNING: ")         # the same damage the next night: known

    new = tmp_path / "new-device"
    code, _, err = runner(["restore", str(made), "--data-dir", str(new)])
    assert code == 2 and f"MANIFEST.json names seq {bad.seq} (round_void)" in err
    code, out, err = runner(["restore", str(made), "--data-dir", str(new), "--accept-damaged"])
    assert code == 0, err
    assert f"audit record seq {bad.seq} (round_void) does not match its hash" in out
    log = AuditLog(new / "audit.sqlite3", create=False)
    try:
        assert log.last().data["damaged"][0]["seq"] == bad.seq
    finally:
        log.close()


def test_one_record_edited_by_hand_is_copied_as_stored_and_named(app, audit, runner, tmp_path):
    """An edit that leaves the record's hash is told apart from rot by nobody, and needs no more
    telling: the copy holds the edited row as stored, failing its hash, named in the manifest and
    on the Accounts page, and the older backup holds the record as it was written."""
    data_dir, drive = app.extensions["niuniu"].data_dir, tmp_path / "usb"
    drive.mkdir()
    settled = audit.append(AuditType.ROUND_VOID, "dealer1", {"reason": "misdeal"}, round_no=1)
    assert runner(["backup", "--data-dir", str(data_dir), "--to", str(drive), "--keep", "1"])[0] == 0
    [older] = list(drive.iterdir())
    edit_in_place(audit.path, settled.seq, "mallory")
    code, _, err = runner(["backup", "--data-dir", str(data_dir), "--to", str(drive), "--keep", "1"])
    assert code == 2 and f"audit record seq {settled.seq} (round_void) does not match its hash" in err
    [made] = [p for p in drive.iterdir() if p != older]
    assert stored_row(made / "audit.sqlite3", settled.seq)[0] == "mallory"
    assert stored_row(older / "audit.sqlite3", settled.seq)[0] == "dealer1"     # kept: as written
