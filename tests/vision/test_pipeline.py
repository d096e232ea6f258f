"""The table pipeline end to end with a scripted detector: threads, camera outages, crops, status."""

from __future__ import annotations

import time

import cv2
import numpy as np
import scripted_frames
from scripted_frames import HEIGHT, WIDTH, coded_image, decode_index

from vision.pipeline import TablePipeline
from vision.sources import FrameSource, ImageFilesSource, SourceError
from vision.round import EventKind, RoundState
from vision.table import table_config_from_dict

CONFIG = table_config_from_dict({
    "table_id": "t1", "rules": "cambodia",
    "seats": [
        {"name": "banker", "polygon": [[0.25, 0.0], [0.75, 0.0], [0.75, 0.4], [0.25, 0.4]]},
        {"name": "1", "polygon": [[0.0, 0.5], [0.5, 0.5], [0.5, 1.0], [0.0, 1.0]]},
        {"name": "2", "polygon": [[0.5, 0.5], [1.0, 0.5], [1.0, 1.0], [0.5, 1.0]]},
    ],
    "camera": {"offline_after_s": 0.3, "reconnect_initial_s": 0.01, "reconnect_max_s": 0.02},
    # the scripted detector answers from a script, not from what the frame shows: read every crop
    "thresholds": {"crop_padding": 0.1, "motion_gate": False},
})
HANDS = {"1": "KH QH JH 10H 9H", "2": "6C 7C 8C 9C 10C", "banker": "AS 2H 3D 4C 5S"}
ORIGIN = {"banker": (110, 20), "1": (20, 190), "2": (220, 190)}


def dealing(**kwargs):
    return scripted_frames.dealing(HANDS, ORIGIN, tail=30, **kwargs)


class ScriptedDetector:
    name = "scripted-v1"

    def __init__(self, script, fail_on=()):
        self.script, self.fail_on = script, set(fail_on)
        self.seen, self.regions = [], None

    def detect(self, image, regions=None):
        index = decode_index(image)
        self.seen.append(index)
        self.regions = regions
        if index in self.fail_on:
            raise RuntimeError(f"inference failed on frame {index}")
        return list(self.script[index]) if index < len(self.script) else []


class FlakyCamera(FrameSource):
    """A live camera playing the script's frames in a loop, failing at chosen reads."""

    live = True
    description = "test camera"

    def __init__(self, frames: int, fail_at=(), delay=0.02):
        self.frames, self.fail_at, self.delay = frames, set(fail_at), delay
        self.reads = 0

    def open(self):
        pass

    def read(self):
        self.reads += 1
        time.sleep(self.delay)
        if self.reads in self.fail_at:
            raise SourceError("camera 0 delivered no frame")
        return coded_image(min(self.reads - 1, self.frames - 1))


def wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def test_a_frame_folder_is_played_in_order_without_drops(tmp_path):
    script = dealing()
    for i in range(len(script)):
        cv2.imwrite(str(tmp_path / f"{i:04d}.png"), coded_image(i))
    detector = ScriptedDetector(script)
    events = []
    pipeline = TablePipeline(CONFIG, ImageFilesSource.from_folder(tmp_path, start_ts=0.0, fps=10.0), detector,
                             on_event=events.append)
    pipeline.start()
    assert pipeline.wait(20)
    pipeline.stop()
    assert detector.seen == list(range(len(script)))
    kinds = [e.kind for e in events]
    assert kinds[0] == EventKind.round_start and kinds.count(EventKind.card_accepted) == 15
    assert EventKind.round_complete in kinds and kinds[-1] == EventKind.round_cleared
    complete = next(e for e in events if e.kind == EventKind.round_complete)
    assert complete.ts == complete.frame_no / 10.0  # file time, not wall time
    status = pipeline.status()
    assert status["camera"] == "finished" and status["frames_processed"] == len(script)
    assert status["model"] == "scripted-v1" and status["frame_no"] == len(script) - 1


class SlowDetector(ScriptedDetector):
    def detect(self, image, regions=None):
        time.sleep(0.1)
        return super().detect(image, regions)


def test_a_file_played_in_real_time_on_a_slow_machine_drops_frames_to_keep_its_clock_with_the_wall(tmp_path):
    """The demo plays a recording as its camera.  Played at 20 fps by a machine managing 10,
    its frames' times (which stamp the camera's audit records) once fell ever further
    behind the wall clock stamping the staff's actions, so the log read out of order."""
    for i in range(60):
        cv2.imwrite(str(tmp_path / f"{i:04d}.png"), coded_image(i))
    detector = SlowDetector([])
    start = time.time()
    lags = []
    pipeline = TablePipeline(CONFIG, ImageFilesSource.from_folder(tmp_path, start_ts=start, fps=20.0), detector,
                             realtime=True)
    step = pipeline.step
    pipeline.step = lambda frame: (lags.append(time.time() - frame.ts), step(frame))
    pipeline.start()
    assert pipeline.wait(20)
    pipeline.stop()
    assert len(detector.seen) < 60 and detector.seen == sorted(detector.seen)       # frames skipped, in order
    assert max(lags) < 0.5 + 0.25                                                    # the limit, plus one slow read


def test_the_detector_gets_each_seat_zone_padded_as_a_crop():
    detector = ScriptedDetector(dealing())
    pipeline = TablePipeline(CONFIG, None, detector)
    from vision.sources import Frame
    pipeline.step(Frame(coded_image(0), 0.0, 0))
    # banker zone 100..300 x 0..120, padded 10 % each side; players clipped at the image edge
    assert detector.regions == [(80, 0, 320, 132), (0, 135, 220, 300), (180, 135, 400, 300)]


def test_a_camera_failing_mid_stream_is_reported_and_the_pipeline_carries_on():
    script = dealing()
    camera = FlakyCamera(len(script), fail_at={20, 21, 22})
    events = []
    # this camera deals a card every 60 ms, each in view 0.14 s at the last: faster than a hand
    pipeline = TablePipeline(CONFIG.with_thresholds(accept_after_s=0.0), camera, ScriptedDetector(script),
                             on_event=events.append)
    pipeline.start()
    assert wait_for(lambda: any(e.kind == EventKind.camera_online for e in events))
    assert wait_for(lambda: pipeline.machine.state == RoundState.complete)
    pipeline.stop()
    camera_events = [e for e in events if e.kind in (EventKind.camera_offline, EventKind.camera_online)]
    assert [e.kind for e in camera_events] == [EventKind.camera_offline, EventKind.camera_online]
    assert camera_events[0].data["reason"] == "camera 0 delivered no frame"
    assert camera_events[0].round_no == 1 and camera_events[0].frame_no is not None
    assert pipeline.machine.hands["1"].codes == tuple(HANDS["1"].split())


def test_a_camera_down_at_start_is_offline_in_status():
    class Unplugged(FlakyCamera):
        def open(self):
            raise SourceError("camera 0 cannot be opened")

    events = []
    pipeline = TablePipeline(CONFIG, Unplugged(1), ScriptedDetector([]), on_event=events.append).start()
    assert wait_for(lambda: pipeline.status()["camera"] == "offline")
    pipeline.stop()
    assert events[0].kind == EventKind.camera_offline
    assert events[0].data["reason"] == "camera 0 cannot be opened"


def test_a_detector_failure_skips_one_frame_not_the_table(tmp_path):
    script = dealing()
    for i in range(len(script)):
        cv2.imwrite(str(tmp_path / f"{i:04d}.png"), coded_image(i))
    detector = ScriptedDetector(script, fail_on={5})
    pipeline = TablePipeline(CONFIG, ImageFilesSource.from_folder(tmp_path, start_ts=0.0), detector).start()
    assert pipeline.wait(20)
    assert pipeline.status()["last_error"] == "RuntimeError: inference failed on frame 5"
    assert pipeline.status()["frames_processed"] == len(script) - 1
    assert pipeline.machine.round_no == 1


def test_latest_jpeg_shows_the_newest_frame_with_zones_and_boxes():
    from vision.sources import Frame
    script = dealing()
    pipeline = TablePipeline(CONFIG, None, ScriptedDetector(script))
    assert pipeline.latest_jpeg() is None
    pipeline.step(Frame(coded_image(40), 4.0, 40))
    plain = cv2.imdecode(np.frombuffer(pipeline.latest_jpeg(draw_boxes=False), np.uint8), cv2.IMREAD_COLOR)
    drawn = cv2.imdecode(np.frombuffer(pipeline.latest_jpeg(), np.uint8), cv2.IMREAD_COLOR)
    assert plain.shape == drawn.shape == (HEIGHT, WIDTH, 3)
    assert decode_index(plain) == 40
    assert np.abs(plain.astype(int) - drawn.astype(int)).max() > 100  # outlines were drawn
    assert pipeline.latest_jpeg() is pipeline.latest_jpeg()  # one encode per frame, however many viewers


def test_an_unwritable_data_dir_stops_recording_not_the_round(tmp_path):
    from vision.sources import Frame
    blocked = tmp_path / "data"
    (blocked / "recordings").mkdir(parents=True)
    (blocked / "recordings" / "t1").write_text("a file where the folder should be")
    script = dealing()
    pipeline = TablePipeline(CONFIG, None, ScriptedDetector(script), data_dir=blocked)
    for i in range(len(script)):
        pipeline.step(Frame(coded_image(i), i / 10, i))
    pipeline.recorder.flush()            # the recorder's writer thread is behind the camera's
    assert pipeline.machine.round_no == 1 and pipeline.machine.state == RoundState.cleared
    assert "cannot start recording" in pipeline.status()["recording_error"]
