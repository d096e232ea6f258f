"""Ranking two hands under a preset.

Order of tie-breaks (issue 2): the preset's category order; inside a category the first
key the category defines (bomb: the rank of the four; five small: the higher total; bulls
need none, their points are the category); then the top card's rank (K high, A low); then,
if the preset says suits break ties, the top card's suit in the preset's suit order.

With one deck two hands dealt together never share a card, so when suits break ties
:func:`compare` never returns 0 for them — the property tests check exactly that.
A 0 ("everything equal") can only come from several decks or a preset that turns suit
tie-breaks off; what it means for money (push, or the banker takes it) is the preset's
``full_tie`` and is applied by ``scoring.settle``, not here, because ``compare`` does not
know which hand is the banker's.
"""

from __future__ import annotations

from scoring.evaluate import HandResult
from scoring.lookup import compile_table
from scoring.rules import Preset, PresetError, load_preset


def strength(hand: HandResult, preset: Preset | str) -> tuple[int, int, int, int]:
    """A key that sorts hands weakest to strongest under ``preset``."""
    if not isinstance(preset, Preset):
        preset = load_preset(preset)
    cards = hand.bull + hand.rest
    entry = compile_table(preset).entries.get(tuple(sorted((c.rank for c in cards), reverse=True)))
    if entry is None or entry.category is not hand.category:
        raise PresetError(
            f"hand {' '.join(c.code for c in cards)} was scored as {hand.category.value}, "
            f"which preset {preset.name} does not give it; score both hands with the same preset")
    suit = preset.suit_rank[hand.top.suit] if preset.suits_break_ties else 0
    return (*entry.strength, suit)


def compare(a: HandResult, b: HandResult, preset: Preset | str) -> int:
    """+1 if ``a`` beats ``b``, -1 if ``b`` beats ``a``, 0 if every tie-break is equal."""
    if not isinstance(preset, Preset):
        preset = load_preset(preset)
    sa, sb = strength(a, preset), strength(b, preset)
    return (sa > sb) - (sa < sb)
