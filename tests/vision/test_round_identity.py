"""The round machine told which physical card a reading is (tracker rules 7, QA49 dealing2 H2, M3, M5,
M6, L2): a card misread at its place after a washed-out frame is that card, not a new one; the same
card swept and dealt again elsewhere is a new one, not last round's left-over.

Detections go through the real tracker (today's timing: accepted after 0.4 s, gone after 3 s unseen)
into the real round machine, ten frames a second, on make_config()'s table: the banker above, seat 1
bottom left, seat 2 bottom right, each card a 20 x 30 px box."""

from __future__ import annotations

from decimal import Decimal

from test_round import BANKER, SEAT1, SEAT2, alerts, bets, make_config, view
from test_round_changes import changed, dealt

from scoring.cards import Card
from scoring.rules import load_preset
from scoring.settle import settle_round
from vision.corners import Detection
from vision.round import EventKind, RoundMachine, RoundState
from vision.tracker import SeatTracker

SIZE = (400, 300)
ROW = {"1": (20, 225), "2": (220, 225), "banker": (20, 75)}    # each seat's first card; the next 30 px right


class Table:
    """Physical cards at places; each frame the detector reads every card not hidden, as itself or
    as ``read_as`` says, and the tracker and the round machine take it."""

    def __init__(self):
        config = make_config()
        self.tracker, self.machine = SeatTracker(config), RoundMachine(config, hold_unsettled=True)
        self.lying: dict[str, tuple[float, float]] = {}
        self.frame_no, self.events = 0, []
        self.machine.add_listener(self.events.append)

    def put(self, code, seat, slot):
        x, y = ROW[seat]
        self.lying[code] = (x + 30 * slot, y)

    def run(self, seconds, hidden=(), read_as=None):
        for _ in range(round(seconds * 10)):
            self.frame_no += 1
            seen = [Detection(Card.parse((read_as or {}).get(code, code)), 0.9, (x - 10, y - 15, x + 10, y + 15))
                    for code, (x, y) in self.lying.items() if code not in hidden]
            ts = self.frame_no / 10
            hands = self.tracker.update(seen, self.frame_no, ts, SIZE)
            self.machine.observe(hands, self.frame_no, 1000.0 + ts, ts)

    def deal(self, hands, per_card=0.7, skip=()):
        """Round the table, one card at a time: seat 1, seat 2, the banker."""
        for i in range(5):
            for seat in ("1", "2", "banker"):
                if (seat, i) not in skip:
                    self.put(hands[seat][i], seat, i)
                self.run(per_card)

    def sweep(self, *seats, keep=(), hidden=()):
        """Each seat's cards (but ``keep``) dragged 40 px toward the dealer for two frames, then gone."""
        cards = [code for code, (x, y) in self.lying.items() if _seat_of(x, y) in seats and code not in keep]
        for code in cards:
            x, y = self.lying[code]
            self.lying[code] = (x, y + 40)
        self.run(0.2, hidden=hidden)
        for code in cards:
            del self.lying[code]

    def glare(self, read_as, seconds=1.0):
        """Glare washes the cards out for one frame, then reads each as a similar card."""
        self.run(0.1, hidden=tuple(read_as))
        self.run(seconds, read_as=read_as)

    def kinds(self, kind):
        return [e for e in self.events if e.kind == kind]


def _seat_of(x, y):
    return "banker" if y < 150 else ("1" if x < 200 else "2")


ROUND1 = {"1": SEAT1, "2": SEAT2, "banker": BANKER}
ROUND2 = {"1": "2S 3S 4S 5D 6D".split(), "2": "7C AD 2D 3C 4H".split(), "banker": "7H 8H 9D 10D JD".split()}


def settled_table():
    table = Table()
    table.deal(ROUND1)
    table.run(2.0)
    table.machine.settle(bets(s1=100, s2=100), ts=5000.0)
    table.run(1.0)
    return table


def test_a_reflection_across_two_settled_cards_starts_no_phantom_round():
    """M3: 7C and 8C read as 7S and 8S for a second after a washed-out frame became two new cards,
    which ended the settled round and started round 2 with no bets on them."""
    table = settled_table()
    table.glare({"7C": "7S", "8C": "8S"})
    table.run(5.0)
    assert table.machine.state == RoundState.settled and table.machine.round_no == 1
    assert table.kinds(EventKind.round_cleared) == [] and alerts(table.events) == []


def test_a_reflection_after_a_long_washout_starts_no_phantom_round_either():
    """M3: washed out for longer than the tracker's window, the two misreads are new tracks; lying
    where the settled cards were last seen, they are not the next deal."""
    table = settled_table()
    table.run(0.8, hidden=("7C", "8C"))
    table.run(1.0, read_as={"7C": "7S", "8C": "8S"})
    table.run(5.0)
    assert table.machine.state == RoundState.settled and table.machine.round_no == 1
    assert table.kinds(EventKind.round_cleared) == [] and alerts(table.events) == []


def test_glare_after_a_washed_out_frame_adds_no_sixth_card_before_settle():
    """M3: the misread became a sixth card on seat 2, and Settle was refused until it was removed."""
    table = Table()
    table.deal(ROUND1)
    table.run(2.0)
    table.glare({"9C": "9S"})
    table.run(2.0)
    assert table.machine.hands["2"].codes == tuple(SEAT2) and alerts(table.events) == []
    assert table.machine.can_settle(bets(s1=100, s2=100))


def test_the_same_card_dealt_again_to_its_seat_right_after_the_sweep_is_in_the_next_round():
    """H2: Clear, the next deal begun while the old cards are swept, and seat 2 dealt 7C again a
    second after round 1's 7C left: the new 7C continued the old one's track, a left-over, and the
    hand was a card short (with a glare's phantom, settled on five wrong cards)."""
    table = settled_table()
    table.machine.clear(ts=5001.0, actor="dealer7")
    table.put(ROUND2["1"][0], "1", 0)                    # the next deal's first card, beside the old row
    table.lying[ROUND2["1"][0]] = (20, 270)
    table.run(0.7)
    table.sweep("2")
    table.run(0.7)
    table.put("7C", "2", 0)                              # round 1's 7C lay in slot 1
    table.run(0.7)
    table.sweep("1", "banker")
    table.lying[ROUND2["1"][0]] = (20, 225)
    table.deal(ROUND2, skip={("1", 0), ("2", 0)})
    table.run(2.0)
    assert table.machine.round_no == 2 and table.machine.hands["2"].codes == tuple(ROUND2["2"])
    table.glare({"3C": "9C"})                            # and a glare's misread is no fifth card either
    table.run(1.0)
    assert table.machine.hands["2"].codes == tuple(ROUND2["2"])
    _, settlement = table.machine.settle(bets(s1=100, s2=100), ts=6000.0)
    as_dealt = settle_round(load_preset("cambodia"), tuple(Card.parse(c) for c in ROUND2["banker"]),
                            {"2": (tuple(Card.parse(c) for c in ROUND2["2"]), bets(s2=100)["2"])})
    assert settlement.line("2").net == as_dealt.line("2").net == Decimal("190.00")     # Bull 7, paid double


def test_a_left_over_hidden_under_an_arm_and_seen_again_in_its_place_stays_a_left_over():
    """The other side of H2's rule: the card seen again in its place is the card that lay there."""
    table = settled_table()
    table.machine.clear(ts=5001.0, actor="dealer7")
    table.sweep("1", "banker")
    arm = ("7C",)                                        # the dealer's arm over seat 2's 7C
    table.run(0.5, hidden=arm)
    table.sweep("2", keep=arm, hidden=arm)
    table.run(1.0, hidden=arm)
    table.run(0.5)                                       # forgotten there, in its place
    table.put("2S", "1", 0)
    table.run(0.7)
    table.put("AD", "2", 0)
    table.run(1.0)
    assert table.machine.round_no == 2 and table.machine.hands["2"].codes == ("AD",)


def test_a_misdeal_redealt_at_once_keeps_the_cards_dealt_again_and_raises_nothing_about_its_last_card():
    """M5: the misdeal's 7th card, seen before the void and accepted just after, raised
    card_after_round about itself; and the redeal lost KH (dealt again to seat 1) and QH (dealt
    to seat 2, seat 1's in the misdeal) as the misdeal's left-overs: two hands a card short."""
    table = Table()
    for seat, i, code in (("1", 0, "KH"), ("2", 0, "6C"), ("banker", 0, "AS"), ("1", 1, "QH"),
                          ("2", 1, "7C"), ("banker", 1, "2H")):
        table.put(code, seat, i)
        table.run(0.7)
    table.put("JH", "1", 2)
    table.run(0.2)
    table.machine.void("super1", "misdeal", ts=5000.0)
    table.run(6.0)                                       # the supervisor looks at the misdeal
    assert alerts(table.events) == []
    table.sweep("1", "2", "banker")
    table.run(1.0)
    redeal = {"1": "KH 2S 3S 4S 5D".split(), "2": "QH 8D 9D 10D JD".split(), "banker": "AD 2D 3H 4D 5C".split()}
    table.deal(redeal)
    table.run(2.0)
    assert table.machine.round_no == 2
    assert {seat: hand.codes for seat, hand in table.machine.hands.items()} == {
        seat: tuple(codes) for seat, codes in redeal.items()}


def test_after_clear_a_left_over_hidden_then_is_no_card_of_the_next_round():
    """M6: a chip lay over 7C past remove_after_s when the dealer pressed Clear; lifted, 7C was a new
    card: it started the next round before any bet (or joined it as a sixth card)."""
    table = settled_table()
    table.run(3.5, hidden=("7C",))                       # the payout: a chip over 7C
    table.machine.clear(ts=5001.0, actor="dealer7")
    table.sweep("1", "banker", hidden=("7C",))
    table.sweep("2", keep=("7C",), hidden=("7C",))
    table.run(0.3, hidden=("7C",))
    table.run(2.0)                                       # the chip lifted: 7C alone on seat 2
    assert table.machine.state == RoundState.cleared
    table.put("2S", "1", 0)
    table.run(0.7)
    table.put("AD", "2", 2)
    table.run(1.0)
    assert table.machine.round_no == 2 and table.machine.hands["2"].codes == ("AD",)
    assert ["2", "7C"] in table.machine.stale_cards


def test_after_clear_with_a_left_over_unseen_the_first_card_waits_for_the_second():
    """M6: with the chip still over 7C and the rest swept, the next deal's first card started the
    round at once: bets were closed before the dealer could enter them."""
    table = settled_table()
    table.run(3.5, hidden=("7C",))
    table.machine.clear(ts=5001.0, actor="dealer7")
    table.sweep("1", "2", "banker")
    table.run(3.5)
    table.put("2S", "1", 0)
    table.run(1.0)
    assert table.machine.state == RoundState.cleared and table.machine.round_no == 1
    table.put("AD", "2", 0)
    table.run(1.0)
    assert table.machine.round_no == 2
    assert (table.machine.hands["1"].codes, table.machine.hands["2"].codes) == (("2S",), ("AD",))


def test_a_lone_card_alerted_then_cleared_past_joins_the_next_round():
    """M4: the next deal's first card lay on the settled table long enough to raise
    card_after_round; the dealer's Clear must not make it a left-over."""
    table = settled_table()
    table.put("2S", "1", 0)
    table.lying["2S"] = (20, 270)
    table.run(6.0)
    assert [a[0] for a in alerts(table.events)] == ["card_after_round"]
    table.machine.clear(ts=5001.0, actor="dealer7")
    table.sweep("1", "2", "banker", keep=("2S",))
    table.run(1.0)
    table.put("AD", "2", 0)
    table.run(1.0)
    assert table.machine.round_no == 2 and table.machine.hands["1"].codes == ("2S",)


def test_a_reading_a_person_confirmed_is_not_raised_again_when_the_card_reads_so_later():
    """L2: confirmed once as 10C (read as KH), then read as QH, then KH again: the KH alert came back
    and held Settle until the dealer confirmed the same card a second time."""
    machine, clock = dealt()
    hands = view(s1=SEAT1, s2=SEAT2, banker=BANKER)
    assert alerts(clock.feed(changed(dict(hands), "2", "10C", "KH"))) == [("card_changed", "2", "10C")]
    machine.correct_card("2", "10C", "10C", actor="dealer7", reason="looked: it is the 10C")
    assert alerts(clock.feed(changed(dict(hands), "2", "10C", "QH"))) == [("card_changed", "2", "10C")]
    assert not machine.can_settle(bets(s1=10, s2=10))                 # a reading not yet looked at
    machine.correct_card("2", "10C", "10C", actor="dealer7", reason="looked again: the 10C")
    assert clock.feed(changed(dict(hands), "2", "10C", "KH")) == []
    assert machine.changed_cards == set() and machine.can_settle(bets(s1=10, s2=10))


def test_a_recording_made_under_rules_6_loses_the_card_dealt_again_as_it_did():
    """A replay runs the rules a recording was made with: under rules 6 H2's 7C stayed a left-over."""
    table = Table()
    table.tracker.rules = table.machine.rules = 6
    table.deal(ROUND1)
    table.run(2.0)
    table.machine.settle(bets(s1=100, s2=100), ts=5000.0)
    table.run(1.0)
    table.machine.clear(ts=5001.0, actor="dealer7")
    table.sweep("1", "2", "banker")
    table.run(0.7)
    table.deal(ROUND2)
    table.run(2.0)
    assert table.machine.hands["2"].codes == tuple(ROUND2["2"][1:])
