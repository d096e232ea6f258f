"""Motion gate: read a seat's crop again only when the picture in it changed.

The detector dominates a frame's cost and is run on every seat's crop, yet the dealer
deals one card at a time: most seats look exactly as they did when last read.  So, as
Frigate does before its object detector, each crop is compared with a small reference
image taken when it was last read, and only crops that changed are read again.  The
others keep the detections of their last read, so the tracker still gets the whole
table every frame and its k-of-n voting, recording and replay work unchanged.

A reading is reused only once it is trusted: a crop that changed is read on every frame
until ``settle_reads`` reads in a row agreed on its cards (the tracker's ``k``).  The
tracker accepts a card seen in k of its last n frames, assuming each frame is a fresh
look; repeating one read instead would turn a single misread, or a one-frame
reflection, into an accepted card.  After k agreeing reads the tracker has had its k
real votes, and repeating the last of them changes nothing it would not have seen.

A change that stays below the thresholds (slow light drift, a card nudged a pixel) is
caught by the refresh: a crop unread for ``refresh_frames`` frames is read anyway.  At
most one crop is refreshed per frame, the one unread longest, so refreshes are spread
over frames instead of costing a full read of the table at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import cv2
import numpy as np

from vision.corners import Detection
from vision.table import centre_in

Region = tuple[int, int, int, int]
SCALE = 4
"""Compare at a quarter of the frame's size: a corner index is still a few pixels there,
while per-pixel sensor noise is averaged over 16 pixels before it is compared."""


def small_grey(image: np.ndarray) -> np.ndarray:
    """The frame as the gate compares it: grey, downscaled by area, lightly blurred.

    Area averaging and the 3x3 blur take the sensor's per-pixel noise (and JPEG's block
    edges) down to a level or two, far below the per-pixel threshold, while a card or a
    hand (tens of levels against the felt) still differs by far more than it.
    """
    height, width = image.shape[:2]
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    small = cv2.resize(grey, (max(1, width // SCALE), max(1, height // SCALE)), interpolation=cv2.INTER_AREA)
    return cv2.GaussianBlur(small, (3, 3), 0)


def changed(reference: np.ndarray, patch: np.ndarray, pixel_threshold: int, min_area: float) -> bool:
    """True when at least ``min_area`` of the patch differs from the reference by more than
    ``pixel_threshold`` grey levels.

    Frigate's defaults are the model: a per-pixel threshold of about 25-30 levels ignores
    noise, JPEG and small exposure flicker, and an area floor ignores a few hot pixels;
    what is left is something that moved.  The area is a fraction of the crop so a far,
    small seat and a near, large one need a change of about the same part of a card.
    """
    diff = cv2.absdiff(reference, patch)
    return np.count_nonzero(diff > pixel_threshold) >= max(1.0, min_area * diff.size)


def _overlaps(box, region: Region) -> bool:
    return box[0] < region[2] and region[0] < box[2] and box[1] < region[3] and region[1] < box[3]


class MotionGate:
    """Which crops the detector reads this frame, and the table's detections after it did.

    Not thread-safe: one gate belongs to one pipeline's frame loop.
    """

    def __init__(self, pixel_threshold: int = 25, min_area: float = 0.005, refresh_frames: int = 30,
                 settle_reads: int = 3, min_conf: float = 0.5) -> None:
        self.pixel_threshold, self.min_area, self.refresh_frames = pixel_threshold, min_area, refresh_frames
        self.settle_reads, self.min_conf = settle_reads, min_conf
        self.last_read = 0   # crops read in the latest frame
        self._key: tuple | None = None
        self._references: list[np.ndarray | None] = []
        self._unread_for: list[int] = []
        self._cards: list[list[str] | None] = []   # per crop: the cards its last read found
        self._agreed: list[int] = []               # per crop: reads in a row that found those cards
        self._detections: list[Detection] = []

    def read(self, image: np.ndarray, regions: Sequence[Region],
             detect: Callable[..., list[Detection]]) -> list[Detection]:
        """Run ``detect(image, regions=...)`` on the crops that need it; the whole table's detections.

        Nothing is remembered if ``detect`` raises, so a failed frame is read again next time.
        """
        key = (image.shape, tuple(regions))
        if key != self._key:  # a new frame size or new zones: cached boxes are in other pixels
            self._key, self._detections = key, []
            self._references, self._cards = [None] * len(regions), [None] * len(regions)
            self._unread_for, self._agreed = [0] * len(regions), [0] * len(regions)
        small = small_grey(image)
        unread_for = [n + 1 for n in self._unread_for]  # frames since the last read, this one included
        patches = [small[y0 // SCALE:-(-y1 // SCALE), x0 // SCALE:-(-x1 // SCALE)] for x0, y0, x1, y1 in regions]
        due = [i for i, (ref, patch) in enumerate(zip(self._references, patches))
               if ref is None or self._agreed[i] < self.settle_reads
               or changed(ref, patch, self.pixel_threshold, self.min_area)]
        stale = [i for i in range(len(regions)) if i not in due and unread_for[i] >= self.refresh_frames]
        if stale:
            due.append(max(stale, key=lambda i: (unread_for[i], -i)))
        read = [regions[i] for i in due]
        fresh = list(detect(image, regions=read)) if read else []
        self._detections = merge(self._detections, fresh, read)
        for i in due:
            self._references[i], unread_for[i] = patches[i], 0
            cards = sorted(d.card.code for d in fresh
                           if d.conf >= self.min_conf and centre_in(d.box, regions[i]))
            self._agreed[i] = self._agreed[i] + 1 if cards == self._cards[i] else 1
            self._cards[i] = cards
        self._unread_for = unread_for
        self.last_read = len(read)
        return list(self._detections)


def merge(cached: list[Detection], fresh: list[Detection], read: Sequence[Region]) -> list[Detection]:
    """The fresh detections plus the cached ones the re-read could not have seen.

    A cached card whose centre lies in a crop read again is that crop's to report: if
    the read did not find it, it is gone (or hidden, which the tracker rides out).  A
    cached card reaching into a crop read again, and found fresh there, is the same card
    seen from the other side of the crop's edge (one deck has one of each card), so only
    the fresh reading stays; a card wholly outside the crops read is kept even if a
    misread there took its name, or it would vanish until its own crop is read again.
    Sorted as the detector sorts, top to bottom, as the tracker sees it without the gate.
    """
    found = {d.card for d in fresh}
    kept = [d for d in cached
            if not any(centre_in(d.box, r) or (d.card in found and _overlaps(d.box, r)) for r in read)]
    return sorted(fresh + kept, key=lambda d: (d.box[1], d.box[0]))
