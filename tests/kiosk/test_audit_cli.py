"""The `niuniu audit` commands at their edges: what they refuse to overwrite, what the shift
report says of edited records, recordings gone without a record, a mistyped table, a reader
that leaves the pipe, a log on read-only media (QA pass 45)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from kiosk.audit import AuditLog, AuditRecord, AuditType, Entry, canonical_json
from kiosk_testing import login
from scoring.settle import Bet, settle_round
from vision.record import recording_digests, recordings_dir

ROOT = Path(__file__).resolve().parents[2]
BANKER = "4S 6H QD 9C 9H"            # Bull 8
NIU_NIU = "KS QS JS 10S 10H"         # beats it
BULL_5 = "AS 2S 3D 4D 5C"            # loses to it


def settle(log: AuditLog, round_no: int, seats: dict[str, str], *, ts: float | None = None) -> None:
    settlement = settle_round("cambodia", BANKER, {s: (c, Bet(s, Decimal(100), "equal")) for s, c in seats.items()})
    data = settlement.to_json()
    lines = [Entry(AuditType.SETTLEMENT_LINE, "dealer1", dict(line), round_no, ts) for line in data["lines"]]
    log.append_many([Entry(AuditType.ROUND_START, "vision", {"bets": {}}, round_no, ts),
                     Entry(AuditType.ROUND_SETTLED, "dealer1", {"settlement": data}, round_no, ts), *lines])


@pytest.fixture
def data_dir(tmp_path):
    """A data directory whose log holds three settled rounds of table t1."""
    folder = tmp_path / "data"
    log = AuditLog.in_dir(folder, "t1")
    for n in (1, 2, 3):
        settle(log, n, {"1": NIU_NIU, "2": BULL_5})
    log.close()
    return folder


def edit(path: Path, seq: int, change, *, rehash: bool = False) -> None:
    """What someone with the disk does: drop the guards and change one record's payload (and,
    ``rehash``, its hash too, leaving the rest of the chain as it is)."""
    conn = sqlite3.connect(path)
    for name in ("audit_no_update", "audit_no_delete"):
        conn.execute(f"DROP TRIGGER {name}")
    row = conn.execute("SELECT seq, ts, table_id, type, actor, round_no, payload, prev_hash, hash FROM audit "
                       "WHERE seq = ?", (seq,)).fetchone()
    data = json.loads(row[6])
    change(data)
    record = AuditRecord(*row[:6], canonical_json(data), row[7], row[8])
    digest = record.expected_hash() if rehash else record.hash
    conn.execute("UPDATE audit SET payload = ?, hash = ? WHERE seq = ?", (record.payload, digest, seq))
    conn.commit()
    conn.close()


def inflate(data: dict) -> None:
    """Seat 1's win of 95 made 475, and the banker's books made to match (they still balance)."""
    s = data["settlement"]
    s["lines"][0].update(gross="500", commission="25.00", net="475.00")
    s.update(banker_net="-300.00", total_commission="25.00")


def settled_seq(path: Path, round_no: int) -> int:
    log = AuditLog(path, create=False)
    try:
        return log.records(round_no=round_no, types=[AuditType.ROUND_SETTLED])[0].seq
    finally:
        log.close()


# ----------------------------------------------------------------- H4: nothing written over what exists


def test_export_and_public_key_never_write_over_the_data_directorys_own_files(data_dir, runner, tmp_path):
    log_file = data_dir / "audit.sqlite3"
    kept = log_file.read_bytes()
    for extra in ([], ["--force"], ["--unsigned"], ["--unsigned", "--force"]):
        code, _, err = runner(["audit", "export", "--data-dir", str(data_dir), "-o", str(log_file), *extra])
        assert code == 2 and "the kiosk's own audit.sqlite3" in err and "write it elsewhere" in err, (extra, err)
    # SQLite's files beside the log, though none is there now, and the recordings' folders.
    for name in ("audit.sqlite3-wal", "recordings/t1/x.csv"):
        code, _, err = runner(["audit", "export", "--data-dir", str(data_dir), "-o", str(data_dir / name),
                               "--unsigned", "--force"])
        assert code == 2 and "the kiosk's own" in err, (name, err)
        assert not (data_dir / name).exists()
    code, _, err = runner(["audit", "export", "--data-dir", str(data_dir), "-o", str(tmp_path / "x.csv"),
                           "--statement", str(log_file)])
    assert code == 2 and "the kiosk's own audit.sqlite3" in err
    # The public key: never over the log, nor over the private key it is the half of.
    code, _, err = runner(["audit", "public-key", "--data-dir", str(data_dir), "-o", str(tmp_path / "table.pem")])
    assert code == 0, err
    private = (data_dir / "evidence_key").read_bytes()
    for name in ("audit.sqlite3", "evidence_key"):
        code, _, err = runner(["audit", "public-key", "--data-dir", str(data_dir), "-o", str(data_dir / name),
                               "--force"])
        assert code == 2 and f"the kiosk's own {name}" in err, err
    # Not through a link either.
    (tmp_path / "link.pem").symlink_to(data_dir / "evidence_key")
    code, _, err = runner(["audit", "public-key", "--data-dir", str(data_dir), "-o", str(tmp_path / "link.pem"),
                           "--force"])
    assert code == 2 and "the kiosk's own evidence_key" in err
    assert (data_dir / "evidence_key").read_bytes() == private
    log = AuditLog(log_file, create=False)
    try:
        result = log.verify()
        assert result.ok and result.count == 13          # the 12 written, and the key made above
    finally:
        log.close()
    assert log_file.read_bytes()[:16] == kept[:16] == b"SQLite format 3\x00"


def test_an_existing_output_is_kept_unless_force_and_a_signed_export_always(data_dir, runner, tmp_path):
    signed = tmp_path / "shift.csv"
    code, _, err = runner(["audit", "export", "--data-dir", str(data_dir), "-o", str(signed)])
    assert code == 0, err
    handed_out = signed.read_bytes()
    # The everyday slip: the same name again, unsigned — the statement beside it would then vouch
    # for another file.  Refused, --force or not.
    for extra in (["--unsigned"], ["--unsigned", "--force"], ["--force"]):
        code, _, err = runner(["audit", "export", "--data-dir", str(data_dir), "-o", str(signed), *extra])
        assert code == 2 and "is a signed export" in err, (extra, err)
    assert signed.read_bytes() == handed_out
    code, out, _ = runner(["audit", "check-export", str(signed), "--data-dir", str(data_dir)])
    assert code == 0, out

    plain = tmp_path / "plain.csv"
    plain.write_text("a file of the user's\n")
    code, _, err = runner(["audit", "export", "--data-dir", str(data_dir), "-o", str(plain), "--unsigned"])
    assert code == 2 and "exists" in err and "--force" in err
    assert plain.read_text() == "a file of the user's\n"
    code, _, err = runner(["audit", "export", "--data-dir", str(data_dir), "-o", str(plain), "--unsigned", "--force"])
    assert code == 0 and plain.read_text().startswith("seq,ts,"), err

    pem = tmp_path / "table.pem"
    pem.write_text("someone else's key\n")
    code, _, err = runner(["audit", "public-key", "--data-dir", str(data_dir), "-o", str(pem)])
    assert code == 2 and "exists" in err and "--force" in err and pem.read_text() == "someone else's key\n"
    code, _, err = runner(["audit", "public-key", "--data-dir", str(data_dir), "-o", str(pem), "--force"])
    assert code == 0 and pem.read_text().startswith("-----BEGIN PUBLIC KEY-----"), err


def test_an_export_to_a_directory_is_one_line(data_dir, runner, tmp_path):
    folder = tmp_path / "exports"
    folder.mkdir()
    for extra in (["--unsigned"], []):
        code, _, err = runner(["audit", "export", "--data-dir", str(data_dir), "-o", str(folder), *extra])
        assert code == 2 and err.count("\n") == 1 and "is a directory; give a file name" in err, err
    assert folder.is_dir() and not list(folder.iterdir())
    assert not Path(f"{folder}.statement.json").exists()


# ----------------------------------------------------------------- H6: the report checks what it reads


def test_the_shift_report_names_a_settlement_edited_in_the_database(data_dir, runner):
    seq = settled_seq(data_dir / "audit.sqlite3", 2)
    code, out, _ = runner(["audit", "report", "--data-dir", str(data_dir)])
    assert code == 0 and "WARNING" not in out
    edit(data_dir / "audit.sqlite3", seq, inflate)           # its books still balance: only the hash shows it
    code, out, _ = runner(["audit", "report", "--data-dir", str(data_dir)])
    assert code == 1
    assert f"WARNING: round 2's round_settled record (seq {seq}) does not match its hash" in out
    assert "do not sign this report" in out
    assert out.index("WARNING") < out.index("players net")       # read before the figures
    code, out, _ = runner(["audit", "report", "--data-dir", str(data_dir), "--json"])
    [report] = json.loads(out)
    assert code == 1 and report["broken_rounds"] == [2]
    assert report["broken_records"] == [{"round": 2, "seq": seq, "type": "round_settled",
                                         "problem": "does not match its hash: it was edited after it was written"}]


def test_an_edit_with_its_hash_recomputed_or_a_removed_record_is_named_too(data_dir, runner):
    path = data_dir / "audit.sqlite3"
    seq = settled_seq(path, 1)
    edit(path, seq, inflate, rehash=True)        # the record hashes again; the next one no longer links to it
    code, out, _ = runner(["audit", "report", "--data-dir", str(data_dir), "--json"])
    [report] = json.loads(out)
    assert code == 1 and report["broken_rounds"] == [1]
    assert [b["seq"] for b in report["broken_records"]][:1] == [seq]
    assert "is not the record the one after it" in report["broken_records"][0]["problem"]

    conn = sqlite3.connect(path)                 # round 3's second settlement line taken out
    last_line = conn.execute("SELECT MAX(seq) FROM audit WHERE round_no = 3").fetchone()[0]
    conn.execute("DELETE FROM audit WHERE seq = ?", (last_line - 1,))
    conn.commit()
    conn.close()
    code, out, _ = runner(["audit", "report", "--data-dir", str(data_dir)])
    assert code == 1 and "round 3's settlement_line record" in out and "round 2" not in out.split("rounds   ")[0]
    assert f"(seq {last_line}) is not linked to the record before it (seq {last_line - 1})" in out


def test_the_shift_report_page_warns_of_edited_records(played, app, audit):
    seq = audit.records(round_no=1, types=[AuditType.ROUND_SETTLED])[0].seq
    page = played.get("/review/report").get_data(as_text=True)
    assert 'id="report-broken"' not in page
    edit(audit.path, seq, lambda data: data["settlement"]["lines"][0].update(net="9000.00"))
    page = played.get("/review/report").get_data(as_text=True)
    assert 'id="report-broken"' in page and "do not sign this report" in page
    assert f"Round #1's round_settled record (seq {seq}) does not match its hash" in page
    assert page.index("report-broken") < page.index("report-totals")
    login(played, "super1")                      # the supervisor who signs it sees it too
    assert 'id="report-broken"' in played.get("/review/report").get_data(as_text=True)


def test_the_report_looks_up_its_records_neighbours_in_batches_and_never_walks_the_chain(data_dir, monkeypatch):
    """The check must stay cheap on a year's log: one query for the neighbours of a few hundred
    rounds' records, no chain walk."""
    from kiosk import report as books

    log = AuditLog(data_dir / "audit.sqlite3", create=False)
    calls = []
    monkeypatch.setattr(log, "verify", lambda *a, **k: calls.append("verify"))
    monkeypatch.setattr(log, "iter_records", lambda *a, **k: calls.append("iter") or iter(()))
    original = log.links
    monkeypatch.setattr(log, "links", lambda seqs: calls.append("links") or original(seqs))
    try:
        report = books.period_report(log)["t1"]
        assert calls == ["links"] and report.broken == [] and report.rounds["settled"] == 3
        calls.clear()
        monkeypatch.setattr(books, "CHECK_BATCH", 5)            # 4 records a round: a lookup every second round
        assert books.period_report(log)["t1"].broken == [] and calls == ["links"] * 2
    finally:
        log.close()


# ----------------------------------------------------------------- M2: recordings gone without a record


def seal(log: AuditLog, data_dir: Path, round_no: int) -> Path:
    folder = recordings_dir(data_dir, "t1") / f"20260301T0800{round_no:02d}Z-round-{round_no:04d}"
    (folder / "frames").mkdir(parents=True)
    (folder / "frames" / "00000001.jpg").write_bytes(b"\xff\xd8frame %d" % round_no)
    (folder / "meta.json").write_text(json.dumps({"round_no": round_no}))
    log.append(AuditType.RECORDING_SEALED, "system", {"folder": folder.name, "files": recording_digests(folder),
                                                      "bytes": 20, "interrupted": False}, round_no=round_no)
    return folder


def test_a_sealed_recording_deleted_by_hand_is_named_missing(data_dir, runner, tmp_path):
    log = AuditLog.in_dir(data_dir, "t1")
    folders = {n: seal(log, data_dir, n) for n in (1, 2, 3)}
    log.close()
    code, out, _ = runner(["audit", "check-recordings", "--data-dir", str(data_dir)])
    assert code == 0 and "3 recordings as sealed" in out and "0 missing" in out

    shutil.rmtree(folders[2])                    # by hand: no recordings_pruned record
    code, out, _ = runner(["audit", "check-recordings", "--data-dir", str(data_dir)])
    assert code == 1
    assert f"MISSING: round 2 ({folders[2].name}, sealed at seq" in out and "no recordings_pruned record" in out
    assert "2 recordings as sealed, 0 changed since sealed, 0 deleted as the log records" in out and "1 missing" in out
    code, out, _ = runner(["audit", "check-recordings", "--data-dir", str(data_dir), "--json"])
    report = json.loads(out)
    assert code == 1 and not report["ok"] and len(report["missing"]) == 1 and report["gone"] == []

    # Retention deleted it and said so: accounted for.
    log = AuditLog.in_dir(data_dir, "t1")
    log.append(AuditType.RECORDINGS_PRUNED, "system", {"count": 1, "bytes": 20, "reasons": ["age"],
                                                       "folders": [folders[2].name]})
    log.close()
    code, out, _ = runner(["audit", "check-recordings", "--data-dir", str(data_dir)])
    assert code == 0 and "1 deleted as the log records" in out and "0 missing" in out

    # Every recording moved away: each named.
    shutil.move(str(data_dir / "recordings"), str(tmp_path / "elsewhere"))
    code, out, _ = runner(["audit", "check-recordings", "--data-dir", str(data_dir)])
    assert code == 1 and out.count("MISSING:") == 2 and "2 missing" in out


def test_recordings_a_restore_left_behind_are_not_missing(data_dir, runner):
    """A backup carries only the held recordings: after `niuniu restore` onto a new disk the
    others are gone, and the log's backup_restored record says why."""
    log = AuditLog.in_dir(data_dir, "t1")
    folder = seal(log, data_dir, 1)
    log.append(AuditType.BACKUP_RESTORED, "console:root", {"from": "/mnt/b/niuniu-backup-x", "head_seq": 5})
    log.close()
    shutil.rmtree(folder)
    code, out, _ = runner(["audit", "check-recordings", "--data-dir", str(data_dir)])
    assert code == 0 and "1 deleted as the log records" in out and "0 missing" in out


def test_a_table_the_log_never_held_is_an_error_naming_those_it_holds(data_dir, runner):
    for command in (["audit", "check-recordings"], ["audit", "report"]):
        code, out, err = runner([*command, "--data-dir", str(data_dir), "--table", "nope"])
        assert code == 2 and out == "" and "no table 'nope'" in err and "it holds t1" in err, (command, err)
        code, _, err = runner([*command, "--data-dir", str(data_dir), "--table", "t1"])
        assert code == 0, err


# ----------------------------------------------------------------- M5: a reader that leaves the pipe


def test_an_export_into_a_pipe_its_reader_closed_ends_quietly(tmp_path):
    log = AuditLog.in_dir(tmp_path, "t1")
    log.append_many([Entry(AuditType.LOGIN, "a", {"n": n, "pad": "x" * 200}) for n in range(2000)])   # ~0.6 MB
    log.close()
    proc = subprocess.Popen([sys.executable, "-m", "kiosk.cli", "audit", "export", "--data-dir", str(tmp_path),
                             "--unsigned"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline().startswith(b"seq,ts,")          # `| head -1`
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 0 and err == b"", err


# ----------------------------------------------------------------- M12: a log on read-only media


# As root, permissions do not stop a write: the directory is then mounted read-only in a mount
# namespace of the command's own (what `mount -o remount,ro,bind` does to a forensic copy).
READ_ONLY_MOUNT = 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && exec "$@"'


def read_only_view(data_dir: Path) -> list[str]:
    """The prefix that runs a command where ``data_dir`` cannot be written; skips the test where
    no such view can be made here."""
    if os.geteuid() != 0:
        for path in [*data_dir.rglob("*"), data_dir]:
            os.chmod(path, 0o555 if path.is_dir() else 0o444)
        return []
    if shutil.which("unshare") is None:
        pytest.skip("root without unshare: no read-only view of a directory to test with")
    probe = subprocess.run(["unshare", "-m", "sh", "-c", READ_ONLY_MOUNT, str(data_dir), "sh", "-c",
                            '! touch "$0/.probe" 2>/dev/null', str(data_dir)], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot mount a read-only view here: {probe.stderr.decode().strip()}")
    return ["unshare", "-m", "sh", "-c", READ_ONLY_MOUNT, str(data_dir)]


def reader(args: list[str], data_dir: Path) -> subprocess.CompletedProcess:
    """``niuniu`` run where ``data_dir`` is read-only (a seized disk, a write-protected copy)."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([*read_only_view(data_dir), sys.executable, "-m", "kiosk.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture
def read_only_copy(data_dir):
    """The data directory with a sealed recording; made writable again for pytest to clean up."""
    log = AuditLog.in_dir(data_dir, "t1")
    seal(log, data_dir, 1)
    log.close()
    yield data_dir
    for path in [data_dir, *data_dir.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)


def test_the_read_only_commands_read_a_log_they_cannot_write(read_only_copy, tmp_path):
    copy = read_only_copy
    before = sorted(p.name for p in copy.iterdir())
    done = reader(["audit", "verify", "--data-dir", str(copy)], copy)
    assert done.returncode == 0 and done.stdout.startswith("OK ") and done.stderr == "", done.stderr
    done = reader(["audit", "report", "--data-dir", str(copy), "--json"], copy)
    assert done.returncode == 0 and json.loads(done.stdout)[0]["rounds"]["settled"] == 3, done.stderr
    done = reader(["audit", "check-recordings", "--data-dir", str(copy)], copy)
    assert done.returncode == 0 and "1 recording as sealed" in done.stdout, done.stderr
    done = reader(["audit", "export", "--data-dir", str(copy), "--unsigned", "--format", "json"], copy)
    assert done.returncode == 0 and json.loads(done.stdout)["count"] > 10, done.stderr
    assert sorted(p.name for p in copy.iterdir()) == before       # no -wal, no -shm left on the copy
    # Signing writes to the log: that one still says why it cannot.
    done = reader(["audit", "export", "--data-dir", str(copy), "--statement", "/nonexistent/s.json"], copy)
    assert done.returncode == 2 and "cannot" in done.stderr


def test_a_read_only_log_refuses_writes_and_makes_no_files(data_dir):
    log = AuditLog.in_dir(data_dir, read_only=True)
    try:
        assert log.verify().ok and log.tables() == ["t1"]
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            log.append(AuditType.LOGIN, "a")
    finally:
        log.close()
    assert sorted(p.name for p in data_dir.iterdir()) == ["audit.sqlite3"]


def test_a_read_only_open_reads_the_records_a_running_kiosk_has_not_checkpointed(data_dir):
    writer = AuditLog.in_dir(data_dir, "t1")           # holds the -wal open, as the kiosk does
    try:
        writer.append(AuditType.LOGIN, "late")
        log = AuditLog.in_dir(data_dir, read_only=True)
        try:
            assert log.last().actor == "late" and log.verify().ok
        finally:
            log.close()
    finally:
        writer.close()


# ----------------------------------------------------------------- L8


def test_a_head_past_the_log_is_said_plainly(data_dir, runner):
    code, out, _ = runner(["audit", "verify", "--data-dir", str(data_dir), "--head", "999:5702ae6dfa088e57"])
    assert code == 1
    line = out.splitlines()[-1]
    assert line.startswith("MISSING: the log holds no record seq 999 (it has 12 records, up to seq 12), but the "
                           "head written down as 999:5702ae6dfa088e57 names it: records were removed"), line
    assert "holds 999:" not in line
