"""The table behind evaluation: one entry per rank multiset.

A card's bull value depends on its rank alone, and so does every category test (five
face, four face, bomb, five small, the bull itself).  So a hand's category is a function
of its *rank multiset* — one of 6,175 — and only the tie-break needs a suit.  Working
out each multiset once turns three things into lookups or weighted sums:

* ``evaluate()`` is a sort of five cards and one dictionary lookup (microseconds);
* statistics over all 2,598,960 hands are a sum over 6,175 entries weighted by the
  number of suit choices, ``prod(C(4, count))``;
* exact odds (``scoring.odds``) pair multisets instead of pairing millions of hands.

:class:`Shape` holds the preset-independent facts about a multiset; :func:`compile_table`
applies a preset's enabled specials and order to every shape.  The bull reported for a
hand is the first qualifying triple of its cards sorted strongest first, so the same five
cards always show the same three, whatever order they were dealt in.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from itertools import combinations, combinations_with_replacement
from math import comb, prod
from types import MappingProxyType
from typing import Callable, Mapping

from scoring.categories import Category
from scoring.rules import Preset

RANKS_HIGH_FIRST = tuple(range(13, 0, -1))
TRIPLES = tuple(combinations(range(5), 3))


def card_value(rank: int) -> int:
    return min(rank, 10)


@dataclass(frozen=True, slots=True)
class Shape:
    """What a rank multiset is, whatever the suits and whatever the preset."""

    ranks: tuple[int, ...]           # five ranks, highest first
    counts: tuple[int, ...]          # copies of rank 1..13
    total: int                       # sum of the five card values
    bull: tuple[int, ...]            # positions (in ``ranks``) of the three bull cards, () if none
    points: int                      # 0 no bull, 1..9, 10 niu niu
    face_count: int                  # J, Q, K
    ten_count: int                   # the 10s (not the courts)
    quad_rank: int                   # rank held four times, 0 if none
    weight: int                      # hands from one deck with these ranks: prod C(4, count)

    @property
    def rest(self) -> tuple[int, ...]:
        return tuple(i for i in range(5) if i not in self.bull) if self.bull else tuple(range(5))


def _shape(ranks: tuple[int, ...]) -> Shape:
    values = [card_value(r) for r in ranks]
    total = sum(values)
    bull = next((t for t in TRIPLES if (values[t[0]] + values[t[1]] + values[t[2]]) % 10 == 0), ())
    points = (total % 10 or 10) if bull else 0
    counts = tuple(ranks.count(r) for r in range(1, 14))
    return Shape(
        ranks=ranks,
        counts=counts,
        total=total,
        bull=bull,
        points=points,
        face_count=sum(r >= 11 for r in ranks),
        ten_count=ranks.count(10),
        quad_rank=next((r for r in range(1, 14) if counts[r - 1] >= 4), 0),
        weight=prod(comb(4, c) for c in counts),
    )


SHAPES: tuple[Shape, ...] = tuple(
    _shape(ranks)
    for ranks in combinations_with_replacement(RANKS_HIGH_FIRST, 5)
    if max(ranks.count(r) for r in set(ranks)) <= 4
)
"""All 6,175 rank multisets of a five-card hand from one deck, strongest ranks first."""

FIVE_OF_A_RANK: tuple[Shape, ...] = tuple(_shape((rank,) * 5) for rank in RANKS_HIGH_FIRST)
"""The 13 hands only a shoe of several decks deals; weight 0 (one deck never deals them),
so they are scored but never counted in single-deck statistics and odds."""


# Which special hands a shape qualifies for: a registry, so a preset enables a special
# by listing its name, never by code naming the preset.
_QUALIFIES: Mapping[Category, Callable[[Shape, Preset], bool]] = MappingProxyType({
    Category.FIVE_FACE: lambda s, p: s.face_count == 5,
    Category.FOUR_FACE: lambda s, p: s.face_count == 4 and s.ten_count == 1,
    Category.BOMB: lambda s, p: s.quad_rank != 0,
    Category.FIVE_SMALL: lambda s, p: max(s.ranks) < 5 and s.total <= p.five_small_limit,
})

# The first tie-break inside a category, before the top card.
_PRIMARY: Mapping[Category, Callable[[Shape], int]] = MappingProxyType({
    Category.BOMB: lambda s: s.quad_rank,         # bomb vs bomb: the four's rank
    Category.FIVE_SMALL: lambda s: s.total,       # five small vs five small: the higher total
})


def category_of(shape: Shape, preset: Preset) -> Category:
    """The strongest category the preset enables that this shape qualifies for."""
    best = Category.for_points(shape.points)
    rank = preset.category_rank
    for special, test in _QUALIFIES.items():
        if special in rank and rank[special] > rank[best] and test(shape, preset):
            best = special
    return best


def primary_of(category: Category, shape: Shape) -> int:
    rule = _PRIMARY.get(category)
    return rule(shape) if rule else 0


@dataclass(frozen=True, slots=True)
class Entry:
    """One multiset under one preset."""

    shape: Shape
    category: Category
    strength: tuple[int, int, int]    # (category rank, primary key, top rank) — suits come after
    multiplier: int                   # on the preset's main bet


@dataclass(frozen=True)
class Table:
    preset: Preset
    entries: Mapping[tuple[int, ...], Entry]   # keyed by ranks, highest first
    card_order: Mapping[object, int]           # Card -> sort key (rank, then preset suit order)


_TABLES: "weakref.WeakKeyDictionary[Preset, Table]" = weakref.WeakKeyDictionary()


def compile_table(preset: Preset) -> Table:
    """The preset's lookup table; built once per preset object (about 30 ms)."""
    table = _TABLES.get(preset)
    if table is None:
        from scoring.cards import DECK

        main = preset.bet(preset.main_bet)
        entries = {}
        for shape in SHAPES + FIVE_OF_A_RANK:
            category = category_of(shape, preset)
            strength = (preset.category_rank[category], primary_of(category, shape), shape.ranks[0])
            entries[shape.ranks] = Entry(shape, category, strength, main.multipliers[category])
        card_order = {card: card.rank * 8 + preset.suit_rank[card.suit] for card in DECK}
        table = Table(preset, MappingProxyType(entries), MappingProxyType(card_order))
        _TABLES[preset] = table
    return table
