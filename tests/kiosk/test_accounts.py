"""The admin's Accounts page: PIN fields, password resets, blank passwords, times shown."""

from __future__ import annotations

import io
from datetime import datetime, timedelta
from html.parser import HTMLParser

import pytest

from kiosk import db
from kiosk.audit import AuditType
from kiosk_testing import ACCOUNTS, csrf_from, login, table_dict
from vision.table import table_config_from_dict


class Inputs(HTMLParser):
    """Every <input> on a page, as a dict of its attributes."""

    def __init__(self, html: str):
        super().__init__()
        self.found: list[dict[str, str | None]] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        if tag == "input":
            self.found.append(dict(attrs))


@pytest.fixture
def admin(client):
    return client, login(client, "admin1")


def account(app, username: str):
    conn = db.connect(app.config["DATA_DIR"])
    try:
        return conn.execute("SELECT id, password_hash, created_at FROM users WHERE username = ?",
                            (username,)).fetchone()
    finally:
        conn.close()


def can_log_in(app, username: str, password: str) -> bool:
    other = app.test_client()
    token = csrf_from(other.get("/auth/login").get_data(as_text=True))
    r = other.post("/auth/login", data={"username": username, "password": password, "csrf_token": token})
    return r.status_code == 302


def test_pin_fields_do_not_show_the_pin(admin):
    """The PIN approves money corrections; typed in clear it shows on a shared screen."""
    client, _ = admin
    pins = [i for i in Inputs(client.get("/admin/users").get_data(as_text=True)).found if i.get("name") == "pin"]
    assert len(pins) == 2   # "Add an account" and super1's row
    for field in pins:
        assert (field.get("type"), field.get("inputmode"), field.get("autocomplete")) == \
               ("password", "numeric", "off")


def test_a_password_reset_asks_twice_and_refuses_a_mismatch(admin, app, audit):
    client, token = admin
    page = client.get("/admin/users").get_data(as_text=True)
    assert [i.get("type") for i in Inputs(page).found if i.get("name") == "password2"] == ["password"] * 5
    uid = account(app, "dealer1")["id"]
    r = client.post(f"/admin/users/{uid}/secret", follow_redirects=True,
                    data={"csrf_token": token, "password": "a-fresh-password", "password2": "a-fresh-passwort"})
    assert b"the two new passwords for dealer1 differ; type the same password twice" in r.data
    missing = client.post(f"/admin/users/{uid}/secret", follow_redirects=True,
                          data={"csrf_token": token, "password": "a-fresh-password"})
    assert b"differ" in missing.data
    assert AuditType.USER_CHANGED not in [rec.type for rec in audit.records()]
    assert can_log_in(app, "dealer1", ACCOUNTS["dealer1"][1]) and not can_log_in(app, "dealer1", "a-fresh-password")


@pytest.mark.parametrize("blank", [" " * 10, "\t" * 12, " \u00a0" * 6])
def test_an_all_blank_password_is_refused_at_creation_and_reset(admin, app, blank):
    client, token = admin
    created = client.post("/admin/users", data={"csrf_token": token, "username": "blank1", "role": "dealer",
                                                "password": blank, "password2": blank})
    assert created.status_code == 400 and b"is only spaces" in created.data
    assert account(app, "blank1") is None
    before = account(app, "dealer1")
    r = client.post(f"/admin/users/{before['id']}/secret", follow_redirects=True,
                    data={"csrf_token": token, "password": blank, "password2": blank})
    assert b"the new password is only spaces" in r.data
    assert account(app, "dealer1")["password_hash"] == before["password_hash"]
    # spaces inside (or around) a real passphrase are fine
    ok = client.post("/admin/users", data={"csrf_token": token, "username": "spaced1", "role": "dealer",
                                           "password": " correct horse ", "password2": " correct horse "})
    assert ok.status_code == 302 and can_log_in(app, "spaced1", " correct horse ")


def test_the_console_refuses_an_all_blank_password_too(tmp_path, runner, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(" " * 12 + "\n"))
    code, _, err = runner(["users", "add", "--data-dir", str(tmp_path), "--username", "kim", "--role", "dealer",
                           "--password-stdin"])
    assert code == 2 and "is only spaces" in err


@pytest.mark.parametrize("table", [table_config_from_dict({**table_dict(), "timezone": "Asia/Phnom_Penh"})])
def test_created_is_shown_in_the_tables_time_zone_to_the_second(admin, app):
    client, _ = admin
    raw = account(app, "dealer1")["created_at"]          # 2026-12-06T21:30:55.399582Z
    local = (datetime.fromisoformat(raw.replace("Z", "+00:00")) + timedelta(hours=7)).strftime("%Y-%m-%d %H:%M:%S")
    page = client.get("/admin/users").get_data(as_text=True)
    assert "Created (Asia/Phnom_Penh)" in page
    assert f'title="{raw}">{local}</td>' in page      # the exact log text stays in the tooltip
    assert f">{raw}" not in page


WEAK = [("Dealer2-spare", "containing the username, in any case", b"contains the username"),
        ("aaaaaaaaaaaa", "one character repeated", b"repeated character or pattern"),
        ("niuniuniuniu", "a short piece repeated", b"repeated character or pattern"),
        ("1234567890", "a run of digits", b"run of keys"),
        ("0987654321", "a run of digits backwards", b"run of keys"),
        ("abcdefghijk", "a run of letters", b"run of keys"),
        ("QWERTYUIOP", "a keyboard row", b"run of keys"),
        ("Password123", "a common password, in any case", b"most common passwords"),
        ("administrator", "a common word of the trade", b"most common passwords")]


@pytest.mark.parametrize("password, why, said", WEAK, ids=[w[1] for w in WEAK])
def test_a_weak_password_is_refused_at_creation_and_reset(admin, app, password, why, said):
    client, token = admin
    created = client.post("/admin/users", data={"csrf_token": token, "username": "dealer2", "role": "dealer",
                                                "password": password, "password2": password})
    assert created.status_code == 400 and said in created.data, why
    assert account(app, "dealer2") is None
    before = account(app, "dealer1")
    reset_to = password.replace("Dealer2", "Dealer1")
    r = client.post(f"/admin/users/{before['id']}/secret", follow_redirects=True,
                    data={"csrf_token": token, "password": reset_to, "password2": reset_to})
    assert b"the new password " in r.data and said in r.data, why
    assert account(app, "dealer1")["password_hash"] == before["password_hash"]


def test_the_console_refuses_a_weak_password_too(tmp_path, runner, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("kim-is-kim-2026\n"))
    code, _, err = runner(["users", "add", "--data-dir", str(tmp_path), "--username", "Kim", "--role", "dealer",
                           "--password-stdin"])
    assert code == 2 and "contains the username" in err


def test_first_run_setup_refuses_a_weak_password(bare_app):
    client = bare_app.test_client()
    token = csrf_from(client.get("/auth/setup").get_data(as_text=True))
    r = client.post("/auth/setup", data={"csrf_token": token, "setup_code": db.setup_code(bare_app.config["DATA_DIR"]),
                                         "username": "boss", "password": "qwertyuiop", "password2": "qwertyuiop"})
    assert r.status_code == 400 and b"run of keys" in r.data


@pytest.mark.parametrize("password", ["correct horse battery", "dealer-pass-123", "k7#pQ2vLm9x!", "1357924680",
                                      "niuniu at table 3"])
def test_an_ordinary_password_is_still_accepted(password):
    from kiosk.auth import check_password

    check_password(password, "the password", username="dealer2")


def test_an_existing_weak_password_still_logs_in(app):
    """The rules are for setting a password: an account made before them keeps working."""
    from werkzeug.security import generate_password_hash

    from kiosk_testing import FAST_HASH

    conn = db.connect(app.config["DATA_DIR"])
    conn.execute("UPDATE users SET password_hash = ? WHERE username = 'dealer1'",
                 (generate_password_hash("1234567890", method=FAST_HASH),))
    conn.close()
    assert can_log_in(app, "dealer1", "1234567890")


@pytest.mark.parametrize("username", ["-dealer", "+dealer", "=dealer", "@dealer"])
def test_a_username_a_spreadsheet_reads_as_a_formula_is_refused(admin, app, username):
    """The actor column of the CSV export is written as it is (the file is signed): a name
    starting with - + = or @ is a formula in a spreadsheet."""
    client, token = admin
    r = client.post("/admin/users", data={"csrf_token": token, "username": username, "role": "dealer",
                                          "password": "correct-horse-9", "password2": "correct-horse-9"})
    assert r.status_code == 400 and account(app, username) is None
    assert f"starts with &#39;{username[0]}&#39;, which a spreadsheet reads as a formula" in r.get_data(as_text=True)


def test_the_console_refuses_a_formula_username_too(tmp_path, runner, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("correct-horse-9\n"))
    code, _, err = runner(["users", "add", "--data-dir", str(tmp_path), "--username=-kim", "--role", "dealer",
                           "--password-stdin"])
    assert code == 2 and "username '-kim' starts with '-', which a spreadsheet reads as a formula" in err


def test_a_pin_reset_to_another_supervisors_pin_retires_that_pin(admin, app, audit, client):
    """Typing super1's PIN for another account tells the admin it was super1's: that PIN is
    known from then on, so it stops approving anything until super1 gets a new one."""
    client, token = admin
    made = client.post("/admin/users", data={"csrf_token": token, "username": "super2", "role": "supervisor",
                                             "password": "a-good-password", "password2": "a-good-password",
                                             "pin": "8642"})
    assert made.status_code == 302
    uid = account(app, "super2")["id"]
    r = client.post(f"/admin/users/{uid}/secret", follow_redirects=True,
                    data={"csrf_token": token, "password": "a-fresh-password", "password2": "a-fresh-password",
                          "pin": ACCOUNTS["super1"][2]})
    assert b"was supervisor super1&#39;s, so it is known now" in r.data
    conn = db.connect(app.config["DATA_DIR"])
    try:
        pins = dict(conn.execute("SELECT username, pin_hash IS NOT NULL FROM users WHERE role = 'supervisor'"))
    finally:
        conn.close()
    assert pins == {"super1": 0, "super2": 1}         # super1's retired; super2 keeps its own
    assert can_log_in(app, "super2", "a-good-password")   # the refused reset changed nothing of super2's
    changed = audit.records(types=[AuditType.USER_CHANGED])
    assert [(c.data["username"], c.data["change"].split(":")[0]) for c in changed] == [("super1", "PIN cleared")]
