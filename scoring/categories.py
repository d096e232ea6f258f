"""Hand categories: the canonical names every screen, log and JSON document uses.

The names are fixed (``no_bull``, ``bull_1`` .. ``bull_9``, ``niuniu``, ``four_face``,
``five_face``, ``bomb``, ``five_small``) because recordings and audit records store
them; how strong each one is, and what it pays, is *not* fixed here — that is preset
data (``scoring.rules``), since rule sets disagree (``haodan`` puts ``five_face`` above
``bomb``, ``classic`` the other way round).
"""

from __future__ import annotations

from enum import StrEnum


class Category(StrEnum):
    NO_BULL = "no_bull"
    BULL_1 = "bull_1"
    BULL_2 = "bull_2"
    BULL_3 = "bull_3"
    BULL_4 = "bull_4"
    BULL_5 = "bull_5"
    BULL_6 = "bull_6"
    BULL_7 = "bull_7"
    BULL_8 = "bull_8"
    BULL_9 = "bull_9"
    NIUNIU = "niuniu"
    FOUR_FACE = "four_face"
    FIVE_FACE = "five_face"
    BOMB = "bomb"
    FIVE_SMALL = "five_small"

    @property
    def label(self) -> str:
        """Words for the dealer's screen."""
        return _LABELS[self]

    @classmethod
    def for_points(cls, points: int) -> "Category":
        """The ordinary category of a hand with a bull: 1..9 points, or 10 for niu niu."""
        return _BY_POINTS[points]


BULL_CATEGORIES: tuple[Category, ...] = (
    Category.NO_BULL,
    *(Category(f"bull_{n}") for n in range(1, 10)),
    Category.NIUNIU,
)
"""Every preset has these, weakest first; a preset only chooses which specials sit above."""

SPECIAL_CATEGORIES: tuple[Category, ...] = (
    Category.FOUR_FACE,
    Category.FIVE_FACE,
    Category.BOMB,
    Category.FIVE_SMALL,
)

_LABELS = {
    Category.NO_BULL: "No Bull",
    **{Category(f"bull_{n}"): f"Bull {n}" for n in range(1, 10)},
    Category.NIUNIU: "Niu Niu",
    Category.FOUR_FACE: "Four Face",
    Category.FIVE_FACE: "Five Face",
    Category.BOMB: "Bomb",
    Category.FIVE_SMALL: "Five Small",
}
_BY_POINTS = {0: Category.NO_BULL, **{n: Category(f"bull_{n}") for n in range(1, 10)}, 10: Category.NIUNIU}
