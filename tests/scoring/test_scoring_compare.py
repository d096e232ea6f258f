"""Ranking hands: tie-break order of issue 2 and the strict total order on one deck."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.cards import DECK
from scoring.compare import compare
from scoring.evaluate import evaluate
from scoring.rules import PresetError, list_presets, load_preset


def beats(a: str, b: str, preset: str) -> int:
    p = load_preset(preset)
    return compare(evaluate(a, p), evaluate(b, p), p)


def test_category_then_points():
    assert beats("7S 8S 5S KS 10S", "4H 6H QH 9H 9D", "cambodia") == 1   # niu niu > bull 8
    assert beats("4H 6H QH 9H 9D", "2S 8S JS 6S 3S", "cambodia") == -1   # bull 8 < bull 9
    assert beats("AS 8S 4S KS 7S", "10H 3H 7H QH AH", "cambodia") == -1  # no bull < bull 1


def test_same_points_highest_card_then_suit():
    # Both bull 5: K high beats Q high.
    assert evaluate("KS 5S 10H 10D QD", "cambodia").label == evaluate("QH 5D 10C JC JH", "cambodia").label == "Bull 5"
    assert beats("KS 5S 10H 10D QD", "QH 5D 10C JC JH", "cambodia") == 1
    # Same ranks, top card K: suit decides, and the suit order is the preset's.
    player, banker = "KC 10S 9S AS 5S", "KD 10H 9H AH 5H"    # both bull 5, K high
    assert beats(player, banker, "cambodia") == 1             # S > H > C > D: clubs beat diamonds
    assert beats(player, banker, "ultimate") == -1            # S > H > D > C: diamonds beat clubs


def test_no_bull_against_no_bull_goes_to_the_highest_card():
    assert evaluate("KS 8S 4S AS 7S", "classic").label == evaluate("QH 9H 5H 2H 4D", "classic").label == "No Bull"
    assert beats("KS 8S 4S AS 7S", "QH 9H 5H 2H 4D", "classic") == 1


def test_bomb_against_bomb_by_the_four():
    # Fours of 3 with a king kicker lose to fours of 4 with an ace kicker.
    assert beats("3S 3H 3D 3C KS", "4S 4H 4D 4C AH", "classic") == -1


def test_five_small_by_total_then_top_card():
    assert beats("AS AH 2S 2H 4S", "AD AC 2D 2C 3S", "classic") == 1    # total 10 beats total 9 (4 > 3 too)
    assert beats("AS AH 2S 2H 3S", "AD AC 2D 3C 3H", "classic") == -1   # total 9 loses to 10 (same top rank)
    assert beats("AS AH 2S 3S 3H", "AD AC 2D 2H 4D", "classic") == -1   # 10 vs 10: top card 4 beats 3


def test_preset_order_of_specials():
    five_face, bomb = "JS JH QS QH KS", "2S 2H 2D 2C 3S"
    assert beats(five_face, bomb, "classic") == -1   # classic: bomb > five face
    assert beats(five_face, bomb, "haodan") == 1     # haodan: five face > bomb


def test_hands_scored_under_another_preset_are_refused():
    small = evaluate("AS AH 2S 2H 4S", "classic")        # five_small in classic
    other = evaluate("KS 8S 4S AS 7S", "cambodia")
    with pytest.raises(PresetError, match="same preset"):
        compare(small, other, "cambodia")


disjoint_hands = st.permutations(DECK).map(lambda d: (d[0:5], d[5:10], d[10:15]))


@settings(max_examples=400, deadline=None)
@given(hands=disjoint_hands, preset=st.sampled_from(list_presets()))
def test_compare_is_a_strict_total_order_on_one_deck(hands, preset):
    p = load_preset(preset)
    a, b, c = (evaluate(h, p) for h in hands)
    ab, bc, ac = compare(a, b, p), compare(b, c, p), compare(a, c, p)
    assert ab != 0 and bc != 0 and ac != 0                     # no ties between distinct hands
    assert compare(b, a, p) == -ab and compare(c, b, p) == -bc  # antisymmetric
    assert compare(a, a, p) == 0                               # irreflexive as a strict order
    if ab == bc:
        assert ac == ab                                        # transitive
