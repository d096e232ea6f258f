"""QA53 M2: the dealer's camera view told a counted detection (in a seat zone) from one no seat
counts (outside every zone) only by green versus red, the same olive under deuteranopia: a
colour-blind dealer could not see that a seat's missing fifth card lay outside its zone.  The
uncounted one now says "(no seat)" and is dashed, whatever colours the eye sees."""

from __future__ import annotations

import cv2
import numpy as np

from scoring.cards import Card
from vision.corners import Detection
from vision.overlay_labels import label_font
from vision.pipeline import draw_overlay
from vision.table import table_config_from_dict
from vision.tracker import SeatTracker

CONFIG = table_config_from_dict({"table_id": "t", "rules": "cambodia", "seats": [
    {"name": "banker", "polygon": [[0, 0], [0.4, 0], [0.4, 1], [0, 1]]},          # to x = 512
    {"name": "1", "polygon": [[0.45, 0.8], [1, 0.8], [1, 1], [0.45, 1]]}]})     # below y = 576
IN_SEAT = Detection(Card.parse("KH"), 0.97, (200, 300, 290, 430))
NO_SEAT = Detection(Card.parse("7S"), 0.91, (700, 300, 790, 430))
AT_THE_EDGE = Detection(Card.parse("10D"), 0.88, (1190, 300, 1279, 430))       # its label must not run off
BLACK = np.zeros((720, 1280, 3), np.uint8)


def reads(drawn: np.ndarray, text: str, box: tuple[float, float, float, float]) -> float:
    """How well ``text``, drawn alone in the overlay's font, matches its best place in the band
    just above ``box`` (where its label goes: nothing else is above these cards) of the frame seen
    in grey, as an eye blind to its colour sees it (1.0: every stroke of it, unclipped)."""
    size, thickness = label_font(1280, 720)
    (w, h), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, size, thickness)
    alone = np.zeros((h + base + 2, w + 6), np.uint8)                 # fits the band's 4 px to the box
    cv2.putText(alone, text, (3, h + 1), cv2.FONT_HERSHEY_SIMPLEX, size, 200, thickness, cv2.LINE_AA)
    grey = cv2.cvtColor(drawn, cv2.COLOR_BGR2GRAY)
    x1, y1 = int(box[0]), int(box[1])
    band = np.pad(grey[y1 - 40:y1, max(0, x1 - 200):x1 + 220], 4)     # a label flush with the frame's edge
    return float(cv2.matchTemplate(band, alone, cv2.TM_CCOEFF_NORMED).max())


def edge_drawn(drawn: np.ndarray, box: tuple[float, float, float, float]) -> float:
    """How much of a box's top and bottom edges is drawn (1.0: a solid line)."""
    x1, y1, x2, y2 = (int(v) for v in box)
    grey = cv2.cvtColor(drawn, cv2.COLOR_BGR2GRAY)
    edges = np.concatenate([grey[y1, x1 + 1:x2], grey[y2, x1 + 1:x2]])
    return float((edges > 40).mean())


def test_a_detection_outside_every_zone_says_no_seat_and_one_inside_does_not():
    drawn = draw_overlay(BLACK, CONFIG, [IN_SEAT, NO_SEAT, AT_THE_EDGE], SeatTracker(CONFIG))
    assert reads(drawn, "7S 0.91 (no seat)", NO_SEAT.box) > 0.9          # was "7S 0.91" only, in red
    assert reads(drawn, "10D 0.88 (no seat)", AT_THE_EDGE.box) > 0.9     # whole, at the frame's edge
    assert reads(drawn, "KH 0.97", IN_SEAT.box) > 0.9
    assert reads(drawn, "KH 0.97 (no seat)", IN_SEAT.box) < 0.8          # the counted card is not marked


def test_a_detection_outside_every_zone_is_dashed_and_one_inside_is_solid():
    drawn = draw_overlay(BLACK, CONFIG, [IN_SEAT, NO_SEAT], SeatTracker(CONFIG))
    assert edge_drawn(drawn, IN_SEAT.box) > 0.95
    assert 0.3 < edge_drawn(drawn, NO_SEAT.box) < 0.75                  # was solid, as the counted one
    x1, y1, x2, y2 = (int(v) for v in NO_SEAT.box)
    grey = cv2.cvtColor(drawn, cv2.COLOR_BGR2GRAY)
    assert all(grey[y, x] > 40 for x, y in ((x1, y1), (x2, y1), (x1, y2), (x2, y2)))   # its corners show


def test_the_two_box_colours_differ_in_lightness_too():
    """Measured on the drawn pixels: the old green and red (L* 70 and 53) became the same olive
    under deuteranopia; lightness is what every kind of colour vision still sees."""
    drawn = draw_overlay(BLACK, CONFIG, [IN_SEAT, NO_SEAT], SeatTracker(CONFIG))
    lab = cv2.cvtColor(drawn, cv2.COLOR_BGR2LAB)
    lightness = [int(lab[int(d.box[1]), int(d.box[0]) + 2, 0]) * 100 // 255 for d in (IN_SEAT, NO_SEAT)]
    assert lightness[0] - lightness[1] >= 20, lightness
