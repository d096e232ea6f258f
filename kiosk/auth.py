"""Who may do what at the table: accounts, roles, login, CSRF, throttling, timeouts.

The four roles mirror the people in a casino: the *dealer* runs rounds, the *pit
supervisor* approves what a dealer alone must not (changing a settled hand, voiding
a round) by typing a personal PIN on the dealer's screen, *surveillance* reviews
and never changes anything, and the *admin* manages accounts.  There is no default
password anywhere: the first start prints a one-time setup code and the first
account is the admin created with it.
"""

from __future__ import annotations

import functools
import hmac
import re
import secrets
import sqlite3
import time
from enum import StrEnum
from urllib.parse import unquote, urlsplit

from flask import (Blueprint, abort, current_app, flash, g, jsonify, redirect, render_template,
                   request, session, url_for)
from werkzeug.exceptions import HTTPException
from werkzeug.routing import RequestRedirect
from werkzeug.security import check_password_hash, generate_password_hash

from kiosk import db
from kiosk.audit import AuditType, utc_iso
from kiosk.runtime import audit, runtime
from scoring.errors import NiuniuError

bp = Blueprint("auth", __name__, url_prefix="/auth")

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_USERNAME = re.compile(r"^[A-Za-z0-9._-]{3,32}$")
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
# Wrong PINs a screen may send in the throttle window however many right ones come
# between them: a right PIN ends the current run of failures (a supervisor who mistyped is
# not still counted against), so without this ceiling a dealer could try a few guesses
# between every real approval.
PIN_FAILURES_CEILING = 4


class Role(StrEnum):
    DEALER = "dealer"
    SUPERVISOR = "supervisor"
    SURVEILLANCE = "surveillance"
    ADMIN = "admin"


HOME = {Role.DEALER: "dealer.screen", Role.SUPERVISOR: "dealer.screen",
        Role.SURVEILLANCE: "review.rounds", Role.ADMIN: "admin.users"}


class AuthError(NiuniuError):
    """An account, password or PIN that cannot be accepted; the message says what to change."""


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


def validate_account(username: str, role: str, password: str, pin: str | None) -> Role:
    if not _USERNAME.match(username or ""):
        raise AuthError(f"username {username!r}: use 3 to 32 letters, digits, dots, dashes or underscores")
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
        for row in conn.execute("SELECT username, pin_hash FROM users WHERE pin_hash IS NOT NULL"):
            if check_password_hash(row["pin_hash"], pin):
                raise AuthError("that PIN is already used by another supervisor; choose a different one")
    conn.execute("INSERT INTO users(username, role, password_hash, pin_hash, active, created_at, created_by) "
                 "VALUES (?, ?, ?, ?, 1, ?, ?)",
                 (username, parsed.value, hasher(password), hasher(pin) if pin else None, utc_iso(), created_by))
    return {"username": username, "role": parsed.value}


def end_sessions(conn: sqlite3.Connection, user_id: int) -> int:
    """End every open session of this account; returns the account's new session generation.

    Sessions are signed cookies, so the server cannot delete them: each carries the
    account's generation (``users.session_gen``) from login, and :func:`load_user` ends
    one whose generation is no longer the account's.  An admin's password or PIN reset
    (the fix for a leaked one, useless if whoever used it stays logged in) bumps it in
    the same statement that sets the new secret; Disable bumps it here, so that enabling
    the account later does not bring the old sessions back.
    """
    conn.execute("UPDATE users SET session_gen = session_gen + 1 WHERE id = ?", (user_id,))
    return conn.execute("SELECT session_gen FROM users WHERE id = ?", (user_id,)).fetchone()[0]


def user_count(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT COUNT(*) FROM users").fetchone()[0]


def list_users(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    return conn.execute("SELECT id, username, role, active, created_at, created_by, "
                        "pin_hash IS NOT NULL AS has_pin FROM users ORDER BY role, username").fetchall()


# -- throttling -----------------------------------------------------------------------------


def _wait_after(times: list[float], allowed: int, now: float) -> float:
    """Seconds still to wait after these failures (oldest first): once ``allowed`` is
    reached the wait doubles from the base with each further one, up to the window."""
    if len(times) < allowed:
        return 0.0
    cfg = current_app.config
    wait = min(cfg["THROTTLE_WINDOW_S"], cfg["THROTTLE_BASE_S"] * 2 ** (len(times) - allowed))
    return times[-1] + wait - now


def _lock_remaining(conn: sqlite3.Connection, kind: str, keys: list[str], now: float) -> float:
    """Seconds until another attempt is allowed: after N failures in the window the wait
    doubles from the base, so a guesser gets a few tries an hour, a fumbling dealer
    gets back in after half a minute.

    For PINs, N counts the failures since the last right PIN (``pin``), and a ceiling of
    ``PIN_FAILURES_CEILING`` times N counts every failure in the window, right PINs
    between them or not (``pin`` and ``pin_cleared``)."""
    cfg = current_app.config
    window, limit = cfg["THROTTLE_WINDOW_S"], cfg["THROTTLE_MAX_FAILURES"]
    worst = 0.0
    for key in keys:
        rows = conn.execute("SELECT kind, ts FROM failures WHERE kind IN (?, ?) AND key = ? AND ts > ? "
                            "ORDER BY ts", (kind, f"{kind}_cleared", key, now - window)).fetchall()
        current = [r["ts"] for r in rows if r["kind"] == kind]
        # One screen serves the whole pit, so the address gets more tries than one account:
        # a dealer's fumbling must not lock the supervisor out of the same screen.
        allowed = limit * 4 if kind == "login" and key.startswith("ip:") else limit
        worst = max(worst, _wait_after(current, allowed, now))
        if kind == "pin":
            worst = max(worst, _wait_after([r["ts"] for r in rows], limit * PIN_FAILURES_CEILING, now))
    return worst


def _record_failure(conn: sqlite3.Connection, kind: str, keys: list[str], now: float) -> None:
    conn.execute("DELETE FROM failures WHERE ts < ?", (now - current_app.config["THROTTLE_WINDOW_S"],))
    conn.executemany("INSERT INTO failures(kind, key, ts) VALUES (?, ?, ?)", [(kind, k, now) for k in keys])


def _client() -> str:
    return request.remote_addr or "unknown"


# -- the logged-in user ---------------------------------------------------------------------


def load_user() -> None:
    """Runs before every request: find the user and end sessions idle too long."""
    g.user = None
    uid = session.get("uid")
    if uid is None:
        return
    row = db.get_db().execute("SELECT id, username, role, active, session_gen FROM users WHERE id = ?",
                              (uid,)).fetchone()
    # A cookie from before session generations existed carries none: read it as 0, the
    # generation every account starts at (and is migrated to), so an upgrade logs no one out.
    if row is None or not row["active"] or session.get("gen", 0) != row["session_gen"]:
        session.clear()
        return
    now = time.time()
    idle = current_app.config["SESSION_IDLE_S"]
    if now - float(session.get("last_seen", 0)) > idle:
        audit().append(AuditType.SESSION_TIMEOUT, row["username"],
                       {"role": row["role"], "idle_limit_s": idle, "ip": _client()})
        session.clear()
        # said on the login page the request lands on: a dealer sent back to it mid-shift
        # should know why, not suspect a fault
        flash(f"{row['username']}'s session ended after {idle / 60:g} minutes without use; log in again.")
        return
    endpoint = current_app.view_functions.get(request.endpoint) if request.endpoint else None
    if not getattr(endpoint, "passive", False):
        session["last_seen"] = now
    g.user = {"id": row["id"], "username": row["username"], "role": Role(row["role"])}


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


def authorize_supervisor(pin: str, purpose: str) -> str:
    """Return the supervisor whose PIN this is, or raise; failures are throttled and logged.

    A right PIN ends the run of failures before it, as a login does, so a supervisor who
    mistyped earlier is not locked out of the next approval; those failures still count
    toward the ceiling (see :func:`_lock_remaining`).  An empty PIN is no guess (the
    dealer pressed the button before the supervisor came): it is answered, not counted
    or logged."""
    conn = db.get_db()
    now = time.time()
    keys = [f"ip:{_client()}"]
    requester = g.user["username"] if g.get("user") else "anonymous"
    wait = _lock_remaining(conn, "pin", keys, now)
    if wait > 0:
        raise AuthError(f"too many wrong PINs; wait {int(wait) + 1} s before trying again")
    if not (pin or "").strip():
        raise AuthError("type the supervisor's PIN: a supervisor must approve this with their own PIN")
    if _PIN.match(pin):
        for row in conn.execute("SELECT username, pin_hash FROM users WHERE role = ? AND active = 1 "
                                "AND pin_hash IS NOT NULL", (Role.SUPERVISOR.value,)):
            if check_password_hash(row["pin_hash"], pin):
                conn.executemany("UPDATE failures SET kind = 'pin_cleared' WHERE kind = 'pin' AND key = ?",
                                 [(k,) for k in keys])
                return row["username"]
    _record_failure(conn, "pin", keys, now)
    audit().append(AuditType.PIN_FAILED, requester, {"purpose": purpose, "ip": _client()})
    raise AuthError("supervisor PIN not recognised; a supervisor must type their own PIN")


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
        now = time.time()
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
            elif not hmac.compare_digest(code.encode(), db.setup_code(runtime().data_dir).encode()):
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


@bp.route("/login", methods=("GET", "POST"))
def login():
    conn = db.get_db()
    if not user_count(conn):
        return redirect(url_for("auth.setup"))
    error, status = None, 200
    if request.method == "POST":
        username = request.form.get("username", "").strip()
        password = request.form.get("password", "")
        now = time.time()
        keys = [f"user:{username.lower()}", f"ip:{_client()}"]
        wait = _lock_remaining(conn, "login", keys, now)
        row = conn.execute("SELECT id, username, role, password_hash, active, session_gen FROM users "
                           "WHERE username = ?", (username,)).fetchone()
        if wait > 0:
            error, status = f"too many failed logins; wait {int(wait) + 1} s and try again", 429
            audit().append(AuditType.LOGIN_FAILED, username[:64] or "-",
                           {"reason": "throttled", "ip": _client()})
        elif row is None or not row["active"] or not check_password_hash(row["password_hash"], password):
            reason = "unknown user" if row is None else ("account disabled" if not row["active"]
                                                          else "wrong password")
            _record_failure(conn, "login", keys, now)
            audit().append(AuditType.LOGIN_FAILED, username[:64] or "-", {"reason": reason, "ip": _client()})
            error, status = "username or password is wrong", 401
        else:
            conn.execute("DELETE FROM failures WHERE kind = 'login' AND key IN (?, ?)", tuple(keys))
            session.clear()
            # on record first: a login the log cannot take (a full disk) must not be a session
            audit().append(AuditType.LOGIN, row["username"], {"role": row["role"], "ip": _client()})
            session.permanent = True
            session["uid"] = row["id"]
            session["gen"] = row["session_gen"]
            session["last_seen"] = now
            csrf_token()
            return redirect(_landing(Role(row["role"]), _safe_next(request.args.get("next"))))
    return render_template("auth/login.html", error=error), status


@bp.route("/logout", methods=("POST",))
def logout():
    if g.get("user"):
        try:
            audit().append(AuditType.LOGOUT, g.user["username"], {"role": g.user["role"].value, "ip": _client()})
        finally:
            session.clear()     # a log that cannot take the record must not keep anyone logged in
    # else the session has ended already, holding at most why (the timeout's message)
    return redirect(url_for("auth.login"))


@bp.route("/whoami")
@passive
def whoami():
    if g.get("user") is None:
        return jsonify(user=None), 401
    return jsonify(user=g.user["username"], role=g.user["role"].value)
