"""bench/bench_table_video.py, the dealing bench that reads rendered frames with the shipped card models.

Its figures are only worth reading if the film it plays is a real deal (each seat's five cards,
no phantom seat dealt or swept), if a perfect card reader in the models' place settles every
round right without a tap (so every tap and refusal it counts comes from the model or the
rules, not from the bench), and if a wrong option or a missing model says so in one line."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_table_video.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_table_video", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_table_video"] = module
    spec.loader.exec_module(module)
    return module


class PerfectReader:
    """Reads each seat crop as a card reader that never errs would: the renderer's own labels of
    the picture being read (``vision.synth.demo.perfect_detections``), for the crops asked."""

    name = "perfect reader"

    def __init__(self) -> None:
        self.labels = []

    def detect(self, image, regions=None):
        from vision.motion import centre_in
        from vision.synth.demo import perfect_detections

        return [d for d in perfect_detections(self.labels) if any(centre_in(d.box, r) for r in regions)]


@pytest.fixture
def perfect(bench, monkeypatch):
    reader = PerfectReader()
    render = bench.DemoRenderer.render

    def drawn(renderer, spec, frame_no):
        reader.labels = renderer.labels(spec)
        return render(renderer, spec, frame_no)

    monkeypatch.setattr(bench.DemoRenderer, "render", drawn)
    return reader


def test_a_small_table_is_dealt_five_cards_a_seat_and_only_its_seats_are_swept(bench):
    seats = ("banker", "1", "2")
    config, plans, _ = bench.table_plans(2, 4, seats, 640, 10.0)
    assert [s.name for s in config.seats] == list(seats)
    assert config.camera.fps == 10.0          # the rules count left-overs' waits in the camera's frames
    specs = bench.plan_frames(plans, bench.DemoTiming(fps=10, frames_per_card=3, sweep_frames=2))
    for r, plan in enumerate(plans):
        dealt = {seat: cards for seat, cards in plan.seats.items() if cards}
        assert set(dealt) == set(seats) and all(len(set(cards)) == 5 for cards in dealt.values())
        cards, complete, swept = bench.round_scenes(specs, r, seats)
        assert len(cards) == 15 and complete.placed == 15
        for k, (arriving, withdrawing, placed) in enumerate(cards):
            assert (arriving.transit, arriving.placed, withdrawing.placed, placed.placed) == (k, k, k + 1, k + 1)
            assert withdrawing.pose is not None and placed.pose is None
        assert [sorted(away.swept - over.swept) for over, away in swept] == [["banker"], ["2"], ["1"]]


def test_a_perfect_reader_settles_every_round_right_without_a_tap(bench, perfect):
    # 960 pixels wide: at 640 the banker's far indices are too small for even the perfect reader's labels
    figures, run = bench.play(perfect, rounds=2, fps=6.0, seed=3, seats=1, width=960)
    assert (figures.settled, figures.voided, figures.rounds_started) == (2, 0, 2)
    assert figures.wrong_settlements == 0 and figures.settled_on_other_cards == 0
    assert figures.settle_refusals == 0 and figures.hand_actions() == 0 and figures.dealer_errors == 0
    assert figures.problems == [] and figures.alerts == {}
    assert figures.frames > 0 and len(run["decks"]) == 2


def test_the_same_seed_gives_the_same_figures(bench, perfect):
    first, _ = bench.play(perfect, rounds=1, fps=4.0, seed=5, seats=1, width=960)
    second, _ = bench.play(perfect, rounds=1, fps=4.0, seed=5, seats=1, width=960)
    assert first == second


@pytest.mark.parametrize("argv, said", [
    (["--seats", "6"], "'6' is not a number of player seats: give a whole number from 1 to 5"),
    (["--width", "100"], "'100' is not a frame width: give a whole number of pixels from 320 to 3840"),
    (["--fps", "0"], "'0' is not a camera rate: give a number from 1 to 120"),
    (["--rounds", "x"], "'x' is not a number of rounds"),
    (["--json", "/no/such/folder/out.json"], "its folder does not exist"),
])
def test_a_bad_option_is_one_line_naming_it(bench, capsys, argv, said):
    with pytest.raises(SystemExit) as stop:
        bench.main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def test_keeping_the_data_in_a_used_folder_is_refused(bench, capsys, tmp_path):
    (tmp_path / "audit.jsonl").write_text("{}\n")
    with pytest.raises(SystemExit):
        bench.main(["--keep", str(tmp_path)])
    assert "is not a new or empty folder" in capsys.readouterr().err


def test_a_missing_model_is_one_line_naming_the_file(bench, capsys, tmp_path):
    missing = tmp_path / "gone.pt"
    assert bench.main(["--model", str(missing), "--rounds", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("bench_table_video: ") and str(missing) in err and "not found" in err
    assert "\n" not in err and "Traceback" not in err


@pytest.mark.slow
def test_one_round_read_by_the_shipped_models_settles_and_says_whether_its_money_was_right(bench, tmp_path, capsys):
    out = tmp_path / "figures.json"
    assert bench.main(["--rounds", "1", "--seats", "2", "--width", "960", "--fps", "6", "--seed", "11",
                       "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    written = json.loads(out.read_text())
    assert written["settled"] == 1 and written["voided"] == 0 and written["frames"] > 0
    wrong_money = [p for p in written["problems"] if "WRONG MONEY" in p]
    assert len(wrong_money) == written["wrong_settlements"]
    other_cards = [p for p in written["problems"] if ": settled on " in p]
    assert len(other_cards) == written["settled_on_other_cards"]
    assert written["settings"]["model"].startswith("index-detector")
    assert re.search(r"rounds settled +1\n", printed)
    assert re.search(rf"\n +frames +{written['frames']}\n", printed)
    assert re.search(r"ms per frame read \(detector \+ tracker \+ round\) +\d", printed)
