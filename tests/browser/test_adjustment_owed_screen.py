"""Where the dealer's screen keeps what corrections still owe (QA49 supervisor M1, L1, L3, L5,
M4): one button under Next round and Void, in full view on a settled round at 1280x800 and
1024x600 whatever the totals and alerts say, every owed round one tap away; the adjustment
dialog's boxes beside their words, redrawn from the table when the kiosk refuses a stale
screen; and where a player banks, the words say the banker pays the seat."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from kiosk.table_service import Approval
from kiosk_testing import hand
from test_dealer_screen import (BANKER, SEAT_1, SEAT_2, SEVEN, SEVEN_HANDS, click, drawn, exact_text, log_in,
                               open_adjustment, settled_two_seats, wait_text)

pytestmark = pytest.mark.browser
SUPER = Approval(requested_by="dealer1", approved_by="super1")
# where the seats start below the status bar (which wraps at 1024 once the kiosk's status arrives)
SEATS_TOP = ("return document.getElementById('seats').getBoundingClientRect().top"
             " - document.querySelector('.dealer-main').getBoundingClientRect().top")
SEAT_3 = "KD 7S 3H 8D 2C"      # Niu Niu as dealt (+190.00); 5D for 8D makes it Bull 7 (-200.00)


def settle_round(service, frame, seat_3=True):
    """Seat 1 (100 double) Niu Niu, seat 2 (50 equal) Bull 5, seat 3 (200 equal) Niu Niu."""
    service.set_bet("1", "100", "double", "dealer1")
    service.set_bet("2", "50", "equal", "dealer1")
    hands = [hand("banker", BANKER), hand("1", SEAT_1), hand("2", SEAT_2)]
    if seat_3:
        service.set_bet("3", "200", "equal", "dealer1")
        hands.append(hand("3", SEAT_3))
    service.observe(hands, frame)
    service.settle("dealer1")


def in_full_view(driver, css) -> dict:
    """Whether what ``css`` finds lies inside the window and inside every box that clips it,
    is what a finger on its middle touches, and shows its title whole (no ellipsis: the words
    after it may end in one, the dialog a tap away shows them whole)."""
    return driver.execute_script("""
        const node = document.querySelector(arguments[0]);
        const r = node.getBoundingClientRect();
        let inside = r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth && r.height > 0;
        for (let p = node.parentElement; p; p = p.parentElement) {
          const s = getComputedStyle(p);
          if (s.overflow === 'visible' && s.overflowY === 'visible') continue;
          const c = p.getBoundingClientRect();
          inside = inside && r.top >= c.top - 1 && r.bottom <= c.bottom + 1;
        }
        const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        const title = node.querySelector('.owed-title');
        const whole = title.scrollWidth <= title.clientWidth + 1;
        return {inside: inside, touched: Boolean(hit && node.contains(hit)), whole: whole, height: r.height};
    """, css)


@pytest.mark.parametrize("size", [(1280, 800), (1024, 600), (1280, 720)])
def test_what_is_owed_stays_in_view_on_a_settled_round(browser, live_kiosk, shots, size):
    driver, service = browser, live_kiosk.service
    driver.viewport(*size)
    settle_round(service, 1)
    log_in(driver, live_kiosk.url, "dealer1")
    wait_text(driver, "#round-state", "SETTLED")
    assert not driver.find_element(By.ID, "owed-btn").is_displayed()
    seats_top = driver.execute_script(SEATS_TOP)
    # two corrections of the settled round, as the supervisor's video check found them
    service.correct("2", "4D", "9D", "dealer1", "9 read as 4", SUPER, round_no=1)
    service.correct("3", "8D", "5D", "dealer1", "5 read as 8", SUPER, round_no=1)
    drawn(driver, service)
    exact_text(driver, "#owed-title", "⚖ Round 1 owes")
    exact_text(driver, "#owed-what", "PAY 97.50 USD to Seat 2 · COLLECT 390.00 USD from Seat 3")
    view = in_full_view(driver, "#owed-btn")
    shots(driver, f"owed-settled-{size[0]}x{size[1]}")
    assert view == {"inside": True, "touched": True, "whole": True, "height": view["height"]}
    assert view["height"] >= 44
    # the seats below did not move to make room for it
    assert driver.execute_script(SEATS_TOP) == seats_top

    # a second round owed too: the button says how many, and the list names each, one tap apiece
    service.observe([], 2)
    settle_round(service, 3, seat_3=False)
    service.correct("1", "10H", "9S", "dealer1", "last card a nine", SUPER, round_no=2)
    drawn(driver, service)
    exact_text(driver, "#owed-title", "⚖ 2 rounds owe")
    assert in_full_view(driver, "#owed-btn")["inside"]
    shots(driver, f"owed-two-rounds-{size[0]}x{size[1]}")
    click(driver, "#owed-btn")
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "owed-list")))
    rounds = [b.text for b in driver.find_elements(By.CSS_SELECTOR, "#owed-list [data-adjust-round]")]
    assert rounds == ["Round 2\nCOLLECT 95.00 USD from Seat 1",
                      "Round 1\nPAY 97.50 USD to Seat 2 · COLLECT 390.00 USD from Seat 3"]
    shots(driver, f"owed-list-{size[0]}x{size[1]}")
    click(driver, '#owed-list [data-adjust-round="1"]')
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "adjust-paid")))
    exact_text(driver, "#adjust-title", "Adjustment · round 1")


def test_each_box_sits_beside_its_words_and_a_refusal_shows_the_amounts_now(browser, live_kiosk, shots):
    driver, service = browser, live_kiosk.service
    settle_round(service, 1)
    log_in(driver, live_kiosk.url, "dealer1")
    service.correct("2", "4D", "9D", "dealer1", "9 read as 4", SUPER, round_no=1)
    service.correct("3", "8D", "5D", "dealer1", "5 read as 8", SUPER, round_no=1)
    drawn(driver, service)
    open_adjustment(driver)
    rows = driver.find_elements(By.CSS_SELECTOR, "#adjust-seats .adjust-seat")
    assert [r.text for r in rows] == ["PAY 97.50 USD to Seat 2", "COLLECT 390.00 USD from Seat 3"]
    for row in rows:
        box = row.find_element(By.TAG_NAME, "input").rect
        words = row.find_element(By.TAG_NAME, "span").rect
        # one row: the box left of its words, their middles level
        assert box["x"] + box["width"] <= words["x"]
        assert abs((box["y"] + box["height"] / 2) - (words["y"] + words["height"] / 2)) < 6
    shots(driver, "adjust-dialog-rows")

    # meanwhile seat 2 is corrected back: the screen's "paid" is refused, and the dialog then shows
    # what the round owes now, so that the next press records it
    service.correct("2", "9D", "4D", "dealer1", "the four was right", SUPER, round_no=1)
    driver.find_element(By.ID, "adjust-paid").click()
    wait_text(driver, "#adjust-error", "corrected again since your screen showed it")
    exact_text(driver, "#adjust-seats", "COLLECT 390.00 USD from Seat 3")
    shots(driver, "adjust-dialog-refreshed")
    driver.find_element(By.ID, "adjust-paid").click()
    wait_text(driver, "#toast", "Round 1: adjustment recorded as paid for Seat 3")
    [record] = [r for r in service.audit.records() if r.type == "adjustment_settled"]
    assert record.data["difference"] == {"3": "-390.00"}


@pytest.mark.parametrize("live_kiosk", [{"seats": ("banker", "1", "2", "3"), "rules": "classic"}], indirect=True)
def test_where_a_player_banks_the_banker_pays_the_seat(browser, live_kiosk, shots):
    driver, service = browser, live_kiosk.service
    settled_two_seats(driver, live_kiosk, ("standard", "standard"))   # seat 2 loses 100.00 to the banker's Bull 8 (x2)
    service.correct("2", "4D", "9D", "dealer1", "9 read as 4", SUPER, round_no=1)    # wins 150.00 (x3)
    drawn(driver, service)
    exact_text(driver, "#owed-what", "Banker pays 250.00 USD to Seat 2")
    wait_text(driver, '.seat[data-seat="banker"] .money', "COLLECT 250.00 USD · correction")
    wait_text(driver, '.seat[data-seat="2"] .money', "PAY 250.00 USD · correction")
    shots(driver, "owed-player-banked")
    open_adjustment(driver)
    assert driver.find_element(By.ID, "adjust-note").text.startswith("Banker pays 250.00 USD to Seat 2.")
    rows = [r.text for r in driver.find_elements(By.CSS_SELECTOR, "#adjust-seats .adjust-seat")]
    assert rows == ["Seat 2 is paid 250.00 USD", "Banker pays 250.00 USD"]
    driver.find_element(By.ID, "adjust-to-waive").click()
    wait_text(driver, "#adjust-note", "A waiver moves no chips: Banker does not pay 250.00 USD to Seat 2")
    shots(driver, "adjust-dialog-player-banked")
    driver.find_element(By.CSS_SELECTOR, "#adjust-dialog [data-close]").click()
    # the seat is paid (the banker not yet asked): the round still owes the banker's side
    open_adjustment(driver)
    driver.find_element(By.CSS_SELECTOR, '#adjust-seats input[data-seat="banker"]').click()
    driver.find_element(By.ID, "adjust-paid").click()
    wait_text(driver, "#toast", "Round 1: adjustment recorded as paid for Seat 2")
    exact_text(driver, "#owed-what", "Banker pays 250.00 USD")
    wait_text(driver, '.seat[data-seat="banker"] .money', "· outstanding")


@pytest.mark.parametrize("live_kiosk", [{"seats": SEVEN, "rules": "cambodia"}, {"seats": SEVEN, "rules": "classic"}],
                         indirect=True, ids=["house", "player"])
@pytest.mark.parametrize("size", [(1280, 800), (1280, 720)])
def test_seven_seats_still_fit_while_a_round_owes(browser, live_kiosk, shots, size):
    """The button takes a little of the seats' height only where seven seats leave the top row no
    room under Next round: every seat's money line stays above the round strip, the banker's too."""
    driver, service = browser, live_kiosk.service
    driver.viewport(*size)
    kind = "standard" if service.preset.name == "classic" else "equal"
    for seat in SEVEN_HANDS:
        service.set_bet(seat, "10", kind, "dealer1")
    service.observe([hand("banker", BANKER)] + [hand(s, t) for s, t in SEVEN_HANDS.items()], 1)
    service.settle("dealer1")
    log_in(driver, live_kiosk.url, "dealer1")
    service.correct("2", "4D", "9D", "dealer1", "9 read as 4", SUPER, round_no=1)
    drawn(driver, service)
    wait_text(driver, "#owed-title", "⚖ Round 1 owes")
    shots(driver, f"owed-seven-seats-{live_kiosk.service.preset.name}-{size[0]}x{size[1]}")
    assert in_full_view(driver, "#owed-btn")["touched"]
    strip = driver.find_element(By.ID, "history").rect
    for seat in ("banker", *SEVEN_HANDS):
        rect = driver.find_element(By.CSS_SELECTOR, f'.seat[data-seat="{seat}"]').rect
        assert rect["y"] + rect["height"] <= strip["y"], (seat, rect, strip)
