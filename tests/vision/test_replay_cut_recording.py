"""A recording whose detections.jsonl was cut after the round is a damaged recording, not a changed
game (QA51 L4): cut before the round's start, `niuniu replay` said ``Round 1: None``, the dealer's
"deal a round first" and DIFFERS (exit 1); now one line naming the file and the fix, exit 2."""

from __future__ import annotations

import pytest
from test_record_replay import ROUND_A, dealing, run_live, settle_when_complete

from kiosk.cli import main
from vision.record import find_recordings
from vision.replay import ReplayError, format_rounds, replay


def test_a_detections_file_cut_before_the_round_is_damaged(tmp_path, capsys):
    run_live(dealing(ROUND_A), tmp_path, settle_when_complete)
    [folder] = find_recordings(tmp_path)
    detections = folder / "detections.jsonl"
    detections.write_bytes(detections.read_bytes()[:100])     # a torn first line and nothing more
    with pytest.raises(ReplayError, match="cut after it was written"):
        replay(folder)
    assert main(["replay", str(folder)]) == 2
    out, err = capsys.readouterr()
    assert "cannot be replayed" in err and "restore the recording" in err
    assert "deal a round first" not in out + err and "None" not in out


def test_a_detections_file_that_lost_its_last_lines_replays_with_a_warning(tmp_path):
    run_live(dealing(ROUND_A), tmp_path, settle_when_complete)
    [folder] = find_recordings(tmp_path)
    detections = folder / "detections.jsonl"
    lines = detections.read_text().splitlines()
    detections.write_text("\n".join(lines[:-3]) + "\n")
    [result] = replay(folder)
    assert result["seats"]["1"] == ROUND_A["1"].split()
    assert any("its last lines were lost" in w for w in result["warnings"])
    assert "Round 1: None" not in format_rounds([result])
