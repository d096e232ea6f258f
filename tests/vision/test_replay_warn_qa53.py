"""QA53: `niuniu replay` of a round whose own seal cannot be read said "seal not checked" only in
the text on stdout: with --json, or to a script reading stderr, the warning was lost.  It goes to
stderr with the command's other warnings, and the exit code stays what it was (0: the replay
matches; the damaged record is `audit verify`'s finding)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kiosk"))   # the kiosk tests' damage(), run alone too
from test_damaged_record_kiosk import damage  # noqa: E402
from test_replay_seal import run, sealed_day  # noqa: E402


def test_a_rounds_unreadable_seal_is_warned_about_on_stderr_with_and_without_json(tmp_path, capsys):
    folders, seqs = sealed_day(tmp_path)
    damage(tmp_path / "audit.sqlite3", seqs[1])                   # round 2's own seal rots
    said = f"seal not checked: audit record seq {seqs[1]} (recording_sealed) cannot be read"

    code, out, err = run(capsys, "replay", "--json", folders[1])
    assert code == 0, err
    assert json.loads(out)[0]["seal_unchecked"].startswith(f"audit record seq {seqs[1]} ")
    assert f"niuniu replay: warning: {folders[1]}: {said}" in err         # HEAD: err was empty
    assert json.loads(out)[0]["seal_damaged"] == seqs[1]                  # which record, for a script

    code, out, err = run(capsys, "replay", folders[1])
    assert code == 0 and said in out
    assert f"niuniu replay: warning: {folders[1]}: {said}" in err

    code, out, err = run(capsys, "replay", folders[0])             # round 1's seal is sound: nothing said
    assert code == 0 and "seal not checked" not in out + err

    code, out, err = run(capsys, "replay", elsewhere(tmp_path, folders[1]))   # no log beside it: no finding,
    assert code == 0 and "seal not checked: no kiosk audit log beside" in out  # told on stdout only
    assert "seal not checked" not in err


def elsewhere(tmp_path, folder):
    """The recording copied off the kiosk, with no audit log beside it."""
    copy = tmp_path / "copy" / folder.name
    shutil.copytree(folder, copy)
    return copy
