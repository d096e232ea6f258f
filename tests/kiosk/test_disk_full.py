"""A full data disk (QA 46, R3 and R4): the pages that only read still answer, so the AUDIT LOG
FAILURE alarm reaches the dealer; a write the disk refuses fails with one line that names the
full disk and says to free space, never a 500 or SQLite's "cannot rollback".

Two ways to fill the disk, both without root or a tmpfs:

* :func:`fill_log` caps the audit log's file at its size (``PRAGMA max_page_count``) and fills
  it to the last page: SQLite then answers an append exactly as on a full disk (SQLITE_FULL,
  "database or disk is full", the transaction already rolled back by SQLite itself);
* :func:`disk_full` lets no file of this process grow (``RLIMIT_FSIZE``), as a full disk does
  to every file at once, including the ``-shm`` a new SQLite connection must make to read a
  WAL database ("disk I/O error": what every page of the kiosk died of in R3).
"""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3

import pytest

from kiosk.audit import AuditError, AuditLog, AuditType, Entry
from kiosk_testing import csrf_from, hand, login

BANKER = "4S 6H QD 9C 9H"
NIU_NIU = "KS QS JS 10S 10H"
NO_CAP = 1_073_741_823          # SQLite's largest max_page_count: no cap


def fill_log(log: AuditLog) -> int:
    """Cap the log's file at the pages it has and append small records until one no longer
    fits: the disk is full.  Returns how many records fit.  (The cap is a setting of one
    connection, so it goes on the log's own.)"""
    conn = log._conn
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")
    for count in range(100_000):
        try:
            log.append(AuditType.ALERT, "test", {"filler": count})
        except sqlite3.Error:
            return count
    raise AssertionError("the capped audit log never filled up")


def free_log(log: AuditLog) -> None:
    log._conn.execute(f"PRAGMA max_page_count = {NO_CAP}")


@contextlib.contextmanager
def disk_full():
    """No file of this process may grow while inside: a full disk, seen from SQLite.

    Python ignores SIGXFSZ, so a write past the limit fails (EFBIG) rather than killing the
    process.  Output pytest captures meanwhile may be lost; nothing else is written."""
    resource = pytest.importorskip("resource")
    if signal.getsignal(signal.SIGXFSZ) != signal.SIG_IGN:
        pytest.skip("SIGXFSZ is not ignored: a file-size limit would kill the test process")
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def complete_round(client, service) -> str:
    """Dealer logged in, a bet on seat 1, the cards dealt: Settle is next.  Returns the CSRF token."""
    token = login(client, "dealer1")
    r = client.post("/dealer/api/bet", json={"seat": "1", "amount": "100", "kind": "equal"},
                    headers={"X-CSRF-Token": token})
    assert r.status_code == 200, r.get_json()
    service.observe([hand("banker", BANKER), hand("1", NIU_NIU)], 1)
    assert client.get("/dealer/api/state").get_json()["state"]["round"]["state"] == "complete"
    return token


def assert_names_the_full_disk(message: str, cause: str = "database or disk is full") -> None:
    assert cause in message, message
    assert "free space on the data disk" in message, message
    assert "cannot rollback" not in message, message


def first_status(response) -> dict:
    """The first status event of an SSE response (the stream ends by itself: SSE_MAX_S)."""
    text = response.get_data(as_text=True)
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if fields.get("event") == "status":
            return json.loads(fields["data"])
    raise AssertionError(f"no status event in the stream: {text[:300]!r}")


# ------------------------------------------------------------------ R4: the audit log says the disk is full


def test_an_append_to_a_full_log_names_the_full_disk_and_writes_nothing(tmp_path):
    log = AuditLog(tmp_path / "audit.sqlite3", "t1")
    try:
        log.append(AuditType.KIOSK_START, "system", {})
        fill_log(log)
        before = log.count()
        settlement = [Entry(AuditType.ROUND_SETTLED, "dealer1", {"lines": "x" * 300}, 1)] + \
            [Entry(AuditType.SETTLEMENT_LINE, "dealer1", {"seat": str(s), "net": "95.00"}, 1) for s in range(1, 8)]
        with pytest.raises(AuditError) as caught:
            log.append_many(settlement)
        assert_names_the_full_disk(str(caught.value))
        assert str(log.path) in str(caught.value)
        # still what it was to the callers that catch SQLite's failures (the table service)
        assert isinstance(caught.value, sqlite3.OperationalError)
        assert log.count() == before        # all or nothing
        free_log(log)
        log.append_many(settlement)         # the connection was not left inside a transaction
        assert log.count() == before + len(settlement) and log.verify().ok
    finally:
        log.close()


def test_extending_a_full_log_names_the_full_disk(tmp_path):
    source = AuditLog(tmp_path / "source.sqlite3", "t1")
    target = AuditLog(tmp_path / "audit.sqlite3", "t1")
    try:
        for n in range(40):
            source.append(AuditType.ALERT, "system", {"n": n, "text": "y" * 200})
        records = source.records()
        target.extend(records[:1])
        pages = target._conn.execute("PRAGMA page_count").fetchone()[0]
        target._conn.execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(AuditError) as caught:
            target.extend(records[1:])
        assert_names_the_full_disk(str(caught.value))
        assert target.count() == 1
    finally:
        source.close()
        target.close()


def test_a_settle_on_a_full_disk_tells_the_dealer_the_disk_is_full(client, service, audit):
    complete_round(client, service)
    token = login(client, "dealer1")
    fill_log(audit)
    try:
        r = client.post("/dealer/api/settle", headers={"X-CSRF-Token": token})
        assert r.status_code == 400, r.get_data(as_text=True)
        assert_names_the_full_disk(r.get_json()["error"])
        # the banner the dealer's screen shows, from the status it polls and streams
        assert_names_the_full_disk(client.get("/live/status").get_json()["audit_error"])
    finally:
        free_log(audit)
    assert audit.verify().ok


# ------------------------------------------------------------------ R3: reading pages answer on a full disk


def test_a_settle_the_log_refused_is_not_shown_settled_on_any_screen(client, service, audit):
    """QA47 UX F1: the refused settle was published while the round machine still held it
    (before it was undone), so every screen, a reloaded one too, showed SETTLED and the final
    PAY lines of a settlement never recorded."""
    token = complete_round(client, service)
    fill_log(audit)
    try:
        assert client.post("/dealer/api/settle", headers={"X-CSRF-Token": token}).status_code == 400
        _, text = service.latest()          # what /live/events serves every screen, a reloaded one first
        published = json.loads(text)
        assert published["round"]["state"] == "complete"
        assert published["totals"]["final"] is False          # "if settled now", not what was paid
        assert service.machine.settlement is None
    finally:
        free_log(audit)
    assert not audit.records(types=[AuditType.ROUND_SETTLED])


def test_the_pages_that_only_read_answer_on_a_full_disk(app, client, service):
    complete_round(client, service)
    stranger = app.test_client()
    with disk_full():
        assert client.get("/healthz").status_code == 200
        state = client.get("/dealer/api/state")
        assert state.status_code == 200 and state.get_json()["state"]["round"]["state"] == "complete"
        assert client.get("/live/status").status_code == 200
        assert client.get("/dealer/").status_code == 200
        assert first_status(client.get("/live/events")).get("audit_error") is None
        assert stranger.get("/auth/login").status_code == 200


def test_on_a_full_disk_the_dealer_sees_the_audit_log_failure(client, service):
    """QA 46's s6: the disk fills while a round waits for Settle.  The settle fails with the
    reason, and the screen's status stream, which carries the alarm, keeps coming."""
    token = complete_round(client, service)
    with disk_full():
        r = client.post("/dealer/api/settle", headers={"X-CSRF-Token": token})
        assert r.status_code == 400, r.get_data(as_text=True)
        assert_names_the_full_disk(r.get_json()["error"], "disk I/O error")
        assert_names_the_full_disk(first_status(client.get("/live/events"))["audit_error"], "disk I/O error")
        assert client.get("/dealer/api/state").status_code == 200


def test_a_login_the_full_disk_cannot_record_fails_with_one_clear_line(app):
    """A wrong password must be counted (the throttle) before it is answered; when the disk
    refuses the count, the login fails saying so, not with a 500."""
    stranger = app.test_client()
    with disk_full():
        token = csrf_from(stranger.get("/auth/login").get_data(as_text=True))
        r = stranger.post("/auth/login", data={"username": "dealer1", "password": "wrong-password-1",
                                               "csrf_token": token})
    assert r.status_code == 503, r.get_data(as_text=True)
    assert_names_the_full_disk(r.get_data(as_text=True), "disk I/O error")


def test_a_login_the_log_cannot_record_is_no_session(app, service):
    """A right password whose LOGIN record the full log refuses: no one is logged in
    unrecorded (the session was set before the record, so the dealer was in with no trace)."""
    client = app.test_client()
    token = csrf_from(client.get("/auth/login").get_data(as_text=True))
    fill_log(service.audit)
    try:
        r = client.post("/auth/login", data={"username": "dealer1", "password": "dealer-pass-123",
                                             "csrf_token": token})
        assert r.status_code >= 400
        assert_names_the_full_disk(r.get_data(as_text=True))
        assert client.get("/auth/whoami").status_code == 401
    finally:
        free_log(service.audit)
    login(client, "dealer1")                    # space freed: the same login works, on record
    assert client.get("/auth/whoami").get_json()["user"] == "dealer1"
    assert service.audit.records(types=[AuditType.LOGIN])[-1].actor == "dealer1"
