"""Round rules 9 (QA52 bench_dealing, seed 11): which physical card a person's correction and a left-over
are about, when one code lies on a seat on two tracks.

A. The tracker showed seat 2's 5C on two tracks (the first kept unseen, the second read); the dealer's
   "Correct card: remove 5C" took the first entry off by code, the copy left on record held the track
   that ended, and the seat's 5C was kept out as a misread until the round was cleared: the same card
   dealt to seat 2 in the next deal was then taken for last round's left-over (added by hand).
B. At 30 fps the next deal's first card lay on seat 1 while round 17 was swept; that first card's code
   was one of round 17's seat 1 cards, so round 17's AH, swept with its hand, was taken for a card
   hidden alone beside it, and the AH dealt to seat 1 in round 18 was taken for that left-over.

The tracker's view is scripted here (seat -> cards with the frame their track began and whether read
in this frame), fed frame by frame into the real round machine under rules 9 (8: as before)."""

from __future__ import annotations

from test_round import BANKER, SEAT1, bets, make_config

from scoring.cards import Card
from vision.round import AlertCode, EventKind, RoundMachine
from vision.tracker import SeatHand

SEAT2 = "5C 7C 8C 9C 10C".split()
NEXT = {"1": "2S 3S 4S 6D 7D".split(), "2": "5C 2D 4D 8D 9D".split(), "banker": "6S 7S 8S 9S 10S".split()}


class Felt:
    """What the tracker shows: seat -> {code: [track, read]} (``copies``: a code's second track; a code
    written ``KH#2`` is another physical KH)."""

    def __init__(self, rules: int):
        self.machine = RoundMachine(make_config(), hold_unsettled=True)
        self.machine.rules = rules
        self.lying: dict[str, dict[str, list]] = {"1": {}, "2": {}, "banker": {}}
        self.copies: dict[str, list] = {}        # seat -> [code, track, read] of a second track of a code
        self.frame_no, self.events = 0, []
        self.machine.add_listener(self.events.append)

    def run(self, frames: int = 1) -> None:
        for _ in range(frames):
            self.frame_no += 1
            hands = {}
            for seat, lying in self.lying.items():
                shown = [(code, track, read) for code, (track, read) in lying.items()]
                shown += [tuple(copy) for s, copy in self.copies.items() if s == seat]
                if shown:
                    shown.sort(key=lambda c: c[1])
                    cards = tuple(Card.parse(c.partition("#")[0]) for c, _, _ in shown)
                    hands[seat] = SeatHand(seat, cards, (0.9,) * len(shown), (False,) * len(shown),
                                           seen=tuple(r for _, _, r in shown),
                                           first_frames=tuple(t for _, t, _ in shown))
            self.machine.observe(hands, self.frame_no, 1000.0 + self.frame_no / 10, self.frame_no / 10)

    def lay(self, seat: str, code: str) -> None:
        self.lying[seat][code] = [self.frame_no + 1, True]
        self.run(3)

    def deal(self, hands: dict[str, list[str]], skip: tuple = ()) -> None:
        for i in range(5):
            for seat in ("1", "2", "banker"):
                if (seat, i) not in skip:
                    self.lay(seat, hands[seat][i])

    def hand(self, seat: str) -> list[str]:
        hands = self.machine.hands
        return sorted(hands[seat].codes) if seat in hands else []


def two_tracks_of_5c_then_the_dealer_removes_one(felt: Felt) -> None:
    """Round 1 dealt; seat 2's 5C is read again on a second track while its first track is kept unseen
    (a hand over it, the tracker's defect); the dealer takes the extra 5C off, as the screen asks."""
    felt.deal({"1": SEAT1, "2": SEAT2, "banker": BANKER})
    felt.lying["2"]["5C"][1] = False                      # the first track: kept unseen
    felt.copies["2"] = ["5C", felt.frame_no + 1, True]    # the same card read on a second track
    felt.run(3)
    assert felt.hand("2").count("5C") == 2
    felt.machine.correct_card("2", "5C", None, "dealer", "5C is there once")
    felt.run(3)


def test_removing_the_extra_copy_keeps_the_copy_the_camera_reads():
    """A: the copy left on record is the one read (no "5C left the seat" on the dealer's screen), and
    once the unseen track ends the seat's 5C is still there, as it is on the table."""
    felt = Felt(rules=9)
    two_tracks_of_5c_then_the_dealer_removes_one(felt)
    assert felt.hand("2") == sorted(SEAT2)
    assert ("2", "5C") not in felt.machine.absent_cards
    del felt.lying["2"]["5C"]                             # the unseen track ends (remove_after_s)
    felt.run(3)
    assert ("2", "5C") not in felt.machine.absent_cards
    removed = [e for e in felt.events if e.kind == EventKind.alert and e.card == "5C"
               and e.data["code"] == AlertCode.card_removed_before_settlement]
    assert removed == []


def next_deal_begins_during_the_sweep_with_5c_dealt_to_seat_2_again(felt: Felt) -> None:
    felt.machine.settle(bets(s1=100, s2=100), ts=5000.0)
    felt.run(3)
    felt.lay("1", NEXT["1"][0])                           # the next deal's first card, before the sweep
    for seat in ("1", "2", "banker"):
        felt.lying[seat] = {c: v for c, v in felt.lying[seat].items() if c in NEXT[seat][:1]}
        felt.copies.pop(seat, None)
        felt.run(2)
    felt.run(3)
    felt.deal(NEXT, skip=(("1", 0),))
    felt.run(3)


def test_the_same_card_dealt_to_the_seat_in_the_next_deal_counts_in_the_next_round():
    """A: round 2's 5C on seat 2, dealt while round 1 was still on record (the next deal began during
    the sweep), was taken for round 1's left-over: round 2 lacked it until added by hand."""
    felt = Felt(rules=9)
    two_tracks_of_5c_then_the_dealer_removes_one(felt)
    next_deal_begins_during_the_sweep_with_5c_dealt_to_seat_2_again(felt)
    assert felt.machine.round_no == 2
    assert felt.hand("2") == sorted(NEXT["2"])
    assert felt.hand("1") == sorted(NEXT["1"]) and felt.hand("banker") == sorted(NEXT["banker"])
    assert felt.machine.can_settle(bets(s1=100, s2=100))


def test_rules_8_replay_removes_the_first_copy_as_it_did():
    """A recording made under rules 8 replays as it ran: the first entry of the code removed."""
    felt = Felt(rules=8)
    two_tracks_of_5c_then_the_dealer_removes_one(felt)
    assert ("2", "5C") in felt.machine.absent_cards


# B: round 2's first card on seat 1 is KH, a code round 1's seat 1 held; QH, another, comes in round 2 too
ROUND2 = {"1": "KH QH 2S 3S 4S".split(), "2": "2D 4D 6D 7D 8D".split(), "banker": "6S 7S 8S 9S 10S".split()}


def next_deal_begins_during_the_sweep_with_a_code_of_the_hand_swept(felt: Felt) -> None:
    """Round 1 settled; round 2's KH laid on seat 1 beside round 1's cards, which are then swept seat by
    seat (the hand read until it goes, all its cards together); round 2 dealt on at once."""
    felt.deal({"1": SEAT1, "2": SEAT2, "banker": BANKER})
    felt.machine.settle(bets(s1=100, s2=100), ts=5000.0)
    felt.run(3)
    felt.lying["1"]["KH#2"] = [felt.frame_no + 1, True]   # round 2's KH: another track of the code
    felt.run(3)
    for seat in ("1", "2", "banker"):
        felt.lying[seat] = {c: v for c, v in felt.lying[seat].items() if c.endswith("#2")}
        felt.run(2)
    felt.deal(ROUND2, skip=(("1", 0),))
    felt.run(3)


def test_a_card_of_the_swept_hand_dealt_again_counts_in_the_next_round():
    """B: round 1's QH, swept with its hand while round 2's KH lay on the seat, was taken for a card
    hidden alone beside that KH (read on round 1's code), and round 2's QH on seat 1, dealt seconds
    later, for that left-over: round 2 lacked it until added by hand."""
    felt = Felt(rules=9)
    next_deal_begins_during_the_sweep_with_a_code_of_the_hand_swept(felt)
    assert felt.machine.round_no == 2
    assert felt.hand("1") == sorted(ROUND2["1"])
    assert felt.hand("2") == sorted(ROUND2["2"]) and felt.hand("banker") == sorted(ROUND2["banker"])
    assert felt.machine.stale_cards == []


def test_the_removed_copys_track_read_alone_is_the_card_on_record():
    """A, the other way round: the copy the dealer removed (unseen then) is read again while the copy
    left on record leaves the tracker: it is the seat's one 5C, not a card gone."""
    felt = Felt(rules=9)
    two_tracks_of_5c_then_the_dealer_removes_one(felt)
    felt.lying["2"]["5C"][1] = True
    del felt.copies["2"]
    felt.run(3)
    assert felt.hand("2") == sorted(SEAT2)
    assert ("2", "5C") not in felt.machine.absent_cards
