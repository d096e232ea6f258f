"""Backups of a log whose damage is already known (QA52 review M5): the damage stays in the chain
for good, so failing every backup on it left the Accounts page red for good and the nightly unit's
failure alarm firing every morning.  The first backup that meets a damage fails (it must be seen);
the next, finding only the damage the backup before it named, is made (exit 0, one WARNING line),
and the page shows it amber with when the damage was first met.  New damage fails again."""

from __future__ import annotations

import html
import json

from kiosk.audit import AuditType
from kiosk.backup import backup_status
from kiosk_testing import login
from test_damaged_record_kiosk import damage
from test_damaged_record_more import text


def last_backup_line(client, account: str, page: str) -> str:
    login(client, account)
    shown = client.get(page)
    assert shown.status_code == 200
    return html.unescape(text(shown.get_data(as_text=True).split('id="last-backup"')[1].split("</p>")[0]))


def test_the_night_after_the_damage_was_reported_the_backup_is_made_and_the_page_amber(app, audit, runner, client,
                                                                                          tmp_path):
    data_dir, drive = app.extensions["niuniu"].data_dir, tmp_path / "usb"
    drive.mkdir()
    backup = ["backup", "--data-dir", str(data_dir), "--to", str(drive), "--keep", "1"]
    bad = audit.append(AuditType.ROUND_VOID, "dealer1", {"reason": "misdeal"}, round_no=1)
    assert runner(backup)[0] == 0
    [clean] = list(drive.iterdir())                 # made before the damage: the record as written
    damage(audit.path, bad.seq)
    assert runner(backup)[0] == 2                   # met for the first time: failed, red
    [first] = [p for p in drive.iterdir() if p != clean]
    first_made = json.loads((first / "MANIFEST.json").read_text())["made_at"]
    assert not backup_status(audit)["ok"]

    code, out, err = runner(backup)                 # the next night: the same damage, nothing new
    assert code == 0, err
    assert err.count("\n") == 1 and err.startswith("WARNING: the audit log holds 1 damaged record(s)")
    assert f"audit record seq {bad.seq} (round_void) cannot be read" in err and first_made in err
    status = backup_status(audit)
    assert status["ok"] and [d["seq"] for d in status["damaged"]] == [bad.seq]
    assert status["damaged_since"] == first_made
    [made] = [p for p in drive.iterdir() if p != clean]
    manifest = json.loads((made / "MANIFEST.json").read_text())
    assert [(d["seq"], d["since"]) for d in manifest["damaged"]] == [(bad.seq, first_made)]
    assert clean.is_dir() and not first.exists()    # --keep 1: the damaged copy goes, the clean one stays

    for account, page in (("admin1", "/admin/users"), ("watch1", "/review/chain")):
        line = last_backup_line(client, account, page)
        assert "FAILED" not in line and "Last backup" in line and str(made) in line
        assert "KNOWN DAMAGE" in line and f"1 damaged record(s) (seq {bad.seq})" in line
        assert "which failed on them and named them: nothing new is damaged" in line
    # ... and restoring it is still a choice made on purpose
    code, _, err = runner(["restore", str(made), "--data-dir", str(tmp_path / "new")])
    assert code == 2 and "--accept-damaged" in err


def test_new_damage_beside_the_known_fails_again_naming_the_new_record(app, audit, runner, client, tmp_path):
    data_dir, drive = app.extensions["niuniu"].data_dir, tmp_path / "usb"
    drive.mkdir()
    backup = ["backup", "--data-dir", str(data_dir), "--to", str(drive)]
    old = audit.append(AuditType.ROUND_VOID, "dealer1", {"reason": "misdeal"}, round_no=1)
    damage(audit.path, old.seq)
    assert runner(backup)[0] == 2
    assert runner(backup)[0] == 0                   # known
    new = audit.append(AuditType.ROUND_VOID, "dealer1", {"reason": "misdeal"}, round_no=2)
    damage(audit.path, new.seq)
    code, _, err = runner(backup)
    assert code == 2 and f"audit record seq {new.seq} (round_void) cannot be read" in err
    assert "(1 more damaged record: its MANIFEST.json names each)" in err
    failed = audit.last()
    assert failed.type == AuditType.BACKUP_FAILED
    assert [d["seq"] for d in failed.data["damaged"]] == [old.seq, new.seq]
    line = last_backup_line(client, "admin1", "/admin/users")
    assert "The last backup FAILED: the audit log is damaged" in line and "KNOWN DAMAGE" not in line
    assert runner(backup)[0] == 0                   # both known now


def test_a_first_backup_onto_a_drive_that_never_named_the_damage_fails(app, audit, runner, tmp_path):
    """What is known is what the last backup of this history on the drive named: a drive that holds
    none (a new one, or the old one wiped) has never shown the damage to anyone."""
    data_dir = app.extensions["niuniu"].data_dir
    bad = audit.append(AuditType.ROUND_VOID, "dealer1", {"reason": "misdeal"}, round_no=1)
    damage(audit.path, bad.seq)
    (tmp_path / "old").mkdir()
    assert runner(["backup", "--data-dir", str(data_dir), "--to", str(tmp_path / "old")])[0] == 2
    assert runner(["backup", "--data-dir", str(data_dir), "--to", str(tmp_path / "old")])[0] == 0
    (tmp_path / "new").mkdir()
    code, _, err = runner(["backup", "--data-dir", str(data_dir), "--to", str(tmp_path / "new")])
    assert code == 2 and f"seq {bad.seq} (round_void) cannot be read" in err
