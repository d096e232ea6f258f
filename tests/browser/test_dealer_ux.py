"""The dealer's screen as QA47's UX pass used it: a kiosk restart under an open page, a network blip
under Settle, double taps, the keyboard, contrast, and what an alarm, the toast or the camera view
may cover at 1280x720."""

from __future__ import annotations

import threading
import time

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from kiosk.audit import AuditType
from test_dealer_screen import click, drawn, wait_text

from kiosk_testing import ACCOUNTS, FAST_HASH, create_accounts, hand, make_table

pytestmark = pytest.mark.browser

BANKER = "4S 6H QD 9C 9H"           # Bull 8
SEAT_1 = "KS QS JS 10S 10H"         # Niu Niu: wins
SEAT_2 = "AS 2S 3D 4D 5C"           # Bull 5: loses
SEVEN = ("banker", "1", "2", "3", "4", "5", "6", "7")
SEVEN_HANDS = {"1": "KS QS JS 10S 10H", "2": "AS 2S 3D 4D 5C", "3": "7C 8C 2D 6D 5S", "4": "KH KD KC QH QC",
               "5": "AH 3H 6S 8S 2C", "6": "JH JD 10D 7D 3S", "7": "8H 8D 4C 5H 6C"}
OFFLINE = {"camera": "offline", "camera_reason": "camera cable pulled", "fps": 0.0, "model": "test"}


# ---------------------------------------------------------------------------------- helpers

def log_in(driver, url, username="dealer1"):
    driver.get(url + "auth/login")
    driver.find_element(By.ID, "username").send_keys(username)
    driver.find_element(By.ID, "password").send_keys(ACCOUNTS[username][1])
    driver.find_element(By.ID, "login").click()
    WebDriverWait(driver, 5).until(EC.presence_of_element_located((By.ID, "settle-btn")))


def deal(service, hands: dict[str, str], frame: int, banker: str = BANKER):
    service.observe([hand("banker", banker)] + [hand(s, t) for s, t in hands.items()], frame)


def complete_round(driver, live_kiosk) -> None:
    """Seats 1 and 2 bet and dealt, the round complete and drawn at 1280x720."""
    service = live_kiosk.service
    driver.viewport(1280, 720)
    service.set_bet("1", "100", "double", "dealer1")
    service.set_bet("2", "50", "equal", "dealer1")
    log_in(driver, live_kiosk.url)
    deal(service, {"1": SEAT_1, "2": SEAT_2}, 1)
    wait_text(driver, "#round-state", "COMPLETE")
    drawn(driver, service)


def active(driver) -> dict:
    """What has the keyboard focus: its id, data-key, and whether it shows a focus ring."""
    return driver.execute_script(
        "const a = document.activeElement; const cs = getComputedStyle(a);"
        "return {tag: a.tagName, id: a.id, key: a.dataset ? (a.dataset.key || null) : null,"
        " inDialog: Boolean(a.closest && a.closest('dialog[open]')), visible: a.matches(':focus-visible'),"
        " outline: [cs.outlineStyle, parseFloat(cs.outlineWidth)]}")


def rects(driver, css) -> list[dict]:
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].filter(n => n.getClientRects().length).map(n => {"
        " const r = n.getBoundingClientRect();"
        " return {what: (n.closest('.seat') ? n.closest('.seat').dataset.seat + ' ' : '') + n.className + ' '"
        "   + n.textContent.trim().slice(0, 30), left: r.left, top: r.top, right: r.right, bottom: r.bottom,"
        "   width: r.width, height: r.height}; })", css)


def overlap(a: dict, b: dict) -> float:
    w = min(a["right"], b["right"]) - max(a["left"], b["left"])
    h = min(a["bottom"], b["bottom"]) - max(a["top"], b["top"])
    return max(0.0, w) * max(0.0, h)


class RequestLog:
    """WSGI middleware: records each POST's path and holds it ``delay`` seconds (a busy Pi)."""

    def __init__(self, app, delay: float = 0.0):
        self.app, self.delay, self.posts = app, delay, []
        self.lock = threading.Lock()

    def __call__(self, environ, start_response):
        if environ["REQUEST_METHOD"] == "POST":
            with self.lock:
                self.posts.append(environ["PATH_INFO"])
            time.sleep(self.delay)
        return self.app(environ, start_response)

    def count(self, suffix: str) -> int:
        with self.lock:
            return sum(1 for p in self.posts if p.endswith(suffix))


# ---------------------------------------------------------------------------------- F2: restart

@pytest.fixture
def restartable_kiosk(tmp_path):
    """A kiosk that can be restarted as systemd restarts it: the process's service and server go,
    new ones start on the same data dir and the same port; the page stays open."""
    from werkzeug.serving import make_server

    from kiosk.app import create_app

    config = {"DATA_DIR": str(tmp_path / "data"), "TABLE": make_table(("banker", "1", "2", "3")),
              "PASSWORD_HASH_METHOD": FAST_HASH}

    class Kiosk:
        server = None

        def start(self, port: int = 0):
            self.app = create_app(dict(config))
            if port == 0:
                create_accounts(self.app)
            for _ in range(100):       # the port the last process held
                try:
                    self.server = make_server("127.0.0.1", port, self.app, threaded=True)
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                raise RuntimeError(f"port {port} not free again")
            self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1},
                                           daemon=True)
            self.thread.start()
            self.service = self.app.extensions["niuniu"].service
            self.url = f"http://127.0.0.1:{self.server.server_port}/"

        def stop(self):
            self.service.stop("test: restart")
            self.server.shutdown()
            self.server.server_close()

        def restart(self):
            port = self.server.server_port
            self.stop()
            time.sleep(0.5)
            self.start(port)

    kiosk = Kiosk()
    kiosk.start()
    yield kiosk
    kiosk.stop()


def test_a_restarted_kiosk_is_drawn_without_a_reload(browser, restartable_kiosk, shots):
    """The kiosk restarts under an open page: its versions count from 1 again, and the page draws
    them (it dropped every one as older than the last process's, and stayed on the old table)."""
    driver, kiosk = browser, restartable_kiosk
    driver.viewport(1280, 720)
    log_in(driver, kiosk.url)
    service = kiosk.service
    service.set_bet("1", "100", "double", "dealer1")
    service.set_bet("2", "50", "equal", "dealer1")
    deal(service, {"1": SEAT_1, "2": SEAT_2}, 1)
    service.settle("dealer1")
    service.clear("dealer1")
    service.observe([], 2)
    for amount in ("10", "20", "30", "40"):
        service.set_bet("1", amount, "equal", "dealer1")
    drawn(driver, service)
    old_run, old_version = service.run, service.version

    kiosk.restart()
    service = kiosk.service
    assert service.run != old_run
    service.set_bet("3", "25", "equal", "dealer1")
    assert service.version < old_version     # the new process's count is below the page's
    # drawn without a reload: the bet made after the restart, the round from the log
    wait_text(driver, '[data-bet-seat="3"]', "25.00 USD · equal", timeout=15)
    drawn(driver, service)
    assert driver.execute_script("return document.body.dataset.run") == service.run
    assert driver.find_elements(By.CSS_SELECTOR, '.tile[data-round="1"]')
    WebDriverWait(driver, 5).until(lambda d: d.find_element(By.ID, "link-pill").text == "LIVE")

    # and the page goes on with the new process's states, in its count
    service.set_bet("2", "75", "double", "dealer1")
    wait_text(driver, '[data-bet-seat="2"]', "75.00 USD · double")
    # other cards than round 1's: those the restarted kiosk takes for left-overs (the next test)
    deal(service, {"1": "7C 8C 2D 6D 5S", "2": "KH KD KC QH QC", "3": "AH 3H 7S 8S 2H"}, 3, banker="2C 3C 4H 5D 6S")
    wait_text(driver, "#round-state", "COMPLETE")
    drawn(driver, service)
    shots(driver, "dealer-1280x720-after-restart")


# ---------------------------------------------------------------------------------- F3, F12: failures

def test_a_settle_that_never_reached_the_kiosk_can_be_tapped_again(browser, live_kiosk):
    """Settle tapped while the link is down: it says nothing was settled and to tap again, in
    words a dealer reads (not the browser's "Failed to fetch"), and Settle is usable again."""
    driver, service = browser, live_kiosk.service
    complete_round(driver, live_kiosk)

    driver.execute_cdp_cmd("Network.enable", {})
    offline = {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
    driver.execute_cdp_cmd("Network.emulateNetworkConditions", offline)
    try:
        driver.find_element(By.ID, "settle-btn").click()
        wait_text(driver, "#toast.show", "Nothing was settled")
        message = driver.find_element(By.ID, "toast").text
        assert "could not be reached" in message and "tap Confirm & settle again" in message, message
        assert "Failed to fetch" not in message
        settle = driver.find_element(By.ID, "settle-btn")
        WebDriverWait(driver, 5).until(lambda d: settle.is_enabled() and settle.get_attribute("aria-busy") is None)
        assert service.machine.state == "complete"
    finally:
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {**offline, "offline": False})

    # the link back: the same button settles, once
    time.sleep(0.5)
    driver.find_element(By.ID, "settle-btn").click()
    wait_text(driver, "#round-state", "SETTLED")
    assert service.machine.state == "settled"


def test_a_wrong_pin_is_cleared_and_a_lockout_counts_down(browser, live_kiosk):
    driver, service = browser, live_kiosk.service
    service.set_bet("1", "100", "double", "dealer1")
    log_in(driver, live_kiosk.url)
    deal(service, {"1": SEAT_1}, 1)
    wait_text(driver, "#round-state", "COMPLETE")
    click(driver, "#void-btn")
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "void-reason")))
    driver.find_element(By.ID, "void-reason").send_keys("misdeal")
    pin = driver.find_element(By.ID, "void-pin")
    pin.send_keys("1111")
    driver.find_element(By.ID, "void-submit").click()
    wait_text(driver, "#void-error", "PIN not recognised")
    # the wrong digits are gone, and the field has the focus for the next try
    assert pin.get_attribute("value") == ""
    assert focus_on(driver, {"id": "void-pin"})["id"] == "void-pin"

    for _ in range(10):
        if "wait" in driver.find_element(By.ID, "void-error").text:
            break
        pin.send_keys("1111", Keys.ENTER)
        time.sleep(0.3)
    text = driver.find_element(By.ID, "void-error").text
    assert "wait" in text, text
    first = int(text.split("wait ")[1].split(" s")[0])
    time.sleep(2.5)
    later = driver.find_element(By.ID, "void-error").text
    assert "wait" in later and int(later.split("wait ")[1].split(" s")[0]) < first, (text, later)
    assert service.machine.state == "complete"


# ---------------------------------------------------------------------------------- F11: double taps

def test_a_double_tap_sends_one_request(browser, live_kiosk):
    """Each request held 0.4 s (a busy Pi): a double tap on Set bet, Confirm & settle, Next round
    or Same bets sends one request, and no red "nothing to clear" follows a good one."""
    driver, service = browser, live_kiosk.service
    log = RequestLog(live_kiosk.app.wsgi_app, delay=0.4)
    live_kiosk.app.wsgi_app = log
    driver.viewport(1280, 720)
    log_in(driver, live_kiosk.url)
    WebDriverWait(driver, 5).until(lambda d: d.execute_script("return document.body.dataset.version"))

    click(driver, '[data-bet-seat="1"]')
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "bet-amount")))
    driver.find_element(By.ID, "bet-amount").send_keys("100")
    ActionChains(driver).double_click(driver.find_element(By.ID, "bet-submit")).perform()
    wait_text(driver, '[data-bet-seat="1"]', "100.00 USD")
    time.sleep(0.6)
    assert log.count("/bet") == 1, log.posts
    records = [r for r in service.audit.records() if r.type == AuditType.BETS_PLACED]
    assert len(records) == 1, records

    deal(service, {"1": SEAT_1}, 1)
    wait_text(driver, "#round-state", "COMPLETE")
    drawn(driver, service)
    ActionChains(driver).double_click(driver.find_element(By.ID, "settle-btn")).perform()
    wait_text(driver, "#round-state", "SETTLED")
    drawn(driver, service)
    ActionChains(driver).double_click(driver.find_element(By.ID, "clear-btn")).perform()
    wait_text(driver, "#round-state", "CLEARED")
    time.sleep(0.6)
    assert (log.count("/settle"), log.count("/clear")) == (1, 1), log.posts
    assert "bad" not in (driver.find_element(By.ID, "toast").get_attribute("class") or "")

    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "repeat-btn")))
    ActionChains(driver).double_click(driver.find_element(By.ID, "repeat-btn")).perform()
    WebDriverWait(driver, 5).until(EC.invisibility_of_element_located((By.ID, "repeat-btn")))
    time.sleep(0.6)
    assert log.count("/repeat-bets") + log.count("/repeat_bets") == 1, log.posts
    assert "bad" not in (driver.find_element(By.ID, "toast").get_attribute("class") or "")


# ---------------------------------------------------------------------------------- F6, F13: keyboard

def focus_on(driver, want: dict, timeout=3) -> dict:
    """Wait until the focus is where ``want`` (id or key) says; return what has it."""
    field, value = next(iter(want.items()))
    try:
        WebDriverWait(driver, timeout).until(lambda d: active(d)[field] == value)
    except Exception:
        pass
    return active(driver)


def keyboard_focus(driver, css):
    """Give ``css`` the focus as a keyboard does (Tab from the control before it)."""
    driver.execute_script("const n = document.querySelector(arguments[0]); n.focus();", css)
    ActionChains(driver).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).send_keys(Keys.TAB).perform()
    assert driver.execute_script("return document.activeElement === document.querySelector(arguments[0])", css)


def test_keyboard_focus_survives_state_updates_and_stays_in_dialogs(browser, live_kiosk):
    driver, service = browser, live_kiosk.service
    driver.viewport(1280, 720)
    log_in(driver, live_kiosk.url)
    drawn(driver, service)

    # a bet chip keeps the focus while another screen (or the camera) changes the table
    keyboard_focus(driver, '[data-bet-seat="2"]')
    service.set_bet("3", "25", "equal", "dealer1")
    wait_text(driver, '[data-bet-seat="3"]', "25.00 USD")
    drawn(driver, service)
    now = focus_on(driver, {"key": "bet:2"})
    assert now["key"] == "bet:2", now
    # ...and shows it: a ring a dealer sees, not the browser's 1 px default
    assert now["visible"] and now["outline"][0] == "solid" and now["outline"][1] >= 3, now

    # the bet dialog: Tab goes round its controls and never leaves the page
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "bet-amount")))
    driver.switch_to.active_element.send_keys("100")
    trail = []
    for _ in range(16):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        trail.append(active(driver))
    assert all(step["inDialog"] for step in trail), [(s["tag"], s["id"]) for s in trail]
    for _ in range(3):
        ActionChains(driver).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
        assert active(driver)["inDialog"]
    driver.find_element(By.ID, "bet-submit").send_keys(Keys.ENTER)
    wait_text(driver, '[data-bet-seat="2"]', "100.00 USD")
    WebDriverWait(driver, 5).until(EC.invisibility_of_element_located((By.ID, "bet-dialog")))
    drawn(driver, service)
    now = focus_on(driver, {"key": "bet:2"})
    assert now["key"] == "bet:2", now     # back where the dialog was opened

    # a card keeps the focus while the deal goes on at another seat
    deal(service, {"2": SEAT_2, "3": "7C 8C 2D 6D"}, 1)
    WebDriverWait(driver, 5).until(
        EC.presence_of_element_located((By.CSS_SELECTOR, '.seat[data-seat="2"] .card[data-code="4D"]')))
    drawn(driver, service)
    keyboard_focus(driver, '.seat[data-seat="2"] .card[data-code="4D"]')
    deal(service, {"2": SEAT_2, "3": "7C 8C 2D 6D 5S"}, 2)
    wait_text(driver, "#round-state", "COMPLETE")
    drawn(driver, service)
    now = focus_on(driver, {"key": "card:2:4D"})
    assert now["key"] == "card:2:4D", now

    # Settle by keyboard: the focus goes on to the next step, not to the page
    keyboard_focus(driver, "#settle-btn")
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    wait_text(driver, "#round-state", "SETTLED")
    drawn(driver, service)
    # (Same bets, in Settle's place: the next round's bets open at Settle, QA49 dealing2 M4)
    now = focus_on(driver, {"id": "repeat-btn"})
    assert now["id"] == "repeat-btn", now


# ---------------------------------------------------------------------------------- F5: contrast

CONTRAST = """
const parse = (c) => { const m = c.match(/rgba?\\(([^)]+)\\)/); const p = m[1].split(',').map(Number);
  return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
const lum = (c) => { const f = (v) => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
const out = {};
for (const [name, css] of Object.entries(arguments[0])) {
  const n = document.querySelector(css);
  if (!n) { out[name] = null; continue; }
  const cs = getComputedStyle(n);
  let bg = null, a = n, opacity = 1;
  for (; a; a = a.parentElement) {
    const s = getComputedStyle(a); opacity *= Number(s.opacity);
    if (!bg) { const c = parse(s.backgroundColor); if (c[3] > 0.99) bg = c; }
  }
  const fg = parse(cs.color);
  const x = lum(fg), y = lum(bg);
  out[name] = {text: n.textContent.trim(), ratio: (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05), opacity};
}
return out;
"""


def contrast(driver, targets: dict[str, str]) -> dict:
    return driver.execute_script(CONTRAST, targets)


def test_verdicts_and_round_states_read_at_4_5_to_1(browser, live_kiosk):
    """WIN, LOSE, PUSH, the round's COMPLETE / SETTLED / VOID, Confirm & settle and the clock's
    warning: their words against their own colour at 4.5:1 or better (WCAG AA), from the
    browser's computed styles."""
    driver, service = browser, live_kiosk.service
    complete_round(driver, live_kiosk)
    driver.execute_script("document.getElementById('clock-pill').hidden = false;"
                          "const push = document.createElement('span'); push.className = 'outcome push';"
                          "push.id = 'push-probe'; push.textContent = 'PUSH';"
                          "document.querySelector('.seat[data-seat=\"2\"] .verdict').appendChild(push);")
    found = contrast(driver, {"WIN": '.seat[data-seat="1"] .outcome.win', "LOSE": '.seat[data-seat="2"] .outcome.lose',
                              "PUSH": "#push-probe", "COMPLETE": "#round-state.complete",
                              "Confirm & settle": "#settle-btn", "CLOCK NOT SYNCED": "#clock-pill"})
    driver.find_element(By.ID, "settle-btn").click()
    wait_text(driver, "#round-state", "SETTLED")
    drawn(driver, service)
    found.update(contrast(driver, {"SETTLED": "#round-state.settled", "WIN settled": ".outcome.win"}))
    driver.execute_script("const b = document.getElementById('round-state'); b.className = 'state-badge void';"
                          " b.textContent = 'VOID';")
    found.update(contrast(driver, {"VOID": "#round-state.void"}))
    for name, seen in found.items():
        assert seen is not None, name
        assert seen["opacity"] == 1, (name, seen)
        assert seen["ratio"] >= 4.5, (name, seen)


# ---------------------------------------------------------------------------------- F8: left-overs

def test_a_left_over_card_the_kiosk_ignores_is_shown_on_its_seat(browser, live_kiosk, shots):
    """A card taken for last round's (after a restart) is not counted, and the seat reads 4 of 5:
    the card is drawn there, marked, with why, and a tap on it adds it."""
    driver, service = browser, live_kiosk.service
    driver.viewport(1280, 720)
    service.set_bet("1", "100", "double", "dealer1")
    service.set_bet("2", "50", "equal", "dealer1")
    log_in(driver, live_kiosk.url)
    service.machine.ignore_present([("2", "4D")])     # what a restart does with last round's cards
    deal(service, {"1": SEAT_1, "2": SEAT_2}, 1)
    wait_text(driver, '.seat[data-seat="2"] .category', "4 of 5 cards")
    drawn(driver, service)
    seat = driver.find_element(By.CSS_SELECTOR, '.seat[data-seat="2"]')
    ghost = seat.find_element(By.CSS_SELECTOR, '.card.stale[data-stale="4D"]')
    assert ghost.is_displayed() and "OLD" in ghost.text and "4" in ghost.text
    assert "last round" in ghost.get_attribute("aria-label")
    assert "4♦ ignored as last round's card" in seat.find_element(By.CSS_SELECTOR, ".stale-note").text
    assert len(seat.find_elements(By.CSS_SELECTOR, ".card.slot")) == 0    # it fills the empty place
    shots(driver, "dealer-1280x720-left-over-card")

    ghost.click()
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "grid52-add")))
    assert "Seat 2" in driver.find_element(By.ID, "add-title").text
    assert driver.find_element(By.CSS_SELECTOR, '#grid52-add .gcard[data-code="4D"]').is_enabled()


# ---------------------------------------------------------------------------------- F4, F9, F10, F14: layout

@pytest.mark.parametrize("live_kiosk", [SEVEN], indirect=True)
@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_payouts_stay_in_view_under_an_alarm_the_toast_and_the_camera(browser, live_kiosk, shots, size):
    """Seven seats dealt with CAMERA OFFLINE showing: every seat's PAY/COLLECT line on screen with
    no scrolling; the Settle toast and the camera view cover none of them; what a dealer taps
    during a round is 44 px or more."""
    driver, service = browser, live_kiosk.service
    driver.viewport(*size)
    for seat in SEVEN_HANDS:
        service.set_bet(seat, "100", "double" if int(seat) % 2 else "equal", "dealer1")
    deal(service, SEVEN_HANDS, 1)
    service.settle("dealer1")
    service.clear("dealer1")
    service.observe([], 2)
    for seat in SEVEN_HANDS:
        service.set_bet(seat, "100", "double" if int(seat) % 2 else "equal", "dealer1")
    log_in(driver, live_kiosk.url, "super1")
    deal(service, SEVEN_HANDS, 3)
    service.status = lambda: dict(OFFLINE)
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "camera-alarm")))
    wait_text(driver, '.seat[data-seat="7"] .category', "Bull")
    drawn(driver, service)
    time.sleep(0.3)

    def money_in_view():
        strip = driver.find_element(By.ID, "history").rect
        seats = driver.execute_script("const s = document.getElementById('seats'); const r = s.getBoundingClientRect();"
                                      " return {bottom: r.bottom, scroll: s.scrollHeight, client: s.clientHeight}")
        assert seats["scroll"] <= seats["client"], seats
        lines = rects(driver, "#seats .money")
        assert len(lines) == 7, lines
        for line in lines:
            assert line["top"] >= 0 and line["bottom"] <= min(seats["bottom"], strip["y"]) + 0.5, (line, seats, strip)
        return lines

    lines = money_in_view()
    shots(driver, f"dealer-{size[0]}x{size[1]}-alarm-seven-seats")

    # what a dealer taps: bet chips, cards, round tiles, the top bar's and the strip's buttons
    targets = rects(driver, "#seats .bet-chip, #seats .card, .tile, .statusbar .btn, #camera-toggle")
    assert len(targets) >= 7 + 35 + 1 + 2, targets
    for target in targets:
        assert target["height"] >= 44 and target["width"] >= 44, target

    # the toast of a settle covers no payout
    driver.find_element(By.ID, "settle-btn").click()
    wait_text(driver, "#toast.show", "settled")
    toast = rects(driver, "#toast")[0]
    lines = money_in_view()
    for line in lines:
        assert overlap(toast, line) == 0, (toast, line)

    # nor does the camera view (a 4:3 picture in it, as the camera sends)
    driver.find_element(By.ID, "camera-toggle").click()
    driver.execute_script(
        "const c = document.createElement('canvas'); c.width = 640; c.height = 480;"
        " const g = c.getContext('2d'); g.fillStyle = '#3a6'; g.fillRect(0, 0, 640, 480);"
        " document.getElementById('camera-view').src = c.toDataURL();")
    time.sleep(0.3)
    view = rects(driver, "#camera-box")[0]
    assert view["width"] >= 200 and view["height"] >= 120, view
    picture = rects(driver, "#camera-view")[0]
    assert picture["height"] >= 120, picture
    for covered in rects(driver, "#seats .money, #seats .card, #seats .verdict, #banker .card, .actions .btn"):
        assert overlap(view, covered) == 0, (view, covered)
    shots(driver, f"dealer-{size[0]}x{size[1]}-camera-view")
