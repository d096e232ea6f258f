"""A settled grab-the-banker round's screen keeps its own bid apart from the next round's.

At Settle the bank bid chip (and, where the banker pays only as far as a stack goes, the stack
chip) switched to the next round's values while the settled round and its payouts were still
on the screen, with nothing to say so: "Bid ×1" beside lines paid at ×2 read as the round's own
bid.  The chips are the next round's from Settle on (the README: the next round's bets open at
Settle), so they now say so, as the seat's bet chips do, also once the next deal's first card has
closed them."""

from __future__ import annotations

import pytest

from kiosk_testing import HOUSE_STACK, hand
from test_dealer_screen import BANKER, SEAT_1, SEAT_2, drawn, exact_text, log_in, wait_text

pytestmark = pytest.mark.browser


def chip(driver, css):
    """A chip's words, classes and title, read at once (a state push may redraw it between reads)."""
    text, classes, title, disabled = driver.execute_script(
        "const e = document.querySelector(arguments[0]); return [e.innerText, e.className, e.title, e.disabled]", css)
    return text, set(classes.split()) | ({"disabled"} if disabled else set()), title


@pytest.mark.parametrize("live_kiosk", [{"seats": ("banker", "1", "2", "3"), "rules": "grab-banker"},
                                        {"seats": ("banker", "1", "2", "3"), "rules": str(HOUSE_STACK)}],
                         indirect=True, ids=["grab", "stack"])
def test_a_settled_rounds_bid_and_stack_chips_say_they_are_the_next_rounds(browser, live_kiosk, shots):
    driver, service = browser, live_kiosk.service
    covered = service.covered
    service.set_bet("1", "100", "standard", "dealer1", multiple="3")
    service.set_bet("2", "50", "standard", "dealer1")
    service.set_bid("2", "dealer1")
    if covered:
        service.set_stack("1500", "dealer1")
    log_in(driver, live_kiosk.url, "dealer1")
    wait_text(driver, "[data-bid-chip]", "Bid ×2")         # before the deal: this round's, unmarked
    assert "next" not in chip(driver, "[data-bid-chip]")[1]
    if covered:
        assert chip(driver, "[data-stack-chip]")[0] == "Stack 1,500.00 USD"
    service.observe([hand("banker", BANKER), hand("1", SEAT_1), hand("2", SEAT_2)], 1)
    service.settle("dealer1")
    wait_text(driver, "#round-state", "SETTLED")
    drawn(driver, service)
    assert exact_text(driver, '.seat[data-seat="1"] .money .factors', "×2 bid · ×3 multiple")   # round 1's bid

    text, classes, title = chip(driver, "[data-bid-chip]")
    assert text == "Next bid ×1" and "next" in classes and title == "Bank bid for round 2", (text, classes, title)
    if covered:
        text, classes, title = chip(driver, "[data-stack-chip]")
        assert text == "Next stack" and "next" in classes and title == "Banker's stack for round 2"
    shots(driver, "dealer-settled-next-bid" + ("-stack" if covered else ""))
    if covered:     # counted for the next deal during the payout
        service.set_stack("800", "dealer1")
        assert exact_text(driver, "[data-stack-chip]", "Next stack 800.00 USD")

    # the next deal's first card lies on the table: bets close, and the chips are still the next round's
    service.set_bid("3", "dealer1")
    service.observe([hand("banker", BANKER), hand("1", SEAT_1), hand("2", SEAT_2), hand("3", "7C")], 2)
    drawn(driver, service)
    assert not service.snapshot()["round"]["bets_open"]
    text, classes, _ = chip(driver, "[data-bid-chip]")
    assert text == "Next bid ×3" and {"next", "disabled"} <= classes, (text, classes)
    text, classes, title = chip(driver, '[data-bet-seat="1"]')
    assert "next" in classes and title == "Bet for round 2", (text, classes, title)
    shots(driver, "dealer-settled-next-bid-closed" + ("-stack" if covered else ""))


def test_the_next_rounds_stakes_stay_marked_when_the_next_deals_first_card_closes_them(browser, live_kiosk):
    """Closed by the next deal's first card, a settled round's seat chips lost their mark and read
    as the settled round's stakes (round 2's 250 beside round 1's payout of 100)."""
    driver, service = browser, live_kiosk.service
    service.set_bet("1", "100", "double", "dealer1")
    service.observe([hand("banker", BANKER), hand("1", SEAT_1), hand("2", SEAT_2)], 1)
    service.settle("dealer1")
    service.set_bet("1", "250", "equal", "dealer1")                  # round 2's stake, during the payout
    log_in(driver, live_kiosk.url, "dealer1")
    wait_text(driver, "#round-state", "SETTLED")
    service.observe([hand("banker", BANKER), hand("1", SEAT_1), hand("2", SEAT_2), hand("3", "7C")], 2)
    drawn(driver, service)
    assert not service.snapshot()["round"]["bets_open"]
    text, classes, title = chip(driver, '[data-bet-seat="1"]')
    assert text == "250.00 USD · equal" and {"next", "disabled"} <= classes and title == "Bet for round 2", \
        (text, classes, title)
