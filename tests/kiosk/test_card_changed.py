"""A card replaced in place between two frames (QA48 dispute H3), as the dealer's screen shows it:
the round keeps the card dealt, Settle is not held, and the alert stays until a person looks."""

from __future__ import annotations

from test_card_reread import BANKER, SEAT1, Table


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
    assert state["round"]["can_settle"]                          # a note, not a blocker
    service.correct("1", "4H", "4H", "dealer1", "looked: it is the 4 of hearts")
    assert dealer.state()["round"]["alerts"] == []


def test_a_card_swapped_after_settlement_is_still_told(dealer, service):
    table = dealt(dealer, service)
    dealer.post("/dealer/api/settle")
    swap(table, "4H", "AH")
    [alert] = dealer.state()["round"]["alerts"]
    assert alert["code"] == "card_changed" and "was settled with 4H" in alert["message"]
