"""A card replaced in place between two frames (QA48 dispute H3), as the dealer's screen shows it:
the round keeps the card dealt, Settle is not held, and the alert stays until a person looks."""

from __future__ import annotations

from test_card_reread import BANKER, SEAT1, Table, box


def dealt(dealer, service):
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "100", "kind": "equal"})
    table = Table(service, fps=10.0)
    for i in range(5):
        table.deal("banker", i, BANKER[i])
        table.deal("1", i, SEAT1[i])
    table.frames(2.0)
    return table


def swap(table, old, new):
    """``new`` laid straight over ``old``: the next frame reads it, no frame in between."""
    left, top, right, bottom = table.cards.pop(old)
    table.cards[new] = (left + 1, top, right + 1, bottom)
    table.frames(2.5)       # reported once it has read so for CHANGE_HOLD_S (vision.tracker)


def test_a_card_swapped_in_place_is_on_the_dealers_screen_until_confirmed(dealer, service):
    table = dealt(dealer, service)
    swap(table, "4H", "AH")
    state = dealer.state()
    seat1 = next(s for s in state["seats"] if s["name"] == "1")
    assert [c["code"] for c in seat1["cards"]] == SEAT1           # the card dealt stands
    [alert] = state["round"]["alerts"]
    assert alert["code"] == "card_changed" and alert["message"].startswith("4H on seat 1 has read as AH")
    # Settle waits for a person to look (QA49 dealing2 M2: one tap settled on the card swapped out)
    assert not state["round"]["can_settle"]
    assert state["round"]["settle_blocker"].startswith("seat 1: card 4H has read as AH, steadily")
    assert [c["confirm"] for c in seat1["cards"]] == [False, False, False, False, True]   # marked "?"
    dealer.post("/dealer/api/settle", status=409)
    service.correct("1", "4H", "4H", "dealer1", "looked: it is the 4 of hearts")
    state = dealer.state()
    assert state["round"]["alerts"] == [] and state["round"]["can_settle"]


def test_a_card_swapped_after_settlement_is_still_told(dealer, service):
    table = dealt(dealer, service)
    dealer.post("/dealer/api/settle")
    swap(table, "4H", "AH")
    [alert] = dealer.state()["round"]["alerts"]
    assert alert["code"] == "card_changed" and "was settled with 4H" in alert["message"]


def test_a_settled_rounds_cards_swept_beside_the_next_deals_first_are_no_fault(dealer, service):
    """QA49 dealing2 M7: seconds after Settle the screen said "every card left the table before
    round 1 was settled: settle it ... or call a supervisor to void it"."""
    table = dealt(dealer, service)
    dealer.post("/dealer/api/settle")
    table.cards = {"6D": box("2", 0)}                 # swept; the next deal's first card lies there
    table.frames(4.0)
    codes = [a["code"] for a in dealer.state()["round"]["alerts"]]
    assert "table_empty_unsettled" not in codes


def test_a_reading_answered_stays_answered_when_the_card_reads_as_a_third(dealer, service):
    """QA49 dealing2 L2: after "Card is right" for 4H read as AH, a later steady reading as
    2H showed both alerts again; the dealer has only the new reading to look at."""
    table = dealt(dealer, service)
    swap(table, "4H", "AH")
    service.correct("1", "4H", "4H", "dealer1", "looked: it is the 4 of hearts")
    swap(table, "AH", "2H")
    alerts = dealer.state()["round"]["alerts"]
    assert [a["message"][:22] for a in alerts] == ["4H on seat 1 has read "]
    assert "as 2H" in alerts[0]["message"] and "as AH" not in alerts[0]["message"]
