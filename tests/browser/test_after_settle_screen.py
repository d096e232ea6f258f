"""The dealer's screen between Settle and the sweep (QA49 dealing2 M4, L1): the next round's bets go
in at once, and a card read as another after Settle is confirmed with "Card is right"."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from kiosk.audit import AuditType
from kiosk_testing import hand
from test_card_changed import swap
from test_card_reread import BANKER as BANKER_8, SEAT1 as SEAT1_WINS, Table
from test_dealer_screen import BANKER, SEAT_1, SEAT_2, click, drawn, exact_text, log_in, seat_box, wait_text

pytestmark = pytest.mark.browser


def test_the_next_rounds_bets_go_in_right_after_settle(browser, live_kiosk, shots):
    driver, service = browser, live_kiosk.service
    service.set_bet("1", "100", "double", "dealer1")
    service.set_bet("2", "50", "equal", "dealer1")
    service.observe([hand("banker", BANKER), hand("1", SEAT_1), hand("2", SEAT_2)], 1)
    service.settle("dealer1")
    log_in(driver, live_kiosk.url, "dealer1")
    wait_text(driver, "#round-state", "SETTLED")
    drawn(driver, service)
    # Same bets in the settle button's place, and the chips open for round 2, the payouts unchanged
    assert driver.find_element(By.ID, "repeat-btn").text == "Same bets as #1"
    assert not driver.find_element(By.ID, "settle-btn").is_displayed()
    chip = driver.find_element(By.CSS_SELECTOR, '[data-bet-seat="1"]')
    assert chip.is_enabled() and chip.text == "No bet" and "next" in chip.get_attribute("class")
    assert chip.get_attribute("title") == "Bet for round 2"
    assert "Bets are open for round 2" in driver.find_element(By.ID, "settle-blocker").text
    click(driver, "#repeat-btn")
    wait_text(driver, '[data-bet-seat="1"]', "100.00 USD · double")
    wait_text(driver, '[data-bet-seat="2"]', "50.00 USD · equal")
    drawn(driver, service)
    assert seat_box(driver, "1").find_element(By.CSS_SELECTOR, ".money .amount").text == "PAY 285.00 USD"
    shots(driver, "dealer-settled-next-bets")
    # the next deal comes before the sweep: its round has the bets
    service.observe([hand("banker", "AC 2C 3C 4C 6C"), hand("1", "6D 9D 10D JD KD"), hand("2", "7H 8H 2H 3H 5H")], 2)
    exact_text(driver, "#round-no", "2")
    WebDriverWait(driver, 5).until(lambda d: d.find_element(By.ID, "settle-btn").is_enabled())
    assert service.snapshot()["seats"][1]["bet"] == {"amount": "100.00", "kind": "double"}


def test_a_card_read_as_another_after_settle_is_confirmed_without_a_pin(browser, live_kiosk, shots):
    driver, service = browser, live_kiosk.service
    service.set_bet("1", "100", "equal", "dealer1")
    table = Table(service, fps=10.0)
    for i in range(5):
        table.deal("banker", i, BANKER_8[i])
        table.deal("1", i, SEAT1_WINS[i])
    table.frames(2.0)                 # past the last card's recheck: what it reads as now is a change
    service.settle("dealer1")
    swap(table, "4H", "AH")
    log_in(driver, live_kiosk.url, "dealer1")
    wait_text(driver, "#alerts", "4H on seat 1 has read as AH")
    click(driver, '.seat[data-seat="1"] .card[data-code="4H"]')
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "correct-confirm")))
    assert "tap Card is right (no PIN)" in driver.find_element(By.ID, "correct-note").text
    shots(driver, "dealer-settled-card-changed")
    driver.find_element(By.ID, "correct-confirm").click()
    WebDriverWait(driver, 5).until(EC.invisibility_of_element_located((By.ID, "correct-dialog")))
    wait_text(driver, "#toast", "Seat 1: 4H confirmed")
    exact_text(driver, "#alerts", "")
    last = service.audit.last()
    assert (last.type, last.actor, last.data["action"], last.data["after_settlement"]) == \
        (AuditType.CARD_CORRECTED, "dealer1", "confirmed", True)
    # a card with no such reading still asks for the supervisor: no Card is right
    click(driver, '.seat[data-seat="1"] .card[data-code="KS"]')
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "correct-pin")))
    assert not driver.find_element(By.ID, "correct-confirm").is_displayed()
