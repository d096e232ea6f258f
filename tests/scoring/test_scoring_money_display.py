"""A money unit written in exponent form (``quantum = "1E+2"``) is printed plain in messages
and ``niuniu rules show`` (QA pass 48, L3); the figures a person reads, to the unit's places."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from kiosk.cli import main
from scoring.rules import PRESET_DIR, load_preset
from scoring.settle import Bet, SettlementError, settle_round


def hundreds(folder: Path) -> Path:
    path = folder / "hundreds.toml"
    path.write_text((PRESET_DIR / "cambodia.toml").read_text().replace('name = "cambodia"', 'name = "hundreds"')
                    .replace('quantum = "0.01"', 'quantum = "1E+2"'))
    return path


def test_a_stake_finer_than_an_exponent_unit_names_the_unit_plainly(tmp_path):
    preset = load_preset(hundreds(tmp_path))
    with pytest.raises(SettlementError) as refused:
        settle_round(preset, "4S 6H QD 9C 9H", {"1": ("KS QS JS 10S 10H", Bet("1", Decimal("150"), "equal"))})
    assert "finer than the table's money unit 100" in str(refused.value) and "E+" not in str(refused.value)


def test_rules_show_prints_an_exponent_unit_plainly(tmp_path, capsys):
    assert main(["rules", "show", str(hundreds(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert "rounded half_up to 100" in out and "1E+2" not in out


@pytest.mark.parametrize(("unit", "places"), [("0.01", 2), ("0.05", 2), ("0.001", 3), ("1", 0), ("100", 0),
                                              ("1E+2", 0), ("0.10", 2)])
def test_a_units_places(unit, places):
    from scoring.settle import unit_places

    assert unit_places(Decimal(unit)) == places


def test_money_shown_writes_to_the_unit_and_never_rounds():
    from scoring.settle import money_shown

    assert money_shown("3518516.00", Decimal("1")) == "3518516"
    assert money_shown("3518516.00", Decimal("1"), grouped=True) == "3,518,516"
    assert money_shown("1.03", Decimal("0.001")) == "1.030"
    assert money_shown("0.978", Decimal("0.01")) == "0.978"          # finer than the unit: every place kept
    assert money_shown(Decimal("3.7E+3"), Decimal("1E+2")) == "3700"
    assert money_shown("-0.00", Decimal("1")) == "0"
