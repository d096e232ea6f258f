"""A recording made under tracker rules 5 replays as it ran under rules 6: its quiet-seat blind
spot and its lone card alerted at once are what the table did, not a changed recording."""

from __future__ import annotations

import json

from scripted_frames import coded_image
from test_record_replay import CONFIG, ROUND_A, ScriptedDetector, dealing, settle_when_complete
from test_record_replay_changes import alerts_of, swapped

from scoring.cards import Card
from vision.corners import Detection
from vision.pipeline import TablePipeline
from vision.record import find_recordings
from vision.replay import replay
from vision.sources import Frame
from vision.tracker import TRACKER_VERSION


def test_a_rules_5_recording_replays_as_it_ran(tmp_path):
    script = dealing(ROUND_A, hold=60)
    dealt = len(script) - 60 - 35
    # 9H swapped for AD a second after the last card landed (rules 5: never reported), and a
    # lone KS put beside the settled hands for 3 s (rules 5: alerted at once)
    script = swapped(script, dealt + 10, "9H", "AD")
    lone = Detection(Card.parse("KS"), 0.95, (240, 230, 264, 264))
    script = [frame + [lone] if dealt + 20 <= i < dealt + 50 else frame for i, frame in enumerate(script)]
    events = []
    pipeline = TablePipeline(CONFIG, None, ScriptedDetector(script), data_dir=tmp_path, on_event=events.append)
    pipeline.tracker.rules = pipeline.machine.rules = 5                      # the release that made it
    for i in range(len(script)):
        pipeline.step(Frame(coded_image(i), 1_700_000_000.0 + i * 0.1, i))
        settle_when_complete(pipeline, i)
    assert alerts_of(events, "card_changed") == [] and len(alerts_of(events, "card_after_round")) == 1
    pipeline.recorder.flush()            # the recorder's writer thread is behind the camera's
    [folder] = find_recordings(tmp_path)
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["tracker"] == TRACKER_VERSION
    meta["tracker"] = 5
    (folder / "meta.json").write_text(json.dumps(meta))
    [result] = replay(folder)
    assert result["matches_recording"] is True, result["differences"]
    assert [a["code"] for a in result["alerts"]] == ["card_after_round"]
