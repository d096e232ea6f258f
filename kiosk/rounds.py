"""Rounds as the audit log tells them: one fold from records to a round summary.

The dealer's history strip, the surveillance round list and the round detail page all
read rounds through :func:`fold_round`, from the tamper-evident log itself, so what
surveillance sees is what was logged, not a second copy that could disagree.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from typing import Iterable

from kiosk.adjustment_words import BANKER, WAIVED, party_order
from kiosk.audit import AuditLog, AuditRecord, AuditType, DamagedRecord
from scoring.rules import Banking, PresetError, load_preset
from scoring.settle import house_net, money_text
from vision.round import HAND_SIZE

# Records that describe a round as a whole (cards one by one are folded only for
# rounds that never reached ``round_complete``).
ROUND_TYPES = (
    AuditType.ROUND_START, AuditType.BETS_PLACED, AuditType.CARD_ACCEPTED, AuditType.CARD_REMOVED,
    AuditType.CARD_CORRECTED, AuditType.ROUND_COMPLETE, AuditType.ROUND_SETTLED,
    AuditType.SETTLEMENT_LINE, AuditType.SETTLEMENT_CORRECTED, AuditType.ROUND_CLEARED,
    AuditType.ROUND_VOID, AuditType.ROUND_INTERRUPTED, AuditType.ALERT, AuditType.RECORDING_CHANGED,
    AuditType.ADJUSTMENT_SETTLED,
)
# What a round's books need (status, end, settlement, lines, corrections, alerts): all but the
# per-card records, 30 of a six-seat round's 37.  A summary folded from these alone lacks the
# hands of a round that never completed, so only the shift report reads rounds this way.
BOOK_TYPES = tuple(t for t in ROUND_TYPES
                   if t not in (AuditType.CARD_ACCEPTED, AuditType.CARD_REMOVED, AuditType.RECORDING_CHANGED))
# Who acts on a round that is not a person: the camera's reading, the kiosk itself, the demo.
MACHINE_ACTORS = frozenset({"vision", "system", "camera", "demo"})
TERMINAL_TYPES = (AuditType.ROUND_SETTLED, AuditType.ROUND_VOID, AuditType.ROUND_INTERRUPTED,
                  AuditType.ROUND_CLEARED)


FINAL_TYPES = (AuditType.ROUND_SETTLED, AuditType.ROUND_VOID, AuditType.ROUND_INTERRUPTED)
# What a card correction did.  "confirmed" (old == new: a person vouched for the camera's
# reading) changes nothing, so it makes no round "corrected" and is no correction in the books.
CHANGES = ("replaced", "added", "removed")
ROUND_DIGITS = 19        # SQLite's largest integer has 19 digits; no round is numbered past it


def round_number(text: str) -> int | None:
    """A round's number as a person typed it (the Round # box, a screen's request), or None
    where it is none: ``str.isdigit`` alone passes "²", which ``int`` refuses, and ``int``
    refuses over 4,300 digits, each a 500 where a plain "no such round" was due."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= ROUND_DIGITS else None


def is_change(correction: dict) -> bool:
    """Whether a ``card_corrected`` record's data changed a card (replaced, added or removed),
    rather than confirm one.  Logs written before corrections named their action hold
    replacements only: a change when old and new differ."""
    action = correction.get("action")
    if action is None:
        return correction.get("old") != correction.get("new")
    return action in CHANGES


def _net(line: dict | None) -> Decimal:
    return Decimal(line["net"]) if line and line.get("net") is not None else Decimal(0)


def _seat_changes(old_lines: dict[str, dict], new_lines: dict[str, dict]) -> dict[str, dict]:
    """Per seat, one settlement against another: outcome and net before and after, and the
    difference (after - before, from the player's side: negative, the seat owes the house)."""
    changes = {}
    for seat in sorted(set(old_lines) | set(new_lines), key=lambda s: (len(s), s)):
        old, new = old_lines.get(seat), new_lines.get(seat)
        changes[seat] = {"old_outcome": old.get("outcome") if old else None,
                         "old_net": old.get("net") if old else None,
                         "new_outcome": new.get("outcome") if new else None,
                         "new_net": new.get("net") if new else None,
                         "difference": money_text(_net(new) - _net(old))}
    return changes


def ending(records: list[AuditRecord]) -> AuditRecord | None:
    """The record that ended a round (its records in seq order): its last settlement, void or
    interruption, else its first clear (a round cleared and then settled ended when it was
    settled).  :func:`fold_round` dates the end by it, and the shift report windows by it."""
    final = [r for r in records if r.type in FINAL_TYPES]
    if final:
        return final[-1]
    return next((r for r in records if r.type == AuditType.ROUND_CLEARED), None)


def _unscore(summary: dict, hands: dict[str, list], seats) -> None:
    """Forget the result of a seat whose hand is no longer five cards (QA48 dispute L3: a sixth
    card kept the "Bull 5" its first five made, on the round page and in every export).  The
    results are replaced, not changed in place: they are the round record's own data."""
    stale = {seat for seat in seats if seat and len(hands.get(seat, ())) != HAND_SIZE}
    if stale & set(summary["results"]):
        summary["results"] = {seat: r for seat, r in summary["results"].items() if seat not in stale}


# What a record whose payload cannot be read still tells by its kind alone (a column, read
# whatever became of the payload): how the round ended.  Folded with no data, so that a round
# whose settlement was damaged still counts as settled, with its amounts unknown.
ENDED_BY_KIND = (AuditType.ROUND_COMPLETE, AuditType.ROUND_SETTLED, AuditType.ROUND_VOID,
                 AuditType.ROUND_INTERRUPTED, AuditType.ROUND_CLEARED)


def fold_round(records: Iterable[AuditRecord]) -> dict:
    """Summarise one round's records (any order; sorted by seq here).

    A record whose payload cannot be read (:class:`kiosk.audit.DamagedRecord`) is listed in
    ``damaged`` (``{seq, type, problem}``) and folded by its kind alone: the round still ends
    as its records say, but a damaged settlement, or a damaged correction of one, leaves
    ``settlement`` unknown (None), so no figure is read off what the log no longer holds.  A
    reader that must not show such a round as sound asks ``damaged``; none of them crashes on
    it (QA51 operator H1: one such record in the last ten rounds kept the kiosk from starting)."""
    rows = sorted(records, key=lambda r: r.seq)
    summary: dict = {
        "round": rows[0].round_no if rows else None, "table_id": rows[0].table_id if rows else "",
        "started": None, "ended": None, "status": "open", "hands": {}, "results": {}, "bets": {},
        "settlement": None, "lines": {}, "paid_settlement": None, "paid_lines": {}, "paid_difference": {},
        "corrections": [], "settlement_corrections": [], "adjustments": [],
        "void": None, "interrupted": None, "alerts": [], "recording_changed": [], "settled_by": None,
        "damaged": [],
        "first_seq": rows[0].seq if rows else None,
        "last_seq": rows[-1].seq if rows else None,
    }
    hands: dict[str, list[str]] = defaultdict(list)
    staff: set[str] = set()
    for record in rows:
        kind = record.type
        try:
            data = record.data
        except DamagedRecord as exc:
            summary["damaged"].append({"seq": record.seq, "type": kind, "problem": exc.why})
            if kind in (AuditType.ROUND_SETTLED, AuditType.SETTLEMENT_CORRECTED):
                summary["settlement"] = None
            if kind not in ENDED_BY_KIND:
                continue
            data = {}
        if record.actor not in MACHINE_ACTORS:
            staff.add(record.actor)
        if isinstance(data.get("approved_by"), str):
            staff.add(data["approved_by"])
        if kind == AuditType.ROUND_START:
            summary["started"] = record.ts
            summary["bets"] = data.get("bets", summary["bets"])
        elif kind == AuditType.BETS_PLACED:
            summary["bets"] = data.get("bets", summary["bets"])
        elif kind == AuditType.CARD_ACCEPTED:
            moved_from = data.get("moved_from")
            if moved_from and data["card"] in hands.get(moved_from, []):
                hands[moved_from].remove(data["card"])
            hands[data["seat"]].append(data["card"])
            _unscore(summary, hands, (data["seat"], moved_from))
        elif kind == AuditType.CARD_REMOVED:
            # A card taken off the table stays in the round's hand (the round machine
            # keeps it too): money is settled on what was dealt, not on what is visible.
            pass
        elif kind == AuditType.CARD_CORRECTED:
            seat_cards = hands[data["seat"]]
            old, new, action = data.get("old"), data.get("new"), data.get("action")
            if action == "removed" and old in seat_cards:
                seat_cards.remove(old)
            elif action in ("replaced", None) and old in seat_cards and new:
                seat_cards[seat_cards.index(old)] = new
            elif action == "added" and new:
                seat_cards.append(new)
            _unscore(summary, hands, (data["seat"],))
            summary["corrections"].append({"ts": record.ts, "actor": record.actor, **data})
        elif kind == AuditType.ROUND_COMPLETE:
            summary["status"] = "complete" if summary["status"] == "open" else summary["status"]
            for seat, cards in data.get("hands", {}).items():
                hands[seat] = list(cards)
            summary["results"] = data.get("results", {})
        elif kind == AuditType.ROUND_SETTLED:
            summary["status"] = "settled"
            summary["settled_by"] = record.actor
            summary["settlement"] = data.get("settlement")
            summary["bets"] = data.get("bets", summary["bets"])
            for seat, cards in data.get("hands", {}).items():
                hands[seat] = list(cards)
            summary["results"] = data.get("results", summary["results"])
        elif kind == AuditType.SETTLEMENT_LINE:
            summary["lines"][data["seat"]] = data
        elif kind == AuditType.SETTLEMENT_CORRECTED:
            old_lines = {line["seat"]: line for line in data.get("old_lines", [])} or dict(summary["lines"])
            if not summary["settlement_corrections"]:
                # The first settlement is what was paid at the table: a correction recomputes
                # the books, it moves no chips (the dealer pays or collects the difference).
                summary["paid_lines"] = dict(summary["lines"]) or old_lines
                summary["paid_settlement"] = summary["settlement"] or data.get("old")
            summary["settlement"] = data.get("new")
            summary["results"] = data.get("results", summary["results"])
            summary["lines"] = {line["seat"]: line for line in data.get("new_lines", [])} or summary["lines"]
            summary["settlement_corrections"].append({
                "ts": record.ts, "actor": record.actor, "approved_by": data.get("approved_by"),
                "requested_by": data.get("requested_by"), "reason": data.get("reason"),
                "difference": data.get("difference", {}), "seats": _seat_changes(old_lines, summary["lines"]),
                "seq": record.seq, "adjustment_tracked": bool(data.get("adjustment_tracked")),
                # the banker's side, a party to the difference where a player banks (adjustment)
                "old_banker_net": data["old"].get("banker_net") if isinstance(data.get("old"), dict) else None})
        elif kind == AuditType.ADJUSTMENT_SETTLED:
            summary["adjustments"].append({"seq": record.seq, "ts": record.ts, "actor": record.actor, **data})
        elif kind == AuditType.ROUND_VOID:
            summary["status"] = "void"
            summary["void"] = {"ts": record.ts, "actor": record.actor, **data}
        elif kind == AuditType.ROUND_INTERRUPTED:
            summary["status"] = "interrupted"
            summary["interrupted"] = {"ts": record.ts, **data}
        elif kind == AuditType.ROUND_CLEARED:
            if summary["status"] in ("open", "complete"):
                summary["status"] = "cleared"
        elif kind == AuditType.ALERT:
            summary["alerts"].append({"ts": record.ts, **data})
        elif kind == AuditType.RECORDING_CHANGED:
            # The kiosk's own seal check found the round's video differing from its seal: the
            # evidence a dispute would rest on, so the list shows it beside the alerts.
            summary["recording_changed"].append({"ts": record.ts, "folder": data.get("folder"),
                                                 "changed_files": data.get("changed_files")})
    summary["hands"] = {seat: cards for seat, cards in hands.items() if cards}
    if summary["settlement_corrections"]:
        # As corrected minus paid at the table, per seat, from the player's side: what the
        # dealer was told to pay (positive) or collect (negative) over all the corrections.
        summary["paid_difference"] = {seat: change["difference"] for seat, change
                                      in _seat_changes(summary["paid_lines"], summary["lines"]).items()}
    else:
        summary["paid_settlement"], summary["paid_lines"] = summary["settlement"], dict(summary["lines"])
    summary["adjustment"] = adjustment(summary)
    end = ending(rows)
    summary["ended"] = end.ts if end is not None else None
    summary["ended_seq"] = end.seq if end is not None else None
    if end is not None and end.type == AuditType.ROUND_INTERRUPTED:
        # Cut off when its last record was written: the interruption is logged at the next
        # start, by a clock that may not be set yet after a power cut (ended before it began).
        played = [r for r in rows if r.seq < end.seq and r.type != AuditType.ROUND_INTERRUPTED]
        summary["ended"] = played[-1].ts if played else end.ts
    nets = [Decimal(line["net"]) for line in summary["lines"].values() if "net" in line]
    # Exact, as the lines are: a 3-decimal currency's 0.978 is not 0.98 (how many places a
    # person reads is the screen's and the page's to write, to the table's money unit).
    summary["players_net"] = money_text(sum(nets, Decimal(0))) if nets else None
    summary["staff"] = sorted(staff)
    # A card changed (a confirmation changes nothing), or a settlement recomputed.
    summary["corrected"] = any(is_change(c) for c in summary["corrections"])
    summary["confirmed"] = sum(not is_change(c) for c in summary["corrections"])
    summary["voided"] = summary["status"] == "void"
    return summary


def adjustment(summary: dict) -> dict | None:
    """Where the money a settlement correction moved stands (None: no correction after Settle).

    A correction recomputes the books; the chips move only when the dealer pays or collects
    the difference, which an ``adjustment_settled`` record says (``paid``), or a supervisor
    waives it (``waived``).  Per party, signed from that party's side as ``difference`` is
    (positive: the party is paid):

    * the parties: the seats, and where a player banks (``banking`` "player") the banker too,
      as ``"banker"``, whose net is the round's ``banker_net``.  The money a seat wins or loses
      there is that player's, not the house's (QA49 review H1: "PAY 250.00 to seat 2" alone sent
      a dealer to the house's float, and one tap closed a round whose banker never paid);
    * ``settled``: the party's net at Settle; ``now``: as corrected;
    * ``held``: what the party's chips stand at: the line before the first tracked correction
      (Settle's, as older kiosks corrected it) plus every difference recorded *paid*;
    * owed: the line as corrected less ``held``, less what a waiver forgave, but only while the
      two point the same way and never past zero.  A waiver moves no chips: counted as paid
      (QA49 supervisor H2), a collection waived and then corrected back asked the dealer to
      pay the player money never collected; a correction deeper than the waived one owes
      only the part beyond it.

    A correction logged by a kiosk from before these records (no ``adjustment_tracked``)
    cannot say whether its difference was paid: that part is ``not_recorded``, neither owed
    (a shift report would list years-old rounds nobody can settle now) nor paid.
    ``status``: outstanding, settled, not_recorded or none (the corrections moved no money);
    ``basis``: the last correction's seq, which a screen sends back so that it confirms the
    amounts it showed."""
    corrections = summary["settlement_corrections"]
    if not corrections:
        return None
    settlement = summary.get("settlement") if isinstance(summary.get("settlement"), dict) else {}
    banking = banking_of(settlement)
    tracked = [c for c in corrections if c.get("adjustment_tracked")]
    paid = {seat: _net(line) for seat, line in summary["paid_lines"].items()}
    now = {seat: _net(line) for seat, line in summary["lines"].items()}
    # what stood before the first tracked correction: Settle's lines, as corrected by older kiosks
    base = {seat: Decimal(c["old_net"]) for seat, c in tracked[0]["seats"].items()
            if c.get("old_net") is not None} if tracked else now
    if banking is Banking.PLAYER:
        banker = _banker_nets(summary, tracked)
        if banker is not None:
            paid[BANKER], now[BANKER], base[BANKER] = banker
    held, waived = dict(base), {}
    for record in summary["adjustments"]:
        into = waived if record.get("action") == WAIVED else held
        for seat, amount in (record.get("difference") or {}).items():
            into[seat] = into.get(seat, Decimal(0)) + Decimal(amount)
    owed = {}
    for seat in set(now) | set(held):
        due = now.get(seat, Decimal(0)) - held.get(seat, Decimal(0))
        forgiven = waived.get(seat, Decimal(0))
        if due and forgiven and (due > 0) == (forgiven > 0):
            due = due - min(abs(due), abs(forgiven)) * (1 if due > 0 else -1)
        owed[seat] = due
    untold = {seat: base.get(seat, Decimal(0)) - paid.get(seat, Decimal(0)) for seat in set(base) | set(paid)}

    def signed(amounts: dict[str, Decimal], keep_zero: bool = False) -> dict[str, str]:
        return {seat: money_text(v) for seat, v in sorted(amounts.items(), key=lambda i: party_order(i[0]))
                if v or keep_zero}

    outstanding, not_recorded = signed(owed), signed(untold)
    status = ("outstanding" if outstanding else "settled" if summary["adjustments"]
              else "not_recorded" if not_recorded else "none")
    return {"status": status, "basis": corrections[-1]["seq"] if tracked else None, "outstanding": outstanding,
            "not_recorded": not_recorded, "held": signed(held, keep_zero=True), "records": list(summary["adjustments"]),
            "banking": banking.value if banking is not None else None,
            # Settle's line and the line as corrected, beside ``held``: where each party's chips
            # stand is told from these (kiosk.adjustment_words.standing), as the seat box tells it
            "settled": signed(paid, keep_zero=True), "now": signed(now, keep_zero=True)}


def _banker_nets(summary: dict, tracked: list[dict]) -> tuple[Decimal, Decimal, Decimal] | None:
    """The banker's net as paid at Settle, as corrected now, and before the first tracked
    correction (None where a settlement does not say it)."""
    try:
        now = Decimal(summary["settlement"]["banker_net"])
        paid = Decimal((summary.get("paid_settlement") or summary["settlement"])["banker_net"])
        first = tracked[0].get("old_banker_net") if tracked else None
        return paid, now, Decimal(first) if first is not None else (paid if tracked else now)
    except (KeyError, TypeError, ArithmeticError, ValueError):
        return None


def round_numbers(log: AuditLog, *, table_id: str | None = None, since: str | None = None,
                  until: str | None = None, limit: int = 50, before: int | None = None) -> list[int]:
    """Round numbers that started or ended in a time range (and below ``before``), newest
    first.  Ended too: the shift report counts a round in the period it ended in, and a round
    dealt across midnight must be found under either day, or the round list and the report
    of one period name different rounds.  Ended as the report dates it (:func:`ending`): a
    round settled at 23:59:50 and cleared at 00:00:05 ended the day before the clear."""
    if not (since or until):
        return log.round_numbers(table_id=table_id, limit=limit, before=before)
    found: list[int] = []
    while len(found) < limit:
        # A round with a clear (or an earlier settlement) in the range may have ended outside it,
        # so candidates are read a page at a time until enough of them started or ended there.
        page = log.round_numbers(table_id=table_id, since=since, until=until, limit=limit, before=before,
                                 types=(AuditType.ROUND_START, *TERMINAL_TYPES))
        found += [n for n in page if in_period(log, n, table_id, since, until)]
        if len(page) < limit:
            break
        before = page[-1]
    return found[:limit]


def in_period(log: AuditLog, round_no: int, table_id: str | None, since: str | None, until: str | None) -> bool:
    """Whether the round started or ended (:func:`ending`) between ``since`` and ``until``."""
    records = log.records(round_no=round_no, table_id=table_id, types=(AuditType.ROUND_START, *TERMINAL_TYPES))
    end = ending(records)
    stamps = [r.ts for r in records if r.type == AuditType.ROUND_START] + ([end.ts] if end is not None else [])
    return any((since is None or ts >= since) and (until is None or ts <= until) for ts in stamps)


def load_round(log: AuditLog, round_no: int, *, table_id: str | None = None,
               types: tuple[str, ...] = ROUND_TYPES) -> dict | None:
    records = log.records(round_no=round_no, table_id=table_id, types=types)
    return fold_round(records) if records else None


def load_listed_round(log: AuditLog, round_no: int, *, table_id: str | None = None) -> dict | None:
    """:func:`load_round` with what the surveillance list must flag of the round beside its play,
    from the round's every record in one query (QA52): ``damaged`` names each damaged record
    under the round, a seal, hold or case note as well as a round record, as its page does; and
    ``recording_failed`` holds what the recorder logged the round's recording lost (``{seq, ts,
    error, stopped, folder}``; ``error`` None where that record is damaged: its kind alone says
    the recording failed).  The fold reads the round records only: a case note's author is no
    staff of the round, and the dealer's history strip folds as before."""
    records = log.records(round_no=round_no, table_id=table_id)
    played = [r for r in records if r.type in ROUND_TYPES]
    if not played:
        return None
    summary = fold_round(played)
    summary["recording_failed"] = []
    for record in records:
        if record.type in ROUND_TYPES:
            continue
        data, why = record.read()
        if why:
            summary["damaged"].append({"seq": record.seq, "type": record.type, "problem": why})
        if record.type == AuditType.RECORDING_FAILED:
            summary["recording_failed"].append({"error": None, "stopped": None, "folder": None, **(data or {}),
                                                "seq": record.seq, "ts": record.ts})
    summary["damaged"].sort(key=lambda d: d["seq"])
    return summary


# What a supervisor approves on a round: a card changed, a settlement recomputed, a void.
APPROVAL_TYPES = (AuditType.CARD_CORRECTED, AuditType.SETTLEMENT_CORRECTED, AuditType.ROUND_VOID)


def approvals(summary: dict, approver: str, *, since: str | None = None, until: str | None = None) -> list[dict]:
    """The corrections and void of a round that ``approver`` (a username, any case) approved
    between ``since`` and ``until``; a confirmed card (nothing changed) is no correction."""
    who = approver.strip().casefold()
    done = ([c for c in summary.get("corrections", ()) if is_change(c)]
            + list(summary.get("settlement_corrections", ())) + ([summary["void"]] if summary.get("void") else []))
    return [d for d in done if isinstance(d.get("approved_by"), str) and d["approved_by"].casefold() == who
            and (since is None or d["ts"] >= since) and (until is None or d["ts"] <= until)]


def seen_cards(summary: dict, seat: str | None = None) -> set[str]:
    """The cards a round had on ``seat`` (any seat if None) at any time: as dealt or corrected,
    and each card a correction took off or put on.  "Rounds where KH was on seat 3" is asked
    of a disputed card, which a correction may have replaced since."""
    found = {code for s, cards in summary.get("hands", {}).items() if seat is None or s == seat for code in cards}
    for correction in summary.get("corrections", ()):
        if seat is None or correction.get("seat") == seat:
            found.update(code for code in (correction.get("old"), correction.get("new")) if isinstance(code, str))
    return found


def matches(summary: dict, *, seat: str | None = None, category: str | None = None,
            corrected: bool = False, voided: bool = False, alerts: bool = False, staff: str | None = None,
            changed: bool = False, approved_by: str | None = None, since: str | None = None,
            until: str | None = None, card: str | None = None, alert: str | None = None,
            damaged: bool = False, recording_failed: bool = False) -> bool:
    """The surveillance filters; each one narrows, none set means every round.  ``staff``: a
    person who placed bets, settled, corrected, approved or voided in the round (what an
    investigation of one dealer or supervisor starts from), in any case as usernames are typed.
    ``approved_by``: a supervisor who approved a correction or void of the round, approved
    between ``since`` and ``until``.  ``card`` (a card code) and ``alert`` (an alert's code)
    are on ``seat`` where one is given, as ``category`` is.  ``damaged`` and ``recording_failed``:
    the rounds a dispute can no longer be settled from the log and the recording alone; the
    latter asks :func:`load_listed_round`'s summary."""
    if staff and staff.strip().casefold() not in {name.casefold() for name in summary.get("staff", ())}:
        return False
    if approved_by and not approvals(summary, approved_by, since=since, until=until):
        return False
    if seat and seat not in summary["hands"] and seat not in summary["bets"]:
        return False
    if category:
        seats = [seat] if seat else list(summary["results"])
        if not any(summary["results"].get(s, {}).get("category") == category for s in seats):
            return False
    if card and card not in seen_cards(summary, seat):
        return False
    if alert and not any(a.get("code") == alert and (not seat or a.get("seat") == seat) for a in summary["alerts"]):
        return False
    if corrected and not (summary["corrected"] or summary["settlement_corrections"]):
        return False
    if voided and not summary["voided"]:
        return False
    if alerts and not summary["alerts"]:
        return False
    if changed and not summary["recording_changed"]:
        return False
    if damaged and not summary["damaged"]:
        return False
    if recording_failed and not summary.get("recording_failed"):
        return False
    return True


def banking_of(settlement: dict) -> Banking | None:
    """Who banked a settled round: settlements say so; a log written before they did names
    its preset, which tells it when the preset is one of the built-in ones."""
    if settlement.get("banking"):
        return Banking(settlement["banking"])
    try:
        return load_preset(settlement.get("preset", "")).banking
    except (PresetError, OSError, ValueError):
        return None


def house_net_of(settlement: dict | None) -> str | None:
    """The house's result of a logged settlement (:func:`scoring.settle.house_net`), worked
    out from what the log holds rather than stored beside it; None if it cannot be."""
    try:
        banking = banking_of(settlement) if settlement else None
        if banking is None:
            return None
        return money_text(house_net(banking, Decimal(settlement["banker_net"]),
                                    Decimal(settlement["total_commission"])))
    except (KeyError, TypeError, ValueError, ArithmeticError):
        return None


def house_net_at_table(summary: dict) -> str | None:
    """The house's result as the chips stand now: Settle's, less what the adjustment records
    paid out since and plus what they collected (QA49 supervisor L4: the round page's "house
    net as paid at the table" stayed Settle's -425.00 after the dealer paid 97.50 more).  Where
    a player banks, a seat paid and its banker's side collected leave the house only the
    commission's change.  None where it cannot be said: Settle's house net is not known, or a
    correction from before adjustments were recorded left a difference nobody recorded."""
    at_settle = house_net_of(summary.get("paid_settlement"))
    adjustment = summary.get("adjustment") or {}
    if at_settle is None or adjustment.get("not_recorded"):
        return None
    try:
        moved = sum((Decimal(d) for r in summary.get("adjustments", ()) if r.get("action") != WAIVED
                     for d in (r.get("difference") or {}).values()), Decimal(0))
    except (TypeError, ValueError, AttributeError, ArithmeticError):
        return None
    return money_text(Decimal(at_settle) - moved)


# How many camera records of all tables to look back through for one table's last turn.
LOOK_BACK = 200
# Each camera fault the log can show, the record that starts it and the one that ends it.
CAMERA_FAULTS = {
    AuditType.CAMERA_OFFLINE: AuditType.CAMERA_ONLINE,
    AuditType.CAMERA_MIRRORED: AuditType.CAMERA_MIRROR_CLEARED,
    AuditType.CAMERA_MOVED: AuditType.CAMERA_MOVE_CLEARED,
}
CAMERA_TYPES = (*CAMERA_FAULTS, *CAMERA_FAULTS.values())


def camera_during(log: AuditLog, first_seq: int | None, ended_seq: int | None, *,
                  table_id: str | None = None) -> list[AuditRecord]:
    """The camera records that bear on a round whose records run from ``first_seq`` and that
    ended at ``ended_seq`` (None: not yet): each fault still in force when it started, and
    every camera turn until it ended.

    A disputed round is judged on what the camera saw, and a camera knocked or covered
    five minutes before the deal is logged then, not under the round.  A kiosk start ends
    every fault (the watches start afresh and log again what is still wrong).  Placed by
    the log's order, not its clock: a clock stepped back by NTP during the round put the
    camera's records "before" a round they happened in, and the fault vanished from it."""
    if first_seq is None:
        return []
    # Camera records are rare: asked by type (its index), never by table, which SQLite would
    # answer from the (table_id, round_no) index by reading every record of the table
    # (bench/bench_audit.py at 296,000 records: 0.24 s a round, against 0.04 ms).
    def ours(records: list[AuditRecord]) -> list[AuditRecord]:
        return [r for r in records if table_id is None or r.table_id == table_id]

    in_force = []
    for fault, mended in CAMERA_FAULTS.items():
        last = ours(log.records(types=(fault, mended, AuditType.KIOSK_START), upto_seq=first_seq - 1,
                                newest_first=True, limit=LOOK_BACK))
        if last and last[0].type == fault:
            in_force.append(last[0])
    turns = ours(log.records(types=CAMERA_TYPES, after_seq=first_seq - 1, upto_seq=ended_seq))
    return sorted(in_force, key=lambda r: r.seq) + turns
