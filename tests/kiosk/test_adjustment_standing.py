"""Where each party's chips stand after a correction, and a reprint's late records (QA49
supervisor L4, L2).

L4: the round page said "paid at the table" of Settle's line and "house net as paid at the
table" of Settle's house net, after the dealer had paid 97.50 more; the dealer's seat box,
which counts what was paid since, said otherwise.  The page now gives, per seat, what was paid
at Settle, what was paid, collected or waived since, where the chips stand now (the seat box's
figure), the line as corrected and what is still owed.

L2: a shift report reprinted after an adjustment was paid listed the payment as if it were
the shift's, and an earlier round owed at the close vanished from the reprint: the signed copy
and the reprint differed with nothing to say why.
"""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta

import pytest

from kiosk.audit import AuditType, log_moment, utc_iso
from kiosk.report import adjustment_lines, period_report
from kiosk.rounds import house_net_of, load_round
from kiosk_testing import hand, login, make_table
from test_adjustments import ADJUST, older_kiosk
from test_paid_and_corrected import correct, seat, settled_round


def officer_page(app, round_no: int = 1) -> str:
    client = app.test_client()          # the officer's own browser, beside the dealer's
    login(client, "watch1")
    return client.get(f"/review/round/{round_no}").get_data(as_text=True)


def text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def row(page: str, party: str) -> str:
    """A party's row of the round page's paid-and-corrected table, as the officer reads it."""
    found = re.search(rf'<tr class="standing" data-party="{party}">(.*?)</tr>', page, re.S)
    assert found, f"no row for {party} in the paid-and-corrected table"
    return text(found.group(1))


def test_the_round_page_says_what_was_paid_since_settle_and_what_is_still_owed(dealer, service, app):
    settled_round(dealer, service)                  # seat 1 WIN +285.00, seat 2 LOSE -50.00 paid at Settle
    correct(dealer, "2", "4D", "9D", "9 read as 4")                   # seat 2 now WIN +47.50: pay 97.50
    basis = correct(dealer, "1", "10H", "9S", "last card a nine")["state"]["round"]["adjustment"]["basis"]
    state = dealer.post(ADJUST, {"round": 1, "basis": basis, "action": "paid", "seats": ["2"]})["state"]

    page = officer_page(app)
    assert row(page, "2") == "Seat 2 LOSE -50.00 paid 97.50 to seat 2 +47.50 WIN +47.50 nothing"
    assert row(page, "1") == "Seat 1 WIN +285.00 nothing +285.00 WIN +190.00 seat 1 owes the house 95.00"
    # the house paid 235.00 at Settle and 97.50 since (it said "as paid at the table -235.00")
    assert "house net as paid at the table -332.50: -235.00 at Settle" in text(page)
    # the page's "at the table now" is the dealer's seat box's "paid"
    assert seat(state, "2")["line"]["correction"]["paid_net"] == "47.50"
    assert seat(state, "1")["line"]["correction"]["paid_net"] == "285.00"

    dealer.post(ADJUST, {"round": 1, "basis": basis, "action": "waived", "seats": ["1"],
                         "reason": "player 1 left the table", "pin": "4321"})
    page = officer_page(app)
    assert row(page, "1") == ("Seat 1 WIN +285.00 not collected 95.00 from seat 1 (waived) +285.00 WIN +190.00 "
                              "nothing")


def test_a_round_an_older_kiosk_corrected_does_not_guess_where_the_chips_stand(dealer, service, audit, app,
                                                                                monkeypatch):
    """Its log cannot say whether the difference was paid: the page must not say it was."""
    settled_round(dealer, service)
    older_kiosk(monkeypatch, audit)
    correct(dealer, "2", "4D", "9D", "9 read as 4")
    page = officer_page(app)
    assert row(page, "2") == ("Seat 2 LOSE -50.00 nothing not known: corrected before adjustments were recorded "
                              "WIN +47.50 nothing")
    assert "house net as paid at Settle -235.00" in text(page) and "house net as paid at the table" not in text(page)


def test_the_history_dialog_is_sent_the_same_standing_as_the_page(dealer, service, app):
    """The dealer's history dialog showed "Paid at the table LOSE -100.00" after 195.00 had been
    paid: the screen is sent each party's standing, in the page's words."""
    settled_round(dealer, service)
    basis = correct(dealer, "2", "4D", "9D", "9 read as 4")["state"]["round"]["adjustment"]["basis"]
    dealer.post(ADJUST, {"round": 1, "basis": basis, "action": "paid"})
    service.observe([], 2)                          # the table cleared: round 1 is history
    item = dealer.state()["history"][0]
    two = next(r for r in item["adjustment"]["standing"] if r["party"] == "2")
    assert (two["settled"], two["since"], two["held"], two["now"], two["owes"]) == (
        "-50.00", "paid 97.50 USD to seat 2", "47.50", "47.50", "nothing")


def classic_settled(dealer, service):
    """A player-banked round: seat 1 (100) Niu Niu wins, seat 2 (50) Bull 5 loses to Bull 8."""
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "100", "kind": "standard"})
    dealer.post("/dealer/api/bet", {"seat": "2", "amount": "50", "kind": "standard"})
    service.observe([hand("banker", "4S 6H QD 9C 9H"), hand("1", "KS QS JS 10S 10H"),
                     hand("2", "AS 2S 3D 4D 5C")], 1)
    dealer.post("/dealer/api/settle")


@pytest.mark.parametrize(("table", "settle"), [(make_table(), settled_round),
                                                (make_table(rules="classic"), classic_settled)])
def test_once_every_side_is_paid_the_table_holds_what_the_books_say(table, settle, dealer, service, audit, app):
    settle(dealer, service)
    basis = correct(dealer, "2", "4D", "9D", "9 read as 4")["state"]["round"]["adjustment"]["basis"]
    dealer.post(ADJUST, {"round": 1, "basis": basis, "action": "paid"})
    summary = load_round(audit, 1, table_id=service.config.table_id)
    assert summary["adjustment"]["status"] == "settled"
    books = house_net_of(summary["settlement"])
    assert f"house net as paid at the table {books}" in text(officer_page(app))
    if summary["adjustment"]["banking"] == "player":     # the banker paid the seat: a party of its own
        assert row(officer_page(app), "banker").startswith("Banker")


def stamped_later(monkeypatch, audit, seconds: float):
    """Adjustment records stamped ``seconds`` from now: paid after the shift closed."""
    real = audit.append

    def append(type, actor, payload=None, **kw):
        if type == AuditType.ADJUSTMENT_SETTLED:
            kw["ts"] = time.time() + seconds
        return real(type, actor, payload, **kw)
    monkeypatch.setattr(audit, "append", append)


def test_a_reprint_marks_an_adjustment_paid_after_the_shift_closed(dealer, service, audit, app, monkeypatch):
    settled_round(dealer, service)
    basis = correct(dealer, "2", "4D", "9D", "9 read as 4")["state"]["round"]["adjustment"]["basis"]
    zone = service.config.time_zone
    closed = (datetime.now(zone) + timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M")
    stamped_later(monkeypatch, audit, 600)          # paid ten minutes later, in the next shift
    dealer.post(ADJUST, {"round": 1, "basis": basis, "action": "paid"})
    [paid] = audit.records(types=(AuditType.ADJUSTMENT_SETTLED,))

    client = app.test_client()
    login(client, "super1")
    page = text(client.get(f"/review/report?from=2000-01-01&to={closed}").get_data(as_text=True))
    assert "recorded after this period closed at " in page
    table = service.config.table_id
    report = period_report(audit, until=utc_iso(log_moment(paid.ts).timestamp() - 60))[table]
    data = report.to_json()
    assert [r["after_period"] for r in data["adjustments"][0]["records"]] == [True]
    assert data["adjustments_moved"]["paid"] == "0.00"          # counted in the shift it was paid in
    lines = adjustment_lines(data, report.shown, "USD", lambda ts: ts)
    assert any(line.startswith("round 1: paid by dealer1") and
               line.endswith(f"(recorded after this period closed at {data['to']})") for line in lines), lines
    # the shift it was paid in lists it as its own
    later = period_report(audit, since=data["to"])[table].to_json()
    assert [r["after_period"] for r in later["adjustments"][0]["records"]] == [False]


def test_a_reprint_still_lists_an_earlier_round_that_was_owed_when_the_shift_closed(dealer, service, audit,
                                                                                    monkeypatch):
    settled_round(dealer, service)
    service.observe([], 2)                          # round 1 ended in the shift before
    basis = correct(dealer, "2", "4D", "9D", "9 read as 4")["state"]["adjustments"][0]["basis"]
    corrected = audit.records(types=(AuditType.SETTLEMENT_CORRECTED,))[-1].ts
    stamped_later(monkeypatch, audit, 600)
    dealer.post(ADJUST, {"round": 1, "basis": basis, "action": "paid"})
    # a shift with nothing of round 1 in it, but its 97.50 owed all through: the signed copy said so
    since = utc_iso(log_moment(corrected).timestamp() + 0.001)
    until = utc_iso(log_moment(corrected).timestamp() + 60)
    [listed] = period_report(audit, since=since, until=until)[service.config.table_id].to_json()["adjustments"]
    assert (listed["round"], listed["earlier"], listed["status"]) == (1, True, "settled")
    assert [(r["action"], r["after_period"]) for r in listed["records"]] == [("paid", True)]
