"""Evaluating hands: the seed examples of issue 2, bull reporting, specials per preset."""

import doctest
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scoring.evaluate
import scoring.settle
from scoring.cards import DECK, Card, CardError
from scoring.evaluate import Category, HandResult, evaluate
from scoring.rules import list_presets

SUITS = "SHDC"


def hand(ranks: str) -> tuple[Card, ...]:
    """Five cards from rank letters, spreading suits so one deck can deal them."""
    used: dict[str, int] = {}
    cards = []
    for rank in ranks.split():
        n = used.get(rank, 0)
        used[rank] = n + 1
        cards.append(Card.parse(rank + SUITS[n]))
    return tuple(cards)


SEED_EXAMPLES = [
    ("4 6 Q 9 9", Category.BULL_8),
    ("7 8 5 K 10", Category.NIUNIU),
    ("10 3 2 Q 6", Category.NO_BULL),
    ("10 3 7 Q 6", Category.BULL_6),
    ("7 3 10 8 6", Category.BULL_4),
    ("2 8 J 6 3", Category.BULL_9),
    ("A 8 4 K 7", Category.NO_BULL),
    ("10 J J Q K", Category.FOUR_FACE),
    ("J J Q Q K", Category.FIVE_FACE),
    ("2 2 2 2 K", Category.BOMB),
    ("A 3 2 A 2", Category.FIVE_SMALL),
]


@pytest.mark.parametrize("ranks, category", SEED_EXAMPLES)
def test_seed_examples(ranks, category):
    # classic enables every special hand, so each example reaches its own category.
    assert evaluate(hand(ranks), "classic").category is category


def test_bull_and_rest_are_reported():
    result = evaluate("4S 6H QD 9C 9H", "cambodia")
    assert result.label == "Bull 8" and result.points == 8
    bull_values = sum(c.value for c in result.bull)
    assert len(result.bull) == 3 and bull_values % 10 == 0
    assert sorted(c.code for c in result.bull + result.rest) == sorted("4S 6H QD 9C 9H".split())
    assert sum(c.value for c in result.rest) % 10 == 8
    assert result.top.code == "QD"
    assert result.multiplier == 2  # cambodia's main bet is Double: bull 8 pays x2


def test_no_bull_reports_all_five_as_rest():
    result = evaluate(hand("A 8 4 K 7"), "cambodia")
    assert result.bull == () and len(result.rest) == 5 and result.points == 0
    assert result.label == "No Bull" and result.top.rank == 13


def test_niuniu_points_and_labels():
    result = evaluate(hand("7 8 5 K 10"), "ultimate")
    assert (result.category, result.points, result.label, result.multiplier) == (Category.NIUNIU, 10, "Niu Niu", 3)
    assert evaluate(hand("2 8 J 6 3"), "ultimate").label == "Bull 9"


@pytest.mark.parametrize(
    "ranks, preset, category",
    [
        # Four aces and a two: a bomb and a five small; the preset's order decides.
        ("A A A A 2", "classic", Category.FIVE_SMALL),
        ("A A A A 2", "haodan", Category.BOMB),          # haodan has no five small
        ("A A A A 2", "cambodia", Category.NO_BULL),     # cambodia has neither
        # Four jacks and a queen: five face and bomb.
        ("J J J J Q", "classic", Category.BOMB),         # classic: bomb > five face
        ("J J J J Q", "haodan", Category.FIVE_FACE),     # haodan: five face > bomb
        ("J J J J Q", "cambodia", Category.FIVE_FACE),
        # Four face cards and a ten: four face only where enabled, else niu niu.
        ("10 J Q K K", "classic", Category.FOUR_FACE),
        ("10 J Q K K", "haodan", Category.NIUNIU),
        # Five small totalling exactly 10: classic allows 10, grab-banker only below 10.
        ("A 2 3 A 3", "classic", Category.FIVE_SMALL),
        ("A 2 3 A 3", "grab-banker", Category.NO_BULL),
        ("A 2 3 A 2", "grab-banker", Category.FIVE_SMALL),
        # A bomb of kings also holds a bull: the bull is still shown.
        ("K K K K 5", "cambodia", Category.BULL_5),
    ],
)
def test_specials_follow_the_preset(ranks, preset, category):
    assert evaluate(hand(ranks), preset).category is category


def test_special_hand_multipliers_come_from_the_preset():
    assert evaluate(hand("2 2 2 2 K"), "classic").multiplier == 6
    assert evaluate(hand("2 2 2 2 K"), "haodan").multiplier == 8
    assert evaluate(hand("A 3 2 A 2"), "grab-banker").multiplier == 10
    assert evaluate(hand("J J Q Q K"), "haodan").multiplier == 10


def test_bomb_of_kings_shows_its_bull():
    result = evaluate(hand("K K K K 5"), "classic")
    assert result.category is Category.BOMB
    assert [c.rank for c in result.bull] == [13, 13, 13] and result.points == 5


def test_tokens_and_card_objects_give_the_same_result():
    tokens = ["4s", "6♥", "♦Q", "9C", "9h"]
    assert evaluate(tokens, "cambodia") == evaluate([Card.parse(t) for t in tokens], "cambodia")
    assert evaluate(" ".join(tokens), "cambodia") == evaluate(tuple(Card.parse(t) for t in tokens), "cambodia")


@pytest.mark.parametrize("cards, token", [("AS 2S 3S 4S", "4"), ("AS 2S 3S 4S 5S 6S", "6"),
                                          ("AS AS 3S 4S 5S", "AS"), ("AS 2S 3S 4S 1S", "'1S'")])
def test_bad_hands_raise_card_error(cards, token):
    with pytest.raises(CardError) as err:
        evaluate(cards, "cambodia")
    assert token in str(err.value)


def test_to_json_uses_canonical_names():
    data = evaluate(hand("J J Q Q K"), "cambodia").to_json()
    assert data["category"] == "five_face" and data["label"] == "Five Face"
    assert set(data) == {"category", "label", "points", "bull", "rest", "top", "multiplier"}
    assert data["top"] == "KS" and data["multiplier"] == 5


def test_docstring_examples_hold():
    for module in (scoring.evaluate, scoring.settle):
        assert doctest.testmod(module).failed == 0


five_cards = st.lists(st.sampled_from(DECK), min_size=5, max_size=5, unique=True)


@settings(max_examples=300, deadline=None)
@given(cards=five_cards, order=st.permutations(range(5)), preset=st.sampled_from(list_presets()))
def test_evaluation_does_not_depend_on_card_order(cards, order, preset):
    shuffled = [cards[i] for i in order]
    first = evaluate(cards, preset)
    assert evaluate(shuffled, preset) == first
    assert isinstance(first, HandResult)
    # The reported bull is a real bull and the points are the remaining two.
    if first.bull:
        assert sum(c.value for c in first.bull) % 10 == 0
        assert (sum(c.value for c in first.rest) % 10 or 10) == first.points
    else:
        assert first.points == 0
        assert not any(sum(c.value for c in t) % 10 == 0 for t in itertools.combinations(cards, 3))
