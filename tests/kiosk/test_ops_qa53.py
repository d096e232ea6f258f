"""QA53 operator items.

``niuniu audit check-recordings`` on a table upgraded from a release before sealing: the old
rounds' recordings (unsealed, until retention deletes them) are counted as MADE BEFORE SEALING
and do not fail the check, which a nightly script read as tampering every night for weeks.
Which ones those are comes from the hash-chained log, not the folder's meta.json: a recording
the table should have sealed and did not still fails it.

``niuniu check`` after ``niuniu restore``: the restored log's newest backup_made record is older
than the backup it was restored from (a backup's log never holds its own backup_made record);
the line names the restore and that backup, not the older one as "last made"."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta

from test_preflight import Reader, data, table
from test_recordings_unsealed_qa52d import old_recording, play

from kiosk.audit import AuditLog, AuditType, log_moment
from kiosk.cli import main
from kiosk.preflight import WARN, check_device
from vision.record import FOLDER_TIME, folder_time, recording_digests


def seal(log: AuditLog, folder, round_no: int, **extra) -> None:
    log.append(AuditType.RECORDING_SEALED, "system", {"folder": folder.name, "files": recording_digests(folder),
                                                      **extra}, round_no=round_no)


def recording(log: AuditLog, data_dir, round_no: int):
    """A recording of a release before sealing, named as the recorder names it: by the round's
    start, seconds from the round's first record."""
    folder = old_recording(data_dir, round_no)
    first = log.records(round_no=round_no, limit=1)[0]
    named = folder.with_name(f"{folder_time(log_moment(first.ts).timestamp())}-round-{round_no:04d}")
    folder.rename(named)
    return named


def upgraded_table(data_dir) -> tuple[AuditLog, dict]:
    """Rounds 1-5 recorded by a release that did not seal; the upgraded release's first start seals
    the newest three (its seal threads finish before its kiosk_start record, as they may) and counts
    1-2 as older ones left unsealed; round 6 is played and sealed as any round is."""
    log = AuditLog(data_dir / "audit.sqlite3", table_id="t1")
    log.append(AuditType.KIOSK_START, "system", {"pid": 1})
    folders = {}
    for number in range(1, 6):
        play(log, number)
        folders[number] = recording(log, data_dir, number)
    log.append(AuditType.KIOSK_STOP, "system", {"reason": "normal shutdown"})
    for number in (3, 4, 5):
        seal(log, folders[number], number, after_restart="clean shutdown", recorded_in_run=1, runs_since=0)
    log.append(AuditType.KIOSK_START, "system", {"pid": 2, "unsealed_recordings": {
        "count": 2, "oldest": folders[1].name, "newest": folders[2].name, "why": "..."}})
    play(log, 6)
    seal(log, recording(log, data_dir, 6), 6)
    return log, folders


def check(data_dir, capsys, *more) -> tuple[int, str]:
    code = main(["audit", "check-recordings", "--data-dir", str(data_dir), *more])
    return code, capsys.readouterr().out


def test_recordings_made_before_the_table_sealed_any_are_counted_apart_and_do_not_fail(tmp_path, capsys):
    log, folders = upgraded_table(tmp_path)
    log.append(AuditType.KIOSK_STOP, "system", {"reason": "normal shutdown"})
    log.close()

    code, out = check(tmp_path, capsys)
    assert code == 0, out                                             # HEAD: 1, "UNSEALED: round 1 ..."
    assert "UNSEALED" not in out and "WARNING" not in out
    assert "MADE BEFORE SEALING: 2 recordings, from " in out and "; nothing to check them against" in out
    assert "4 recordings as sealed" in out and "0 with no seal (not checked), 2 made before sealing" in out

    code, out = check(tmp_path, capsys, "--json")
    found = json.loads(out)
    assert code == 0 and found["ok"] is True and found["unsealed"] == []
    assert found["made_before_sealing"] == [f"round 1 ({folders[1].name})", f"round 2 ({folders[2].name})"]


def test_a_recording_the_table_should_have_sealed_still_fails_whatever_its_meta_json_says(tmp_path, capsys):
    log, _ = upgraded_table(tmp_path)
    play(log, 7)
    folder = recording(log, tmp_path, 7)                               # round 7: sealing had begun; no seal
    log.append(AuditType.KIOSK_STOP, "system", {"reason": "normal shutdown"})
    log.close()
    # Edited to read like a round of the old release: the folder's own file proves nothing.
    (folder / "meta.json").write_text(json.dumps({"round_no": 1, "ended": 1.0, "interrupted": False,
                                                  "started": "2026-11-01T00:00:00Z"}))

    code, out = check(tmp_path, capsys)
    assert code == 1, out
    assert f"UNSEALED: round 7 ({folder.name})" in out and "UNSEALED: round 1" not in out
    assert "MADE BEFORE SEALING: 2 recordings" in out
    found = json.loads(check(tmp_path, capsys, "--json")[1])
    assert found["ok"] is False and found["unsealed"] == [f"round 7 ({folder.name})"]
    assert len(found["made_before_sealing"]) == 2


def test_a_start_seal_written_after_its_kiosk_start_still_marks_the_run_before_as_before_sealing(tmp_path, capsys):
    """The start's seal threads may finish after its kiosk_start record: the same answer."""
    log = AuditLog(tmp_path / "audit.sqlite3", table_id="t1")
    log.append(AuditType.KIOSK_START, "system", {"pid": 1})
    folders = {}
    for number in (1, 2):
        play(log, number)
        folders[number] = recording(log, tmp_path, number)
    log.append(AuditType.KIOSK_STOP, "system", {"reason": "normal shutdown"})
    log.append(AuditType.KIOSK_START, "system", {"pid": 2})
    seal(log, folders[2], 2, after_restart="clean shutdown", recorded_in_run=1, runs_since=0)
    log.append(AuditType.KIOSK_STOP, "system", {"reason": "normal shutdown"})
    log.close()
    found = json.loads(check(tmp_path, capsys, "--json")[1])
    assert found["ok"] is True and found["made_before_sealing"] == [f"round 1 ({folders[1].name})"]


def test_a_log_that_shows_no_sealing_proves_nothing_before_sealing(tmp_path, capsys):
    log = AuditLog(tmp_path / "audit.sqlite3", table_id="t1")
    log.append(AuditType.KIOSK_START, "system", {"pid": 1})
    play(log, 1)
    recording(log, tmp_path, 1)
    log.append(AuditType.KIOSK_STOP, "system", {"reason": "normal shutdown"})
    log.close()
    found = json.loads(check(tmp_path, capsys, "--json")[1])
    assert found["ok"] is False and found["made_before_sealing"] == []


def test_the_backup_line_after_a_restore_names_the_restored_backup_not_an_older_backup_made(tmp_path):
    config, data_dir = table(tmp_path), data(tmp_path)
    log = AuditLog.in_dir(data_dir)
    # The night before the backup restored: in the restored log, as that backup copied it.
    log.append(AuditType.BACKUP_MADE, "nightly", {"to": "/mnt/backup/niuniu-backup-20261205T030000Z",
                                                  "head_seq": 0, "head_hash": "cd" * 32})
    head = log.last().seq
    restore = log.append(AuditType.BACKUP_RESTORED, "tech", {
        "from": "/mnt/backup/niuniu-backup-20261206T030000Z", "head_seq": head, "head_hash": "ab" * 32})
    log.close()
    line = next(f for f in check_device(config, data_dir, camera=False, reader=Reader) if f.part == "backup")
    assert "20261205T030000Z" not in line.message and "last made" not in line.message, line.message  # HEAD: both
    assert f"from /mnt/backup/niuniu-backup-20261206T030000Z (its log up to seq {head}" in line.message
    assert f"restore record seq {restore.seq}" in line.message and "no backup made since" in line.message
    assert line.level == WARN


def test_a_later_recording_renamed_to_an_old_round_does_not_pass_as_made_before_sealing(tmp_path, capsys):
    """The folder's name is anyone's to change, as its meta.json is (review R1 M2): round 7, which
    the table should have sealed, copied under a pre-sealing round's number — beside that round's
    own folder, in place of one retention deleted, or under a time that is not the round's —
    stays UNSEALED, and so does the round's own folder beside a twin."""
    log, folders = upgraded_table(tmp_path)
    play(log, 7)
    seven = recording(log, tmp_path, 7)
    log.append(AuditType.RECORDINGS_PRUNED, "system", {"folders": [folders[2].name]})
    log.append(AuditType.KIOSK_STOP, "system", {"reason": "normal shutdown"})
    log.close()
    shutil.rmtree(folders[2])
    second = datetime.strptime(folders[1].name.split("-round-")[0], FOLDER_TIME) + timedelta(seconds=1)
    twin = seven.parent / f"{second.strftime(FOLDER_TIME)}-round-0001"  # a second folder of round 1
    shutil.copytree(seven, twin)
    shutil.copytree(seven, folders[2])                                 # where retention deleted round 2's
    shutil.rmtree(seven)
    found = json.loads(check(tmp_path, capsys, "--json")[1])
    assert found["ok"] is False and found["made_before_sealing"] == [], found
    assert {f"round 1 ({twin.name})", f"round 1 ({folders[1].name})", f"round 2 ({folders[2].name})"} \
        <= set(found["unsealed"])


def test_a_folder_named_an_hour_from_its_round_does_not_pass_as_made_before_sealing(tmp_path, capsys):
    log, folders = upgraded_table(tmp_path)
    log.append(AuditType.KIOSK_STOP, "system", {"reason": "normal shutdown"})
    log.close()
    later = datetime.strptime(folders[1].name.split("-round-")[0], FOLDER_TIME) + timedelta(hours=1)
    moved = folders[1].rename(folders[1].with_name(f"{later.strftime(FOLDER_TIME)}-round-0001"))
    found = json.loads(check(tmp_path, capsys, "--json")[1])
    assert found["unsealed"] == [f"round 1 ({moved.name})"]
    assert found["made_before_sealing"] == [f"round 2 ({folders[2].name})"]
