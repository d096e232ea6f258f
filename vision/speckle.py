"""Is a photo speckled with salt-and-pepper noise?  Then its specks are filtered out first.

Photo sets add impulse noise as augmentation (Roboflow's "Noise" sets up to a quarter of
a photo's pixels black or white), and a damaged sensor or a bad transmission leaves such
specks too.  No camera the model learnt from makes them: with 5% of their pixels speckled,
the real photos read 259 of 451 fully right against 443 as they are, and held-out table
hands 51 of 250 against 204 (models/README.md, "Thirtieth session").

**Is it speckled?**  A speck is a pixel brighter than all eight of its neighbours, or darker
than all of them, by ``SPECK_STEP`` in some channel — a card edge, a thin line or a letter's
stroke always has a neighbour of its own shade, a lone speck never.  Clean real photos have
under 0.003% such pixels, the rendered held-out scenes (hard-edged art, JPEG 40) under 0.13%,
and 1% of salt and pepper makes over 0.49% of them (a speck on paper of its own shade does
not show), so ``SPECKLED_SHARE`` lies between.  A clean photo is read as it is.

**The filter** replaces only the specks by their 3 x 3 median, twice (where specks cluster,
the first pass's median can itself be one).  A pixel counts as a speck
here when at most one neighbour is as bright (or as dark) as it, give or take
``REPLACE_STEP``: so two specks side by side go too, and a one-pixel index stroke, which has
two neighbours of its shade along it, stays.  A plain 3 x 3 median over the whole photo
rounds such strokes off small indices: table hands 181 of 250 through it, 204 through this.
Where specks are dense (``speck_density`` over ``DENSE_SPECKS``: more than about one pixel in
eight) they crowd into clumps with neighbours of their own shade, which only a median over
every pixel reaches: real poker4 photos with 20% speckled, 37 of 44 fully right through it,
17 through the specks-only filter (15%: 39 against 34; 10%: 43 against 42).
"""

from __future__ import annotations

import cv2
import numpy as np

SPECK_STEP = 60
SPECKLED_SHARE = 0.0025
REPLACE_STEP = 40
FILTER_PASSES = 2
DENSE_SPECKS = 0.12
_NEIGHBOURS = [(dy, dx) for dy in range(3) for dx in range(3) if (dy, dx) != (1, 1)]
_RING = np.ones((3, 3), np.uint8)
_RING[1, 1] = 0   # the eight neighbours, not the pixel itself


def speck_share(image: np.ndarray) -> float:
    """The share of ``image``'s pixels (BGR) that stand out from all eight neighbours."""
    above = cv2.subtract(image, cv2.dilate(image, _RING))   # uint8, so 0 where not above
    below = cv2.subtract(cv2.erode(image, _RING), image)
    b, g, r = cv2.split(cv2.max(above, below))
    most = cv2.max(cv2.max(b, g), r)
    return cv2.countNonZero(cv2.threshold(most, SPECK_STEP, 255, cv2.THRESH_BINARY)[1]) / most.size


def lone_pixels(image: np.ndarray) -> np.ndarray:
    """Where ``image`` has a pixel with at most one neighbour as bright as it, or at most one
    as dark, give or take ``REPLACE_STEP`` in some channel: a speck, or two side by side."""
    h, w = image.shape[:2]
    padded = cv2.copyMakeBorder(image, 1, 1, 1, 1, cv2.BORDER_REPLICATE).astype(np.int16)
    own = padded[1:-1, 1:-1]
    as_bright = np.zeros(image.shape, np.uint8)
    as_dark = np.zeros(image.shape, np.uint8)
    for dy, dx in _NEIGHBOURS:
        other = padded[dy:dy + h, dx:dx + w]
        as_bright += other + REPLACE_STEP >= own
        as_dark += other - REPLACE_STEP <= own
    return ((as_bright <= 1) | (as_dark <= 1)).any(axis=2)


def speck_density(image: np.ndarray, median: np.ndarray) -> float:
    """The share of ``image``'s pixels that are specks, estimated where both salt and pepper
    show: on pixels whose 3 x 3 ``median`` is a mid tone in every channel (-1 where under 1%
    of the photo is).  Unlike ``speck_share`` it does not saturate as specks crowd together:
    on 33 real and rendered photos it read 0.05-0.08 at 5% of specks, 0.10-0.13 at 10%,
    0.15-0.19 at 15%, 0.24-0.29 at 25%."""
    mid = cv2.inRange(median, (51, 51, 51), (204, 204, 204)) > 0
    if mid.mean() < 0.01:
        return -1.0
    off = cv2.absdiff(image, median).max(axis=2) > SPECK_STEP
    return float(off[mid].mean())


def despeckled(image: np.ndarray) -> np.ndarray:
    """``image`` with its specks filtered out if it is speckled, else ``image`` itself (the
    same geometry either way: boxes found in it are boxes in the photo).  Only 8-bit photos
    are judged: the share and its thresholds are in 8-bit steps."""
    if image.dtype != np.uint8 or speck_share(image) <= SPECKLED_SHARE:
        return image
    median = cv2.medianBlur(image, 3)
    if speck_density(image, median) > DENSE_SPECKS:
        return median   # specks crowd into clumps that have neighbours of their shade
    for done in range(FILTER_PASSES):
        if done:
            median = cv2.medianBlur(image, 3)
        image = np.where(lone_pixels(image)[..., None], median, image)
    return image


def add_specks(image: np.ndarray, share: float, rng: np.random.Generator) -> np.ndarray:
    """``image`` with ``share`` of its pixels set black or white, half each, all channels
    alike: how a set augmented with salt-and-pepper noise shows a photo (``niuniu evaluate
    --speckle``)."""
    at = rng.random(image.shape[:2])
    out = image.copy()
    out[at < share / 2] = 0
    out[at > 1 - share / 2] = 255
    return out
