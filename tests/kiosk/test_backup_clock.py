"""The last backup's age when the clock that stamped it was wrong (QA46 time F10).

A Pi has no battery clock: a backup made while it ran a year ahead was stamped a year
ahead, and read as made "-350 days ago", never stale, so the Accounts page, the chain page
and ``niuniu check`` called it fine for a year with no backup made since.
"""

from __future__ import annotations

import time
from pathlib import Path

from kiosk.audit import AuditLog, AuditType
from kiosk.backup import backup_status
from kiosk.preflight import WARN, check_device
from kiosk_testing import login

DEMO_TABLE = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "table.yaml"


def backup_from_the_future(log: AuditLog, later_records: int = 3) -> None:
    head = log.last().seq if log.last() else 0
    log.append(AuditType.BACKUP_MADE, "console:niuniu", {"to": "/mnt/b/niuniu-backup-x", "head_seq": head},
               ts=time.time() + 350 * 86400)
    for n in range(later_records):
        log.append(AuditType.ALERT, "vision", {"message": f"the table goes on {n}"})


def test_a_backup_dated_in_the_future_is_suspect_not_fresh(tmp_path):
    log = AuditLog.in_dir(tmp_path)
    try:
        log.append(AuditType.KIOSK_START, "system", {})
        backup_from_the_future(log)
        status = backup_status(log)
    finally:
        log.close()
    assert status["stale"] and status["future"]          # was: stale False, age_days -350
    assert status["records_since"] == 4          # its own record and the three after it


def test_a_backup_made_now_is_neither_future_nor_stale(tmp_path):
    log = AuditLog.in_dir(tmp_path)
    try:
        log.append(AuditType.BACKUP_MADE, "console:niuniu", {"to": "/mnt/b/niuniu-backup-x", "head_seq": 0})
        status = backup_status(log, now=time.time() + 60)
    finally:
        log.close()
    assert not status["future"] and not status["stale"] and status["records_since"] == 1


def test_the_accounts_and_chain_pages_say_a_backup_is_dated_in_the_future(client, audit):
    backup_from_the_future(audit)
    login(client, "admin1")
    line = client.get("/admin/users").get_data(as_text=True).split('id="last-backup"')[1].split("</p>")[0]
    assert "dated in the future: check the clock" in line and "records written since are not in it" in line
    assert "days ago" not in line
    login(client, "watch1")
    line = client.get("/review/chain").get_data(as_text=True).split('id="last-backup"')[1].split("</p>")[0]
    assert "dated in the future: check the clock" in line


def test_niuniu_check_warns_of_a_backup_dated_in_the_future(tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    log = AuditLog.in_dir(data_dir)
    try:
        log.append(AuditType.KIOSK_START, "system", {})
        backup_from_the_future(log)
    finally:
        log.close()
    saved = next(f for f in check_device(DEMO_TABLE, data_dir, camera=False) if f.part == "backup")
    assert saved.level == WARN and "dated in the future" in saved.message and "check the clock" in saved.message
    assert "records written since are not in it" in saved.message
