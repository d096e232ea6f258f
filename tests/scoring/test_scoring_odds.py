"""Exact odds, checked against a deal-by-deal brute force on small decks (evaluate() and
compare() on real cards, no multisets) and against what symmetry forces on the full deck."""

from collections import Counter
from fractions import Fraction
from functools import cache
from itertools import combinations
from math import comb

import pytest

from scoring.cards import Card
from scoring.compare import compare
from scoring.evaluate import evaluate
from scoring.odds import exact_odds
from scoring.rules import PRESET_DIR, FullTie, PresetError, list_presets, load_preset
from scoring.stats import ALL_HANDS, category_counts


def deck_of(ranks: str, suits: str = "SHDC") -> tuple[Card, ...]:
    return tuple(Card.parse(r + s) for r in ranks.split() for s in suits)


SMALL_DECKS = {
    "aces-twos-kings": deck_of("A 2 K"),                      # bombs, five small, bulls
    "tens-and-courts": deck_of("10 J Q"),                     # five face, four face, bombs
    "uneven-suits": tuple(Card.parse(t) for t in "AS AH AD 2S 2H 2C 2D KS KH 10D 10C 5S 3H".split()),
}


def brute_force(preset, deck):
    """Every ordered (player, banker) deal of two disjoint hands from ``deck``."""
    hands = {frozenset(h): evaluate(h, preset) for h in combinations(deck, 5)}
    deals = win = lose = push = 0
    win_pay = Counter()
    lose_pay = Counter()
    categories = Counter()
    for mine in combinations(deck, 5):
        player = hands[frozenset(mine)]
        left = [c for c in deck if c not in mine]
        for theirs in combinations(left, 5):
            banker = hands[frozenset(theirs)]
            result = compare(player, banker, preset)
            if result == 0 and preset.full_tie is FullTie.BANKER:
                result = -1
            deals += 1
            categories[player.category] += 1
            if result > 0:
                win += 1
                for kind in preset.bet_kinds:
                    win_pay[kind] += preset.multiplier(kind, player.category)
            elif result < 0:
                lose += 1
                for kind in preset.bet_kinds:
                    lose_pay[kind] += preset.multiplier(kind, banker.category)
            else:
                push += 1
    keep = 1 - Fraction(preset.commission_rate)
    return {
        "deals": deals,
        "player_win": Fraction(win, deals),
        "banker_win": Fraction(lose, deals),
        "push": Fraction(push, deals),
        "categories": {c: Fraction(categories[c], deals) for c in preset.order},
        "expected_multiplier": {k: Fraction(win_pay[k] + lose_pay[k], deals) for k in preset.bet_kinds},
        "house_edge": {k: -(keep * win_pay[k] - lose_pay[k]) * 100 / deals for k in preset.bet_kinds},
    }


def as_dict(odds):
    return {
        "deals": odds.deals,
        "player_win": odds.player_win,
        "banker_win": odds.banker_win,
        "push": odds.push,
        "categories": dict(odds.categories),
        "expected_multiplier": dict(odds.expected_multiplier),
        "house_edge": dict(odds.house_edge),
    }


@pytest.mark.parametrize("deck", SMALL_DECKS, ids=str)
@pytest.mark.parametrize("name", list_presets())
def test_exact_odds_match_brute_force_on_small_decks(name, deck):
    preset = load_preset(name)
    cards = SMALL_DECKS[deck]
    assert as_dict(exact_odds(preset, cards)) == brute_force(preset, cards)


def test_exact_odds_match_brute_force_on_a_two_suit_deck():
    preset = load_preset("grab-banker")
    cards = deck_of("A 3 4 6 7 J K", "SD")                     # 252,252 deals
    assert as_dict(exact_odds(preset, cards)) == brute_force(preset, cards)


def _variant(tmp_path, name, **replace):
    text = (PRESET_DIR / "classic.toml").read_text().replace('name = "classic"', f'name = "{name}"')
    for old, new in replace.items():
        text = text.replace(old, new)
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return load_preset(path)


@pytest.mark.parametrize("tie", ["push", "banker"])
def test_ties_without_suit_tie_breaks_match_brute_force(tmp_path, tie):
    preset = _variant(tmp_path, f"no-suits-{tie}", **{
        "suits_break_ties = true": "suits_break_ties = false",
        'full_tie = "push"': f'full_tie = "{tie}"',
        'rate = "0"': 'rate = "0.1"',
    })
    for cards in SMALL_DECKS.values():
        expected = brute_force(preset, cards)
        assert as_dict(exact_odds(preset, cards)) == expected
        assert (expected["push"] > 0) == (tie == "push")
        assert (expected["banker_win"] > expected["player_win"]) == (tie == "banker")


@cache
def full_deck_odds(name):
    return exact_odds(name)


@pytest.mark.parametrize("name", list_presets())
def test_full_deck_odds_obey_symmetry(name):
    preset = load_preset(name)
    odds = full_deck_odds(name)
    assert odds.deals == comb(52, 5) * comb(47, 5)
    # Player and banker hands are exchangeable and one deck never ties: each wins half.
    assert odds.player_win == odds.banker_win == Fraction(1, 2) and odds.push == 0
    # One hand's category distribution is the stats count over all hands.
    counts = category_counts(preset)
    assert odds.categories == {c: Fraction(n, ALL_HANDS) for c, n in counts.items()}
    # By symmetry the stake changes hands at no edge; the house edge is the commission on
    # the winning half: rate x E[multiplier] / 2.
    for kind in preset.bet_kinds:
        assert odds.house_edge[kind] == Fraction(preset.commission_rate) * 100 * odds.expected_multiplier[kind] / 2


def test_cambodia_headline_figures():
    odds = full_deck_odds("cambodia")
    assert odds.house_edge["equal"] == Fraction(5, 2)                 # 5% commission on half the hands
    assert odds.expected_multiplier["equal"] == 1
    assert 4.02 < float(odds.house_edge["double"]) < 4.03
    assert full_deck_odds("classic").house_edge["standard"] == 0          # no rake at a home game
    data = odds.to_json()
    assert set(data["house_edge"]) == {"equal", "double"} and data["house_edge"]["equal"] == 2.5
    assert data["exact"]["player_win"] == "1/2"


def test_odds_refuse_multi_deck_presets(tmp_path):
    preset = _variant(tmp_path, "two-decks", **{"decks = 1": "decks = 2"})
    with pytest.raises(PresetError, match="one deck"):
        exact_odds(preset)
