"""Recorded and replayed: a card replaced in place (QA48 dispute H3), a lone card on a settled
table (M8), and what a replay prints of a difference, an unsealed copy and a sixth card (L1-L3)."""

from __future__ import annotations

import json
import shutil

import cv2
from scripted_frames import coded_image, decode_index
from test_record_replay import (CONFIG, ROUND_A, ROUND_B, ScriptedDetector, dealing, run_live,
                                settle_when_complete)

from scoring.cards import Card
from vision.corners import Detection
from vision.pipeline import TablePipeline
from vision.record import find_recordings, read_jsonl
from vision.replay import format_rounds, replay
from vision.round import EventKind
from vision.sources import Frame


def swapped(script, start, old, new, stop=None):
    """The script with ``old`` read as ``new`` at the same place from frame ``start`` on."""
    return [[Detection(Card.parse(new), d.conf, d.box) if i >= start and (stop is None or i < stop)
             and d.card.code == old else d for d in frame] for i, frame in enumerate(script)]


def alerts_of(events, code):
    return [e for e in events if e.kind == EventKind.alert and e.data["code"] == code]


def test_a_card_replaced_in_place_after_settlement_is_alerted_kept_in_a_key_frame_and_replays(tmp_path):
    script = dealing(ROUND_A, hold=60)
    dealt = len(script) - 60 - 35
    # 30 frames (3 s) after the last card, seat 1's 9H becomes an AD where it lay: no frame between
    pipeline, events = run_live(swapped(script, dealt + 30, "9H", "AD"), tmp_path, settle_when_complete)
    [alert] = alerts_of(events, "card_changed")
    assert (alert.seat, alert.card, alert.data["read_as"], alert.data["state"]) == ("1", "9H", "AD", "settled")
    assert alert.data["message"].startswith(f"9H on seat 1 has read as AD, steadily and in the same place, since "
                                            f"frame {dealt + 30}: ")
    [folder] = find_recordings(tmp_path)
    frame = cv2.imread(str(folder / "frames" / f"{alert.frame_no:08d}.jpg"))
    assert frame is not None and decode_index(frame) == alert.frame_no     # the surveillance still
    [result] = replay(folder)
    assert result["matches_recording"] is True, result["differences"]
    assert result["seats"]["1"] == ROUND_A["1"].split()                    # settled as dealt
    assert [a["code"] for a in result["alerts"]] == ["card_changed"]


def test_a_recording_made_before_changes_were_reported_replays_as_it_ran(tmp_path):
    """Rules 4 raised nothing at a card read as another after its recheck: a replay under
    today's rules would, and call an honest recording DIFFERS."""
    script = dealing(ROUND_A, hold=60)
    dealt = len(script) - 60 - 35
    detector = ScriptedDetector(swapped(script, dealt + 30, "9H", "AD"))
    pipeline = TablePipeline(CONFIG, None, detector, data_dir=tmp_path)
    pipeline.tracker.rules = pipeline.machine.rules = 4                                  # rules 4, live
    for i in range(len(detector.script)):
        pipeline.step(Frame(coded_image(i), 1_700_000_000.0 + i * 0.1, i))
        settle_when_complete(pipeline, i)
    pipeline.recorder.flush()
    [folder] = find_recordings(tmp_path)
    meta = json.loads((folder / "meta.json").read_text())
    meta["tracker"] = 4
    (folder / "meta.json").write_text(json.dumps(meta))
    [result] = replay(folder)
    assert result["matches_recording"] is True, result["differences"]
    assert result["alerts"] == []


def test_a_lone_card_after_settlement_then_the_next_deal_over_it_replays_exactly(tmp_path):
    """QA48 M8: the lone card waits (an alert on the settled round, naming it, once it has lain
    there LONE_CARD_S); the deal that follows clears the round naming its cards, and the next
    recording reaches back to the lone card, whose confidence its tracker took long before the
    round began."""
    first = dealing(ROUND_A, tail=0)
    leftover = first[-1]
    lone = [Detection(Card.parse("KS"), conf, (240, 230, 264, 264)) for conf in [0.97] * 6 + [0.8] * 74]
    second = dealing({"banker": ROUND_B["banker"], "1": ROUND_B["1"]}, tail=0, dy=40)
    script = (first + [leftover] * 5 + [leftover + [card] for card in lone]
              + [leftover + [lone[-1]] + frame for frame in second] + [[] for _ in range(35)])
    pipeline, events = run_live(script, tmp_path, settle_when_complete)
    [after] = alerts_of(events, "card_after_round")
    assert (after.round_no, after.seat, after.card) == (1, "2", "KS")
    assert after.frame_no == after.data["since_frame"] + 50              # 5 s at 10 frames a second
    cleared = next(e for e in events if e.kind == EventKind.round_cleared)
    assert cleared.data["reason"] == "new card dealt" and cleared.frame_no > after.frame_no + 20
    assert cleared.data["new_cards"] == [["banker", "7H"], ["2", "KS"]]
    first_dir, second_dir = find_recordings(tmp_path)
    frames = [line["frame_no"] for line in read_jsonl(second_dir / "detections.jsonl")]
    assert frames[0] < after.data["since_frame"] - 5   # the pre-roll reaches back past the lone card
    results = replay(tmp_path)
    assert [r["round"] for r in results] == [1, 2]
    assert results[1]["seats"]["2"] == ["KS"]        # it lay there when the deal began: the dealer sees it
    assert all(r["matches_recording"] for r in results), [r["differences"] for r in results]


def test_a_replay_that_differs_prints_both_sides_whole(tmp_path):
    run_live(dealing(ROUND_A), tmp_path, settle_when_complete)
    [folder] = find_recordings(tmp_path)
    lines = [json.loads(line) for line in (folder / "detections.jsonl").read_text().splitlines()]
    for line in lines:
        for d in line["detections"]:
            d["card"] = "KD" if d["card"] == "KH" else d["card"]       # someone edits the evidence
    (folder / "detections.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    text = format_rounds(replay(folder))
    recorded = next(line for line in text.splitlines() if line.strip().startswith("recorded:"))
    replayed = next(line for line in text.splitlines() if line.strip().startswith("replayed:"))
    assert '"card": "KH"' in recorded and '"card": "KD"' in replayed
    assert json.loads(replayed.split("replayed: ", 1)[1])["card"] == "KD"     # whole, not cut
    assert 'card_accepted at frame 4: differs in card "KH" -> "KD"' in text


def test_a_recording_copied_off_the_kiosk_says_its_seal_was_not_checked(tmp_path):
    run_live(dealing(ROUND_A), tmp_path / "data", settle_when_complete)
    [folder] = find_recordings(tmp_path / "data")
    copy = tmp_path / "evidence" / folder.name                          # an unzipped evidence package
    shutil.copytree(folder, copy)
    [result] = replay(copy)
    text = format_rounds([result])
    assert "replay matches the recording" in text
    assert "seal not checked: no kiosk audit log beside" in text
    assert "niuniu audit check-evidence" in text


def test_a_seat_with_a_sixth_card_reads_as_not_scored(tmp_path):
    script = dealing(ROUND_A, hold=10)
    dealt = len(script) - 10 - 35
    sixth = Detection(Card.parse("2C"), 0.93, (170, 230, 194, 264))
    script = [frame + [sixth] if dealt <= i < dealt + 10 else frame for i, frame in enumerate(script)]
    run_live(script, tmp_path)
    [result] = replay(find_recordings(tmp_path)[0])
    assert result["seats"]["1"] == ROUND_A["1"].split() + ["2C"]
    assert result["results"]["1"]["label"] == "6 cards — not scored"
    seat_line = next(line for line in format_rounds([result]).splitlines() if line.startswith("  seat 1"))
    assert seat_line.rstrip().endswith("6 cards — not scored") and "Bull" not in seat_line
