"""Scoring one hand: its category, its bull, and what it pays.

The dealer needs more than a category: to settle a dispute at the table they must be
able to *show* the three cards that make the bull and the two that give the points, so a
:class:`HandResult` carries both groups, plus the top card that breaks ties.  The cards
are reported strongest first (rank, then the preset's suit order) so the same hand always
reads the same way whatever order it was dealt or detected in.

Evaluation is one lookup in the preset's table of rank multisets (``scoring.lookup``).

>>> from scoring.rules import load_preset
>>> hand = evaluate("4S 6H QD 9C 9H", load_preset("cambodia"))
>>> hand.label, [c.code for c in hand.bull], [c.code for c in hand.rest]
('Bull 8', ['QD', '6H', '4S'], ['9H', '9C'])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from scoring.cards import Card, parse_cards
from scoring.categories import Category
from scoring.lookup import compile_table
from scoring.rules import Preset, load_preset

__all__ = ["Category", "HandResult", "evaluate"]


@dataclass(frozen=True, slots=True)
class HandResult:
    """A scored hand.

    ``points`` is 0 without a bull, 1..9, or 10 for niu niu (also shown for special
    hands that contain a bull, so the dealer can see it).  ``multiplier`` is what the
    hand pays on the preset's main bet (``Preset.main_bet``).
    """

    category: Category
    points: int
    bull: tuple[Card, ...]
    rest: tuple[Card, ...]
    top: Card
    multiplier: int

    @property
    def label(self) -> str:
        return self.category.label

    @property
    def cards(self) -> tuple[Card, ...]:
        """All five cards: the bull first, then the rest."""
        return self.bull + self.rest

    def to_json(self) -> dict[str, Any]:
        return {
            "category": self.category.value,
            "label": self.label,
            "points": self.points,
            "bull": [c.code for c in self.bull],
            "rest": [c.code for c in self.rest],
            "top": self.top.code,
            "multiplier": self.multiplier,
        }


def evaluate(cards: Iterable[Card | str] | str, preset: Preset | str) -> HandResult:
    """Score five cards (``Card`` objects or tokens like ``"10H"``) under ``preset``.

    Raises :class:`~scoring.cards.CardError` for anything that is not five readable
    cards (or, in a single-deck preset, for the same card twice).  Five of one rank (a
    shoe of several decks) is a hand like any other: its four are a bomb.
    """
    if not isinstance(preset, Preset):
        preset = load_preset(preset)
    table = compile_table(preset)
    hand = cards if isinstance(cards, (tuple, str)) else parse_cards(cards, 5, unique=preset.decks == 1)
    if (
        isinstance(hand, tuple) and len(hand) == 5
        and all(type(c) is Card for c in hand)
        and (preset.decks > 1 or len(set(hand)) == 5)
    ):
        ordered = sorted(hand, key=table.card_order.__getitem__, reverse=True)
    else:
        ordered = sorted(parse_cards(hand, 5, unique=preset.decks == 1), key=table.card_order.__getitem__, reverse=True)
    entry = table.entries.get((ordered[0].rank, ordered[1].rank, ordered[2].rank, ordered[3].rank, ordered[4].rank))
    shape = entry.shape
    bull = shape.bull
    if bull:
        i, j, k = bull
        rest = tuple(ordered[n] for n in range(5) if n != i and n != j and n != k)
        bull_cards = (ordered[i], ordered[j], ordered[k])
    else:
        rest = tuple(ordered)
        bull_cards = ()
    return HandResult(entry.category, shape.points, bull_cards, rest, ordered[0], entry.multiplier)
