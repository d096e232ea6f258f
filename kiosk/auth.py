"""Who may do what at the table: accounts, roles, login, CSRF, throttling, timeouts.

The four roles mirror the people in a casino: the *dealer* runs rounds, the *pit
supervisor* approves what a dealer alone must not (changing a settled hand, voiding
a round) by typing a personal PIN on the dealer's screen, *surveillance* reviews
and never changes anything, and the *admin* manages accounts.  There is no default
password anywhere: the first start prints a one-time setup code and the first
account is the admin created with it.
"""

from __future__ import annotations

import contextlib
import functools
import hmac
import re
import secrets
import sqlite3
import threading
import time
from enum import StrEnum
from typing import Callable, NamedTuple
from urllib.parse import unquote, urlsplit

from flask import (Blueprint, abort, current_app, flash, g, jsonify, redirect, render_template,
                   request, session, url_for)
from flask.sessions import SecureCookieSessionInterface
from itsdangerous import BadSignature
from werkzeug.exceptions import HTTPException
from werkzeug.routing import RequestRedirect
from werkzeug.security import check_password_hash, generate_password_hash

from kiosk import db
from kiosk.audit import AuditError, AuditType, utc_iso
from kiosk.runtime import audit, runtime
from scoring.errors import NiuniuError

bp = Blueprint("auth", __name__, url_prefix="/auth")

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_USERNAME = re.compile(r"^[A-Za-z0-9._][A-Za-z0-9._-]{2,31}$")   # no leading "-": see _FORMULA_START
_PIN = re.compile(r"^[0-9]{4,8}$")
MIN_PASSWORD = 10
# The first guesses of anyone trying passwords, of MIN_PASSWORD characters or more (shorter
# ones are refused anyway): the usual lists' top entries, and the words of this trade and
# this product, which a guesser standing at the table reads off the screen.  Lower case.
COMMON_PASSWORDS = frozenset({
    "1234567890", "0123456789", "12345678910", "123456789a", "a123456789", "abcd123456",
    "1q2w3e4r5t", "q1w2e3r4t5", "1qaz2wsx3edc", "qwerty1234", "qwerty12345",
    "password12", "password123", "password1234", "passw0rd123", "iloveyou12", "iloveyou123",
    "letmein123", "welcome123", "welcome1234", "changeme123", "administrator", "admin12345",
    "admin123456", "adminadmin", "supervisor", "surveillance", "niuniuniuniu", "niuniu1234",
    "niuniu12345", "niuniu123456", "bullbullbull", "casino1234", "casino12345", "dealer1234",
    "dealer12345", "pitboss123", "kiosk12345",
})
# Runs of keys a password must not be a piece of, read either way: "1234567890" and
# "0987654321" (the digits wrap), "abcdefghij", "qwertyuiop" (the letter rows in turn).
_KEY_RUNS = ("0123456789" * 3, "abcdefghijklmnopqrstuvwxyz", "qwertyuiopasdfghjklzxcvbnm")
# Wrong PINs one screen may send in a day (the last 24 hours), however many right ones come
# between them, before PIN approval there is locked until a supervisor (or an admin) logs in
# at that screen with their password.  The per-window throttle alone let a patient guesser
# try ~600 PINs a day, a 17% daily chance against three 4-digit PINs (a PIN matches any
# supervisor).  Ten is far above a supervisor's fumbling (one or two slips, then the right
# PIN; a right PIN does not clear this count), and holds a guesser to 10 tries per
# supervisor visit: 0.3% against three 4-digit PINs, each further ten after someone with a
# password has come to the screen and seen the lock.
PIN_DAILY_CEILING = 10
PIN_DAY_S = 24 * 3600.0
PIN_LOCKED = (f"PIN approval on this screen is locked after {PIN_DAILY_CEILING} wrong PINs in 24 hours; "
              "a supervisor must log in here with their password to unlock it")
# The actor of a failed login whose typed name is no possible username: what was typed
# goes into the payload, never into the actor column (a name such as =HYPERLINK(...)
# would be a live formula in surveillance's CSV export).
NOT_A_USERNAME = "(not a username)"
# The first characters a spreadsheet reads as the start of a formula; no username may
# begin with one (the actor column of the CSV export is written as it is, signed).
_FORMULA_START = "-+=@"


class Role(StrEnum):
    DEALER = "dealer"
    SUPERVISOR = "supervisor"
    SURVEILLANCE = "surveillance"
    ADMIN = "admin"


HOME = {Role.DEALER: "dealer.screen", Role.SUPERVISOR: "dealer.screen",
        Role.SURVEILLANCE: "review.rounds", Role.ADMIN: "admin.users"}


class AuthError(NiuniuError):
    """An account, password or PIN that cannot be accepted; the message says what to change."""


class PinTaken(AuthError):
    """A PIN typed for one account is another supervisor's.  The PIN alone says who approved,
    so two cannot share one; and whoever typed it now knows that supervisor's PIN (an admin
    could otherwise try PINs on the Accounts page until one was "already used"), so the
    Accounts page retires it (:func:`retire_pin`)."""

    def __init__(self, holder_id: int, holder: str) -> None:
        super().__init__("that PIN is already used by another supervisor; choose a different one")
        self.holder_id, self.holder = holder_id, holder


# -- accounts -------------------------------------------------------------------------------


def hash_secret(secret: str) -> str:
    method = current_app.config.get("PASSWORD_HASH_METHOD", "scrypt") if current_app else "scrypt"
    return generate_password_hash(secret, method=method)


def _is_pattern(text: str) -> bool:
    """Whether this is one to three characters over and over ("aaaaaaaaaa", "ababababab",
    "niuniuniuniu") or a run of keys (see ``_KEY_RUNS``): long enough, guessed first."""
    if any(text == (text[:unit] * len(text))[:len(text)] for unit in (1, 2, 3)):
        return True
    return any(text in run or text in run[::-1] for run in _KEY_RUNS)


def check_password(password: str, whose: str, *, username: str) -> None:
    """Refuse a password that is too short, only blanks, holds the account's name, is a
    repeated pattern or run of keys, or is one of the most common passwords: at creation
    (the Accounts page, first-run setup, ``niuniu users add``) and at an admin's reset
    alike, never at login, so an account made before these rules still logs in.

    The messages never repeat the password: they show on a screen the pit can see."""
    password = password or ""
    if password and not password.strip():
        raise AuthError(f"{whose} is only spaces; use letters, digits or other characters")
    if len(password) < MIN_PASSWORD:
        raise AuthError(f"{whose} is too short: use at least {MIN_PASSWORD} characters")
    folded = password.strip().lower()
    if username and username.lower() in folded:
        raise AuthError(f"{whose} contains the username; choose one without the name in it")
    if _is_pattern(folded):
        raise AuthError(f"{whose} is a repeated character or pattern, or a run of keys (like 1234... "
                        "or qwerty...); choose something less regular, such as three unrelated words")
    if folded in COMMON_PASSWORDS:
        raise AuthError(f"{whose} is one of the most common passwords, the first a guesser tries; "
                        "choose another, such as three unrelated words")


def check_username(username: str) -> None:
    """The account name's rule, for the Accounts page and the console alike; the name is
    echoed cut short (a whole file pasted by mistake is not printed back whole)."""
    name = username or ""
    shown = repr(name) if len(name) <= 40 else f"{name[:32]!r}... ({len(name)} characters)"
    if name[:1] and name[0] in _FORMULA_START:
        raise AuthError(f"username {shown} starts with {name[0]!r}, which a spreadsheet reads as a "
                        "formula (in the audit export); start it with a letter or digit")
    if not _USERNAME.match(name):
        raise AuthError(f"username {shown}: use 3 to 32 letters, digits, dots, dashes or underscores")


def validate_account(username: str, role: str, password: str, pin: str | None) -> Role:
    check_username(username)
    try:
        parsed = Role(role)
    except ValueError:
        raise AuthError(f"role {role!r} is not one of {', '.join(r.value for r in Role)}") from None
    check_password(password, f"the password for {username!r}", username=username)
    if parsed is Role.SUPERVISOR:
        if not _PIN.match(pin or ""):
            raise AuthError(f"supervisor {username!r} needs a PIN of 4 to 8 digits (typed on the "
                            "dealer's screen to approve corrections and voids)")
    elif pin:
        raise AuthError(f"only supervisors have a PIN; {username!r} is a {parsed.value}")
    return parsed


def create_user(conn: sqlite3.Connection, username: str, role: str, password: str,
                pin: str | None = None, *, created_by: str, method: str | None = None) -> dict:
    """Add an account; refuses a taken name and a PIN another supervisor already uses
    (the PIN alone identifies who approved, so two supervisors cannot share one)."""
    parsed = validate_account(username, role, password, pin)
    hasher = (lambda s: generate_password_hash(s, method=method)) if method else hash_secret
    if conn.execute("SELECT 1 FROM users WHERE username = ?", (username,)).fetchone():
        raise AuthError(f"username {username!r} is taken; pick another")
    if pin:
        check_pin_free(conn, pin)
    conn.execute("INSERT INTO users(username, role, password_hash, pin_hash, active, created_at, created_by) "
                 "VALUES (?, ?, ?, ?, 1, ?, ?)",
                 (username, parsed.value, hasher(password), hasher(pin) if pin else None, utc_iso(), created_by))
    return {"username": username, "role": parsed.value}


def check_pin_free(conn: sqlite3.Connection, pin: str, *, for_id: int | None = None) -> None:
    """Raise :class:`PinTaken` if another account (not ``for_id``) has this PIN."""
    for row in conn.execute("SELECT id, username, pin_hash FROM users WHERE pin_hash IS NOT NULL AND id IS NOT ?",
                            (for_id,)):
        if check_password_hash(row["pin_hash"], pin):
            raise PinTaken(row["id"], row["username"])


def retire_pin(conn: sqlite3.Connection, taken: PinTaken) -> str:
    """Clear the PIN someone just typed for another account (it is known now) and return
    what the admin is told; the caller logs it.  The supervisor approves nothing until an
    admin sets them a new one."""
    with conn:
        conn.execute("UPDATE users SET pin_hash = NULL WHERE id = ?", (taken.holder_id,))
    return (f"that PIN was supervisor {taken.holder}'s, so it is known now: it no longer works, and {taken.holder} "
            "approves nothing until you set a new PIN with Reset; choose a different PIN here")


def end_sessions(conn: sqlite3.Connection, user_id: int) -> int:
    """End every open session of this account; returns the account's new session generation.

    A session is a signed cookie and a row of ``sessions`` (a logout deletes its own); each
    cookie also carries the account's generation (``users.session_gen``) from login, and
    :func:`load_user` ends one whose generation is no longer the account's.  An admin's
    password or PIN reset (the fix for a leaked one, useless if whoever used it stays
    logged in) bumps it in the same statement that sets the new secret; Disable bumps it
    here, so that enabling the account later does not bring the old sessions back.
    """
    conn.execute("UPDATE users SET session_gen = session_gen + 1 WHERE id = ?", (user_id,))
    return conn.execute("SELECT session_gen FROM users WHERE id = ?", (user_id,)).fetchone()[0]


def user_count(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT COUNT(*) FROM users").fetchone()[0]


def list_users(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    return conn.execute("SELECT id, username, role, active, created_at, created_by, "
                        "pin_hash IS NOT NULL AS has_pin FROM users ORDER BY role, username").fetchall()


# -- the clock ------------------------------------------------------------------------------
#
# Idle time and throttle windows are lengths of time, and the wall clock is no measure of
# one: NTP steps it (a Pi has no battery clock, so its first sync steps it by the whole power
# cut), and a step of +3 h logged every dealer out mid-round with a false "30 minutes idle"
# record, a step back kept an idle screen open for the step plus 30 minutes and added the
# step to a lockout ("wait 3631 s").  So each stamp this process writes (a failure, a
# session's last use) is also taken on the monotonic clock, which no one sets, and its age
# is read there.  The wall-clock stamp is still what is written (the rows, the cookie), for
# a stamp from before this process started: its age is the time this process has run plus
# what the wall clock said of the gap when the process started, never less than the time
# it has run (a stamp from the future, the clock ran ahead then, counts as made at the
# start).  Across a restart the wall clock is all there is; within a run a step changes
# nothing.


class Moment(NamedTuple):
    wall: float     # time.time(): what is written
    mono: float     # time.monotonic(): what ages are measured on


class AuthClock:
    """This process's clock for sessions and throttling (:func:`auth_clock`, one per app).

    ``note(ref, now)`` remembers the monotonic time of a wall-clock stamp written now (a
    failures row, a throttle_log row, a session row); ``age(ref, stamp, now)`` is the
    seconds since, on the monotonic clock when the stamp is one noted here (the same ref and
    the same wall value: a row changed since, or a rowid taken again, is not), otherwise by
    the wall clock as it read at this process's start (see above).  ``wall`` and ``mono``
    are the clocks (tests pass their own)."""

    def __init__(self, wall: Callable[[], float] | None = None, mono: Callable[[], float] | None = None) -> None:
        self._wall = wall or (lambda: time.time())
        self._mono = mono or (lambda: time.monotonic())
        self.run = secrets.token_hex(8)      # which process a session cookie was last used in
        self.wall0, self.mono0 = self._wall(), self._mono()
        self._lock = threading.Lock()
        self._noted: dict[tuple, tuple[float, float]] = {}

    def now(self) -> Moment:
        return Moment(self._wall(), self._mono())

    def note(self, ref: tuple, now: Moment) -> None:
        with self._lock:
            self._noted[ref] = (now.wall, now.mono)

    def age(self, ref: tuple | None, stamp: float, now: Moment) -> float:
        noted = self._noted.get(ref) if ref is not None else None
        if noted is not None and noted[0] == stamp:
            return max(0.0, now.mono - noted[1])
        return self.before_run(stamp, now)

    def before_run(self, stamp: float, now: Moment) -> float:
        """The age of a wall-clock stamp written before this process started."""
        return max(0.0, now.mono - self.mono0) + max(0.0, self.wall0 - stamp)

    def forget(self, kind: str, older_than_s: float, now: Moment) -> None:
        """Drop the notes of one kind of stamp older than any that is still asked about."""
        with self._lock:
            for ref in [r for r, (_, mono) in self._noted.items() if r[0] == kind and now.mono - mono > older_than_s]:
                del self._noted[ref]

    # A session's last use rides in its cookie (``last_seen``, wall clock), with the
    # monotonic reading and this run's id beside it (``seen``).

    def mark_seen(self, sess, now: Moment) -> None:
        sess["last_seen"] = now.wall
        sess["seen"] = [self.run, now.mono, now.wall]

    def idle(self, sess, now: Moment) -> float:
        """Seconds since the session was last used: on the monotonic clock if it was used
        in this run (and ``last_seen`` is the stamp taken then), else as :meth:`before_run`."""
        last = float(sess.get("last_seen", 0))
        seen = sess.get("seen")
        if isinstance(seen, list) and len(seen) == 3 and seen[0] == self.run and seen[2] == last:
            return max(0.0, now.mono - float(seen[1]))
        return self.before_run(last, now)


CLOCK_KEY = "niuniu.auth_clock"


@bp.record_once
def _start_clock(state) -> None:
    """The clock starts with the app: a stamp from before it counts as at least as old as
    the kiosk has run (:meth:`AuthClock.before_run`), so that is counted from the start."""
    state.app.extensions.setdefault(CLOCK_KEY, AuthClock())


def auth_clock() -> AuthClock:
    """The app's :class:`AuthClock` (made when the app is, or at its first use after a test
    took it away to stand for a restart)."""
    clock = current_app.extensions.get(CLOCK_KEY)
    if clock is None:
        clock = current_app.extensions.setdefault(CLOCK_KEY, AuthClock())
    return clock


def idle_left() -> float:
    """Seconds before the current session times out unless it is used (``kiosk.live``)."""
    clock = auth_clock()
    return float(current_app.config["SESSION_IDLE_S"]) - clock.idle(session, clock.now())


# -- throttling -----------------------------------------------------------------------------
#
# An attempt (a login, a PIN) is counted as a failure *before* its secret is checked, in one
# write transaction (BEGIN IMMEDIATE) with the check of the count: concurrent requests (the
# server is threaded) each read the count before any of them wrote it, so a burst of 80
# guesses was checked where 5 were allowed.  The slow hash (scrypt, ~100 ms) runs outside
# that transaction, so logins do not wait for one another; a right secret then takes its
# own count back.  The kiosk is one process, but console commands open the same database,
# so the lock is SQLite's, not a Python one.


@contextlib.contextmanager
def _write(conn: sqlite3.Connection):
    """One short write transaction, taken at once (BEGIN IMMEDIATE), committed whole or not."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _wait_after(ages: list[float], allowed: int) -> float:
    """Seconds still to wait after failures this many seconds ago (in the window): once
    ``allowed`` is reached the wait doubles from the base with each further one, up to the
    window, counted from the latest."""
    if len(ages) < allowed:
        return 0.0
    cfg = current_app.config
    wait = min(cfg["THROTTLE_WINDOW_S"], cfg["THROTTLE_BASE_S"] * 2 ** (len(ages) - allowed))
    return wait - min(ages)


def _failure_ages(conn: sqlite3.Connection, kinds: tuple[str, ...], key: str, now: Moment) -> list[float]:
    """How long ago each failure of these kinds for this key was (:class:`AuthClock`)."""
    clock = auth_clock()
    return [clock.age(("failure", r["id"]), r["ts"], now) for r in conn.execute(
        f"SELECT rowid AS id, ts FROM failures WHERE kind IN ({','.join('?' * len(kinds))}) AND key = ?",
        (*kinds, key))]


def _waits(conn: sqlite3.Connection, kind: str, keys: list[str], now: Moment) -> dict[str, float]:
    """Seconds until another attempt is allowed, per key: after N failures in the window the
    wait doubles from the base, so a guesser gets a few tries an hour, a fumbling dealer
    gets back in after half a minute.  For PINs, N counts the failures since the last
    right PIN (the day's ceiling, right PINs between or not, is :func:`_pin_day_count`)."""
    cfg = current_app.config
    window, limit = cfg["THROTTLE_WINDOW_S"], cfg["THROTTLE_MAX_FAILURES"]
    waits = {}
    for key in keys:
        current = [age for age in _failure_ages(conn, (kind,), key, now) if age < window]
        # One screen serves the whole pit, so the address gets more tries than one account:
        # a dealer's fumbling must not lock the supervisor out of the same screen.
        allowed = limit * 4 if kind == "login" and key.startswith("ip:") else limit
        waits[key] = _wait_after(current, allowed)
    return waits


def _lock_remaining(conn: sqlite3.Connection, kind: str, keys: list[str], now: Moment) -> float:
    return max(_waits(conn, kind, keys, now).values(), default=0.0)


def _pin_day_count(conn: sqlite3.Connection, key: str, now: Moment) -> int:
    """Wrong PINs from this screen in the last day, right PINs between them or not (a
    dealer trying a few guesses between real approvals meets the ceiling all the same)."""
    return sum(age < PIN_DAY_S for age in _failure_ages(conn, ("pin", "pin_cleared"), key, now))


def _prune(conn: sqlite3.Connection, now: Moment) -> None:
    """Forget failures nothing counts any more: PINs after a day (the ceiling), the rest
    after the throttle window; by their age on :class:`AuthClock`, so a row stamped while
    the clock ran ahead goes too (compared with the clock, it stayed young for good)."""
    clock = auth_clock()
    window = current_app.config["THROTTLE_WINDOW_S"]
    kept_s = {"pin": PIN_DAY_S, "pin_cleared": PIN_DAY_S}
    gone = [(r["id"],) for r in conn.execute("SELECT rowid AS id, kind, ts FROM failures")
            if clock.age(("failure", r["id"]), r["ts"], now) > kept_s.get(r["kind"], window)]
    conn.executemany("DELETE FROM failures WHERE rowid = ?", gone)
    gone = [(r["kind"], r["key"]) for r in conn.execute("SELECT kind, key, logged FROM throttle_log")
            if clock.age(("throttle", r["kind"], r["key"]), r["logged"], now) > PIN_DAY_S]
    conn.executemany("DELETE FROM throttle_log WHERE kind = ? AND key = ?", gone)
    clock.forget("failure", PIN_DAY_S, now)
    clock.forget("throttle", PIN_DAY_S, now)


def _record_failure(conn: sqlite3.Connection, kind: str, keys: list[str], now: Moment) -> list[int]:
    """Count a failure for each key; returns the rows' ids (a right secret takes them back)."""
    _prune(conn, now)
    clock = auth_clock()
    ids = []
    for k in keys:
        ids.append(conn.execute("INSERT INTO failures(kind, key, ts) VALUES (?, ?, ?)", (kind, k, now.wall)).lastrowid)
        clock.note(("failure", ids[-1]), now)
    return ids


def _throttled_record_due(conn: sqlite3.Connection, kind: str, locked: list[str], now: Moment) -> int | None:
    """Whether a refused (throttled) attempt is to be written to the log: the first for a
    locked key in each throttle window is, with how many were refused unwritten since that
    key's last record; the others are only counted here (returns None).

    Writing every refused attempt let anyone at the login page write ~385 records a second,
    burying the Event log and filling the disk; the throttle is what stops the guessing,
    the log only needs to say that it did, and how often."""
    window = current_app.config["THROTTLE_WINDOW_S"]
    clock = auth_clock()
    rows = {r["key"]: r for r in conn.execute(
        f"SELECT key, logged, refused FROM throttle_log WHERE kind = ? AND key IN ({','.join('?' * len(locked))})",
        (kind, *locked))}
    if locked and all(k in rows and clock.age(("throttle", kind, k), rows[k]["logged"], now) < window
                      for k in locked):
        conn.executemany("UPDATE throttle_log SET refused = refused + 1 WHERE kind = ? AND key = ?",
                         [(kind, k) for k in locked])
        return None
    conn.executemany("INSERT INTO throttle_log(kind, key, logged, refused) VALUES (?, ?, ?, 0) "
                     "ON CONFLICT(kind, key) DO UPDATE SET logged = excluded.logged, refused = 0",
                     [(kind, k, now.wall) for k in locked])
    for k in locked:
        clock.note(("throttle", kind, k), now)
    return max((r["refused"] for r in rows.values()), default=0)


def _client() -> str:
    return request.remote_addr or "unknown"


# -- the logged-in user ---------------------------------------------------------------------


def load_user() -> None:
    """Runs before every request: find the user and end sessions idle too long.

    A session is the signed cookie and a row of ``sessions`` whose id the cookie carries:
    logging out or timing out deletes the row, so a copy of the cookie ends with it (the
    cookie alone cannot be taken back).  Only the request that deletes the row writes the
    ``session_timeout`` record: a captured expired cookie, replayed, wrote one in that
    account's name per request."""
    g.user = None
    uid = session.get("uid")
    if uid is None:
        return
    conn = db.get_db()
    row = conn.execute("SELECT id, username, role, active, session_gen FROM users WHERE id = ?",
                       (uid,)).fetchone()
    # A cookie from before session generations existed carries none: read it as 0, the
    # generation every account starts at (and is migrated to), so an upgrade logs no one out.
    if row is None or not row["active"] or session.get("gen", 0) != row["session_gen"]:
        session.clear()
        return
    sid = session.get("sid")
    # A cookie without a session id is refused: the signature alone is not enough, because
    # whoever learns the secret key (a leak, or a key file a power cut left as NUL bytes)
    # could sign one for any account, and the server had nothing of its own to check it
    # against.  Every login since session ids gives one; a session from before them logs in
    # once more.
    if sid is None or conn.execute("SELECT 1 FROM sessions WHERE id = ? AND user_id = ?",
                                   (sid, uid)).fetchone() is None:
        session.clear()     # logged out or timed out already: this is a copy, or a replay
        return
    clock = auth_clock()
    now = clock.now()
    idle = current_app.config["SESSION_IDLE_S"]
    # on the monotonic clock (AuthClock): a step of the wall clock neither ends a session in
    # use nor keeps an idle one open
    if clock.idle(session, now) > idle:
        if conn.execute("DELETE FROM sessions WHERE id = ?", (sid,)).rowcount:
            audit().append(AuditType.SESSION_TIMEOUT, row["username"],
                           {"role": row["role"], "idle_limit_s": idle, "ip": _client()})
        session.clear()
        # said on the login page the request lands on: a dealer sent back to it mid-shift
        # should know why, not suspect a fault
        flash(f"{row['username']}'s session ended after {idle / 60:g} minutes without use; log in again.")
        return
    longest = current_app.config["SESSION_MAX_S"]
    started = conn.execute("SELECT started FROM sessions WHERE id = ?", (sid,)).fetchone()
    if started is not None and clock.age(("session", sid), started["started"], now) > longest:
        # Ended here, on the clock no step moves, with a record: the cookie's own expiry
        # (Flask's, on the wall clock) ended every session at an NTP step of more than its
        # lifetime, without a word in the log.
        if conn.execute("DELETE FROM sessions WHERE id = ?", (sid,)).rowcount:
            audit().append(AuditType.SESSION_TIMEOUT, row["username"],
                           {"role": row["role"], "session_max_s": longest, "ip": _client()})
        session.clear()
        flash(f"{row['username']}'s session ended {longest / 3600:g} hours after logging in; log in again.")
        return
    endpoint = current_app.view_functions.get(request.endpoint) if request.endpoint else None
    if not getattr(endpoint, "passive", False):
        clock.mark_seen(session, now)
    g.user = {"id": row["id"], "username": row["username"], "role": Role(row["role"])}


class StepProofSessions(SecureCookieSessionInterface):
    """Flask's signed-cookie sessions, without the cookie's own expiry check.

    That check compares the signing time with the wall clock, and refuses a cookie signed
    "in the future" as well as an old one: an NTP step back of any size logged every screen
    out at once, a step forward past the lifetime too, with nothing in the log.  The server
    times sessions itself, on a clock no step moves (:func:`load_user`: idle time, the
    longest session, a logout or timeout deleting the session's row), so the cookie need
    only be genuine."""

    def open_session(self, app, request):
        serializer = self.get_signing_serializer(app)
        if serializer is None:
            return None
        value = request.cookies.get(self.get_cookie_name(app))
        if not value:
            return self.session_class()
        try:
            return self.session_class(serializer.loads(value))
        except BadSignature:
            return self.session_class()


# Sessions kept alive by use past this are very unlikely (30 minutes idle ends one); a row
# older is one whose cookie was dropped without a logout or a timeout seen here.
SESSION_ROWS_KEPT_S = 7 * 24 * 3600.0


def _start_session(conn: sqlite3.Connection, user_id: int, now: Moment) -> str:
    """A new session's row; rows older than ``SESSION_ROWS_KEPT_S`` go, by their age on
    :class:`AuthClock` (one started while the clock ran ahead goes too)."""
    clock = auth_clock()
    sid = secrets.token_urlsafe(24)
    old = [(r["id"],) for r in conn.execute("SELECT id, started FROM sessions")
           if clock.age(("session", r["id"]), r["started"], now) > SESSION_ROWS_KEPT_S]
    conn.executemany("DELETE FROM sessions WHERE id = ?", old)
    conn.execute("INSERT INTO sessions(id, user_id, started) VALUES (?, ?, ?)", (sid, user_id, now.wall))
    clock.note(("session", sid), now)
    clock.forget("session", SESSION_ROWS_KEPT_S, now)
    return sid


def passive(view):
    """Mark a view (SSE, MJPEG, status polling) whose traffic is not the user being active."""
    view.passive = True
    return view


def wants_json() -> bool:
    return "/api/" in request.path or request.path.startswith("/live/") or request.is_json


def require(*roles: Role):
    """Let only these roles in; others get 403, strangers get the login page.

    The roles are kept on the view (``allowed_roles``) so that :func:`can_open` asks the
    same rule before sending someone to a page."""
    def decorate(view):
        @functools.wraps(view)
        def wrapped(*args, **kwargs):
            if g.get("user") is None:
                if wants_json():
                    return jsonify(error="not logged in (or the session timed out); log in again"), 401
                return redirect(url_for("auth.login", next=request.full_path))
            if g.user["role"] not in roles:
                if wants_json():
                    return jsonify(error=f"a {g.user['role']} may not do this"), 403
                abort(403)
            return view(*args, **kwargs)
        wrapped.allowed_roles = frozenset(roles)
        return wrapped
    return decorate


def can_open(role: Role, path: str) -> bool:
    """Whether this role may open the page at this path of the kiosk, by the roles its view
    was given in :func:`require`.  A page without them is open to all; a path that is no
    page (404) or wants another method is not a question of role, so it is not refused here."""
    adapter = current_app.url_map.bind_to_environ(request.environ)
    path = unquote(path)
    for _ in range(2):          # once more after a redirect such as /dealer -> /dealer/
        try:
            endpoint, _args = adapter.match(path, method="GET")
        except RequestRedirect as moved:
            path = unquote(urlsplit(moved.new_url).path)
            continue
        except HTTPException:
            return True
        allowed = getattr(current_app.view_functions.get(endpoint), "allowed_roles", None)
        return allowed is None or Role(role) in allowed
    return True


# -- CSRF -----------------------------------------------------------------------------------


def csrf_token() -> str:
    token = session.get("csrf")
    if not token:
        token = session["csrf"] = secrets.token_urlsafe(32)
    return token


def check_csrf():
    """Every POST (form or fetch) must carry the session's token; a page on another
    site cannot read it, so it cannot make the kiosk settle or void anything."""
    if request.method in SAFE_METHODS:
        return None
    if request.endpoint == "auth.logout" and g.get("user") is None:
        # Log out pressed after the session timed out: nobody is logged in, so there is
        # nothing a forged request could do, and "stale token" would read as a fault.
        return None
    sent = request.headers.get("X-CSRF-Token") or request.form.get("csrf_token", "")
    expected = session.get("csrf", "")
    if not expected or not hmac.compare_digest(sent.encode(), expected.encode()):
        message = "the form's security token is missing or stale; reload the page and try again"
        if wants_json():
            return jsonify(error=message), 400
        return render_template("error.html", code=400, message=message), 400
    return None


# -- supervisor approval --------------------------------------------------------------------


def authorize_supervisor(pin: str, purpose: str, *, round_no: int | None = None, action: str | None = None) -> str:
    """Return the supervisor whose PIN this is, or raise; failures are throttled and logged.

    The guess is counted before the PIN is checked, in one transaction with the check of
    the count (see "throttling" above), so a burst of requests gets no more guesses than
    one at a time.  A right PIN then takes its count back and ends the run of failures
    before it, as a login does, so a supervisor who mistyped earlier is not made to wait
    for the next approval; those failures still count toward the day's ceiling
    (``PIN_DAILY_CEILING``), whose lock only a supervisor's (or an admin's) password login
    at this screen lifts.  A right PIN is put on record even when the action is then
    refused (:func:`_record_refused_approval`).  An empty PIN is no guess (the dealer
    pressed the button before the supervisor came): it is answered, not counted or logged.

    ``round_no`` is the round the action was for, and ``action`` what it was (the dealer view's
    name when not given: ``correct``, ``adjustment``, ``void``): a wrong PIN is filed under the
    round, so it is on that round's page and in its evidence package, where a dispute looks
    (QA49 watch M8; only the purpose's words named the round before)."""
    conn = db.get_db()
    now = auth_clock().now()
    key = f"ip:{_client()}"
    requester = g.user["username"] if g.get("user") else "anonymous"
    guess = bool((pin or "").strip())
    attempted = _attempted(round_no, action)
    with _write(conn):
        day = _pin_day_count(conn, key, now)
        wait = _lock_remaining(conn, "pin", [key], now)
        counted = _record_failure(conn, "pin", [key], now) if guess and day < PIN_DAILY_CEILING and wait <= 0 \
            else []
    if day >= PIN_DAILY_CEILING:
        raise AuthError(PIN_LOCKED)
    if wait > 0:
        raise AuthError(f"too many wrong PINs; wait {int(wait) + 1} s before trying again")
    if not guess:
        raise AuthError("type the supervisor's PIN: a supervisor must approve this with their own PIN")
    if _PIN.match(pin):
        for row in conn.execute("SELECT username, pin_hash FROM users WHERE role = ? AND active = 1 "
                                "AND pin_hash IS NOT NULL", (Role.SUPERVISOR.value,)).fetchall():
            if check_password_hash(row["pin_hash"], pin):
                with _write(conn):
                    conn.execute("DELETE FROM failures WHERE rowid = ?", (counted[0],))
                    conn.execute("UPDATE failures SET kind = 'pin_cleared' WHERE kind = 'pin' AND key = ? "
                                 "AND rowid < ?", (key, counted[0]))
                g.pin_accepted = {"approved_by": row["username"], "requested_by": requester,
                                  "purpose": purpose, **attempted, "ip": _client()}
                return row["username"]
    locks = day + 1 >= PIN_DAILY_CEILING
    payload = {"purpose": purpose, **attempted, "ip": _client()}
    if locks:
        payload["locked"] = "PIN approval on this screen, until a supervisor logs in here"
    audit().append(AuditType.PIN_FAILED, requester, payload, round_no=_round_on_record(round_no))
    if locks:
        raise AuthError(f"supervisor PIN not recognised; {PIN_LOCKED}")
    raise AuthError("supervisor PIN not recognised; a supervisor must type their own PIN")


def _attempted(round_no: int | None, action: str | None) -> dict:
    """What a PIN was typed for, as the PIN's records keep it: the action and the round."""
    action = action or (request.endpoint or "").rpartition(".")[2]
    return {**({"action": action} if action else {}), **({"round": round_no} if round_no is not None else {})}


def _round_on_record(round_no: int | None) -> int | None:
    """The round a PIN record is filed under: the round the action named, where this table
    has one.  A number the screen sent for no round (or beyond what the log stores) stays in
    the payload only, so it neither makes a round of its own in the log nor fails the record."""
    if round_no is None:
        return None
    log = audit()
    return round_no if log.records(round_no=round_no, table_id=log.table_id, types=[AuditType.ROUND_START],
                                   limit=1) else None


@bp.after_app_request
def _record_refused_approval(response):
    """A right PIN leaves a record whatever the action then does: one that goes through
    names its approver in its own record; one refused (a 409: no such round, the table's
    state) wrote nothing, so a right guess in a burst of wrong ones was visible only in
    the HTTP status the guesser saw.  This writes ``pin_accepted`` for it."""
    accepted = g.pop("pin_accepted", None)
    if accepted is None or response.status_code < 300:
        return response
    body = response.get_json(silent=True) if response.is_json else None
    refused = body.get("error") if isinstance(body, dict) else None
    try:
        # without it a right guess left no trace (only wrong ones were logged, and the refused
        # action wrote nothing)
        audit().append(AuditType.PIN_ACCEPTED, accepted["requested_by"],
                       {**accepted, "status": response.status_code, "refused": str(refused or "")[:300]},
                       round_no=_round_on_record(accepted.get("round")))
    except (AuditError, sqlite3.Error):
        # the action has failed already, and answering it stays more useful than a 500
        current_app.logger.exception("could not record the PIN accepted for a refused action: %s", accepted)
    return response


# -- views ----------------------------------------------------------------------------------


def _safe_next(target: str | None) -> str | None:
    """Where to go after logging in: a page of this kiosk, or None (the role's home).

    Refused: another site (``https://``, ``//host``), control characters (a CR/LF would
    fail the redirect after the login had succeeded), backslashes (read as ``/`` by
    browsers) and the login pages themselves (``/auth/logout`` is POST only)."""
    if not target:
        return None
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in target) or "\\" in target:
        return None
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
        return None
    if parts.path == "/auth" or parts.path.startswith("/auth/"):
        return None
    return target.rstrip("?")


def home_for(role: Role) -> str:
    return url_for(HOME[Role(role)])


def _landing(role: Role, target: str | None) -> str:
    """Where a login lands: ``next=`` if this role may open it, else the role's home, with
    a word why (a dealer sent to an admin page would otherwise meet a 403 at once)."""
    if target is None:
        return home_for(role)
    if not can_open(role, urlsplit(target).path):
        flash(f"A {role.value} cannot open {urlsplit(target).path}; this is your start page.")
        return home_for(role)
    return target


def _setup_code_matches(sent: str, expected: str) -> bool:
    """An empty expected code matches nothing: an empty ``setup_code`` file would otherwise
    let anyone who reached the screen first make the administrator with an empty form."""
    return bool(expected) and hmac.compare_digest(sent.encode(), expected.encode())


@bp.route("/setup", methods=("GET", "POST"))
def setup():
    conn = db.get_db()
    if user_count(conn):
        return redirect(url_for("auth.login"))
    error, status = None, 200
    if request.method == "POST":
        code = request.form.get("setup_code", "").strip().lower()   # printed as lower-case hex
        username = request.form.get("username", "").strip()
        password = request.form.get("password", "")
        now = auth_clock().now()
        keys = [f"ip:{_client()}"]
        # One at a time, and the "no accounts yet" checked again inside: two submits at once
        # (a double click, two screens) must not both make an administrator with one code.
        conn.execute("BEGIN IMMEDIATE")
        try:
            if user_count(conn):
                conn.execute("ROLLBACK")
                flash("The administrator has been created already; log in.")
                return redirect(url_for("auth.login"))
            wait = _lock_remaining(conn, "setup", keys, now)
            if wait > 0:
                error, status = f"too many wrong setup codes; wait {int(wait) + 1} s and try again", 429
            elif not _setup_code_matches(code, db.setup_code(runtime().data_dir)):
                _record_failure(conn, "setup", keys, now)
                error = "setup code is wrong; it is printed on the console where the kiosk was started"
            elif password != request.form.get("password2", ""):
                error = "the two passwords differ; type the same password twice"
            else:
                try:
                    create_user(conn, username, Role.ADMIN.value, password, created_by="first-run setup")
                except AuthError as exc:
                    error = str(exc)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        if error is None:
            db.forget_setup_code(runtime().data_dir)
            audit().append(AuditType.SETUP_ADMIN, username, {"ip": _client()})
            flash("Administrator created. Log in, then add dealer, supervisor and surveillance accounts.")
            return redirect(url_for("auth.login"))
    # What was typed comes back after an error, so only the mistake is typed again; the
    # passwords never do (they would sit in the page's source on a shared screen).
    return render_template("auth/setup.html", error=error, setup_code=request.form.get("setup_code", ""),
                           username=request.form.get("username", "")), \
        (status if status != 200 else 400 if error else 200)


def _login_actor(typed: str) -> tuple[str, dict]:
    """The actor of a failed login, and what goes into its payload: the typed name only if
    it could be a username; else ``NOT_A_USERNAME``, with the text (cut short) in the payload,
    so a name typed as a spreadsheet formula or a terminal escape never reaches the actor
    column (the CSV export writes it as it is: the file is signed)."""
    if _USERNAME.match(typed):
        return typed, {}
    return NOT_A_USERNAME, {"typed": typed[:64]}


def _dummy_hash() -> str:
    """A hash, with this kiosk's method, that an unknown username's password is checked
    against: that answer takes as long as a wrong password (skipping the check answered in
    5 ms against scrypt's ~100 ms, telling which usernames exist)."""
    method = current_app.config.get("PASSWORD_HASH_METHOD", "scrypt")
    made = current_app.extensions.setdefault("niuniu.dummy_hash", {})
    if method not in made:
        made[method] = generate_password_hash(secrets.token_hex(16), method=method)
    return made[method]


@bp.route("/login", methods=("GET", "POST"))
def login():
    """Log in.  The attempt is counted as a failure before the password is checked (see
    "throttling"), the hash checked outside that transaction, and a right password takes
    the count back; an attempt the throttle refuses is written to the log only once per
    window (:func:`_throttled_record_due`).  A supervisor's or an admin's login unlocks PIN
    approval at this screen (``PIN_DAILY_CEILING``), saying so in its record."""
    conn = db.get_db()
    if not user_count(conn):
        return redirect(url_for("auth.setup"))
    error, status = None, 200
    if request.method == "POST":
        username = request.form.get("username", "").strip()
        password = request.form.get("password", "")
        clock = auth_clock()
        now = clock.now()
        screen = f"ip:{_client()}"
        keys = [f"user:{username[:64].lower()}", screen]
        actor, typed = _login_actor(username)
        with _write(conn):
            waits = _waits(conn, "login", keys, now)
            locked = [k for k in keys if waits[k] > 0]
            counted = [] if locked else _record_failure(conn, "login", keys, now)
            due = _throttled_record_due(conn, "login", locked, now) if locked else None
        row = None if locked else conn.execute(
            "SELECT id, username, role, password_hash, active, session_gen FROM users WHERE username = ?",
            (username,)).fetchone()
        if locked:
            error, status = f"too many failed logins; wait {int(max(waits.values())) + 1} s and try again", 429
            if due is not None:
                audit().append(AuditType.LOGIN_FAILED, actor,
                               {"reason": "throttled", "ip": _client(), "refused_unlogged": due, **typed})
        elif not (check_password_hash(row["password_hash"] if row else _dummy_hash(), password)
                  and row is not None and row["active"]):
            reason = "unknown user" if row is None else ("account disabled" if not row["active"]
                                                          else "wrong password")
            audit().append(AuditType.LOGIN_FAILED, actor, {"reason": reason, "ip": _client(), **typed})
            error, status = "username or password is wrong", 401
        else:
            unlocks = Role(row["role"]) in (Role.SUPERVISOR, Role.ADMIN)
            with _write(conn):
                conn.execute("DELETE FROM failures WHERE kind = 'login' AND key IN (?, ?) AND rowid <= ?",
                             (*keys, max(counted)))
                cleared = conn.execute("DELETE FROM failures WHERE kind IN ('pin', 'pin_cleared') AND key = ?",
                                       (screen,)).rowcount if unlocks else 0
                sid = _start_session(conn, row["id"], now)
            session.clear()
            # on record first: a login the log cannot take (a full disk) must not be a session
            payload = {"role": row["role"], "ip": _client()}
            if cleared:
                payload["wrong_pins_cleared"] = cleared     # PIN approval here unlocked, or its count reset
            audit().append(AuditType.LOGIN, row["username"], payload)
            session.permanent = True
            session["uid"] = row["id"]
            session["gen"] = row["session_gen"]
            session["sid"] = sid
            clock.mark_seen(session, now)
            csrf_token()
            return redirect(_landing(Role(row["role"]), _safe_next(request.args.get("next"))))
    return render_template("auth/login.html", error=error), status


@bp.route("/logout", methods=("POST",))
def logout():
    """Log out, ending the session on the server too (its row in ``sessions``), so a copy of
    the cookie stops working with it; before, only the browser forgot it.

    Only this session ends, not the account's others: a supervisor leaving the pit's screen
    must not be logged out of the report open in the office.  A session thought copied or
    stolen is answered by an admin's password reset, which ends them all (:func:`end_sessions`)."""
    if g.get("user"):
        sid = session.get("sid")
        session.clear()     # a log that cannot take the record must not keep anyone logged in
        if sid is not None:
            db.get_db().execute("DELETE FROM sessions WHERE id = ?", (sid,))
        audit().append(AuditType.LOGOUT, g.user["username"], {"role": g.user["role"].value, "ip": _client()})
    # else the session has ended already, holding at most why (the timeout's message)
    return redirect(url_for("auth.login"))


@bp.route("/whoami")
@passive
def whoami():
    if g.get("user") is None:
        return jsonify(user=None), 401
    return jsonify(user=g.user["username"], role=g.user["role"].value)
