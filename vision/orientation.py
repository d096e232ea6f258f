"""Which way an index faces, and its crop turned upright.

A corner index lies at any angle on the table, and a classifier that must learn every
angle spends its capacity on turns instead of glyphs: a 6 turned half round is a 9 but
for its pip, a 10 on its side is "OI".  A small orientation model reads the angle from the
index crop the detector frames (it learns from the scenes, where every index's angle is
known), and the card classifier reads a crop turned by that angle, so it sees indices
standing up (within the orientation model's error, which its training crops carry too).

Angles are the direction the top of the index faces, in image degrees (x right, y down):
270 is upright, 90 upside down.  The orientation model's classes are ``a000`` .. ``a350``,
one per ``ANGLE_STEP`` degrees.
"""

from __future__ import annotations

import cv2
import numpy as np

ANGLE_STEP = 10
ANGLE_CLASSES = tuple(f"a{a:03d}" for a in range(0, 360, ANGLE_STEP))
UPRIGHT = 270.0
# The bins read into the angle: those within this many degrees of the likeliest one (its
# neighbours share the probability of an index that lies between two bins).
ANGLE_SPREAD = 30.0
# An upright training crop is turned by the true angle plus this much error (degrees, one
# sigma), so the classifier learns the orientation model's misses, not a perfect turn.
TRAIN_TURN_ERROR = 10.0
# The square cut around an index box, as ``index_crop`` cuts it: a little larger than the box.
CROP_MARGIN = 1.15


def angle_of_class(name: str) -> float:
    return float(name[1:])


def class_of_angle(angle: float) -> str:
    return ANGLE_CLASSES[int(round((angle % 360) / ANGLE_STEP)) % len(ANGLE_CLASSES)]


def read_angle(probs: np.ndarray, angles: np.ndarray) -> float:
    """The index's angle from one reading of the orientation model: the probability-weighted
    circular mean of the bins near the likeliest, so an index between two bins reads between."""
    best = angles[int(np.argmax(probs))]
    offset = (angles - best + 180.0) % 360.0 - 180.0
    near = np.abs(offset) <= ANGLE_SPREAD
    weight = probs[near].sum()
    return float((best + (probs[near] * offset[near]).sum() / weight) % 360.0) if weight > 0 else float(best)


def up_angle(quad: np.ndarray, upside_down: bool) -> float:
    """The angle the top of an index faces, from its outline in face order (top-left, top-right,
    bottom-right, bottom-left of the face) and whether it is printed turned half round."""
    q = np.asarray(quad, np.float64)
    up = (q[0] + q[1]) / 2 - (q[3] + q[2]) / 2
    if upside_down:
        up = -up
    return float(np.degrees(np.arctan2(up[1], up[0])) % 360.0)


def box_frame(box, rng: np.random.Generator | None = None) -> tuple[float, float, float]:
    """The square a crop cuts around an index box: centre x, centre y and side, a little
    larger than the box.  Training crops pass ``rng``: a larger square, off centre, as a
    detector's box is never exactly the printed index."""
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    side = max(x1 - x0, y1 - y0) * CROP_MARGIN
    if rng is not None:
        side *= rng.uniform(0.95, 1.3)
        cx += rng.normal(0, 0.07) * side
        cy += rng.normal(0, 0.07) * side
    return cx, cy, side


def square_crop(image: np.ndarray, centre, side: float, size: int, up=(0.0, -1.0)) -> np.ndarray:
    """The ``side`` square around ``centre`` resized to ``size``, its top the image direction
    ``up`` (a unit vector; the default, straight up, is the square as the image holds it),
    padded by edge replication."""
    up = np.asarray(up, np.float64)
    right = np.array([-up[1], up[0]])
    half, c = side / 2, np.asarray(centre, np.float64)
    src = np.float32([c - half * right + half * up, c + half * right + half * up, c - half * right - half * up])
    m = cv2.getAffineTransform(src, np.float32([[0, 0], [size, 0], [0, size]]))
    return cv2.warpAffine(image, m, (size, size), flags=cv2.INTER_AREA if side > size else cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_REPLICATE)


def upright_crop(image: np.ndarray, box, angle: float, size: int, rng: np.random.Generator | None = None) -> np.ndarray:
    """The square ``index_crop`` cuts around ``box``, turned so the index's top faces up.

    Training crops pass ``rng``: the same framing jitter as ``index_crop`` and a turn off by
    ``TRAIN_TURN_ERROR``, so the classifier learns what the orientation model delivers."""
    cx, cy, side = box_frame(box, rng)
    if rng is not None:
        angle += rng.normal(0, TRAIN_TURN_ERROR)
    rad = np.radians(angle)
    return square_crop(image, (cx, cy), side, size, (np.cos(rad), np.sin(rad)))
