"""What the dealer and the supervisor could not see at 1280x720, the README's smallest screen (QA53 L7,
L10).  The info column left of the banker (the round's figures, the settle blocker, the alerts) scrolls
inside itself: with a long blocker three alerts were a thin orange edge at its foot and nothing said
there was more, and the blocker's last line was cut through, half of it shown.  The supervisor's status
bar broke its items over two lines ("Table / t1", "Log / out"); a toast lay over the camera, FPS and
round-state pills for its 5 to 15 s.  On the surveillance desk "record as logged" was a 15 px target
and the filters' examples ("7", "KH") read like values typed."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from kiosk_testing import HOUSE_STACK, hand
from test_access_qa53 import contrast_ratio, review_rounds, rgb
from test_dealer_fits_qa53 import alarmed, bet_seven, deal_seven, two_alarms
from test_dealer_screen import BANKER, SEVEN, SEVEN_HANDS, drawn, exact_text, log_in, wait_text

pytestmark = pytest.mark.browser

# The info column as the dealer sees it: the part of the column not under the marker, every line of
# words in it that this part cuts through (some of it shown, some not), where each alert's first line
# is (shown whole, or above or below what is shown), and the marker's words where it is shown.
SEEN = """
const info = document.querySelector('aside.info');
const box = info.getBoundingClientRect();
let bottom = box.top + info.clientTop + info.clientHeight;
const marker = document.getElementById('info-more');
const shown = marker && !marker.hidden && getComputedStyle(marker).display !== 'none';
if (shown) bottom = Math.min(bottom, marker.getBoundingClientRect().top);
const top = box.top + info.clientTop;
const lines = [];
const walker = document.createTreeWalker(info, NodeFilter.SHOW_TEXT);
for (let node; (node = walker.nextNode());) {
  if (!node.data.trim() || !node.parentElement.offsetParent) continue;
  const words = document.createRange();
  words.selectNodeContents(node);
  for (const r of words.getClientRects()) lines.push({el: node.parentElement, top: r.top, bottom: r.bottom});
}
const cut = (r) => (r.top < bottom - 0.5 && r.bottom > bottom + 0.5) || (r.top < top - 0.5 && r.bottom > top + 0.5);
const alerts = [...document.querySelectorAll('#alerts .alert')].map((a) => {
  const first = lines.filter((l) => a.contains(l.el)).sort((x, y) => x.top - y.top)[0];
  return first.bottom > bottom + 0.5 ? 'below' : first.top < top - 0.5 ? 'above' : 'shown';
});
return {alerts: alerts, marker: shown ? marker.innerText : null,
        cut: lines.filter(cut).map((l) => l.el.className + ' ' + l.el.id + ': ' + JSON.stringify(l)),
        blocker: document.getElementById('settle-blocker').innerText};
"""


def seen(driver):
    return driver.execute_script(SEEN)


def told_of_every_alert(found):
    """Each alert's first line in view, or the marker naming how many are below it."""
    hidden = found["alerts"].count("below")
    if not hidden:
        return True
    words = f"{hidden} alert" + ("s" if hidden > 1 else "")
    return bool(found["marker"]) and words in found["marker"]


@pytest.mark.parametrize("live_kiosk", [SEVEN], indirect=True)
def test_a_dealer_is_told_of_alerts_below_the_fold_and_no_line_is_cut(browser, live_kiosk, shots):
    driver, service = browser, live_kiosk.service
    driver.viewport(1280, 720)
    bet_seven(service)
    log_in(driver, live_kiosk.url, "dealer1")
    hands = dict(SEVEN_HANDS, **{"2": "AS 2S 3D 4D 5C 9S", "6": "JH JD 10D 7D 3S 2H", "7": "8H 8D 4C 5H 6C 7H"})
    service.observe([hand("banker", BANKER)] + [hand(s, t) for s, t in hands.items()], 1)
    WebDriverWait(driver, 5).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#alerts .alert")) == 3)
    wait_text(driver, "#settle-blocker", "6 cards")
    alarmed(driver, live_kiosk, two_alarms())
    found = seen(driver)
    shots(driver, "info-column-alerts-1280x720")
    assert "below" in found["alerts"], found          # the test's point: the column is too short
    assert told_of_every_alert(found) is True, found
    assert not found["cut"], found
    # the six cards of a hand with one too many stay inside their seat's box
    outside = driver.execute_script(
        "return [...document.querySelectorAll('#seats .card')].filter((c) => { const r = c.getBoundingClientRect(),"
        " b = c.closest('.seat').getBoundingClientRect(); return r.left < b.left || r.right > b.right; })"
        ".map((c) => c.closest('.seat').dataset.seat + ' ' + c.dataset.code)")
    assert outside == [], outside
    # a tap on the marker brings what is below into view, each alert's first line in turn; at the end
    # the marker takes the dealer back to the figures at the top
    ever = [False] * 3
    for _ in range(6):
        ever = [a or b == "shown" for a, b in zip(ever, found["alerts"])]
        if found["marker"] and "top" in found["marker"]:
            break
        driver.find_element(By.ID, "info-more").click()
        driver.execute_async_script("requestAnimationFrame(() => requestAnimationFrame(arguments[0]))")
        found = seen(driver)
        assert not found["cut"], found
        assert told_of_every_alert(found) is True, found
    assert all(ever), (ever, found)
    shots(driver, "info-column-alerts-scrolled-1280x720")
    driver.find_element(By.ID, "info-more").click()
    assert driver.execute_script("return document.querySelector('aside.info').scrollTop") == 0


@pytest.mark.parametrize("live_kiosk", [{"seats": SEVEN, "rules": str(HOUSE_STACK)}], indirect=True)
def test_the_settled_line_is_never_cut_mid_line(browser, live_kiosk, shots):
    driver, service = browser, live_kiosk.service
    driver.viewport(1280, 720)
    bet_seven(service, "standard")
    service.set_stack("1500", "dealer1")
    deal_seven(service)
    service.settle("dealer1")
    service.set_stack("123456", "dealer1")
    log_in(driver, live_kiosk.url, "dealer1")
    assert exact_text(driver, "[data-stack-chip]", "Next stack 123,456.00 USD")
    alarmed(driver, live_kiosk, two_alarms())
    found = seen(driver)
    shots(driver, "info-column-next-stack-1280x720")
    assert "Bets are open for round 2" in found["blocker"], found
    assert not found["cut"], found


# Every item of the status bar whose words take more than one line: a line starts where a word's
# box begins below the last one's.
BROKEN = """
return [...document.querySelectorAll('.statusbar .sb-left > *, .statusbar .sb-right > *')]
  .filter((item) => item.offsetParent && item.innerText.trim())
  .map((item) => {
    const boxes = [];
    const walker = document.createTreeWalker(item, NodeFilter.SHOW_TEXT);
    for (let node; (node = walker.nextNode());) {
      const words = document.createRange(); words.selectNodeContents(node);
      boxes.push(...[...words.getClientRects()].filter((r) => r.width > 0));
    }
    boxes.sort((a, b) => a.top - b.top);
    let lines = 0, bottom = -Infinity;
    for (const r of boxes) if (r.top >= bottom - 2) { lines += 1; bottom = r.bottom; }
    return [item.innerText, lines]; })
  .filter(([, lines]) => lines > 1);
"""


def overlap(a, b):
    return max(0, min(a["right"], b["right"]) - max(a["left"], b["left"])) * \
        max(0, min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]))


RECTS = "return [...document.querySelectorAll(arguments[0])].map((n) => n.getBoundingClientRect().toJSON())"


@pytest.mark.parametrize("live_kiosk", [SEVEN], indirect=True)
def test_the_supervisor_s_status_bar_is_one_line_and_no_toast_covers_it(browser, live_kiosk, shots):
    driver, service = browser, live_kiosk.service
    driver.viewport(1280, 720)
    bet_seven(service)
    log_in(driver, live_kiosk.url, "super1")
    deal_seven(service)
    wait_text(driver, '.seat[data-seat="7"] .category', "Bull")
    drawn(driver, service)
    # the QA's bar: no camera, the clock not synchronised, Shift report, "super1 · supervisor"
    service.status = lambda: {"camera": "unknown", "fps": None, "model": "test",
                              "clock": {"synchronised": False, "message": "no NTP"}}
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "clock-pill")))
    shots(driver, "status-bar-supervisor-1280x720")
    assert driver.execute_script(BROKEN) == []
    logout = driver.find_element(By.CSS_SELECTOR, ".statusbar form button").rect
    assert logout["x"] + logout["width"] <= 1280, logout
    # Confirm & settle: its toast covers neither the pills nor a seat's PAY/COLLECT line
    driver.find_element(By.ID, "settle-btn").click()
    wait_text(driver, "#toast.show", "settled")
    toast = driver.execute_script(RECTS, "#toast")[0]
    shots(driver, "status-bar-toast-1280x720")
    for covered in driver.execute_script(RECTS, ".statusbar .pill, .state-badge, #seats .money, .actions .btn"):
        assert overlap(toast, covered) == 0, (toast, covered)


def test_the_desk_s_record_toggle_is_a_target_and_its_examples_read_as_hints(browser, live_kiosk):
    driver = browser
    review_rounds(driver, live_kiosk)
    driver.get(live_kiosk.url + "review/round/1")
    toggle = WebDriverWait(driver, 5).until(EC.presence_of_element_located((By.CSS_SELECTOR, "details.raw summary")))
    assert toggle.rect["height"] >= 24, toggle.rect
    driver.get(live_kiosk.url + "review/")
    field = driver.find_element(By.CSS_SELECTOR, 'input[name="round"]')
    assert field.get_attribute("placeholder").startswith("e.g. "), field.get_attribute("placeholder")
    hint = driver.execute_script("const s = getComputedStyle(arguments[0], '::placeholder');"
                                 " return [s.color, s.fontStyle]", field)
    typed, ground = rgb(field.value_of_css_property("color")), rgb(field.value_of_css_property("background-color"))
    # dimmer than what is typed, slanted, and still legible (4.5:1)
    assert contrast_ratio(rgb(hint[0]), ground) < contrast_ratio(typed, ground), hint
    assert contrast_ratio(rgb(hint[0]), ground) >= 4.5, hint
    assert hint[1] == "italic", hint
