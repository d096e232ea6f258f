"""Settling a round: who is paid how much, and how much the house keeps.

One function serves house-banked and player-banked tables because the difference is
data: in both, each player's hand is compared with the banker's, and the loser pays the
winner the stake times the *winning* hand's multiplier for the bet kind (times the
banker's bid and the player's bet multiple where the preset has grab-the-banker).  The
house then keeps a commission on a winner's winnings — on every winning player, and on a
player-banker's net win for the round where the preset says the banker pays it too
(``commission.on_banker``).  Commission is rounded per line to the preset's money unit.

At a player-banked table whose preset limits the banker's cover (``banker.cover``), a
banker loses at most their stack: what the losing seats pay goes to the winners, with the
stack on top, and winners the banker cannot pay in full get less (strongest hand first, or
everyone the same share); each line keeps what the hand ``owed`` beside what it was paid.

Every amount is a :class:`~decimal.Decimal` and the books always balance::

    sum(line.net for line in lines) + banker_net + total_commission == 0

``net`` is from the player's side (+ the banker pays the player); ``banker_net`` is the
banker's (the house's, at a house-banked table) after any commission it pays.

>>> from decimal import Decimal
>>> s = settle_round("cambodia", "5S 8H 2D 4C 9S",
...                  {"1": ("7S 8C 5H KD 10C", Bet("1", Decimal(100), "double"))})
>>> s.lines[0].outcome.value, s.lines[0].gross, s.lines[0].commission, s.lines[0].net
('win', Decimal('300.00'), Decimal('15.00'), Decimal('285.00'))
"""

from __future__ import annotations

from dataclasses import dataclass
import re
from contextlib import contextmanager
from decimal import Decimal, Inexact, InvalidOperation, localcontext
from enum import StrEnum
from typing import Any, Collection, Iterable, Iterator, Mapping

from scoring.cards import Card, CardError
from scoring.compare import compare, strength
from scoring.evaluate import HandResult, evaluate
from scoring.errors import NiuniuError
from scoring.rules import BankerCover, Banking, FullTie, Preset, load_preset

ZERO = Decimal(0)
# Decimal computes exactly to 28 significant digits.  Stakes stay under this limit (1e400 %
# 0.01 cannot be done at all), and every product and sum of a settlement is computed with
# inexact results trapped (``_exactly``): a preset's multipliers can reach 10^9, and a
# settlement that would round is refused rather than paid a cent off.  No table stakes near this.
MONEY_LIMIT = Decimal(10) ** 18


class SettlementError(NiuniuError, ValueError):
    """A bet or round that cannot be settled as given; the message says which seat and why."""


class Outcome(StrEnum):
    WIN = "win"
    LOSE = "lose"
    PUSH = "push"


# Money as people write it: ASCII digits and one point.  Decimal() also reads "10_0" (100),
# "1e3" and other scripts' digits, so a typo would become a different stake silently.
_MONEY_TEXT = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_EXPONENT_TEXT = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+")


def to_money(value: Decimal | int | str, what: str = "amount") -> Decimal:
    """Read money exactly: Decimal, int or text; never a binary float."""
    if isinstance(value, bool) or isinstance(value, float):
        raise SettlementError(f"{what} {value!r}: give money as text or Decimal (e.g. '12.50'), never a float")
    if isinstance(value, str) and not _MONEY_TEXT.fullmatch(value.strip()):
        if value.strip().lower().lstrip("+-") in ("inf", "infinity", "nan"):
            raise SettlementError(f"{what} {value!r} is not a finite amount")
        if _EXPONENT_TEXT.fullmatch(value.strip()):
            raise SettlementError(f"{what} {value!r} is written in exponent form, not a number in digits; write "
                                  "the amount in digits, like 100000 or 12.50 (amounts stay under 10^18)")
        raise SettlementError(f"{what} {value!r} is not a number; write it like 100 or 12.50")
    try:
        amount = value if isinstance(value, Decimal) else Decimal(str(value).strip())
    except InvalidOperation:
        raise SettlementError(f"{what} {value!r} is not a number; write it like 100 or 12.50") from None
    if not amount.is_finite():
        raise SettlementError(f"{what} {value!r} is not a finite amount")
    if abs(amount) >= MONEY_LIMIT:
        raise SettlementError(f"{what} {value!r} is too large to settle exactly; amounts stay under 10^18")
    return amount


@dataclass(frozen=True)
class Bet:
    """One player's bet: the stake, the bet kind (``Preset.bet_kinds``) and, at
    grab-the-banker tables, the bet multiple the player chose."""

    seat: str
    amount: Decimal
    kind: str
    multiple: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.seat, str) or not self.seat.strip():
            raise SettlementError(f"bet seat {self.seat!r}: name the seat, like '1'")
        amount = to_money(self.amount, f"seat {self.seat} stake")
        if amount <= 0:
            raise SettlementError(f"seat {self.seat} stake {amount} must be more than zero")
        object.__setattr__(self, "amount", amount)
        if not isinstance(self.kind, str):
            raise SettlementError(f"seat {self.seat} bet kind {self.kind!r}: name it, like 'equal' or 'double'")
        if isinstance(self.multiple, bool) or not isinstance(self.multiple, int) or self.multiple < 1:
            raise SettlementError(f"seat {self.seat} bet multiple {self.multiple!r} must be a whole number >= 1")

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "amount": money_text(self.amount), "kind": self.kind, "multiple": self.multiple}


@dataclass(frozen=True)
class SettlementLine:
    """One seat's result against the banker.

    ``multiplier`` is everything the stake was multiplied by (winning hand x bank bid x
    bet multiple; 0 on a push); ``gross`` is before commission, signed from the player's
    side; ``net = gross - commission``.  ``owed`` is what a win would have paid where the
    banker's stack could not cover it in full (``None`` when it was paid in full).
    """

    seat: str
    outcome: Outcome
    player: HandResult
    banker: HandResult
    multiplier: int
    gross: Decimal
    commission: Decimal
    net: Decimal
    bet: Bet | None = None
    escaped: bool = False
    owed: Decimal | None = None

    @property
    def short(self) -> Decimal:
        """What the banker's stack left unpaid on this line (0 when paid in full)."""
        return ZERO if self.owed is None else self.owed - self.gross

    def to_json(self) -> dict[str, Any]:
        data = {
            "seat": self.seat,
            "outcome": self.outcome.value,
            "kind": self.bet.kind if self.bet else None,
            "amount": money_text(self.bet.amount) if self.bet else None,
            "bet_multiple": self.bet.multiple if self.bet else 1,
            "escaped": self.escaped,
            "player": self.player.to_json(),
            "multiplier": self.multiplier,
            "gross": money_text(self.gross),
            "commission": money_text(self.commission),
            "net": money_text(self.net),
        }
        if self.owed is not None:   # only where the cover ran out, so other rounds' records are unchanged
            data["owed"] = money_text(self.owed)
        return data


@dataclass(frozen=True)
class Settlement:
    preset: str
    lines: tuple[SettlementLine, ...]
    banker_net: Decimal
    total_commission: Decimal
    banking: Banking               # the house's books differ: at a house-banked table banker_net is its own
    banker: HandResult | None = None
    banker_bid: int = 1
    banker_commission: Decimal = ZERO
    preset_rules: str = ""         # Preset.rules_digest of the rules it was settled under
    banker_stack: Decimal | None = None   # what a player-banker could lose at most (banker.cover), else None

    @property
    def house_net(self) -> Decimal:
        """What the round leaves the house: see :func:`house_net`."""
        return house_net(self.banking, self.banker_net, self.total_commission)

    def line(self, seat: str) -> SettlementLine:
        for line in self.lines:
            if line.seat == seat:
                return line
        raise KeyError(seat)

    def to_json(self) -> dict[str, Any]:
        data = {
            "preset": self.preset,
            "preset_rules": self.preset_rules,
            "banking": self.banking.value,
            "banker": self.banker.to_json() if self.banker else None,
            "banker_bid": self.banker_bid,
            "lines": [line.to_json() for line in self.lines],
            "banker_net": money_text(self.banker_net),
            "banker_commission": money_text(self.banker_commission),
            "total_commission": money_text(self.total_commission),
        }
        if self.banker_stack is not None:
            data["banker_stack"] = money_text(self.banker_stack)
        return data


def house_net(banking: Banking, banker_net: Decimal, total_commission: Decimal) -> Decimal:
    """The house keeps every commission, and where it banks, the banker's net too: a Niu
    Niu paid 285 after a 15 commission costs a house-banked table 285, not the 300 the
    banker's side lost."""
    return total_commission + (banker_net if banking is Banking.HOUSE else ZERO)


def money_text(amount: Decimal) -> str:
    """Plain decimal text (no exponent, no negative zero) for JSON and screens."""
    return format(amount if amount else abs(amount), "f")


def unit_places(unit: Decimal) -> int:
    """How many decimals the money unit (a preset's quantum) is written with: 2 for 0.01 and
    0.05, 3 for 0.001, none for 1, 100 or 1E+2."""
    exponent = Decimal(unit).as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def money_shown(amount: Decimal | str | int, unit: Decimal | None = None, *, grouped: bool = False) -> str:
    """A money figure as a person reads it, on a screen, a page or a printed report: written
    to the places of the table's money ``unit`` (riel 3518516, dollars 3518516.00, dinars
    0.978; the figure as logged may say 3518516.00 or 1.03), plain (no exponent), its
    thousands grouped where ``grouped``.  Never rounded: a figure finer than the unit (which
    no settlement makes) keeps every place.  Not for what is stored or exported: machines
    read ``money_text``.

    >>> money_shown("3518516.00", Decimal("1"), grouped=True), money_shown("1.03", Decimal("0.001"))
    ('3,518,516', '1.030')
    """
    value = Decimal(amount)
    if unit is not None:
        step = Decimal(1).scaleb(-unit_places(unit))
        if value == value.quantize(step):
            value = value.quantize(step)
    return format(value if value else abs(value), ",f" if grouped else "f")


HandInput = str | Iterable[Card | str]


def settle_round(
    preset: Preset | str,
    banker_cards: HandInput,
    seats: Mapping[str, tuple[HandInput, Bet]],
    *,
    banker_bid: int = 1,
    escaped: Collection[str] = (),
    banker_stack: Decimal | int | str | None = None,
) -> Settlement:
    """Settle every seat against the banker.

    ``banker_bid`` is the bank multiple won at a grab-the-banker table (1 elsewhere).
    ``escaped`` names seats whose player left mid-round; where the preset has an escape
    penalty they pay as if the banker's hand beat theirs (their cards are still needed,
    for the record and to check the deck).  ``banker_stack`` is what a player-banker holds
    at the start of the round, required exactly where the preset limits the banker's cover.
    """
    if not isinstance(preset, Preset):
        preset = load_preset(preset)
    _verify_round(preset, seats, banker_bid, escaped)
    stack = _verify_stack(preset, banker_stack)
    banker = _score(banker_cards, preset, "banker")
    hands = {seat: _score(cards, preset, f"seat {seat}") for seat, (cards, _) in seats.items()}
    _verify_deck(banker, hands, preset.decks)

    owed: dict[str, tuple[Outcome, int, Decimal]] = {}
    for seat, (_, bet) in seats.items():
        kind = preset.bet(bet.kind)
        player = hands[seat]
        result = -1 if seat in escaped else compare(player, banker, preset)
        if result == 0:
            result = -1 if preset.full_tie is FullTie.BANKER else 0
        if result > 0:
            outcome, multiplier = Outcome.WIN, kind.multiplier(player.category) * banker_bid * bet.multiple
        elif result < 0:
            outcome, multiplier = Outcome.LOSE, kind.multiplier(banker.category) * banker_bid * bet.multiple
        else:
            outcome, multiplier = Outcome.PUSH, 0
        with _exactly(f"seat {seat}'s stake {money_text(bet.amount)} x {multiplier}"):
            # written to the money unit's places, as commission and net are: "300.00", not "300"
            owed[seat] = outcome, multiplier, (bet.amount * multiplier * result).quantize(preset.commission_quantum)
    paid = _covered(preset, stack, {seat: gross for seat, (_, _, gross) in owed.items()}, hands)

    lines = []
    for seat, (_, bet) in seats.items():
        outcome, multiplier, full = owed[seat]
        gross = paid[seat]
        with _exactly(f"seat {seat}'s payout"):
            taxable = gross * preset.commission_rate if gross > 0 else ZERO
        commission = preset.round_commission(taxable)
        with _exactly(f"seat {seat}'s payout"):
            net = gross - commission
        lines.append(SettlementLine(
            seat=seat, outcome=outcome, player=hands[seat], banker=banker, multiplier=multiplier,
            gross=gross, commission=commission, net=net, bet=bet, escaped=seat in escaped,
            owed=full if gross != full else None,
        ))

    with _exactly("the banker's total"):
        banker_gross = -sum((line.gross for line in lines), ZERO)
        banker_pays = preset.commission_on_banker and banker_gross > 0
        taxable = banker_gross * preset.commission_rate if banker_pays else ZERO
    banker_commission = preset.round_commission(taxable)
    return Settlement(
        preset=preset.name,
        lines=tuple(lines),
        banker_net=banker_gross - banker_commission,
        total_commission=sum((line.commission for line in lines), ZERO) + banker_commission,
        banking=preset.banking,
        banker=banker,
        banker_bid=banker_bid,
        banker_commission=banker_commission,
        preset_rules=preset.rules_digest,
        banker_stack=stack,
    )


def _verify_stack(preset: Preset, banker_stack: Decimal | int | str | None) -> Decimal | None:
    """The banker's stack as money, given exactly where the preset's cover rule needs it:
    a stack the rules ignore would be a figure on the record that changed nothing."""
    if preset.banker_cover is BankerCover.UNLIMITED:
        if banker_stack is not None:
            raise SettlementError(
                f"preset {preset.name} pays every win in full (banker.cover = 'unlimited'); "
                "leave out the banker's stack, or use a preset whose banker.cover limits it")
        return None
    if banker_stack is None:
        raise SettlementError(
            f"preset {preset.name} pays winners only as far as the banker's stack covers "
            f"(banker.cover = '{preset.banker_cover.value}'); give the banker's stack for this round")
    stack = to_money(banker_stack, "banker's stack")
    if stack < 0:
        raise SettlementError(f"banker's stack {money_text(stack)} is below zero; give what the banker holds, like 500")
    if stack % preset.commission_quantum:
        raise SettlementError(
            f"banker's stack {money_text(stack)} is finer than the table's money unit "
            f"{money_text(preset.commission_quantum)}")
    return stack.quantize(preset.commission_quantum)


def _covered(preset: Preset, stack: Decimal | None, owed: Mapping[str, Decimal],
             hands: Mapping[str, HandResult]) -> dict[str, Decimal]:
    """Each seat's gross after the banker's cover: what the losers pay plus the stack goes
    to the winners; strongest first pays whole groups of equally strong hands in turn, and
    a group (under pro rata, every winner) that cannot be paid in full shares what is left
    in proportion to what each won.  Counted in whole money units, so the shares are exact:
    each gets its proportion rounded down, and the units rounding leaves over go one each
    to the largest remainders (the stronger hand, then the seat first in order, on a tie) —
    the banker keeps none of them, so a banker who cannot cover ends the round without a
    unit of the stack and nobody is paid money the banker does not have."""
    winners = {seat: gross for seat, gross in owed.items() if gross > 0}
    unit = preset.commission_quantum
    with _exactly("the banker's cover"):
        left = int((stack + sum((-gross for gross in owed.values() if gross < 0), ZERO)) / unit) \
            if stack is not None else 0
        units = {seat: int(gross / unit) for seat, gross in winners.items()}
    if stack is None or sum(units.values()) <= left:
        return dict(owed)
    keys = {seat: strength(hands[seat], preset) for seat in winners}
    if preset.banker_cover is BankerCover.PRO_RATA:
        groups = [list(winners)]
    else:
        groups = [[seat for seat in winners if keys[seat] == key] for key in sorted(set(keys.values()), reverse=True)]
    paid = dict(owed)
    place = {seat: i for i, seat in enumerate(owed)}     # the seats' order, the last tie-break
    for group in groups:
        need = sum(units[seat] for seat in group)
        if need <= left:
            left -= need
            continue
        shares = {seat: units[seat] * left // need for seat in group}
        over = left - sum(shares.values())
        order = sorted(group, key=lambda seat: (-(units[seat] * left % need), tuple(-k for k in keys[seat]),
                                                 place[seat]))
        for seat in order[:over]:
            shares[seat] += 1
        for seat in group:
            paid[seat] = shares[seat] * unit
        left = 0
    return {seat: gross.quantize(unit) for seat, gross in paid.items()}


@contextmanager
def _exactly(what: str) -> Iterator[None]:
    """Decimal arithmetic that refuses to round: money is paid exactly or not settled."""
    with localcontext() as ctx:
        ctx.traps[Inexact] = True
        try:
            yield
        except Inexact:
            raise SettlementError(
                f"{what} is too large to settle exactly (over 28 digits); settle smaller stakes "
                "or use a preset with smaller multipliers") from None


def _verify_round(preset: Preset, seats: Mapping[str, tuple[HandInput, Bet]], banker_bid: int,
                  escaped: Collection[str]) -> None:
    if isinstance(banker_bid, bool) or not isinstance(banker_bid, int) or banker_bid not in preset.banker.bids:
        allowed = ", ".join(map(str, preset.banker.bids))
        raise SettlementError(f"banker bid {banker_bid!r} is not allowed by preset {preset.name}; allowed: {allowed}")
    if not isinstance(seats, Mapping) or not seats:
        raise SettlementError("no seats to settle; give each player's seat with its hand and bet, "
                              "like {'1': ('AS 2H 3D 4C 5S', Bet(...))}")
    if isinstance(escaped, str) or not isinstance(escaped, Collection):
        raise SettlementError(f"escaped seats {escaped!r}: give a list of seat names, like ['3']")
    for seat, entry in seats.items():
        if not isinstance(entry, (tuple, list)) or len(entry) != 2 or not isinstance(entry[1], Bet):
            raise SettlementError(f"seat {seat}: expected (cards, Bet)")
        bet = entry[1]
        if not isinstance(seat, str):
            raise SettlementError(f"seat {seat!r}: name seats as text, like '1'")
        if seat.strip().lower() == "banker":   # a second "banker" row beside the banker's net misleads
            raise SettlementError(f"seat {seat!r} is the banker's name; name a player's seat like '1'")
        if bet.seat != seat:
            raise SettlementError(f"seat {seat}: its bet is recorded for seat {bet.seat}")
        preset.bet(bet.kind)
        if bet.multiple not in preset.banker.bet_multiples:
            allowed = ", ".join(map(str, preset.banker.bet_multiples))
            raise SettlementError(
                f"seat {seat}: bet multiple {bet.multiple} is not allowed by preset {preset.name}; allowed: {allowed}")
        if bet.amount % preset.commission_quantum:
            raise SettlementError(
                f"seat {seat}: stake {money_text(bet.amount)} is finer than the table's money unit "
                f"{money_text(preset.commission_quantum)}")
    unknown = sorted(set(escaped) - set(seats))
    if unknown:
        raise SettlementError(f"escaped seat {unknown[0]} has no hand and bet in this round")
    if escaped and preset.escape_penalty is None:
        raise SettlementError(f"preset {preset.name} has no escape penalty; settle the seat's hand or void the round")


def _score(cards: HandInput, preset: Preset, whose: str) -> HandResult:
    try:
        return evaluate(cards, preset)
    except CardError as exc:
        raise CardError(f"{whose}: {exc}") from None


def _verify_deck(banker: HandResult, hands: Mapping[str, HandResult], decks: int) -> None:
    """A shoe of ``decks`` decks holds that many of each card: one more is a misread."""
    owners: dict[Card, list[str]] = {}
    table = [("the banker", banker)] + [(f"seat {seat}", hand) for seat, hand in hands.items()]
    for who, hand in table:
        for card in hand.bull + hand.rest:
            seen = owners.setdefault(card, [])
            seen.append(who)
            if len(seen) > decks:
                if decks == 1:
                    raise CardError(
                        f"card {card.code} is in both {seen[0]}'s hand and {who}'s; one deck has one of each")
                raise CardError(
                    f"card {card.code} is dealt {len(seen)} times ({', '.join(seen)}) "
                    f"but the table uses {decks} decks")
