"""Finding a round by an approximate local time (QA48 M3): "about 10:40 pm" typed as people
say it, a time alone on the round list, Around ± minutes, and a refused period lists no rounds."""

from __future__ import annotations

import html
import re
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from kiosk.audit import AuditError, AuditType, parse_period, parse_time
from kiosk_testing import login, play

MACAU = ZoneInfo("Asia/Macau")
LONDON = ZoneInfo("Europe/London")


def round_numbers(page: bytes) -> list[int]:
    return [int(n) for n in re.findall(rb'/review/round/(\d+)"', page)]


# --- parse_time: the forms people type ----------------------------------------------------

def test_a_one_digit_hour_and_a_12_hour_time_are_read():
    assert parse_time("2026-12-07T6:24", where="'from'", zone=MACAU) == "2026-12-06T22:24:00.000000Z"
    assert parse_time("2026-12-07 6:24", where="'from'", zone=MACAU) == "2026-12-06T22:24:00.000000Z"
    for pm in ("2026-12-07 10:40 pm", "2026-12-07T10:40PM", "2026-12-07 10:40 p.m."):
        assert parse_time(pm, where="'from'", zone=MACAU) == "2026-12-07T14:40:00.000000Z"
    assert parse_time("2026-12-07 12:30 am", where="'from'", zone=MACAU) == "2026-12-06T16:30:00.000000Z"
    assert parse_time("2026-12-07 12:30 pm", where="'from'", zone=MACAU) == "2026-12-07T04:30:00.000000Z"
    assert parse_time("2026-12-07 10 pm", where="'from'", zone=MACAU) == "2026-12-07T14:00:00.000000Z"
    assert parse_time("2026-12-07T6:24+00:00", where="'from'", zone=MACAU) == "2026-12-07T06:24:00.000000Z"
    # a typed time closes a range as the ISO form does: the instant before it
    assert parse_time("2026-12-07 10:40 pm", where="'to'", end=True, zone=MACAU) == "2026-12-07T14:39:59.999999Z"


def test_a_time_alone_is_on_the_day_given_and_refused_without_one():
    assert parse_time("22:40", where="'from'", zone=MACAU, day=date(2026, 12, 7)) == "2026-12-07T14:40:00.000000Z"
    assert parse_time("10:40 pm", where="'from'", zone=MACAU, day=date(2026, 12, 7)) == "2026-12-07T14:40:00.000000Z"
    with pytest.raises(AuditError, match="'22:40' is a time with no date; write the date too"):
        parse_time("22:40", where="--from", zone=MACAU)
    # the other end's day, for the round list
    assert parse_period("2026-12-07T22:00", "23:30", zone=MACAU,
                        days=(None, date(2026, 12, 7))) == ("2026-12-07T14:00:00.000000Z",
                                                            "2026-12-07T15:29:59.999999Z")


@pytest.mark.parametrize("text", ["13:40 pm", "0:30 am", "2026-12-07 13:40 pm", "2026-12-07 00:30 am"])
def test_an_hour_that_is_not_on_a_12_hour_clock_is_refused_with_am_pm(text):
    with pytest.raises(AuditError, match="with am/pm the hour is 1 to 12"):
        parse_time(text, where="'from'", zone=MACAU, day=date(2026, 12, 7))


@pytest.mark.parametrize("text", ["2026-12-07T25:00", "2026-12-07 10:40 x", "1040", "10.40 pm", "2026-02-30 1:00 pm",
                                  "2026-12-07T6", "22"])
def test_other_forms_are_still_not_a_time(text):
    with pytest.raises(AuditError, match="is not a date or time"):
        parse_time(text, where="'from'", zone=MACAU, day=date(2026, 12, 7))


def test_the_new_forms_keep_the_daylight_saving_rules():
    with pytest.raises(AuditError, match="happened twice in Europe/London"):
        parse_time("2024-10-27T1:30", where="--to", zone=LONDON)
    with pytest.raises(AuditError, match="happened twice in Europe/London"):
        parse_time("1:30 am", where="'around'", zone=LONDON, day=date(2024, 10, 27))
    with pytest.raises(AuditError, match="does not exist in America/Los_Angeles"):
        parse_time("2024-03-10 2:30 am", where="'from'", zone=ZoneInfo("America/Los_Angeles"))
    assert parse_time("2024-10-27T1:30+00:00", where="--to", zone=LONDON) == "2024-10-27T01:30:00.000000Z"


def test_the_report_command_reads_a_one_digit_hour(tmp_path, runner):
    from kiosk.audit import AuditLog
    log = AuditLog.in_dir(tmp_path, "t1")
    log.append(AuditType.KIOSK_START, "system", {})
    log.close()
    code, out, err = runner(["audit", "report", "--data-dir", str(tmp_path), "--timezone", "Asia/Macau",
                             "--from", "2024-05-01T6:00", "--to", "2024-05-01 6:30 pm"])
    assert code == 0, err


# --- the round list -----------------------------------------------------------------------

def phnom_penh_table():
    from kiosk_testing import table_dict
    from vision.table import table_config_from_dict
    return table_config_from_dict({**table_dict(), "timezone": "Asia/Phnom_Penh"})   # UTC+7, no summer time


PHNOM_PENH = timezone(timedelta(hours=7))


def _one_round(client, service, audit) -> datetime:
    """Play one round; its start in Phnom Penh's local time (skipping near local midnight,
    where "today" and the round's day could differ)."""
    play(client, service, [("KS QS JS 10S 10H", "settle")])
    login(client, "watch1")
    started = next(r.ts for r in audit.records() if r.type == AuditType.ROUND_START)
    local = datetime.fromisoformat(started.replace("Z", "+00:00")).astimezone(PHNOM_PENH)
    if not (1 <= local.hour < 23) or local.date() != datetime.now(PHNOM_PENH).date():
        pytest.skip("too near local midnight for a time alone to mean the round's day")
    return local


def _twelve(moment: datetime) -> str:
    return moment.strftime("%I:%M %p").lstrip("0").lower()       # 9:05 pm


@pytest.mark.parametrize("table", [phnom_penh_table()])
def test_a_time_alone_on_the_round_list_is_today_in_the_tables_zone(client, service, audit):
    local = _one_round(client, service, audit)
    before, after = local - timedelta(minutes=1), local + timedelta(minutes=2)
    assert round_numbers(client.get(f"/review/?from={before:%H:%M}").data) == [1]
    assert round_numbers(client.get(f"/review/?from={after:%H:%M}").data) == []
    assert round_numbers(client.get("/review/", query_string={"from": _twelve(before)}).data) == [1]
    assert round_numbers(client.get("/review/", query_string={"from": _twelve(after)}).data) == []
    assert round_numbers(client.get("/review/", query_string={"to": _twelve(before)}).data) == []
    # one-digit hour, with the date
    one_digit = f"{before:%Y-%m-%d}T{before.hour}:{before:%M}"
    assert round_numbers(client.get("/review/", query_string={"from": one_digit}).data) == [1]


@pytest.mark.parametrize("table", [phnom_penh_table()])
def test_a_time_alone_takes_the_day_of_the_other_field(client, service, audit):
    local = _one_round(client, service, audit)
    before, after = local - timedelta(minutes=1), local + timedelta(minutes=2)
    assert round_numbers(client.get("/review/", query_string={"from": f"{before:%Y-%m-%dT%H:%M}",
                                                              "to": f"{after:%H:%M}"}).data) == [1]
    # a day long past: the time alone is on that day, not today
    page = client.get("/review/", query_string={"from": "2020-01-01", "to": f"{after:%H:%M}"})
    assert round_numbers(page.data) == []
    assert b"is not a date or time" not in page.data


@pytest.mark.parametrize("table", [phnom_penh_table()])
def test_around_a_time_plus_or_minus_minutes(client, service, audit):
    local = _one_round(client, service, audit)
    assert round_numbers(client.get("/review/", query_string={"around": _twelve(local)}).data) == [1]
    assert round_numbers(client.get("/review/", query_string={"around": f"{local:%H:%M}"}).data) == [1]
    later = local + timedelta(minutes=30)
    assert round_numbers(client.get("/review/", query_string={"around": f"{later:%H:%M}"}).data) == []   # ± 15
    assert round_numbers(client.get("/review/", query_string={"around": f"{later:%H:%M}", "within": "45"}).data) == [1]
    dated = f"{later:%Y-%m-%d} {_twelve(later)}"
    assert round_numbers(client.get("/review/", query_string={"around": dated, "within": "45"}).data) == [1]
    page = client.get("/review/", query_string={"around": f"{local:%H:%M}"}).get_data(as_text=True)
    assert 'name="around"' in page and 'name="within"' in page
    # its export links hold the same period, read back by the export as it is
    link = html.unescape(re.search(r'href="([^"]*format=csv[^"]*)"', page)[1])
    assert "from=" in link and "to=" in link
    exported = client.get(link)
    assert exported.status_code == 200


@pytest.mark.parametrize("query, message", [
    ({"from": "someday"}, "is not a date or time"),
    ({"from": "13:40 pm"}, "with am/pm the hour is 1 to 12"),
    ({"to": "2020-01-01", "from": "2021-01-01"}, "swap them"),
    ({"around": "later"}, "is not a date or time"),
    ({"around": "10:40", "from": "2026-12-07"}, "Around sets the period itself"),
    ({"around": "10:40", "within": "a lot"}, "is not a number of minutes"),
    ({"around": "10:40", "within": "0"}, "is not a number of minutes"),
])
def test_a_refused_period_shows_the_error_and_no_rounds(played, query, message):
    page = played.get("/review/", query_string=query)
    assert page.status_code == 200
    assert message in html.unescape(page.get_data(as_text=True))
    assert round_numbers(page.data) == []
    assert b'id="period-refused"' in page.data
    assert round_numbers(played.get("/review/").data) == [4, 3, 2, 1]


# --- approved by (QA48 M4) ----------------------------------------------------------------

def test_the_round_list_filters_by_the_supervisor_who_approved(played):
    assert round_numbers(played.get("/review/?approver=super1").data) == [3]       # approved the void
    assert round_numbers(played.get("/review/?approver=SUPER1").data) == [3]       # any case
    assert round_numbers(played.get("/review/?approver=super").data) == []         # exact
    assert round_numbers(played.get("/review/?approver=dealer1").data) == []       # acted, approved nothing
    assert round_numbers(played.get("/review/?approver=super1&voided=1").data) == [3]
    assert round_numbers(played.get("/review/?approver=super1&from=2000-01-01&to=2001-01-01").data) == []
    assert 'name="approver"' in played.get("/review/").get_data(as_text=True)


def test_approved_by_lists_a_correction_approved_in_the_period_of_an_earlier_round(dealer, service, audit, client):
    from test_paid_and_corrected import correct, settled_round
    settled_round(dealer, service)
    correct(dealer, "2", "4D", "9D", "9 read as 4")
    login(client, "watch1")
    corrected_at = next(r.ts for r in audit.records() if r.type == AuditType.SETTLEMENT_CORRECTED)
    assert round_numbers(client.get("/review/?approver=super1").data) == [1]
    # the round was dealt before the period; its correction was approved in it
    assert round_numbers(client.get("/review/", query_string={"from": corrected_at}).data) == []
    assert round_numbers(client.get("/review/", query_string={"from": corrected_at, "approver": "super1"}).data) == [1]
    # a typed To closes the period the instant before it
    after = (datetime.fromisoformat(corrected_at.replace("Z", "+00:00")) + timedelta(microseconds=1)).isoformat()
    assert round_numbers(client.get("/review/", query_string={"to": after, "approver": "Super1"}).data) == [1]
    assert round_numbers(client.get("/review/", query_string={"to": corrected_at, "approver": "super1"}).data) == []
