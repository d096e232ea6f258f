"""S8: replay checks a kiosk recording against its seal in the audit log, and warns when a
folder's name says another round than its meta.json: a swapped recording replays cleanly
against itself, so a clean replay alone proves nothing."""

from __future__ import annotations

import shutil

from kiosk.audit import AuditLog, AuditType
from kiosk.cli import main
from test_record_replay import ROUND_A, ROUND_B, dealing, run_live, settle_when_complete
from vision.record import find_recordings, recording_digests


def sealed_day(data_dir):
    """Two recorded rounds, each sealed in the data directory's audit log as the kiosk does."""
    run_live(dealing(ROUND_A) + dealing(ROUND_B), data_dir, settle_when_complete)
    folders = find_recordings(data_dir)
    log = AuditLog.in_dir(data_dir, "t1")
    seqs = [log.append(AuditType.RECORDING_SEALED, "system", {"folder": f.name, "files": recording_digests(f)},
                       round_no=n).seq for n, f in enumerate(folders, 1)]
    log.close()
    return folders, seqs


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_an_intact_kiosk_recording_replays_with_its_seal_checked(tmp_path, capsys):
    folders, seqs = sealed_day(tmp_path)
    code, out, err = run(capsys, "replay", folders[0])
    assert code == 0, err
    assert f"seal: every file is as sealed in the audit log (seq {seqs[0]})" in out and "WARNING" not in out


def test_another_rounds_recording_swapped_into_a_folder_fails_against_its_seal(tmp_path, capsys):
    folders, seqs = sealed_day(tmp_path)
    shutil.rmtree(folders[0])
    shutil.copytree(folders[1], folders[0])                       # round 2's recording under round 1's name
    code, out, err = run(capsys, "replay", folders[0])
    assert code == 1
    assert "replay matches the recording" in out                  # consistent with itself ...
    assert f"NOT AS SEALED in the audit log (seq {seqs[0]})" in out   # ... but not the round the table sealed
    assert "differs from the file sealed" in out
    assert "the folder's name says round 1 but its meta.json says round 2" in out
    assert f"niuniu replay: {folders[0]}: seal: the recording is NOT AS SEALED" in err
    code, out, _ = run(capsys, "replay", tmp_path / "recordings")  # the day: the same, exit 1
    assert code == 1 and out.count("NOT AS SEALED") == 1

    # Copied off the kiosk: --data-dir names the log; without it only the name warning is left.
    elsewhere = tmp_path / "copy" / folders[0].name
    shutil.copytree(folders[0], elsewhere)
    code, out, _ = run(capsys, "replay", elsewhere, "--data-dir", tmp_path)
    assert code == 1 and f"NOT AS SEALED in the audit log (seq {seqs[0]})" in out
    code, out, err = run(capsys, "replay", elsewhere)
    assert code == 0 and "seal:" not in out and "seal not checked: no kiosk audit log beside" in out
    assert "WARNING: the folder's name says round 1" in out and "warning:" in err


def test_the_readmes_replay_path_is_where_the_kiosk_records():
    """S12: recordings are under recordings/<table>/<round>; a README path without the table
    gives "does not exist"."""
    from pathlib import Path

    from vision.record import recordings_dir

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Replaying a round")[1].split("\n## ")[0]
    paths = [word for line in section.splitlines() if line.startswith("niuniu replay /var/lib/niuniu/")
             for word in line.split()[2:3]]
    assert paths and all(p.startswith(str(recordings_dir("/var/lib/niuniu", "<table>"))) for p in paths), paths
