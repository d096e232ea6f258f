"""A table's books for a period — a shift, a day: what a pit supervisor signs at shift
close and surveillance reconciles against the chips counted at the table.

Every figure comes from the audit log's round summaries (:func:`kiosk.rounds.fold_round`),
so the report can only say what the tamper-evident log says.  A round belongs to the
period in which it ended (settled, voided, interrupted or cleared): that is when its money
moved; a round still on the table is in no period yet.  A settled round counts with its
settlement as last corrected, and the report names how many such corrections it holds: a
supervisor's correction made after a shift closed changes that shift's figures, and whoever
compares two printouts of one shift must see why they differ.

A correction after Settle moves no chips: the dealer pays or collects its difference later,
and says so on the screen (``adjustment_settled``), or a supervisor waives it.  Until then the
books count money the table has not moved, so the report lists each corrected round's
adjustment — outstanding with its amounts, paid or waived by whom — and totals what is still
owed (the house's apart from what a player-banker owes or is owed) and what the period's
records paid, collected and waived: the figures a supervisor reconciles the chip tray with.
Besides its own rounds, a period lists the adjustments of earlier rounds that were
corrected, paid or waived in it (chips that moved in this shift) or that are still owed: an
adjustment is not forgotten because its round is another shift's.  A round corrected by a
kiosk from before adjustments were recorded is listed as "not recorded": its log cannot say
whether the difference was paid, and counting such rounds as owed would fill every report of
an upgraded table with rounds nobody can settle now.

"Only what the log says" holds only while the log is intact, and the report is signed at
shift close, long before anyone runs ``niuniu audit verify``.  So each record it reads is
checked as it is read — its own hash, and its links to the records on either side — and
a round with a record that fails is named (``broken``): a settlement edited in the
database, with or without its hash recomputed, must not be totalled as if genuine.  That
costs one more indexed query a round, not a walk of the chain; a history rewritten whole
(every later hash recomputed) passes it, as it passes ``verify``, and shows only against a
written-down head (``verify --head``/``--against``).

The page asks for any period, a year's included, inside the kiosk on a Pi: so the report
streams the log, as ``verify`` and the exports do, and keeps running totals, never the
period's rounds — its memory is the same for a shift and for a year.
"""

from __future__ import annotations

from bisect import insort
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Iterator

from kiosk.adjustment_words import BANKER, after_close, adjustment_words, moved_words, owed_words
from kiosk.audit import GENESIS_HASH, AuditLog, AuditRecord, AuditType, log_moment, utc_iso
from kiosk.clockwatch import CLOCK_TYPES, UntrustedSpan, signed_duration, span_of, untrusted_spans
from kiosk.rounds import BOOK_TYPES, TERMINAL_TYPES, banking_of, ending, fold_round, is_change
from kiosk.table_service import ADJUSTMENT_TYPES, corrected_rounds, money
from scoring.rules import Banking, PresetError, load_preset
from scoring.settle import house_net, money_shown

ZERO = Decimal(0)
CHECK_BATCH = 2000    # records whose links are looked up together (about 250 rounds' books)
WINDOW = 4000         # records whose round endings are read together (about 100 rounds, 200 endings)
ENDINGS = ("settled", "void", "interrupted", "cleared")
# What the adjustment records of a period did with the chips: paid out, collected, and what a
# waiver left unpaid or uncollected (the books count it; the tray never saw it).
MOVED = ("paid", "collected", "waived_pay", "waived_collect")


@dataclass
class SeatTotals:
    rounds: int = 0
    stakes: Decimal = ZERO
    net: Decimal = ZERO      # from the player's side, after commission

    def to_json(self) -> dict:
        return {"rounds": self.rounds, "stakes": money(self.stakes), "net": money(self.net)}


@dataclass
class PeriodReport:
    table_id: str | None
    since: str | None
    until: str | None
    rounds: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ENDINGS, 0))
    first_round: int | None = None
    last_round: int | None = None
    stakes: Decimal = ZERO
    players_net: Decimal = ZERO
    banker_net: Decimal = ZERO
    commission: Decimal = ZERO
    house_result: Decimal = ZERO
    banking_unknown: list[int] = field(default_factory=list)
    card_corrections: int = 0
    settlement_corrections: int = 0
    alerts: int = 0
    largest_win: dict | None = None
    # wins a player-banker's stack could not pay in full (banker.cover): how many, what was not paid
    short_wins: int = 0
    short_total: Decimal = ZERO
    seats: dict[str, SeatTotals] = field(default_factory=dict)
    dealers: dict[str, SeatTotals] = field(default_factory=dict)   # by who settled; net = the house's
    unbalanced: list[int] = field(default_factory=list)
    broken: list[dict] = field(default_factory=list)    # {round, seq, type, problem}: records that fail their hash
    # Rounds whose end was stamped while the kiosk's clock was not synchronised
    # (kiosk.clockwatch): {round, ended, played, step_s}, played/step_s None where the log
    # never says; and rounds stamped in another period that were played in this one.
    clock_untrusted: list[dict] = field(default_factory=list)
    clock_elsewhere: list[dict] = field(default_factory=list)
    # Corrected rounds' adjustments (kiosk.rounds.adjustment), in round order: {round, status,
    # banking, outstanding, not_recorded, records, earlier, said}; what is still owed by the house,
    # to the seats (pay) and from them (collect); where a player banks, what that banker still pays
    # or is paid (the seats' side of it is the banker's money, not the house's); and what the
    # adjustment records stamped in this period moved or waived, the banker's side included.
    adjustments: list[dict] = field(default_factory=list)
    owed_pay: Decimal = ZERO
    owed_collect: Decimal = ZERO
    banker_pays: Decimal = ZERO
    banker_is_paid: Decimal = ZERO
    player_banked_owed: bool = False
    moved: dict[str, Decimal] = field(default_factory=lambda: dict.fromkeys(MOVED, ZERO))
    # How a person reads its figures (the console; the page has the table's own): the table's
    # currency and money unit as its kiosk last loaded them (None: the log does not say).
    # Not in ``to_json``: scripts read the figures as the log holds them.
    currency: str | None = None
    unit: Decimal | None = None

    def shown(self, amount: str) -> str:
        """One of ``to_json``'s figures as a person reads it: to the table's money unit,
        thousands grouped (1,235,567.00; riel 3,518,516)."""
        return money_shown(amount, self.unit, grouped=True)

    @property
    def broken_rounds(self) -> list[int]:
        return sorted({b["round"] for b in self.broken if b["round"] is not None})

    def add(self, summary: dict) -> None:
        """Fold one ended round in.  Rounds come in the order they ended, not by number, so
        what depends on order does not: the lists are kept in round order, and the largest
        win goes to the earliest round among equals."""
        number = summary["round"]
        self.rounds[summary["status"]] = self.rounds.get(summary["status"], 0) + 1
        self.first_round = number if self.first_round is None else min(self.first_round, number)
        self.last_round = number if self.last_round is None else max(self.last_round, number)
        # A correction after settlement logs its card too; it is counted once, as a settlement's.
        # A card a person only confirmed (old == new) was not corrected: it is not counted.
        self.card_corrections += sum(not c.get("after_settlement") and is_change(c) for c in summary["corrections"])
        self.settlement_corrections += len(summary["settlement_corrections"])
        self.alerts += len(summary["alerts"])
        if summary.get("adjustment"):
            self.add_adjustment(number, summary["adjustment"])
        settlement = summary["settlement"]
        if summary["status"] != "settled" or not settlement:
            return
        try:
            self._add_money(number, settlement, summary.get("settled_by") or "?")
        except (KeyError, TypeError, AttributeError, ValueError, ArithmeticError):
            # What the log holds is what the report reads; a settlement it cannot read is
            # named, not skipped in silence and not a crash of the whole report.
            insort(self.unbalanced, number)

    def _add_money(self, number: int, settlement: dict, settled_by: str) -> None:
        # Everything read before anything is added: an unreadable settlement adds nothing.
        lines = [(line["seat"], Decimal(line["amount"]), Decimal(line["net"]), line["player"].get("label", ""))
                 for line in settlement["lines"]]
        banker, commission = Decimal(settlement["banker_net"]), Decimal(settlement["total_commission"])
        short = [Decimal(line["owed"]) - Decimal(line["gross"]) for line in settlement["lines"] if "owed" in line]
        banking = banking_of(settlement)
        players = sum((net for _, _, net, _ in lines), ZERO)
        for seat_name, stake, net, label in lines:
            seat = self.seats.setdefault(seat_name, SeatTotals())
            seat.rounds += 1
            seat.stakes += stake
            seat.net += net
            self.stakes += stake
            best = self.largest_win
            if net > 0 and (best is None or (net, -number) > (Decimal(best["net"]), -best["round"])):
                self.largest_win = {"round": number, "seat": seat_name, "net": money(net), "hand": label}
        self.players_net += players
        self.short_wins += len(short)
        self.short_total += sum(short, ZERO)
        self.banker_net += banker
        self.commission += commission
        if players + banker + commission != 0:
            insort(self.unbalanced, number)
        if banking is None:
            insort(self.banking_unknown, number)
        house = house_net(banking, banker, commission)
        self.house_result += house
        # Dealers rotate through a shift: the pit compares each one's rounds and result.
        dealer = self.dealers.setdefault(settled_by, SeatTotals())
        dealer.rounds += 1
        dealer.stakes += sum((stake for _, stake, _, _ in lines), ZERO)
        dealer.net += house

    def add_adjustment(self, number: int, adjustment: dict, earlier: bool = False) -> None:
        """List a corrected round's adjustment (``earlier``: its round ended before this period);
        one whose corrections moved no money is no adjustment.

        What is owed is the house's only where the house banks, or where a player-banker's side
        was recorded already (the dealer holds that money): the house's figures must not carry a
        player's debt (QA49 review H1).  What was moved or waived counts by when it was recorded,
        so that the chip tray reconciles with the books in the period the chips moved in (QA49
        supervisor M3): a round of an earlier shift paid in this one counts here."""
        if adjustment["status"] == "none":
            return
        banking = adjustment.get("banking")
        outstanding = adjustment["outstanding"]
        players = banking == Banking.PLAYER.value and BANKER in outstanding
        self.player_banked_owed = self.player_banked_owed or players
        for party, amount in ((p, Decimal(d)) for p, d in outstanding.items()):
            if party == BANKER:
                self.banker_pays += max(-amount, ZERO)
                self.banker_is_paid += max(amount, ZERO)
            elif not players:
                self.owed_pay += max(amount, ZERO)
                self.owed_collect += max(-amount, ZERO)
        for r in adjustment["records"]:
            if not self._in_period(r.get("ts")):
                continue
            waived = r.get("action") == "waived"
            for amount in map(Decimal, (r.get("difference") or {}).values()):
                if amount > 0:
                    self.moved["waived_pay" if waived else "paid"] += amount
                else:
                    self.moved["waived_collect" if waived else "collected"] -= amount

        def said(amounts: dict, waived: bool = False) -> str:
            return adjustment_words(amounts, banking, self.shown, waived=waived)
        # a record stamped after the period ended is listed (a reprint tells the adjustment as
        # it stands) but marked, and not totalled: the signed copy could not have held it
        records = [{**{key: r.get(key) for key in ("action", "actor", "approved_by", "ts", "reason", "difference")},
                    "said": said(r.get("difference") or {}, r.get("action") == "waived"),
                    "after_period": bool(self.until and r.get("ts") and r["ts"] > self.until)}
                   for r in adjustment["records"]]
        insort(self.adjustments, {"round": number, "status": adjustment["status"], "banking": banking,
                                  "outstanding": outstanding, "not_recorded": adjustment["not_recorded"],
                                  "records": records, "earlier": earlier,
                                  "said": {"outstanding": said(outstanding),
                                           "not_recorded": said(adjustment["not_recorded"])}},
               key=lambda a: a["round"])

    def _in_period(self, ts: str | None) -> bool:
        return bool(ts) and (self.since is None or ts >= self.since) and (self.until is None or ts <= self.until)

    def add_broken(self, record: AuditRecord, problem: str) -> None:
        """Name a record of this report's rounds that fails its hash or its links."""
        # a record of no round (kiosk_start, config_loaded) sorts first, as round 0
        insort(self.broken, {"round": record.round_no, "seq": record.seq, "type": record.type, "problem": problem},
               key=lambda b: (b["round"] or 0, b["seq"]))

    def to_json(self) -> dict:
        return {
            "table_id": self.table_id, "from": self.since, "to": self.until,
            "rounds": dict(self.rounds), "first_round": self.first_round, "last_round": self.last_round,
            "stakes": money(self.stakes), "players_net": money(self.players_net),
            "banker_net": money(self.banker_net), "commission": money(self.commission),
            "house_result": money(self.house_result), "banking_unknown": self.banking_unknown,
            "card_corrections": self.card_corrections, "settlement_corrections": self.settlement_corrections,
            "alerts": self.alerts, "largest_win": self.largest_win,
            "seats": {seat: totals.to_json() for seat, totals in sorted(self.seats.items(), key=_seat_order)},
            "dealers": {name: totals.to_json() for name, totals in sorted(self.dealers.items())},
            "unbalanced_rounds": self.unbalanced,
            "broken_rounds": self.broken_rounds, "broken_records": self.broken,
            # only where a banker's stack fell short, so other tables' reports keep their shape
            **({"short_wins": self.short_wins, "short_total": money(self.short_total)} if self.short_wins else {}),
            # likewise only where a round was corrected after Settle
            **({"adjustments": self.adjustments,
                "adjustments_owed": {"pay": money(self.owed_pay), "collect": money(self.owed_collect),
                                     "rounds": [a["round"] for a in self.adjustments
                                                if a["status"] == "outstanding"],
                                     # only where a player-banker's side is owed, so other tables' keep their shape
                                     **({"banker_pays": money(self.banker_pays),
                                         "banker_is_paid": money(self.banker_is_paid)}
                                        if self.player_banked_owed else {})},
                "adjustments_moved": {what: money(amount) for what, amount in self.moved.items()}}
               if self.adjustments else {}),
            # likewise only where the clock was not to be trusted
            **({"clock_untrusted": self.clock_untrusted} if self.clock_untrusted else {}),
            **({"clock_elsewhere": self.clock_elsewhere} if self.clock_elsewhere else {}),
        }


def _seat_order(item: tuple[str, SeatTotals]) -> tuple[int, str]:
    seat = item[0]
    return (int(seat), "") if seat.isdigit() else (1 << 30, seat)


def period_report(log: AuditLog, *, table_id: str | None = None, since: str | None = None,
                  until: str | None = None) -> dict[str, PeriodReport]:
    """One report per table whose rounds ended between ``since`` and ``until`` (log-form
    times, as parse_period makes them: inclusive, either open), keyed by table id; each names the records it read
    that fail their hash or their links (``PeriodReport.broken``).  The log as it stood when
    asked: a round that ends while the report reads is the next report's."""
    last = log.last()
    head_seq = last.seq if last else 0
    reports: dict[str, PeriodReport] = {}
    read: list[AuditRecord] = []     # checked a few hundred rounds at a time: one query for all their neighbours
    damaged: dict[int, str] = {}     # seq: why, of the records read that fold_round found damaged

    def check() -> None:
        for r, problem in unsound(log, read, head_seq, damaged):
            reports[r.table_id].add_broken(r, problem)
        read.clear()

    clock_records = log.records(types=CLOCK_TYPES, upto_seq=head_seq)
    spans = untrusted_spans(clock_records)
    for table, records in _ended_rounds(log, table_id=table_id, since=since, until=until, upto_seq=head_seq):
        # Each record is checked, lines too, but the lines are not folded: the books total the
        # settlement (as last corrected), which holds them again, and parsing them costs a third.
        books = [r for r in records if r.type != AuditType.SETTLEMENT_LINE]
        report = reports.get(table) or reports.setdefault(table, _new_report(log, table, since, until, head_seq))
        summary = fold_round(books)
        damaged.update((d["seq"], d["problem"]) for d in summary["damaged"])
        report.add(summary)
        untrusted = _untrusted_end(spans.get(table, []), records)
        if untrusted is not None:
            insort(report.clock_untrusted, untrusted, key=lambda u: u["round"])
        read.extend(records)
        if len(read) >= CHECK_BATCH:
            check()
    for table, records in _earlier_adjustments(log, table_id=table_id, since=since, until=until,
                                               upto_seq=head_seq):
        report = reports.get(table) or reports.setdefault(table, _new_report(log, table, since, until, head_seq))
        books = [r for r in records if r.type != AuditType.SETTLEMENT_LINE]
        summary = fold_round(books)
        damaged.update((d["seq"], d["problem"]) for d in summary["damaged"])
        report.add_adjustment(books[0].round_no, summary["adjustment"], earlier=True)
        read.extend(records)     # the amounts listed are read off them: checked like the period's
    check()
    for table, moved in _played_here(log, spans, table_id=table_id, since=since, until=until,
                                              upto_seq=head_seq):
        report = reports.get(table) or reports.setdefault(table, _new_report(log, table, since, until, head_seq))
        insort(report.clock_elsewhere, moved, key=lambda u: u["round"])
    for r in clock_records:
        # a damaged clock record of the period: what the clock said is lost, so the rounds after
        # it are listed as stamped by an untrusted clock (untrusted_spans); named here
        damage = r.damage
        if damage and table_id in (None, r.table_id) and (since is None or r.ts >= since) \
                and (until is None or r.ts <= until):
            report = reports.get(r.table_id) or reports.setdefault(r.table_id, _new_report(log, r.table_id, since,
                                                                                           until, head_seq))
            report.add_broken(r, f"{_cannot_read(r, damage)}: whether the clock was right is not known from it on, "
                                 "so the rounds after it are counted as stamped by a clock not known to be right")
    return dict(sorted(reports.items()))


def _cannot_read(record: AuditRecord, damage: str) -> str:
    """The words for a damaged record outside any round, as :func:`unsound`'s for a round's: whether
    it also fails its hash tells surveillance damaged-after-writing from written-so."""
    broken = record.expected_hash() != record.hash
    return f"{'does not match its hash and ' if broken else ''}cannot be read ({damage})"


CONFIG_LOOKBACK = 5      # the newest config_loaded records read: a damaged one is passed over


def _new_report(log: AuditLog, table: str, since: str | None, until: str | None, head_seq: int) -> PeriodReport:
    """A table's empty books, knowing the currency and money unit its kiosk last loaded."""
    report = PeriodReport(table, since, until)
    data = None
    # The newest readable one: a damaged config_loaded is named and passed over, not the end of
    # the whole report (QA51 review M3).
    for loaded in log.records(types=(AuditType.CONFIG_LOADED,), table_id=table, upto_seq=head_seq,
                              newest_first=True, limit=CONFIG_LOOKBACK):
        data, damage = loaded.read()
        if data is not None:
            break
        report.add_broken(loaded, f"{_cannot_read(loaded, damage)}: the currency and money unit are taken from the "
                                  "configuration loaded before it (if any)")
    if data is not None:
        report.currency = data.get("currency") if isinstance(data.get("currency"), str) else None
        try:
            report.unit = load_preset(data.get("rules") or "").commission_quantum
        except (PresetError, OSError, ValueError, TypeError):
            report.unit = None      # a preset file since moved: the figures as the log holds them
    return report


def _untrusted_end(spans: list[UntrustedSpan], records: list[AuditRecord]) -> dict | None:
    """``{round, ended, played, step_s}`` where the round's end was stamped while the clock was
    not synchronised: the time on it decided its period.  ``played``: the time it ended by the
    clock as set later (its stamp plus the steps after it), None where the log never says."""
    end = ending(records)
    span = span_of(spans, end.seq) if end is not None else None
    if span is None:
        return None
    step = span.correction(end.seq, end.ts)
    played = None if step is None else utc_iso(log_moment(end.ts).timestamp() + step)
    return {"round": end.round_no, "ended": end.ts, "played": played, "step_s": step}


def _played_here(log: AuditLog, spans: dict[str, list[UntrustedSpan]], *, table_id: str | None,
                 since: str | None, until: str | None, upto_seq: int) -> Iterator[tuple[str, dict]]:
    """Rounds whose stamped end puts them in another period but which ended inside this one
    by the clock as set later: the report of the period they were played in must say they
    are missing from it, or its supervisor signs a shift short of rounds.  Only spans the
    clock was later set in, and whose corrected times reach the period, are read (a boot's few
    minutes or hours of records)."""
    def inside(ts: str) -> bool:
        return (since is None or ts >= since) and (until is None or ts <= until)

    for table, table_spans in spans.items():
        if table_id not in (None, table):
            continue
        for span in table_spans:
            if not span.played_within(since, until):
                continue        # a year's boots are each one span: only those that can matter are read
            last = span.last_seq if span.last_seq is not None else upto_seq
            ends = log.records(types=TERMINAL_TYPES, table_id=table, after_seq=span.first_seq - 1, upto_seq=last)
            for number in dict.fromkeys(r.round_no for r in ends if r.round_no is not None):
                records = log.records(round_no=number, table_id=table, types=BOOK_TYPES, upto_seq=upto_seq)
                untrusted = _untrusted_end([span], records)
                if untrusted and not inside(untrusted["ended"]) and inside(untrusted["played"]):
                    yield table, untrusted


def _ended_rounds(log: AuditLog, *, table_id: str | None, since: str | None, until: str | None,
                  upto_seq: int) -> Iterator[tuple[str, list[AuditRecord]]]:
    """``(table, book records)`` of each round that ended in the period, once each, in the
    order their endings were logged.

    The log is read as ``verify`` and the exports read it, a range of seqs at a time, but
    asking only for the records that end rounds (from the type index), then for each of
    their rounds' books; the range is the period's own (from the time index), so a shift's
    report of a year's log does not page through the year.  A round belongs to the period
    its end (:func:`kiosk.rounds.ending`) lies in; one settled and then cleared has two endings, and is
    read twice only if they fall in two windows."""
    span = log.seq_span(since=since, until=until)
    if span is None:
        return
    first, last = span[0], min(span[1], upto_seq)
    for after in range(first - 1, last, WINDOW):
        page = log.records(types=TERMINAL_TYPES, since=since, until=until, after_seq=after,
                           upto_seq=min(after + WINDOW, last))
        here = {r.seq for r in page if r.round_no is not None and table_id in (None, r.table_id)}
        for table, number in dict.fromkeys((r.table_id, r.round_no) for r in page if r.seq in here):
            records = log.records(round_no=number, table_id=table, types=BOOK_TYPES, upto_seq=upto_seq)
            end = ending(records)
            if end is not None and end.seq in here:
                yield table, records


def _earlier_adjustments(log: AuditLog, *, table_id: str | None, since: str | None, until: str | None,
                         upto_seq: int) -> Iterator[tuple[str, list[AuditRecord]]]:
    """``(table, book records)`` of each round that ended before the period and whose
    adjustment concerns it: corrected, paid or waived in the period, still owed now, or owed
    when the period ended.
    Only rounds corrected after Settle are read (the type index: they are few)."""
    if since is None:
        return      # the period runs from the first record: no round ended before it
    for number in corrected_rounds(log, until=until):
        records = log.records(round_no=number, types=BOOK_TYPES, upto_seq=upto_seq)
        for table in dict.fromkeys(r.table_id for r in records):
            if table_id not in (None, table):
                continue
            mine = [r for r in records if r.table_id == table]
            end = ending(mine)
            adjustment = fold_round(mine)["adjustment"]
            if end is None or end.ts >= since or adjustment is None:
                continue        # this period's round (listed with its books), or a later one's
            moved = any(since <= r.ts and (until is None or r.ts <= until)
                        for r in mine if r.type in ADJUSTMENT_TYPES)
            if moved or adjustment["status"] == "outstanding" or _owed_at_close(mine, until):
                yield table, mine


def _owed_at_close(records: list[AuditRecord], until: str | None) -> bool:
    """Whether a round's adjustment was still owed when the period ended at ``until`` though
    settled since: the copy signed then listed it as outstanding, so a reprint lists it too,
    with the records made after the close marked (QA49 supervisor L2), rather than drop it."""
    if until is None or not any(r.ts > until for r in records if r.type in ADJUSTMENT_TYPES):
        return False
    then = fold_round([r for r in records if r.ts <= until])["adjustment"] if records else None
    return bool(then) and then["status"] == "outstanding"


def adjustment_lines(report: dict, shown, currency: str, when) -> list[str]:
    """What the console says of the adjustments corrections left (``to_json``'s
    ``adjustments``), before the figures, as the page does: first what is still owed, which the
    books count as if paid, then what this period's records moved and waived (the tray differs
    from the books by it), then each round's, a record made after the period ended marked so
    (a reprint differs from the signed copy by it).  ``shown`` writes an amount to the table's
    money unit, ``when`` a log time in the reader's zone."""
    adjustments = report.get("adjustments") or []
    if not adjustments:
        return []
    cur = f" {currency}" if currency else ""

    def money(amount) -> str:
        return f"{shown(amount)}{cur}"

    def moves(a: dict, amounts: dict, waived: bool = False) -> str:
        return adjustment_words(amounts, a.get("banking"), money, waived=waived)

    lines = []
    owed = report["adjustments_owed"]
    if owed["rounds"]:
        lines.append(f"WARNING: adjustments outstanding in round{'s' if len(owed['rounds']) > 1 else ''} "
                     f"{', '.join(map(str, owed['rounds']))}: the books count their corrected figures, but the "
                     f"difference was not yet paid or collected ({owed_words(owed, money)}); pay or collect it and "
                     "record it on the dealer screen, or have a supervisor waive it, before signing")
    lines.append(f"adjustments recorded in this period: {moved_words(report['adjustments_moved'], money)}")
    for a in adjustments:
        head = f"round {a['round']}" + (" (ended in an earlier period)" if a["earlier"] else "")
        for r in a["records"]:
            who = r.get("approved_by") or r.get("actor")
            why = f" ({r['reason']})" if r.get("reason") else ""
            late = f" ({after_close(when(report['to']))})" if r.get("after_period") else ""
            lines.append(f"{head}: {r.get('action')} by {who} at {when(r.get('ts'))}: "
                         f"{moves(a, r.get('difference') or {}, r.get('action') == 'waived')}{why}{late}")
        if a["outstanding"]:
            lines.append(f"{head}: outstanding: {moves(a, a['outstanding'])}")
        if a["not_recorded"]:
            lines.append(f"{head}: corrected before adjustments were recorded; whether its difference "
                         f"({moves(a, a['not_recorded'])}) was paid is not in the log")
    return lines


def unsound(log: AuditLog, records: list[AuditRecord], head_seq: int,
            damaged: dict[int, str] | None = None) -> list[tuple[AuditRecord, str]]:
    """Each of ``records`` that does not hash to its stored hash, is not linked to the records
    on either side of it in the chain, or cannot be read, with what is wrong.  ``head_seq``: the
    log's last seq (a record there has no record after it to link to it); ``damaged``: seq:
    why, of the records whose payload the folding found damaged (:class:`kiosk.audit.DamagedRecord`).

    Its own hash shows an edit left unhashed; the link from the record after it shows one
    whose hash was recomputed too; a gap on either side, a record removed next to it.  A
    payload that cannot be read left its amounts out of the figures, which the report must
    say: counted as if read, the books would be short with nothing to show why."""
    damaged = damaged or {}
    seqs = {r.seq for r in records}
    links = log.links({s + d for s in seqs for d in (-1, 1)} - seqs)
    links.update((r.seq, (r.prev_hash, r.hash)) for r in records)
    found = []
    for r in records:
        before, after = links.get(r.seq - 1), links.get(r.seq + 1)
        linked_before = r.prev_hash == (GENESIS_HASH if r.seq == 1 else before[1] if before else None)
        linked_after = after[0] == r.hash if after else r.seq >= head_seq
        if r.expected_hash() != r.hash:
            why = damaged.get(r.seq) or r.damage     # only a record that fails its hash is read again
            found.append((r, f"does not match its hash and cannot be read ({why}): it was damaged on the disk or "
                             "edited after it was written; what it held is left out of the figures below" if why
                          else "does not match its hash: it was edited after it was written"))
        elif not linked_before:
            found.append((r, f"is not linked to the record before it (seq {r.seq - 1}): a record was removed or "
                             "replaced there"))
        elif not linked_after:
            found.append((r, f"is not the record the one after it (seq {r.seq + 1}) links to: it was replaced "
                             "(its hash recomputed), or the record after it removed"))
        elif r.seq in damaged:
            found.append((r, f"cannot be read ({damaged[r.seq]}) though it matches its hash: it was written so, "
                             "or the history rewritten; what it held is left out of the figures below"))
    return found


def _whose_record(broken: dict) -> str:
    """"round 4's round_settled record"; a record of no round (kiosk_start) by its kind alone."""
    kind = f"{broken['type']} record"
    return kind if broken["round"] is None else f"round {broken['round']}'s {kind}"


BROKEN_NAMED = 20     # a log edited throughout would name every record: the first few say what happened


def broken_lines(report: dict) -> list[str]:
    """What the console and the page say of a report (``to_json``) with records that fail their
    hash: first that its figures are not to be signed, then each record (the first few)."""
    broken = report.get("broken_records") or []
    if not broken:
        return []
    rounds = ", ".join(map(str, report["broken_rounds"]))
    whose = (f"the audit records of round{'s' if len(report['broken_rounds']) > 1 else ''} {rounds}" if rounds
             else "audit records of this period")
    lines = [f"WARNING: {whose} fail their hash check or cannot be read; the figures below count them as the log "
             "holds them now (what cannot be read left out), which is not what was written: do not sign this report "
             "— run niuniu audit verify and call surveillance"]
    lines += [f"WARNING: {_whose_record(b)} (seq {b['seq']}) {b['problem']}" for b in broken[:BROKEN_NAMED]]
    if len(broken) > BROKEN_NAMED:
        lines.append(f"WARNING: and {len(broken) - BROKEN_NAMED} more records")
    return lines


ROUNDS_NAMED = 10      # a day's rounds on an unset clock would be a thousand numbers: the first few, then a count


def _rounds(items: list[dict], text) -> str:
    """'rounds 4 (...), 5 (...)', the first ``ROUNDS_NAMED`` of them, then how many more
    and the range they run to (the JSON holds every one)."""
    named = ", ".join(text(u) for u in items[:ROUNDS_NAMED])
    rest = items[ROUNDS_NAMED:]
    more = f" and {len(rest)} more, to round {rest[-1]['round']}," if rest else ""
    return f"round{'s' if len(items) > 1 else ''} {named}{more}"


def clock_lines(report: dict, when) -> list[str]:
    """What the console and the page say of rounds stamped by a clock not synchronised
    (``to_json``'s ``clock_untrusted`` and ``clock_elsewhere``); ``when`` writes a log time
    as the reader asked for it (their time zone)."""
    lines = []
    untrusted = report.get("clock_untrusted") or []
    known = [u for u in untrusted if u["played"] is not None and u["step_s"]]
    unknown = [u for u in untrusted if u["played"] is None]
    if known:
        steps = " and ".join(dict.fromkeys(signed_duration(u["step_s"]) for u in known))
        lines.append("WARNING: " + _rounds(known, lambda u: f"{u['round']} (stamped {when(u['ended'])}, ended "
                                                            f"{when(u['played'])})")
                     + " ended while the kiosk's clock was not synchronised; they count here by the time on their "
                     f"records, but the clock was then set {steps}: check which shift they belong to before signing")
    if unknown:
        lines.append("WARNING: " + _rounds(unknown, lambda u: str(u["round"]))
                     + " ended while the kiosk's clock was not synchronised, and the log does not say it was set "
                     "later: their times, and so the shift they count in, may be wrong; check the table's paperwork "
                     "and the kiosk's clock (timedatectl status) before signing")
    elsewhere = report.get("clock_elsewhere") or []
    if elsewhere:
        lines.append("WARNING: " + _rounds(elsewhere, lambda u: f"{u['round']} (ended {when(u['played'])}, stamped "
                                                                f"{when(u['ended'])})")
                     + " ended in this period by the clock as set later, but were stamped while it was not "
                     "synchronised: they are counted in the report of the period on their stamps, not in these figures")
    return lines
