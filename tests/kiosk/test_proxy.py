"""The kiosk behind a TLS reverse proxy (``niuniu kiosk --behind-proxy``), and not.

Behind the proxy, the session cookie must travel only over TLS and each client be known by
the address the proxy forwards (the throttles and the audit log key on it); reached
directly, a forwarded address anyone can send must change nothing."""

from __future__ import annotations

import pytest

from kiosk.app import create_app
from kiosk.audit import AuditType
from kiosk_testing import ACCOUNTS, create_accounts, csrf_from

FORWARDED = {"X-Forwarded-For": "10.20.30.40", "X-Forwarded-Proto": "https"}


@pytest.fixture(params=[True, False], ids=["behind-proxy", "direct"])
def kiosk(request, app_config):
    app = create_app({**app_config, "BEHIND_PROXY": request.param})
    create_accounts(app)
    yield app, request.param
    service = app.extensions["niuniu"].service
    service.stop()
    service.audit.close()


def test_the_cookie_and_the_client_address_follow_the_proxy_only_where_one_is_trusted(kiosk):
    app, behind = kiosk
    client = app.test_client()
    token = csrf_from(client.get("/auth/login", headers=FORWARDED).get_data(as_text=True))
    response = client.post("/auth/login", headers=FORWARDED, data={
        "username": "dealer1", "password": ACCOUNTS["dealer1"][1], "csrf_token": token})
    assert response.status_code == 302
    cookie = next(h for h in response.headers.getlist("Set-Cookie") if h.startswith("niuniu_session="))
    assert ("; Secure" in cookie) is behind
    login = app.extensions["niuniu"].service.audit.records(types=[AuditType.LOGIN])[-1]
    assert login.data["ip"] == ("10.20.30.40" if behind else "127.0.0.1")
