"""The round: which cards each seat was dealt, what went wrong, and when it was settled.

The tracker says what is on the table *now*; this machine keeps the round's record:
every card accepted on a seat during the round stays in the record until the round is
cleared, even if the card is later covered or pushed away, because money is settled on
what was dealt, not on what is visible when the dealer presses the button.

States::

    idle ──card──> dealing ──every active seat has 5──> complete ──settle──> settled
                      │  <──a card lands on a new seat──┘                     │
                      └──void──> void ──table empty──> cleared <──table empty─┘

``cleared`` behaves like ``idle``: the next accepted card starts the next round.  An
empty table clears a settled or voided round.  So does the next deal begun before the last
cards were swept, but only from its second card: one card appearing alone on a finished
round's table is as likely a card put on a settled hand (a swap after the payout) as the next
deal's first, and starting a round on it made a *phantom* round that, held open for its bets
once the table was swept, swallowed the next deal.  The same holds after the dealer's manual
clear while that round's left-overs still lie there (QA49 watch H2: "Next round" pressed
before the sweep let a lone card start the phantom round again): a new card first seen beside
them waits, and the next round starts with the second new card, the waiting one included
(it is no left-over: a manual clear leaves it waiting, QA49 review L3).  A card first seen on a
table holding no left-overs starts the round, as ever (sweep, then deal).  A waiting card
raises ``card_after_round`` on the finished round (with a key frame) only once it has lain
``LONE_CARD_S`` with no other new card while that round's cards are still seen beside it: the
next deal's first card laid before the sweep is followed by the sweep or the second card well
within that (QA49 review M3, watch M5: an alert at once marked every fast deal's round as a
swap).  A sweep that takes it with the rest ends that round as usual.  A swapped left-over is
still reported after a manual clear (``card_changed``, under the cleared round).

Where rounds are settled (the kiosk: ``hold_unsettled``) an unsettled one stays open, each
card that left raising a ``card_removed_before_settlement`` alert, until it is settled on what
was dealt or a supervisor voids it (its bets then stand for the deal again): a table that merely looks
empty (covered, dark, swept too early) must not end a round that has bets.  Where nobody
settles (a replay of a frame folder, a recording made before this rule) an empty table
ends any round, with those alerts.

Which card is which goes by the tracker's track (rules 7, :attr:`SeatHand.first_frames`), not
only by its code (QA49 dealing2 H2, M5; QA48 dealing M3).  A left-over is the card on the track
it lay on: the same card dealt again within ``remove_after_s`` of the sweep, which the tracker
sees elsewhere on the seat after its window without it, is another track, so it counts in the
next round; dealt again onto the finished round's table (no Clear) it does not count toward
starting the next round, as a card swept, hidden and seen being dragged away looks the same,
but it is no left-over when the next deal's new cards clear the round: that round takes it.
After a void a card first seen before the void is the misdeal's (no ``card_after_round``).  A
card on a finished table lying where one of its cards was read (the tracker's ``over``: that
card misread after more than a few washed-out frames) starts no round (QA49 dealing2 M3).
The dealer's Clear makes left-overs of the round's recorded cards the camera does not show
then (a chip over one), until seen and gone or for ``UNSEEN_LEFT_OVER_S`` unseen, and while
one may lie there a single new card waits (M6).
Rules 8 (QA50 dealing3 M1, M2, L1, M4): a finished round's card whose track ended while it lay
hidden alone (another of that round's cards on its seat still read, within ``HIDDEN_ALONE_S``, as
its track ended: a chip over it, not a hand swept with it) was never seen to leave: it stays a
left-over for ``UNSEEN_LEFT_OVER_S``, and seen again on its seat it is that card, whether the next
deal, the dealer's Clear or neither came meanwhile.  Its hand must be read again after its track
ended: a hand that left unread since (swept, the card under the dealer's hand with it) took it
along, and a card of its code seen on its seat before its hand was read again is another (QA51).  On
a one-deck table a left-over first read on another seat within ``LEFT_OVER_CARRIED_S`` after its
last reading on its own is that left-over there too (dragged across the neighbour's seat while
swept).  Every card of a round in play gone in the same frame, after a frame that read none of them,
is the camera (dark, covered), not the table: one ``camera_shows_no_cards`` alert, no removals, and
the cards it shows again are the same cards.  ``card_after_round`` counts only the finished round's
own cards (not the next deal's codes of its record dealt again) as "beside" it.
Rules 9 (QA52 bench_dealing, seed 11): where the tracker shows a seat's card on two tracks (one kept
unseen), the dealer's "remove" of the extra copy takes off the copy the camera does not read now, and
keeps out only that copy's track (it kept the seat's code out as a misread until the round was cleared,
so the same card dealt to the seat in the next deal, before the sweep ended, was taken for a left-over);
each copy on record holds its own track.  A reading counts as the finished round's card (for "hidden
alone" and left-overs) only on its record's track: the next deal's first card, of a code the hand
being swept held, made every card swept with that hand look hidden alone beside it.  A card a person
added or put in place of another is tied to the physical card the camera shows there (the track of the
reading it replaced, or of its code read on the seat): remembered by code alone, it was taken for the
same code dealt anew to its seat in the next deal (added by hand again).  One no track was tied to
(never seen) is no card of its round for any track, nor a left-over after a Clear: safer to count a card
that lay unseen through the round in the next deal (its hand too long, Settle refuses) than to swallow one.
Rules 10 (QA53 bench_dealing, seed 11): a card kept as hidden alone is released once every card of
its hand has left the tracker while it was still unseen (a chip swept with the card under it and its
hand: the same card dealt to the seat in the next deal counted there only when added by hand); and on
a settled round a recorded card is still there only on its own track (the same code laid on its seat
on another track kept the swept card on record as lying there).
The known limit left: the same card dealt again in the very place the left-over was last seen
is taken for it (Settle refuses the short hand; the dealer adds it with Correct card), as a
gap alone is also what a left-over under the dealer's arm, or a camera back on dark frames,
shows, and taking those for new cards would deal last round's cards into the next round.

Active seats are the banker plus every seat that received a card, unless the kiosk
names them (:meth:`RoundMachine.set_active_seats`, e.g. the seats holding bets).

Every change is a :class:`RoundEvent` (typed, timestamped, with the frame it was seen
in), handed to listeners in order while the machine's lock is held, so a recorder sees
exactly the sequence the machine went through even when the kiosk settles from another
thread.  A *gate* listener (the kiosk's audit log) hears each change's events first, all
together: if it cannot take them, the machine is put back as it was before the change and
no other listener hears of it, so a settlement that is not on record is not settled.
Actions follow pokerkit's trio: ``can_x()`` for the kiosk's buttons,
``verify_x()`` raising :class:`RoundError` with the reason, and ``x()``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from contextlib import contextmanager
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from enum import StrEnum
from typing import Any

from scoring.cards import Card, CardError
from scoring.errors import NiuniuError
from scoring.rules import load_preset
from scoring.settle import Bet, Settlement, money_text, settle_round
from vision.table import ConfigError, TableConfig
from vision.tracker import TRACKER_VERSION, SeatHand


log = logging.getLogger(__name__)
HAND_SIZE = 5
# How long one new card must lie beside a finished round's cards, no other new card coming, to
# raise card_after_round (rules 6): the next deal's first card dealt before the sweep is swept
# around (2-3 s, seat by seat) or followed by the second card within this, while a card put on a
# settled hand lies there through the payout (QA49 dealing2 modelled 5-8 s).
LONE_CARD_S = 5.0
# How long a recorded card the camera does not show at the dealer's Clear (under a chip, under the
# dealer's arm) stays a left-over if it is not seen (rules 7, QA49 dealing2 M6): seen within this, it
# is ignored until it leaves; not seen, it was swept, and the same card dealt again to its seat later
# must count (the kiosk waits as long for a restart's left-overs).
UNSEEN_LEFT_OVER_S = 10.0
# Rules 8: a finished round's card whose track ends unseen (remove_after_s after its last reading)
# while another card of that round on its seat was read within this lay hidden alone (a chip over it)
# beside its hand, not swept with it: it stays a left-over for UNSEEN_LEFT_OVER_S (QA50 dealing3 M1).
# A card covered (a hand, a chip) and then swept with its hand ends after its hand left: measured on
# dealing3's busy sim (15 fps), "read within 1 s after it was last read" kept such a card and took
# the same card dealt again to its seat for it (1 in 100 rounds).
HIDDEN_ALONE_S = 1.0
# Rules 8, one deck: a left-over first read on another seat within this of its last reading on its own
# is that left-over dragged across the seat (QA50 dealing3 M2): it is read from frame to frame as it
# crosses the line (dealing3's drag, 10-30 fps: its track there began 0.4 s at most after its last
# reading on its seat), while a card swept off the table and one dealt take longer (dealing3's busy sim
# dealt a card of the code just swept off seat 7 onto seat 2 0.67 s after: a fresh pack each round).
# Timed on the tracker's clock, not in frames: the camera's real rate is not always its setting.
LEFT_OVER_CARRIED_S = 0.5
# Rules 8: after a camera that showed no cards at all shows cards again, how long the round's cards
# have to be seen again before one still missing is taken as removed (each comes back as a new track,
# accepted after accept_after_s; QA50 dealing3 L1).
CAMERA_BACK_S = 1.5


class RoundState(StrEnum):
    idle = "idle"
    dealing = "dealing"
    complete = "complete"
    settled = "settled"
    cleared = "cleared"
    void = "void"


class EventKind(StrEnum):
    round_start = "round_start"
    card_accepted = "card_accepted"
    card_removed = "card_removed"
    round_complete = "round_complete"
    round_settled = "round_settled"
    round_cleared = "round_cleared"
    round_void = "round_void"
    card_corrected = "card_corrected"
    alert = "alert"
    camera_offline = "camera_offline"
    camera_online = "camera_online"
    camera_mirrored = "camera_mirrored"
    camera_mirror_cleared = "camera_mirror_cleared"
    camera_moved = "camera_moved"
    camera_move_cleared = "camera_move_cleared"


class AlertCode(StrEnum):
    duplicate_card = "duplicate_card"
    too_many_cards = "too_many_cards"
    card_moved = "card_moved"
    card_removed_before_settlement = "card_removed_before_settlement"
    card_reread = "card_reread"
    card_changed = "card_changed"          # read steadily as another card since (tracker rules 5)
    card_after_round = "card_after_round"  # a lone card on a settled or voided round's table
    camera_shows_no_cards = "camera_shows_no_cards"  # every card of a round in play gone at once (rules 8)


MANUAL_KINDS = frozenset({EventKind.card_corrected, EventKind.round_settled, EventKind.round_void})
"""Events caused by a person, not by the camera; a replay re-applies them (plus a
``round_cleared`` whose ``data`` has ``manual: true``) after the frame they name."""

CAMERA_KINDS = frozenset({EventKind.camera_offline, EventKind.camera_online, EventKind.camera_mirrored,
                          EventKind.camera_mirror_cleared, EventKind.camera_moved, EventKind.camera_move_cleared})


class RoundError(NiuniuError):
    """An action the round cannot take now; the message says why and what to do instead."""


@dataclass(frozen=True, slots=True)
class RoundEvent:
    """One thing that happened at the table; ``data`` is JSON-safe and depends on ``kind``:

    * every kind that changes or reports the state has ``state`` (the state after it);
    * ``card_accepted``: ``confidence``, ``needs_confirmation``, ``count`` (cards on the
      seat now), and ``moved_from`` (a seat) or ``reopened: true`` when that applies;
    * ``card_removed``: only ``state`` (the alert, if any, is a separate event);
    * ``alert``: ``code`` (:class:`AlertCode`), ``message`` (for people), plus ``seats``
      (duplicate_card), ``moved_from``/``moved_to`` (card_moved), ``count`` (too_many_cards; camera_shows_no_cards:
      the round's cards it lost, rules 8),
      ``read_as`` (card_reread, card_changed), ``seconds`` (card_changed: how long it had read so
      when raised), ``since_frame`` (card_changed: the frame it has read so since; card_after_round:
      the frame the card was first seen alone; rules 6), ``state`` (card_changed, card_after_round:
      the round's state when it was raised);
    * ``round_complete``: ``seats`` {seat: [codes]} (``by: "settlement"`` if settle() completed it);
    * ``round_settled``: ``bets`` {seat: Bet.to_json()}, ``banker_bid``, ``banker_stack`` (only
      where the preset limits the banker's cover), ``settlement``
      (Settlement.to_json()), ``actor`` if given;
    * ``card_corrected``: ``old``, ``new`` (codes or null), ``action`` (replaced, added,
      removed, confirmed), ``actor``, ``reason``;
    * ``round_void``: ``actor``, ``reason``, ``seats``;
    * ``round_cleared``: ``previous_state``, ``seats`` (the final record), ``manual`` and
      ``actor`` for the dealer's clear, ``reason`` when a new deal cleared it, with
      ``new_cards`` ([seat, card] of the new deal's cards that cleared it);
    * ``camera_offline``/``camera_online``: ``reason``, ``source``, ``reconnects``;
    * ``camera_mirrored``/``camera_mirror_cleared``: ``reason``, ``source``, ``log_odds`` (the
      deciding check's: above 0 reads mirrored), ``checks`` (seats judged so far);
    * ``camera_moved``/``camera_move_cleared``: ``reason``, ``source``, ``aim`` (``moved`` or
      ``lost``: no table found), ``shift`` (share of the picture's width, null when lost),
      ``inliers`` (table features that agreed), ``since`` (the view compared with).
    """

    kind: EventKind
    round_no: int
    ts: float
    frame_no: int | None
    seat: str | None = None
    card: str | None = None
    data: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"kind": str(self.kind), "round_no": self.round_no, "ts": self.ts, "frame_no": self.frame_no,
                "seat": self.seat, "card": self.card, "data": self.data}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "RoundEvent":
        try:
            return cls(EventKind(data["kind"]), int(data["round_no"]), float(data["ts"]),
                       None if data.get("frame_no") is None else int(data["frame_no"]),
                       data.get("seat"), data.get("card"), dict(data.get("data") or {}))
        except (KeyError, ValueError, TypeError) as exc:
            raise RoundError(f"event {dict(data)!r} is not a round event: {exc}") from None

    @property
    def is_manual(self) -> bool:
        return self.kind in MANUAL_KINDS or (self.kind == EventKind.round_cleared and bool(self.data.get("manual")))

    @property
    def alert_code(self) -> AlertCode | None:
        return AlertCode(self.data["code"]) if self.kind == EventKind.alert else None


@dataclass(slots=True)
class _Entry:
    """One card in the round's record of a seat."""

    card: Card
    confidence: float
    needs_confirmation: bool
    present: bool = True   # the tracker shows it now
    manual: bool = False   # entered by a correction: the camera does not vouch for it
    checked: bool = False  # a person confirmed it: the camera's later doubts are not raised again
    reread: Card | None = None   # what the camera read it as after accepting it (the tracker's recheck)
    changed: Card | None = None  # what the camera has read it as steadily since (card_changed raised)
    change_checked: bool = False  # a person looked after that alert and confirmed the card
    # rules 7: the frame its tracker track was first seen in (which physical sighting it is; None: not
    # known), and the readings a person looked at and confirmed it against (each raised once)
    track: int | None = None
    checked_as: frozenset = frozenset()


Listener = Callable[[RoundEvent], None]
BatchListener = Callable[[list[RoundEvent]], None]


class RoundMachine:
    """One table's rounds, one after another.  Thread-safe; see the module docstring."""

    def __init__(self, config: TableConfig, *, round_no: int = 0, listeners: Iterable[Listener] = (),
                 hold_unsettled: bool | Callable[[], bool] = False) -> None:
        self.config = config
        # True (or a question asked at each empty frame) wherever rounds are settled: the
        # kiosk's TableService holds a round that has bets.  Where nobody settles (a replay of
        # a frame folder, a benchmark) an empty table is the one sign that a round ended.
        self.hold_unsettled = hold_unsettled
        self.state = RoundState.idle
        self.round_no = round_no
        self.settlement: Settlement | None = None
        self.last_frame_no: int | None = None
        self.last_ts: float | None = None
        self._record: dict[str, list[_Entry]] = {}
        self._active: tuple[str, ...] | None = None
        self._current: set[tuple[str, Card]] = set()      # every card the tracker shows now
        # Left-overs of an earlier round (on the table at a manual clear), mapped to whether the
        # tracker has shown them yet: one is forgotten only after it was seen and then left, so a
        # replay whose tracker needs a few frames to see it again ignores it just the same.
        self._stale: dict[tuple[str, Card], bool] = {}
        # Rules 7: the track (its first frame) each left-over lies on, None until seen: the same card
        # on another track left and came back (dealt again), and counts (QA49 dealing2 H2)
        self._stale_tracks: dict[tuple[str, Card], int | None] = {}
        self._current_tracks: dict[tuple[str, Card], set] = {}  # the tracks each card shown lies on
        self._read_tracks: set[tuple[str, Card, int | None]] = set()   # those read in this frame (seen)
        # Left-overs the table may no longer hold (a finished round's cards after a restart:
        # swept while the kiosk was down, or not): forgotten if the tracker has not shown them
        # within this many frames, else a card dealt again to its seat would be ignored.
        self._stale_frames_left: dict[tuple[str, Card], int] = {}
        # Misreads a person corrected, as (seat, card); rules 9: an extra copy of a card a person removed
        # while the other stays on the seat, as (seat, card, its track): only that track is kept out
        self._suppressed: set[tuple] = set()
        # Rules 8 (QA50 dealing3 M1, M2): the clock each card of a finished round (its record's, or a
        # left-over) was last read at; the finished round's cards whose track ended while hidden
        # alone (a chip over one), by the frame it ended; and the left-overs already kept past their
        # track's end, or carried across seats (kept once: seen and gone again, they have left).
        self._read_at: dict[tuple[str, Card], tuple[float, int]] = {}   # (clock, frame)
        self._hidden: dict[tuple[str, Card], int] = {}
        self._kept: set[tuple[str, Card]] = set()
        # Those of the cards kept as hidden alone (in _hidden, or left-overs kept unseen) whose hand
        # has not been read since their track ended, by that frame: their hand may have been swept
        # with them under the cover, in the last frames before it (QA51: kept, the same card dealt
        # again to the seat was taken for them)
        self._unconfirmed: dict[tuple[str, Card], int] = {}
        self._clocks: deque = deque(maxlen=256)   # (frame, clock) of the last frames, to time a track's start
        # Rules 8 (QA50 dealing3 L1): while the camera shows no cards after every card of the round in
        # play vanished in one frame, [the clock it went blind, the clock it showed cards again]
        self._blind: list | None = None
        self._none_read = False   # the last frame showed cards, none of them read (all kept unseen)
        # The tracker rules (vision.tracker.TRACKER_VERSION) whose round rules it runs: older
        # ones to replay a recording made under them as it ran (5: a lone card on a finished
        # round's table starts no round; 6: the same after a manual clear; 7: which card is which
        # goes by the tracker's track; 8: left-overs hidden alone, carried across seats, and a camera
        # that shows no cards; 9: a copy removed by hand, and the finished round's readings, by track;
        # 10: a card hidden alone goes with its hand, a settled round's removals by track; see the
        # module docstring).
        self.rules = TRACKER_VERSION
        # New cards waiting to start a round: (seat, card) -> [clock first seen, frame first seen,
        # alerted]; under rules 5, the lone cards alerted on this finished round (alerted at once).
        self._lone: dict[tuple[str, Card], list] = {}
        self._finished_as: str | None = None   # the state the round was cleared from (for its alerts)
        self._finished_frame: int | None = None   # the frame it was settled or voided at (rules 7)
        self._alerts: list[RoundEvent] = []
        self._listeners: list[Listener] = list(listeners)
        self._gates: list[BatchListener] = []
        self._undo_listeners: list[Callable[[], None]] = []
        self._view_listeners: list[Callable[[], None]] = []
        self._changes = 0              # depth of _changing(): only the outermost change is undone
        # next_deal_cards as last worked out, with the (rules, state) it was worked out under: read
        # up to four times a frame (observe, then the kiosk's bets and alerts), it sweeps every card
        # shown.  Forgotten whenever what it reads may have changed (the end of each change, an undo,
        # left-overs named); rules and state are public and set directly (a replay's rules).
        self._next_deal: tuple[tuple, list[tuple[str, str]]] | None = None
        self._committed = False        # the gates took this change's events
        self._lock = threading.RLock()
        # Public: listeners run under this lock, so a caller that also reads or writes
        # its own state from a listener (the kiosk) must take the same one.
        self.lock = self._lock
        try:
            self.preset = load_preset(config.rules)
        except NiuniuError as exc:
            raise ConfigError(f"table {config.table_id}: rules: {exc}") from None
        self.decks = self.preset.decks

    # ------------------------------------------------------------ views

    @property
    def hands(self) -> dict[str, SeatHand]:
        """The round's record per seat (seats without cards left out), in table order."""
        with self._lock:
            out = {}
            for seat in self.config.seat_names:
                entries = self._record.get(seat)
                if entries:
                    out[seat] = SeatHand(seat, tuple(e.card for e in entries),
                                         tuple(e.confidence for e in entries),
                                         tuple(e.needs_confirmation for e in entries))
            return out

    @property
    def absent_cards(self) -> set[tuple[str, str]]:
        """(seat, card) of the round's record the camera does not show now: a card covered, or
        swept before settlement.  One seen again is present again, and its alert is answered."""
        with self._lock:
            return {(seat, e.card.code) for seat, entries in self._record.items() for e in entries
                    if not e.present and not e.manual}

    @property
    def doubtful_cards(self) -> set[tuple[str, str]]:
        """(seat, card) of the record waiting for a person to confirm or correct it."""
        with self._lock:
            return {(seat, e.card.code) for seat, entries in self._record.items() for e in entries
                    if e.needs_confirmation}

    @property
    def changed_cards(self) -> set[tuple[str, str]]:
        """(seat, card) of the record the camera has read steadily as another card since
        (``card_changed``), not yet confirmed by a person.  Settling waits for them (rules 6)."""
        with self._lock:
            return {(seat, e.card.code) for seat, entries in self._record.items() for e in entries
                    if e.changed is not None and not e.change_checked}

    @property
    def alerts(self) -> tuple[RoundEvent, ...]:
        """This round's alerts, oldest first."""
        return tuple(self._alerts)

    @property
    def active_seats(self) -> tuple[str, ...]:
        with self._lock:
            if self._active is not None:
                return self._active
            return tuple(s for s in self.config.seat_names if s == "banker" or self._record.get(s))

    def add_listener(self, listener: Listener) -> None:
        with self._lock:
            self._listeners.append(listener)

    def add_gate(self, gate: BatchListener) -> None:
        """A listener that must take each change's events (all of them, in one call) before
        they count: if it raises, the change is undone and the other listeners never hear it."""
        with self._lock:
            self._gates.append(gate)

    def add_undo_listener(self, listener: Callable[[], None]) -> None:
        """Called (under the lock) after a change a gate refused has been undone: whoever
        shows the machine's state must show it as it is again, not as the refused change
        left it while its gates were asked (the dealer's screen drew a settle the audit log
        refused as SETTLED)."""
        with self._lock:
            self._undo_listeners.append(listener)

    @contextmanager
    def _changing(self):
        """The machine's lock, and its state put back if the change fails before its gates
        took it (a full disk under the audit log): a settle that raised must leave the round
        settleable, a frame that raised is seen again with the next one."""
        with self._lock:
            if self._changes:
                self._changes += 1
                try:
                    yield
                finally:
                    self._changes -= 1
                return
            saved = self._saved()
            self._changes, self._committed = 1, False
            try:
                yield
            except BaseException:
                if not self._committed:
                    self._restore(saved)
                    for listener in self._undo_listeners:
                        try:
                            listener()
                        except Exception:   # the refusal is what the caller must hear
                            log.exception("an undo listener failed")
                raise
            finally:
                self._changes = 0
                self._next_deal = None   # a stale answer would open or close bets wrongly

    def _saved(self) -> tuple:
        record = {seat: [replace(entry) for entry in entries] for seat, entries in self._record.items()}
        return (self.state, self.round_no, self.settlement, self.last_frame_no, self.last_ts, record,
                self._active, set(self._current), dict(self._stale), dict(self._stale_frames_left),
                set(self._suppressed), list(self._alerts), {k: list(v) for k, v in self._lone.items()},
                self._finished_as, dict(self._stale_tracks), dict(self._current_tracks), self._finished_frame,
                dict(self._read_at), dict(self._hidden), set(self._kept), dict(self._unconfirmed),
                None if self._blind is None else list(self._blind), self._none_read, set(self._read_tracks))

    def _restore(self, saved: tuple) -> None:
        (self.state, self.round_no, self.settlement, self.last_frame_no, self.last_ts, self._record,
         self._active, self._current, self._stale, self._stale_frames_left, self._suppressed, self._alerts,
         self._lone, self._finished_as, self._stale_tracks, self._current_tracks, self._finished_frame,
         self._read_at, self._hidden, self._kept, self._unconfirmed, self._blind, self._none_read,
         self._read_tracks) = saved
        self._next_deal = None

    def set_active_seats(self, seats: Iterable[str] | None) -> None:
        """Name the seats that play this round (the banker is always one); ``None``: seats with cards."""
        with self._lock:
            if seats is None:
                self._active = None
                return
            names = tuple(dict.fromkeys(["banker", *seats]))
            unknown = [s for s in names if s not in self.config.seat_names]
            if unknown:
                raise RoundError(f"seat {unknown[0]!r} is not at table {self.config.table_id} "
                                 f"(seats: {', '.join(self.config.seat_names)})")
            self._active = tuple(s for s in self.config.seat_names if s in names)

    def ignore_present(self, cards: Iterable[tuple[str, str | Card] | tuple[str, str | Card, int]],
                       forget_after: int | None = None) -> None:
        """Treat these (seat, card) as left over from an earlier round until they leave the table.

        With ``forget_after`` (or a third item per card, as :attr:`stale_cards` gives it), one
        the tracker has not shown within that many frames is forgotten: the table may no
        longer hold it at all."""
        with self._lock:
            self._next_deal = None
            for seat, c, *frames in cards:
                key = (seat, _card(c))
                self._stale.setdefault(key, False)
                left = frames[0] if frames else forget_after
                if left is not None and not self._stale[key]:
                    self._stale_frames_left[key] = int(left)

    @property
    def stale_cards(self) -> list[list[str | int]]:
        """Left-over [seat, card] pairs being ignored, with the frames left to see the ones that
        may be gone (a recording stores them to replay exactly)."""
        return sorted([seat, card.code] + ([self._stale_frames_left[(seat, card)]]
                                           if (seat, card) in self._stale_frames_left else [])
                      for seat, card in self._stale)

    @property
    def stale_tracks(self) -> list[dict]:
        """Rules 7: each left-over's track (its first frame; None: not known yet), whether it was
        seen, and whether that track is shown now.  Rules 7 tell a left-over from a card of its
        code dealt again by the track, so a recording that stored only (seat, card) replayed the
        other physical card as the left-over (QA50 dealing3 H2); [] under older rules."""
        with self._lock:
            if self.rules < 7:
                return []
            return [{"seat": seat, "card": card.code, "track": self._stale_tracks.get((seat, card)), "seen": seen,
                     "shown": self._stale_tracks.get((seat, card)) in self._current_tracks.get((seat, card), ())}
                    for (seat, card), seen in sorted(self._stale.items(), key=lambda kv: (kv[0][0], kv[0][1].code))]

    @property
    def shown_cards(self) -> list[tuple[str, str, int]]:
        """Rules 7: (seat, card, its track's first frame) of each card shown now that is not a
        left-over.  A round often starts seconds after its first cards landed (returned or lying
        over a card, never waiting alone), and a recording's pre-roll must reach back to them for
        its replay to accept them as the live tracker did (QA50 dealing3 H2); [] under older rules."""
        with self._lock:
            if self.rules < 7:
                return []
            return sorted((seat, card.code, track) for (seat, card), tracks in self._current_tracks.items()
                          for track in tracks if track is not None and not self._is_stale(seat, card, track))

    def ignore_on_tracks(self, left_overs: Iterable[tuple[str, str | Card, int | None, bool]]) -> None:
        """Put back which track each left-over lies on, and whether it was seen (rules 7), as
        :attr:`stale_tracks` recorded them: a replay then tells the left-over from a card of its
        code dealt again as the live machine did.  Cards not being ignored are left alone."""
        with self._lock:
            self._next_deal = None
            for seat, c, track, seen in left_overs:
                key = (seat, _card(c))
                if key in self._stale:
                    self._stale[key] = bool(seen)
                    self._stale_tracks[key] = track

    # ------------------------------------------------------------ the camera's side

    def observe(self, hands: Mapping[str, SeatHand], frame_no: int, ts: float,
                mono: float | None = None) -> list[RoundEvent]:
        """Take the tracker's view of one frame; return (and publish) the events it caused.

        ``ts``, the frame's wall time, only stamps the events.  How long a lone card has
        waited is measured on ``mono``, the tracker's clock (:attr:`vision.sources.Frame.mono`;
        ``ts`` where none is given), so NTP stepping the wall clock neither raises nor holds
        back an alert; a left-over is forgotten after a number of frames."""
        with self._lock:
            shown = (self.stale_cards, self.absent_cards, self.next_deal_cards, len(self._alerts))
            events = self._observe(hands, frame_no, ts, ts if mono is None else mono)
            if not events and (self.stale_cards, self.absent_cards, self.next_deal_cards,
                               len(self._alerts)) != shown:
                # no event, but what the dealer's screen shows changed: the left-overs it
                # ignores (one swept away, or first seen after a restart), or a card that had
                # left its seat is seen there again (its alert is answered), or the next deal's
                # cards came or went (bets close while any lies there)
                for listener in self._view_listeners:
                    listener()
            return events

    def add_view_listener(self, listener: Callable[[], None]) -> None:
        """Called (under the lock) when a frame changed what the machine shows without an
        event: the left-over cards it ignores (:attr:`stale_cards`), the cards of the record
        the camera does not show (:attr:`absent_cards`)."""
        with self._lock:
            self._view_listeners.append(listener)

    def _observe(self, hands: Mapping[str, SeatHand], frame_no: int, ts: float, clock: float) -> list[RoundEvent]:
        with self._changing():
            self.last_frame_no, self.last_ts = frame_no, ts
            events: list[RoundEvent] = []
            current = {(seat, card) for seat, hand in hands.items() if seat in self.config.seat_names
                       for card in hand.cards}
            before = self._current
            self._current = current
            self._current_tracks = _tracks_shown(hands)
            self._read_tracks = _tracks_read(hands)
            none_read = self._none_read
            if self.rules >= 8:
                self._clocks.append((frame_no, clock))
                self._note_reads(hands, before, frame_no, clock)
                self._none_read = bool(current) and not any(
                    seen for seat, hand in hands.items() if seat in self.config.seat_names
                    for seen in hand.seen or (True,) * len(hand.cards))
            self._prune_stale(current, clock, before, frame_no)
            self._count_down_stale(current)
            visible = self._visible_cards(hands)

            if self.state in (RoundState.settled, RoundState.void):
                new, returned = self._new_on_finished(visible)
                if self._deal_begun(new, hands):
                    # The next deal began before the last cards were swept: those are left-overs
                    # (rules 7: not a card of the record that left and came back, dealt again).
                    self._clear(events, frame_no, ts, manual=False, reason="new card dealt",
                                new_cards=[(seat, c) for seat, cards in visible.items() for c, _, _ in cards
                                           if (seat, c) in new | returned])
                    for key in current - new - returned:
                        self._mark_stale(key)
                    self._keep_hidden(frame_no)
                    visible = self._visible_cards(hands)
                else:
                    if self.rules >= 6:
                        self._wait(new, hands, events, frame_no, ts, clock)
                    for seat, card in () if self.rules >= 6 else new - set(self._lone):   # rules 5: at once
                        self._lone[(seat, card)] = [clock, frame_no, True]
                        self._alert(events, AlertCode.card_after_round, ts, frame_no, seat, card,
                                    f"{card.code} appeared on seat {seat} after round {self.round_no} was "
                                    f"{'settled' if self.state == RoundState.settled else 'voided'}: a card "
                                    "put on a finished hand? It starts no round alone; the next round starts "
                                    "with the next card dealt", state=str(self.state))
                    if self.state == RoundState.settled:
                        self._mark_removed(visible, events, frame_no, ts)
                    self._note_changes(hands, events, frame_no, ts)
                    if not current:
                        self._clear(events, frame_no, ts, manual=False)
                    return self._publish(events)

            if self.state in (RoundState.idle, RoundState.cleared):
                if self.state == RoundState.cleared and self.rules >= 6:
                    leftovers = {key for key in self._stale if key in current}
                    self._note_changes(hands, events, frame_no, ts, only=leftovers)
                    new = {(seat, c) for seat, cards in visible.items() for c, _, _ in cards}
                    self._lone = {key: waiting for key, waiting in self._lone.items() if key in new}
                    if self._waits(new, leftovers, hands):
                        # beside the last round's left-overs, or first seen there: it waits
                        self._wait(new, hands, events, frame_no, ts, clock)
                        return self._publish(events)
                if not visible:
                    self._lone = {}
                    return self._publish(events)
                self._start(events, frame_no, ts)

            rereads = {(seat, card): reread for seat, hand in hands.items()
                       for card, reread in zip(hand.cards, hand.rereads) if reread is not None}
            self._add_cards(visible, events, frame_no, ts, rereads)
            if not (self.rules >= 8 and self._camera_blind(current, none_read, events, frame_no, ts, clock)):
                self._mark_removed(visible, events, frame_no, ts)
            self._note_changes(hands, events, frame_no, ts)
            if self.state == RoundState.dealing and self._hands_complete():
                self.state = RoundState.complete
                events.append(self._event(EventKind.round_complete, ts, frame_no,
                                          data={"seats": self._seat_codes(), "state": str(self.state)}))
            # An unsettled round is never ended by what the camera does not see: a dealer's arm
            # over the first card, a camera back on a dark frame, a sweep before Settle all look
            # like an empty table, and clearing then threw the round's bets away with it.  The
            # round stays on record (each card gone raised its alert) until it is settled as
            # dealt or a supervisor voids it; cards seen again rejoin their entries.
            hold = self.hold_unsettled() if callable(self.hold_unsettled) else self.hold_unsettled
            if not current and not hold:
                self._clear(events, frame_no, ts, manual=False)
            return self._publish(events)

    def _visible_cards(self, hands: Mapping[str, SeatHand]) -> dict[str, list[tuple[Card, float, bool]]]:
        """Tracker cards that count for the round: not left-overs, not misreads a person corrected."""
        visible = {}
        for seat, hand in hands.items():
            if seat not in self.config.seat_names:
                continue
            tracks = hand.first_frames or (None,) * len(hand.cards)
            cards = [(c, conf, nc) for c, conf, nc, track in zip(hand.cards, hand.confidence,
                                                                 hand.needs_confirmation, tracks)
                     if not self._is_stale(seat, c, track) and not self._corrected_away(seat, c, track)]
            if cards:
                visible[seat] = cards
        return visible

    def _start(self, events: list[RoundEvent], frame_no: int | None, ts: float) -> None:
        self.round_no += 1
        self.state = RoundState.dealing
        self._record = {}
        self._alerts = []
        self._suppressed = set()
        self._lone = {}
        self._finished_as = None
        self._finished_frame = None
        self.settlement = None
        self._hidden = {}
        self._read_at = {key: at for key, at in self._read_at.items() if key in self._stale}
        self._kept = {key for key in self._kept if key in self._stale}
        self._unconfirmed = {key: ended for key, ended in self._unconfirmed.items() if key in self._stale}
        self._blind = None
        events.append(self._event(EventKind.round_start, ts, frame_no, data={"state": str(self.state)}))

    def _add_cards(self, visible, events, frame_no, ts, rereads) -> None:
        for seat in self.config.seat_names:
            cards = visible.get(seat, [])
            record = self._record.setdefault(seat, [])
            used: set[int] = set()
            for card, conf, nc in cards:
                # the same card already on this seat's record (first unused occurrence; rules 9: one on a
                # track shown now first, so a copy whose track ended is the one left unseen: QA52 bench A)
                unused = [i for i, e in enumerate(record) if i not in used and e.card == card]
                if self.rules >= 9:
                    unused.sort(key=lambda i: not self._on_shown_track(seat, record[i]))
                match = unused[0] if unused else None
                if match is not None:
                    used.add(match)
                    record[match].present = True
                    record[match].track = self._track_of(seat, card, record[match].track, record[match])
                    reread = rereads.get((seat, card))
                    if reread is not None and not (record[match].reread or record[match].checked):
                        self._doubt(record[match], reread, events, frame_no, ts, seat)
                    continue
                data: dict[str, Any] = {"confidence": conf, "needs_confirmation": nc}
                moved_from = self._moved_from(seat, card, visible)
                if moved_from is not None:
                    self._record[moved_from] = [e for e in self._record[moved_from] if e.card != card]
                    data["moved_from"] = moved_from
                was_complete = self.state == RoundState.complete
                new_seat = not record
                at = _dealt_position(record, card, [c for c, _, _ in cards])
                record.insert(at, _Entry(card, conf, nc, track=self._track_of(seat, card)))
                used = {i + (i >= at) for i in used} | {at}
                data["count"] = len(record)
                if was_complete and new_seat and self._active is None and seat != "banker":
                    self.state = RoundState.dealing  # a seat joined after "complete": not complete any more
                    data["reopened"] = True
                data["state"] = str(self.state)
                events.append(self._event(EventKind.card_accepted, ts, frame_no, seat, card.code, data))
                if moved_from is not None:
                    self._alert(events, AlertCode.card_moved, ts, frame_no, seat, card,
                                f"{card.code} moved from seat {moved_from} to seat {seat}",
                                moved_from=moved_from, moved_to=seat)
                elif self.decks == 1:
                    total = sum(e.card == card for entries in self._record.values() for e in entries)
                    if total > 1:
                        seats = [s for s in self.config.seat_names
                                 if any(e.card == card for e in self._record.get(s, ()))]
                        where = " and ".join(f"seat {s}" for s in seats)
                        self._alert(events, AlertCode.duplicate_card, ts, frame_no, seat, card,
                                    f"{card.code} is on {where}; a single deck has one", seats=seats)
                if len(record) > HAND_SIZE:
                    self._alert(events, AlertCode.too_many_cards, ts, frame_no, seat, card,
                                f"seat {seat} has {len(record)} cards; a hand has {HAND_SIZE}", count=len(record))

    def _camera_blind(self, current: set[tuple[str, Card]], none_read: bool, events, frame_no, ts,
                      clock: float) -> bool:
        """Whether the camera shows no cards (rules 8, QA50 dealing3 L1), so the round's cards are not
        taken as removed.  A dark or covered camera reads no card for ``remove_after_s``, then the
        tracker drops every track in one frame; a table swept before Settle is read as its cards go,
        seat by seat.  When every card of the round in play vanishes in the same frame after a frame
        that read none of them, one ``camera_shows_no_cards`` alert is raised (not a removal per
        card: the round page read twelve cards "removed before settlement" that never moved), the cards
        stay on record as shown, and the ones the camera shows again are the same cards.  Once it shows
        cards again the alert leaves the screen (the log keeps it), and a card not seen again within
        ``CAMERA_BACK_S`` is taken as removed, as ever."""
        if self._blind is None:
            entries = [e for record in self._record.values() for e in record if not e.manual]
            if current or not none_read or len(entries) < 2 or not all(e.present for e in entries):
                return False
            if not (self.hold_unsettled() if callable(self.hold_unsettled) else self.hold_unsettled):
                return False    # where nobody settles, an empty table ends the round (with its alerts)
            self._blind = [clock, None]
            event = self._event(EventKind.alert, ts, frame_no, data={
                "code": str(AlertCode.camera_shows_no_cards), "count": len(entries), "state": str(self.state),
                "message": f"the camera shows no cards: all {len(entries)} cards of round {self.round_no} "
                           "vanished from it in the same frame (dark, covered or turned away?); they are kept "
                           "as dealt, and the cards it shows again are the same cards"})
            self._alerts.append(event)
            events.append(event)
            return True
        if not current:
            return self._blind[1] is None or clock - self._blind[1] < CAMERA_BACK_S
        if self._blind[1] is None:
            self._blind[1] = clock
            # what the camera shows is cards again: the screen stops saying it shows none
            self._alerts = [a for a in self._alerts if a.data.get("code") != AlertCode.camera_shows_no_cards]
        if clock - self._blind[1] < CAMERA_BACK_S:
            return True
        self._blind = None
        return False

    def _doubt(self, entry: _Entry, reread: Card, events, frame_no, ts, seat: str) -> None:
        """The camera's reads since it accepted ``entry`` name another card: settling waits
        for a person to look (a card taken in the blur of its first frames, read right after)."""
        entry.needs_confirmation, entry.reread = True, reread
        self._alert(events, AlertCode.card_reread, ts, frame_no, seat, entry.card,
                    f"{entry.card.code} on seat {seat} has been read as {reread.code} since: look at the card, "
                    "then confirm or correct it", read_as=reread.code)

    def _note_changes(self, hands: Mapping[str, SeatHand], events, frame_no, ts,
                      only: set[tuple[str, Card]] | None = None) -> None:
        """Raise ``card_changed`` for a recorded card the tracker reports read steadily as
        another since its recheck (a card replaced in place between two frames): once per card
        it changed to, in any state (``only`` these cards: a cleared round's left-overs), never
        changing the record (a person looks and decides).  Rules 7: a reading a person has
        confirmed the card against is not raised again when the card reads so once more (QA49
        dealing2 L2: it came back after the card read as a third card)."""
        for seat, hand in hands.items():
            for card, change in zip(hand.cards, hand.changes):
                if change is None or (only is not None and (seat, card) not in only):
                    continue
                entry = next((e for e in self._record.get(seat, ()) if e.card == card and not e.manual), None)
                other, seconds = change.card, change.seconds
                if entry is None or entry.changed == other:
                    continue
                entry.changed, entry.change_checked = other, self.rules >= 7 and other in entry.checked_as
                if entry.change_checked:
                    continue   # rules 7: a person looked at the card read so once (QA49 dealing2 L2)
                finished = self._finished_as if self.state == RoundState.cleared else str(self.state)
                if finished in (RoundState.settled, RoundState.void):
                    ask = (f"look at the card: round {self.round_no} was "
                           f"{'settled' if finished == RoundState.settled else 'voided'} with {card.code}")
                else:
                    ask = "look at the card, then confirm or correct it"
                extra: dict[str, Any] = {}
                if self.rules >= 6 and change.since_frame is not None:
                    # QA49 watch M7: "for 0.4 s" read as a flicker, of a card that lay there for
                    # seconds; when it was raised is the event's own frame
                    said = (f"{card.code} on seat {seat} has read as {other.code}, steadily and in the same "
                            f"place, since frame {change.since_frame}: {ask}")
                    extra["since_frame"] = change.since_frame
                else:
                    said = f"{card.code} on seat {seat} has read as {other.code} for {seconds:.1f} s: {ask}"
                self._alert(events, AlertCode.card_changed, ts, frame_no, seat, card, said,
                            read_as=other.code, seconds=seconds, **extra, state=str(self.state))

    def _wait(self, new: set[tuple[str, Card]], hands: Mapping[str, SeatHand], events, frame_no, ts,
              clock: float) -> None:
        """Keep the lone new card waiting for a second (rules 6, see the module docstring), and
        raise ``card_after_round`` once it has waited ``LONE_CARD_S`` beside the finished round's
        cards, seen now (a table being swept around the next deal's first card shows none)."""
        self._lone = {key: self._lone.get(key) or [clock, frame_no, False] for key in new}
        beside = any(seen for seat, hand in hands.items()
                     for card, seen in zip(hand.cards, hand.seen or (True,) * len(hand.cards))
                     if (seat, card) not in self._lone)
        if self.rules >= 8:
            # QA50 dealing3 M4: the next deal's other cards (codes of the record dealt again) are not
            # the finished round's: the words said "beside round N's cards" after those were swept
            beside = self._finished_card_seen(hands)
        finished = self._finished_as if self.state == RoundState.cleared else str(self.state)
        for (seat, card), waiting in self._lone.items():
            first, since, alerted = waiting
            if alerted or not beside or clock - first < LONE_CARD_S:
                continue
            waiting[2] = True
            if self.state == RoundState.cleared:
                where = f"among round {self.round_no}'s left-over cards (cleared for the next round)"
            else:
                where = (f"beside round {self.round_no}'s cards, "
                         f"{'settled' if finished == RoundState.settled else 'voided'} without it,")
            self._alert(events, AlertCode.card_after_round, ts, frame_no, seat, card,
                        f"{card.code} has lain on seat {seat} {where} with no other new card for "
                        f"{LONE_CARD_S:g} s since frame {since}: a card put on a finished hand? It starts no "
                        "round alone: it joins the next round if it is still there when the next card is dealt",
                        since_frame=since, state=str(self.state))

    def _finished_card_seen(self, hands: Mapping[str, SeatHand]) -> bool:
        """Whether a card of the finished round (on its record's track, or a left-over) was read in
        this frame (rules 8)."""
        recorded = {e.card for entries in self._record.values() for e in entries}
        finished = self.state in (RoundState.settled, RoundState.void)
        for seat, hand in hands.items():
            tracks = hand.first_frames or (None,) * len(hand.cards)
            for card, seen, track in zip(hand.cards, hand.seen or (True,) * len(hand.cards), tracks):
                if seen and (seat, card) not in self._lone and (
                        ((seat, card) in self._stale and self._is_stale(seat, card, track))
                        or (finished and self._of_finished((seat, card), recorded))):
                    return True
        return False

    @property
    def waiting_cards(self) -> list[tuple[str, str, int]]:
        """(seat, card, frame first seen) of each card now waiting to start a round (rules 6)."""
        with self._lock:
            return sorted((seat, card.code, since) for (seat, card), (_, since, _) in self._lone.items()) \
                if self.rules >= 6 else []

    @property
    def next_deal_cards(self) -> list[tuple[str, str]]:
        """(seat, card) the last frame showed that are the next deal's, not the finished round's:
        new, returned (rules 7) or waiting to start a round.  The next round may start only several
        cards later (a returned card counts for nothing), and bets taken meanwhile would be placed
        with cards seen (QA50 dealing3 H1: past-posting), so the kiosk closes them on any.

        Worked out once per frame, not each time it is read: within a change (a listener asking
        while its events are published) always afresh, as the change may go on or be undone."""
        with self._lock:
            if self._changes:
                return self._work_out_next_deal()
            key = (self.rules, self.state)
            if self._next_deal is None or self._next_deal[0] != key:
                self._next_deal = (key, self._work_out_next_deal())
            return list(self._next_deal[1])

    def _work_out_next_deal(self) -> list[tuple[str, str]]:
        out = {(seat, card) for seat, card in self._lone} if self.rules >= 6 else set()
        if self.state in (RoundState.settled, RoundState.void):
            visible: dict[str, list] = {}
            for (seat, card), tracks in self._current_tracks.items():
                if (seat in self.config.seat_names and any(
                        not self._is_stale(seat, card, track) and not self._corrected_away(seat, card, track)
                        for track in tracks)):
                    visible.setdefault(seat, []).append((card, None, False))
            new, returned = self._new_on_finished(visible)
            out |= new | returned
        return sorted((seat, card.code) for seat, card in out)

    def _moved_from(self, seat: str, card: Card, visible) -> str | None:
        """The seat this card left, if it was recorded elsewhere and is no longer seen there."""
        if self.decks != 1:
            return None
        for other, entries in self._record.items():
            if other == seat:
                continue
            if any(e.card == card and not e.manual for e in entries):
                still_there = any(c == card for c, _, _ in visible.get(other, []))
                if not still_there:
                    return other
        return None

    def _mark_removed(self, visible, events, frame_no, ts) -> None:
        """Mark each recorded card the tracker no longer shows as removed (``card_removed``; before
        settlement with its alert).

        Rules 10 (QA53 bench_dealing): on a settled round only a card shown on its record's track is
        still there, as :meth:`_of_finished` tells the round's own cards from the next deal's: the same
        code dealt to its seat after the sweep, before the next deal cleared the round, kept the swept
        card on record as lying there (no ``card_removed`` in the log, and the screen's left-the-table
        list without it).  Before settlement a card read again on another track is still that card
        (:meth:`_add_cards` follows it there first)."""
        by_track = self.rules >= 10 and self.state == RoundState.settled
        for seat, record in self._record.items():
            shown = [c for c, _, _ in visible.get(seat, [])]
            if self.rules >= 9:   # a copy on a track shown now is the one read (QA52 bench A)
                record = sorted(record, key=lambda e: not self._on_shown_track(seat, e))
            for entry in record:
                if entry.manual or not entry.present:
                    continue
                if entry.card in shown and not (by_track and not self._on_shown_track(seat, entry)):
                    shown.remove(entry.card)
                    continue
                entry.present = False
                before_settlement = self.state in (RoundState.dealing, RoundState.complete)
                events.append(self._event(EventKind.card_removed, ts, frame_no, seat, entry.card.code,
                                          {"state": str(self.state)}))
                if before_settlement:
                    self._alert(events, AlertCode.card_removed_before_settlement, ts, frame_no, seat, entry.card,
                                f"{entry.card.code} left seat {seat} before the round was settled")

    def _hands_complete(self) -> bool:
        counts = {seat: len(self._record.get(seat, ())) for seat in self.config.seat_names}
        active = self.active_seats
        players = [s for s in active if s != "banker"]
        return counts.get("banker", 0) >= HAND_SIZE and bool(players) and all(counts[s] >= HAND_SIZE for s in active)

    def _clear(self, events, frame_no, ts, *, manual: bool, actor: str | None = None,
               reason: str | None = None, new_cards: list[tuple[str, Card]] | None = None) -> None:
        data: dict[str, Any] = {"previous_state": str(self.state), "state": str(RoundState.cleared),
                                "seats": self._seat_codes()}
        if reason:
            data["reason"] = reason
        if new_cards:
            data["new_cards"] = [[seat, card.code] for seat, card in new_cards]
        if manual:
            data["manual"] = True
            if actor:
                data["actor"] = actor
        self._finished_as = str(self.state)
        self._finished_frame = None
        self.state = RoundState.cleared
        events.append(self._event(EventKind.round_cleared, ts, frame_no, data=data))
        self._suppressed = set()
        if not (manual and self.rules >= 6):
            self._lone = {}
        if manual:  # cards still lying there belong to the round just cleared, not the next one
            # (a lone card waiting to start the next round is not one of them: rules 6)
            self._stale = {key: True for key in self._current if key not in self._lone}
            self._stale_frames_left = {}
            self._stale_tracks = {}
            if self.rules >= 7:
                self._stale_tracks = {key: self._first_track(key) for key in self._stale}
                self._mark_unseen_record()

    def _prune_stale(self, current: set[tuple[str, Card]], clock: float = 0.0,
                     before: set[tuple[str, Card]] = frozenset(), frame_no: int = 0) -> None:
        """Forget the left-overs that were seen and have left.  Rules 7 go by the track: a left-over
        whose track ended, or was taken over by the same card read elsewhere on its seat (swept and
        dealt again), has left, even though its card is shown (QA49 dealing2 H2).  Rules 8: one whose
        track ended while it lay hidden alone (a chip over it: the tracker drops it after
        ``remove_after_s``, and the card seen again is a new track) has not been seen to leave: it
        stays a left-over for ``UNSEEN_LEFT_OVER_S`` (QA50 dealing3 M1); and on a one-deck table a
        left-over read on another seat is that left-over there too (dragged across it: M2)."""
        if self.rules < 7:
            self._stale = {key: seen or key in current for key, seen in self._stale.items()
                           if key in current or not seen}
            return
        if self.rules >= 8 and self.decks == 1:
            self._carry_stale(current - before, frame_no)   # first: the tracker drops its track on the seat it left
        for key, seen in list(self._stale.items()):
            tracks = self._current_tracks.get(key, set())
            if self._stale_tracks.get(key) is None and tracks - {None}:
                self._stale_tracks[key] = min(tracks - {None})   # first seen: the older one lay there
            here = bool(tracks) and (None in tracks or self._stale_tracks.get(key) in tracks)
            if here:
                self._stale[key] = True
            elif seen and self.rules >= 8 and not tracks and key not in self._kept and self._hidden_alone(key, clock):
                self._keep_unseen(key)
                self._await_hand(key, frame_no)
            elif seen:
                del self._stale[key]
                self._kept.discard(key)   # gone: a card of a later round may be kept in its turn
        self._stale_tracks = {key: track for key, track in self._stale_tracks.items() if key in self._stale}

    def _note_reads(self, hands: Mapping[str, SeatHand], before: set[tuple[str, Card]], frame_no: int,
                    clock: float) -> None:
        """Rules 8: when each card of the finished round (its record's while it is settled or voided,
        and every left-over) was last read; and which of the record's cards left the tracker while
        hidden alone (QA50 dealing3 M1), or, seen again on its seat since, are that card again."""
        finished = self.state in (RoundState.settled, RoundState.void)
        recorded = {(seat, e.card) for seat, entries in self._record.items() for e in entries
                    if not e.manual} if finished else set()
        for seat, hand in hands.items():
            tracks = hand.first_frames or (None,) * len(hand.cards)
            for card, seen, track in zip(hand.cards, hand.seen or (True,) * len(hand.cards), tracks):
                if not seen:
                    continue
                if self.rules >= 9:
                    # the finished round's own card, on its track: the next deal's card of a code its hand
                    # held, laid before the sweep, made each card swept with that hand look hidden alone
                    # beside it, and the same card dealt again was taken for it (QA52 bench B)
                    mine = ((seat, card) in recorded and self._on_record_track(seat, card, track)) or (
                        (seat, card) in self._stale and self._is_stale(seat, card, track))
                else:
                    mine = (seat, card) in recorded or (seat, card) in self._stale
                if mine:
                    self._read_at[(seat, card)] = (clock, frame_no)
        self._confirm_hidden()
        if not finished:
            return
        for key in (before - self._current) & recorded:
            if key not in self._kept and self._hidden_alone(key, clock):
                self._hidden[key] = frame_no
                self._await_hand(key, frame_no)
        frames = self._unseen_frames()
        for key, ended in list(self._hidden.items()):
            tracks = self._current_tracks.get(key, set()) - {None}
            if frame_no - ended > frames:
                del self._hidden[key]
            elif tracks:
                # the card seen again where the chip was: that card, on its new track
                seat, card = key
                for entry in self._record.get(seat, ()):
                    if entry.card == card and not entry.manual:
                        entry.track = min(tracks)
                del self._hidden[key]
                self._kept.add(key)

    def _hidden_alone(self, key: tuple[str, Card], clock: float) -> bool:
        """Whether, as this card's track ends, another card of the finished round on its seat is still
        read (within ``HIDDEN_ALONE_S``; rules 8): it lay hidden alone beside its hand, not swept with it.
        A left-over carried from another seat or kept already is none of its hand (the busy sim: a card
        taken for one carried kept its swept neighbour for 13 s, and the dealer added it by hand).
        A neighbour must have been read after this card last was: cards that all vanished in the same
        frame went together (the kiosk's tests feed hands milliseconds apart, with no tracker to hold a
        swept card ``remove_after_s``, and a restart's voided misdeal swept and dealt again was kept)."""
        seat, card = key
        last = self._read_at.get(key, (None, None))[1]
        return any(clock - at <= HIDDEN_ALONE_S and (last is None or frame > last)
                   for (other_seat, other), (at, frame) in self._read_at.items()
                   if other_seat == seat and other != card and (other_seat, other) not in self._kept)

    def _await_hand(self, key: tuple[str, Card], ended: int) -> None:
        """Rules 8: a card just kept as hidden alone whose hand was not read in the frame its track
        ended waits for its hand to be read again (:meth:`_confirm_hidden`)."""
        if not self._hand_read_since(key, ended):
            self._unconfirmed[key] = ended

    def _hand_read_since(self, key: tuple[str, Card], frame: int) -> bool:
        seat, card = key
        return any(at_frame >= frame for (other_seat, other), (_, at_frame) in self._read_at.items()
                   if other_seat == seat and other != card and (other_seat, other) not in self._kept)

    def _confirm_hidden(self) -> None:
        """Rules 8: a card kept as hidden alone lay beside its hand only if that hand was read after
        the card's track ended (a chip over the card, its hand lying on).  A hand swept within
        ``HIDDEN_ALONE_S`` before the end, the card under the dealer's hand (a cover of 0.5-3 s),
        took it along: QA51's busy sim at 10 fps kept such cards, and the same card dealt again to
        its seat was taken for them (added by hand at Settle).  So the keep is released once every
        card of its hand has left the tracker unread since, or a card of its code is seen on its seat
        before its hand was read again: it went with its hand, and the card seen is another."""
        for key, ended in list(self._unconfirmed.items()):
            if key not in self._hidden and key not in self._stale:
                del self._unconfirmed[key]
            elif self._hand_read_since(key, ended):
                del self._unconfirmed[key]      # its hand lay on: hidden alone, as kept
            elif self._current_tracks.get(key, set()) - {None} or self._hand_gone(key):
                self._release_hidden(key)
        if self.rules >= 10:
            kept = [key for key in self._kept if self._stale.get(key) is False and self._stale_tracks.get(key) is None]
            for key in [*self._hidden, *kept]:
                if key not in self._unconfirmed and self._hand_gone(key):
                    self._release_hidden(key)

    def _hand_gone(self, key: tuple[str, Card]) -> bool:
        """Whether every card of the hand a kept card lay hidden beside has left the tracker (rules 8)."""
        return not any((seat, other) in self._current for seat, other in self._read_at
                       if seat == key[0] and other != key[1] and (seat, other) not in self._kept)

    def _release_hidden(self, key: tuple[str, Card]) -> None:
        """A card kept as hidden alone went with its hand after all (rules 8; rules 10: its hand left the
        tracker while it was still unseen, QA53 bench_dealing 10 fps rounds 17-18: a payout chip over
        round 17's 4C was swept with it and its hand, and the 4C dealt to that seat in round 18, within
        ``UNSEEN_LEFT_OVER_S``, was taken for it and added by hand).  A chip left on a card after its hand
        was swept, lifted ``remove_after_s`` later, lets that card join the next round (Settle refuses six
        cards, the dealer takes it off): a hand swept around a chip is followed by the chip within that,
        while the same card dealt to the seat again must count."""
        self._unconfirmed.pop(key, None)
        self._hidden.pop(key, None)
        if key in self._stale and not self._stale[key]:
            del self._stale[key]
            self._stale_tracks.pop(key, None)
            self._stale_frames_left.pop(key, None)
        self._kept.discard(key)

    def _unseen_frames(self) -> int:
        return max(4 * self.config.thresholds.n, round(self.config.camera.fps * UNSEEN_LEFT_OVER_S))

    def _keep_unseen(self, key: tuple[str, Card], frames: int | None = None) -> None:
        """Keep a left-over the camera does not show as one until seen and gone, or for ``frames``
        (``UNSEEN_LEFT_OVER_S``) unseen: seen again on its seat, on any track, it is that card."""
        self._stale[key], self._stale_tracks[key] = False, None
        self._stale_frames_left[key] = self._unseen_frames() if frames is None else frames
        self._kept.add(key)

    def _keep_hidden(self, frame_no: int) -> None:
        """Rules 8: the next deal clearing the round makes its cards that left while hidden alone
        (and not seen since) left-overs for what is left of ``UNSEEN_LEFT_OVER_S`` (QA50 dealing3 M1:
        a chip over one past ``remove_after_s``; lifted, the card joined the next round)."""
        if self.rules < 8:
            return
        total = self._unseen_frames()
        for key, ended in self._hidden.items():
            if key not in self._stale and key not in self._current:
                self._keep_unseen(key, max(1, total - (frame_no - ended)))
        self._hidden = {}

    def _carry_stale(self, shown: set[tuple[str, Card]], frame_no: int) -> None:
        """Rules 8, one deck: a card first shown on a seat whose code is a left-over on another seat,
        read there within ``LEFT_OVER_CARRIED_S`` before (or after: misread frames as it slid) this
        card's track began, and not read there in the last frames, is that left-over (dragged across
        the seat while swept: QA50 dealing3 M2, it joined the neighbour's next round).  Read there
        still, it is no left-over carried (dealing3's busy sim laid a second copy of a code on a
        "one-deck" table, and the dealer had to add it by hand)."""
        began = dict(self._clocks)
        for key in shown - set(self._stale) - set(self._lone):
            seat, card = key
            first = began.get(self._first_track(key))
            if first is None:
                continue
            carried = [other for (other, c) in self._stale if c == card and other != seat
                       and (other, c) in self._read_at and self._read_at[(other, c)][1] < frame_no - 2
                       and self._read_at[(other, c)][0] >= first - LEFT_OVER_CARRIED_S]
            if carried:
                self._stale[key] = True
                self._stale_tracks[key] = self._first_track(key)
                self._kept.add(key)
                self._kept.update((other, card) for other in carried)

    def _is_stale(self, seat: str, card: Card, track: int | None) -> bool:
        """Whether this card on this track is a left-over (rules 7: on the left-over's own track)."""
        if (seat, card) not in self._stale:
            return False
        stale = self._stale_tracks.get((seat, card)) if self.rules >= 7 else None
        return stale is None or track is None or stale == track

    def _mark_stale(self, key: tuple[str, Card]) -> None:
        self._stale[key] = True
        if self.rules >= 7:
            self._stale_tracks[key] = self._first_track(key)

    def _first_track(self, key: tuple[str, Card]) -> int | None:
        tracks = self._current_tracks.get(key, set()) - {None}
        return min(tracks) if tracks else None

    def _on_record_track(self, seat: str, card: Card, track: int | None) -> bool:
        """Whether this card on this track is one the seat's record holds (by code where tracks are not
        known; rules 9)."""
        return any(e.card == card and not e.manual and (e.track is None or track is None or e.track == track)
                   for e in self._record.get(seat, ()))

    def _corrected_away(self, seat: str, card: Card, track: int | None) -> bool:
        """Whether a person took this card on this track off the seat's record: a misread, or (rules 9)
        an extra copy's track while the card is shown on another (alone, it is the card on record)."""
        if (seat, card) in self._suppressed:
            return True
        return (track is not None and (seat, card, track) in self._suppressed
                and bool(self._current_tracks.get((seat, card), set()) - {track}))

    def _on_shown_track(self, seat: str, entry: _Entry) -> bool:
        """Whether the tracker shows this recorded card now on the track the record has for it (by code
        where tracks are not known)."""
        tracks = self._current_tracks.get((seat, entry.card), set())
        return not entry.manual and bool(tracks) and (entry.track is None or None in tracks or entry.track in tracks)

    def _copy_to_remove(self, seat: str, card: Card, first: int) -> int:
        """Which of a seat's entries of ``card`` a person means by "remove it" (rules 9, QA52 bench A):
        the dealer takes the extra copy off the screen because the table holds one, so it is the one the
        camera does not read now (its track ended), not the one it still reads.  Removing the first
        entry kept the ended track on record: the card left with the sweep, and the same card dealt
        again to the seat in the next round was taken for it (added by hand)."""
        record = self._record[seat]
        copies = [i for i, e in enumerate(record) if e.card == card]
        read = [i for i in copies if not record[i].manual and (seat, card, record[i].track) in self._read_tracks]
        gone = [i for i in copies if i not in read]
        return gone[0] if read and gone else first

    def _manual_track(self, seat: str, card: Card, replaced: int | None = None) -> int | None:
        """Rules 9: the physical card a person's correction is about: the track whose reading it replaced,
        else the card of that code the camera shows on the seat.  Remembered by code alone, the card
        swallowed the same code dealt to the seat anew in the next deal (taken for the round's own card,
        then a left-over: added by hand again, QA52 bench_dealing seed 11 rounds 2-3)."""
        if self.rules < 9:
            return None
        return replaced if replaced is not None else self._track_of(seat, card)

    def _track_of(self, seat: str, card: Card, known: int | None = None, entry: _Entry | None = None) -> int | None:
        """The track a recorded card is shown on now (rules 7; one deck: one each), else ``known``.
        Rules 9: not a track another entry of its code on the seat holds (``entry``: this one; QA52
        bench A: a second copy took the first's track, and once a person removed the first, the record
        held the track that ended, not the card still read)."""
        tracks = self._current_tracks.get((seat, card), set()) - {None}
        if self.rules >= 9 and len(tracks) > 1:
            held = {e.track for e in self._record.get(seat, ()) if e is not entry and e.card == card}
            tracks = (tracks - held) or tracks
        if not tracks:
            return known
        return known if known in tracks else min(tracks)

    def _mark_unseen_record(self) -> None:
        """At the dealer's Clear, the round's recorded cards the camera does not show (a chip or an
        arm over one) are left-overs too, until seen and gone, or not seen within
        ``UNSEEN_LEFT_OVER_S`` (rules 7, QA49 dealing2 M6: one seen again started a round)."""
        frames = self._unseen_frames()
        self._hidden, self._unconfirmed = {}, {}
        for seat, entries in self._record.items():
            for entry in entries:
                key = (seat, entry.card)
                if key not in self._stale and key not in self._lone:
                    if self.rules >= 9 and entry.manual:
                        # its physical card shown (read as the code it replaced) is a left-over already;
                        # hidden, one on its own track only; one no track was tied to swallows no card
                        if entry.track is None or any(entry.track in tracks for (at, _), tracks
                                                      in self._current_tracks.items() if at == seat):
                            continue
                        self._stale[key], self._stale_tracks[key] = False, entry.track
                    else:
                        self._stale[key], self._stale_tracks[key] = False, None
                    self._stale_frames_left[key] = frames

    def _new_on_finished(self, visible) -> tuple[set, set]:
        """The cards shown on a settled or voided round's table that are not its own: new ones, and
        (rules 7) ones of its record that left and came back (on another track: dealt again), which
        start nothing alone (a card swept, hidden and seen dragged away looks the same) but are no
        left-overs either: the next round takes them (QA49 dealing2 H2, M5)."""
        recorded = {e.card for entries in self._record.values() for e in entries}
        shown = {(seat, c) for seat, cards in visible.items() for c, _, _ in cards}
        if self.rules < 7:
            return {key for key in shown if key[1] not in recorded}, set()
        strange = {key for key in shown if not self._of_finished(key, recorded)}
        return {key for key in strange if key[1] not in recorded}, {key for key in strange if key[1] in recorded}

    def _of_finished(self, key: tuple[str, Card], recorded: set[Card]) -> bool:
        """Whether a card shown is the finished round's own (rules 7): on the track its record has
        (by code where tracks are not known), or, after a void, first seen before it (the misdeal's
        last card, accepted just after: QA49 dealing2 M5)."""
        seat, card = key
        tracks = self._current_tracks.get(key, {None})
        if None in tracks:
            return card in recorded
        # rules 9: a card entered by hand that no track was tied to is no physical card the camera saw
        # lie there: a card of its code on a track after its round is the next deal's
        if any(e.card == card and (e.track in tracks or e.track is None and not (self.rules >= 9 and e.manual))
               for e in self._record.get(seat, ())):
            return True
        return (self.state == RoundState.void and self._finished_frame is not None
                and min(tracks) <= self._finished_frame)

    def _deal_begun(self, new: set[tuple[str, Card]], hands: Mapping[str, SeatHand]) -> bool:
        """Whether the new cards on a finished (or cleared) round's table are the next deal: two or
        more (rules 5); rules 7: counting only cards read in this frame, and not lying where another
        card of its seat was read, one in place of the other: that card misread (QA49 dealing2 M3: a
        reflection across two neighbours, read as two cards after a washed-out frame, and cards
        misread as they were swept, kept a while unseen, started phantom rounds)."""
        if self.rules < 5:
            return bool(new)
        if self.rules >= 7:
            new = {(seat, card) for seat, card in new if _lies_still(hands.get(seat), card)}
        return len(new) > 1

    def _waits(self, new: set[tuple[str, Card]], leftovers: set, hands: Mapping[str, SeatHand]) -> bool:
        """Whether the new cards on a cleared table wait for the deal to show (see the module
        docstring); rules 7: also beside left-overs not seen since the dealer's Clear (a chip over
        one: QA49 dealing2 M6), and two new cards only if neither lies where a card was."""
        if self.rules < 7:
            return len(new) == 1 and bool(leftovers or self._lone)
        unseen = any(not seen for seen in self._stale.values())
        return bool(new) and bool(leftovers or self._lone or unseen) and not self._deal_begun(new, hands)

    def _count_down_stale(self, current: set[tuple[str, Card]]) -> None:
        for key in list(self._stale_frames_left):
            track = self._stale_tracks.get(key)   # rules 9: a card entered by hand waits on its own track
            if (key in current and (self.rules < 9 or track is None or track in self._current_tracks.get(key, ()))) \
                    or key not in self._stale:
                del self._stale_frames_left[key]         # seen (then the usual rule) or gone
                continue
            self._stale_frames_left[key] -= 1
            if self._stale_frames_left[key] <= 0:
                del self._stale_frames_left[key]
                del self._stale[key]
                self._kept.discard(key)

    # ------------------------------------------------------------ the people's side

    def can_settle(self, bets: Mapping[str, Bet] | None = None) -> bool:
        try:
            self.verify_settle(bets)
        except RoundError:
            return False
        return True

    def verify_settle(self, bets: Mapping[str, Bet] | None = None) -> None:
        """Raise :class:`RoundError` saying why this round cannot be settled (with these bets) now."""
        with self._lock:
            if self.state in (RoundState.idle, RoundState.cleared):
                raise RoundError("there is no round on the table to settle; deal a round first")
            if self.state == RoundState.settled:
                raise RoundError(f"round {self.round_no} is already settled")
            if self.state == RoundState.void:
                raise RoundError(f"round {self.round_no} was voided; clear the table for the next round")
            seats = ["banker"] + (sorted(bets, key=_seat_order) if bets is not None
                                  else [s for s in self.active_seats if s != "banker"])
            if bets is not None:
                if not bets:
                    raise RoundError("no bets given; enter at least one seat's bet")
                for seat, bet in bets.items():
                    if seat not in self.config.player_seats:
                        raise RoundError(f"bet on seat {seat!r}: that is not a player seat at table "
                                         f"{self.config.table_id} ({', '.join(self.config.player_seats)})")
                    if getattr(bet, "seat", seat) != seat:
                        raise RoundError(f"bet for seat {seat} names seat {bet.seat}; they must agree")
                    if not isinstance(bet.amount, Decimal) or not bet.amount.is_finite() or bet.amount <= 0:
                        raise RoundError(f"bet on seat {seat}: amount {bet.amount!r} must be a positive Decimal")
            elif len(seats) < 2:
                raise RoundError("no player seat has cards yet")
            for seat in seats:
                entries = self._record.get(seat, [])
                who = "the banker" if seat == "banker" else f"seat {seat}"
                if len(entries) != HAND_SIZE:
                    gone = [e.card.code for e in entries if not e.present and not e.manual]
                    hint = (f"; {' '.join(gone)} left the table before settlement: if it was not dealt to this "
                            "hand (a burn card, a card put back), remove it with Correct card"
                            if len(entries) > HAND_SIZE and gone else "")
                    raise RoundError(f"{who} has {len(entries)} cards, not {HAND_SIZE}; wait for the deal "
                                     f"or correct the hand{hint}")
                for entry in entries:
                    if entry.needs_confirmation and entry.reread is not None:
                        raise RoundError(f"{who}: card {entry.card.code} has since been read as "
                                         f"{entry.reread.code}; look at it, then confirm or correct it first")
                    if entry.needs_confirmation:
                        raise RoundError(f"{who}: card {entry.card.code} was read with low confidence; "
                                         "confirm or correct it first")
                    if self.rules >= 6 and entry.changed is not None and not entry.change_checked:
                        # QA49 dealing2 M2: one tap settled the round on a card swapped since
                        raise RoundError(f"{who}: card {entry.card.code} has read as {entry.changed.code}, "
                                         "steadily and in the same place, since it was accepted; look at it, "
                                         "then confirm or correct it first")
            if self.decks == 1:
                seen: dict[Card, str] = {}
                for seat in seats:
                    for entry in self._record.get(seat, []):
                        if entry.card in seen:
                            raise RoundError(f"{entry.card.code} is on seat {seen[entry.card]} and seat {seat}; "
                                             "a single deck has one, correct the misread card")
                        seen[entry.card] = seat

    def settle(self, bets: Mapping[str, Bet], ts: float | None = None, actor: str | None = None, *,
               banker_bid: int = 1, banker_stack: Decimal | None = None) -> tuple[list[RoundEvent], Settlement]:
        """Score every bet seat against the banker with the table's preset; the round becomes settled.

        ``banker_bid`` is the bank multiple at a grab-the-banker table (1 elsewhere);
        ``banker_stack`` what a player-banker holds where the preset limits the cover.
        """
        with self._changing():
            self.verify_settle(bets)
            ts = time.time() if ts is None else ts
            events: list[RoundEvent] = []
            if self.state == RoundState.dealing:
                self.state = RoundState.complete
                events.append(self._event(EventKind.round_complete, ts, self.last_frame_no,
                                          data={"seats": self._seat_codes(), "state": str(self.state),
                                                "by": "settlement"}))
            banker = tuple(e.card for e in self._record["banker"])
            seats = {seat: (tuple(e.card for e in self._record[seat]), bets[seat])
                     for seat in sorted(bets, key=_seat_order)}
            try:
                settlement = settle_round(self.preset, banker, seats, banker_bid=banker_bid,
                                          banker_stack=banker_stack)
            except NiuniuError as exc:
                raise RoundError(f"round {self.round_no} cannot be settled: {exc}") from None
            self.settlement = settlement
            self.state = RoundState.settled
            self._finished_frame = self.last_frame_no
            data: dict[str, Any] = {
                "bets": {seat: bet.to_json() for seat, (_, bet) in seats.items()},
                "banker_bid": banker_bid,
                "settlement": settlement.to_json(),
                "state": str(self.state),
            }
            if settlement.banker_stack is not None:   # only where the preset limits the banker's cover
                data["banker_stack"] = money_text(settlement.banker_stack)
            if actor:
                data["actor"] = actor
            events.append(self._event(EventKind.round_settled, ts, self.last_frame_no, data=data))
            self._publish(events)
            return events, settlement

    def can_correct(self) -> bool:
        return self.state in (RoundState.dealing, RoundState.complete)

    def correct_card(self, seat: str, old: str | Card | None, new: str | Card | None, actor: str, reason: str,
                     ts: float | None = None) -> RoundEvent:
        """A person fixes a seat's hand: replace ``old`` by ``new``, add (``old=None``),
        remove (``new=None``) or confirm a low-confidence card (``old == new``)."""
        with self._changing():
            if not self.can_correct():
                raise RoundError(f"cards can be corrected only while a round is dealt and not settled "
                                 f"(round {self.round_no} is {self.state})")
            if seat not in self.config.seat_names:
                raise RoundError(f"seat {seat!r} is not at table {self.config.table_id}")
            if not (actor and actor.strip()) or not (reason and reason.strip()):
                raise RoundError("a correction needs who made it and why (actor and reason)")
            if old is None and new is None:
                raise RoundError("a correction needs the old card, the new card, or both")
            old_card = _card(old) if old is not None else None
            new_card = _card(new) if new is not None else None
            record = self._record.setdefault(seat, [])
            index = None
            if old_card is not None:
                index = next((i for i, e in enumerate(record) if e.card == old_card), None)
                if self.rules >= 9 and new_card is None and index is not None:
                    index = self._copy_to_remove(seat, old_card, index)
                if index is None:
                    shown = " ".join(e.card.code for e in record) or "no cards"
                    raise RoundError(f"seat {seat} has no {old_card.code} (it has {shown})")
            if new_card is not None and new_card != old_card and any(e.card == new_card for e in record):
                raise RoundError(f"seat {seat} already has {new_card.code}")
            if old_card is not None and new_card == old_card:
                record[index].needs_confirmation, record[index].checked = False, True
                record[index].change_checked = True
                if record[index].changed is not None:   # rules 7: that reading is looked at for good
                    record[index].checked_as |= {record[index].changed}
                action = "confirmed"
            elif new_card is None:
                entry = record.pop(index)
                if self.rules >= 9 and entry.track is not None and any(e.card == old_card for e in record):
                    # an extra copy (QA52 bench A): the copy left on record is read, the same card dealt
                    # again is another; only the removed copy's track is a misread
                    self._suppressed.add((seat, old_card, entry.track))
                elif not entry.manual:
                    self._suppressed.add((seat, old_card))
                action = "removed"
            elif old_card is None:
                record.append(_Entry(new_card, 1.0, False, present=False, manual=True,
                                     track=self._manual_track(seat, new_card)))
                action = "added"
            else:
                if not record[index].manual:
                    self._suppressed.add((seat, old_card))
                record[index] = _Entry(new_card, 1.0, False, present=False, manual=True,
                                       track=self._manual_track(seat, new_card, record[index].track))
                action = "replaced"
            event = self._event(
                EventKind.card_corrected, time.time() if ts is None else ts, self.last_frame_no, seat,
                new_card.code if new_card else None,
                {"old": old_card.code if old_card else None, "new": new_card.code if new_card else None,
                 "action": action, "actor": actor, "reason": reason, "state": str(self.state)},
            )
            self._publish([event])
            return event

    def can_void(self) -> bool:
        return self.state in (RoundState.dealing, RoundState.complete)

    def verify_void(self) -> None:
        if self.state == RoundState.settled:
            raise RoundError(f"round {self.round_no} is already settled; a settled round cannot be voided")
        if not self.can_void():
            raise RoundError(f"there is no round in progress to void (state: {self.state})")

    def void(self, actor: str, reason: str, ts: float | None = None) -> RoundEvent:
        with self._changing():
            self.verify_void()
            if not (actor and actor.strip()) or not (reason and reason.strip()):
                raise RoundError("voiding a round needs who did it and why (actor and reason)")
            self.state = RoundState.void
            self._finished_frame = self.last_frame_no
            event = self._event(EventKind.round_void, time.time() if ts is None else ts, self.last_frame_no,
                                data={"actor": actor, "reason": reason, "seats": self._seat_codes(),
                                      "state": str(self.state)})
            self._publish([event])
            return event

    def can_clear(self) -> bool:
        return self.state in (RoundState.settled, RoundState.void)

    def verify_clear(self) -> None:
        if self.state in (RoundState.dealing, RoundState.complete):
            raise RoundError(f"round {self.round_no} is not settled; settle or void it before clearing")
        if not self.can_clear():
            raise RoundError(f"there is no finished round to clear (state: {self.state})")

    def clear(self, ts: float | None = None, actor: str | None = None) -> list[RoundEvent]:
        """The dealer starts the next round while cards may still lie on the table.

        Cards visible now are remembered as stale and ignored until they leave, so they
        cannot start a phantom round (rules 7: the round's recorded cards not visible now too);
        a lone new card waiting to start the next round (rules 6) is not one of them: it keeps
        waiting, and joins the next round with the second card.
        """
        with self._changing():
            self.verify_clear()
            events: list[RoundEvent] = []
            self._clear(events, self.last_frame_no, time.time() if ts is None else ts, manual=True, actor=actor)
            return self._publish(events)

    def note_camera(self, online: bool, reason: str, ts: float | None = None, **data: Any) -> RoundEvent:
        """Publish a camera_online/offline event in the same ordered stream as the round's events.

        The camera's reader thread reports through here so that listeners (recorder, kiosk,
        audit log) are never called from two threads at once.
        """
        return self._note_camera(EventKind.camera_online if online else EventKind.camera_offline, reason, ts, data)

    def note_camera_mirrored(self, mirrored: bool, reason: str, ts: float | None = None, **data: Any) -> RoundEvent:
        """Publish camera_mirrored (or camera_mirror_cleared) in the round's ordered stream: a
        camera that saves mirror images misreads cards, and surveillance reviewing a disputed
        round must see in the log, not only on the dealer's screen, that it did so then."""
        kind = EventKind.camera_mirrored if mirrored else EventKind.camera_mirror_cleared
        return self._note_camera(kind, reason, ts, data)

    def note_camera_aim(self, aim: str, reason: str, ts: float | None = None, **data: Any) -> RoundEvent:
        """Publish camera_moved (``aim`` moved or lost) or camera_move_cleared (aimed): cards
        read while the camera looked elsewhere may sit in the wrong seat, and surveillance
        reviewing that round must find it in the log."""
        kind = EventKind.camera_move_cleared if aim == "aimed" else EventKind.camera_moved
        return self._note_camera(kind, reason, ts, {"aim": aim, **data})

    def _note_camera(self, kind: EventKind, reason: str, ts: float | None, data: dict) -> RoundEvent:
        with self._lock:
            event = self._event(kind, time.time() if ts is None else ts, self.last_frame_no,
                                data={"reason": reason, **data})
            self._publish([event])
            return event

    # ------------------------------------------------------------ helpers

    def _seat_codes(self) -> dict[str, list[str]]:
        return {seat: [c.code for c in hand.cards] for seat, hand in self.hands.items()}

    def _event(self, kind: EventKind, ts: float, frame_no: int | None, seat: str | None = None,
               card: str | None = None, data: dict | None = None) -> RoundEvent:
        return RoundEvent(kind, self.round_no, ts, frame_no, seat, card, data or {})

    def _alert(self, events, code: AlertCode, ts, frame_no, seat, card: Card, message: str, **extra) -> None:
        event = self._event(EventKind.alert, ts, frame_no, seat, card.code,
                            {"code": str(code), "message": message, **extra})
        self._alerts.append(event)
        events.append(event)

    def _publish(self, events: list[RoundEvent]) -> list[RoundEvent]:
        if events:
            for gate in self._gates:
                gate(list(events))
        self._committed = True
        for event in events:
            for listener in self._listeners:
                listener(event)
        return events


def _lies_still(hand: SeatHand | None, card: Card) -> bool:
    """Whether the tracker read this card in this frame, not in another card's place (rules 7)."""
    if hand is None:
        return False
    seen = hand.seen or (True,) * len(hand.cards)
    over = hand.over or (False,) * len(hand.cards)
    return any(c == card and here and not lies for c, here, lies in zip(hand.cards, seen, over))


def _tracks_read(hands: Mapping[str, SeatHand]) -> set[tuple[str, Card, int | None]]:
    """(seat, card, track) of each card the tracker read in this frame (not kept unseen)."""
    return {(seat, card, track) for seat, hand in hands.items()
            for card, track, seen in zip(hand.cards, hand.first_frames or (None,) * len(hand.cards),
                                         hand.seen or (True,) * len(hand.cards)) if seen}


def _tracks_shown(hands: Mapping[str, SeatHand]) -> dict[tuple[str, Card], set]:
    """(seat, card) -> the tracks (first frames) the tracker shows it on; {None}: not known."""
    out: dict[tuple[str, Card], set] = {}
    for seat, hand in hands.items():
        for card, track in zip(hand.cards, hand.first_frames or (None,) * len(hand.cards)):
            out.setdefault((seat, card), set()).add(track)
    return out


def _card(value: str | Card) -> Card:
    if isinstance(value, Card):
        return value
    try:
        return Card.parse(value)
    except CardError as exc:
        raise RoundError(str(exc)) from None


def _seat_order(seat: str) -> tuple[int, str]:
    return (0, "") if seat == "banker" else (1, seat.zfill(3))


def _dealt_position(record: list[_Entry], card: Card, shown: list[Card]) -> int:
    """Where a newly accepted card goes in a seat's record: before the first recorded card
    the tracker shows *after* it (it lists a seat's cards in the order first seen), so a
    card read doubtfully until the next one landed still sits in its dealt place.

    With several decks a seat can hold two copies of one card; the k-th copy recorded is
    the k-th copy shown, so cards are matched as (card, copy number)."""
    place = {key: i for i, key in enumerate(_copies(shown))}
    keys = _copies([e.card for e in record] + [card])
    mine = place.get(keys[-1])
    if mine is None:
        return len(record)
    return next((i for i, key in enumerate(keys[:-1]) if place.get(key, -1) > mine), len(record))


def _copies(cards: list[Card]) -> list[tuple[Card, int]]:
    """Each card with its copy number: [AS, 2D, AS] -> [(AS, 0), (2D, 0), (AS, 1)]."""
    seen: dict[Card, int] = {}
    out = []
    for c in cards:
        out.append((c, seen.get(c, 0)))
        seen[c] = seen.get(c, 0) + 1
    return out
