"""A player-banker who cannot cover: ``banker.cover`` pays winners only as far as the
banker's stack and the losers' money reach, strongest hand first or in proportion."""

import random
import re
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.cards import DECK
from scoring.compare import strength
from scoring.rules import PRESET_DIR, PresetError, list_presets, load_preset
from scoring.settle import Bet, Outcome, SettlementError, settle_round

BANKER_NO_BULL = "5S 8H 2D 4C 9S"
SEATS = {   # against a no-bull banker at bid 2: every seat wins
    "1": "7S 8C 5H KD 10C",    # niu niu: 100 x 3 x 2 = 600
    "2": "KS QS JS KH QH",     # five face: 100 x 5 x 2 = 1000
    "3": "AS 2C 3H 4D 6D",     # bull 6: 100 x 1 x 2 = 200
    "4": "AC AD 3C 9D 10D",    # bull 4: 200
}
LOSER = "6C 7C 8D 3S 4S"       # 28, no three make ten: no bull, beaten by the banker's 9S


def preset_file(tmp_path, cover, base="grab-banker", **replace):
    text = (PRESET_DIR / f"{base}.toml").read_text(encoding="utf-8")
    text = re.sub(r'^name = ".*"$', f'name = "house-{cover.replace("_", "-")}"', text, flags=re.M)
    text = text.replace("[banker]\n", f'[banker]\ncover = "{cover}"\n')
    for old, new in replace.items():
        text = text.replace(old, new)
    path = tmp_path / f"{cover}.toml"
    path.write_text(text, encoding="utf-8")
    return load_preset(path)


def settle(preset, stack, seats=SEATS, amount=100, **kw):
    bets = {seat: (cards, Bet(seat, Decimal(amount), "standard")) for seat, cards in seats.items()}
    return settle_round(preset, kw.pop("banker", BANKER_NO_BULL), bets, banker_bid=2, banker_stack=stack, **kw)


def paid(settlement):
    return {line.seat: line.gross for line in settlement.lines}


def test_strongest_first_pays_the_best_hands_in_full_until_the_stack_runs_out(tmp_path):
    s = settle(preset_file(tmp_path, "strongest_first"), "1700")
    # five face 1000, then niu niu 600 (1600), then bull 6 gets the last 100, bull 4 nothing
    assert paid(s) == {"2": Decimal("1000.00"), "1": Decimal("600.00"), "3": Decimal("100.00"), "4": Decimal("0.00")}
    assert [s.line(seat).owed for seat in "1234"] == [None, None, Decimal("200.00"), Decimal("200.00")]
    assert s.line("3").short == Decimal("100.00") and s.line("4").outcome is Outcome.WIN
    assert s.banker_net == Decimal("-1700.00")      # the banker loses the stack, not a cent more
    assert s.to_json()["banker_stack"] == "1700.00" and s.line("3").to_json()["owed"] == "200.00"


def test_pro_rata_gives_every_winner_the_same_share_and_the_banker_keeps_no_remainder(tmp_path):
    preset = preset_file(tmp_path, "pro_rata")
    s = settle(preset, "1000.01")
    # owed 600 + 1000 + 200 + 200 = 2000; the stack covers 1000.01 of it: each gets half, and the
    # cent rounding leaves over goes to the largest remainder (seat 2's), not back to the banker
    assert paid(s) == {"1": Decimal("300.00"), "2": Decimal("500.01"), "3": Decimal("100.00"), "4": Decimal("100.00")}
    assert s.banker_net == Decimal("-1000.01")
    # the fee is on what was paid
    assert all(line.commission == preset.round_commission(line.gross * Decimal("0.05")) for line in s.lines)


def test_the_losers_money_pays_winners_before_the_stack(tmp_path):
    seats = {"1": SEATS["1"], "2": LOSER}
    s = settle(preset_file(tmp_path, "strongest_first"), "0", seats=seats)
    assert s.line("2").outcome is Outcome.LOSE and s.line("2").gross == Decimal("-200.00")   # no bull x1 x bid 2
    assert s.line("1").gross == Decimal("200.00") and s.line("1").owed == Decimal("600.00")
    assert s.banker_net == 0


def test_a_stack_that_covers_everything_settles_as_without_a_limit(tmp_path):
    limited = settle(preset_file(tmp_path, "strongest_first"), "2000")
    unlimited = settle(load_preset("grab-banker"), None)
    assert [line.to_json() for line in limited.lines] == [line.to_json() for line in unlimited.lines]
    assert limited.banker_net == unlimited.banker_net == Decimal("-2000.00")
    assert "banker_stack" not in unlimited.to_json()


def test_the_books_balance_and_the_banker_never_loses_more_than_the_stack(tmp_path):
    presets = [preset_file(tmp_path, "strongest_first"), preset_file(tmp_path, "pro_rata")]

    @settings(max_examples=150, deadline=None)
    @given(seed=st.integers(0, 2**32 - 1), stack=st.integers(0, 5000), which=st.integers(0, 1),
           seats=st.integers(1, 6))
    def check(seed, stack, which, seats):
        rng = random.Random(seed)
        cards = rng.sample(DECK, 5 * (seats + 1))
        hands = {str(i + 1): cards[5 * (i + 1):5 * (i + 2)] for i in range(seats)}
        bets = {seat: (hand, Bet(seat, Decimal(rng.choice([5, 10, 25, 100])), "standard", rng.randint(1, 5)))
                for seat, hand in hands.items()}
        preset = presets[which]
        s = settle_round(preset, cards[:5], bets, banker_bid=rng.randint(1, 4), banker_stack=stack)
        keys = {line.seat: strength(line.player, preset) for line in s.lines}
        if which == 0:                                                   # strongest first: never a smaller share
            for a in s.lines:
                for b in s.lines:
                    if a.owed is not None and b.outcome is Outcome.WIN and keys[b.seat] < keys[a.seat]:
                        assert b.gross == 0, (a.seat, b.seat)
        full = settle_round("grab-banker", cards[:5], bets, banker_bid=s.banker_bid)
        assert sum(line.net for line in s.lines) + s.banker_net + s.total_commission == 0
        assert -sum(line.gross for line in s.lines) >= -stack          # the banker's loss before the fee
        if any(line.owed is not None for line in s.lines):               # short: the whole stack is paid out
            assert -sum(line.gross for line in s.lines) == -stack
        for line, whole in zip(s.lines, full.lines):
            assert 0 <= line.gross <= whole.gross or line.gross == whole.gross     # losers pay in full
            assert (line.owed is None) == (line.gross == whole.gross)
        if -sum(line.gross for line in full.lines) >= -stack:               # covered: nothing changes
            assert paid(s) == paid(full)

    check()


def test_equal_hands_share_what_is_left_under_strongest_first(tmp_path):
    # two decks: seats 1 and 2 hold the very same niu niu, and only 500 is left for both
    preset = preset_file(tmp_path, "strongest_first", **{"decks = 1": "decks = 2"})
    s = settle(preset, "500", seats={"1": SEATS["1"], "2": SEATS["1"]})
    assert paid(s) == {"1": Decimal("250.00"), "2": Decimal("250.00")}


@pytest.mark.parametrize("stack, message", [
    (None, "give the banker's stack"),
    ("-1", "below zero"),
    ("10.005", "finer than the table's money unit"),
    ("lots", "not a number"),
])
def test_a_wrong_or_missing_stack_is_refused_with_the_fix(tmp_path, stack, message):
    with pytest.raises(SettlementError, match=message):
        settle(preset_file(tmp_path, "strongest_first"), stack)


def test_a_stack_at_a_table_that_pays_in_full_is_refused():
    with pytest.raises(SettlementError, match="pays every win in full"):
        settle(load_preset("grab-banker"), "500")


def test_a_house_banked_preset_cannot_limit_its_cover(tmp_path):
    text = (PRESET_DIR / "cambodia.toml").read_text(encoding="utf-8").replace(
        'name = "cambodia"', 'name = "house-cambodia"').replace("[banker]\n", '[banker]\ncover = "pro_rata"\n')
    path = tmp_path / "house.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PresetError, match="banker.cover: the house covers every bet"):
        load_preset(path)


def test_the_cover_rule_is_part_of_the_rules_a_round_was_settled_under(tmp_path):
    limited = preset_file(tmp_path, "strongest_first")
    assert limited.rules_digest != load_preset("grab-banker").rules_digest
    assert limited.rules_digest != preset_file(tmp_path, "pro_rata").rules_digest
    # the built-in presets keep the digests their recorded rounds carry
    assert all(load_preset(name).banker_cover.value == "unlimited" for name in list_presets())
    explicit = preset_file(tmp_path, "unlimited")
    assert explicit.rules_digest == load_preset("grab-banker").rules_digest
