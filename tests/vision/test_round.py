"""The round state machine, driven by scripted seat hands (no camera, no model)."""

from __future__ import annotations

import threading
from decimal import Decimal
from pathlib import Path

import pytest

from scoring.cards import Card
from scoring.settle import Bet
from vision.round import AlertCode, EventKind, RoundError, RoundEvent, RoundMachine, RoundState
from vision.table import table_config_from_dict
from vision.tracker import SeatHand

BANKER = "AS 2H 3D 4C 5S".split()      # bull 5
SEAT1 = "KH QH JH 10H 9H".split()      # bull 9
SEAT2 = "6C 7C 8C 9C 10C".split()      # no bull


def make_config(players=("1", "2"), rules="cambodia"):
    seats = [{"name": "banker", "polygon": [[0, 0], [1, 0], [1, 0.5], [0, 0.5]]}]
    width = 1 / len(players)
    for i, name in enumerate(players):
        seats.append({"name": name, "polygon": [[i * width, 0.5], [(i + 1) * width, 0.5],
                                                [(i + 1) * width, 1], [i * width, 1]]})
    return table_config_from_dict({"table_id": "t1", "rules": rules, "seats": seats})


def view(conf=0.9, unsure=(), **seats):
    """The tracker's view: seat -> accepted cards; cards in ``unsure`` need confirmation."""
    out = {}
    for seat, codes in seats.items():
        seat = "banker" if seat == "banker" else seat.removeprefix("s")
        cards = tuple(Card.parse(c) for c in codes)
        out[seat] = SeatHand(seat, cards, tuple(conf for _ in cards), tuple(c in unsure for c in codes))
    return out


class Clock:
    """Feeds frames with increasing numbers and times, collecting every published event."""

    def __init__(self, machine):
        self.machine, self.frame_no, self.events = machine, 0, []
        machine.add_listener(self.events.append)

    def feed(self, hands):
        self.frame_no += 1
        return self.machine.observe(hands, self.frame_no, 1000.0 + self.frame_no / 10)

    def deal(self, **final):
        """Deal round-robin one card at a time (seat 1, seat 2, banker), one frame per card."""
        shown = {seat: [] for seat in final}
        for i in range(5):
            for seat in final:
                shown[seat].append(final[seat][i])
                self.feed(view(**shown))


def kinds(events):
    return [e.kind for e in events]


def alerts(events):
    return [(e.data["code"], e.seat, e.card) for e in events if e.kind == EventKind.alert]


def bets(**amounts):
    return {seat.removeprefix("s"): Bet(seat.removeprefix("s"), Decimal(a), "double") for seat, a in amounts.items()}


def test_a_card_accepted_after_the_next_one_is_recorded_in_its_dealt_place():
    """The tracker lists a seat's cards in the order first seen; a card it accepts late
    (read doubtfully at first) goes into the round's record in that place, not at the end."""
    machine = RoundMachine(make_config())
    clock = Clock(machine)
    clock.feed(view(s1=["KH"]))
    clock.feed(view(s1=["KH", "2D"]))
    late = clock.feed(view(s1=["KH", "QD", "2D"]))
    assert [(e.kind, e.card, e.data.get("count")) for e in late] == [(EventKind.card_accepted, "QD", 3)]
    assert machine.hands["1"].codes == ("KH", "QD", "2D")
    clock.feed(view(s1=["KH", "QD", "2D", "10S"]))
    assert machine.hands["1"].codes == ("KH", "QD", "2D", "10S")


def test_a_round_goes_idle_dealing_complete_settled_cleared():
    machine = RoundMachine(make_config())
    clock = Clock(machine)
    assert machine.state == RoundState.idle
    assert clock.feed({}) == []

    first = clock.feed(view(s1=SEAT1[:1]))
    assert kinds(first) == [EventKind.round_start, EventKind.card_accepted]
    assert machine.state == RoundState.dealing and machine.round_no == 1
    assert (first[1].seat, first[1].card, first[1].frame_no, first[1].ts) == ("1", "KH", 2, 1000.2)

    shown = {"s1": SEAT1[:1], "s2": [], "banker": []}
    for i in range(5):
        for seat, cards in (("s1", SEAT1), ("s2", SEAT2), ("banker", BANKER)):
            shown[seat] = cards[:i + 1]
            events = clock.feed(view(**shown))
            if (seat, i) != ("banker", 4):
                assert machine.state == RoundState.dealing
    assert kinds(events) == [EventKind.card_accepted, EventKind.round_complete]
    assert machine.state == RoundState.complete
    assert events[-1].data["seats"] == {"banker": BANKER, "1": SEAT1, "2": SEAT2}
    assert machine.hands["1"].codes == tuple(SEAT1)

    assert machine.can_settle(bets(s1=100, s2=50))
    settled, settlement = machine.settle(bets(s1=100, s2=50), ts=2000.0, actor="dealer7")
    assert kinds(settled) == [EventKind.round_settled]
    assert machine.state == RoundState.settled
    assert settlement.line("1").outcome == "win" and settlement.line("2").outcome == "lose"
    assert settlement.line("1").net == Decimal("190.00")           # double: bull 9 pays x2, 5 % commission
    assert sum(line.net for line in settlement.lines) + settlement.banker_net + settlement.total_commission == 0
    assert settled[0].data["bets"]["1"]["amount"] == "100" and settled[0].data["actor"] == "dealer7"
    assert settled[0].frame_no == clock.frame_no

    leaving = clock.feed(view(s2=SEAT2))  # the dealer collects: no alert after settlement
    assert set(kinds(leaving)) == {EventKind.card_removed} and alerts(leaving) == []
    done = clock.feed({})
    assert kinds(done)[-1] == EventKind.round_cleared
    assert machine.state == RoundState.cleared
    assert done[-1].data["previous_state"] == "settled"
    assert done[-1].data["seats"]["banker"] == BANKER  # the record travels with the clear

    clock.feed(view(banker=["KS"]))
    assert machine.round_no == 2 and machine.state == RoundState.dealing
    assert machine.hands == {"banker": machine.hands["banker"]} and machine.hands["banker"].codes == ("KS",)


def test_every_event_is_published_in_order_and_round_trips_as_json():
    machine = RoundMachine(make_config())
    clock = Clock(machine)
    clock.deal(s1=SEAT1, s2=SEAT2, banker=BANKER)
    assert clock.events[0].kind == EventKind.round_start
    assert sum(e.kind == EventKind.card_accepted for e in clock.events) == 15
    assert [e.frame_no for e in clock.events] == sorted(e.frame_no for e in clock.events)
    for event in clock.events:
        assert RoundEvent.from_json(event.to_json()) == event
    with pytest.raises(RoundError, match="is not a round event"):
        RoundEvent.from_json({"kind": "explosion", "round_no": 1, "ts": 0})


def test_duplicate_card_in_a_single_deck_game_is_an_alert_and_blocks_settlement():
    machine = RoundMachine(make_config())
    clock = Clock(machine)
    events = clock.feed(view(s1=["KH"], s2=["KH"]))
    assert alerts(events) == [(AlertCode.duplicate_card, "2", "KH")]
    assert events[-1].data["seats"] == ["1", "2"]
    clock.deal(s1=SEAT1, s2=["KH"] + SEAT2[1:], banker=BANKER)
    assert machine.state == RoundState.complete
    with pytest.raises(RoundError, match="KH is on seat 1 and seat 2"):
        machine.verify_settle(bets(s1=10, s2=10))


def test_a_sixth_card_is_an_alert_and_blocks_settlement():
    machine = RoundMachine(make_config())
    clock = Clock(machine)
    clock.deal(s1=SEAT1, s2=SEAT2, banker=BANKER)
    events = clock.feed(view(s1=SEAT1 + ["2C"], s2=SEAT2, banker=BANKER))
    assert alerts(events) == [("too_many_cards", "1", "2C")]
    assert events[-1].data["count"] == 6
    assert not machine.can_settle(bets(s1=10))
    with pytest.raises(RoundError, match="seat 1 has 6 cards, not 5"):
        machine.verify_settle(bets(s1=10))


def test_a_card_moving_between_seats_is_an_alert_and_follows_the_card():
    machine = RoundMachine(make_config())
    clock = Clock(machine)
    clock.feed(view(s1=["KH", "QH"], s2=["6C"]))
    events = clock.feed(view(s1=["KH"], s2=["6C", "QH"]))
    assert alerts(events) == [("card_moved", "2", "QH")]
    accepted = next(e for e in events if e.kind == EventKind.card_accepted)
    assert accepted.data["moved_from"] == "1"
    assert machine.hands["1"].codes == ("KH",) and machine.hands["2"].codes == ("6C", "QH")
    assert EventKind.card_removed not in kinds(events)  # a move is not also a removal


def test_a_card_removed_before_settlement_is_an_alert_but_stays_on_record():
    machine = RoundMachine(make_config())
    clock = Clock(machine)
    clock.deal(s1=SEAT1, s2=SEAT2, banker=BANKER)
    events = clock.feed(view(s1=SEAT1[:4], s2=SEAT2, banker=BANKER))
    assert kinds(events) == [EventKind.card_removed, EventKind.alert]
    assert alerts(events) == [("card_removed_before_settlement", "1", "9H")]
    assert machine.hands["1"].codes == tuple(SEAT1)  # settlement is on what was dealt
    assert machine.state == RoundState.complete
    assert clock.feed(view(s1=SEAT1, s2=SEAT2, banker=BANKER)) == []  # it came back: nothing new


def test_a_table_that_looks_empty_before_settlement_does_not_end_the_round():
    """The dealer's arm over the cards, a camera back on a dark frame or a sweep before Settle:
    the round stays open with its record (so its bets are not lost) until settled or voided."""
    machine = RoundMachine(make_config(), hold_unsettled=True)
    clock = Clock(machine)
    clock.deal(s1=SEAT1, s2=SEAT2, banker=BANKER)
    events = clock.feed({})
    assert len(alerts(events)) == 15 and EventKind.round_cleared not in kinds(events)
    assert machine.state == RoundState.complete and machine.round_no == 1
    assert machine.absent_cards == {(seat, c) for seat, cards in (("1", SEAT1), ("2", SEAT2), ("banker", BANKER))
                                    for c in cards}
    assert clock.feed(view(s1=SEAT1, s2=SEAT2, banker=BANKER)) == []   # uncovered: the same round, as it was
    assert machine.absent_cards == set() and machine.round_no == 1
    machine.settle(bets(s1=10), ts=5000.0)                              # settled on what was dealt
    assert machine.state == RoundState.settled


def test_cards_swept_before_settlement_leave_the_round_to_a_void_and_the_redeal_is_the_next_round():
    machine = RoundMachine(make_config(), hold_unsettled=True)
    clock = Clock(machine)
    clock.feed(view(s1=SEAT1[:3], banker=BANKER[:2]))                   # a misdeal, swept
    clock.feed({})
    assert machine.state == RoundState.dealing and machine.round_no == 1
    with pytest.raises(RoundError, match="settle or void it before clearing"):
        machine.clear()
    machine.void("sup1", "misdeal")
    clock.feed({})
    assert machine.state == RoundState.cleared
    clock.feed(view(s1=SEAT1[:1]))
    assert machine.round_no == 2 and machine.hands["1"].codes == tuple(SEAT1[:1])


def test_a_card_covered_for_a_while_is_seen_again_and_the_screen_hears_of_it():
    machine = RoundMachine(make_config(), hold_unsettled=True)
    clock = Clock(machine)
    views = []
    machine.add_view_listener(lambda: views.append(set(machine.absent_cards)))
    clock.feed(view(s1=SEAT1[:1]))
    events = clock.feed({})                                              # the dealer's arm over the first card
    assert alerts(events) == [("card_removed_before_settlement", "1", "KH")]
    assert machine.state == RoundState.dealing
    assert clock.feed(view(s1=SEAT1[:1])) == [] and views == [set()]     # no event, but the view changed
    assert machine.round_no == 1 and machine.hands["1"].codes == ("KH",)


def test_where_nobody_settles_an_empty_table_ends_the_round_with_alerts():
    machine = RoundMachine(make_config())              # a replay of a frame folder
    clock = Clock(machine)
    clock.deal(s1=SEAT1, s2=SEAT2, banker=BANKER)
    events = clock.feed({})
    assert len(alerts(events)) == 15
    assert events[-1].kind == EventKind.round_cleared and events[-1].data["previous_state"] == "complete"
    assert machine.state == RoundState.cleared


def test_complete_reopens_when_a_new_seat_gets_a_card():
    machine = RoundMachine(make_config(players=("1", "2", "3")))
    clock = Clock(machine)
    clock.deal(s1=SEAT1, banker=BANKER)
    assert machine.state == RoundState.complete
    events = clock.feed(view(s1=SEAT1, banker=BANKER, s3=["6C"]))
    assert events[0].data["reopened"] is True and machine.state == RoundState.dealing
    shown = ["6C"]
    for card in SEAT2[1:]:
        shown.append(card)
        events = clock.feed(view(s1=SEAT1, banker=BANKER, s3=shown))
    assert kinds(events)[-1] == EventKind.round_complete


def test_named_active_seats_decide_completeness():
    machine = RoundMachine(make_config(players=("1", "2", "3")))
    machine.set_active_seats(["1", "3"])
    clock = Clock(machine)
    clock.deal(s1=SEAT1, banker=BANKER)
    assert machine.state == RoundState.dealing  # seat 3 holds a bet and has no cards yet
    clock.feed(view(s1=SEAT1, banker=BANKER, s3=SEAT2))
    assert machine.state == RoundState.complete
    with pytest.raises(RoundError, match="seat '9' is not at table t1"):
        machine.set_active_seats(["9"])


def test_needs_confirmation_blocks_settlement_until_confirmed():
    machine2 = RoundMachine(make_config())
    clock2 = Clock(machine2)
    shown = {"s1": [], "banker": []}
    for i in range(5):
        shown["s1"].append(SEAT1[i])
        shown["banker"].append(BANKER[i])
        clock2.feed(view(unsure=("JH",), **shown))
    assert machine2.hands["1"].needs_confirmation == (False, False, True, False, False)
    with pytest.raises(RoundError, match="card JH was read with low confidence; confirm or correct it"):
        machine2.verify_settle(bets(s1=10))
    event = machine2.correct_card("1", "JH", "JH", actor="sup1", reason="checked on camera")
    assert event.data["action"] == "confirmed"
    assert machine2.can_settle(bets(s1=10))


def test_corrections_replace_add_and_remove_and_the_misread_is_not_read_again():
    machine = RoundMachine(make_config())
    clock = Clock(machine)
    misread = SEAT1[:4] + ["8H"]
    clock.deal(s1=misread, s2=SEAT2, banker=BANKER)
    event = machine.correct_card("1", "8H", "9H", actor="sup1", reason="reflection")
    assert (event.kind, event.seat, event.card) == (EventKind.card_corrected, "1", "9H")
    assert event.data == {"old": "8H", "new": "9H", "action": "replaced", "actor": "sup1", "reason": "reflection",
                          "state": "complete"}
    assert clock.feed(view(s1=misread, s2=SEAT2, banker=BANKER)) == []  # the camera still reads 8H: ignored
    assert machine.hands["1"].codes == tuple(SEAT1)

    machine.correct_card("2", "10C", None, actor="sup1", reason="stray card")
    assert machine.hands["2"].codes == tuple(SEAT2[:4])
    machine.correct_card("2", None, "10C", actor="sup1", reason="put back")
    assert machine.hands["2"].codes == tuple(SEAT2)
    with pytest.raises(RoundError, match="seat 2 has no QS"):
        machine.correct_card("2", "QS", "QD", actor="sup1", reason="x")
    with pytest.raises(RoundError, match="actor and reason"):
        machine.correct_card("2", "6C", "6D", actor="", reason="x")
    with pytest.raises(RoundError, match="seat 2 already has 7C"):
        machine.correct_card("2", "6C", "7C", actor="sup1", reason="x")


def test_void_and_clear_rules():
    machine = RoundMachine(make_config())
    clock = Clock(machine)
    with pytest.raises(RoundError, match="no round in progress to void"):
        machine.void("sup1", "test")
    with pytest.raises(RoundError, match="no round on the table to settle"):
        machine.verify_settle()
    clock.feed(view(s1=["KH"]))
    with pytest.raises(RoundError, match="settle or void it before clearing"):
        machine.clear()
    event = machine.void("sup1", "misdeal")
    assert (event.kind, machine.state, event.data["reason"]) == (EventKind.round_void, RoundState.void, "misdeal")
    with pytest.raises(RoundError, match="was voided"):
        machine.verify_settle()
    assert clock.feed(view(s1=["KH"])) == []  # voided cards still on the table: nothing happens
    cleared = clock.feed({})
    assert kinds(cleared) == [EventKind.round_cleared] and machine.state == RoundState.cleared


def test_manual_clear_ignores_left_over_cards_until_they_leave():
    machine = RoundMachine(make_config())
    clock = Clock(machine)
    clock.deal(s1=SEAT1, s2=SEAT2, banker=BANKER)
    machine.settle(bets(s1=10), ts=5000.0)
    events = machine.clear(ts=5001.0, actor="dealer7")
    assert events[0].data["manual"] is True and events[0].is_manual
    assert clock.feed(view(s1=SEAT1, s2=SEAT2, banker=BANKER)) == []  # left-overs start no round
    assert machine.state == RoundState.cleared
    clock.feed(view(s1=SEAT1[:2]))                                     # most are swept away
    # beside the left-overs one new card waits (QA49 watch H2), the second starts round 2
    assert clock.feed(view(s1=SEAT1[:2], s2=["KS"])) == [] and machine.state == RoundState.cleared
    events = clock.feed(view(s1=SEAT1[:2], s2=["KS", "QS"]))
    assert kinds(events) == [EventKind.round_start, EventKind.card_accepted, EventKind.card_accepted]
    assert machine.hands == {"2": machine.hands["2"]} and machine.hands["2"].codes == ("KS", "QS")


def test_a_new_deal_over_a_settled_round_starts_the_next_round():
    machine = RoundMachine(make_config())
    clock = Clock(machine)
    clock.deal(s1=SEAT1, s2=SEAT2, banker=BANKER)
    machine.settle(bets(s1=10), ts=5000.0)
    events = clock.feed(view(s1=SEAT1, banker=BANKER, s2=["KS"]))  # seat 2 swept, a new card dealt
    assert alerts(events) == [] and machine.round_no == 1            # alone: it waits, no alarm yet
    events = clock.feed(view(s1=SEAT1, banker=BANKER, s2=["KS", "QS"]))          # the deal goes on
    assert kinds(events)[-4:] == [EventKind.round_cleared, EventKind.round_start, EventKind.card_accepted,
                                  EventKind.card_accepted]
    assert events[-4].data["reason"] == "new card dealt" and events[-4].data["new_cards"] == [["2", "KS"], ["2", "QS"]]
    assert machine.round_no == 2 and machine.hands["2"].codes == ("KS", "QS")
    assert "1" not in machine.hands  # the old hands are left-overs, not part of round 2


def test_settle_refuses_bad_bets_with_reasons():
    machine = RoundMachine(make_config())
    clock = Clock(machine)
    clock.deal(s1=SEAT1, banker=BANKER)
    with pytest.raises(RoundError, match="no bets given"):
        machine.verify_settle({})
    with pytest.raises(RoundError, match="bet on seat 'banker': that is not a player seat"):
        machine.verify_settle({"banker": Bet("banker", Decimal(5), "double")})
    with pytest.raises(RoundError, match="seat 2 has 0 cards"):
        machine.verify_settle(bets(s2=10))
    with pytest.raises(RoundError, match="cannot be settled: bet kind .triple. is not offered"):
        machine.settle({"1": Bet("1", Decimal(5), "triple")})
    assert machine.state == RoundState.complete  # a refused settlement changes nothing
    events, _ = machine.settle(bets(s1=10))
    with pytest.raises(RoundError, match="already settled"):
        machine.settle(bets(s1=10))


def test_settling_while_dealing_completes_the_round_first():
    machine = RoundMachine(make_config())
    clock = Clock(machine)
    clock.deal(s1=SEAT1, banker=BANKER)
    clock.feed(view(s1=SEAT1, banker=BANKER, s2=["6C"]))  # seat 2 joined late: dealing again
    assert machine.state == RoundState.dealing
    events, _ = machine.settle(bets(s1=10), ts=7000.0)
    assert kinds(events) == [EventKind.round_complete, EventKind.round_settled]
    assert events[0].data["by"] == "settlement"


def test_kiosk_thread_and_camera_thread_publish_in_one_order():
    machine = RoundMachine(make_config())
    clock = Clock(machine)
    clock.deal(s1=SEAT1, s2=SEAT2, banker=BANKER)
    full = view(s1=SEAT1, s2=SEAT2, banker=BANKER)
    barrier = threading.Barrier(2)

    def kiosk():
        barrier.wait()
        machine.correct_card("1", "9H", "9H", actor="sup", reason="ok")
        machine.settle(bets(s1=10))

    thread = threading.Thread(target=kiosk)
    thread.start()
    barrier.wait()
    for _ in range(200):
        clock.feed(full)
    thread.join()
    assert machine.state == RoundState.settled
    published = [e for e in clock.events if e.kind in (EventKind.card_corrected, EventKind.round_settled)]
    assert [e.kind for e in published] == [EventKind.card_corrected, EventKind.round_settled]


def test_a_second_copy_accepted_late_is_recorded_in_its_own_dealt_place(tmp_path):
    """Several decks: a seat can hold two copies of one card.  The second AS, read
    doubtfully until the next card landed, belongs third (where it was dealt), not
    before the first AS because the first copy's place was taken for it."""
    preset = tmp_path / "two-decks.toml"
    preset.write_text((Path(__file__).resolve().parents[2] / "scoring" / "presets" / "cambodia.toml")
                      .read_text().replace("decks = 1", "decks = 2"))
    machine = RoundMachine(make_config(rules=str(preset)))
    assert machine.decks == 2
    clock = Clock(machine)
    clock.feed(view(s1=["AS"]))
    clock.feed(view(s1=["AS", "2D"]))
    clock.feed(view(s1=["AS", "2D", "5C"]))
    late = clock.feed(view(s1=["AS", "2D", "AS", "5C"]))
    assert [(e.kind, e.card) for e in late] == [(EventKind.card_accepted, "AS")]
    assert machine.hands["1"].codes == ("AS", "2D", "AS", "5C")


def test_a_change_its_gate_refuses_is_undone_and_no_other_listener_hears_it():
    """The kiosk's audit log is the machine's gate: a settle or a frame it cannot record
    must leave the round as it was, and the recorder must not hear of it either."""
    machine = RoundMachine(make_config())
    clock = Clock(machine)
    refusing = []

    def gate(events):
        if refusing:
            raise OSError("disk full")

    machine.add_gate(gate)
    clock.deal(s1=SEAT1, s2=SEAT2, banker=BANKER)
    assert machine.state == RoundState.complete
    heard = len(clock.events)

    refusing.append(True)
    with pytest.raises(OSError):
        machine.settle(bets(s1=100, s2=50), ts=2000.0, actor="d1")
    assert machine.state == RoundState.complete and machine.settlement is None
    with pytest.raises(OSError):
        machine.correct_card("1", SEAT1[0], SEAT1[0], actor="s1", reason="checked")
    with pytest.raises(OSError):
        clock.feed({})                   # the table swept: not cleared, the round is still on record
    assert machine.state == RoundState.complete and machine.hands["1"].codes == tuple(SEAT1)
    assert len(clock.events) == heard

    refusing.clear()
    events, settlement = machine.settle(bets(s1=100, s2=50), ts=2001.0, actor="d1")
    assert machine.state == RoundState.settled and kinds(events) == [EventKind.round_settled]
    assert kinds(clock.events[heard:]) == [EventKind.round_settled]
