"""The next deal's cards, worked out once a frame (QA52), follow every change that moves them: a
frame, the dealer's Clear, left-overs named after a restart, a replay's rules, a change the audit log
refused, and a correction.  A stale answer would keep bets closed for a card gone, or open them with
the next deal's card on the table (QA50 dealing3 H1: past-posting)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_round import BANKER, SEAT1, SEAT2, Clock, bets, make_config, view

from vision.round import RoundMachine, RoundState

ROUND2 = {"s1": "2S 3S 4S 5D 6D".split(), "s2": "AD 2D 3C 4H QC".split(), "banker": "7H 8H 9D 10D JD".split()}


def tracked(track, moved=(), **seats):
    """The tracker's view with each card's track (the frame it was first seen in): ``track``, or
    the one ``moved`` names for that (seat, card)."""
    moved = dict(moved)
    return {seat: replace(hand, first_frames=tuple(moved.get((seat, c.code), track) for c in hand.cards))
            for seat, hand in view(**seats).items()}


def deal(clock, track, **final):
    shown = {seat: [] for seat in final}
    for i in range(5):
        for seat in final:
            shown[seat].append(final[seat][i])
            clock.feed(tracked(track, **shown))


def test_the_next_deals_cards_follow_each_change_read_twice_after_each():
    machine = RoundMachine(make_config(), hold_unsettled=True)
    clock = Clock(machine)
    deal(clock, 1, s1=SEAT1, s2=SEAT2, banker=BANKER)
    machine.settle(bets(s1=10, s2=10), ts=5000.0)
    table = dict(s1=SEAT1, s2=SEAT2, banker=BANKER)

    def shows(*moved, **extra):
        seats = {seat: table[seat] + extra.get(seat, []) for seat in table}
        clock.feed(tracked(1, moved, **seats))
        return machine.next_deal_cards

    assert shows() == [] and machine.next_deal_cards == []
    again = (("2", "10C"), 90)                                   # swept and dealt again: another track
    assert shows(again) == [("2", "10C")] and machine.next_deal_cards == [("2", "10C")]
    assert shows(again, s1=["KS"]) == [("1", "KS"), ("2", "10C")]
    assert machine.next_deal_cards == [("1", "KS"), ("2", "10C")]
    assert shows(again) == [("2", "10C")] and machine.next_deal_cards == [("2", "10C")]   # KS taken off

    machine.rules = 6                                            # a replay of a recording made then
    assert machine.next_deal_cards == []                         # (by its code 10C is the round's own)
    machine.rules = 8
    assert machine.next_deal_cards == [("2", "10C")]

    disk_full = [True]

    def audit_log(events):
        if disk_full:
            assert machine.next_deal_cards == []                 # the Clear, while the audit log is asked
            raise OSError("disk full")

    machine.add_gate(audit_log)
    with pytest.raises(OSError):
        machine.clear(ts=5001.0, actor="dealer7")
    assert machine.state == RoundState.settled and machine.next_deal_cards == [("2", "10C")]   # undone
    disk_full.clear()

    machine.ignore_present([("2", "10C")])                       # named a left-over (a restart's list)
    assert machine.next_deal_cards == [] and machine.next_deal_cards == []


def test_the_dealers_clear_and_a_correction_move_the_next_deals_cards():
    machine = RoundMachine(make_config(), hold_unsettled=True)
    clock = Clock(machine)
    deal(clock, 1, s1=SEAT1, s2=SEAT2, banker=BANKER)
    machine.settle(bets(s1=10, s2=10), ts=5000.0)
    dealt_again = tracked(1, [(("2", "10C"), 90)], s1=SEAT1, s2=SEAT2, banker=BANKER)
    clock.feed(dealt_again)
    assert machine.next_deal_cards == [("2", "10C")]
    machine.clear(ts=5001.0, actor="dealer7")                    # no frame: 10C is a left-over now
    assert machine.next_deal_cards == [] and machine.next_deal_cards == []
    clock.feed({})                                               # swept

    deal(clock, 200, **ROUND2)                                   # seat 2's QD misread as QC
    machine.correct_card("2", "QC", "QD", actor="dealer7", reason="misread")
    assert machine.next_deal_cards == []
    machine.settle(bets(s1=10, s2=10), ts=5003.0)
    assert machine.next_deal_cards == []                         # QC still read: the misread corrected
    clock.feed(tracked(200, **ROUND2))
    assert machine.next_deal_cards == []
    clock.feed(tracked(200, **{**ROUND2, "s1": ROUND2["s1"] + ["KS"]}))
    assert machine.next_deal_cards == [("1", "KS")]


def test_a_listener_told_of_a_frames_events_reads_that_frames_next_deal():
    """The kiosk redraws the screen from its listeners, while the frame is still being taken in."""
    machine = RoundMachine(make_config(), hold_unsettled=True)
    clock = Clock(machine)
    deal(clock, 1, s1=SEAT1, s2=SEAT2, banker=BANKER)
    machine.settle(bets(s1=10, s2=10), ts=5000.0)
    clock.feed(tracked(1, s1=SEAT1, s2=SEAT2, banker=BANKER))
    assert machine.next_deal_cards == []
    heard = []
    machine.add_listener(lambda event: heard.append((event.kind, event.card, machine.next_deal_cards)))
    clock.feed(tracked(1, s1=SEAT1 + ["KS"], s2=SEAT2, banker=BANKER[:4]))   # 5S swept as KS is dealt
    assert heard == [("card_removed", "5S", [("1", "KS")])]
