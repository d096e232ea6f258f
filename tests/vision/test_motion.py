"""The motion gate: which seat crops the detector reads, and what the tracker gets instead."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from scoring.cards import Card
from vision.corners import Detection
from vision.motion import MotionGate
from vision.pipeline import TablePipeline
from vision.replay import find_config, media_source, replay
from vision.round import EventKind
from vision.sources import Frame
from vision.table import ConfigError, box_centre, table_config_from_dict

WIDTH, HEIGHT = 400, 300
LEFT, RIGHT, TOP = (0, 150, 200, 300), (200, 150, 400, 300), (100, 0, 300, 140)
REGIONS = [TOP, LEFT, RIGHT]


class SceneDetector:
    """Reads the cards of ``scene`` whose centre lies in a requested crop, as a crop-based
    detector would; remembers the crops of every call."""

    name = "scene-reader"

    def __init__(self, scene: list[Detection]) -> None:
        self.scene = scene
        self.calls: list[list[tuple]] = []

    def detect(self, image, regions=None):
        self.calls.append(list(regions))
        return [d for d in self.scene if any(inside(box_centre(d.box), r) for r in regions)]


def inside(point, region) -> bool:
    return region[0] <= point[0] <= region[2] and region[1] <= point[1] <= region[3]


def card(code: str, x: int, y: int) -> Detection:
    return Detection(Card.parse(code), 0.9, (x, y, x + 24, y + 34))


def draw(scene: list[Detection], size=(WIDTH, HEIGHT), noise: float = 0.0, rng=None) -> np.ndarray:
    """Green felt with a white card where each detection is; optional sensor noise."""
    width, height = size
    image = np.full((height, width, 3), (40, 110, 30), np.uint8)
    for d in scene:
        x1, y1, x2, y2 = (int(v) for v in d.box)
        cv2.rectangle(image, (x1, y1), (x2, y2), (235, 235, 235), -1)
    if noise:
        image = np.clip(image + rng.normal(0, noise, image.shape), 0, 255).astype(np.uint8)
    return image


def codes(detections):
    return sorted(d.card.code for d in detections)


def settled(scene, regions=REGIONS, **kwargs) -> tuple[SceneDetector, MotionGate]:
    """A gate that has read the scene until its readings agreed (three reads, the default)."""
    detector, gate = SceneDetector(scene), MotionGate(**{"refresh_frames": 100, **kwargs})
    for _ in range(3):
        gate.read(draw(scene), regions, detector.detect)
    assert detector.calls == [list(regions)] * 3
    return detector, gate


def test_a_still_table_is_read_until_the_reads_agree_then_only_by_staggered_refreshes():
    scene = [card("AS", 40, 200), card("KH", 150, 40)]
    detector, gate = settled(scene, refresh_frames=10)
    results = [gate.read(draw(scene), REGIONS, detector.detect) for _ in range(37)]   # frames 3..39
    assert detector.calls[3:6] == [[TOP], [LEFT], [RIGHT]]                             # frames 12, 13, 14
    assert all(len(regions) == 1 for regions in detector.calls[3:])
    assert len(detector.calls) == 3 + 3 * 3                                           # and 22.., 32..
    assert all(codes(r) == ["AS", "KH"] for r in results)


def test_a_card_dealt_to_one_seat_rereads_that_seat_only():
    scene = [card("AS", 40, 200), card("KH", 150, 40)]
    detector, gate = settled(scene)
    scene.append(card("7D", 260, 200))
    found = gate.read(draw(scene), REGIONS, detector.detect)
    assert detector.calls[3:] == [[RIGHT]] and gate.last_read == 1
    assert codes(found) == ["7D", "AS", "KH"]
    for _ in range(4):
        gate.read(draw(scene), REGIONS, detector.detect)
    assert detector.calls[3:] == [[RIGHT]] * 3   # until three reads agreed
    scene.remove(scene[0])  # swept from the left seat
    found = gate.read(draw(scene), REGIONS, detector.detect)
    assert detector.calls[-1] == [LEFT] and codes(found) == ["7D", "KH"]


def test_a_misread_is_read_again_not_repeated():
    """Repeating one misread to the tracker for k frames would get it accepted."""
    scene = [card("AS", 40, 200)]
    detector, gate = settled(scene)
    scene.append(card("6H", 100, 200))
    detector.scene = [scene[0], Detection(Card.parse("8H"), 0.9, scene[1].box)]   # one bad look
    gate.read(draw(scene), REGIONS, detector.detect)
    detector.scene = scene
    seen = [codes(gate.read(draw(scene), REGIONS, detector.detect)) for _ in range(5)]
    assert detector.calls[3:] == [[LEFT]] * 4 and seen == [["6H", "AS"]] * 5


def test_overlapping_crops_report_a_card_once():
    left, right = (0, 150, 220, 300), (180, 150, 400, 300)   # both hold x 180..220
    scene = [card("QC", 188, 200), card("2H", 40, 200)]
    detector, gate = settled(scene, [left, right])
    assert codes(gate.read(draw(scene), [left, right], detector.detect)) == ["2H", "QC"]
    scene.append(card("3S", 320, 200))  # only the right crop changes; it sees QC again
    found = gate.read(draw(scene), [left, right], detector.detect)
    assert detector.calls[-1] == [right] and codes(found) == ["2H", "3S", "QC"]


def test_a_card_on_the_edge_of_a_crop_read_again_replaces_its_old_reading():
    """The left crop read the whole card; the right crop, read again, sees its right edge."""
    whole, edge = (Detection(Card.parse("QC"), 0.9, box) for box in ((170, 200, 226, 234), (200, 200, 226, 234)))
    detector, gate = settled([whole], [LEFT, RIGHT])
    detector.scene = [edge, card("3S", 320, 200)]
    found = gate.read(draw([whole, card("3S", 320, 200)]), [LEFT, RIGHT], detector.detect)
    assert detector.calls[-1] == [RIGHT]
    assert [(d.card.code, d.box) for d in found] == [("QC", edge.box), ("3S", (320, 200, 344, 234))]


def test_a_misread_elsewhere_does_not_hide_a_card_from_the_tracker():
    scene = [card("QC", 40, 200)]
    detector, gate = settled(scene)
    scene.append(Detection(Card.parse("QC"), 0.3, (300, 200, 324, 234)))  # a faint 9C read as QC
    found = gate.read(draw(scene), REGIONS, detector.detect)
    assert detector.calls[-1] == [RIGHT] and [d.box[0] for d in found] == [40, 300]


def test_sensor_noise_and_jpeg_are_not_motion():
    rng = np.random.default_rng(0)
    scene = [card("AS", 40, 200), card("KH", 150, 40), card("9C", 300, 190)]
    detector, gate = SceneDetector(scene), MotionGate(refresh_frames=1000)
    for _ in range(30):
        image = draw(scene, noise=1.0, rng=rng)
        image = cv2.imdecode(cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 64])[1], cv2.IMREAD_COLOR)
        gate.read(image, REGIONS, detector.detect)
    assert len(detector.calls) == 3   # the reads that settle it, nothing after


def test_a_new_frame_size_forgets_the_old_readings():
    detector, gate = settled([card("AS", 40, 200)])
    detector.scene = []  # the camera came back at twice the size: the card's old box means nothing
    big = [(2 * a, 2 * b, 2 * c, 2 * d) for a, b, c, d in REGIONS]
    assert gate.read(draw([], size=(2 * WIDTH, 2 * HEIGHT)), big, detector.detect) == []
    assert detector.calls[-1] == big


def test_a_failed_read_is_tried_again_on_the_next_frame():
    scene = [card("AS", 40, 200)]
    detector, gate = SceneDetector(scene), MotionGate(refresh_frames=100)
    gate.read(draw([]), REGIONS, detector.detect)

    def broken(image, regions=None):
        raise RuntimeError("inference failed")

    with pytest.raises(RuntimeError):
        gate.read(draw(scene), REGIONS, broken)
    assert codes(gate.read(draw(scene), REGIONS, detector.detect)) == ["AS"]


# ------------------------------------------------------------------ in the pipeline

SEATS = [
    {"name": "banker", "polygon": [[0.25, 0.0], [0.75, 0.0], [0.75, 0.4], [0.25, 0.4]]},
    {"name": "1", "polygon": [[0.0, 0.5], [0.5, 0.5], [0.5, 1.0], [0.0, 1.0]]},
    {"name": "2", "polygon": [[0.5, 0.5], [1.0, 0.5], [1.0, 1.0], [0.5, 1.0]]},
]
HANDS = {"1": "KH QH JH 10H 9H", "2": "6C 7C 8C 9C 10C", "banker": "AS 2H 3D 4C 5S"}
ORIGIN = {"banker": (110, 20), "1": (20, 190), "2": (220, 190)}


def run_deal(gate: bool, data_dir=None):
    """A deal one card at a time, painted into noisy frames; the events and the pipeline."""
    config = table_config_from_dict({"table_id": "t1", "rules": "cambodia", "seats": SEATS,
                                     "thresholds": {"motion_gate": gate, "refresh_frames": 20}})
    scene: list[Detection] = []
    detector, events, rng = SceneDetector(scene), [], np.random.default_rng(1)
    pipeline = TablePipeline(config, None, detector, data_dir, on_event=events.append)
    plan = [(s, j) for j in range(5) for s in HANDS] + [None] * 40 + ["sweep"] + [None] * 40
    frame_no = 0
    for step in plan:
        if step == "sweep":
            scene.clear()
        elif step is not None:
            seat, j = step
            scene.append(card(HANDS[seat].split()[j], ORIGIN[seat][0] + 30 * j, ORIGIN[seat][1]))
        for _ in range(4 if step else 1):
            pipeline.step(Frame(draw(scene, noise=0.8, rng=rng), frame_no / 10, frame_no))
            frame_no += 1
    return [(e.kind, e.seat, e.card, e.frame_no) for e in events], pipeline, detector


def test_the_gated_pipeline_deals_the_same_round_with_fewer_reads():
    gated, pipeline, detector = run_deal(True)
    plain, _, plain_detector = run_deal(False)
    assert gated == plain
    assert [e[0] for e in gated].count(EventKind.card_accepted) == 15 and (EventKind.round_cleared,) == gated[-1][:1]
    reads = sum(len(c) for c in detector.calls)
    assert reads < sum(len(c) for c in plain_detector.calls) / 3
    status = pipeline.status()
    assert status["motion_gate"] is True and status["regions_read"] + status["regions_reused"] == 3
    assert status["regions_read"] < 1


def test_a_gated_round_replays_from_its_recording(tmp_path):
    """The recording holds what the tracker was given, reused readings included."""
    _, pipeline, _ = run_deal(True, tmp_path)
    pipeline.stop()
    [result] = replay(tmp_path / "recordings")
    assert result["matches_recording"] is True and result["seats"]["2"] == HANDS["2"].split()


def test_motion_settings_are_validated():
    base = {"table_id": "t1", "rules": "cambodia", "seats": SEATS}
    for bad in ({"motion_pixel_threshold": 0}, {"motion_min_area": 0}, {"refresh_frames": 0},
                {"motion_gate": "sometimes"}):
        with pytest.raises(ConfigError, match=f"thresholds.{next(iter(bad))}"):
            table_config_from_dict({**base, "thresholds": bad})
    assert table_config_from_dict(base).with_thresholds(motion_gate=False).thresholds.motion_gate is False


# ------------------------------------------------------------------ the bundled demo

DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo"


@pytest.mark.skipif(not (DEMO / "labels.jsonl.gz").is_file(), reason="datasets/demo is not built yet")
def test_on_the_demo_frames_the_gate_changes_no_event_and_reads_a_fifth():
    """Real frames (noise, JPEG, the dealer's hand crossing seats) read by a perfect reader:
    the gate must give the very events of reading every crop, and save most reads."""
    with gzip.open(DEMO / "labels.jsonl.gz", "rt", encoding="utf-8") as fh:
        labels = [[Detection.from_json(d) for d in json.loads(line)["detections"]] for line in fh]
    runs = []
    for gate in (True, False):
        detector, events = SceneDetector([]), []
        runs.append((TablePipeline(find_config(DEMO).with_thresholds(motion_gate=gate), None, detector,
                                   on_event=events.append), detector, events))
    for frame in media_source(DEMO, 6.0).frames():  # one decode, both pipelines
        for pipeline, detector, _ in runs:
            detector.scene = labels[frame.frame_no]
            pipeline.step(frame)
    (_, gated, gated_events), (_, plain, plain_events) = runs
    assert [e.to_json() for e in gated_events] == [e.to_json() for e in plain_events]
    assert sum(e.kind == EventKind.card_accepted for e in gated_events) == 90  # 3 rounds of 30 cards
    assert sum(map(len, gated.calls)) < sum(map(len, plain.calls)) / 4
