"""The audit subcommands on a log with one damaged record (QA51 operator H3, M1, M6, M7, L8):
the shift report, the evidence package and the export name it and go on; nothing is left
half-written; a check never calls a damaged copy the record "as written"; and a comparison
with no backup is no pass; and a report onto a full disk is one line (L5)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest

from kiosk.audit import AuditLog, AuditRecord, AuditType
from scoring.settle import Bet, settle_round
from tamper_testing import edit_in_place
from test_damaged_record_kiosk import damage

BANKER = "4S 6H QD 9C 9H"            # Bull 8
NIU_NIU = "KS QS JS 10S 10H"         # beats it
BULL_5 = "AS 2S 3D 4D 5C"            # loses to it


def at(hh_mm: str) -> float:
    return datetime.fromisoformat(f"2026-03-01T{hh_mm}:00+00:00").timestamp()


def settle(log: AuditLog, round_no: int, start: str, end: str, seats: dict[str, str]) -> int:
    """One settled round on table t1 (seat stakes 100, equal bets); returns its round_settled seq."""
    settlement = settle_round("cambodia", BANKER, {s: (cards, Bet(s, Decimal("100"), "equal"))
                                                   for s, cards in seats.items()})
    log.append(AuditType.ROUND_START, "vision", {"bets": {}}, round_no=round_no, ts=at(start), table_id="t1")
    return log.append(AuditType.ROUND_SETTLED, "dealer1", {"settlement": settlement.to_json()}, round_no=round_no,
                      ts=at(end), table_id="t1").seq


@pytest.fixture
def damaged(tmp_path):
    """A data directory of two settled rounds; round 1's settlement damaged on the disk."""
    log = AuditLog.in_dir(tmp_path / "data")
    seq = settle(log, 1, "08:00", "08:01", {"1": NIU_NIU})      # the house pays 95.00
    settle(log, 2, "09:00", "09:01", {"1": BULL_5})             # the house takes 100.00
    log.close()
    damage(tmp_path / "data" / "audit.sqlite3", seq)
    return tmp_path / "data", seq


def test_the_shift_report_names_the_damaged_record_before_the_figures_and_counts_the_rest(damaged, runner):
    data_dir, seq = damaged
    code, out, _ = runner(["audit", "report", "--data-dir", str(data_dir), "--from", "2026-03-01"])
    assert code == 1
    lines = out.splitlines()
    named = next(i for i, line in enumerate(lines) if f"round 1's round_settled record (seq {seq})" in line)
    assert "cannot be read" in lines[named] and "left out of the figures" in lines[named]
    assert named < next(i for i, line in enumerate(lines) if "house result" in line)
    assert "house result 100.00" in out            # round 2's books, round 1's unreadable ones left out
    code, out, _ = runner(["audit", "report", "--data-dir", str(data_dir), "--from", "2026-03-01", "--json"])
    [report] = json.loads(out)
    assert code == 1 and report["broken_rounds"] == [1] and [b["seq"] for b in report["broken_records"]] == [seq]
    assert report["rounds"]["settled"] == 2 and report["house_result"] == "100.00"


def test_the_evidence_package_of_the_damaged_round_is_made_and_names_the_record(damaged, runner, tmp_path):
    data_dir, seq = damaged
    target = tmp_path / "r1.zip"
    code, out, err = runner(["audit", "evidence", "--data-dir", str(data_dir), "--round", "1", "-o", str(target)])
    assert code == 1 and target.exists()
    assert f"seq {seq} (round_settled)" in err and "cannot be read" in err
    with zipfile.ZipFile(target) as package:
        manifest = json.loads(package.read("MANIFEST.json"))
        stored = {r["seq"]: r for r in json.loads(package.read("audit.json"))}
        summary = package.read("summary.txt").decode("utf-8")
    assert [(b["file"], b["seq"]) for b in manifest["broken_records"]] == [("audit.json", seq)]
    assert "not JSON" in stored[seq]["payload"] or "XXXX" in stored[seq]["payload"]     # packed as stored
    assert "Broken records" in summary and f"seq {seq} (round_settled)" in summary
    assert "Records:  2 in audit.json" in summary

    code, out, _ = runner(["audit", "check-evidence", str(target), "--data-dir", str(data_dir)])
    assert code == 1
    assert f"the log's record seq {seq} no longer matches its hash" in out
    assert "holds the record as written" not in out and "damaged as well" in out


def test_a_json_export_of_a_damaged_log_holds_every_record_as_stored(damaged, runner, tmp_path):
    data_dir, seq = damaged
    target = tmp_path / "all.json"
    code, _, err = runner(["audit", "export", "--data-dir", str(data_dir), "--format", "json", "--unsigned",
                           "-o", str(target)])
    assert code == 1 and f"WARNING: seq {seq} (round_settled)" in err     # written, and said (QA51 review M5)
    records = json.loads(target.read_text(encoding="utf-8"))["records"]
    assert [r["seq"] for r in records] == [1, 2, 3, 4]
    log = AuditLog.in_dir(data_dir, create=False, read_only=True)
    assert AuditRecord.from_json(records[seq - 1]) == log.records(after_seq=seq - 1, limit=1)[0]
    log.close()
    assert "not JSON" in records[seq - 1]["damaged"]

    code, out, _ = runner(["audit", "check-export", str(target), "--data-dir", str(data_dir)])
    assert code == 1 and f"seq {seq} (round_settled) does not hash" in out
    assert "holds the record as written" not in out and "damaged as well" in out


def test_an_export_that_fails_part_way_leaves_nothing_and_the_retry_works(tmp_path, runner, monkeypatch):
    data_dir = tmp_path / "data"
    log = AuditLog.in_dir(data_dir)
    for n in range(1, 4):
        settle(log, n, f"0{n}:00", f"0{n}:01", {"1": NIU_NIU})
    log.close()
    target = tmp_path / "all.json"
    argv = ["audit", "export", "--data-dir", str(data_dir), "--format", "json", "--unsigned", "-o", str(target)]
    whole = AuditRecord.to_json

    def failing(record):
        if record.seq == 4:
            raise RuntimeError("the export stopped here")
        return whole(record)
    monkeypatch.setattr(AuditRecord, "to_json", failing)
    with pytest.raises(RuntimeError):
        runner(argv)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]      # no half file, no .partial

    target.write_text("the export of yesterday\n", encoding="utf-8")
    with pytest.raises(RuntimeError):
        runner([*argv, "--force"])
    assert target.read_text(encoding="utf-8") == "the export of yesterday\n"    # kept: nothing whole replaced it

    monkeypatch.setattr(AuditRecord, "to_json", whole)
    target.unlink()
    code, _, err = runner(argv)
    assert code == 0 and json.loads(target.read_text(encoding="utf-8"))["count"] == 6, err


def test_checks_say_as_written_only_of_a_copy_that_rehashes(tmp_path, runner):
    data_dir = tmp_path / "data"
    log = AuditLog.in_dir(data_dir)
    settle(log, 1, "08:00", "08:01", {"1": NIU_NIU})
    settle(log, 2, "09:00", "09:01", {"1": BULL_5})
    log.close()
    before = tmp_path / "before.csv"
    assert runner(["audit", "export", "--data-dir", str(data_dir), "--unsigned", "-o", str(before)])[0] == 0
    edit_in_place(data_dir / "audit.sqlite3", 2, "someone")        # round 1's settlement, its hash left
    after = tmp_path / "after.csv"
    assert runner(["audit", "export", "--data-dir", str(data_dir), "--unsigned", "-o", str(after)])[0] == 1   # said
    package = tmp_path / "r1.zip"
    runner(["audit", "evidence", "--data-dir", str(data_dir), "--round", "1", "-o", str(package)])

    _, out, _ = runner(["audit", "check-export", str(before), "--data-dir", str(data_dir)])
    assert "seq 2 no longer matches its hash: the log was edited; the file holds the record as written" in out
    for checked in (["check-export", str(after)], ["check-evidence", str(package)]):
        code, out, _ = runner(["audit", *checked, "--data-dir", str(data_dir)])
        assert code == 1 and "seq 2 no longer matches its hash" in out
        assert "as written" not in out.replace("the record as written in a backup", "")
        assert "damaged as well (exported after the change)" in out


def test_verify_against_a_folder_with_no_backup_fails_and_names_the_unmounted_drive(tmp_path, runner):
    data_dir = tmp_path / "data"
    log = AuditLog.in_dir(data_dir)
    settle(log, 1, "08:00", "08:01", {"1": NIU_NIU})
    log.close()
    mount_point = tmp_path / "niuniu-backup"
    mount_point.mkdir()
    code, out, _ = runner(["audit", "verify", "--data-dir", str(data_dir), "--against", str(mount_point)])
    assert code == 1
    assert "OK 2 records" in out and "NOT CHECKED" in out and "not mounted" in out
    code, out, _ = runner(["audit", "verify", "--data-dir", str(data_dir), "--against", str(mount_point), "--json"])
    found = json.loads(out)
    assert code == 1 and found["ok"] is False and "not mounted" in found["backups_not_checked"]

    backups = tmp_path / "drive"
    backups.mkdir()
    code, _, err = runner(["backup", "--data-dir", str(data_dir), "--to", str(backups)])
    assert code == 0, err
    code, out, _ = runner(["audit", "verify", "--data-dir", str(data_dir), "--against", str(backups)])
    assert code == 0 and "the log holds the head of all 1" in out


def test_a_log_file_given_as_the_data_directory_is_named_a_file(tmp_path, runner):
    log = AuditLog.in_dir(tmp_path)
    log.close()
    code, _, err = runner(["audit", "verify", "--data-dir", str(tmp_path / "audit.sqlite3")])
    assert code == 2
    assert "is a file; pass --data-dir the kiosk's data directory" in err and str(tmp_path) in err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (a disk that is always full)")
def test_a_report_onto_a_full_disk_is_one_line_not_a_traceback(tmp_path):
    data_dir = tmp_path / "data"
    log = AuditLog.in_dir(data_dir)
    settle(log, 1, "08:00", "08:01", {"1": NIU_NIU})
    log.close()
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "kiosk.cli", "audit", "report", "--data-dir", str(data_dir),
                               "--from", "2026-03-01"], stdout=full, stderr=subprocess.PIPE, text=True,
                              cwd=Path(__file__).resolve().parents[2], timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == ["niuniu audit: error: cannot write the output (No space left on "
                                                "device); free space where it goes (or write it elsewhere) and "
                                                "run it again"]
