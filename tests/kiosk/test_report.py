"""The shift report: a period's books as the audit log tells them (kiosk.report, `niuniu audit report`)."""

from __future__ import annotations

import json
import tracemalloc
from datetime import datetime
from decimal import Decimal

from kiosk import report as books
from kiosk.audit import AuditLog, AuditType, Entry
from kiosk.report import period_report
from scoring.rules import load_preset
from scoring.settle import Bet, settle_round
from tamper_testing import edit_in_place

BANKER = "4S 6H QD 9C 9H"            # Bull 8
NIU_NIU = "KS QS JS 10S 10H"         # beats it
BULL_5 = "AS 2S 3D 4D 5C"            # loses to it


def at(hh_mm: str) -> float:
    return datetime.fromisoformat(f"2026-03-01T{hh_mm}:00+00:00").timestamp()


def settle(log: AuditLog, round_no: int, start: str, end: str, seats: dict[str, str], *, preset="cambodia",
           stake="100", table="t1", banker=BANKER, by="dealer1") -> None:
    kind = "equal" if preset == "cambodia" else load_preset(preset).main_bet   # equal: a win pays the stake
    settlement = settle_round(preset, banker, {s: (cards, Bet(s, Decimal(stake), kind)) for s, cards in seats.items()})
    log.append(AuditType.ROUND_START, "vision", {"bets": {}}, round_no=round_no, ts=at(start), table_id=table)
    log.append(AuditType.ROUND_SETTLED, by, {"settlement": settlement.to_json()}, round_no=round_no,
               ts=at(end), table_id=table)


def test_each_round_counts_once_in_the_period_it_ended(tmp_path):
    log = AuditLog.in_dir(tmp_path)
    settle(log, 1, "07:58", "07:59", {"1": NIU_NIU})                   # the shift before
    log.append(AuditType.ROUND_CLEARED, "vision", {}, round_no=1, ts=at("08:01"), table_id="t1")
    settle(log, 2, "07:59", "08:30", {"1": NIU_NIU, "2": BULL_5}, by="dealer2")   # started before, settled inside
    log.append(AuditType.ROUND_START, "vision", {}, round_no=3, ts=at("09:00"), table_id="t1")
    log.append(AuditType.ROUND_VOID, "super1", {"reason": "misdeal"}, round_no=3, ts=at("09:01"), table_id="t1")
    settle(log, 4, "13:59", "14:01", {"1": NIU_NIU})                   # the next shift's
    log.append(AuditType.ROUND_START, "vision", {}, round_no=5, ts=at("13:00"), table_id="t1")  # still dealing

    reports = period_report(log, since="2026-03-01T08:00:00.000000Z", until="2026-03-01T14:00:00.000000Z")
    r = reports["t1"].to_json()
    assert r["rounds"] == {"settled": 1, "void": 1, "interrupted": 0, "cleared": 0}
    assert (r["first_round"], r["last_round"]) == (2, 3)
    # Round 2 alone: seat 1 wins 100 less 5% commission, seat 2 loses 100.
    assert r["stakes"] == "200.00"
    assert (r["players_net"], r["banker_net"], r["commission"]) == ("-5.00", "0.00", "5.00")
    assert r["house_result"] == "5.00"
    assert r["seats"] == {"1": {"rounds": 1, "stakes": "100.00", "net": "95.00"},
                          "2": {"rounds": 1, "stakes": "100.00", "net": "-100.00"}}
    assert r["largest_win"] == {"round": 2, "seat": "1", "net": "95.00", "hand": "Niu Niu"}
    assert r["unbalanced_rounds"] == [] and r["banking_unknown"] == []
    # Who settled what: dealer2 settled the period's one round (dealer1's were outside it).
    assert r["dealers"] == {"dealer2": {"rounds": 1, "stakes": "200.00", "net": "5.00"}}


def test_the_house_keeps_the_banker_net_only_where_it_banks(tmp_path):
    log = AuditLog.in_dir(tmp_path)
    seats = {"1": NIU_NIU, "2": BULL_5, "3": "2H 3H 5H 7C 8C"}   # wins, loses, loses: the banker wins on the round
    settle(log, 1, "08:00", "08:01", seats, table="casino")
    settle(log, 1, "08:00", "08:01", seats, table="app", preset="grab-banker")
    reports = {t: r.to_json() for t, r in period_report(log).items()}
    casino, app = reports["casino"], reports["app"]
    # Every table's books balance; the house's result is its commission, plus the banker's
    # net only where the house is the banker.
    for r in (casino, app):
        assert Decimal(r["players_net"]) + Decimal(r["banker_net"]) + Decimal(r["commission"]) == 0
    assert Decimal(casino["house_result"]) == Decimal(casino["banker_net"]) + Decimal(casino["commission"])
    assert Decimal(app["banker_net"]) > 0 and Decimal(app["house_result"]) == Decimal(app["commission"]) > 0
    assert list(period_report(log, table_id="app")) == ["app"]


def test_a_round_whose_books_do_not_balance_is_named(tmp_path):
    log = AuditLog.in_dir(tmp_path)
    settlement = settle_round("cambodia", BANKER, {"1": (NIU_NIU, Bet("1", Decimal(100), "equal"))}).to_json()
    settlement["banker_net"] = "-90.00"   # a hand-edited or mis-written settlement
    log.append(AuditType.ROUND_START, "vision", {}, round_no=7, ts=at("08:00"))
    log.append(AuditType.ROUND_SETTLED, "dealer1", {"settlement": settlement}, round_no=7, ts=at("08:01"))
    assert period_report(log)[""].unbalanced == [7]

    del settlement["lines"][0]["net"]     # and one it cannot read at all: named, the rest still added
    log.append(AuditType.ROUND_START, "vision", {}, round_no=8, ts=at("08:02"))
    log.append(AuditType.ROUND_SETTLED, "dealer1", {"settlement": settlement}, round_no=8, ts=at("08:03"))
    report = period_report(log)[""]
    assert report.unbalanced == [7, 8] and report.rounds["settled"] == 2 and report.seats["1"].rounds == 1


def test_audit_report_command_text_json_and_whole_days(tmp_path, runner):
    log = AuditLog.in_dir(tmp_path)
    settle(log, 1, "08:00", "08:01", {"1": NIU_NIU, "2": BULL_5})
    settle(log, 2, "23:58", "23:59", {"1": BULL_5})
    log.close()

    code, out, _ = runner(["audit", "report", "--data-dir", str(tmp_path), "--from", "2026-03-01",
                           "--to", "2026-03-01"])     # a bare --to date is the whole day
    assert code == 0
    assert "2 settled" in out and "house result 105.00" in out
    assert "largest win  95.00 to seat 1 in round 1 (Niu Niu)" in out
    seat_rows = [line.split() for line in out.splitlines() if line.strip().split()[:1] in (["1"], ["2"])]
    assert seat_rows == [["1", "2", "200.00", "-5.00"], ["2", "1", "100.00", "-100.00"]]
    assert ["dealer1", "2", "300.00", "105.00"] in [line.split() for line in out.splitlines()]

    code, out, _ = runner(["audit", "report", "--data-dir", str(tmp_path), "--to", "2026-03-01T12:00", "--json"])
    [report] = json.loads(out)
    assert report["rounds"]["settled"] == 1 and report["last_round"] == 1

    # 1 March in Phnom Penh (UTC+7) ends at 16:59:59 UTC: round 2, settled at 23:59 UTC, is 2 March there.
    code, out, _ = runner(["audit", "report", "--data-dir", str(tmp_path), "--to", "2026-03-01",
                           "--timezone", "Asia/Phnom_Penh", "--json"])
    assert json.loads(out)[0]["last_round"] == 1
    code, out, _ = runner(["audit", "report", "--data-dir", str(tmp_path), "--from", "2026-03-01T06:00",
                           "--timezone", "Asia/Phnom_Penh"])
    assert "between 2026-03-01 06:00:00 Asia/Phnom_Penh and now" in out and "2 settled" in out

    code, out, err = runner(["audit", "report", "--data-dir", str(tmp_path), "--from", "2026-03-02"])
    assert code == 0 and out == "" and "no round ended" in err
    code, out, err = runner(["audit", "report", "--data-dir", str(tmp_path), "--from", "2026-03-02T08:00",
                             "--to", "2026-03-02T16:00", "--timezone", "Asia/Macau"])
    assert "no round ended between 2026-03-02 08:00:00 Asia/Macau and 2026-03-02 15:59:59 Asia/Macau" in err
    code, _, err = runner(["audit", "report", "--data-dir", str(tmp_path), "--from", "2026-03-02",
                           "--to", "2026-03-01"])
    assert code != 0 and "before --from" in err and "swap" in err



def test_rounds_count_the_same_whatever_order_they_ended_in(tmp_path, monkeypatch):
    """The report reads rounds as their endings come in the log, a few records at a time; what
    it says must not depend on that order: lists in round order, the largest win to the
    earliest round among equals, tables by name, and a round settled in one window and
    cleared in a later one counted once."""
    monkeypatch.setattr(books, "WINDOW", 3)
    log = AuditLog.in_dir(tmp_path)
    unbalanced = settle_round("cambodia", BANKER, {"1": (NIU_NIU, Bet("1", Decimal(100), "equal"))}).to_json()
    unbalanced["banker_net"] = "-90.00"
    settle(log, 9, "07:59", "08:00", {"1": BULL_5}, table="b")
    for number, start in ((1, "08:00"), (2, "08:01")):
        log.append(AuditType.ROUND_START, "vision", {}, round_no=number, ts=at(start), table_id="a")
    for number, end in ((2, "08:02"), (1, "08:03")):          # round 2 ends first
        log.append(AuditType.ROUND_SETTLED, "dealer1", {"settlement": unbalanced}, round_no=number, ts=at(end),
                   table_id="a")
    log.append(AuditType.ROUND_CLEARED, "vision", {}, round_no=1, ts=at("08:09"), table_id="a")
    ends = {r.round_no: r.seq for r in log.records(types=[AuditType.ROUND_SETTLED], table_id="a")}
    edit_in_place(log.path, ends[1], "mallory")
    edit_in_place(log.path, ends[2], "mallory")

    reports = period_report(log)
    assert list(reports) == ["a", "b"]
    a = reports["a"].to_json()
    assert a["rounds"]["settled"] == 2 and a["rounds"]["cleared"] == 0
    assert a["largest_win"]["round"] == 1 and a["unbalanced_rounds"] == [1, 2]
    assert [(b["round"], b["seq"]) for b in a["broken_records"]] == [(1, ends[1]), (2, ends[2])]


def build_rounds(log: AuditLog, first: int, last: int) -> None:
    """Settled rounds with their lines, one a minute, in one transaction (fast to write)."""
    seats = {"1": (NIU_NIU, Bet("1", Decimal(100), "equal")), "2": (BULL_5, Bet("2", Decimal(100), "equal"))}
    settlement = settle_round("cambodia", BANKER, seats).to_json()
    entries = []
    for n in range(first, last + 1):
        ts = at("08:00") + 60 * n
        entries.append(Entry(AuditType.ROUND_START, "vision", {"bets": {}}, n, ts, "t1"))
        entries.append(Entry(AuditType.ROUND_SETTLED, "dealer1", {"settlement": settlement}, n, ts + 30, "t1"))
        entries += [Entry(AuditType.SETTLEMENT_LINE, "dealer1", dict(line), n, ts + 30, "t1")
                    for line in settlement["lines"]]
    log.append_many(entries)


def report_peak(log: AuditLog) -> tuple[int, dict]:
    """Python's peak allocations (bytes) while the whole log is reported, and the reports."""
    period_report(log)            # once before: caches filled, modules imported
    tracemalloc.start()
    try:
        reports = period_report(log)
        return tracemalloc.get_traced_memory()[1], reports
    finally:
        tracemalloc.stop()


def test_the_report_streams_the_log_its_memory_does_not_grow_with_the_period(tmp_path, monkeypatch):
    """The report page takes any period, a year's too, inside the kiosk on a Pi: the report
    must keep running totals, not the period's rounds (it once held every round's ending,
    ~2.3 KB a round).  Measured as Python's own allocations, which a busy machine does not
    change, for a log and one four times its size, with its pages made small enough that
    the smaller log fills them."""
    monkeypatch.setattr(books, "WINDOW", 40)
    monkeypatch.setattr(books, "CHECK_BATCH", 40)
    log = AuditLog.in_dir(tmp_path)
    build_rounds(log, 1, 150)
    small, _ = report_peak(log)
    build_rounds(log, 151, 600)
    large, reports = report_peak(log)
    assert reports["t1"].rounds["settled"] == 600 and reports["t1"].seats["1"].rounds == 600
    assert large < small * 1.25, f"peak {small} bytes for 150 rounds, {large} for 600"
