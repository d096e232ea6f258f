"""An action meant for the round on the screen never lands on another (QA48 concurrency H1, M1).

The void dialog said "Void round 7" but sent only a reason and a PIN: round 8, dealt while the
supervisor typed, was voided and its hands never paid.  "Add a missing card" put its card on
the next round's seat.  Settle confirmed whatever the round held when the request arrived,
not the money the dealer looked at.
"""

from __future__ import annotations

from kiosk.audit import AuditType
from kiosk_testing import hand

BANKER = "4S 6H QD 9C 9H"       # bull 8
NIU_NIU = "KS QS JS 10S 10H"
BULL_5 = "AS 2S 3D 4D 5C"


def bet(dealer, seat="1", amount="100"):
    dealer.post("/dealer/api/bet", {"seat": seat, "amount": amount, "kind": "equal"})


def next_round_dealt(dealer, service):
    """Round 1 settled and swept; round 2 dealt with the same stake."""
    bet(dealer)
    service.observe([hand("banker", BANKER), hand("1", NIU_NIU)], 1)
    dealer.post("/dealer/api/settle")
    service.observe([], 2)
    bet(dealer)
    service.observe([hand("banker", "2C 3C"), hand("1", "5H")], 3)


def test_a_void_typed_for_a_round_that_ended_voids_nothing(dealer, service, audit):
    bet(dealer)
    service.observe([hand("banker", BANKER), hand("1", NIU_NIU)], 1)
    shown = dealer.state()["round"]["no"]                     # the supervisor opens Void for round 1
    dealer.post("/dealer/api/settle")
    service.observe([], 2)
    bet(dealer)
    service.observe([hand("banker", "2C 3C"), hand("1", "5H")], 3)          # round 2 is dealt meanwhile
    refused = dealer.post("/dealer/api/void", {"reason": "misdeal", "pin": "4321", "round": shown}, status=409)
    assert refused["error"] == ("your screen showed round 1, and the table is now on round 2: nothing was "
                                "voided; look at the screen again")
    assert refused["state"]["round"]["no"] == 2 and refused["state"]["round"]["state"] == "dealing"
    assert not [r for r in audit.records() if r.type == AuditType.ROUND_VOID]
    voided = dealer.post("/dealer/api/void", {"reason": "misdeal", "pin": "4321", "round": 2})["state"]
    assert voided["round"]["state"] == "void"


def test_a_card_added_for_a_round_that_ended_is_not_added_to_the_next(dealer, service):
    next_round_dealt(dealer, service)
    refused = dealer.post("/dealer/api/correct", {"seat": "1", "old": None, "new": "7D", "round": 1,
                                                  "reason": "card added by dealer"}, status=409)
    assert "nothing was added" in refused["error"]
    assert [c["code"] for c in next(s for s in refused["state"]["seats"] if s["name"] == "1")["cards"]] == ["5H"]


def test_settle_is_refused_when_the_round_changed_since_the_screen_showed_it(dealer, service, audit):
    bet(dealer, "1")
    bet(dealer, "2")
    service.observe([hand("banker", BANKER), hand("1", NIU_NIU), hand("2", BULL_5)], 1)
    shown = dealer.state()["round"]
    service.correct("1", "10H", "5H", "dealer2", "looked again")           # another screen, a moment before
    refused = dealer.post("/dealer/api/settle", {"round": shown["no"], "basis": shown["basis"]}, status=409)
    assert refused["error"] == ("round 1 changed since your screen showed it (a card or a bet): nothing was "
                                "settled; check the screen and settle again")
    assert not [r for r in audit.records() if r.type == AuditType.ROUND_SETTLED]
    now = refused["state"]["round"]
    assert now["basis"] != shown["basis"]
    assert dealer.post("/dealer/api/settle", {"round": now["no"], "basis": now["basis"]})["state"]["round"][
        "state"] == "settled"


def test_settle_of_a_round_that_ended_settles_nothing(dealer, service, audit):
    next_round_dealt(dealer, service)
    refused = dealer.post("/dealer/api/settle", {"round": 1}, status=409)
    assert "nothing was settled" in refused["error"]
    assert len([r for r in audit.records() if r.type == AuditType.ROUND_SETTLED]) == 1


def test_a_round_number_that_is_no_number_is_refused(dealer, service):
    bet(dealer)
    service.observe([hand("banker", BANKER), hand("1", NIU_NIU)], 1)
    for bad in ("²", "1.0", True, "9" * 40):
        assert "is not a round number" in dealer.post("/dealer/api/settle", {"round": bad}, status=409)["error"]


def test_a_void_for_a_round_that_ended_is_refused_before_any_pin_is_checked(dealer, service, audit):
    next_round_dealt(dealer, service)
    refused = dealer.post("/dealer/api/void", {"reason": "misdeal", "pin": "4321", "round": 1}, status=409)
    assert "nothing was voided" in refused["error"]
    assert not [r for r in audit.records() if r.type == AuditType.PIN_ACCEPTED]     # no approval of nothing
