"""Corner readings to cards: the two corners of one card merged into one :class:`Detection`.

The detector finds printed corner indices (the part of a card a fanned hand leaves
showing) and whole cards where they are mostly visible; the classifier reads each index.
Counting readings would count corners, so this module decides which readings are one
physical card, and which card box is whose.  It is kept apart from the detector because
it is pure geometry and probability (no model, no image): the rules here are the ones
most often tuned against the measured hands (models/README.md), and they are tested on
readings written by hand.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from scoring.cards import Card

# How far inside a card's box its corner index may sit, in index sizes (centre to the
# nearest edge): a corner deeper inside belongs to a card under this one (see _card_box_of_each).
CORNER_INSET = 1.5
# The two indices of one card are printed alike, so they show at about one size: a tilt, or
# one of them partly covered, makes one smaller, not several times smaller.  Readings of one
# card whose index boxes differ more than this are two things, however near (a close card's
# pip read as a far card's code: its nine-index-sizes reach spans the whole photo).
CORNER_SIZE_RATIO = 3.0


@dataclass(frozen=True, slots=True)
class Detection:
    """One physical card seen in one frame.

    ``box`` is ``(x1, y1, x2, y2)`` in pixels of the frame the detector was given:
    the whole card when it was found, otherwise the union of its visible indices.
    ``lone`` marks a card seen by one corner index only, with no card box of its own:
    what a pip, court art or table print taken for an index looks like, so a photo
    reports it only at a higher confidence (``vision.detector.LONE_REPORT_CONF``).  It is not recorded:
    a replay's detections are already the ones that were kept.
    """

    card: Card
    conf: float
    box: tuple[float, float, float, float]
    lone: bool = field(default=False, compare=False)

    def to_json(self) -> dict:
        return {"card": self.card.code, "conf": round(float(self.conf), 4),
                "box": [round(float(v), 1) for v in self.box]}

    @classmethod
    def from_json(cls, data: dict) -> "Detection":
        return cls(Card.parse(data["card"]), float(data["conf"]), tuple(float(v) for v in data["box"]))


def _contains(box, point, slack: float = 0.0) -> bool:
    return box[0] - slack <= point[0] <= box[2] + slack and box[1] - slack <= point[1] <= box[3] + slack


def _share_a_card_box(p, q, cards) -> bool:
    return any(_contains(cb, p, 2) and _contains(cb, q, 2) for cb, _ in cards)


def merge_corners(indices, labels, probs, cards, card_of_class) -> list[Detection]:
    """One Detection per physical card.

    Corners read as the same card are one physical card when they are close enough
    to sit on one card (a single deck has one of each card).  Corners read as
    *different* cards are still one card when each reading finds the other's
    plausible and they share a detected card box: that is one corner misread (a
    smudge, glare, a finger), not two cards.  Corners read confidently as different
    cards stay two cards even where they look like the two ends of one card box: in a
    fanned hand the top card's upright box also holds its neighbour's far corner,
    one fan step from the top card's own hidden one.  Merging those by geometry lost
    both cards (measured: 13 of 458 held-out hand cards, 8 of 250 hands), while a
    corner misread confidently gives a merged card too doubtful to report anyway.
    """
    groups: list[dict] = []
    for (box, det_conf), label, p in zip(indices, labels, probs):
        centre = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
        size = max(box[2] - box[0], box[3] - box[1])
        logp = np.log(np.clip(p, 1e-6, 1.0))
        for g in groups:
            if g["label"] != label:
                continue
            near = (math.dist(centre, g["centre"]) <= 9 * max(size, g["size"])
                    and max(size, g["size"]) <= CORNER_SIZE_RATIO * min(size, g["size"]))
            if near or _share_a_card_box(centre, g["centre"], cards):
                _absorb(g, box, det_conf, logp)
                break
        else:
            groups.append({"label": int(label), "centre": centre, "size": size, "boxes": [box],
                           "det": det_conf, "logp": logp})
    merged = True
    while merged:
        merged = False
        for i, a in enumerate(groups):
            for b in groups[i + 1:]:
                joint = a["logp"] + b["logp"]
                best = int(joint.argmax())
                agree = joint[best] > math.log(0.05) * (len(a["boxes"]) + len(b["boxes"])) / 2
                if agree and _share_a_card_box(a["centre"], b["centre"], cards):
                    for box in b["boxes"]:
                        a["boxes"].append(box)
                    a["logp"], a["det"], a["label"] = joint, max(a["det"], b["det"]), best
                    groups.remove(b)
                    merged = True
                    break
            if merged:
                break
    out = []
    for g, box in zip(groups, _card_box_of_each(groups, cards)):
        n = len(g["boxes"])
        cls_conf = float(np.exp(g["logp"][g["label"]] / n))  # geometric mean over the corners
        lone = box is None and n == 1
        if box is None:
            xs0, ys0, xs1, ys1 = zip(*g["boxes"])
            box = (min(xs0), min(ys0), max(xs1), max(ys1))
        out.append(Detection(card_of_class[g["label"]], round(g["det"] * cls_conf, 4), tuple(float(v) for v in box),
                             lone))
    out.sort(key=lambda d: (d.box[1], d.box[0]))
    return out


def _card_box_of_each(groups, cards) -> list[tuple | None]:
    """Each card's detected whole-card box, or ``None`` (its corner boxes stand in).

    A card's box holds all its corners, each near the box's edge: every corner of a card,
    however turned, touches its upright bounding box, and the index sits just inside it.
    A box is one physical card's, and as many cards as can get a box of their own get one
    (a matching, not first come first served): in a row of cards the corner of one lies
    inside its neighbour's box too, near the same edge, and the card with no other box
    must keep it.  Before this, a card half under another was given the top card's box
    (real photos: 11 of the 20 not read fully right had a card read right but boxed on
    its neighbour).  Cards with more corners choose first, each the smaller box first."""
    options: dict[int, list[int]] = {}
    for gi, g in enumerate(groups):
        centres = [((b[0] + b[2]) / 2, (b[1] + b[3]) / 2) for b in g["boxes"]]
        size = max(max(b[2] - b[0], b[3] - b[1]) for b in g["boxes"])
        fits = []
        for ci, (cb, _) in enumerate(cards):
            if all(_contains(cb, c, 2) for c in centres):
                inset = max(min(c[0] - cb[0], cb[2] - c[0], c[1] - cb[1], cb[3] - c[1]) for c in centres)
                if inset <= CORNER_INSET * size:
                    fits.append(((cb[2] - cb[0]) * (cb[3] - cb[1]), inset, ci))
        options[gi] = [ci for *_, ci in sorted(fits)]
    owner: dict[int, int] = {}

    def claim(gi: int, tried: set) -> bool:
        """Give card ``gi`` a box, moving a holder to another of its boxes if it has one."""
        for ci in options[gi]:
            if ci not in tried:
                tried.add(ci)
                if ci not in owner or claim(owner[ci], tried):
                    owner[ci] = gi
                    return True
        return False

    for gi in sorted(options, key=lambda gi: -len(groups[gi]["boxes"])):
        claim(gi, set())
    chosen: list[tuple | None] = [None] * len(groups)
    for ci, gi in owner.items():
        chosen[gi] = cards[ci][0]
    return chosen


def _absorb(group: dict, box, det_conf: float, logp: np.ndarray) -> None:
    group["boxes"].append(box)
    group["det"] = max(group["det"], det_conf)
    group["logp"] = group["logp"] + logp
