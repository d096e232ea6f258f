"""A card replaced in place between two frames (QA48 dispute H3): the tracker reports the
other card it now reads, and keeps the card it accepted."""

from __future__ import annotations

from test_tracker import Feed, det, make_tracker

from scoring.cards import Card
from vision.tracker import CHANGE_HOLD_S

KH = Card.parse("KH")


def swap_tracker():
    """Today's timing: accepted after 0.4 s, re-checked for 1.5 s after, 10 frames a second."""
    tracker = make_tracker(accept_after_s=0.4, recheck_s=1.5)
    return tracker, Feed(tracker, fps=10.0)


def test_a_card_replaced_in_place_long_after_acceptance_is_reported_as_changed():
    tracker, feed = swap_tracker()
    for _ in range(30):                              # 5C dealt, 3 s on the table
        feed(det("5C", 100, 200))
    for _ in range(15):                              # KH laid straight over it: no frame between
        feed(det("KH", 101, 200))
    assert tracker.hands()["1"].changes == (None,)   # not yet: a hand or glare misreads this long
    for _ in range(10):
        shown = feed(det("KH", 101, 200))
    hand = tracker.hands()["1"]
    assert shown == {"1": ("5C",)}                   # the round keeps what was dealt: a person looks
    assert hand.changes[0].card == KH and hand.changes[0].seconds >= CHANGE_HOLD_S
    assert hand.needs_confirmation == (False,) and hand.rereads == (None,)


def test_the_next_card_landing_over_the_index_is_not_a_change():
    """The bundled demo's QD read 10D once the 2D covered half its index: the 2D is a new
    track on the seat, which a swap in place does not make."""
    tracker, feed = swap_tracker()
    for _ in range(30):
        feed(det("QD", 100, 200))
    for _ in range(8):                               # the 2D slides in, its index clear of the QD's
        feed(det("QD", 100, 200), det("2D", 130, 200))
    for _ in range(50):                              # then lies over the QD's index: read 10D for 5 s
        feed(det("10D", 100, 200), det("2D", 130, 200))
    assert tracker.hands()["1"].codes == ("QD", "2D")
    assert tracker.hands()["1"].changes == (None, None)


def test_a_card_misread_while_it_is_swept_is_not_a_change():
    tracker, feed = swap_tracker()
    for _ in range(30):
        feed(det("5C", 100, 200))
    for x in range(100, 180, 4):                     # slid away (swept) and misread on the way
        feed(det("6C", x, 200))
    assert tracker.hands()["1"].changes == (None,)


def test_no_change_is_reported_under_older_rules():
    tracker, feed = swap_tracker()
    tracker.rules = 4                                # a replay of a recording made before rules 5
    for code in ["5C"] * 30 + ["KH"] * 20:
        feed(det(code, 100, 200))
    assert tracker.hands()["1"].changes == (None,)
