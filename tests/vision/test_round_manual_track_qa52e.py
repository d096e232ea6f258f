"""Round rules 9 (QA52 bench_dealing, seed 11 at 10 fps, rounds 2-3 and 17-18): a card a person put on a
seat's record by hand is tied to the physical card the camera shows there, not remembered by code alone.

Round 2's seat 2 QS was read as QC; the dealer replaced QC by QS (Correct card).  The entry had no
track, so it was taken for every QS shown on the seat: round 3's QS, dealt anew to seat 2 while round 2
was still on record (the next deal began during the sweep), was taken for round 2's card, then for its
left-over, and the dealer had to add it by hand again.  The tracker's view is scripted (see
test_round_rules9_qa52.py) and fed frame by frame into the real round machine."""

from __future__ import annotations

from test_round import BANKER, SEAT1, bets
from test_round_rules9_qa52 import Felt

ROUND1 = {"1": SEAT1, "2": "QC 7C 8C 9C 10C".split(), "banker": BANKER}   # seat 2's QC: the camera's misread of QS
ROUND2 = {"1": "2S 3S 4S 6D 7D".split(), "2": "QS 2D 4D 8D 9D".split(), "banker": "6S 7S 8S 9S 10S".split()}


def settle_then_deal_round2_during_the_sweep(felt: Felt) -> None:
    """Round 1 settled; round 2's first card laid before the sweep, round 1 swept seat by seat, round 2
    dealt on: seat 2's QS is a new physical card (a new track)."""
    felt.machine.settle(bets(s1=100, s2=100), ts=5000.0)
    felt.run(3)
    felt.lay("1", ROUND2["1"][0])
    for seat in ("1", "2", "banker"):
        felt.lying[seat] = {c: v for c, v in felt.lying[seat].items() if c in ROUND2[seat][:1]}
        felt.run(2)
    felt.run(3)
    felt.deal(ROUND2, skip=(("1", 0),))
    felt.run(3)


def assert_round2_as_dealt(felt: Felt) -> None:
    assert felt.machine.round_no == 2
    assert felt.hand("2") == sorted(ROUND2["2"])
    assert felt.hand("1") == sorted(ROUND2["1"]) and felt.hand("banker") == sorted(ROUND2["banker"])
    assert felt.machine.stale_cards == []
    assert felt.machine.can_settle(bets(s1=100, s2=100))


def test_a_card_replaced_by_hand_does_not_swallow_the_same_code_dealt_anew():
    """The replaced QS lies on the misread QC's track: round 2's QS, on a new track, counts in round 2
    (on the old code it was taken for round 1's left-over and round 2's seat 2 held 4 cards)."""
    felt = Felt(rules=9)
    felt.deal(ROUND1)
    felt.machine.correct_card("2", "QC", "QS", "dealer", "the camera misread it")
    felt.run(3)
    assert felt.hand("2") == sorted(["QS", "7C", "8C", "9C", "10C"])
    settle_then_deal_round2_during_the_sweep(felt)
    assert_round2_as_dealt(felt)


def test_a_card_added_by_hand_that_the_camera_never_saw_swallows_no_card_dealt_anew():
    """Seat 2's QS was never read (under the dealer's hand, then a chip): added by hand, no track is
    tied to it, and round 2's QS dealt to seat 2 anew is round 2's, not round 1's."""
    felt = Felt(rules=9)
    felt.deal({**ROUND1, "2": "QS 7C 8C 9C 10C".split()}, skip=(("2", 0),))
    felt.machine.correct_card("2", None, "QS", "dealer", "the camera did not read it")
    felt.run(3)
    assert felt.hand("2") == sorted(["QS", "7C", "8C", "9C", "10C"])
    settle_then_deal_round2_during_the_sweep(felt)
    assert_round2_as_dealt(felt)


def test_a_card_added_by_hand_and_read_later_is_its_own_left_over():
    """The other way: the QS added by hand, then read on its seat (its track tied), lies on through the
    sweep while round 2 is dealt: it is round 1's left-over, not a sixth card of round 2's seat 2."""
    felt = Felt(rules=9)
    felt.deal({**ROUND1, "2": "QS 7C 8C 9C 10C".split()}, skip=(("2", 0),))
    felt.machine.correct_card("2", None, "QS", "dealer", "the camera did not read it")
    felt.run(3)
    felt.lay("2", "QS")
    felt.machine.settle(bets(s1=100, s2=100), ts=5000.0)
    felt.run(3)
    felt.lay("1", ROUND2["1"][0])
    for seat in ("1", "2", "banker"):
        felt.lying[seat] = {c: v for c, v in felt.lying[seat].items()
                            if c in ROUND2[seat][:1] or (seat, c) == ("2", "QS")}
        felt.run(2)
    felt.deal({**ROUND2, "2": "2D 4D 8D 9D 5H".split()}, skip=(("1", 0),))
    felt.run(3)
    assert felt.machine.round_no == 2
    assert felt.hand("2") == sorted("2D 4D 8D 9D 5H".split())


def test_rules_8_replay_keeps_the_card_by_code_as_it_did():
    """A recording made under rules 8 replays as it ran: round 2's QS taken for round 1's card."""
    felt = Felt(rules=8)
    felt.deal(ROUND1)
    felt.machine.correct_card("2", "QC", "QS", "dealer", "the camera misread it")
    felt.run(3)
    settle_then_deal_round2_during_the_sweep(felt)
    assert "QS" not in felt.hand("2")


def test_after_the_dealers_clear_the_card_replaced_by_hand_is_a_left_over_on_its_own_track_only():
    """The dealer taps Clear while round 1 lies on: the replaced QS, its physical card read as QC, was
    made a left-over of any track (unseen), and round 2's QS dealt to seat 2 anew was taken for it."""
    felt = Felt(rules=9)
    felt.deal(ROUND1)
    felt.machine.correct_card("2", "QC", "QS", "dealer", "the camera misread it")
    felt.run(3)
    felt.machine.settle(bets(s1=100, s2=100), ts=5000.0)
    felt.run(3)
    felt.machine.clear(ts=5001.0, actor="dealer")
    felt.run(3)
    for seat in ("1", "2", "banker"):
        felt.lying[seat] = {}
        felt.run(2)
    felt.deal(ROUND2)
    felt.run(3)
    assert_round2_as_dealt(felt)


def test_after_the_dealers_clear_a_hidden_card_replaced_by_hand_swallows_no_card_dealt_anew():
    """The replaced QS's physical card left the tracker before the Clear (a chip over it past
    ``remove_after_s``): it waits as a left-over on its own track, not on any track of its code."""
    felt = Felt(rules=9)
    felt.deal(ROUND1)
    felt.machine.correct_card("2", "QC", "QS", "dealer", "the camera misread it")
    felt.run(3)
    felt.machine.settle(bets(s1=100, s2=100), ts=5000.0)
    felt.run(3)
    del felt.lying["2"]["QC"]
    felt.run(3)
    felt.machine.clear(ts=5001.0, actor="dealer")
    felt.run(3)
    for seat in ("1", "2", "banker"):
        felt.lying[seat] = {}
        felt.run(2)
    felt.deal(ROUND2)
    felt.run(3)
    assert felt.machine.round_no == 2
    assert felt.hand("2") == sorted(ROUND2["2"])
    assert felt.machine.can_settle(bets(s1=100, s2=100))
    felt.run(felt.machine._unseen_frames())
    assert felt.machine.stale_cards == []
