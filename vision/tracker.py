"""From per-frame detections to the cards that are really on each seat.

One frame's detections are noisy: a card is missed while the dealer's hand covers it,
an 8 is read as a 6 for a frame, a reflection scores 0.3.  The tracker turns that into
a stable answer with five rules:

* **Seat**: a detection belongs to the seat zone that holds its box centre.
* **Tracks**: within a seat, a detection continues the track of the same card (any
  distance: one deck has one of each), or else, when the class flickered, the nearest
  track that was seen in the previous frame, within half a card's size.  Everything
  else starts a new track.  Rules 7 (QA49 dealing2 M3, H2) make a track follow the
  physical card, which is what tells the round machine a card that stayed from one that
  came (back): an accepted card unseen for a frame or few (glare washing it out, a hand
  or a blurred frame: seen within the last ``n`` frames) is continued by another card's
  reading at its place (most of the smaller box inside the larger), as a flicker, so a
  misread goes to the change watch below, not to a new track that became a sixth card,
  or on a finished table a "new card" that started a phantom round; and an accepted card
  unseen for the whole window continues its track only at its place: read again elsewhere
  on the seat (swept and dealt again, another deck's copy) it is a new track, which, once
  accepted, ends the old one.  Rules 8 (QA50 dealing3 M3): on a seat just emptied, every card of
  it unseen together (a sweep), a card unseen for a frame or few is continued only by a reading in
  its very box: the next deal's card laid where a swept card lay is a new card, not that card
  misread.  Rules 9 (QA52 bench_dealing): a reading continues a track only where its card lies:
  its own card read away from its place, where another card of the seat lies (seen within the
  window, its seat in view last frame) and is read nowhere now, is that card misread (a covered 5C
  read as the 5S beside it, missed for the frame, made the 5S two cards), and a flicker lies at the
  track's place (most of the smaller box inside the larger) even when it was seen last frame (half
  a card's size took in the next card dealt over half of it, whose readings then continued a card
  missed for that frame, and the next card was never accepted).  A card slid where no card lies
  is still followed by its code.  Rules 10 (QA53 bench_dealing): a seat covered as a whole (the dealer's
  hand while dealing its next card) for longer than the window gives each card back at its place: when
  one of its cards is read there again, a reading at another such card's place is that card misread.
  Each card's track is named by the frame it was first seen in
  (:attr:`SeatHand.first_frames`), and a card lying where another card of its seat was read,
  one in place of the other, is marked (:attr:`SeatHand.over`): that card misread, or a card
  laid over it, not yet a sign that a new deal began.
* **Votes**: a track is *accepted* once it was seen in at least ``k`` of its last ``n``
  frames with confidence >= ``conf``, and first seen ``accept_after_s`` before (frames
  alone made a fast camera take a card in the blur of its first tenth of a second, or one
  slid past the banker for the banker's); its card is then fixed to the class with the most
  evidence over *every* sighting of the track's life, each weighing conf**3 (one clear
  look outweighs several blurred ones, yet a card read steadily just under ``conf`` still
  counts).  The last ``n`` frames alone get a card wrong when the next card lands on its
  corner: the demo's QD, read QD for three seconds, then 10D for the frames after the 2D
  covered half its index.  Measured on five rendered recordings (19 rounds, 570 cards)
  with two models: this rule read 561 and 559 cards right, the window vote 560 and 557.
  A low mean confidence of the chosen card's confident sightings, or a split among all
  confident sightings, marks the card ``needs_confirmation``.  Its sightings for ``recheck_s``
  after acceptance still count: if they turn the verdict to another card, the card is
  marked ``needs_confirmation`` with that card as its ``reread`` (it keeps its accepted
  card, which the round has on record; a person looks and decides).  Later sightings do not
  count: the next card landing over its index would outvote seconds of clear reads.  An
  accepted card stays through occlusion and is dropped only after ``remove_after_s``
  seconds unseen, measured on the frames' monotonic clock (:attr:`vision.sources.Frame.mono`),
  never the wall clock: NTP stepping that back an hour would keep swept cards on the table
  for the hour (and the next deal's card on the same seat taken for a left-over), stepping
  it forward would drop every covered card at once.
* **Changes**: a card replaced in place between two frames (the new one laid straight over
  the old, no frame with the hand over it) continues the old track as class flicker, and the
  vote above keeps the old card for good: the round was settled on a card no longer there.
  So after the recheck window the track keeps watching: when another card holds a clear
  majority of its last ``n`` frames (``k`` confident readings, more than every other card)
  for ``CHANGE_HOLD_S`` (rules 5: ``accept_after_s``), in place (within a quarter of its
  size), and no card laid over it explains the reading, it is reported as *changed* to it
  (:attr:`SeatHand.changes`, with the frame it has read so since).  It keeps its accepted
  card: the round raises an alert and a person looks.  Staying in place is what tells a swap
  from a card misread while it is swept.  What explains a reading is the next card landing
  over the index (the demo's QD read 10D under the 2D): a track on the seat begun after this
  one, whose box lies over or next to this card's, when this card began to be read so (gaps
  under ``CHANGE_HOLD_S`` do not end a reading) from ``COVER_LEAD_S`` before that card was
  first seen to ``COVER_LANDS_S`` after (it is seen while it slides in, and covers the index
  once it stops), for as long as that card lies there (a spurious track that ends, or a card
  taken away, explains nothing any more; a card read so before the next one landed on it was
  swapped before, and is still reported; rules 8, QA50 dealing3 H3: so is one read so ``k`` times,
  its box where and as large as when it was accepted, before the next card was first seen).  Under rules 5
  any new track on the seat from ``CHANGE_QUIET_S`` before the first reading on explained it
  for good: a card swapped
  within two seconds of any card landing on its seat, its own included, was never reported
  however long it then lay there (QA49 review M1, watch H1).
* **Order**: a seat's accepted cards are listed in the order their tracks were first seen,
  which is the order they were dealt face up (dealt face down, the order they were turned;
  scoring does not depend on it): a card read doubtfully until the next one landed on
  it (the demo's QD again, with classifier v13) is accepted after that card but keeps its
  place on the dealer's screen.

A card accepted on one seat while the same card's accepted track elsewhere was last
seen *before* the new track first appeared has moved: the old track is dropped, so the
round machine sees it leave one seat and arrive at the other (rules 7: on its own seat
too, read again away from its place after the window).  If both are still seen, both
stay: that is a duplicate, and the round machine raises it.

Everything is a pure function of (detections, frame size, frame times), which is what
lets a replay of recorded detections reproduce a round exactly.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

from scoring.cards import Card
from vision.corners import Detection
from vision.table import Box, TableConfig, ZoneMap, box_centre

# The rules above, numbered: a recording keeps the number it was made with, because a
# replay under other rules may accept other cards from the same detections (1: the vote
# over the last n frames alone, to session 5; 2: the life-long evidence vote; 3: a seat's
# cards in the order first seen, not accepted, session 6; 4: accept_after_s and recheck_s,
# session 48 — a replay of an older recording sets both to 0, the rules it ran under; 5: a card
# read steadily as another after its recheck is reported as changed, and a lone card on a finished
# round's table waits for a second before it starts a round (vision.round), session 49 — a replay
# of an older recording turns both off; 6: only a card laid over or next to a card explains its
# reading as another, a lone card after a manual clear waits too, and card_after_round waits for
# the card to lie alone (vision.round), session 49 — a replay of a rules-5 recording runs rules 5; 7: a
# track follows the physical card (a misread at its place after a frame or few continues it, the card
# read elsewhere after the window is a new track) and the round machine tells a card that stayed from
# one that came back by it, session 50 — a replay of an older recording runs the rules it was made with;
# 8: on a seat whose cards all went out of view together (a sweep) only a reading in a card's very box
# continues it, a card read as another in plain view before the next card over it was first seen is
# reported, a finished round's card hidden alone stays a left-over for UNSEEN_LEFT_OVER_S, on one deck
# a left-over dragged across a seat stays one there, and every card lost in one frame is the camera
# (vision.round), session 51 — a replay of an older recording runs the rules it was made with;
# 9: a reading continues a track only where its card lies, not at another card's place (a card's code
# read where another card lies and is read nowhere, a flicker away from the track's place), session 52
# — a replay of an older recording runs the rules it was made with; 10: a card of a seat covered as a
# whole past the window, misread at its place as the cover lifts, is that card; a finished round's card
# kept as hidden alone is released once its hand left the tracker; a settled round's card counts as
# lying there only on its own track (vision.round), session 53 — older recordings run their own rules).
TRACKER_VERSION = 10
# Rules 5: a new track on the seat this long before a card was first read as another (or since)
# was taken for the next card landing over its index, not a swap.
CHANGE_QUIET_S = 2.0
# Rules 6: a card is detected while it slides in and lies over the index it hides once it stops,
# within a second (the demo's scripted 2D slid 0.8 s with the QD's index in view, a dealer's
# card slides 0.2-0.5 s); its first frames may also be missed (blurred) while the index it covers
# is already misread, for a frame or three.  A card swapped after this long is reported.
COVER_LANDS_S = 1.0
COVER_LEAD_S = 0.5
# Rules 6: how long another card must hold the majority to be reported.  A dealer's hand, a chip
# or glare over an index misreads it for a second or two, a swapped card lies there through the
# payout.  Measured (QA49): on dealing2's simulated busy table, 127 false card_changed per 100
# honest rounds at rules 5's 0.4 s, 7 at 2 s; of 324 swaps injected into the real model's
# QA48 recordings that then lay 2 s or more, 316 reported at 0.4 s, 315 at 2 s.
CHANGE_HOLD_S = 2.0
# Rules 7: how much of the smaller of two boxes must lie inside the larger for them to show one card's
# place.  A card's box shrinks to its index when covered and grows back, and squaring a hand up moves
# it a few pixels (0.84 for 8 px on a 70x100 card); the next card dealt over half of it shares 0.5.
SAME_PLACE_SHARE = 0.7
# Rules 8: how far (a share of its diagonal) a card's box may move, and by how much of its width and
# height it may differ, and still show the card in plain view where it lay: squaring a hand up moves it
# 3-8 px (under a tenth of a 70x100 card's diagonal), the next card over half of it halves its width.
SAME_BOX_SHARE = 0.1


class Change(NamedTuple):
    """An accepted card read steadily as another since its recheck (see the module docstring)."""

    card: Card                       # what it reads as now
    seconds: float                   # how long it had read so when reported
    since_frame: int | None = None   # the frame it has read so since (rules 6)


@dataclass(frozen=True, slots=True)
class SeatHand:
    """The accepted cards on one seat, in the order first seen face up (dealt, or turned)."""

    seat: str
    cards: tuple[Card, ...]
    confidence: tuple[float, ...]
    needs_confirmation: tuple[bool, ...]
    # per card: the card its readings named after it was accepted, where they outvoted it
    rereads: tuple[Card | None, ...] = ()
    # per card: what it has read as steadily since its recheck, where it has (see the module
    # docstring's changes)
    changes: tuple[Change | None, ...] = ()
    # per card: read in this frame (not covered, not swept and kept for remove_after_s); empty: all
    seen: tuple[bool, ...] = ()
    # per card: the frame its track was first seen in, which names the track (rules 7: a card seen
    # again elsewhere after the window is another track); empty: not known (the round goes by codes)
    first_frames: tuple[int, ...] = ()
    # per card: it lies where another card of the seat was read, one in place of the other (rules 7)
    over: tuple[bool, ...] = ()

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(c.code for c in self.cards)


@dataclass(slots=True)
class Evidence:
    """What a track's sightings say for one card."""

    weight: float = 0.0       # sum of conf**3 over every sighting
    sightings: int = 0
    summed: float = 0.0
    confident: int = 0        # sightings with conf >= the table's ``conf``
    confident_summed: float = 0.0

    def add(self, conf: float, min_conf: float) -> None:
        self.weight += conf ** 3
        self.sightings += 1
        self.summed += conf
        if conf >= min_conf:
            self.confident += 1
            self.confident_summed += conf

    @property
    def mean_confidence(self) -> float:
        if self.confident:
            return self.confident_summed / self.confident
        return self.summed / self.sightings


@dataclass(slots=True)
class Track:
    """One physical card on one seat, followed across frames."""

    track_id: int
    seat: str
    first_frame: int
    box: Box
    votes: deque = field(default_factory=deque)  # per frame: (Card, conf, ts, frame_no) or None
    evidence: dict = field(default_factory=dict)  # Card -> Evidence, first sighting to recheck_s after acceptance
    last_seen_frame: int = -1
    last_seen_ts: float = 0.0     # on update()'s clock (monotonic), for remove_after_s only
    first_seen_ts: float = 0.0    # the same clock, for accept_after_s
    accepted: Card | None = None
    accepted_frame: int | None = None
    accepted_ts: float | None = None
    confidence: float = 0.0
    needs_confirmation: bool = False
    reread: Card | None = None    # what the sightings after acceptance turned the verdict to
    # After the recheck window: each other card's first reading (ts, rules 5), the card now holding
    # the window's majority (card, since ts, since frame, box then), and the change reported.
    later_first: dict = field(default_factory=dict)
    change_run: tuple | None = None
    changed: Change | None = None
    # Rules 6: per other card it was read as since acceptance, [since, last] (ts) of that reading, and
    # (rules 8) when it was first read so in plain view (the box where and as large as when the card was
    # accepted), ``k`` times at most
    read_as: dict = field(default_factory=dict)
    accepted_box: Box | None = None
    # Rules 10: the frame an accepted card was read again after a whole window unseen, and its last
    # sighting before (a cover over its seat: see _uncovered)
    back_frame: int | None = None
    hidden_after: int | None = None

    def leader(self) -> Card | None:
        """The class this track currently stands for: fixed once accepted, else the vote leader."""
        if self.accepted is not None:
            return self.accepted
        tally = self.tally()
        return tally[0][0] if tally else None

    def tally(self) -> list[tuple[Card, int, float]]:
        """The window's (card, votes, summed confidence), best first; deterministic on ties."""
        counts: dict[Card, list] = {}
        for vote in self.votes:
            if vote is None:
                continue
            entry = counts.setdefault(vote[0], [0, 0.0])
            entry[0] += 1
            entry[1] += vote[1]
        ranked = [(card, n, s) for card, (n, s) in counts.items()]
        ranked.sort(key=lambda t: (-t[1], -t[2], t[0].index))
        return ranked

    def see(self, card: Card, conf: float, min_conf: float, ts: float = 0.0, recheck_s: float = 0.0,
            frame_no: int | None = None) -> None:
        """One frame's reading: a vote in the window, and, until the card is decided and
        ``recheck_s`` after, evidence (which, after, may mark the card doubtful)."""
        self.votes.append((card, conf, ts, frame_no))
        if self.accepted is None:
            self.evidence.setdefault(card, Evidence()).add(conf, min_conf)
        elif self.rechecking(ts, recheck_s):
            self.evidence.setdefault(card, Evidence()).add(conf, min_conf)
            self.recheck()

    def rechecking(self, ts: float, recheck_s: float) -> bool:
        """Whether a sighting at ``ts`` is within ``recheck_s`` after acceptance: never where
        there is no recheck (0: rules before 4), nor on a clock that stood still or went back."""
        return recheck_s > 0 and self.accepted_ts is not None and 0 < ts - self.accepted_ts <= recheck_s

    def recheck(self) -> None:
        """Mark the accepted card doubtful if the evidence since names another."""
        card, _ = self.verdict()
        if card != self.accepted and self.reread is None:
            self.needs_confirmation, self.reread = True, card

    def verdict(self) -> tuple[Card, Evidence]:
        """The card with the most weighed evidence; deterministic on ties."""
        return min(self.evidence.items(), key=lambda kv: (-kv[1].weight, kv[0].index))

    @property
    def seen_last_frame(self) -> bool:
        return bool(self.votes) and self.votes[-1] is not None

    @property
    def seen_in_window(self) -> bool:
        return any(vote is not None for vote in self.votes)


class SeatTracker:
    """Keeps every seat's tracks; :meth:`update` takes one frame and returns accepted hands."""

    def __init__(self, config: TableConfig) -> None:
        self.config = config
        self.thresholds = config.thresholds
        self._zones: ZoneMap | None = None
        self._tracks: list[Track] = []
        self._next_id = 1
        self.outside = 0  # detections in no seat zone, last frame (for the status screen)
        # The rules (TRACKER_VERSION) it runs: older ones to replay a recording made under them
        # as it ran (changes are reported from 5 on, explained as rules 5 or 6 say).
        self.rules = TRACKER_VERSION
        self._new_track_ts: dict[str, float] = {}   # seat -> when a track last began there (rules 5)

    def zones_for(self, width: int, height: int) -> ZoneMap:
        if self._zones is None or self._zones.size != (width, height):
            self._zones = ZoneMap(self.config, width, height)
        return self._zones

    def reset(self) -> None:
        self._tracks.clear()
        self._new_track_ts.clear()

    @property
    def tracks(self) -> tuple[Track, ...]:
        return tuple(self._tracks)

    def end(self, track: Track) -> None:
        """End ``track`` as if unseen past ``remove_after_s``: a replay ends the tracks its live
        tracker had ended before the recording began (``vision.replay``)."""
        self._tracks.remove(track)

    def update(self, detections: list[Detection], frame_no: int, ts: float,
               size: tuple[int, int]) -> dict[str, SeatHand]:
        """Take one frame's detections; return the accepted hands.

        ``ts`` measures time between frames and nothing else (``remove_after_s``): give a
        clock that never steps, :attr:`vision.sources.Frame.clock` (monotonic for a live
        camera), not the wall clock that stamps the frame."""
        zones = self.zones_for(*size)
        by_seat: dict[str, list[Detection]] = {}
        outside = 0
        for det in detections:
            seat = zones.seat_of(det.box)
            if seat is None:
                outside += 1
            else:
                by_seat.setdefault(seat, []).append(det)
        self.outside = outside

        read_now = {det.card for det in detections}
        for seat in self.config.seat_names:
            self._update_seat(seat, by_seat.get(seat, []), frame_no, ts, read_now)

        self._drop_stale(ts)
        return self.hands()

    def hands(self) -> dict[str, SeatHand]:
        """Accepted cards per seat (seats with none are left out), in the order first seen.

        That is the order they were dealt, which the dealer and a replay expect; a card
        read doubtfully for a while is accepted after the next card, but keeps its place.
        """
        out: dict[str, SeatHand] = {}
        for seat in self.config.seat_names:
            accepted = sorted((t for t in self._tracks if t.seat == seat and t.accepted is not None),
                              key=lambda t: (t.first_frame, t.track_id))
            if accepted:
                out[seat] = SeatHand(
                    seat,
                    tuple(t.accepted for t in accepted),
                    tuple(round(t.confidence, 4) for t in accepted),
                    tuple(t.needs_confirmation for t in accepted),
                    tuple(t.reread for t in accepted),
                    tuple(t.changed for t in accepted),
                    tuple(t.seen_last_frame for t in accepted),
                    tuple(t.first_frame for t in accepted),
                    tuple(_over(t, accepted) for t in accepted),
                )
        return out

    # ------------------------------------------------------------ internals

    def _update_seat(self, seat: str, detections: list[Detection], frame_no: int, ts: float,
                     read_now: set[Card]) -> None:
        tracks = [t for t in self._tracks if t.seat == seat]
        matched: dict[int, Detection] = {}
        free = list(range(len(detections)))

        # Pass 1: the same card continues its own track, wherever it moved within the seat (rules 7: a
        # track seen within the window first, and one unseen for it only at its place).
        pairs = []
        for ti, track in enumerate(tracks):
            leader = track.leader()
            lost = self.rules >= 7 and track.accepted is not None and not track.seen_in_window
            for di in free:
                if detections[di].card == leader and not self._elsewhere(track, detections[di].box) \
                        and not self._at_another_card(track, detections[di], tracks, read_now):
                    pairs.append(((lost, _distance(track.box, detections[di].box)), ti, di))
        matched_tracks: set[int] = set()
        _assign_nearest(pairs, detections, matched, matched_tracks, free)

        # Pass 2: class flicker: a different label at (nearly) the same place as a track seen last frame
        # (rules 7: or at the place of an accepted card seen within the window; rules 8: on a seat just
        # emptied, only in its very box).
        emptied = self.rules >= 8 and _just_emptied(tracks, matched_tracks)
        uncovered = _uncovered(tracks, matched_tracks, frame_no, self.thresholds.n) if self.rules >= 10 else ()
        pairs = []
        for ti, track in enumerate(tracks):
            if ti in matched_tracks:
                continue
            for di in free:
                distance = _distance(track.box, detections[di].box)
                if distance <= 0.5 * max(_diagonal(track.box), _diagonal(detections[di].box)) \
                        and self._may_flicker(track, detections[di].box, emptied, uncovered, detections[di].card):
                    pairs.append((distance, ti, di))
        _assign_nearest(pairs, detections, matched, matched_tracks, free)

        th = self.thresholds
        for ti, track in enumerate(tracks):
            det = matched.get(ti)
            if det is None:
                track.votes.append(None)
            else:
                if self.rules >= 10 and track.accepted is not None and not track.seen_in_window:
                    track.back_frame, track.hidden_after = frame_no, track.last_seen_frame
                track.see(det.card, float(det.conf), th.conf, ts, th.recheck_s, frame_no)
                track.box = det.box
                track.last_seen_frame, track.last_seen_ts = frame_no, ts
            while len(track.votes) > th.n:
                track.votes.popleft()

        for di in free:
            det = detections[di]
            track = Track(self._next_id, seat, frame_no, det.box, last_seen_frame=frame_no, last_seen_ts=ts,
                          first_seen_ts=ts)
            track.see(det.card, float(det.conf), th.conf, ts, frame_no=frame_no)
            self._next_id += 1
            self._tracks.append(track)
            tracks.append(track)
            self._new_track_ts[seat] = ts

        for track in tracks:
            if track.accepted is None:
                self._try_accept(track, frame_no, ts)
            elif self.rules >= 5:
                if self.rules >= 6:
                    self._note_reading(track, ts)
                self._watch_change(track, tracks, ts)

    def _elsewhere(self, track: Track, box: Box) -> bool:
        """Whether a reading of an accepted card, unseen for the whole window, lies away from its
        place (rules 7): swept and dealt again, or another deck's copy, it is another card, and the
        round must not take it for the left-over it replaces (QA49 dealing2 H2)."""
        return (self.rules >= 7 and track.accepted is not None and not track.seen_in_window
                and not _same_place(track.box, box))

    def _at_another_card(self, track: Track, det: Detection, seat_tracks: list[Track],
                         read_now: set[Card]) -> bool:
        """Whether a reading of this track's card lies away from its place, where another card of the
        seat lies and is read nowhere this frame (rules 9, QA52 bench_dealing): that card misread as
        this one, not this card moved there.  The other card must lie there (see :func:`_lies_there`):
        an accepted card unseen for a frame or few while its seat is in view (a covered index missed),
        not one of a seat that went out of view together (swept: the next deal's card laid where a
        swept card lay is rules 8's to judge, and kept its code before); and one read elsewhere, on this
        seat or another (a hand dragged across its neighbour's), has left its place to the card that
        follows it.

        A covered 5C read as 5S for two frames while the 5S beside it was missed took the 5S's track
        to the 5C's place; the 5S, read again where it lay, began a second track, and a second 5S,
        later a second 5C, was accepted on the seat (15 fps, round 15: Settle refused until two cards
        were removed by hand).  Matching by code at any distance is what follows a card slid across its
        seat, and still does where no other card lies; a card moved onto another card's place in one
        frame, hiding it, is taken for that card misread (its change watch reports it, and a person
        looks), where a misread taken for a move made a card two."""
        if self.rules < 9 or _same_place(track.box, det.box):
            return False
        in_view = any(t.accepted is not None and t.seen_last_frame for t in seat_tracks)
        return any(other is not track and _lies_there(other, in_view) and other.leader() not in read_now
                   and other.leader() != det.card and _same_place(other.box, det.box)
                   for other in seat_tracks)

    def _may_flicker(self, track: Track, box: Box, emptied: bool = False, uncovered: tuple = (),
                     card: Card | None = None) -> bool:
        """Whether another card's reading here may be this track's card misread: it was seen last
        frame, or (rules 7) it is an accepted card seen within the window and the reading lies at its
        place (glare, a hand, a blurred frame first washed it out: QA49 dealing2 M3); on a seat just
        emptied (rules 8, see :func:`_just_emptied`) only in its very box, where and as large as it
        was last seen.

        Rules 9 (QA52 bench_dealing): only at its place, seen last frame too.  Half a card's size
        took in the next card dealt over half of it: at 10 fps a QS accepted as QC (misread in its
        first frames), missed for the frame the 4S landed on it, had its track continued by the 4S's
        readings; the QS began a new track, the 4S was never accepted, and the screen showed QC and
        QS, one of them the 4S.  A card misread while it moves is followed as long as its box
        overlaps its last one that much (a sweep's 10-20 px a frame on a 60x84 card).

        Rules 10 (QA53 bench_dealing): an accepted card unseen for the whole window too, at its place,
        when another card of its seat that went out of view with it (within the window) has been read
        again at its place, in this frame or within the window (``uncovered``, see :func:`_uncovered`):
        the dealer's hand over the whole seat for longer than the window (five frames: a third of a
        second at 15 fps) lifted, and this card, misread as it came back, is still this card (10 fps,
        round 12: a JC read JS in two of its first three frames became a sixth card, taken off by hand;
        a QC missed in the first frame after the hand and read KC in the next did the same).  At its
        place, not in its very box: the card dealt under the hand lies over the right half of the seat's
        top card, whose box is then its index, and that index is what is misread most (a 4D read AD).
        Only a reading that shares the card's rank or its suit (``card``): a misread gets one of the
        index's two glyphs right (JC/JS, QC/KC, 4D/AD, 5D/8D, 2H/7H on the shipped models), while a card
        that shares neither, read there after the hand lifts, is a card put in its place under the hand
        and is told as before: the old card removed, the new one a card (review R2 M1: a JC swapped
        for a 9D read as the JC misread, which a "Card is right" tap would have settled on)."""
        if self.rules >= 9 and not _same_place(track.box, box):
            return False
        if track.seen_last_frame:
            return True
        came_back = (any(abs(gone - track.last_seen_frame) < self.thresholds.n for gone in uncovered)
                     and _one_glyph_alike(track.accepted, card))
        return (self.rules >= 7 and track.accepted is not None and (track.seen_in_window or came_back)
                and _same_place(track.box, box) and not (emptied and not _same_box(track.box, box)))

    def _try_accept(self, track: Track, frame_no: int, ts: float) -> None:
        th = self.thresholds
        strong = [v for v in track.votes if v is not None and v[1] >= th.conf]
        if len(strong) < th.k or ts - track.first_seen_ts < th.accept_after_s:
            return
        card, evidence = track.verdict()
        track.accepted = card
        track.accepted_frame, track.accepted_ts, track.accepted_box = frame_no, ts, track.box
        track.confidence = evidence.mean_confidence
        share = evidence.confident / sum(e.confident for e in track.evidence.values())
        track.needs_confirmation = track.confidence < th.needs_confirmation_below or share < th.min_vote_share
        self._resolve_move(track)

    def _note_reading(self, track: Track, ts: float) -> None:
        """Since when an accepted card has been read as another, this frame's reading included
        (rules 6), and (rules 8) when first read so in plain view: what a card laid over it is judged
        by (see :meth:`_covered`)."""
        last = track.votes[-1] if track.votes else None
        if last is None or last[0] == track.accepted or last[1] < self.thresholds.conf:
            return
        reading = track.read_as.get(last[0])
        if reading is None or ts - reading[1] > CHANGE_HOLD_S:
            reading = track.read_as[last[0]] = [ts, ts, []]
        else:
            reading[1] = ts
        if (len(reading[2]) < self.thresholds.k and track.accepted_box is not None
                and _same_box(track.accepted_box, track.box)):
            reading[2].append(ts)

    def _covered(self, track: Track, other: Card, tracks: list[Track]) -> bool:
        """Whether a card laid over this one, still there, began to lie there as it began to be
        read as ``other`` (rules 6, see the module docstring).

        Rules 8 (QA50 dealing3 H3): a reading read so ``k`` times in plain view, its box where and as
        large as when the card was accepted, before the card laid over it was first seen is not that
        card's doing: the index was in view, and the card was swapped just before the next one was
        dealt over it.  Read so while the box had shrunk or moved (the index being covered while the
        cover's blurred first frames were missed: the box shrinks as the cover slides over, while the
        card may still read as itself, so its last own sighting is no measure), it still is.  ``k``
        times, not once: a stray misread a frame before the next card landed begins the reading that
        card's cover then continues (gaps under ``CHANGE_HOLD_S`` do not end it), and alone it is no
        swap (busy-table sim, 30 fps: a false card_changed).  A reading begun after the cover was
        first seen is still the cover's doing, whatever its box: a card swapped as the next one lands over it
        reads, frame for frame, like the demo's QD read 10D under the 2D (its index half covered, its
        box not always smaller), and reporting that would stop honest rounds for a look."""
        reading = track.read_as.get(other)
        k = self.thresholds.k
        plain = reading[2] if self.rules >= 8 and reading is not None and len(reading[2]) >= k else None
        return reading is not None and any(
            cover.first_frame > track.first_frame     # laid after it: it may lie over it
            and cover.first_seen_ts - COVER_LEAD_S <= reading[0] <= cover.first_seen_ts + COVER_LANDS_S
            and not (plain and plain[k - 1] < cover.first_seen_ts)
            and _touching(cover.box, track.box) for cover in tracks)

    def _watch_change(self, track: Track, tracks: list[Track], ts: float) -> None:
        """Report an accepted card that has read as another, steadily and in place, since its
        recheck window: a card replaced between two frames (see the module docstring)."""
        th = self.thresholds
        if track.accepted_ts is None or ts - track.accepted_ts <= th.recheck_s:
            return
        last = track.votes[-1] if track.votes else None
        if last is not None and last[0] != track.accepted:
            track.later_first.setdefault(last[0], ts)
        counts: dict[Card, int] = {}
        confident = 0
        for vote in track.votes:
            if vote is not None and vote[1] >= th.conf:
                confident += 1
                counts[vote[0]] = counts.get(vote[0], 0) + 1
        other = min((card for card in counts if card != track.accepted),
                    key=lambda card: (-counts[card], card.index), default=None)
        if other is None or counts[other] < th.k or 2 * counts[other] <= confident:
            track.change_run = None
            return
        run = track.change_run
        if run is None or run[0] != other:
            since = min((v for v in track.votes if v is not None and v[0] == other and v[1] >= th.conf),
                        key=lambda v: v[2])
            run = track.change_run = (other, since[2], since[3], track.box)
        elif _distance(run[3], track.box) > 0.25 * _diagonal(run[3]):
            # moving (swept): held in place from now
            run = track.change_run = (other, ts, track.last_seen_frame, track.box)
        held = ts - run[1]
        if self.rules >= 6:
            explained = self._covered(track, other, tracks)
        else:
            first_read = min(track.later_first.get(other, run[1]), run[1])
            explained = self._new_track_ts.get(track.seat, -math.inf) >= first_read - CHANGE_QUIET_S
        hold = max(th.accept_after_s, CHANGE_HOLD_S) if self.rules >= 6 else th.accept_after_s
        if held >= hold and not explained and other != track.reread and (
                track.changed is None or track.changed.card != other):
            track.changed = Change(other, round(held, 1), run[2] if self.rules >= 6 else None)

    def _resolve_move(self, new: Track) -> None:
        """Drop the same card's older track on another seat if it left before this one appeared
        (rules 7: on its own seat too, where it was read again elsewhere: see :meth:`_elsewhere`)."""
        for old in list(self._tracks):
            if old is new or old.accepted != new.accepted or (old.seat == new.seat and self.rules < 7):
                continue
            if old.last_seen_frame < new.first_frame:
                self._tracks.remove(old)

    def _drop_stale(self, ts: float) -> None:
        keep = []
        for track in self._tracks:
            if track.accepted is None:
                if any(v is not None for v in track.votes):
                    keep.append(track)
            elif ts - track.last_seen_ts < self.thresholds.remove_after_s:
                keep.append(track)
        self._tracks = keep


def _distance(a: Box, b: Box) -> float:
    (ax, ay), (bx, by) = box_centre(a), box_centre(b)
    return math.hypot(ax - bx, ay - by)


def _diagonal(box: Box) -> float:
    return math.hypot(box[2] - box[0], box[3] - box[1])


def _same_place(a: Box, b: Box) -> bool:
    """Whether two boxes show one card's place (rules 7): most of the smaller inside the larger,
    as a card's box shrinks to its index under a hand and grows back; not the next card dealt
    over half of it."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    smaller = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return width > 0 and height > 0 and width * height >= SAME_PLACE_SHARE * smaller


def _same_box(a: Box, b: Box) -> bool:
    """Whether two boxes show a card at one place and size (rules 8): a card swapped in place, or
    nudged a pixel or two, not its index half covered (the box shrinks to it) or slid."""
    return (_distance(a, b) <= SAME_BOX_SHARE * _diagonal(a)
            and all(min(p, q) >= (1 - SAME_BOX_SHARE) * max(p, q)
                    for p, q in ((a[2] - a[0], b[2] - b[0]), (a[3] - a[1], b[3] - b[1]))))


def _lies_there(track: Track, seat_in_view: bool) -> bool:
    """Whether a track shows a card lying at its box (rules 9): an accepted card seen within the window
    while an accepted card of its seat was seen last frame (a covered index is missed for a frame or
    few at a time, 15 fps bench, round 28: a 3H missed three frames, then read as the 3D beside it),
    or a card not yet accepted read there last frame and once more within the window (one reading
    alone may be a misread or a blur)."""
    if track.accepted is not None:
        return track.seen_in_window and seat_in_view
    return track.seen_last_frame and sum(vote is not None for vote in track.votes) >= 2


def _just_emptied(seat_tracks: list[Track], read_now: set[int]) -> bool:
    """Whether every accepted card of the seat went out of view together within the window, none seen
    last frame nor read again in this one (rules 8, QA50 dealing3 M3): then a reading at one of their
    places continues that card only in its very box (:meth:`SeatTracker._may_flicker`).

    A sweep takes the seat's cards together, in a blur the detector misses or reads away from their
    places, so their tracks' last boxes still lie where they lay, and the next deal's card laid there
    within the window (bets open at Settle: sweeping and dealing at once is the dealer's rhythm) was
    taken for one of them misread: a false card_changed on the settled round and a card missing from
    the new one.  A card laid there lies where it was put, a few pixels off or larger than a swept
    card whose box was its index under the next card; glare or a hand that washed a card out gives
    it back in its very box.  The seat must have been emptied: with a neighbour in view, a box a few
    pixels off is the card nudged, and rule 7 stands.  The other way suggested to tell a sweep, a
    misread begun only after the card was seen in place for a few frames, cannot: a card swept unseen
    was last seen lying still in place for seconds, as one glare washes out.  Refusing every reading
    on an emptied seat cannot either: a sleeve over one of a seat's two cards while the other, misread
    under the next card, is missed for a frame made the misread a sixth card (busy-table sim, 10 fps:
    1 in 100 rounds).  A seat with one card has no neighbours to leave with it: rule 7 stands."""
    accepted = [(ti, t) for ti, t in enumerate(seat_tracks) if t.accepted is not None and t.seen_in_window]
    return len(accepted) >= 2 and not any(t.seen_last_frame or ti in read_now for ti, t in accepted)


def _one_glyph_alike(accepted: Card | None, read: Card | None) -> bool:
    """Whether a reading shares the accepted card's rank or its suit (None: no reading to judge)."""
    if accepted is None or read is None:
        return read is None
    return read.rank == accepted.rank or read.suit == accepted.suit


def _uncovered(seat_tracks: list[Track], read_now: set[int], frame_no: int, window: int) -> tuple[int, ...]:
    """The last sightings before a cover of the seat's accepted cards read again at their places after a
    whole window unseen, in this frame or within the window (rules 10, QA53 bench_dealing): the seat was
    covered (the dealer's hand over it while dealing its next card), not swept, for a swept card does not
    come back where it lay.  Then a reading at the place of another card that went out of view with them
    is that card, misread as the cover lifts (see :meth:`SeatTracker._may_flicker`); a card laid where a
    swept card lay, its hand gone, still is not."""
    now = [t.last_seen_frame for ti, t in enumerate(seat_tracks)
           if ti in read_now and t.accepted is not None and not t.seen_in_window]
    return tuple(now) + tuple(t.hidden_after for t in seat_tracks
                              if t.back_frame is not None and frame_no - t.back_frame < window)


def _over(track: Track, seat_tracks: list[Track]) -> bool:
    """Whether a card lies where another card of its seat was read, one in place of the other: that
    one last seen before this appeared, or seen again since this was last (rules 7).  That card read
    as another (while the glare lasts, and for as long as the misread is kept after), or a card laid
    over it; on a finished round's table not yet a sign of the next deal.  A card swept across one
    just dealt, both read, is not."""
    return any(other is not track and _same_place(other.box, track.box)
               and (other.last_seen_frame < track.first_frame or track.last_seen_frame < other.last_seen_frame)
               for other in seat_tracks)


def _touching(a: Box, b: Box) -> bool:
    """Whether two boxes overlap, or lie apart by at most half the larger one's size (a card's
    box may be its visible index alone: the card around it reaches further)."""
    gap_x = max(a[0], b[0]) - min(a[2], b[2])
    gap_y = max(a[1], b[1]) - min(a[3], b[3])
    return (gap_x <= 0.5 * max(a[2] - a[0], b[2] - b[0])
            and gap_y <= 0.5 * max(a[3] - a[1], b[3] - b[1]))


def _assign_nearest(pairs, detections, matched, matched_tracks, free) -> None:
    """Greedy nearest-first matching of (distance, track, detection) pairs (rules 7, pass 1: a
    (rank, distance)); each side used once."""
    for _, ti, di in sorted(pairs):
        if ti in matched_tracks or di not in free:
            continue
        matched[ti] = detections[di]
        matched_tracks.add(ti)
        free.remove(di)
