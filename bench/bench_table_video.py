"""A busy table dealt on camera and read by the shipped card models: what do the dealing rules cost in money and taps
when the cards are read from pictures, not from a noise model?

``bench/bench_dealing.py`` measures the dealing rules (``vision.tracker``, ``vision.round``,
``TRACKER_VERSION``) against a seeded noise model standing in for the card model: misreads,
glare, covered indices, the dealer's hand, sweeps, each at a rate someone chose.  The rules were
tuned on those rates only.  A rule tuned on invented faults can fail on the faults the real
model makes (a misread that lasts ten frames, not three; a card read twice, once whole and once
by its index strip; the arm over a hand for a whole card's deal), so this plays the same table
the other way round: every frame DRAWN by the bundled demo's renderer (``vision.synth.demo``:
the printed felt, a fixed tilted camera, cards sliding in under the dealer's hand and arm, rows
overlapped so only corner indices show, the table swept seat by seat), in held-out deck designs
the model never trained on, a different one each round, JPEG-compressed as ``niuniu demo``'s
frames are, and READ by the kiosk's own reader (``kiosk.commands._detector``: the card models
in ``models/``, with the mirror judge) through the kiosk's own frame path
(``TablePipeline.step``: the seat crops, the motion gate, the tracker, the round machine, the
recorder), with the table service, audit log and bets wired by ``build_kiosk`` as production
wires them.

``--rounds`` rounds at a table of the banker and ``--seats`` players (1 to 5: the demo table's
seats), five cards each from one deck shuffled per round (so the true hands are known), dealt at
a busy dealer's pace (``bench_dealing.Pace``: a card every 0.5-0.9 s, sliding in for 0.15-0.3 s
under the hand) and seen at ``--fps`` frames a second of stream time, as fast as the machine
reads them.  The simulated dealer is ``bench_dealing.Dealer``: bets before the deal, Settle
after the last card, and when Settle is refused or a card is flagged ``?`` or an alert names a
seat, looks at the table and taps what the screen asks (Card is right, Correct card: remove,
add, replace; a supervisor's correction after Settle), voiding a round still refused after six
looks.  Unlike the noise model, nothing here is dealt early, dragged or covered with chips: what
goes wrong is what the model and the rules make of a plain, well-lit deal.

Printed (``--json OUT`` writes the same): rounds settled and voided, WRONG SETTLEMENTS (a line's
net or commission, or the banker's net, differing from ``scoring.settle`` on the true cards, in
Decimal money), rounds settled on other cards than dealt, Settle refusals, the dealer's taps,
alerts by type, the rounds the round machine started, frames read, and milliseconds per frame
read (``TablePipeline.step``) and drawn.  Each round that went wrong is named with what was
settled against what was dealt; ``--keep DIR`` keeps the kiosk's data folder (audit log, the
rounds' recordings with every frame's detections) to replay them with ``niuniu replay``.  The
figures are the same for the same seed, model and machine; the timings are not.

    python bench/bench_table_video.py --rounds 20 --fps 10 --seed 11
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
import time
from argparse import Namespace
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_dealing import (Dealer, Figures, Pace, _fps, _rounds, _seed, bench_kiosk, figures_out,  # noqa: E402
                           print_table, write_json)
from kiosk.commands import _detector  # noqa: E402
from scoring.errors import NiuniuError  # noqa: E402
from vision.model_cli import _whole_from  # noqa: E402
from vision.sources import Frame, oriented  # noqa: E402
from vision.synth.decks import load_deck  # noqa: E402
from vision.synth.demo import (DESIGN_W, JPEG_QUALITY, PLAYERS, DemoRenderer, DemoTiming, FrameSpec,  # noqa: E402
                               RoundPlan, choose_decks, demo_table_config, frame_size, plan_frames, plan_round)
from vision.table import table_config_from_dict  # noqa: E402

PROG = "bench_table_video"
EPOCH = 1_796_000_000.0          # 2026-11-30, as bench_dealing's table: audit records carry dates
EMPTY = FrameSpec(None)
JPEG = [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY, cv2.IMWRITE_JPEG_PROGRESSIVE, 1]   # as the demo's frames


def seated_plan(plan: RoundPlan, seats: tuple[str, ...]) -> RoundPlan:
    """The demo's round (thirty cards round six seats) dealt only to ``seats``: each keeps its own
    five cards, places and chips, so a smaller table is the same table with empty seats."""
    return replace(plan, deal=tuple(p for p in plan.deal if p.seat in seats),
                   chips=tuple(c for c in plan.chips if c[0] in seats))


def round_scenes(specs: list[FrameSpec], r: int, seats: tuple[str, ...]):
    """Round ``r``'s pictures from the demo's film (one frame per step, ``plan_frames`` with three
    frames a card and two a swept seat): per card dealt (arriving under the hand, the hand
    withdrawing, the card in the clear), the complete table, and per seat swept (the hand over its
    cards, the seat empty), a seat with no cards not swept.  The bench holds each picture for as
    long as the dealer's pace says."""
    mine = [s for s in specs if s.round_index == r]
    deal = [s for s in mine if s.phase == "deal"]
    sweep = [s for s in mine if s.phase == "sweep"]
    cards = [tuple(deal[i:i + 3]) for i in range(0, len(deal), 3)]
    complete = next(s for s in mine if s.phase == "complete")
    swept = [(over, away) for over, away in zip(sweep[::2], sweep[1::2]) if set(away.swept - over.swept) & set(seats)]
    return cards, complete, swept


class Camera:
    """The table's camera: each picture drawn by the demo's renderer, compressed as the demo's
    frames are, and handed to the kiosk's pipeline as its frame reader hands a frame."""

    def __init__(self, renderer: DemoRenderer, pipeline, config, fps: float) -> None:
        self.renderer, self.pipeline, self.config, self.fps = renderer, pipeline, config, fps
        self.frame_no = 0
        self.read_s = self.draw_s = 0.0
        self.on_frame = lambda now: None

    @property
    def now(self) -> float:
        return self.frame_no / self.fps

    def frames(self, seconds: float) -> int:
        return max(1, round(seconds * self.fps))

    def show(self, spec: FrameSpec, frames: int) -> None:
        for _ in range(frames):
            self.frame(spec)

    def frame(self, spec: FrameSpec) -> None:
        started = time.perf_counter()
        picture = self.renderer.render(spec, self.frame_no)
        ok, jpeg = cv2.imencode(".jpg", picture, JPEG)
        if not ok:
            raise NiuniuError(f"frame {self.frame_no} could not be JPEG-encoded")
        picture = cv2.imdecode(jpeg, cv2.IMREAD_COLOR)
        cam = self.config.camera
        frame = Frame(oriented(picture, cam.rotate, cam.mirror), EPOCH + self.now, self.frame_no, self.now)
        drawn = time.perf_counter()
        self.pipeline.step(frame)
        self.read_s += time.perf_counter() - drawn
        self.draw_s += drawn - started
        self.frame_no += 1
        self.on_frame(self.now)


def table_plans(rounds: int, seed: int, seats: tuple[str, ...], width: int, fps: float):
    """The table (the demo's zones for ``seats``, its camera at ``fps``: the rules count some
    waits in frames of it), each round's plan in its held-out deck (as ``niuniu demo`` chooses and
    deals them for the seed), and the renderer drawing them."""
    size = frame_size(width)
    demo_config = demo_table_config(DemoTiming(fps=fps), size)
    data = demo_config.model_dump(mode="json", exclude_none=True)
    data["seats"] = [s for s in data["seats"] if s["name"] in seats]
    config = table_config_from_dict(data, "the bench's table")
    chosen = choose_decks(seed, rounds, None)
    decks = {name: load_deck(name) for name in dict.fromkeys(chosen)}
    plans = [seated_plan(plan_round(r + 1, decks[name], np.random.default_rng([seed, 5, r])), seats)
             for r, name in enumerate(chosen)]
    return config, plans, DemoRenderer(plans, decks, width, seed)


def play(detector, rounds: int = 20, fps: float = 10.0, seed: int = 11, seats: int = 5, width: int = DESIGN_W,
         pace: Pace | None = None, data_dir: Path | None = None) -> tuple[Figures, dict]:
    """Deal and read ``rounds`` rounds; the figures, and the settings and timings that made them."""
    pace = Pace() if pace is None else pace
    rng = random.Random(seed)
    players = list(PLAYERS[:seats])
    used = ("banker", *players)
    config, plans, renderer = table_plans(rounds, seed, used, width, fps)
    specs = plan_frames(plans, DemoTiming(fps=fps, frames_per_card=3, sweep_frames=2))
    figures = Figures(rounds=rounds)
    started = time.perf_counter()
    with bench_kiosk(config, detector, figures, data_dir) as (service, pipeline):
        camera = Camera(renderer, pipeline, config, fps)
        service.clock = lambda: EPOCH + camera.now          # the dealer's taps on the frames' clock
        dealer = Dealer(service, service.preset, figures, pace, rng, players)
        camera.on_frame = dealer.tick
        try:
            dealer.place_bets()
            camera.show(EMPTY, camera.frames(rng.uniform(*pace.gap_s)))
            for r, plan in enumerate(plans):
                deal_and_sweep(camera, dealer, round_scenes(specs, r, used), plan, pace, rng)
        finally:
            figures.frames = camera.frame_no
    elapsed = time.perf_counter() - started
    frames = max(figures.frames, 1)
    return figures, {"wall_s": elapsed, "read_ms": 1000 * camera.read_s / frames,
                     "draw_ms": 1000 * camera.draw_s / frames,
                     "config": config, "decks": [p.deck for p in plans]}


def deal_and_sweep(camera: Camera, dealer: Dealer, scenes, plan: RoundPlan, pace: Pace, rng: random.Random) -> None:
    """One round at the dealer's pace: dealt card by card, settled (and answered) with the table
    complete, paid, swept seat by seat, then the empty table until the next deal."""
    cards, complete, swept = scenes
    for arriving, withdrawing, placed in cards:
        frames = max(3, camera.frames(rng.uniform(*pace.card_s)))
        under_hand = min(frames - 2, camera.frames(rng.uniform(*pace.slide_s)))
        camera.show(arriving, under_hand)
        camera.show(withdrawing, 1)
        camera.show(placed, frames - under_hand - 1)
    dealer.dealt(plan.number, {seat: cards for seat, cards in plan.seats.items() if cards}, camera.now)
    while dealer.phase == "settling":
        camera.frame(complete)
    camera.show(complete, camera.frames(rng.uniform(*pace.payout_s)))
    for over, away in swept:
        frames = max(2, camera.frames(rng.uniform(*pace.sweep_seat_s)))
        camera.show(over, frames - 1)
        camera.show(away, 1)
    camera.show(EMPTY, camera.frames(rng.uniform(*pace.gap_s)))


# ------------------------------------------------------------------ the command


_seats = _whole_from(1, len(PLAYERS), "a number of player seats")      # the demo table's arc
_width = _whole_from(320, 3840, "a frame width", " of pixels")


def kept_folder(text: str) -> Path:
    """``--keep DIR``: a new or empty folder, so the kept audit log holds this run's rounds only."""
    path = Path(text)
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise argparse.ArgumentTypeError(f"{text!r} is not a new or empty folder: the kept audit log and "
                                         "recordings must be this run's only; give a new folder")
    if not path.exists() and not path.resolve().parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r}: its parent folder does not exist; give a folder in one that does")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=_rounds, default=20)
    parser.add_argument("--fps", type=_fps, default=10.0, help="the camera's frame rate (stream time)")
    parser.add_argument("--seed", type=_seed, default=11)
    parser.add_argument("--seats", type=_seats, default=5, help="player seats beside the banker (1 to 5)")
    parser.add_argument("--width", type=_width, default=DESIGN_W, help="frame width in pixels (the height is 9/16)")
    parser.add_argument("--model", help="card detector model file (default: models/, as niuniu kiosk)")
    parser.add_argument("--no-tta", action="store_true", help="read without test-time augmentation (niuniu kiosk "
                                                              "--no-tta)")
    parser.add_argument("--keep", type=kept_folder, metavar="DIR",
                        help="keep the kiosk's data folder (audit log, round recordings) in this new folder")
    parser.add_argument("--json", metavar="OUT", help="also write the figures to this file")
    args = parser.parse_args(argv)
    if args.json and not Path(args.json).resolve().parent.is_dir():
        parser.error(f"--json {args.json}: its folder does not exist; give a path in an existing folder")
    logging.basicConfig(level=logging.ERROR)
    try:
        detector = _detector(Namespace(model=args.model, model_format="pt", no_tta=args.no_tta))
        if args.keep is not None:
            args.keep.mkdir(exist_ok=True)
        figures, run = play(detector, args.rounds, args.fps, args.seed, args.seats, args.width,
                                data_dir=args.keep)
    except NiuniuError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{PROG}: {exc}; check the folders given (--keep) and free disk space", file=sys.stderr)
        return 2
    width, height = frame_size(args.width)
    model = str(getattr(detector, "name", type(detector).__name__))
    out = figures_out(figures, run["wall_s"], {
        "rounds": args.rounds, "fps": args.fps, "seed": args.seed, "seats": args.seats, "size": [width, height],
        "rules": run["config"].rules, "model": model, "tta": not args.no_tta, "decks": run["decks"]})
    out["timing"].update(read_ms_per_frame=round(run["read_ms"], 1), draw_ms_per_frame=round(run["draw_ms"], 1))
    print_table(out, f"{args.rounds} rounds, {args.seats} seats + banker, {args.fps:g} fps, seed {args.seed}, "
                     f"{width}x{height} frames, rules {run['config'].rules}, "
                     f"tracker rules {out['settings']['tracker_rules']}, model {model}",
                (("ms per frame read (detector + tracker + round)", out["timing"]["read_ms_per_frame"]),
                 ("ms per frame drawn", out["timing"]["draw_ms_per_frame"])))
    return write_json(out, args.json, PROG)


if __name__ == "__main__":
    sys.exit(main())
