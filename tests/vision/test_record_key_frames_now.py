"""A person's key frame is written when they act, not with the camera's next frame (QA49 review
M2), and a stop returns only once every round is finished and told (review L1)."""

from __future__ import annotations

import json
import threading
import time
from decimal import Decimal

from scripted_frames import coded_image
from test_record_replay import CONFIG, ROUND_A, ScriptedDetector, dealing

from scoring.settle import Bet
from vision import record
from vision.pipeline import TablePipeline
from vision.sources import Frame

BETS = {"1": Bet("1", Decimal("100"), "double"), "2": Bet("2", Decimal("20"), "equal")}


def dealt_pipeline(tmp_path, script, config=CONFIG):
    detector = ScriptedDetector(script)
    pipeline = TablePipeline(config, None, detector, data_dir=tmp_path)
    told = []
    pipeline.recorder.on_finished = lambda folder, meta: told.append((folder, meta))
    return pipeline, told


def wait_for(condition, seconds=5.0):
    end = time.monotonic() + seconds
    while not condition() and time.monotonic() < end:
        time.sleep(0.02)
    return condition()


def test_settled_and_cleared_with_the_camera_offline_the_round_is_finished_and_told(tmp_path):
    script = dealing(ROUND_A, tail=0)
    pipeline, told = dealt_pipeline(tmp_path, script)
    for i in range(len(script)):
        pipeline.step(Frame(coded_image(i), 1_700_000_000.0 + i * 0.1, i))
    machine = pipeline.machine
    machine.settle(BETS, ts=machine.last_ts + 0.05, actor="dealer7")
    machine.clear(ts=machine.last_ts + 0.06, actor="dealer7")
    # no frame comes (camera offline): the round is still sealed, its Settle frame on disk
    assert wait_for(lambda: told), "the round waited for a camera frame to be finished"
    [(folder, meta)] = told
    assert meta["outcome"] == "settled" and meta["interrupted"] is False
    assert json.loads((folder / "meta.json").read_text())["outcome"] == "settled"
    assert (folder / "frames" / f"{machine.last_frame_no:08d}.jpg").is_file()
    pipeline.stop()
    assert len(told) == 1


def test_a_stop_waits_for_key_frames_the_camera_thread_is_still_writing(tmp_path, monkeypatch):
    slow = threading.Event()
    write = record._RoundFiles.write_key_frame

    def slow_disk(self, frame_no, image):
        if slow.is_set():
            time.sleep(0.8)                # an SD card stalling on a full-size JPEG
        write(self, frame_no, image)

    monkeypatch.setattr(record._RoundFiles, "write_key_frame", slow_disk)
    script = dealing(ROUND_A, tail=0)
    # a swept card leaves the tracker on the next frame: that frame clears the settled round
    pipeline, told = dealt_pipeline(tmp_path, script + [[]], CONFIG.with_thresholds(remove_after_s=0.05))
    for i in range(len(script)):
        pipeline.step(Frame(coded_image(i), 1_700_000_000.0 + i * 0.1, i))
    machine = pipeline.machine
    machine.settle(BETS, ts=machine.last_ts + 0.05, actor="dealer7")
    settle_frame = f"frames/{machine.last_frame_no:08d}.jpg"
    wait_for(lambda: list(tmp_path.rglob(settle_frame)), 1.0)   # the Settle frame, written at once
    slow.set()
    n = len(script)
    camera = threading.Thread(target=pipeline.step, args=(Frame(coded_image(n), 1_700_000_000.0 + n * 0.1, n),))
    camera.start()        # the table swept: the round clears, its last key frames written slowly
    time.sleep(0.2)
    pipeline.recorder.close()          # what TablePipeline.stop does once its join timed out
    assert [meta["outcome"] for _, meta in told] == ["settled"]
    camera.join()
    assert len(told) == 1
