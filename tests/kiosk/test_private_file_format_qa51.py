"""A secret key or setup code that has the right length but not what the kiosk writes (QA51
M1): some file systems leave a file cut short by a power cut filled with NUL bytes, and a key of
NULs is a key anyone can sign a session with.  Such a file is made anew, `niuniu check` warns,
and a signed cookie with no server-side session id is refused whatever key signed it."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
from flask import Flask
from flask.sessions import SecureCookieSessionInterface

from kiosk import db
from kiosk.app import create_app
from kiosk.preflight import WARN
from kiosk_testing import create_accounts, login
from test_kiosk_start_files import findings, stop
from test_preflight import data as data_dir

NULS = "\0" * 64


def user_id(data: Path, username: str) -> int:
    with db.connect(data) as conn:
        return conn.execute("SELECT id FROM users WHERE username = ?", (username,)).fetchone()[0]


def signer(key: str):
    forger = Flask("forger")
    forger.secret_key = key
    return SecureCookieSessionInterface().get_signing_serializer(forger)


@pytest.mark.parametrize("name, text", [
    (db.SECRET_FILE, NULS), (db.SECRET_FILE, "z" * 64), (db.SECRET_FILE, "ab" * 40),
    (db.SETUP_CODE_FILE, "\0" * 8), (db.SETUP_CODE_FILE, "0123abcd99"), (db.SETUP_CODE_FILE, "0123 bcd"),
])
def test_a_private_file_not_as_the_kiosk_writes_it_is_made_anew_with_one_line(app_config, caplog, name, text):
    data = Path(app_config["DATA_DIR"])
    data.mkdir()
    (data / name).write_text(text + "\n")
    with caplog.at_level(logging.WARNING, logger="kiosk.db"):
        app = create_app(app_config)
        value = db.secret_key(data) if name == db.SECRET_FILE else db.setup_code(data)
    stop(app)
    assert value != text and len(value) == db.MADE_LENGTH[name] and int(value, 16) >= 0
    assert (data / name).read_text().strip() == value
    made = [r for r in caplog.records if "making a new one" in r.getMessage()]
    assert len(made) == 1 and f"does not hold the {db.MADE_LENGTH[name]} hex digits" in made[0].getMessage()


def test_check_warns_of_a_key_and_a_code_of_nul_bytes(tmp_path):
    data = data_dir(tmp_path)
    (data / db.SECRET_FILE).write_bytes(NULS.encode() + b"\n")
    (data / db.SETUP_CODE_FILE).write_bytes(b"\0" * 8)
    found = findings(tmp_path, data)
    for part, digits in (("secret key", 64), ("setup code", 8)):
        assert found[part][0] == WARN and f"does not hold the {digits} hex digits" in found[part][1]
        assert "makes a new one at its next start" in found[part][1]


def test_a_cookie_signed_with_a_key_of_nul_bytes_does_not_make_a_dealer_the_administrator(app_config):
    data = Path(app_config["DATA_DIR"])
    data.mkdir()
    (data / db.SECRET_FILE).write_bytes(NULS.encode() + b"\n")
    app = create_app(app_config)
    try:
        create_accounts(app)
        dealer = app.test_client()
        login(dealer, "dealer1")
        forged = {"uid": user_id(data, "admin1"), "gen": 0, "last_seen": time.time()}   # not idle
        attacker = app.test_client()
        attacker.set_cookie("niuniu_session", signer(NULS).dumps(forged))
        page = attacker.get("/admin/users")
        assert page.status_code == 302 and page.location.startswith("/auth/login")
    finally:
        stop(app)


def test_a_cookie_without_a_session_id_is_refused_even_when_signed_with_the_real_key(app_config):
    """Whoever learns the key (any leak) could sign one for any account: the server's own
    session row is what a cookie must name.  The dealer's own session goes on."""
    data = Path(app_config["DATA_DIR"])
    app = create_app(app_config)
    try:
        create_accounts(app)
        dealer = app.test_client()
        login(dealer, "dealer1")
        real = signer(app.secret_key)
        mine = real.loads(dealer.get_cookie("niuniu_session").value)
        assert "sid" in mine
        forged = {k: v for k, v in mine.items() if k != "sid"}
        forged["uid"] = user_id(data, "admin1")
        attacker = app.test_client()
        attacker.set_cookie("niuniu_session", real.dumps(forged))
        page = attacker.get("/admin/users")
        assert page.status_code == 302 and page.location.startswith("/auth/login")
        assert attacker.get("/auth/whoami").status_code == 401
        # the same cookie with the dealer's sid, but the admin's uid: refused too
        attacker.set_cookie("niuniu_session", real.dumps({**forged, "sid": mine["sid"]}))
        assert attacker.get("/admin/users").status_code == 302
        assert dealer.get("/auth/whoami").json["user"] == "dealer1"
    finally:
        stop(app)
