"""Tracker rules 9 (QA52 bench_dealing): a track follows its physical card, not a reading at another
card's place.

Two defects the busy-table bench found, each a track continued where another card lies: a covered 5C
read as 5S while the 5S beside it was missed took the 5S's track, and the 5S, read again where it lay,
became a second 5S (Settle refused until the dealer took two cards off by hand); a QS accepted as QC,
missed for the frame the 4S landed over it, had its track continued by the 4S's readings, so the 4S
was never accepted and the screen showed the QS twice, once as QC, with no 4S.

Detections go through the real tracker and the real round machine (test_round_identity's table: ten
frames a second, accepted after 0.4 s, gone after 3 s unseen).  A hand is fanned as the bench lays
it: each card over the right half of the one before, whose box is then its left half, the index."""

from __future__ import annotations

from test_round import alerts
from test_round_identity import SIZE, Table
from test_tracker import det
from test_tracker_rules8 import under

Y = 225           # seat 1's row (test_round's make_config: seat 1 bottom left, seat 2 bottom right)


def frames(table, seconds, *detections):
    """``seconds`` of frames in which the camera reads exactly ``detections``."""
    for _ in range(round(seconds * 10)):
        table.frame_no += 1
        ts = table.frame_no / 10
        hands = table.tracker.update(list(detections), table.frame_no, ts, SIZE)
        table.machine.observe(hands, table.frame_no, 1000.0 + ts, ts)


def fanned(codes, x=60):
    """A seat's cards as they lie fanned: every card but the last shows its index alone."""
    *covered, top = codes
    return [under(code, x + 10 * i, Y) for i, code in enumerate(covered)] + [det(top, x + 10 * len(covered), Y)]


def dealt(table, codes):
    """Deal ``codes`` one by one onto seat 1, each read right for 0.7 s."""
    for n in range(1, len(codes) + 1):
        frames(table, 0.7, *fanned(codes[:n]))


def hand(table):
    return table.tracker.hands()["1"].codes


def covered_card_read_as_its_neighbour(rules=None):
    """15 fps bench, round 15, seat 2: the covered 5C read as 5S for two frames, while the 5S beside
    it is missed in the first of them; then every card is read right again."""
    table = Table()
    if rules is not None:
        table.tracker.rules = table.machine.rules = rules
    dealt(table, ["5S", "5C", "7C"])
    five_s, five_c, seven_c = fanned(["5S", "5C", "7C"])
    five_c_as_5s = under("5S", 70, Y)
    frames(table, 0.1, five_c_as_5s, seven_c)                    # 5S missed, 5C read as 5S
    frames(table, 0.1, five_s, five_c_as_5s, seven_c)
    frames(table, 1.0, five_s, five_c, seven_c)
    return table


def test_a_covered_card_read_as_its_neighbour_while_that_one_is_missed_makes_no_second_card():
    table = covered_card_read_as_its_neighbour()
    assert hand(table) == ("5S", "5C", "7C")
    assert [a for a in alerts(table.events) if a[0] in ("duplicate_card", "too_many_cards")] == []
    assert table.machine.hands["1"].codes == ("5S", "5C", "7C")


def test_a_covered_card_missed_for_a_few_frames_then_read_as_its_neighbour_makes_no_second_card():
    """15 fps bench, round 28, seat 2: the covered 3H missed for three frames, then read as the 3D
    beside it while the 3D is missed, and once more with the 3D read: its neighbours in view all
    along, it still lies there."""
    table = Table()
    dealt(table, ["3D", "3H", "9C"])
    three_d, three_h, nine_c = fanned(["3D", "3H", "9C"])
    three_h_as_3d = under("3D", 70, Y)
    frames(table, 0.3, three_d, nine_c)                          # the 3H's index missed
    frames(table, 0.1, three_h_as_3d, nine_c)                    # then read as 3D, the 3D missed
    frames(table, 0.1, three_d, three_h_as_3d, nine_c)
    frames(table, 1.0, three_d, three_h, nine_c)
    assert hand(table) == ("3D", "3H", "9C")
    assert [a for a in alerts(table.events) if a[0] in ("duplicate_card", "too_many_cards")] == []


def test_a_recording_made_under_rules_8_replays_the_second_card_it_ran_with():
    table = covered_card_read_as_its_neighbour(rules=8)
    assert hand(table).count("5S") == 2


def next_card_landing_on_a_misread_card(rules=None):
    """10 fps bench, round 2, seat 2: QS read as QC, and surer, in 3 of its first 6 frames (accepted as QC),
    read right for 3 s, then missed in the frame the 4S lands over its right half."""
    table = Table()
    if rules is not None:
        table.tracker.rules = table.machine.rules = rules
    dealt(table, ["6D"])
    six_d = under("6D", 60, Y)
    frames(table, 0.1, six_d, det("QS", 70, Y))
    frames(table, 0.3, six_d, det("QC", 70, Y, conf=0.96))
    frames(table, 3.0, six_d, det("QS", 70, Y))
    assert hand(table) == ("6D", "QC")
    frames(table, 0.1, six_d, det("4S", 80, Y))                  # QS missed as the 4S lands
    frames(table, 1.5, six_d, under("QS", 70, Y), det("4S", 80, Y))
    return table


def test_the_next_card_landing_on_a_misread_card_is_accepted_and_does_not_take_its_track():
    table = next_card_landing_on_a_misread_card()
    shown = table.tracker.hands()["1"]
    assert shown.codes == ("6D", "QC", "4S")
    assert shown.needs_confirmation[1] and shown.rereads[1].code == "QS"    # the dealer is asked to look
    assert table.machine.hands["1"].codes == ("6D", "QC", "4S")


def test_a_recording_made_under_rules_8_replays_the_lost_card_it_ran_with():
    assert hand(next_card_landing_on_a_misread_card(rules=8)) == ("6D", "QC", "QS")


def test_a_card_slid_along_its_seat_is_still_followed():
    """Rules 9 keep a card moved where no other card lies: slid 40 px in one frame, it is the same
    card, not a new one beside a card gone."""
    table = Table()
    dealt(table, ["8H", "9H"])
    first = table.tracker.hands()["1"].first_frames
    frames(table, 0.1, under("8H", 60, Y))                       # the 9H under the dealer's hand
    frames(table, 1.0, under("8H", 60, Y), det("9H", 110, Y))     # squared up 40 px to the right
    assert hand(table) == ("8H", "9H") and table.tracker.hands()["1"].first_frames == first
    assert alerts(table.events) == []


def test_a_covered_card_read_as_the_card_over_it_while_that_one_is_missed_makes_no_second_card():
    """The same misread the other way round: the 9C's index read as the 9S lying over it for two
    frames, while the 9S is missed in the first (the dealer's sleeve over it)."""
    table = Table()
    dealt(table, ["9C", "9S"])
    nine_c, nine_s = fanned(["9C", "9S"])
    frames(table, 0.1, under("9S", 60, Y))
    frames(table, 0.1, under("9S", 60, Y), nine_s)
    frames(table, 1.0, nine_c, nine_s)
    assert hand(table) == ("9C", "9S")
    assert [a for a in alerts(table.events) if a[0] in ("duplicate_card", "too_many_cards")] == []
