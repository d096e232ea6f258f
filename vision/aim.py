"""Has the table camera moved since its seat zones were marked?

The zones are fixed shares of the picture.  A camera knocked by a dealer's elbow, turned
on its mount by somebody who wants a card counted to the next seat, or re-aimed after
cleaning leaves the zones where they were and the table somewhere else: cards are then
given to the wrong seat, or to none, and nothing on the dealer's screen says why.  Nor
would a camera taped over or pointed at the ceiling be noticed while the table is empty.

So ``niuniu calibrate --source`` keeps the picture the zones were marked on beside the
table file (``table.yaml`` -> ``table.view.jpg``), and :class:`CameraAimWatch` compares
the camera's picture with it now and then.  It matches ORB corner features of the table
itself — the printed layout, the edges of the felt, the rail — and leaves out the seat
zones, where cards, chips and hands come and go (features on cards would crowd out the
table's: measured on the demo, a frame of dealt cards kept 9 matches of 793 with the
whole picture, 107 or more with the zones left out).  A rotation, shift and scale fitted
to the matches (RANSAC) says how far each zone's corners would now lie from the table
spot they were marked on.  Without a saved picture (a table file written without
``--source``) the first empty-table frame after start stands in, so a camera moved
during the shift is still seen.

Three checks in a row (``agree``, one every ``every_s`` seconds) decide a turn either
way, as the mirror watch does, so a dealer leaning over the camera raises nothing.  A
picture with too few matches decides only while no card is on the table: during a
round, arms and cards hide the felt; on an empty table it means the camera sees
something else.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from scoring.errors import NiuniuError

log = logging.getLogger(__name__)

WORK_WIDTH = 640            # pictures are compared at this width: the table's print is large
ZONE_MARGIN = 0.25          # zones are left out grown by this share of their size (cards overhang them)
MIN_INLIERS = 12            # fewer matches that agree on one movement decide nothing
MIN_INLIER_SHARE = 0.25     # ... nor do matches of which fewer than this share agree
MIN_VIEW_FEATURES = 60      # a view with fewer (plain cloth, a black picture) cannot be compared with
RANSAC_PX = 3.0             # a match agrees with a movement within this many work pixels

# Shown to the dealer: what is wrong and whom to call; the technician's fix is in the README.
CAMERA_MOVED = ("the camera has moved: the table lies {shift:.0%} of the picture's width from where it lay "
                "{since}, so cards may be counted to the wrong seat. Call the technician to put the camera "
                "back or calibrate the table again")
CAMERA_LOST = ("the camera no longer sees the table as it lay {since}: it is covered, turned away or out of "
               "focus, so cards are not read. Uncover it, or call the technician")
AT_CALIBRATION, AT_START = "when its seat zones were marked", "when the kiosk started"
CAMERA_MOVE_CLEARED = "the camera sees the table where it lay again (three checks in a row)"


class ViewError(NiuniuError):
    """A calibration picture that cannot be used; the message says which and how to mend it."""


def view_path(table_file: str | Path) -> Path:
    """Where the picture a table file's zones were marked on is kept: beside it, same stem."""
    table_file = Path(table_file)
    return table_file.with_name(table_file.stem + ".view.jpg")


def load_view(path: str | Path) -> np.ndarray | None:
    """The calibration picture at ``path``, or None when there is none (an older table file)."""
    path = Path(path)
    if not path.exists():
        return None
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise ViewError(f"calibration picture {path} cannot be read as an image; write it again with "
                        f"`niuniu calibrate --source ... --force`, or delete it to check the camera "
                        f"against its view at start")
    return image


def save_view(image: np.ndarray, path: str | Path) -> None:
    if not cv2.imwrite(str(path), image, [cv2.IMWRITE_JPEG_QUALITY, 92]):
        raise ViewError(f"cannot write the calibration picture {path}")


@dataclass(frozen=True, slots=True)
class AimCheck:
    """One comparison: ``shift`` is the farthest any zone corner moved, as a share of the
    picture's width (None when too few matches agreed: ``inliers`` says how many did)."""

    shift: float | None
    inliers: int


class TableView:
    """The table as the zones were marked on it, ready to compare pictures with."""

    def __init__(self, image: np.ndarray, zones: Sequence[Sequence[tuple[float, float]]]) -> None:
        grey = _work_grey(image)
        self.size = grey.shape[1], grey.shape[0]
        self.aspect = image.shape[1] / image.shape[0]
        self.mask = _table_mask(self.size, zones)
        w, h = self.size
        self.corners = np.float32([(x * w, y * h) for zone in zones for x, y in zone])
        self._orb = cv2.ORB_create(1000)
        self._matcher = cv2.BFMatcher(cv2.NORM_HAMMING)
        self.keypoints, self.descriptors = self._orb.detectAndCompute(grey, self.mask)

    def fits(self, image: np.ndarray) -> bool:
        """Is ``image`` the shape of this view (a changed camera resolution is not a move)?"""
        return abs(image.shape[1] / image.shape[0] - self.aspect) < 0.01

    def compare(self, image: np.ndarray) -> AimCheck:
        grey = _work_grey(image, self.size)
        keypoints, descriptors = self._orb.detectAndCompute(grey, self.mask)
        if descriptors is None or self.descriptors is None or len(keypoints) < MIN_INLIERS:
            return AimCheck(None, 0)
        pairs = self._matcher.knnMatch(descriptors, self.descriptors, k=2)
        good = [p[0] for p in pairs if len(p) == 2 and p[0].distance < 0.75 * p[1].distance]
        if len(good) < MIN_INLIERS:
            return AimCheck(None, len(good))
        was = np.float32([self.keypoints[m.trainIdx].pt for m in good])
        now = np.float32([keypoints[m.queryIdx].pt for m in good])
        movement, agree = cv2.estimateAffinePartial2D(was, now, method=cv2.RANSAC, ransacReprojThreshold=RANSAC_PX)
        inliers = int(agree.sum()) if agree is not None else 0
        if movement is None or inliers < MIN_INLIERS or inliers < MIN_INLIER_SHARE * len(good):
            return AimCheck(None, inliers)
        moved = self.corners @ movement[:, :2].T + movement[:, 2] - self.corners
        return AimCheck(float(np.linalg.norm(moved, axis=1).max()) / self.size[0], inliers)


class CameraAimWatch:
    """Compares the camera's picture with the table's view every ``every_s`` seconds.

    ``state`` is ``aimed``, ``moved`` or ``lost``; it turns after ``agree`` checks in a
    row say the same, and ``on_change(state, ts, check)`` is told each turn so the table
    can put it in its audit log.  ``view`` None: the first frame with no cards becomes the
    view (``since`` says which the warning compares with)."""

    def __init__(self, zones: Sequence[Sequence[tuple[float, float]]], limit: float, view: np.ndarray | None = None,
                 every_s: float = 10.0, agree: int = 3,
                 on_change: Callable[[str, float, AimCheck], None] | None = None) -> None:
        self.zones, self.limit, self.every_s, self.on_change = zones, limit, every_s, on_change
        self.view = TableView(view, zones) if view is not None else None
        self.since = AT_CALIBRATION if view is not None else AT_START
        self._recent: deque[str] = deque(maxlen=agree)
        self._last_ts: float | None = None
        self._failed = False
        self.state = "aimed"
        self.last: AimCheck | None = None
        self.shift: float | None = None   # the last measured shift (a check hidden by cards measures none)
        self.checks = 0
        self.unchecked: str | None = None   # why no check can be made, once that is known

    def check(self, image: np.ndarray, ts: float, cards_on_table: bool) -> None:
        """Compare ``image`` if a check is due; never raises (the table must keep reading)."""
        if self._last_ts is not None and 0 <= ts - self._last_ts < self.every_s:
            return
        self._last_ts = ts
        try:
            self._check(image, ts, cards_on_table)
        except Exception:
            if not self._failed:
                log.exception("checking whether the camera moved failed")
            self._failed = True

    def _check(self, image: np.ndarray, ts: float, cards_on_table: bool) -> None:
        if self.view is not None and not self.view.fits(image):
            log.warning("the calibration picture is %.2f wide to 1 high, the camera's %.2f: comparing with the "
                        "camera's view at start instead; calibrate again to mend it",
                        self.view.aspect, image.shape[1] / image.shape[0])
            self.view, self.since = None, AT_START
        if self.view is None:
            if not cards_on_table:
                self.view = TableView(image, self.zones)
            return
        if len(self.view.keypoints) < MIN_VIEW_FEATURES:
            if self.unchecked is None:
                found = len(self.view.keypoints)
                self.unchecked = (f"the table as it lay {self.since} shows {found} features outside the seat "
                                  f"zones, under the {MIN_VIEW_FEATURES} a comparison needs (plain cloth, or a "
                                  f"dark picture)")
                log.warning("the camera's aim is not checked: %s", self.unchecked)
            if self.since == AT_START:
                self.view = None      # a camera's first frames may be dark: take a later empty table
            return
        self.unchecked = None
        result = self.view.compare(image)
        self.last, self.checks = result, self.checks + 1
        if result.shift is not None:
            self.shift = result.shift
        if result.shift is None:
            if cards_on_table:
                return
            verdict = "lost"
        else:
            verdict = "moved" if result.shift > self.limit else "aimed"
        self._recent.append(verdict)
        if len(self._recent) == self._recent.maxlen and len(set(self._recent)) == 1 and verdict != self.state:
            self.state = verdict
            log.warning(self.warning or CAMERA_MOVE_CLEARED)
            if self.on_change is not None:
                try:
                    self.on_change(verdict, ts, result)
                except Exception:  # telling the log must not stop the table either
                    log.exception("reporting the camera's aim failed")

    @property
    def warning(self) -> str | None:
        if self.state == "moved":
            return CAMERA_MOVED.format(shift=self.shift, since=self.since)
        if self.state == "lost":
            return CAMERA_LOST.format(since=self.since)
        return None


def _work_grey(image: np.ndarray, size: tuple[int, int] | None = None) -> np.ndarray:
    grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    if size is None:
        size = WORK_WIDTH, max(1, round(grey.shape[0] * WORK_WIDTH / grey.shape[1]))
    return cv2.resize(grey, size, interpolation=cv2.INTER_AREA)


def _table_mask(size: tuple[int, int], zones: Sequence[Sequence[tuple[float, float]]]) -> np.ndarray:
    """Where the table itself shows: everything but the seat zones, each grown by ``ZONE_MARGIN``."""
    w, h = size
    mask = np.full((h, w), 255, np.uint8)
    for zone in zones:
        points = np.float32(zone)
        centre = points.mean(axis=0)
        grown = (centre + (points - centre) * (1 + ZONE_MARGIN)) * (w, h)
        cv2.fillPoly(mask, [np.int32(np.round(grown))], 0)
    return mask
