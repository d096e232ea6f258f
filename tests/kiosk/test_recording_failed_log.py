"""A round whose recording failed is found by surveillance before a dispute asks for it (QA51 H4):
``niuniu audit check-recordings`` names it, and its round page says it in words.  A recording never
made leaves no seal, so the sweep of seals alone passed such a log."""

from __future__ import annotations

import json

from kiosk.audit import AuditLog
from kiosk_testing import hand, login

NOT_WRITABLE = ("cannot start recording in /var/lib/niuniu/recordings/t1/20261207T144018Z-round-0002: "
                "[Errno 13] Permission denied")


def test_check_recordings_names_a_round_whose_recording_failed(tmp_path, runner):
    data_dir = tmp_path / "data"
    log = AuditLog.in_dir(data_dir, "t1")
    for n in (1, 2):
        log.append("round_start", "vision", {"frame_no": n}, round_no=n)
    log.append("recording_failed", "system", {"error": NOT_WRITABLE, "stopped": True}, round_no=2)
    log.close()
    code, out, _ = runner(["audit", "check-recordings", "--data-dir", str(data_dir)])
    assert code == 1
    assert "FAILED: round 2 (logged at seq 3): cannot start recording in" in out and "Permission denied" in out
    assert "1 round whose recording failed" in out
    code, out, _ = runner(["audit", "check-recordings", "--data-dir", str(data_dir), "--json"])
    report = json.loads(out)
    assert code == 1 and not report["ok"] and report["failed"][0].startswith("round 2 ")


def test_the_round_page_says_the_round_was_not_recorded(service, audit, app):
    service.observe([hand("banker", "4S 6H QD 9C 9H"), hand("1", "AS 2S 3D 4D 5C")], 1)
    audit.append("recording_failed", "system", {"error": NOT_WRITABLE, "stopped": True}, round_no=1)
    client = app.test_client()
    login(client, "watch1")
    page = client.get("/review/round/1").get_data(as_text=True)
    assert "Not recorded: cannot start recording in" in page and "this round has no recording" in page


def test_a_recording_failure_the_log_refuses_too_raises_the_audit_alarm(service, monkeypatch):
    """The same full disk often refuses the log's record of it: the dealer's screen says the log
    failed at once, not only at the table's next write (QA51 review L2)."""
    import sqlite3

    def full(*args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(service.audit, "append", full)
    before = service.version
    service.recording_failed(1, {"error": NOT_WRITABLE, "stopped": True})
    assert "the audit log could not be written (database or disk is full)" in (service.status()["audit_error"] or "")
    assert service.version > before                            # the screens are told at once
