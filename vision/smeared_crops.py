"""A classifier crop set with smeared copies: what a moving hand or camera does to an index.

The held-out hands the reader finds smeared (``vision.blur.motion_blur``) hold more of the
failing table hands than any other condition (13 of 46 in the thirty-first session), and
they fail on the classifier: 5 read as 10, 6 as 8, a spade as a club.  Unsmearing at reading
time mends few of them, and the scenes' own motion blur (3-9 px in a 640 px scene) is a few
pixels at the crop's scale in the crops-only sets, rendered larger.  So the classifiers
learn smeared indices from copies smeared at the crop's own scale: a straight blur
``SMEAR_SHARE_OF_SIDE`` of the crop's side long, in any direction.  The original crops are
linked, not copied, and the validation crops are the source's own (so a top-1 stays
comparable with the source set's).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from scoring.errors import NiuniuError
from vision.blur import line_blur_kernel

# A 9 px smear on a 640 px photo is 15-20 px on a 64 px crop of a 30 px index; the low end
# is a smear the reader's own check does not call one.
SMEAR_SHARE_OF_SIDE = (0.08, 0.3)
JPEG_QUALITY = 92


def write_smeared_crops(src: Path, out: Path, share: float, seed: int = 0) -> dict:
    """``out/train/<class>/``: every crop of ``src/train/<class>/`` linked, and ``share`` of
    them (drawn per class, every class alike, the "no index" one too: a smeared mark is still
    no index) written smeared once more; ``out/val`` links ``src/val``."""
    import cv2

    src, out = Path(src).resolve(), Path(out)
    train_root = src / "train"
    if not train_root.is_dir():
        raise NiuniuError(f"{src} has no train/ folder: give a card classifier crop set (made by "
                          "`niuniu datasets synth` or real-crops)")
    if not 0.0 < share <= 1.0:
        raise NiuniuError(f"a smeared share of {share} writes nothing: give a share over 0 and up to 1, e.g. 0.3")
    rng = np.random.default_rng(seed)
    counts = {"linked": 0, "smeared": 0, "classes": 0}
    for class_dir in sorted(p for p in train_root.iterdir() if p.is_dir()):
        counts["classes"] += 1
        folder = out / "train" / class_dir.name
        folder.mkdir(parents=True, exist_ok=True)
        files = sorted(f for f in class_dir.iterdir() if f.suffix.lower() in (".jpg", ".jpeg", ".png"))
        for path in files:
            _link(path, folder / path.name)
        counts["linked"] += len(files)
        for i in sorted(rng.choice(len(files), round(share * len(files)), replace=False)) if files else []:
            crop = cv2.imread(str(files[i]))
            if crop is None:
                continue
            side = max(crop.shape[:2])
            length = max(3.0, rng.uniform(*SMEAR_SHARE_OF_SIDE) * side)
            smeared = cv2.filter2D(crop, -1, line_blur_kernel(length, rng.uniform(0, np.pi)),
                                   borderType=cv2.BORDER_REFLECT)
            cv2.imwrite(str(folder / f"{files[i].stem}_smeared.jpg"), smeared, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
            counts["smeared"] += 1
    if not counts["classes"]:
        raise NiuniuError(f"{train_root} holds no class folders")
    val_root = src / "val"
    for class_dir in sorted(p for p in val_root.iterdir() if p.is_dir()) if val_root.is_dir() else []:
        folder = out / "val" / class_dir.name
        folder.mkdir(parents=True, exist_ok=True)
        for path in class_dir.iterdir():
            _link(path, folder / path.name)
    return counts


def _link(target: Path, link: Path) -> None:
    """A symlink to the file itself (not to another link), so the set survives its source's links moving."""
    if not link.exists():
        os.symlink(target.resolve(), link)
