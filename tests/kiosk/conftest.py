"""Fixtures as in flaskr: an app per test with its own data directory, a client, a runner."""

from __future__ import annotations

import pytest

from kiosk.app import create_app
from kiosk_testing import FAST_HASH, create_accounts, login, make_table, play


@pytest.fixture
def table():
    return make_table()


@pytest.fixture
def app_config(tmp_path, table):
    return {"DATA_DIR": str(tmp_path / "data"), "TABLE": table, "TESTING": True,
            "PASSWORD_HASH_METHOD": FAST_HASH, "SSE_KEEPALIVE_S": 0.1, "SSE_MAX_S": 1.0,
            "THROTTLE_BASE_S": 30.0}


@pytest.fixture
def bare_app(app_config):
    """An app with no accounts yet: the first-run state."""
    app = create_app(app_config)
    yield app
    service = app.extensions["niuniu"].service
    service.stop()
    service.audit.close()


@pytest.fixture
def app(bare_app):
    create_accounts(bare_app)
    return bare_app


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(capsys):
    """Run the ``niuniu`` command in-process: ``runner(["audit", "verify", ...]) -> (code, out, err)``."""
    from kiosk.cli import main

    def run(argv: list[str]):
        code = main(argv)
        captured = capsys.readouterr()
        return code, captured.out, captured.err
    return run


@pytest.fixture
def service(app):
    return app.extensions["niuniu"].service


@pytest.fixture
def audit(service):
    return service.audit


@pytest.fixture
def dealer(client):
    """A logged-in dealer with the CSRF token: post JSON, read the screen's state and page."""
    token = login(client, "dealer1")

    class Dealer:
        def post(self, url, body=None, status=200):
            r = client.post(url, json=body or {}, headers={"X-CSRF-Token": token})
            assert r.status_code == status, r.get_json()
            return r.get_json()

        def state(self):
            return client.get("/dealer/api/state").get_json()["state"]

        def page(self):
            return client.get("/dealer/").get_data(as_text=True)

    return Dealer()


@pytest.fixture
def played(client, service):
    """Four rounds played, then surveillance logged in."""
    play(client, service, [("KS QS JS 10S 10H", "settle"),     # 1 Niu Niu
                           ("AS 2S 3D 4D 5C", "correct"),      # 2 corrected to AD 2S 3D 4D 5C
                           ("KD QD JD 10D 10C", "void"),       # 3 voided
                           ("2C 3C 5S 7H 8D", "settle")])      # 4
    login(client, "watch1")
    return client
