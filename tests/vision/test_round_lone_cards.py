"""One new card on a finished round's table: after the dealer's "Next round" too (QA49 watch H2),
raised only once it has lain there beside that round's cards (review M3, watch M5), and, cleared
past, kept for the next round as its alert says (review L3)."""

from __future__ import annotations

from dataclasses import replace

from test_round import BANKER, SEAT1, SEAT2, Clock, alerts, bets, kinds, make_config, view
from test_round_changes import changed

from vision.round import LONE_CARD_S, EventKind, RoundMachine, RoundState

SECOND = 10     # Clock feeds 10 frames a second


def settled():
    machine = RoundMachine(make_config(), hold_unsettled=True)
    clock = Clock(machine)
    clock.deal(s1=SEAT1, s2=SEAT2, banker=BANKER)
    machine.settle(bets(s1=10, s2=10), ts=5000.0)
    return machine, clock


def feed(clock, hands, seconds):
    return [e for _ in range(int(seconds * SECOND)) for e in clock.feed(hands)]


def unseen(hands, *seats):
    """The tracker still keeps these seats' cards (swept less than remove_after_s ago), unseen."""
    return {seat: replace(hand, seen=(False,) * len(hand.cards)) if seat in seats else hand
            for seat, hand in hands.items()}


def test_next_round_pressed_before_the_sweep_a_lone_card_starts_no_round():
    """H2: KH put beside seat 2's hand after Settle and "Next round": it started round 2, which,
    held open for its bets, swallowed the next deal."""
    machine, clock = settled()
    machine.clear(ts=5001.0, actor="dealer7")
    events = feed(clock, view(s1=SEAT1, s2=SEAT2 + ["KH"], banker=BANKER), LONE_CARD_S + 0.5)
    assert EventKind.round_start not in kinds(events) and machine.round_no == 1
    [alert] = [e for e in events if e.kind == EventKind.alert]
    assert (alert.data["code"], alert.seat, alert.card, alert.round_no) == ("card_after_round", "2", "KH", 1)
    assert alert.data["message"].startswith("KH has lain on seat 2 among round 1's left-over cards")
    assert feed(clock, {}, 1) == [] and machine.state == RoundState.cleared      # swept with the rest
    following = {"s1": "2S 3S 4S 5D 6D".split(), "s2": "AD 2D 3C 4H 5H".split(), "banker": "7H 8H 9D 10D JD".split()}
    clock.deal(**following)                                                     # sweep, then deal: as ever
    assert machine.round_no == 2 and machine.state == RoundState.complete
    assert machine.hands["2"].codes == tuple(following["s2"]) and machine.alerts == ()


def test_a_left_over_swapped_after_next_round_is_pressed_is_reported():
    machine, clock = settled()
    machine.clear(ts=5001.0, actor="dealer7")
    events = clock.feed(changed(view(s1=SEAT1, s2=SEAT2, banker=BANKER), "2", "10C", "KH", 0.4, 44))
    assert alerts(events) == [("card_changed", "2", "10C")] and events[0].round_no == 1
    assert events[0].data["message"].endswith("look at the card: round 1 was settled with 10C")
    assert machine.state == RoundState.cleared and machine.round_no == 1


def test_the_next_deals_first_card_before_the_sweep_is_no_alarm():
    """M3/M5: the next deal begun before the sweep, the sweep, then its second card."""
    machine, clock = settled()
    first = view(s1=SEAT1, s2=SEAT2 + ["KS"], banker=BANKER)
    events = feed(clock, first, 2)                                               # dealt before the sweep
    events += feed(clock, unseen(first, "1", "banker"), 1)                       # the sweep, seat by seat
    swept = unseen(view(s1=SEAT1, s2=SEAT2 + ["KS"], banker=BANKER), "1", "banker")
    swept["2"] = replace(swept["2"], seen=(False,) * 5 + (True,))
    events += feed(clock, swept, LONE_CARD_S)                                    # kept unseen for a while
    assert [e for e in events if e.kind == EventKind.alert] == []
    events = clock.feed({**view(s1=["QS"]), "2": swept["2"]})                    # the second card
    cleared = next(e for e in events if e.kind == EventKind.round_cleared)
    assert cleared.data["new_cards"] == [["1", "QS"], ["2", "KS"]]              # the next deal's first card
    assert machine.round_no == 2 and machine.hands["2"].codes == ("KS",) and machine.hands["1"].codes == ("QS",)


def test_a_lone_card_the_dealer_clears_past_joins_the_next_round_when_it_is_dealt():
    """L3: the words said the next round starts with the next card dealt, the Clear made it a
    left-over, and an honest first card left that hand short."""
    machine, clock = settled()
    feed(clock, view(s1=SEAT1, s2=SEAT2 + ["KS"], banker=BANKER), 1)
    machine.clear(ts=5001.0, actor="dealer7")
    assert feed(clock, view(s1=SEAT1, s2=SEAT2 + ["KS"], banker=BANKER), 1) == []
    assert feed(clock, view(s2=["KS"]), 1) == []                                 # the left-overs swept
    events = clock.feed(view(s2=["KS"], s1=["2S"]))
    assert kinds(events) == [EventKind.round_start, EventKind.card_accepted, EventKind.card_accepted]
    assert machine.hands["2"].codes == ("KS",) and machine.hands["1"].codes == ("2S",)


def test_a_recording_made_under_rules_5_runs_as_it_ran():
    machine, clock = settled()
    machine.rules = 5
    events = clock.feed(view(s1=SEAT1, s2=SEAT2 + ["KS"], banker=BANKER))
    assert alerts(events) == [("card_after_round", "2", "KS")]                 # at once
    assert events[-1].data["message"].startswith("KS appeared on seat 2 after round 1 was settled")
    machine.clear(ts=5001.0, actor="dealer7")
    clock.feed(view(s2=["KS"]))
    clock.feed(view(s2=["KS"], s1=["2S"]))
    assert machine.round_no == 2 and machine.hands == {"1": machine.hands["1"]}   # KS a left-over
