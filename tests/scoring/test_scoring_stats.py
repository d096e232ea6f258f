"""Category counts over all C(52,5) hands, checked against derivations that share no code
with the lookup table: a separate multiset walk with a different bull test, closed-form
counts of the special hands, and (slow) a brute force over every hand."""

from itertools import combinations
from math import comb, prod

import pytest

from scoring.cards import DECK
from scoring.categories import Category
from scoring.rules import list_presets, load_preset
from scoring.stats import ALL_HANDS, category_counts, hand_stats


def _count_vectors(ranks_left: int, cards_left: int):
    """Every way to hold ``cards_left`` cards of ranks 1..ranks_left, at most 4 of each."""
    if ranks_left == 0:
        if cards_left == 0:
            yield ()
        return
    for n in range(min(4, cards_left) + 1):
        for rest in _count_vectors(ranks_left - 1, cards_left - n):
            yield rest + (n,)


def _independent_category(counts: tuple[int, ...], preset) -> Category:
    """The category from the rules as issue 2 states them, written afresh.

    Bull test: three cards sum to a multiple of ten exactly when the other two sum to the
    whole hand's total modulo ten.
    """
    ranks = [r for r, n in zip(range(1, 14), counts) for _ in range(n)]
    values = [min(r, 10) for r in ranks]
    total = sum(values)
    has_bull = any((values[i] + values[j]) % 10 == total % 10 for i, j in combinations(range(5), 2))
    qualifies = [Category(f"bull_{total % 10}") if has_bull and total % 10 else
                 Category.NIUNIU if has_bull else Category.NO_BULL]
    faces = sum(r > 10 for r in ranks)
    if faces == 5:
        qualifies.append(Category.FIVE_FACE)
    if faces == 4 and ranks.count(10) == 1:
        qualifies.append(Category.FOUR_FACE)
    if 4 in counts:
        qualifies.append(Category.BOMB)
    if all(v < 5 for v in values) and total <= preset.five_small_limit:
        qualifies.append(Category.FIVE_SMALL)
    enabled = [c for c in qualifies if c in preset.order]
    return min(enabled, key=preset.order.index)   # order is strongest first


@pytest.mark.parametrize("name", list_presets())
def test_counts_match_an_independent_multiset_walk(name):
    preset = load_preset(name)
    expected = dict.fromkeys(preset.order, 0)
    vectors = 0
    for counts in _count_vectors(13, 5):
        vectors += 1
        expected[_independent_category(counts, preset)] += prod(comb(4, n) for n in counts)
    assert vectors == 6175
    assert category_counts(preset) == expected
    assert sum(expected.values()) == ALL_HANDS == 2598960


def _five_small_hands(limit: int) -> int:
    """Brute force over the 16 cards below five."""
    small = [c for c in DECK if c.rank < 5]
    return sum(1 for h in combinations(small, 5) if sum(c.rank for c in h) <= limit)


def test_special_hands_by_closed_forms():
    cambodia = category_counts("cambodia")
    assert cambodia[Category.FIVE_FACE] == comb(12, 5) == 792           # five of the 12 courts
    classic = category_counts("classic")
    # Four face: four of the 12 courts and one of the 4 tens; in classic the bomb outranks it
    # for JJJJ10 / QQQQ10 / KKKK10 (3 ranks x 4 tens).
    assert classic[Category.FOUR_FACE] == comb(12, 4) * 4 - 3 * 4 == 1968
    # Five small (total <= 10) outranks everything in classic.
    assert classic[Category.FIVE_SMALL] == _five_small_hands(10) == 776
    # Bombs: 13 ranks x 48 kickers, less the ones that are five small (AAAA+2/3/4, 2222+A).
    assert classic[Category.BOMB] == 13 * 48 - (3 * 4 + 4) == 608
    # Five face in classic: less the bombs among them (JJJJ, QQQQ, KKKK + one of 8 other courts).
    assert classic[Category.FIVE_FACE] == 792 - 3 * 8 == 768
    haodan = category_counts("haodan")
    assert haodan[Category.FIVE_FACE] == 792 and haodan[Category.BOMB] == 624 - 24
    grab = category_counts("grab-banker")
    assert grab[Category.FIVE_SMALL] == _five_small_hands(9) == 360
    # Five small totalling exactly 10 has no bull and no four of a rank (AAAA+6 is not small),
    # so in grab-banker every one of them is a plain no bull.
    assert grab[Category.NO_BULL] - classic[Category.NO_BULL] == 776 - 360
    assert grab[Category.BOMB] == classic[Category.BOMB]


def test_stats_json_shape():
    data = hand_stats("grab-banker").to_json()
    assert set(data) == {"rules", "total", "counts", "seconds"}
    assert data["rules"] == "grab-banker" and data["total"] == 2598960
    assert list(data["counts"])[0] == "five_small" and data["seconds"] >= 0


def _naive_category(hand, preset) -> Category:
    values = [min(c.rank, 10) for c in hand]
    total = sum(values)
    bull = any(sum(t) % 10 == 0 for t in combinations(values, 3))
    ranks = [c.rank for c in hand]
    candidates = [Category.for_points(total % 10 or 10) if bull else Category.NO_BULL]
    if all(r > 10 for r in ranks):
        candidates.append(Category.FIVE_FACE)
    if sum(r > 10 for r in ranks) == 4 and 10 in ranks:
        candidates.append(Category.FOUR_FACE)
    if any(ranks.count(r) == 4 for r in ranks):
        candidates.append(Category.BOMB)
    if max(values) < 5 and total <= preset.five_small_limit:
        candidates.append(Category.FIVE_SMALL)
    return min((c for c in candidates if c in preset.order), key=preset.order.index)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["classic", "grab-banker"])
def test_counts_match_a_brute_force_over_every_hand(name):
    preset = load_preset(name)
    counts = dict.fromkeys(preset.order, 0)
    for hand in combinations(DECK, 5):
        counts[_naive_category(hand, preset)] += 1
    assert counts == category_counts(preset)
