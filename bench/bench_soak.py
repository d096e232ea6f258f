"""Months on one process: does the kiosk's memory grow with the rounds it has played?

A table runs for weeks between restarts.  This plays ``--rounds`` rounds through the whole
production path — looping camera frames, the pipeline (motion gate, tracker, recorder), the
round machine, the table service, the audit log, retention — with a scripted detector in
place of the card model (the model's memory does not grow with rounds; everything around it
might), and the demo dealer settling and clearing each round.  It samples the process's
resident memory and Python's own allocations (tracemalloc) after a warm-up and at the end.

    python bench/bench_soak.py --rounds 600

Prints: rounds settled, frames read, resident memory at the warm-up and at the end, the
growth per 100 rounds, and the source lines whose allocations grew most (if any grow with
rounds, they are the leak).
"""

from __future__ import annotations

import argparse
import gc
import logging
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "kiosk"))

from kiosk.commands import _retention, build_kiosk  # noqa: E402
from kiosk.demo import DemoDealer  # noqa: E402
from kiosk_testing import ScriptedDetector, write_demo  # noqa: E402
from vision.sources import open_source  # noqa: E402
from vision.table import load_table_config  # noqa: E402

HANDS = [
    {"banker": "4S 6H QD 9C 9H", "1": "KS QS JS 10S 10H", "2": "AS 2S 3D 4D 5C", "3": "7C 8C 2D 6D 5S"},
    {"banker": "AH 2H 3H 4H 5S", "1": "KC KD QC QH JC", "2": "9S 8S 7S 6S 3C", "3": "JH JD 10D 7D 3S"},
]


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=600)
    parser.add_argument("--warmup", type=int, default=100,
                        help="rounds played before the first sample (the live feed keeps its last 256 states, "
                             "so memory rises until they are all there)")
    parser.add_argument("--every", type=int, default=100, help="rounds between samples of resident memory")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        demo, data = Path(tmp) / "demo", Path(tmp) / "data"
        script = write_demo(demo, HANDS, empty=10, dealt=30, fps=60.0)
        config = load_table_config(demo / "table.yaml")
        source = open_source(str(demo / "frames"), fps=config.camera.fps, loop=True)
        app, service, pipeline = build_kiosk(config, source, ScriptedDetector(script), data, demo=True)
        dealer = DemoDealer(service, pause=0.05, poll=0.02)
        retention = _retention(config, data, service, pipeline)
        tracemalloc.start(8)
        service.start()
        pipeline.start()
        dealer.start()
        retention.start()
        started = time.monotonic()
        samples = []
        try:
            targets = sorted({*range(args.warmup, args.rounds, args.every), args.rounds})
            for target in targets:
                while dealer.settled < target:
                    time.sleep(0.5)
                    if time.monotonic() - started > 60 * 60:
                        raise SystemExit(f"only {dealer.settled} rounds settled in an hour")
                gc.collect()
                snapshot = tracemalloc.take_snapshot() if target in (targets[0], targets[-1]) else None
                samples.append((dealer.settled, rss_mb(), snapshot))
                print(f"{dealer.settled} rounds settled, {pipeline.status().get('frame_no')} frames, "
                      f"RSS {samples[-1][1]:.1f} MB, {time.monotonic() - started:.0f} s", flush=True)
        finally:
            dealer.stop_event.set()
            retention.stop_event.set()
            pipeline.stop()
            service.stop("bench finished")
        (n0, rss0, snap0), (n1, rss1, snap1) = samples[0], samples[-1]
        per_100 = (rss1 - rss0) / (n1 - n0) * 100
        print(f"resident memory {rss0:.1f} -> {rss1:.1f} MB over {n1 - n0} rounds: {per_100:+.2f} MB per 100 rounds")
        grown = snap1.compare_to(snap0, "lineno")
        python_growth = sum(s.size_diff for s in grown) / 1e6
        print(f"Python allocations {python_growth:+.2f} MB over {n1 - n0} rounds; most grown:")
        for stat in grown[:6]:
            frame = stat.traceback[0]
            print(f"  {stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d} blocks  {frame.filename}:{frame.lineno}")
        if dealer.errors:
            print(f"dealer errors: {dealer.errors[:3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
