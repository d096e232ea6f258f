"""After a restore, the Accounts and chain pages name the restored backup as the newest the log
knows (QA53): the restored log holds only the records of OLDER backups (the restored one's own
``backup_made`` was written after its copy of the log), so the pages read "Last backup" of one
days older than the copy just put back, or "No backup ... recorded" where it was the first."""

from __future__ import annotations

import html

from kiosk.audit import AuditType
from kiosk_testing import login
from test_damaged_record_more import text


def _line(client, account: str, page: str) -> str:
    login(client, account)
    shown = client.get(page)
    assert shown.status_code == 200
    return html.unescape(text(shown.get_data(as_text=True).split('id="last-backup"')[1].split("</p>")[0]))


def test_the_pages_name_the_restore_not_an_older_backup(audit, client):
    audit.append(AuditType.BACKUP_MADE, "console:niuniu", {"to": "/mnt/usb/niuniu-backup-20261201T030000Z",
                                                           "head_seq": 1, "head_hash": "ab"})
    audit.append(AuditType.BACKUP_RESTORED, "console:niuniu", {"from": "/mnt/usb/niuniu-backup-20261205T030000Z",
                                                               "head_seq": 3, "head_hash": "cd"})
    for account, page in (("admin1", "/admin/users"), ("watch1", "/review/chain")):
        line = _line(client, account, page)
        assert "from /mnt/usb/niuniu-backup-20261205T030000Z" in line, line
        assert "the newest backup this log knows. No backup made since" in line
        assert "20261201" not in line


def test_a_restore_of_the_first_backup_is_not_no_backup_recorded(audit, client):
    audit.append(AuditType.BACKUP_RESTORED, "console:niuniu", {"from": "/mnt/usb/niuniu-backup-20261205T030000Z",
                                                               "head_seq": 3, "head_hash": "cd"})
    line = _line(client, "admin1", "/admin/users")
    assert "No backup of the audit log is recorded" not in line
    assert "from /mnt/usb/niuniu-backup-20261205T030000Z" in line


def test_a_backup_made_after_the_restore_is_the_last_backup_again(audit, client):
    audit.append(AuditType.BACKUP_RESTORED, "console:niuniu", {"from": "/mnt/usb/niuniu-backup-20261205T030000Z",
                                                               "head_seq": 3, "head_hash": "cd"})
    audit.append(AuditType.BACKUP_MADE, "console:niuniu", {"to": "/mnt/usb/niuniu-backup-20261207T030000Z",
                                                           "head_seq": 4, "head_hash": "ef"})
    line = _line(client, "watch1", "/review/chain")
    assert "Restored" not in line
    assert "/mnt/usb/niuniu-backup-20261207T030000Z" in line


def test_a_damaged_restore_record_is_named_not_a_crash(audit, client):
    """A restore record that cannot be read (the disk rotted it) still says a restore happened;
    the Accounts page, the admin's landing page, must not fail on it (review R1 H1)."""
    from test_damaged_record_more import flip_high_bit

    record = audit.append(AuditType.BACKUP_RESTORED, "console:niuniu",
                          {"from": "/mnt/usb/niuniu-backup-20261205T030000Z", "head_seq": 3, "head_hash": "cd"})
    flip_high_bit(audit.path, record.seq)
    for account, page in (("admin1", "/admin/users"), ("watch1", "/review/chain")):
        line = _line(client, account, page)
        assert "the restore's record cannot be read" in line
        assert "the newest backup this log knows" in line


def test_a_newer_backup_given_back_by_the_collector_is_the_last_backup(audit, client):
    """``restore --collector`` appends the records written after the restored backup's copy; a
    backup made after it is among them, and is newer than the one restored (review R1 L1)."""
    audit.append(AuditType.BACKUP_MADE, "console:niuniu", {"to": "/mnt/usb/niuniu-backup-20261205T030000Z",
                                                           "head_seq": 1, "head_hash": "ab"})
    held = audit.last().seq
    audit.append(AuditType.BACKUP_MADE, "console:niuniu", {"to": "/mnt/usb/niuniu-backup-20261206T030000Z",
                                                           "head_seq": held, "head_hash": "cd"})
    audit.append(AuditType.BACKUP_RESTORED, "console:niuniu", {"from": "/mnt/usb/niuniu-backup-20261205T030000Z",
                                                               "head_seq": held, "head_hash": "ef"})
    line = _line(client, "watch1", "/review/chain")
    assert "Restored" not in line and "/mnt/usb/niuniu-backup-20261206T030000Z" in line
