"""When the clock that stamps the audit log became trustworthy, and how far it jumped.

A Pi has no battery clock: after a power cut it boots at the time it last saved and runs
from there until NTP answers, then the clock steps forward by the whole outage.  Every
record written in between carries a time that is wrong by exactly that step, so a round
dealt at 18:05 is stamped 15:05 and counts in the day shift's books, which may already be
signed.  The kiosk cannot write the right time then, but it can write down what happened
to the clock: ``kiosk_start`` says whether the clock was synchronised, and this watch adds
a ``clock_changed`` record each time that changes or the clock steps, with the step's size.
From those the shift report names the rounds stamped by an untrusted clock and the time
they were really played (:func:`untrusted_spans`).

A step is seen as the wall clock moving against the monotonic clock, which no one sets:
NTP slews small errors in at most 0.5 ms a second, so anything over ``STEP_S`` between two
looks a few seconds apart is a step, a manual ``date -s`` included.
"""

from __future__ import annotations

import bisect
import logging
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterable

from kiosk.audit import AuditLog, AuditRecord, AuditType, log_moment, utc_iso
from kiosk.watchdog import ClockStatus, clock_status

log = logging.getLogger(__name__)
STEP_S = 2.0          # a jump of the wall clock against the monotonic one that is a step, not a slew
PERIOD_S = 5.0        # how often the thread looks; adjtimex is one system call
STATUS_TTL_S = 30.0   # how stale the screen's clock pill may be where nothing else looks


class ClockWatch:
    """The kiosk's view of its clock: ``state()`` for the screen, ``look()`` to log changes.

    Not a thread itself, so that a service built in a test or a tool without one still
    answers ``state()``; :class:`ClockWatchThread` calls ``look()`` while the kiosk runs."""

    def __init__(self, audit: AuditLog | None = None, *, status: Callable[[], ClockStatus] = clock_status,
                 wall: Callable[[], float] = time.time, mono: Callable[[], float] = time.monotonic,
                 step_s: float = STEP_S) -> None:
        self.audit, self.status, self.wall, self.mono, self.step_s = audit, status, wall, mono, step_s
        self._lock = threading.Lock()
        self._state: dict | None = None
        self._looked = 0.0            # monotonic time of the last reading of the status
        # (wall minus monotonic, synchronised) as the log last stood: apart from the screen's
        # state, which shows the clock as it is even while the disk refuses the record of it
        self._baseline: tuple[float, bool | None] | None = None

    def state(self) -> dict:
        """``{"synchronised": bool | None, "message": str}``, read again when older than
        ``STATUS_TTL_S`` (the fallback asks ``timedatectl``, a subprocess)."""
        with self._lock:
            if self._state is None or self.mono() - self._looked > STATUS_TTL_S:
                self._read()
            return dict(self._state)

    def _read(self) -> ClockStatus:
        found = self.status()
        self._state, self._looked = {"synchronised": found.synchronised, "message": found.message}, self.mono()
        return found

    def look(self) -> AuditRecord | None:
        """Read the clock's state and its offset against the monotonic clock; write one
        ``clock_changed`` record if the state changed or the clock stepped since the last
        look (the first look only sets the baseline: ``kiosk_start`` holds that state).

        The baseline moves only once the record is on disk: a look whose record the disk
        refused leaves it, so the next look finds the same step and change and writes them."""
        with self._lock:
            offset = self.wall() - self.mono()
            found = self._read()
            payload = None if self._baseline is None else self._change(found, offset)
            record = None
            if payload is not None and self.audit is not None:
                log.warning("system clock %s", describe_change(payload))
                record = self.audit.append(AuditType.CLOCK_CHANGED, "system", payload, ts=self.wall())
            self._baseline = (offset, found.synchronised)
            return record

    def _change(self, found: ClockStatus, offset: float) -> dict | None:
        """The ``clock_changed`` payload for a look that found ``found`` and ``offset``, None
        where neither differs from the baseline."""
        step = offset - self._baseline[0]
        before = self._baseline[1]
        stepped = abs(step) >= self.step_s
        if not stepped and found.synchronised == before:
            return None
        payload = {"synchronised": found.synchronised, "was_synchronised": before,
                   "step_s": round(step, 3) if stepped else 0.0, "message": found.message}
        if stepped:
            payload["was"] = utc_iso(self.wall() - step)    # what the clock read before it was set
        return payload


class ClockWatchThread(threading.Thread):
    """Looks at the clock every few seconds while the kiosk runs; a failed look (a full disk
    refusing the record) is tried again at the next."""

    def __init__(self, watch: ClockWatch, period_s: float = PERIOD_S) -> None:
        super().__init__(name="clock-watch", daemon=True)
        self.watch, self.period_s = watch, period_s
        self.stop_event = threading.Event()

    def run(self) -> None:
        while not self.stop_event.wait(self.period_s):
            try:
                self.watch.look()
            except Exception:   # a clock check must never take the kiosk down
                log.exception("checking the system clock failed")


def describe_change(payload: dict) -> str:
    """One line for the log and the journal: 'stepped +3h 00m 00s, now synchronised'."""
    parts = []
    if payload.get("step_s"):
        parts.append(f"stepped {signed_duration(float(payload['step_s']))}")
    if payload.get("synchronised") != payload.get("was_synchronised"):
        parts.append({True: "now synchronised", False: "no longer synchronised"}.get(
            payload.get("synchronised"), "synchronisation unknown"))
    return ", ".join(parts) or "checked"


def signed_duration(seconds: float) -> str:
    sign = "-" if seconds < 0 else "+"
    whole = round(abs(seconds))
    hours, rest = divmod(whole, 3600)
    if hours:
        return f"{sign}{hours}h {rest // 60:02d}m {rest % 60:02d}s"
    return f"{sign}{rest // 60}m {rest % 60:02d}s" if rest >= 60 else f"{sign}{abs(seconds):.1f}s"


# --------------------------------------------------------------------------- reading it back


@dataclass(frozen=True)
class UntrustedSpan:
    """Records ``first_seq`` .. ``last_seq`` of one table's log were stamped by a clock not
    known to be right, from ``opened`` (the stamp of the record that opened the span).
    ``steps``: ``(seq, step_s, was)`` of each step logged in the span or at its end, ``was``
    what the clock read just before it (None in logs from before it was written); ``set_at``:
    the (right) time the clock became synchronised, None where the log never says, so that
    a record's true time is its stamp plus every step after it (:meth:`correction`)."""

    table_id: str
    first_seq: int
    last_seq: int | None      # None: to the end of the log
    opened: str
    steps: tuple[tuple[int, float, str | None], ...] = ()
    set_at: str | None = None

    @property
    def synced(self) -> bool:
        """Whether the span ended with the clock synchronised (so its times can be corrected)."""
        return self.set_at is not None

    def holds(self, seq: int) -> bool:
        return self.first_seq <= seq and (self.last_seq is None or seq <= self.last_seq)

    def correction(self, seq: int, ts: str | None = None) -> float | None:
        """Seconds to add to the stamp ``ts`` of record ``seq`` for the time it was written, or
        None where the log never says (the clock was never synchronised in the span).

        A step is logged at the watch's next look, up to ``PERIOD_S`` after it, so a record
        just before the step's record may have been stamped by the clock as set already.  A
        step forward is applied only to records stamped no later than its ``was``: that is the
        old clock's reading at the look, later than every stamp it wrote, while the new clock
        stamped every record after the step later still (by the step, less the few seconds to
        the look; a step smaller than that is misplaced by no more than itself).  A step back
        leaves no such mark, the new clock's stamps falling among the old one's, so it is
        applied to every record before it, as it is where ``ts`` or ``was`` is not known."""
        if not self.synced:
            return None
        return sum(step for at, step, was in self.steps
                   if at > seq and (ts is None or was is None or step < 0 or ts <= was))

    def played_within(self, since: str | None, until: str | None) -> bool:
        """Whether the span's records were written (by the clock as set later) at a time in
        ``since``..``until``, as far as its ends say: from its opening, corrected, to the
        moment the clock was set.  False where the log never says when that was."""
        if not self.synced:
            return False
        began = utc_iso(log_moment(self.opened).timestamp() + (self.correction(self.first_seq, self.opened) or 0.0))
        return (since is None or self.set_at >= since) and (until is None or began <= until)


CLOCK_TYPES = (AuditType.KIOSK_START, AuditType.CLOCK_CHANGED)


def untrusted_spans(records: Iterable[AuditRecord]) -> dict[str, list[UntrustedSpan]]:
    """The spans of each table's log written while its clock said it was not synchronised,
    from its ``kiosk_start`` and ``clock_changed`` records (:data:`CLOCK_TYPES`) in seq order.

    Only an explicit "not synchronised" counts: a machine that cannot tell (no adjtimex, no
    timedatectl) would otherwise mark every round of its life.  A span ends where the clock
    became synchronised, or where the kiosk started again; a log from before
    ``clock_changed`` existed has spans that run to the next start, with no correction."""
    spans: dict[str, list[UntrustedSpan]] = {}
    open_spans: dict[str, tuple[AuditRecord, list]] = {}     # table -> (the opening record, steps so far)

    def close(table: str, last_seq: int | None, set_at: str | None) -> None:
        opening, steps = open_spans.pop(table)
        spans.setdefault(table, []).append(UntrustedSpan(table, opening.seq, last_seq, opening.ts, tuple(steps),
                                                         set_at))

    for r in records:
        changed = r.type == AuditType.CLOCK_CHANGED
        data, damage = r.read()
        if damage:
            # What the clock said is lost with the record: from it on the clock is not known to
            # be right, so the rounds after it are listed as stamped by an untrusted clock (the
            # report names the record) instead of its DamagedRecord refusing the whole report
            # (QA51 review M3).
            data, synced = {}, False
        else:
            synced = data.get("synchronised") if changed else (data.get("clock") or {}).get("synchronised")
        if r.table_id in open_spans:
            step = data.get("step_s") if changed else None
            if isinstance(step, (int, float)) and step:
                was = data.get("was")
                open_spans[r.table_id][1].append((r.seq, float(step), was if isinstance(was, str) else None))
            if not changed:
                close(r.table_id, r.seq - 1, None)
            elif synced is True:
                close(r.table_id, r.seq - 1, r.ts)
        if synced is False and r.table_id not in open_spans:
            open_spans[r.table_id] = (r, [])
    for table in list(open_spans):
        close(table, None, None)
    return spans


def span_of(spans: list[UntrustedSpan], seq: int) -> UntrustedSpan | None:
    """The span (of one table's, in order) holding ``seq``, if any."""
    i = bisect.bisect_right([s.first_seq for s in spans], seq) - 1
    return spans[i] if i >= 0 and spans[i].holds(seq) else None


def untrusted_stamps(log: AuditLog, table_id: str, first_seq: int, last_seq: int) -> dict | None:
    """How a round's page explains its times where some of its records (seqs ``first_seq`` ..
    ``last_seq``) were stamped before the clock was set: ``{"upto_seq", "step"}``, the last
    such record and the step after it (``signed_duration`` text, None where the log never
    says the clock was set)."""
    spans = untrusted_spans(log.records(types=CLOCK_TYPES, table_id=table_id, upto_seq=last_seq))
    for span in spans.get(table_id, []):
        if span.first_seq <= last_seq and (span.last_seq is None or span.last_seq >= first_seq):
            seq = max(first_seq, span.first_seq)
            step = span.correction(seq, next((r.ts for r in log.records(after_seq=seq - 1, upto_seq=seq)), None))
            if step == 0:
                return None             # it was not synchronised, but it was right
            return {"upto_seq": last_seq if span.last_seq is None else min(last_seq, span.last_seq),
                    "step": None if step is None else signed_duration(step)}
    return None
