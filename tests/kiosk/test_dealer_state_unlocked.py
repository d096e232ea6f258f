"""The dealer's screen state is the one last published, never built under the table's lock: a
settle waiting on a slow disk write (an SD card stalling) holds that lock, and the screen asking
for its state hung with it (QA48 concurrency L1)."""

from __future__ import annotations

import threading
import time

from kiosk_testing import hand
from test_paid_and_corrected import BANKER_BULL_8, BULL_5, NIU_NIU


def test_a_slow_audit_write_does_not_hold_up_the_screen_state(dealer, service, audit, monkeypatch):
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "100", "kind": "double"})
    service.observe([hand("banker", BANKER_BULL_8), hand("1", NIU_NIU)], 1)
    before = dealer.state()
    writing, disk_back = threading.Event(), threading.Event()
    real = audit.append_many

    def stalled(entries):
        writing.set()
        disk_back.wait(5)           # the disk answers after 5 s, or when the test lets it
        return real(entries)
    monkeypatch.setattr(audit, "append_many", stalled)
    settling = threading.Thread(target=service.settle, args=("dealer1",))
    settling.start()
    try:
        assert writing.wait(5), "the settle never reached the audit log"
        start = time.monotonic()
        during = dealer.state()
        took = time.monotonic() - start
    finally:
        disk_back.set()
        settling.join(10)
    assert took < 2.5, f"the screen's state waited {took:.1f} s for the disk"
    # what the screen gets meanwhile is the table as published: the settle is not on record yet
    assert during["round"]["state"] == "complete" and during["version"] == before["version"]
    after = dealer.state()
    assert after["round"]["state"] == "settled" and after["version"] > before["version"]


def test_the_published_state_is_what_settle_checks(dealer, service):
    """The basis a screen sends back with Settle comes from the published state: it must be the
    one the table checks, or every Settle would be refused as stale (or none would)."""
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "100", "kind": "double"})
    dealer.post("/dealer/api/bet", {"seat": "2", "amount": "50", "kind": "equal"})
    service.observe([hand("banker", BANKER_BULL_8), hand("1", NIU_NIU), hand("2", BULL_5)], 1)
    shown = dealer.state()
    assert shown["round"]["basis"] == service.settle_basis()
    # a card corrected on another screen: the published state follows, and an old basis is refused
    dealer.post("/dealer/api/correct", {"seat": "2", "old": "4D", "new": "9D", "reason": "misread", "round": 1})
    assert dealer.state()["round"]["basis"] == service.settle_basis() != shown["round"]["basis"]
    dealer.post("/dealer/api/settle", {"round": 1, "basis": shown["round"]["basis"]}, status=409)
    body = dealer.post("/dealer/api/settle", {"round": 1, "basis": dealer.state()["round"]["basis"]})
    assert body["state"]["round"]["state"] == "settled"
