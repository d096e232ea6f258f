"""bench/bench_dealing.py, the busy-table dealing simulator the dealing rules are measured with.

Its figures are only worth reading if a table with no camera fault gives none (so every refusal
and tap it counts comes from the noise), if a seed gives the same figures every time (so a change
to the rules is measured, not the dice), and if the noise really reaches the round machine."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from dataclasses import asdict, replace
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_dealing.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_dealing", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_dealing"] = module          # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_a_table_with_no_camera_fault_settles_every_round_right_without_a_tap(bench):
    figures, _ = bench.play(rounds=5, fps=10.0, seed=3, seats=4, noise=bench.Noise.clean())
    assert (figures.settled, figures.voided, figures.rounds_started) == (5, 0, 5)
    assert figures.wrong_settlements == 0 and figures.settled_on_other_cards == 0
    assert figures.settle_refusals == 0 and figures.hand_actions() == 0 and figures.dealer_errors == 0
    assert figures.problems == [] and figures.alerts == {}


def test_the_same_seed_gives_the_same_figures(bench):
    first, _ = bench.play(rounds=2, fps=10.0, seed=5, seats=3)
    second, _ = bench.play(rounds=2, fps=10.0, seed=5, seats=3)
    assert asdict(first) == asdict(second)
    assert first.frames > 0 and first.settled + first.voided + first.not_on_screen == 2


def test_misreads_reach_the_round_machine_and_the_dealer_answers_them(bench):
    """Only misreads on, often: cards read as look-alikes must make the dealer look and tap."""
    noise = replace(bench.Noise.clean(), misread_per_s=1.0, misread_frames=(2, 3))
    figures, _ = bench.play(rounds=2, fps=10.0, seed=7, seats=3, noise=noise)
    assert figures.hand_actions() >= 1 and figures.settle_refusals >= 1
    assert figures.settled == 2 and figures.wrong_settlements == 0


def test_money_is_wrong_where_the_cards_settled_on_pay_other_amounts_than_the_cards_dealt(bench):
    """The check that counts wrong settlements: on the true cards nothing differs; with one of the
    player's cards read as a look-alike that turns a loss into a win, that seat and the banker do."""
    from decimal import Decimal

    from scoring.rules import load_preset
    from scoring.settle import Bet, settle_round

    preset = load_preset("cambodia")
    truth = {"banker": "KS QS JS 10S 9H".split(), "1": "2C 3C 4D 5D 8C".split()}     # Bull 9 against Bull 2
    bets = {"1": (truth["1"], Bet("1", Decimal("100"), "double"))}
    right = settle_round(preset, truth["banker"], bets)
    assert bench.money_differs(right, truth, preset) == {}
    misread = {"1": ("2C 3C 4D 5D 6C".split(), bets["1"][1])}                     # 8C read as 6C: Niu Niu
    wrong = settle_round(preset, truth["banker"], misread)
    assert set(bench.money_differs(wrong, truth, preset)) == {"1", "banker"}


def test_the_command_writes_the_figures_it_prints(bench, tmp_path, capsys):
    out = tmp_path / "figures.json"
    assert bench.main(["--rounds", "1", "--seats", "1", "--fps", "10", "--clean", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    written = json.loads(out.read_text())
    assert written["settled"] == 1 and written["wrong_settlements"] == 0
    assert re.search(r"rounds settled +1\n", printed)
    assert re.search(rf"\n +frames +{written['frames']}\n", printed)
    # which dealing rules made the figures, beside the scoring preset (review R2 L2)
    from vision.tracker import TRACKER_VERSION
    assert written["settings"]["tracker_rules"] == TRACKER_VERSION and written["settings"]["rules"] == "cambodia"


@pytest.mark.parametrize("argv, said", [(["--noise", "glint=1"], "give name=value, one of misread_per_s"),
                                        (["--noise", "misread_frames=3-1"], "low before high"),
                                        (["--fps", "0"], "'0' is not a camera rate: give a number from 1 to 120"),
                                        (["--seats", "8"], "'8' is not a number of player seats: give a whole "
                                                           "number from 1 to 7")])
def test_a_bad_option_is_one_line_naming_it(bench, capsys, argv, said):
    with pytest.raises(SystemExit) as stop:
        bench.main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err
