"""A settlement corrected after it was paid: what was paid at the table stays visible beside
the result as corrected, and the dealer is told the difference to pay or collect (QA48
dispute H1); a card only confirmed is no correction (M5)."""

from __future__ import annotations

import io
import json
import zipfile

from kiosk.audit import AuditType
from kiosk.evidence import write_evidence
from kiosk.report import period_report
from kiosk.rounds import load_round
from kiosk_testing import hand, login

BANKER_BULL_8 = "4S 6H QD 9C 9H"       # bull Q-6-4, points 9+9 -> 8
NIU_NIU = "KS QS JS 10S 10H"
BULL_5 = "AS 2S 3D 4D 5C"              # bull A-4-5, points 2+3 -> 5


def seat(state, name):
    return next(s for s in state["seats"] if s["name"] == name)


def settled_round(dealer, service):
    """Round 1: seat 1 (100 double) Niu Niu wins +285.00 paid; seat 2 (50 equal) Bull 5 loses -50.00."""
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "100", "kind": "double"})
    dealer.post("/dealer/api/bet", {"seat": "2", "amount": "50", "kind": "equal"})
    service.observe([hand("banker", BANKER_BULL_8), hand("1", NIU_NIU), hand("2", BULL_5)], 1)
    dealer.post("/dealer/api/settle")


def correct(dealer, seat_name, old, new, reason):
    return dealer.post("/dealer/api/correct", {"seat": seat_name, "old": old, "new": new, "reason": reason,
                                               "pin": "4321", "round": 1})


def two_corrections(dealer, service):
    settled_round(dealer, service)
    paid = {line.seat: str(line.net) for line in service.machine.settlement.lines}
    assert paid == {"1": "285.00", "2": "-50.00"}
    # seat 2: A 2 3 9 5, Niu Niu: -50.00 -> +47.50 (commission 2.50), the house owes seat 2 97.50
    first = correct(dealer, "2", "4D", "9D", "9 read as 4")
    # seat 1: K Q J 10 9, Bull 9 (x2 on a double bet): +285.00 -> +190.00, seat 1 owes the house 95.00
    second = correct(dealer, "1", "10H", "9S", "seat 1 disputes: last card a nine")
    return first, second


def test_the_round_keeps_what_was_paid_at_the_table_and_each_correction(dealer, service, audit):
    two_corrections(dealer, service)
    summary = load_round(audit, 1, table_id=service.config.table_id)
    assert {s: line["net"] for s, line in summary["paid_lines"].items()} == {"1": "285.00", "2": "-50.00"}
    assert {s: line["outcome"] for s, line in summary["paid_lines"].items()} == {"1": "win", "2": "lose"}
    assert {s: line["net"] for s, line in summary["lines"].items()} == {"1": "190.00", "2": "47.50"}
    commission = summary["paid_settlement"]["total_commission"], summary["settlement"]["total_commission"]
    assert commission == ("15.00", "12.50")
    assert summary["paid_difference"] == {"1": "-95.00", "2": "97.50"}
    first, second = summary["settlement_corrections"]
    assert first["reason"] == "9 read as 4" and first["approved_by"] == "super1"
    assert first["seats"]["2"] == {"old_outcome": "lose", "old_net": "-50.00", "new_outcome": "win",
                                   "new_net": "47.50", "difference": "97.50"}
    assert first["seats"]["1"]["difference"] == "0.00"
    assert second["reason"] == "seat 1 disputes: last card a nine" and second["requested_by"] == "dealer1"
    assert second["seats"]["1"]["old_net"] == "285.00" and second["seats"]["1"]["new_net"] == "190.00"
    assert second["seats"]["2"]["difference"] == "0.00"


def test_an_uncorrected_round_was_paid_as_it_stands(dealer, service, audit):
    settled_round(dealer, service)
    summary = load_round(audit, 1, table_id=service.config.table_id)
    assert summary["paid_lines"] == summary["lines"] and summary["paid_settlement"] == summary["settlement"]
    assert summary["paid_difference"] == {} and not summary["corrected"]


def test_the_round_page_shows_paid_and_corrected_and_who_owes_whom(dealer, service, client):
    two_corrections(dealer, service)
    login(client, "watch1")
    page = client.get("/review/round/1").get_data(as_text=True)
    assert "Paid at the table" in page and "As corrected" in page
    assert "the house owes seat 2 97.50" in page
    assert "seat 1 owes the house 95.00" in page
    assert "WIN +285.00" in page and "LOSE -50.00" in page and "WIN +190.00" in page
    assert "9 read as 4" in page and "seat 1 disputes: last card a nine" in page
    assert "approved by super1" in page
    assert "house net as paid at the table" in page


def test_the_dealer_is_told_the_difference_to_pay_or_collect(dealer, service, audit):
    settled_round(dealer, service)
    body = correct(dealer, "2", "4D", "9D", "9 read as 4")
    assert body["result"]["adjust"] == [{"seat": "2", "action": "pay", "amount": "97.50"}]
    two = seat(body["state"], "2")["line"]
    # the line as corrected is still there (net +47.50), and what to do now is the difference
    assert two["net"] == "47.50" and two["correction"]["action"] == "pay"
    assert two["correction"]["amount"] == "97.50"
    assert (two["correction"]["paid_outcome"], two["correction"]["paid_net"]) == ("lose", "-50.00")
    assert seat(body["state"], "1")["line"]["correction"]["action"] == "none"

    body = correct(dealer, "1", "10H", "9S", "last card a nine")
    # what the round now owes, not what this correction changed: seat 2's 97.50 has not been
    # paid yet (QA49 supervisor H1: it showed NO CHANGE, "paid WIN +47.50", and one tap on
    # the dialog would have recorded it paid)
    assert body["result"]["adjust"] == [{"seat": "1", "action": "collect", "amount": "95.00"},
                                        {"seat": "2", "action": "pay", "amount": "97.50"}]
    one = seat(body["state"], "1")["line"]["correction"]
    assert (one["action"], one["amount"], one["paid_net"], one["net"]) == ("collect", "95.00", "285.00", "190.00")
    two = seat(body["state"], "2")["line"]["correction"]
    assert (two["action"], two["amount"], two["paid_outcome"], two["paid_net"], two["net"]) == (
        "pay", "97.50", "lose", "-50.00", "47.50")

    # corrected back before anything was paid: nothing is owed (it said PAY 195.00)
    body = correct(dealer, "1", "9S", "10H", "the first reading was right")
    assert body["result"]["adjust"] == [{"seat": "2", "action": "pay", "amount": "97.50"}]
    one = seat(body["state"], "1")["line"]["correction"]
    assert (one["action"], one["paid_outcome"], one["paid_net"], one["net"]) == ("none", "win", "285.00", "285.00")
    # the screen's view is the screen's: the log's records are as they were written
    for record in audit.records(types=(AuditType.SETTLEMENT_CORRECTED,)):
        assert all("correction" not in line for line in record.data["new_lines"])
        assert all("correction" not in line for line in record.data["old_lines"])


def test_the_history_dialog_has_paid_and_corrected(dealer, service):
    settled_round(dealer, service)
    service.observe([], 2)   # the table cleared: round 1 is history
    correct(dealer, "2", "4D", "9D", "9 read as 4")
    item = dealer.state()["history"][0]
    assert item["round"] == 1 and item["lines"]["2"]["net"] == "47.50"
    assert item["paid_lines"]["2"]["net"] == "-50.00"


def test_the_evidence_round_json_holds_paid_and_corrected_lines(dealer, service, audit):
    two_corrections(dealer, service)
    out = io.BytesIO()
    write_evidence(out, audit, table_id=service.config.table_id, round_no=1, recording=None, exported_by="watch1")
    with zipfile.ZipFile(io.BytesIO(out.getvalue())) as z:
        summary = json.loads(z.read("round.json"))
    assert summary["paid_lines"]["1"]["net"] == "285.00" and summary["lines"]["1"]["net"] == "190.00"
    assert summary["paid_difference"] == {"1": "-95.00", "2": "97.50"}
    assert [c["reason"] for c in summary["settlement_corrections"]] == ["9 read as 4",
                                                                      "seat 1 disputes: last card a nine"]


# ------------------------------------------------------------------ M5: a confirmation is no correction


def confirmed_round(dealer, service, *, change=False):
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "10", "kind": "equal"})
    service.observe([hand("banker", BANKER_BULL_8), hand("1", NIU_NIU)], 1)
    dealer.post("/dealer/api/correct", {"seat": "1", "old": "KS", "new": "KS", "reason": "confirmed"})
    if change:
        dealer.post("/dealer/api/correct", {"seat": "1", "old": "10H", "new": "10D", "reason": "misread"})
    dealer.post("/dealer/api/settle")
    service.observe([], 2)


def test_a_confirmed_card_does_not_make_the_round_corrected(dealer, service, audit, client):
    confirmed_round(dealer, service)
    record = next(r for r in audit.records() if r.type == AuditType.CARD_CORRECTED)
    assert record.data["action"] == "confirmed"
    summary = load_round(audit, 1, table_id=service.config.table_id)
    assert summary["corrected"] is False and summary["confirmed"] == 1
    assert dealer.state()["history"][0]["corrected"] is False
    assert period_report(audit)[service.config.table_id].card_corrections == 0
    login(client, "watch1")
    assert "#1" not in client.get("/review/?corrected=1").get_data(as_text=True)
    page = client.get("/review/round/1").get_data(as_text=True)
    assert 'class="tag corrected"' not in page and "KS confirmed" in page


def test_a_real_change_still_counts_beside_a_confirmation(dealer, service, audit):
    confirmed_round(dealer, service, change=True)
    summary = load_round(audit, 1, table_id=service.config.table_id)
    assert summary["corrected"] is True and summary["confirmed"] == 1
    assert period_report(audit)[service.config.table_id].card_corrections == 1
