"""The kiosk can tell the dealer when the clock behind every audit timestamp is not synchronised."""

from __future__ import annotations

import os
import stat
import sys

import pytest

from kiosk.watchdog import ClockStatus, ClockSync, classify_timex, clock_status, parse_timedatectl

STA_UNSYNC = 0x0040
TIME_OK, TIME_ERROR = 0, 5


def test_ntp_disciplined_clock_is_synchronised():
    result = classify_timex(TIME_OK, status_bits=0x2001, maxerror_us=250_000)
    assert result.state is ClockSync.SYNCHRONISED
    assert result.synchronised is True
    assert result.max_error_s == 0.25


def test_unsync_flag_or_time_error_means_not_synchronised():
    assert classify_timex(TIME_OK, STA_UNSYNC, 1_000).state is ClockSync.NOT_SYNCHRONISED
    assert classify_timex(TIME_ERROR, 0, 1_000).state is ClockSync.NOT_SYNCHRONISED


def test_clock_drifting_past_16_seconds_of_error_is_not_synchronised():
    # After NTP stops answering the kernel's error bound grows; timedated gives up at 16 s.
    result = classify_timex(TIME_OK, 0, 16_000_000)
    assert result.state is ClockSync.NOT_SYNCHRONISED
    assert "NOT synchronised" in result.message
    assert result.synchronised is False


@pytest.mark.parametrize(("output", "state"), [
    ("NTPSynchronized=yes\n", ClockSync.SYNCHRONISED),
    ("NTPSynchronized=no\n", ClockSync.NOT_SYNCHRONISED),
    ("", ClockSync.UNKNOWN),
    ("Timezone=UTC\n", ClockSync.UNKNOWN),
])
def test_timedatectl_output_is_read(output, state):
    assert parse_timedatectl(output).state is state


def test_unknown_when_nothing_can_tell(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no timedatectl
    result = clock_status(use_adjtimex=False)
    assert result.state is ClockSync.UNKNOWN
    assert result.synchronised is None
    assert "Cannot tell" in result.message


def _fake_timedatectl(directory, body: str) -> None:
    exe = directory / "timedatectl"
    exe.write_text(f"#!/bin/sh\n{body}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)


def test_timedatectl_is_the_fallback(monkeypatch, tmp_path):
    _fake_timedatectl(tmp_path, 'echo "NTPSynchronized=no"')
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ["PATH"])
    result = clock_status(use_adjtimex=False)
    assert result == ClockStatus(ClockSync.NOT_SYNCHRONISED, "timedatectl", None, "NTPSynchronized=no")


def test_failing_timedatectl_gives_unknown_not_an_error(monkeypatch, tmp_path):
    # In a container without systemd as PID 1 timedatectl exits 1 ("Failed to connect to bus").
    _fake_timedatectl(tmp_path, 'echo "Failed to connect to bus" >&2; exit 1')
    monkeypatch.setenv("PATH", str(tmp_path))
    assert clock_status(use_adjtimex=False).state is ClockSync.UNKNOWN


@pytest.mark.skipif(sys.platform != "linux", reason="adjtimex(2) is Linux-only")
def test_this_machine_answers_from_the_kernel():
    # adjtimex(2) with modes=0 needs no privilege on Linux, so the cheap path must work here.
    result = clock_status()
    assert result.source == "adjtimex"
    assert result.state in (ClockSync.SYNCHRONISED, ClockSync.NOT_SYNCHRONISED)
    assert result.to_json()["state"] == result.state.value
