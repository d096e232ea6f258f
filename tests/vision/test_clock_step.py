"""NTP stepping the wall clock mid-shift (QA46 time F4): durations between frames come from a
monotonic clock, so a step neither keeps swept cards on the table nor drops covered ones;
the wall clock only stamps what is recorded."""

from __future__ import annotations

import time
from decimal import Decimal

import scripted_frames
from scripted_frames import coded_image, decode_index

from scoring.settle import Bet
from vision import sources
from vision.pipeline import TablePipeline
from vision.record import find_recordings, read_jsonl
from vision.replay import replay
from vision.round import EventKind, RoundState
from vision.sources import Frame, FrameSource, ImageFilesSource, LatestFrameReader
from vision.table import table_config_from_dict

CONFIG = table_config_from_dict({"table_id": "t1", "rules": "cambodia", "seats": [
    {"name": "banker", "polygon": [[0, 0], [1, 0], [1, 0.5], [0, 0.5]]},
    {"name": "1", "polygon": [[0, 0.5], [0.5, 0.5], [0.5, 1], [0, 1]]},
    {"name": "2", "polygon": [[0.5, 0.5], [1, 0.5], [1, 1], [0.5, 1]]},
], "thresholds": {"motion_gate": False}})   # remove_after_s: the default 3 s
ORIGIN = {"banker": (60, 40), "1": (20, 190), "2": (220, 190)}
ROUND_1 = {"1": "KH QH JH 10H 9H", "2": "6C 7C 8C 9C 10C", "banker": "AS 2H 3D 4C 5S"}
# Seat 1 is dealt KH again, first, where it lay last round (the cards were shuffled back in).
ROUND_2 = {"1": "KH 3S 4S 5D 6D", "2": "KS QS JS 10S 9S", "banker": "7H 8H 9D 10D JD"}
HOUR = 3600.0
WALL0, MONO0 = 1_736_500_000.0, 81_234.5


def dealing(hands):
    # 15 frames to deal, 4 held, then 35 frames (3.5 s) of an empty table: more than remove_after_s
    return scripted_frames.dealing(hands, ORIGIN)


TWO_ROUNDS = dealing(ROUND_1) + dealing(ROUND_2)
SWEEP = len(dealing(ROUND_1)) - 35      # round 1's first empty frame


class ScriptedDetector:
    name = "scripted-v1"

    def __init__(self, script):
        self.script = script

    def detect(self, image, regions=None):
        index = decode_index(image)
        return list(self.script[index]) if index < len(self.script) else []


class SteppedClock:
    """``time`` as vision.sources sees it: both clocks tick 0.1 s a frame; NTP steps the wall
    clock by ``steps[frame]`` seconds as that frame is read."""

    def __init__(self, steps):
        self.wall, self.mono, self.steps = WALL0, MONO0, steps

    def time(self):
        return self.wall

    def monotonic(self):
        return self.mono

    def tick(self, index):
        self.wall += 0.1 + self.steps.get(index, 0.0)
        self.mono += 0.1


class LiveCamera(FrameSource):
    """A live camera playing the script's frames, its times from ``SteppedClock``."""

    live = True
    description = "stepped camera"

    def __init__(self, clock, frames):
        self.clock, self.frames_left, self.index = clock, frames, -1

    def open(self):
        pass

    def read(self):
        self.index += 1
        if self.index >= self.frames_left:
            return None
        self.clock.tick(self.index)
        return coded_image(self.index)


def settle_when_complete(pipeline):
    machine = pipeline.machine
    if machine.state == RoundState.complete:
        machine.settle({"1": Bet("1", Decimal("100"), "equal"), "2": Bet("2", Decimal("20"), "equal")},
                       ts=machine.last_ts, actor="dealer7")


def play_live(monkeypatch, script, steps, data_dir=None):
    """The script through a live camera whose wall clock NTP steps; returns (pipeline, events)."""
    clock = SteppedClock(steps)
    monkeypatch.setattr(sources, "time", clock)     # vision.sources' clocks only
    events = []
    pipeline = TablePipeline(CONFIG, None, ScriptedDetector(script), data_dir=data_dir, on_event=events.append)
    for frame in LiveCamera(clock, len(script)).frames():
        pipeline.step(frame)
        settle_when_complete(pipeline)
    pipeline.stop()
    return pipeline, events


def dealt(events, round_no):
    """Each seat's record when the round completed (or the last one seen)."""
    done = [e for e in events if e.round_no == round_no and e.kind == EventKind.round_complete]
    if done:
        return {seat: " ".join(cards) for seat, cards in done[-1].data["seats"].items()}
    accepted = [e for e in events if e.round_no == round_no and e.kind == EventKind.card_accepted]
    return {seat: " ".join(e.card for e in accepted if e.seat == seat) for seat in {e.seat for e in accepted}}


def test_swept_cards_leave_after_remove_after_s_although_the_clock_stepped_back_an_hour(monkeypatch):
    pipeline, events = play_live(monkeypatch, TWO_ROUNDS, {SWEEP: -HOUR})

    # The next deal reads seat 1's five cards, KH too, and the round completes and settles.
    assert dealt(events, 2) == ROUND_2
    assert any(e.round_no == 2 and e.kind == EventKind.round_settled for e in events)
    cleared = [e for e in events if e.kind == EventKind.round_cleared and e.round_no == 1]
    assert cleared and cleared[0].data["previous_state"] == "settled"
    assert not cleared[0].data.get("reason")        # the empty table cleared it, not the next deal
    assert cleared[0].frame_no - SWEEP < 35         # within remove_after_s (3 s = 30 frames) of the sweep
    assert not [e for e in events if e.kind == EventKind.alert]
    # The wall clock still stamps the records: round 2 is stamped an hour behind round 1.
    starts = {e.round_no: e.ts for e in events if e.kind == EventKind.round_start}
    assert starts[2] < starts[1] - HOUR + 10


def covered_deal():
    """Round 1 with seat 2's first card (6C) under the dealer's hand for 0.5 s mid-deal."""
    script = dealing(ROUND_1)
    for i in COVERED:
        script[i] = [d for d in script[i] if d.card.code != "6C"]
    return script


COVERED = range(25, 30)


def test_a_forward_step_does_not_drop_a_covered_card(monkeypatch):
    pipeline, events = play_live(monkeypatch, covered_deal(), {COVERED[0]: HOUR})

    assert not [e for e in events if e.kind in (EventKind.card_removed, EventKind.alert) and e.frame_no < SWEEP]
    assert dealt(events, 1) == ROUND_1
    assert pipeline.machine.state == RoundState.cleared       # swept at the end, settled


def test_a_recording_made_across_a_clock_step_replays_the_same_rounds(monkeypatch, tmp_path):
    pipeline, events = play_live(monkeypatch, TWO_ROUNDS, {SWEEP: -HOUR}, data_dir=tmp_path)
    folders = find_recordings(tmp_path)
    assert len(folders) == 2
    for folder in folders:
        lines = read_jsonl(folder / "detections.jsonl")
        assert all("mono" in line and "ts" in line for line in lines)
        # mono only goes forward; ts is the wall clock, stepped back once in round 1's recording
        assert all(b["mono"] > a["mono"] for a, b in zip(lines, lines[1:]))

    rounds = {r["round"]: r for r in replay(tmp_path)}
    assert all(r["matches_recording"] for r in rounds.values()), [r["differences"] for r in rounds.values()]
    assert {seat: " ".join(cards) for seat, cards in rounds[2]["seats"].items()} == ROUND_2
    assert rounds[1]["state"] == rounds[2]["state"] == "settled"


def test_a_recording_without_monotonic_times_replays_as_it_ran(tmp_path):
    """An older version's recording has wall times only, and they timed its tracker live: here
    NTP stepped the clock forward while 6C was covered, and it was dropped (an alert on record).
    Replayed, the same wall times must give the same events, alert and all."""
    pipeline = TablePipeline(CONFIG, None, ScriptedDetector(covered_deal()), data_dir=tmp_path)
    events = []
    pipeline.machine.add_listener(events.append)
    wall = WALL0
    for i in range(len(covered_deal())):
        wall += 0.1 + (HOUR if i == COVERED[0] else 0.0)
        pipeline.step(Frame(coded_image(i), wall, i))        # no mono: as frames were before it
        settle_when_complete(pipeline)
    pipeline.stop()
    alerts = [e.data["code"] for e in events if e.kind == EventKind.alert]
    assert alerts == ["card_removed_before_settlement"]       # what the older version did, on record

    [folder] = find_recordings(tmp_path)
    assert not any("mono" in line for line in read_jsonl(folder / "detections.jsonl"))
    [replayed] = replay(folder)
    assert replayed["matches_recording"], replayed["differences"]
    assert [a["code"] for a in replayed["alerts"]] == alerts


def test_a_live_camera_s_frames_carry_a_monotonic_time_beside_the_wall_time():
    class Camera(FrameSource):
        live, description = True, "camera"

        def open(self):
            pass

        def read(self):
            time.sleep(0.01)
            return coded_image(0)

    reader = LatestFrameReader(Camera()).start()
    try:
        before = time.monotonic()
        frame = reader.get(timeout=2.0)
        frame = reader.get(timeout=2.0) or frame
    finally:
        reader.stop()
    assert frame is not None and frame.mono is not None
    assert before - 1.0 <= frame.mono <= time.monotonic()
    assert abs(frame.ts - time.time()) < 60            # the wall clock, for stamping
    assert frame.clock == frame.mono


def test_a_recorded_file_s_frames_are_timed_by_its_own_timeline(tmp_path):
    import cv2

    for i in range(3):
        cv2.imwrite(str(tmp_path / f"{i:03d}.png"), coded_image(i))
    frames = list(ImageFilesSource.from_folder(tmp_path, start_ts=100.0, fps=10.0).frames())
    assert [(f.ts, f.mono) for f in frames] == [(100.0, 100.0), (100.1, 100.1), (100.2, 100.2)]
    assert Frame(coded_image(0), 5.0, 0).clock == 5.0      # a frame with no mono: ts serves
