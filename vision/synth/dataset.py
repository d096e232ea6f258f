"""Write a synthetic training set: detector scenes plus corner-index crops.

The card model is two small models (see ``models/README.md``): a detector that
finds printed corner indices (and whole cards) and a classifier that reads the
card from each index crop.  Both learn from the same scenes, written here:

    OUT/detect/images/{train,val}/NNNNNN.jpg   YOLO images
    OUT/detect/labels/{train,val}/NNNNNN.txt   "class cx cy w h" (0 index, 1 card)
    OUT/detect/data.yaml
    OUT/classify/{train,val}/<CARD>/NNNNNN_KK.jpg   index crops, one folder per card
    OUT/manifest.json                          seed, counts, decks per split

Scene ``i`` depends only on ``(seed, split, i)``, so a data set is the same bytes
whatever the number of worker processes.  Validation scenes use only held-out
deck designs, never seen in training.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

import cv2
import numpy as np

from scoring.cards import CARD_CODES
from scoring.errors import NiuniuError
from vision.detector import CROP_SIZE, NOT_INDEX, box_iou, index_crop  # noqa: F401 - one framing for training and reading
from vision.orientation import ANGLE_CLASSES, class_of_angle, upright_crop
from vision.synth.faces import (
    PROCEDURAL_HOLDOUT_SEEDS,
    PROCEDURAL_TRAIN_SEEDS,
    available_fonts,
    available_pip_fonts,
)
from vision.synth.scene import (CLASS_NAMES, COLOUR_CAST_SHARE, INDEX_CLASS, MIN_INDEX_VISIBLE, SceneLabel,
                                available_textures, render_scene)

# 2: many index fonts, font suit pips, real court art on procedural faces (vision/synth/faces.py)
# 3: also "not an index" crops (classify/<split>/none), the classifier's reject class
# 4: photographed table textures (GIMP patterns) among the surfaces
# 5: a printed page (newspaper, book) under the cards in 15% of scenes, on its own stream
# 6: procedural four-colour decks follow several real conventions (or none), not one
# 7: a quarter of the scenes under light nobody white-balanced (scene.COLOUR_CAST_SHARE)
# 8: FreeSerif's suit symbols mapped right (it draws U+2660 as a club): a tenth of the
#    procedural designs had spades and clubs labelled the other way round
# 9: Adrian Kennard's four decks (an npm package, datasets/install-npm-decks.sh) join the
#    training decks: new court art, a slab typeface with a flat-topped 3, jumbo indices
# 10: Chris Aguilar's English pattern (a second npm package) joins them: the narrow serif
#     indices and court art of the common club and casino decks; 30% of the procedural
#     training designs print jumbo indices (faces.JUMBO_SHARE)
# 11: those jumbo ranks condensed to a real jumbo height, a fifth to a quarter of the card,
#     their pip under the rank and inside the margin
GENERATOR_VERSION = "11"
# How far a stretched scene (``stretch_share``) squeezes one axis: 0.5625 is a 16:9 frame
# stretched to a square, 0.75 a 4:3 photo.
STRETCH_RANGE = (0.55, 0.95)
EXPOSURE_RANGE = (1.2, 1.6)   # an exposure_share scene's light gain on top of its usual 0.65-1.25
MIN_CROP_INDEX_PX = 13    # smaller indices are unreadable even to a person: no label to learn from
SIZES = ((416, 312), (416, 416), (416, 234), (312, 416), (416, 312))
# Crop scenes are rendered larger: the classifier reads crops cut from the camera's
# full resolution, where an index is typically 15-60 px tall.
CROP_SCENE_SIZES = ((832, 624), (640, 640), (832, 468))


@dataclass(frozen=True)
class SynthConfig:
    out: Path
    images: int
    val_images: int
    seed: int
    procedural_share: float = 0.4
    crops_per_scene: int = 12
    deck_height: int = 400
    crops_only: bool = False   # classifier top-up: larger, closer scenes, no detector images
    negatives_per_scene: int = 3   # "not an index" crops (pips, court art, felt, chips, table print)
    # Weighting to where the detector loses indices (render_scene's courts_first, blurred):
    # the share of scenes that deal their court cards first, and that are strongly blurred.
    court_share: float = 0.0
    blur_share: float = 0.0
    # The share of scenes that show one hand held up in a player's fan (render_scene's
    # "held"): the photos of fanned hands that table layouts never draw.
    held_share: float = 0.0
    # The share of scenes squeezed along one axis to 0.55-0.95 (render_scene's ``squeeze``), as
    # a photo exported stretched to a square is: narrower or shorter indices than a lens draws.
    stretch_share: float = 0.0
    # The share of scenes overexposed by EXPOSURE_RANGE (render_scene's ``exposure``): whites
    # clipped, pale ink faded, where the detector stops boxing indices (real photos x1.25).
    exposure_share: float = 0.0
    # Scenes rendered this many times the SIZES (or CROP_SCENE_SIZES) in pixels, the layout the
    # same in proportion: a detector trained at an input over 416 px (`niuniu detect`
    # reads photos at 480) learns from real detail instead of an enlarged scene.
    scene_scale: float = 1.0
    # Training scenes draw their procedural designs from the first N training styles
    # (faces.PROCEDURAL_TRAIN_SEEDS holds 400): the classifier's misreads on held-out
    # designs gather on a few designs, so it may need more of them, not more of each.
    procedural_designs: int = len(PROCEDURAL_TRAIN_SEEDS)
    # Classifier crops are cut at this square size: a classifier trained at another input
    # size (`niuniu train classify --imgsz`) must learn from crops cut at that size, not
    # from 64 px crops enlarged, or it learns the enlargement's blur.
    crop_size: int = CROP_SIZE
    # How classifier crops are cut: "box" as ``index_crop`` frames a detector's box (the
    # index at its own angle), "upright" turned by the index's angle (``vision.orientation``:
    # for a classifier read after the orientation model).
    crop_view: str = "box"
    # Also write OUT/orient/{split}/aNNN/: the box-framed index crops sorted by their angle,
    # the orientation model's training data.
    orientation_crops: bool = False
    # Detector labels on corner indices this much visible or more (``render_scene``'s
    # ``min_index_visible``).  Classifier and orientation crops are still cut only from indices
    # at least ``MIN_INDEX_VISIBLE`` visible, so lowering it changes the detector's labels alone.
    index_visible: float = MIN_INDEX_VISIBLE


# What a set is made with beyond its seed: recorded in its manifest, checked again before mining it.
RECIPE = ("procedural_share", "court_share", "blur_share", "scene_scale", "procedural_designs", "crop_size",
          "held_share", "stretch_share", "exposure_share", "crop_view", "index_visible")


class _DeckPool:
    """Loads decks lazily, once per worker process."""

    def __init__(self, split: str, deck_height: int):
        from vision.synth import decks

        self.split = split
        self.height = deck_height
        self.names = decks.deck_names("train" if split == "train" else "holdout")
        self.cache: dict[str, object] = {}

    def get(self, rng: np.random.Generator, procedural_share: float, designs: int):
        from vision.synth.decks import load_deck
        from vision.synth.faces import procedural_deck

        if not self.names or rng.random() < procedural_share:
            first = PROCEDURAL_TRAIN_SEEDS.start
            seeds = range(first, first + designs) if self.split == "train" else PROCEDURAL_HOLDOUT_SEEDS
            seed = int(seeds[int(rng.integers(len(seeds)))])
            key = f"procedural-{seed}"
            if key not in self.cache:
                if len(self.cache) > 60:
                    self.cache.clear()
                self.cache[key] = procedural_deck(seed, self.height)
            return self.cache[key]
        name = self.names[int(rng.integers(len(self.names)))]
        if name not in self.cache:
            self.cache[name] = load_deck(name, height=self.height)
        return self.cache[name]


_POOLS: dict[str, _DeckPool] = {}


def _rng(cfg: SynthConfig, split: str, i: int, *stream: int) -> np.random.Generator:
    """Scene ``i``'s random stream (``stream`` picks a side stream: what is drawn there
    leaves the scene and its index crops as they were)."""
    return np.random.default_rng([cfg.seed, 0 if split == "train" else 1, i, *stream]
                                 + ([1] if cfg.crops_only else []))


def save_crop(path: Path, image: np.ndarray, box, rng: np.random.Generator | None, size: int = CROP_SIZE,
              angle: float | None = None) -> None:
    """One classifier training crop, framed as the detector frames it at reading time (and
    turned upright by ``angle``, as the orientation model's reading turns it)."""
    crop = index_crop(image, box, rng, size) if angle is None else upright_crop(image, box, angle, size, rng)
    ok, buf = cv2.imencode(".jpg", crop, [cv2.IMWRITE_JPEG_QUALITY, 92])
    if not ok:
        raise NiuniuError(f"could not encode the crop {path} as JPEG")
    path.write_bytes(buf.tobytes())


def _scaled(size: tuple[int, int], scale: float) -> tuple[int, int]:
    return round(size[0] * scale), round(size[1] * scale)


def render_one(cfg: SynthConfig, split: str, i: int):
    """Scene ``i`` of a data set, as written: ``(stem, scene, jpeg bytes, decoded image, rng, deck name)``.

    The rng is returned where the scene left it, for the crops cut after it."""
    pool = _POOLS.get(split)
    if pool is None:
        pool = _POOLS[split] = _DeckPool(split, cfg.deck_height)
    rng = _rng(cfg, split, i)
    deck = pool.get(rng, cfg.procedural_share, cfg.procedural_designs)
    if cfg.crops_only:
        size = _scaled(CROP_SCENE_SIZES[int(rng.integers(len(CROP_SCENE_SIZES)))], cfg.scene_scale)
        kind, stem = str(rng.choice(["table", "hands", "closeup"], p=[0.3, 0.5, 0.2])), f"c{i:06d}"
    else:
        size = _scaled(SIZES[int(rng.integers(len(SIZES)))], cfg.scene_scale)
        kind, stem = None, f"{i:06d}"   # render_scene draws the kind
    # Own stream: with every share 0 a seed gives the scenes it gave before the shares existed.
    weight_rng = _rng(cfg, split, i, 17)
    courts_first, blurred = weight_rng.random() < cfg.court_share, weight_rng.random() < cfg.blur_share
    if weight_rng.random() < cfg.held_share:
        kind = "held"
    squeeze = (1.0, 1.0)
    if weight_rng.random() < cfg.stretch_share:
        factor = float(weight_rng.uniform(*STRETCH_RANGE))
        squeeze = (factor, 1.0) if weight_rng.random() < 0.5 else (1.0, factor)
    exposure = float(weight_rng.uniform(*EXPOSURE_RANGE)) if weight_rng.random() < cfg.exposure_share else 1.0
    scene = render_scene(rng, deck, size=size, kind=kind, colour_casts=COLOUR_CAST_SHARE,
                         courts_first=courts_first, blurred=blurred, squeeze=squeeze, exposure=exposure,
                         min_index_visible=cfg.index_visible)
    ok, buf = cv2.imencode(".jpg", scene.image, [cv2.IMWRITE_JPEG_QUALITY, scene.jpeg_quality])
    if not ok:
        raise NiuniuError(f"could not encode scene {i} as JPEG")
    # Crops come from the decoded JPEG: the classifier sees what the camera delivers.
    return stem, scene, buf, cv2.imdecode(buf, cv2.IMREAD_COLOR), rng, deck.name


def _make_one(args) -> dict:
    cfg, split, i = args
    stem, scene, buf, image, rng, deck_name = render_one(cfg, split, i)
    det = cfg.out / "detect"
    if not cfg.crops_only:
        (det / "images" / split / f"{stem}.jpg").write_bytes(buf.tobytes())
    h, w = image.shape[:2]
    lines = []
    for lab in scene.labels:
        x0, y0, x1, y1 = lab.box
        lines.append(f"{lab.cls} {(x0 + x1) / 2 / w:.6f} {(y0 + y1) / 2 / h:.6f} "
                     f"{(x1 - x0) / w:.6f} {(y1 - y0) / h:.6f}")
    if not cfg.crops_only:
        (det / "labels" / split / f"{stem}.txt").write_text("\n".join(lines) + ("\n" if lines else ""))
    crops = 0
    index_labels = _readable_indices(scene)
    order = rng.permutation(len(index_labels))[: cfg.crops_per_scene]
    upright = cfg.crop_view == "upright"
    for k in order:
        lab = index_labels[int(k)]
        save_crop(cfg.out / "classify" / split / lab.code / f"{stem}_{int(k):02d}.jpg", image, lab.box, rng,
                  cfg.crop_size, lab.up if upright else None)
        crops += 1
    if cfg.orientation_crops:
        # Own stream: the classifier crops stay as they were with or without these.
        orient_rng = _rng(cfg, split, i, 23)
        for k, lab in enumerate(index_labels):
            save_crop(cfg.out / "orient" / split / class_of_angle(lab.up) / f"{stem}_{k:02d}.jpg", image, lab.box,
                      orient_rng, cfg.crop_size)
    # Own random stream: adding negatives leaves every other byte of the data set as it was.
    neg_rng = _rng(cfg, split, i, 7)
    boxes = not_index_boxes(scene, neg_rng, cfg.negatives_per_scene)
    for k, box in enumerate(boxes):
        # Not an index has no angle: an upright set turns it whichever way the orientation
        # model might read it.
        turn = float(neg_rng.uniform(0, 360)) if upright else None
        save_crop(cfg.out / "classify" / split / NOT_INDEX / f"{stem}_n{k:02d}.jpg", image, box, neg_rng,
                  cfg.crop_size, turn)
    return {"deck": deck_name, "labels": len(lines), "crops": crops, "negatives": len(boxes)}


def clear_of_indices(scene, box) -> bool:
    """Whether the widest crop ``index_crop`` may cut around ``box`` touches no index
    quad of the scene, visible or hidden (an index half under a card is still an index)."""
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    half = 0.75 * 1.15 * 1.3 * max(box[2] - box[0], box[3] - box[1])
    for q in scene.index_quads:
        x0, y0 = q.min(axis=0)
        x1, y1 = q.max(axis=0)
        if cx - half < x1 and x0 < cx + half and cy - half < y1 and y0 < cy + half:
            return False
    return True


def _manifest_name(crops_only: bool) -> str:
    return "manifest-crops.json" if crops_only else "manifest.json"


def _read_manifest(path: Path) -> dict | None:
    try:
        manifest = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def config_of_set(out: Path, crops_only: bool | None = None, **given) -> SynthConfig:
    """The config that made the set in ``out``, read from its manifest, so that mining
    renders exactly its scenes again without the maker's flags retyped.

    ``crops_only`` picks the scenes of a crops-only top-up (``manifest-crops.json``) over
    the detector scenes; left ``None`` it is the one manifest the folder holds.  A value
    in ``given`` (``images``, ``seed`` or a ``RECIPE`` key; ``None`` means not given) fills
    in what an older manifest never recorded; where the manifest does record it, a
    different value is refused by ``mine_detector_crops`` with the flag to give, and
    fewer ``images`` than the set holds mine only its first scenes."""
    if crops_only is None:
        crops_only = not (out / "manifest.json").is_file() and (out / "manifest-crops.json").is_file()
    manifest = _read_manifest(out / _manifest_name(crops_only)) or {}
    values = {}
    for key in ("images", "seed", *RECIPE):
        if given.get(key) is not None:
            values[key] = given[key]
        elif key in manifest:
            values[key] = manifest[key]
    missing = [key for key in ("images", "seed") if key not in values]
    if missing:
        flags = " and ".join(f"--{key}" for key in missing)
        raise NiuniuError(f"{out / _manifest_name(crops_only)} is missing or does not record {', '.join(missing)}: "
                          f"give {flags} as they were given to `niuniu datasets synth` for this set")
    return SynthConfig(out=out, val_images=0, crops_only=crops_only, **values)


def _check_same_recipe(cfg: SynthConfig) -> None:
    """Mining renders a set's scenes again from its seed: a set made by another generator,
    or from another seed, with other shares or at another scale, would get crops of
    scenes it does not hold (generator 7 alone recolours a quarter; a court share deals
    other cards), and so would scenes past the last one it holds."""
    path = cfg.out / _manifest_name(cfg.crops_only)
    manifest = _read_manifest(path)
    if manifest is None:
        return
    made = manifest.get("generator")
    if made is not None and str(made) != GENERATOR_VERSION:
        raise NiuniuError(
            f"{path}: the set was made by generator {made}, this code is generator {GENERATOR_VERSION}; "
            f"mining renders the set's scenes again, so its crops would not match: make the set again with "
            f"`niuniu datasets synth`, or mine it with a checkout of generator {made}")
    # Every set made before crops had a size setting was cut at 64: crops of another size
    # mined into it would sit beside those, and training at either size would take both.
    manifest = {"crop_size": CROP_SIZE, "crop_view": "box", **manifest}
    for key in ("seed", *RECIPE):   # sets made before another option was recorded skip its check
        if key in manifest and manifest[key] != getattr(cfg, key):
            raise NiuniuError(
                f"{path}: the set was made with {key} {manifest[key]}, not {getattr(cfg, key)}; "
                f"mining renders the set's scenes again: give --{key.replace('_', '-')} {manifest[key]}, "
                f"or leave the flag out to take the set's own")
    if isinstance(manifest.get("images"), int) and cfg.images > manifest["images"]:
        raise NiuniuError(f"{path}: the set holds {manifest['images']} training scenes, not {cfg.images}: "
                          f"give --images {manifest['images']} or fewer, or leave it out to mine them all")


def mine_detector_crops(cfg: SynthConfig, detector, split: str = "train", per_scene: int = 4,
                        readings_per_scene: int = 0, progress: bool = True) -> dict:
    """Classifier crops cut where ``detector`` really puts its boxes in the data set's own
    scenes.  Scenes are rendered again from their seed (the data set on disk has no record
    of hidden indices), so ``cfg`` must be the config that made the set.

    * Up to ``per_scene`` hard "not an index" crops: boxes clear of every index.  Random
      negatives are mostly plain felt; these are the pips, court art, chips and table
      print the detector really takes for indices.
    * Up to ``readings_per_scene`` crops of boxes on a labelled index (IoU >= 0.5), filed
      under that card and framed exactly as reading frames them.  Generated crops are
      centred on the whole printed index; the detector boxes what shows of a half-covered
      one, so these teach the classifier the framing it is really given.
    A box that only touches an index (neither) is left out: it is no clear example of either."""
    _check_same_recipe(cfg)
    root = cfg.out / "classify" / split
    (root / NOT_INDEX).mkdir(parents=True, exist_ok=True)
    n = cfg.images if split == "train" else cfg.val_images
    started, found, crops, readings = time.monotonic(), 0, 0, 0
    upright = cfg.crop_view == "upright"
    for i in range(n):
        stem, scene, _, image, _, _ = render_one(cfg, split, i)
        indices, _ = detector.find_indices(image)
        strays = [b for b, _ in indices if clear_of_indices(scene, b)]
        found += len(strays)
        rng = _rng(cfg, split, i, 11)
        for k in rng.permutation(len(strays))[:per_scene]:
            turn = float(rng.uniform(0, 360)) if upright else None
            save_crop(root / NOT_INDEX / f"{stem}_h{int(k):02d}.jpg", image, strays[int(k)], rng, cfg.crop_size,
                      turn)
            crops += 1
        if readings_per_scene > 0:
            on_index = _boxes_on_labelled_indices(scene, [b for b, _ in indices])
            read_rng = _rng(cfg, split, i, 13)
            for k in read_rng.permutation(len(on_index))[:readings_per_scene]:
                box, lab = on_index[int(k)]
                folder = root / lab.code
                folder.mkdir(parents=True, exist_ok=True)
                save_crop(folder / f"{stem}_d{int(k):02d}.jpg", image, box, None, cfg.crop_size,
                          lab.up if upright else None)
                readings += 1
        if progress:
            _progress(i + 1, n, started, split)
    return {"scenes": n, "false_indices": found, "crops": crops, "readings": readings,
            "seconds": round(time.monotonic() - started, 1)}


def _readable_indices(scene) -> list:
    """The scene's labelled indices big enough to read (the ones crops are cut from)."""
    return [lab for lab in scene.labels if lab.cls == INDEX_CLASS and lab.visible >= MIN_INDEX_VISIBLE
            and max(lab.box[2] - lab.box[0], lab.box[3] - lab.box[1]) >= MIN_CROP_INDEX_PX]


def _boxes_on_labelled_indices(scene, boxes, min_iou: float = 0.5) -> list[tuple[tuple, SceneLabel]]:
    """``(box, label)`` for each box that overlaps a readable labelled index at ``min_iou``."""
    labels = _readable_indices(scene)
    out = []
    for box in boxes:
        iou, k = max(((box_iou(box, lab.box), k) for k, lab in enumerate(labels)), default=(0.0, None))
        if iou >= min_iou:
            out.append((tuple(float(v) for v in box), labels[k]))
    return out


def not_index_boxes(scene, rng: np.random.Generator, n: int, tries: int = 40) -> list[tuple]:
    """Index-sized boxes where no corner index is, visible or hidden: what the detector
    mistakes for an index (pips and court art inside cards, chips, felt, table print),
    so the classifier learns to say "not an index" instead of naming a card.

    Boxes are the size of this scene's indices and fall inside a card 60% of the time.
    A box whose crop would touch any index quad is dropped: an index half under another
    card is still an index, and the fanned hands need it read, not rejected."""
    h, w = scene.image.shape[:2]
    sizes = [max(np.ptp(q[:, 0]), np.ptp(q[:, 1])) for q in scene.index_quads]
    if n <= 0 or not sizes:
        return []
    size = float(np.median(sizes))
    if size < MIN_CROP_INDEX_PX:
        return []
    out: list[tuple] = []
    for _ in range(tries):
        if len(out) == n:
            break
        s = size * rng.uniform(0.7, 1.4)
        bw = s * rng.uniform(0.45, 1.0)
        if scene.card_quads and rng.random() < 0.6:
            quad = scene.card_quads[int(rng.integers(len(scene.card_quads)))]
            a, b = rng.uniform(0.15, 0.85, size=2)   # bilinear point inside the card
            top = quad[0] + (quad[1] - quad[0]) * a
            bottom = quad[3] + (quad[2] - quad[3]) * a
            cx, cy = top + (bottom - top) * b
        else:
            cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        box = (cx - bw / 2, cy - s / 2, cx + bw / 2, cy + s / 2)
        if box[0] < 0 or box[1] < 0 or box[2] > w or box[3] > h or not clear_of_indices(scene, box):
            continue
        out.append(tuple(float(v) for v in box))
    return out


def _progress(done: int, total: int, started: float, label: str) -> None:
    if not sys.stderr.isatty() and done not in (total,) and done % max(1, total // 20):
        return
    rate = done / max(time.monotonic() - started, 1e-6)
    bar = "#" * int(30 * done / max(total, 1))
    sys.stderr.write(f"\r{label:5s} [{bar:<30s}] {done}/{total} {rate:5.1f} img/s")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def write_dataset(cfg: SynthConfig, workers: int | None = None, progress: bool = True) -> dict:
    """Generate ``cfg.images`` training and ``cfg.val_images`` validation scenes."""
    if cfg.images < 1:
        raise NiuniuError("--images must be at least 1")
    out = cfg.out
    for split in ("train", "val"):
        (out / "detect" / "images" / split).mkdir(parents=True, exist_ok=True)
        (out / "detect" / "labels" / split).mkdir(parents=True, exist_ok=True)
        for code in (*CARD_CODES, NOT_INDEX):
            (out / "classify" / split / code).mkdir(parents=True, exist_ok=True)
        if cfg.orientation_crops:
            for name in ANGLE_CLASSES:
                (out / "orient" / split / name).mkdir(parents=True, exist_ok=True)
    workers = workers or min(2, os.cpu_count() or 1)
    summary: dict = {"generator": GENERATOR_VERSION, "seed": cfg.seed, "images": cfg.images,
                     "val_images": cfg.val_images, "classes": list(CLASS_NAMES), "splits": {},
                     **{key: getattr(cfg, key) for key in RECIPE}, "orientation_crops": cfg.orientation_crops,
                     # the same seed gives the same bytes only with the same fonts installed
                     "fonts": [Path(f).name for f in available_fonts()],
                     "pip_fonts": [Path(f).name for f in available_pip_fonts()],
                     "textures": len(available_textures())}
    ctx = get_context("fork")
    for split, n in (("train", cfg.images), ("val", cfg.val_images)):
        if n == 0:
            continue
        started = time.monotonic()
        decks: dict[str, int] = {}
        labels = crops = negatives = 0
        jobs = [(cfg, split, i) for i in range(n)]
        with ctx.Pool(workers) as pool:
            for done, res in enumerate(pool.imap(_make_one, jobs, chunksize=4), 1):
                decks[res["deck"]] = decks.get(res["deck"], 0) + 1
                labels += res["labels"]
                crops += res["crops"]
                negatives += res["negatives"]
                if progress:
                    _progress(done, n, started, split)
        summary["splits"][split] = {"scenes": n, "labels": labels, "crops": crops, "not_index_crops": negatives,
                                    "decks": dict(sorted(decks.items())),
                                    "seconds": round(time.monotonic() - started, 1)}
    if cfg.crops_only:
        (out / "manifest-crops.json").write_text(json.dumps(summary, indent=2) + "\n")
        return summary
    (out / "detect" / "data.yaml").write_text(
        f"path: {out.resolve() / 'detect'}\ntrain: images/train\nval: images/val\n"
        + "names:\n" + "".join(f"  {i}: {n}\n" for i, n in enumerate(CLASS_NAMES)))
    (out / "manifest.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary
