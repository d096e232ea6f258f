"""Settlement: the worked examples of issue 2, player-banked tables, and conservation of money."""

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.cards import DECK, CardError
from scoring.rules import PRESET_DIR, list_presets, load_preset
from scoring.settle import Bet, Outcome, SettlementError, settle_round

NIUNIU = "7S 8C 5H KD 10C"
NO_BULL = "AS 8S 4S KS 7S"
BULL_8 = "4S 6H QD 9C 9H"


def one_seat(preset, banker, player, amount, kind, **kw):
    return settle_round(preset, banker, {"1": (player, Bet("1", Decimal(amount), kind))}, **kw)


@pytest.mark.parametrize("kind, net", [("double", Decimal("285")), ("equal", Decimal("95"))])
def test_cambodia_player_niuniu_beats_banker_no_bull(kind, net):
    s = one_seat("cambodia", "5S 9H 2D 4C QS", NIUNIU, 100, kind)
    line = s.lines[0]
    assert line.banker.label == "No Bull" and line.player.label == "Niu Niu"
    assert line.outcome is Outcome.WIN and line.net == net
    assert line.commission == (Decimal(100) * line.multiplier) * Decimal("0.05")
    assert s.banker_net == -line.gross and s.total_commission == line.commission


@pytest.mark.parametrize("kind, net", [("double", Decimal("-200")), ("equal", Decimal("-100"))])
def test_cambodia_banker_bull_8_beats_player(kind, net):
    s = one_seat("cambodia", BULL_8, "AS 2C 3C 4D JS", 100, kind)
    line = s.lines[0]
    assert line.banker.label == "Bull 8" and line.outcome is Outcome.LOSE
    assert line.net == net and line.commission == 0            # house wins pay no commission
    assert s.banker_net == -net and s.total_commission == 0


def test_cambodia_double_is_priced_by_the_winning_hand():
    # Player bull 2 beats banker no bull: Double pays x1 (the player's hand), not the banker's.
    s = one_seat("cambodia", "AS 8S 4S KS 7S", "AH 9D 10H 2C 3H", 100, "double")
    assert s.lines[0].player.label == "Bull 5" and s.lines[0].multiplier == 1
    # Five face (x5) beats niu niu.
    s = one_seat("cambodia", NIUNIU, "JS JH QS QH KS", 10, "double")
    assert s.lines[0].multiplier == 5 and s.lines[0].net == Decimal("47.50")


def test_commission_is_rounded_per_the_preset():
    s = one_seat("cambodia", "5S 9H 2D 4C QS", NIUNIU, "33.33", "equal")
    assert s.lines[0].commission == Decimal("1.67")          # 1.6665, half up to the cent
    assert s.lines[0].net == Decimal("31.66")


def test_custom_rounding_down_to_whole_units(tmp_path):
    text = (PRESET_DIR / "cambodia.toml").read_text()
    text = text.replace('name = "cambodia"', 'name = "cambodia-whole"')
    text = text.replace('quantum = "0.01"', 'quantum = "1"').replace('rounding = "half_up"', 'rounding = "down"')
    path = tmp_path / "whole.toml"
    path.write_text(text)
    s = one_seat(str(path), "5S 9H 2D 4C QS", NIUNIU, 130, "double")
    assert s.lines[0].gross == 390 and s.lines[0].commission == 19   # 19.5 rounded down
    with pytest.raises(SettlementError, match="finer than the table's money unit"):
        one_seat(str(path), "5S 9H 2D 4C QS", NIUNIU, "10.50", "double")


@pytest.mark.parametrize("unit, stake, commission, net", [
    ("10", 70, "0", "70"),          # 3.5 is under half of 10: nothing, not 4
    ("10", 250, "10", "240"),       # 12.5 to 10, not 13
    ("5", 70, "5", "65"),           # 3.5 half up to 5
    ("0.05", "0.70", "0.05", "0.65"),
])
def test_commission_is_a_whole_number_of_a_money_unit_that_is_not_a_power_of_ten(tmp_path, unit, stake, commission,
                                                                                   net):
    """A table paying in chips of 5 or 10 can only pay multiples of them: the commission
    and the net are, like the stakes the same unit is enforced on."""
    path = tmp_path / "unit.toml"
    path.write_text((PRESET_DIR / "cambodia.toml").read_text().replace('name = "cambodia"', 'name = "unit"')
                    .replace('quantum = "0.01"', f'quantum = "{unit}"'))
    line = one_seat(str(path), "5S 9H 2D 4C QS", NIUNIU, stake, "equal").lines[0]
    assert (line.commission, line.net) == (Decimal(commission), Decimal(net))
    assert line.net % Decimal(unit) == 0


def test_a_settlement_too_large_to_compute_exactly_is_refused(tmp_path):
    """Multipliers up to 1000 each can carry a stake past Decimal's 28 digits, where it
    would silently lose cents; refusing is the only honest answer."""
    text = (PRESET_DIR / "haodan.toml").read_text().replace('name = "haodan"', 'name = "huge"')
    text = text.replace("five_face = 25 }", "five_face = 999 }").replace("bids = [1, 2, 3, 4]", "bids = [999]")
    text = text.replace("bet_multiples = [1, 2, 3, 4, 5]", "bet_multiples = [999]")
    path = tmp_path / "huge.toml"
    path.write_text(text)
    seats = {"1": ("JS QS KS JH QH", Bet("1", Decimal("999999999999999999.99"), "points", 999))}
    with pytest.raises(SettlementError, match="seat 1's stake 999999999999999999.99 x .* too large to settle exactly"):
        settle_round(str(path), "5S 8H 2D 4C 9S", seats, banker_bid=999)
    seats = {"1": ("JS QS KS JH QH", Bet("1", Decimal("100.01"), "points", 999))}
    line = settle_round(str(path), "5S 8H 2D 4C 9S", seats, banker_bid=999).lines[0]
    assert line.gross == Decimal("100.01") * 999 ** 3


def test_ultimate_single_bet():
    s = one_seat("ultimate", NIUNIU, "JS JH QS QH KS", 100, "standard")
    assert (s.lines[0].multiplier, s.lines[0].net) == (5, Decimal("475.00"))
    s = one_seat("ultimate", "JS JH QS QH KS", NIUNIU, 100, "standard")
    assert (s.lines[0].multiplier, s.lines[0].net) == (5, Decimal("-500"))


def test_player_banked_stake_times_hand_times_bid_times_multiple():
    seats = {
        "1": (NIUNIU, Bet("1", Decimal(10), "standard", multiple=3)),     # wins: niu niu x3
        "2": ("AS 2C 3C 4D JS", Bet("2", Decimal(10), "standard", 5)),    # loses to bull 8: x2
    }
    s = settle_round("grab-banker", BULL_8, seats, banker_bid=2)
    win, lose = s.line("1"), s.line("2")
    assert (win.outcome, win.multiplier, win.gross) == (Outcome.WIN, 3 * 2 * 3, Decimal(180))
    assert win.commission == Decimal("9.00") and win.net == Decimal("171.00")
    assert (lose.outcome, lose.multiplier, lose.gross) == (Outcome.LOSE, 2 * 2 * 5, Decimal(-200))
    assert lose.commission == 0
    # The banker won 200 - 180 = 20 net and pays the 5% fee on it.
    assert s.banker_commission == Decimal("1.00") and s.banker_net == Decimal("19.00")
    assert s.total_commission == Decimal("10.00")
    assert sum(line.net for line in s.lines) + s.banker_net + s.total_commission == 0


def test_classic_has_no_rake_and_bomb_pays_six():
    s = one_seat("classic", BULL_8, "2S 2H 2D 2C KS", 10, "standard")
    assert (s.lines[0].multiplier, s.lines[0].net, s.total_commission) == (6, Decimal(60), 0)


def test_haodan_escape_pays_as_a_loss_and_points_table():
    seats = {
        "1": (NIUNIU, Bet("1", Decimal(10), "standard", 2)),          # would win, but left the table
        "2": ("3S 3H 3C 3D 5D", Bet("2", Decimal(10), "points", 1)),  # bomb on the points table: 20
    }
    s = settle_round("haodan", BULL_8, seats, banker_bid=3, escaped={"1"})
    left = s.line("1")
    assert left.escaped and left.outcome is Outcome.LOSE
    assert left.multiplier == 3 * 3 * 2 and left.net == Decimal(-180)   # banker's bull 8 pays 3 in haodan
    assert s.line("2").multiplier == 20 * 3 and s.line("2").net == Decimal(600)


def test_escape_needs_a_preset_with_an_escape_rule():
    with pytest.raises(SettlementError, match="no escape penalty"):
        one_seat("classic", BULL_8, NIUNIU, 10, "standard", escaped={"1"})
    with pytest.raises(SettlementError, match="escaped seat 9"):
        one_seat("haodan", BULL_8, NIUNIU, 10, "standard", escaped={"9"})


@pytest.mark.parametrize(
    "preset, kwargs, bet, message",
    [
        ("haodan", {"banker_bid": 7}, Bet("1", Decimal(10), "standard"), "banker bid 7"),
        ("haodan", {}, Bet("1", Decimal(10), "standard", 9), "bet multiple 9"),
        ("cambodia", {}, Bet("1", Decimal(10), "standard"), "bet kind 'standard'"),
        ("cambodia", {}, Bet("2", Decimal(10), "equal"), "recorded for seat 2"),
    ],
)
def test_bad_bets_are_refused(preset, kwargs, bet, message):
    from scoring.errors import NiuniuError

    with pytest.raises(NiuniuError, match=message):
        settle_round(preset, BULL_8, {"1": (NIUNIU, bet)}, **kwargs)


@pytest.mark.parametrize("amount", [0, -5, 1.5, "ten", "NaN"])
def test_bad_stakes_are_refused(amount):
    with pytest.raises(SettlementError):
        Bet("1", amount, "equal")


def test_a_card_in_two_hands_is_refused():
    with pytest.raises(CardError, match="card 9H is in both the banker's hand and seat 1's"):
        one_seat("cambodia", BULL_8, "AH 2C 3C 4D 9H", 10, "equal")
    with pytest.raises(CardError, match="seat 2: card 'ZZ'"):
        settle_round("cambodia", BULL_8, {"1": (NIUNIU, Bet("1", 1, "equal")),
                                          "2": ("ZZ 2S 3S 4S 5S", Bet("2", 1, "equal"))})


def test_multi_deck_full_tie_follows_the_preset(tmp_path):
    base = (PRESET_DIR / "ultimate.toml").read_text().replace("decks = 1", "decks = 2")
    for policy, outcome, net in (("push", Outcome.PUSH, Decimal(0)), ("banker", Outcome.LOSE, Decimal(-300))):
        path = tmp_path / f"two-{policy}.toml"
        path.write_text(base.replace('full_tie = "push"', f'full_tie = "{policy}"')
                        .replace('name = "ultimate"', f'name = "two-{policy}"'))
        s = one_seat(str(path), NIUNIU, NIUNIU, 100, "standard")   # the same five cards from two decks
        assert s.lines[0].outcome is outcome and s.lines[0].net == net


def test_settlement_json_has_decimals_as_strings():
    data = one_seat("cambodia", "5S 9H 2D 4C QS", NIUNIU, 100, "double").to_json()
    line = data["lines"][0]
    assert (line["gross"], line["commission"], line["net"]) == ("300.00", "15.00", "285.00")
    assert data["banker_net"] == "-300.00" and data["total_commission"] == "15.00"
    assert data["preset"] == "cambodia" and data["banker"]["category"] == "no_bull"


@st.composite
def rounds(draw):
    preset = load_preset(draw(st.sampled_from(list_presets())))
    deck = draw(st.permutations(DECK))
    n = draw(st.integers(1, 7))
    seats = {}
    for i in range(n):
        seat = str(i + 1)
        amount = draw(st.decimals(min_value=Decimal("0.01"), max_value=Decimal(5000), places=2))
        kind = draw(st.sampled_from(preset.bet_kinds))
        multiple = draw(st.sampled_from(preset.banker.bet_multiples))
        seats[seat] = (deck[5 + 5 * i: 10 + 5 * i], Bet(seat, amount, kind, multiple))
    bid = draw(st.sampled_from(preset.banker.bids))
    escaped = draw(st.sets(st.sampled_from(sorted(seats)))) if preset.escape_penalty else set()
    return preset, deck[:5], seats, bid, escaped


@settings(max_examples=300, deadline=None)
@given(rounds())
def test_settlement_conserves_money(round_):
    preset, banker, seats, bid, escaped = round_
    s = settle_round(preset, banker, seats, banker_bid=bid, escaped=escaped)
    assert sum(line.net for line in s.lines) + s.banker_net + s.total_commission == 0
    assert s.total_commission >= 0 and s.banker_commission >= 0
    for line in s.lines:
        assert line.net == line.gross - line.commission
        assert 0 <= line.commission <= max(line.gross, 0)
        assert abs(line.gross) == line.bet.amount * line.multiplier
        assert (line.gross > 0) == (line.outcome is Outcome.WIN)
        assert (line.gross < 0) == (line.outcome is Outcome.LOSE)
        if line.escaped:
            assert line.outcome is Outcome.LOSE


def test_a_two_deck_shoe_allows_a_card_twice_but_not_three_times(tmp_path):
    path = tmp_path / "two.toml"
    path.write_text((PRESET_DIR / "ultimate.toml").read_text().replace("decks = 1", "decks = 2")
                    .replace('name = "ultimate"', 'name = "two-decks"'))
    seats = {"1": (NIUNIU, Bet("1", 10, "standard")), "2": (NIUNIU, Bet("2", 10, "standard"))}
    with pytest.raises(CardError, match=r"card \w+ is dealt 3 times .* 2 decks"):
        settle_round(str(path), NIUNIU, seats)
    assert settle_round(str(path), NIUNIU, {"1": seats["1"]}).lines[0].outcome is Outcome.PUSH


def test_a_shoe_of_several_decks_can_deal_five_of_a_rank_and_it_is_settled(tmp_path):
    """Five kings from two decks is a real deal: it must be scored (its four are a bomb),
    not refused as impossible, or the round could never be settled."""
    path = tmp_path / "two.toml"
    path.write_text((PRESET_DIR / "classic.toml").read_text().replace("decks = 1", "decks = 2")
                    .replace('name = "classic"', 'name = "two-decks"'))
    s = settle_round(str(path), "KS KS KH KD KC", {"1": ("2S 3H 4D 5C 9S", Bet("1", 100, "standard"))})
    assert s.banker.label == "Bomb" and s.lines[0].outcome is Outcome.LOSE and s.lines[0].net == -600
