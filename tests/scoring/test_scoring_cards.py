"""Card tokens as dealers type them and as the model reads them."""

import pytest

from scoring.cards import CARD_CODES, DECK, Card, CardError, Suit, parse_cards
from scoring.evaluate import evaluate


@pytest.mark.parametrize(
    "token, code",
    [("AS", "AS"), ("as", "AS"), ("10H", "10H"), ("TH", "10H"), ("th", "10H"), ("qd", "QD"), ("Kc", "KC"),
     ("A♠", "AS"), ("♠A", "AS"), ("10♥", "10H"), ("♦Q", "QD"), (" 9c ", "9C")],
)
def test_tokens_are_read_case_insensitively_and_printed_canonically(token, code):
    assert Card.parse(token).code == code


@pytest.mark.parametrize("token", ["1S", "11H", "", "joker", "JOKER", "A", "AX", "ZZ", "10", "♠", "A♠♠"])
def test_bad_tokens_are_refused_naming_the_token(token):
    with pytest.raises(CardError) as err:
        Card.parse(token)
    assert repr(token) in str(err.value)


def test_values_and_index():
    assert [Card.parse(t).value for t in "AS 2S 9S 10S JS QS KS".split()] == [1, 2, 9, 10, 10, 10, 10]
    assert [card.index for card in DECK] == list(range(52))
    assert [card.code for card in DECK] == list(CARD_CODES)
    assert all(Card.from_index(card.index) == card for card in DECK)
    assert Card(12, "D").suit is Suit.DIAMONDS


@pytest.mark.parametrize("text, count", [("AS 2S 3S 4S", 4), ("AS 2S 3S 4S 5S 6S", 6), ("", 0)])
def test_wrong_card_count_is_refused(text, count):
    with pytest.raises(CardError, match=f"exactly 5 cards, got {count}"):
        parse_cards(text)


def test_same_card_twice_is_refused():
    with pytest.raises(CardError, match="card AS appears twice"):
        parse_cards("AS 2S as 4S 5S")
    assert len(parse_cards("AS 2S AS 4S 5S", unique=False)) == 5


@pytest.mark.parametrize("make, message", [
    (lambda: Card(5.5, "S"), "rank 5.5 is not a whole number"),     # once scored as "five of one rank"
    (lambda: Card(True, "S"), "rank True is not a whole number"),
    (lambda: Card(5, "X"), "suit 'X' is not one of S H D C"),
    (lambda: Card.from_index(-1), "class id -1 is outside 0..51"),  # once silently the king of clubs
    (lambda: Card.from_index(52), "class id 52 is outside 0..51"),
    (lambda: evaluate(None, "cambodia"), "a hand None must be text"),
])
def test_a_program_passing_a_bad_card_gets_a_card_error_naming_it(make, message):
    """The detector and the kiosk build cards from numbers; a wrong number must be refused
    where it is made, as a CardError the caller already handles, not fail later elsewhere."""
    with pytest.raises(CardError, match=message):
        make()
