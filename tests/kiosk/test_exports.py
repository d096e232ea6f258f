"""Signed audit exports: a regulator checks a period's CSV or JSON with the published key alone."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from kiosk.audit import AuditRecord, AuditType
from kiosk.exports import check_export, statement_path
from kiosk_testing import login, table_dict
from vision.table import table_config_from_dict


@pytest.fixture
def exported(played, app, audit, runner, tmp_path):
    """The played log exported as CSV from the console, and the table's published key."""
    data_dir = str(app.extensions["niuniu"].data_dir)
    target = tmp_path / "shift.csv"
    code, _, err = runner(["audit", "export", "--data-dir", data_dir, "-o", str(target), "--by", "watch1"])
    assert code == 0, err
    code, _, err = runner(["audit", "public-key", "--data-dir", data_dir, "-o", str(tmp_path / "table.pem")])
    assert code == 0, err
    return target, tmp_path / "table.pem", data_dir


def rows_of(path: Path) -> tuple[list[str], list[dict]]:
    reader = csv.DictReader(io.StringIO(path.read_text(encoding="utf-8")))
    return reader.fieldnames, list(reader)


def write_rows(path: Path, header: list[str], rows: list[dict]) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, header, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path


def rehash(rows: list[dict]) -> None:
    """What a forger would do after editing a row: recompute every hash from it on."""
    prev = rows[0]["prev_hash"]
    for row in rows:
        record = AuditRecord(int(row["seq"]), row["ts"], row["table_id"], row["type"], row["actor"],
                             int(row["round"]) if row["round"] else None, row["payload"], prev, "")
        row["prev_hash"], row["hash"] = prev, record.expected_hash()
        prev = row["hash"]


def test_a_console_export_is_signed_and_an_outside_party_checks_it_with_the_key_alone(exported, audit, runner):
    target, pem, data_dir = exported
    statement = json.loads(statement_path(target).read_text())
    logged = audit.records(types=[AuditType.EXPORTED])[-1]
    # The statement is the logged record's: the log can hand it out again, and vouches for it.
    assert logged.actor == "watch1" and logged.data["signature"] == statement["signature"]
    assert statement["count"] == len(rows_of(target)[1]) == logged.seq - 2     # up to the head before key + record
    code, out, _ = runner(["audit", "check-export", str(target), "--public-key", str(pem)])
    assert code == 0 and "PROBLEM" not in out, out
    assert f"seq 1..{statement['last_seq']}, {statement['count']} records" in out
    assert "signed by the published key" in out and "by watch1" in out
    code, out, _ = runner(["audit", "check-export", str(target), "--data-dir", data_dir, "--json"])
    checked = json.loads(out)
    assert code == 0 and checked["ok"] and checked["against_log"]
    assert f"the log records this export: seq {logged.seq}, by watch1 at {logged.ts}" in checked["facts"]


def test_the_same_statement_proves_the_period_as_json_too(exported, app, audit, runner, tmp_path):
    target, pem, data_dir = exported
    as_json = tmp_path / "shift.json"
    code, _, err = runner(["audit", "export", "--data-dir", data_dir, "--format", "json", "-o", str(as_json),
                           "--to", "2999-01-01"])
    assert code == 0 and "signed statement" in err
    statement = json.loads(statement_path(as_json).read_text())
    assert statement["to"].startswith("2999-01-01T23:59:59") and statement["count"] == audit.last().seq - 1
    assert check_export(as_json, public_key=_key(pem)).ok
    # Records are named by their hashes, so the CSV statement covers the JSON of its period as well.
    json_of_csv_period = tmp_path / "period.json"
    json_of_csv_period.write_text(json.dumps({"records": json.loads(as_json.read_text())["records"][
        :json.loads(statement_path(target).read_text())["count"]]}))
    assert check_export(json_of_csv_period, statement_path(target), public_key=_key(pem)).ok


def _key(pem: Path):
    from kiosk.signing import load_public_key
    return load_public_key(pem)


def test_a_record_changed_added_or_left_out_fails_the_published_key(exported, tmp_path):
    target, pem, _ = exported
    key, statement = _key(pem), statement_path(target)
    header, rows = rows_of(target)

    # A settlement's net edited and every hash after it recomputed: each record hashes, the chain
    # follows, but these are not the records the table signed.
    edited = [dict(r) for r in rows]
    line = next(r for r in edited if r["type"] == "settlement_line")
    line["payload"] = line["payload"].replace('"net":"', '"net":"1')
    rehash(edited[edited.index(line):])
    result = check_export(write_rows(tmp_path / "edited.csv", header, edited), statement, public_key=key)
    assert result.problems == ["the file's records are not the ones the statement names (SHA-256 of their seq "
                               "and hash differs): a record was changed or swapped after export"]

    # Edited without re-hashing: the record itself shows.
    lazy = [dict(r) for r in rows]
    lazy[3]["actor"] = "nobody"
    problems = check_export(write_rows(tmp_path / "lazy.csv", header, lazy), statement, public_key=key).problems
    assert problems[0] == f"audit record seq {lazy[3]['seq']} ({lazy[3]['type']}) does not hash to its stored hash: " \
                          "its contents were changed"

    # Edited throughout: the first problems are named, then counted (a year's export is not a
    # million lines of problems); a hash mangled past hex, or a statement's count turned to text,
    # is a finding, not a crash.
    everyone = [dict(r, actor="nobody") for r in rows]
    everyone[0]["hash"] = "ä" * 64
    problems = check_export(write_rows(tmp_path / "all.csv", header, everyone), statement, public_key=key).problems
    # Every record changed, and the second no longer follows the first: one problem more than records.
    assert len(problems) == 22 and problems[20] == f"and {len(rows) + 1 - 20} more problems with single records"
    odd = dict(json.loads(statement.read_text()), count=str(len(rows) - 5))
    (tmp_path / "odd.json").write_text(json.dumps(odd))
    shorter = write_rows(tmp_path / "cut0.csv", header, rows[:-5])
    assert "signature does not match" in " ".join(check_export(shorter, tmp_path / "odd.json", public_key=key).problems)

    # The last round's records cut off the end (a chain that still follows), or a voided round dropped.
    cut = check_export(write_rows(tmp_path / "cut.csv", header, rows[:-5]), statement, public_key=key)
    last = int(rows[-1]["seq"])
    assert cut.problems == [f"seq {last - 4}..{last} missing at the end (the statement's last is seq {last})",
                            f"the file holds {len(rows) - 5} records, the statement {len(rows)}: records were left "
                            "out after export"]
    gap = [r for r in rows if r["round"] != "3"]
    assert any("does not follow" in p or "left out" in p
               for p in check_export(write_rows(tmp_path / "gap.csv", header, gap), statement, public_key=key).problems)
    twice = check_export(write_rows(tmp_path / "twice.csv", header, rows + rows[-1:]), statement, public_key=key)
    assert "records were reordered or repeated" in twice.problems[0] and "added after export" in twice.problems[-1]


def test_a_statement_edited_or_resigned_by_another_key_fails(exported, audit, tmp_path):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from kiosk.audit import canonical_json
    from kiosk.exports import _body
    from kiosk.signing import fingerprint, public_pem

    target, pem, _ = exported
    signed = json.loads(statement_path(target).read_text())
    header, rows = rows_of(target)
    short = write_rows(tmp_path / "short.csv", header, rows[:-5])
    from kiosk.exports import records_digest
    from kiosk.exports import read_export
    digest, count, first, last = records_digest(read_export(short.read_bytes()))
    # The statement mended to match a shortened file: its signature no longer holds.
    mended = dict(signed, records_sha256=digest, count=count, last_seq=last)
    (tmp_path / "mended.json").write_text(json.dumps(mended))
    assert check_export(short, tmp_path / "mended.json", public_key=_key(pem)).problems == [
        "the statement's signature does not match it: the statement was changed after it was signed"]
    # Against the log, the record of the export it claims says so too.
    assert "differs from the statement in count, last_seq, records_sha256" in " ".join(
        check_export(short, tmp_path / "mended.json", log=audit).problems)
    # ... and re-signed with a key of the forger's own: the signature holds, the key is not the table's.
    other = Ed25519PrivateKey.generate()
    forged = dict(mended, signing_key=fingerprint(other.public_key()), public_key=public_pem(other.public_key()))
    import base64
    body = _body(forged, table_id=forged["table_id"], exported_by=forged["exported_by"],
                 exported_at=forged["exported_at"])
    forged["signature"] = base64.b64encode(other.sign(canonical_json(body).encode())).decode()
    (tmp_path / "forged.json").write_text(json.dumps(forged))
    assert check_export(short, tmp_path / "forged.json", public_key=_key(pem)).problems == [
        f"signed by key {fingerprint(other.public_key())}, not by the published key {fingerprint(_key(pem))}"]


def test_against_the_log_a_history_rewritten_since_the_export_shows(exported, audit):
    from kiosk_testing import rewrite_history

    target, _, _ = exported
    signed = json.loads(statement_path(target).read_text())
    rewrite_history(audit.path, signed["head_seq"] - 3, "someone else")
    assert audit.verify().ok
    problems = check_export(target, log=audit).problems
    assert problems[0] == "4 audit records are not the ones the log holds at their seq (first: seq " \
                          f"{signed['head_seq'] - 3})"
    assert problems[-1].startswith(f"the log no longer holds the head it had when this was exported (seq "
                                   f"{signed['head_seq']})")


def test_no_export_overwrites_a_statement_or_leaves_half_of_itself(exported, audit, runner, tmp_path):
    target, _, data_dir = exported
    before, kept = audit.last().seq, statement_path(target).read_bytes()
    code, _, err = runner(["audit", "export", "--data-dir", data_dir, "-o", str(target)])
    assert code == 2 and "is a signed export" in err and "never overwritten" in err
    assert statement_path(target).read_bytes() == kept and audit.last().seq == before
    # Unsigned on request: no key read, nothing logged, no statement.
    plain = tmp_path / "plain.csv"
    code, _, err = runner(["audit", "export", "--data-dir", data_dir, "-o", str(plain), "--unsigned"])
    assert code == 0 and "(unsigned)" in err and not statement_path(plain).exists() and audit.last().seq == before
    # A statement that cannot be written takes its export with it.
    lost = tmp_path / "lost.csv"
    code, _, err = runner(["audit", "export", "--data-dir", data_dir, "-o", str(lost),
                           "--statement", str(tmp_path / "no-such-dir" / "s.json")])
    assert code == 2 and "cannot write" in err and "No such file or directory" in err and not lost.exists()
    code, out, _ = runner(["audit", "check-export", str(plain)])
    assert code == 1 and "no statement beside the export" in out and "--statement" in out and "--data-dir" in out
    code, out, _ = runner(["audit", "check-export", str(plain), "--statement", str(tmp_path / "typo.json")])
    assert code == 1 and "cannot read the statement" in out and "no such file" in out   # named, not missing
    # an export with no statement (made before exports were signed) still has its records checked
    code, out, _ = runner(["audit", "check-export", str(plain), "--data-dir", data_dir])
    assert code == 1 and "cannot show that it holds every record" in out
    assert "each audit record is the one the log holds at its seq" in out
    header, rows = rows_of(plain)
    rows[3]["actor"] = "someone-else"
    code, out, _ = runner(["audit", "check-export", str(write_rows(tmp_path / "plain-edited.csv", header, rows)),
                           "--data-dir", data_dir])
    assert code == 1 and "seq 4 (" in out and "does not hash to its stored hash" in out
    as_json = tmp_path / "typed.json"
    code, _, _ = runner(["audit", "export", "--data-dir", data_dir, "--format", "json", "-o", str(as_json)])
    data = json.loads(as_json.read_text())
    data["records"][0]["seq"] = [1]               # a list where a seq belongs: no export, not a crash
    as_json.write_text(json.dumps(data))
    code, out, _ = runner(["audit", "check-export", str(as_json), "--data-dir", data_dir])
    assert code == 1 and "is not a niuniu audit export" in out and "[1] is not a whole number" in out
    (tmp_path / "junk.csv").write_text("not,an,export\n1,2,3\n")
    code, out, _ = runner(["audit", "check-export", str(tmp_path / "junk.csv"), "--statement",
                           str(statement_path(target))])
    assert code == 1 and "is not a niuniu audit export" in out


def test_the_review_page_signs_its_export_and_hands_the_statement_out(played, app, audit, tmp_path):
    from kiosk.exports import SUFFIX

    assert 'href="/review/chain#exports"' in played.get("/review/").get_data(as_text=True)
    response = played.get("/review/export?format=csv&from=2000-01-01")
    name = response.headers["Content-Disposition"].split('filename="')[1].rstrip('"')
    logged = audit.records(types=[AuditType.EXPORTED])[-1]
    assert name.endswith(f"-e{logged.seq}.csv") and logged.data["signature"]
    (tmp_path / name).write_bytes(response.data)
    chain = played.get("/review/chain").get_data(as_text=True)
    link = f"/review/export/{logged.seq}.statement.json"
    assert 'id="exports"' in chain and link in chain
    statement = played.get(link)
    assert statement.headers["Content-Disposition"] == f'attachment; filename="{name}{SUFFIX}"'
    (tmp_path / f"{name}{SUFFIX}").write_bytes(statement.data)
    (tmp_path / "table.pem").write_bytes(played.get("/review/evidence-key.pem").data)
    result = check_export(tmp_path / name, public_key=_key(tmp_path / "table.pem"), log=audit)
    assert result.ok, result.problems
    # Only exports of a period have statements; another seq is not found.
    assert played.get(f"/review/export/{logged.seq - 1}.statement.json").status_code == 404
    assert played.get("/review/export/999999.statement.json").status_code == 404
    other = app.test_client()
    login(other, "dealer1")
    assert other.get(link).status_code in (302, 403)


def test_an_unreadable_key_stops_the_review_export(played, app, audit):
    data_dir = app.extensions["niuniu"].data_dir
    (data_dir / "evidence_key").write_bytes(b"damaged")
    before = audit.last().seq
    response = played.get("/review/export?format=json", follow_redirects=True)
    assert response.mimetype == "text/html" and "Nothing exported" in response.get_data(as_text=True)
    assert audit.last().seq == before


def test_a_record_left_out_is_named_and_the_chain_is_not_called_whole(exported, tmp_path):
    """Seq 199 followed by seq 201: the file is no chain in which each record follows the one
    before, re-hashed or not, and the record left out is named."""
    target, pem, _ = exported
    key, statement = _key(pem), statement_path(target)
    header, rows = rows_of(target)
    dropped = rows[5]["seq"]
    for name, kept in (("drop", rows[:5] + rows[6:]), ("rehash", [dict(r) for r in rows[:5] + rows[6:]])):
        if name == "rehash":
            rehash(kept[5:])
        result = check_export(write_rows(tmp_path / f"{name}.csv", header, kept), statement, public_key=key)
        assert result.problems[0] == f"seq {dropped} is missing (seq {int(dropped) + 1} follows seq " \
                                     f"{int(dropped) - 1})", name
        assert "left out after export" in result.problems[-1]
        assert not any("each follows the one before" in f for f in result.facts)


def test_another_exports_statement_is_not_called_records_added(exported, app, runner, tmp_path):
    target, pem, data_dir = exported
    day = tmp_path / "later.csv"
    code, _, err = runner(["audit", "export", "--data-dir", data_dir, "-o", str(day), "--by", "watch1"])
    assert code == 0, err
    problems = check_export(day, statement_path(target), public_key=_key(pem)).problems
    assert len(problems) == 1 and "it is another export's statement, or records were added or left out" in problems[0]


def test_a_log_row_edited_in_place_is_not_the_one_the_log_holds(exported, audit):
    """The file matches the log's hash column; the log's row was edited with its hash left."""
    from tamper_testing import edit_in_place

    target, _, _ = exported
    _, rows = rows_of(target)
    seq = int(rows[7]["seq"])
    edit_in_place(audit.path, seq, "someone else")
    result = check_export(target, log=audit)
    assert result.problems == [f"the log's record seq {seq} no longer matches its hash: the log was edited; the file "
                               "holds the record as written"]
    assert "each audit record is the one the log holds at its seq" not in result.facts


def test_a_console_export_names_the_table_and_its_period_in_utc(exported, audit, runner):
    """The console opens the log without a table id: its key record and statement still name
    the table ("table 's export" otherwise), and the period is said plainly as UTC."""
    target, pem, data_dir = exported
    assert json.loads(statement_path(target).read_text())["table_id"] == "t1"
    assert audit.records(types=[AuditType.SIGNING_KEY_CREATED])[0].table_id == "t1"
    day = target.parent / "day.csv"
    code, _, err = runner(["audit", "export", "--data-dir", data_dir, "-o", str(day), "--from", "2000-01-01",
                           "--to", "2999-12-31", "--timezone", "Asia/Phnom_Penh"])
    assert code == 0, err
    code, out, _ = runner(["audit", "check-export", str(day), "--public-key", str(pem)])
    assert code == 0 and ("table t1's export of 1999-12-31 17:00:00 UTC to 2999-12-31 16:59:59 UTC" in out), out


@pytest.mark.parametrize("table", [table_config_from_dict({**table_dict(), "timezone": "Asia/Phnom_Penh"})])
def test_the_review_export_is_named_by_the_dates_asked_in_the_tables_zone(played, audit):
    response = played.get("/review/export?format=csv&from=2026-12-07&to=2026-12-07")
    name = response.headers["Content-Disposition"].split('filename="')[1].rstrip('"')
    logged = audit.records(types=[AuditType.EXPORTED])[-1]
    assert logged.data["from"].startswith("2026-12-06T17:00:00")          # stored in UTC
    assert name == f"audit-t1-2026-12-07-2026-12-07-e{logged.seq}.csv"
