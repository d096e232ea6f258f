"""QA50 review L5: a replay names the tracker rules it ran, not today's.  A rules-6 recording is
replayed under rules 6, and its note said "replayed with 7: differences ... may come from the
changed rules", sending the officer after a rule change that did not happen."""

from __future__ import annotations

import json

from test_record_replay import ROUND_A, dealing, run_live, settle_when_complete

from vision.record import find_recordings
from vision.replay import format_rounds, replay
from vision.tracker import TRACKER_VERSION


def recorded_with(tmp_path, rules):
    """A settled round's recording, doctored (KH read as KD) so that its replay differs, as made
    under tracker ``rules`` (None: before recordings named them)."""
    run_live(dealing(ROUND_A), tmp_path, settle_when_complete)
    [folder] = find_recordings(tmp_path)
    meta = json.loads((folder / "meta.json").read_text())
    meta.pop("tracker")
    if rules is not None:
        meta["tracker"] = rules
    (folder / "meta.json").write_text(json.dumps(meta))
    lines = [json.loads(line) for line in (folder / "detections.jsonl").read_text().splitlines()]
    for line in lines:
        for d in line["detections"]:
            d["card"] = "KD" if d["card"] == "KH" else d["card"]
    (folder / "detections.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return folder


def test_an_older_recording_replayed_under_its_own_rules_says_so(tmp_path):
    [result] = replay(recorded_with(tmp_path, TRACKER_VERSION - 1))
    assert result["matches_recording"] is False
    assert result["tracker"] == {"recorded": TRACKER_VERSION - 1, "replayed": TRACKER_VERSION - 1}
    text = format_rounds([result])
    assert "replay DIFFERS" in text and "tracker rules" not in text     # no rule change to blame


def test_a_recording_older_than_tracker_versions_says_it_ran_the_oldest_rules(tmp_path):
    [result] = replay(recorded_with(tmp_path, None))
    assert result["matches_recording"] is False and result["tracker"] == {"recorded": None, "replayed": 0}
    assert "recorded with tracker rules unknown (the recording predates tracker versions), replayed with the " \
           "oldest (0)" in format_rounds([result])
