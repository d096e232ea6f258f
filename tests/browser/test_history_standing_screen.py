"""The dealer's round history dialog says where each seat's chips stand after a correction, as
the seat box and the round page say it: its "Paid at the table" column was Settle's line, and
its "Difference" (worked out in the browser) still said the house owed seat 2 97.50 after the
dealer had paid it, and nothing once seat 2 was corrected back, while the seat box said
COLLECT 97.50 (QA49 supervisor L4, on the dealer's screen)."""

from __future__ import annotations

import re

import pytest
from selenium.webdriver.common.by import By

from kiosk.table_service import Approval
from test_dealer_screen import click, drawn, exact_text, seat_box, settled_two_seats, wait_text

pytestmark = pytest.mark.browser
SUPER = Approval(requested_by="dealer1", approved_by="super1")


def standing_row(driver, party: str) -> list[str]:
    row = driver.find_element(By.CSS_SELECTOR, f'#history-detail tr[data-party="{party}"]')
    return [td.text for td in row.find_elements(By.TAG_NAME, "td")]


def test_the_history_dialog_says_what_is_still_owed_as_the_seat_box_does(browser, live_kiosk, shots):
    driver, service = browser, live_kiosk.service
    settled_two_seats(driver, live_kiosk)          # paid at Settle: seat 1 WIN +285.00, seat 2 LOSE -50.00
    service.correct("2", "4D", "9D", "dealer1", "9 read as 4", SUPER, round_no=1)        # WIN +47.50: pay 97.50
    service.correct("1", "10H", "9S", "dealer1", "last card a nine", SUPER, round_no=1)  # WIN +190.00: collect 95.00
    basis = service.snapshot()["round"]["adjustment"]["basis"]
    service.settle_adjustment(1, basis, "dealer1", seats=["2"])     # seat 2 paid; seat 1 not yet collected
    service.correct("2", "9D", "6D", "dealer1", "it was a six", SUPER, round_no=1)       # LOSE -50.00 again
    drawn(driver, service)

    # the seat boxes: what to do now, and where the chips stand
    exact_text(driver, '.seat[data-seat="2"] .money .amount', "COLLECT 97.50 USD · correction")
    exact_text(driver, '.seat[data-seat="2"] .money small', "paid +47.50 · now LOSE -50.00 · outstanding")
    exact_text(driver, '.seat[data-seat="1"] .money .amount', "COLLECT 95.00 USD · correction")
    boxes = {s: seat_box(driver, s).find_element(By.CSS_SELECTOR, ".money").text for s in ("1", "2")}

    service.observe([], 2)
    click(driver, '.tile[data-round="1"]')
    wait_text(driver, "#history-detail", "Still owed")
    shots(driver, "dealer-history-standing")
    assert standing_row(driver, "2") == ["Seat 2", "LOSE -50.00", "paid 97.50 USD to seat 2", "+47.50",
                                         "LOSE -50.00", "seat 2 owes the house 97.50 USD"]
    assert standing_row(driver, "1") == ["Seat 1", "WIN +285.00", "nothing", "+285.00",
                                         "WIN +190.00", "seat 1 owes the house 95.00 USD"]
    # one figure, two places: the dialog's chips at the table and amount owed are the seat box's
    for party, box in boxes.items():
        _, _, _, held, _, owes = standing_row(driver, party)
        assert f"paid {held} " in box or f"paid WIN {held} " in box, (party, box, held)
        assert re.search(r"owes the house ([\d.,]+ USD)", owes).group(1) in box
    # and the dialog no longer works out its own difference from Settle's line
    detail = driver.find_element(By.ID, "history-detail").text
    assert "Difference" not in detail and "the house owes Seat 2" not in detail
