"""The dealer's screen in a real browser: a round, its payouts, a settlement, a correction, the alarm."""

from __future__ import annotations

import pytest
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from kiosk.audit import AuditType
from kiosk_testing import ACCOUNTS, hand

pytestmark = pytest.mark.browser

BANKER = "4S 6H QD 9C 9H"           # Bull 8
SEAT_1 = "KS QS JS 10S 10H"         # Niu Niu
SEAT_2 = "AS 2S 3D 4D 5C"           # Bull 5


def log_in(driver, url, username):
    driver.get(url + "auth/login")
    driver.find_element(By.ID, "username").send_keys(username)
    driver.find_element(By.ID, "password").send_keys(ACCOUNTS[username][1])
    driver.find_element(By.ID, "login").click()


def seat_box(driver, name):
    return driver.find_element(By.CSS_SELECTOR, f'.seat[data-seat="{name}"]')


def wait_text(driver, css, text, timeout=5):
    WebDriverWait(driver, timeout).until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, css), text))


def exact_text(driver, css, text, timeout=5) -> bool:
    """Wait until what ``css`` finds reads exactly ``text``, finding it again after a redraw
    (a state push can replace the element between finding and reading it)."""
    from selenium.common.exceptions import StaleElementReferenceException

    WebDriverWait(driver, timeout, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: d.find_element(By.CSS_SELECTOR, css).text == text)
    return True


def click(driver, css, timeout=5):
    """Click what ``css`` finds, again if the screen was redrawn under the pointer."""
    def attempt(d):
        try:
            d.find_element(By.CSS_SELECTOR, css).click()
            return True
        except (StaleElementReferenceException, NoSuchElementException):
            return False
    WebDriverWait(driver, timeout).until(attempt)


def drawn(driver, service, timeout=5):
    """Wait until the screen shows the server's newest state (no redraw is still coming)."""
    WebDriverWait(driver, timeout).until(
        lambda d: d.execute_script("return document.body.dataset.version") == str(service.version))


def place_bet(driver, seat, amount, kind):
    click(driver, f'[data-bet-seat="{seat}"]')
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "bet-amount")))
    box = driver.find_element(By.ID, "bet-amount")
    box.clear()
    box.send_keys(amount)
    driver.find_element(By.CSS_SELECTOR, f'#bet-kinds [data-kind="{kind}"]').click()
    driver.find_element(By.ID, "bet-submit").click()
    wait_text(driver, f'[data-bet-seat="{seat}"]', f"{amount}.00 USD · {kind}")


def test_round_settlement_correction_and_alarm(browser, live_kiosk, shots):
    driver, service = browser, live_kiosk.service
    log_in(driver, live_kiosk.url, "dealer1")
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "settle-btn")))
    place_bet(driver, "1", "100", "double")
    place_bet(driver, "2", "50", "equal")

    service.observe([hand("banker", BANKER), hand("1", SEAT_1), hand("2", SEAT_2)], 1)
    wait_text(driver, '.seat[data-seat="1"] .category', "Niu Niu")
    drawn(driver, service)
    one, two = seat_box(driver, "1"), seat_box(driver, "2")
    assert seat_box(driver, "banker").find_element(By.CSS_SELECTOR, ".category").text == "Bull 8"
    assert one.find_element(By.CSS_SELECTOR, ".outcome").text == "WIN"
    assert one.find_element(By.CSS_SELECTOR, ".money .amount").text == "PAY 285.00 USD"
    assert "commission 15.00 (win 300.00)" in one.find_element(By.CSS_SELECTOR, ".money").text
    assert two.find_element(By.CSS_SELECTOR, ".category").text == "Bull 5"
    assert two.find_element(By.CSS_SELECTOR, ".outcome").text == "LOSE"
    assert two.find_element(By.CSS_SELECTOR, ".money .amount").text == "COLLECT 50.00 USD"
    bull_cards = seat_box(driver, "banker").find_elements(By.CSS_SELECTOR, ".group.bull .card")
    bull = [c.get_attribute("data-code") for c in bull_cards]
    assert sorted(bull) == ["4S", "6H", "QD"]
    red = seat_box(driver, "banker").find_element(By.CSS_SELECTOR, '.card[data-code="6H"]')
    assert "red" in red.get_attribute("class")
    shots(driver, "dealer-1280x800-complete")

    driver.find_element(By.ID, "settle-btn").click()
    wait_text(driver, "#round-state", "SETTLED")
    # the house pays 285 and collects 50: -235, its 15 commission included (the banker's side lost 250)
    wait_text(driver, "#totals", "House -235.00 USD")
    assert "incl. commission 15.00 USD" in driver.find_element(By.ID, "totals").text
    drawn(driver, service)
    assert "final" in seat_box(driver, "1").find_element(By.CSS_SELECTOR, ".money").get_attribute("class")
    assert service.machine.state == "settled"

    # correction after settlement: tap the card, pick from the 52-card grid, supervisor PIN + reason
    click(driver, '.seat[data-seat="2"] .card[data-code="4D"]')
    dialog = driver.find_element(By.ID, "correct-dialog")
    WebDriverWait(driver, 5).until(lambda d: dialog.is_displayed())
    driver.find_element(By.CSS_SELECTOR, '#grid52 .gcard[data-code="9D"]').click()
    driver.find_element(By.ID, "correct-reason").send_keys("9 read as 4")
    driver.find_element(By.ID, "correct-pin").send_keys("1111")
    driver.find_element(By.ID, "correct-submit").click()
    wait_text(driver, "#correct-error", "PIN not recognised")
    shots(driver, "dealer-correction-dialog")
    pin = driver.find_element(By.ID, "correct-pin")
    pin.clear()
    pin.send_keys("4321")
    driver.find_element(By.ID, "correct-submit").click()
    wait_text(driver, '.seat[data-seat="2"] .category', "Niu Niu")
    drawn(driver, service)
    assert seat_box(driver, "2").find_element(By.CSS_SELECTOR, ".money .amount").text == "PAY 47.50 USD"
    # the multiple beside WIN is the one the money was computed with: an equal bet pays once,
    # whatever the hand would pay a double bet
    assert seat_box(driver, "2").find_elements(By.CSS_SELECTOR, ".verdict .mult") == []
    assert seat_box(driver, "1").find_element(By.CSS_SELECTOR, ".verdict .mult").text == "×3"
    corrected = [r for r in service.audit.records() if r.type == AuditType.CARD_CORRECTED]
    assert len(corrected) == 1
    assert (corrected[0].actor, corrected[0].data["approved_by"], corrected[0].data["old"],
            corrected[0].data["new"], corrected[0].data["reason"]) == ("dealer1", "super1", "4D", "9D", "9 read as 4")
    assert any(r.type == AuditType.SETTLEMENT_CORRECTED for r in service.audit.records())

    # the table is cleared: the round goes to the history strip and opens
    service.observe([], 2)
    WebDriverWait(driver, 5).until(EC.presence_of_element_located((By.CSS_SELECTOR, '.tile[data-round="1"]')))
    click(driver, '.tile[data-round="1"]')
    wait_text(driver, "#history-detail", "Round 1 · SETTLED")
    assert "47.5" in driver.find_element(By.ID, "history-detail").text
    driver.find_element(By.CSS_SELECTOR, "#history-dialog [data-close]").click()

    # the next round's stakes as the last one's, in one tap
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "repeat-btn")))
    assert driver.find_element(By.ID, "repeat-btn").text == "Same bets as #1"
    shots(driver, "dealer-1280x800-same-bets")
    click(driver, "#repeat-btn")
    wait_text(driver, '[data-bet-seat="1"]', "100.00 USD · double")
    wait_text(driver, '[data-bet-seat="2"]', "50.00 USD · equal")
    WebDriverWait(driver, 5).until(EC.invisibility_of_element_located((By.ID, "repeat-btn")))

    # a slow frame rate explains itself: model time and how many seat zones are read
    service.status = lambda: {"camera": "online", "fps": 4.2, "model": "test", "detect_ms": 61.5,
                              "motion_gate": True, "regions_read": 1.4, "regions_reused": 4.6}
    WebDriverWait(driver, 5).until(
        lambda d: "1.4 of 6 seat zones read" in (d.find_element(By.ID, "fps-pill").get_attribute("title") or ""))
    assert "61.5 ms" in driver.find_element(By.ID, "fps-pill").get_attribute("title")

    # a camera that saves mirror images is named, with its fix, while the cards are misread
    from vision.mirror import CAMERA_MIRRORED
    service.status = lambda: {"camera": "online", "fps": 4.2, "model": "test", "camera_warning": CAMERA_MIRRORED}
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "camera-warning")))
    assert "niuniu calibrate --mirror" in driver.find_element(By.ID, "camera-warning").text
    service.status = lambda: {"camera": "online", "fps": 4.2, "model": "test"}
    WebDriverWait(driver, 5).until(EC.invisibility_of_element_located((By.ID, "camera-warning")))

    # a data disk retention cannot free is on the screen days before the audit log fills it
    from kiosk.retention import disk_low_message
    from vision.retention import Unprunable
    from vision.table import RecordingSettings
    low = disk_low_message(3_200_000_000, RecordingSettings(min_keep_days=30), Unprunable(held=2, too_young=40))
    service.status = lambda: {"camera": "online", "fps": 4.2, "model": "test", "disk_warning": low}
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "disk-warning")))
    text = driver.find_element(By.ID, "disk-warning").text
    assert "DATA DISK LOW" in text and "3.2 GB free" in text and "2 held by surveillance" in text
    service.status = lambda: {"camera": "online", "fps": 4.2, "model": "test"}
    WebDriverWait(driver, 5).until(EC.invisibility_of_element_located((By.ID, "disk-warning")))

    # the camera alarm cannot be missed
    from vision.round import EventKind, RoundEvent
    service.on_pipeline_event(RoundEvent(EventKind.camera_offline, 1, 0.0, None, data={"reason": "unplugged"}))
    service.status = lambda: {"camera": "offline", "camera_reason": "unplugged", "fps": 0.0, "model": "test"}
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "camera-alarm")))
    assert "CAMERA OFFLINE" in driver.find_element(By.ID, "camera-alarm").text
    shots(driver, "dealer-1280x800-camera-offline")


SEVEN = ("banker", "1", "2", "3", "4", "5", "6", "7")
SEVEN_HANDS = {"1": "KS QS JS 10S 10H", "2": "AS 2S 3D 4D 5C", "3": "7C 8C 2D 6D 5S", "4": "KH KD KC QH QC",
               "5": "AH 3H 6S 8S 2C", "6": "JH JD 10D 7D 3S", "7": "8H 8D 4C 5H 6C"}


# The touch panels a dealer's screen is: 1280x800, the Pi's Touch Display 2 on its side, full HD.
SCREENS = [(1280, 800), (1280, 720), (1920, 1080)]


@pytest.mark.parametrize("live_kiosk", [SEVEN], indirect=True)
@pytest.mark.parametrize("size", SCREENS)
def test_seven_seats_fit_every_screen(browser, live_kiosk, shots, size):
    """The fullest table on each screen: no scrolling, nothing hidden under the round strip."""
    driver, service = browser, live_kiosk.service
    driver.viewport(*size)
    for seat in SEVEN_HANDS:  # bets through the service: the bet dialog has its own test above
        service.set_bet(seat, "10", "double" if int(seat) % 2 else "equal", "dealer1")
    log_in(driver, live_kiosk.url, "dealer1")
    service.observe([hand("banker", BANKER)] + [hand(s, t) for s, t in SEVEN_HANDS.items()], 1)
    wait_text(driver, '.seat[data-seat="7"] .category', "Bull")
    drawn(driver, service)
    assert seat_box(driver, "4").find_element(By.CSS_SELECTOR, ".category").text == "Five Face"
    metrics = driver.execute_script("return [document.documentElement.scrollHeight, window.innerHeight,"
                                    " document.documentElement.scrollWidth, window.innerWidth]")
    assert metrics[0] <= metrics[1] and metrics[2] <= metrics[3], metrics
    strip = driver.find_element(By.ID, "history").rect
    for seat in SEVEN_HANDS:  # every seat's money line is on screen, above the history strip
        rect = seat_box(driver, seat).rect
        assert rect["y"] + rect["height"] <= strip["y"], (seat, rect, strip)
    card = seat_box(driver, "1").find_element(By.CSS_SELECTOR, ".card").rect
    assert card["width"] >= 44, card   # large enough to read and to tap
    # the longest status line (NCNN model names, clock alarm) still leaves "Log out" on screen
    driver.execute_script("document.getElementById('model-pill').textContent ="
                          " 'MODEL index-detector_ncnn_model+card-classifier_ncnn_model';"
                          " document.getElementById('clock-pill').hidden = false;")
    logout = driver.find_element(By.CSS_SELECTOR, ".statusbar form button").rect
    assert logout["x"] + logout["width"] <= size[0], logout
    shots(driver, f"dealer-{size[0]}x{size[1]}-seven-seats")


@pytest.mark.parametrize("live_kiosk", [{"seats": SEVEN, "rules": "grab-banker"}], indirect=True)
@pytest.mark.parametrize("size", SCREENS)
def test_grab_banker_bid_and_multiples_fit_every_screen(browser, live_kiosk, shots, size):
    """The bank bid on the banker's seat, a multiple beside each stake, both in the payout."""
    driver, service = browser, live_kiosk.service
    driver.viewport(*size)
    for seat in SEVEN_HANDS:
        if seat != "1":
            service.set_bet(seat, "10", "standard", "dealer1", multiple=str(int(seat) % 5 + 1))
    log_in(driver, live_kiosk.url, "dealer1")
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "settle-btn")))
    click(driver, '[data-bet-seat="1"]')
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "bet-amount")))
    driver.find_element(By.ID, "bet-amount").send_keys("100")
    driver.find_element(By.CSS_SELECTOR, '#bet-multiples [data-multiple="3"]').click()
    shots(driver, f"dealer-{size[0]}x{size[1]}-grab-bet-dialog")
    driver.find_element(By.ID, "bet-submit").click()
    wait_text(driver, '[data-bet-seat="1"]', "100.00 USD · standard ×3")
    click(driver, "[data-bid-chip]")
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "bid-values")))
    shots(driver, f"dealer-{size[0]}x{size[1]}-grab-bid-dialog")
    driver.find_element(By.CSS_SELECTOR, '#bid-values [data-bid="2"]').click()
    wait_text(driver, "[data-bid-chip]", "Bid ×2")

    service.observe([hand("banker", BANKER)] + [hand(s, t) for s, t in SEVEN_HANDS.items()], 1)
    wait_text(driver, '.seat[data-seat="7"] .category', "Bull")
    drawn(driver, service)
    driver.find_element(By.ID, "settle-btn").click()
    wait_text(driver, "#round-state", "SETTLED")
    drawn(driver, service)
    # Niu Niu x3, bid x2, multiple x3: 100 x 18 = 1800, less 5%
    assert exact_text(driver, '.seat[data-seat="1"] .money .amount', "PAY 1,710.00 USD")
    assert exact_text(driver, '.seat[data-seat="1"] .money .factors', "×2 bid · ×3 multiple")
    metrics = driver.execute_script("return [document.documentElement.scrollHeight, window.innerHeight,"
                                    " document.documentElement.scrollWidth, window.innerWidth]")
    assert metrics[0] <= metrics[1] and metrics[2] <= metrics[3], metrics
    strip = driver.find_element(By.ID, "history").rect
    for seat in SEVEN_HANDS:
        rect = seat_box(driver, seat).rect
        assert rect["y"] + rect["height"] <= strip["y"], (seat, rect, strip)
    shots(driver, f"dealer-{size[0]}x{size[1]}-grab-banker")


def test_surveillance_sees_the_correction(browser, live_kiosk, shots):
    import re
    client = live_kiosk.app.test_client()
    page = client.get("/auth/login")
    token = re.search(r'name="csrf-token" content="([^"]+)"', page.get_data(as_text=True)).group(1)
    client.post("/auth/login", data={"username": "dealer1", "password": ACCOUNTS["dealer1"][1], "csrf_token": token})
    token = re.search(r'name="csrf-token" content="([^"]+)"', client.get("/dealer/").get_data(as_text=True)).group(1)
    client.post("/dealer/api/bet", json={"seat": "2", "amount": "50", "kind": "equal"}, headers={"X-CSRF-Token": token})
    live_kiosk.service.observe([hand("banker", BANKER), hand("2", SEAT_2)], 1)
    client.post("/dealer/api/correct", json={"seat": "2", "old": "5C", "new": "6C", "reason": "misread"},
                headers={"X-CSRF-Token": token})
    client.post("/dealer/api/settle", headers={"X-CSRF-Token": token})
    log_in(browser, live_kiosk.url, "watch1")
    WebDriverWait(browser, 5).until(EC.presence_of_element_located((By.ID, "round-list")))
    browser.find_element(By.LINK_TEXT, "#1").click()
    wait_text(browser, "#corrections", "5C → 6C")
    assert "misread" in browser.find_element(By.ID, "corrections").text
    shots(browser, "review-round-detail")


def test_chips_add_to_a_typed_stake_in_whole_cents(browser, live_kiosk):
    driver = browser
    log_in(driver, live_kiosk.url, "dealer1")
    click(driver, '[data-bet-seat="1"]')
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "bet-amount")))
    box = driver.find_element(By.ID, "bet-amount")
    box.clear()
    box.send_keys("0.56")
    driver.find_element(By.CSS_SELECTOR, '#bet-dialog .chip[data-add="5"]').click()
    assert box.get_attribute("value") == "5.56"          # not 5.5600000000000005
    driver.find_element(By.CSS_SELECTOR, '#bet-dialog .chip[data-add="100"]').click()
    assert box.get_attribute("value") == "105.56"
    driver.find_element(By.CSS_SELECTOR, '#bet-kinds [data-kind="equal"]').click()
    driver.find_element(By.ID, "bet-submit").click()
    wait_text(driver, '[data-bet-seat="1"]', "105.56 USD · equal")
