"""Times typed and shown in a zone with daylight saving: the hour shown twice and the hour
skipped must not silently move a shift's edge or read as time running backwards."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest

from kiosk.audit import AuditError, AuditLog, AuditType, local_text, parse_time

LONDON = ZoneInfo("Europe/London")


def test_a_time_the_clocks_showed_twice_is_refused_naming_both_offsets():
    with pytest.raises(AuditError) as raised:
        parse_time("2024-10-27T01:30", where="--to", zone=LONDON)
    message = str(raised.value)
    assert "happened twice in Europe/London" in message
    assert "2024-10-27T01:30+01:00 for the first (BST)" in message
    assert "2024-10-27T01:30+00:00 for the second (GMT)" in message
    # either, written with its offset, is taken as written
    assert parse_time("2024-10-27T01:30+00:00", where="--to", zone=LONDON) == "2024-10-27T01:30:00.000000Z"
    assert parse_time("2024-10-27T01:30+01:00", where="--to", zone=LONDON) == "2024-10-27T00:30:00.000000Z"


def test_a_time_the_clocks_skipped_is_refused_with_the_same_moment_as_they_showed_it():
    with pytest.raises(AuditError) as raised:
        parse_time("2024-03-10T02:30", where="'from'", zone=ZoneInfo("America/Los_Angeles"))
    assert "does not exist in America/Los_Angeles" in str(raised.value)
    assert "like 2024-03-10T03:30" in str(raised.value)
    # the day itself, and times either side of the change, are as before
    assert parse_time("2024-03-10", where="'from'", zone=ZoneInfo("America/Los_Angeles")) \
        == "2024-03-10T08:00:00.000000Z"
    assert parse_time("2024-03-10T03:30", where="'from'", zone=ZoneInfo("America/Los_Angeles")) \
        == "2024-03-10T10:30:00.000000Z"


def test_times_in_the_repeated_hour_carry_their_zone_abbreviation_and_no_others_do():
    assert local_text("2024-10-27T00:45:00.000000Z", LONDON) == "2024-10-27 01:45:00 BST"
    assert local_text("2024-10-27T01:15:00.000000Z", LONDON) == "2024-10-27 01:15:00 GMT"
    assert local_text("2024-10-27T02:15:00.000000Z", LONDON) == "2024-10-27 02:15:00"
    assert local_text("2024-10-27T01:15:00.000000Z", ZoneInfo("Asia/Macau")) == "2024-10-27 09:15:00"


def test_the_report_command_refuses_an_ambiguous_edge_in_one_line(tmp_path, runner):
    log = AuditLog.in_dir(tmp_path, "t1")
    log.append(AuditType.KIOSK_START, "system", {})
    log.close()
    code, out, err = runner(["audit", "report", "--data-dir", str(tmp_path), "--timezone", "Europe/London",
                             "--from", "2024-10-26T18:00", "--to", "2024-10-27T01:30"])
    assert code != 0 and out == ""
    assert "--to '2024-10-27T01:30' happened twice in Europe/London" in err and len(err.strip().splitlines()) == 1


def test_a_round_ending_on_a_shift_boundary_counts_in_one_shift_only(tmp_path, runner):
    """One shift's --to 14:00 and the next one's --from 14:00: a record stamped exactly 14:00
    is the second shift's, not both (QA46 time F11)."""
    import json
    from datetime import datetime, timezone
    from decimal import Decimal

    from scoring.settle import Bet, settle_round

    log = AuditLog.in_dir(tmp_path, "t1")
    boundary = datetime(2025, 1, 10, 14, 0, tzinfo=timezone.utc).timestamp()
    seats = {"1": ("KS QS JS 10S 10H", Bet("1", Decimal(100), "equal"))}
    settlement = settle_round("cambodia", "4S 6H QD 9C 9H", seats)
    log.append(AuditType.ROUND_START, "vision", {"bets": {}}, round_no=1, ts=boundary - 60)
    log.append(AuditType.ROUND_SETTLED, "dealer1", {"settlement": settlement.to_json()}, round_no=1, ts=boundary)
    log.close()
    counts = []
    for since, until in (("2025-01-10T06:00", "2025-01-10T14:00"), ("2025-01-10T14:00", "2025-01-10T22:00")):
        code, out, _ = runner(["audit", "report", "--data-dir", str(tmp_path), "--from", since, "--to", until,
                               "--json"])
        counts.append(sum(r["rounds"]["settled"] for r in json.loads(out)) if out.strip() else 0)
    assert counts == [0, 1]
    # a bare date still closes on the whole day
    assert parse_time("2025-01-10", where="--to", end=True) == "2025-01-10T23:59:59.999999Z"
