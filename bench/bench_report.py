"""The shift report as the log grows: its time, and whether its memory stays flat.

A supervisor may ask the report page for any period, a year included, and the page runs
inside the kiosk on a Pi: the report must stream the log, holding running totals, not the
period's rounds.  This builds a log of bench_audit's rounds (5 seats, 37 records a round)
to each of ``--rounds`` in turn, extending the one log, and at each size measures
``period_report`` over the last 1,000 rounds and over the whole log, Python's peak
allocations during a whole-log report (tracemalloc, a run of its own: tracing slows it),
and ``niuniu audit report --json`` run as a child process (seconds, peak resident memory).

    python bench/bench_report.py --rounds 2000 8000
    python bench/bench_report.py --data-dir /path/to/data     # an existing log, read only

Prints a line per size; a report that streams shows the same peak at every size.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_audit import build, timed  # noqa: E402

from kiosk.audit import AuditLog, AuditType  # noqa: E402
from kiosk.report import period_report  # noqa: E402

SHIFT = 1000      # rounds in "the last shift" (about a busy table's day)


def traced_peak(fn) -> float:
    """MB of Python allocations at the peak of ``fn()``, above what was held before it."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def child_report(data_dir: str) -> tuple[float, int]:
    """Seconds and peak RSS (MB) of ``niuniu audit report --json`` over the whole log, in a
    process of its own: what the console command costs, interpreter included."""
    cmd = [sys.executable, "-m", "kiosk.cli", "audit", "report", "--data-dir", data_dir, "--json"]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):      # 1: records fail their hash, still a report
        raise SystemExit(f"audit report failed (status {status})")
    return time.perf_counter() - start, usage.ru_maxrss // 1024


def measure(data_dir: str) -> None:
    """One line of figures for the log in ``data_dir`` as it stands (opened read only)."""
    log = AuditLog.in_dir(data_dir, create=False, read_only=True)
    try:
        starts = log.records(types=[AuditType.ROUND_START], newest_first=True, limit=SHIFT)
        rounds = starts[0].round_no if starts else 0
        shift, shift_s = timed(lambda: period_report(log, since=starts[-1].ts))
        whole, whole_s = timed(lambda: period_report(log))
        peak = traced_peak(lambda: period_report(log))
        records = log.last().seq
    finally:
        log.close()
    child_s, child_rss = child_report(data_dir)
    settled = sum(r.rounds["settled"] for r in whole.values())
    print(f"{rounds} rounds ({records} records, {settled} settled): last {SHIFT} rounds {shift_s:.2f} s, "
          f"all {whole_s:.2f} s ({whole_s / max(rounds, 1) * 1e6:.0f} µs a round), Python peak {peak:.1f} MB; "
          f"niuniu audit report {child_s:.2f} s, peak RSS {child_rss} MB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, nargs="+", default=[2000, 8000],
                        help="log sizes to measure at, in rounds, ascending (default: 2000 8000)")
    parser.add_argument("--data-dir", help="measure this existing data directory instead (read only)")
    args = parser.parse_args()
    if args.data_dir:
        measure(args.data_dir)
        return 0
    with tempfile.TemporaryDirectory() as data_dir:
        built = 0
        for size in sorted(args.rounds):
            log = AuditLog.in_dir(data_dir)
            build(log, size - built, first=built + 1)
            log.close()         # the child reads the log as the console does: no writer holding it
            built = size
            measure(data_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
