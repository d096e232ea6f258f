"""Every seat's box and the banker's stay in view at the README's smallest screen, 1280x720, and at
1280x800, whatever stands above them (QA53): two alarms across the screen, the steady NO
ORIENTATION MODEL line and an alarm, a long settle blocker with several alerts, the owed button,
the banker's Next stack chip, a grab-the-banker table.  A dealer working fast under the cameras
glances at the screen: a PAY/COLLECT line scrolled out of the seats, or cut off at the foot of
its box, is one paid wrong (QA: with two alarms the seats scrolled by some 40 px).  1024x600
and 800x480 may scroll, and are not checked here."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from kiosk.retention import Unprunable, disk_low_message
from kiosk.table_service import Approval
from kiosk_testing import HOUSE_STACK, hand
from test_dealer_screen import BANKER, SEVEN, SEVEN_HANDS, drawn, exact_text, log_in, wait_text

pytestmark = pytest.mark.browser

SIZES = [(1280, 720), (1280, 800)]
SUPER = Approval(requested_by="dealer1", approved_by="super1")
OFFLINE = {"camera": "offline", "camera_reason": "camera cable pulled", "fps": 0.0, "model": "test"}

# Each seat's box and money line, and the banker's: the part of it the dealer cannot see, in px
# (below or above the window, below the round strip, or outside a box that clips or scrolls it),
# and whether the page itself scrolls.
HIDDEN = """
const strip = document.getElementById('history').getBoundingClientRect();
const hidden = [];
for (const node of document.querySelectorAll('.seat, .seat .money')) {
  const r = node.getBoundingClientRect();
  let top = 0, bottom = Math.min(innerHeight, strip.top);
  for (let p = node.parentElement; p && p !== document.body; p = p.parentElement) {
    const s = getComputedStyle(p);
    if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
    const c = p.getBoundingClientRect();
    top = Math.max(top, c.top + p.clientTop);
    bottom = Math.min(bottom, c.top + p.clientTop + p.clientHeight);
  }
  const cut = Math.max(0, top - r.top) + Math.max(0, r.bottom - bottom);
  if (cut > 0.5) hidden.push(node.closest('.seat').dataset.seat + ' ' + node.className + ': '
                             + Math.round(cut) + ' px out of view');
}
const page = document.documentElement;
if (page.scrollHeight > innerHeight || page.scrollWidth > innerWidth) hidden.push('the page scrolls');
const seats = document.getElementById('seats');
const scrolled = seats.scrollHeight - seats.clientHeight;
if (scrolled > 0) hidden.push('the seats scroll by ' + scrolled + ' px');
return hidden;
"""

# How many lines an alarm's words take, and whether ``phrase`` in it is drawn inside the alarm's box
# (not past its "…").
HEADLINE = """
const alarm = document.getElementById(arguments[0]);
const style = getComputedStyle(alarm);
const lines = Math.round((alarm.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom))
                         / parseFloat(style.lineHeight));
const walker = document.createTreeWalker(alarm, NodeFilter.SHOW_TEXT);
const box = alarm.getBoundingClientRect();
for (let node; (node = walker.nextNode());) {
  const at = node.data.indexOf(arguments[1]);
  if (at < 0) continue;
  const words = document.createRange();
  words.setStart(node, at);
  words.setEnd(node, at + arguments[1].length);
  const r = words.getBoundingClientRect();
  return {lines: lines, whole: r.left >= box.left && r.right <= box.right && r.bottom <= box.bottom + 0.5};
}
return {lines: lines, whole: false};
"""


def two_alarms(orientation: bool = False) -> dict:
    """The camera offline and the data disk low, as the kiosk's status says them; with the
    orientation model missing, its steady line in place of the disk's."""
    status = dict(OFFLINE)
    if orientation:
        status["orientation_missing"] = "/opt/niuniu/models/card-orientation.pt"
    else:
        status["disk_warning"] = disk_low_message(int(3.2e9), SimpleNamespace(min_free_gb=5.0, min_keep_days=30.0),
                                                  Unprunable(held=2, too_young=41))
    return status


def bet_seven(service, kind="double"):
    for seat in SEVEN_HANDS:
        service.set_bet(seat, "100", kind, "dealer1")


def deal_seven(service, frame=1):
    service.observe([hand("banker", BANKER)] + [hand(s, t) for s, t in SEVEN_HANDS.items()], frame)


def alarmed(driver, live_kiosk, status):
    service = live_kiosk.service
    service.status = lambda: dict(status)
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "camera-alarm")))
    drawn(driver, service)
    # two frames drawn: the seats fitted to the place the alarms left them (dealer.js fitSeats)
    driver.execute_async_script("const done = arguments[0];"
                                " requestAnimationFrame(() => requestAnimationFrame(() => done()));")


def assert_all_in_view(driver, shots, name):
    hidden = driver.execute_script(HIDDEN)
    size = driver.execute_script("return innerWidth + 'x' + innerHeight")
    shots(driver, f"fits-{name}-{size}")
    assert not hidden, f"{name} at {size}: {hidden}"
    assert len(driver.find_elements(By.CSS_SELECTOR, "#seats .seat")) == 7
    # the cards give way, but stay large enough to read and to tap
    card = driver.find_element(By.CSS_SELECTOR, "#seats .card").rect
    assert card["width"] >= 44, card


@pytest.mark.parametrize("live_kiosk", [SEVEN], indirect=True)
@pytest.mark.parametrize("size", SIZES)
def test_seven_seats_and_the_banker_stay_in_view_under_two_alarms(browser, live_kiosk, shots, size):
    driver, service = browser, live_kiosk.service
    driver.viewport(*size)
    bet_seven(service)
    log_in(driver, live_kiosk.url, "super1")
    deal_seven(service)
    wait_text(driver, '.seat[data-seat="7"] .category', "Bull")
    alarmed(driver, live_kiosk, two_alarms())
    assert_all_in_view(driver, shots, "two-alarms")
    # each alarm on one line, its headline whole; a tap shows all of the disk's words, another
    # puts them back on their line
    for alarm, headline in (("camera-alarm", "CAMERA OFFLINE — STOP DEALING"),
                            ("disk-warning", "DATA DISK LOW — call the supervisor")):
        shown = driver.execute_script(HEADLINE, alarm, headline)
        assert shown["lines"] == 1 and shown["whole"], (alarm, shown)
    driver.find_element(By.ID, "disk-warning").click()
    shown = driver.execute_script(HEADLINE, "disk-warning", "the audit log fills it and the table stops")
    assert shown["lines"] > 1 and shown["whole"], shown
    driver.find_element(By.ID, "disk-warning").click()
    assert driver.execute_script(HEADLINE, "disk-warning", "DATA DISK LOW")["lines"] == 1
    assert not driver.execute_script(HIDDEN)


@pytest.mark.parametrize("live_kiosk", [SEVEN], indirect=True)
@pytest.mark.parametrize("size", SIZES)
def test_the_steady_orientation_line_and_an_alarm(browser, live_kiosk, shots, size):
    driver, service = browser, live_kiosk.service
    driver.viewport(*size)
    bet_seven(service)
    log_in(driver, live_kiosk.url, "dealer1")
    deal_seven(service)
    wait_text(driver, '.seat[data-seat="7"] .category', "Bull")
    alarmed(driver, live_kiosk, two_alarms(orientation=True))
    assert driver.find_element(By.ID, "model-warning").is_displayed()
    assert_all_in_view(driver, shots, "orientation")


@pytest.mark.parametrize("live_kiosk", [{"seats": SEVEN, "rules": "grab-banker"}], indirect=True)
@pytest.mark.parametrize("size", SIZES)
def test_a_grab_banker_table_under_two_alarms(browser, live_kiosk, shots, size):
    driver, service = browser, live_kiosk.service
    driver.viewport(*size)
    for seat in SEVEN_HANDS:
        service.set_bet(seat, "100", "standard", "dealer1", multiple=str(int(seat) % 5 + 1))
    service.set_bid("2", "dealer1")
    log_in(driver, live_kiosk.url, "dealer1")
    deal_seven(service)
    wait_text(driver, '.seat[data-seat="7"] .category', "Bull")
    alarmed(driver, live_kiosk, two_alarms())
    assert_all_in_view(driver, shots, "grab")


@pytest.mark.parametrize("live_kiosk", [SEVEN], indirect=True)
@pytest.mark.parametrize("size", SIZES)
def test_the_owed_button_under_two_alarms(browser, live_kiosk, shots, size):
    driver, service = browser, live_kiosk.service
    driver.viewport(*size)
    bet_seven(service)
    deal_seven(service)
    service.settle("dealer1")
    log_in(driver, live_kiosk.url, "dealer1")
    service.correct("2", "4D", "9D", "dealer1", "9 read as 4", SUPER, round_no=1)
    wait_text(driver, "#owed-title", "⚖ Round 1 owes")
    alarmed(driver, live_kiosk, two_alarms())
    assert_all_in_view(driver, shots, "owed")


@pytest.mark.parametrize("live_kiosk", [{"seats": SEVEN, "rules": str(HOUSE_STACK)}], indirect=True)
@pytest.mark.parametrize("size", SIZES)
def test_the_next_stack_chip_under_two_alarms(browser, live_kiosk, shots, size):
    driver, service = browser, live_kiosk.service
    driver.viewport(*size)
    bet_seven(service, "standard")
    service.set_stack("1500", "dealer1")
    deal_seven(service)
    service.settle("dealer1")
    service.set_stack("123456", "dealer1")
    log_in(driver, live_kiosk.url, "dealer1")
    assert exact_text(driver, "[data-stack-chip]", "Next stack 123,456.00 USD")
    alarmed(driver, live_kiosk, two_alarms())
    assert_all_in_view(driver, shots, "next-stack")


@pytest.mark.parametrize("live_kiosk", [SEVEN], indirect=True)
@pytest.mark.parametrize("size", SIZES)
def test_a_long_blocker_and_several_alerts_under_two_alarms(browser, live_kiosk, shots, size):
    """The blocker and the alerts scroll in their own column: they push no seat down."""
    driver, service = browser, live_kiosk.service
    driver.viewport(*size)
    bet_seven(service)
    log_in(driver, live_kiosk.url, "dealer1")
    hands = dict(SEVEN_HANDS, **{"2": "AS 2S 3D 4D 5C 9S", "6": "JH JD 10D 7D 3S 2H", "7": "8H 8D 4C 5H 6C 7H"})
    service.observe([hand("banker", BANKER)] + [hand(s, t) for s, t in hands.items()], 1)
    WebDriverWait(driver, 5).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#alerts .alert")) == 3)
    wait_text(driver, "#settle-blocker", "6 cards")
    alarmed(driver, live_kiosk, two_alarms())
    assert_all_in_view(driver, shots, "blocker")
