"""The round machine on a card that changed under the camera (QA48 dispute H3) and on a
lone card put on a finished round's table (QA48 dispute M8)."""

from __future__ import annotations

from dataclasses import replace

from test_round import BANKER, SEAT1, SEAT2, Clock, alerts, bets, kinds, make_config, view

from scoring.cards import Card
from vision.round import LONE_CARD_S, EventKind, RoundMachine, RoundState
from vision.tracker import Change


def changed(hands, seat, card, read_as, seconds=2.0, since_frame=40):
    """The tracker's view with ``card`` on ``seat`` read steadily as ``read_as`` since its recheck."""
    hand = hands[seat]
    hands[seat] = replace(hand, changes=tuple(Change(Card.parse(read_as), seconds, since_frame)
                                              if c.code == card else None for c in hand.cards))
    return hands


def dealt():
    machine = RoundMachine(make_config(), hold_unsettled=True)
    clock = Clock(machine)
    clock.deal(s1=SEAT1, s2=SEAT2, banker=BANKER)
    assert machine.state == RoundState.complete
    return machine, clock


def test_a_card_read_as_another_since_raises_one_alert_and_settling_waits_for_a_person():
    machine, clock = dealt()
    swapped = changed(view(s1=SEAT1, s2=SEAT2, banker=BANKER), "2", "10C", "KH")
    events = clock.feed(swapped)
    assert alerts(events) == [("card_changed", "2", "10C")]
    assert events[0].data["message"] == ("10C on seat 2 has read as KH, steadily and in the same place, since "
                                         "frame 40: look at the card, then confirm or correct it")
    assert events[0].data["read_as"] == "KH" and events[0].data["since_frame"] == 40
    assert [clock.feed(swapped) for _ in range(5)] == [[]] * 5          # raised once
    assert machine.hands["2"].codes == tuple(SEAT2)                     # the record is what was dealt
    assert machine.changed_cards == {("2", "10C")} and machine.doubtful_cards == set()
    # a person looks first (QA49 dealing2 M2: one tap settled the round on the card swapped out)
    assert not machine.can_settle(bets(s1=10, s2=10))
    machine.correct_card("2", "10C", "10C", actor="dealer7", reason="looked: it is the 10C")
    assert machine.changed_cards == set() and machine.can_settle(bets(s1=10, s2=10))
    assert clock.feed(swapped) == []


def test_a_card_read_as_another_after_settlement_is_still_raised():
    machine, clock = dealt()
    machine.settle(bets(s1=10, s2=10), ts=5000.0)
    events = clock.feed(changed(view(s1=SEAT1, s2=SEAT2, banker=BANKER), "2", "10C", "KH", 1.2, 31))
    assert alerts(events) == [("card_changed", "2", "10C")]
    assert events[0].data["message"] == ("10C on seat 2 has read as KH, steadily and in the same place, since "
                                         "frame 31: look at the card: round 1 was settled with 10C")
    assert machine.state == RoundState.settled and machine.settlement is not None


def test_a_lone_card_on_a_settled_table_swept_with_it_does_not_swallow_the_next_deal():
    """QA48 M8: 10C swapped for KS after the payout.  KS opened round 2, which, held open for
    its bets once the table was swept, took in the next deal: seat 2 got six cards."""
    machine, clock = dealt()
    machine.settle(bets(s1=10, s2=10), ts=5000.0)
    swapped = view(s1=SEAT1, s2=SEAT2[:4] + ["KS"], banker=BANKER)
    events = clock.feed(swapped)
    assert [(e.kind, e.card) for e in events] == [(EventKind.card_removed, "10C")]
    first = clock.frame_no
    events = [e for _ in range(int(LONE_CARD_S * 10)) for e in clock.feed(swapped)]   # 10 frames a second
    assert alerts(events) == [("card_after_round", "2", "KS")]
    alert = next(e for e in events if e.kind == EventKind.alert)
    assert alert.data["message"].startswith(f"KS has lain on seat 2 beside round 1's cards, settled without it, "
                                            f"with no other new card for 5 s since frame {first}")
    assert alert.data["since_frame"] == first
    assert machine.round_no == 1 and machine.state == RoundState.settled
    cleared = clock.feed({})                                            # the sweep, KS with the rest
    assert kinds(cleared)[-1] == EventKind.round_cleared and cleared[-1].data["previous_state"] == "settled"
    following = "2S 3S 4S 5D 6D".split()
    clock.deal(s1=following, s2="AD 2D 3C 4H 5H".split(), banker="7H 8H 9D 10D JD".split())
    assert machine.round_no == 2 and machine.state == RoundState.complete
    assert machine.hands["2"].codes == ("AD", "2D", "3C", "4H", "5H") and machine.alerts == ()


def test_a_lone_card_the_dealer_clears_past_joins_the_next_round():
    """QA49 review L3: its alert says the next round starts with the next card dealt; Clear made
    it a left-over, and an honest first card then left the hand short."""
    machine, clock = dealt()
    machine.settle(bets(s1=10, s2=10), ts=5000.0)
    clock.feed(view(s1=SEAT1, s2=SEAT2 + ["KS"], banker=BANKER))
    machine.clear(ts=5001.0, actor="dealer7")
    assert ["2", "KS"] not in machine.stale_cards
    assert clock.feed(view(s2=["KS"])) == []                            # the rest swept, KS left lying
    events = clock.feed(view(s2=["KS"], s1=["2S"]))
    assert kinds(events) == [EventKind.round_start, EventKind.card_accepted, EventKind.card_accepted]
    assert machine.hands["2"].codes == ("KS",) and machine.hands["1"].codes == ("2S",)
