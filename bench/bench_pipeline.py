"""Speed and memory of the whole table pipeline (issue 4 targets).

    python3 bench/bench_pipeline.py                          # scripted detector, synthetic 1080p deal, 20 s
    python3 bench/bench_pipeline.py --source datasets/demo --model models/index-detector.pt
    python3 bench/bench_pipeline.py --source datasets/demo --model ... --duration 600   # the 10-minute RSS run
    python3 bench/bench_pipeline.py --source datasets/demo --frames 60 --duration 0 --live-rounds 0  # gate on vs off

Prints:
  * throughput: frames per second of detect + track + round machine + recording (the time
    in ``TablePipeline.step``, not the decoding of the source), every frame in order at the
    source's native resolution, looping for ``--duration`` s; target >= 5.  With the motion
    gate on and off (``--motion-gate compare``, the default): ms per frame and how many
    seat crops the detector read per frame.
  * latency from the frame where a round's last card first becomes visible to the
    ``round_complete`` event: in stream time (what k-of-n voting costs) and as a live
    camera would see it (frames paced at the source's fps through the newest-frame
    reader, so a slow detector drops frames); target <= 1 s
  * resident memory: at start, sampled through the loop, and the peak; flat means no leak.

Which detector ran is printed first: the card model (``--model``, or the default in
``models/`` if it loads) or, failing that, a *scripted* detector that returns the
synthetic scene's true cards, which measures everything except the model.
"""

from __future__ import annotations

import argparse
import itertools
import random
import resource
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scoring.cards import DECK, Card  # noqa: E402
from scoring.errors import NiuniuError  # noqa: E402
from vision.corners import Detection  # noqa: E402
from vision.detector import in_passing_thread  # noqa: E402
from vision.pipeline import TablePipeline  # noqa: E402
from vision.replay import find_config, media_source  # noqa: E402
from vision.round import EventKind, RoundState  # noqa: E402
from vision.sources import Frame, FrameSource  # noqa: E402
from vision.table import TableConfig, ZoneMap, load_table_config, to_pixels  # noqa: E402

EXAMPLE_TABLE = ROOT / "datasets" / "tables" / "example-table.yaml"


# ------------------------------------------------------------------ synthetic scene


class SyntheticDeal:
    """Rounds dealt one card at a time (about 0.7 s per card), with the dealer's hand covering
    cards now and then and an occasional misread, then a hold and a sweep.

    Frames are the table image with each visible card drawn as a white box (so the motion
    gate sees the deal) and the index stamped in the top-left pixels, so the scripted
    detector can answer for the frame it is given even after frames were dropped.
    """

    def __init__(self, config: TableConfig, size=(1920, 1080), rounds=3, fps=10.0, seed=7):
        self.config, self.size, self.fps = config, size, fps
        rng = random.Random(seed)
        zones = ZoneMap(config, *size)
        seats = list(config.seat_names)
        self.script: list[list[Detection]] = []
        self.truth: list[dict[str, list[str]]] = []
        self.base = np.full((size[1], size[0], 3), (40, 110, 30), np.uint8)  # felt green
        for _seat, polygon in zones.pixel_zones:
            cv2.polylines(self.base, [np.array(polygon, np.int32)], True, (200, 200, 200), 2)
        for _ in range(rounds):
            cards = rng.sample(DECK, 5 * len(seats))
            hands = {seat: cards[i::len(seats)] for i, seat in enumerate(seats)}
            self.truth.append({s: [c.code for c in hands[s]] for s in seats})
            boxes = {s: self._boxes(config.zone(s).polygon) for s in seats}
            placed: list[tuple[str, int]] = []
            for i in range(5):
                for seat in seats[1:] + seats[:1]:  # players first, banker last
                    placed.append((seat, i))
                    for _ in range(7):
                        covered = rng.random() < 0.2
                        frame = []
                        for s, j in placed:
                            if covered and s == seat:
                                continue  # the dealer's hand over this seat
                            card = hands[s][j]
                            if rng.random() < 0.03:
                                card = rng.choice(DECK)  # a misread frame
                            frame.append(Detection(card, round(rng.uniform(0.8, 0.99), 4), boxes[s][j]))
                        self.script.append(frame)
            self.script += [list(self.script[-1]) for _ in range(int(3 * fps))]  # results on the table
            self.script += [[] for _ in range(int(4.5 * fps))]                  # swept; next round

    def _boxes(self, polygon):
        pts = to_pixels(polygon, *self.size)
        x1, y1 = min(p[0] for p in pts), min(p[1] for p in pts)
        x2, y2 = max(p[0] for p in pts), max(p[1] for p in pts)
        w, h = 90, 130
        step = min(45.0, (x2 - x1 - w) / 5)
        cx, cy = x1 + (x2 - x1 - w - 4 * step) / 2, y1 + (y2 - y1 - h) / 2
        return [(cx + j * step, cy, cx + j * step + w, cy + h) for j in range(5)]

    def __len__(self) -> int:
        return len(self.script)

    def image(self, index: int) -> np.ndarray:
        image = self.base.copy()
        for det in self.script[index % len(self.script)]:
            x1, y1, x2, y2 = (int(v) for v in det.box)
            cv2.rectangle(image, (x1, y1), (x2, y2), (235, 235, 235), -1)
            cv2.rectangle(image, (x1, y1), (x2, y2), (60, 60, 60), 2)
        image[0, 0] = ((index >> 16) & 255, (index >> 8) & 255, index & 255)
        return image


class ScriptedDetector:
    """Returns the synthetic scene's true detections for the frame index stamped in the image,
    those whose centre is in a crop it was asked to read (as the card model would)."""

    name = "scripted (synthetic truth, no model)"

    def __init__(self, scene: SyntheticDeal) -> None:
        self.scene = scene

    def detect(self, image, regions=None):
        b0, b1, b2 = (int(v) for v in image[0, 0])
        found = self.scene.script[((b0 << 16) | (b1 << 8) | b2) % len(self.scene)]
        if regions is None:
            return found
        centres = [((d.box[0] + d.box[2]) / 2, (d.box[1] + d.box[3]) / 2) for d in found]
        return [d for d, (x, y) in zip(found, centres)
                if any(r[0] <= x <= r[2] and r[1] <= y <= r[3] for r in regions)]


# ------------------------------------------------------------------ sources


class Frames:
    """Frames of the synthetic scene or of a video / frame folder, decoded when asked for.

    A source is read in order and opened again to go back, so one decoded frame is held
    however long it is (the demo's 441 frames would be 1.2 GB decoded); the length is
    counted once at the start, since a video's frame count is not reliable before reading.
    """

    def __init__(self, scene: SyntheticDeal | None = None, open_source=None, limit: int = 3000):
        self.scene, self._open = scene, open_source
        self.fps = scene.fps if scene else 10.0
        self._frames, self._at, self._image = None, -1, None
        self._count = len(scene) if scene else 0
        if open_source is not None:
            self._count = sum(1 for _ in itertools.islice(self._reopen(), limit))
            self.fps = getattr(self._source, "fps", 10.0)
            self._reopen()  # counting consumed the reader: start again at frame 0
            if not self._count:
                raise NiuniuError(f"{self._source.description} has no frames")
        self.size = tuple(reversed(self.image(0).shape[:2]))

    def _reopen(self):
        if self._frames is not None:
            self._frames.close()
        self._source = self._open()
        self._frames, self._at = self._source.frames(), -1
        return self._frames

    def __len__(self) -> int:
        return self._count

    def image(self, index: int) -> np.ndarray:
        if self.scene:
            return self.scene.image(index)
        index %= self._count
        if index < self._at:
            self._reopen()
        while self._at < index:
            self._image, self._at = next(self._frames).image, self._at + 1
        return self._image


class PacedCamera(FrameSource):
    """A live camera made of the frames: one every 1/fps s, whether or not anyone reads it."""

    live = True
    description = "paced replay camera"

    def __init__(self, frames: Frames, count: int) -> None:
        self.frames, self.count = frames, count
        self.captured: dict[int, float] = {}
        self._next = 0
        self._t0 = None

    def open(self):
        self._t0 = time.monotonic()

    def read(self):
        if self._next >= self.count:
            return None
        image = self.frames.image(self._next)  # decoded before it is due: a camera delivers it ready
        due = self._t0 + self._next / self.frames.fps
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        self.captured[self._next] = time.monotonic()
        self._next += 1
        return image

    def timestamp(self) -> float:
        return (self._next - 1) / self.frames.fps


# ------------------------------------------------------------------ measurements


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def last_card_frames(raw: dict[int, list[Detection]], events, config: TableConfig, size) -> dict[int, int]:
    """For each round_complete frame: the frame where the last of its cards first appeared."""
    zones = ZoneMap(config, *size)
    out, lower = {}, 0
    for event in events:
        if event.kind == EventKind.round_cleared:
            lower = event.frame_no
        if event.kind != EventKind.round_complete:
            continue
        firsts = []
        for seat, codes in event.data["seats"].items():
            for code in codes:
                card = Card.parse(code)
                seen = [i for i in range(lower, event.frame_no + 1)
                        if any(d.card == card and zones.seat_of(d.box) == seat for d in raw.get(i, []))]
                if seen:
                    firsts.append(seen[0])
        if firsts:
            out[event.frame_no] = max(firsts)
    return out


def throughput(frames: Frames, config, detector, duration: float, samples: list[tuple[float, float]]):
    """Every frame in order, looping, for ``duration`` seconds, recording into a temp folder.

    The detector's answers in the first pass are kept by frame for the latency analysis;
    with the motion gate some frames have none, but a card first appears in a read.
    """
    raw: dict[int, list[Detection]] = {}
    events = []
    counts = {"regions": 0, "detect_s": 0.0, "step_s": 0.0, "frame": 0}

    class Keep:
        name = getattr(detector, "name", "detector")

        def detect(self, image, regions=None):
            started = time.perf_counter()
            found = detector.detect(image, regions)
            counts["detect_s"] += time.perf_counter() - started
            counts["regions"] += len(regions or ())
            if counts["frame"] < len(frames):
                raw[counts["frame"]] = found
            return found

    def keep_first_loop(event):  # only the first pass is analysed; keeping all would be a leak of our own
        if event.frame_no is not None and event.frame_no < len(frames):
            events.append(event)

    with tempfile.TemporaryDirectory() as data_dir:
        pipeline = TablePipeline(config, None, Keep(), data_dir=data_dir, on_event=keep_first_loop)
        start = time.perf_counter()
        n = 0
        next_sample = start
        while True:
            now = time.perf_counter()
            if now - start >= duration and n >= len(frames):
                break
            if now >= next_sample:
                samples.append((now - start, rss_mb()))
                next_sample = now + max(1.0, duration / 20)
            image, counts["frame"] = frames.image(n), n
            started = time.perf_counter()
            pipeline.step(Frame(image, n / frames.fps, n))
            counts["step_s"] += time.perf_counter() - started
            if pipeline.machine.state == RoundState.complete:
                from decimal import Decimal
                from scoring.settle import Bet
                players = [s for s in pipeline.machine.hands if s != "banker"]
                bets = {s: Bet(s, Decimal(10), config_bet_kind(pipeline)) for s in players}
                if pipeline.machine.can_settle(bets):
                    pipeline.machine.settle(bets, ts=n / frames.fps)
            n += 1
        elapsed = time.perf_counter() - start
        samples.append((elapsed, rss_mb()))
    return {"fps": n / counts["step_s"], "ms": 1000 * counts["step_s"] / n, "detect_ms": 1000 * counts["detect_s"] / n,
            "regions": counts["regions"] / n, "frames": n, "elapsed": elapsed}, raw, events


def config_bet_kind(pipeline) -> str:
    return pipeline.machine.preset.bet_kinds[0]


def live_latency(frames: Frames, config, detector, last_visible: dict[int, int], rounds: int
                 ) -> tuple[list[float], int, int]:
    """Pace the first ``rounds`` rounds as a camera would.

    Latency = complete event time - capture time of the last card."""
    ends = sorted(last_visible)
    count = min(len(frames), ends[min(rounds, len(ends)) - 1] + int(2 * frames.fps))
    camera = PacedCamera(frames, count)
    done = threading.Event()
    completes: list[tuple[int, float]] = []

    def on_event(event):
        if event.kind == EventKind.round_complete:
            completes.append((event.frame_no, time.monotonic()))

    pipeline = TablePipeline(config, camera, detector, on_event=on_event)
    pipeline.start()
    while pipeline.status()["camera"] != "finished" and not done.wait(0.2):
        pass
    status = pipeline.status()
    pipeline.stop()
    latencies = []
    by_round = sorted(last_visible.items())
    for frame_no, wall in completes:
        # the round this complete belongs to: the latest last-card frame at or before it
        candidates = [lv for _, lv in by_round if lv <= frame_no]
        target = max(candidates) if candidates else None
        if target is not None and target in camera.captured:
            latencies.append(wall - camera.captured[target])
    return latencies, status["dropped_frames"], status["frames_processed"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, help="video file or frame folder (default: synthetic 1080p deal)")
    parser.add_argument("--config", type=Path, help="table file (default: beside --source, or the example table)")
    parser.add_argument("--model", help="card model; without it the default in models/ is tried, else scripted")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of the looping throughput run")
    parser.add_argument("--live-rounds", type=int, default=1,
                        help="rounds to pace in real time for the live latency (0: skip; each takes its real length)")
    parser.add_argument("--frames", type=int, default=3000, help="most frames of --source to use")
    parser.add_argument("--no-tta", action="store_true", help="read each index once instead of at 4 rotations")
    parser.add_argument("--no-second-opinion", action="store_true",
                        help="read each index with the card classifier alone, without its second opinion")
    parser.add_argument("--motion-gate", choices=("compare", "on", "off"), default="compare",
                        help="throughput with the motion gate on, off, or both (default); the rest runs with the first")
    args = parser.parse_args(argv)

    try:
        config = load_table_config(args.config) if args.config else (
            find_config(args.source) if args.source else load_table_config(EXAMPLE_TABLE))
    except NiuniuError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2

    detector, scene, note = None, None, ""
    try:
        from vision.detector import CardDetector
        detector = CardDetector(args.model, tta=not args.no_tta,
                                second_opinion=False if args.no_second_opinion else None)
        kind = f"card model {detector.name}"
    except (NiuniuError, ImportError) as exc:
        if args.model or args.source:
            print(f"bench: the card model is needed for --source/--model: {exc}", file=sys.stderr)
            return 2
        note = f" (no model: {str(exc).split(';')[0][:120]})"
    if detector is None:
        scene = SyntheticDeal(config)
        detector = ScriptedDetector(scene)
        kind = "SCRIPTED detector on a synthetic deal - measures everything but the model" + note
        frames = Frames(scene=scene)
    else:
        if args.source:
            frames = Frames(open_source=lambda: media_source(args.source, config.camera.fps), limit=args.frames)
        else:
            scene = SyntheticDeal(config)
            frames = Frames(scene=scene)  # a blank table: the model finds nothing; timing only
            kind += " on a synthetic blank table (give --source for real cards)"

    width, height = frames.size
    print(f"detector:   {kind}")
    print(f"source:     {args.source or 'synthetic deal'}: {len(frames)} frames, {width}x{height}, "
          f"{frames.fps:g} fps; table {config.table_id} ({len(config.seats)} seats, rules {config.rules})")

    samples: list[tuple[float, float]] = []
    runs = {}
    for gate in {"compare": (True, False), "on": (True,), "off": (False,)}[args.motion_gate]:
        gated = config.with_thresholds(motion_gate=gate)
        # on a passing thread, so the live pass's pipeline thread is NCNN's only reader later
        result, raw_g, events_g = in_passing_thread(
            lambda gated=gated: throughput(frames, gated, detector, args.duration, samples))
        runs[gate] = (result, raw_g, events_g)
        print(f"throughput: motion gate {'on ' if gate else 'off'}: {result['fps']:.1f} frames/s, "
              f"{result['ms']:.1f} ms/frame (detector {result['detect_ms']:.1f}), "
              f"{result['regions']:.2f} of {len(config.seats)} seat crops read per frame, "
              f"over {result['frames']} frames   target >= 5")
    if len(runs) == 2:
        on, off = runs[True][0], runs[False][0]
        print(f"            gate on / off: {on['regions'] / off['regions']:.2f} of the crop reads, "
              f"{on['ms'] / off['ms']:.2f} of the time per frame")
    gate, (result, raw, events) = next(iter(runs.items()))
    config, elapsed = config.with_thresholds(motion_gate=gate), sum(r[0]["elapsed"] for r in runs.values())

    complete = [e for e in events if e.kind == EventKind.round_complete]
    rounds = sum(1 for e in events if e.kind == EventKind.round_start)
    print(f"rounds:     {rounds} started, {len(complete)} complete in the first pass")
    if scene is not None and isinstance(detector, ScriptedDetector):
        got = [{s: c for s, c in e.data["seats"].items()} for e in complete]
        matches = got == scene.truth[:len(got)] and len(got) == len(scene.truth)
        print(f"            hands match the synthetic truth: {matches}")
    last_visible = last_card_frames(raw, events, config, frames.size)
    stream = [(e.ts - last_visible[e.frame_no] / frames.fps) for e in complete if e.frame_no in last_visible]
    if stream:
        print(f"latency:    stream time (k-of-n voting at {frames.fps:g} fps): "
              f"mean {statistics.mean(stream):.2f} s, max {max(stream):.2f} s   target <= 1")
    if args.live_rounds > 0 and last_visible:
        live, dropped, processed = live_latency(frames, config, detector, last_visible, args.live_rounds)
        if live:
            print(f"            live (paced at {frames.fps:g} fps, newest frame only): "
                  f"mean {statistics.mean(live):.2f} s, max {max(live):.2f} s; "
                  f"{processed} frames processed, {dropped} dropped")
        else:
            print("            live: no round completed in the paced run (detector too slow for the deal?)")

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rss = [mb for _, mb in samples]
    print(f"memory:     RSS start {rss[0]:.0f} MB, after warm-up {rss[min(2, len(rss) - 1)]:.0f} MB, "
          f"end {rss[-1]:.0f} MB, max sampled {max(rss):.0f} MB, peak {peak:.0f} MB over {elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
