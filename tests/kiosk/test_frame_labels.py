"""QA49 watch L4: on a fanned hand the boxed key frame's labels ran into one another
("2S 0.83QH 0.76 10D 0.7 JC 0.81"), so which card a box was read as could not be read off
the frame the round page and the evidence package show."""

from __future__ import annotations

import itertools
import json

import cv2
import numpy as np

from kiosk.frame_boxes import FrameBoxes
from vision.corners import Detection
from vision.overlay_labels import label_places

# Five cards fanned 28 px apart on a 1280 x 720 frame (the banker's hand of QA49's frame 1873).
FAN = [("2S", 0.83), ("QH", 0.76), ("10D", 0.70), ("JC", 0.81), ("9H", 0.90)]
BOXES = [{"card": code, "conf": conf, "box": [400 + 28 * i, 300, 490 + 28 * i, 430]}
         for i, (code, conf) in enumerate(FAN)]


def fanned_frame(tmp_path, boxes=BOXES, size=(720, 1280)):
    folder = tmp_path / "20260101T000000Z-round-0014"
    (folder / "frames").mkdir(parents=True)
    (folder / "detections.jsonl").write_text(json.dumps(
        {"frame_no": 1873, "ts": 1.0, "size": [size[1], size[0]], "detections": boxes}) + "\n")
    ok, jpeg = cv2.imencode(".jpg", np.zeros((*size, 3), np.uint8))
    return FrameBoxes(folder, quality=100).draw(1873, jpeg.tobytes())


def legible(drawn: np.ndarray, text: str) -> float:
    """How well ``text``, drawn alone in the overlay's font, matches its best place in the frame
    (1.0: every pixel of it as drawn alone; another label over it brings it down)."""
    scale = max(0.4, min(drawn.shape[:2]) / 900.0)
    size, thickness = 0.5 * scale, max(1, int(scale))
    (w, h), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, size, thickness)
    alone = np.zeros((h + base + 6, w + 6), np.uint8)
    cv2.putText(alone, text, (3, h + 3), cv2.FONT_HERSHEY_SIMPLEX, size, 200, thickness, cv2.LINE_AA)
    return float(cv2.matchTemplate(drawn[:, :, 1], alone, cv2.TM_CCOEFF_NORMED).max())


def test_each_label_of_a_fanned_hand_reads_on_its_own(tmp_path):
    drawn = cv2.imdecode(np.frombuffer(fanned_frame(tmp_path), np.uint8), cv2.IMREAD_COLOR)
    scores = {code: legible(drawn, f"{code} {conf:.2f}") for code, conf in FAN}
    assert all(score > 0.9 for score in scores.values()), scores     # was 0.6-0.8: labels ran together


def test_no_two_labels_of_a_fanned_hand_meet(tmp_path):
    detections = [Detection.from_json(b) for b in BOXES]
    places = label_places(detections, 1280, 720)
    for a, b in itertools.combinations(places, 2):
        assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (a, b)
    for (left, top, _, bottom), box in zip(places, BOXES):
        assert left == box["box"][0] and 0 <= top and bottom <= 720          # over its own card, in the frame


def test_a_fan_at_the_top_of_the_frame_puts_its_labels_below_inside_the_frame(tmp_path):
    """No room above the cards: the labels go below them, not off the frame."""
    high = [{**b, "box": [b["box"][0], 2, b["box"][2], 132]} for b in BOXES]
    places = label_places([Detection.from_json(b) for b in high], 1280, 720)
    assert all(top >= 132 for _, top, _, _ in places)
    drawn = cv2.imdecode(np.frombuffer(fanned_frame(tmp_path, high), np.uint8), cv2.IMREAD_COLOR)
    assert all(legible(drawn, f"{code} {conf:.2f}") > 0.9 for code, conf in FAN)
