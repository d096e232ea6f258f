"""Card tokens as dealers type them and as the model reads them."""

import pytest

from scoring.cards import CARD_CODES, DECK, Card, CardError, Suit, parse_cards


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
