"""A busy table dealt for an hour, simulated: what do the camera's everyday faults cost in money and taps?

Every change to the dealing rules (``vision.tracker``, ``vision.round``, ``TRACKER_VERSION``) trades
one fault for another: a rule that keeps a card through glare may keep a swept one, a rule that
forgets a covered card sooner may lose one.  This plays ``--rounds`` rounds at a table of
``--seats`` players and the banker, five cards each from one deck shuffled per round (so the
true hands are known), through the production path after the card model: the pipeline's
tracker, the round machine, the table service (bets, Settle, Correct card, Void), the audit log
and the round recorder, in stream time (frames at ``--fps`` as fast as the machine runs them;
``process()`` as a replay runs it, the motion gate and the model replaced by the noise below).

A simulated dealer works the kiosk as its user does, through the table service's own calls (the
dealer screen's): places the bets before the deal, taps Settle when the last card has been
dealt, and when Settle is refused, or the screen flags a card ``?`` or raises an alert about a
seat, looks at that seat on the table (the true hand) and does what the screen asks: "Card is
right" for a card that is what was dealt, Correct card to remove a card that is not there, add
one that was not read, or put the right card in place of a misread one; after Settle a card
wrong on the record goes to the supervisor (a correction with approval).  A round still refused
after ``Pace.attempts`` looks is voided with the supervisor's approval.

The noise (:class:`Noise`; ``--noise name=value`` changes one, ``--clean`` turns all off) is what
a real camera's model gives at a busy table, each for a reason the dealing rules must survive:

* ``misread_per_s`` / ``misread_frames``: a card in plain view read for 1-3 frames as a look-alike
  (the same rank in the suit of the same colour, or a rank whose index looks alike: 6/9/8, 3/8,
  5/6, A/4, J/Q/K/10).  Glints and compression blur a corner index; the vote must outlast it and
  the change watch must not take it for a swap.
* ``glare_per_s`` / ``glare_frames``: a card not found for a few frames (glare washing it out):
  it must stay in the hand, and read again (or misread) at its place, be the same card.
* ``covered_misread_factor`` / ``covered_miss`` / ``covered_conf``: a card with the next card of
  its hand laid over it shows only its index strip, read at a lower confidence, misread more often
  and sometimes not at all: the next card over an index is what explained the demo's QD as 10D.
* ``slide_seen``: a card read while it slides in from the shoe, blurred, across other seats:
  ``accept_after_s`` must keep it off the seats it passes.
* ``hand_over_deal`` / ``hand_s``: the dealer's hand over a seat's cards while dealing to it: every
  card of the seat gone at once for a fraction of a second, the new one landing under it.
* ``chip_over_card`` / ``chip_s`` / ``chip_swept_under``: a payout chip laid over one card of a
  settled hand, lifted or swept with the card under it: the card hidden alone while its
  neighbours are in view (a left-over, not a card that left).
* ``sweep_seen``: the cards read while they are swept, blurred, seat by seat.
* ``drag_across``: a seat's cards dragged across its neighbour's zone while swept: they must not
  join the neighbour's next hand.
* ``early_next_card``: the next round's first card dealt before the sweep ends (bets are open from
  Settle): it must start the next round with the second card, not be taken for a left-over or raise
  ``card_after_round`` on the last round.
* ``jitter_px``: every box moves a pixel or two from frame to frame (hands squared up, detection noise).

Printed: rounds settled and voided, wrong settlements (a line's net or commission, or the banker's
net, differing from ``scoring.settle`` on the true cards), rounds settled on other cards than
dealt, Settle refusals, the dealer's taps (cards removed, added, replaced, confirmed, corrections
after Settle), alerts by type, the rounds the round machine started, and frames per second.
``--json OUT`` writes the same figures.  The figures are the same for the same seed and options.

    python bench/bench_dealing.py --rounds 100 --fps 15 --seed 11
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import random
import sys
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields, replace
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "kiosk"))

from kiosk.commands import build_kiosk  # noqa: E402
from kiosk.demo import table_fixes  # noqa: E402
from kiosk.table_service import Approval, TableError  # noqa: E402
from kiosk_testing import ScriptedDetector, table_dict  # noqa: E402
from scoring.cards import CARD_CODES, RANK_NAMES, Card  # noqa: E402
from scoring.errors import NiuniuError  # noqa: E402
from scoring.settle import settle_round  # noqa: E402
from vision.corners import Detection  # noqa: E402
from vision.model_cli import _number_from, _whole_from  # noqa: E402
from vision.round import EventKind, RoundState  # noqa: E402
from vision.table import table_config_from_dict  # noqa: E402
from vision.tracker import TRACKER_VERSION  # noqa: E402

WIDTH, HEIGHT = 1280, 720
CARD_W, CARD_H = 60, 84
STEP = 30                      # a hand's cards fanned: each laid over the right half of the one before
SHOE = (WIDTH / 2, 4.0)        # where a dealt card slides in from
DEALER, SUPERVISOR = "sim-dealer", "sim-super"
STAKES = (Decimal("10"), Decimal("25"), Decimal("50"), Decimal("100"))
# Ranks whose corner index a model confuses (a 6 upside down is a 9; a blurred 8 a 3 or a 6).
LOOK_ALIKE_RANKS = {"A": "4", "2": "7", "3": "8", "4": "A", "5": "6 3", "6": "9 8 5", "7": "2", "8": "6 9 3",
                    "9": "6 8", "10": "Q", "J": "Q", "Q": "K J", "K": "Q"}
SAME_COLOUR = {"S": "C", "C": "S", "H": "D", "D": "H"}


def _span(text: str) -> tuple[float, float]:
    low, _, high = text.partition("-")
    return float(low), float(high or low)


@dataclass(frozen=True)
class Noise:
    """The camera's faults; rates are per card per second of it lying in view (so a faster camera
    sees the same faults over more frames), shares are per card dealt, per seat or per round."""

    misread_per_s: float = 0.05
    misread_frames: tuple[float, float] = (1, 3)
    glare_per_s: float = 0.03
    glare_frames: tuple[float, float] = (2, 6)
    covered_misread_factor: float = 3.0
    covered_miss: float = 0.1
    covered_conf: tuple[float, float] = (0.6, 0.95)
    clear_conf: tuple[float, float] = (0.85, 0.99)
    slide_seen: float = 0.5
    hand_over_deal: float = 0.25
    hand_s: tuple[float, float] = (0.2, 0.7)
    chip_over_card: float = 0.2
    chip_s: tuple[float, float] = (1.0, 5.0)
    chip_swept_under: float = 0.3
    sweep_seen: float = 0.6
    drag_across: float = 0.1
    early_next_card: float = 0.2
    jitter_px: float = 1.5

    @classmethod
    def clean(cls) -> "Noise":
        """No fault at all: every card read right, in plain view, from the frame it lies still."""
        zero = {f.name: 0.0 for f in fields(cls) if f.type == "float"}
        return cls(**zero, covered_conf=cls.clear_conf)

    def changed(self, setting: str) -> "Noise":
        """This noise with one ``name=value`` (``name=low-high`` for a range) changed."""
        name, sep, value = setting.partition("=")
        known = {f.name: f for f in fields(self)}
        if not sep or name not in known:
            raise ValueError(f"--noise {setting!r}: give name=value, one of {', '.join(known)}")
        try:
            parsed = _span(value) if known[name].type.startswith("tuple") else float(value)
        except ValueError:
            raise ValueError(f"--noise {setting!r}: {value!r} is not a number"
                             + (" or a range like 1-3" if known[name].type.startswith("tuple") else "")) from None
        numbers = parsed if isinstance(parsed, tuple) else (parsed,)
        if any(not math.isfinite(v) or v < 0 for v in numbers) or numbers[0] > numbers[-1]:
            raise ValueError(f"--noise {setting!r}: a rate, share or range of zero or more, low before high")
        return replace(self, **{name: parsed})


@dataclass(frozen=True)
class Pace:
    """How fast the dealer works (seconds): a busy table's dealer, not a demo's."""

    card_s: tuple[float, float] = (0.5, 0.9)      # from one card dealt to the next
    slide_s: tuple[float, float] = (0.15, 0.3)    # a card sliding in from the shoe
    look_s: float = 1.0                           # from the last card to the tap on Settle
    react_s: float = 1.5                          # between the dealer's looks at the screen
    attempts: int = 6                             # looks at a refused round before it is voided
    payout_s: tuple[float, float] = (3.0, 6.0)
    sweep_seat_s: tuple[float, float] = (0.3, 0.7)
    drag_s: tuple[float, float] = (0.3, 0.6)
    gap_s: tuple[float, float] = (1.0, 2.5)       # from the sweep to the next deal
    place_px: float = 20.0                        # where a hand lies in its zone moves this much between rounds


@dataclass
class Lying:
    """A card on the table, and what the camera is doing to it now."""

    code: str
    seat: str
    slot: int
    x: float
    y: float
    landed: float                  # stream time it lies still
    dealt: float                   # stream time it left the shoe
    chip_until: float = 0.0
    misread_as: str | None = None
    misread_left: int = 0
    glare_left: int = 0
    moving: tuple[float, float, float, float, float, float] | None = None  # x0, y0, x1, y1, t0, t1
    gone_at: float = math.inf

    def place(self, now: float) -> tuple[float, float, bool]:
        """Where it lies at ``now``, and whether it is moving."""
        if now < self.landed:
            share = (now - self.dealt) / max(self.landed - self.dealt, 1e-9)
            return SHOE[0] + (self.x - SHOE[0]) * share, SHOE[1] + (self.y - SHOE[1]) * share, True
        if self.moving is not None:
            x0, y0, x1, y1, t0, t1 = self.moving
            share = min(1.0, max(0.0, (now - t0) / max(t1 - t0, 1e-9)))
            return x0 + (x1 - x0) * share, y0 + (y1 - y0) * share, now >= t0
        return self.x, self.y, False


@dataclass
class Figures:
    rounds: int = 0
    settled: int = 0
    voided: int = 0
    not_on_screen: int = 0                 # dealt, but the screen never showed a round to settle
    wrong_settlements: int = 0
    settled_on_other_cards: int = 0
    settle_refusals: int = 0
    cards_removed_by_hand: int = 0
    cards_added_by_hand: int = 0
    cards_replaced_by_hand: int = 0
    cards_confirmed: int = 0               # "Card is right"
    corrections_after_settle: int = 0      # a supervisor's, a card wrong on the settled record
    next_round_pressed: int = 0
    dealer_errors: int = 0                 # a tap the table refused other than Settle
    rounds_started: int = 0                # by the round machine
    alerts: dict[str, int] = field(default_factory=dict)
    frames: int = 0
    problems: list[str] = field(default_factory=list)   # round by round: what went wrong, to reproduce

    def hand_actions(self) -> int:
        return (self.cards_removed_by_hand + self.cards_added_by_hand + self.cards_replaced_by_hand
                + self.cards_confirmed + self.corrections_after_settle)


def look_alike(code: str, rng: random.Random) -> str:
    """A card a model takes ``code`` for: the same rank in the other suit of its colour, or a rank
    whose index looks alike in the same suit."""
    card = Card.parse(code)
    rank, suit = RANK_NAMES[card.rank], card.suit.value
    if rng.random() < 0.5:
        return rank + SAME_COLOUR[suit]
    return rng.choice(LOOK_ALIKE_RANKS[rank].split()) + suit


def seat_origin(config, seat: str, rng: random.Random, pace: Pace) -> tuple[float, float]:
    """Where a hand's first card lies in its seat's zone this round."""
    zone = next(s for s in config.seats if s.name == seat).polygon
    x0, y0 = zone[0][0] * WIDTH, zone[0][1] * HEIGHT
    return (x0 + 50 + rng.uniform(-pace.place_px, pace.place_px),
            y0 + 90 + rng.uniform(-pace.place_px, pace.place_px))


class Table:
    """The felt: the cards lying on it, the camera's view of them frame by frame, and the kiosk
    watching it, driven frame by frame in stream time."""

    def __init__(self, config, pipeline, noise: Noise, fps: float, rng: random.Random) -> None:
        self.config, self.pipeline, self.noise, self.fps, self.rng = config, pipeline, noise, fps, rng
        self.cards: list[Lying] = []
        self.hidden_seats: dict[str, float] = {}      # the dealer's hand over a seat until then
        self.frame_no = 0
        self.epoch = 1_796_000_000.0                  # 2026-11-30: audit records carry dates
        self.on_frame = lambda now: None

    @property
    def now(self) -> float:
        return self.frame_no / self.fps

    def run(self, seconds: float) -> None:
        """Let ``seconds`` of camera frames go by."""
        end = self.now + seconds
        while self.now < end - 1e-9:
            self.frame()

    def frame(self) -> None:
        now = self.now
        self.cards = [c for c in self.cards if c.gone_at > now]
        detections = [d for card in self.cards if (d := self._seen(card, now)) is not None]
        self.pipeline.process(self.frame_no, self.epoch + now, (WIDTH, HEIGHT), detections, mono=now)
        self.frame_no += 1
        self.on_frame(self.now)

    def _seen(self, card: Lying, now: float) -> Detection | None:
        """What the camera's model makes of one card in this frame, if anything."""
        noise, rng = self.noise, self.rng
        x, y, moving = card.place(now)
        if card.chip_until > now:       # lifted, or swept with the card under it
            return None
        if now < card.landed:
            share = (now - card.dealt) / max(card.landed - card.dealt, 1e-9)
            if share < 0.6 or rng.random() >= noise.slide_seen:
                return None
            return self._detection(card.code, rng.uniform(0.45, 0.75), (x, y, x + CARD_W, y + CARD_H))
        if moving:
            if rng.random() >= noise.sweep_seen:
                return None
            return self._detection(card.code, rng.uniform(0.5, 0.85), (x, y, x + CARD_W, y + CARD_H))
        if self.hidden_seats.get(card.seat, 0.0) > now:
            return None
        if card.glare_left > 0:
            card.glare_left -= 1
            return None
        per_frame = 1.0 / self.fps
        if rng.random() < noise.glare_per_s * per_frame:
            card.glare_left = round(rng.uniform(*noise.glare_frames)) - 1
            return None
        covered = any(o.seat == card.seat and o.slot > card.slot and o.landed <= now and not o.moving
                      for o in self.cards)
        if covered and rng.random() < noise.covered_miss:
            return None
        code = card.code
        if card.misread_left > 0:
            card.misread_left -= 1
            code = card.misread_as
        elif rng.random() < noise.misread_per_s * per_frame * (noise.covered_misread_factor if covered else 1.0):
            card.misread_as = code = look_alike(card.code, rng)
            card.misread_left = round(rng.uniform(*noise.misread_frames)) - 1
        conf = rng.uniform(*(noise.covered_conf if covered else noise.clear_conf))
        box = (x, y, x + STEP, y + CARD_H) if covered else (x, y, x + CARD_W, y + CARD_H)
        return self._detection(code, conf, box)

    def _detection(self, code: str, conf: float, box: tuple[float, float, float, float]) -> Detection:
        j = self.noise.jitter_px
        jittered = tuple(v + self.rng.uniform(-j, j) for v in box) if j else box
        return Detection(Card.parse(code), conf, jittered)

    # ------------------------------------------------------------ the dealer's hands on the felt

    def deal_card(self, code: str, seat: str, slot: int, origin: tuple[float, float], pace: Pace) -> None:
        now = self.now
        landed = now + self.rng.uniform(*pace.slide_s)
        self.cards.append(Lying(code, seat, slot, origin[0] + STEP * slot, origin[1], landed, now))
        if self.rng.random() < self.noise.hand_over_deal:
            self.hidden_seats[seat] = now + self.rng.uniform(*self.noise.hand_s)

    def lay_chips(self, seats: list[str]) -> None:
        """The payout's chips: now and then one lies over a card of the hand it pays."""
        for seat in seats:
            mine = [c for c in self.cards if c.seat == seat]
            if mine and self.rng.random() < self.noise.chip_over_card:
                card = self.rng.choice(mine)
                under = self.rng.random() < self.noise.chip_swept_under
                card.chip_until = math.inf if under else self.now + self.rng.uniform(*self.noise.chip_s)

    def sweep(self, seat: str, pace: Pace, neighbour: tuple[float, float] | None) -> None:
        """Take one seat's cards off: slid toward the dealer and gone, or dragged across the
        neighbouring seat's zone first (``neighbour``: its zone's centre)."""
        now = self.now
        mine = [c for c in self.cards if c.seat == seat]
        drag = neighbour is not None and self.rng.random() < self.noise.drag_across
        seconds = self.rng.uniform(*(pace.drag_s if drag else pace.sweep_seat_s))
        for card in mine:
            if drag:
                dx, dy = neighbour[0] - card.x - CARD_W / 2, neighbour[1] - card.y - CARD_H / 2
            else:
                dx, dy = 0.0, -110.0
            card.moving = (card.x, card.y, card.x + dx, card.y + dy, now, now + seconds)
            card.gone_at = now + seconds
        self.run(seconds)


class Dealer:
    """The kiosk's user: bets, Settle, and what the screen asks, through the table service's calls."""

    def __init__(self, service, preset, figures: Figures, pace: Pace, rng: random.Random, players: list[str]) -> None:
        self.service, self.preset, self.figures, self.pace, self.rng = service, preset, figures, pace, rng
        self.players = players
        self.truth: dict[str, list[str]] = {}
        self.round_index = 0
        self.phase = "dealing"          # dealing -> settling -> done (settled, voided or given up)
        self.next_look = math.inf
        self.attempts = 0
        self.finished_round = 0         # the machine's last round this dealer settled or voided

    # ------------------------------------------------------------ bets

    def place_bets(self) -> None:
        """The next round's stakes, entered as the screen's bet buttons do (open from Settle)."""
        kinds = self.preset.bet_kinds
        for i, seat in enumerate(self.players):
            amount = self.rng.choice(STAKES)
            self._tap(self.service.set_bet, seat, str(amount), kinds[i % len(kinds)], DEALER)
        if self.service.covered:
            self._tap(self.service.set_stack, "1000", DEALER)

    def _tap(self, action, *args, **kwargs) -> bool:
        try:
            action(*args, **kwargs)
            return True
        except NiuniuError as exc:
            self.figures.dealer_errors += 1
            self.figures.problems.append(f"round {self.round_index}: {getattr(action, '__name__', action)} "
                                         f"refused: {exc}")
            return False

    # ------------------------------------------------------------ looking at the screen

    def dealt(self, index: int, truth: dict[str, list[str]], now: float) -> None:
        """The last card of round ``index`` is down: Settle after a look."""
        self.round_index, self.truth = index, truth
        self.phase, self.attempts, self.next_look = "settling", 0, now + self.pace.look_s

    def tick(self, now: float) -> None:
        if now + 1e-9 < self.next_look:
            return
        self.next_look = now + self.pace.react_s
        if self.phase == "settling":
            self._try_settle()
        else:
            self._answer_settled()

    def _screen(self) -> dict:
        return self.service.snapshot()

    def _try_settle(self) -> None:
        screen = self._screen()
        shown = screen["round"]
        state = shown["state"]
        if state in (RoundState.settled, RoundState.void) and shown["no"] == self.finished_round:
            # the screen still shows the last round: "Next round", as the dealer would
            if self._tap(self.service.clear, DEALER):
                self.figures.next_round_pressed += 1
            return self._give_up_after_attempts("the screen still showed the round before")
        if state not in (RoundState.dealing, RoundState.complete):
            return self._give_up_after_attempts(f"the screen showed no round to settle ({state})")
        try:
            settlement = self.service.settle(DEALER, shown["no"], shown["basis"])
        except TableError as exc:
            self.figures.settle_refusals += 1
            self._fix_what_the_screen_points_at(screen, str(exc))
            self.attempts += 1
            if self.attempts >= self.pace.attempts:
                self._void(f"cannot settle after {self.attempts} looks: {exc}")
            return
        self._settled(settlement)

    def _give_up_after_attempts(self, why: str) -> None:
        self.attempts += 1
        if self.attempts >= self.pace.attempts:
            self.figures.not_on_screen += 1
            self.figures.problems.append(f"round {self.round_index}: not settled: {why}")
            self.phase = "done"

    def _void(self, why: str) -> None:
        if self._tap(self.service.void, f"sim: {why}", Approval(DEALER, SUPERVISOR)):
            self.figures.voided += 1
            self.finished_round = self.service.machine.round_no
            self.figures.problems.append(f"round {self.round_index} (machine round {self.finished_round}): "
                                         f"voided: {why}")
        self.phase = "done"
        self.place_bets()

    def _settled(self, settlement) -> None:
        machine = self.service.machine
        self.figures.settled += 1
        self.finished_round = machine.round_no
        hands = {seat: sorted(hand.codes) for seat, hand in machine.hands.items()}
        true_hands = {seat: sorted(cards) for seat, cards in self.truth.items()}
        where = f"round {self.round_index} (machine round {machine.round_no})"
        if any(hands.get(seat) != cards for seat, cards in true_hands.items()):
            self.figures.settled_on_other_cards += 1
            wrong = {s: " ".join(hands.get(s, [])) for s, c in true_hands.items() if hands.get(s) != c}
            self.figures.problems.append(f"{where}: settled on {wrong}, dealt "
                                         f"{ {s: ' '.join(self.truth[s]) for s in wrong} }")
        wrong_money = money_differs(settlement, self.truth, self.preset)
        if wrong_money:
            self.figures.wrong_settlements += 1
            self.figures.problems.append(f"{where}: WRONG MONEY {wrong_money}")
        self.phase = "done"
        self.place_bets()

    def _fix_what_the_screen_points_at(self, screen: dict, refusal: str) -> None:
        """Look at the seats the screen points at (a hand short or long, a card flagged ``?``, an
        alert, a card on two seats, a seat the refusal names) and make the screen say what lies there."""
        read = {s["name"]: [c["code"] for c in s["cards"]] for s in screen["seats"] if s["cards"]}
        flagged = [(s["name"], c["code"]) for s in screen["seats"] for c in s["cards"] if c["confirm"]]
        codes = Counter(code for cards in read.values() for code in cards)
        pointed = {seat for seat in self.truth if len(read.get(seat, [])) != len(self.truth[seat])}
        pointed |= {seat for seat, _ in flagged}
        pointed |= {a["seat"] for a in screen["round"]["alerts"] if a.get("seat")}
        pointed |= {seat for seat, cards in read.items() if any(codes[c] > 1 for c in cards)}
        pointed |= {seat for seat in self.truth
                    if (f"seat {seat}" if seat != "banker" else "the banker") in refusal}
        for seat, code in flagged:
            if code in self.truth.get(seat, []):
                if self._correct(seat, code, code, "the card is right"):
                    self.figures.cards_confirmed += 1
        for seat in sorted(pointed & set(read)):
            # one card on the record twice (kiosk.demo.table_fixes knows one copy of each): take the
            # copies off that were not dealt, as the refusal asks ("... left the table: remove it")
            for code in sorted(set(read[seat])):
                extra = read[seat].count(code) - (1 if code in self.truth.get(seat, []) else 0)
                for _ in range(extra if code in self.truth.get(seat, []) else 0):
                    if self._correct(seat, code, None, f"sim dealer looked at the table: {code} is there once"):
                        self.figures.cards_removed_by_hand += 1
                        read[seat].remove(code)
        fixes = table_fixes({s: read.get(s, []) for s in sorted(set(read) | set(self.truth))}, self.truth)
        for seat, old, new in fixes:
            if seat not in pointed:
                continue
            if self._correct(seat, old, new, f"sim dealer looked at the table: {old} -> {new}"):
                if old and new:
                    self.figures.cards_replaced_by_hand += 1
                elif old:
                    self.figures.cards_removed_by_hand += 1
                else:
                    self.figures.cards_added_by_hand += 1

    def _correct(self, seat: str, old: str | None, new: str | None, reason: str,
                 approval: Approval | None = None, round_no: int | None = None) -> bool:
        done = self._tap(self.service.correct, seat, old, new, DEALER, reason, approval, round_no)
        if done and old != new:     # a card the camera got wrong or lost, for whoever reproduces it
            what = f"{old} -> {new}" if old and new else f"removed {old}" if old else f"added {new}"
            self.figures.problems.append(f"round {self.round_index} (machine round "
                                         f"{self.service.machine.round_no}), frame {self.frame_no()}: seat {seat} "
                                         f"{what} by hand{' after Settle' if approval else ''}")
        return done

    def frame_no(self) -> int | None:
        return self.service.machine.last_frame_no

    def _answer_settled(self) -> None:
        """After Settle: a card flagged ``?`` on the settled round is looked at: "Card is right", or
        the supervisor corrects it where it is not what was dealt."""
        screen = self._screen()
        shown = screen["round"]
        if shown["state"] != RoundState.settled or shown["no"] != self.finished_round:
            return
        for seat in screen["seats"]:
            for card in seat["cards"]:
                if not card["confirm"]:
                    continue
                name, code = seat["name"], card["code"]
                if code in self.truth.get(name, []):
                    if self._correct(name, code, code, "the card is right", round_no=shown["no"]):
                        self.figures.cards_confirmed += 1
                    continue
                free = [c for c in self.truth.get(name, []) if c not in [x["code"] for x in seat["cards"]]]
                if free and self._correct(name, code, free[0], "supervisor looked at the table",
                                          Approval(DEALER, SUPERVISOR), shown["no"]):
                    self.figures.corrections_after_settle += 1


def money_differs(settlement, truth: dict[str, list[str]], preset) -> dict[str, str]:
    """Each seat (and ``banker``) whose net or commission differs from settling the same bets on the
    true cards with ``scoring.settle``: paid -> owed, as text ({} when the money was right)."""
    bets = {line.seat: line.bet for line in settlement.lines}
    true = settle_round(preset, truth["banker"], {seat: (truth[seat], bet) for seat, bet in bets.items()},
                        banker_bid=settlement.banker_bid, banker_stack=settlement.banker_stack)
    paid = {line.seat: (line.net, line.commission) for line in settlement.lines}
    owed = {line.seat: (line.net, line.commission) for line in true.lines}
    differs = {seat: f"paid {paid.get(seat, ('-', '-'))[0]} (commission {paid.get(seat, ('-', '-'))[1]}), "
                     f"owed {net} (commission {commission})"
               for seat, (net, commission) in owed.items() if paid.get(seat) != (net, commission)}
    if settlement.banker_net != true.banker_net:
        differs["banker"] = f"net {settlement.banker_net}, owed {true.banker_net}"
    return differs


def deal_round(table: Table, dealer: Dealer, config, pace: Pace, rng: random.Random, players: list[str],
               index: int, first_laid: tuple[dict, dict] | None) -> tuple[dict, dict]:
    """Deal one round from a shuffled deck, round robin, the banker last; ``first_laid``: the hands
    and places of a round whose first card was laid during the last sweep."""
    if first_laid is None:
        hands, origins = new_hands(config, rng, pace, players)
        skip = 0
    else:
        (hands, origins), skip = first_laid, 1
    order = players + ["banker"]
    dealt = 0
    for slot in range(5):
        for seat in order:
            if dealt >= skip:
                table.deal_card(hands[seat][slot], seat, slot, origins[seat], pace)
                table.run(rng.uniform(*pace.card_s))
            dealt += 1
    dealer.dealt(index, hands, table.now)
    return hands, origins


def new_hands(config, rng: random.Random, pace: Pace, players: list[str]) -> tuple[dict, dict]:
    deck = list(CARD_CODES)
    rng.shuffle(deck)
    seats = players + ["banker"]
    hands = {seat: deck[i * 5:(i + 1) * 5] for i, seat in enumerate(seats)}
    return hands, {seat: seat_origin(config, seat, rng, pace) for seat in seats}


def neighbour_centre(config, seat: str) -> tuple[float, float] | None:
    """The centre of the zone beside ``seat``'s in its row (the one to the right, else the left)."""
    names = [s.name for s in config.seats]
    i = names.index(seat)
    zone = config.seats[i].polygon
    row = [s for s in config.seats if abs(s.polygon[0][1] - zone[0][1]) < 1e-6 and s.name != seat]
    if not row:
        return None
    right = [s for s in row if s.polygon[0][0] > zone[0][0]]
    other = min(right or row, key=lambda s: abs(s.polygon[0][0] - zone[0][0])).polygon
    return ((other[0][0] + other[1][0]) / 2 * WIDTH, (other[0][1] + other[2][1]) / 2 * HEIGHT)


def play(rounds: int = 100, fps: float = 15.0, seed: int = 11, seats: int = 5, noise: Noise | None = None,
         pace: Pace | None = None, rules: str = "cambodia") -> tuple[Figures, float]:
    """Play ``rounds`` rounds; the figures, and the wall seconds the frames took."""
    noise = Noise() if noise is None else noise
    pace = Pace() if pace is None else pace
    rng = random.Random(seed)
    players = [str(i) for i in range(1, seats + 1)]
    data = table_dict(seats=("banker", *players), rules=rules)
    data["camera"]["fps"] = fps
    config = table_config_from_dict(data)
    figures = Figures(rounds=rounds)
    with bench_kiosk(config, ScriptedDetector({}), figures) as (service, pipeline):
        table = Table(config, pipeline, noise, fps, rng)
        service.clock = lambda: table.epoch + table.now      # the dealer's taps on the frames' clock
        dealer = Dealer(service, service.preset, figures, pace, rng, players)
        table.on_frame = dealer.tick
        started = time.perf_counter()
        try:
            dealer.place_bets()
            first_laid = None
            for index in range(1, rounds + 1):
                deal_round(table, dealer, config, pace, rng, players, index, first_laid)
                while dealer.phase == "settling":
                    table.frame()
                table.lay_chips(players)
                table.run(rng.uniform(*pace.payout_s))
                first_laid = sweep_table(table, config, pace, rng, players, last=index == rounds)
                table.run(rng.uniform(*pace.gap_s))
        finally:
            elapsed = time.perf_counter() - started
            figures.frames = table.frame_no
    return figures, elapsed


@contextmanager
def bench_kiosk(config, detector, figures: Figures, data_dir: Path | None = None):
    """The kiosk wired as production wires it (pipeline, round machine, table service, audit log,
    recorder) in ``data_dir`` (a scratch folder when None), the round machine's starts and alerts
    counted in ``figures``; stopped as the kiosk stops.  Yields (service, pipeline)."""
    with tempfile.TemporaryDirectory(prefix="bench-dealing-") as tmp:
        _app, service, pipeline = build_kiosk(config, None, detector, data_dir or Path(tmp), realtime=False)

        def heard(event) -> None:
            if event.kind == EventKind.round_start:
                figures.rounds_started += 1
            code = event.alert_code
            if code is not None:
                figures.alerts[str(code)] = figures.alerts.get(str(code), 0) + 1

        service.machine.add_listener(heard)
        try:
            yield service, pipeline
        finally:
            pipeline.stop()
            service.stop("bench finished")
            service.audit.close()


def sweep_table(table: Table, config, pace: Pace, rng: random.Random, players: list[str],
                last: bool) -> tuple[dict, dict] | None:
    """Sweep seat by seat in deal order; now and then the next round's first card is dealt
    before the last seats are swept (returned, with its round's hands, for the deal to go on)."""
    order = players + ["banker"]
    early_after = rng.randrange(1, len(order)) if not last and rng.random() < table.noise.early_next_card else None
    laid = None
    for i, seat in enumerate(order):
        if i == early_after:
            hands, origins = new_hands(config, rng, pace, players)
            table.deal_card(hands[players[0]][0], players[0], 0, origins[players[0]], pace)
            table.run(rng.uniform(*pace.card_s))
            laid = (hands, origins)
        table.sweep(seat, pace, neighbour_centre(config, seat))
    return laid


# ------------------------------------------------------------------ the command


def report(figures: Figures, elapsed: float, args) -> dict:
    return figures_out(figures, elapsed, {"rounds": args.rounds, "fps": args.fps, "seed": args.seed,
                                          "seats": args.seats, "rules": args.rules,
                                          "noise": asdict(args.noise_model)})


def figures_out(figures: Figures, elapsed: float, settings: dict) -> dict:
    """The figures as printed and written (``--json``), with the settings that made them."""
    out = {key: value for key, value in asdict(figures).items() if key != "problems"}
    out["hand_actions"] = figures.hand_actions()
    out["problems"] = figures.problems
    # "rules" is the scoring preset; which dealing rules made the figures is said too (review R2 L2)
    out["settings"] = {**settings, "tracker_rules": TRACKER_VERSION}
    out["timing"] = {"wall_s": round(elapsed, 1),
                     "frames_per_s": round(figures.frames / elapsed, 1) if elapsed else None}
    return out


def print_table(out: dict, heading: str | None = None, timing_rows: tuple = ()) -> None:
    """The figures, one a line; ``heading`` (default: this bench's settings) first, ``timing_rows``
    (name, value) after the frames."""
    rows = [("rounds dealt", out["rounds"]), ("rounds settled", out["settled"]), ("rounds voided", out["voided"]),
            ("rounds never on the screen", out["not_on_screen"]), ("rounds the machine started", out["rounds_started"]),
            ("WRONG SETTLEMENTS (money)", out["wrong_settlements"]),
            ("settled on other cards than dealt", out["settled_on_other_cards"]),
            ("Settle refusals", out["settle_refusals"]), ("cards removed by hand", out["cards_removed_by_hand"]),
            ("cards added by hand", out["cards_added_by_hand"]),
            ("cards replaced by hand", out["cards_replaced_by_hand"]),
            ("\"Card is right\" taps", out["cards_confirmed"]),
            ("corrections after Settle", out["corrections_after_settle"]),
            ("\"Next round\" taps", out["next_round_pressed"]), ("taps refused", out["dealer_errors"])]
    rows += [(f"alert {code}", n) for code, n in sorted(out["alerts"].items())]
    rows += [("frames", out["frames"]), *timing_rows,
             ("frames per second processed", out["timing"]["frames_per_s"]), ("wall seconds", out["timing"]["wall_s"])]
    s = out["settings"]
    print(heading or f"{s['rounds']} rounds, {s['seats']} seats + banker, {s['fps']:g} fps, seed {s['seed']}, "
                     f"rules {s['rules']}, tracker rules {s['tracker_rules']}")
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"  {name:<{width}}  {value}")
    for line in out["problems"][:40]:
        print(f"  - {line}")
    if len(out["problems"]) > 40:
        print(f"  ... and {len(out['problems']) - 40} more (--json has them all)")


_rounds = _whole_from(1, 100_000, "a number of rounds")
_seed = _whole_from(0, 2**32 - 1, "a seed")
_seats = _whole_from(1, 7, "a number of player seats")      # the 4 x 2 grid of kiosk_testing.zone
_fps = _number_from(1.0, 120.0, "a camera rate", "15")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=_rounds, default=100)
    parser.add_argument("--fps", type=_fps, default=15.0, help="the camera's frame rate (stream time)")
    parser.add_argument("--seed", type=_seed, default=11)
    parser.add_argument("--seats", type=_seats, default=5, help="player seats beside the banker (1 to 7)")
    parser.add_argument("--rules", default="cambodia", help="the rule preset (niuniu rules)")
    parser.add_argument("--clean", action="store_true", help="no camera fault at all (every card read right)")
    parser.add_argument("--noise", action="append", default=[], metavar="NAME=VALUE",
                        help="change one fault of the noise model (see the module docstring), e.g. misread_per_s=0.2")
    parser.add_argument("--json", metavar="OUT", help="also write the figures to this file")
    args = parser.parse_args(argv)
    if args.json and not Path(args.json).resolve().parent.is_dir():
        parser.error(f"--json {args.json}: its folder does not exist; give a path in an existing folder")
    noise = Noise.clean() if args.clean else Noise()
    try:
        for setting in args.noise:
            noise = noise.changed(setting)
    except ValueError as exc:
        parser.error(str(exc))
    args.noise_model = noise
    logging.basicConfig(level=logging.ERROR)
    try:
        figures, elapsed = play(args.rounds, args.fps, args.seed, args.seats, noise, rules=args.rules)
    except NiuniuError as exc:
        print(f"bench_dealing: {exc}", file=sys.stderr)
        return 2
    out = report(figures, elapsed, args)
    print_table(out)
    return write_json(out, args.json, "bench_dealing")


def write_json(out: dict, path: str | None, prog: str) -> int:
    """``--json OUT``: the figures written (0), or one line saying why they could not be (2)."""
    if path:
        try:
            Path(path).write_text(json.dumps(out, indent=1, default=str) + "\n", encoding="utf-8")
        except OSError as exc:
            print(f"{prog}: cannot write --json {path}: {exc.strerror}; give a writable path", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
