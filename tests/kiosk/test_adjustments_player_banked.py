"""Adjustments where a player banks (QA49 review H1, supervisor M4): the banker is a player, so
a correction's difference moves money between the seats and the banker's stack, never the
house's float.  The banker's net is a party to the adjustment: the screen says who pays whom,
the round stays outstanding until the banker's side is recorded too, and the shift report
does not count the banker's debt as the house's."""

from __future__ import annotations

from decimal import Decimal

import pytest

from kiosk.audit import AuditType
from kiosk.report import adjustment_lines, period_report
from kiosk.rounds import load_round
from kiosk_testing import hand, login, make_table

ADJUST = "/dealer/api/adjustment"
BANKER_BULL_8 = "4S 6H QD 9C 9H"
BULL_5 = "AS 2S 3D 4D 5C"              # loses to Bull 8; with 9D for 4D, Niu Niu
NIU_NIU = "KS QS JS 10S 10H"


@pytest.fixture
def table(request):
    return make_table(rules=getattr(request, "param", "classic"))


def settle(dealer, service):
    """Seat 1 (100) Niu Niu wins; seat 2 (50) Bull 5 loses to the banker's Bull 8."""
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "100", "kind": "standard"})
    dealer.post("/dealer/api/bet", {"seat": "2", "amount": "50", "kind": "standard"})
    service.observe([hand("banker", BANKER_BULL_8), hand("1", NIU_NIU), hand("2", BULL_5)], 1)
    dealer.post("/dealer/api/settle")
    return service.machine.settlement


def correct(dealer, seat, old, new, reason="misread"):
    return dealer.post("/dealer/api/correct", {"seat": seat, "old": old, "new": new, "reason": reason,
                                               "pin": "4321", "round": 1})


def owed(view):
    return {o["seat"]: o["difference"] for o in view["outstanding"]}


@pytest.mark.parametrize("table", ["classic", "grab-banker", "haodan"], indirect=True)
def test_the_banker_pays_the_seat_and_the_round_stays_open_until_both_sides_move(table, dealer, service, audit):
    paid = settle(dealer, service)
    seat_2 = next(line for line in paid.lines if line.seat == "2")
    assert seat_2.net < 0
    body = correct(dealer, "2", "4D", "9D")          # seat 2 now holds Niu Niu and wins
    summary = load_round(audit, 1, table_id=service.config.table_id)
    assert summary["lines"]["2"]["outcome"] == "win"
    difference = summary["paid_difference"]["2"]
    banker_moved = Decimal(summary["settlement"]["banker_net"]) - paid.banker_net
    view = body["state"]["round"]["adjustment"]
    # both sides: seat 2 is paid its difference, the banker pays its own (the commission too, where
    # the preset takes one: the house keeps it)
    assert owed(view) == {"2": difference, "banker": str(banker_moved)}
    said = f"Banker pays {difference} USD to Seat 2"
    if banker_moved != -Decimal(difference):
        said += f" · Banker pays {-banker_moved} USD in all"
    assert view["text"] == said
    assert body["result"]["adjust_text"] == view["text"]
    assert [o["text"] for o in view["outstanding"]] == [f"Seat 2 is paid {difference} USD",
                                                        f"Banker pays {-banker_moved} USD"]
    banker = next(s for s in body["state"]["seats"] if s["name"] == "banker")
    assert (banker["correction"]["action"], banker["correction"]["amount"]) == ("collect", str(-banker_moved))

    # the seat was paid (from the float, the banker not yet asked): the banker's side is still owed
    state = dealer.post(ADJUST, {"round": 1, "basis": view["basis"], "action": "paid", "seats": ["2"]})["state"]
    assert state["round"]["adjustment"]["status"] == "outstanding"
    assert owed(state["adjustments"][0]) == {"banker": str(banker_moved)}
    assert state["adjustments"][0]["text"] == f"Banker pays {-banker_moved} USD"
    state = dealer.post(ADJUST, {"round": 1, "basis": view["basis"], "action": "paid"})["state"]
    assert state["adjustments"] == [] and state["round"]["adjustment"]["status"] == "settled"
    records = [r.data["difference"] for r in audit.records(types=(AuditType.ADJUSTMENT_SETTLED,))]
    assert records == [{"2": difference}, {"banker": str(banker_moved)}]


def test_a_waiver_says_the_banker_does_not_pay_and_forgives_both_sides(dealer, service, audit):
    settle(dealer, service)
    view = correct(dealer, "2", "4D", "9D")["state"]["round"]["adjustment"]
    assert view["waive_text"] == "Banker does not pay 250.00 USD to Seat 2"
    body = dealer.post(ADJUST, {"round": 1, "basis": view["basis"], "seats": ["banker", "7"]}, status=409)
    assert "seat 7 has no adjustment outstanding (owed: seat 2, the banker)" in body["error"]
    dealer.post(ADJUST, {"round": 1, "basis": view["basis"], "action": "waived", "reason": "banker left",
                         "pin": "4321"})
    adjustment = load_round(audit, 1, table_id=service.config.table_id)["adjustment"]
    assert adjustment["status"] == "settled" and adjustment["outstanding"] == {}
    # corrected back: nothing moved, nothing is owed either way
    state = correct(dealer, "2", "9D", "4D", "the four was right")["state"]
    assert state["adjustments"] == [] and state["round"]["adjustment"]["status"] == "settled"


def test_a_seat_that_owes_pays_the_banker(dealer, service):
    settle(dealer, service)
    # seat 1's Niu Niu was Bull 9 (10H a 9S): it won 300.00 at Settle (x3), wins 200.00 now (x2)
    view = correct(dealer, "1", "10H", "9S")["state"]["round"]["adjustment"]
    assert owed(view) == {"1": "-100.00", "banker": "100.00"}
    assert view["text"] == "Seat 1 pays 100.00 USD to the banker"
    assert [o["text"] for o in view["outstanding"]] == ["Seat 1 pays 100.00 USD", "Banker is paid 100.00 USD"]


def test_the_report_does_not_count_the_bankers_debt_as_the_houses(dealer, service, audit, client):
    settle(dealer, service)
    correct(dealer, "2", "4D", "9D")
    report = period_report(audit)[service.config.table_id]
    data = report.to_json()
    assert data["house_result"] == "0.00"
    owed_now = data["adjustments_owed"]
    assert (owed_now["pay"], owed_now["collect"]) == ("0.00", "0.00")     # the house owes no one
    assert (owed_now["banker_pays"], owed_now["banker_is_paid"]) == ("250.00", "0.00")
    lines = adjustment_lines(data, report.shown, "USD", lambda ts: ts)
    assert "(the banker, a player, pays 250.00 USD)" in lines[0]
    assert "the banker pays 250.00 USD to seat 2" in "\n".join(lines)
    assert "to pay 250.00" not in "\n".join(lines)
    login(client, "super1")
    page = " ".join(client.get("/review/report?from=2000-01-01").get_data(as_text=True).split())
    assert "the banker pays 250.00 to seat 2" in page and "to pay 250.00" not in page
    assert "(the banker, a player, pays 250.00 USD)" in page


def test_a_screen_is_told_who_recorded_the_side_it_asks_for(dealer, service):
    """QA49 supervisor L1: the second screen was told only "no adjustment outstanding"."""
    settle(dealer, service)
    basis = correct(dealer, "2", "4D", "9D")["state"]["round"]["adjustment"]["basis"]
    dealer.post(ADJUST, {"round": 1, "basis": basis, "action": "paid", "seats": ["2"]})
    body = dealer.post(ADJUST, {"round": 1, "basis": basis, "action": "paid", "seats": ["2", "banker"]}, status=409)
    assert "seat 2 has no adjustment outstanding (owed: the banker; seat 2 paid by dealer1)" in body["error"]
