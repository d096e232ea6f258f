"""Recording rounds and replaying them: the replay must give back exactly what happened live."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import cv2
import pytest
import scripted_frames
from scripted_frames import HEIGHT, WIDTH, coded_image, decode_index

from scoring.cards import Card
from scoring.settle import Bet
from vision.corners import Detection
from vision.pipeline import TablePipeline
from vision.record import find_recordings, read_jsonl
from vision.replay import ReplayError, format_rounds, replay
from vision.round import EventKind, RoundEvent, RoundState
from vision.sources import Frame
from vision.table import dump_table_config, table_config_from_dict
from vision.tracker import TRACKER_VERSION

CONFIG = table_config_from_dict({"table_id": "t1", "rules": "cambodia", "seats": [
    {"name": "banker", "polygon": [[0, 0], [1, 0], [1, 0.5], [0, 0.5]]},
    {"name": "1", "polygon": [[0, 0.5], [0.5, 0.5], [0.5, 1], [0, 1]]},
    {"name": "2", "polygon": [[0.5, 0.5], [1, 0.5], [1, 1], [0.5, 1]]},
], "thresholds": {"motion_gate": False}})  # scripted detections, not what the frames show: read every crop
ROUND_A = {"1": "KH QH JH 10H 9H", "2": "6C 7C 8C 9C 10C", "banker": "AS 2H 3D 4C 5S"}
ROUND_B = {"1": "2S 3S 4S 5D 6D", "2": "KS QS JS 10S 9S", "banker": "7H 8H 9D 10D JD"}
ORIGIN = {"banker": (60, 40), "1": (20, 190), "2": (220, 190)}


def dealing(hands, **kwargs):
    return scripted_frames.dealing(hands, ORIGIN, **kwargs)


class ScriptedDetector:
    """Answers each frame with the script's detections for the index the image carries."""

    name = "scripted-v1"
    file_sha256 = "ab" * 32

    def __init__(self, script, misread: dict[str, str] | None = None):
        self.script, self.misread = script, misread or {}
        self.calls = []

    def detect(self, image, regions=None):
        index = decode_index(image)
        self.calls.append((index, regions))
        dets = self.script[index] if index < len(self.script) else []
        return [Detection(Card.parse(self.misread.get(d.card.code, d.card.code)), d.conf, d.box) for d in dets]


def run_live(script, data_dir, actions=None, start_ts=1_700_000_000.0, first_frame=0, config=CONFIG):
    """Play the script through a recording pipeline; ``actions(pipeline, frame_no)`` acts as the kiosk."""
    detector = ScriptedDetector(script)
    events = []
    pipeline = TablePipeline(config, None, detector, data_dir=data_dir, on_event=events.append)
    for i in range(len(script)):
        pipeline.step(Frame(coded_image(i), start_ts + i * 0.1, first_frame + i))
        if actions:
            actions(pipeline, first_frame + i)
    pipeline.recorder.flush()        # the recorder's writer thread is behind the camera's
    return pipeline, events


def settle_when_complete(pipeline, frame_no):
    machine = pipeline.machine
    if machine.state == RoundState.complete:
        machine.settle({"1": Bet("1", Decimal("100"), "double"), "2": Bet("2", Decimal("20"), "equal")},
                       ts=machine.last_ts + 0.05, actor="dealer7")


def test_replay_of_a_recorded_round_reproduces_it_exactly(tmp_path):
    script = dealing(ROUND_A)
    for i in (20, 21):
        script[i] = [d if d.card.code != "JH" else Detection(Card.parse("JD"), 0.55, d.box) for d in script[i]]

    def kiosk(pipeline, frame_no):
        machine = pipeline.machine
        if frame_no == 30:
            assert machine.hands["1"].needs_confirmation[2]  # JH was read as JD twice: split vote
            machine.correct_card("1", "JH", "JH", actor="sup1", reason="confirmed on the monitor")
            machine.correct_card("2", "8C", "8D", actor="sup1", reason="checked the overhead camera")
        settle_when_complete(pipeline, frame_no)

    pipeline, live_events = run_live(script, tmp_path, kiosk)
    [folder] = find_recordings(tmp_path)
    [result] = replay(folder)

    assert result["matches_recording"] is True and result["differences"] == []
    assert result["round"] == 1 and result["state"] == "settled"
    assert result["seats"] == {"banker": ROUND_A["banker"].split(), "1": ROUND_A["1"].split(),
                               "2": "6C 7C 8D 9C 10C".split()}
    live_settled = next(e for e in live_events if e.kind == EventKind.round_settled)
    assert result["settlement"] == live_settled.data["settlement"]
    assert result["results"]["1"]["label"] == "Bull 9" and result["results"]["1"]["vs_banker"] == "win"
    assert result["results"]["banker"]["label"] == "Bull 5"
    # the recorded events are exactly the live ones
    recorded = [RoundEvent.from_json(e) for e in read_jsonl(folder / "events.jsonl")]
    assert recorded == [e for e in live_events if e.round_no == 1]


def test_a_tampered_recording_does_not_match(tmp_path):
    run_live(dealing(ROUND_A), tmp_path, settle_when_complete)
    [folder] = find_recordings(tmp_path)
    lines = (folder / "detections.jsonl").read_text().splitlines()
    doctored = []
    for line in lines:
        data = json.loads(line)
        for d in data["detections"]:
            if d["card"] == "KH":
                d["card"] = "KD"  # someone edits the evidence
        doctored.append(json.dumps(data))
    (folder / "detections.jsonl").write_text("\n".join(doctored) + "\n")
    [result] = replay(folder)
    assert result["matches_recording"] is False
    assert result["seats"]["1"][0] == "KD"
    first = result["differences"][0]
    assert first["recorded"]["card"] == "KH" and first["replayed"]["card"] == "KD"


def test_a_replay_that_differs_says_when_the_tracker_rules_changed_since_recording(tmp_path):
    """Surveillance must not take a rule change for tampering: the replay names the
    tracker rules the round was recorded with when they are not today's."""
    run_live(dealing(ROUND_A), tmp_path, settle_when_complete)
    [folder] = find_recordings(tmp_path)
    [same] = replay(folder)
    assert same["tracker"] == {"recorded": TRACKER_VERSION, "replayed": TRACKER_VERSION}
    meta = json.loads((folder / "meta.json").read_text())
    meta["tracker"] = TRACKER_VERSION + 1      # a later release's recording, whose rules read it the same
    (folder / "meta.json").write_text(json.dumps(meta))
    [still_same] = replay(folder)
    assert still_same["matches_recording"] and "tracker rules" not in format_rounds([still_same])

    lines = [json.loads(line) for line in (folder / "detections.jsonl").read_text().splitlines()]
    for line in lines:
        for d in line["detections"]:
            d["card"] = "KD" if d["card"] == "KH" else d["card"]
    (folder / "detections.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    [differs] = replay(folder)
    text = format_rounds([differs])
    assert "replay DIFFERS" in text
    assert f"recorded with tracker rules {TRACKER_VERSION + 1}, replayed with {TRACKER_VERSION}" in text


def test_a_kiosk_round_with_no_bets_ended_by_the_empty_table_replays_as_it_ran(tmp_path):
    """The kiosk holds only a round with bets; a recording does not hold the bets, so the
    replay reads the live machine's choice from the empty table's clear among its events."""
    detector = ScriptedDetector(dealing(ROUND_A))
    pipeline = TablePipeline(CONFIG, None, detector, data_dir=tmp_path)
    pipeline.machine.hold_unsettled = lambda: False          # the kiosk's rule, at a round with no bets
    for i in range(len(detector.script)):
        pipeline.step(Frame(coded_image(i), 1_700_000_000.0 + i * 0.1, i))
    assert pipeline.machine.state == RoundState.cleared
    pipeline.recorder.flush()
    [folder] = find_recordings(tmp_path)
    assert json.loads((folder / "meta.json").read_text())["unsettled"] == "held"
    [result] = replay(folder)
    assert result["matches_recording"] is True, result["differences"]


def test_a_recording_made_before_accept_after_s_replays_under_the_rules_it_ran_under(tmp_path):
    """Tracker 3 accepted a card on its k-th sighting: a replay under today's wait would
    accept later, and call an honest recording DIFFERS."""
    config = CONFIG.with_thresholds(accept_after_s=0.0, recheck_s=0.0)     # the old rules, live
    run_live(dealing(ROUND_A, frames_per_card=2, hold=1), tmp_path, settle_when_complete, config=config)
    [folder] = find_recordings(tmp_path)
    meta = json.loads((folder / "meta.json").read_text())
    meta["tracker"] = 3
    meta["table"]["thresholds"].pop("accept_after_s")
    meta["table"]["thresholds"].pop("recheck_s")
    (folder / "meta.json").write_text(json.dumps(meta))
    [result] = replay(folder)
    assert result["matches_recording"] is True and result["state"] == "settled"


def test_recording_layout_meta_and_key_frames(tmp_path):
    pipeline, events = run_live(dealing(ROUND_A), tmp_path, settle_when_complete)
    [folder] = find_recordings(tmp_path)
    assert folder.parent == tmp_path / "recordings" / "t1"
    assert folder.name.startswith("20231114T") and folder.name.endswith("-round-0001")
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["format"] == "niuniu-round/1"
    assert meta["model"] == {"name": "scripted-v1", "sha256": "ab" * 32}
    assert meta["tracker"] == TRACKER_VERSION
    assert meta["preset"] == "cambodia" and meta["table_id"] == "t1" and meta["round_no"] == 1
    assert meta["state"] == "cleared" and meta["outcome"] == "settled" and meta["interrupted"] is False
    assert meta["started"] == events[0].ts and meta["ended"] == events[-1].ts
    assert meta["frame_size"] == [WIDTH, HEIGHT]
    # a frame where a card was accepted or removed, the round completed, was settled or cleared:
    # what a dispute asks to see (QA48 dispute M2: none at the settlement or the sweep)
    kinds = (EventKind.card_accepted, EventKind.card_removed, EventKind.round_complete, EventKind.round_settled,
             EventKind.round_void, EventKind.round_cleared)
    key_frames = {e.frame_no for e in events if e.kind in kinds and e.round_no == 1}
    stored = {int(p.stem) for p in (folder / "frames").glob("*.jpg")}
    assert stored == key_frames and len(stored) == 16
    swept = next(e.frame_no for e in events if e.kind == EventKind.round_cleared)
    settled = next(e.frame_no for e in events if e.kind == EventKind.round_settled)
    assert {swept, settled} <= stored
    some = cv2.imread(str(folder / "frames" / f"{min(stored):08d}.jpg"))
    assert decode_index(some) == min(stored)  # the key frame is the frame the card was accepted on
    lines = read_jsonl(folder / "detections.jsonl")
    assert lines[0]["frame_no"] < events[0].frame_no  # a pre-roll before round_start
    assert [ln["frame_no"] for ln in lines] == list(range(lines[0]["frame_no"], lines[-1]["frame_no"] + 1))
    assert lines[-1]["frame_no"] == events[-1].frame_no  # ends with the frame that cleared the round


def test_a_folder_of_rounds_replays_in_order_and_each_matches(tmp_path):
    script = dealing(ROUND_A) + dealing(ROUND_B)
    run_live(script, tmp_path, settle_when_complete)
    results = replay(tmp_path)
    assert [r["round"] for r in results] == [1, 2]
    assert [r["seats"]["banker"] for r in results] == [ROUND_A["banker"].split(), ROUND_B["banker"].split()]
    assert all(r["matches_recording"] for r in results)


def test_manual_clear_with_cards_left_on_the_table_replays_exactly(tmp_path):
    first = dealing(ROUND_A, tail=0)
    # round B is dealt while round A's banker cards still lie there (cleared by hand)
    leftover = first[-1]
    banker_left = [d for d in leftover if d.card.code in ROUND_A["banker"].split()]
    second = [banker_left + frame for frame in dealing({"1": ROUND_B["1"], "2": ROUND_B["2"]}, tail=0)]
    script = first + [banker_left] * 3 + second + [[] for _ in range(35)]

    def kiosk(pipeline, frame_no):
        machine = pipeline.machine
        settle_when_complete(pipeline, frame_no)
        if machine.state == RoundState.settled and machine.round_no == 1:
            machine.clear(ts=machine.last_ts + 0.01, actor="dealer7")

    pipeline, _ = run_live(script, tmp_path, kiosk)
    results = replay(tmp_path)
    assert [r["round"] for r in results] == [1, 2]
    assert "banker" not in results[1]["seats"]  # left-overs were not dealt in round 2
    meta = json.loads((find_recordings(tmp_path)[1] / "meta.json").read_text())
    assert ["banker", "AS"] in meta["ignored_at_start"]
    assert all(r["matches_recording"] for r in results), results[1]["differences"]


def test_a_deal_over_a_settled_round_splits_into_two_recordings_that_both_match(tmp_path):
    first = dealing(ROUND_A, tail=0)
    leftover = first[-1]
    # round B is dealt 40 px lower while round A's cards still lie on the table
    script = first + [leftover + frame for frame in dealing(ROUND_B, tail=0, dy=40)] + [[] for _ in range(35)]
    pipeline, events = run_live(script, tmp_path, settle_when_complete)
    cleared = next(e for e in events if e.kind == EventKind.round_cleared)
    started = [e for e in events if e.kind == EventKind.round_start][1]
    assert cleared.frame_no == started.frame_no and cleared.data["reason"] == "new card dealt"
    first_dir, second_dir = find_recordings(tmp_path)
    assert read_jsonl(first_dir / "detections.jsonl")[-1]["frame_no"] == cleared.frame_no
    assert json.loads((first_dir / "meta.json").read_text())["interrupted"] is False
    results = replay(tmp_path)
    assert [r["state"] for r in results] == ["settled", "settled"]
    assert results[1]["seats"]["banker"] == ROUND_B["banker"].split()
    assert all(r["matches_recording"] for r in results), [r["differences"] for r in results]


def test_a_round_cut_off_by_shutdown_is_marked_and_still_replays(tmp_path):
    pipeline, _ = run_live(dealing(ROUND_A)[:20], tmp_path)
    pipeline.stop()
    [folder] = find_recordings(tmp_path)
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["interrupted"] is True and meta["state"] == "dealing"
    [result] = replay(folder)
    assert result["state"] == "dealing" and result["matches_recording"]
    assert result["seats"]["1"] == ["KH", "QH"]


def test_broken_recordings_give_clear_errors(tmp_path):
    run_live(dealing(ROUND_A), tmp_path, settle_when_complete)
    [folder] = find_recordings(tmp_path)
    lines = (folder / "detections.jsonl").read_text().splitlines()
    (folder / "detections.jsonl").write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:10])  # torn last line
    [result] = replay(folder)  # a crash mid-write loses one line, not the round
    assert result["seats"]["1"] == ROUND_A["1"].split()
    (folder / "detections.jsonl").write_text(lines[0] + "\n{oops\n" + "\n".join(lines[1:]) + "\n")
    with pytest.raises(ReplayError, match="detections.jsonl line 2 is not JSON"):
        replay(folder)
    (folder / "meta.json").write_text('{"format": "something-else/9"}')
    with pytest.raises(ReplayError, match="is not a niuniu-round/1 recording"):
        replay(folder)
    with pytest.raises(ReplayError, match="does not exist"):
        replay(tmp_path / "nothing")


def test_redetect_lists_where_the_model_now_reads_differently(tmp_path):
    script = dealing(ROUND_A)
    run_live(script, tmp_path, settle_when_complete)
    [folder] = find_recordings(tmp_path)
    [same] = replay(folder, redetect=True, detector=ScriptedDetector(script))
    assert same["redetect"]["frames"] == 16 and same["redetect"]["differences"] == []
    [changed] = replay(folder, redetect=True, detector=ScriptedDetector(script, misread={"QH": "QD"}))
    diffs = changed["redetect"]["differences"]
    assert diffs and all(d["seat"] == "1" and d["recorded_only"] == ["QH"] and d["redetected_only"] == ["QD"]
                         for d in diffs)
    shown = {json.loads(line)["frame_no"] for line in (folder / "detections.jsonl").read_text().splitlines()
             if '"QH"' in line}
    keys = {int(p.stem) for p in (folder / "frames").glob("*.jpg")}
    assert len(keys & shown) >= 10 and [d["frame_no"] for d in diffs] == sorted(keys & shown)  # each QH is in


def test_frame_folder_and_video_are_read_by_the_detector(tmp_path):
    script = dealing(ROUND_A) + dealing(ROUND_B)
    frames = tmp_path / "frames"
    frames.mkdir()
    for i in range(len(script)):
        cv2.imwrite(str(frames / f"{i:05d}.png"), coded_image(i))
    dump_table_config(CONFIG, frames / "table.yaml")
    detector = ScriptedDetector(script)
    results = replay(frames, detector=detector)  # table.yaml beside the frames is used
    assert [r["seats"] for r in results] == [
        {seat: hand.split() for seat, hand in sorted(ROUND_A.items(), key=lambda kv: kv[0] != "banker")},
        {seat: hand.split() for seat, hand in sorted(ROUND_B.items(), key=lambda kv: kv[0] != "banker")},
    ]
    assert [i for i, _ in detector.calls] == list(range(len(script)))  # every frame, in order
    assert all(r["state"] == "complete" for r in results)  # nobody settled: cleared unsettled
    assert all(a["code"] == "card_removed_before_settlement" for r in results for a in r["alerts"])

    video = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (WIDTH, HEIGHT))
    for i in range(len(script)):
        writer.write(coded_image(i))
    writer.release()
    from_video = replay(video, config=frames / "table.yaml", detector=ScriptedDetector(script))
    assert [r["seats"] for r in from_video] == [r["seats"] for r in results]
    with pytest.raises(ReplayError, match="no table config"):
        replay(video, detector=ScriptedDetector(script))
    with pytest.raises(ReplayError, match="is not a recording; --redetect"):
        replay(frames, redetect=True, detector=detector)


def test_replay_uses_the_recorded_config_unless_told_otherwise(tmp_path):
    run_live(dealing(ROUND_A), tmp_path, settle_when_complete)
    [folder] = find_recordings(tmp_path)
    strict = CONFIG.model_copy(update={"thresholds": CONFIG.thresholds.model_copy(update={"conf": 0.95})})
    [result] = replay(folder, config=strict)  # 0.93 detections are no votes at 0.95
    assert result["seats"] == {} and result["matches_recording"] is False
    [result] = replay(folder)
    assert result["matches_recording"] is True


def test_replay_paths_reject_unknown_things(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ReplayError, match="holds no recording"):
        replay(tmp_path, config=CONFIG, detector=ScriptedDetector([]))


DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo"


@pytest.mark.skipif(not (DEMO / "truth.json").is_file(), reason="the bundled demo recording is not built yet")
def test_the_bundled_demo_replays_to_its_truth():
    """Issue 4's acceptance check, with the shipped model: every card of every round (~25 s)."""
    pytest.importorskip("ultralytics", reason="the card model needs the ml extra: pip install -e '.[ml]'")
    truth = json.loads((DEMO / "truth.json").read_text())
    rounds = replay(DEMO)
    assert len(rounds) >= 3
    assert [r["seats"] for r in rounds] == [t["seats"] for t in truth]


def test_each_finished_recording_is_told_once_whole_so_it_can_be_sealed(tmp_path):
    """The kiosk seals what it is told: the folder finished (meta written with its end), told
    on the recording thread with the recorder's lock free, an interrupted one at shutdown too."""
    from vision.record import recording_digests, seal_changes

    script = dealing(ROUND_A) + dealing(ROUND_B)[:20]
    pipeline = TablePipeline(CONFIG, None, ScriptedDetector(script), data_dir=tmp_path)
    told = []

    def on_finished(folder, meta):
        assert pipeline.recorder._lock.acquire(blocking=False), "told while the recorder's lock is held"
        pipeline.recorder._lock.release()
        told.append((folder, meta, recording_digests(folder)))

    pipeline.recorder.on_finished = on_finished
    for i in range(len(script)):
        pipeline.step(Frame(coded_image(i), 1_700_000_000.0 + i * 0.1, i))
        settle_when_complete(pipeline, i)
    pipeline.recorder.flush()          # round 1 is finished by the writer thread, not the camera's
    assert [(m["round_no"], m["interrupted"]) for _, m, _ in told] == [(1, False)]
    pipeline.stop()
    assert [(m["round_no"], m["interrupted"]) for _, m, _ in told] == [(1, False), (2, True)]
    folder, meta, digests = told[0]
    assert meta["ended"] is not None and json.loads((folder / "meta.json").read_text()) == meta
    assert {"meta.json", "events.jsonl", "detections.jsonl"} <= set(digests) and any(
        name.startswith("frames/") for name in digests)
    # What the seal then tells apart: a frame changed, one deleted, one added.
    files = {name: (folder / name).read_bytes() for name in digests}
    assert seal_changes(files, digests) == []
    frame = next(name for name in digests if name.startswith("frames/"))
    changed = {**files, frame: b"another picture", "frames/99999999.jpg": b"x", "hold.json": b"{}"}
    del changed["events.jsonl"]
    assert seal_changes(changed, digests) == ["events.jsonl was sealed but is missing",
                                              f"{frame} differs from the file sealed",
                                              "frames/99999999.jpg was added after the seal"]


def test_a_round_paid_as_far_as_the_banker_s_stack_went_replays_exactly(tmp_path):
    from scoring.rules import PRESET_DIR

    rules = tmp_path / "house-stack.toml"
    rules.write_text((PRESET_DIR / "grab-banker.toml").read_text(encoding="utf-8").replace(
        'name = "grab-banker"', 'name = "house-stack"').replace("[banker]\n", '[banker]\ncover = "pro_rata"\n'),
        encoding="utf-8")
    config = table_config_from_dict({**CONFIG.model_dump(mode="json"), "rules": str(rules)})

    def kiosk(pipeline, frame_no):
        machine = pipeline.machine
        if machine.state == RoundState.complete:   # seat 1's Bull 9 wins 200, seat 2's no bull loses 100
            machine.settle({"1": Bet("1", Decimal("100"), "standard"), "2": Bet("2", Decimal("100"), "standard")},
                           ts=machine.last_ts + 0.05, actor="dealer7", banker_stack=Decimal("50"))

    _, live_events = run_live(dealing(ROUND_A), tmp_path / "data", kiosk, config=config)
    live = next(e for e in live_events if e.kind == EventKind.round_settled)
    assert live.data["banker_stack"] == "50.00"
    assert [line["gross"] for line in live.data["settlement"]["lines"]] == ["150.00", "-100.00"]
    [folder] = find_recordings(tmp_path / "data")
    [result] = replay(folder)
    assert result["matches_recording"] is True and result["settlement"] == live.data["settlement"]


def test_a_recording_older_than_a_key_the_settlement_now_carries_still_matches(tmp_path):
    """Recordings made before settlements carried the rules' digest (preset_rules) are honest:
    replayed today they must match, as long as every figure does."""
    from vision.replay import diff_events

    _, live_events = run_live(dealing(ROUND_A), tmp_path, settle_when_complete)
    older = []
    for event in live_events:
        data = json.loads(json.dumps(event.to_json()))
        data["data"].get("settlement", {}).pop("preset_rules", None)
        older.append(RoundEvent.from_json(data))
    assert any("settlement" in e.data for e in live_events)
    assert diff_events(older, live_events) == []
    # but a figure that differs, or a key only the recording has, is still a difference
    index = next(i for i, e in enumerate(older) if "settlement" in e.data)
    for key, value in (("banker_net", "1.00"), ("note", "x")):
        edited = json.loads(json.dumps(older[index].to_json()))
        edited["data"]["settlement"][key] = value
        assert diff_events(older[:index] + [RoundEvent.from_json(edited)] + older[index + 1:], live_events)
