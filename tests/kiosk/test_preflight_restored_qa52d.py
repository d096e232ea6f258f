"""QA52 L2: `niuniu check` right after `niuniu restore` says the log was restored from which
backup and that none has been made since, not a bare "no backup recorded"."""

from __future__ import annotations

from test_preflight import Reader, data, table

from kiosk.audit import AuditLog, AuditType
from kiosk.preflight import WARN, check_device


def test_the_backup_line_after_a_restore_names_the_backup_and_that_none_was_made_since(tmp_path):
    config, data_dir = table(tmp_path), data(tmp_path)
    log = AuditLog.in_dir(data_dir)
    restore = log.append(AuditType.BACKUP_RESTORED, "tech", {
        "from": "/mnt/backup/niuniu-backup-20261207T180000Z", "head_seq": 1, "head_hash": "ab" * 32})
    log.close()
    line = next(f for f in check_device(config, data_dir, camera=False, reader=Reader) if f.part == "backup")
    assert line.level == WARN
    assert "no backup recorded" not in line.message
    assert "from /mnt/backup/niuniu-backup-20261207T180000Z (its log up to seq 1" in line.message
    assert f"restore record seq {restore.seq}" in line.message and "no backup made since" in line.message
