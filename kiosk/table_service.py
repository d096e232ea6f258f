"""The table as the kiosk runs it: the round machine, the bets, the log and the screen.

One object owns everything that can change money at the table, so every change goes
through one door in one order:

1. the change is made (a card the camera accepted, a bet, a settlement, a correction);
2. it is written to the audit log and is on disk before anyone sees it;
3. a new screen state is published to every browser (server-sent events).

The round machine calls :meth:`TableService._on_machine_events` while holding its lock,
and the service does all its own work under that same lock, so a settlement pressed on
the screen and a card arriving from the camera can never interleave.

A kill -9 (or a power cut) between two rounds loses nothing; in the middle of a round
every accepted card and every bet is already in the log, and on the next start
:meth:`TableService.start` closes that round as ``round_interrupted`` with what it held,
and its bets stand for the cards the camera then reads again (as after a void); the cards
of a round settled or voided before the stop are ignored until they are swept.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import sqlite3
import threading
import time
from collections import deque
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable, Collection, Iterable, Iterator, Mapping

from kiosk.audit import AuditError, AuditLog, AuditType, Entry, canonical_json
from kiosk.db import write_refused
from kiosk.clockwatch import ClockWatch
from kiosk.adjustment_words import adjustment_words, party_name, party_words, standing
from kiosk.rounds import BANKER, TERMINAL_TYPES, fold_round, load_round, round_numbers
from scoring.cards import Card, parse_cards
from scoring.compare import compare
from scoring.errors import NiuniuError
from scoring.evaluate import HandResult, evaluate
from scoring.rules import BankerCover, BankerSelection, Preset, PresetError, load_preset
from scoring.settle import Bet, Settlement, money_shown, money_text, settle_round, unit_places
from vision.record import recording_digests, round_in_name
from vision.round import (CAMERA_KINDS, HAND_SIZE, UNSEEN_LEFT_OVER_S, AlertCode, EventKind, RoundError, RoundEvent,
                          RoundMachine, RoundState)
from vision.table import TableConfig

log = logging.getLogger(__name__)

HISTORY_SIZE = 10
# How many of the newest recording folders a start looks at for one the last run left unsealed.
LEFT_OVER_FOLDERS = 3
# After a restart, how long a settled or voided round's cards are ignored if the camera does
# not show them (swept during the stop); shown, they are ignored until they leave the table.
# The same wait as for a cleared round's cards the camera does not show at Clear.
LEFT_OVER_WAIT_S = UNSEEN_LEFT_OVER_S
# Each camera event: which watch it turns, and to what (None: the event's own ``aim``).
CAMERA_TURNS = {
    EventKind.camera_online: ("online", "online"), EventKind.camera_offline: ("online", "offline"),
    EventKind.camera_mirrored: ("mirror", "mirrored"), EventKind.camera_mirror_cleared: ("mirror", "printed"),
    EventKind.camera_moved: ("aim", None), EventKind.camera_move_cleared: ("aim", "aimed"),
}
FEED_SIZE = 256
MAX_BET = Decimal("1000000000")
# What a round's adjustment is folded from (kiosk.rounds.adjustment): its settlement corrections
# and the records that closed their differences, a few records rather than the round's forty.
ADJUSTMENT_TYPES = (AuditType.SETTLEMENT_CORRECTED, AuditType.ADJUSTMENT_SETTLED)
ROUNDS_PAGE = 500


class TableError(NiuniuError):
    """A dealer or supervisor action the table refuses; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class Approval:
    """Who asked for a supervisor-only action and which supervisor's PIN allowed it."""

    requested_by: str
    approved_by: str


# --------------------------------------------------------------------------- views


def card_view(card: Card, conf: float | None = None, confirm: bool = False) -> dict:
    return {"code": card.code, "rank": card.code[:-1], "suit": card.suit.value, "symbol": card.suit.symbol,
            "red": card.suit.is_red, "conf": None if conf is None else round(float(conf), 3),
            "confirm": bool(confirm)}


def result_view(result: HandResult) -> dict:
    return {"category": str(result.category), "label": result.label, "points": result.points,
            "multiplier": result.multiplier, "bull": [c.code for c in result.bull],
            "rest": [c.code for c in result.rest]}


def money(value: Decimal) -> str:
    """An amount as the log records it (2 places, more where it has them): the records' own
    text, which logs already written hold and must go on reading the same.  What a person
    reads is written to the table's money unit: :func:`shown`."""
    return f"{value:.2f}" if value == value.quantize(Decimal("0.01")) else str(value)


def shown(value: Decimal | str | None, unit: Decimal) -> str | None:
    """An amount as the dealer's screen shows it: to the table's money unit (``unit``, the
    preset's quantum: 3518516 riel, 1.030 dinars), plain text the screen groups itself."""
    return None if value is None else money_shown(value, unit)


# The money in a settlement line (``line_view``, live or as logged) and in a bet.
LINE_MONEY = ("gross", "commission", "net", "amount", "owed", "short")


def shown_line(line: Mapping[str, Any], unit: Decimal) -> dict:
    """A settlement line (``line_view``'s, or one read back from the log) with its figures
    written to the table's money unit, for the screen; the log keeps its own text."""
    view = {k: shown(v, unit) if k in LINE_MONEY and v is not None else v for k, v in line.items()}
    if isinstance(line.get("bet"), Mapping):
        view["bet"] = shown_bet(line["bet"], unit)
    return view


def shown_bet(bet: Mapping[str, Any], unit: Decimal) -> dict:
    return {**bet, "amount": shown(bet.get("amount"), unit)}


def line_view(line: Any, bet: Bet | None = None, banker_bid: int | None = None) -> dict:
    """One seat's settlement as the screen and the log show it.

    ``banker_bid`` is given only at grab-the-banker tables: there the stake was multiplied
    by the bid and the seat's bet multiple too, and whoever pays or checks the amount needs
    to see both factors; everywhere else the line stays exactly as it always was.
    """
    net = Decimal(line.net)
    owed = getattr(line, "owed", None)
    # "unpaid": a win the banker's stack did not reach at all; not a push, which it would read as
    action = "pay" if net > 0 else "collect" if net < 0 else "unpaid" if owed is not None else "none"
    view = {"seat": line.seat, "outcome": str(line.outcome), "multiplier": line.multiplier,
            "gross": money(Decimal(line.gross)), "commission": money(Decimal(line.commission)),
            "net": money(net), "action": action, "amount": money(abs(net)),
            "player": line.player.label, "banker": line.banker.label,
            "category": str(line.player.category)}
    if owed is not None:   # the banker's stack ran out before this win was paid in full
        view.update(owed=money(Decimal(owed)), short=money(Decimal(owed) - Decimal(line.gross)))
    if bet is not None:
        view["bet"] = bet_json(bet, grab=banker_bid is not None)
    if banker_bid is not None:
        multiple = bet.multiple if bet is not None else 1
        view.update(banker_bid=banker_bid, bet_multiple=multiple,
                    hand_multiplier=line.multiplier // (banker_bid * multiple))
    return view


def adjustment_view(adjustment: Mapping[str, Any] | None, round_no: int, unit: Decimal,
                    currency: str = "") -> dict | None:
    """A round's adjustment (:func:`kiosk.rounds.adjustment`) as the dealer's screen shows it:
    per party what the dealer pays or collects, in the table's money unit, who pays whom in
    words (``text``, ``waive_text``: the words are the server's, ``kiosk.adjustment_words``, one
    wording with the shift report's and the round page's), who closed what, and per party where
    its chips stand (``standing``: at Settle, moved since, at the table now, still owed)."""
    if adjustment is None:
        return None
    banking = adjustment.get("banking")

    def said(value: Decimal) -> str:
        return f"{money_shown(value, unit, grouped=True)} {currency}".rstrip()

    def seats(amounts: Mapping[str, str]) -> list[dict]:
        return [{"seat": seat, "action": "pay" if Decimal(d) > 0 else "collect",
                 "amount": shown(abs(Decimal(d)), unit), "difference": shown(d, unit),
                 "text": party_words(seat, d, banking, said)} for seat, d in amounts.items()]
    owed = adjustment["outstanding"]
    return {"round": round_no, "status": adjustment["status"], "basis": adjustment["basis"], "banking": banking,
            "outstanding": seats(owed), "not_recorded": seats(adjustment["not_recorded"]),
            "text": adjustment_words(owed, banking, said, screen=True),
            "waive_text": adjustment_words(owed, banking, said, screen=True, waived=True),
            "records": [{"action": r.get("action"), "by": r.get("actor"), "approved_by": r.get("approved_by"),
                         "ts": r.get("ts"), "reason": r.get("reason") or "", "seats": seats(r.get("difference") or {}),
                         "text": adjustment_words(r.get("difference") or {}, banking, said, screen=True,
                                                  waived=r.get("action") == "waived")}
                        for r in adjustment["records"]],
            "standing": [{**row, **{k: shown(row[k], unit) for k in ("settled", "held", "now", "owed")}}
                         for row in standing(adjustment, said)]}


def correction_view(line: Mapping[str, Any], adjustment: Mapping[str, Any] | None,
                    settle_lines: Mapping[str, Any], unit: Decimal) -> dict:
    """A corrected seat's money box: what is still to pay or collect (the round's adjustment,
    not the last correction's difference), what the seat's chips stand at ("paid": Settle's
    line plus what was paid since; its outcome only while that is still Settle's), and the
    line as corrected.  The banker's box, where a player banks, is drawn from the same
    (``line``: its net as corrected, no outcome)."""
    seat = line["seat"]
    owed = Decimal(((adjustment or {}).get("outstanding") or {}).get(seat, "0"))
    settled = settle_lines.get(seat) or {}
    held = ((adjustment or {}).get("held") or {}).get(seat, settled.get("net"))
    same = held is not None and settled.get("net") is not None and Decimal(held) == Decimal(settled["net"])
    return {"action": "pay" if owed > 0 else "collect" if owed < 0 else "none",
            "amount": shown(abs(owed), unit), "difference": shown(owed, unit),
            "paid_outcome": settled.get("outcome") if same else None, "paid_net": shown(held, unit),
            "outcome": line.get("outcome"), "net": shown(line["net"], unit)}


def lone_card_words(alert: RoundEvent, bets_in: bool) -> str:
    """A ``card_after_round`` as the dealer's screen says it: what to do, not only what was seen.

    The machine's words (the log keeps them) say the card starts no round alone; what the dealer
    does about it is the kiosk's to say.  Bets for the next round open at Settle and close at the
    next deal's first card (QA50 dealing3 H1), so with none entered the card must come off before
    they can go in (QA49 dealing2 M4: "deal on" with bets closed gave a round with none)."""
    finished = "voided" if alert.data.get("state") == RoundState.void else "settled"
    after = alert.round_no + 1
    todo = (f"If it is the next deal's first card, deal on: round {after} has the bets entered; if not, take it "
            "off the table" if bets_in
            else f"No bets are entered for round {after}, and they are closed while it lies there: take it off "
            "the table, enter the bets (Same bets), then deal")
    return (f"{alert.card} lies alone on seat {alert.seat} beside round {alert.round_no}'s cards, {finished} "
            f"without it. {todo}")


def corrected_rounds(log: AuditLog, *, since: str | None = None, until: str | None = None) -> Iterator[int]:
    """Numbers of the rounds with a settlement correction or an adjustment record stamped
    between ``since`` and ``until``, newest first, of every table: asked by record type (the
    log's index; corrections after Settle are few), the caller reads each round of its table."""
    before = None
    while True:
        page = log.round_numbers(since=since, until=until, before=before, limit=ROUNDS_PAGE, types=ADJUSTMENT_TYPES)
        yield from page
        if len(page) < ROUNDS_PAGE:
            return
        before = page[-1]


def adjustment_of(log: AuditLog, round_no: int, table_id: str) -> dict | None:
    """A round's adjustment as the log has it now (None: the round was not corrected after Settle)."""
    records = log.records(round_no=round_no, table_id=table_id, types=ADJUSTMENT_TYPES)
    return fold_round(records)["adjustment"] if records else None


def bet_json(bet: Bet, grab: bool = False) -> dict:
    """A bet for the screen and the log; the multiple only where the preset lets players
    choose one, so records of other tables keep their shape."""
    view = {"amount": money(bet.amount), "kind": bet.kind}
    if grab:
        view["multiple"] = bet.multiple
    return view


def bets_json(bets: Mapping[str, Bet], grab: bool = False) -> dict:
    return {seat: bet_json(bet, grab) for seat, bet in bets.items()}


def bets_from_json(data: Mapping[str, Any]) -> dict[str, Bet]:
    return {seat: Bet(seat, Decimal(str(b["amount"])), b["kind"], int(b.get("multiple", 1)))
            for seat, b in (data or {}).items()}


def is_grab(preset: Preset) -> bool:
    return preset.banker.selection is BankerSelection.GRAB


def choices(values: Iterable[int]) -> str:
    """``1, 2, 3 or 4``: the allowed values as a dealer reads them in an error."""
    names = [str(v) for v in values]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def parse_whole(value: Any) -> int | None:
    """A multiple from the screen arrives as text (``3``, ``x3``, ``×3``); None for anything
    else, so the caller refuses it by naming the allowed values instead of crashing."""
    text = str(value).strip().lower().removeprefix("x").removeprefix("×").strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 3 else None


def _restored(check: Callable[[Any], Any], logged: Any, problems: list[str]) -> Any:
    """A logged bank term (bid, stack) checked as if typed again; None if none was logged, or
    if the table's rules now refuse it (why goes to ``problems``)."""
    if logged is None:
        return None
    try:
        return check(logged)
    except TableError as exc:
        problems.append(str(exc))
        return None


def _finished(folder: Path) -> bool:
    """Whether a recording says it ended normally: an unsealed one may simply predate sealing
    (a release before it, upgraded), not have been cut off by a crash."""
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(meta, dict) and meta.get("ended") is not None and meta.get("interrupted") is False


def _left_by(run, previous: str) -> dict:
    """The seal's words for which run left a recording unsealed (a :class:`kiosk.seals.RunOfRound`,
    or None where the log cannot say): the last run's ending only where the last run recorded it."""
    if run is None:
        # no record of the round (or none before a run began): on a first start there is no run to name
        return {"after_restart": previous if previous == "first start" else "not known"}
    if run.ended is None:
        return {"after_restart": previous, "recorded_in_run": run.start_seq}
    return {"after_restart": run.ended, "recorded_in_run": run.start_seq, "runs_since": run.runs_since}


def edited_keys(old: Any, new: Any, path: str = "") -> list[str]:
    """The settings (dotted, like ``thresholds.k``) whose values differ between two loaded
    table files.  Only keys both hold count: a key only the newer one has is a setting a later
    release added, at its default, and one only the older has a setting it dropped; neither
    is an edit of the file, and logging them as ``config_changed`` at every upgrade would
    hide the edits surveillance looks for."""
    if isinstance(old, dict) and isinstance(new, dict):
        return [key for name in sorted(set(old) & set(new))
                for key in edited_keys(old[name], new[name], f"{path}{name}.")]
    return [] if old == new else [path.rstrip(".")]


def config_digest(config: TableConfig) -> str:
    return hashlib.sha256(canonical_json(config.model_dump(mode="json")).encode()).hexdigest()


def start_refused(path: Path, exc: sqlite3.Error) -> str:
    """One line for an audit log that refused the kiosk's start records: the file, what
    stopped it and the fix, in the words `niuniu check` fails such a file with ("...: the
    kiosk would stop at its first record") and the accounts database's are said in at the
    same start (``kiosk.db.write_refused``).  A full disk has its own (``AuditDiskError``)."""
    what = write_refused(path, exc, again="start the kiosk again") or \
        f"cannot write {path}: {exc}; keep the data directory as it is and run niuniu check on it"
    return f"{what}: the kiosk stopped at its first record"


# --------------------------------------------------------------------------- the service


class TableService:
    """Everything the dealer's screen can see or change at one table."""

    def __init__(self, config: TableConfig, audit: AuditLog, machine: RoundMachine | None = None, *,
                 pipeline: Any = None, detector_info: Mapping[str, str] | None = None,
                 auto_bets: Callable[[Iterable[str]], Mapping[str, Bet]] | None = None,
                 clock: Callable[[], float] = time.time, history_size: int = HISTORY_SIZE) -> None:
        self.config = config
        self.preset = load_preset(config.rules)
        self.grab = is_grab(self.preset)
        self.covered = self.preset.banker_cover is not BankerCover.UNLIMITED   # the banker's stack limits payouts
        self.audit = audit
        self.pipeline = pipeline
        self.detector_info = dict(detector_info or {})
        self.auto_bets = auto_bets
        self.clock = clock
        if machine is None:
            machine = pipeline.machine if pipeline is not None else RoundMachine(config)
        self.machine = machine
        # Rounds are settled here: a table that only looks empty (the dealer's arm over the first
        # card, a camera back on a dark frame, a sweep before Settle) must not end one and drop
        # its bets; it waits for Settle or a supervisor's void.  A round with no bets (a stray
        # card shown before any stake) has nothing to drop: the empty table ends it, as before.
        machine.hold_unsettled = lambda: bool(self._round_bets)
        # One lock for the machine and the service: see the module docstring.
        self._lock: threading.RLock = getattr(machine, "lock", None) or threading.RLock()
        self._pending: dict[str, Bet] = {}
        self._round_bets: dict[str, Bet] = {}
        # The bank bid works like the stakes: chosen for the next round, fixed when it starts.
        self._pending_bid: int | None = None
        self._round_bid: int = self.default_bid
        # So does the banker's stack where it limits what the banker pays (banker.cover);
        # it is entered for each round (a stack changes with every result), never carried over.
        self._pending_stack: Decimal | None = None
        self._round_stack: Decimal | None = None
        self._round_extra: dict[str, Any] = {}  # post-settlement view of the current round
        # Every round of this table whose correction's difference is still owed: round -> its
        # adjustment (kiosk.rounds.adjustment), for the screen whichever round is on the table.
        self._adjustments: dict[int, dict] = {}
        self._history: deque[dict] = deque(maxlen=history_size)
        self._history_size = history_size
        self._damaged_told: set[int] = set()     # seqs of damaged records already logged (_reload_history)
        # The history strip's rounds left out as damaged, in words for the dealer's screen (QA51 review L1:
        # only the journal said why a round was missing from the strip)
        self.history_warning: str | None = None
        # The last turn logged of each camera watch ("online" is unknown until the camera
        # reports), and since when and why the camera is on- or offline.
        self._camera_turns: dict[str, str] = {"online": "unknown", "mirror": "printed", "aim": "aimed"}
        self._camera = {"since": None, "reason": ""}
        self._feed = threading.Condition()
        self._snapshots: deque[tuple[int, str]] = deque(maxlen=FEED_SIZE)
        self._version = 0
        # The versions count from 1 in each kiosk process: a screen left open across a
        # restart tells the new process's states by this (see kiosk.live.events), or it would
        # drop them all until the new count passed the old one.
        self.run = os.urandom(4).hex()
        self._started = False
        self._stopped = False
        self.audit_error: str | None = None
        self.disk_warning: str | None = None    # set by the recording retention thread
        self.forwarder = None    # the audit log's copy to the casino's collector (kiosk.forward), if configured
        self.clock_watch = ClockWatch(audit)    # looked at by a ClockWatchThread while the kiosk runs
        # Seal threads start on the camera thread and on HTTP threads (a manual clear) at once:
        # the list is changed only under its own lock, or one start could drop another's thread
        # and wait_sealed() (at stop) would not wait for that recording's seal.
        self._sealing: list[threading.Thread] = []
        self._sealing_lock = threading.Lock()
        machine.add_gate(self._on_machine_events)
        machine.add_undo_listener(self._publish)
        machine.add_view_listener(self._publish)     # a left-over card swept away: the screen shows them
        recorder = getattr(pipeline, "recorder", None)
        if recorder is not None:
            recorder.on_finished = self.seal_recording
            recorder.on_failed = self.recording_failed

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Recover from the last run, write the start records, publish the first state.

        The log refusing the start's records (another program writing it, a file SQLite opened
        read-only) is one :class:`AuditError` naming the file and the fix, which ``niuniu kiosk``
        prints as its one line and exits on (QA52: SQLite's traceback was all systemd logged)."""
        with self._lock:
            if self._started:
                return
            self._started = True
            try:
                self._write_start()
            except (sqlite3.Error, AuditError) as exc:
                self._started = False     # nothing started: no kiosk_stop is owed for it
                if isinstance(exc, AuditError):     # its own words already (a full disk: AuditDiskError)
                    raise
                raise AuditError(start_refused(self.audit.path, exc)) from exc
            self._ignore_finished_cards()
            self._restore_pending()
            self._reload_history()
            self._load_adjustments()
            self._publish()

    def _write_start(self) -> None:
        """The start's records: a round the last run left open closed, then kiosk_start, the
        table file and the card model.  A reader without its orientation model is said in
        kiosk_start itself, where a review of the day's timeline starts (QA52)."""
        previous = self._recover()
        unsealed = self._seal_left_over(previous)
        last_round = max(round_numbers(self.audit, table_id=self.config.table_id, limit=1) or [0])
        if self.machine.state == RoundState.idle and self.machine.round_no < last_round:
            self.machine.round_no = last_round
        self.clock_watch.look()     # the baseline: kiosk_start says how the clock stands, later changes are logged
        start = {"pid": os.getpid(), "previous_run": previous,
                 "table_id": self.config.table_id, "rules": self.config.rules, "clock": self.clock_sync()}
        if self.detector_info.get("orientation_missing"):
            start["orientation_missing"] = self.detector_info["orientation_missing"]
        if unsealed:
            start["unsealed_recordings"] = unsealed
        self.audit.append(AuditType.KIOSK_START, "system", start)
        self._log_config()
        if self.detector_info:
            self.audit.append(AuditType.MODEL_LOADED, "system", dict(self.detector_info))

    def forward_status(self) -> dict | None:
        """Where the audit log's copy on the casino's collector stands, None where none is set."""
        return self.forwarder.status() if self.forwarder is not None else None

    def stop(self, reason: str = "normal shutdown") -> None:
        self.wait_sealed()          # a recording finished at shutdown is sealed before the stop record
        with self._lock:
            if self._stopped or not self._started:
                return
            self._stopped = True
            self.audit.append(AuditType.KIOSK_STOP, "system", {"reason": reason,
                                                                "round": self.machine.round_no,
                                                                "state": str(self.machine.state)})
            self._publish()

    # ------------------------------------------------------------------ recordings

    def seal_recording(self, folder: Path, meta: dict) -> None:
        """Seal a finished recording in the audit log (the recorder's ``on_finished``).

        The files are hashed on a thread of their own: ~10 MB a round, which the round
        machine's lock (held by whoever reports the clearing frame) should not wait for."""
        thread = threading.Thread(target=self._seal, args=(Path(folder), meta), name=f"seal:{Path(folder).name}",
                                  daemon=True)
        with self._sealing_lock:
            # started before it is listed: wait_sealed() may join whatever the list holds
            thread.start()
            self._sealing = [t for t in self._sealing if t.is_alive()] + [thread]

    def recording_failed(self, round_no: int, data: dict) -> None:
        """Log, under the round, that its recording failed or lost part of itself (the recorder's
        ``on_failed``, once a round): the round is played and settled all the same, and a round
        with no recording is evidence lost, which surveillance must learn from the log, not from
        a dispute (QA51 H4: only the journal said so).  The dealer's screen shows the recorder's
        error until a recording starts again."""
        try:
            self.audit.append(AuditType.RECORDING_FAILED, "system", data, round_no=round_no)
        except (sqlite3.Error, OSError, AuditError) as exc:
            log.error("round %s's recording_failed could not be logged: %s (%s)", round_no, exc, data.get("error"))
            # A disk that refuses the recording often refuses the log too: the screen says so now,
            # not at the table's next write (QA51 review L2).  The writer thread holds no recorder
            # lock here, and nothing holding this lock waits for that thread.
            with self._lock:
                self.audit_error = (f"the audit log could not be written ({exc}); stop the game and call "
                                    "the supervisor: events are not being recorded")
                self._publish()

    def wait_sealed(self, timeout: float = 30.0) -> None:
        """Wait for every seal started so far, and for any a seal being waited on starts meanwhile
        (a recording finished while the kiosk stops), up to ``timeout`` in all."""
        end = time.monotonic() + timeout
        waited: set[threading.Thread] = set()
        while True:
            with self._sealing_lock:
                threads = [t for t in self._sealing if t not in waited]
            if not threads:
                return
            for thread in threads:
                thread.join(max(0.0, end - time.monotonic()))
            waited.update(threads)

    def _seal(self, folder: Path, meta: dict) -> None:
        try:
            files = recording_digests(folder)
            size = sum((folder / name).stat().st_size for name in files)
            data = {"folder": folder.name, "files": files, "bytes": size, "interrupted": bool(meta.get("interrupted"))}
            for key in ("after_restart", "recorded_in_run", "runs_since"):      # a start's seal of a left-over
                if meta.get(key) is not None:
                    data[key] = meta[key]
            self.audit.append(AuditType.RECORDING_SEALED, "system", data, round_no=meta.get("round_no"))
        except Exception:  # an unsealed recording is still a recording: say so, keep the table going
            log.exception("sealing the recording %s in the audit log failed", folder.name)

    def _seal_left_over(self, previous: str) -> dict | None:
        """Seal the recordings the last run stopped in the middle of (a crash, a pulled plug).

        Its recorder never finished them, so nothing sealed them, and a disputed round is
        the likeliest to be the one the kiosk died in.  Sealed now, the files can at least
        be checked from this start on; the seal says it was made after a restart, and how the
        run that recorded the folder ended (not always the last run: QA52 L1), since nothing
        vouches for them between the stop and now.

        Only the newest :data:`LEFT_OVER_FOLDERS` are looked at (:data:`kiosk.seals.OLDER_UNSEALED_WHY`);
        older ones with no seal (a release before sealing made them) are counted, for the
        kiosk_start record and the journal: returned as ``{"count", "oldest", "newest", "why"}``,
        None where there are none."""
        from kiosk.seals import OLDER_UNSEALED_WHY, KioskRuns

        root = getattr(getattr(self.pipeline, "recorder", None), "root", None)
        if root is None or not Path(root).is_dir():
            return None
        table = self.config.table_id
        every = sorted((p for p in Path(root).iterdir() if p.is_dir() and round_in_name(p.name) is not None),
                       key=lambda p: p.name)
        runs = KioskRuns(self.audit, table)
        for folder in every[-LEFT_OVER_FOLDERS:]:
            round_no = round_in_name(folder.name)
            seals = [s.read() for s in self.audit.records(round_no=round_no, table_id=table,
                                                          types=[AuditType.RECORDING_SEALED])]
            if any(data is None for data, _ in seals):
                # A seal that cannot be read may be this folder's: sealed again, the files as they
                # are now would stand in for the ones sealed then, and the package and the round page
                # would take the new seal (QA51 review L3).  Left for check-recordings to name.
                log.warning("round %s has a recording seal that cannot be read: %s is not sealed again; "
                            "run `niuniu audit check-recordings` and call surveillance", round_no, folder)
                continue
            if not any(data.get("folder") == folder.name for data, _ in seals):
                self.seal_recording(folder, {"round_no": round_no, "interrupted": not _finished(folder),
                                             **_left_by(runs.of_round(round_no), previous)})
        older = every[:-LEFT_OVER_FOLDERS]
        if not older:
            return None
        # Rounds with any seal, from the index alone (one query, no record read: a year's seals are
        # not parsed at every start); a round with no seal at all is what the count is about.
        last = max(round_in_name(p.name) for p in older)
        sealed = set(self.audit.round_numbers(table_id=table, types=[AuditType.RECORDING_SEALED],
                                              before=last + 1, limit=last + 1))
        older = [p.name for p in older if round_in_name(p.name) not in sealed]
        if not older:
            return None
        log.warning("%d older recording(s) have no seal (%s to %s) and are not sealed now: %s; "
                    "`niuniu audit check-recordings` names them", len(older), older[0], older[-1], OLDER_UNSEALED_WHY)
        return {"count": len(older), "oldest": older[0], "newest": older[-1], "why": OLDER_UNSEALED_WHY}

    def _recover(self) -> str:
        """Close a round the last process left open, and say how the last run ended."""
        table = self.config.table_id
        starts = self.audit.records(types=[AuditType.KIOSK_START, AuditType.KIOSK_STOP], table_id=table,
                                    newest_first=True, limit=1)
        previous = "first start" if not starts else (
            "clean shutdown" if starts[0].type == AuditType.KIOSK_STOP else "crashed or killed")
        numbers = round_numbers(self.audit, table_id=table, limit=1)
        if not numbers:
            return previous
        records = self.audit.records(round_no=numbers[0], table_id=table)
        if any(r.type in TERMINAL_TYPES for r in records):
            return previous
        summary = fold_round(records)
        entries = [Entry(AuditType.ROUND_INTERRUPTED, "system", {
            "reason": f"the kiosk stopped in the middle of this round (last run: {previous}); nothing was "
                      "settled, the cards below were accepted before it stopped",
            "hands": summary["hands"], "bets": summary["bets"], "last_state": summary["status"],
            "alerts": len(summary["alerts"]),
        }, numbers[0])]
        # (a round_start damaged on the disk: its bets cannot stand, the round is closed all the same)
        start = next((data for r in records if r.type == AuditType.ROUND_START
                      for data in (r.read()[0],) if data is not None), {})
        if start.get("bets"):
            # The chips are still on the layout and the cards still on the table: the bets stand
            # for the deal the camera now reads again, as after a void (checked against the
            # table's rules by _restore_pending, like any bets taken back after a restart).
            entries.append(Entry(AuditType.BETS_PLACED, "system", {
                "change": {"stand_from_interrupted": numbers[0]},
                **{key: start[key] for key in ("bets", "banker_bid", "banker_stack") if key in start},
                "for_round": numbers[0] + 1}, numbers[0]))
        self.audit.append_many(entries)
        return previous

    def _ignore_finished_cards(self) -> None:
        """Cards of a round settled or voided before the last stop are still on the table
        until the dealer sweeps them: read again after a restart they would start a round
        nobody dealt (a paid hand shown as a new, unpaid one; a misdeal played)."""
        table = self.config.table_id
        numbers = round_numbers(self.audit, table_id=table, limit=1)
        if not numbers:
            return
        summary = fold_round(self.audit.records(round_no=numbers[0], table_id=table))
        # Settled or voided, cleared since or not: a Clear pressed with the cards still lying
        # there leaves them on the table all the same (the machine knew them as left-overs,
        # a restart does not).
        if summary["status"] in ("settled", "void"):
            # Only while the camera may still show them: swept while the kiosk was down, they
            # must not stay ignored and hide the next deal of the same card to the same seat.
            # The tracker shows a card in view within its window (k of n frames); the wait
            # leaves room for a camera warming up or a hand over the layout at the restart.
            cam = self.config.camera
            self.machine.ignore_present(((seat, code) for seat, codes in summary["hands"].items() for code in codes),
                                        forget_after=max(4 * self.config.thresholds.n,
                                                         round(cam.fps * LEFT_OVER_WAIT_S)))

    def _restore_pending(self) -> None:
        """Take back the stakes (and bank bid) the dealer entered for the next round.

        Every bet change writes the whole set to the log, so a restart need not lose a
        player's bet or make the dealer type them again.  They come back only if they
        are still for the next round and pass the checks a dealer's entry passes under
        the table's current rules (the config may have changed); otherwise the log says
        why they were dropped.
        """
        last = self.audit.records(types=[AuditType.BETS_PLACED], table_id=self.config.table_id,
                                  newest_first=True, limit=1)
        data, damage = last[0].read() if last else (None, None)
        if damage:
            log.warning("the bets entered for the next round are not restored: their bets_placed record (seq %s) "
                        "cannot be read (%s); enter them again, run niuniu audit verify and call surveillance",
                        last[0].seq, damage)
            return
        if data is None or data.get("auto_bets") or data.get("for_round") != self.machine.round_no + 1:
            return
        bets, problems = {}, []
        for seat, logged in (data.get("bets") or {}).items():
            try:
                self._check_seat(seat)
                bet = self._new_bet(seat, logged["amount"], logged["kind"], logged.get("multiple"))
            except TableError as exc:
                problems.append(str(exc))
            except (KeyError, TypeError, AttributeError) as exc:
                problems.append(f"seat {seat}: the logged bet cannot be read ({exc!r})")
            else:
                if bet is not None:
                    bets[seat] = bet
        bid = _restored(self._check_bid, data.get("banker_bid"), problems) if self.grab else None
        stack = _restored(self._check_stack, data.get("banker_stack"), problems) if self.covered else None
        if problems:
            self.audit.append(AuditType.BETS_PLACED, "system", {
                "change": {"restored": False, "reason": f"{'; '.join(problems)}; enter the bets again"},
                **self._bets_record({}, self.default_bid, None), "for_round": self.machine.round_no + 1})
            return
        self._pending = bets
        self._pending_stack = stack
        if bid is not None and bid != self.default_bid:
            self._pending_bid = bid
        if bets:
            self.machine.set_active_seats(sorted(bets))
        self.audit.append(AuditType.BETS_PLACED, "system", {
            "change": {"restored": True, "from_seq": last[0].seq},
            **self._next_bets_record(),
            "for_round": self.machine.round_no + 1})

    def _log_config(self) -> None:
        digest = config_digest(self.config)
        last = self.audit.records(types=[AuditType.CONFIG_LOADED], table_id=self.config.table_id,
                                  newest_first=True, limit=1)
        current = {"sha256": digest, "rules": self.config.rules, "currency": self.config.currency,
                   "seats": list(self.config.seat_names), "config": self.config.model_dump(mode="json")}
        old, damage = last[0].read() if last else (None, None)
        if damage:
            # what the table file was is lost with the record: an edit made while the kiosk was
            # down is still said, as "changed from a configuration that cannot be read"
            log.warning("the last config_loaded record (seq %s) cannot be read (%s): whether the table file was "
                        "edited since cannot be told; run niuniu audit verify and call surveillance", last[0].seq,
                        damage)
            self.audit.append(AuditType.CONFIG_CHANGED, "system", {
                "old_sha256": None, "new_sha256": digest, "keys": [], "old_rules": None, "new_rules": self.config.rules,
                "previous_unreadable": {"seq": last[0].seq, "problem": damage}})
        elif old is not None and old.get("sha256") != digest:
            changed = edited_keys(old.get("config", {}), current["config"])
            if changed:     # else an upgrade's new settings, at their defaults: no one edited the file
                self.audit.append(AuditType.CONFIG_CHANGED, "system", {
                    "old_sha256": old.get("sha256"), "new_sha256": digest, "keys": changed,
                    "old_rules": old.get("rules"), "new_rules": self.config.rules})
        self.audit.append(AuditType.CONFIG_LOADED, "system", current)

    # ------------------------------------------------------------------ camera side

    def observe(self, hands, frame_no: int, ts: float | None = None) -> list[RoundEvent]:
        """Feed the tracker's view of one frame (tests and tools without a pipeline)."""
        if isinstance(hands, (list, tuple)):
            hands = {h.seat: h for h in hands}
        with self._lock:
            if self._stopped:       # the kiosk is stopping: nothing is logged after kiosk_stop
                return []
            return self.machine.observe(hands, frame_no, self.clock() if ts is None else ts)

    def on_pipeline_event(self, event: RoundEvent | Iterable[RoundEvent]) -> None:
        """Camera status from outside the round machine (tools and tests without a pipeline).

        A service built on a pipeline hears the camera through the machine's listener, so
        nothing should wire this to that pipeline's ``on_event`` as well.
        """
        events = [event] if isinstance(event, RoundEvent) else list(event)
        for ev in events:
            if ev.kind in CAMERA_KINDS:
                self._camera_event(ev)

    def _camera_event(self, ev: RoundEvent) -> None:
        """Log each camera turn once, even if a tool repeats one (``on_pipeline_event``)."""
        watch, state = CAMERA_TURNS[ev.kind]
        state = state or ev.data.get("aim", "moved")      # a camera_moved is moved or lost (vision.aim)
        with self._lock:
            if self._camera_turns.get(watch) == state:
                return
            # On the log first: a turn the log refused (disk full) is not taken as logged, so
            # the camera's next report of it is logged then.
            self.audit.append(AuditType(str(ev.kind)), "camera", {"frame_no": ev.frame_no, **ev.data}, ts=ev.ts)
            self._camera_turns[watch] = state
            if watch == "online":
                self._camera = {"since": ev.ts, "reason": ev.data.get("reason", "")}
            self._publish()

    def _on_machine_events(self, events: list[RoundEvent]) -> None:
        """Every change the round machine makes, all its events at once, under its lock.

        The machine's gate: the change's records go to the log in one transaction, and if
        the log cannot be written (disk full, disk gone) the screen raises an alarm, the bets
        are put back as they were and the machine undoes the change, so nobody settles money
        that is not on record and a frame or a settle tried again is logged once.
        """
        with self._lock:
            for ev in events:
                if ev.kind in CAMERA_KINDS:
                    self._camera_event(ev)
            saved = self._bets_state()
            entries: list[Entry] = []
            next_seats = []     # at each clearing: the seats of the next round's bets, as they stood then
            try:
                for ev in events:
                    if ev.kind not in CAMERA_KINDS:
                        entries.extend(self._entries_for(ev))
                    if ev.kind == EventKind.round_cleared:
                        next_seats.append(sorted(self._pending) if self._pending else None)
                if entries:
                    self.audit.append_many(entries)
            except (sqlite3.Error, OSError) as exc:
                self._restore_bets_state(saved)
                self.audit_error = (f"the audit log could not be written ({exc}); stop the game and call "
                                    "the supervisor: events are not being recorded")
                # published once the machine has undone the change (add_undo_listener): now
                # the screen would show the refused change as done (a settle as SETTLED)
                raise AuditError(self.audit_error) from None
            except BaseException:
                self._restore_bets_state(saved)     # the machine undoes the change whatever failed
                raise
            if entries:     # a write went through: the log takes records again
                self.audit_error = None
            kinds = {ev.kind for ev in events}
            if EventKind.round_start in kinds:
                self._round_extra = {}
            for seats in next_seats:
                # The seats that play the next round are the next round's bets (or, with
                # none yet, whoever gets cards), never the last round's.
                self.machine.set_active_seats(seats)
            if kinds & {EventKind.round_settled, EventKind.round_void, EventKind.round_cleared}:
                self._reload_history()
            self._publish()

    def _bets_state(self) -> tuple:
        """What ``_entries_for`` moves between the next round and this one (round start, void)."""
        return (dict(self._pending), dict(self._round_bets), self._pending_bid, self._round_bid,
                self._pending_stack, self._round_stack)

    def _restore_bets_state(self, saved: tuple) -> None:
        (self._pending, self._round_bets, self._pending_bid, self._round_bid,
         self._pending_stack, self._round_stack) = saved

    def _entries_for(self, ev: RoundEvent) -> list[Entry]:
        kind, rn, data = ev.kind, ev.round_no, dict(ev.data)
        actor = data.pop("actor", None) or ("vision" if not ev.is_manual else "system")
        base = {"frame_no": ev.frame_no}
        if kind == EventKind.round_start:
            self._round_bets = dict(self._pending)
            self._pending = {}
            self._round_bid = self._pending_bid or self.default_bid
            self._pending_bid = None
            self._round_stack, self._pending_stack = self._pending_stack, None
            return [Entry(AuditType.ROUND_START, actor, {**base, **data, **self._round_bets_record()}, rn, ev.ts)]
        if kind == EventKind.card_accepted:
            payload = {**base, "seat": ev.seat, "card": ev.card,
                       "confidence": round(float(data.pop("confidence", 0.0)), 4), **data}
            return [Entry(AuditType.CARD_ACCEPTED, actor, payload, rn, ev.ts)]
        if kind == EventKind.card_removed:
            return [Entry(AuditType.CARD_REMOVED, actor, {**base, "seat": ev.seat, "card": ev.card, **data}, rn, ev.ts)]
        if kind == EventKind.round_complete:
            hands = {seat: [c.code for c in hand.cards] for seat, hand in self.machine.hands.items()}
            entries = [Entry(AuditType.ROUND_COMPLETE, actor, {**base, **data, "hands": hands,
                                                               "results": self._results_json(hands)}, rn, ev.ts)]
            if not self._round_bets and self.auto_bets is not None:
                # Demo mode only: default bets on every seat that was dealt a hand.
                seats = [s for s, c in hands.items() if s != "banker" and len(c) == 5]
                self._round_bets = dict(self.auto_bets(seats))
                entries.append(Entry(AuditType.BETS_PLACED, "demo", {
                    **self._round_bets_record(), "auto_bets": True, "for_round": rn},
                    rn, ev.ts))
            return entries
        if kind == EventKind.round_settled:
            hands = {seat: [c.code for c in hand.cards] for seat, hand in self.machine.hands.items()}
            settlement: Settlement = self.machine.settlement
            bets = dict(self._round_bets)
            entries = [Entry(AuditType.ROUND_SETTLED, actor,
                             {**base, **data, "hands": hands, "results": self._results_json(hands),
                              **self._round_bets_record()}, rn, ev.ts)]
            for line in settlement.lines:
                entries.append(Entry(AuditType.SETTLEMENT_LINE, actor,
                                     self._line_view(line, bets.get(line.seat), settlement.banker_bid), rn, ev.ts))
            return entries
        if kind == EventKind.card_corrected:
            payload = {**base, "seat": ev.seat, **data, "approved_by": self._round_extra.get("approver")}
            return [Entry(AuditType.CARD_CORRECTED, actor, payload, rn, ev.ts)]
        if kind == EventKind.round_void:
            payload = {**base, **data, "approved_by": self._round_extra.get("approver"),
                       **self._round_bets_record()}
            entries = [Entry(AuditType.ROUND_VOID, actor, payload, rn, ev.ts)]
            if self._round_bets and not self._pending:
                # A void is a misdeal: the chips stay on the layout and stand for the deal
                # again, so they are the next round's bets until the dealer changes them.
                self._pending, self._pending_bid = dict(self._round_bets), self._round_bid
                self._pending_stack = self._pending_stack or self._round_stack    # the same chips, undealt
                entries.append(Entry(AuditType.BETS_PLACED, "system", {
                    "change": {"stand_from_void": rn}, **self._next_bets_record(),
                    "for_round": rn + 1}, rn, ev.ts))
            return entries
        if kind == EventKind.round_cleared:
            return [Entry(AuditType.ROUND_CLEARED, actor, {**base, **data}, rn, ev.ts)]
        if kind == EventKind.alert:
            return [Entry(AuditType.ALERT, actor, {**base, "seat": ev.seat, "card": ev.card, **data}, rn, ev.ts)]
        return [Entry(str(kind), actor, {**base, "seat": ev.seat, "card": ev.card, **data}, rn, ev.ts)]

    def _bets_record(self, bets: Mapping[str, Bet], bid: int, stack: Decimal | None) -> dict:
        """The bets part of a log record; a grab table's bank bid goes with them, since the
        bid multiplies every one of them, and the banker's stack where it limits what they win."""
        record: dict[str, Any] = {"bets": bets_json(bets, self.grab)}
        if self.grab:
            record["banker_bid"] = bid
        if self.covered:
            record["banker_stack"] = money(stack) if stack is not None else None
        return record

    def _next_bets_record(self) -> dict:
        return self._bets_record(self._pending, self._pending_bid or self.default_bid, self._pending_stack)

    def _round_bets_record(self) -> dict:
        return self._bets_record(self._round_bets, self._round_bid, self._round_stack)

    @staticmethod
    def _open_alerts(alerts: Iterable[RoundEvent], hands: Mapping[str, list[str]],
                     absent: set[tuple[str, str]] = frozenset(), round_no: int = 0,
                     doubtful: set[tuple[str, str]] = frozenset(),
                     changed: Mapping[tuple[str, str], str | None] = {}, unsettled: bool = True,
                     bets_in: bool = False, lone: Collection[tuple[str, str, int | None]] = ()) -> list[dict]:
        """The round's alerts the dealer still has to act on.

        A sixth card taken off, a duplicate corrected, a card that left its seat seen there
        again (or taken off the hand by a correction) is fixed: left on the screen it reads as
        a fault still there, and a dealer working fast stops trusting the alerts.  The audit
        log and the round's history keep every alert raised.  ``bets_in``: the next round's
        bets are entered (a lone card after the round is told what to do about them).  ``changed``:
        each card read as another and not yet answered -> the reading still open; an alert for a
        reading a person already answered stays answered (QA49 dealing2 L2: it came back beside
        the new one when the card was later read as a third card).  ``lone``: (seat, card, frame
        first seen) of each card lying alone on the finished round's table now (:meth:`_lone_now`): a
        ``card_after_round`` told the dealer to take its card off, and stayed after it was (the
        dealer did as told and still read "take it off"); put back, the card is a new sighting,
        alerted again by the machine if it lies there alone again, not the old alert shown twice."""
        def fixed(alert: RoundEvent) -> bool:
            code = alert.data.get("code")
            if code == AlertCode.too_many_cards:
                return len(hands.get(alert.seat or "", ())) <= HAND_SIZE
            if code == AlertCode.duplicate_card:
                return sum(cards.count(alert.card) for cards in hands.values()) <= 1
            if code == AlertCode.card_removed_before_settlement:
                return (alert.seat, alert.card) not in absent
            if code == AlertCode.card_reread:
                return (alert.seat, alert.card) not in doubtful     # confirmed or corrected
            if code == AlertCode.card_changed:
                key = (alert.seat, alert.card)                      # confirmed or corrected
                return key not in changed or changed[key] not in (None, alert.data.get("read_as"))
            if code == AlertCode.card_after_round:
                return (alert.seat, alert.card, alert.data.get("since_frame")) not in lone
            return False
        listed = [{"code": a.data.get("code"), "seat": a.seat, "card": a.card,
                   "message": lone_card_words(a, bets_in) if a.data.get("code") == AlertCode.card_after_round
                   else a.data.get("message")}
                  for a in alerts if not fixed(a)]
        dealt = sum(len(cards) for cards in hands.values())
        if unsettled and len(absent) > 1 and len(absent) == dealt:
            # (a settled round's cards swept while the next deal's first lies there are no fault:
            # QA49 dealing2 M7 read "settle it ... or void it" seconds after Settle)
            # a card a line would bury what the dealer must do under fifteen lines
            gone = [a for a in listed if a["code"] == AlertCode.card_removed_before_settlement]
            listed = [a for a in listed if a not in gone] + [{
                "code": "table_empty_unsettled", "seat": None, "card": None,
                "message": f"every card left the table before round {round_no} was settled: settle it on the "
                           "cards shown if they are what was dealt, or call a supervisor to void it (its bets "
                           "then stand for the deal again)"}]
        return listed

    def _lone_now(self) -> set[tuple[str, str, int | None]]:
        """The cards a ``card_after_round`` may be about that lie on the table now, as the alert
        names them: (seat, card, the frame it was first seen alone).  An alert naming another frame
        was about an earlier sighting of the card, taken off since (rules 6 on); one with no frame (rules 5, before the
        machine named it) is about its card for as long as that card lies there."""
        m = self.machine
        return ({(seat, code, since) for seat, code, since in m.waiting_cards}
                | {(seat, code, None) for seat, code in m.next_deal_cards})

    def _line_view(self, line: Any, bet: Bet | None, bid: int, preset: Preset | None = None) -> dict:
        grab = self.grab if preset is None else is_grab(preset)
        return line_view(line, bet, bid if grab else None)

    def _results_json(self, hands: Mapping[str, list[str]], preset: Preset | None = None) -> dict:
        out = {}
        for seat, codes in hands.items():
            result = self._evaluate(codes, preset)
            if result is not None:
                out[seat] = result.to_json()
        return out

    def _evaluate(self, codes, preset: Preset | None = None) -> HandResult | None:
        if len(codes) != 5:
            return None
        try:
            return evaluate(list(codes), preset or self.preset)
        except NiuniuError:
            return None

    # ------------------------------------------------------------------ dealer actions

    def bet_kinds(self) -> tuple[str, ...]:
        return self.preset.bet_kinds

    def can_take_bets(self) -> bool:
        """Whether the dealer may enter or change bets, the bid and the stack now: the buttons, and
        the refusal of a late entry.  Bets are for the next round; they are open whenever no round
        is being dealt and no card of the next deal lies on the table.

        Open from Settle (and a void) on, not only once the table is cleared: a dealer working
        fast lays the next deal's first card before the sweep, and with bets closed until the
        kiosk cleared the round that round began with none (QA49 dealing2 M4).  What is entered
        waits in the next round's bets (``_pending``); the round on the table keeps its own, so
        a settled round's stakes can never change after Settle.  They close at the next deal's first
        card, though that round may start cards later (QA50 dealing3 H1: stakes raised with cards
        seen became the round's): :meth:`_next_deal_shown`.  Which round the chips stand for is
        another question, :meth:`_chips_for_next_round`: closed, they are still the next round's."""
        return self._chips_for_next_round() and self._next_deal_shown() is None

    def _chips_for_next_round(self) -> bool:
        """Whether the bets, bid and stack the screen shows are the next round's, not the round on
        the table's: so whenever no round is being dealt, a settled or voided one on the table too
        (its own stakes are in its payout lines).  Not whether they may be changed now
        (:meth:`can_take_bets`): they stay the next round's, and are marked so, while its first
        cards close them (unmarked, a settled round's screen showed the next round's bid as its own)."""
        return self.machine.state in (RoundState.idle, RoundState.cleared, RoundState.settled, RoundState.void)

    def _next_deal_shown(self) -> str | None:
        """Where the next deal's cards lie on a table showing no round being dealt (None: none)."""
        cards = self.machine.next_deal_cards
        if not cards:
            return None
        where = ", ".join(f"seat {seat}: {code}" for seat, code in cards[:3]) + (", ..." if len(cards) > 3 else "")
        return f"the next deal's cards are on the table ({where})"

    def _closed_words(self, what: str, enter: str) -> str:
        """Why ``what`` cannot be entered now, and when it can."""
        if not self._chips_for_next_round():
            return (f"{what} closed: round {self.machine.round_no} is {self.machine.state}; "
                    f"{enter} for the next round when this one is settled or voided")
        return (f"{what} closed: {self._next_deal_shown()}; round {self.machine.round_no + 1} starts with "
                f"the cards dealt; {enter} before the next deal")

    def _check_running(self) -> None:
        """Refuse an action once :meth:`stop` has run (checked under the lock, which ``stop``
        holds while it writes ``kiosk_stop``): nothing may be done or logged after that record."""
        if self._stopped:
            raise TableError("the kiosk is stopping; nothing more can be done at this table until it is "
                             "started again")

    def _check_bets_open(self) -> None:
        if not self.can_take_bets():
            raise TableError(self._closed_words("bets are", "enter bets"))

    @property
    def default_bid(self) -> int:
        """Until the dealer enters a bid the bank plays at the preset's lowest, as
        :func:`scoring.banker.grab_banker` does when nobody grabs (1 at every other table)."""
        return self.preset.banker.bids[0]

    @property
    def default_multiple(self) -> int:
        allowed = self.preset.banker.bet_multiples
        return 1 if 1 in allowed else allowed[0]

    def _parse_multiple(self, raw: Any, seat: str) -> int:
        """The seat's bet multiple, checked before anything changes so a wrong tap costs
        nothing but the error (the stakes already entered stay as they were)."""
        if raw is None or not str(raw).strip():
            return self.default_multiple
        value = parse_whole(raw)
        if not self.grab:
            if value == 1:
                return 1
            raise TableError(f"seat {seat}: bet multiple {str(raw).strip()} is not allowed at {self.preset.name}: "
                             "the preset has no bet multiples (one stake per player); leave the multiple out")
        allowed = self.preset.banker.bet_multiples
        if value not in allowed:
            raise TableError(f"seat {seat}: bet multiple {str(raw).strip()!r} is not allowed at "
                             f"{self.preset.name}; choose {choices(allowed)}")
        return value

    def _check_bid(self, bid: Any) -> int:
        value = parse_whole(bid) if bid is not None else None
        allowed = self.preset.banker.bids
        if value not in allowed:
            raise TableError(f"bank bid {str(bid if bid is not None else '').strip()!r} is not allowed at "
                             f"{self.preset.name}; choose {choices(allowed)}")
        return value

    def _check_seat(self, seat: str) -> None:
        if seat not in self.config.player_seats:
            raise TableError(f"seat {seat!r} is not a player seat at this table "
                             f"({', '.join(self.config.player_seats)})")

    def _new_bet(self, seat: str, amount: Any, kind: str | None, multiple: Any) -> Bet | None:
        """The bet a dealer's entry stands for (None: no stake), checked against the
        table's rules before anything changes."""
        unit = self.preset.commission_quantum
        value = parse_amount(amount, seat, unit=unit)
        if value is None:
            return None
        if value % unit:    # refused now, not when the round is settled with the cards down
            raise TableError(f"bet on seat {seat}: {money(value)} is not a whole number of the table's money unit "
                             f"{money_text(unit)} ({self.preset.name})")
        limits = self.config.bet_limits
        if limits and not limits.minimum <= value <= limits.maximum:
            edge = "below the table minimum" if value < limits.minimum else "above the table maximum"
            raise TableError(f"bet on seat {seat}: {money_shown(value, unit, grouped=True)} is {edge} "
                             f"({money_shown(limits.minimum, unit, grouped=True)} to "
                             f"{money_shown(limits.maximum, unit, grouped=True)} {self.config.currency})")
        times = self._parse_multiple(multiple, seat)
        kind = kind or self.preset.bet_kinds[0]
        if kind not in self.preset.bet_kinds:
            raise TableError(f"bet kind {kind!r} is not offered by {self.preset.name}; "
                             f"use {' or '.join(self.preset.bet_kinds)}")
        return Bet(seat, value, kind, times)

    def _bets_to_repeat(self) -> tuple[int, dict[str, Bet]] | None:
        """The newest settled round's bets on seats still without one (None: nothing to place)."""
        for summary in self._history:    # newest first
            if summary["status"] == "settled" and summary["bets"]:
                bets = {seat: bet for seat, bet in bets_from_json(summary["bets"]).items()
                        if seat not in self._pending}
                return (summary["round"], bets) if bets else None
        return None

    def repeat_bets(self, actor: str) -> dict[str, Bet]:
        """Place the last settled round's bets again on every seat that has none yet.

        The same players mostly stake the same, and typing each seat's stake again is the
        slowest part of a busy dealer's round.  Each bet is checked as if typed; if one no
        longer fits the table (a seat or bet kind gone since), nothing is placed."""
        with self._lock:
            self._check_running()
            self._check_bets_open()
            found = self._bets_to_repeat()
            if found is None:
                raise TableError("there are no bets to repeat: no settled round had bets on a seat that has none now")
            number, bets = found
            placed = {}
            for seat, bet in bets.items():
                self._check_seat(seat)
                placed[seat] = self._new_bet(seat, bet.amount, bet.kind, bet.multiple)
            pending = {**self._pending, **placed}
            # On the log first, then in memory: a bet the log refused (disk full) is not placed.
            self.audit.append(AuditType.BETS_PLACED, actor, {
                "change": {"repeated_from": number, "seats": sorted(placed)},
                **self._bets_record(pending, self._pending_bid or self.default_bid, self._pending_stack),
                "for_round": self.machine.round_no + 1})
            self._pending = pending
            self.machine.set_active_seats(sorted(pending))
            self._publish()
            return dict(self._pending)

    def set_bid(self, bid: Any, actor: str) -> int:
        """Enter the bank bid for the next round at a grab-the-banker table.

        It closes with the stakes, for the same reason: it multiplies every seat's win or
        loss, so choosing it after the cards are seen would be past-posting.
        """
        with self._lock:
            self._check_running()
            if not self.grab:
                raise TableError(f"preset {self.preset.name} takes no bank bids: its banker is chosen by "
                                 f"{self.preset.banker.selection.value}")
            if not self.can_take_bets():
                raise TableError(self._closed_words("bids are", "enter the bank bid"))
            value = self._check_bid(bid)
            # On the log first, then in memory: a bid the log refused (disk full) is not entered.
            self.audit.append(AuditType.BETS_PLACED, actor, {
                "change": {"banker_bid": value}, **self._bets_record(self._pending, value, self._pending_stack),
                "for_round": self.machine.round_no + 1})
            self._pending_bid = value
            self._publish()
            return value

    def _check_stack(self, amount: Any) -> Decimal | None:
        """The stack typed (None: not entered).  Unlike a stake, 0 is a stack: a banker with
        nothing left still banks the losers' chips, and must not read as "not entered"."""
        unit = self.preset.commission_quantum
        value = parse_amount(amount, "banker", "the banker's stack", unit=unit)
        if value is None and amount is not None and str(amount).strip():
            value = Decimal("0.00")
        if value is not None and value % unit:
            raise TableError(f"the banker's stack {money(value)} is not a whole number of the table's money unit "
                             f"{money_text(unit)} ({self.preset.name})")
        return value

    @property
    def next_stack(self) -> Decimal | None:
        """The banker's stack entered for the next round, None while not entered."""
        return self._pending_stack

    def set_stack(self, amount: Any, actor: str) -> Decimal | None:
        """Enter what the player-banker holds for the next round (empty: not entered yet),
        where the preset pays winners only as far as it goes (``banker.cover``).

        It closes with the stakes: the stack caps what the banker pays, so one entered
        after the cards are seen could be chosen to fit them."""
        with self._lock:
            self._check_running()
            if not self.covered:
                raise TableError(f"preset {self.preset.name} pays every win in full: the banker's stack is not "
                                 "entered at this table (banker.cover = 'unlimited')")
            if not self.can_take_bets():
                raise TableError(self._closed_words("the banker's stack is", "enter it"))
            stack = self._check_stack(amount)
            # On the log first, then in memory: a stack the log refused (disk full) is not entered.
            self.audit.append(AuditType.BETS_PLACED, actor, {
                "change": {"banker_stack": money(stack) if stack is not None else None},
                **self._bets_record(self._pending, self._pending_bid or self.default_bid, stack),
                "for_round": self.machine.round_no + 1})
            self._pending_stack = stack
            self._publish()
            return stack

    def set_bet(self, seat: str, amount: str | Decimal | None, kind: str | None, actor: str,
                multiple: Any = None) -> dict[str, Bet]:
        """Place, change or (amount empty or 0) remove one seat's bet for the next round.

        Bets close when the first card of the round is accepted: a bet placed after
        the cards are seen would be past-posting.  They open again at Settle or a void, for
        the round after (:meth:`can_take_bets`).  ``multiple`` is the player's bet
        multiple at a grab-the-banker table (empty: the lowest); other tables refuse one.
        """
        with self._lock:
            self._check_running()
            self._check_seat(seat)
            self._check_bets_open()
            bet = self._new_bet(seat, amount, kind, multiple)
            pending = dict(self._pending)
            if bet is None:
                removed = pending.pop(seat, None)
                if removed is None:
                    return pending
                change = {"seat": seat, "removed": True}
            else:
                pending[seat] = bet
                change = {"seat": seat, **bet_json(bet, self.grab)}
            # On the log first, then in memory: a bet the log refused (disk full) is not placed.
            self.audit.append(AuditType.BETS_PLACED, actor, {
                "change": change,
                **self._bets_record(pending, self._pending_bid or self.default_bid, self._pending_stack),
                "for_round": self.machine.round_no + 1})
            self._pending = pending
            self.machine.set_active_seats(sorted(pending) if pending else None)
            self._publish()
            return dict(pending)

    def settle(self, actor: str, round_no: int | None = None, basis: str | None = None) -> Settlement:
        """``round_no`` and ``basis``: the round and what of it (:meth:`settle_basis`) the
        dealer's screen showed when Settle was tapped.  A supervisor's correction on another
        screen, or the next deal, may land between the tap and this call: the dealer then
        confirmed money that is no longer what would be paid, and nothing is settled."""
        with self._lock:
            self._check_running()
            self.check_round(round_no, "settled")
            if basis is not None and basis != self.settle_basis():
                raise TableError(f"round {self.machine.round_no} changed since your screen showed it (a card or a "
                                 "bet): nothing was settled; check the screen and settle again")
            if not self._round_bets:
                raise TableError("no bets were placed for this round; there is nothing to settle "
                                 "(void the round, or clear the table)")
            missing = self._missing_stack()
            if missing:
                raise TableError(missing)
            try:
                _events, settlement = self.machine.settle(self._round_bets, self.clock(), actor=actor,
                                                          banker_bid=self._round_bid, banker_stack=self._round_stack)
            except RoundError as exc:
                raise TableError(str(exc)) from None
            return settlement

    def settle_basis(self) -> str:
        """A digest of what settling the current round pays on: its number, each seat's cards
        and the bets, bid and stack.  The screen sends it back with Settle."""
        with self._lock:
            hands = {seat: list(hand.codes) for seat, hand in self.machine.hands.items()}
            basis = [self.machine.round_no, hands, self._round_bets_record()]
            return hashlib.sha256(json.dumps(basis, sort_keys=True, default=str).encode()).hexdigest()[:16]

    def check_round(self, round_no: int | None, done: str) -> None:
        """Refuse an action meant for round ``round_no`` (the one the screen showed) once the
        table has moved on: a void typed for round 7 must not void round 8."""
        if round_no is not None and round_no != self.machine.round_no:
            raise TableError(f"your screen showed round {round_no}, and the table is now on round "
                             f"{self.machine.round_no}: nothing was {done}; look at the screen again")

    def _missing_stack(self) -> str | None:
        if self.covered and self._round_stack is None:
            return ("no banker's stack was entered before the deal, and this table pays winners only as far as "
                    "it goes: void the round and enter the stack before the cards are dealt again")
        return None

    def settle_blocker(self) -> str | None:
        if not self._round_bets:
            return None if self.machine.state in (RoundState.idle, RoundState.cleared) else \
                "no bets on this round"
        missing = self._missing_stack()
        if missing:
            return missing
        try:
            self.machine.verify_settle(self._round_bets)
        except RoundError as exc:
            return str(exc)
        return None

    def correct(self, seat: str, old: str | None, new: str | None, actor: str, reason: str,
                approval: Approval | None = None, round_no: int | None = None) -> dict:
        """Fix a card.  Before settlement the dealer may; after it, only with a supervisor's
        PIN and a reason, and the round's settlement is recomputed and both versions logged."""
        with self._lock:
            self._check_running()
            reason = (reason or "").strip()
            target = self.machine.round_no if round_no is None else int(round_no)
            live = target == self.machine.round_no and self.machine.can_correct()
            if live:
                if old is not None and new is not None and old != new:
                    self._check_free(new, seat)
                self._round_extra["approver"] = approval.approved_by if approval else None
                try:
                    event = self.machine.correct_card(seat, old, new, actor, reason or "dealer correction",
                                                      self.clock())
                except RoundError as exc:
                    raise TableError(str(exc)) from None
                finally:
                    self._round_extra.pop("approver", None)
                return {"round": target, "action": event.data.get("action"), "settled": False}
            if old is not None and new is not None and old.strip().upper() == new.strip().upper():
                return self._confirm_settled(target, seat, old, actor, reason, approval)
            return self._correct_settled(target, seat, old, new, actor, reason, approval)

    def _settled_as(self) -> dict[tuple[str, str], str]:
        """Each (seat, card) of the machine's record a supervisor's correction after Settle has
        replaced -> the card the log has in its place now.  The machine keeps the cards as they
        were at Settle; the dealer sees, confirms and is asked about the log's (QA50 review M2:
        after 4H was corrected to AH, the screen showed AH and asked about 4H)."""
        override = self._round_extra.get("hands") or {}
        return {(seat, card.code): now
                for seat, hand in self.machine.hands.items() if override.get(seat)
                for card, now in zip(hand.cards, override[seat]) if card.code != now}

    def _log_hand(self, seat: str) -> list[str] | None:
        """Seat ``seat``'s cards as the log has them now (the machine's, corrected since Settle)."""
        hand = self.machine.hands.get(seat)
        if hand is None:
            return None
        return list((self._round_extra.get("hands") or {}).get(seat) or [c.code for c in hand.cards])

    def _change_readings(self) -> dict[tuple[str, str], str | None]:
        """Each (seat, card) the machine has in ``card_changed`` now -> what it reads as (the
        ``read_as`` of its newest alert), the card named as the log has it now
        (:meth:`_settled_as`).  A card the camera reads as the one a correction put in its
        place is no fault: the camera reads what the log says."""
        readings: dict[tuple[str, str], str | None] = dict.fromkeys(self.machine.changed_cards)
        for alert in self.machine.alerts:
            key = (alert.seat, alert.card)
            if key in readings and alert.data.get("code") == AlertCode.card_changed:
                readings[key] = alert.data.get("read_as")
        now = self._settled_as()
        mapped = {(seat, now.get((seat, card), card)): read_as for (seat, card), read_as in readings.items()}
        return {key: read_as for key, read_as in mapped.items() if read_as != key[1]}

    def _alerts_as_corrected(self, alerts: Iterable[RoundEvent]) -> list[RoundEvent]:
        """The round's alerts with a ``card_changed`` one naming its card as the log has it
        now (:meth:`_settled_as`), so the "?" card, the alert and the dealer's "Card is right"
        are about one card; the log keeps the alert as raised."""
        now = self._settled_as()
        out = []
        for alert in alerts:
            card = now.get((alert.seat, alert.card)) if alert.data.get("code") == AlertCode.card_changed else None
            if card is None:
                out.append(alert)
                continue
            message = str(alert.data.get("message") or "")
            said = f"{alert.card} on seat {alert.seat} "
            if message.startswith(said):
                message = f"{card} on seat {alert.seat} " + message[len(said):]
            message += f", and a supervisor corrected it to {card} since"
            out.append(replace(alert, card=card, data={**alert.data, "message": message}))
        return out

    def _changed_cards(self) -> dict[tuple[str, str], str | None]:
        """The cards read as another since they were accepted that no person has answered yet,
        each with what it reads as now (the screen shows only the reading still open).

        The machine takes a confirmation only while the round is dealt; after Settle its cards
        are the log's (QA49 dealing2 L1: "Card is right" was refused, and the alert stayed even
        after the supervisor corrected the card).  What a person answered after Settle, the
        dealer's confirmation or a settled correction of the card, is kept here, for the reading
        it had and under the card the log has now: read as yet another card since, the card is
        told again."""
        looked = self._round_extra.get("looked") or set()
        return {key: read_as for key, read_as in self._change_readings().items() if (*key, read_as) not in looked}

    def _confirm_settled(self, round_no: int, seat: str, code: str, actor: str, reason: str,
                         approval: Approval | None) -> dict:
        """"Card is right" after Settle, for a card the camera has read as another since: the
        dealer looked, and nothing changes (no card, no money), so no supervisor's PIN is asked.
        Logged as the confirmation before Settle is (``card_corrected``, ``confirmed``), marked
        ``after_settlement`` with the reading it answers (``read_as``)."""
        try:
            card = Card.parse(code).code
        except NiuniuError as exc:
            raise TableError(str(exc)) from None
        if round_no != self.machine.round_no or self.machine.state != RoundState.settled:
            raise TableError(f"round {round_no}'s cards are no longer on the table: only a card of the settled round "
                             "on the screen can be confirmed; to change a card of a settled round, pick the card "
                             "that is really there (a supervisor's PIN and a reason)")
        hand = self._log_hand(seat)
        if hand is None:
            raise TableError(f"seat {seat} has no cards in round {round_no}: there is nothing to confirm; "
                             "pick a card of a seat that was dealt")
        if card not in hand:
            # a card a supervisor corrected away: confirming it would contradict the correction
            settled = self.machine.hands[seat].cards
            put = next((hand[i] for i, c in enumerate(settled) if c.code == card and i < len(hand)), None)
            since = f" (a supervisor corrected it to {put} after Settle)" if put else ""
            raise TableError(f"{card} is not on seat {seat} in round {round_no} as the log has it now{since}: the "
                             f"seat holds {' '.join(hand)}; confirm the card the log has, or pick the card that is "
                             "really there to correct it (a supervisor's PIN and a reason)")
        read_as = self._change_readings().get((seat, card))
        if (seat, card) not in self._changed_cards():
            raise TableError(f"{card} on seat {seat} has not been read as another card since round {round_no} was "
                             "settled: there is nothing to confirm; to change it, pick the card that is really "
                             "there (a supervisor's PIN and a reason)")
        self.audit.append(AuditType.CARD_CORRECTED, actor, {
            "frame_no": self.machine.last_frame_no, "seat": seat, "old": card, "new": card, "action": "confirmed",
            "reason": reason or "the card is right", "after_settlement": True, "read_as": read_as,
            "approved_by": approval.approved_by if approval else None}, round_no=round_no, ts=self.clock())
        self._round_extra.setdefault("looked", set()).add((seat, card, read_as))
        self._reload_history()
        self._publish()
        return {"round": round_no, "action": "confirmed", "settled": True, "difference": {}, "adjust": [],
                "adjust_text": ""}

    def _check_free(self, code: str, seat: str) -> None:
        try:
            card = Card.parse(code)
        except NiuniuError as exc:
            raise TableError(str(exc)) from None
        if self.preset.decks == 1:
            for other, hand in self.machine.hands.items():
                if other != seat and card in hand.cards:
                    raise TableError(f"{card.code} is already on seat {other}; correct that seat first")

    def _preset_settled_under(self, summary: dict) -> Preset:
        """The rules a settled round is corrected under are the ones it was played under: the
        table may have changed preset since (a restart with another table file), and the
        players were paid by the old rules.  Settlements name the preset and hash its rules
        (``preset_rules``); a log written before that names it only."""
        settled = summary["settlement"] or {}
        name, digest = settled.get("preset"), settled.get("preset_rules")
        if not name or (name == self.preset.name and digest in (None, self.preset.rules_digest)):
            return self.preset
        try:
            named = load_preset(name)
        except PresetError:
            named = None
        if named is not None and digest in (None, named.rules_digest):
            return named
        if named is None and name != self.preset.name:
            raise TableError(f"round {summary['round']} was settled under preset {name!r}, which this kiosk "
                             f"cannot load (it plays {self.preset.name}); correct it on a kiosk whose table file "
                             "names that preset")
        raise TableError(f"round {summary['round']} was settled under preset {name!r} with rules this kiosk no "
                         f"longer has (its {name!r} was edited since, or is another file of that name); correct it "
                         "on a kiosk whose table file has the rules it was played under")

    def _correct_settled(self, round_no: int, seat: str, old: str | None, new: str | None, actor: str,
                         reason: str, approval: Approval | None) -> dict:
        summary = load_round(self.audit, round_no, table_id=self.config.table_id)
        if summary is None:
            raise TableError(f"round {round_no} is not in the log of table {self.config.table_id}")
        if summary["status"] not in ("settled",) and not (summary["status"] == "cleared" and summary["settlement"]):
            raise TableError(f"round {round_no} is {summary['status']}; only a round being dealt or a "
                             "settled round can be corrected")
        if approval is None:
            raise TableError("this round is settled: a correction needs a supervisor's PIN")
        if not reason:
            raise TableError("this round is settled: a correction needs a reason")
        hands = {s: list(c) for s, c in summary["hands"].items()}
        cards = hands.get(seat)
        if cards is None:
            raise TableError(f"seat {seat} has no cards in round {round_no}")
        try:
            old_c = Card.parse(old).code if old else None
            new_c = Card.parse(new).code if new else None
        except NiuniuError as exc:
            raise TableError(str(exc)) from None
        if old_c is None or new_c is None or old_c == new_c:
            raise TableError("after settlement a correction replaces one card by a different one")
        if old_c not in cards:
            raise TableError(f"seat {seat} has no {old_c} in round {round_no} (it has {' '.join(cards)})")
        preset = self._preset_settled_under(summary)
        if preset.decks == 1 and any(new_c in c for c in hands.values()):
            holder = next(s for s, c in hands.items() if new_c in c)
            raise TableError(f"{new_c} is already on seat {holder} in round {round_no}")
        cards[cards.index(old_c)] = new_c
        bets = bets_from_json(summary["bets"])
        settled_bets = {s: b for s, b in bets.items() if s in hands and len(hands[s]) == 5}
        bid = int((summary["settlement"] or {}).get("banker_bid", 1))  # resettled at the bid it was played at
        stack = (summary["settlement"] or {}).get("banker_stack")      # and against the same stack
        try:
            settlement = settle_round(preset, parse_cards(hands["banker"]),
                                      {s: (parse_cards(hands[s]), b) for s, b in settled_bets.items()},
                                      banker_bid=bid, banker_stack=Decimal(stack) if stack is not None else None)
        except NiuniuError as exc:
            raise TableError(f"round {round_no} cannot be resettled with {new_c}: {exc}") from None
        old_lines = {s: Decimal(line["net"]) for s, line in summary["lines"].items()}
        new_lines = [self._line_view(line, settled_bets.get(line.seat), bid, preset) for line in settlement.lines]
        difference = {line["seat"]: money(Decimal(line["net"]) - old_lines.get(line["seat"], Decimal(0)))
                      for line in new_lines}
        ts = self.clock()
        common = {"approved_by": approval.approved_by, "requested_by": approval.requested_by, "reason": reason}
        self.audit.append_many([
            Entry(AuditType.CARD_CORRECTED, actor, {"seat": seat, "old": old_c, "new": new_c, "action": "replaced",
                                                    "after_settlement": True, **common}, round_no, ts),
            Entry(AuditType.SETTLEMENT_CORRECTED, actor, {
                "old": summary["settlement"], "new": settlement.to_json(), "new_lines": new_lines,
                "old_lines": list(summary["lines"].values()), "difference": difference,
                "hands": hands, "results": self._results_json(hands, preset), **common,
                # its difference is owed until an adjustment_settled record says it was paid or
                # waived (kiosk.rounds.adjustment); a correction logged without this predates them
                "adjustment_tracked": True}, round_no, ts),
        ])
        # What the dealer acts on is what the round still owes each seat (kiosk.rounds.adjustment),
        # never the recomputed line (the chips moved at Settle: paying the line would pay twice)
        # nor this correction's own difference (QA49 supervisor H1: corrected and corrected back
        # before anything moved, that said PAY 195.00 where nothing was owed).
        if round_no == self.machine.round_no:
            # A supervisor looked at the card: its reading as another is answered, under the card
            # the log has there now (a reading as that card is no fault: _change_readings).
            reading = self._change_readings().get((seat, old_c))
            self._round_extra.setdefault("looked", set()).add((seat, new_c, reading))
            self._round_extra["hands"] = hands
            self._round_extra["lines"] = {line["seat"]: dict(line) for line in new_lines}
            self._round_extra["settlement"] = settlement
            self._round_extra["settle_lines"] = summary["paid_lines"] or summary["lines"]
            self._round_extra["settle_banker"] = (summary["paid_settlement"] or summary["settlement"] or {}).get(
                "banker_net")
            self._round_extra["unit"] = preset.commission_quantum
        adjustment = self._note_adjustment(round_no)
        unit = preset.commission_quantum
        owes = [{"seat": seat, "action": "pay" if Decimal(d) > 0 else "collect", "amount": shown(abs(Decimal(d)), unit)}
                for seat, d in ((adjustment or {}).get("outstanding") or {}).items()]
        view = adjustment_view(adjustment, round_no, unit, self.config.currency)
        self._reload_history()
        self._publish()
        return {"round": round_no, "action": "replaced", "settled": True, "difference": difference, "adjust": owes,
                "adjust_text": view["text"] if view else ""}

    # ------------------------------------------------------------------ adjustments

    def _load_adjustments(self) -> None:
        """Every adjustment of this table still owed, however old its round: one corrected long
        after its round left the history strip stays on the screen until it is paid or waived."""
        self._adjustments = {}
        for number in corrected_rounds(self.audit):
            adjustment = adjustment_of(self.audit, number, self.config.table_id)
            if adjustment is not None and adjustment["status"] == "outstanding":
                self._adjustments[number] = adjustment

    def _note_adjustment(self, round_no: int) -> dict | None:
        """Take the round's adjustment as the log now has it (a correction or an adjustment record
        was just written), for the table's list and for the round on the table."""
        adjustment = adjustment_of(self.audit, round_no, self.config.table_id)
        if adjustment is not None and adjustment["status"] == "outstanding":
            self._adjustments[round_no] = adjustment
        else:
            self._adjustments.pop(round_no, None)
        if round_no == self.machine.round_no:
            self._round_extra["adjustment"] = adjustment
            unit = self._round_extra.get("unit", self.preset.commission_quantum)
            settle_lines = self._round_extra.get("settle_lines") or {}
            for line in (self._round_extra.get("lines") or {}).values():
                line["correction"] = correction_view(line, adjustment, settle_lines, unit)
            corrected = self._round_extra.get("settlement")
            if BANKER in ((adjustment or {}).get("held") or {}) and corrected is not None:
                # where a player banks, the banker's side of the difference is that player's to pay or be paid
                paid = self._round_extra.get("settle_banker")
                self._round_extra["banker_correction"] = correction_view(
                    {"seat": BANKER, "net": money(corrected.banker_net)}, adjustment,
                    {BANKER: {"net": paid}} if paid is not None else {}, unit)
        return adjustment

    def check_adjustment(self, round_no: int | None, basis: int | None, seats: Iterable[str] | None = None) -> dict:
        """What of round ``round_no``'s outstanding adjustment a screen's request closes (seat ->
        signed difference, the player's side), or why nothing can be.  ``basis``: the last
        correction the screen had seen (the adjustment's ``basis``).  A second correction made
        meanwhile changes what is owed, and one screen's "paid" must not close an amount its
        dealer never saw; a seat another screen closed already is not closed twice."""
        with self._lock:
            if round_no is None:
                raise TableError("say which round's adjustment was paid (round): nothing was recorded")
            if basis is None:
                raise TableError("your screen did not say which correction it showed (basis): nothing was "
                                 "recorded; reload the screen and try again")
            adjustment = adjustment_of(self.audit, round_no, self.config.table_id)
            if adjustment is None or adjustment["status"] == "none":
                raise TableError(f"round {round_no} has no adjustment to record: its settlement was not corrected "
                                 "after it was paid, or the correction moved no money")
            if adjustment["status"] == "not_recorded":
                raise TableError(f"round {round_no} was corrected by a kiosk from before adjustments were recorded: "
                                 "the log cannot say whether its difference was paid; note what was done in the "
                                 "table's paperwork")
            if basis != adjustment["basis"]:
                raise TableError(f"round {round_no} was corrected again since your screen showed it: nothing was "
                                 "recorded; check the amounts now shown and record them again")
            owed = adjustment["outstanding"]
            if not owed:
                last = adjustment["records"][-1]
                raise TableError(f"round {round_no}'s adjustment was already recorded ({last.get('action')} by "
                                 f"{last.get('approved_by') or last.get('actor')}): nothing more was recorded")
            chosen = list(owed) if seats is None else [str(s) for s in seats]
            unknown = [s for s in chosen if s not in owed]
            if unknown or not chosen:
                # a screen that showed a side another screen has just recorded is told who did
                last = {s: r for r in adjustment["records"] for s in (r.get("difference") or {})}
                closed = [f"{party_name(s)} {last[s].get('action')} by "
                          f"{last[s].get('approved_by') or last[s].get('actor')}" for s in unknown if s in last]
                raise TableError(f"round {round_no}: {', '.join(map(party_name, unknown)) or 'no seat named'} has no "
                                 f"adjustment outstanding (owed: {', '.join(map(party_name, owed))}"
                                 f"{'; ' + ', '.join(closed) if closed else ''}); nothing was recorded")
            return {seat: owed[seat] for seat in chosen}

    def settle_adjustment(self, round_no: int | None, basis: int | None, actor: str, *, waived: bool = False,
                          reason: str = "", approval: Approval | None = None,
                          seats: Iterable[str] | None = None) -> dict:
        """Record that a corrected round's difference was paid to (or collected from) its seats,
        or, with a supervisor's PIN and a reason, that the house waived it.

        A correction after Settle moves no chips: until this record the books and the chips
        differ, and the round shows "adjustment outstanding" on the screen and in the shift
        report.  ``seats``: those settled now (None: every seat owed), since a player who has
        left may be waived while the others are paid."""
        with self._lock:
            self._check_running()
            reason = (reason or "").strip()
            if waived and approval is None:
                raise TableError("waiving an adjustment needs a supervisor's PIN")
            if waived and not reason:
                raise TableError("waiving an adjustment needs a reason (why its difference is not paid or collected)")
            difference = self.check_adjustment(round_no, basis, seats)
            data = {"action": "waived" if waived else "paid", "basis": basis, "difference": difference,
                    "reason": reason, "requested_by": approval.requested_by if approval else actor,
                    "approved_by": approval.approved_by if approval else None}
            self.audit.append(AuditType.ADJUSTMENT_SETTLED, actor, data, round_no=round_no)
            self._note_adjustment(round_no)
            self._reload_history()
            self._publish()
            return data

    def void(self, reason: str, approval: Approval, round_no: int | None = None) -> None:
        with self._lock:
            self._check_running()
            self.check_round(round_no, "voided")
            if not (reason or "").strip():
                raise TableError("voiding a round needs a reason")
            self._round_extra["approver"] = approval.approved_by
            try:
                self.machine.void(approval.requested_by, reason.strip(), self.clock())
            except RoundError as exc:
                raise TableError(str(exc)) from None
            finally:
                self._round_extra.pop("approver", None)

    def clear(self, actor: str) -> None:
        with self._lock:
            self._check_running()
            try:
                self.machine.clear(self.clock(), actor=actor)
            except RoundError as exc:
                raise TableError(str(exc)) from None

    # ------------------------------------------------------------------ history

    def _reload_history(self) -> None:
        numbers = round_numbers(self.audit, table_id=self.config.table_id, limit=self._history_size + 1)
        rounds, damaged = [], []
        for n in numbers:
            summary = load_round(self.audit, n, table_id=self.config.table_id)
            if summary is None:
                continue
            if n == self.machine.round_no and summary["status"] in ("open", "complete"):
                continue  # the round on the table is not history yet
            if summary["damaged"]:
                self._tell_damaged(summary)
                damaged.append(summary["round"])
                continue  # what it says cannot be read: the round page and `audit verify` name it
            rounds.append(summary)
        self._history = deque(rounds[: self._history_size], maxlen=self._history_size)
        self.history_warning = (
            f"round{'s' if len(damaged) > 1 else ''} {', '.join(map(str, sorted(damaged)))} left out of the "
            "history: an audit record cannot be read; keep playing, do not correct "
            f"{'them' if len(damaged) > 1 else 'it'}, and call surveillance") if damaged else None

    def _tell_damaged(self, summary: dict) -> None:
        """Log once per damaged record that a round is left out of the history strip: a
        past round's record gone bad on the disk must not stop the table, but must not pass
        unseen either (QA51 operator H1)."""
        new = [d for d in summary["damaged"] if d["seq"] not in self._damaged_told]
        if not new:
            return
        self._damaged_told.update(d["seq"] for d in new)
        log.warning("round %s is left out of the history: its audit record%s %s cannot be read (%s); run niuniu "
                    "audit verify --data-dir %s, keep the data directory as it is and call surveillance",
                    summary["round"], "s" if len(new) > 1 else "",
                    ", ".join(f"seq {d['seq']} ({d['type']})" for d in new), new[0]["problem"], self.audit.path.parent)

    def history(self) -> list[dict]:
        with self._lock:
            return list(self._history)

    # ------------------------------------------------------------------ screen state

    def clock_sync(self) -> dict:
        """Whether the system clock (and so every audit timestamp) can be trusted."""
        return self.clock_watch.state()

    def status(self) -> dict:
        info = {"clock": self.clock_sync(), "audit_error": self.audit_error, "disk_warning": self.disk_warning,
                "history_warning": self.history_warning,
                "camera": self._camera_turns["online"],
                "camera_since": self._camera["since"],
                "camera_reason": self._camera["reason"], "fps": None, "frame_no": None,
                "model": self.detector_info.get("name"), "last_frame_ts": None,
                # The reader turning no card upright misreads more: the dealer's MODEL pill and
                # the admin page say so, not only `niuniu check` and kiosk_start (QA52).
                "orientation_missing": self.detector_info.get("orientation_missing")}
        if self.pipeline is not None:
            try:
                live = dict(self.pipeline.status())
            except Exception as exc:  # a status call must never take the screen down
                live = {"camera": "offline", "error": str(exc)}
            info.update({k: v for k, v in live.items() if v is not None})
        if isinstance(info.get("fps"), float):
            info["fps"] = round(info["fps"], 1)
        return info

    def snapshot(self) -> dict:
        with self._lock:
            return self._snapshot()

    def _snapshot(self) -> dict:
        m = self.machine
        unit = self.preset.commission_quantum       # every figure on the screen is written to it
        state = m.state
        # Between rounds the table is shown empty: the last round lives in the history strip.
        between = state in (RoundState.idle, RoundState.cleared)
        hands = {} if between else m.hands
        override = self._round_extra.get("hands") or {}
        settled = state == RoundState.settled
        settlement_lines: dict[str, dict] = {}
        if settled and m.settlement is not None:
            settlement_lines = {line.seat: self._line_view(line, self._round_bets.get(line.seat),
                                                           m.settlement.banker_bid)
                                for line in m.settlement.lines}
        if not between:
            settlement_lines.update(self._round_extra.get("lines", {}))
        codes = {seat: list(override.get(seat) or [c.code for c in hand.cards]) for seat, hand in hands.items()}
        results = {seat: self._evaluate(c) for seat, c in codes.items()}
        banker = results.get("banker")
        # A voided round moves no money and its bets are open again: no "if settled now"
        # figures for it, and the chips show the next round's stakes, not the void's.  So do a
        # settled round's: its stakes are in its payout lines, and bets are open (can_take_bets).
        void = state == RoundState.void
        preview = {} if settled or between or void else self._preview(codes)
        bets = {} if between or void or settled else self._round_bets
        changed = self._changed_cards()     # read as another card since: flagged "?" like a doubtful one
        seats = []
        for name in self.config.seat_names:
            hand = hands.get(name)
            cards = []
            if hand is not None:
                overridden = override.get(name)
                for i, card in enumerate(hand.cards):
                    if overridden:
                        card = Card.parse(overridden[i])
                    cards.append(card_view(card, hand.confidence[i],
                                           hand.needs_confirmation[i] or (name, card.code) in changed))
            result = results.get(name)
            outcome = None
            if name != "banker" and result is not None and banker is not None:
                outcome = {1: "win", -1: "lose", 0: "push"}[compare(result, banker, self.preset)]
            line = settlement_lines.get(name) or preview.get(name)
            bet = bets.get(name) or (self._pending.get(name) if not bets else None)
            seats.append({
                "name": name, "cards": cards, "result": result_view(result) if result else None,
                "outcome": outcome, "line": shown_line(line, unit) if line else None,
                "line_final": name in settlement_lines,
                "bet": shown_bet(bet_json(bet, self.grab), unit) if bet else None,
                "bet_pending": bet is not None and not bets,
            })
            if name == BANKER and settled and self._round_extra.get("banker_correction"):
                seats[-1]["correction"] = self._round_extra["banker_correction"]
        blocker = self.settle_blocker() if state in (RoundState.dealing, RoundState.complete) else None
        totals = None
        if settled and m.settlement is not None:
            corrected = self._round_extra.get("settlement")
            totals = {**self._totals(corrected or m.settlement), "final": True}
            if corrected:
                totals["corrected"] = True
        elif preview:
            totals = preview.get("_totals")
        table = {"id": self.config.table_id, "rules": self.preset.name, "title": self.preset.title,
                 "currency": self.config.currency, "bet_kinds": list(self.preset.bet_kinds),
                 "bet_kind_help": {k: self.preset.bets[k].description for k in self.preset.bet_kinds},
                 "commission_rate": str(self.preset.commission_rate), "banking": str(self.preset.banking),
                 "decks": self.preset.decks,
                 "bet_limits": {"minimum": shown(lim.minimum, unit), "maximum": shown(lim.maximum, unit)}
                 if (lim := self.config.bet_limits) else None}
        bank: dict[str, Any] = {}     # the round the chips are for; the bank bid and stack where the preset has them
        # The bid and stack are the next round's wherever the stakes are (chips_for says which round:
        # the screen marks a settled or voided round's as the next one's, not its own).
        following = self._chips_for_next_round()
        bank["chips_for"] = m.round_no + 1 if following else m.round_no
        if self.grab:
            table.update(bids=list(self.preset.banker.bids), bet_multiples=list(self.preset.banker.bet_multiples))
            bank["banker_bid"] = (self._pending_bid or self.default_bid) if following else self._round_bid
        if self.covered:
            table["banker_cover"] = self.preset.banker_cover.value
            bank["banker_stack"] = shown(self._pending_stack if following else self._round_stack, unit)
        repeat = self._bets_to_repeat() if self.can_take_bets() else None
        return {
            "run": self.run,
            "table": table,
            "round": {**bank, "no": m.round_no, "state": str(state), "can_settle": blocker is None and
                      state in (RoundState.dealing, RoundState.complete) and bool(self._round_bets),
                      "settle_blocker": blocker, "can_void": m.can_void(), "can_correct": m.can_correct()
                      or settled, "can_clear": m.can_clear(), "bets_open": self.can_take_bets(),
                      "alerts": [] if between else self._open_alerts(
                          self._alerts_as_corrected(m.alerts), codes, m.absent_cards, m.round_no, m.doubtful_cards,
                          changed,
                          unsettled=state in (RoundState.dealing, RoundState.complete), bets_in=bool(self._pending),
                          lone=self._lone_now()),
                      "corrected": bool(self._round_extra.get("lines")),
                      # a settled round corrected since: whether the difference was paid yet
                      "adjustment": adjustment_view(self._round_extra.get("adjustment")
                                                    or self._adjustments.get(m.round_no), m.round_no, unit,
                                                    self.config.currency)
                      if settled else None,
                      "repeat_from": repeat[0] if repeat else None,
                      "stale_cards": m.stale_cards, "basis": self.settle_basis()},
            "seats": [s for s in seats if s["name"] in self.config.seat_names],
            "totals": totals,
            "history": [history_item(h, unit, self.config.currency) for h in self._history],
            # newest round first: what the dealer still has to pay or collect after corrections
            "adjustments": [adjustment_view(a, n, unit, self.config.currency)
                            for n, a in sorted(self._adjustments.items(), reverse=True)],
        }

    def _totals(self, settlement: Settlement) -> dict:
        unit = self.preset.commission_quantum
        return {"banker_net": shown(settlement.banker_net, unit),
                "commission": shown(settlement.total_commission, unit),
                "house_net": shown(settlement.house_net, unit)}

    def _preview(self, codes: Mapping[str, list[str]]) -> dict:
        """What settling now would pay, so the dealer sees it before pressing the button."""
        banker = codes.get("banker")
        seats = {s: b for s, b in self._round_bets.items() if len(codes.get(s, [])) == 5}
        if not banker or len(banker) != 5 or not seats:
            return {}
        try:
            settlement = settle_round(self.preset, parse_cards(banker),
                                      {s: (parse_cards(codes[s]), b) for s, b in seats.items()},
                                      banker_bid=self._round_bid, banker_stack=self._round_stack)
        except NiuniuError:
            return {}
        out: dict[str, Any] = {line.seat: self._line_view(line, seats.get(line.seat), self._round_bid)
                               for line in settlement.lines}
        out["_totals"] = {**self._totals(settlement), "final": False}
        return out

    # ------------------------------------------------------------------ the feed

    def _publish(self) -> None:
        """Freeze the screen state as JSON text once, for every browser to share."""
        snap = self._snapshot()
        with self._feed:
            self._version += 1
            snap["version"] = self._version
            snap["changed_at"] = self.clock()
            self._snapshots.append((self._version, json.dumps(snap, ensure_ascii=False)))
            self._feed.notify_all()

    @property
    def stopped(self) -> bool:
        return self._stopped

    @property
    def version(self) -> int:
        return self._version

    def latest(self) -> tuple[int, str]:
        with self._feed:
            if not self._snapshots:
                return 0, "{}"
            return self._snapshots[-1]

    def updates_since(self, version: int, timeout: float) -> list[tuple[int, str]]:
        """Snapshots newer than ``version`` in order (waiting up to ``timeout`` for one).

        A browser that fell more than the buffer behind gets the newest state only: it
        cannot act on stale states anyway, and the gap shows in the version numbers.
        """
        with self._feed:
            if self._version <= version:
                self._feed.wait_for(lambda: self._version > version, timeout)
            newer = [item for item in self._snapshots if item[0] > version]
            if newer and newer[0][0] > version + 1 and version != 0:
                return newer[-1:]
            return newer if version != 0 else newer[-1:]


def history_item(summary: dict, unit: Decimal = Decimal("0.01"), currency: str = "") -> dict:
    """The history strip's tile plus what its detail dialog shows, its figures written to the
    table's money ``unit`` (the log's records keep their own text)."""
    lines = {seat: shown_line(line, unit) for seat, line in summary.get("lines", {}).items()}
    return {"round": summary["round"], "status": summary["status"], "started": summary["started"],
            "ended": summary["ended"], "hands": summary["hands"],
            "results": {s: {"label": r.get("label"), "category": r.get("category"),
                            "bull": r.get("bull", []), "rest": r.get("rest", [])}
                        for s, r in summary.get("results", {}).items()},
            "lines": lines, "players_net": shown(summary["players_net"] or 0, unit), "corrected": summary["corrected"]
            or bool(summary["settlement_corrections"]), "voided": summary["voided"],
            "alerts": [a.get("message") for a in summary["alerts"]],
            "bets": {seat: shown_bet(bet, unit) for seat, bet in (summary["bets"] or {}).items()},
            "void": summary["void"], "interrupted": summary["interrupted"],
            "banker_bid": (summary.get("settlement") or {}).get("banker_bid"),
            # A settlement corrected after it was paid: what was paid at the table (what is still
            # owed since is the adjustment's to say).
            "paid_lines": {seat: shown_line(line, unit) for seat, line in summary["paid_lines"].items()}
            if summary.get("settlement_corrections") else None,
            "adjustment": adjustment_view(summary.get("adjustment"), summary["round"], unit, currency)}


# Digits with at most one point; a comma only between groups of three (1,000.50).  Not what
# Decimal() reads: it takes "1e5" (100,000) and "1_000", and stripping every comma made a
# decimal comma ("10,50", as many keypads type it) a stake a hundred times too large.
# ASCII digits only, as scoring.settle reads a stake: another script's digits (Arabic-Indic,
# fullwidth) are a keyboard left in the wrong layout, and a typo there would become a stake.
_AMOUNT = re.compile(r"(?:[0-9]+|[0-9]{1,3}(?:,[0-9]{3})+)(?:\.[0-9]*)?|\.[0-9]+")


def parse_amount(amount: str | Decimal | None, seat: str, what: str | None = None,
                 unit: Decimal = Decimal("0.01")) -> Decimal | None:
    """A bet amount (or the banker's stack: ``what``) typed on the screen; never a float (money is exact).

    As many decimals as the table's money ``unit`` has (the preset's quantum: 3 for fils),
    and never fewer than 2, the places every stake has been logged with; whether the amount
    is a whole number of the unit (5 at a table whose unit is 5) is the caller's check."""
    what = what or f"bet on seat {seat}"
    if amount is None or (isinstance(amount, str) and not amount.strip()):
        return None
    if isinstance(amount, Decimal):
        value = amount
    else:
        text = str(amount).strip()
        if text.startswith("-") and _AMOUNT.fullmatch(text[1:]):
            raise TableError(f"{what}: {amount!r} must be a positive amount")
        if not _AMOUNT.fullmatch(text):
            raise TableError(f"{what}: {amount!r} is not an amount; type digits like 100 or 25.50 "
                             "(a point for cents; a comma only between thousands, like 1,000)")
        value = Decimal(text.replace(",", ""))
    if not value.is_finite() or value < 0:
        raise TableError(f"{what}: {amount!r} must be a positive amount")
    if value == 0:
        return None
    if value > MAX_BET:
        raise TableError(f"{what}: {amount!r} is larger than the kiosk accepts ({money_shown(MAX_BET, grouped=True)})")
    places = max(2, unit_places(unit))
    step = Decimal(1).scaleb(-places)
    if value != value.quantize(step):
        raise TableError(f"{what}: {amount!r} has more than {places} decimals")
    return value.quantize(step)
