"""The dealer's screen after a settled round is corrected: the round is listed as "adjustment
outstanding" until the dealer records the difference paid or collected, or a supervisor waives
it with a PIN and a reason (QA48 dispute H1, the part left open)."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from kiosk.table_service import Approval
from test_dealer_screen import click, drawn, exact_text, open_adjustment, settled_two_seats, wait_text

pytestmark = pytest.mark.browser


def test_an_adjustment_is_outstanding_until_recorded_paid_or_waived(browser, live_kiosk, shots):
    driver, service = browser, live_kiosk.service
    settled_two_seats(driver, live_kiosk)      # paid at the table: seat 1 +285.00, seat 2 -50.00
    wait_text(driver, "#round-state", "SETTLED")
    assert not driver.find_element(By.ID, "owed-btn").is_displayed()

    # seat 2's 4D was a 9D (as corrected +47.50): the house owes seat 2 97.50
    super1 = Approval(requested_by="dealer1", approved_by="super1")
    service.correct("2", "4D", "9D", "dealer1", "9 read as 4", super1, round_no=1)
    exact_text(driver, "#owed-title", "⚖ Round 1 owes")
    exact_text(driver, "#owed-what", "PAY 97.50 USD to Seat 2")
    wait_text(driver, '.seat[data-seat="2"] .money small', "· outstanding")
    shots(driver, "dealer-adjustment-outstanding")
    open_adjustment(driver)
    assert "PAY 97.50 USD to Seat 2" in driver.find_element(By.ID, "adjust-seats").text
    driver.find_element(By.ID, "adjust-paid").click()
    wait_text(driver, "#toast", "Round 1: adjustment recorded as paid for Seat 2")
    WebDriverWait(driver, 5).until(lambda d: not d.find_element(By.ID, "owed-btn").is_displayed())
    wait_text(driver, '.seat[data-seat="2"] .money small', "· paid")

    # seat 1's 10H was a 9S: 95.00 to collect; the player has left, and the supervisor waives it
    service.correct("1", "10H", "9S", "dealer1", "last card a nine", super1, round_no=1)
    wait_text(driver, "#owed-what", "COLLECT 95.00 USD from Seat 1")
    drawn(driver, service)
    click(driver, "#owed-btn")
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "adjust-to-waive")))
    driver.find_element(By.ID, "adjust-to-waive").click()
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "adjust-pin")))
    driver.find_element(By.ID, "adjust-reason").send_keys("player 1 left the table")
    pin = driver.find_element(By.ID, "adjust-pin")
    pin.send_keys("9999", Keys.ENTER)               # Enter waives (the PIN is the supervisor's field)
    wait_text(driver, "#adjust-error", "PIN")
    assert pin.get_attribute("value") == ""
    pin.send_keys("4321", Keys.ENTER)
    wait_text(driver, "#toast", "Round 1: adjustment recorded as waived for Seat 1")
    WebDriverWait(driver, 5).until(lambda d: not d.find_element(By.ID, "owed-btn").is_displayed())
    wait_text(driver, '.seat[data-seat="1"] .money small', "· waived")
    [record] = [r for r in service.audit.records() if r.type == "adjustment_settled" and r.data["action"] == "waived"]
    assert record.data["approved_by"] == "super1" and record.data["reason"] == "player 1 left the table"
    shots(driver, "dealer-adjustment-waived")

    # the history dialog says who paid and who waived
    service.observe([], 2)
    click(driver, '.tile[data-round="1"]')
    wait_text(driver, "#history-detail",
              "Adjustment waived by super1: the house does not collect 95.00 USD from Seat 1")
    assert "Adjustment paid by dealer1: PAY 97.50 USD to Seat 2" in driver.find_element(By.ID, "history-detail").text
