"""A round whose recording cannot be written is still played and settled; what it lost goes to the
audit log under the round, once (QA51 H4: a recordings folder the kiosk could not write lost every
round's recording, and only the journal said so), and stands on the dealer's screen (the pipeline
status's ``recording_error``) until a recording starts again."""

from __future__ import annotations

import errno
from decimal import Decimal
from pathlib import Path

from scripted_frames import coded_image
from test_record_replay import CONFIG, ROUND_A, ROUND_B, ScriptedDetector, dealing
from test_record_writer import stall_the_disk

from kiosk.audit import AuditLog
from kiosk.table_service import TableService
from scoring.settle import Bet
from vision.pipeline import TablePipeline
from vision.round import RoundState
from vision.sources import Frame

BETS = {"1": Bet("1", Decimal("100"), "double"), "2": Bet("2", Decimal("20"), "equal")}


def kiosk(tmp_path, script):
    """A table service on a pipeline that records under ``tmp_path/data``, as the kiosk builds them."""
    audit = AuditLog(tmp_path / "audit.sqlite3", CONFIG.table_id)
    pipeline = TablePipeline(CONFIG, None, ScriptedDetector(script), data_dir=tmp_path / "data")
    service = TableService(CONFIG, audit, pipeline=pipeline)
    return audit, pipeline, service


def play(pipeline, script, start=0):
    """The script's frames, each round settled by the machine as soon as it is complete."""
    for i in range(start, start + len(script)):
        pipeline.step(Frame(coded_image(i), 1_700_000_000.0 + i * 0.1, i))
        if pipeline.machine.state == RoundState.complete:
            pipeline.machine.settle(BETS, ts=pipeline.machine.last_ts + 0.05, actor="dealer7")


def failed(audit):
    return [r for r in audit.records() if r.type == "recording_failed"]


def test_a_recordings_folder_that_cannot_be_made_is_logged_under_each_round(tmp_path):
    script = dealing(ROUND_A) + dealing(ROUND_B)
    audit, pipeline, service = kiosk(tmp_path, script)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "recordings").write_text("not a folder")    # as read-only for the kiosk's user
    play(pipeline, script)
    pipeline.stop()
    settled = [r.round_no for r in audit.records() if r.type == "round_settled"]
    assert settled == [1, 2]                        # the game went on
    records = failed(audit)
    assert [r.round_no for r in records] == [1, 2]  # one record a round, filed under it
    for r in records:
        assert r.data["stopped"] is True and "folder" not in r.data
        assert "cannot start recording in" in r.data["error"] and "round-000" in r.data["error"]
    assert "cannot start recording" in pipeline.status()["recording_error"]   # on the screen meanwhile


def test_a_failure_mid_round_is_one_record_and_clears_when_recording_works_again(tmp_path, monkeypatch):
    script = dealing(ROUND_A) + dealing(ROUND_B)
    audit, pipeline, service = kiosk(tmp_path, script)
    broken = {"on": True}
    write = Path.write_bytes

    def full_disk(self, data):
        if broken["on"] and self.suffix == ".jpg":     # the key frames: the disk full mid-round
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return write(self, data)

    monkeypatch.setattr(Path, "write_bytes", full_disk)
    play(pipeline, dealing(ROUND_A))
    pipeline.recorder.flush()
    [one] = failed(audit)                      # every key frame of the round failed: one record
    assert one.round_no == 1 and "No space left on device" in one.data["error"]
    assert one.data["folder"].endswith("-round-0001")      # the part written before is on disk
    assert pipeline.status()["recording_error"]
    broken["on"] = False
    play(pipeline, dealing(ROUND_B), start=len(dealing(ROUND_A)))
    pipeline.stop()
    assert pipeline.status()["recording_error"] is None     # round 2 was recorded again
    assert [r.round_no for r in failed(audit)] == [1]


def test_dropped_key_frames_are_one_record_at_the_rounds_end(tmp_path, monkeypatch):
    stalled = stall_the_disk(monkeypatch)
    script = dealing(ROUND_A)
    audit, pipeline, service = kiosk(tmp_path, script)
    play(pipeline, script)
    assert failed(audit) == []                 # still recording: said when the round ends
    stalled.set()
    pipeline.stop()
    [one] = failed(audit)
    assert one.round_no == 1 and one.data["stopped"] is False and one.data["dropped_key_frames"] >= 1
    assert "key frame(s) of round 1 dropped" in one.data["error"] and one.data["folder"].endswith("-round-0001")
