"""Who banks next: grab-the-banker bids and classic rotation."""

import random

import pytest

from scoring.banker import BankerReason, grab_banker, next_banker
from scoring.evaluate import evaluate
from scoring.settle import SettlementError


def test_highest_bid_banks_at_its_multiple():
    choice = grab_banker({"1": 2, "2": 4, "3": 0}, "haodan", random.Random(0))
    assert (choice.seat, choice.bid, choice.reason) == ("2", 4, BankerReason.HIGHEST_BID)


def test_tied_bids_go_to_more_chips_then_a_seeded_draw():
    bids = {"1": 3, "2": 3, "3": 1}
    choice = grab_banker(bids, "grab-banker", random.Random(0), chips={"1": 500, "2": "750.50", "3": 9999})
    assert (choice.seat, choice.reason) == ("2", BankerReason.MORE_CHIPS)
    draws = {grab_banker(bids, "haodan", random.Random(seed), chips={"1": 5, "2": 5}).seat for seed in range(40)}
    assert draws == {"1", "2"}                                     # both can win the draw ...
    again = [grab_banker(bids, "haodan", random.Random(7)).seat for _ in range(3)]
    assert len(set(again)) == 1                                    # ... and a seed replays it
    assert grab_banker(bids, "haodan", random.Random(7)).reason is BankerReason.DRAW


def test_no_bids_is_a_random_banker_at_the_minimum_multiple():
    seats = {grab_banker({"1": 0, "2": 0, "3": 0}, "haodan", random.Random(s)).seat for s in range(40)}
    assert seats == {"1", "2", "3"}
    choice = grab_banker({"1": 0, "2": 0}, "haodan", random.Random(1))
    assert choice.bid == 1 and choice.reason is BankerReason.NO_BIDS


@pytest.mark.parametrize(
    "bids, preset, kwargs, message",
    [
        ({"1": 9}, "haodan", {}, "seat 1: bid 9"),
        ({}, "haodan", {}, "no players bid"),
        ({"1": 1}, "classic", {}, "by rotation, not by bids"),
        ({"1": 2, "2": 2}, "haodan", {"chips": {"1": 10}}, "seat 2 tied"),
        ({"1": 2, "2": 2}, "haodan", {"chips": {"1": 10, "2": 1.5}}, "never a float"),
    ],
)
def test_bad_bids_are_refused(bids, preset, kwargs, message):
    with pytest.raises(SettlementError, match=message):
        grab_banker(bids, preset, random.Random(0), **kwargs)


def test_rotation_goes_to_the_best_bull_9_or_better():
    hands = {
        "banker": evaluate("4S 6H QD 9C 9H", "classic"),   # bull 8
        "1": evaluate("2S 8S JS 6S 3S", "classic"),        # bull 9
        "2": evaluate("7S 8C 5H KD 10C", "classic"),       # niu niu
    }
    choice = next_banker("banker", hands, "classic")
    assert (choice.seat, choice.reason) == ("2", BankerReason.ROTATION)
    del hands["2"]
    assert next_banker("banker", hands, "classic").seat == "1"


def test_rotation_keeps_the_banker_below_the_bar():
    hands = {"banker": evaluate("AS 8S 4S KS 7S", "classic"), "1": evaluate("4D 6H QD 9C 9H", "classic")}
    choice = next_banker("banker", hands, "classic")
    assert (choice.seat, choice.reason) == ("banker", BankerReason.STAYS)
    with pytest.raises(SettlementError, match="not rotation"):
        next_banker("banker", hands, "haodan")
