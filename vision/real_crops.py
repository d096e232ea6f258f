"""Index crops cut from labelled REAL photos, so the classifier learns what a camera sees.

The classifier is trained on synthetic crops; a real phone or table camera adds sheen,
ink spread, sensor noise and lens blur that no renderer gets quite right, and the gap
shows (real sets read worse than held-out synthetic designs).  A real photo set with
whole-card labels (YOLO format, ``data.yaml`` naming ``'10 of clubs'`` ...) is turned
into classifier crops without drawing a single index box by hand:

* the shipped index detector finds the corner indices;
* an index takes the card of the *one* labelled card box that holds it; an index in
  several boxes (overlapping cards) is skipped, because a wrong label teaches more harm
  than a missing one teaches good;
* a detection that touches no labelled card at all is the background (printed fabric,
  wood grain) taken for an index: it becomes a crop of the classifier's reject class
  (``OUT/<split>/none``), the real false positives the synthetic scenes cannot foresee.

**Mirrored copies.**  Augmented sets (poker4's ``train``) flip photos left-right or
top-bottom at random, and a mirrored index is not a card.  Flipping both ways is only a
half turn, which is fine.  Which copies are mirrored is not recorded, so every photo is
read both as it is and mirrored, and kept in the orientation in which the classifier
finds the labelled cards more likely (mirrored photos are un-mirrored before cutting).
A photo whose two readings are too close to call is skipped.  The counts are
reported, so the decision can be checked (on poker4's original ``valid`` photos: none
un-mirrored).

Output, ready to be linked into a classifier data folder::

    OUT/<split>/<CARD>/<photo>_<index>_<copy>.jpg
    OUT/real-crops.json   counts per split, the current classifier's top-1 on the crops
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from vision.detector import CROP_SIZE, NOT_INDEX
from vision.evaluate import load_yolo_set
from vision.mirror import mirror_box, mirror_image
from vision.synth.dataset import save_crop

MIN_INDEX_CONF = 0.35       # below this the "index" is as often a pip or a mark
MIN_INSIDE_SHARE = 0.7      # share of the index box that must lie in its card's box
# Mean log-likelihood gap per index (nats) between a photo as it is and mirrored.  On
# poker4 the gaps split into two clusters, |gap| > 0.43 nats (47 of 60 train photos
# outside +-1); a photo closer to 0 than this is skipped rather than guessed.
MIRROR_MARGIN = 0.3


def _inside_share(inner, outer) -> float:
    ix = max(0.0, min(inner[2], outer[2]) - max(inner[0], outer[0]))
    iy = max(0.0, min(inner[3], outer[3]) - max(inner[1], outer[1]))
    area = (inner[2] - inner[0]) * (inner[3] - inner[1])
    return ix * iy / area if area > 0 else 0.0


def assign_cards(index_boxes, truth) -> list[str | None]:
    """The labelled card each index belongs to, or None where it is not unambiguous."""
    out = []
    for box in index_boxes:
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        holders = [(code, cb) for code, cb in truth if cb[0] <= cx <= cb[2] and cb[1] <= cy <= cb[3]]
        if len(holders) == 1 and _inside_share(box, holders[0][1]) >= MIN_INSIDE_SHARE:
            out.append(holders[0][0])
        else:
            out.append(None)
    return out


def off_every_card(index_boxes, truth, margin: float = 0.05) -> list[bool]:
    """Which detections touch no labelled card box (each grown by ``margin`` of its size)."""
    grown = [(cb[0] - margin * (cb[2] - cb[0]), cb[1] - margin * (cb[3] - cb[1]),
              cb[2] + margin * (cb[2] - cb[0]), cb[3] + margin * (cb[3] - cb[1])) for _, cb in truth]
    return [not any(b[0] < g[2] and g[0] < b[2] and b[1] < g[3] and g[1] < b[3] for g in grown)
            for b in index_boxes]


def _write_crops(image, box, folder: Path, stem: str, copies: int, rng, size: int, angle: float | None = None) -> int:
    """The plain crop and ``copies`` jittered ones (turned upright by ``angle`` if given)."""
    folder.mkdir(parents=True, exist_ok=True)
    for j in range(copies + 1):
        save_crop(folder / f"{stem}_{j}.jpg", image, box, rng if j else None, size, angle)
    return copies + 1


def _angles(detector, image, boxes) -> list[float | None]:
    """Each box's angle as the reader's orientation model reads it, for a classifier read
    upright; a photo's indices carry no angle label, and the crops must be turned the way
    reading will turn them anyway."""
    if getattr(detector, "orientation", None) is None or not boxes:
        return [None] * len(boxes)
    return detector.index_angles(image, boxes)


def harvest(detector, root: Path, split: str, out: Path, *, copies: int = 2, seed: int = 0,
            check_mirror: bool = True, out_split: str | None = None, negatives: bool = True,
            crop_size: int = CROP_SIZE) -> dict:
    """Write the index crops of one split of a YOLO-labelled real set (to ``OUT/<out_split>``,
    by default the split's own name); return counts."""
    images, _ = load_yolo_set(root, split)
    class_of = {c.code: i for i, c in enumerate(detector.card_of_class)}
    rng = np.random.default_rng(seed)
    stats = {"photos": len(images), "photos_used": 0, "unmirrored": 0, "crops": 0, "indices": 0,
             "skipped_ambiguous": 0, "skipped_orientation": 0, "read_right_before": 0,
             "not_index": 0, "not_index_crops": 0}
    for item in images:
        image = cv2.imread(str(item.path))
        if image is None:
            continue
        indices, _ = detector.find_indices(image)
        if negatives:
            strays = [b for (b, _), off in zip(indices, off_every_card([b for b, _ in indices], item.truth)) if off]
            for k, (box, angle) in enumerate(zip(strays, _angles(detector, image, strays))):
                stats["not_index_crops"] += _write_crops(image, box, out / (out_split or split) / NOT_INDEX,
                                                         f"{item.path.stem[:40]}_n{k:02d}", copies, rng, crop_size,
                                                         angle)
            stats["not_index"] += len(strays)
        indices = [(b, c) for b, c in indices if c >= MIN_INDEX_CONF]
        codes = assign_cards([b for b, _ in indices], item.truth)
        stats["skipped_ambiguous"] += sum(code is None for code in codes)
        kept = [(b, code) for (b, _), code in zip(indices, codes) if code is not None and code in class_of]
        if not kept:
            continue
        boxes = [b for b, _ in kept]
        truth_ids = np.array([class_of[code] for _, code in kept])
        _, probs, _ = detector.classify_indices(image, boxes)
        if check_mirror:
            width = image.shape[1]
            mirrored = mirror_image(image)
            mboxes = [mirror_box(b, width) for b in boxes]
            _, mprobs, _ = detector.classify_indices(mirrored, mboxes)
            rows = np.arange(len(kept))
            gap = float(np.mean(np.log(mprobs[rows, truth_ids] + 1e-6) - np.log(probs[rows, truth_ids] + 1e-6)))
            if abs(gap) < MIRROR_MARGIN:
                stats["skipped_orientation"] += 1
                continue
            if gap > 0:
                image, boxes, probs = mirrored, mboxes, mprobs
                stats["unmirrored"] += 1
        stats["photos_used"] += 1
        stats["indices"] += len(kept)
        stats["read_right_before"] += int((probs.argmax(axis=1) == truth_ids).sum())
        for k, (box, (_, code), angle) in enumerate(zip(boxes, kept, _angles(detector, image, boxes))):
            stats["crops"] += _write_crops(image, box, out / (out_split or split) / code,
                                           f"{item.path.stem[:40]}_{k:02d}", copies, rng, crop_size, angle)
    stats["top1_before"] = round(stats["read_right_before"] / stats["indices"], 4) if stats["indices"] else None
    return stats


def harvest_set(detector, root: Path, out: Path, splits: dict[str, str], *, copies: int = 2, seed: int = 0,
                crop_size: int = CROP_SIZE) -> dict:
    """``splits`` maps a set's split name to the output split (e.g. train->train, valid->val)."""
    summary = {"source": str(root), "detector": getattr(detector, "name", ""), "crop_size": crop_size, "splits": {}}
    for source_split, out_split in splits.items():
        summary["splits"][f"{source_split}->{out_split}"] = harvest(
            detector, root, source_split, out, copies=copies, seed=seed, out_split=out_split,
            crop_size=crop_size)
    (out / "real-crops.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary
