"""Grab-the-banker on the dealer's screen: the bank bid, each seat's bet multiple, the money.

The amounts are checked against :func:`scoring.settle.settle_round` itself, so the screen
can only agree with the scoring code, never with a second copy of the arithmetic.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from kiosk.audit import AuditType
from kiosk_testing import hand, login, make_table
from scoring.cards import parse_cards
from scoring.settle import Bet, settle_round

BANKER_BULL_8 = "4S 6H QD 9C 9H"       # Bull 8: x2 at grab-banker
NIU_NIU = "KS QS JS 10S 10H"           # Niu Niu: x3 at grab-banker
BULL_5 = "AS 2S 3D 4D 5C"              # Bull 5: x1


@pytest.fixture
def table(request):
    """A grab-banker table unless a test asks for another preset (indirect parametrize)."""
    return make_table(rules=getattr(request, "param", "grab-banker"))


def seat(state, name):
    return next(s for s in state["seats"] if s["name"] == name)


def bet(dealer, seat_name, amount, multiple=None, kind="standard", status=200):
    body = {"seat": seat_name, "amount": amount, "kind": kind}
    if multiple is not None:
        body["multiple"] = multiple
    return dealer.post("/dealer/api/bet", body, status)


def bid(dealer, value, status=200):
    return dealer.post("/dealer/api/bid", {"bid": value}, status)


def deal(service, **players):
    hands = [hand("banker", BANKER_BULL_8)] + [hand(s.removeprefix("s"), t) for s, t in players.items()]
    return service.observe(hands, 1)


def grab_round(dealer, service):
    """Seat 1: 100 at x3 with Niu Niu (wins); seat 2: 50 at x1 with Bull 5 (loses); bid x2."""
    bet(dealer, "1", "100", 3)
    bet(dealer, "2", "50")
    bid(dealer, 2)
    deal(service, s1=NIU_NIU, s2=BULL_5)


def test_a_win_pays_stake_times_hand_bid_and_multiple_less_the_fee(dealer, service):
    grab_round(dealer, service)
    expected = settle_round("grab-banker", parse_cards(BANKER_BULL_8), {
        "1": (parse_cards(NIU_NIU), Bet("1", Decimal("100"), "standard", 3)),
        "2": (parse_cards(BULL_5), Bet("2", Decimal("50"), "standard", 1)),
    }, banker_bid=2)
    win = expected.line("1")
    assert win.net == Decimal("100") * 3 * 2 * 3 * (1 - Decimal("0.05")) == Decimal("1710.00")

    preview = seat(dealer.state(), "1")["line"]
    assert preview["net"] == "1710.00" and not seat(dealer.state(), "1")["line_final"]
    state = dealer.post("/dealer/api/settle")["state"]
    one, two = seat(state, "1"), seat(state, "2")
    assert one["line_final"] and one["line"]["action"] == "pay"
    assert Decimal(one["line"]["net"]) == win.net and Decimal(one["line"]["commission"]) == win.commission
    assert (one["line"]["banker_bid"], one["line"]["bet_multiple"], one["line"]["hand_multiplier"]) == (2, 3, 3)
    assert one["line"]["multiplier"] == 18
    assert Decimal(two["line"]["net"]) == expected.line("2").net == Decimal("-200")  # 50 x2 (Bull 8) x2 x1
    assert state["totals"]["banker_net"] == f"{expected.banker_net:.2f}"
    assert state["totals"]["commission"] == f"{expected.total_commission:.2f}"
    assert service.machine.settlement.banker_bid == 2


def test_the_screen_shows_the_bid_and_each_seats_multiple(dealer):
    page = dealer.page()
    assert 'id="bet-multiples"' in page and 'id="bid-dialog"' in page and "data-bank-bid=" in page
    assert all(f'data-multiple="{m}"' in page for m in (1, 2, 3, 4, 5))
    assert all(f'data-bid="{b}"' in page for b in (1, 2, 3, 4))
    state = dealer.state()
    assert state["table"]["bids"] == [1, 2, 3, 4] and state["table"]["bet_multiples"] == [1, 2, 3, 4, 5]
    assert state["round"]["banker_bid"] == 1  # nothing entered yet: the lowest bid
    bet(dealer, "1", "100", "x4")
    bet(dealer, "2", "20")
    state = bid(dealer, "3")["state"]
    assert seat(state, "1")["bet"] == {"amount": "100.00", "kind": "standard", "multiple": 4}
    assert seat(state, "2")["bet"] == {"amount": "20.00", "kind": "standard", "multiple": 1}
    assert state["round"]["banker_bid"] == 3


@pytest.mark.parametrize("multiple", ["7", "0", "abc", "2.5", "-1"])
def test_a_wrong_multiple_is_refused_and_the_stakes_stay(dealer, audit, multiple):
    bet(dealer, "1", "100", 3)
    bet(dealer, "2", "50", 2)
    logged = audit.last().seq
    error = bet(dealer, "2", "80", multiple, status=409)["error"]
    assert "seat 2" in error and "choose 1, 2, 3, 4 or 5" in error
    assert bet(dealer, "3", "10", multiple, status=409)["error"].startswith("seat 3")
    state = dealer.state()
    assert seat(state, "1")["bet"] == {"amount": "100.00", "kind": "standard", "multiple": 3}
    assert seat(state, "2")["bet"] == {"amount": "50.00", "kind": "standard", "multiple": 2}
    assert seat(state, "3")["bet"] is None
    assert audit.last().seq == logged  # nothing refused reaches the log


def test_a_wrong_or_late_bid_is_refused_with_the_allowed_bids(dealer, service):
    bet(dealer, "1", "100", 3)
    bid(dealer, 2)
    for wrong in (5, 0, "abc", ""):
        assert "choose 1, 2, 3 or 4" in bid(dealer, wrong, status=409)["error"]
    state = dealer.state()
    assert state["round"]["banker_bid"] == 2 and seat(state, "1")["bet"]["multiple"] == 3
    deal(service, s1=NIU_NIU)
    assert "bids are closed" in bid(dealer, 3, status=409)["error"]
    assert "bets are closed" in bet(dealer, "1", "100", 5, status=409)["error"]
    assert dealer.state()["round"]["banker_bid"] == 2


def test_the_bid_is_for_one_round(dealer, service):
    grab_round(dealer, service)
    dealer.post("/dealer/api/settle")
    state = dealer.post("/dealer/api/clear")["state"]
    assert state["round"]["bets_open"] and state["round"]["banker_bid"] == 1
    assert state["history"][0]["banker_bid"] == 2


def test_the_audit_log_records_the_bid_and_multiples(dealer, service, audit):
    grab_round(dealer, service)
    placed = [r for r in audit.records() if r.type == AuditType.BETS_PLACED]
    assert placed[0].data["change"] == {"seat": "1", "amount": "100.00", "kind": "standard", "multiple": 3}
    assert placed[-1].data["change"] == {"banker_bid": 2} and placed[-1].actor == "dealer1"
    assert placed[-1].data["banker_bid"] == 2 and placed[-1].data["bets"]["1"]["multiple"] == 3
    start = next(r for r in audit.records() if r.type == AuditType.ROUND_START)
    assert start.data["banker_bid"] == 2 and start.data["bets"]["2"]["multiple"] == 1

    dealer.post("/dealer/api/settle")
    settled = next(r for r in audit.records(round_no=1) if r.type == AuditType.ROUND_SETTLED)
    assert settled.data["banker_bid"] == 2 and settled.data["settlement"]["banker_bid"] == 2
    assert settled.data["bets"]["1"] == {"amount": "100.00", "kind": "standard", "multiple": 3}
    lines = {r.data["seat"]: r.data for r in audit.records(round_no=1) if r.type == AuditType.SETTLEMENT_LINE}
    assert lines["1"]["banker_bid"] == 2 and lines["1"]["bet_multiple"] == 3
    assert lines["1"]["bet"]["multiple"] == 3 and lines["1"]["net"] == "1710.00"
    assert audit.verify().ok


def test_a_correction_after_settlement_keeps_the_bid_and_multiples(dealer, service, audit):
    grab_round(dealer, service)
    dealer.post("/dealer/api/settle")
    state = dealer.post("/dealer/api/correct", {"seat": "2", "old": "4D", "new": "9D", "reason": "9 read as 4",
                                                "pin": "4321"})["state"]
    two = seat(state, "2")  # A 2 3 9 5 is Niu Niu: 50 x3 x2 x1 = 300, less 15 fee
    assert two["line"]["net"] == "285.00" and two["line"]["banker_bid"] == 2
    assert seat(state, "1")["line"]["net"] == "1710.00"
    resettled = audit.last()
    assert resettled.type == AuditType.SETTLEMENT_CORRECTED and resettled.data["new"]["banker_bid"] == 2


def test_surveillance_sees_the_bid_and_multiples(app, dealer, service):
    grab_round(dealer, service)
    dealer.post("/dealer/api/settle")
    watcher = app.test_client()
    login(watcher, "watch1")
    page = watcher.get("/review/round/1").get_data(as_text=True)
    assert "100.00 standard ×3" in page and "bank bid ×2" in page


@pytest.mark.parametrize("table", ["cambodia"], indirect=True)
def test_other_presets_take_no_bids_or_multiples(dealer, service, audit):
    page = dealer.page()
    assert "bet-multiples" not in page and "bid-dialog" not in page and "data-bank-bid" not in page
    assert "banker's bid" not in page
    error = bet(dealer, "1", "100", 3, kind="double", status=409)["error"]
    assert "seat 1" in error and "no bet multiples" in error
    assert "takes no bank bids" in bid(dealer, 2, status=409)["error"]
    bet(dealer, "1", "100", kind="double")
    state = bet(dealer, "2", "50", 1, kind="equal")["state"]
    assert seat(state, "1")["bet"] == {"amount": "100.00", "kind": "double"}
    assert seat(state, "2")["bet"] == {"amount": "50.00", "kind": "equal"}
    assert "banker_bid" not in state["round"] and "bids" not in state["table"]
    assert audit.last().data["bets"]["1"] == {"amount": "100.00", "kind": "double"}
    assert "banker_bid" not in audit.last().data
    deal(service, s1=NIU_NIU, s2=BULL_5)
    line = seat(dealer.post("/dealer/api/settle")["state"], "1")["line"]
    assert line["net"] == "285.00" and "banker_bid" not in line and line["bet"] == {"amount": "100.00",
                                                                                  "kind": "double"}


def _restart(app_config, table):
    """The same data directory opened by a new kiosk process (what a restart is)."""
    from kiosk.app import create_app

    app = create_app({**app_config, "TABLE": table})
    client = app.test_client()
    login(client, "dealer1")
    return app, client


def _last_bets_record(app):
    audit = app.extensions["niuniu"].service.audit
    return audit.records(types=[AuditType.BETS_PLACED], newest_first=True, limit=1)[0]


def _stop(app):
    service = app.extensions["niuniu"].service
    service.stop()
    service.audit.close()


def test_stakes_and_bid_for_the_next_round_survive_a_restart(app_config, table, dealer, service):
    bet(dealer, "1", "100", 3)
    bet(dealer, "2", "50")
    bid(dealer, 2)
    service.stop("restart")
    again, client = _restart(app_config, table)
    try:
        state = client.get("/dealer/api/state").get_json()["state"]
        assert seat(state, "1")["bet"] == {"amount": "100.00", "kind": "standard", "multiple": 3}
        assert seat(state, "2")["bet"] == {"amount": "50.00", "kind": "standard", "multiple": 1}
        assert state["round"]["banker_bid"] == 2
        restored = _last_bets_record(again)
        assert restored.actor == "system" and restored.data["change"]["restored"] is True
        # and they are really the round's stakes: the restored table settles with them
        svc = again.extensions["niuniu"].service
        deal(svc, s1=NIU_NIU, s2=BULL_5)
        lines = {line.seat: line for line in svc.settle("dealer1").lines}
        assert lines["1"].multiplier == 3 * 2 * 3  # hand x3 (Niu Niu), bid x2, seat multiple x3
    finally:
        _stop(again)


def test_stakes_the_new_rules_do_not_allow_are_dropped_with_a_reason(app_config, dealer, service):
    bet(dealer, "1", "100", 4)
    service.stop("rules change")
    again, client = _restart(app_config, make_table(rules="cambodia"))
    try:
        state = client.get("/dealer/api/state").get_json()["state"]
        assert seat(state, "1")["bet"] is None
        dropped = _last_bets_record(again).data["change"]
        assert dropped["restored"] is False and "seat 1" in dropped["reason"]
        assert "bet multiple 4 is not allowed at cambodia" in dropped["reason"]
    finally:
        _stop(again)


def test_same_bets_keeps_each_seats_multiple_but_not_the_bank_bid(dealer, service):
    grab_round(dealer, service)
    dealer.post("/dealer/api/settle")
    service.observe([], 2)
    state = dealer.post("/dealer/api/repeat-bets")["state"]
    assert seat(state, "1")["bet"] == {"amount": "100.00", "kind": "standard", "multiple": 3}
    assert seat(state, "2")["bet"] == {"amount": "50.00", "kind": "standard", "multiple": 1}
    assert state["round"]["banker_bid"] == 1      # the bank is bid for again each round
