"""Round rules 8 (QA50 dealing3 M1, M2): a finished round's card the camera lost under a chip, or
saw dragged across a neighbour's seat while it was swept, stays that round's card; it joined the
next round's hand, which Settle then refused with six cards or more until the dealer took each
one off by hand.

Detections go through the real tracker (accepted after 0.4 s, gone after 3 s unseen) into the real
round machine, ten frames a second.  Three seats (banker above; seats 1, 2, 3 below, left to
right); a hand's cards 22 px apart, the next deal's first cards in the row below."""

from __future__ import annotations

import pytest

from test_round import alerts, bets, make_config
from test_round_identity import SIZE, Table

from scoring.cards import Card
from vision.corners import Detection
from vision.round import RoundMachine, RoundState
from vision.tracker import SeatTracker

ROW = {"1": (15, 210), "2": (148, 210), "3": (281, 210), "banker": (20, 75)}
BELOW = 60          # the next deal's row, below the finished round's
ROUND1 = {"1": "KH QH JH 10H 9H".split(), "2": "7S 8S 2S 3S 5S".split(), "3": "2D 3D 5D 7D 8D".split(),
          "banker": "AS 2H 3C 4C 5C".split()}
ROUND2 = {"1": "AC 2C 6H 5H KC".split(), "2": "7C 8D AD 6C 3H".split(), "3": "6S 9S 10S JS QS".split(),
          "banker": "AH 4H 4D 6D 9D".split()}
SEATS = ("1", "2", "3", "banker")


class Table3(Table):
    def __init__(self, rules=None):
        config = make_config(players=("1", "2", "3"))
        self.tracker, self.machine = SeatTracker(config), RoundMachine(config, hold_unsettled=True)
        if rules is not None:
            self.tracker.rules = self.machine.rules = rules
        self.lying, self.frame_no, self.events = {}, 0, []
        self.chip: tuple[str, ...] = ()          # cards under a chip: not read, whatever is done
        self.copies: list = []                    # (code, place) of a second copy of a code lying
        self.machine.add_listener(self.events.append)

    def run(self, seconds, hidden=(), read_as=None):
        hidden = tuple(hidden) + self.chip
        for _ in range(round(seconds * 10)):
            self.frame_no += 1
            lying = [(code, place) for code, place in self.lying.items() if code not in hidden] + self.copies
            seen = [Detection(Card.parse((read_as or {}).get(code, code)), 0.9, (x - 10, y - 15, x + 10, y + 15))
                    for code, (x, y) in lying]
            ts = self.frame_no / 10
            self.machine.observe(self.tracker.update(seen, self.frame_no, ts, SIZE), self.frame_no, 1000.0 + ts, ts)

    def put(self, code, seat, slot, below=False):
        x, y = ROW[seat]
        self.lying[code] = (x + 22 * slot, y + (BELOW if below else 0))

    def deal(self, hands, slots=range(5), below=False, seats=SEATS):
        for i in slots:
            for seat in seats:
                self.put(hands[seat][i], seat, i, below)
                self.run(0.7)

    def settled(self):
        self.deal(ROUND1)
        self.run(2.0)
        self.machine.settle(bets(s1=100, s2=100, s3=100), ts=5000.0)

    def take(self, seat, keep=(), hidden=()):
        """The finished round's cards of this seat (but ``keep``) swept off in one motion."""
        for code in [c for c in ROUND1[seat] if c in self.lying and c not in keep]:
            x, y = self.lying[code]
            self.lying[code] = (x, y - 30)
        self.run(0.2, hidden=hidden)
        for code in [c for c in ROUND1[seat] if c in self.lying and c not in keep]:
            del self.lying[code]

    def drag(self, codes, dx, dy, seconds):
        start = {code: self.lying[code] for code in codes}
        steps = round(seconds * 10)
        for i in range(1, steps + 1):
            for code, (x, y) in start.items():
                self.lying[code] = (x + dx * i / steps, y + dy * i / steps)
            self.run(0.1)

    def hand(self, seat):
        hands = self.machine.hands
        return hands[seat].codes if seat in hands else ()


def finish_round2(table, seats_done=("1", "2", "3", "banker")):
    """Round 2's first cards lie in the row below; the rest of it is dealt there, then checked."""
    table.deal(ROUND2, slots=range(1, 5), below=True)
    table.run(2.0)
    assert table.machine.round_no == 2
    return {seat: table.hand(seat) for seat in SEATS}


def deal_then_lift_the_chip(table):
    """The next deal begins, round 1's cards are swept around the chip on seat 2's 8S, the chip is
    lifted: 8S is round 1's left-over, and round 2 is dealt and settled without it."""
    table.deal(ROUND2, slots=[0], below=True)
    for seat in ("1", "3", "banker"):
        table.take(seat)
    table.take("2", keep=("8S",))
    table.chip = ()
    table.run(1.0)
    assert table.hand("2") == ("7C",) and ["2", "8S"] in [p[:2] for p in table.machine.stale_cards]
    table.take("2")
    hands = finish_round2(table)
    assert hands["2"] == tuple(ROUND2["2"]) and alerts(table.events) == []


def test_a_chip_over_a_settled_card_as_the_next_deal_begins_keeps_that_card_out_of_the_next_round():
    """M1: a chip lay on seat 2's 8S from just after Settle past remove_after_s; the next deal began
    (row below) and the other cards were swept around the chip.  Lifted, 8S joined round 2's seat 2:
    six cards, too_many_cards, and Settle refused until the dealer removed it."""
    table = Table3()
    table.settled()
    table.run(0.5)
    table.chip = ("8S",)
    table.run(0.5)
    table.deal(ROUND2, slots=[0], below=True)                  # the next deal begun before the sweep
    table.run(1.0)                                             # 8S's track ends under the chip
    for seat in ("1", "3", "banker"):
        table.take(seat)
    table.take("2", keep=("8S",))
    table.chip = ()
    table.run(1.0)                                             # the chip lifted: 8S seen at its place
    assert table.machine.state == RoundState.dealing and table.hand("2") == ("7C",)
    table.take("2")                                            # and swept
    hands = finish_round2(table)
    assert hands == {seat: tuple(ROUND2[seat]) for seat in SEATS}
    assert alerts(table.events) == [] and table.machine.can_settle(bets(s1=100, s2=100, s3=100))


def test_a_chip_lifted_before_the_next_deal_leaves_its_card_with_the_settled_round():
    """M1 (the chip lifted while the round still shows settled): 8S seen again on a new track was a
    card "returned", and the next deal's clearing put it in round 2's hand."""
    table = Table3()
    table.settled()
    table.run(0.5)
    table.run(4.0, hidden=("8S",))                             # gone from the tracker under the chip
    table.run(1.0)                                             # lifted
    table.deal(ROUND2, slots=[0], below=True)
    for seat in SEATS:
        table.take(seat)
    hands = finish_round2(table)
    assert hands["2"] == tuple(ROUND2["2"]) and alerts(table.events) == []


def test_a_chip_still_on_as_the_next_deal_clears_the_round_keeps_its_card_a_left_over():
    """M1 (the chip laid at Settle, the next deal begun after remove_after_s): the card was not on the
    table for the clearing at all, and seen again when the chip was lifted it joined round 2."""
    table = Table3()
    table.settled()
    table.chip = ("8S",)
    table.run(4.0)
    deal_then_lift_the_chip(table)


@pytest.mark.parametrize("settled_s, covered_s, after_sweep_s", [
    (1.0, 0.0, 4.0),   # swept with its hand: it left the table; dealt again (one deck, reshuffled) it counts
    (1.0, 1.5, 4.0),   # the busy sim at 15 fps: a hand over 8S during the payout, the seat swept under it
    (0.5, 2.2, 1.0),   # the kept left-over's path: covered, swept 0.4 s before its track ended
], ids=["swept", "covered-then-swept", "swept-as-its-track-ended"])
def test_a_card_swept_with_its_hand_and_dealt_again_to_its_seat_still_counts(settled_s, covered_s, after_sweep_s):
    """The limit M1's rule keeps to: a card that went with the rest of its hand left the table, and
    the same card dealt again to that seat is the next round's, however long a hand lay over it
    first (dealing3's busy sim: 8S, dealt again to seat 2 within 10 s, was taken for the left-over)."""
    table = Table3()
    table.settled()
    table.run(settled_s)
    table.deal(ROUND2, slots=[0], below=True, seats=("1", "3"))
    hidden = ("8S",) if covered_s else ()
    table.run(covered_s, hidden=hidden)                        # a hand over 8S (or none)
    for seat in SEATS:
        table.take(seat, hidden=hidden)
    table.run(after_sweep_s)
    table.put("8S", "2", 0, below=True)                        # round 1's 8S, dealt to seat 2 again
    table.run(0.7)
    table.put(ROUND2["banker"][0], "banker", 0, below=True)
    table.run(0.7)
    table.deal({**ROUND2, "2": ["8S"] + ROUND2["2"][1:]}, slots=range(1, 5), below=True)
    table.run(2.0)
    assert table.hand("2") == ("8S", *ROUND2["2"][1:])

def test_a_hand_dragged_across_the_neighbours_seat_while_swept_stays_out_of_its_next_round():
    """M2: seat 2's round-1 cards dragged right across seat 3 as the next deal began: seat 3's round 2
    showed nine cards, and the dealer had to take four off by hand before Settle."""
    table = Table3()
    table.settled()
    table.run(1.0)
    table.deal(ROUND2, slots=[0], below=True, seats=("1", "3"))   # the next deal begun
    assert table.machine.round_no == 2
    table.drag(ROUND1["2"], 120, 12, 1.2)
    table.run(0.8)
    assert table.hand("3") == (ROUND2["3"][0],)
    for code in ROUND1["2"]:
        del table.lying[code]
    for seat in ("1", "3", "banker"):
        table.take(seat)
    table.run(1.0)
    table.deal(ROUND2, slots=[0], below=True, seats=("2", "banker"))
    hands = finish_round2(table)
    assert hands == {seat: tuple(ROUND2[seat]) for seat in SEATS}
    assert table.machine.can_settle(bets(s1=100, s2=100, s3=100))


def test_a_recording_made_under_rules_7_lets_the_chipped_card_join_as_it_did():
    """A replay runs the rules a recording was made with: under rules 7 M1's 8S joined round 2."""
    table = Table3(rules=7)
    table.settled()
    table.run(0.5)
    table.chip = ("8S",)
    table.run(0.5)
    table.deal(ROUND2, slots=[0], below=True)
    table.run(1.0)
    for seat in ("1", "3", "banker"):
        table.take(seat)
    table.take("2", keep=("8S",))
    table.chip = ()
    table.run(1.0)
    assert table.hand("2") == ("7C", "8S")


def test_a_camera_dark_mid_deal_says_it_shows_no_cards_and_removes_none():
    """L1: dark for 4 s while two cards were dealt, every track ended in one frame: the screen said
    every card left the table, and the log kept a card_removed_before_settlement for each of the
    twelve cards, which never moved."""
    table = Table3()
    table.deal(ROUND1, slots=range(3))
    table.chip = tuple(table.lying) + ("10H", "3S")           # the camera dark: nothing read
    table.deal(ROUND1, slots=[3], seats=("1", "2"))
    table.run(2.6)                                             # 4 s dark in all
    assert table.machine.absent_cards == set()
    [alert] = [e for e in table.events if e.kind == "alert"]
    assert alert.data["code"] == "camera_shows_no_cards" and alert.round_no == 1
    assert alert.data["message"].startswith("the camera shows no cards: all 12 cards of round 1")
    assert [a.data["code"] for a in table.machine.alerts] == ["camera_shows_no_cards"]
    table.chip = ()
    table.run(1.0)                                             # back: the same cards, and the two dealt
    assert table.machine.alerts == ()
    table.deal(ROUND1, slots=[3], seats=("3", "banker"))
    table.deal(ROUND1, slots=[4])
    table.run(2.0)
    assert {seat: table.hand(seat) for seat in SEATS} == {seat: tuple(ROUND1[seat]) for seat in SEATS}
    assert [(e.data["code"]) for e in table.events if e.kind == "alert"] == ["camera_shows_no_cards"]
    assert [e for e in table.events if e.kind == "card_removed"] == []
    assert table.machine.can_settle(bets(s1=100, s2=100, s3=100))


def test_a_card_taken_off_while_the_camera_was_dark_is_still_reported_removed():
    table = Table3()
    table.deal(ROUND1, slots=range(3))
    table.run(3.5, hidden=tuple(table.lying))
    del table.lying["QH"]
    table.run(3.0)
    assert [(a.data["code"], a.seat, a.card) for a in table.machine.alerts] == [
        ("card_removed_before_settlement", "1", "QH")]


def test_the_next_deals_lone_first_card_is_not_beside_the_swept_round():
    """M4: dealt after the sweep, the next deal's first new card waited (its other cards were codes of
    round 1's record, dealt again), and after 5 s card_after_round said it lay "beside round 1's
    cards", swept seconds before."""
    table = Table3()
    table.settled()
    table.run(1.0)
    for seat in SEATS:
        table.take(seat)
    table.run(0.5)
    again = {"1": ["AC", "QH", "7D"], "2": ["KH", "2D", "8D"], "3": ["7S", "3C", "5D"], "banker": ["2S", "9H", "JH"]}
    table.deal(again, slots=range(3))
    assert table.machine.round_no == 1 and table.machine.state == RoundState.settled
    assert [a for a in alerts(table.events) if a[0] == "card_after_round"] == []


def test_a_recording_made_under_rules_7_reports_each_card_of_a_dark_camera_removed_as_it_did():
    table = Table3(rules=7)
    table.deal(ROUND1, slots=range(3))
    table.run(3.5, hidden=tuple(table.lying))
    assert [a.data["code"] for a in table.machine.alerts] == ["card_removed_before_settlement"] * 12


def test_a_card_kept_once_is_kept_again_when_a_chip_lies_on_it_in_a_later_round():
    """Each round's card hidden alone is kept in its turn, not only the first time that seat and
    code were (the same 8S on seat 2 in rounds 1 and 2, a chip over it at both payouts)."""
    table = Table3()
    table.settled()
    table.run(0.5)
    table.chip = ("8S",)
    table.run(0.5)
    table.deal(ROUND2, slots=[0], below=True)
    table.run(1.0)
    for seat in ("1", "3", "banker"):
        table.take(seat)
    table.take("2", keep=("8S",))
    table.chip = ()
    table.run(1.0)
    table.take("2")
    round2 = {**ROUND2, "2": ROUND2["2"][:4] + ["8S"]}
    table.deal(round2, slots=range(1, 5), below=True)
    table.run(2.0)
    assert table.hand("2") == tuple(round2["2"])
    table.machine.settle(bets(s1=100, s2=100, s3=100), ts=6000.0)
    table.run(0.5)
    table.chip = ("8S",)                                       # round 2's 8S, under a chip
    table.run(0.5)
    round3 = {"1": ["4S"], "2": ["9C"], "3": ["10D"], "banker": ["JC"]}
    table.deal(round3, slots=[0])                              # round 3 begun in the swept row above
    table.run(1.0)
    assert table.machine.round_no == 3
    table.lying = {code: place for code, place in table.lying.items()
                   if code in ("8S", "4S", "9C", "10D", "JC")}  # round 2's other cards swept
    table.run(0.3)
    table.chip = ()
    table.run(1.0)
    assert table.hand("2") == ("9C",)


def test_a_code_read_on_another_seat_while_its_left_over_still_lies_read_is_not_carried():
    """The busy sim's case: the next deal's card on seat 1 had the code of a left-over lying in view
    on seat 3 (a second copy: no drag), and was taken for that left-over; the dealer added it by hand."""
    table = Table3()
    table.settled()
    table.run(1.0)
    table.deal(ROUND2, slots=[0], below=True, seats=("1", "3"))
    assert table.machine.round_no == 2
    table.copies = [("2D", (ROW["1"][0] + 22, ROW["1"][1] + BELOW))]   # round 1's 2D still lies on seat 3
    table.run(1.0)
    assert table.hand("1") == (ROUND2["1"][0], "2D")


def test_a_card_covered_as_its_hand_is_swept_is_not_taken_for_the_same_card_dealt_again():
    """The busy sim at 10 fps (round 82's 7H): a hand over seat 2's 8S during the payout, the seat swept
    under it; 8S's track ended 0.4 s after its hand's last reading (its hand gone, not lying beside
    it), and round 2's 8S, dealt to seat 2 before round 1 was cleared, was taken for that card: a
    left-over, added by hand at Settle."""
    table = Table3()
    table.settled()
    table.run(1.0)
    table.run(2.2, hidden=("8S",))                             # a hand over 8S
    for seat in SEATS:
        table.take(seat, hidden=("8S",))                       # swept, 8S with its hand
    round2 = {**ROUND2, "2": ["8S"] + ROUND2["2"][1:]}
    table.deal(round2, slots=[0], below=True)                  # 8S dealt to seat 2 again, round 1 settled
    assert table.machine.round_no == 2
    table.deal(round2, slots=range(1, 5), below=True)
    table.run(2.0)
    assert table.hand("2") == tuple(round2["2"])
    assert table.machine.can_settle(bets(s1=100, s2=100, s3=100))


def test_a_card_covered_as_its_hand_is_swept_is_no_left_over_when_dealt_again_after_the_clearing():
    """The busy sim at 10 fps (round 87's banker 8S): as above, but the same card came later in the
    next deal: the next deal's first cards cleared round 1 while 8S's hand had left (tracks ended),
    and 8S was kept a left-over for 10 s, so the 8S dealt to seat 2 in round 2 was never counted."""
    table = Table3()
    table.settled()
    table.run(1.0)
    table.run(2.2, hidden=("8S",))
    for seat in ("2", "1", "3", "banker"):
        table.take(seat, hidden=("8S",))
    table.run(0.3)
    round2 = {**ROUND2, "2": ROUND2["2"][:1] + ["8S"] + ROUND2["2"][2:]}
    table.deal(round2, slots=[0], below=True)
    assert table.machine.round_no == 2
    table.deal(round2, slots=range(1, 5), below=True)
    table.run(2.0)
    assert table.hand("2") == tuple(round2["2"])
    assert table.machine.can_settle(bets(s1=100, s2=100, s3=100))


def test_a_chipped_card_whose_hand_was_under_the_dealers_arm_as_its_track_ended_is_still_kept():
    """M1 with the dealer's arm over the rest of seat 2 for 0.6 s just as 8S's track ended under the
    chip: its hand, read again after, lay there all along, so 8S is still a left-over."""
    table = Table3()
    table.settled()
    table.chip = ("8S",)
    table.run(2.8)
    table.run(0.6, hidden=[c for c in ROUND1["2"] if c != "8S"])   # 8S's track ends meanwhile
    table.run(0.6)
    deal_then_lift_the_chip(table)


def test_a_change_undone_puts_back_the_cards_waiting_for_their_hand():
    """A change the audit log refused is undone whole (``_saved``/``_restore``): the rules-8 cards
    kept until their hand is read again were left as the refused change made them."""
    table = Table3()
    table.settled()
    machine = table.machine
    machine._unconfirmed = {("2", Card.parse("8S")): 7}
    saved = machine._saved()
    machine._unconfirmed = {}
    machine._restore(saved)
    assert machine._unconfirmed == {("2", Card.parse("8S")): 7}
