"""The chain page's check (kiosk.chain): a full walk now and then, the new records at every view."""

from __future__ import annotations

import sqlite3

from kiosk.audit import _TRIGGERS, AuditLog, AuditType
from kiosk.chain import ChainCheck


class Clock:
    def __init__(self):
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def filled(tmp_path, n=20) -> AuditLog:
    log = AuditLog.in_dir(tmp_path)
    for i in range(n):
        log.append(AuditType.LOGIN, f"user{i}")
    return log


def edit_record(log: AuditLog, seq: int, *, restore_guards: bool) -> None:
    """What someone with the database file could do: drop the guards, edit, put them back."""
    conn = sqlite3.connect(log.path)
    conn.execute("DROP TRIGGER audit_no_update")
    conn.execute("UPDATE audit SET actor = 'ghost' WHERE seq = ?", (seq,))
    if restore_guards:
        conn.execute(_TRIGGERS["audit_no_update"])
    conn.commit()
    conn.close()


def test_each_view_walks_only_the_new_records_until_the_hourly_full_walk(tmp_path):
    log, clock = filled(tmp_path), Clock()
    check = ChainCheck(log, clock=clock)
    first = check.status()                       # a small log's first full walk is waited for
    assert first.ok and first.full.count == 20 and first.since.count == 0 and first.full_at == clock.now
    for _ in range(5):
        log.append(AuditType.LOGOUT, "user1")
    clock.now += 600
    later = check.status()
    assert later.ok and later.full.count == 20 and later.since.count == 5 and later.full_at == first.full_at

    # An edit with the guards put back is caught by the next full walk, not by the quick one.
    edit_record(log, 3, restore_guards=True)
    assert check.status().ok
    clock.now += 3601
    check.status()                               # starts the full walk in the background
    check._thread.join(5)
    caught = check.status()
    assert not caught.ok and caught.first_bad_seq == 3 and caught.full_at == clock.now


def test_missing_guards_start_a_full_walk_at_once(tmp_path):
    log, clock = filled(tmp_path), Clock()
    check = ChainCheck(log, clock=clock)
    assert check.status().ok
    edit_record(log, 7, restore_guards=False)
    status = check.status()
    assert not status.guards_present and status.first_bad_seq == 7


def test_a_break_among_the_new_records_shows_at_the_next_view(tmp_path):
    log, clock = filled(tmp_path), Clock()
    check = ChainCheck(log, clock=clock)
    assert check.status().ok
    log.append(AuditType.LOGOUT, "user1")
    edit_record(log, 21, restore_guards=True)
    status = check.status()
    assert not status.ok and status.since.first_bad_seq == 21 and status.full.ok
