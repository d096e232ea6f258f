"""The admin and chain pages name the damage a failed backup found (QA52 follow-up): a backup
made whole of a damaged log fails so that someone acts on the damage, so the pages say which
records cannot be read and what to do, once, not only "The last backup FAILED"."""

from __future__ import annotations

import html

import pytest

from kiosk.audit import AuditType
from kiosk.backup import BackupError, log_backup, make_backup
from kiosk_testing import login
from test_damaged_record_kiosk import damage
from test_damaged_record_more import text


def test_a_backup_of_a_damaged_log_names_the_damaged_records_on_the_admin_and_chain_pages(app, audit, client,
                                                                                         tmp_path):
    drive = tmp_path / "usb"
    drive.mkdir()
    bad = [audit.append(AuditType.ROUND_VOID, "dealer1", {"reason": "misdeal"}, round_no=n) for n in (1, 2)]
    for record in bad:
        damage(audit.path, record.seq)
    with pytest.raises(BackupError) as caught:
        make_backup(app.extensions["niuniu"].data_dir, drive)
    # as the nightly `niuniu backup` logs its failure
    log_backup(audit, None, actor="console:niuniu", destination=drive, error=caught.value)
    [made] = list(drive.iterdir())
    for account, page in (("admin1", "/admin/users"), ("watch1", "/review/chain")):
        login(client, account)
        shown = client.get(page)
        assert shown.status_code == 200
        line = html.unescape(text(shown.get_data(as_text=True).split('id="last-backup"')[1].split("</p>")[0]))
        assert "The last backup FAILED: the audit log is damaged" in line and str(made) in line
        for record in bad:
            assert line.count(f"audit record seq {record.seq} (round_void) cannot be read (its payload is not "
                              "JSON") == 1
        assert "run niuniu audit verify , keep the data directory as it is and call surveillance" in line
        assert "A backup made before the damage, if the drive holds one, has those records as they were written" \
            in line
