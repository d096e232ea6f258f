"""Throttles under concurrent requests: the kiosk's server is threaded, and a burst of
guesses sent at once (a browser console's fetch loop) must get no more tries than the
same guesses sent one by one (QA46 security #1: 75 of 80 PINs were checked where 5 are
allowed, and 71 of 80 passwords)."""

from __future__ import annotations

import threading
import time

import pytest

from kiosk import auth
from kiosk.audit import AuditType
from kiosk_testing import csrf_from, login

BURST = 20


@pytest.fixture
def slow_checks(monkeypatch):
    """Every password or PIN check takes as long as scrypt on a slow box, so the burst's
    requests are all inside one at once; returns the list the checks are counted in."""
    checked = []
    real = auth.check_password_hash

    def check(hashed, secret):
        checked.append(secret)
        time.sleep(0.3)
        return real(hashed, secret)

    monkeypatch.setattr(auth, "check_password_hash", check)
    return checked


def burst(send, count=BURST) -> list:
    """Call ``send(i)`` from ``count`` threads released together; their answers, in order."""
    start = threading.Barrier(count)
    answers = [None] * count

    def run(i):
        start.wait()
        answers[i] = send(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return answers


def test_a_burst_of_password_guesses_gets_the_throttles_five(app, audit, slow_checks):
    clients = [app.test_client() for _ in range(BURST)]
    tokens = [csrf_from(c.get("/auth/login").get_data(as_text=True)) for c in clients]

    def guess(i):
        return clients[i].post("/auth/login", data={"username": "super1", "password": f"guess-number-{i}",
                                                     "csrf_token": tokens[i]}).status_code

    statuses = burst(guess)
    assert sorted(statuses) == [401] * 5 + [429] * (BURST - 5)
    assert len(slow_checks) == 5
    failed = audit.records(types=[AuditType.LOGIN_FAILED])
    assert sorted(r.data["reason"] for r in failed) == ["throttled"] + ["wrong password"] * 5


def test_a_burst_of_pin_guesses_gets_the_throttles_five(app, audit, service, slow_checks):
    clients = [app.test_client() for _ in range(BURST)]
    tokens = [login(c, "dealer1") for c in clients]
    slow_checks.clear()

    def guess(i):
        r = clients[i].post("/dealer/api/void", json={"reason": "misdeal", "pin": str(1000 + i)},
                            headers={"X-CSRF-Token": tokens[i]})
        return r.status_code, r.get_json()["error"].split(";")[0]

    answers = burst(guess)
    assert sorted(answers) == [(403, "supervisor PIN not recognised")] * 5 + \
        [(403, "too many wrong PINs")] * (BURST - 5)
    assert len(slow_checks) == 5            # one supervisor: one check per guess
    assert len(audit.records(types=[AuditType.PIN_FAILED])) == 5


def test_a_right_pin_in_a_burst_is_on_record(app, audit, service, slow_checks):
    """The one right guess of a burst answered 409 (no round to void yet) and wrote nothing."""
    clients = [app.test_client() for _ in range(5)]
    tokens = [login(c, "dealer1") for c in clients]

    def guess(i):
        pin = "4321" if i == 2 else str(1000 + i)
        return clients[i].post("/dealer/api/void", json={"reason": "misdeal", "pin": pin},
                               headers={"X-CSRF-Token": tokens[i]}).status_code

    statuses = burst(guess, 5)
    assert sorted(statuses) == [403] * 4 + [409]
    accepted = audit.records(types=[AuditType.PIN_ACCEPTED])
    assert [(r.actor, r.data["approved_by"], r.data["status"]) for r in accepted] == [("dealer1", "super1", 409)]
