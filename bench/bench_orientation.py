"""Does a card classifier read an index better standing up?  (session 40, ``vision.orientation``)

Two steps, both on crop scenes of the usual recipe (``--crops-only --held-share 0.25
--blur-share 0.1``), held-out designs for ``val``:

``sets OUT --train N --val N --seed S`` cuts, for every readable index, four crop sets
side by side (``OUT/<set>/<split>/<card>/``), from one random stream per scene:

* ``A``     as the detector's box frames it today (``index_crop``: the index at any angle);
* ``U180``  turned by the index's true angle, off by 8 degrees (one sigma), and half of
  them turned half round more (what an oriented box knows: its angle mod 180);
* ``U360``  turned by the true angle, off by 8 degrees (an angle known all the way round);
  both framed by the index's own size (an oriented box);
* ``UA``    turned as reading turns it (``upright_crop``): the detector's box, the angle off
  by ``TRAIN_TURN_ERROR``;

and ``ORI/<split>/aNNN/``: the ``A`` crops filed under their angle (the orientation
model's data).  Session 40 trained classifiers from nothing on ``A``, ``U360`` (5 epochs
each) and the orientation model on ``ORI``, and fine-tuned the v15 classifier on ``UA``
(models/README.md, "Fortieth session").

``read ORIENTATION.pt UPRIGHT.pt ANY_ANGLE.pt --val N --seed S`` renders the held-out scenes
again and reads each readable index's true box: an any-angle classifier as it read before
(v15's: 4 turns averaged), and the orientation model then the upright classifier (once, at the 3 turns of
``UPRIGHT_READINGS``, at the true angle); prints top-1 of each and the angle errors.

``hands NAME=CLASSIFIER[,SECOND_OPINION] ... --kind hands|held --count N --seed S`` reads the
readable indices of held-out table hands (or fans held up: the scenes ``niuniu evaluate
--synthetic-hands`` renders, ``vision.evaluate.held_out_hand``) through their true boxes, as the
reader reads them (``CardDetector.classify_indices``, after the shipped orientation model):
the classifiers' own share of hand failures, without the detector's, on the indices hands
show (smaller than the crop scenes': session 41).

    python bench/bench_orientation.py sets /work/data/s40/crops --train 8000 --val 800 --seed 4040
    python bench/bench_orientation.py read models/card-orientation.pt models/card-classifier.pt V15/card-classifier.pt
    python bench/bench_orientation.py hands shipped=models/card-classifier.pt,models/card-second-opinion.pt \
        alone=models/card-classifier.pt --kind hands --count 600 --seed 555
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from vision.detector import UPRIGHT_READINGS, _average_readings, _read_crops, index_crop  # noqa: E402
from vision.orientation import (  # noqa: E402
    ANGLE_CLASSES,
    angle_of_class,
    class_of_angle,
    read_angle,
    square_crop,
    upright_crop,
)
from vision.synth.dataset import SynthConfig, _readable_indices, _rng, render_one  # noqa: E402

SIZE = 64
ORACLE_ERROR = 8.0   # degrees, one sigma: an oriented box's angle is not exact either
_CFG: SynthConfig | None = None
_OUT: Path | None = None


def config(seed: int, train: int, val: int, out: Path = Path("/tmp/unused")) -> SynthConfig:
    return SynthConfig(out=out, images=train, val_images=val, seed=seed, crops_only=True, held_share=0.25,
                       blur_share=0.1)


def oracle_crop(image, lab, rng, any_half_turn: bool) -> np.ndarray:
    """Framed by the index's own size, as an oriented box would frame it."""
    q = np.asarray(lab.quad, np.float64)
    height = np.linalg.norm((q[0] + q[1]) / 2 - (q[3] + q[2]) / 2)
    width = np.linalg.norm((q[1] + q[2]) / 2 - (q[0] + q[3]) / 2)
    side = max(height, width) * 1.15 * rng.uniform(0.95, 1.3)
    centre = q.mean(axis=0) + rng.normal(0, 0.07, 2) * side
    angle = np.radians(lab.up + rng.normal(0, ORACLE_ERROR))
    if any_half_turn and rng.random() < 0.5:
        angle += np.pi
    return square_crop(image, centre, side, SIZE, (np.cos(angle), np.sin(angle)))


def _one_scene(job) -> list[str]:
    split, i = job
    stem, scene, _, image, _, _ = render_one(_CFG, split, i)
    rng = _rng(_CFG, split, i, 99)
    rows = []
    for k, lab in enumerate(_readable_indices(scene)):
        name = f"{stem}_{k:02d}.jpg"
        a = index_crop(image, lab.box, rng, SIZE)
        crops = (("A", a), ("U180", oracle_crop(image, lab, rng, True)), ("U360", oracle_crop(image, lab, rng, False)),
                 ("UA", upright_crop(image, lab.box, lab.up, SIZE, rng)))
        for kind, crop in crops:
            folder = _OUT / kind / split / lab.code
            folder.mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(folder / name), crop, [cv2.IMWRITE_JPEG_QUALITY, 92])
        folder = _OUT / "ORI" / split / class_of_angle(lab.up)
        folder.mkdir(parents=True, exist_ok=True)
        os.link(_OUT / "A" / split / lab.code / name, folder / name)
        rows.append(f"{split},{lab.code},{name},{lab.up:.2f}")
    return rows


def make_sets(out: Path, train: int, val: int, seed: int) -> None:
    global _CFG, _OUT
    _CFG, _OUT = config(seed, train, val, out), out
    out.mkdir(parents=True, exist_ok=True)
    jobs = [("train", i) for i in range(train)] + [("val", i) for i in range(val)]
    started, n = time.monotonic(), 0
    with get_context("fork").Pool(2) as pool, open(out / "angles.csv", "w", newline="") as fh:
        for done, rows in enumerate(pool.imap(_one_scene, jobs, chunksize=8), 1):
            fh.write("".join(r + "\n" for r in rows))
            n += len(rows)
            if done % 500 == 0:
                print(f"{done} of {len(jobs)} scenes, {n} indices, {time.monotonic() - started:.0f} s", flush=True)
    print(f"{n} indices of {len(jobs)} scenes in {out}")


def read(orientation: Path, upright: Path, any_angle: Path, val: int, seed: int) -> dict:
    from ultralytics import YOLO

    shipped, ori, up = (YOLO(str(p)) for p in (any_angle, orientation, upright))
    names = [up.names[i] for i in range(len(up.names))]
    angles = np.array([angle_of_class(n) for n in ANGLE_CLASSES])
    cfg = config(seed, 0, val)
    right = {"any-angle, 4 turns": 0, "upright, once": 0, "upright, 3 turns": 0, "upright at the true angle": 0}
    errors, n = [], 0

    def upright_reading(image, boxes, angle_list, turns) -> np.ndarray:
        crops = [upright_crop(image, b, a + t, SIZE) for t in turns for b, a in zip(boxes, angle_list)]
        p = np.stack([r.probs.data.numpy() for r in up.predict(crops, imgsz=SIZE, verbose=False, device="cpu")])
        return _average_readings(*p.reshape(len(turns), len(boxes), -1))

    for i in range(val):
        _, scene, _, image, _, _ = render_one(cfg, "val", i)
        labels = _readable_indices(scene)
        if not labels:
            continue
        boxes = [lab.box for lab in labels]
        crops = [index_crop(image, b, None, SIZE) for b in boxes]
        read_angles = [read_angle(r.probs.data.numpy(), angles)
                       for r in ori.predict(crops, imgsz=SIZE, verbose=False, device="cpu")]
        readings = {"any-angle, 4 turns": _read_crops(shipped, SIZE, image, boxes, tta=True),
                    "upright, once": upright_reading(image, boxes, read_angles, (0.0,)),
                    "upright, 3 turns": upright_reading(image, boxes, read_angles, UPRIGHT_READINGS),
                    "upright at the true angle": upright_reading(image, boxes, [lab.up for lab in labels],
                                                                 UPRIGHT_READINGS)}
        for what, probs in readings.items():
            right[what] += sum(names[int(j)] == lab.code for j, lab in zip(probs.argmax(1), labels))
        errors += [abs((a - lab.up + 180) % 360 - 180) for a, lab in zip(read_angles, labels)]
        n += len(labels)
    e = np.array(errors)
    return {"indices": n, **{k: round(v / n, 4) for k, v in right.items()},
            "angle error median": round(float(np.median(e)), 1),
            "angle error p90": round(float(np.percentile(e, 90)), 1),
            "share off by over 30": round(float((e > 30).mean()), 4),
            "share off by over 90": round(float((e > 90).mean()), 4)}


def read_hands(readers: dict[str, tuple[Path, Path | None]], kind: str, count: int, seed: int) -> dict:
    from vision.detector import DEFAULT_DETECTOR, DEFAULT_ORIENTATION, MODELS_DIR, CardDetector, read_as_indices
    from vision.evaluate import held_out_hand, load_decks

    built = {name: CardDetector(MODELS_DIR / f"{DEFAULT_DETECTOR}.pt", classifier, second_opinion=second or False,
                                orientation=MODELS_DIR / f"{DEFAULT_ORIENTATION}.pt")
             for name, (classifier, second) in readers.items()}
    loaded, right, n = load_decks(), dict.fromkeys(built, 0), 0
    for i in range(count):
        scene = held_out_hand(seed, i, kind, loaded)
        labels = _readable_indices(scene)
        if not labels:
            continue
        boxes = [lab.box for lab in labels]
        for name, det in built.items():
            cards, probs, not_index = det.classify_indices(scene.image, boxes)
            kept = set(read_as_indices(cards, probs, not_index))
            right[name] += sum(k in kept and det.card_of_class[c].code == lab.code
                               for k, (c, lab) in enumerate(zip(cards, labels)))
        n += len(labels)
    return {"kind": kind, "hands": count, "seed": seed, "indices": n, **{k: round(v / n, 4) for k, v in right.items()}}


def _reader(text: str) -> tuple[str, tuple[Path, Path | None]]:
    name, _, files = text.partition("=")
    classifier, _, second = files.partition(",")
    if not name or not classifier:
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=CLASSIFIER[,SECOND_OPINION]")
    return name, (Path(classifier), Path(second) if second else None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sets")
    s.add_argument("out", type=Path)
    s.add_argument("--train", type=int, default=8000)
    s.add_argument("--val", type=int, default=800)
    s.add_argument("--seed", type=int, default=4040)
    r = sub.add_parser("read")
    r.add_argument("orientation", type=Path)
    r.add_argument("upright", type=Path)
    r.add_argument("any_angle", type=Path, help="a classifier trained on crops at any angle (v15's), read at 4 turns")
    r.add_argument("--val", type=int, default=800)
    r.add_argument("--seed", type=int, default=4040)
    h = sub.add_parser("hands")
    h.add_argument("readers", type=_reader, nargs="+", help="NAME=CLASSIFIER[,SECOND_OPINION], read upright")
    h.add_argument("--kind", choices=("hands", "held"), default="hands")
    h.add_argument("--count", type=int, default=600)
    h.add_argument("--seed", type=int, default=555)
    args = ap.parse_args()
    if args.cmd == "sets":
        make_sets(args.out, args.train, args.val, args.seed)
    elif args.cmd == "hands":
        print(json.dumps(read_hands(dict(args.readers), args.kind, args.count, args.seed)))
    else:
        print(json.dumps(read(args.orientation, args.upright, args.any_angle, args.val, args.seed), indent=1))


if __name__ == "__main__":
    main()
