"""What a disk falling behind costs is said as what it is (QA50 review L2).  A dropped key frame is a
warning of the round being recorded, not a recording error: it read "recording stopped" in the
pipeline status until a restart.  A recording error stands until recording works again.  And the
detection lines waiting for the disk are capped: past the cap a frame's line is dropped and counted
in meta.json, never an event, so memory no longer grows without bound while the disk stalls."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from scripted_frames import HEIGHT, WIDTH, coded_image
from test_record_replay import CONFIG, ROUND_A, dealing
from test_record_writer import dealt_and_settled, stall_the_disk

from vision import record
from vision.record import read_jsonl
from vision.replay import replay
from vision.round import EventKind, RoundEvent


class Table:
    """A RoundRecorder told frames and events by hand (as the pipeline does: events first)."""

    def __init__(self, root):
        self.recorder = record.RoundRecorder(root, CONFIG, model_name="scripted-v1")
        self.told = []
        self.recorder.on_finished = lambda folder, meta: self.told.append((folder, meta))

    def event(self, kind, round_no, frame_no, **data):
        self.recorder.on_event(RoundEvent(kind, round_no, 1_700_000_000.0 + frame_no, frame_no, data=data))

    def frame(self, frame_no):
        self.recorder.on_frame(frame_no, 1_700_000_000.0 + frame_no, (WIDTH, HEIGHT), [], coded_image(frame_no))


def test_a_dropped_key_frame_is_a_warning_not_a_recording_error(tmp_path, monkeypatch):
    stalled = stall_the_disk(monkeypatch)
    pipeline, told = dealt_and_settled(tmp_path, dealing(ROUND_A))
    status = pipeline.status()
    assert status["recording_error"] is None
    assert "key frame(s) of round 1 dropped" in status["recording_warning"]
    assert "recording goes on" in status["recording_warning"]
    stalled.set()
    pipeline.stop()
    [(folder, meta)] = told
    assert meta["dropped_key_frames"]


def test_the_warning_goes_when_the_next_round_starts(tmp_path, monkeypatch):
    stalled = stall_the_disk(monkeypatch)
    table = Table(tmp_path)
    table.event(EventKind.round_start, 1, 0)
    table.frame(0)
    for frame_no in (1, 2, 3, 4):          # two wait for the stalled disk, 3 and 4 are dropped
        table.event(EventKind.card_accepted, 1, frame_no)
        table.frame(frame_no)
    assert table.recorder.warning.startswith("2 key frame(s) of round 1 dropped, the last 4")
    table.event(EventKind.round_cleared, 1, 5)
    table.frame(5)
    stalled.set()
    assert table.recorder.flush(10)
    table.event(EventKind.round_start, 2, 6)
    table.frame(6)
    assert table.recorder.warning is None and table.recorder.error is None
    table.recorder.close()
    assert table.told[0][1]["dropped_key_frames"] == [3, 4, 5]     # what round 1 lost is in its meta


def test_a_recording_error_stands_until_a_later_round_is_recorded(tmp_path, monkeypatch):
    real = Path.mkdir
    broken = threading.Event()
    broken.set()

    def mkdir(self, *args, **kwargs):
        if broken.is_set() and self.name == "frames":
            raise OSError(5, "Input/output error")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    table = Table(tmp_path)
    table.event(EventKind.round_start, 1, 0)
    table.frame(0)
    table.event(EventKind.round_cleared, 1, 1)
    table.frame(1)
    assert table.recorder.flush(10)
    assert table.recorder.error.startswith("cannot start recording")
    broken.clear()                          # the disk takes writes again
    table.event(EventKind.round_start, 2, 2)
    table.frame(2)
    assert table.recorder.flush(10)
    assert table.recorder.error is None
    table.recorder.close()
    assert [meta["round_no"] for _, meta in table.told] == [2]


def test_lines_beyond_what_may_wait_for_the_disk_are_dropped_and_counted_never_events(tmp_path, monkeypatch):
    monkeypatch.setattr(record, "MAX_QUEUED_LINES", 5, raising=False)
    stalled = threading.Event()
    write = record._RoundFiles.write_detections

    def stalled_disk(self, line):
        stalled.wait(10)
        write(self, line)

    monkeypatch.setattr(record._RoundFiles, "write_detections", stalled_disk)
    table = Table(tmp_path)
    table.event(EventKind.round_start, 1, 0)
    for frame_no in range(40):
        if frame_no % 4 == 1:
            table.event(EventKind.alert, 1, frame_no, code="card_changed", message=f"alert {frame_no}")
        table.frame(frame_no)
    waiting = [fn for fn, _ in table.recorder._tasks if getattr(fn, "__func__", None) is stalled_disk]
    assert len(waiting) == 5                # held in memory: the cap, not the stall's length
    assert table.recorder.warning.startswith("35 detection line(s) of round 1 dropped")
    assert table.recorder.error is None
    table.event(EventKind.round_cleared, 1, 40)
    table.frame(40)
    stalled.set()
    table.recorder.close()
    [(folder, meta)] = table.told
    events = read_jsonl(folder / "events.jsonl")
    assert [e["kind"] for e in events] == ["round_start"] + ["alert"] * 10 + ["round_cleared"]   # every event
    assert [line["frame_no"] for line in read_jsonl(folder / "detections.jsonl")] == [0, 1, 2, 3, 4]
    assert meta["dropped_detections"] == {"count": 36, "frames": [[5, 40]]}
    assert json.loads((folder / "meta.json").read_text())["dropped_detections"]["count"] == 36
    [result] = replay(folder)
    assert any("36 frame(s) of detections were not recorded" in w for w in result["warnings"])
