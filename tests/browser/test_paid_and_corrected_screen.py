"""The dealer's screen after a settled round is corrected: the seat lines say the difference to
pay or collect (the chips moved at Settle stay where they are), the toast says it too, and the
history dialog shows what was paid at the table beside the result as corrected (QA48 dispute H1)."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from test_dealer_screen import click, drawn, exact_text, settled_two_seats, wait_text

pytestmark = pytest.mark.browser


def test_a_settled_correction_shows_the_difference_to_pay_or_collect(browser, live_kiosk, shots):
    driver, service = browser, live_kiosk.service
    settled_two_seats(driver, live_kiosk)      # paid at the table: seat 1 +285.00, seat 2 -50.00
    wait_text(driver, "#round-state", "SETTLED")
    drawn(driver, service)

    # seat 2's 4D was a 9D: Niu Niu, +47.50 as corrected; 50.00 was collected, so 97.50 is to pay
    click(driver, '.seat[data-seat="2"] .card[data-code="4D"]')
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "correct-pin")))
    driver.find_element(By.CSS_SELECTOR, '#grid52 .gcard[data-code="9D"]').click()
    driver.find_element(By.ID, "correct-reason").send_keys("9 read as 4")
    driver.find_element(By.ID, "correct-pin").send_keys("4321")
    driver.find_element(By.ID, "correct-submit").click()
    wait_text(driver, "#toast", "PAY 97.50 USD to Seat 2")
    assert "Correction recorded: Seat 2 4D → 9D" in driver.find_element(By.ID, "toast").text
    wait_text(driver, '.seat[data-seat="2"] .category', "Niu Niu")
    drawn(driver, service)
    assert exact_text(driver, '.seat[data-seat="2"] .money .amount', "PAY 97.50 USD · correction")
    two = driver.find_element(By.CSS_SELECTOR, '.seat[data-seat="2"] .money')
    assert "paid LOSE -50.00 · now WIN +47.50" in two.text and "pay" in two.get_attribute("class")
    # seat 1 was paid what it is owed still: nothing to do there, and never "PAY 285.00" again
    assert exact_text(driver, '.seat[data-seat="1"] .money .amount', "NO CHANGE · correction")
    shots(driver, "dealer-settled-correction-difference")

    # the round in the history strip: paid at the table beside the result as corrected
    service.observe([], 2)
    click(driver, '.tile[data-round="1"]')
    wait_text(driver, "#history-detail", "Paid at Settle")
    detail = driver.find_element(By.ID, "history-detail").text
    assert "Net as corrected" in detail and "LOSE -50.00" in detail
    assert "the house owes seat 2 97.50 USD" in detail
    shots(driver, "dealer-history-paid-and-corrected")
