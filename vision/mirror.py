"""Is a photo mirrored?  A mirror-judge classifier reads each index crop as printed or mirrored.

Photo sets flip their pictures left-right or top-bottom as augmentation (Roboflow's flip;
the real poker4 set's own `train` is one), and a phone's front camera saves mirror
images.  A mirrored index is no card the card classifier learnt (``fliplr=0``): it reads
a mirrored 2 as a 5, a 9 as a queen, and surely — on the real photos mirrored, v14 read 0
of 88 poker4 photos fully right and half their cards.  Its own confidence cannot tell:
a mirrored glyph is read as surely as a printed one (the summed log-probability gap
between a photo and its mirror image is under 0.5 nats on half the real photos).

So a small second classifier answers only "printed or mirrored" for an index crop.  Which
way a glyph faces is the same at any turn, so it is learnt from the card classifier's
own crops (every rotation) and their mirror images; an ace or an 8 looks the same both
ways and is read near 50:50, so a photo is judged by its indices together
(``mirrored_odds``).  A top-bottom flip is a left-right one turned half round, and the
reader reads any turn, so un-mirroring left-right mends both.

A table camera that saves mirror images (installed with one of its flip settings on) would
have every card misread in silence: the table pipeline reads its seat crops once, unjudged.
``CameraMirrorWatch`` judges one seat with cards now and then and tells the dealer's screen to
have ``camera.mirror`` set (the frames, and so the recordings, are then mirrored back).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from scoring.errors import NiuniuError
from vision.table import centre_in

log = logging.getLogger(__name__)

PRINTED, MIRRORED = "printed", "mirrored"
MIRROR_CLASSES = (MIRRORED, PRINTED)   # ultralytics orders classify folders by name
# Each crop's log-odds is capped here before they are added up: one crop read wrongly with
# great conviction (a symmetric ace, a pip) must not outvote the rest of the photo.
CROP_LOG_ODDS_CAP = 4.0
# A photo (or a seat) whose indices sum to more log-odds than this is mirrored; below minus
# this, printed; between, undecided (too few indices, or aces and 8s only).
MIRROR_LOG_ODDS = 2.0
JPEG_QUALITY = 95


def mirror_image(image: np.ndarray) -> np.ndarray:
    """``image`` mirrored left-right, as a contiguous array (the models need one)."""
    return np.ascontiguousarray(image[:, ::-1])


def mirror_box(box, width: float) -> tuple:
    """``box`` (x1, y1, x2, y2) where it lies once its ``width``-wide image is mirrored left-right."""
    return (width - box[2], box[1], width - box[0], box[3])


def write_mirror_crops(src: Path, out: Path, per_class: int, seed: int = 0, val_share: float = 0.1) -> dict:
    """A printed-or-mirrored crop set from a card classifier's crop set (``src/train/<card>/``).

    ``per_class`` crops are drawn from each card folder (the "no index" folder left out:
    a mark has no handedness) and written twice, as they are and mirrored, both re-encoded
    alike so that a second JPEG pass gives nothing away.  ``val_share`` of them go to
    ``val`` from ``src/val`` where it has crops, else from the drawn ones."""
    import cv2

    from vision.detector import NOT_INDEX

    src, out = Path(src), Path(out)
    train_root = src / "train"
    if not train_root.is_dir():
        raise NiuniuError(f"{src} has no train/ folder: give a card classifier crop set (made by "
                          "`niuniu datasets synth` or real-crops)")
    rng = np.random.default_rng(seed)
    counts = {"train": 0, "val": 0, "cards": 0}
    for card_dir in sorted(p for p in train_root.iterdir() if p.is_dir() and p.name != NOT_INDEX):
        counts["cards"] += 1
        files = sorted(card_dir.iterdir())
        picked = [files[i] for i in sorted(rng.choice(len(files), min(per_class, len(files)), replace=False))]
        own_val = sorted((src / "val" / card_dir.name).glob("*")) if (src / "val" / card_dir.name).is_dir() else []
        n_val = max(1, round(per_class * val_share))
        val = own_val[:n_val] if own_val else picked[:n_val]
        train = picked if own_val else picked[n_val:]
        for split, paths in (("train", train), ("val", val)):
            for path in paths:
                image = cv2.imread(str(path))
                if image is None:
                    continue
                stem = f"{card_dir.name}_{path.stem}"[:120]
                for label, crop in ((PRINTED, image), (MIRRORED, mirror_image(image))):
                    folder = out / split / label
                    folder.mkdir(parents=True, exist_ok=True)
                    cv2.imwrite(str(folder / f"{stem}.jpg"), crop,
                                [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
                counts[split] += 2
    if not counts["cards"]:
        raise NiuniuError(f"{train_root} holds no card folders")
    return counts


def mirrored_odds(p_mirrored: np.ndarray) -> float:
    """A photo's log-odds of being mirrored, from its index crops' mirrored probabilities:
    each crop's log-odds capped at ``CROP_LOG_ODDS_CAP``, added up."""
    p = np.clip(np.asarray(p_mirrored, dtype=float), 1e-6, 1 - 1e-6)
    return float(np.clip(np.log(p) - np.log1p(-p), -CROP_LOG_ODDS_CAP, CROP_LOG_ODDS_CAP).sum())


CAMERA_MIRRORED = ("the camera's picture looks mirrored (card indices read back to front), so cards are misread: "
                   "turn the camera's own flip setting off, or calibrate the table again with `niuniu calibrate "
                   "--mirror` (it writes camera.mirror: true and zones for the picture mirrored back), then "
                   "restart niuniu")
CAMERA_MIRROR_CLEARED = "the camera's picture reads the right way round again (three checks in a row)"


class CameraMirrorWatch:
    """Does a table camera save mirror images?  Judged on one seat every ``every_s`` seconds
    of the stream: the seat crop holding most cards (at least ``min_cards``), by ``judge``
    (``CardDetector.mirrored_odds``: one detector pass and the judge on its indices, a small
    cost every half minute).  ``mirrored`` turns True after ``agree`` decided checks in a row
    say mirrored and back to False after as many say printed, so one seat of aces and 8s, or
    a card held up to the camera, raises nothing.  ``on_change(mirrored, ts, log_odds)`` is told
    each time ``mirrored`` turns, so the table can put it in its audit log."""

    def __init__(self, judge: Callable[[np.ndarray], float], every_s: float = 30.0, agree: int = 3,
                 min_cards: int = 2, on_change: Callable[[bool, float, float], None] | None = None) -> None:
        self.judge, self.every_s, self.min_cards, self.on_change = judge, every_s, min_cards, on_change
        self._recent: deque[bool] = deque(maxlen=agree)
        self._last_ts: float | None = None
        self._failed = False
        self.mirrored = False
        self.checks = 0   # seats judged so far

    def check(self, image: np.ndarray, ts: float, regions: Sequence[tuple[int, int, int, int]], detections) -> None:
        """Judge ``image`` if a check is due and a seat shows enough cards; never raises."""
        if self._last_ts is not None and 0 <= ts - self._last_ts < self.every_s:
            return
        cards, seat = max(((sum(centre_in(d.box, r) for d in detections), r) for r in regions), default=(0, None))
        if cards < self.min_cards:
            return
        self._last_ts = ts
        x0, y0, x1, y1 = seat
        try:
            odds = self.judge(np.ascontiguousarray(image[y0:y1, x0:x1]))
        except Exception:  # the check must never stop the table: say so once, keep reading
            if not self._failed:
                log.exception("judging whether the camera is mirrored failed")
            self._failed = True
            return
        self.checks += 1
        if abs(odds) <= MIRROR_LOG_ODDS:
            return
        self._recent.append(odds > 0)
        if len(self._recent) == self._recent.maxlen and len(set(self._recent)) == 1 \
                and self._recent[0] != self.mirrored:
            self.mirrored = self._recent[0]
            log.warning(CAMERA_MIRRORED if self.mirrored else CAMERA_MIRROR_CLEARED)
            if self.on_change is not None:
                try:
                    self.on_change(self.mirrored, ts, odds)
                except Exception:  # telling the log must not stop the table either
                    log.exception("reporting the camera's mirroring failed")

    @property
    def warning(self) -> str | None:
        return CAMERA_MIRRORED if self.mirrored else None
