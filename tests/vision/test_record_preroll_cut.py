"""A card that waited alone longer than a recording's pre-roll reaches (QA49 review M4): the
honest recording replays as matching, with a warning that names the card whose confidence the
replay took from the recording, instead of DIFFERS."""

from __future__ import annotations

import json

from test_record_replay import CONFIG, ROUND_A, ROUND_B, dealing, settle_when_complete

from scoring.cards import Card
from vision import record
from vision.corners import Detection
from vision.pipeline import TablePipeline
from vision.record import find_recordings, read_jsonl
from vision.replay import format_rounds, replay

PREROLL = 80        # MAX_PREROLL for the test (1200 live): the lone card waits longer than this


def lone_card_then_next_deal(tmp_path, lone_frames):
    first = dealing(ROUND_A, tail=0)
    leftover = first[-1]
    # read clearly as it landed, then less so: a replay that misses its first frames gives less
    lone = [Detection(Card.parse("KS"), conf, (240, 230, 264, 264))
            for conf in [0.97] * 6 + [0.8 if i % 3 else 0.6 for i in range(lone_frames - 6)]]
    second = dealing({"banker": ROUND_B["banker"], "1": ROUND_B["1"]}, tail=0, dy=40)
    script = (first + [leftover] * 5 + [leftover + [card] for card in lone]
              + [leftover + [lone[-1]] + frame for frame in second] + [[] for _ in range(35)])
    pipeline = TablePipeline(CONFIG, None, None, data_dir=tmp_path)
    for i, dets in enumerate(script):    # detections fed as recorded (no images: the script is long)
        pipeline.process(i, 1_700_000_000.0 + i * 0.1, (400, 300), list(dets), None)
        settle_when_complete(pipeline, i)
    pipeline.stop()
    return find_recordings(tmp_path)


def test_a_card_waiting_longer_than_the_preroll_replays_as_matching_with_a_warning(tmp_path, monkeypatch):
    monkeypatch.setattr(record, "MAX_PREROLL", PREROLL)
    first_dir, second_dir = lone_card_then_next_deal(tmp_path, PREROLL + 60)
    meta = json.loads((second_dir / "meta.json").read_text())
    cut = meta["preroll_cut"]
    assert [entry[:2] for entry in cut["cards"]] == [["2", "KS"]]
    assert read_jsonl(second_dir / "detections.jsonl")[0]["frame_no"] > cut["needed_from"]
    [result] = replay(second_dir)
    assert result["matches_recording"] is True, result["differences"]
    [warning] = [w for w in result["warnings"] if "KS on seat 2" in w]
    assert "its confidence is taken from the recording (0.97;" in warning
    text = format_rounds([result])
    assert "replay matches the recording" in text and "WARNING: KS on seat 2 waited alone" in text


def test_a_card_waiting_within_the_preroll_needs_no_warning(tmp_path, monkeypatch):
    monkeypatch.setattr(record, "MAX_PREROLL", PREROLL)
    first_dir, second_dir = lone_card_then_next_deal(tmp_path, PREROLL - 40)
    assert "preroll_cut" not in json.loads((second_dir / "meta.json").read_text())
    [result] = replay(second_dir)
    assert result["matches_recording"] is True and not result.get("warnings")
