"""The audit log at a busy table's scale: chain walks, the chain page, the shift report, exports.

Builds a log of ``--rounds`` settled rounds (5 seats, every card accepted, settlement and
lines: 37 records a round, about what the kiosk writes) in a temporary folder, then
times what surveillance and the pit supervisor run on it.  At one round a minute for 16
hours a table writes ~1,000 rounds a day: 8,000 rounds is about a week and a half.

    python bench/bench_audit.py --rounds 8000

Prints: the full chain walk (s and µs a record), the chain page's view once a full walk
is done (only the records added since are walked), the shift report of the last 1,000
rounds and of all, and ``niuniu audit export`` of everything as JSON and CSV in a child
process, unsigned and signed (seconds, their ratio, and the peak memory: an export streams,
so the peak must not grow with the log; the signed statement reads the records' hashes once
more).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kiosk.audit import AuditLog, AuditType, Entry  # noqa: E402
from kiosk.chain import ChainCheck  # noqa: E402
from kiosk.report import period_report  # noqa: E402
from kiosk.rounds import camera_during, load_round, round_numbers  # noqa: E402
from scoring.settle import Bet, settle_round  # noqa: E402

DECK = [rank + suit for rank in "A 2 3 4 5 6 7 8 9 10 J Q K".split() for suit in "SHDC"]
T0 = 1.7e9


def build(log: AuditLog, rounds: int, first: int = 1) -> None:
    """``rounds`` settled rounds numbered from ``first`` (a later call extends the log)."""
    rng = random.Random(first)
    for n in range(first, first + rounds):
        cards = rng.sample(DECK, 30)
        hands = {"banker": cards[:5], **{str(i): cards[5 * i:5 * i + 5] for i in range(1, 6)}}
        bets = {seat: (" ".join(c), Bet(seat, Decimal(100), "equal")) for seat, c in hands.items() if seat != "banker"}
        settlement = settle_round("cambodia", " ".join(hands["banker"]), bets).to_json()
        ts = T0 + n * 60
        entries = [Entry(AuditType.ROUND_START, "vision", {"bets": {}}, n, ts)]
        entries += [Entry(AuditType.CARD_ACCEPTED, "vision", {"seat": seat, "card": card}, n, ts + 1)
                    for seat, c in hands.items() for card in c]
        entries.append(Entry(AuditType.ROUND_SETTLED, "dealer", {"settlement": settlement, "hands": hands}, n, ts + 30))
        entries += [Entry(AuditType.SETTLEMENT_LINE, "dealer", dict(line), n, ts + 30) for line in settlement["lines"]]
        log.append_many(entries)


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def child_export(data_dir: str, fmt: str, *flags: str) -> tuple[float, int]:
    """Seconds and peak RSS (MB) of ``niuniu audit export`` run as its own process (signed:
    one more pass over the records' hashes for the statement, unless ``--unsigned``)."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "kiosk.cli", "audit", "export", "--data-dir", data_dir, "--format", fmt,
               "--output", os.path.join(out, f"all.{fmt}"), *flags]
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"export {fmt} failed (status {status})")
    return time.perf_counter() - start, usage.ru_maxrss // 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data_dir:
        log = AuditLog.in_dir(data_dir)
        _, seconds = timed(lambda: build(log, args.rounds))
        records = log.last().seq
        print(f"log: {args.rounds} rounds, {records} records, built in {seconds:.1f} s")

        result, seconds = timed(log.verify)
        print(f"full chain walk: {seconds:.2f} s, {seconds / records * 1e6:.1f} µs a record ({result.summary()})")
        check = ChainCheck(log)
        check.status()
        check._thread.join()
        log.append(AuditType.LOGIN, "bench")
        status, seconds = timed(check.status)
        print(f"chain page after a full walk, one record added: {seconds * 1000:.1f} ms (ok={status.ok})")

        day_start = log.records(types=[AuditType.ROUND_START], round_no=max(1, args.rounds - 999))[0].ts
        report, seconds = timed(lambda: period_report(log, since=day_start))
        print(f"shift report, last 1000 rounds: {seconds:.2f} s")
        report, seconds = timed(lambda: period_report(log))
        print(f"shift report, all {args.rounds} rounds: {seconds:.2f} s")
        log.close()
        for fmt in ("json", "csv"):
            seconds, peak = child_export(data_dir, fmt, "--unsigned")
            signed, signed_peak = child_export(data_dir, fmt)
            print(f"export all as {fmt}: unsigned {seconds:.1f} s, signed {signed:.1f} s ({signed / seconds:.2f}x); "
                  f"peak memory {peak} / {signed_peak} MB")
        # After the exports: a child's peak memory counts the parent it was forked from.
        log = AuditLog.in_dir(data_dir, create=False)
        table = log.last().table_id   # the review pages ask by table: the (table_id, round_no) index
        for shown in (50, 2000):      # a page of the round list; the camera filter's longest scan
            numbers = round_numbers(log, table_id=table, limit=shown)
            summaries, base = timed(lambda numbers=numbers: [load_round(log, n, table_id=table) for n in numbers])
            _, seconds = timed(lambda summaries=summaries: [
                camera_during(log, s["first_seq"], s["ended_seq"], table_id=table) for s in summaries])
            print(f"round list, {len(numbers)} rounds: {base:.2f} s to fold them, +{seconds:.2f} s for their "
                  "camera faults")
        log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
