"""Sessions and lockouts across a step of the system clock (QA46 time F8).

NTP steps the wall clock (a Pi has no battery clock: its first sync after a power cut
steps it by the whole outage), and a person at the table must not notice: a dealer in the
middle of a round stays logged in, an idle screen still closes after 30 real minutes, a
lockout lasts as long as it says.  The clocks ``kiosk.auth`` reads are replaced by one the
test moves: ``wait`` is time passing, ``step`` is the wall clock set.
"""

from __future__ import annotations

import re
import time
import types

import pytest

from kiosk import auth, db
from kiosk.audit import AuditType
from kiosk.auth import PIN_LOCKED
from kiosk_testing import ACCOUNTS, csrf_from, hand, login

HOUR = 3600.0


class Clock:
    def __init__(self) -> None:
        self.wall, self.mono = time.time(), 5000.0

    def wait(self, seconds: float) -> None:
        """Time passes: both clocks move."""
        self.wall += seconds
        self.mono += seconds

    def step(self, seconds: float) -> None:
        """The wall clock is set (NTP, ``date -s``); the monotonic clock does not move."""
        self.wall += seconds

    def restart(self, app) -> None:
        """The kiosk starts again: what the last run saw on its monotonic clock is gone."""
        app.extensions.pop("niuniu.auth_clock", None)


@pytest.fixture
def clock(app, monkeypatch):
    c = Clock()
    monkeypatch.setattr(auth, "time", types.SimpleNamespace(time=lambda: c.wall, monotonic=lambda: c.mono,
                                                            sleep=time.sleep))
    c.restart(app)          # the app's clock, if any, was made with the real one
    return c


def timeouts(audit) -> list[tuple[str, str]]:
    return [(r.type, r.actor) for r in audit.records(types=[AuditType.SESSION_TIMEOUT])]


def try_login(client, username: str, password: str):
    token = csrf_from(client.get("/auth/login").get_data(as_text=True))
    return client.post("/auth/login", data={"username": username, "password": password, "csrf_token": token})


def waited_s(response) -> int:
    found = re.search(r"wait (\d+) s", response.get_data(as_text=True))
    assert found, response.get_data(as_text=True)
    return int(found.group(1))


def lock_out(client, username: str = "super1") -> None:
    """Five wrong passwords: the sixth try is refused for 30 s (THROTTLE_BASE_S)."""
    for _ in range(5):
        assert try_login(client, username, "not-the-password").status_code == 401
    assert try_login(client, username, "not-the-password").status_code == 429


# ------------------------------------------------------------------ the idle timeout


def test_a_forward_step_does_not_log_out_a_dealer_active_a_minute_ago(clock, client, audit):
    """NTP stepping the clock +3 h logged every dealer out mid-round, with a session_timeout
    record claiming 30 minutes without use."""
    login(client, "dealer1")
    assert client.get("/dealer/").status_code == 200
    clock.wait(60)
    clock.step(3 * HOUR)
    assert client.get("/dealer/").status_code == 200
    assert client.get("/auth/whoami").json["user"] == "dealer1"
    assert timeouts(audit) == []


def test_a_backward_step_does_not_keep_an_idle_screen_open(clock, client, audit):
    """A screen left logged in stayed open for the step plus 30 minutes."""
    login(client, "dealer1")
    clock.step(-2 * HOUR)
    clock.wait(31 * 60)                      # nobody touches the screen
    r = client.get("/dealer/")
    assert r.status_code == 302 and "/auth/login" in r.location
    assert timeouts(audit) == [("session_timeout", "dealer1")]


def test_a_screen_in_use_across_a_backward_step_still_times_out_30_minutes_after_its_last_use(clock, client, audit):
    login(client, "dealer1")
    clock.wait(20 * 60)
    assert client.get("/dealer/").status_code == 200        # used: the 30 minutes start again
    clock.step(-HOUR)
    clock.wait(29 * 60)
    assert client.get("/auth/whoami").status_code == 200     # passive: not a use
    clock.wait(2 * 60)
    assert client.get("/dealer/").status_code == 302
    assert timeouts(audit) == [("session_timeout", "dealer1")]


def test_a_session_last_used_while_the_clock_ran_ahead_ends_30_minutes_after_a_restart(clock, app, client):
    """Used while the clock ran a day ahead, then the kiosk restarted and NTP set the clock
    right: its last use reads as tomorrow.  It counts as used at the restart, not as in use
    until tomorrow."""
    clock.step(24 * HOUR)
    login(client, "dealer1")
    clock.restart(app)
    clock.step(-24 * HOUR)
    clock.wait(60)
    assert client.get("/auth/whoami").status_code == 200     # passive: not a use
    clock.wait(30 * 60 + 1)
    assert client.get("/dealer/").status_code == 302


# ------------------------------------------------------------------ lockouts


def test_a_locked_out_user_waits_the_real_lockout_not_plus_a_backward_step(clock, app):
    """Stepping the clock back 1 h added the hour to the lock: "wait 3631 s"."""
    client = app.test_client()
    lock_out(client)
    clock.step(-HOUR)
    refused = try_login(client, "super1", ACCOUNTS["super1"][1])
    assert refused.status_code == 429 and waited_s(refused) <= 31
    clock.wait(31)
    assert try_login(client, "super1", ACCOUNTS["super1"][1]).status_code == 302


def test_a_forward_step_does_not_lift_a_lockout(clock, app):
    """The lock holds for its real 30 s however far the clock is set forward."""
    client = app.test_client()
    lock_out(client)
    clock.step(2 * HOUR)
    refused = try_login(client, "super1", ACCOUNTS["super1"][1])
    assert refused.status_code == 429 and waited_s(refused) <= 31
    clock.wait(31)
    assert try_login(client, "super1", ACCOUNTS["super1"][1]).status_code == 302


def test_failures_stamped_while_the_clock_ran_a_year_ahead_lock_for_the_lockout_not_the_year(clock, app):
    """Five wrong passwords while the clock ran a year ahead, then a restart with the clock
    set right: the account was locked for a year, and the rows were never pruned."""
    clock.step(365 * 24 * HOUR)
    lock_out(app.test_client())
    clock.restart(app)
    clock.step(-365 * 24 * HOUR)
    client = app.test_client()
    refused = try_login(client, "super1", ACCOUNTS["super1"][1])
    assert refused.status_code == 429 and waited_s(refused) <= 31
    clock.wait(31)
    assert try_login(client, "super1", ACCOUNTS["super1"][1]).status_code == 302
    clock.wait(app.config["THROTTLE_WINDOW_S"] + 1)
    assert try_login(client, "dealer1", "not-the-password").status_code == 401     # prunes as it counts
    conn = db.connect(app.config["DATA_DIR"])
    try:
        future = conn.execute("SELECT COUNT(*) FROM failures WHERE ts > ?", (clock.wall + 60,)).fetchone()[0]
    finally:
        conn.close()
    assert future == 0


class Screen:
    """The dealer's screen with a settled round, so a correction needs a supervisor's PIN
    (as ``settled`` in test_auth): ``fix(pin, status)`` swaps seat 1's 4D and 9D, answering
    the error if any."""

    def __init__(self, client, service) -> None:
        self.client, self.cards = client, ["4D", "9D"]
        self.token = login(client, "dealer1")
        self.post("/dealer/api/bet", {"seat": "1", "amount": "10", "kind": "equal"})
        service.observe([hand("banker", "4S 6H QD 9C 9H"), hand("1", "AS 2S 3D 4D 5C")], 1)
        self.post("/dealer/api/settle")

    def post(self, url, body=None, status=200):
        r = self.client.post(url, json=body or {}, headers={"X-CSRF-Token": self.token})
        assert r.status_code == status, r.get_json()
        return r.get_json()

    def fix(self, pin, status=200):
        body = self.post("/dealer/api/correct", {"seat": "1", "old": self.cards[0], "new": self.cards[1],
                                                 "reason": "misread", "pin": pin}, status=status)
        if status == 200:
            self.cards.reverse()
        return body.get("error")

    def still_logged_in(self) -> None:
        """Logs the dealer in again if the session ended (a dealer's login lifts no PIN lock)."""
        if self.client.get("/auth/whoami").status_code != 200:
            self.token = login(self.client, "dealer1")


@pytest.fixture
def screen(clock, client, service):
    return Screen(client, service)


def test_a_backward_step_does_not_block_pin_approvals_for_an_hour(clock, screen):
    """The PIN throttle used the same arithmetic: corrections and voids at that screen were
    blocked for the step plus the wait."""
    for _ in range(5):
        assert "not recognised" in screen.fix("9999", 403)
    assert "too many wrong PINs" in screen.fix("4321", 403)
    clock.step(-HOUR)
    clock.wait(31)
    screen.fix("4321")


def test_a_forward_step_does_not_lift_the_days_pin_ceiling(clock, screen):
    """Ten wrong PINs lock PIN approval at the screen until a supervisor logs in there; a
    clock set a day forward lifted it."""
    for _ in range(10):
        clock.wait(16 * 60)             # past the throttle's wait each time
        screen.fix("9999", 403)
    assert screen.fix("4321", 403) == PIN_LOCKED
    clock.step(25 * HOUR)
    clock.wait(60)
    screen.still_logged_in()
    assert screen.fix("4321", 403) == PIN_LOCKED


# ------------------------------------------------------------------ the session's lifetime


@pytest.fixture
def cookie_clock(clock, monkeypatch):
    """The signed cookie's own timestamps read the same wall clock (itsdangerous)."""
    import itsdangerous.timed

    monkeypatch.setattr(itsdangerous.timed, "time", types.SimpleNamespace(time=lambda: clock.wall))
    return clock


def test_a_step_past_the_session_lifetime_does_not_end_sessions_unrecorded(cookie_clock, client, audit):
    """A Pi booted after a 13-hour power cut runs 13 h behind until NTP answers: the step
    ended every session (the cookie's 12-hour expiry read the wall clock), with no record."""
    login(client, "dealer1")
    cookie_clock.wait(60)
    cookie_clock.step(13 * HOUR)
    assert client.get("/dealer/").status_code == 200
    assert timeouts(audit) == []


def test_a_session_ends_twelve_real_hours_after_login_with_a_record(cookie_clock, client, audit):
    login(client, "dealer1")
    for _ in range(24):                 # used every half hour less a minute: never idle
        cookie_clock.wait(29 * 60)
        assert client.get("/dealer/").status_code == 200
    cookie_clock.step(-6 * HOUR)        # a step back does not lengthen it
    cookie_clock.wait(29 * 60)
    ended = client.get("/dealer/", follow_redirects=True)
    assert "session ended 12 hours after logging in" in ended.get_data(as_text=True)
    [(kind, actor)] = timeouts(audit)
    assert (kind, actor) == (AuditType.SESSION_TIMEOUT, "dealer1")
    assert audit.records(types=[AuditType.SESSION_TIMEOUT])[0].data["session_max_s"] == 12 * 3600


def test_a_step_back_does_not_log_out_a_screen_in_use(cookie_clock, client, audit):
    """The cookie signed a minute ago reads as signed 'in the future' after a step back, and
    Flask's own check refused it: every screen was logged out, unrecorded."""
    login(client, "dealer1")
    cookie_clock.wait(60)
    assert client.get("/dealer/").status_code == 200
    cookie_clock.step(-2 * HOUR)
    cookie_clock.wait(60)
    assert client.get("/dealer/").status_code == 200
    assert timeouts(audit) == []
