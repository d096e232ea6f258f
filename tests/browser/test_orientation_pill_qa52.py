"""The dealer's screen says, in words the dealer can read, that the reader has no orientation model
(QA52): the cards are then read without being turned upright and misread more, and the table is
told whom to call.  Words in the DOM are not enough: the MODEL pill once held them, but its
ellipsis cut them off at every screen size (QA52 review M1), so this checks where the words are
drawn against every box that clips them.  The status is the kiosk's own (``TableService.status``),
from the same ``detector_info`` that ``niuniu kiosk`` fills from its reader."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from test_dealer_screen import BANKER, SCREENS, SEVEN, SEVEN_HANDS, drawn, hand, log_in, seat_box, wait_text

pytestmark = pytest.mark.browser

MISSING = "/opt/niuniu/models/card-orientation.pt"
READER = "index-detector.pt+card-classifier.pt"      # CardDetector.name, as `niuniu kiosk` reports it

# Where a phrase's own glyphs lie, and every box that shows only part of them: an ancestor that
# clips (overflow other than visible) and ends before the words do, or the window itself.
WHERE_DRAWN = """
const phrase = arguments[0].toLowerCase();
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let node; (node = walker.nextNode());) {
  const at = node.data.toLowerCase().indexOf(phrase);
  const box = node.parentElement;
  if (at < 0 || !box.checkVisibility()) continue;
  const range = document.createRange();
  range.setStart(node, at);
  range.setEnd(node, at + phrase.length);
  const words = range.getBoundingClientRect();
  const cut = [];
  if (words.left < 0 || words.top < 0 || words.right > innerWidth + 0.5
      || words.bottom > innerHeight + 0.5) cut.push("window");
  for (let e = box; e && e !== document.documentElement; e = e.parentElement) {
    const style = getComputedStyle(e);
    if (style.overflowX === "visible" && style.overflowY === "visible") continue;
    const r = e.getBoundingClientRect();
    const left = r.left + e.clientLeft, top = r.top + e.clientTop;
    if (words.left < left - 0.5 || words.top < top - 0.5 || words.right > left + e.clientWidth + 0.5
        || words.bottom > top + e.clientHeight + 0.5) cut.push("#" + e.id + "." + e.className);
  }
  return {id: box.id, text: box.innerText, title: box.title, cut: cut,
          words: [Math.round(words.left), Math.round(words.right)],
          inked: [box.scrollWidth, box.clientWidth, box.scrollHeight, box.clientHeight]};
}
return null;
"""


def where_drawn(driver, phrase):
    return driver.execute_script(WHERE_DRAWN, phrase)


def pill(driver):
    return driver.find_element(By.ID, "model-pill")


@pytest.mark.parametrize("live_kiosk", [SEVEN], indirect=True)
@pytest.mark.parametrize("size", SCREENS)
def test_the_screen_says_in_drawn_words_that_the_orientation_model_is_missing(browser, live_kiosk, shots, size):
    driver, service = browser, live_kiosk.service
    driver.viewport(*size)
    service.detector_info["name"] = READER
    for seat in SEVEN_HANDS:
        service.set_bet(seat, "10", "double", "dealer1")
    log_in(driver, live_kiosk.url, "super1")            # the supervisor's status bar: Shift report too
    service.observe([hand("banker", BANKER)] + [hand(s, t) for s, t in SEVEN_HANDS.items()], 1)
    wait_text(driver, '.seat[data-seat="7"] .category', "Bull")
    WebDriverWait(driver, 5).until(lambda d: pill(d).text.startswith("MODEL index-detector"))
    assert where_drawn(driver, "orientation model") is None     # a reader with its orientation model: as before
    assert "warn" not in pill(driver).get_attribute("class")

    service.detector_info["orientation_missing"] = MISSING
    WebDriverWait(driver, 5).until(lambda d: where_drawn(d, "no orientation model") is not None)
    drawn(driver, service)
    for phrase in ("no orientation model", "call the technician"):
        shown = where_drawn(driver, phrase)
        assert shown is not None, phrase
        assert not shown["cut"], f"{phrase!r} is cut off by {shown['cut']} at {size}: {shown}"
        inked = shown["inked"]
        assert inked[0] <= inked[1] and inked[2] <= inked[3], f"{shown['id']}'s text overflows at {size}: {shown}"
    warning = where_drawn(driver, "no orientation model")
    assert MISSING in warning["title"] and "misread more" in warning["title"], warning
    assert "warn" in pill(driver).get_attribute("class") and pill(driver).text.startswith("MODEL index-detector")

    # the warning takes nothing from the table: no scrolling, every seat's money line above the
    # round strip, Log out on screen
    metrics = driver.execute_script("return [document.documentElement.scrollHeight, window.innerHeight,"
                                    " document.documentElement.scrollWidth, window.innerWidth]")
    assert metrics[0] <= metrics[1] and metrics[2] <= metrics[3], metrics
    strip = driver.find_element(By.ID, "history").rect
    for seat in SEVEN_HANDS:
        rect = seat_box(driver, seat).rect
        assert rect["y"] + rect["height"] <= strip["y"], (seat, rect, strip)
    logout = driver.find_element(By.CSS_SELECTOR, ".statusbar form button").rect
    assert logout["x"] + logout["width"] <= size[0], logout
    shots(driver, f"dealer-{size[0]}x{size[1]}-no-orientation-model")

    del service.detector_info["orientation_missing"]     # restored, the kiosk restarted: as before
    WebDriverWait(driver, 5).until(lambda d: where_drawn(d, "orientation model") is None)
    WebDriverWait(driver, 5).until(EC.invisibility_of_element_located((By.CSS_SELECTOR, "#model-pill.warn")))
