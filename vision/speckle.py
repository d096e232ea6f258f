"""Is a photo speckled with salt-and-pepper noise?  Then it is read through a median filter.

Photo sets add impulse noise as augmentation (Roboflow's "Noise" sets up to a quarter of
a photo's pixels black or white), and a damaged sensor or a bad transmission leaves such
specks too.  No camera the model learnt from makes them: with 5% of their pixels speckled,
v14 read 286 of the 451 real photos fully right against 443 as they are, and half the
poker4 cards.  A 3 x 3 median filter takes a lone speck out and leaves an index stroke
(wider than one pixel) standing: the same photos through it, 435 (models/README.md,
"Thirtieth session").

The filter is not run on every photo: it rounds a small index's corners, and a clean
photo has nothing to gain.  A speck is a pixel brighter than all eight of its neighbours,
or darker than all of them, by ``SPECK_STEP`` in some channel — a card edge, a thin line
or a letter's stroke always has a neighbour of its own shade, a lone speck never.  Clean
real photos have under 0.003% such pixels, the rendered held-out scenes (hard-edged art,
JPEG 40) under 0.13%, and 1% salt and pepper makes over 0.49% of them (a speck on paper
of its own shade does not show), so ``SPECKLED_SHARE`` lies between.
"""

from __future__ import annotations

import cv2
import numpy as np

SPECK_STEP = 60
SPECKLED_SHARE = 0.0025
MEDIAN_SIDE = 3
_RING = np.ones((3, 3), np.uint8)
_RING[1, 1] = 0   # the eight neighbours, not the pixel itself


def speck_share(image: np.ndarray) -> float:
    """The share of ``image``'s pixels (BGR) that stand out from all eight neighbours."""
    above = cv2.subtract(image, cv2.dilate(image, _RING))   # uint8, so 0 where not above
    below = cv2.subtract(cv2.erode(image, _RING), image)
    b, g, r = cv2.split(cv2.max(above, below))
    most = cv2.max(cv2.max(b, g), r)
    return cv2.countNonZero(cv2.threshold(most, SPECK_STEP, 255, cv2.THRESH_BINARY)[1]) / most.size


def despeckled(image: np.ndarray) -> np.ndarray:
    """``image`` through a median filter if it is speckled, else ``image`` itself (the same
    pixels, the same geometry: boxes found in either are boxes in the photo).  Only 8-bit
    photos are judged: the share and its threshold are in 8-bit steps."""
    if image.dtype != np.uint8 or speck_share(image) <= SPECKLED_SHARE:
        return image
    return cv2.medianBlur(image, MEDIAN_SIDE)


def add_specks(image: np.ndarray, share: float, rng: np.random.Generator) -> np.ndarray:
    """``image`` with ``share`` of its pixels set black or white, half each, all channels
    alike: how a set augmented with salt-and-pepper noise shows a photo (``niuniu evaluate
    --speckle``)."""
    at = rng.random(image.shape[:2])
    out = image.copy()
    out[at < share / 2] = 0
    out[at > 1 - share / 2] = 255
    return out
