"""The live view's overlay on a fanned hand: each card's label reads on its own, as on the round
page's boxed key frames (QA49 watch L4 was fixed there only; the dealer's live view still ran
"2S 0.83QH 0.76 10D 0.7 JC 0.81" together)."""

from __future__ import annotations

import itertools

import cv2
import numpy as np

from scoring.cards import Card
from vision.corners import Detection
from vision.overlay_labels import label_font, label_places
from vision.pipeline import draw_overlay
from vision.table import TableConfig, table_config_from_dict
from vision.tracker import SeatTracker

# Five cards fanned 28 px apart on a 1280 x 720 frame (the banker's hand of QA49's frame 1873).
FAN = [("2S", 0.83), ("QH", 0.76), ("10D", 0.70), ("JC", 0.81), ("9H", 0.90)]
DETECTIONS = [Detection(Card.parse(code), conf, (400 + 28 * i, 300, 490 + 28 * i, 430))
              for i, (code, conf) in enumerate(FAN)]
BLACK = np.zeros((720, 1280, 3), np.uint8)


def legible(channel: np.ndarray, text: str) -> float:
    """How well ``text``, drawn alone in the overlay's font, matches its best place in one colour
    channel of the frame (1.0: every pixel of it as drawn alone; a label over it brings it down)."""
    size, thickness = label_font(1280, 720)
    (w, h), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, size, thickness)
    alone = np.zeros((h + base + 6, w + 6), np.uint8)
    cv2.putText(alone, text, (3, h + 3), cv2.FONT_HERSHEY_SIMPLEX, size, 200, thickness, cv2.LINE_AA)
    return float(cv2.matchTemplate(channel, alone, cv2.TM_CCOEFF_NORMED).max())


def test_each_label_of_a_fanned_hand_reads_on_its_own_in_the_live_view():
    drawn = draw_overlay(BLACK, TableConfig.model_construct(seats=[]), DETECTIONS)
    scores = {code: legible(drawn[:, :, 1], f"{code} {conf:.2f}") for code, conf in FAN}
    assert all(score > 0.9 for score in scores.values()), scores     # was 0.6-0.8: labels ran together
    places = label_places(DETECTIONS, 1280, 720)
    for a, b in itertools.combinations(places, 2):
        assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (a, b)


def test_a_card_outside_every_zone_keeps_its_own_colour_and_label():
    """The placement moved the labels, not their colours: the fan's last card lies outside the
    banker's zone and is still drawn in the uncounted colour, the others green."""
    config = table_config_from_dict({"table_id": "t", "rules": "cambodia", "seats": [
        {"name": "banker", "polygon": [[0, 0], [0.42, 0], [0.42, 1], [0, 1]]},    # to x = 537: 9H's centre is 557
        {"name": "1", "polygon": [[0.8, 0], [1, 0], [1, 1], [0.8, 1]]}]})
    drawn = draw_overlay(BLACK, config, DETECTIONS, SeatTracker(config))
    blue, green, red = (drawn[:, :, i].astype(int) for i in range(3))
    reds = (red > 150) & (green < 80)
    greens = (green > 150) & (red < 80) & (blue < 80)          # not the zone's cyan line
    for (code, _), (left, top, right, _) in zip(FAN, label_places(DETECTIONS, 1280, 720)):
        body = np.s_[top:top + 10, left:right]                 # the text's letters, above any box line
        red_px, green_px = int(reds[body].sum()), int(greens[body].sum())
        assert (red_px > green_px) if code == "9H" else (green_px > red_px), (code, red_px, green_px)
