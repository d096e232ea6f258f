"""QA50 dealing3 H1: bets open at Settle stayed open while the next round was dealt face up, because
that round started only cards later (a card whose code the settled round holds starts nothing).  A
stake raised after the player saw his cards became the round's: past-posting.  Bets now close at
the next deal's first card, new or returned, and the stake entered before it stands."""

from __future__ import annotations

from kiosk.audit import AuditType
from test_card_reread import SEAT1
from test_next_deal_bets import NEXT_BANKER, NEXT_SEAT1, lay, seat, settled_round


def raise_refused(dealer):
    return dealer.post("/dealer/api/bet", {"seat": "1", "amount": "5000", "kind": "equal"}, status=409)["error"]


def test_a_card_of_the_settled_round_dealt_again_closes_the_bets(dealer, service):
    table = settled_round(dealer, service)
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "200", "kind": "equal"})   # during the payout
    for code in SEAT1:                                  # seat 1 swept, the banker's cards still down
        del table.cards[code]
    table.frames(1.0)
    assert dealer.state()["round"]["bets_open"]
    lay(table, "1", 0, "KS")                            # the deck reshuffled: KS dealt again, elsewhere
    state = dealer.state()
    assert (state["round"]["no"], state["round"]["state"], state["round"]["bets_open"]) == (1, "settled", False)
    said = raise_refused(dealer)
    assert said == ("bets are closed: the next deal's cards are on the table (seat 1: KS); round 2 starts with "
                    "the cards dealt; enter bets before the next deal")
    assert "bets are closed" in dealer.post("/dealer/api/repeat-bets", status=409)["error"]
    assert seat(dealer.state(), "1")["bet"] == {"amount": "200.00", "kind": "equal"}


def test_a_new_card_closes_the_bets_and_the_round_it_starts_keeps_the_stake_entered_before(dealer, service, audit):
    table = settled_round(dealer, service)
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "200", "kind": "equal"})
    lay(table, "1", 0, NEXT_SEAT1[0])                   # 6D, in no hand of round 1
    assert "(seat 1: 6D)" in raise_refused(dealer)
    del table.cards[NEXT_SEAT1[0]]                      # a burn card taken off: bets open again
    table.frames(3.0)
    assert dealer.state()["round"]["bets_open"]
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "300", "kind": "equal"})

    table.cards = {}
    lay(table, "1", 0, NEXT_SEAT1[0])
    for i in range(5):
        lay(table, "banker", i, NEXT_BANKER[i])
        if i:
            raise_refused(dealer)
            lay(table, "1", i, NEXT_SEAT1[i])
    table.frames(1.0)
    state = dealer.state()
    assert (state["round"]["no"], state["round"]["state"]) == (2, "complete")
    [start] = audit.records(types=[AuditType.ROUND_START], round_no=2)
    assert start.data["bets"] == {"1": {"amount": "300.00", "kind": "equal"}}
    assert not any(r.data.get("change", {}).get("amount") == "5000.00"
                   for r in audit.records(types=[AuditType.BETS_PLACED]))
