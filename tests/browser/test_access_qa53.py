"""What a colour-blind dealer, a keyboard user and a surveillance officer at 200 % zoom meet on the
screens (QA53 Q5): each measured in the browser, from computed styles and boxes.

A deuteranope (about 1 man in 12) sees the kiosk's old red/green pairs as one olive: the win and the
loss of each pair must differ in lightness too, which survives the simulation (Machado et al. 2009,
severity 1, on linear RGB: the QA's probe).  The words (PAY/COLLECT, WIN/LOSE) stay."""

from __future__ import annotations

import re

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from kiosk_testing import hand, play
from test_dealer_screen import BANKER, SEVEN, SEVEN_HANDS, click, drawn, log_in, settled_two_seats, wait_text
from test_dealer_ux import contrast

pytestmark = pytest.mark.browser

# L* apart, of the two colours as a deuteranope sees them: about the step between the dealer's grey
# felt (#184a31, L* 28) and its lighter seat frame; the old PAY/COLLECT bands were 9 apart.
LIGHTNESS_APART = 25

DEUTAN = ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413), (-0.011820, 0.042940, 0.968881))


def _linear(channel: float) -> float:
    channel /= 255
    return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4


def rgb(css: str) -> tuple[int, int, int]:
    """The first colour of a computed style ("rgb(15, 90, 49)", or a box-shadow that starts with one)."""
    found = re.search(r"rgba?\((\d+), (\d+), (\d+)", css)
    assert found, css
    return tuple(int(v) for v in found.groups())


def deutan_lightness(colour: tuple[int, int, int]) -> float:
    """CIE L* of ``colour`` as a deuteranope sees it."""
    lin = [_linear(c) for c in colour]
    seen = [min(1.0, max(0.0, sum(m * c for m, c in zip(row, lin)))) for row in DEUTAN]
    y = 0.2126 * seen[0] + 0.7152 * seen[1] + 0.0722 * seen[2]
    return 116 * y ** (1 / 3) - 16 if y > 0.008856 else 903.3 * y


def contrast_ratio(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    def lum(c):
        lin = [_linear(v) for v in c]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    x, y = lum(a), lum(b)
    return (max(x, y) + 0.05) / (min(x, y) + 0.05)


STYLE = "return getComputedStyle(document.querySelector(arguments[0]))[arguments[1]];"


def style(driver, css, prop):
    return driver.execute_script(STYLE, css, prop)


def dealt_seven(driver, live_kiosk):
    service = live_kiosk.service
    for seat in SEVEN_HANDS:
        service.set_bet(seat, "100", "double", "dealer1")
    log_in(driver, live_kiosk.url, "dealer1")
    service.observe([hand("banker", BANKER)] + [hand(s, t) for s, t in SEVEN_HANDS.items()], 1)
    wait_text(driver, '.seat[data-seat="7"] .category', "Bull")
    drawn(driver, service)
    return service


@pytest.mark.parametrize("live_kiosk", [SEVEN], indirect=True)
def test_win_and_loss_differ_in_lightness_to_a_deuteranope(browser, live_kiosk):
    driver = browser
    driver.viewport(1280, 800)
    dealt_seven(driver, live_kiosk)
    # the house's total, up or down: both drawn, as each round shows one of them
    driver.execute_script("for (const kind of ['collect', 'pay']) { const line = document.createElement('div');"
                          " line.className = 't-line ' + kind; line.id = 'total-' + kind; line.textContent = 'House';"
                          " document.getElementById('totals').appendChild(line); }")
    pairs = {
        "PAY / COLLECT band": (".money.pay", ".money.collect", "backgroundColor"),
        "WIN / LOSE badge": (".outcome.win", ".outcome.lose", "backgroundColor"),
        "seat frame": (".seat.win", ".seat.lose", "borderTopColor"),
        "House + / -": ("#total-collect", "#total-pay", "color"),
    }
    apart = {}
    for name, (win, lose, prop) in pairs.items():
        lightness = [deutan_lightness(rgb(style(driver, css, prop))) for css in (win, lose)]
        apart[name] = abs(lightness[0] - lightness[1])
    assert all(v >= LIGHTNESS_APART for v in apart.values()), apart
    # the words on them still read at 4.5:1
    found = contrast(driver, {"PAY": ".money.pay .amount", "PAY commission": ".money.pay small",
                              "COLLECT": ".money.collect .amount", "WIN": ".outcome.win", "LOSE": ".outcome.lose",
                              "House +": "#total-collect", "House -": "#total-pay"})
    assert all(f["ratio"] >= 4.5 for f in found.values()), found


# The PAY/COLLECT amount on a 10.1" 1280x800 panel (0.170 mm a px), at 70 cm: 24 px is a cap height of
# 3.0 mm, 14.6 arcmin (19 px was 11.6); the ISO 9241-303 minimum is 16 arcmin, the README's 13-16"
# screens give that and more.  On a 1920x1080 one, 32 px (28 px was).
ONE_LINE = """return [...document.querySelectorAll('#seats .money .amount')].map((a) => { const s = getComputedStyle(a);
  return [a.textContent, parseFloat(s.fontSize), a.getClientRects().length === 1
          && a.getBoundingClientRect().height < 1.5 * parseFloat(s.lineHeight)]; });"""


@pytest.mark.parametrize("live_kiosk", [SEVEN], indirect=True)
@pytest.mark.parametrize("size, large", [((1280, 800), 24), ((1920, 1080), 32)])
def test_the_amounts_are_larger_where_the_screen_has_room(browser, live_kiosk, shots, size, large):
    driver = browser
    driver.viewport(*size)
    dealt_seven(driver, live_kiosk)
    shots(driver, "amounts-%dx%d" % size)
    amounts = driver.execute_script(ONE_LINE)
    assert len(amounts) == 7
    assert all(px >= large and one for _, px, one in amounts), amounts
    # seven seats still in view, cards no narrower than a finger
    assert driver.execute_script("const s = document.getElementById('seats'); return s.scrollHeight <= s.clientHeight")
    assert driver.find_element(By.CSS_SELECTOR, "#seats .card").rect["width"] >= 44


@pytest.mark.parametrize("live_kiosk", [SEVEN], indirect=True)
def test_a_slow_camera_is_said_in_words(browser, live_kiosk):
    driver, service = browser, live_kiosk.service
    dealt_seven(driver, live_kiosk)
    service.status = lambda: {"camera": "online", "fps": 1.5, "model": "test"}
    WebDriverWait(driver, 5).until(EC.text_to_be_present_in_element((By.ID, "fps-pill"), "1.5 FPS"))
    assert driver.find_element(By.ID, "fps-pill").text == "1.5 FPS · SLOW"
    service.status = lambda: {"camera": "online", "fps": 8.0, "model": "test"}
    WebDriverWait(driver, 5).until(EC.text_to_be_present_in_element((By.ID, "fps-pill"), "8 FPS"))
    assert "SLOW" not in driver.find_element(By.ID, "fps-pill").text


@pytest.mark.parametrize("live_kiosk", [SEVEN], indirect=True)
def test_the_blinking_offline_pill_never_vanishes(browser, live_kiosk):
    driver, service = browser, live_kiosk.service
    dealt_seven(driver, live_kiosk)
    service.status = lambda: {"camera": "offline", "camera_reason": "cable pulled", "fps": 0.0, "model": "test"}
    WebDriverWait(driver, 5).until(EC.presence_of_element_located((By.CSS_SELECTOR, "#camera-pill.bad")))
    # both halves of its blink, held still: the pill drawn, its words on it at 4.5:1
    for at in (250, 750):
        shown = driver.execute_script(
            "const pill = document.getElementById('camera-pill');"
            "pill.getAnimations().forEach((a) => { a.pause(); a.currentTime = arguments[0]; });"
            "const s = getComputedStyle(pill); return [s.visibility, s.backgroundColor, s.color];", at)
        assert shown[0] == "visible", (at, shown)
        assert contrast_ratio(rgb(shown[1]), rgb(shown[2])) >= 4.5, (at, shown)


@pytest.mark.parametrize("live_kiosk", [{"seats": ("banker", "1", "2"), "rules": "grab-banker"}], indirect=True)
def test_the_bet_dialog_names_its_amount_and_presses_the_chosen_kind(browser, live_kiosk):
    driver = browser
    log_in(driver, live_kiosk.url, "dealer1")
    click(driver, '.seat[data-seat="1"] .bet-chip')
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "bet-amount")))
    label = driver.execute_script("return [...document.getElementById('bet-amount').labels].map(l => l.innerText)")
    assert label == ["Stake"]
    for row in ("bet-kinds", "bet-multiples"):
        toggles = driver.find_elements(By.CSS_SELECTOR, f"#{row} .kind")
        toggles[-1].click()
        pressed = [t.get_attribute("aria-pressed") for t in toggles]
        assert pressed == ["false"] * (len(toggles) - 1) + ["true"], (row, pressed)
        # a ✓ before the chosen one's words, not the gold alone
        mark = driver.execute_script("return getComputedStyle(arguments[0], '::before').content", toggles[-1])
        assert "✓" in mark, mark
        if len(toggles) > 1:
            assert "✓" not in driver.execute_script("return getComputedStyle(arguments[0], '::before').content",
                                                    toggles[0])


def test_a_history_tiles_marks_say_what_they_mean(browser, live_kiosk):
    driver = browser
    service = settled_two_seats(driver, live_kiosk)
    from kiosk.table_service import Approval
    service.correct("2", "4D", "9D", "dealer1", "9 read as 4", Approval(requested_by="dealer1", approved_by="super1"),
                    round_no=1)
    WebDriverWait(driver, 5).until(EC.presence_of_element_located((By.CSS_SELECTOR, '.tile[data-round="1"] .mark')))
    drawn(driver, service)
    tile = driver.find_element(By.CSS_SELECTOR, '.tile[data-round="1"]')
    marks = {m.text: m.get_attribute("title") for m in tile.find_elements(By.CSS_SELECTOR, ".mark")}
    assert marks == {"✎": "corrected", "⚖": "adjustment outstanding"}
    assert tile.get_attribute("title") == "corrected, adjustment outstanding"


def test_the_supervisor_pin_is_a_few_tabs_from_the_card_grid(browser, live_kiosk):
    """After Settle the correction dialog opens on the 52 cards: the arrow keys move through them,
    and Tab leaves them for the Reason and the PIN (it took 33 Tabs)."""
    driver = browser
    settled_two_seats(driver, live_kiosk)
    click(driver, '.seat[data-seat="2"] .card[data-code="4D"]')
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "correct-pin")))
    active = "return document.activeElement.id || document.activeElement.dataset.code || ''"
    driver.execute_script("document.querySelector('#grid52 .gcard:not(:disabled)').focus()")
    first = driver.execute_script(active)
    ActionChains(driver).send_keys(Keys.ARROW_RIGHT).perform()
    second = driver.execute_script(active)
    assert second and second != first, (first, second)
    ActionChains(driver).send_keys(Keys.ENTER).perform()        # chosen: Replace with it
    assert driver.find_element(By.ID, "correct-new").text == second
    tabs = 0
    while driver.execute_script(active) != "correct-pin" and tabs < 40:
        ActionChains(driver).send_keys(Keys.TAB).perform()
        tabs += 1
    assert tabs <= 3, tabs
    # the chosen card is told by a ✓ and a fill, not by a second ring like the focus's
    chosen = f'#grid52 .gcard[data-code="{second}"]'
    assert "✓" in driver.execute_script("return getComputedStyle(document.querySelector(arguments[0]), '::after')"
                                        ".content", chosen)
    assert style(driver, chosen, "outlineStyle") == "none"


# ------------------------------------------------------------------ review pages at 200 % zoom

def review_rounds(driver, live_kiosk):
    """The QA's four rounds (settled, voided, corrected, settled), and surveillance logged in."""
    play(live_kiosk.app.test_client(), live_kiosk.service,
         [("KS QS JS 10S 10H", "settle"), ("AS 2S 3D 4D 5C", "void"), ("7C 8C 2D 6D 5S", "correct"),
          ("KH KD KC QH QC", "settle")])
    log_in(driver, live_kiosk.url, "watch1")
    WebDriverWait(driver, 5).until(lambda d: "/auth/login" not in d.current_url)


# The table's box, its scrolling wrapper's and its panel's; then, scrolled to its right end, whether
# the named column's header and the first column's first cell are drawn inside the wrapper.
ZOOMED = """
const table = document.querySelector(arguments[0]);
const wrap = table.parentElement, panel = table.closest('.panel');
const right = (n) => n.getBoundingClientRect().right;
const out = {wrapRight: right(wrap), panelRight: right(panel),
             pageWide: document.documentElement.scrollWidth > innerWidth};
wrap.scrollLeft = wrap.scrollWidth;
const box = wrap.getBoundingClientRect();
const inside = (n) => { const r = n.getBoundingClientRect();
                        return r.left >= box.left - 0.5 && r.right <= box.right + 0.5; };
const head = [...table.rows[0].cells].find((c) => c.textContent.trim().startsWith(arguments[1]));
out.lastShown = inside(head);
out.firstShown = inside(table.rows[1].cells[0]);
out.scrolls = wrap.scrollWidth > wrap.clientWidth;
return out;
"""


@pytest.mark.parametrize("page, table, column, width", [("review/", "#round-list", "Flags", 960),
                                                        ("review/round/3", "#hands", "Net", 640)])
def test_wide_review_tables_scroll_in_their_panel_at_200_percent(browser, live_kiosk, page, table, column, width):
    driver = browser
    review_rounds(driver, live_kiosk)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": width * 10 // 16, "deviceScaleFactor": 2, "mobile": False})
    driver.get(live_kiosk.url + page)
    WebDriverWait(driver, 5).until(EC.presence_of_element_located((By.CSS_SELECTOR, table)))
    found = driver.execute_script(ZOOMED, table, column)
    assert found["wrapRight"] <= found["panelRight"] and not found["pageWide"], found
    assert found["lastShown"] and found["firstShown"], found


def test_the_bull_mark_on_review_cards_reads_at_3_to_1(browser, live_kiosk):
    driver = browser
    review_rounds(driver, live_kiosk)
    driver.get(live_kiosk.url + "review/round/1")
    mark = driver.find_element(By.CSS_SELECTOR, "#hands .mini.bull")
    line = rgb(mark.value_of_css_property("box-shadow"))
    card = rgb(mark.value_of_css_property("background-color"))
    assert contrast_ratio(line, card) >= 3, (line, card)
