"""QA49 dealing2 M4: the next deal begun on a settled round's table, before the sweep and without
"Next round".  Bets were closed until the kiosk cleared the round, so the alert's "deal on" gave
a round with no bets.  Now the next round's bets open at Settle; they never touch the round settled."""

from __future__ import annotations

from decimal import Decimal

from kiosk.audit import AuditType
from kiosk.rounds import load_round
from kiosk_testing import login
from test_card_reread import BANKER, SEAT1, Table, box

NEXT_BANKER = "AC 2C 3C 4C 6C".split()    # Bull 6
NEXT_SEAT1 = "6D 9D 10D JD KD".split()    # Bull 5: loses


def seat(state, name):
    return next(s for s in state["seats"] if s["name"] == name)


def low(seat_name, i):
    """Below the settled round's cards in the same zone: the next deal laid beside them."""
    left, top, right, bottom = box(seat_name, i)
    return (left, top + 120, right, bottom + 120)


def settled_round(dealer, service):
    """Seat 1 stakes 100 (equal) and wins 95; the round is settled, its cards still down."""
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "100", "kind": "equal"})
    table = Table(service, fps=10.0)
    for i in range(5):
        table.deal("banker", i, BANKER[i])
        table.deal("1", i, SEAT1[i])
    dealer.post("/dealer/api/settle")
    return table


def lay(table, seat_name, i, code):
    table.cards[code] = low(seat_name, i)
    table.frames(0.8)


def test_the_next_deals_bets_go_in_after_settle_and_the_round_they_start_has_them(dealer, service, audit):
    table = settled_round(dealer, service)
    # Same bets at once, as the screen says: the next round's stakes, not the settled round's
    state = dealer.post("/dealer/api/repeat-bets")["state"]
    assert (state["round"]["no"], state["round"]["state"], state["round"]["bets_open"]) == (1, "settled", True)
    assert seat(state, "1")["bet"] == {"amount": "100.00", "kind": "equal"} and seat(state, "1")["bet_pending"]
    assert seat(state, "1")["line"]["net"] == "95.00"             # what round 1 pays stands
    state = dealer.post("/dealer/api/bet", {"seat": "1", "amount": "250", "kind": "double"})["state"]
    assert seat(state, "1")["line"]["net"] == "95.00"
    assert audit.last().type == AuditType.BETS_PLACED and audit.last().data["for_round"] == 2
    lay(table, "1", 0, NEXT_SEAT1[0])              # the next deal's first card, beside the settled hands

    table.cards = {NEXT_SEAT1[0]: low("1", 0)}     # the sweep, then the deal goes on
    table.frames(0.5)
    for i in range(5):
        lay(table, "banker", i, NEXT_BANKER[i])
        if i:
            lay(table, "1", i, NEXT_SEAT1[i])
    table.frames(1.0)
    state = dealer.state()
    assert (state["round"]["no"], state["round"]["state"]) == (2, "complete")
    assert [c["code"] for c in seat(state, "1")["cards"]] == NEXT_SEAT1     # the first card too
    assert seat(state, "1")["bet"] == {"amount": "250.00", "kind": "double"} and state["round"]["can_settle"]
    state = dealer.post("/dealer/api/settle", {"round": 2, "basis": state["round"]["basis"]})["state"]
    assert seat(state, "1")["line"]["net"] == "-250.00"
    [start] = audit.records(types=[AuditType.ROUND_START], round_no=2)
    assert start.data["bets"] == {"1": {"amount": "250.00", "kind": "double"}}
    first = load_round(audit, 1)
    assert first["bets"] == {"1": {"amount": "100.00", "kind": "equal"}} and first["lines"]["1"]["net"] == "95.00"


def test_a_stake_typed_for_the_next_round_never_changes_the_settled_one(app, dealer, service, audit):
    settled_round(dealer, service)
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "500", "kind": "equal"})
    # the supervisor corrects round 1 afterwards: it is paid again on its own stake of 100
    result = dealer.post("/dealer/api/correct", {"seat": "1", "old": "4H", "new": "3H", "reason": "3 read as 4",
                                                 "pin": "4321", "round": 1})["result"]
    assert result["difference"] == {"1": "-195.00"}            # +95 paid, -100 now: 500 would say -975
    assert Decimal(load_round(audit, 1)["lines"]["1"]["net"]) == Decimal("-100")
    watcher = app.test_client()
    login(watcher, "watch1")
    page = watcher.get("/review/round/1").get_data(as_text=True)
    assert "500.00" not in page                                 # the next round's stake is not round 1's


def test_a_lone_card_after_settle_says_what_to_do(dealer, service):
    table = settled_round(dealer, service)
    lay(table, "1", 0, NEXT_SEAT1[0])
    table.frames(6.0)                                           # it has lain there 5 s, alone
    [alert] = dealer.state()["round"]["alerts"]
    assert alert["code"] == "card_after_round"
    said = alert["message"]
    assert said.startswith("6D lies alone on seat 1 beside round 1's cards")
    assert said.endswith("No bets are entered for round 2, and they are closed while it lies there: take it "
                         "off the table, enter the bets (Same bets), then deal")    # QA50 dealing3 H1
