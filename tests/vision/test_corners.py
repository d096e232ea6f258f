"""Which corner readings are one physical card, and which card box is whose (vision.corners).

Readings are written by hand here: the rules decide what a dealer sees counted, and each
test is a table situation one of the rules was written for (models/README.md).
"""

from __future__ import annotations

import numpy as np

from scoring.cards import CARD_CODES, Card
from vision.corners import merge_corners

CODES = sorted(CARD_CODES)


def _probs(winner: str, p: float = 0.9, runner_up: str | None = None, q: float = 0.0) -> np.ndarray:
    others = 51 if runner_up is None else 50
    out = np.full(52, (1 - p - q) / others)
    out[CODES.index(winner)] = p
    if runner_up is not None:
        out[CODES.index(runner_up)] = q
    return out


def _read(corners: list[tuple[tuple, str | np.ndarray]], card_boxes: list[tuple]) -> list[str]:
    """Merge corners given as a card code (read at 0.9) or as the classifier's probabilities."""
    probs = np.stack([p if isinstance(p, np.ndarray) else _probs(p) for _, p in corners])
    return sorted(d.card.code for d in merge_corners(
        [(box, 0.9) for box, _ in corners], probs.argmax(axis=1), probs,
        [(cb, 0.9) for cb in card_boxes], [Card.parse(c) for c in CODES]))


def test_two_corners_of_one_card_read_differently_count_once():
    """Glare on one corner: it reads QD first, QH second, and the other corner the other
    way round; the card is one card, named by both readings together."""
    card = (100.0, 100.0, 300.0, 380.0)
    corners = [((105.0, 105.0, 135.0, 155.0), _probs("QH", 0.6, "QD", 0.35)),
               ((265.0, 325.0, 295.0, 375.0), _probs("QD", 0.55, "QH", 0.4))]
    assert _read(corners, [card]) == ["QH"]


def test_confident_readings_at_the_two_ends_of_one_card_box_stay_two_cards():
    """A fanned hand: the top card's upright box also holds the far corner of the card
    beside it.  Both corners read confidently, as different cards: two cards, not one
    card too doubtful to report (the geometry alone cannot tell the two cases apart)."""
    top_card = (100.0, 100.0, 300.0, 380.0)
    corners = [((105.0, 105.0, 135.0, 155.0), "QH"), ((265.0, 325.0, 295.0, 375.0), "6H")]
    assert _read(corners, [top_card]) == ["6H", "QH"]


def test_neighbours_in_a_fanned_hand_inside_one_box_stay_two_cards():
    box = (100.0, 100.0, 360.0, 380.0)   # a loose box over two overlapped cards
    corners = [((105.0, 105.0, 135.0, 155.0), "QH"), ((150.0, 105.0, 180.0, 155.0), "7S")]
    assert _read(corners, [box]) == ["7S", "QH"]


def _boxes(corners: list[tuple[tuple, str]], card_boxes: list[tuple]) -> dict[str, tuple]:
    """Each card read from ``corners`` (code, read at 0.9) with the box it is reported in."""
    probs = np.stack([_probs(code) for _, code in corners])
    return {d.card.code: d.box for d in merge_corners(
        [(box, 0.9) for box, _ in corners], probs.argmax(axis=1), probs,
        [(cb, 0.9) for cb in card_boxes], [Card.parse(c) for c in CODES])}


def test_each_card_of_an_overlapped_row_is_boxed_on_itself():
    """A real photo (edje IMG_2603): A, 10, K in a row, each half under the next.  The
    detector's box for the ace is too wide and also holds the ten's corner; the ten has a
    box of its own, so the ace keeps the one that only it can have."""
    ace, ten, king = (16.0, 211.0, 176.0, 392.0), (99.0, 202.0, 249.0, 405.0), (203.0, 210.0, 374.0, 405.0)
    corners = [((33.0, 222.0, 49.0, 259.0), "AS"), ((133.0, 209.0, 152.0, 247.0), "10C"),
               ((214.0, 222.0, 228.0, 256.0), "KD"), ((342.0, 352.0, 362.0, 393.0), "KD")]
    assert _boxes(corners, [king, ace, ten]) == {"AS": ace, "10C": ten, "KD": king}


def test_a_corner_deep_inside_another_cards_box_is_not_given_that_box():
    """A card half under the top card shows one corner well inside the top card's box: that
    box is the top card's (its own corner sits at the edge), the lower card keeps its corner."""
    top = (490.0, 770.0, 740.0, 1005.0)
    under_corner = (585.0, 870.0, 605.0, 915.0)
    boxes = _boxes([((625.0, 780.0, 655.0, 825.0), "KS"), (under_corner, "AS")], [top])
    assert boxes == {"KS": top, "AS": under_corner}


def test_a_far_cards_corner_is_not_merged_into_a_large_reading_of_the_same_card_elsewhere():
    """A close card beside far ones (the real poker4 photos measured so): a pip of the close
    card, 200 px tall, read as 8D, lies within nine of its own sizes of the far 8D's index,
    25 px tall.  The two indices of one card show at about one size, so the far 8D keeps its
    own box and is not reported spanning both cards (its centre off the card it is)."""
    big, small = (100.0, 100.0, 240.0, 300.0), (1000.0, 500.0, 1015.0, 525.0)
    probs = np.stack([_probs("8D"), _probs("8D")])
    found = merge_corners([(big, 0.9), (small, 0.9)], probs.argmax(axis=1), probs, [],
                          [Card.parse(c) for c in CODES])
    assert sorted(d.box for d in found) == [big, small]
