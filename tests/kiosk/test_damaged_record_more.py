"""Damaged audit records beyond the round records (QA51 review H1, M2-M5): a payload whose bytes
are no longer UTF-8 (one flipped high bit) is one damaged record, not SQLite's "Could not decode"
ending the kiosk's start, `audit verify` and the shift report; check-recordings, the shift report
and the round page name a damaged record and go on; a JSON export of one warns and exits 1."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from kiosk.app import create_app
from kiosk.audit import AuditLog, AuditType
from kiosk.rounds import load_round
from kiosk_testing import login, play
from test_damaged_record_kiosk import damage

NIU_NIU = "KS QS JS 10S 10H"
BULL_5 = "AS 2S 3D 4D 5C"


def flip_high_bit(path: Path, seq: int, at: int = 3) -> None:
    """Set the high bit of one byte of a record's payload, as bit rot on an SD card does: the
    row and its hash stay, its payload is no longer UTF-8."""
    conn = sqlite3.connect(path)
    guards = [sql for (sql,) in conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger'")]
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        conn.execute(f"DROP TRIGGER {name}")
    (payload,) = conn.execute("SELECT CAST(payload AS BLOB) FROM audit WHERE seq = ?", (seq,)).fetchone()
    raw = bytearray(payload)
    raw[at] |= 0x80
    conn.execute("UPDATE audit SET payload = CAST(? AS TEXT) WHERE seq = ?", (bytes(raw), seq))
    for sql in guards:
        conn.execute(sql)
    conn.commit()
    conn.close()


def text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.fixture
def rotten(tmp_path):
    """Two settled rounds; round 1's settlement has one byte with its high bit flipped."""
    log = AuditLog.in_dir(tmp_path / "data", "t1")
    log.append(AuditType.ROUND_START, "vision", {"bets": {}}, round_no=1)
    seq = log.append(AuditType.ROUND_SETTLED, "dealer1", {"settlement": {"banker_net": "-10.00", "lines": []}},
                     round_no=1).seq
    log.append(AuditType.ROUND_START, "vision", {"bets": {}}, round_no=2)
    log.append(AuditType.ROUND_VOID, "dealer1", {"reason": "misdeal"}, round_no=2)
    log.close()
    flip_high_bit(tmp_path / "data" / "audit.sqlite3", seq)
    return tmp_path / "data", seq


def test_a_payload_that_is_not_utf8_is_one_damaged_record_and_verify_names_its_seq(rotten, runner):
    data_dir, seq = rotten
    log = AuditLog.in_dir(data_dir, create=False, read_only=True)
    try:
        [damaged] = load_round(log, 1)["damaged"]
    finally:
        log.close()
    assert damaged["seq"] == seq and "not UTF-8" in damaged["problem"]
    code, out, err = runner(["audit", "verify", "--data-dir", str(data_dir)])
    assert code == 1 and f"BROKEN at seq {seq}" in out + err


def test_the_shift_report_names_a_record_that_is_not_utf8_and_goes_on(rotten, runner):
    data_dir, seq = rotten
    code, out, _ = runner(["audit", "report", "--data-dir", str(data_dir), "--from", "2000-01-01"])
    assert code == 1
    assert f"(seq {seq})" in out and "not UTF-8" in out
    assert "1 void" in out                 # round 2 still counted


def test_a_json_export_of_a_record_that_is_not_utf8_keeps_it_byte_for_byte_and_warns(rotten, runner, tmp_path):
    data_dir, seq = rotten
    out_file = tmp_path / "all.json"
    code, _, err = runner(["audit", "export", "--data-dir", str(data_dir), "--format", "json", "--unsigned",
                           "--output", str(out_file)])
    assert code == 1 and f"WARNING: seq {seq} (round_settled)" in err
    records = json.loads(out_file.read_text(encoding="utf-8"))["records"]
    from kiosk.audit import AuditRecord
    copy = AuditRecord.from_json(records[seq - 1])
    log = AuditLog.in_dir(data_dir, create=False, read_only=True)
    try:
        [stored] = log.records(after_seq=seq - 1, upto_seq=seq)
    finally:
        log.close()
    assert copy == stored and copy.expected_hash() == stored.expected_hash()


def test_the_kiosk_starts_on_a_log_with_a_payload_that_is_not_utf8(app, client, service, app_config):
    play(client, service, [(NIU_NIU, "settle"), (BULL_5, "settle"), (NIU_NIU, "settle")])
    [settled] = service.audit.records(types=[AuditType.ROUND_SETTLED], round_no=2)
    service.stop()
    flip_high_bit(service.audit.path, settled.seq)
    again = create_app(app_config)
    svc = again.extensions["niuniu"].service
    try:
        assert [r["round"] for r in svc.history()][:2] == [3, 1]
        watcher = again.test_client()
        login(watcher, "watch1")
        page = watcher.get("/review/round/2")
        assert page.status_code == 200
        assert f"Audit record seq {settled.seq} (round_settled) cannot be read" in text(page.get_data(as_text=True))
    finally:
        svc.stop()
        svc.audit.close()


def test_check_recordings_lists_a_damaged_recording_failed_record_and_goes_on(tmp_path, runner):
    log = AuditLog.in_dir(tmp_path / "data", "t1")
    log.append(AuditType.ROUND_START, "vision", {"bets": {}}, round_no=1)
    bad = log.append(AuditType.RECORDING_FAILED, "system", {"error": "cannot start recording: Permission denied",
                                                            "stopped": True}, round_no=1)
    log.append(AuditType.RECORDING_FAILED, "system", {"error": "disk full", "stopped": True}, round_no=2)
    seal = log.append(AuditType.RECORDING_SEALED, "system", {"folder": "round-000003", "files": {}}, round_no=3)
    log.close()
    damage(tmp_path / "data" / "audit.sqlite3", bad.seq)
    damage(tmp_path / "data" / "audit.sqlite3", seal.seq)
    code, out, _ = runner(["audit", "check-recordings", "--data-dir", str(tmp_path / "data")])
    assert code == 1
    assert f"round 1 (logged at seq {bad.seq}): its record cannot be read" in out
    assert "round 2 (logged at seq 3): disk full" in out
    assert f"sealed at seq {seal.seq}" in out and "its seal record cannot be read" in out


@pytest.mark.parametrize("kind, payload", [
    (AuditType.KIOSK_START, {"clock": {"synchronised": True}}),
    (AuditType.CLOCK_CHANGED, {"synchronised": True}),
    (AuditType.CONFIG_LOADED, {"currency": "USD", "rules": "cambodia"}),
])
def test_the_shift_report_names_a_damaged_clock_or_config_record_and_goes_on(tmp_path, runner, kind, payload):
    log = AuditLog.in_dir(tmp_path / "data", "t1")
    bad = log.append(kind, "system", payload)
    log.append(AuditType.ROUND_START, "vision", {"bets": {}}, round_no=1)
    log.append(AuditType.ROUND_VOID, "dealer1", {"reason": "misdeal"}, round_no=1)
    log.close()
    damage(tmp_path / "data" / "audit.sqlite3", bad.seq)
    code, out, _ = runner(["audit", "report", "--data-dir", str(tmp_path / "data"), "--from", "2000-01-01"])
    assert code == 1
    assert f"{kind} record (seq {bad.seq})" in out and "cannot be read" in out
    assert "1 void" in out


def test_a_round_page_shows_the_readable_records_and_names_the_damaged_one(app, client, service, app_config):
    play(client, service, [(NIU_NIU, "settle"), (BULL_5, "settle")])
    [settled] = service.audit.records(types=[AuditType.ROUND_SETTLED], round_no=2)
    [start] = service.audit.records(types=[AuditType.KIOSK_START])[:1]
    cards = service.audit.records(types=[AuditType.CARD_ACCEPTED], round_no=2)
    service.stop()
    damage(service.audit.path, settled.seq)
    damage(service.audit.path, start.seq)
    again = create_app(app_config)
    svc = again.extensions["niuniu"].service
    try:
        watcher = again.test_client()
        login(watcher, "watch1")
        for round_no in (1, 2):
            assert watcher.get(f"/review/round/{round_no}").status_code == 200
        page = text(watcher.get("/review/round/2").get_data(as_text=True))
        assert f"Audit record seq {settled.seq} (round_settled) cannot be read" in page
        assert all(f" {c.seq} " in page for c in cards)           # the readable records are on it
        report = watcher.get("/review/report?from=2000-01-01")
        assert report.status_code == 200
        assert f"kiosk_start record (seq {start.seq}) does not match its hash and cannot be read" in text(
            report.get_data(as_text=True))
    finally:
        svc.stop()
        svc.audit.close()


def test_a_json_export_of_a_damaged_record_warns_and_exits_1(tmp_path, runner):
    log = AuditLog.in_dir(tmp_path / "data", "t1")
    log.append(AuditType.ROUND_START, "vision", {"bets": {}}, round_no=1)
    bad = log.append(AuditType.ROUND_VOID, "dealer1", {"reason": "misdeal"}, round_no=1)
    log.close()
    damage(tmp_path / "data" / "audit.sqlite3", bad.seq)
    code, _, err = runner(["audit", "export", "--data-dir", str(tmp_path / "data"), "--format", "json",
                           "--unsigned", "--output", str(tmp_path / "all.json")])
    assert code == 1
    assert f"WARNING: seq {bad.seq} (round_void) cannot be read" in err
    assert json.loads((tmp_path / "all.json").read_text(encoding="utf-8"))["count"] == 2


def test_a_restart_after_the_last_config_record_is_damaged_logs_that_the_change_cannot_be_told(
        app, client, service, app_config, caplog):
    play(client, service, [(NIU_NIU, "settle")])
    [loaded] = service.audit.records(types=[AuditType.CONFIG_LOADED], newest_first=True, limit=1)
    service.stop()
    damage(service.audit.path, loaded.seq)
    again = create_app(app_config)
    svc = again.extensions["niuniu"].service
    try:
        [changed] = svc.audit.records(types=[AuditType.CONFIG_CHANGED], after_seq=loaded.seq)
        assert changed.data["previous_unreadable"]["seq"] == loaded.seq
        assert f"config_loaded record (seq {loaded.seq}) cannot be read" in caplog.text
    finally:
        svc.stop()
        svc.audit.close()


def test_the_evidence_package_of_a_round_with_a_payload_that_is_not_utf8_is_made_and_checks(rotten, runner, tmp_path):
    data_dir, seq = rotten
    package = tmp_path / "round1.zip"
    code, _, err = runner(["audit", "evidence", "--data-dir", str(data_dir), "--round", "1", "--output", str(package)])
    assert code == 1 and f"seq {seq} (round_settled)" in err and "not UTF-8" in err
    code, out, _ = runner(["audit", "check-evidence", str(package), "--data-dir", str(data_dir)])
    assert code == 1 and f"seq {seq} (round_settled) does not hash" in out
