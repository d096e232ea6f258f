"""A clock set late after a power cut: the log says when and by how much (kiosk.clockwatch),
and the shift report names the rounds it stamped wrong and the shift they were played in."""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal

from kiosk.audit import AuditLog, AuditType
from kiosk.clockwatch import ClockWatch, untrusted_spans
from kiosk.watchdog import ClockStatus, ClockSync
from kiosk_testing import login
from scoring.settle import Bet, settle_round

BANKER = "4S 6H QD 9C 9H"            # Bull 8
NIU_NIU = "KS QS JS 10S 10H"         # beats it: the seat wins 100, less 5 commission
HOURS_3 = 3 * 3600.0


def at(text: str) -> float:
    return datetime.fromisoformat(f"2025-01-10T{text}+00:00").timestamp()


class FakeClock:
    """A wall clock someone can set, a monotonic clock no one can, and what adjtimex says."""

    def __init__(self, wall: float, synced: bool | None) -> None:
        self.offset, self.mono_now, self.synced = wall, 1000.0, synced

    def wall(self) -> float:
        return self.mono_now + self.offset - 1000.0

    def mono(self) -> float:
        return self.mono_now

    def status(self) -> ClockStatus:
        state = {True: ClockSync.SYNCHRONISED, False: ClockSync.NOT_SYNCHRONISED, None: ClockSync.UNKNOWN}
        return ClockStatus(state[self.synced], "test")

    def run(self, seconds: float) -> None:
        self.mono_now += seconds

    def watch(self, log: AuditLog) -> ClockWatch:
        return ClockWatch(log, status=self.status, wall=self.wall, mono=self.mono)


def settle(log: AuditLog, round_no: int, start: float, end: float, stake: str = "100") -> None:
    settlement = settle_round("cambodia", BANKER, {"1": (NIU_NIU, Bet("1", Decimal(stake), "equal"))})
    log.append(AuditType.ROUND_START, "vision", {"bets": {}}, round_no=round_no, ts=start)
    log.append(AuditType.ROUND_SETTLED, "dealer1", {"settlement": settlement.to_json()}, round_no=round_no, ts=end)


def test_the_watch_logs_a_step_and_when_the_clock_becomes_synchronised(tmp_path):
    log = AuditLog.in_dir(tmp_path, "t1")
    clock = FakeClock(at("07:00:00"), synced=False)
    watch = clock.watch(log)
    assert watch.look() is None                      # the baseline: kiosk_start says how the clock stands
    clock.run(5)
    clock.offset += 0.4                              # NTP slewing: no record
    assert watch.look() is None
    clock.run(5)
    clock.offset += HOURS_3                          # NTP answers: the clock steps 3 hours and is synchronised
    clock.synced = True
    record = watch.look()
    assert record.type == AuditType.CLOCK_CHANGED
    assert record.data["step_s"] == HOURS_3 and record.data["synchronised"] is True
    assert record.data["was_synchronised"] is False
    assert record.data["was"].startswith("2025-01-10T07:00:10")     # what the clock read before it was set
    assert record.ts.startswith("2025-01-10T10:00:10")              # stamped by the clock as set
    assert watch.state()["synchronised"] is True
    clock.run(5)
    assert watch.look() is None                      # nothing changed since
    clock.run(5)
    clock.offset -= 3600                             # someone sets it back an hour by hand
    record = watch.look()
    assert record.data["step_s"] == -3600.0 and record.data["synchronised"] is True
    assert [r.type for r in log.records()] == [AuditType.CLOCK_CHANGED] * 2


def test_the_kiosk_start_record_says_how_the_clock_stood_and_changes_follow(app, service, audit):
    clock = FakeClock(at("07:00:00"), synced=False)
    service.clock_watch = clock.watch(audit)
    service.stop()
    service._started = service._stopped = False
    service.start()
    start = audit.records(types=[AuditType.KIOSK_START], newest_first=True, limit=1)[0]
    assert start.data["clock"]["synchronised"] is False
    clock.run(5)
    clock.offset += HOURS_3
    clock.synced = True
    service.clock_watch.look()
    changed = audit.records(types=[AuditType.CLOCK_CHANGED])
    assert len(changed) == 1 and changed[0].seq > start.seq and changed[0].data["step_s"] == HOURS_3
    assert service.status()["clock"]["synchronised"] is True      # the screen's pill follows


def stale_boot(log: AuditLog, *, clock_set: bool = True) -> None:
    """A Macau-style day: three rounds on a good clock; a power cut from 15:00 to 18:00 (UTC
    here); the kiosk boots at 15:00 and deals rounds 4 and 5 (really 18:05 and 18:15) before
    NTP steps the clock 3 hours; round 6 is dealt after."""
    log.append(AuditType.KIOSK_START, "system", {"clock": {"synchronised": True}}, ts=at("00:00:00"))
    settle(log, 1, at("10:00:00"), at("10:02:00"))
    settle(log, 2, at("13:00:00"), at("13:02:00"))
    settle(log, 3, at("14:55:00"), at("14:57:00"))
    log.append(AuditType.KIOSK_START, "system", {"clock": {"synchronised": False}}, ts=at("15:00:30"))
    settle(log, 4, at("15:05:00"), at("15:07:00"))
    settle(log, 5, at("15:15:00"), at("15:17:00"), stake="5000")
    if clock_set:
        log.append(AuditType.CLOCK_CHANGED, "system", {"synchronised": True, "was_synchronised": False,
                                                       "step_s": HOURS_3, "message": ""}, ts=at("18:20:00"))
    settle(log, 6, at("18:30:00"), at("18:32:00"))


def test_the_report_names_rounds_stamped_before_the_clock_was_set_in_both_shifts(tmp_path, runner):
    log = AuditLog.in_dir(tmp_path, "t1")
    stale_boot(log)
    log.close()
    day = ["--from", "2025-01-10T08:00", "--to", "2025-01-10T16:00"]
    swing = ["--from", "2025-01-10T16:00", "--to", "2025-01-10T23:59:59"]
    code, out, _ = runner(["audit", "report", "--data-dir", str(tmp_path), *day, "--json"])
    [report] = json.loads(out)
    # The figures stay the log's (the day shift may already be signed) ...
    assert report["rounds"]["settled"] == 5
    # ... but the rounds stamped by the unset clock are named, with the time they really ended.
    assert [(u["round"], u["played"]) for u in report["clock_untrusted"]] == [
        (4, "2025-01-10T18:07:00.000000Z"), (5, "2025-01-10T18:17:00.000000Z")]
    code, out, _ = runner(["audit", "report", "--data-dir", str(tmp_path), *day])
    warning = out.splitlines()[1]
    assert warning.startswith("  WARNING: rounds 4 (stamped 2025-01-10 15:07:00, ended 2025-01-10 18:07:00), 5 ")
    assert "clock was then set +3h 00m 00s" in warning
    # The swing shift's supervisor learns two of the shift's rounds are counted in the day's books.
    code, out, _ = runner(["audit", "report", "--data-dir", str(tmp_path), *swing, "--json"])
    [report] = json.loads(out)
    assert report["rounds"]["settled"] == 1 and "clock_untrusted" not in report
    assert [u["round"] for u in report["clock_elsewhere"]] == [4, 5]
    code, out, _ = runner(["audit", "report", "--data-dir", str(tmp_path), *swing])
    assert "rounds 4 (ended 2025-01-10 18:07:00, stamped 2025-01-10 15:07:00)" in out
    assert "counted in the report of the period on their stamps" in out


def test_a_clock_never_set_says_the_times_are_unknown_and_a_synchronised_day_says_nothing(tmp_path, runner):
    log = AuditLog.in_dir(tmp_path, "t1")
    stale_boot(log, clock_set=False)             # a log from before clock_changed, or NTP never answered
    log.close()
    code, out, _ = runner(["audit", "report", "--data-dir", str(tmp_path), "--from", "2025-01-10T08:00",
                           "--to", "2025-01-10T23:59:59"])
    assert "rounds 4, 5, 6 ended while the kiosk's clock was not synchronised, and the log does not say it " \
           "was set later" in out
    code, out, _ = runner(["audit", "report", "--data-dir", str(tmp_path), "--from", "2025-01-10T08:00",
                           "--to", "2025-01-10T14:59:59"])
    assert "WARNING" not in out and "3 settled" in out


def test_spans_end_where_the_clock_is_set_or_the_kiosk_starts_again(tmp_path):
    log = AuditLog.in_dir(tmp_path, "t1")
    unsynced, synced = {"clock": {"synchronised": False}}, {"clock": {"synchronised": True}}
    log.append(AuditType.KIOSK_START, "system", unsynced)                                   # 1
    log.append(AuditType.CLOCK_CHANGED, "system", {"synchronised": False, "step_s": 60.0})  # 2: set by hand
    log.append(AuditType.ALERT, "system", {})                                               # 3
    log.append(AuditType.CLOCK_CHANGED, "system", {"synchronised": True, "step_s": 600.0})  # 4: NTP
    log.append(AuditType.KIOSK_START, "system", unsynced)                                   # 5
    log.append(AuditType.KIOSK_START, "system", synced)                                     # 6
    log.append(AuditType.KIOSK_START, "system", {"clock": {"synchronised": None}})          # 7: cannot tell
    log.append(AuditType.KIOSK_START, "system", unsynced, table_id="t2")                    # 8: another table
    spans = untrusted_spans(log.records(types=[AuditType.KIOSK_START, AuditType.CLOCK_CHANGED]))
    first, second = spans["t1"]
    assert (first.first_seq, first.last_seq, first.synced) == (1, 3, True)
    # a record before the hand-set step is 660 s off, one after it only the NTP step's 600 s
    assert (first.correction(1), first.correction(3)) == (660.0, 600.0)
    assert (second.first_seq, second.last_seq, second.correction(5)) == (5, 5, None)
    assert [(s.first_seq, s.last_seq) for s in spans["t2"]] == [(8, None)]


def test_the_report_page_shows_the_warning_before_the_figures(played, audit):
    stale_boot(audit)
    page = played.get("/review/report?from=2025-01-10T08:00&to=2025-01-10T16:00").get_data(as_text=True)
    assert 'id="report-clock"' in page and "clock was then set +3h 00m 00s" in page
    assert page.index("report-clock") < page.index("report-totals")
    login(played, "super1")                      # the supervisor who signs it sees it too
    page = played.get("/review/report?from=2025-01-10T16:00&to=2025-01-10T23:59").get_data(as_text=True)
    assert "counted in the report of the period on their stamps" in page


def test_a_round_page_explains_times_stamped_before_the_clock_was_set(played, audit):
    first = max(audit.records(types=[AuditType.ROUND_START]), key=lambda r: r.round_no).round_no + 1
    audit.append(AuditType.KIOSK_START, "system", {"clock": {"synchronised": True}})
    audit.append(AuditType.ROUND_START, "vision", {"bets": {}}, round_no=first, ts=at("14:00:00"))
    audit.append(AuditType.ROUND_VOID, "super1", {"reason": "misdeal"}, round_no=first, ts=at("14:01:00"))
    audit.append(AuditType.KIOSK_START, "system", {"clock": {"synchronised": False}})
    base = first + 1
    audit.append(AuditType.ROUND_START, "vision", {"bets": {}}, round_no=base, ts=at("15:30:00"))
    cut = audit.append(AuditType.CLOCK_CHANGED, "system", {"synchronised": True, "was_synchronised": False,
                                                           "step_s": HOURS_3, "message": ""}, ts=at("18:35:00"))
    audit.append(AuditType.ROUND_VOID, "super1", {"reason": "misdeal"}, round_no=base, ts=at("18:36:00"))
    page = played.get(f"/review/round/{base}").get_data(as_text=True)
    assert 'id="round-clock"' in page and f"up to seq {cut.seq - 1}" in page and "set +3h 00m 00s" in page
    assert 'id="round-clock"' not in played.get(f"/review/round/{first}").get_data(as_text=True)


def test_a_day_on_a_clock_never_set_names_a_few_rounds_and_counts_the_rest(tmp_path, runner):
    """QA47 soak F3: after 75 minutes the warning was one line of 208 round numbers."""
    log = AuditLog.in_dir(tmp_path, "t1")
    log.append(AuditType.KIOSK_START, "system", {"clock": {"synchronised": False}}, ts=at("08:00:00"))
    for n in range(1, 41):
        settle(log, n, at("09:00:00") + 60 * n, at("09:00:30") + 60 * n)
    log.close()
    code, out, _ = runner(["audit", "report", "--data-dir", str(tmp_path), "--from", "2025-01-10"])
    warning = next(line for line in out.splitlines() if "not synchronised" in line)
    assert "rounds 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 30 more, to round 40, ended while" in warning
    code, out, _ = runner(["audit", "report", "--data-dir", str(tmp_path), "--from", "2025-01-10", "--json"])
    assert len(json.loads(out)[0]["clock_untrusted"]) == 40          # the JSON names every one


def test_a_step_the_disk_refused_to_record_is_written_at_the_next_look(tmp_path):
    """The watch's baseline moves only once the record is on disk: a full disk at the look that
    saw NTP set the clock used to lose the step and the "now synchronised" for good, and every
    later round read as stamped by an untrusted clock (QA48 F2)."""
    import sqlite3

    import pytest

    log = AuditLog.in_dir(tmp_path, "t1")
    clock = FakeClock(at("07:00:00"), synced=False)
    watch = clock.watch(log)
    watch.look()
    log.append(AuditType.KIOSK_START, "system", {"clock": {"synchronised": False}}, ts=clock.wall())
    real, refusals = log.append, [sqlite3.OperationalError("database or disk is full")]

    def append(*args, **kwargs):
        if refusals:
            raise refusals.pop()
        return real(*args, **kwargs)
    log.append = append
    clock.run(5)
    clock.offset += HOURS_3
    clock.synced = True
    with pytest.raises(sqlite3.OperationalError):
        watch.look()
    assert watch.state()["synchronised"] is True          # the screen shows the clock as it is meanwhile
    clock.run(5)
    record = watch.look()
    assert record is not None and record.type == AuditType.CLOCK_CHANGED
    assert (record.data["step_s"], record.data["synchronised"], record.data["was_synchronised"]) == \
        (HOURS_3, True, False)
    assert record.data["was"].startswith("2025-01-10T07:00:10")
    clock.run(5)
    assert watch.look() is None                           # written once
    [span] = untrusted_spans(log.records(types=[AuditType.KIOSK_START, AuditType.CLOCK_CHANGED]))["t1"]
    assert span.synced and span.last_seq == record.seq - 1


def test_a_round_settled_between_the_step_and_the_watch_seeing_it_keeps_its_stamp(tmp_path, runner):
    """NTP sets the clock up to a look's period before the watch logs it; a round settled in
    between was stamped by the clock as set and is not moved by the step (QA48 F4)."""
    log = AuditLog.in_dir(tmp_path, "t1")
    clock = FakeClock(at("07:00:00"), synced=False)
    watch = clock.watch(log)
    watch.look()
    log.append(AuditType.KIOSK_START, "system", {"clock": watch.state()}, ts=clock.wall())
    clock.run(60)
    settle(log, 1, clock.wall(), clock.wall() + 30)       # before the step: 07:01:00 to 07:01:30, 3 h slow
    clock.run(240)
    clock.offset += HOURS_3                               # NTP answers at 07:05:00 by the old clock
    clock.synced = True
    clock.run(1)
    settle(log, 2, at("09:59:00"), clock.wall())          # settled 1 s after the step, at 10:05:01
    clock.run(3)
    assert watch.look().data["was"].startswith("2025-01-10T07:05:04")
    code, out, _ = runner(["audit", "report", "--data-dir", str(tmp_path), "--from", "2025-01-10", "--json"])
    [report] = json.loads(out)
    assert [(u["round"], u["played"]) for u in report["clock_untrusted"]] == [
        (1, "2025-01-10T10:01:30.000000Z"), (2, "2025-01-10T10:05:01.000000Z")]
    code, out, _ = runner(["audit", "report", "--data-dir", str(tmp_path), "--from", "2025-01-10"])
    assert "WARNING: round 1 (stamped 2025-01-10 07:01:30, ended 2025-01-10 10:01:30) ended while" in out
    [span] = untrusted_spans(log.records(types=[AuditType.KIOSK_START, AuditType.CLOCK_CHANGED]))["t1"]
    assert span.correction(span.first_seq, span.opened) == HOURS_3     # the span's own records are moved
