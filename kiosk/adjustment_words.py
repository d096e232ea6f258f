"""Who pays whom, in words: the money a correction after Settle moved, wherever a person reads it.

Session 49 left two wordings of one thing: ``kiosk.timeline.Say`` (the round page and the
evidence package's summary) and the dealer screen's and shift report's (``kiosk.rounds``),
each with its own idea of which way a signed amount points, how a party is named and what a
waiver says.  They agreed only because tests held both; the next change to one would have
left the other behind, and the officer, the dealer and the pit supervisor would have read one
record three ways.  So every sentence about an adjustment's money is built here, from one
sign rule, one set of verbs and one name per party; the callers choose only the register:

* the dealer's instruction (``instruction``: "PAY 97.50 USD to Seat 2" on the screen, "pay
  97.50 USD to seat 2" in the report), and who pays whom where a player banks
  (:func:`adjustment_words`, :func:`party_words`);
* a round told afterwards (:func:`moved`: "to pay 97.50 to seat 2" still owed, "paid 97.50 to
  seat 2", "not collected 95.00 from seat 1" waived; :func:`owed`: "the house owes seat 2
  97.50"), and per party where the chips stand (:func:`standing`);
* a period's totals (:func:`owed_words`, :func:`moved_words`).

An amount is always signed from the party's side (positive: the party is paid), as the log's
``difference`` is; ``money`` writes an unsigned amount as the reader's place shows money (the
table's unit, a currency or not).  Nothing here reads the log or works out an amount: the
figures are ``kiosk.rounds.adjustment``'s and the shift report's.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Callable, Mapping

from scoring.rules import Banking

BANKER = "banker"       # the banker's party in an adjustment where a player banks, named as its hand is
Money = Callable[[Decimal], str]

# Money still to move (said of a round), money that moved, money a supervisor forgave.
DUE, PAID, WAIVED = "due", "paid", "waived"
_VERBS = {DUE: ("to collect", "to pay"), PAID: ("collected", "paid"), WAIVED: ("not collected", "not paid")}


def party_order(party: str) -> tuple:
    """Seats in their order (2 before 10), the banker after them."""
    return (party == BANKER, len(party), party)


def party_name(party, *, title: bool = False) -> str:
    """A party in a sentence ("seat 2", "the banker"), or as a row or the screen names it
    (``title``: "Seat 2", "Banker")."""
    if party == BANKER:
        return "Banker" if title else "the banker"
    return f"{'Seat' if title else 'seat'} {party}"


def counterpart(banking) -> str:
    """The other side of every seat's money: the house, or the banker where a player banks."""
    return "the banker" if str(getattr(banking, "value", banking)) == Banking.PLAYER.value else "the house"


def _signed(amount) -> Decimal:
    return Decimal(str(amount))


def instruction(party: str, amount, money: Money, *, title: bool = False, shout: bool = False) -> str:
    """What the dealer does for one party: "pay 97.50 USD to seat 2", "collect 95.00 USD from
    seat 1"; the party as the screen names it (``title``: "Seat 2"), the verb as the screen
    shouts it (``shout``: "PAY")."""
    value = _signed(amount)
    verb = "pay" if value > 0 else "collect"
    return (f"{verb.upper() if shout else verb} {money(abs(value))} {'to' if value > 0 else 'from'} "
            f"{party_name(party, title=title)}")


def moved(party: str, amount, money: Money, how: str = PAID) -> str:
    """An amount chips move by for one party, told of a round: ``how`` is DUE (still to move:
    "to pay 97.50 to seat 2"), PAID (moved at the table: "collected 95.00 from seat 1") or
    WAIVED (forgiven by a supervisor: "not collected 95.00 from seat 1")."""
    value = _signed(amount)
    collect, pay = _VERBS[how]
    return f"{pay} {money(value)} to {party_name(party)}" if value > 0 else \
        f"{collect} {money(-value)} from {party_name(party)}"


def moves(amounts: Mapping[str, object], money: Money, how: str = PAID, *, order=None) -> str:
    """:func:`moved` for every party with an amount, in ``order`` (a sort key; seats in order)."""
    return "; ".join(moved(party, amounts[party], money, how) for party in sorted(amounts, key=order or party_order)
                     if _signed(amounts[party]))


def owed(party: str, difference, money: Money, other: str = "the house") -> str:
    """A difference as a debt: negative, the seat owes ``other`` (the house, or the banker where
    a player banks); for the banker (a player banking), its side against the players'."""
    value = _signed(difference)
    if not value:
        return "no difference"
    if party == BANKER:
        return (f"the banker owes the players {money(-value)}" if value < 0 else
                f"the players owe the banker {money(value)}")
    if value < 0:
        return f"{party_name(party)} owes {other} {money(-value)}"
    return f"{other} owes {party_name(party)} {money(value)}"


def adjustment_words(amounts: Mapping[str, str], banking: str | None, money: Money, *,
                     screen: bool = False, waived: bool = False) -> str:
    """Who pays whom for an adjustment's amounts (``outstanding``, or a record's ``difference``),
    in one line: the dealer's screen (``screen``: "PAY 97.50 USD to Seat 2"), the shift report
    and its console ("pay 97.50 USD to seat 2").

    Where a player banks, each seat's money is the banker's: "Banker pays 500.00 USD to Seat
    1", "Seat 2 pays 100.00 USD to the banker" (QA49 supervisor M4: "PAY 500.00" beside a house
    result of 0.00 read as the house's to pay).  The banker's own total is said only where the
    seats named do not make it (a commission, or a side already recorded), and a seat whose
    banker's side is recorded already is the dealer's to pay or collect.  ``waived``: what a
    waiver leaves unmoved ("the banker does not pay ...")."""
    parties = sorted(amounts.items(), key=lambda item: party_order(item[0]))
    seats = [(s, _signed(d)) for s, d in parties if s != BANKER and _signed(d)]
    own = _signed(amounts[BANKER]) if BANKER in amounts else None
    player = banking == Banking.PLAYER.value and own is not None
    banker = party_name(BANKER, title=screen)
    words = []
    for name, d in seats:
        m, seat = money(abs(d)), party_name(name, title=screen)
        if player and d > 0:
            words.append(f"{banker} {'does not pay' if waived else 'pays'} {m} to {seat}")
        elif player:
            words.append(f"{seat} {'does not pay' if waived else 'pays'} {m} to the banker")
        elif waived and banking == Banking.PLAYER.value:      # the banker's side waived apart, or not at all
            words.append(f"{seat} {'is not paid' if d > 0 else 'does not pay'} {m}")
        elif waived:
            words.append(f"the house does not {instruction(name, d, money, title=screen)}")
        else:
            words.append(instruction(name, d, money, title=screen, shout=screen))
    if own and own != -sum((d for _, d in seats), Decimal(0)):
        total = " in all" if seats else ""
        if own < 0:
            words.append(f"{banker} {'does not pay' if waived else 'pays'} {money(-own)}{total}")
        else:
            words.append(f"{banker} {'is not paid' if waived else 'is paid'} {money(own)}{total}")
    return " · ".join(words) if screen else "; ".join(words)


def party_words(party: str, amount: str, banking: str | None, money: Money) -> str:
    """One party's side of an adjustment, for the dealer to tick once its chips have moved:
    "PAY 97.50 USD to Seat 2" where the house banks; where a player does, each side alone
    ("Seat 1 is paid 500.00 USD", "Banker pays 500.00 USD"), since "Banker pays 500.00 USD to
    Seat 1" beside the banker's own tick would read as two payments."""
    d = _signed(amount)
    if banking == Banking.PLAYER.value:
        return f"{party_name(party, title=True)} {'is paid' if d > 0 else 'pays'} {money(abs(d))}"
    return instruction(party, d, money, title=True, shout=True)


def standing(adjustment: Mapping | None, money: Money) -> list[dict]:
    """Per party, where its chips stand against the round as corrected (QA49 supervisor L4: the
    round page's "paid at the table" was Settle's line, though 97.50 had been paid since, and
    the dealer's seat box, which counts it, said otherwise): ``settled``, its net at Settle;
    ``since``, what each adjustment record paid, collected or waived for it, in words;
    ``held``, its net at the table now (the seat box's "paid"), None where a correction from
    before adjustments were recorded leaves it unknown; ``now``, as corrected; ``owed``, what
    is still to move, signed, and ``owes``, that as a debt ("the house owes seat 2 97.50",
    "nothing").  Amounts are the log's text, signed from the party's side."""
    if not adjustment or "settled" not in adjustment:
        return []       # a view folded before these figures were kept
    other = counterpart(adjustment.get("banking"))
    settled, now, held = adjustment["settled"], adjustment["now"], adjustment.get("held") or {}
    outstanding, unknown = adjustment.get("outstanding") or {}, adjustment.get("not_recorded") or {}
    rows = []
    for party in sorted(set(settled) | set(now), key=party_order):
        since = [moved(party, r["difference"][party], money, WAIVED if r.get("action") == WAIVED else PAID)
                 + (" (waived)" if r.get("action") == WAIVED else "")
                 for r in adjustment.get("records") or () if _signed((r.get("difference") or {}).get(party, 0))]
        due = outstanding.get(party, "0")
        # a party missing from one side had no line there: nothing paid, as kiosk.rounds.adjustment counts it
        rows.append({"party": party, "name": party_name(party, title=True), "settled": settled.get(party, "0"),
                     "since": "; ".join(since) or "nothing", "held": None if party in unknown else held.get(party, "0"),
                     "now": now.get(party, "0"), "owed": due, "owes": owed(party, due, money, other) if _signed(due)
                     else "nothing"})
    return rows


def owed_words(owed_now: Mapping[str, str], money: Money) -> str:
    """What a report's ``adjustments_owed`` totals, in words: the house's to pay and to collect,
    and apart from them what a player-banker still pays or is paid (that player's money, not
    the house's float, though the dealer may have fronted a seat its side)."""
    said = [f"to {what} {money(owed_now[what])}" for what in ("pay", "collect") if _signed(owed_now[what])]
    banker = [f"{verb} {money(owed_now[key])}" for key, verb in (("banker_pays", "pays"), ("banker_is_paid", "is paid"))
              if _signed(owed_now.get(key) or 0)]
    if banker:
        said.append(f"the banker, a player, {' and '.join(banker)}")
    return ", ".join(said)


def moved_words(moved_now: Mapping[str, str], money: Money) -> str:
    """A report's ``adjustments_moved`` in words: what the records of the period paid out,
    collected and waived (a waived collection is chips the books count and the tray never got)."""
    return (f"paid {money(moved_now['paid'])}, collected {money(moved_now['collected'])}; waived: "
            f"{money(moved_now['waived_pay'])} not paid, {money(moved_now['waived_collect'])} not collected")


def after_close(closed: str) -> str:
    """A report's note on an adjustment record stamped after its period ended at ``closed`` (a
    time as the reader reads it; QA49 supervisor L2: a reprint listed a payment made after the
    shift was signed, and nothing said why the reprint differed from the signed copy)."""
    return f"recorded after this period closed at {closed}"
