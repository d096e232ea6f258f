"""Key frames are written on the recorder's thread, not under the round machine's lock
(QA48 concurrency L1): a slow disk must not hold a Settle, and a stop loses none."""

from __future__ import annotations

import time
from decimal import Decimal

from scripted_frames import coded_image
from test_record_replay import CONFIG, ROUND_A, ScriptedDetector, dealing

from scoring.settle import Bet
from vision import record
from vision.pipeline import TablePipeline
from vision.round import RoundState
from vision.sources import Frame

SLOW_S = 0.6


def test_a_settle_does_not_wait_for_its_key_frame_and_a_stop_still_writes_it(tmp_path, monkeypatch):
    slow = []
    write = record._RoundFiles.write_key_frame

    def slow_disk(self, frame_no, image):
        if slow:
            time.sleep(SLOW_S)             # an SD card stalling on a full-size JPEG
        write(self, frame_no, image)

    monkeypatch.setattr(record._RoundFiles, "write_key_frame", slow_disk)
    detector = ScriptedDetector(dealing(ROUND_A, tail=0))
    pipeline = TablePipeline(CONFIG, None, detector, data_dir=tmp_path)
    told = []
    pipeline.recorder.on_finished = lambda folder, meta: told.append(
        (meta["outcome"], sorted(p.name for p in (folder / "frames").iterdir())))
    for i in range(len(detector.script)):
        pipeline.step(Frame(coded_image(i), 1_700_000_000.0 + i * 0.1, i))
    machine = pipeline.machine
    assert machine.state == RoundState.complete
    slow.append(True)

    started = time.monotonic()
    machine.settle({"1": Bet("1", Decimal("100"), "double"), "2": Bet("2", Decimal("20"), "equal")},
                   ts=machine.last_ts + 0.05, actor="dealer7")
    machine.clear(ts=machine.last_ts + 0.06, actor="dealer7")
    assert time.monotonic() - started < SLOW_S / 2       # the dealer's buttons did not wait on the disk
    assert told == []                                     # not sealed before its last key frame is on disk

    pipeline.stop()
    [(outcome, frames)] = told
    assert outcome == "settled" and f"{machine.last_frame_no:08d}.jpg" in frames
