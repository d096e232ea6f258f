"""A card replaced in place is told from the next card landing over its index by what covers
it, not by a quiet seat (QA49 review M1, watch H1: a swap within two seconds of any card
landing on the seat, its own included, was never reported however long it then lay there)."""

from __future__ import annotations

from test_tracker import Feed, det, make_tracker

from scoring.cards import Card

KH = Card.parse("KH")


def swap_tracker():
    """Today's timing: accepted after 0.4 s, re-checked for 1.5 s after, 10 frames a second."""
    tracker = make_tracker(accept_after_s=0.4, recheck_s=1.5)
    return tracker, Feed(tracker, fps=10.0)


def lay(feed, frames, *cards):
    for _ in range(frames):
        feed(*cards)


def test_the_seats_last_card_swapped_a_second_after_it_landed_is_reported():
    tracker, feed = swap_tracker()
    lay(feed, 5, det("2S", 100, 200))
    lay(feed, 5, det("2S", 100, 200), det("3S", 130, 200))
    lay(feed, 20, det("2S", 100, 200), det("3S", 130, 200), det("5C", 160, 200))    # 5C lands last
    first_kh = feed.frame_no + 1
    lay(feed, 100, det("2S", 100, 200), det("3S", 130, 200), det("KH", 161, 200))   # swapped, 10 s
    change = tracker.hands()["1"].changes[2]
    assert change is not None and change.card == KH and change.since_frame == first_kh
    assert tracker.hands()["1"].codes == ("2S", "3S", "5C")     # the card dealt stands: a person looks


def test_the_first_card_swapped_just_after_the_last_one_landed_elsewhere_on_the_seat_is_reported():
    """watch H1: seat 3's first card swapped one second after its fifth card landed."""
    tracker, feed = swap_tracker()
    shown = []
    for i, code in enumerate(["AS", "2S", "3D", "4D", "5C"]):
        shown.append(det(code, 60 + 30 * i, 200))
        lay(feed, 10, *shown)                                      # one card a second
    shown[0] = det("7C", 61, 200)
    lay(feed, 60, *shown)
    assert [c and c.card.code for c in tracker.hands()["1"].changes] == ["7C", None, None, None, None]


def test_a_card_laid_apart_on_the_seat_after_the_swap_does_not_hide_it():
    tracker, feed = swap_tracker()
    lay(feed, 30, det("5C", 100, 200))
    lay(feed, 5, det("KH", 101, 200))                             # swapped
    lay(feed, 40, det("KH", 101, 200), det("9D", 200, 200))       # a card put down far from it
    assert tracker.hands()["1"].changes[0].card == KH


def test_the_card_over_the_index_taken_away_leaves_a_change_seen_plainly():
    """The 2D landing over the QD's index explains its reading as 10D while it lies there; with
    the 2D gone and the card still reading 10D in plain view, it is a 10D now."""
    tracker, feed = swap_tracker()
    lay(feed, 30, det("QD", 100, 200))
    lay(feed, 8, det("QD", 100, 200), det("2D", 130, 200))       # the 2D slides in
    lay(feed, 40, det("10D", 100, 200), det("2D", 130, 200))      # and lies over the index
    assert tracker.hands()["1"].changes == (None, None)
    lay(feed, 50, det("10D", 100, 200))                           # the 2D taken away; still 10D
    assert tracker.hands()["1"].changes[0].card == Card.parse("10D")


def test_a_recording_made_under_rules_5_keeps_its_quiet_seat():
    """Replayed as it ran: rules 5 took any new track on the seat for the next card landing."""
    tracker, feed = swap_tracker()
    tracker.rules = 5
    lay(feed, 5, det("2S", 100, 200))
    lay(feed, 10, det("2S", 100, 200), det("5C", 130, 200))
    lay(feed, 60, det("2S", 100, 200), det("KH", 131, 200))        # swapped a second after it landed
    assert tracker.hands()["1"].changes == (None, None)


def test_an_index_misread_for_a_second_and_a_half_is_not_a_change():
    """A dealer's hand, a chip or glare over the index reads it as a similar card for a second
    or two: a false card_changed per round on a busy table (QA49 dealing2) at rules 5's 0.4 s."""
    tracker, feed = swap_tracker()
    lay(feed, 30, det("6H", 100, 200))
    lay(feed, 15, det("9H", 100, 200, conf=0.6))                  # glare: read 9H for 1.5 s
    lay(feed, 50, det("6H", 100, 200))
    assert tracker.hands()["1"].changes == (None,)


def test_a_card_swapped_before_the_next_card_landed_on_it_is_still_reported():
    """The card laid over it came after it began to read as another: it explains nothing
    (QA49 dealing2 sc01 case B: seat 1's 3rd card swapped, its 4th laid on it a second later)."""
    tracker, feed = swap_tracker()
    lay(feed, 30, det("JS", 100, 200))
    lay(feed, 10, det("KH", 101, 200))                            # swapped
    lay(feed, 60, det("KH", 101, 200), det("4D", 130, 200))       # then the next card laid on it
    assert tracker.hands()["1"].changes[0].card == KH
