"""The card detector: one image in, one :class:`Detection` per physical card out.

Two small models do the reading (why: ``models/README.md``):

1. an *index detector* (YOLO, 2 classes) finds every printed corner index — the
   part of a card that still shows in a fanned hand — and whole cards where they
   are mostly visible;
2. a *card classifier* (YOLO classify, 52 classes) reads each index crop, cut from
   the full-resolution image so small indices keep their detail; where it is unsure, a
   *second opinion* (another classifier, trained on larger crops) reads the crop too and
   the two readings are averaged.  Both read each index turned upright by an *orientation
   model*'s angle where one comes with the classifier (vision.orientation).

The two corners of one card are merged (vision.corners), so counting Detections counts cards.
Large images are tiled, where their indices are too small to read whole, so an index
stays a readable size at the detector's input; a photo reader zooms a close-up out, where
its indices are too large; callers that know where cards can be (seat zones) pass ``regions``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import re
import threading
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from scoring.cards import Card
from scoring.errors import NiuniuError
from vision.blur import blur_of, blurs_an_index, deblurred, unsharp
from vision.corners import Detection, merge_corners
from vision.mirror import MIRROR_CLASSES, MIRROR_LOG_ODDS, MIRRORED, mirror_box, mirror_image, mirrored_odds
from vision.orientation import ANGLE_CLASSES, angle_of_class, box_frame, read_angle, square_crop, upright_crop
from vision.speckle import despeckled

MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
DEFAULT_DETECTOR = "index-detector"
DEFAULT_CLASSIFIER = "card-classifier"
DEFAULT_SECOND_OPINION = "card-second-opinion"
DEFAULT_MIRROR_JUDGE = "card-mirror"
DEFAULT_ORIENTATION = "card-orientation"
# A card reader's model files, as attributes, in the order they read a card (the kiosk's model
# record, `niuniu check`, the reader's name); the mirror judge only judges whole photos.
READING_FILES = ("detector_path", "orientation_path", "classifier_path", "second_opinion_path")
INDEX_CLASS, CARD_CLASS = 0, 1
# The classifier's reject class: a crop that is no corner index at all (a pip, court art,
# a chip, felt, table print the detector took for one).  Its folder name sorts after
# every card code, so the 52 cards keep their class ids.
NOT_INDEX = "none"
CROP_SIZE = 64  # classifier input: an index crop is resized to this square (or to the classifier's own size)

# The detector's input size.  The table pipeline reads seat crops, already close to the
# cards, at LIVE_IMGSZ (what the ONNX and NCNN files are exported at: speed on the Pi).
# A whole photo (`niuniu detect`, `niuniu evaluate`) is read at PHOTO_IMGSZ with the .pt
# model: measured with model v6 on held-out synthetic five-card hands, 65% fully right
# against 55% (seed 2026, 100 hands) and 65.3% against 61.3% (seed 7, 150 hands); the four
# real photo sets read about alike (424 against 427 of 451 photos fully right; v5: 425, 424).
# v7 (generator-6 hands): 67% against 55% and 67.3% against 64.0%; real photos 425 against 425.
# v8: 67% against 56% and 70.0% against 63.3%; real photos 428 against 429.
# v9 (generator-8 hands): 72.8% against 65.6% over both seeds; real photos 429 against 428.
# v10: 76.0% against 68.8%; real photos 431 against 433 (the live size now reads more of them).
# v11: 76.0% against 69.6%; real photos 431 against 430.
# v11 with each card's own box and the lone-corner rule (session 15): 79.2% against 71.6%; 443 against 441.
LIVE_IMGSZ = 384
PHOTO_IMGSZ = 480
# Past MAX_IMGSZ a detector's input no longer fits in memory (100000 asked OpenCV for 30 GB)
# and no model here was trained near it.
MAX_IMGSZ = 4096


DETECTOR_IMGSZ_RULE = (f"a whole number of pixels from 32 to {MAX_IMGSZ}, a multiple of 32 "
                       f"(e.g. {LIVE_IMGSZ} or {PHOTO_IMGSZ})")


def is_detector_imgsz(imgsz: int) -> bool:
    """A multiple of the detector's 32-pixel stride from 32 to MAX_IMGSZ: ultralytics would
    round any other size up with a warning, and read at 32 pixels for 0 or a negative size
    ("no cards" that says nothing about the image)."""
    return 32 <= imgsz <= MAX_IMGSZ and imgsz % 32 == 0

# Tiling (IndexFinder._tile_side): a region is read again in tiles sized so that the smaller
# indices its whole pass found (the TILE_QUANTILE-th percentile) show at about TARGET_INDEX_PX
# at the detector's input (the training scenes' indices span ~5-60 px there), when the region
# is over 1.4 such tiles.  A tile's box within CUT_SLACK_PX of an inner tile edge is cut by it
# and left to the neighbouring tile.  Chosen on held-out hands rendered at 1920 x 1440 and
# 4000 x 3000, 4K table scenes and the real photo sets enlarged 2.5x and 5x (models/README.md).
TARGET_INDEX_PX = 28
TILE_QUANTILE = 20
CUT_SLACK_PX = 2

# What `niuniu detect` and `niuniu evaluate` report: a card read below this confidence
# (detector x classifier) is mostly a carpet, wood grain or table print taken for an
# index.  Chosen on real photos not trained on (poker4 `valid`: F1 0.962 -> 0.970 with
# classifier v4; models/README.md).  The table pipeline keeps every reading, because its
# tracker votes over frames with its own threshold (thresholds.conf).
REPORT_CONF = 0.1
# The second opinion reads only the crops whose best reading (a card or "no index") the
# classifier gives less than this: on 600 held-out hands it read as many fully right as
# asking it on every crop (461 against 449 for the classifier alone at 480, 431 against 425
# at 384) while asked on a quarter of the crops (models/README.md, session 17).
UNSURE_BELOW = 0.99
# A card seen by one corner index only and with no whole-card box of its own (``Detection.lone``)
# must read at this confidence to be reported: most cards read below it so are a pip, court art
# or print taken for an index (v11 at 480, the 250 held-out hands: 24 of 31 such readings between
# 0.1 and 0.3 are no dealt card), while a real card under others still shows its corner
# confidently.  Measured on the held-out hands and the real photos (models/README.md, session 15).
LONE_REPORT_CONF = 0.25
# A photo may come squeezed along one axis (photo sets are often exported stretched to a
# square).  `niuniu detect` and `niuniu evaluate` read each photo also re-stretched by these
# (across, down) factors and keep another reading only when its cards' confidences add up to
# ASPECT_MARGIN more than the photo's own (about half a card read surely; a bare majority
# lets a reading win on a faint extra card).  v13 on real poker4 photos squeezed to 0.75 of
# their width: 69 -> 84 of 88 fully right; unsqueezed real photos and held-out hands level
# (models/README.md, "Twenty-sixth session").  The camera's frames keep their aspect, and the
# table pipeline reads once.
PHOTO_ASPECTS = ((4 / 3, 1.0), (1.0, 4 / 3))
ASPECT_MARGIN = 0.5
# A close-up (a phone held over one card or a fanned hand) shows indices larger than the
# detector learnt (its training scenes' indices span ~5-60 px at its input): it then boxes
# pips as indices, misreads, or finds nothing at all.  A photo reader (``zoom_out``) reads a
# whole image whose median index box is over LARGE_INDEX_PX at the detector's input again
# placed in the middle of a plain canvas, zoomed out so that median comes to ZOOMED_INDEX_PX
# (at most MAX_ZOOM_OUT times); and since an index far too large is often not boxed at all,
# it also reads each photo zoomed out ZOOM_OUT times, kept as a re-stretched reading is
# (ASPECT_MARGIN surer).  Real poker4 cards cut out to fill a 1600-pixel frame: 184 -> 196 of
# 197 read; held-out fans cropped to fill the frame 104 -> 129 of 150 hands; the real photos
# and held-out hands as they are level (models/README.md, "Twenty-seventh session").  A zoomed
# canvas is at most ZOOM_CANVAS_INPUTS detector inputs wide (the photo shrunk first if need be):
# an index there still spans ~140 pixels for the classifier's crop.
LARGE_INDEX_PX = 50
ZOOMED_INDEX_PX = 36
MAX_ZOOM_OUT = 4.0
ZOOM_OUT = 2.0
ZOOM_CANVAS_INPUTS = 4
# A photo may come mirrored (a set flipped as augmentation, a front camera): a photo reader
# (``unmirror``) reads it mirrored back when the mirror judge (vision.mirror) finds its
# indices mirrored by more than MIRROR_LOG_ODDS (defined there), summed over them
# (models/README.md, "Twenty-ninth session").
# A photo may come blurred (out of focus, smeared by a moving hand, or blurred as augmentation):
# a photo reader (``sharpen``) reads a photo vision.blur finds blurred (``blur_of``: every
# way, or along one direction; by more than INDEX_BLUR_SHARE of its indices' size, so not an
# enlarged close-up) sharpened first, and also as it is; any other photo as it is
# and also through the unsharp mask (``unsharp``).  The second reading is kept as a
# re-stretched one is (ASPECT_MARGIN surer).  Real photos blurred by a Gaussian of sigma 2.5
# px: 365 (read once) -> 385 (sharpened second) -> 402 of 451 fully right (sharpened first);
# smeared 9 px: 402 -> 410; the photos as they are level (443), held-out table hands 205 -> 205
# and fans 216 -> 215 of 250 (models/README.md, "Thirtieth session" and "Thirty-first session").
# A classifier read after the orientation model reads each index turned by the angle read,
# and by this many degrees either side: on 6,980 held-out index crops (session 40) v16's three
# readings averaged were right 91.6% of the time, 91.5% read once (v15's classifier at its 4
# quarter turns: 90.0%).
UPRIGHT_READINGS = (-8.0, 0.0, 8.0)


class ModelError(NiuniuError):
    """The card model cannot be used: missing, corrupt or of the wrong kind."""


def file_sha256(path: Path) -> str:
    """Hash of a model file (or of every file of an exported model folder), for the audit log."""
    h = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for f in files:
        h.update(f.read_bytes())
    return h.hexdigest()


_SUFFIX_OF_FORMAT = {"pt": ".pt", "onnx": ".onnx", "ncnn": "_ncnn_model"}


def model_file(models_dir: Path, fmt: str, stem: str = DEFAULT_DETECTOR) -> Path:
    """Where a model of format ``fmt`` (pt, onnx, ncnn) lives in a models folder."""
    return models_dir / (stem + _SUFFIX_OF_FORMAT[fmt])


def _resolve(path: str | Path | None, default_stem: str, fmt: str) -> Path:
    if path is None:
        return model_file(MODELS_DIR, fmt, default_stem)
    return Path(path)


def _format_of(path: Path) -> str:
    if path.is_dir() or path.name.endswith("_ncnn_model"):
        return "ncnn"
    return path.suffix.lstrip(".").lower() or "pt"


def _companion(model_path: Path, stem: str = DEFAULT_CLASSIFIER) -> Path:
    """The model named ``stem`` that belongs with a model file: same folder, same format,
    else the ``.pt`` one there (a ``.pt`` classifier works beside a detector of any format)."""
    same = model_path.parent / (stem + _SUFFIX_OF_FORMAT.get(_format_of(model_path), ".pt"))
    return same if same.exists() else model_path.parent / (stem + ".pt")


def _class_names(model) -> list[str]:
    """A model's class names in id order (one read of ``names``)."""
    names = model.names
    return [names[i] for i in range(len(names))]


# The index detector's classes, in class-id order (INDEX_CLASS, CARD_CLASS): what
# vision.synth.scene.CLASS_NAMES labels.  A detect model of other classes (a COCO yolo11n.pt)
# would have its "person" boxes read as corner indices.
DETECTOR_CLASSES = ("index", "card")
# Each model slot's file in models/, for the fix an error message gives.
_SLOT_STEM = {"index detector": DEFAULT_DETECTOR, "card classifier": DEFAULT_CLASSIFIER,
              "second-opinion classifier": DEFAULT_SECOND_OPINION, "orientation": DEFAULT_ORIENTATION,
              "mirror-judge classifier": DEFAULT_MIRROR_JUDGE}


def _load_yolo(path: Path, task: str, what: str, flag: str | None = "--model",
               classes: tuple[str, ...] | None = None):
    """Load one model of the reader and check it is the kind its slot needs: ``task``
    (detect, classify) and, where the slot fixes them, ``classes``.  ``flag`` is the
    command-line option that names this file, for the error message; None for a file found
    beside another (the kiosk and `niuniu check` have no option for it: the fix is the file).

    The kind is checked because a model of the wrong task loads and runs without complaint:
    a classifier passed as the index detector finds no box in any image, so a table would
    read nothing with no error at all (an exported one fails inside ultralytics instead,
    with a message about tensor shapes)."""
    restore = f"restore models/{path.name} from the repository"
    fix = (f"pass {flag} {MODELS_DIR / (_SLOT_STEM.get(what, DEFAULT_DETECTOR) + '.pt')} or leave {flag} out"
           if flag else restore)
    if not path.exists():
        raise ModelError(f"{what} model {path} not found; " + (
            f"train one with `niuniu train` or pass {flag} PATH (a .pt, .onnx or _ncnn_model folder from models/)"
            if flag else f"{restore} (or train one with `niuniu train`)"))
    if path.is_dir() and not (path / "model.ncnn.param").is_file():
        raise ModelError(f"{what} model {path} is a folder but not an NCNN model (it holds no model.ncnn.param); "
                         f"{fix}")
    if path.is_file() and path.suffix.lower() not in (".pt", ".onnx"):
        raise ModelError(f"{what} model {path} is not a model file the reader runs (.pt, .onnx or an "
                         f"_ncnn_model folder); {fix}")
    if path.is_file() and path.stat().st_size < 1024:
        raise ModelError(f"{what} model {path} is only {path.stat().st_size} bytes: truncated or a Git LFS pointer; "
                         "restore the file from the repository")
    try:
        from ultralytics import YOLO
    except ImportError as exc:  # pragma: no cover - install dependent
        raise ModelError("reading cards needs the ml extra: pip install -e '.[ml]'") from exc
    if _format_of(path) == "onnx":
        missing = [m for m in ("onnx", "onnxruntime") if importlib.util.find_spec(m) is None]
        if missing:
            # ultralytics would pip-install them at the first reading: on the Pi (whose pi extra
            # runs NCNN) that is a download the service user cannot make, at the table's start
            raise ModelError(f"{what} model {path} is ONNX, but this Python has no {' or '.join(missing)} (the "
                             "Raspberry Pi's install runs the NCNN models): pass --model-format ncnn, or install "
                             "the ml extra (pip install -e '.[ml]')")
    _ultralytics_logs_to_stderr()

    def load():
        # One small reading loads the backend now, not mid-round, and keeps it: for an
        # exported model ultralytics' `names` loads a throwaway copy on every access.
        model = YOLO(str(path), task=task)
        try:
            model.predict(np.zeros((64, 64, 3), np.uint8), verbose=False, device="cpu")
        except Exception:
            # An exported model of another task fails here (its outputs have the other
            # task's shape); its metadata, read by now, says why better than the failure.
            _check_kind(model, path, task, what, classes, fix)
            raise
        _check_kind(model, path, task, what, classes, fix)
        return model

    try:
        return in_passing_thread(load) if _format_of(path) == "ncnn" else load()
    except ModelError:
        raise
    except Exception as exc:  # ultralytics raises many types for a bad file
        raise ModelError(f"{what} model {path} could not be loaded ({type(exc).__name__}: {short_cause(exc)}); "
                         "the file is corrupt or not an ultralytics model — restore it from models/") from exc


def _task_of(model) -> str | None:
    """The task a loaded model was trained for: a ``.pt`` checkpoint records it (whatever
    ``task`` it was loaded with); an exported model's metadata does, read by its backend."""
    backend = getattr(getattr(model, "predictor", None), "model", None)
    return getattr(backend, "task", None) or getattr(model, "task", None)


def _check_kind(model, path: Path, task: str, what: str, classes: tuple[str, ...] | None, fix: str) -> None:
    """Raise :class:`ModelError` unless ``model`` is a ``task`` model (of ``classes``, if given)."""
    real = _task_of(model)
    try:
        names = _class_names(model)
    except Exception:  # noqa: BLE001 - a model without readable names is judged by its task alone
        names = None
    if real == task and (classes is None or names is None or tuple(names) == tuple(classes)):
        return
    shown = "" if names is None else f"{len(names)} classes" + (f": {', '.join(map(str, names))}"
                                                                 if len(names) <= 4 else "")
    expected = f"{task}: {', '.join(classes)}" if classes else task
    said = f"a {real} model" if real != task and real is not None else f"a {task} model of other classes"
    raise ModelError(f"{what} model {path} is {said} ({shown}), not the {what} ({expected}); {fix}")


def short_cause(exc: Exception) -> str:
    """The first line of a library's message, without ultralytics' "ERROR ❌️" banner and
    emoji, cut short: it goes inside our own one-line error."""
    text = (str(exc).strip().splitlines() or [""])[0]
    text = re.sub(r"^(ERROR|WARNING)\b\W*", "", text)
    text = "".join(ch for ch in text if ord(ch) < 0x2190 and ch != "\ufe0f").strip()
    return text if len(text) <= 160 else text[:157].rsplit(" ", 1)[0] + "..."


def trained_input_size(model, fallback: int) -> int:
    """The input size a loaded model was trained (``.pt``) or exported (ONNX, NCNN) at.

    The classifier must be given crops cut at that size: a model trained on 96 px crops
    reads 64 px ones enlarged, blurrier than anything it learnt from.  ``fallback`` is for
    a file that records no size."""
    size = model.overrides.get("imgsz")
    if size is None:
        size = getattr(getattr(model.predictor, "model", None), "imgsz", None)
    if isinstance(size, (list, tuple)):
        size = size[0] if size else None
    return int(size) if size else fallback


def in_passing_thread(work):
    """Run ``work()`` on a thread that ends straight after, and return its result.

    NCNN parallelises with OpenMP (its own bundled libgomp), and loading a net already
    starts a team of worker threads for the loading thread, kept until that thread
    ends.  Once two threads own teams, libgomp counts more threads than cores and stops
    spinning between parallel regions: every layer then waits on a wake-up, and the
    network runs 10-20x slower in the second thread (measured: the classifier 0.7 ->
    7.8 ms a crop).  Loading on the main thread and reading cards on the pipeline
    thread is exactly that case, so the load runs on a thread of its own whose team
    goes with it; the first thread that reads cards then owns the only team.  A
    program that reads cards on two threads in turn (a benchmark's timed pass, then a
    live pass) runs the first on a passing thread too.
    """
    outcome: dict = {}

    def run():
        try:
            outcome["value"] = work()
        except Exception as exc:  # handed to the caller below
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="passing", daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _ultralytics_logs_to_stderr() -> None:
    """ultralytics logs to stdout ("Loading x.onnx for ONNX Runtime inference..."), which
    would mix with what `niuniu detect` and `niuniu replay --json` print there for other
    programs to read; its messages belong on stderr with ours."""
    import logging
    import sys

    for handler in logging.getLogger("ultralytics").handlers:
        if isinstance(handler, logging.StreamHandler) and handler.stream in (sys.stdout, sys.__stdout__):
            handler.setStream(sys.stderr)


class IndexFinder:
    """The first stage alone: where the printed corner indices (and mostly visible whole
    cards) are, without reading them.  What mining "not an index" crops needs; loading
    the classifier as well would only cost time and memory there.

    ``model_path`` names the detector (``.pt``, ``.onnx`` or an NCNN folder).  Nothing
    is downloaded: a missing file is a :class:`ModelError`.
    """

    def __init__(self, model_path: str | Path | None = None, *, fmt: str = "pt", imgsz: int = LIVE_IMGSZ,
                 conf: float = 0.25, tile: int | None = None):
        self.detector_path = _resolve(model_path, DEFAULT_DETECTOR, fmt)
        self.detector = _load_yolo(self.detector_path, "detect", "index detector", classes=DETECTOR_CLASSES)
        exported = getattr(self.detector.predictor.model, "imgsz", None)  # an export has one input size
        if exported and max(exported) != imgsz:
            logging.getLogger(__name__).info("%s runs at %d (its export size), not %d", self.detector_path.name,
                                             max(exported), imgsz)
            imgsz = int(max(exported))
        self.imgsz, self.conf = imgsz, conf
        self.tile = tile or imgsz * 2

    def find_indices(self, image: np.ndarray) -> tuple[list, list]:
        """The raw first stage on a whole image: ``(indices, cards)``, each a list of
        ``(box, conf)`` after per-class NMS, before any corner is read or merged."""
        return self._find(image, [(0, 0, image.shape[1], image.shape[0])])

    # -- internals -----------------------------------------------------------------------
    def _find(self, image, regions, tiles_too: bool = True) -> tuple[list, list]:
        """Each region read whole; a large one is read again in tiles only when its indices
        are too small to read whole.

        Tiles magnify: each is read at ``imgsz`` as the whole region is, so a region N tiles
        wide is seen N times larger in its tiles.  That rescues the small indices of a 4K
        table frame, but on a large photo of a hand the
        indices are already a readable size whole, and such tiles show them far larger than
        the detector ever learnt, and cut them at the tile edges: 30 held-out hands rendered
        at 4000 x 3000 read 6 fully right in default tiles, 18 in tiles sized from their
        indices (``_tile_side``); the real photo sets enlarged 5x, 89 and 104 of 111.
        """
        whole = [w for w in (self._clip(image.shape, r) for r in regions) if w is not None]
        found = self._predict(image, whole)
        tiles = []
        for win, dets in zip(whole, found) if tiles_too else ():
            side = self._tile_side(win, dets)
            tiles += self._tiles(win, side) if side else []
        if tiles:
            found += [_drop_cut(dets, tile, region)
                      for (tile, region), dets in zip(tiles, self._predict(image, [t for t, _ in tiles]))]
        found = [d for d in found if len(d[0])]
        if not found:
            return [], []
        boxes, scores, classes = (np.concatenate([d[k] for d in found]) for k in range(3))
        indices, cards = [], []
        for cls, bucket in ((INDEX_CLASS, indices), (CARD_CLASS, cards)):
            sel = np.flatnonzero(classes == cls)
            for k in _nms(boxes[sel], scores[sel], 0.5):
                bucket.append((tuple(float(v) for v in boxes[sel][k]), float(scores[sel][k])))
        return indices, cards

    @staticmethod
    def _clip(shape, region) -> tuple[int, int, int, int] | None:
        h, w = shape[:2]
        x0, y0, x1, y1 = (int(max(0, region[0])), int(max(0, region[1])),
                          int(min(w, region[2])), int(min(h, region[3])))
        return None if x1 - x0 < 8 or y1 - y0 < 8 else (x0, y0, x1, y1)

    def _tile_side(self, window, dets) -> int | None:
        """The tile side for this window, or ``None`` when it is read well enough whole.

        The default tile (``self.tile``, twice ``imgsz``) is right for the small indices of a
        whole table.  Where the window's whole pass found larger indices the tile grows so
        that its smaller ones (the TILE_QUANTILE-th percentile) show at about TARGET_INDEX_PX;
        a tile is never smaller than the default, so it never magnifies more."""
        side = max(window[2] - window[0], window[3] - window[1])
        boxes, _, classes = dets
        sizes = [max(b[2] - b[0], b[3] - b[1]) for b in boxes[classes == INDEX_CLASS]]
        tile = self.tile
        if sizes:
            tile = max(tile, int(self.imgsz * float(np.percentile(sizes, TILE_QUANTILE)) / TARGET_INDEX_PX))
        return tile if side > 1.4 * tile else None

    @staticmethod
    def _tiles(region, t: int) -> list[tuple[tuple[int, int, int, int], tuple[int, int, int, int]]]:
        """Overlapping tiles of side ``t`` over ``region``, each paired with the region."""
        x0, y0, x1, y1 = region
        step = int(t * 0.75)
        return [((tx, ty, min(tx + t, x1), min(ty + t, y1)), region)
                for ty in range(y0, max(y0 + 1, y1 - t + step), step)
                for tx in range(x0, max(x0 + 1, x1 - t + step), step)]

    def _predict(self, image, windows) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """The detector on each window: ``(boxes in image pixels, scores, classes)`` per window."""
        if not windows:
            return []
        crops, shrink = [], []
        for x0, y0, x1, y1 in windows:
            crop, f = image[y0:y1, x0:x1], 1.0
            if max(crop.shape[:2]) > 2 * self.imgsz:
                # ultralytics resizes bilinearly: shrinking a 4000-pixel photo 8x that way
                # aliases a small index away; pixel-area averaging keeps it.
                f = self.imgsz / max(crop.shape[:2])
                crop = cv2.resize(crop, (max(1, round(crop.shape[1] * f)), max(1, round(crop.shape[0] * f))),
                                  interpolation=cv2.INTER_AREA)
            crops.append(np.ascontiguousarray(crop))
            shrink.append(f)
        out = []
        results = self.detector.predict(crops, imgsz=self.imgsz, conf=self.conf, verbose=False, device="cpu")
        for (x0, y0, _, _), f, res in zip(windows, shrink, results):
            if res.boxes is None or len(res.boxes) == 0:
                out.append((np.zeros((0, 4)), np.zeros(0), np.zeros(0, int)))
                continue
            out.append((res.boxes.xyxy.cpu().numpy() / f + np.array([x0, y0, x0, y0]), res.boxes.conf.cpu().numpy(),
                        res.boxes.cls.cpu().numpy().astype(int)))
        return out


class CardDetector(IndexFinder):
    """Reads cards with the index detector + card classifier pair.

    ``model_path`` names the detector (``.pt``, ``.onnx`` or an NCNN folder); the
    classifier is found beside it in the same format unless ``classifier_path``
    says otherwise, and so is the classifier's second opinion (``card-second-opinion``)
    when there is one there.  ``second_opinion`` names another file, or ``False`` reads
    with the classifier alone; a classifier given by path is read alone unless a
    second opinion is given too, so judging a classifier judges that classifier.
    Nothing is downloaded: a missing file is a :class:`ModelError`.
    Index crops are cut at the size each classifier was trained at (``cls_imgsz`` overrides the first's).
    """

    # A reader reads as the table pipeline does (once, as the frame is) unless told to read as a
    # photo reader; kept on the class too, so a reader built around stand-in models (the tests')
    # needs none of them set by hand.
    aspects: tuple[tuple[float, float], ...] = ()
    zoom_out = despeckle = sharpen = False
    mirror_judge = orientation = orientation_missing = None

    def __init__(self, model_path: str | Path | None = None, classifier_path: str | Path | None = None, *,
                 second_opinion: str | Path | bool | None = None, fmt: str = "pt", imgsz: int = LIVE_IMGSZ,
                 conf: float = 0.25, cls_imgsz: int | None = None, tile: int | None = None, tta: bool = True,
                 min_card_conf: float = 0.0, min_lone_conf: float = 0.0,
                 aspects: tuple[tuple[float, float], ...] = (), zoom_out: bool = False, unmirror: bool = False,
                 despeckle: bool = False, sharpen: bool = False, orientation: str | Path | bool | None = None):
        super().__init__(model_path, fmt=fmt, imgsz=imgsz, conf=conf, tile=tile)
        self.aspects, self.zoom_out, self.despeckle, self.sharpen = tuple(aspects), zoom_out, despeckle, sharpen
        det_path = self.detector_path
        cls_path = Path(classifier_path) if classifier_path else _companion(
            det_path if model_path is not None else _resolve(None, DEFAULT_CLASSIFIER, fmt))
        self.classifier_path = cls_path
        self.classifier = _load_yolo(cls_path, "classify", "card classifier",
                                     "--classifier" if classifier_path else None)
        self.cls_imgsz, self.tta = cls_imgsz or trained_input_size(self.classifier, CROP_SIZE), tta
        self.min_card_conf = min_card_conf
        self.min_lone_conf = max(min_lone_conf, min_card_conf)
        names = _class_names(self.classifier)
        self._reject = names.index(NOT_INDEX) if NOT_INDEX in names else None
        try:
            self._cards = [Card.parse(n) for n in names if n != NOT_INDEX]
        except NiuniuError as exc:
            raise ModelError(f"card classifier {cls_path} has classes that are not cards ({exc})") from exc
        if self._reject is not None and self._reject != len(names) - 1:
            raise ModelError(f"card classifier {cls_path}: its '{NOT_INDEX}' class must be the last one")
        self.second_opinion_path = _beside_classifier(cls_path, second_opinion, auto=classifier_path is None,
                                                      stem=DEFAULT_SECOND_OPINION)
        self.second_opinion = self.second_imgsz = None
        if self.second_opinion_path is not None:
            self.second_opinion = _load_yolo(self.second_opinion_path, "classify", "second-opinion classifier",
                                             "--second-opinion")
            other = _class_names(self.second_opinion)
            if other != names:
                raise ModelError(f"second-opinion classifier {self.second_opinion_path} reads other classes than "
                                 f"{cls_path.name} ({len(other)} against {len(names)}); its readings cannot be "
                                 "averaged — pass a classifier trained on the same classes, or --no-second-opinion")
            self.second_imgsz = trained_input_size(self.second_opinion, CROP_SIZE)
        # A classifier trained on upright crops comes with the orientation model that turns them.
        self.orientation_path = _beside_classifier(cls_path, orientation, auto=classifier_path is None,
                                                   stem=DEFAULT_ORIENTATION)
        # The shipped classifiers (v16 on) were trained on upright crops: found by default with
        # no orientation model beside them (a copy of models/ that missed one file), they still
        # read, but unturned, and misread more.  Not an error (the table plays on); kept here
        # so `niuniu check` and the kiosk's model_loaded record name the file to restore.
        self.orientation_missing = (
            cls_path.parent / (DEFAULT_ORIENTATION + _SUFFIX_OF_FORMAT.get(_format_of(cls_path), ".pt"))
            if self.orientation_path is None and orientation is None and classifier_path is None else None)
        self.orientation = self._angles = self.orientation_imgsz = None
        if self.orientation_path is not None:
            self.orientation = _load_yolo(self.orientation_path, "classify", "orientation", "--orientation")
            if tuple(_class_names(self.orientation)) != ANGLE_CLASSES:
                raise ModelError(f"orientation model {self.orientation_path} reads other classes than the "
                                 f"{len(ANGLE_CLASSES)} angles {ANGLE_CLASSES[0]}..{ANGLE_CLASSES[-1]}: restore "
                                 f"models/{DEFAULT_ORIENTATION}.pt from the repository")
            self._angles = np.array([angle_of_class(n) for n in ANGLE_CLASSES])
            self.orientation_imgsz = trained_input_size(self.orientation, CROP_SIZE)
        self.mirror_judge_path = _companion(cls_path, DEFAULT_MIRROR_JUDGE) if unmirror else None
        if self.mirror_judge_path is not None and not self.mirror_judge_path.exists():
            self.mirror_judge_path = _resolve(None, DEFAULT_MIRROR_JUDGE, "pt")
        self.mirror_judge = self.mirror_imgsz = None
        if self.mirror_judge_path is not None:
            # found beside the classifier or in models/, never named by an option: the fix is the file
            self.mirror_judge = _load_yolo(self.mirror_judge_path, "classify", "mirror-judge classifier", None)
            names = _class_names(self.mirror_judge)
            if sorted(names) != sorted(MIRROR_CLASSES):
                raise ModelError(f"mirror-judge classifier {self.mirror_judge_path} reads {names}, not "
                                 f"{list(MIRROR_CLASSES)}; restore models/{DEFAULT_MIRROR_JUDGE}.pt "
                                 "from the repository")
            self._mirrored_class = names.index(MIRRORED)
            self.mirror_imgsz = trained_input_size(self.mirror_judge, CROP_SIZE)
        self.name = "+".join(p.name for p in self.reading_files)
        self._sha256: str | None = None

    @property
    def reading_files(self) -> list[Path]:
        """The model files a card is read with (``READING_FILES``)."""
        return [getattr(self, attr) for attr in READING_FILES if getattr(self, attr) is not None]

    @property
    def file_sha256(self) -> str:
        if self._sha256 is None:
            files = self.reading_files + ([self.mirror_judge_path] if self.mirror_judge_path is not None else [])
            self._sha256 = hashlib.sha256("".join(file_sha256(p) for p in files).encode()).hexdigest()
        return self._sha256

    # -- public --------------------------------------------------------------------------
    def detect(self, image: np.ndarray, regions: list[tuple[float, float, float, float]] | None = None
               ) -> list[Detection]:
        """Every card in ``image`` (BGR), optionally only inside ``regions`` (pixel boxes).

        With ``aspects`` (a photo reader's ``PHOTO_ASPECTS``) the image is also read resized by
        each (across, down) factor, and a reading replaces the plain one only when its cards'
        confidences add up to ``ASPECT_MARGIN`` more: a photo squeezed to a square shows
        indices narrower than the detector learnt, and re-stretched they read again.
        With ``zoom_out`` a close-up is read zoomed out (``LARGE_INDEX_PX``), and every
        image also ``ZOOM_OUT`` times zoomed out, kept by the same margin.
        With ``unmirror`` a photo whose indices the mirror judge finds mirrored is read
        mirrored back, its cards boxed in the photo's own pixels.  With ``despeckle`` a photo
        speckled with salt-and-pepper noise has its specks filtered out first (vision.speckle).
        With ``sharpen`` the image is also read through an unsharp mask, kept by the same
        margin; a photo vision.blur finds blurred (for its indices' size) is read sharpened first,
        and as it is second."""
        if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3 or image.size == 0:
            raise NiuniuError(f"detect() needs a BGR image array HxWx3, got "
                              f"{getattr(image, 'shape', type(image).__name__)}")
        image, second, look = self._mended(image)
        if self.mirror_judge is None or regions:
            return self._read_photo(image, regions, second=second)
        odds, found = self._judge(image, look)
        if odds > MIRROR_LOG_ODDS:
            w = image.shape[1]
            back = self._read_photo(mirror_image(image), regions,
                                    second=None if second is None else mirror_image(second))
            return [replace(d, box=mirror_box(d.box, w)) for d in back]
        return self._read_photo(image, regions, found, second)

    def as_read(self, image: np.ndarray) -> np.ndarray:
        """``image`` as this reader reads it first: a speckled photo's specks filtered out
        (``despeckle``), a blurred or smeared photo sharpened (``sharpen``); a table reader's frame
        as it is."""
        return self._mended(image)[0]

    def _mended(self, image: np.ndarray) -> tuple[np.ndarray, np.ndarray | None, tuple | None]:
        """``as_read``; the image to read second when that differs from the sharpened one (the
        photo as given, for a blurred photo; ``None`` otherwise); and the detector's whole look
        at the image returned (``_whole_look``), where judging its blur took one."""
        if self.despeckle:
            image = despeckled(image)
        if self.sharpen:
            blur = blur_of(image)
            if blur is not None:
                look = self._whole_look(image)
                if self._blurs_its_indices(image, look, blur[0]):
                    return deblurred(image, blur), image, None
                return image, None, look
        return image, None, None

    @staticmethod
    def _blurs_its_indices(image: np.ndarray, look: tuple, sigma: float) -> bool:
        """Whether a blur of ``sigma`` pixels blurs ``image``'s indices as the classifier reads
        them (``vision.blur.blurs_an_index``, against the median size of those the detector's
        ``look`` found); a photo in which it finds no index is taken as blurred, since its blur
        may be why."""
        looked, (indices, _) = look
        if not indices:
            return True
        scale = image.shape[1] / looked.shape[1]   # a thumbnail is looked at enlarged
        return blurs_an_index(sigma, scale * float(np.median([max(b[2] - b[0], b[3] - b[1]) for b, _ in indices])))

    def mirrored_odds(self, image: np.ndarray) -> float:
        """The log-odds that ``image`` is a mirror image, from the mirror judge's reading of
        the indices found in it (``vision.mirror.mirrored_odds``); 0 with no judge or no index."""
        return self._judge(image)[0] if self.mirror_judge is not None else 0.0

    def _judge(self, image: np.ndarray, look: tuple | None = None) -> tuple[float, tuple[list, list]]:
        """``mirrored_odds``, and what the detector found in ``image`` to judge it by, so that
        reading it as it is need not look again (a thumbnail is judged enlarged, as
        ``_read_at_its_size`` reads it, and what was found is the enlargement's).  ``look``:
        the detector's whole look at ``image``, if taken already."""
        image, found = look or self._whole_look(image)
        if not found[0]:
            return 0.0, found
        probs = _read_crops(self.mirror_judge, self.mirror_imgsz, image, [b for b, _ in found[0]], self.tta)
        return mirrored_odds(probs[:, self._mirrored_class]), found

    def _whole_look(self, image: np.ndarray) -> tuple[np.ndarray, tuple[list, list]]:
        """The detector's look at the whole of ``image``, and the image it looked at: a thumbnail
        enlarged first, as ``_read_at_its_size`` reads it."""
        h, w = image.shape[:2]
        grow = self.imgsz / max(h, w)
        if grow > 1.01:
            image = cv2.resize(image, (round(w * grow), round(h * grow)), interpolation=cv2.INTER_CUBIC)
            h, w = image.shape[:2]
        return image, self._find(image, [(0, 0, w, h)])

    def _read_photo(self, image: np.ndarray, regions, found: tuple[list, list] | None = None,
                    second: np.ndarray | None = None) -> list[Detection]:
        """``detect`` as the image is given: read once, or (a photo reader) also re-stretched,
        zoomed out and sharpened (or, ``second``, as given before it was sharpened), the surest
        reading kept.  ``found`` is the detector's first look at the whole image, if taken."""
        others = [lambda fx=fx, fy=fy: self._read_resized(image, regions, fx, fy, every=True)
                  for fx, fy in self.aspects]
        if self.zoom_out and not regions:
            others.append(lambda: self._read_zoomed_out(image, ZOOM_OUT, every=True))
        if self.sharpen:
            others.append(lambda: self._read_at_its_size(unsharp(image) if second is None else second, regions,
                                                         every=True))
        if not others:
            return self._read_at_its_size(image, regions, found=found)
        best = self._read_at_its_size(image, regions, every=True, found=found)
        enough = _sureness(best) + ASPECT_MARGIN
        for read in others:
            other = read()
            sure = _sureness(other)
            if sure > enough:
                best, enough = other, sure
        return self._reported(best)

    def _read_at_its_size(self, image: np.ndarray, regions, every: bool = False,
                          found: tuple[list, list] | None = None) -> list[Detection]:
        """``read_as_given``, a thumbnail enlarged first and (``zoom_out``) a close-up zoomed out.
        ``found``: what the detector found in the whole of ``image`` already, if it looked
        (in a thumbnail's enlargement, for a thumbnail)."""
        h, w = image.shape[:2]
        grow = self.imgsz / max(h, w)
        if grow > 1.01:
            # A thumbnail smaller than the detector's input is enlarged with a cubic filter
            # first: the classifier's crop of a 5-8 pixel index cut from the sharper
            # enlargement reads better (the real photos shrunk to 0.3x: 380 of 451 fully
            # right against 371; half size unchanged at 438; models/README.md).
            return self._read_resized(image, regions, grow, grow, every, found)
        if found is None or regions:
            found = self._find(image, regions or [(0, 0, w, h)])
        if not self.zoom_out or regions:   # seat zones are the table camera's: its indices are small
            return self._read_found(image, *found, every)
        indices, cards = found
        sizes = [max(b[2] - b[0], b[3] - b[1]) * grow for b, _ in indices]
        median = float(np.median(sizes)) if sizes else 0.0
        if median > LARGE_INDEX_PX:
            return self._read_zoomed_out(image, min(MAX_ZOOM_OUT, median / ZOOMED_INDEX_PX), every)
        return self._read_found(image, indices, cards, every)

    def _read_zoomed_out(self, image: np.ndarray, k: float, every: bool) -> list[Detection]:
        """``image`` read in the middle of a plain canvas ``k`` times its size (its border's
        median colour, so no edge or card is drawn around it), each card boxed in ``image``'s
        own pixels.  Not tiled: the canvas is there to make indices smaller, and tiles would
        magnify them again."""
        h, w = image.shape[:2]
        # Shrunk to fit the canvas, or a thumbnail enlarged to the detector's input (as it is read alone).
        f = min(ZOOM_CANVAS_INPUTS * self.imgsz / (k * max(h, w)), max(1.0, self.imgsz / max(h, w)))
        small = image if f == 1.0 else cv2.resize(image, (max(1, round(w * f)), max(1, round(h * f))),
                                                  interpolation=cv2.INTER_AREA if f < 1 else cv2.INTER_CUBIC)
        sh, sw = small.shape[:2]
        border = np.concatenate([small[0], small[-1], small[:, 0], small[:, -1]])
        canvas = np.empty((round(sh * k), round(sw * k), 3), np.uint8)
        canvas[:] = np.median(border, axis=0).astype(np.uint8)
        y0, x0 = (canvas.shape[0] - sh) // 2, (canvas.shape[1] - sw) // 2
        canvas[y0:y0 + sh, x0:x0 + sw] = small
        indices, cards = self._find(canvas, [(0, 0, canvas.shape[1], canvas.shape[0])], tiles_too=False)
        found = []
        for d in self._read_found(canvas, indices, cards, every):
            x1, y1, x2, y2 = ((d.box[0] - x0) / f, (d.box[1] - y0) / f, (d.box[2] - x0) / f, (d.box[3] - y0) / f)
            if 0 <= (x1 + x2) / 2 <= w and 0 <= (y1 + y2) / 2 <= h:
                found.append(replace(d, box=(max(0.0, x1), max(0.0, y1), min(float(w), x2), min(float(h), y2))))
        return found

    def _read_resized(self, image: np.ndarray, regions, fx: float, fy: float, every: bool,
                      found: tuple[list, list] | None = None) -> list[Detection]:
        """``image`` read resized (cubic) by ``fx`` across and ``fy`` down, each card boxed in
        ``image``'s own pixels.  An enlarged thumbnail reaches the detector's input size, so
        it is not enlarged again.  ``found``: what the detector found in the resized image
        already, if it looked (the mirror judge looks at a thumbnail enlarged alike)."""
        h, w = image.shape[:2]
        resized = cv2.resize(image, (round(w * fx), round(h * fy)), interpolation=cv2.INTER_CUBIC)
        scaled = [(r[0] * fx, r[1] * fy, r[2] * fx, r[3] * fy) for r in regions] if regions else None
        return [replace(d, box=(d.box[0] / fx, d.box[1] / fy, d.box[2] / fx, d.box[3] / fy))
                for d in self._read_at_its_size(resized, scaled, every, found)]

    def read_as_given(self, image: np.ndarray, regions: list[tuple[float, float, float, float]] | None = None,
                      every: bool = False) -> list[Detection]:
        """``detect`` without enlarging a small image first: what enlarging gains is measured
        against this (a test holds the gain, whichever model is shipped).  ``every`` keeps
        the cards read below the reporting thresholds too."""
        h, w = image.shape[:2]
        return self._read_found(image, *self._find(image, regions or [(0, 0, w, h)]), every)

    def _read_found(self, image: np.ndarray, indices, cards, every: bool) -> list[Detection]:
        """The second stage: the found indices read and each card's corners merged."""
        if not indices:
            return []
        labels, probs, not_index = self.classify_indices(image, [b for b, _ in indices])
        keep = read_as_indices(labels, probs, not_index)
        if not keep:
            return []
        found = merge_corners([indices[i] for i in keep], labels[keep], probs[keep], cards, self._cards)
        return found if every else self._reported(found)

    def _reported(self, found: list[Detection]) -> list[Detection]:
        return [d for d in found if d.conf >= (self.min_lone_conf if d.lone else self.min_card_conf)]

    @property
    def card_of_class(self) -> list[Card]:
        """The classifier's card class ids as cards (its ``names`` order, the reject class left out)."""
        return list(self._cards)

    def classify_indices(self, image: np.ndarray, boxes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Read each index crop: turned upright by the orientation model's angle where the
        classifier comes with one (with ``tta`` also 8 degrees either side), else as the box
        frames it (with ``tta`` also turned by 90, 180 and 270 degrees).

        Indices lie at any angle on the table: averaging the four turns of an any-angle
        classifier (log-probabilities) measured +5 points of top-1 on held-out decks (74% ->
        80%); reading them upright, +1.6 points more (session 40).
        Crops the classifier is unsure of (``UNSURE_BELOW``) are read by the second
        opinion too, and the two readings averaged the same way: two classifiers trained
        on different crops err on different indices, and most crops are read surely.
        Returns the best card per crop, the card probabilities (``card_of_class`` order)
        and the probability that the crop is no index at all (0 for a classifier
        without the reject class).  Card probabilities are not renormalised without
        the reject class, so a doubtful crop keeps a low confidence.
        """
        angles = self.index_angles(image, boxes) if self.orientation is not None else None
        probs = self._read_with(self.classifier, self.cls_imgsz, image, boxes, angles)
        if self.second_opinion is not None:
            unsure = np.flatnonzero(probs.max(axis=1) < UNSURE_BELOW)
            if len(unsure):
                other = self._read_with(self.second_opinion, self.second_imgsz, image, [boxes[i] for i in unsure],
                                        None if angles is None else [angles[i] for i in unsure])
                probs[unsure] = _average_readings(probs[unsure], other)
        if self._reject is None:
            return probs.argmax(axis=1), probs, np.zeros(len(boxes))
        not_index = probs[:, self._reject]
        probs = np.delete(probs, self._reject, axis=1)
        return probs.argmax(axis=1), probs, not_index

    def _read_with(self, classifier, size: int, image: np.ndarray, boxes, angles: list[float] | None) -> np.ndarray:
        """One classifier's reading of the boxes: turned upright by ``angles`` (and
        ``UPRIGHT_READINGS`` either side) where the orientation model read them, else as
        the boxes frame them (at the four quarter turns); once without ``tta``.  The second
        opinion is read as the classifier is: both learnt the same crops, at their own sizes."""
        if angles is not None:
            return _read_upright(classifier, size, image, boxes, angles, UPRIGHT_READINGS if self.tta else (0.0,))
        return _read_crops(classifier, size, image, boxes, self.tta)

    def index_angles(self, image: np.ndarray, boxes) -> list[float]:
        """The angle each index box's top faces (``vision.orientation``), read by the orientation model."""
        if not len(boxes):
            return []
        crops = [index_crop(image, b, None, self.orientation_imgsz) for b in boxes]
        results = self.orientation.predict(crops, imgsz=self.orientation_imgsz, verbose=False, device="cpu")
        return [read_angle(r.probs.data.cpu().numpy(), self._angles) for r in results]


def _read_upright(classifier, size: int, image: np.ndarray, boxes, angles, turns) -> np.ndarray:
    """A classifier trained on upright crops: each box turned by its angle, and by each of
    ``turns`` degrees more (``UPRIGHT_READINGS``), the readings averaged in log-probability."""
    crops = [upright_crop(image, b, a + turn, size) for turn in turns for b, a in zip(boxes, angles)]
    results = classifier.predict(crops, imgsz=size, verbose=False, device="cpu")
    p = np.stack([r.probs.data.cpu().numpy() for r in results]).reshape(len(turns), len(boxes), -1)
    return _average_readings(*p)


def _sureness(reading: list[Detection]) -> float:
    """How sure a reading is of itself: the confidences of the cards it would report at the
    default thresholds, added up.  Fixed, so a caller's own thresholds only filter the
    reading chosen, whichever they are."""
    return sum(d.conf for d in reading if d.conf >= (LONE_REPORT_CONF if d.lone else REPORT_CONF))


def _beside_classifier(classifier_path: Path, given: str | Path | bool | None, auto: bool, stem: str) -> Path | None:
    """Which model named ``stem`` that belongs with a classifier (its second opinion, its
    orientation model) to load: ``given`` (a path, or ``False`` for none), else, for a
    classifier found by default (``auto``), the one beside it (its format, else ``.pt``) if any."""
    if given is False or (given is None and not auto):
        return None
    if given is not None:
        return Path(given)
    beside = _companion(classifier_path, stem)
    return beside if beside.exists() else None


def _read_crops(classifier, size: int, image: np.ndarray, boxes, tta: bool) -> np.ndarray:
    """One classifier's probabilities (every class it has) for each index box, its
    readings at the four turns averaged in log-probability."""
    crops = [index_crop(image, b, None, size) for b in boxes]
    turns = (0, 1, 2, 3) if tta else (0,)
    batch = [np.ascontiguousarray(np.rot90(c, k)) for k in turns for c in crops]
    results = classifier.predict(batch, imgsz=size, verbose=False, device="cpu")
    p = np.stack([r.probs.data.cpu().numpy() for r in results]).reshape(len(turns), len(crops), -1)
    return _average_readings(*p)


def _average_readings(*readings: np.ndarray) -> np.ndarray:
    """Readings of the same crops (rows of class probabilities) averaged in log-probability
    and renormalised: a class must be likely in every reading to stay likely."""
    logp = np.mean([np.log(np.clip(r, 1e-6, 1.0)) for r in readings], axis=0)
    probs = np.exp(logp)
    return probs / probs.sum(axis=1, keepdims=True)


def read_as_indices(labels, probs, not_index) -> list[int]:
    """The crops (of ``classify_indices``' output) the classifier takes for an index:
    those whose best card is at least as likely as "not an index"; the rest are dropped
    before corners are merged.  ``vision.evaluate.why_missed`` asks the same question."""
    return [i for i in range(len(labels)) if not_index[i] <= probs[i, labels[i]]]


def index_crop(image: np.ndarray, box, rng: np.random.Generator | None = None, size: int = CROP_SIZE) -> np.ndarray:
    """Square crop around an index box (``vision.orientation.box_frame``), as the image holds
    it, padded by edge replication, resized to ``size``.

    Training crops (``vision.synth.dataset``, with ``rng`` jitter) and inference crops
    (``rng=None``) come from this one function, so the classifier sees the framing it learnt.
    """
    cx, cy, side = box_frame(box, rng)
    return square_crop(image, (cx, cy), side, size)


def _nms(boxes: np.ndarray, scores: np.ndarray, iou: float) -> list[int]:
    order = list(np.argsort(-scores))
    keep = []
    while order:
        i = order.pop(0)
        keep.append(i)
        order = [j for j in order if box_iou(boxes[i], boxes[j]) < iou]
    return keep


def box_iou(a, b) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _drop_cut(dets, tile, region):
    """A tile's boxes less those cut by one of its inner edges: the tiles overlap by a
    quarter, so a small index cut by one tile lies whole in its neighbour or in the whole
    region's pass, and a cut one would be read as a fragment ("10" as "1")."""
    boxes, scores, classes = dets
    if not len(boxes):
        return dets
    cut = np.zeros(len(boxes), bool)
    for axis, (lo, hi) in enumerate(((tile[0], tile[2]), (tile[1], tile[3]))):
        if lo > region[axis]:
            cut |= boxes[:, axis] <= lo + CUT_SLACK_PX
        if hi < region[axis + 2]:
            cut |= boxes[:, axis + 2] >= hi - CUT_SLACK_PX
    return boxes[~cut], scores[~cut], classes[~cut]
