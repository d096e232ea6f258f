"""The scoring subcommands, called as a user would: through the root ``niuniu`` command."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kiosk.cli import main
from scoring.rules import PRESET_DIR

ROOT = Path(__file__).resolve().parents[2]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv):
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0 and err == ""
    return json.loads(out)


def test_score_text_shows_the_bull(capsys):
    code, out, _ = run(capsys, "score", "4S", "6H", "QD", "9C", "9H")
    assert code == 0
    assert "Bull 8" in out and "QD 6H 4S" in out and "9H 9C" in out and "x2" in out


def test_score_json(capsys):
    data = run_json(capsys, "score", "--rules", "classic", "2s", "2h", "2d", "2c", "K♠")
    assert data == {"rules": "classic", "category": "bomb", "label": "Bomb", "points": 0, "bull": [],
                    "rest": ["KS", "2S", "2H", "2C", "2D"], "top": "KS", "multiplier": 6}
    one_string = run_json(capsys, "score", "--rules", "classic", "2s 2h 2d 2c K♠")
    assert one_string == data


@pytest.mark.parametrize(
    "argv, token",
    [
        (["score", "AS", "2S", "3S", "4S"], "got 4"),
        (["score", "AS", "2S", "3S", "4S", "5S", "6S"], "got 6"),
        (["score", "AS", "2S", "3S", "4S", "1S"], "'1S'"),
        (["score", "AS", "2S", "3S", "4S", "joker"], "'joker'"),
        (["score", "AS", "2S", "3S", "4S", "as"], "AS appears twice"),
        (["score", "--rules", "vegas", "AS", "2S", "3S", "4S", "5S"], "'vegas'"),
        (["stats", "--rules", "missing.toml"], "missing.toml"),
        (["settle", "--banker", "AS 2S 3S 4S", "--seat", "1:KS KH KD KC QS:10"], "banker: a hand needs exactly 5"),
        (["settle", "--banker", "AS 2S 3S 4S 5S", "--seat", "1:KS KH KD KC QS"], "'1:KS KH KD KC QS'"),
        (["settle", "--banker", "AS 2S 3S 4S 5S", "--seat", "1:KS KH KD KC QS:ten"], "'ten'"),
        (["settle", "--banker", "AS 2S 3S 4S 5S", "--seat", "1:KS KH KD KC QS:1" + "0" * 30], "too large"),
        # read by Decimal() as 100, 1000, 100: a typo must not become another stake silently
        (["settle", "--banker", "AS 2S 3S 4S 5S", "--seat", "1:KS KH KD KC QS:10_0"], "not a number"),
        (["settle", "--banker", "AS 2S 3S 4S 5S", "--seat", "1:KS KH KD KC QS:1e3"], "not a number"),
        (["settle", "--banker", "AS 2S 3S 4S 5S", "--seat", "1:KS KH KD KC QS:\u0661\u0660\u0660"], "not a number"),
        (["settle", "--rules", "grab-banker", "--banker", "AS 2S 3S 4S 5S", "--seat", "1:KS KH KD KC QS:10::\u0663"],
         "not a whole number"),
        (["settle", "--banker", "AS 2S 3S 4S 5S", "--seat", "banker:KS KH KD KC QS:10"], "the banker's name"),
        (["settle", "--banker", "AS 2S 3S 4S 5S", "--seat", "1:KS KH KD KC AS:10"], "card AS is in both"),
        (["settle", "--banker", "AS 2S 3S 4S 5S", "--seat", "1:KS KH KD KC QS:10:triple"], "'triple'"),
        (["settle", "--banker", "AS 2S 3S 4S 5S", "--seat", "1:KS KH KD KC QS:10",
          "--seat", "1:JS JH JD JC 9S:10"], "seat 1 is given twice"),
        (["rules", "show", "vegas"], "'vegas'"),
    ],
)
def test_errors_are_one_line_on_stderr_with_exit_2(capsys, argv, token):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and token in err and "Traceback" not in err


def test_settle_cambodia_worked_examples(capsys):
    data = run_json(capsys, "settle", "--rules", "cambodia", "--banker", "5S 9H 2D 4C QS",
                    "--seat", "1:7S 8C 5H KD 10C:100:double", "--seat", "2:7D 8D 5D KH 10D:100:equal")
    nets = {line["seat"]: line["net"] for line in data["lines"]}
    assert nets == {"1": "285.00", "2": "95.00"} and data["total_commission"] == "20.00"
    data = run_json(capsys, "settle", "--rules", "cambodia", "--banker", "4S 6H QD 9C 9H",
                    "--seat", "1:AS 2C 3C 4D JS:100:double", "--seat", "2:AD 2D 3D 4H JD:100:equal")
    assert [line["net"] for line in data["lines"]] == ["-200.00", "-100.00"]
    assert data["banker_net"] == "300.00"


def test_settle_grab_banker_text(capsys):
    code, out, _ = run(capsys, "settle", "--rules", "haodan", "--bid", "3", "--banker", "4S 6H QD 9C 9H",
                       "--seat", "1:7S 8C 5H KD 10C:10:standard:2", "--seat", "2:AS 2C 3C 4D JS:10::5",
                       "--escape", "1")
    assert code == 0
    assert "x3 bid" in out and "lose (left)" in out and "-180" in out and "-450" in out


def test_settle_text_keeps_a_large_stake_apart_from_the_next_column(capsys):
    """A 17-digit stake used to run into its outcome ("doublewin") and its sums into each other."""
    code, out, _ = run(capsys, "settle", "--rules", "cambodia", "--banker", "AS 2S 3S 4S 5S",
                       "--seat", "1:KS KH KD KC QS:99999999999999999.99", "--seat", "2:4D 6H QD 9C 9H:10")
    assert code == 0
    seat_1 = next(line for line in out.splitlines() if line.strip().startswith("1 "))
    assert seat_1.split() == ["1", "Five", "Face", "99999999999999999.99", "double", "win", "5",
                              "499999999999999999.95", "25000000000000000.00", "474999999999999999.95"]


def test_stats_json_contract(capsys):
    data = run_json(capsys, "stats", "--rules", "cambodia")
    assert set(data) == {"rules", "total", "counts", "seconds"}
    assert data["total"] == 2598960 == sum(data["counts"].values())
    assert data["counts"]["five_face"] == 792


def test_odds_json_contract(capsys):
    data = run_json(capsys, "odds", "--rules", "cambodia")
    assert data["player_win"] == data["banker_win"] == 0.5 and data["push"] == 0
    assert data["house_edge"]["equal"] == 2.5 and 4 < data["house_edge"]["double"] < 4.1
    assert abs(sum(data["categories"].values()) - 1) < 1e-12
    code, out, _ = run(capsys, "odds", "--rules", "classic")
    assert code == 0 and "house edge 0.0000%" in out


def test_rules_list_and_show(capsys):
    code, out, _ = run(capsys, "rules")
    assert code == 0 and all(name in out for name in ("cambodia", "ultimate", "classic", "haodan", "grab-banker"))
    assert [p["name"] for p in run_json(capsys, "rules")][0] == "cambodia"
    code, out, _ = run(capsys, "rules", "show", "haodan")
    assert code == 0 and "Five Face" in out and "x25" in out and "escape" in out
    data = run_json(capsys, "rules", "show", str(PRESET_DIR / "grab-banker.toml"))
    assert data["name"] == "grab-banker" and data["five_small_limit"] == 9


def test_installed_command_runs_as_a_module():
    done = subprocess.run(
        [sys.executable, "-m", "kiosk.cli", "score", "--json", "--rules", "classic", "A♠", "3H", "2S", "AH", "2D"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["category"] == "five_small"
    bad = subprocess.run([sys.executable, "-m", "kiosk.cli", "score", "AS", "2S", "3S", "4S", "XX"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stdout == "" and bad.stderr.strip().count("\n") == 0 and "'XX'" in bad.stderr


@pytest.mark.parametrize(
    "argv, usage, hint",
    [
        (["score", "AS", "2S", "3S", "4S", "5S", "--preset", "classic"], "usage: niuniu score ", "--rules"),
        (["odds", "--jsn"], "usage: niuniu odds ", "--json"),
        (["rules", "show", "classic", "--verbose"], "usage: niuniu rules show ", None),
    ],
)
def test_an_unknown_option_is_refused_with_the_commands_own_usage(capsys, argv, usage, hint):
    """Not the root's "niuniu [-h] COMMAND ...": the user sees the options the command has,
    and the one meant where a near miss names it."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    out, err = capsys.readouterr()
    assert exit_.value.code == 2 and out == ""
    assert err.startswith(usage) and f"unrecognized arguments: {' '.join(a for a in argv if a.startswith('--'))}" in err
    assert (f"did you mean {hint}?" in err) if hint else "did you mean" not in err


def test_settle_columns_stay_in_line_with_a_seat_named_in_chinese(capsys):
    """Double-width characters once pushed every later column out of line, so the net
    a supervisor read under "net" was not the seat's."""
    code, out, _ = run(capsys, "settle", "--banker", "5S 8H 2D 4C 9S", "--seat", "座位一:7S 8C 5H KD 10C:100",
                       "--seat", "2:JS 3C 7D 6S 4H:100")
    rows = [line for line in out.splitlines() if "Niu Niu" in line]
    assert code == 0 and len(rows) == 2
    from scoring.cli import _width
    assert _width(rows[0]) == _width(rows[1]) and rows[0].endswith("285.00") and rows[1].endswith("285.00")
