"""Shifts that meet on a night the clocks change: one shift's ``--to`` and the next one's
``--from`` must be a microsecond apart in UTC, so no round is in both reports or in neither
(QA48 F1: the end was worked out on the wall clock and was an hour off on those nights)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

from kiosk.audit import AuditLog, AuditType, log_moment, parse_period, parse_time
from kiosk.report import period_report
from scoring.settle import Bet, settle_round

NEW_YORK, SANTIAGO = ZoneInfo("America/New_York"), ZoneInfo("America/Santiago")
ONE_US = timedelta(microseconds=1)

# (zone, a shift's start, where it hands over, the next one's end, the hand-over in UTC)
HANDOVERS = [
    # the clocks go back at 02:00 EDT; 02:00 EST, which is once, is 07:00Z
    (NEW_YORK, "2024-11-02T18:00", "2024-11-03T02:00", "2024-11-03T10:00", "2024-11-03T07:00"),
    # the clocks skip 02:00-03:00; 03:00 EDT is 07:00Z
    (NEW_YORK, "2024-03-09T19:00", "2024-03-10T03:00", "2024-03-10T11:00", "2024-03-10T07:00"),
    # whole days where the clocks go back at midnight: 2024-04-07 starts at 04:00Z
    (SANTIAGO, "2024-04-06", "2024-04-07", "2024-04-07", "2024-04-07T04:00"),
    # ... and where they skip midnight to 01:00: 2024-09-08 starts at 04:00Z too
    (SANTIAGO, "2024-09-07", "2024-09-08", "2024-09-08", "2024-09-08T04:00"),
]
NIGHTS = ["new-york-back", "new-york-forward", "santiago-back-at-midnight", "santiago-forward-at-midnight"]


def previous_day(day: str) -> str:
    return (datetime.fromisoformat(day) - timedelta(days=1)).date().isoformat()


def shifts(start: str, handover: str, end: str) -> list[tuple[str, str]]:
    """The two shifts' ``(--from, --to)``; for days, the first ends on the day before the next."""
    if "T" in handover:
        return [(start, handover), (handover, end)]
    return [(start, previous_day(handover)), (handover, end)]


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


@pytest.mark.parametrize(("zone", "start", "handover", "end", "at"), HANDOVERS, ids=NIGHTS)
def test_one_shifts_end_is_a_microsecond_before_the_next_ones_start(zone, start, handover, end, at):
    (_, first_to), (second_from, _) = shifts(start, handover, end)
    closes = log_moment(parse_time(first_to, where="--to", end=True, zone=zone))
    opens = log_moment(parse_time(second_from, where="--from", zone=zone))
    assert opens == utc(at) and closes == opens - ONE_US


def settled_at(log: AuditLog, moments: list[datetime]) -> None:
    seats = {"1": ("KS QS JS 10S 10H", Bet("1", Decimal(100), "equal"))}
    settlement = settle_round("cambodia", "4S 6H QD 9C 9H", seats)
    for number, moment in enumerate(moments, 1):
        ts = moment.timestamp()
        log.append(AuditType.ROUND_START, "vision", {"bets": {}}, round_no=number, ts=ts - 60)
        log.append(AuditType.ROUND_SETTLED, "dealer1", {"settlement": settlement.to_json()}, round_no=number, ts=ts)


# Rounds ending either side of the hand-over: the whole hour the old end put on the wrong side,
# the second before it, the hand-over itself and just after it.
OFFSETS = [timedelta(minutes=-59), timedelta(minutes=-30), timedelta(seconds=-1), timedelta(0),
           timedelta(seconds=1), timedelta(minutes=30)]


@pytest.mark.parametrize(("zone", "start", "handover", "end", "at"), HANDOVERS, ids=NIGHTS)
def test_each_round_is_in_exactly_one_of_two_adjacent_shift_reports(tmp_path, runner, zone, start, handover,
                                                                    end, at):
    log = AuditLog.in_dir(tmp_path, "t1")
    settled_at(log, [utc(at) + offset for offset in OFFSETS])
    log.close()
    reports = []
    for since, until in shifts(start, handover, end):
        code, out, err = runner(["audit", "report", "--data-dir", str(tmp_path), "--timezone", zone.key,
                                 "--from", since, "--to", until, "--json"])
        assert code == 0, err
        found = json.loads(out)         # no report at all where no round ended in the shift
        reports.append(next(((r["rounds"]["settled"], r["first_round"], r["last_round"]) for r in found),
                            (0, None, None)))
    # rounds 1-3 ended before the hand-over, 4-6 at or after it
    assert reports == [(3, 1, 3), (3, 4, 6)]


def test_the_report_function_splits_the_repeated_hour_at_the_shift_typed(tmp_path):
    """01:30 EST (06:30Z) is before a --to 02:00 on the night New York's clocks go back, as
    the supervisor of the night shift counts it; the old end, 01:59:59 EDT (05:59:59Z), left
    it out of both shifts."""
    log = AuditLog.in_dir(tmp_path, "t1")
    settled_at(log, [utc("2024-11-03T06:30")])
    since, until = parse_period("2024-11-02T18:00", "2024-11-03T02:00", zone=NEW_YORK)
    night = period_report(log, since=since, until=until)
    since, until = parse_period("2024-11-03T02:00", "2024-11-03T10:00", zone=NEW_YORK)
    assert night["t1"].rounds["settled"] == 1 and period_report(log, since=since, until=until) == {}
    log.close()


def test_the_last_day_the_log_can_write_still_closes():
    assert parse_time("9999-12-31", where="--to", end=True) == "9999-12-31T23:59:59.999999Z"
    assert parse_time("9999-12-31", where="--to", end=True, zone=NEW_YORK) == "9999-12-31T23:59:59.999999Z"
    assert parse_time("2025-01-10", where="--to", end=True, zone=NEW_YORK) == "2025-01-11T04:59:59.999999Z"
