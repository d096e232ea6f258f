"""From noisy per-frame detections to accepted cards per seat."""

from __future__ import annotations

from scoring.cards import Card
from vision.corners import Detection
from vision.table import table_config_from_dict
from vision.tracker import SeatTracker

SIZE = (400, 300)


def make_tracker(**thresholds):
    """The k-of-n vote alone unless a test names accept_after_s or recheck_s (their own tests below)."""
    config = table_config_from_dict({"table_id": "t", "rules": "cambodia", "seats": [
        {"name": "banker", "polygon": [[0, 0], [1, 0], [1, 0.5], [0, 0.5]]},
        {"name": "1", "polygon": [[0, 0.5], [0.5, 0.5], [0.5, 1], [0, 1]]},
        {"name": "2", "polygon": [[0.5, 0.5], [1, 0.5], [1, 1], [0.5, 1]]},
    ], "thresholds": {"k": 3, "n": 5, "conf": 0.5, "accept_after_s": 0.0, "recheck_s": 0.0, **thresholds}})
    return SeatTracker(config)


def det(code, x, y, conf=0.9):
    """A card of about 20x30 px whose box centre is (x, y)."""
    return Detection(Card.parse(code), conf, (x - 10, y - 15, x + 10, y + 15))


class Feed:
    def __init__(self, tracker, fps=8.0):  # 1/8 s steps add up exactly
        self.tracker, self.frame_no, self.fps = tracker, 0, fps

    def __call__(self, *detections):
        self.frame_no += 1
        hands = self.tracker.update(list(detections), self.frame_no, self.frame_no / self.fps, SIZE)
        return {seat: hand.codes for seat, hand in hands.items()}


def test_card_goes_to_the_seat_whose_zone_holds_its_centre():
    feed = Feed(make_tracker(k=1, n=1))
    assert feed(det("AS", 100, 50), det("KH", 100, 200), det("QD", 300, 200)) == {
        "banker": ("AS",), "1": ("KH",), "2": ("QD",)}


def test_a_card_is_accepted_only_after_k_of_n_frames():
    feed = Feed(make_tracker())
    card = det("7H", 100, 200)
    assert feed(card) == {}
    assert feed() == {}             # missed once (covered)
    assert feed(card) == {}
    assert feed(card) == {"1": ("7H",)}  # third sighting within five frames


def test_sightings_that_fall_out_of_the_window_do_not_count():
    feed = Feed(make_tracker())
    card = det("7H", 100, 200)
    feed(card), feed(card)
    for _ in range(5):
        assert feed() == {}
    assert feed(card) == {}  # the two old sightings are gone


def test_low_confidence_detections_are_not_votes():
    feed = Feed(make_tracker())
    for _ in range(6):
        assert feed(det("7H", 100, 200, conf=0.3)) == {}


def test_class_flicker_is_resolved_by_vote():
    tracker = make_tracker()
    feed = Feed(tracker)
    seq = ["8H", "6H", "8H", "6H", "8H"]
    results = [feed(det(code, 100, 200)) for code in seq]
    assert results[-1] == {"1": ("8H",)}
    hand = tracker.hands()["1"]
    assert hand.needs_confirmation == (True,)  # 3 of 5 votes is a split decision


def test_a_card_misread_once_the_next_card_half_covers_it_keeps_its_earlier_reading():
    # The bundled demo's round 2: a QD read right (and weakly) for seconds, then read as 10D
    # in the three frames after the next card landed on its corner.  The window alone
    # (last 5 frames) holds two confident 10D and one confident QD.
    tracker = make_tracker()
    feed = Feed(tracker)
    feed(det("QD", 100, 200, conf=0.9))
    for _ in range(3):
        feed(det("QD", 100, 200, conf=0.4))
    feed(det("QD", 100, 200, conf=0.9))
    assert feed(det("10D", 101, 201, conf=0.55)) == {}
    assert feed(det("10D", 101, 201, conf=0.55)) == {"1": ("QD",)}
    assert tracker.hands()["1"].needs_confirmation == (True,)  # 2 of 4 confident sightings disagree


def test_low_mean_confidence_needs_confirmation():
    tracker = make_tracker()
    feed = Feed(tracker)
    for _ in range(3):
        feed(det("QS", 100, 200, conf=0.6), det("KS", 150, 200, conf=0.95))
    hand = tracker.hands()["1"]
    assert hand.codes == ("QS", "KS")
    assert hand.needs_confirmation == (True, False)
    assert hand.confidence == (0.6, 0.95)


def test_accepted_card_survives_being_covered_then_leaves_after_remove_after_s():
    feed = Feed(make_tracker(remove_after_s=2.0))
    card = det("9C", 300, 200)
    for _ in range(3):
        feed(card)
    for _ in range(15):                    # 1.875 s under the dealer's hand
        assert feed() == {"2": ("9C",)}
    assert feed() == {}                    # 2.0 s unseen: it left the table


def test_same_card_moving_within_a_seat_keeps_its_track():
    tracker = make_tracker()
    feed = Feed(tracker)
    for x in (100, 100, 100, 140, 180):
        feed(det("JD", x, 200))
    assert feed(det("JD", 180, 200)) == {"1": ("JD",)}
    assert len(tracker.tracks) == 1


def test_two_cards_of_one_seat_are_two_tracks_in_dealt_order():
    feed = Feed(make_tracker())
    first, second = det("2S", 60, 200), det("3S", 120, 200)
    feed(first), feed(first)
    feed(first, second)
    feed(first, second)
    assert feed(first, second) == {"1": ("2S", "3S")}


def test_a_card_read_doubtfully_until_the_next_one_lands_keeps_its_dealt_place():
    """The demo's QD: read under the vote threshold for its first frames, it is accepted
    only after the 2D dealt on top of it — the dealer still expects QD before 2D."""
    feed = Feed(make_tracker())
    doubtful, clear = det("QD", 60, 200, conf=0.4), det("2D", 120, 200)
    for _ in range(4):
        assert feed(doubtful) == {}
    for _ in range(3):
        shown = feed(doubtful, clear)
    assert shown == {"1": ("2D",)}
    now_clear = det("QD", 60, 200, conf=0.7)
    feed(now_clear, clear), feed(now_clear, clear)
    assert feed(now_clear, clear) == {"1": ("QD", "2D")}


def test_a_card_that_slides_to_another_seat_leaves_the_first():
    feed = Feed(make_tracker())
    card_in_1, card_in_2 = det("5D", 150, 200), det("5D", 250, 200)
    for _ in range(3):
        feed(card_in_1)
    assert feed() == {"1": ("5D",)}                  # in transit, covered: still on seat 1
    feed(card_in_2), feed(card_in_2)
    assert feed(card_in_2) == {"2": ("5D",)}         # accepted on 2: gone from 1 at once


def test_the_same_card_seen_on_two_seats_at_once_stays_on_both():
    feed = Feed(make_tracker())
    for _ in range(3):
        hands = feed(det("5D", 150, 200), det("5D", 250, 200))
    assert hands == {"1": ("5D",), "2": ("5D",)}    # the round machine raises the duplicate


def test_detections_outside_every_zone_are_counted_not_tracked():
    tracker = make_tracker(k=1, n=1)
    config = tracker.config.model_copy(update={"seats": tracker.config.seats[:2]})
    tracker = type(tracker)(config)
    hands = tracker.update([det("AS", 300, 200)], 1, 0.1, SIZE)
    assert hands == {} and tracker.outside == 1


def test_pending_tracks_without_sightings_are_forgotten():
    tracker = make_tracker()
    feed = Feed(tracker)
    feed(det("AS", 100, 200))
    for _ in range(5):
        feed()
    assert tracker.tracks == ()


# ------------------------------------------------------------------ time, not frames (QA48 dealing H2, M1)


def test_a_fast_camera_does_not_accept_a_card_on_the_blur_of_its_first_frames():
    """At 30 fps a 4H read as AH for the 0.1 s it slid in was accepted as AH for good."""
    tracker = make_tracker(accept_after_s=0.4, recheck_s=0.0)
    feed = Feed(tracker, fps=30.0)
    for _ in range(3):
        assert feed(det("AH", 100, 200, conf=0.8)) == {}
    for _ in range(12):
        shown = feed(det("4H", 100, 200, conf=0.93))
    assert shown == {"1": ("4H",)} and tracker.hands()["1"].needs_confirmation == (False,)


def test_a_card_slid_past_another_seat_is_not_accepted_there_at_a_fast_camera():
    tracker = make_tracker(accept_after_s=0.4)
    feed = Feed(tracker, fps=30.0)
    for _ in range(6):                              # 0.2 s across the banker's zone
        assert feed(det("KS", 100, 50)) == {}
    for _ in range(15):
        shown = feed(det("KS", 100, 200))
    assert shown == {"1": ("KS",)}


def test_a_slow_camera_accepts_as_soon_as_k_frames_have_passed():
    feed = Feed(make_tracker(accept_after_s=0.4), fps=2.0)   # k frames are 1.5 s here
    card = det("7H", 100, 200)
    assert feed(card) == {} and feed(card) == {}
    assert feed(card) == {"1": ("7H",)}


def test_readings_just_after_acceptance_that_name_another_card_mark_it_to_confirm():
    tracker = make_tracker(accept_after_s=0.0, recheck_s=1.5)
    feed = Feed(tracker, fps=10.0)
    for _ in range(3):
        feed(det("AH", 100, 200, conf=0.8))
    assert tracker.hands()["1"].needs_confirmation == (False,)
    for _ in range(4):
        shown = feed(det("4H", 100, 200, conf=0.93))
    hand = tracker.hands()["1"]
    assert shown == {"1": ("AH",)}                  # the round has AH on record: a person decides
    assert hand.needs_confirmation == (True,) and hand.rereads == (Card.parse("4H"),)


def test_the_next_card_over_its_index_long_after_acceptance_raises_no_doubt():
    """The demo's QD, read 10D once the next card covered half its index: seconds later."""
    tracker = make_tracker(accept_after_s=0.0, recheck_s=1.5)
    feed = Feed(tracker, fps=10.0)
    for _ in range(20):                             # 2 s of clear reads
        feed(det("QD", 100, 200, conf=0.9))
    for _ in range(100):                            # 10 s of a half-covered index
        feed(det("10D", 100, 200, conf=0.9))
    hand = tracker.hands()["1"]
    assert hand.codes == ("QD",) and hand.needs_confirmation == (False,) and hand.rereads == (None,)


def test_no_recheck_under_the_old_rules_or_on_a_clock_that_stood_still():
    """Review2: a replay with recheck_s 0 (rules 3), or two frames of one time stamp, raised
    re-reads the live round never had."""
    for recheck_s, times in ((0.0, [0.1 * i for i in range(1, 9)]), (1.5, [0.3, 0.4, 0.5] + [0.5] * 5)):
        tracker = make_tracker(accept_after_s=0.0, recheck_s=recheck_s)
        for frame_no, (ts, code) in enumerate(zip(times, ["7H"] * 3 + ["7D"] * 5), 1):
            tracker.update([det(code, 100, 200)], frame_no, ts, SIZE)
        hand = tracker.hands()["1"]
        assert hand.codes == ("7H",) and hand.rereads == (None,), recheck_s
