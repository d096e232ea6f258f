"""Backups of the audit log and accounts to another disk, made while the kiosk appends
(kiosk.backup, `niuniu backup`), and what the admin page says about the last one."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3
import tempfile
import threading
import time
from pathlib import Path

import pytest

from kiosk.audit import AuditLog, AuditType
from kiosk.backup import BackupError, make_backup
from kiosk_testing import FAST_HASH, login, rewrite_history
from test_audit_cli import edit


@pytest.fixture
def data_dir(app):
    return app.extensions["niuniu"].data_dir


def test_a_backup_made_while_records_are_appended_restores_to_a_whole_chain(data_dir, audit, tmp_path):
    drive = tmp_path / "usb"
    drive.mkdir()
    stop = threading.Event()

    def dealer_keeps_playing():
        while not stop.is_set():
            audit.append(AuditType.ALERT, "vision", {"message": "busy"})

    writer = threading.Thread(target=dealer_keeps_playing)
    writer.start()
    try:
        made = make_backup(data_dir, drive)
    finally:
        stop.set()
        writer.join()
    assert made.folder.parent == drive and made.folder.stat().st_mode & 0o777 == 0o700
    manifest = json.loads((made.folder / "MANIFEST.json").read_text())
    for name, digest in manifest["files"].items():
        path = made.folder / name
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest and path.stat().st_mode & 0o777 == 0o600
    assert set(manifest["files"]) == {"audit.sqlite3", "kiosk.sqlite3", "secret_key"}
    assert manifest["held_recordings"] == []
    assert audit.last().seq > made.head_seq            # the kiosk went on appending

    # Restored into a new data directory: the chain walks whole, the accounts are there.
    restored = tmp_path / "restored"
    restored.mkdir()
    for name in manifest["files"]:
        shutil.copy(made.folder / name, restored / name)
    copy = AuditLog.in_dir(restored, create=False)
    try:
        result = copy.verify()
        assert result.ok and result.count == made.head_seq and copy.last().hash == made.head_hash
    finally:
        copy.close()
    users = sqlite3.connect(restored / "kiosk.sqlite3").execute("SELECT username FROM users").fetchall()
    assert ("dealer1",) in users


def test_a_damaged_log_or_a_missing_drive_makes_no_backup(data_dir, audit, tmp_path):
    with pytest.raises(BackupError, match="is not a directory: mount the backup drive"):
        make_backup(data_dir, tmp_path / "unplugged")
    drive = tmp_path / "usb"
    drive.mkdir()
    # Record 2 replaced and its hash recomputed: the record after it no longer links to it, a history
    # changed, not one record rotted where it lies.  (Until QA52 review M7 this test edited record 2
    # and left its hash, which refused the backup too; that record, still linked to by the next, is
    # now copied whole and named, as rot that leaves the payload JSON is: test_backup_rot_qa52c.py.)
    audit.append(AuditType.ALERT, "vision", {"message": "written after record 2"})
    edit(audit.path, 2, lambda data: data.update(edited=True), rehash=True)
    with pytest.raises(BackupError, match="does not verify .*BROKEN at seq 3: previous-hash link"):
        make_backup(data_dir, drive)
    assert list(drive.iterdir()) == []                  # no partial folder left


def test_the_console_backs_up_keeps_the_newest_and_logs_each_outcome(data_dir, audit, runner, tmp_path, client):
    drive = tmp_path / "usb"
    drive.mkdir()
    table = tmp_path / "table.yaml"
    table.write_text("table_id: t1\n")
    (tmp_path / "table.view.jpg").write_bytes(b"the picture the zones were marked on")
    for _ in range(3):
        code, out, err = runner(["backup", "--data-dir", str(data_dir), "--to", str(drive), "--config", str(table),
                                 "--keep", "2"])
        assert code == 0, err
    assert "chain checked" in out and "removed 1 older" in out
    kept = sorted(p.name for p in drive.iterdir())
    assert len(kept) == 2 and (drive / kept[-1] / "config" / "table.yaml").read_text() == "table_id: t1\n"
    assert (drive / kept[-1] / "config" / "table.view.jpg").read_bytes().startswith(b"the picture")
    made = audit.last()
    assert made.type == AuditType.BACKUP_MADE and made.data["to"] == str(drive / kept[-1])

    login(client, "admin1")
    page = client.get("/admin/users").get_data(as_text=True)
    assert "Last backup" in page and str(drive / kept[-1]) in page

    code, out, _ = runner(["backup", "--data-dir", str(data_dir), "--to", str(drive), "--json"])
    assert code == 0 and json.loads(out)["records"] == audit.last().data["head_seq"]
    assert audit.last().table_id == audit.table_id      # the console's record is the table's too

    code, _, err = runner(["backup", "--data-dir", str(data_dir), "--to", str(tmp_path / "gone")])
    assert code != 0 and "mount the backup drive" in err
    failed = audit.last()
    assert failed.type == AuditType.BACKUP_FAILED and "mount the backup drive" in failed.data["error"]
    page = client.get("/admin/users").get_data(as_text=True)
    assert "The last backup FAILED" in page and "mount the backup drive" in page
    login(client, "watch1")                   # surveillance sees it beside the chain's health
    page = client.get("/review/chain").get_data(as_text=True)
    assert "The last backup FAILED" in page and "UTC" in page.split('id="last-backup"')[1].split("</p>")[0]

    code, _, err = runner(["backup", "--data-dir", str(tmp_path / "nowhere"), "--to", str(drive)])
    assert code != 0 and "no audit log at" in err


def test_the_admin_page_says_when_no_backup_is_recorded(client):
    login(client, "admin1")
    assert "No backup of the audit log is recorded" in client.get("/admin/users").get_data(as_text=True)


def test_a_backup_days_old_is_flagged_on_the_admin_page(client, audit):
    import time
    audit.append(AuditType.BACKUP_MADE, "console:niuniu", {"to": "/mnt/b/niuniu-backup-x", "head_seq": 9},
                 ts=time.time() - 3 * 86400)
    login(client, "admin1")
    assert "3 days ago: check the backup drive and timer" in client.get("/admin/users").get_data(as_text=True)


def test_the_recordings_surveillance_holds_are_backed_up_and_no_others(data_dir, tmp_path):
    from vision.retention import hold_recording

    root = data_dir / "recordings" / "t1"
    for name in ("20260101T000000Z-round-0001", "20260101T000100Z-round-0002"):
        (root / name / "frames").mkdir(parents=True)
        (root / name / "frames" / "00000003.jpg").write_bytes(b"\xff\xd8" + name.encode())
    hold_recording(root / "20260101T000100Z-round-0002", by="watch1", reason="case 12")
    drive = tmp_path / "usb"
    drive.mkdir()
    made = make_backup(data_dir, drive)
    assert made.held == ["t1/20260101T000100Z-round-0002"]
    copied = made.folder / "recordings" / "t1"
    assert [p.name for p in copied.iterdir()] == ["20260101T000100Z-round-0002"]
    assert (copied / "20260101T000100Z-round-0002" / "frames" / "00000003.jpg").read_bytes().endswith(b"round-0002")
    manifest = json.loads((made.folder / "MANIFEST.json").read_text())
    assert "recordings/t1/20260101T000100Z-round-0002/hold.json" in manifest["files"]


def test_restore_checks_the_backup_and_never_overwrites_a_longer_log(data_dir, audit, runner, tmp_path):
    from kiosk.backup import restore_backup

    from kiosk.signing import table_key

    drive = tmp_path / "usb"
    drive.mkdir()
    table_key(data_dir, audit, "watch1")       # the key evidence is signed with, published once
    made = make_backup(data_dir, drive)

    # Onto a new device: the log, accounts and keys come back, and the log says so.
    new = tmp_path / "new-device"
    code, out, err = runner(["restore", str(made.folder), "--data-dir", str(new)])
    assert code == 0, err
    assert f"restored {made.head_seq} audit records" in out
    restored = AuditLog.in_dir(new, create=False)
    try:
        assert restored.verify().ok and restored.last().type == AuditType.BACKUP_RESTORED
        assert restored.records(after_seq=made.head_seq - 1)[0].hash == made.head_hash
    finally:
        restored.close()
    assert (new / "secret_key").stat().st_mode & 0o777 == 0o600
    # ... so the new device signs evidence with the key the casino already published.
    assert (new / "evidence_key").read_bytes() == (data_dir / "evidence_key").read_bytes()
    assert (new / "evidence_key").stat().st_mode & 0o777 == 0o600

    # Over the live directory, whose log has gone on: refused, nothing touched.
    audit.append(AuditType.ALERT, "vision", {"message": "after the backup"})
    before = audit.path.read_bytes()
    with pytest.raises(BackupError, match="already holds this backup's .* records and .* more; there is nothing"):
        restore_backup(made.folder, data_dir, actor="t")
    assert audit.path.read_bytes() == before

    # Over another history: only with --replace, and the old files are moved aside, not lost.
    other = tmp_path / "other"
    other_log = AuditLog.in_dir(other)
    other_log.append(AuditType.ALERT, "vision", {"message": "another table"})
    other_log.close()
    code, _, err = runner(["restore", str(made.folder), "--data-dir", str(other)])
    assert code != 0 and "pass --replace" in err
    code, out, err = runner(["restore", str(made.folder), "--data-dir", str(other), "--replace", "--json"])
    assert code == 0, err
    aside = Path(json.loads(out)["replaced"])
    kept = AuditLog(aside / "audit.sqlite3", create=False)
    try:
        assert kept.last().data["message"] == "another table"
    finally:
        kept.close()

    # A damaged backup is refused before anything is copied.
    (made.folder / "kiosk.sqlite3").write_bytes(b"not the accounts")
    code, _, err = runner(["restore", str(made.folder), "--data-dir", str(tmp_path / "third")])
    assert code != 0 and "kiosk.sqlite3 differs from the file backed up" in err
    assert not (tmp_path / "third" / "audit.sqlite3").exists()



def test_a_history_rewritten_and_rehashed_passes_the_chain_but_not_its_backups(data_dir, audit, runner, tmp_path):
    drive = tmp_path / "usb"
    drive.mkdir()
    first = make_backup(data_dir, drive)
    audit.append(AuditType.ALERT, "vision", {"message": "after the backup"})
    (drive / "niuniu-backup-20000101T000000Z").mkdir()          # a copy cut short: no manifest
    code, out, _ = runner(["audit", "verify", "--data-dir", str(data_dir), "--against", str(drive)])
    assert code == 0 and f"the log holds the head of all 1 ({first.folder.name}, seq {first.head_seq})" in out
    assert "1 without a readable MANIFEST.json, not compared" in out
    shutil.rmtree(drive / "niuniu-backup-20000101T000000Z")

    rewrite_history(audit.path, 2, "someone else")
    code, out, _ = runner(["audit", "verify", "--data-dir", str(data_dir)])
    assert code == 0 and out.startswith("OK")                 # the chain alone cannot tell
    code, out, _ = runner(["audit", "verify", "--data-dir", str(data_dir), "--against", str(drive)])
    assert code == 1 and f"REWRITTEN: the log's record seq {first.head_seq} is not the one in the backup made" in \
        out
    code, out, _ = runner(["audit", "verify", "--data-dir", str(data_dir), "--against", str(drive), "--json"])
    assert json.loads(out)["ok"] is False and json.loads(out)["backups"][0]["verdict"] == "rewritten"

    # The nightly backup refuses to copy over its proof, keeps every older backup, and says why.
    code, _, err = runner(["backup", "--data-dir", str(data_dir), "--to", str(drive), "--keep", "1"])
    assert code != 0 and "not backed up, and no older backup removed" in err
    assert [p.name for p in drive.iterdir()] == [first.folder.name]
    failed = audit.last()
    assert failed.type == AuditType.BACKUP_FAILED and "is not the one in the backup made" in failed.data["error"]
    code, _, err = runner(["audit", "verify", "--data-dir", str(data_dir), "--against", str(tmp_path / "unplugged")])
    assert code != 0 and "unplugged is not a directory" in err and "is the drive mounted?" in err


def test_a_logged_restore_of_an_older_backup_supersedes_the_newer_ones(data_dir, audit, runner, tmp_path):
    drive = tmp_path / "usb"
    drive.mkdir()
    older = make_backup(data_dir, drive, now=time.time() - 120)
    audit.append(AuditType.ALERT, "vision", {"message": "lost with the disk"})
    newer = make_backup(data_dir, drive, now=time.time() - 60)

    # The disk died and only the older backup was at hand: the newer one's head is gone for good.
    new = tmp_path / "new-device"
    code, _, err = runner(["restore", str(older.folder), "--data-dir", str(new)])
    assert code == 0, err
    code, out, _ = runner(["audit", "verify", "--data-dir", str(new), "--against", str(drive), "--json"])
    verdicts = {b["name"]: b["verdict"] for b in json.loads(out)["backups"]}
    assert code == 0 and verdicts == {older.folder.name: "held", newer.folder.name: "superseded"}
    code, out, _ = runner(["backup", "--data-dir", str(new), "--to", str(drive)])
    assert code == 0, out


def test_surveillance_sees_on_the_chain_page_whether_the_backups_agree(data_dir, audit, client, tmp_path):
    from kiosk.backup import log_backup

    drive = tmp_path / "usb"
    drive.mkdir()
    made = make_backup(data_dir, drive)
    log_backup(audit, made, actor="t", destination=drive)
    login(client, "watch1")
    page = client.get("/review/chain").get_data(as_text=True)
    assert 'id="chain-backups" class="ok-text">backups: the log holds the head of all 1' in page

    rewrite_history(audit.path, 1, "someone else")
    page = client.get("/review/chain").get_data(as_text=True)
    assert f'id="chain-backups" class="bad-text">REWRITTEN: the log&#39;s record seq {made.head_seq} ' in page


def test_the_head_a_shift_report_printed_checks_the_log_later(data_dir, audit, played, runner):
    page = played.get("/review/report?from=2000-01-01&to=2100-01-01").get_data(as_text=True)
    printed = re.search(r'id="report-head">.*?<span class="mono">(\d+):([0-9a-f]{64})</span>', page, re.S)
    seq, digest = int(printed.group(1)), printed.group(2)
    assert (seq, digest) == (audit.last().seq, audit.last().hash)
    code, out, _ = runner(["audit", "report", "--data-dir", str(data_dir)])
    assert code == 0 and f"audit chain head when made: {seq}:{digest}" in out.splitlines()[-1]
    assert json.loads(runner(["audit", "report", "--data-dir", str(data_dir), "--json"])[1])[0]["chain_head"] == \
        {"seq": seq, "hash": digest}
    audit.append(AuditType.ALERT, "vision", {"message": "the shift goes on"})

    # Copied off the paper as its first 16 digits.
    code, out, _ = runner(["audit", "verify", "--data-dir", str(data_dir), "--head", f"{seq}:{digest[:16]}"])
    assert code == 0 and f"ok: head {seq}:{digest[:16]}: the log still holds its head" in out
    rewrite_history(audit.path, 1, "someone else")
    code, out, _ = runner(["audit", "verify", "--data-dir", str(data_dir), "--head", f"{seq}:{digest[:16]}"])
    assert code == 1 and f"REWRITTEN: the log's record seq {seq} is not the one in the head written down" in out
    code, out, _ = runner(["audit", "verify", "--data-dir", str(data_dir), "--head", f"{seq + 99}:{digest}",
                           "--json"])
    assert code == 1 and json.loads(out)["heads"][0]["verdict"] == "missing"
    for typo in ("12", f"x:{digest}", f"{seq}:3f9a"):
        code, _, err = runner(["audit", "verify", "--data-dir", str(data_dir), "--head", typo])
        assert code != 0 and ("is not SEQ:HASH" in err or "is not a head" in err), typo


# --------------------------------------------------------------------------- QA of the console (qa45)


def _manifest(folder: Path) -> dict:
    return json.loads((folder / "MANIFEST.json").read_text())


def test_keep_never_deletes_the_backup_just_made_nor_a_folder_that_is_no_backup(data_dir, audit, runner, tmp_path):
    """A Pi has no battery clock: a backup made while it ran ahead has a name from the future,
    and one sorted by name outlived tonight's.  An operator's own niuniu-backup-* folder is
    not a backup to rotate away."""
    drive = tmp_path / "usb"
    drive.mkdir()
    ahead = make_backup(data_dir, drive)
    ahead.folder.rename(drive / "niuniu-backup-20991231T000000Z")
    (drive / "niuniu-backup-zzz").mkdir()
    (drive / "niuniu-backup-00000000T000000Z").mkdir()
    (drive / "niuniu-backup-00000000T000000Z" / "notes.txt").write_text("the operator's own")
    audit.append(AuditType.ALERT, "vision", {"message": "the table goes on"})

    code, out, err = runner(["backup", "--data-dir", str(data_dir), "--to", str(drive), "--keep", "1", "--json"])
    assert code == 0, err
    made = json.loads(out)
    assert Path(made["folder"]).is_dir() and made["removed"] == ["niuniu-backup-20991231T000000Z"]
    assert sorted(p.name for p in drive.iterdir()) == sorted(
        [Path(made["folder"]).name, "niuniu-backup-00000000T000000Z", "niuniu-backup-zzz"])
    assert (drive / "niuniu-backup-00000000T000000Z" / "notes.txt").read_text() == "the operator's own"
    assert Path(audit.last().data["to"]).is_dir()          # what the admin page and `check` report is there

    # Newest by the chain: with two kept, the one made before stays whatever its name says.
    code, out, err = runner(["backup", "--data-dir", str(data_dir), "--to", str(drive), "--keep", "2", "--json"])
    assert code == 0 and json.loads(out)["removed"] == [], err
    assert Path(made["folder"]).is_dir()


def test_a_backup_into_the_data_directory_is_refused_and_the_record_names_absolute_paths(
        data_dir, audit, runner, tmp_path, monkeypatch):
    for inside in (data_dir, data_dir / "recordings"):
        inside.mkdir(exist_ok=True)
        code, _, err = runner(["backup", "--data-dir", str(data_dir), "--to", str(inside)])
        assert code == 2 and ("inside the data directory" in err or "is the data directory" in err), err
        assert not any(p.name.startswith("niuniu-backup-") for p in inside.iterdir())
    assert audit.last().type == AuditType.BACKUP_FAILED

    # Run from the backup drive's parent with relative paths: the log says where, not "usb/...".
    (tmp_path / "usb").mkdir()
    monkeypatch.chdir(tmp_path)
    relative_data = data_dir.relative_to(tmp_path)
    code, _, err = runner(["backup", "--data-dir", str(relative_data), "--to", "usb"])
    assert code == 0, err
    made = audit.last()
    assert made.type == AuditType.BACKUP_MADE and Path(made.data["to"]).is_absolute()
    assert Path(made.data["to"]).parent == tmp_path / "usb"
    assert _manifest(Path(made.data["to"]))["from"] == str(data_dir)
    code, _, _ = runner(["backup", "--data-dir", str(relative_data), "--to", "unplugged"])
    assert code == 2 and audit.last().data["to"] == str(tmp_path / "unplugged")


def test_the_nightly_backup_refuses_a_drive_that_is_not_mounted(data_dir, audit, runner, tmp_path):
    """An unmounted USB drive leaves its mount point on the SD card: the nightly unit's
    backup (--other-disk) fails there, logged, instead of being called made on the very disk
    it should outlive."""
    mount_point = tmp_path / "mnt-niuniu-backup"
    mount_point.mkdir()
    code, _, err = runner(["backup", "--data-dir", str(data_dir), "--to", str(mount_point), "--other-disk"])
    assert code == 2 and "is on the same disk as the data directory" in err and "mounted" in err
    assert list(mount_point.iterdir()) == [] and audit.last().type == AuditType.BACKUP_FAILED
    # asked for by hand, without the flag, the same folder takes the copy
    assert runner(["backup", "--data-dir", str(data_dir), "--to", str(mount_point)])[0] == 0
    shm = Path("/dev/shm")
    if shm.is_dir() and shm.stat().st_dev != data_dir.stat().st_dev and os.access(shm, os.W_OK):
        other = Path(tempfile.mkdtemp(dir=shm))
        try:
            assert runner(["backup", "--data-dir", str(data_dir), "--to", str(other), "--other-disk"])[0] == 0
        finally:
            shutil.rmtree(other)


def test_a_damaged_live_log_fails_the_backup_in_one_plain_line(tmp_path, runner):
    data = tmp_path / "data"
    data.mkdir()
    (data / "audit.sqlite3").write_bytes(b"garbage, not a database" * 100)
    (tmp_path / "usb").mkdir()
    code, _, err = runner(["backup", "--data-dir", str(data), "--to", str(tmp_path / "usb")])
    assert code == 2 and err.count("\n") == 1 and err.count("audit.sqlite3") == 1, err
    assert "cannot read the audit log" not in err and "cannot open the audit log" in err


@pytest.fixture
def backup(data_dir, audit, tmp_path):
    from kiosk.signing import table_key

    drive = tmp_path / "usb"
    drive.mkdir()
    table_key(data_dir, audit, "watch1")
    return make_backup(data_dir, drive)


def _snapshot(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_restore_over_accounts_and_keys_without_a_log_needs_replace_and_moves_them_aside(backup, runner, tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    from kiosk import db
    from kiosk.auth import create_user

    conn = db.connect(target)
    create_user(conn, "newadmin", "admin", "pass-word-123", created_by="t", method=FAST_HASH)
    conn.close()
    (target / "secret_key").write_text("my-own-secret\n")
    before = _snapshot(target)
    code, out, err = runner(["restore", str(backup.folder), "--data-dir", str(target)])
    assert code == 2 and out == "" and "pass --replace" in err and "kiosk.sqlite3" in err and "secret_key" in err
    assert _snapshot(target) == before and not (target / "audit.sqlite3").exists()

    code, out, err = runner(["restore", str(backup.folder), "--data-dir", str(target), "--replace", "--json"])
    assert code == 0, err
    aside = Path(json.loads(out)["replaced"])
    assert (aside / "secret_key").read_text() == "my-own-secret\n"
    users = sqlite3.connect(aside / "kiosk.sqlite3").execute("SELECT username FROM users").fetchall()
    assert users == [("newadmin",)]
    assert (target / "secret_key").read_bytes() == (backup.folder / "secret_key").read_bytes()


def test_restore_replaces_an_unreadable_log_only_with_replace(backup, runner, tmp_path):
    """The dead disk: what is left of its log cannot be opened; --replace moves it aside."""
    for damage in (b"not a db\n", (backup.folder / "audit.sqlite3").read_bytes()[:4096 * 3]):
        target = tmp_path / f"dead-{len(damage)}"
        target.mkdir()
        (target / "audit.sqlite3").write_bytes(damage)
        code, _, err = runner(["restore", str(backup.folder), "--data-dir", str(target)])
        assert code == 2 and "cannot be read as an audit log" in err and "pass --replace" in err, err
        assert _snapshot(target) == {"audit.sqlite3": damage}
        code, out, err = runner(["restore", str(backup.folder), "--data-dir", str(target), "--replace", "--json"])
        assert code == 0, err
        assert (Path(json.loads(out)["replaced"]) / "audit.sqlite3").read_bytes() == damage
        restored = AuditLog.in_dir(target, create=False)
        try:
            assert restored.verify().ok and restored.last().type == AuditType.BACKUP_RESTORED
        finally:
            restored.close()


def test_restore_checks_the_manifests_head_against_the_backups_own_log(backup, data_dir, runner, tmp_path):
    edited = tmp_path / "edited"
    shutil.copytree(backup.folder, edited)
    manifest = _manifest(edited)
    for change in ({"head_seq": "abc"}, {"head_seq": manifest["head_seq"] - 1}, {"head_hash": "a" * 64},
                   {"head_hash": None}):
        (edited / "MANIFEST.json").write_text(json.dumps({**manifest, **change}))
        code, out, err = runner(["restore", str(edited), "--data-dir", str(tmp_path / "new")])
        assert code == 2 and "names the head" in err and "use another backup" in err, (change, err)
        assert not (tmp_path / "new").exists()
    # Lacking head_hash, into a data directory that has a log: one line, no KeyError.
    del manifest["head_hash"]
    (edited / "MANIFEST.json").write_text(json.dumps(manifest))
    before = _snapshot(data_dir)
    code, _, err = runner(["restore", str(edited), "--data-dir", str(data_dir)])
    assert code == 2 and err.count("\n") == 1 and "names the head" in err
    assert _snapshot(data_dir).keys() == before.keys()


def test_restore_calls_an_older_copy_of_the_same_history_so(backup, data_dir, audit, runner, tmp_path):
    older = tmp_path / "older"
    older.mkdir()
    shutil.copy(backup.folder / "audit.sqlite3", older / "audit.sqlite3")
    audit.append(AuditType.ALERT, "vision", {"message": "after the first backup"})
    newer = make_backup(data_dir, tmp_path / "usb")
    code, _, err = runner(["restore", str(newer.folder), "--data-dir", str(older)])
    assert code == 2 and "another history" not in err, err
    assert (f"holds the first {backup.head_seq} of this backup's {newer.head_seq} records (an older copy of the "
            "same history); pass --replace") in err


def test_restore_into_a_file_or_a_read_only_directory_is_one_line_and_changes_nothing(
        backup, runner, tmp_path, monkeypatch):
    a_file = tmp_path / "passwd"
    a_file.write_text("root:x:0:0\n")
    for target in (a_file, a_file / "sub"):
        code, out, err = runner(["restore", str(backup.folder), "--data-dir", str(target)])
        assert code == 2 and out == "" and err.count("\n") == 1 and "is a file" in err, err
    assert a_file.read_text() == "root:x:0:0\n"

    read_only = tmp_path / "mounted-ro"
    read_only.mkdir()
    monkeypatch.setattr("kiosk.backup.os.access", lambda path, mode: Path(path) != read_only)
    code, _, err = runner(["restore", str(backup.folder), "--data-dir", str(read_only), "--replace"])
    assert code == 2 and err.count("\n") == 1 and f"cannot write in the data directory {read_only}" in err, err
    assert list(read_only.iterdir()) == []


def test_keep_after_a_restore_of_an_older_backup_drops_the_backups_in_the_order_they_were_made(
        data_dir, audit, runner, tmp_path):
    drive = tmp_path / "usb"
    drive.mkdir()
    older = make_backup(data_dir, drive, now=time.time() - 120)
    audit.append(AuditType.ALERT, "vision", {"message": "lost with the disk"})
    newer = make_backup(data_dir, drive, now=time.time() - 60)      # superseded by the restore below
    new = tmp_path / "new-device"
    assert runner(["restore", str(older.folder), "--data-dir", str(new)])[0] == 0

    code, out, err = runner(["backup", "--data-dir", str(new), "--to", str(drive), "--keep", "2", "--json"])
    assert code == 0 and json.loads(out)["removed"] == [older.folder.name], err
    code, out, err = runner(["backup", "--data-dir", str(new), "--to", str(drive), "--keep", "2", "--json"])
    assert code == 0 and json.loads(out)["removed"] == [newer.folder.name], err


def test_the_house_preset_a_table_file_names_is_backed_up_and_named_at_restore(data_dir, audit, runner, tmp_path):
    """QA47 docs F4: the backup held table.yaml (rules: house.toml) without house.toml: a new
    device restored as documented named a preset it did not have, and the house's rules
    (commission, cover) were gone with the disk."""
    from scoring.rules import PRESET_DIR

    etc = tmp_path / "etc-niuniu"
    etc.mkdir()
    (etc / "table.yaml").write_text("table_id: t1\nrules: house.toml\n")
    (etc / "house.toml").write_text((PRESET_DIR / "classic.toml").read_text())
    (etc / "table.view.jpg").write_bytes(b"the picture")
    drive = tmp_path / "usb"
    drive.mkdir()
    code, _, err = runner(["backup", "--data-dir", str(data_dir), "--to", str(drive),
                           "--config", str(etc / "table.yaml")])
    assert code == 0, err
    [made] = list(drive.iterdir())
    assert sorted(p.name for p in (made / "config").iterdir()) == ["house.toml", "table.view.jpg", "table.yaml"]
    assert (made / "config" / "house.toml").read_text() == (etc / "house.toml").read_text()

    code, out, err = runner(["restore", str(made), "--data-dir", str(tmp_path / "new-device")])
    assert code == 0, err
    assert f"rule preset in the backup: {made / 'config' / 'house.toml'} (it was {etc.resolve() / 'house.toml'}" in out
    assert f"calibration picture in the backup: {made / 'config' / 'table.view.jpg'}" in out
    assert f"table file in the backup: {made / 'config' / 'table.yaml'} (it was {etc.resolve() / 'table.yaml'}" in out
