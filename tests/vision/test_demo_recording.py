"""The demo recording: its generator, and the bundled ``datasets/demo/`` it made.

No card model is needed here: ``labels.jsonl.gz`` says what a reader that never errs
sees in every frame, and that reader goes through the real replay (frame folder, table
zones, tracker, round machine).  If the perfect reader's rounds equal ``truth.json``,
then the truth, the zones and the timing are right, and what is left to test is the
model (``test_the_bundled_demo_replays_to_its_truth`` in test_record_replay.py).
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections import Counter
from pathlib import Path

import cv2
import numpy as np
import pytest

from scoring.cards import CARD_CODES
from vision.corners import Detection
from vision.replay import find_config, replay
from vision.synth.decks import deck_names, load_manifest
from vision.synth.demo import (CARD_H, DEAL_ORDER, LABELS, MAX_BYTES, TRANSIT, DemoError, DemoTiming,
                               choose_decks, demo_camera, demo_table_config, plan_round, table_layout,
                               write_demo)
from vision.synth.faces import procedural_deck
from vision.synth.scene import _project
from vision.table import load_table_config, point_in_polygon

DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo"
QUICK = DemoTiming(fps=3.0, frames_per_card=2)   # fewest frames the checks allow: for byte comparisons


@pytest.fixture(scope="module")
def deck():
    """A procedural design: fast to draw, and independent of the installed Debian art."""
    return procedural_deck(100_003, height=200)


@pytest.fixture(scope="module")
def small_demo(tmp_path_factory, deck) -> Path:
    """One round at 640x360 with the bundled demo's timing."""
    out = tmp_path_factory.mktemp("demo")
    write_demo(out, seed=11, rounds=1, width=640, decks=[deck])
    return out


class PerfectReader:
    """Stands in for the card model: reports each frame's labelled cards, in frame order.

    It knows the frame only by counting calls, so it is replayed with the motion gate off
    (``every_frame``): a gated pipeline skips the detector on unchanged frames.
    """

    name = "perfect-reader"

    def __init__(self, folder: Path) -> None:
        with gzip.open(folder / LABELS, "rt", encoding="utf-8") as fh:
            self.frames = [json.loads(line) for line in fh]
        self.calls = 0

    def detect(self, image, regions=None):
        line = self.frames[self.calls]
        assert line["frame_no"] == self.calls
        self.calls += 1
        return [Detection.from_json(d) for d in line["detections"]]


def every_frame(folder: Path):
    """The folder's table read with the motion gate off: every frame goes to the reader."""
    return find_config(folder).with_thresholds(motion_gate=False)


def _digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_same_seed_same_bytes_other_seed_other_deal(tmp_path, deck):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for out, seed in ((a, 3), (b, 3), (c, 4)):
        write_demo(out, seed=seed, rounds=1, width=320, timing=QUICK, decks=[deck], labels=False)
    assert _digest(a) == _digest(b)
    assert json.loads((a / "truth.json").read_text()) != json.loads((c / "truth.json").read_text())
    assert (a / "frames/000040.jpg").read_bytes() != (c / "frames/000040.jpg").read_bytes()


def test_truth_is_thirty_distinct_cards_in_rows_of_five(small_demo):
    truth = json.loads((small_demo / "truth.json").read_text())
    assert [r["round"] for r in truth] == [1]
    seats = truth[0]["seats"]
    assert set(seats) == set(DEAL_ORDER) and all(len(cards) == 5 for cards in seats.values())
    dealt = [c for cards in seats.values() for c in cards]
    assert len(set(dealt)) == 30 and set(dealt) <= set(CARD_CODES)
    assert set(truth[0]["results"]) == set(DEAL_ORDER)  # every hand scored, as replay prints it


def test_a_perfect_reader_replays_the_demo_to_its_truth(small_demo):
    """Zones, timing and card order all at once: what is seen is what truth.json says."""
    reader = PerfectReader(small_demo)
    rounds = replay(small_demo, every_frame(small_demo), detector=reader)
    truth = json.loads((small_demo / "truth.json").read_text())
    assert reader.calls == len(list((small_demo / "frames").glob("*.jpg")))
    assert [r["seats"] for r in rounds] == [t["seats"] for t in truth]
    # the round was complete and then swept (nobody settles a replay): no duplicates, moves or sixth cards
    assert rounds[0]["state"] == "complete"
    assert {a["code"] for a in rounds[0]["alerts"]} == {"card_removed_before_settlement"}


def test_cards_appear_one_at_a_time_and_the_hand_covers_some(small_demo):
    with gzip.open(small_demo / LABELS, "rt", encoding="utf-8") as fh:
        frames = [{d["card"] for d in json.loads(line)["detections"]} for line in fh]
    seen: set[str] = set()
    hidden_again = 0
    for before, now in zip(frames, frames[1:]):
        assert len(now - seen) <= 1, "two cards appeared in one frame"
        seen |= now
        hidden_again += len((before & seen) - now)
    assert len(seen) == 30
    assert hidden_again > 0, "the dealer's hand never covered a dealt card"


def test_zones_hold_every_card_centre_at_rest_and_under_the_hand(deck):
    config = demo_table_config(DemoTiming(), (1280, 720))
    zones = {s.name: s.polygon for s in config.seats}
    layout = table_layout()
    cam = demo_camera()
    for seed in range(5):
        plan = plan_round(1, deck, np.random.default_rng(seed))
        for card in plan.deal:
            transit = np.asarray(card.centre) + layout[card.seat].up * TRANSIT * CARD_H
            for where in (np.asarray(card.centre), transit):
                x, y = _project(cam, where[None, :])[0]
                point = (x / 1280, y / 720)
                inside = [name for name, polygon in zones.items() if point_in_polygon(point, polygon)]
                assert inside == [card.seat], f"{card.code} of seat {card.seat} lies in zones {inside}"


def test_only_held_out_designs_one_per_round(tmp_path):
    holdout = set(deck_names("holdout"))
    chosen = choose_decks(0, 3, None)
    assert len(set(chosen)) == 3 and set(chosen) <= holdout
    families = {load_manifest().deck[name].family for name in chosen}
    assert len(families) == 3, "three rounds should show three different design families"
    train = next(n for n, e in load_manifest().deck.items() if e.split == "train")
    with pytest.raises(DemoError, match="holdout"):
        write_demo(tmp_path, rounds=1, decks=[train])


def test_timing_that_would_never_clear_a_round_is_refused(tmp_path, deck):
    with pytest.raises(DemoError, match="remove_after_s"):
        write_demo(tmp_path, rounds=1, timing=DemoTiming(empty_s=0.5, bets_s=0.5), decks=[deck])
    with pytest.raises(DemoError, match="frames_per_card"):
        write_demo(tmp_path, rounds=1, timing=DemoTiming(frames_per_card=1), decks=[deck])


# ---------------------------------------------------------------- the bundled demo

bundled = pytest.mark.skipif(not (DEMO / "truth.json").is_file(), reason="datasets/demo is not built yet")


@bundled
def test_bundled_demo_fits_its_budget_and_describes_itself():
    manifest = json.loads((DEMO / "manifest.json").read_text())
    frames = sorted((DEMO / "frames").glob("*.jpg"))
    assert len(frames) == manifest["frames"]
    total = sum(p.stat().st_size for p in DEMO.rglob("*") if p.is_file())
    assert total <= MAX_BYTES, f"datasets/demo is {total / 1e6:.1f} MB"
    first = cv2.imread(str(frames[0]))
    assert first.shape[:2] == (720, 1280) and manifest["size"] == [1280, 720]
    config = load_table_config(DEMO / "table.yaml")
    assert config.rules == "cambodia" and config.seat_names == ("banker", "1", "2", "3", "4", "5")
    assert config.camera.fps == manifest["fps"]
    truth = json.loads((DEMO / "truth.json").read_text())
    assert len(truth) >= 3 and len(truth) == manifest["rounds"]
    for rnd in truth:
        dealt = [c for cards in rnd["seats"].values() for c in cards]
        assert Counter(len(c) for c in rnd["seats"].values()) == {5: 6} and len(set(dealt)) == 30
    decks = manifest["decks"]
    assert len(set(decks)) == len(decks) and set(decks) <= set(deck_names("holdout"))
    for (first, last), shown in zip(manifest["round_frames"], manifest["last_card_visible"]):
        assert first < shown < last


@bundled
def test_bundled_demo_replays_to_its_truth_with_a_perfect_reader():
    reader = PerfectReader(DEMO)
    rounds = replay(DEMO, every_frame(DEMO), detector=reader)
    truth = json.loads((DEMO / "truth.json").read_text())
    assert [r["seats"] for r in rounds] == [t["seats"] for t in truth]
