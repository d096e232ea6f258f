"""What checking the camera's aim costs the table (``vision.aim``).

The running table compares its picture with the calibration picture once every 10 s.  This
times that comparison on the demo's frames at their own size (1280x720) and scaled to the
Pi camera's 2304x1296 (``deploy/table.example.yaml``), and prints it against the frame
time at 10 frames a second — the share of the table's time the check takes.

    python bench/bench_aim.py --frames 40
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import cv2  # noqa: E402

from vision.aim import TableView  # noqa: E402
from vision.table import load_table_config  # noqa: E402

DEMO = ROOT / "datasets" / "demo"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=40, help="demo frames compared at each size")
    parser.add_argument("--every-s", type=float, default=10.0, help="seconds between checks on the table")
    parser.add_argument("--fps", type=float, default=10.0, help="the table camera's frame rate")
    args = parser.parse_args()
    zones = [z.polygon for z in load_table_config(DEMO / "table.yaml").seats]
    paths = sorted((DEMO / "frames").glob("*.jpg"))
    step = max(1, len(paths) // args.frames)
    frames = [cv2.imread(str(p)) for p in paths[::step][:args.frames]]
    print(f"{len(frames)} demo frames, one check every {args.every_s:g} s at {args.fps:g} frames a second")
    for size in ((1280, 720), (2304, 1296)):
        images = [cv2.resize(f, size) if (f.shape[1], f.shape[0]) != size else f for f in frames]
        started = time.perf_counter()
        view = TableView(images[0], zones)
        build_ms = (time.perf_counter() - started) * 1000
        times = []
        for image in images:
            started = time.perf_counter()
            view.compare(image)
            times.append((time.perf_counter() - started) * 1000)
        median = statistics.median(times)
        p95 = sorted(times)[int(0.95 * (len(times) - 1))]
        share = median / (args.every_s * 1000)
        print(f"{size[0]}x{size[1]}: view {build_ms:.1f} ms once; a check median {median:.1f} ms, p95 {p95:.1f} ms "
              f"= {median * args.fps / 1000:.2f} frame times, {share:.3%} of the table's time")


if __name__ == "__main__":
    main()
