"""Cards and their text form.

A card is a rank (1 = ace .. 13 = king) and a suit.  Its *value* for bull-making
depends on the rank alone (A=1, 2..9 face, 10/J/Q/K=10), which is why evaluation
can be tabled by rank multiset (see ``scoring.evaluate``).

The canonical text form is rank then suit letter: ``AS``, ``10H``, ``QD``.  Input
is forgiving (``th``, ``A♠``, ``♠A``) because it is typed by people and read from a
model; output is always canonical so logs and JSON compare byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from collections.abc import Iterable

from scoring.errors import NiuniuError


class CardError(NiuniuError, ValueError):
    """A card or hand that cannot be read; the message names the bad token."""


class Suit(StrEnum):
    SPADES = "S"
    HEARTS = "H"
    DIAMONDS = "D"
    CLUBS = "C"

    @property
    def symbol(self) -> str:
        return _SUIT_SYMBOLS[self]

    @property
    def is_red(self) -> bool:
        return self in (Suit.HEARTS, Suit.DIAMONDS)


_SUIT_SYMBOLS = {Suit.SPADES: "♠", Suit.HEARTS: "♥", Suit.DIAMONDS: "♦", Suit.CLUBS: "♣"}
_SUIT_FROM_TEXT = {s.value: s for s in Suit} | {
    "♠": Suit.SPADES, "♤": Suit.SPADES,
    "♥": Suit.HEARTS, "♡": Suit.HEARTS,
    "♦": Suit.DIAMONDS, "♢": Suit.DIAMONDS,
    "♣": Suit.CLUBS, "♧": Suit.CLUBS,
}
RANK_NAMES = {1: "A", 10: "10", 11: "J", 12: "Q", 13: "K"} | {r: str(r) for r in range(2, 10)}
_RANK_FROM_TEXT = {name: rank for rank, name in RANK_NAMES.items()} | {"T": 10}


@dataclass(frozen=True, slots=True)
class Card:
    """One playing card.  Ordered by tie-break strength of rank only (K high, A low)."""

    rank: int
    suit: Suit

    def __post_init__(self) -> None:
        # A float or bool rank would compare and hash like an int and fail only later, far
        # from the caller's mistake (a 5.5 even scores as "five of one rank").
        if type(self.rank) is not int or not 1 <= self.rank <= 13:
            raise CardError(f"rank {self.rank!r} is not a whole number from 1 (ace) to 13 (king)")
        if not isinstance(self.suit, Suit):
            suit = _SUIT_FROM_TEXT.get(self.suit) if isinstance(self.suit, str) else None
            if suit is None:
                raise CardError(f"suit {self.suit!r} is not one of S H D C (or ♠ ♥ ♦ ♣)")
            object.__setattr__(self, "suit", suit)

    @property
    def value(self) -> int:
        """Points toward a bull: ace 1, pips at face value, 10 and courts 10."""
        return min(self.rank, 10)

    @property
    def is_face(self) -> bool:
        return self.rank >= 11

    @property
    def code(self) -> str:
        return RANK_NAMES[self.rank] + self.suit.value

    @property
    def index(self) -> int:
        """Position in :data:`CARD_CODES` (the model's class id)."""
        return _SUIT_CLASS_OFFSET[self.suit] + self.rank - 1

    def __str__(self) -> str:
        return self.code

    @classmethod
    def parse(cls, token: str) -> "Card":
        """Read ``AS``, ``10h``, ``Th``, ``A♠`` or ``♠A``; raise :class:`CardError` otherwise."""
        if not isinstance(token, str):
            raise CardError(f"card {token!r} is not text; write it like AS, 10H or QD")
        text = token.strip().upper()
        if "JOKER" in text:
            raise CardError(f"card {token!r}: Niu Niu is dealt from 52 cards without jokers; remove it")
        if len(text) < 2:
            raise CardError(f"card {token!r} is too short; write rank then suit, like AS, 10H or QD")
        if text[0] in _SUIT_FROM_TEXT and text[0] not in _RANK_FROM_TEXT and text[-1] not in _SUIT_FROM_TEXT:
            text = text[1:] + text[0]  # suit first: ♠A
        rank_text, suit_text = text[:-1], text[-1]
        suit = _SUIT_FROM_TEXT.get(suit_text)
        if suit is None:
            raise CardError(f"card {token!r}: suit {suit_text!r} is not one of S H D C (or ♠ ♥ ♦ ♣)")
        rank = _RANK_FROM_TEXT.get(rank_text)
        if rank is None:
            raise CardError(
                f"card {token!r}: rank {rank_text!r} is not one of A 2 3 4 5 6 7 8 9 10 J Q K "
                "(no jokers, no 1 or 11)"
            )
        return cls(rank, suit)

    @classmethod
    def from_index(cls, index: int) -> "Card":
        """The card with the model's class id ``index`` (0..51)."""
        if type(index) is not int or not 0 <= index < 52:
            raise CardError(f"card class id {index!r} is outside 0..51 (models/cards.yaml)")
        return _CARDS_BY_INDEX[index]


SUITS_IN_CLASS_ORDER = (Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS)
CARD_CODES: tuple[str, ...] = tuple(
    RANK_NAMES[rank] + suit.value for suit in SUITS_IN_CLASS_ORDER for rank in range(1, 14)
)
"""The 52 cards in the fixed class order of the card model (``models/cards.yaml``)."""

_SUIT_CLASS_OFFSET = {suit: 13 * i for i, suit in enumerate(SUITS_IN_CLASS_ORDER)}
_CARDS_BY_INDEX: tuple[Card, ...] = tuple(Card.parse(c) for c in CARD_CODES)
DECK: tuple[Card, ...] = _CARDS_BY_INDEX


def parse_cards(tokens: str | Iterable[str | Card], count: int | None = 5, *, unique: bool = True) -> tuple[Card, ...]:
    """Read a hand from ``"AS 10H qd"`` or a list of tokens.

    ``count`` is the number of cards required (``None`` for any); ``unique`` refuses
    the same card twice, which in a single-deck game means a misread or a cheat.
    """
    if isinstance(tokens, str):
        tokens = tokens.replace(",", " ").split()
    elif isinstance(tokens, (bytes, dict)) or not isinstance(tokens, Iterable):
        raise CardError(f"a hand {tokens!r} must be text like 'AS 10H QD 4C 7S' or a list of cards")
    cards = tuple(t if isinstance(t, Card) else Card.parse(t) for t in tokens)
    if count is not None and len(cards) != count:
        shown = " ".join(c.code for c in cards) or "(nothing)"
        raise CardError(f"a hand needs exactly {count} cards, got {len(cards)}: {shown}")
    if unique:
        seen: set[Card] = set()
        for card in cards:
            if card in seen:
                raise CardError(f"card {card.code} appears twice in one hand; a single deck has one of each")
            seen.add(card)
    return cards
