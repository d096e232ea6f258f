"""Exact odds: every pair of player and banker hands dealt from one deck.

There are C(52,5) x C(47,5) = 3.9 x 10^12 ordered (player, banker) deals — far too many
to loop over — but the outcome of a deal depends only on the two rank multisets and, when
they tie on category, first key and top rank, on how the suits of that top rank were
split between the two hands.  So the odds are an exact weighted sum over pairs of the
6,175 multisets:

* the deals behind a pair (A, B) number ``prod_r C(n_r, a_r) * C(n_r - a_r, b_r)``
  (choose the player's suits of each rank, then the banker's from what is left), which
  is what makes the ten cards distinct — player and banker come from ONE deck;
* pairs are sorted by strength, so "banker hands weaker than A" is a prefix sum;
* when A and B tie on everything but suit, their top rank t holds ``a_t`` and ``b_t``
  cards: of the ``C(n_t, a_t) * C(n_t - a_t, b_t)`` ways to split the suits, the player
  wins those where its best suit outranks the banker's, a count that depends only on
  ``(n_t, a_t, b_t)``.

Rows of the pair matrix are built by a depth-first walk over ranks that shares the
partial products of common prefixes (numpy), and every sum is an integer, so each
probability is an exact fraction.

House edge, per bet kind, is the player's expected loss per unit staked, in percent, with
commission at the preset's exact rate (per-bet rounding to the money unit is ignored; it
depends on the stake).  At a player-banked table bids and bet multiples scale both sides
alike, so the edge is the same for any of them; a banker's commission on its net win for
the round depends on how many seats play and is not part of the player's edge.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations
from math import comb, prod
from typing import Any, Iterable, Mapping

import numpy as np

from scoring.cards import DECK, Card, CardError
from scoring.categories import Category
from scoring.lookup import SHAPES, compile_table
from scoring.rules import FullTie, Preset, PresetError, load_preset

_CHUNK = 384


@dataclass(frozen=True)
class Odds:
    rules: str
    deals: int                                  # ordered (player, banker) deals enumerated
    categories: Mapping[Category, Fraction]     # one hand's category, strongest first
    player_win: Fraction
    banker_win: Fraction
    push: Fraction
    expected_multiplier: Mapping[str, Fraction] # per bet kind: E[multiplier that changes hands]
    house_edge: Mapping[str, Fraction]          # per bet kind, percent of the stake
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {
            "rules": self.rules,
            "method": "exact enumeration of rank-multiset pairs; player and banker from one deck",
            "deals": self.deals,
            "categories": {c.value: float(p) for c, p in self.categories.items()},
            "player_win": float(self.player_win),
            "banker_win": float(self.banker_win),
            "push": float(self.push),
            "expected_multiplier": {k: float(v) for k, v in self.expected_multiplier.items()},
            "house_edge": {k: float(v) for k, v in self.house_edge.items()},
            "exact": {
                "categories": {c.value: str(p) for c, p in self.categories.items()},
                "player_win": str(self.player_win),
                "banker_win": str(self.banker_win),
                "push": str(self.push),
                "expected_multiplier": {k: str(v) for k, v in self.expected_multiplier.items()},
                "house_edge": {k: str(v) for k, v in self.house_edge.items()},
            },
            "seconds": round(self.seconds, 4),
        }


def _suit_contest(n: int, a: int, b: int) -> tuple[int, int]:
    """(player wins, banker wins) among the ways to give the player ``a`` and the banker
    ``b`` of ``n`` suits, ordered strongest first, when the best suit decides."""
    win = lose = 0
    for mine in combinations(range(n), a):
        left = [s for s in range(n) if s not in mine]
        for theirs in combinations(left, b):
            if not theirs or min(mine) < min(theirs):   # index 0 is the strongest suit
                win += 1
            else:
                lose += 1
    return win, lose


def exact_odds(preset: Preset | str, deck: Iterable[Card] | None = None) -> Odds:
    """Exact outcome probabilities for one player against the banker.

    ``deck`` defaults to the full 52 cards; a smaller deck (any distinct cards, at least
    ten) exists so tests can check this against a brute-force deal-by-deal enumeration.
    """
    if not isinstance(preset, Preset):
        preset = load_preset(preset)
    if preset.decks != 1:
        raise PresetError(f"preset {preset.name} uses {preset.decks} decks; exact odds are computed for one deck")
    start = time.perf_counter()
    cards = tuple(DECK if deck is None else deck)
    if len(set(cards)) != len(cards):
        raise CardError("the deck for odds lists a card twice")
    if len(cards) < 10:
        raise CardError(f"a deck for odds needs at least 10 cards, got {len(cards)}")
    available = [0] * 13
    for card in cards:
        available[card.rank - 1] += 1

    table = compile_table(preset)
    entries = sorted(
        (table.entries[s.ranks] for s in SHAPES if all(c <= n for c, n in zip(s.counts, available))),
        key=lambda e: e.strength,
    )
    plan = _Plan(entries, available, preset)
    totals = _Totals(preset.bet_kinds)
    size = len(entries)
    block = np.empty((_CHUNK, size), dtype=np.int64)
    row_ids: list[int] = []

    def walk(r: int, left: int, partial: np.ndarray, prefix: list[int]) -> None:
        if left == 0:
            np.multiply(partial, plan.suffix[r], out=block[len(row_ids)])
            row_ids.append(plan.index[tuple(prefix) + (0,) * (13 - r)])
            if len(row_ids) == _CHUNK:
                plan.accumulate(block, row_ids, totals)
                row_ids.clear()
            return
        if r == 13 or plan.capacity[r] < left:
            return
        for a in range(min(available[r], left) + 1):
            prefix.append(a)
            walk(r + 1, left - a, partial * plan.factor[r][a], prefix)
            prefix.pop()

    walk(0, 5, np.ones(size, dtype=np.int64), [])
    if row_ids:
        plan.accumulate(block[:len(row_ids)], row_ids, totals)

    deals = totals.deals
    keep = 1 - Fraction(preset.commission_rate)
    kinds = preset.bet_kinds
    return Odds(
        rules=preset.name,
        deals=deals,
        categories={c: Fraction(totals.category[c], deals) for c in preset.order},
        player_win=Fraction(totals.win, deals),
        banker_win=Fraction(totals.lose, deals),
        push=Fraction(totals.push, deals),
        expected_multiplier={k: Fraction(totals.win_pay[k] + totals.lose_pay[k], deals) for k in kinds},
        house_edge={k: -(keep * totals.win_pay[k] - totals.lose_pay[k]) * 100 / deals for k in kinds},
        seconds=time.perf_counter() - start,
    )


class _Totals:
    """Integer tallies over (player, banker) deals."""

    def __init__(self, kinds: tuple[str, ...]) -> None:
        self.deals = self.win = self.lose = self.push = 0
        self.category: dict[Category, int] = {c: 0 for c in Category}
        self.win_pay = dict.fromkeys(kinds, 0)    # deals won x the player's multiplier
        self.lose_pay = dict.fromkeys(kinds, 0)   # deals lost x the banker's multiplier


class _Plan:
    """Everything about the sorted multisets that does not depend on the player's row."""

    def __init__(self, entries: list, available: list[int], preset: Preset) -> None:
        size = len(entries)
        self.entries = entries
        self.available = available
        self.suits_decide = preset.suits_break_ties
        self.tie_to_banker = preset.full_tie is FullTie.BANKER
        self.counts = np.array([e.shape.counts for e in entries], dtype=np.int64)
        self.weight = np.array([prod(comb(n, c) for c, n in zip(e.shape.counts, available)) for e in entries],
                               dtype=np.int64)                         # the player's suit choices
        self.index = {e.shape.counts: i for i, e in enumerate(entries)}
        # Equal strength (category, first key, top rank) is contiguous after the sort: [lo, hi).
        lo, hi = [0] * size, [0] * size
        i = 0
        while i < size:
            j = i
            while j < size and entries[j].strength == entries[i].strength:
                j += 1
            lo[i:j], hi[i:j] = [i] * (j - i), [j] * (j - i)
            i = j
        self.lo, self.hi = np.array(lo), np.array(hi)
        # Categories are contiguous too: edges[c] .. edges[c + 1] holds category position c.
        order = sorted({e.strength[0] for e in entries})
        self.category_at = np.array([order.index(e.strength[0]) for e in entries])
        self.edges = np.searchsorted(self.category_at, np.arange(len(order) + 1))
        self.category_names = [next(e.category for e in entries if e.strength[0] == r) for r in order]
        self.multipliers = {
            k: (np.array([preset.multiplier(k, e.category) for e in entries], dtype=np.int64),
                np.array([preset.multiplier(k, c) for c in self.category_names], dtype=np.int64))
            for k in preset.bet_kinds
        }
        choose = np.array([[comb(n, k) for k in range(5)] for n in range(5)], dtype=np.int64)
        # factor[r][a][B] = C(n_r - a, b_r): the banker's suit choices at rank r after the player took a.
        self.factor = [[choose[available[r] - a][self.counts[:, r]] for a in range(available[r] + 1)]
                       for r in range(13)]
        self.suffix = [np.ones(size, dtype=np.int64) for _ in range(14)]
        for r in range(12, -1, -1):
            self.suffix[r] = self.suffix[r + 1] * self.factor[r][0]
        self.capacity = [sum(available[r:]) for r in range(14)]
        # contest[(n, a)] = (ways the banker can take b of the n - a suits left, or 1 where it
        # cannot — those pairs have no deals; the splits the player wins), indexed by b = 0..4.
        self.contest = {
            (n, a): (
                np.array([comb(n - a, b) or 1 for b in range(5)], dtype=np.int64),
                np.array([_suit_contest(n, a, b)[0] if b <= n - a else 0 for b in range(5)], dtype=np.int64),
            )
            for n in range(1, 5) for a in range(1, n + 1)
        }

    def accumulate(self, block: np.ndarray, row_ids: list[int], totals: _Totals) -> None:
        """Add a block of player multisets; ``block[i, B]`` = banker deals of B against row i."""
        ids = np.array(row_ids)
        rows = np.arange(len(ids))
        cum = np.cumsum(block, axis=1)

        def before(positions: np.ndarray) -> np.ndarray:   # banker deals at sorted positions < p
            return np.where(positions > 0, cum[rows, np.maximum(positions - 1, 0)], 0)

        w = self.weight[ids]
        starts, stops = self.lo[ids], self.hi[ids]
        all_b = cum[:, -1]
        below = before(starts)
        above = all_b - before(stops)
        equal = all_b - below - above
        if self.suits_decide:
            eq_win = np.array([self._suits_won(block[i], a) for i, a in enumerate(row_ids)], dtype=np.int64)
            eq_lose, eq_tie = w * equal - eq_win, np.zeros_like(w)
        else:
            eq_win, eq_lose, eq_tie = np.zeros_like(w), np.zeros_like(w), w * equal
        if self.tie_to_banker:
            eq_lose, eq_tie = eq_lose + eq_tie, np.zeros_like(w)
        win = w * below + eq_win
        lose = w * above + eq_lose
        totals.deals += int((w * all_b).sum())
        totals.win += int(win.sum())
        totals.lose += int(lose.sum())
        totals.push += int(eq_tie.sum())
        dealt = w * all_b
        cat = self.category_at[ids]
        for position, category in enumerate(self.category_names):
            totals.category[category] += int(dealt[cat == position].sum())
        # Banker deals per category (categories ascend with position), for what losses cost.
        at_edges = np.hstack([np.zeros((len(ids), 1), dtype=np.int64), cum[:, self.edges[1:] - 1]])
        per_category = np.diff(at_edges, axis=1)
        for kind, (by_entry, by_category) in self.multipliers.items():
            mine = by_entry[ids]
            paid = np.cumsum(per_category * by_category, axis=1)
            stronger_categories = paid[:, -1] - paid[rows, cat]
            stronger_in_mine = at_edges[rows, cat + 1] - before(stops)
            totals.win_pay[kind] += int((mine * win).sum())
            totals.lose_pay[kind] += int((w * (stronger_categories + mine * stronger_in_mine) + mine * eq_lose).sum())

    def _suits_won(self, row: np.ndarray, a: int) -> int:
        """Deals the player wins against equal-strength banker hands, on the top card's suit."""
        start, stop = self.lo[a], self.hi[a]
        top = self.entries[a].shape.ranks[0] - 1
        n, a_t = self.available[top], int(self.counts[a, top])
        b_t = self.counts[start:stop, top]
        split_ways, player_wins = self.contest[(n, a_t)]
        seg = row[start:stop] // split_ways[b_t]   # exact: each banker count holds that factor
        return int(self.weight[a]) // comb(n, a_t) * int((seg * player_wins[b_t]).sum())
