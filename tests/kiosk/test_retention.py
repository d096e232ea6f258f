"""Recording retention: the oldest recordings go when the disk runs short or they age out; the
audit log says what went (vision.retention, kiosk.retention)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from kiosk.audit import AuditLog, AuditType
from kiosk.retention import RecordingRetention
from kiosk_testing import login
from vision.retention import hold_of, hold_recording, prune_recordings, release_recording
from vision.table import RecordingSettings

DAY = 86400.0
NOW = datetime(2026, 3, 10, 12, tzinfo=timezone.utc).timestamp()


def recording(root: Path, days_ago: float, round_no: int, size: int = 1000) -> Path:
    name = datetime.fromtimestamp(NOW - days_ago * DAY, timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    folder = root / f"{name}-round-{round_no:04d}"
    (folder / "frames").mkdir(parents=True)
    (folder / "meta.json").write_text("{}")
    (folder / "frames" / "00000001.jpg").write_bytes(b"x" * size)
    return folder


class Disk:
    """Free space that grows as recordings are deleted, as a real disk's would."""

    def __init__(self, root: Path, capacity: int):
        self.root, self.capacity = root, capacity

    def __call__(self, _path) -> int:
        used = sum(p.stat().st_size for p in self.root.rglob("*") if p.is_file())
        return self.capacity - used


def test_the_oldest_recordings_go_while_the_disk_is_short_and_the_open_one_never(tmp_path):
    root = tmp_path / "recordings" / "t1"
    folders = [recording(root, 5 - i, i + 1) for i in range(5)]          # rounds 1..5, oldest first
    disk = Disk(root, capacity=5_000 + 2_500)                            # 2,500 bytes free
    settings = RecordingSettings(min_free_gb=4_000 / 1e9)                 # wants 4,000 free
    removed = prune_recordings(root, settings, busy=[folders[0]], now=NOW, free_bytes=disk)
    # Round 1 is still being written (busy): rounds 2 and 3 go, the oldest of the rest.
    assert [r.folder for r in removed] == [folders[1].name, folders[2].name]
    assert all(r.reason == "less than 4e-06 GB free" for r in removed) and removed[0].bytes > 1000
    assert [f.exists() for f in folders] == [True, False, False, True, True]
    assert prune_recordings(root, settings, now=NOW, free_bytes=disk) == []   # room enough now


def test_recordings_older_than_keep_days_go_even_with_room(tmp_path):
    root = tmp_path / "rec"
    old, older, recent = recording(root, 31, 1), recording(root, 40, 2), recording(root, 2, 3)
    removed = prune_recordings(root, RecordingSettings(keep_days=30), now=NOW, free_bytes=lambda p: 10**15)
    assert sorted(r.folder for r in removed) == sorted([old.name, older.name])
    assert {r.reason for r in removed} == {"older than 30 days"} and recent.exists()


def test_the_kiosk_logs_what_it_deleted_and_a_disk_it_cannot_free(tmp_path):
    root = tmp_path / "recordings" / "t1"
    recording(root, 3, 1, size=3000)
    log = AuditLog.in_dir(tmp_path)
    disk = Disk(root, capacity=4_000)
    retention = RecordingRetention(root, RecordingSettings(min_free_gb=2_000 / 1e9), log, free_bytes=disk)
    retention.check()
    pruned = log.last()
    assert pruned.type == AuditType.RECORDINGS_PRUNED and pruned.data["count"] == 1 and pruned.data["bytes"] > 3000
    assert pruned.data["folders"][0].endswith("-round-0001")

    tight = RecordingRetention(root, RecordingSettings(min_free_gb=10_000 / 1e9), log, free_bytes=disk)
    tight.check()
    tight.check()                      # said once, not every minute
    low = [r for r in log.records() if r.type == AuditType.DISK_LOW]
    assert len(low) == 1 and "no recording is left to delete" in low[0].data["message"]


def test_a_held_recording_outlives_every_retention_rule_until_released(tmp_path):
    root = tmp_path / "rec"
    held, old, recent = recording(root, 40, 1), recording(root, 35, 2), recording(root, 1, 3)
    hold_recording(held, by="watch1", reason="dispute at seat 3, case 118", ts=NOW)
    disk = Disk(root, capacity=3_500)                                    # 500 free, wants 10,000
    removed = prune_recordings(root, RecordingSettings(keep_days=30, min_free_gb=1e-5), now=NOW, free_bytes=disk)
    # The unheld old one goes (age), then the recent one (space); the held one stays.
    assert [r.folder for r in removed] == [old.name, recent.name] and held.exists()
    assert hold_of(held) == {"by": "watch1", "reason": "dispute at seat 3, case 118", "ts": NOW}
    assert release_recording(held)["by"] == "watch1" and hold_of(held) is None
    assert [r.folder for r in prune_recordings(root, RecordingSettings(keep_days=30), now=NOW,
                                               free_bytes=disk)] == [held.name]


def test_a_torn_hold_file_still_holds(tmp_path):
    root = tmp_path / "rec"
    folder = recording(root, 40, 1)
    (folder / "hold.json").write_text('{"by": "watch1", "reas')
    assert "cannot be read" in hold_of(folder)["reason"]
    assert prune_recordings(root, RecordingSettings(keep_days=30), now=NOW, free_bytes=lambda p: 10**15) == []
    assert folder.exists()


def test_the_minimum_retention_is_kept_even_when_the_disk_is_short_and_the_screen_says_so(tmp_path):
    root = tmp_path / "rec"
    folders = [recording(root, days, n) for n, days in enumerate((20, 9, 5, 2), 1)]
    log = AuditLog.in_dir(tmp_path)
    warnings = []
    disk = Disk(root, capacity=4_500)                                    # 500 free, wants 4,000
    settings = RecordingSettings(min_free_gb=4_000 / 1e9, min_keep_days=7)
    retention = RecordingRetention(root, settings, log, free_bytes=disk, warn=warnings.append, clock=lambda: NOW)
    retention.check()
    # Rounds 1 (20 days) and 2 (9 days) may go; 3 and 4 are under the 7-day floor and stay,
    # though the disk is still short: the log says so once, the screen until there is room.
    assert [f.exists() for f in folders] == [False, False, True, True]
    low = log.last()
    assert low.type == AuditType.DISK_LOW and low.data["too_young"] == 2 and low.data["held"] == 0
    assert "kept: 2 younger than the 7-day minimum retention" in low.data["message"]
    assert warnings == [low.data["message"]]
    retention.check()
    assert [r.type for r in log.records()].count(AuditType.DISK_LOW) == 1 and len(warnings) == 2
    disk.capacity = 100_000                                              # a bigger disk: the warning goes
    retention.check()
    assert warnings[-1] is None



def test_the_kiosks_retention_thread_puts_its_warning_in_the_screens_status(tmp_path, service):
    from types import SimpleNamespace

    from kiosk.commands import _retention

    retention = _retention(service.config, tmp_path, service, SimpleNamespace(recorder=None))
    retention.free_bytes = lambda path: 1_000_000                       # 1 MB free, 5 GB wanted
    retention.check()
    assert "the data disk has 0.0 GB free" in service.status()["disk_warning"]
    retention.free_bytes = lambda path: 10**12
    retention.check()
    assert service.status()["disk_warning"] is None


def test_a_disk_still_short_after_a_full_pass_is_logged_once_nothing_is_left(tmp_path):
    root = tmp_path / "rec"
    for n in range(60):                                                   # more than one pass deletes (50)
        recording(root, 60 - n, n + 1, size=100)
    log = AuditLog.in_dir(tmp_path)
    retention = RecordingRetention(root, RecordingSettings(min_free_gb=1.0), log, free_bytes=lambda p: 1000,
                                   clock=lambda: NOW)
    retention.check()                                                     # deletes 50, still short: goes on
    assert [r.type for r in log.records()].count(AuditType.DISK_LOW) == 0
    retention.check()                                                     # deletes the last 10: nothing left
    low = [r for r in log.records() if r.type == AuditType.DISK_LOW]
    assert len(low) == 1 and not any(root.iterdir())


def test_the_admin_page_shows_the_disk_and_the_recordings_on_it(client, app):
    from vision.retention import hold_recording

    root = app.extensions["niuniu"].data_dir / "recordings" / "t1"
    for name in ("20260101T000000Z-round-0001", "20260102T000000Z-round-0002"):
        (root / name).mkdir(parents=True)
    hold_recording(root / "20260102T000000Z-round-0002", by="watch1", reason="case 3")
    login(client, "admin1")
    page = client.get("/admin/users").get_data(as_text=True)
    storage = page.split('id="storage">')[1].split("</p>")[0]
    assert "GB free of" in storage and "2 round recordings since 2026-01-01 00:00:00 UTC, 1 held" in storage
    assert "retention: keep 5.0 GB free" in storage


def held_in_log(log: AuditLog, folder: Path, round_no: int, reason: str = "case 2026-114") -> int:
    """A hold as the review page makes it: the hold.json and the log's recording_held."""
    hold_recording(folder, by="watch1", reason=reason, ts=NOW)
    return log.append(AuditType.RECORDING_HELD, "watch1", {"folder": folder.name, "reason": reason},
                      round_no=round_no).seq


def test_a_recording_the_log_holds_is_kept_when_its_hold_file_is_removed_and_the_removal_is_logged_once(tmp_path):
    """S2: the hold file can be deleted by hand, the log cannot; retention goes by both."""
    root = tmp_path / "recordings" / "t1"
    held, old = recording(root, 40, 7), recording(root, 35, 8)
    log = AuditLog.in_dir(tmp_path, "t1")
    held_seq = held_in_log(log, held, 7)
    (held / "hold.json").unlink()                                        # removed by hand, never released
    disk = Disk(root, capacity=2_500)                                   # short of room: would delete all
    retention = RecordingRetention(root, RecordingSettings(keep_days=30, min_free_gb=1e-5), log,
                                   free_bytes=disk, clock=lambda: NOW)
    retention.check()
    assert held.exists() and not old.exists()
    assert log.records(types=[AuditType.RECORDINGS_PRUNED])[0].data["folders"] == [old.name]
    lost = log.records(types=[AuditType.RECORDING_HOLD_LOST])
    assert len(lost) == 1 and lost[0].round_no == 7 and lost[0].data["held_seq"] == held_seq
    assert lost[0].data["folder"] == held.name and "hold.json is gone" in lost[0].data["message"]
    assert log.records(types=[AuditType.DISK_LOW])[0].data["held"] == 1
    retention.check()
    RecordingRetention(root, RecordingSettings(keep_days=30), log, clock=lambda: NOW).check()   # restarted
    assert len(log.records(types=[AuditType.RECORDING_HOLD_LOST])) == 1 and held.exists()
    # Released (in the log): retention treats it as any other again.
    log.append(AuditType.RECORDING_RELEASED, "watch1", {"folder": held.name, "reason": "closed"}, round_no=7)
    RecordingRetention(root, RecordingSettings(keep_days=30), log, free_bytes=disk, clock=lambda: NOW).check()
    assert not held.exists()


def test_a_held_recording_deleted_anyway_is_a_problem_for_check_recordings(tmp_path):
    from kiosk.seals import check_recordings
    from vision.record import recording_digests

    root = tmp_path / "recordings" / "t1"
    folder = recording(root, 40, 7)
    log = AuditLog.in_dir(tmp_path, "t1")
    seal = log.append(AuditType.RECORDING_SEALED, "system", {"folder": folder.name,
                                                             "files": recording_digests(folder)}, round_no=7)
    held_seq = held_in_log(log, folder, 7)
    import shutil
    shutil.rmtree(folder)                          # as the old retention did once hold.json was gone
    pruned = log.append(AuditType.RECORDINGS_PRUNED, "system", {"count": 1, "folders": [folder.name]})
    sweep = check_recordings(log, tmp_path)
    label = f"round 7 ({folder.name}, sealed at seq {seal.seq})"
    assert not sweep.ok and sweep.gone == [] and sweep.missing == []
    assert sweep.changed == {label: [f"held at seq {held_seq} by watch1 (case 2026-114), never released, but no "
                                     f"longer on disk: deleted by retention at seq {pruned.seq}"]}


def test_the_round_and_holds_pages_name_a_held_recording_that_is_gone_or_lost_its_hold_file(played, app, service,
                                                                                           audit):
    import shutil

    root = app.extensions["niuniu"].data_dir / "recordings" / service.config.table_id
    folders = {}
    for n in (1, 2):
        folders[n] = root / f"2026010{n}T000000Z-round-000{n}"
        (folders[n] / "frames").mkdir(parents=True)
        (folders[n] / "meta.json").write_text(f'{{"round_no": {n}}}')
        (folders[n] / "frames" / "00000005.jpg").write_bytes(b"\xff\xd8")
    seqs = {n: held_in_log(audit, folders[n], n, reason=f"case {n}") for n in (1, 2)}
    (folders[1] / "hold.json").unlink()                     # hold file removed, recording still there
    shutil.rmtree(folders[2])                               # held recording deleted
    pruned = audit.append(AuditType.RECORDINGS_PRUNED, "system", {"count": 1, "folders": [folders[2].name]})

    page = played.get("/review/round/1").get_data(as_text=True)
    assert 'id="release-form"' in page and 'id="hold-file-lost"' in page and f"(record {seqs[1]})" in page
    page = played.get("/review/round/2").get_data(as_text=True)
    gone = page.split('id="recording-held-gone">')[1].split("</p>")[0]
    assert f"record {seqs[2]}, by watch1: case 2" in gone and f"(audit record {pruned.seq})" in gone
    assert 'id="recording-pruned"' not in page
    listed = played.get("/review/holds").get_data(as_text=True)
    assert 'id="no-holds"' not in listed and "hold.json is gone; held by the audit log" in listed
    gone = listed.split('id="holds-gone">')[1].split("</div>")[0]
    assert folders[2].name in gone and f"held at seq {seqs[2]}" in gone and f"retention at seq {pruned.seq}" in gone
    # The log's hold is released from the round page although its file is gone.
    from kiosk_testing import csrf_from
    released = played.post("/review/round/1/release", data={"csrf_token": csrf_from(page), "reason": "closed"},
                           follow_redirects=True).get_data(as_text=True)
    assert "is released" in released and audit.last().type == AuditType.RECORDING_RELEASED


def test_recordings_named_by_a_clock_still_behind_are_not_aged_by_it(tmp_path):
    """A Pi back from a power cut boots a month behind, records three rounds, then NTP steps the
    clock: by their names those rounds are a month old, but the kiosk has run an hour. Neither
    keep_days nor a short disk may take them before min_keep_days of the run itself."""
    root = tmp_path / "recordings" / "t1"
    root.mkdir(parents=True)
    old = recording(root, 40, 1)                       # a real old one, from before this run
    log = AuditLog(tmp_path / "audit.sqlite3")
    ran = [0.0]
    retention = RecordingRetention(root, RecordingSettings(keep_days=14, min_keep_days=7, min_free_gb=1.0), log,
                                   free_bytes=lambda p: 1000, clock=lambda: NOW, uptime=lambda: ran[0])
    stale = [recording(root, 31, n) for n in (2, 3, 4)]   # named by the clock a month behind
    ran[0] = 3600.0                                       # an hour of this run
    retention.check()
    assert not old.exists() and all(folder.exists() for folder in stale)
    low = log.records(types=[AuditType.DISK_LOW])[-1].data
    assert low["too_young"] == 3                           # and the screen says why the disk stays short
    ran[0] = 8 * DAY                                      # once the run itself is past min_keep_days, by age
    retention.check()
    assert not any(folder.exists() for folder in stale)
    log.close()
