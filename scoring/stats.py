"""How often each category comes up: every one of the C(52,5) = 2,598,960 hands.

A per-hand loop in Python takes seconds just to find the bulls; a hand's category is a
function of its rank multiset, so the count is a sum over the 6,175 multisets of the
number of suit choices each allows (``bench/bench_scoring.py`` times both).  Categories
are exclusive per the preset: a hand that is both a bomb and a five small counts once,
under whichever the preset ranks higher.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from math import comb
from typing import Any, Mapping

from scoring.categories import Category
from scoring.lookup import compile_table
from scoring.rules import Preset, load_preset

ALL_HANDS = comb(52, 5)


@dataclass(frozen=True)
class HandStats:
    rules: str
    total: int
    counts: Mapping[Category, int]   # strongest category first
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {
            "rules": self.rules,
            "total": self.total,
            "counts": {c.value: n for c, n in self.counts.items()},
            "seconds": round(self.seconds, 6),
        }


def category_counts(preset: Preset | str) -> dict[Category, int]:
    """Hands of each category among all five-card hands from one deck, strongest first."""
    if not isinstance(preset, Preset):
        preset = load_preset(preset)
    counts = dict.fromkeys(preset.order, 0)
    for entry in compile_table(preset).entries.values():
        counts[entry.category] += entry.shape.weight
    return counts


def hand_stats(preset: Preset | str) -> HandStats:
    """Category counts with the time they took (table compilation included)."""
    if not isinstance(preset, Preset):
        preset = load_preset(preset)
    start = time.perf_counter()
    counts = category_counts(preset)
    seconds = time.perf_counter() - start
    return HandStats(preset.name, sum(counts.values()), counts, seconds)
