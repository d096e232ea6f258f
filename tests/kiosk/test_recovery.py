"""A disk that dies after its nightly backup: the day's records back from the collector (kiosk.recovery).

The table forwards its log to a collector (a socket server writing each line to a file, as
rsyslog does) and is backed up mid-day; then its disk dies.  ``niuniu restore`` of the
backup with ``--collector`` must give back every record written since that the table
signed for, exactly as hashed, and nothing anyone else could have sent."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from kiosk.audit import AuditLog, AuditRecord, AuditType, canonical_json
from kiosk.backup import make_backup
from kiosk.forward import AuditForwarder, record_message, syslog_line
from kiosk.forward_check import check_forwarded
from kiosk_testing import SyslogServer, fill, settings


@pytest.fixture
def collector(tmp_path):
    server = SyslogServer(tmp_path / "collector.log")
    yield server
    server.close()


def forward(log, data_dir, collector) -> None:
    """One batch, as the kiosk's thread sends it, and wait until the collector has written it."""
    import time
    forwarder = AuditForwarder(log, settings(collector.port), data_dir)
    while forwarder.step() or forwarder.sent_seq < log.last().seq:   # the key's record, made on first use
        pass
    forwarder._collector.close()
    deadline = time.monotonic() + 10
    while f'"seq":{log.last().seq},' not in (collector.path.read_text() if collector.path.exists() else ""):
        assert time.monotonic() < deadline, "the collector did not write the batch"
        time.sleep(0.05)


@pytest.fixture
def a_day(tmp_path, collector):
    """Morning rounds, the backup, the afternoon's rounds — every batch forwarded as played."""
    data_dir = tmp_path / "data"
    log = AuditLog.in_dir(data_dir, "t1")
    fill(log, 3)
    forward(log, data_dir, collector)
    (tmp_path / "drive").mkdir()
    backup = make_backup(data_dir, tmp_path / "drive")
    for n in range(4, 9):                   # each round's batch ends with its signed head
        fill(log, 1, start=n)
        forward(log, data_dir, collector)
    lost = log.last()
    log.close()
    return backup, lost


def test_the_records_since_the_backup_come_back_from_the_collector(a_day, collector, tmp_path, runner):
    backup, lost = a_day
    new = tmp_path / "new-disk"
    code, out, _ = runner(["restore", str(backup.folder), "--data-dir", str(new), "--collector", str(collector.path)])
    assert code == 0, out
    taken = lost.seq - backup.head_seq
    assert f"taken back from the collector: {taken} records written after the backup, seq " \
           f"{backup.head_seq + 1}..{lost.seq}" in out
    log = AuditLog.in_dir(new, create=False)
    try:
        assert log.verify().ok
        assert log.records(after_seq=lost.seq - 1, upto_seq=lost.seq)[0] == lost   # exactly as hashed
        restore = log.last()
        assert restore.seq == lost.seq + 1 and restore.type == AuditType.BACKUP_RESTORED
        assert restore.table_id == "t1"                 # written by a console, still the table's record
        assert restore.data["recovered"]["records"] == taken and restore.data["recovered"]["stopped"] is None
        assert check_forwarded([collector.path], log=log).ok         # the copy and the log agree again
    finally:
        log.close()


def test_records_no_signed_head_covers_are_not_taken(a_day, collector, tmp_path, runner):
    """A record anyone could append to the copy — it chains from the last head, its hash is
    right — is counted, not taken: the table never signed for it."""
    backup, lost = a_day
    forged = AuditRecord(lost.seq + 1, lost.ts, "t1", AuditType.SETTLEMENT_CORRECTED, "nobody", 8,
                         canonical_json({"seat": "1", "paid": "100000"}), lost.hash, "")
    forged = replace(forged, hash=forged.expected_hash())
    with open(collector.path, "a") as fh:
        fh.write(syslog_line(record_message(forged, "t1"), table_id="t1", kind="audit").decode() + "\n")
    new = tmp_path / "new-disk"
    code, out, _ = runner(["restore", str(backup.folder), "--data-dir", str(new), "--collector", str(collector.path),
                           "--json"])
    recovered = json.loads(out)["recovered"]
    assert code == 0 and recovered["last_seq"] == lost.seq and recovered["unvouched"] == 1
    log = AuditLog.in_dir(new, create=False)
    try:
        assert not log.records(types=[AuditType.SETTLEMENT_CORRECTED]) and log.verify().ok
    finally:
        log.close()


def test_a_gap_in_the_copy_ends_what_comes_back_before_it(a_day, collector, tmp_path, runner):
    backup, lost = a_day
    gap = lost.seq - 3
    kept = [line for line in collector.path.read_text().splitlines() if f'"seq":{gap},"ts"' not in line]
    holed = tmp_path / "holed.log"
    holed.write_text("\n".join(kept) + "\n")
    code, out, _ = runner(["restore", str(backup.folder), "--data-dir", str(tmp_path / "new"), "--collector",
                           str(holed)])
    assert code == 0 and f"seq {gap} never reached the collector (the copy holds records up to seq {lost.seq})" in out
    log = AuditLog.in_dir(tmp_path / "new", create=False)
    try:
        recovered = log.last().data["recovered"]
        assert recovered["last_seq"] is not None and recovered["last_seq"] < gap and log.verify().ok
    finally:
        log.close()


def test_an_unreadable_collector_file_changes_nothing(a_day, tmp_path, runner):
    backup, _ = a_day
    new = tmp_path / "new-disk"
    code, _, err = runner(["restore", str(backup.folder), "--data-dir", str(new), "--collector",
                           str(tmp_path / "missing.log")])
    assert code == 2 and "cannot read the collector's file" in err
    assert not (new / "audit.sqlite3").exists()


def test_extend_takes_only_records_that_follow_the_head(tmp_path):
    from kiosk.audit import AuditError

    source, target = AuditLog(tmp_path / "a.sqlite3", "t1"), AuditLog(tmp_path / "b.sqlite3", "t1")
    fill(source, 2)
    records = source.records()
    with pytest.raises(AuditError, match="record seq 2 does not follow the log's head"):
        target.extend(records[1:])
    assert target.count() == 0
    edited = replace(records[1], actor="ghost")
    with pytest.raises(AuditError, match="nothing was appended"):
        target.extend([records[0], edited])
    assert target.count() == 0
    assert target.extend(records) == 4 and target.verify().ok and target.last() == source.last()
    source.close(), target.close()


def test_records_signed_by_a_key_made_after_the_backup_are_named_as_such(collector, tmp_path, runner):
    """QA47 docs F7: forwarding set up after the last backup, so the table's signing key is
    newer than it: nothing can be taken back, and restore blamed "the batch the failure cut
    short" instead of saying why and what to do."""
    data_dir = tmp_path / "data"
    log = AuditLog.in_dir(data_dir, "t1")
    fill(log, 3)
    (tmp_path / "drive").mkdir()
    backup = make_backup(data_dir, tmp_path / "drive")          # no evidence key yet
    for n in range(4, 7):
        fill(log, 1, start=n)
        forward(log, data_dir, collector)                       # the key is made on first use
    log.close()
    code, out, _ = runner(["restore", str(backup.folder), "--data-dir", str(tmp_path / "new-disk"),
                           "--collector", str(collector.path)])
    assert code == 0, out
    assert "signed for by a key this backup does not hold" in out and "made after this backup" in out
    assert "the batch the failure cut short" not in out
