"""Retention on a full data disk (QA52): the log refuses retention's records for as long as the
disk stays full, and each pass (once a minute) wrote a whole traceback to the journal, burying
the line that says what to do.  Now one line, said again only when its words change."""

from __future__ import annotations

import logging

from kiosk.audit import AuditLog
from kiosk.retention import RecordingRetention
from test_damaged_hold_retention_qa52 import SHORT
from test_disk_full import disk_full
from test_retention import NOW, Disk, recording


class Passes:
    """The retention thread's stop event, stopping it after ``n`` passes instead of a minute's wait."""

    def __init__(self, n: int) -> None:
        self.left = n

    def wait(self, _seconds: float) -> bool:
        self.left -= 1
        return self.left <= 0


def test_a_full_disk_is_one_journal_line_not_a_traceback_every_pass(tmp_path, caplog):
    root = tmp_path / "recordings" / "t1"
    old = recording(root, 40, 8)
    log = AuditLog.in_dir(tmp_path, "t1")
    retention = RecordingRetention(root, SHORT, log, free_bytes=Disk(root, capacity=2_500), clock=lambda: NOW)
    retention.stop_event = Passes(4)
    caplog.set_level(logging.INFO, logger="kiosk.retention")
    with disk_full():
        retention.run()
    failed = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(failed) == 1 and failed[0].exc_info is None, [r.getMessage() for r in failed]
    assert failed[0].getMessage().startswith("recording retention check failed: ")
    assert not old.exists()              # deleting frees room: it went on
    # Room again: the next pass says so, and its records are written.
    retention.stop_event = Passes(1)
    retention.run()
    assert "recording retention check works again" in caplog.messages
