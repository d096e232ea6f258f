"""A table that only looks empty before Settle (QA48 dealing H1).

The dealer's arm over the first card, a camera back on a dark frame, a sweep before Settle:
each once cleared the unsettled round, its bets went with it, and the same cards then made a
round with no bets that could not be settled.  Now the round waits for Settle or a void.
"""

from __future__ import annotations

from kiosk.audit import AuditType
from kiosk_testing import hand

BANKER = "4S 6H QD 9C 9H"       # bull 8
SEAT1 = "KS QS JS 10S 10H"      # niu niu: beats the banker
SEAT2 = "AS 2S 3D 4D 5C"        # bull 5: loses


def seat(state, name):
    return next(s for s in state["seats"] if s["name"] == name)


def bets(dealer):
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "100", "kind": "equal"})
    dealer.post("/dealer/api/bet", {"seat": "2", "amount": "200", "kind": "equal"})


def full_deal(service, frame):
    return service.observe([hand("banker", BANKER), hand("1", SEAT1), hand("2", SEAT2)], frame)


def test_the_first_card_covered_for_seconds_keeps_the_round_and_its_bets(dealer, service, audit):
    bets(dealer)
    service.observe([hand("1", "KS")], 1)
    for frame in range(2, 40):                       # the dealer's arm lies over it: nothing seen
        service.observe([], frame)
    state = dealer.state()
    assert state["round"]["no"] == 1 and state["round"]["state"] == "dealing"
    assert [a["message"] for a in state["round"]["alerts"]] == ["KS left seat 1 before the round was settled"]
    assert seat(state, "1")["bet"]["amount"] == "100.00"
    full_deal(service, 40)
    state = dealer.state()
    assert state["round"]["no"] == 1 and state["round"]["alerts"] == []     # seen again: answered
    assert state["round"]["can_settle"]
    dealer.post("/dealer/api/settle")
    lines = {r.data["seat"]: r.data["net"] for r in audit.records() if r.type == AuditType.SETTLEMENT_LINE}
    assert lines == {"1": "95.00", "2": "-200.00"}
    assert not [r for r in audit.records() if r.type == AuditType.ROUND_CLEARED]


def test_cards_swept_before_settle_leave_one_plain_alert_and_the_round_to_settle_or_void(dealer, service, audit):
    bets(dealer)
    full_deal(service, 1)
    state = dealer.state()
    service.observe([], 2)
    state = dealer.state()
    assert state["round"]["state"] == "complete" and state["round"]["can_settle"]
    [alert] = state["round"]["alerts"]
    assert alert["code"] == "table_empty_unsettled"
    assert "every card left the table before round 1 was settled" in alert["message"]
    assert "void" in alert["message"]
    voided = dealer.post("/dealer/api/void", {"reason": "swept by mistake", "pin": "4321"})["state"]
    assert seat(voided, "1")["bet"]["amount"] == "100.00" and seat(voided, "2")["bet"]["amount"] == "200.00"
    service.observe([], 3)
    full_deal(service, 4)                            # dealt again: round 2, with the same bets
    state = dealer.state()
    assert state["round"]["no"] == 2 and state["round"]["can_settle"]


def test_a_burn_card_shown_on_a_seat_is_named_in_the_blocker_as_the_card_to_remove(dealer, service):
    bets(dealer)
    service.observe([hand("banker", "7C")], 1)       # the burn card, face up for a moment
    service.observe([], 2)
    full_deal(service, 3)
    blocker = dealer.state()["round"]["settle_blocker"]
    assert blocker.startswith("the banker has 6 cards, not 5")
    assert "7C left the table before settlement" in blocker and "remove it with Correct card" in blocker
    service.correct("banker", "7C", None, "dealer1", "burn card")
    state = dealer.state()
    assert state["round"]["can_settle"] and seat(state, "1")["bet"]["amount"] == "100.00"


def test_a_card_shown_before_any_bet_ends_with_the_empty_table_and_bets_open_again(dealer, service, audit):
    """Review2 H1: holding every unsettled round held this one too, and only a void could end it."""
    service.observe([hand("1", "7C")], 1)                # a stray card in a seat's zone, no stake yet
    service.observe([], 2)
    state = dealer.state()
    assert state["round"]["state"] == "cleared" and state["round"]["bets_open"]
    bets(dealer)
    full_deal(service, 3)
    assert dealer.state()["round"]["no"] == 2 and dealer.state()["round"]["can_settle"]
