"""One writer thread writes every file of a recording (QA49 review, session 50): the camera
never waits for the disk, not even at a round's end, and what a slow or full disk costs is
said, never a round's lines, events or end."""

from __future__ import annotations

import json
import threading
import time
from decimal import Decimal
from pathlib import Path

from scripted_frames import HEIGHT, WIDTH, coded_image
from test_record_replay import CONFIG, ROUND_A, ScriptedDetector, dealing

from scoring.settle import Bet
from vision import record
from vision.pipeline import TablePipeline
from vision.record import read_jsonl
from vision.replay import replay
from vision.round import EventKind, RoundEvent, RoundState
from vision.sources import Frame

BETS = {"1": Bet("1", Decimal("100"), "double"), "2": Bet("2", Decimal("20"), "equal")}
SLOW_S = 2.0            # an SD card stalling on a full-size JPEG


def dealt_and_settled(tmp_path, script, config=CONFIG, frames=None):
    """The script's first ``frames`` played, the round settled as soon as it is complete."""
    pipeline = TablePipeline(config, None, ScriptedDetector(script), data_dir=tmp_path)
    told = []
    pipeline.recorder.on_finished = lambda folder, meta: told.append((folder, meta))
    for i in range(len(script) if frames is None else frames):
        pipeline.step(Frame(coded_image(i), 1_700_000_000.0 + i * 0.1, i))
        if pipeline.machine.state == RoundState.complete:
            pipeline.machine.settle(BETS, ts=pipeline.machine.last_ts + 0.05, actor="dealer7")
    return pipeline, told


def key_frame_events(folder: Path) -> set[int]:
    kinds = {str(kind) for kind in record._KEY_FRAME_KINDS}
    return {e["frame_no"] for e in read_jsonl(folder / "events.jsonl") if e["kind"] in kinds}


def test_a_slow_disk_does_not_stall_the_camera_at_a_rounds_end(tmp_path, monkeypatch):
    slow = threading.Event()
    write = record._RoundFiles.write_key_frame

    def slow_disk(self, frame_no, image):
        if slow.is_set():
            time.sleep(SLOW_S)
        write(self, frame_no, image)

    monkeypatch.setattr(record._RoundFiles, "write_key_frame", slow_disk)
    script = dealing(ROUND_A, tail=0) + [[]]   # the last frame: the table swept, the round cleared
    n = len(script) - 1
    pipeline, told = dealt_and_settled(tmp_path, script, CONFIG.with_thresholds(remove_after_s=0.05), frames=n)
    settled = f"frames/{pipeline.machine.last_frame_no:08d}.jpg"
    deadline = time.monotonic() + 5
    while not list(tmp_path.rglob(settled)) and time.monotonic() < deadline:
        time.sleep(0.02)                      # the Settle frame on disk: only the sweep's is slow
    slow.set()
    started = time.monotonic()
    pipeline.step(Frame(coded_image(n), 1_700_000_000.0 + n * 0.1, n))
    took = time.monotonic() - started
    assert pipeline.machine.state == RoundState.cleared
    assert took < SLOW_S / 4, f"the camera's frame waited {took:.1f} s for the disk"
    assert told == []                         # not finished before its last key frame is on disk

    pipeline.stop()
    [(folder, meta)] = told
    assert meta["outcome"] == "settled" and meta["interrupted"] is False and meta["last_frame"] == n
    assert json.loads((folder / "meta.json").read_text()) == meta
    assert read_jsonl(folder / "detections.jsonl")[-1]["frame_no"] == n
    assert {int(p.stem) for p in (folder / "frames").glob("*.jpg")} == key_frame_events(folder)


def stall_the_disk(monkeypatch) -> threading.Event:
    """Two key frames may wait, and the disk writes nothing until the returned event is set."""
    monkeypatch.setattr(record, "MAX_QUEUED_KEY_FRAMES", 2)
    stalled = threading.Event()
    write = record._RoundFiles.write_key_frame

    def stalled_disk(self, frame_no, image):
        stalled.wait(10)
        write(self, frame_no, image)

    monkeypatch.setattr(record._RoundFiles, "write_key_frame", stalled_disk)
    return stalled


def test_key_frames_beyond_what_may_wait_for_the_disk_are_dropped_and_named(tmp_path, monkeypatch):
    stalled = stall_the_disk(monkeypatch)
    pipeline, told = dealt_and_settled(tmp_path, dealing(ROUND_A))
    assert "key frames still wait for the disk" in pipeline.status()["recording_warning"]
    stalled.set()
    pipeline.stop()
    [(folder, meta)] = told
    keys, written = key_frame_events(folder), {int(p.stem) for p in (folder / "frames").glob("*.jpg")}
    [settled] = [e["frame_no"] for e in read_jsonl(folder / "events.jsonl") if e["kind"] == "round_settled"]
    assert settled in written                 # a person's action's frame is never dropped (QA50 review L1)
    assert len(written - {settled}) == 2 and sorted(keys - written) == meta["dropped_key_frames"]
    assert meta["outcome"] == "settled" and meta["interrupted"] is False
    frames = [line["frame_no"] for line in read_jsonl(folder / "detections.jsonl")]
    assert frames == list(range(frames[0], meta["last_frame"] + 1))     # every frame's line is there
    [result] = replay(folder)                  # and the round replays as it ran
    assert result["matches_recording"] is True, result["differences"]


def test_a_full_disk_is_said_and_what_was_written_is_kept(tmp_path, monkeypatch):
    real = Path.write_bytes

    def full(self, data):
        if self.parent.name == "frames":
            raise OSError(28, "No space left on device")
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", full)
    pipeline, told = dealt_and_settled(tmp_path, dealing(ROUND_A))
    pipeline.stop()
    error = pipeline.status()["recording_error"]
    assert error.startswith("cannot write key frame ") and "No space left on device" in error
    [(folder, meta)] = told
    assert meta["outcome"] == "settled" and not list((folder / "frames").iterdir())
    [result] = replay(folder)
    assert result["matches_recording"] is True, result["differences"]


def test_a_persons_key_frame_is_written_however_far_the_disk_is_behind(tmp_path, monkeypatch):
    """QA50 review L1: with the key frames waiting at the cap, the Void and the manual Clear frame
    were dropped like the camera's.  A person's action is few frames and what a dispute turns on:
    only the camera's are dropped, also where a person acts on a frame whose camera key frame was
    dropped, or names a frame the recorder has not been given yet."""
    stalled = stall_the_disk(monkeypatch)
    recorder = record.RoundRecorder(tmp_path, CONFIG, model_name="scripted-v1")
    told = []
    recorder.on_finished = lambda folder, meta: told.append((folder, meta))

    def event(kind, frame_no, **data):       # the machine tells its event before the frame's line
        recorder.on_event(RoundEvent(kind, 1, 1_700_000_000.0 + frame_no, frame_no, data=data))

    def frame(frame_no):
        recorder.on_frame(frame_no, 1_700_000_000.0 + frame_no, (WIDTH, HEIGHT), [], coded_image(frame_no))

    event(EventKind.round_start, 0)
    frame(0)
    for frame_no in (1, 2, 3, 4):            # the camera's: two wait for the stalled disk, 3 and 4 dropped
        event(EventKind.card_accepted, frame_no)
        frame(frame_no)
    event(EventKind.round_void, 4, actor="super1", reason="misdeal")      # on the frame just dropped
    event(EventKind.round_cleared, 5, manual=True, actor="dealer1")      # before its frame's line came
    frame(5)
    stalled.set()
    recorder.close()
    [(folder, meta)] = told
    assert {int(p.stem) for p in (folder / "frames").glob("*.jpg")} == {1, 2, 4, 5}
    assert meta["dropped_key_frames"] == [3]
    assert json.loads((folder / "meta.json").read_text())["dropped_key_frames"] == [3]
