"""The audit log: append-only, hash-chained, verifiable, exportable."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from decimal import Decimal

import pytest

from kiosk.audit import GENESIS_HASH, AuditError, AuditLog, AuditType, Entry, canonical_json, parse_time


@pytest.fixture
def log(tmp_path):
    log = AuditLog.in_dir(tmp_path, "t1")
    yield log
    log.close()


def fill(log: AuditLog, n: int = 5) -> None:
    for i in range(n):
        log.append(AuditType.CARD_ACCEPTED, "vision", {"seat": "1", "card": "AS", "confidence": 0.9, "i": i},
                   round_no=1)


def test_records_are_chained_from_genesis(log):
    fill(log, 3)
    records = log.records()
    assert [r.seq for r in records] == [1, 2, 3]
    assert records[0].prev_hash == GENESIS_HASH
    assert records[1].prev_hash == records[0].hash and records[2].prev_hash == records[1].hash
    result = log.verify()
    assert result.ok and result.count == 3 and result.head_hash == records[-1].hash


def test_update_and_delete_are_refused_by_the_database(log):
    fill(log, 2)
    conn = sqlite3.connect(log.path)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("UPDATE audit SET actor = 'mallory' WHERE seq = 1")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("DELETE FROM audit WHERE seq = 2")
    conn.close()
    assert log.verify().ok


def tamper(path, sql: str) -> None:
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER audit_no_update")
    conn.execute("DROP TRIGGER audit_no_delete")
    conn.execute(sql)
    conn.commit()
    conn.close()


def test_edited_record_breaks_the_chain_at_that_record(log, runner, tmp_path):
    fill(log, 6)
    tamper(log.path, "UPDATE audit SET payload = replace(payload, '\"AS\"', '\"KS\"') WHERE seq = 4")
    result = log.verify()
    assert not result.ok
    assert result.first_bad_seq == 4
    assert "edited" in result.reason
    assert not result.guards_present
    code, out, _ = runner(["audit", "verify", "--data-dir", str(tmp_path)])
    assert code == 1
    assert "BROKEN at seq 4" in out and "triggers are missing" in out


def test_an_edited_actor_is_caught_too(log):
    fill(log, 3)
    tamper(log.path, "UPDATE audit SET actor = 'someone-else' WHERE seq = 2")
    assert log.verify().first_bad_seq == 2


def test_a_deleted_record_is_named(log):
    fill(log, 5)
    tamper(log.path, "DELETE FROM audit WHERE seq = 3")
    result = log.verify()
    assert result.first_bad_seq == 3 and "missing" in result.reason


def test_a_rewritten_tail_with_fresh_hashes_still_breaks_at_the_link(log):
    """Recomputing one record's hash does not help: the next record still links to the old one."""
    fill(log, 4)
    rec = log.records()[1]
    forged_payload = canonical_json({**rec.data, "card": "KS"})
    from dataclasses import replace
    forged = replace(rec, payload=forged_payload)
    tamper(log.path, f"UPDATE audit SET payload = '{forged_payload}', hash = '{forged.expected_hash()}' WHERE seq = 2")
    result = log.verify()
    assert result.first_bad_seq == 3 and "link" in result.reason


def test_reopening_restores_dropped_guards_and_says_so(tmp_path):
    log = AuditLog.in_dir(tmp_path, "t1")
    fill(log, 2)
    log.close()
    conn = sqlite3.connect(tmp_path / "audit.sqlite3")
    conn.execute("DROP TRIGGER audit_no_delete")
    conn.commit()
    conn.close()
    log = AuditLog.in_dir(tmp_path, "t1")
    assert log.guards_present()
    assert log.last().type == AuditType.GUARDS_RESTORED
    assert log.verify().ok
    log.close()


def test_verify_command_ok(log, runner, tmp_path):
    fill(log, 7)
    code, out, _ = runner(["audit", "verify", "--data-dir", str(tmp_path)])
    assert code == 0 and out.startswith("OK 7 records")
    code, out, _ = runner(["audit", "verify", "--data-dir", str(tmp_path), "--json"])
    assert json.loads(out)["count"] == 7


def test_verify_command_on_missing_dir_is_one_line_error(runner, tmp_path):
    code, out, err = runner(["audit", "verify", "--data-dir", str(tmp_path / "nope")])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "does not exist" in err


def test_canonical_json_is_byte_stable_and_keeps_money_exact():
    a = canonical_json({"b": Decimal("1.50"), "a": [1, "x"], "ç": True})
    b = canonical_json({"ç": True, "a": [1, "x"], "b": Decimal("1.50")})
    assert a == b == '{"a":[1,"x"],"b":"1.50","ç":true}'
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})


def test_append_many_is_all_or_nothing(log):
    fill(log, 1)
    with pytest.raises(TypeError):
        log.append_many([Entry(AuditType.ROUND_SETTLED, "d", {"ok": 1}, 1),
                         Entry(AuditType.SETTLEMENT_LINE, "d", {"bad": object()}, 1)])
    assert log.count() == 1
    written = log.append_many([Entry(AuditType.ROUND_SETTLED, "d", {"ok": 1}, 1),
                               Entry(AuditType.SETTLEMENT_LINE, "d", {"seat": "1"}, 1)])
    assert [r.seq for r in written] == [2, 3] and log.verify().ok


def test_export_csv_and_json_with_time_range(log, runner, tmp_path):
    log.append(AuditType.LOGIN, "a", {"n": 1}, ts=1_700_000_000.0)       # 2023-11-14
    log.append(AuditType.LOGIN, "b", {"n": 2}, ts=1_700_100_000.0)       # 2023-11-16
    log.append(AuditType.LOGIN, "c", {"n": 3}, ts=1_700_200_000.0)       # 2023-11-17
    out = io.StringIO()
    assert log.export(out, "csv", since=parse_time("2023-11-15", where="from")) == 2
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [r["actor"] for r in rows] == ["b", "c"] and rows[0]["hash"]
    code, text, _ = runner(["audit", "export", "--data-dir", str(tmp_path), "--from", "2023-11-15",
                            "--to", "2023-11-16T23:59", "--format", "json"])
    assert code == 0
    data = json.loads(text)
    assert data["count"] == 1 and data["records"][0]["actor"] == "b"
    target = tmp_path / "out.csv"
    code, _, err = runner(["audit", "export", "--data-dir", str(tmp_path), "--output", str(target)])
    assert code == 0 and "3 records" in err and target.read_text().count("\n") == 4


def test_export_rejects_a_bad_date_with_a_readable_error(log, runner, tmp_path):
    fill(log, 1)
    code, _, err = runner(["audit", "export", "--data-dir", str(tmp_path), "--from", "yesterday"])
    assert code == 2 and "--from 'yesterday' is not a date" in err


def test_opening_a_non_audit_file_is_a_clear_error(tmp_path):
    (tmp_path / "audit.sqlite3").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(AuditError, match="cannot open the audit log"):
        AuditLog.in_dir(tmp_path)
