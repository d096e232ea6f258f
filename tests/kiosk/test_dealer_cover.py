"""A player-banker who cannot cover, on the dealer's screen: the banker's stack is entered
before the deal, and a win it cannot pay in full shows what it paid and what it owed.

Amounts are checked against :func:`scoring.settle.settle_round` itself."""

from __future__ import annotations

from decimal import Decimal

import pytest

from kiosk.audit import AuditType
from kiosk_testing import HOUSE_STACK, hand, login, make_table
from scoring.cards import parse_cards
from scoring.settle import Bet, settle_round

BANKER_BULL_8 = "4S 6H QD 9C 9H"       # Bull 8: x2 at grab-banker
NIU_NIU = "KS QS JS 10S 10H"           # Niu Niu: x3
BULL_5 = "AS 2S 3D 4D 5C"              # Bull 5: loses to the banker




@pytest.fixture
def preset_path():
    return HOUSE_STACK


@pytest.fixture
def table(preset_path):
    return make_table(rules=str(preset_path))


def seat(state, name):
    return next(s for s in state["seats"] if s["name"] == name)


def place(dealer, stack="1000"):
    """Seat 1: 100 at x3 (Niu Niu wins 1,800); seat 2: 50 (Bull 5 loses 200); bid x2."""
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "100", "kind": "standard", "multiple": 3})
    dealer.post("/dealer/api/bet", {"seat": "2", "amount": "50", "kind": "standard"})
    dealer.post("/dealer/api/bid", {"bid": 2})
    if stack is not None:
        return dealer.post("/dealer/api/stack", {"amount": stack})["state"]
    return dealer.state()


def deal(service, round_no=1):
    service.observe([hand("banker", BANKER_BULL_8), hand("1", NIU_NIU), hand("2", BULL_5)], round_no)


def test_a_win_the_stack_cannot_cover_is_paid_as_far_as_it_goes(dealer, service, audit):
    assert place(dealer)["round"]["banker_stack"] == "1000.00"
    deal(service)
    expected = settle_round(service.preset, parse_cards(BANKER_BULL_8), {
        "1": (parse_cards(NIU_NIU), Bet("1", Decimal("100"), "standard", 3)),
        "2": (parse_cards(BULL_5), Bet("2", Decimal("50"), "standard", 1)),
    }, banker_bid=2, banker_stack=Decimal("1000"))
    # 1,800 won; the banker has the 200 seat 2 lost and a stack of 1,000: 1,200 paid, less the 5% fee
    assert expected.line("1").gross == Decimal("1200.00") and expected.line("1").net == Decimal("1140.00")

    state = dealer.post("/dealer/api/settle")["state"]
    one = seat(state, "1")["line"]
    assert (one["net"], one["owed"], one["short"]) == ("1140.00", "1800.00", "600.00")
    assert "short" not in seat(state, "2")["line"] and seat(state, "2")["line"]["net"] == "-200.00"
    assert state["totals"]["banker_net"] == "-1000.00"      # the banker loses the stack, no more
    settled = audit.records(types=[AuditType.ROUND_SETTLED])[0]
    assert settled.data["banker_stack"] == "1000.00"
    line = next(r for r in audit.records(types=[AuditType.SETTLEMENT_LINE]) if r.data["seat"] == "1")
    assert (line.data["owed"], line.data["short"]) == ("1800.00", "600.00")


def test_without_a_stack_entered_before_the_deal_the_round_cannot_be_settled(dealer, service):
    place(dealer, stack=None)
    deal(service)
    state = dealer.state()
    assert not state["round"]["can_settle"] and "banker's stack" in state["round"]["settle_blocker"]
    assert "banker's stack" in dealer.post("/dealer/api/settle", status=409)["error"]
    # and it cannot be chosen now that the cards are seen
    assert "closed" in dealer.post("/dealer/api/stack", {"amount": "5000"}, status=409)["error"]


def test_the_stack_is_for_one_round_and_stands_again_after_a_void(dealer, service):
    place(dealer)
    deal(service)
    state = dealer.post("/dealer/api/void", {"reason": "misdeal", "pin": "4321"})["state"]
    assert state["round"]["banker_stack"] == "1000.00"      # the same chips, for the deal again
    service.observe([], 1)
    deal(service, 2)
    dealer.post("/dealer/api/settle")
    service.observe([], 3)
    assert dealer.state()["round"]["banker_stack"] is None  # counted again before each deal


def test_a_stack_of_nothing_is_a_stack_and_a_win_it_cannot_reach_is_not_a_push(dealer, service):
    state = place(dealer, "0")
    assert state["round"]["banker_stack"] == "0.00"      # entered: not "no stack", the round can be settled
    dealer.post("/dealer/api/bet", {"seat": "3", "amount": "100", "kind": "standard"})
    service.observe([hand("banker", BANKER_BULL_8), hand("1", NIU_NIU), hand("2", BULL_5),
                     hand("3", "KH QH JH 4C 5H")], 1)               # seat 3: Bull 9, a win of 400
    state = dealer.post("/dealer/api/settle")["state"]
    # the 200 seat 2 lost is all there is: seat 1's Niu Niu takes it, seat 3 gets nothing
    assert seat(state, "1")["line"]["action"] == "pay" and seat(state, "1")["line"]["short"] == "1600.00"
    three = seat(state, "3")["line"]
    assert (three["outcome"], three["action"], three["net"], three["short"]) == ("win", "unpaid", "0.00", "400.00")
    assert state["totals"]["banker_net"] == "0.00"


@pytest.mark.parametrize("amount, message", [
    ("lots", "not an amount"), ("-5", "positive"), ("10.001", "more than 2 decimals"),
])
def test_a_wrong_stack_is_refused_and_the_old_one_stays(dealer, amount, message):
    place(dealer)
    error = dealer.post("/dealer/api/stack", {"amount": amount}, status=409)["error"]
    assert "the banker's stack" in error and message in error
    assert dealer.state()["round"]["banker_stack"] == "1000.00"


def test_a_correction_after_settlement_is_paid_against_the_same_stack(dealer, service, audit):
    place(dealer)
    deal(service)
    dealer.post("/dealer/api/settle")
    # seat 2's 4D was a 9D: A 2 3 9 5 is Niu Niu, so the banker now loses to both seats
    state = dealer.post("/dealer/api/correct", {"seat": "2", "old": "4D", "new": "9D", "reason": "9 read as 4",
                                                "pin": "4321"})["state"]
    one, two = seat(state, "1")["line"], seat(state, "2")["line"]
    # 1,800 and 300 owed, 1,000 to pay them with: both Niu Niu, the king beats the nine: seat 1 first
    assert (one["owed"], one["net"]) == ("1800.00", "950.00") and (two["owed"], two["net"]) == ("300.00", "0.00")
    assert audit.last().data["new"]["banker_stack"] == "1000.00"


def test_the_stack_for_the_next_round_survives_a_restart(app_config, table, dealer, service):
    from kiosk.app import create_app

    place(dealer, "750")
    service.stop("restart")
    again = create_app({**app_config, "TABLE": table})
    try:
        client = again.test_client()
        login(client, "dealer1")
        assert client.get("/dealer/api/state").get_json()["state"]["round"]["banker_stack"] == "750.00"
    finally:
        again.extensions["niuniu"].service.stop()
        again.extensions["niuniu"].service.audit.close()


def test_the_screen_offers_the_stack_only_where_it_limits_the_banker(dealer, app, service):
    assert "stack-dialog" in dealer.page() and "data-bank-stack" in dealer.page()


@pytest.mark.parametrize("preset_path", ["grab-banker", "cambodia"])
def test_tables_that_pay_in_full_take_no_stack(dealer, preset_path):
    assert "stack-dialog" not in dealer.page() and "banker_stack" not in dealer.state()["round"]
    assert "pays every win in full" in dealer.post("/dealer/api/stack", {"amount": "500"}, status=409)["error"]


def test_surveillance_sees_the_stack_and_what_each_win_was_short(app, dealer, service):
    place(dealer)
    deal(service)
    dealer.post("/dealer/api/settle")
    watcher = app.test_client()
    login(watcher, "watch1")
    page = watcher.get("/review/round/1").get_data(as_text=True)
    assert "banker's stack 1,000.00" in page
    assert "won 1,800.00; the banker's stack was 600.00 short" in page


def test_the_shift_report_counts_the_wins_the_stack_fell_short_of(app, dealer, service, runner):
    place(dealer)
    deal(service)
    dealer.post("/dealer/api/settle")
    code, out, _ = runner(["audit", "report", "--data-dir", app.config["DATA_DIR"]])
    assert code == 0 and "short wins   1 win(s) the banker's stack could not pay in full, 600.00 not paid" in out
    watcher = app.test_client()
    login(watcher, "super1")
    page = watcher.get("/review/report").get_data(as_text=True)
    assert "1 win(s) the banker's stack could not pay in full, 600.00 not paid" in page


def test_the_demo_dealer_enters_a_stack_so_a_covered_preset_settles(dealer, service, audit):
    import time

    from kiosk.demo import DEMO_BANKER_STACK, DemoDealer

    place(dealer, stack=None)
    demo = DemoDealer(service, pause=0.05, poll=0.02)
    demo.start()
    try:
        deadline = time.monotonic() + 10
        while service.next_stack is None and time.monotonic() < deadline:
            time.sleep(0.02)
        deal(service)
        while not audit.records(types=[AuditType.ROUND_SETTLED]) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        demo.stop_event.set()
        demo.join(5)
    assert demo.errors == []
    [settled] = audit.records(types=[AuditType.ROUND_SETTLED])
    assert settled.data["settlement"]["banker_stack"] == f"{Decimal(DEMO_BANKER_STACK):.2f}"
    # 1,800 won by seat 1 against 200 lost by seat 2 and a stack of 300: paid 500, short 1,300
    line = next(line for line in settled.data["settlement"]["lines"] if line["seat"] == "1")
    assert (line["gross"], line["owed"]) == ("500.00", "1800.00")
