"""QA52 L1: recordings with no seal (a release before sealing made them, or a run that stopped
before sealing them) are named by ``niuniu audit check-recordings`` and never pass as checked; a
start that seals left-over folders says which run left each one, and counts the older ones it
does not seal."""

from __future__ import annotations

import json
from types import SimpleNamespace

from kiosk.audit import AuditLog, AuditType
from kiosk.cli import main
from kiosk.table_service import TableService
from kiosk_testing import make_table
from vision.record import recordings_dir
from vision.round import RoundMachine


def old_recording(data_dir, round_no: int, *, finished: bool = True):
    """A folder as a release before sealing left it: files, no seal in the log."""
    folder = recordings_dir(data_dir, "t1") / f"20261207T1800{round_no:02d}Z-round-{round_no:04d}"
    (folder / "frames").mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps({"round_no": round_no, "ended": 1.0 if finished else None,
                                                  "interrupted": not finished}))
    (folder / "frames" / "00000005.jpg").write_bytes(b"\xff\xd8frame " + bytes([round_no]))
    return folder


def play(log: AuditLog, round_no: int, *, cleared: bool = True) -> None:
    log.append(AuditType.ROUND_START, "system", {"bets": {}}, round_no=round_no)
    if cleared:
        log.append(AuditType.ROUND_VOID, "dealer", {"reason": "test"}, round_no=round_no)


def test_check_recordings_names_recordings_with_no_seal_and_does_not_pass_them(tmp_path, capsys):
    log = AuditLog(tmp_path / "audit.sqlite3", table_id="t1")
    log.append(AuditType.KIOSK_START, "system", {"pid": 1})
    for number in (1, 2):
        play(log, number)
        old_recording(tmp_path, number)
    log.append(AuditType.KIOSK_STOP, "system", {"reason": "normal shutdown"})
    log.close()

    code = main(["audit", "check-recordings", "--data-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "UNSEALED: round 1 (20261207T180001Z-round-0001)" in out and "UNSEALED: round 2" in out
    assert "2 recordings have no seal" in out and "they cannot be checked" in out
    assert "2 with no seal (not checked)" in out

    code = main(["audit", "check-recordings", "--data-dir", str(tmp_path), "--json"])
    found = json.loads(capsys.readouterr().out)
    assert code == 1 and found["ok"] is False
    assert found["unsealed"] == ["round 1 (20261207T180001Z-round-0001)", "round 2 (20261207T180002Z-round-0002)"]


def test_a_round_of_the_running_kiosk_is_not_yet_sealed_not_a_failure(tmp_path, capsys):
    """The round being played has a folder and no seal yet: a check run beside the table must not fail on it."""
    log = AuditLog(tmp_path / "audit.sqlite3", table_id="t1")
    log.append(AuditType.KIOSK_START, "system", {"pid": 1})
    play(log, 1, cleared=False)
    old_recording(tmp_path, 1, finished=False)
    log.close()
    code = main(["audit", "check-recordings", "--data-dir", str(tmp_path), "--json"])
    found = json.loads(capsys.readouterr().out)
    assert (code, found["unsealed"], found["not_yet_sealed"]) == (0, [], ["round 1 (20261207T180001Z-round-0001)"])


def test_a_start_seals_each_left_over_with_the_ending_of_the_run_that_left_it(tmp_path):
    """Round 12 was left by a run that stopped cleanly, 13 and 14 by the run after it, killed in 14:
    the seal of 12 must not say the last run crashed.  Rounds 9-11 (older, unsealed) are counted."""
    log = AuditLog(tmp_path / "audit.sqlite3", table_id="t1")
    first = log.append(AuditType.KIOSK_START, "system", {"pid": 1})
    for number in (9, 10, 11):
        play(log, number)
    play(log, 12, cleared=False)
    log.append(AuditType.KIOSK_STOP, "system", {"reason": "normal shutdown"})
    second = log.append(AuditType.KIOSK_START, "system", {"pid": 2})
    log.append(AuditType.ROUND_INTERRUPTED, "system", {"reason": "last run: clean shutdown"}, round_no=12)
    play(log, 13)
    play(log, 14, cleared=False)
    for number in range(9, 15):
        old_recording(tmp_path, number, finished=number not in (12, 14))

    root = recordings_dir(tmp_path, "t1")
    pipeline = SimpleNamespace(recorder=SimpleNamespace(root=root, on_finished=None),
                               machine=RoundMachine(make_table()))
    service = TableService(make_table(), log, pipeline=pipeline)
    service.start()
    service.wait_sealed()
    seals = {r.round_no: r.data for r in log.records(types=[AuditType.RECORDING_SEALED])}
    assert sorted(seals) == [12, 13, 14]
    assert seals[12]["after_restart"] == "clean shutdown"          # HEAD: the last run's "crashed or killed"
    assert (seals[12]["after_restart"], seals[12]["recorded_in_run"], seals[12]["runs_since"]) == (
        "clean shutdown", first.seq, 1)
    assert (seals[13]["after_restart"], seals[13]["recorded_in_run"]) == ("crashed or killed", second.seq)
    assert seals[14]["after_restart"] == "crashed or killed"
    assert (seals[12]["interrupted"], seals[13]["interrupted"]) == (True, False)
    start = log.records(types=[AuditType.KIOSK_START], newest_first=True, limit=1)[0].data
    unsealed = start["unsealed_recordings"]
    assert (unsealed["count"], unsealed["oldest"], unsealed["newest"]) == (
        3, "20261207T180009Z-round-0009", "20261207T180011Z-round-0011")
    assert "hold up the table's start" in unsealed["why"]
    service.stop()
    log.close()


def test_the_round_pages_words_for_a_late_seal_name_the_run_that_left_it():
    from kiosk.timeline import record_words

    def words(**data):
        record = SimpleNamespace(type=AuditType.RECORDING_SEALED, seq=40, data={
            "folder": "20261207T180012Z-round-0012", "files": {"meta.json": "ab"}, "bytes": 10, **data})
        return record_words(record, None).text

    earlier = words(after_restart="clean shutdown", recorded_in_run=7, runs_since=1)
    assert "the run that recorded it (started at seq 7) ended: clean shutdown; 1 more run came before" in earlier
    assert "crashed" not in earlier
    assert "(last run: crashed or killed)" in words(after_restart="crashed or killed", recorded_in_run=9)
    assert "no record says which run recorded it" in words(after_restart="not known")
    assert words().endswith("SHA-256 each")
