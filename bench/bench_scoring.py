"""Speed of the scoring engine, against the targets of issue 2.

    python3 bench/bench_scoring.py            # everything (the naive evaluator takes a while)
    python3 bench/bench_scoring.py --no-naive # skip the per-hand baseline

Prints, in one run:
  * ``stats`` per preset (cold: a freshly loaded preset, so the 6,175-entry table is built
    too) next to a straightforward per-hand Python evaluator over all 2,598,960 hands, and
    the whole ``niuniu stats`` command as a new process;           target <= 1 s
  * exact ``odds`` per preset (player and banker from one deck);   target <= 10 s
  * one ``evaluate()`` call;                                        target <= 20 us
  * scoring and settling a full table of 8 hands;                   target <= 0.5 ms
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time
from decimal import Decimal
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scoring.cards import DECK  # noqa: E402
from scoring.categories import Category  # noqa: E402
from scoring.compare import compare  # noqa: E402
from scoring.evaluate import evaluate  # noqa: E402
from scoring.odds import exact_odds  # noqa: E402
from scoring.rules import PRESET_DIR, list_presets, load_preset, load_preset_file  # noqa: E402
from scoring.settle import Bet, settle_round  # noqa: E402
from scoring.stats import hand_stats  # noqa: E402


def naive_counts(preset) -> tuple[dict, float]:
    """What one would write first: loop over every hand, try every triple for a bull."""
    start = time.perf_counter()
    counts = dict.fromkeys(preset.order, 0)
    order = preset.order
    for hand in combinations(DECK, 5):
        values = [min(c.rank, 10) for c in hand]
        total = sum(values)
        bull = any((a + b + c) % 10 == 0 for a, b, c in combinations(values, 3))
        ranks = [c.rank for c in hand]
        found = [Category.for_points(total % 10 or 10) if bull else Category.NO_BULL]
        if min(ranks) > 10:
            found.append(Category.FIVE_FACE)
        if sum(r > 10 for r in ranks) == 4 and 10 in ranks:
            found.append(Category.FOUR_FACE)
        if any(ranks.count(r) == 4 for r in ranks):
            found.append(Category.BOMB)
        if max(values) < 5 and total <= preset.five_small_limit:
            found.append(Category.FIVE_SMALL)
        counts[min((c for c in found if c in order), key=order.index)] += 1
    return counts, time.perf_counter() - start


def per_call_us(fn, repeat: int = 5) -> float:
    best = []
    for _ in range(repeat):
        start = time.perf_counter()
        n = fn()
        best.append((time.perf_counter() - start) / n * 1e6)
    return min(best)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-naive", action="store_true", help="skip the per-hand Python baseline")
    parser.add_argument("--naive-rules", default="classic", help="preset for the per-hand baseline")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]} on {sys.platform}")

    print("\nstats over all 2,598,960 hands (cold: preset loaded afresh, table built)")
    for name in list_presets():
        fresh = load_preset_file(PRESET_DIR / f"{name}.toml")
        stats = hand_stats(fresh)
        warm = hand_stats(fresh)
        print(f"  {name:<12} {stats.seconds * 1000:8.1f} ms cold   {warm.seconds * 1000:6.1f} ms warm")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kiosk.cli", "stats", "--rules", "classic", "--json"],
                   cwd=ROOT, check=True, capture_output=True)
    print(f"  `niuniu stats --rules classic --json` as a new process: {time.perf_counter() - start:.3f} s")
    if not args.no_naive:
        preset = load_preset(args.naive_rules)
        counts, seconds = naive_counts(preset)
        same = counts == hand_stats(preset).counts
        print(f"  naive per-hand Python evaluator ({preset.name}): {seconds:.2f} s"
              f"  (counts {'match' if same else 'DIFFER'})")

    print("\nexact odds, player and banker from one deck (cold)")
    for name in list_presets():
        fresh = load_preset_file(PRESET_DIR / f"{name}.toml")
        odds = exact_odds(fresh)
        edges = ", ".join(f"{k} {float(v):.4f}%" for k, v in odds.house_edge.items())
        print(f"  {name:<12} {odds.seconds:6.2f} s   house edge: {edges}")

    rng = random.Random(2024)
    preset = load_preset("classic")
    hands = [tuple(rng.sample(DECK, 5)) for _ in range(2000)]
    tokens = [[c.code for c in h] for h in hands[:500]]
    evaluate(hands[0], preset)
    us = per_call_us(lambda: [evaluate(h, preset) for h in hands] and len(hands))
    us_tokens = per_call_us(lambda: [evaluate(t, preset) for t in tokens] and len(tokens))
    print(f"\nevaluate(): {us:.2f} us per call (Card objects), {us_tokens:.2f} us from text tokens")

    tables = []
    for _ in range(200):
        deal = rng.sample(DECK, 40)
        banker = tuple(deal[:5])
        seats = {str(i): (tuple(deal[5 * i:5 * i + 5]), Bet(str(i), Decimal("25.00"), "standard"))
                 for i in range(1, 8)}
        tables.append((banker, seats))

    def score_tables() -> int:
        for banker, seats in tables:
            b = evaluate(banker, preset)
            for cards, _ in seats.values():
                compare(evaluate(cards, preset), b, preset)
        return len(tables)

    def settle_tables() -> int:
        for banker, seats in tables:
            settle_round(preset, banker, seats)
        return len(tables)

    score_ms = per_call_us(score_tables) / 1000
    settle_ms = per_call_us(settle_tables) / 1000
    print(f"table of 8 hands: {score_ms:.3f} ms to score and rank, {settle_ms:.3f} ms to settle (settle_round)")
    samples = [per_call_us(settle_tables, 1) / 1000 for _ in range(5)]
    print(f"  settle_round spread over 5 runs: median {statistics.median(samples):.3f} ms")


if __name__ == "__main__":
    main()
