"""What reading a photo the photo way costs, step by step, against reading it once.

    python3 bench/bench_photo.py                   # the committed held-out photos, 3 rounds
    python3 bench/bench_photo.py PHOTO... --rounds 5

`niuniu detect` reads a photo more ways than the table pipeline reads a frame: it checks
for salt-and-pepper specks (vision.speckle), blur and smear (vision.blur), asks the mirror judge whether the photo is
mirrored (vision.mirror), and reads it as it is, re-stretched 4:3 across and down, sharpened and
zoomed out, keeping the surest reading.  Prints, per photo (the median of the rounds):
  * ms read once (``--read-once``, the table pipeline's way) and ms as `niuniu detect` reads
    it, and their ratio;
  * ms of the speck check and of the blur check (vision.blur.sharpened: is it blurred every
    way or smeared one way, and if so the sharpened image) alone, at the photo's size and at
    1080p and 4K, and ms of the mirror judge alone (its own detector pass plus the judge on
    the index crops).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from functools import partial
from pathlib import Path

import cv2

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kiosk.cli import build_parser  # noqa: E402
from vision.blur import sharpened  # noqa: E402
from vision.model_cli import _detector  # noqa: E402
from vision.speckle import speck_share  # noqa: E402

HELD_OUT = REPO / "tests" / "data" / "heldout"


def median_ms(work, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("photos", nargs="*", type=Path, help="photos to read (default: tests/data/heldout/*.jpg)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    paths = args.photos or sorted(HELD_OUT.glob("*.jpg"))
    cli = build_parser()
    once = _detector(cli.parse_args(["detect", "x.jpg", "--read-once"]))
    photo = _detector(cli.parse_args(["detect", "x.jpg"]))
    print(f"{photo.name} + {photo.mirror_judge_path.name}, photos read at {photo.imgsz}, {args.rounds} rounds (median)")
    print(f"{'photo':34} {'size':>9} {'once ms':>8} {'photo ms':>9} {'ratio':>6} "
          f"{'judge ms':>9} {'specks ms':>9} {'blur ms':>8}")
    ratios = []
    for path in paths:
        image = cv2.imread(str(path))
        if image is None:
            sys.exit(f"bench_photo: {path} is not a readable image")
        once.detect(image)   # first call of each model warms it up
        photo.detect(image)
        t_once = median_ms(partial(once.detect, image), args.rounds)
        t_photo = median_ms(partial(photo.detect, image), args.rounds)
        t_judge = median_ms(partial(photo.mirrored_odds, image), args.rounds)
        t_specks = median_ms(partial(speck_share, image), args.rounds)
        t_blur = median_ms(partial(sharpened, image), args.rounds)
        ratios.append(t_photo / t_once)
        h, w = image.shape[:2]
        print(f"{path.name[:34]:34} {w:>4}x{h:<4} {t_once:8.0f} {t_photo:9.0f} {t_photo / t_once:6.1f} "
              f"{t_judge:9.0f} {t_specks:9.1f} {t_blur:8.1f}")
    print(f"photo way / read once: median ratio {statistics.median(ratios):.1f} over {len(ratios)} photos")
    first = cv2.imread(str(paths[0]))
    for w, h in ((1920, 1080), (3840, 2160)):
        big = cv2.resize(first, (w, h), interpolation=cv2.INTER_CUBIC)
        print(f"at {w}x{h}: speck check {median_ms(partial(speck_share, big), args.rounds):.1f} ms, "
              f"blur check {median_ms(partial(sharpened, big), args.rounds):.1f} ms")


if __name__ == "__main__":
    main()
