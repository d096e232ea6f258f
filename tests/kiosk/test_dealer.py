"""The dealer's table: bets, what the screen shows, settle, corrections, void, history, SSE."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from kiosk.audit import AuditError, AuditType
from kiosk.table_service import TableError
from kiosk_testing import hand, make_table

BANKER_BULL_8 = "4S 6H QD 9C 9H"       # bull Q-6-4, points 9+9 -> 8
NIU_NIU = "KS QS JS 10S 10H"
BULL_5 = "AS 2S 3D 4D 5C"              # bull A-4-5, points 2+3 -> 5


def seat(state, name):
    return next(s for s in state["seats"] if s["name"] == name)


def deal(service, frame=1, banker=BANKER_BULL_8, **players):
    hands = [hand("banker", banker)] + [hand(s.removeprefix("s"), text) for s, text in players.items()]
    return service.observe(hands, frame)


def bet(dealer, seat_name, amount, kind="double", status=200):
    return dealer.post("/dealer/api/bet", {"seat": seat_name, "amount": amount, "kind": kind}, status)


# ------------------------------------------------------------------ bets


def test_bets_are_recorded_and_shown_before_the_deal(dealer, audit):
    bet(dealer, "1", "100", "double")
    bet(dealer, "2", "25.50", "equal")
    state = dealer.state()
    assert seat(state, "1")["bet"] == {"amount": "100.00", "kind": "double"}
    assert seat(state, "2")["bet"] == {"amount": "25.50", "kind": "equal"}
    last = audit.last()
    assert last.type == AuditType.BETS_PLACED and last.actor == "dealer1"
    assert last.data["bets"]["2"] == {"amount": "25.50", "kind": "equal"}
    bet(dealer, "2", "", "equal")
    assert seat(dealer.state(), "2")["bet"] is None


@pytest.mark.parametrize("amount,needle", [("abc", "not an amount"), ("-5", "positive"), ("1.005", "2 decimals"),
                                           ("1000000000000", "larger than"),
                                           # a decimal comma once became 1,050.00; an exponent 100,000.00
                                           ("10,50", "not an amount"), ("1,0,0", "not an amount"),
                                           ("1e5", "not an amount"), ("1_000", "not an amount")])
def test_bad_bet_amounts_are_refused_with_the_reason(dealer, amount, needle):
    body = bet(dealer, "1", amount, status=409)
    assert needle in body["error"]


@pytest.mark.parametrize("amount, placed", [("1,000.50", "1000.50"), ("25.5", "25.50"), (".5", "0.50"),
                                            ("100", "100.00")])
def test_amounts_are_read_as_typed(dealer, amount, placed):
    bet(dealer, "1", amount)
    assert seat(dealer.state(), "1")["bet"]["amount"] == placed


def test_a_stake_finer_than_the_tables_money_unit_is_refused_when_typed(app_config, tmp_path):
    """At a table paying in chips of 5, a stake of 12 could never be settled: say so at
    the bet, not once the cards are down and the round cannot be paid."""
    from kiosk.app import create_app
    from scoring.rules import PRESET_DIR

    rules = tmp_path / "fives.toml"
    rules.write_text((PRESET_DIR / "cambodia.toml").read_text().replace('name = "cambodia"', 'name = "fives"')
                     .replace('quantum = "0.01"', 'quantum = "5"'))
    app = create_app({**app_config, "TABLE": make_table(rules=str(rules))})
    service = app.extensions["niuniu"].service
    try:
        with pytest.raises(TableError, match="12.00 is not a whole number of the table's money unit 5"):
            service.set_bet("1", "12", "equal", "dealer1")
        assert service.set_bet("1", "15", "equal", "dealer1")["1"].amount == 15
    finally:
        service.stop()
        service.audit.close()


def test_unknown_seat_and_kind_are_refused(dealer):
    assert "not a player seat" in bet(dealer, "banker", "10", status=409)["error"]
    assert "not a player seat" in bet(dealer, "9", "10", status=409)["error"]
    assert "not offered by cambodia" in bet(dealer, "1", "10", kind="triple", status=409)["error"]


def test_bets_close_when_the_first_card_lands(dealer, service):
    bet(dealer, "1", "100")
    service.observe([hand("banker", "4S")], 1)
    body = bet(dealer, "2", "50", status=409)
    assert "bets are closed" in body["error"]


def limited_table():
    from kiosk_testing import table_dict
    from vision.table import table_config_from_dict
    return table_config_from_dict({**table_dict(), "bet_limits": {"minimum": 25, "maximum": 5000}})


@pytest.mark.parametrize("table", [limited_table()])
def test_a_stake_outside_the_table_limits_is_refused_and_the_limits_are_shown(dealer, client, audit):
    before = audit.last().seq
    assert bet(dealer, "1", "10", status=409)["error"] == \
        "bet on seat 1: 10.00 is below the table minimum (25.00 to 5,000.00 USD)"   # grouped (QA48 M3)
    assert "above the table maximum" in bet(dealer, "1", "50000", status=409)["error"]   # a zero too many
    assert audit.last().seq == before and seat(dealer.state(), "1")["bet"] is None
    bet(dealer, "1", "25")
    bet(dealer, "2", "5000")
    assert dealer.state()["table"]["bet_limits"] == {"minimum": "25.00", "maximum": "5000.00"}
    page = client.get("/dealer/").get_data(as_text=True)
    assert "Table limits 25.00 to 5,000.00 USD" in page    # to the money unit, grouped (QA48 M2, M3)


def test_same_bets_places_the_last_settled_rounds_stakes_on_seats_without_one(dealer, service, audit):
    assert dealer.state()["round"]["repeat_from"] is None          # nothing settled yet
    bet(dealer, "1", "100", "double")
    bet(dealer, "2", "50", "equal")
    deal(service, s1=NIU_NIU, s2=BULL_5)
    assert "bets are closed" in dealer.post("/dealer/api/repeat-bets", status=409)["error"]
    dealer.post("/dealer/api/settle")
    service.observe([], 2)                                           # cards off: bets open for round 2
    assert dealer.state()["round"]["repeat_from"] == 1
    bet(dealer, "2", "70", "equal")                                  # seat 2 changed its stake first
    state = dealer.post("/dealer/api/repeat-bets")["state"]
    assert seat(state, "1")["bet"] == {"amount": "100.00", "kind": "double"}
    assert seat(state, "2")["bet"] == {"amount": "70.00", "kind": "equal"}   # kept, not repeated over
    last = audit.last()
    assert last.type == AuditType.BETS_PLACED and last.data["change"] == {"repeated_from": 1, "seats": ["1"]}
    assert last.data["for_round"] == 2
    assert state["round"]["repeat_from"] is None                     # every seat of round 1 has a bet now
    assert "no bets to repeat" in dealer.post("/dealer/api/repeat-bets", status=409)["error"]


# ------------------------------------------------------------------ a round on screen


def test_round_shows_categories_bull_outcome_and_amounts(dealer, service, audit):
    bet(dealer, "1", "100", "double")
    bet(dealer, "2", "50", "equal")
    deal(service, s1=NIU_NIU, s2=BULL_5)
    state = dealer.state()
    assert state["round"]["state"] == "complete" and state["round"]["can_settle"]
    banker, one, two = seat(state, "banker"), seat(state, "1"), seat(state, "2")
    assert banker["result"]["label"] == "Bull 8"
    assert sorted(banker["result"]["bull"]) == sorted(["4S", "6H", "QD"])
    assert sorted(banker["result"]["rest"]) == ["9C", "9H"]
    assert one["result"]["label"] == "Niu Niu" and one["outcome"] == "win"
    assert one["line"]["action"] == "pay" and one["line"]["amount"] == "285.00"
    assert one["line"]["commission"] == "15.00" and not one["line_final"]
    assert two["result"]["label"] == "Bull 5" and two["outcome"] == "lose"
    assert two["line"]["action"] == "collect" and two["line"]["amount"] == "50.00"
    assert all(c["red"] == (c["suit"] in "HD") for c in banker["cards"])

    state = dealer.post("/dealer/api/settle")["state"]
    assert state["round"]["state"] == "settled"
    assert seat(state, "1")["line_final"] and seat(state, "1")["line"]["net"] == "285.00"
    assert state["totals"] == {"banker_net": "-250.00", "commission": "15.00", "house_net": "-235.00", "final": True}
    settled = [r for r in audit.records(round_no=1) if r.type in (AuditType.ROUND_SETTLED, AuditType.SETTLEMENT_LINE)]
    assert [r.type for r in settled] == ["round_settled", "settlement_line", "settlement_line"]
    assert all(r.actor == "dealer1" for r in settled)
    lines = {r.data["seat"]: r.data for r in settled[1:]}
    assert lines["1"]["net"] == "285.00" and lines["2"]["net"] == "-50.00"
    total = sum(Decimal(line["net"]) for line in lines.values())
    s = settled[0].data["settlement"]
    assert total + Decimal(s["banker_net"]) + Decimal(s["total_commission"]) == 0


def test_every_accepted_card_is_logged_with_confidence_and_frame(dealer, service, audit):
    bet(dealer, "1", "10")
    deal(service, frame=77, s1=NIU_NIU)
    cards = [r for r in audit.records() if r.type == AuditType.CARD_ACCEPTED]
    assert len(cards) == 10
    assert {(r.data["seat"], r.data["card"]) for r in cards} >= {("banker", "QD"), ("1", "10H")}
    assert all(r.data["confidence"] == 0.95 and r.data["frame_no"] == 77 and r.round_no == 1 for r in cards)


def test_settle_is_refused_with_the_reason_and_button_disabled(dealer, service):
    body = dealer.post("/dealer/api/settle", status=409)
    assert "no bets" in body["error"]
    bet(dealer, "1", "100")
    service.observe([hand("banker", BANKER_BULL_8), hand("1", "KS QS JS")], 1)
    state = dealer.state()
    assert not state["round"]["can_settle"]
    assert "seat 1 has 3 cards" in state["round"]["settle_blocker"]
    assert "seat 1 has 3 cards" in dealer.post("/dealer/api/settle", status=409)["error"]


def test_low_confidence_card_must_be_confirmed_before_settling(dealer, service, audit):
    bet(dealer, "1", "100")
    service.observe([hand("banker", BANKER_BULL_8), hand("1", NIU_NIU, confirm=(4,))], 1)
    state = dealer.state()
    assert seat(state, "1")["cards"][4]["confirm"] is True
    assert "low confidence" in state["round"]["settle_blocker"]
    dealer.post("/dealer/api/correct", {"seat": "1", "old": "10H", "new": "10H"})
    assert dealer.state()["round"]["can_settle"]
    corrected = audit.last()
    assert corrected.type == AuditType.CARD_CORRECTED and corrected.data["action"] == "confirmed"


# ------------------------------------------------------------------ corrections


def test_dealer_corrects_a_misread_before_settlement(dealer, service, audit):
    bet(dealer, "2", "50", "equal")
    deal(service, s2=BULL_5)
    correction = {"seat": "2", "old": "5C", "new": "6C", "reason": "6 read as 5"}
    state = dealer.post("/dealer/api/correct", correction)["state"]
    assert seat(state, "2")["result"]["label"] == "Bull 6"
    rec = audit.last()
    assert rec.type == AuditType.CARD_CORRECTED and rec.actor == "dealer1"
    assert (rec.data["old"], rec.data["new"], rec.data["reason"]) == ("5C", "6C", "6 read as 5")


def test_a_card_already_on_another_seat_cannot_be_chosen(dealer, service):
    bet(dealer, "2", "50")
    deal(service, s2=BULL_5)
    body = dealer.post("/dealer/api/correct", {"seat": "2", "old": "5C", "new": "QD"}, status=409)
    assert "already on seat banker" in body["error"]


def test_missing_card_can_be_added(dealer, service):
    bet(dealer, "1", "10")
    service.observe([hand("banker", BANKER_BULL_8), hand("1", "KS QS JS 10S")], 1)
    state = dealer.post("/dealer/api/correct", {"seat": "1", "old": None, "new": "10H", "reason": "covered"})["state"]
    assert [c["code"] for c in seat(state, "1")["cards"]][-1] == "10H"
    assert state["round"]["can_settle"]


def settled_round(dealer, service):
    bet(dealer, "1", "100", "double")
    bet(dealer, "2", "50", "equal")
    deal(service, s1=NIU_NIU, s2=BULL_5)
    dealer.post("/dealer/api/settle")


def test_after_settlement_a_correction_needs_a_supervisor_pin_and_reason(dealer, service, audit):
    settled_round(dealer, service)
    body = {"seat": "2", "old": "4D", "new": "9D", "reason": "9 read as 4"}
    assert "PIN" in dealer.post("/dealer/api/correct", body, status=403)["error"]
    assert "not recognised" in dealer.post("/dealer/api/correct", {**body, "pin": "9999"}, status=403)["error"]
    assert audit.last().type == AuditType.PIN_FAILED
    assert "reason" in dealer.post("/dealer/api/correct", {**body, "pin": "4321", "reason": ""}, status=409)["error"]

    state = dealer.post("/dealer/api/correct", {**body, "pin": "4321"})["state"]
    two = seat(state, "2")  # A 2 3 9 5: bull 2-3-5, A+9 -> Niu Niu beats the banker's Bull 8
    assert two["result"]["label"] == "Niu Niu" and two["outcome"] == "win"
    assert two["line_final"] and two["line"]["net"] == "47.50" and two["line"]["action"] == "pay"
    assert state["round"]["corrected"] is True
    card, resettle = audit.records()[-2:]
    assert card.type == AuditType.CARD_CORRECTED and resettle.type == AuditType.SETTLEMENT_CORRECTED
    assert card.actor == "dealer1" and card.data["approved_by"] == "super1" and card.data["after_settlement"]
    assert (card.data["old"], card.data["new"], card.data["reason"]) == ("4D", "9D", "9 read as 4")
    assert resettle.data["old"]["lines"][1]["net"] == "-50.00"
    assert resettle.data["difference"] == {"1": "0.00", "2": "97.50"}
    banker_net = Decimal("-285.00") - Decimal("47.50") - Decimal("15.00") - Decimal("2.50")
    assert state["totals"]["banker_net"] == str(banker_net)


def test_correcting_an_older_settled_round_from_history(dealer, service, audit):
    settled_round(dealer, service)
    service.observe([], 2)  # table cleared
    state = dealer.state()
    assert state["round"]["state"] == "cleared" and state["history"][0]["round"] == 1
    dealer.post("/dealer/api/correct", {"seat": "1", "old": "10H", "new": "9S", "reason": "late dispute",
                                        "pin": "4321", "round": 1})
    history = dealer.state()["history"][0]
    assert history["corrected"] and "9S" in history["hands"]["1"]
    assert history["results"]["1"]["label"] == "Bull 9"
    # A round number typed beyond what the log can store is no round, not a crash.
    refused = dealer.post("/dealer/api/correct", {"seat": "1", "old": "9S", "new": "10H", "reason": "typo",
                                                  "pin": "4321", "round": 10**30}, status=409)
    assert "round 1000000000000000000000000000000" in refused["error"]


def test_void_needs_a_supervisor_pin_and_reason(dealer, service, audit):
    bet(dealer, "1", "100")
    service.observe([hand("banker", "4S 6H")], 1)
    assert dealer.post("/dealer/api/void", {"reason": "misdeal"}, status=403)["error"]
    assert "reason" in dealer.post("/dealer/api/void", {"reason": " ", "pin": "4321"}, status=409)["error"]
    state = dealer.post("/dealer/api/void", {"reason": "misdeal", "pin": "4321"})["state"]
    assert state["round"]["state"] == "void"
    rec = [r for r in audit.records() if r.type == AuditType.ROUND_VOID][0]
    assert rec.actor == "dealer1" and rec.data["approved_by"] == "super1" and rec.data["reason"] == "misdeal"
    assert dealer.state()["history"][0]["status"] == "void"


def test_after_a_void_the_bets_stand_for_the_deal_again_and_show_as_the_next_rounds(dealer, service, audit):
    """A void is a misdeal: the chips stay on the layout.  The screen once kept showing the
    void's stakes beside "if settled now" money while bets typed for the next round went
    unseen until Next round."""
    bet(dealer, "1", "100")
    bet(dealer, "2", "40", "equal")
    service.observe([hand("banker", "4S 6H QD 9C 9H"), hand("1", "7S 8C 5H KD 10C"), hand("2", "AS 2C 3C 4D JS")], 1)
    state = dealer.post("/dealer/api/void", {"reason": "misdeal", "pin": "4321"})["state"]
    assert state["round"]["state"] == "void" and state["totals"] is None
    assert all(s["line"] is None for s in state["seats"])          # nothing to pay on a void
    assert seat(state, "1")["bet"] == {"amount": "100.00", "kind": "double"} and seat(state, "1")["bet_pending"]
    stood = audit.last()
    assert stood.type == AuditType.BETS_PLACED and stood.data["for_round"] == 2
    assert stood.data["change"] == {"stand_from_void": 1}
    bet(dealer, "1", "50")
    bet(dealer, "2", "")
    state = dealer.state()
    assert seat(state, "1")["bet"] == {"amount": "50.00", "kind": "double"} and seat(state, "2")["bet"] is None
    service.observe([], 2)
    service.observe([hand("banker", "4S")], 3)
    assert service.snapshot()["round"]["no"] == 2 and seat(dealer.state(), "1")["bet"]["amount"] == "50.00"


def test_pin_guessing_is_throttled(dealer, service):
    bet(dealer, "1", "100")
    service.observe([hand("banker", "4S")], 1)
    for _ in range(5):
        dealer.post("/dealer/api/void", {"reason": "x", "pin": "0000"}, status=403)
    body = dealer.post("/dealer/api/void", {"reason": "x", "pin": "4321"}, status=403)
    assert "too many wrong PINs" in body["error"]


def test_next_round_clears_a_settled_round_and_reopens_bets(dealer, service):
    settled_round(dealer, service)
    state = dealer.post("/dealer/api/clear")["state"]
    assert state["round"]["state"] == "cleared" and state["round"]["bets_open"]
    # the same cards still lying there do not start a phantom round
    deal(service, frame=3, s1=NIU_NIU, s2=BULL_5)
    assert dealer.state()["round"]["state"] == "cleared"


# ------------------------------------------------------------------ history and alerts


def test_history_keeps_the_last_ten_rounds(dealer, service):
    frame = 0
    for _ in range(12):
        bet(dealer, "1", "10", "equal")
        frame += 1
        deal(service, frame=frame, s1=NIU_NIU)
        dealer.post("/dealer/api/settle")
        frame += 1
        service.observe([], frame)
    history = dealer.state()["history"]
    assert [h["round"] for h in history] == list(range(12, 2, -1))
    assert all(h["status"] == "settled" and h["results"]["1"]["label"] == "Niu Niu" for h in history)
    assert history[0]["lines"]["1"]["net"] == "9.50"


def test_duplicate_card_raises_an_alert_on_screen_and_in_the_log(dealer, service, audit):
    bet(dealer, "1", "10")
    service.observe([hand("banker", "4S 6H"), hand("1", "4S")], 1)
    alerts = dealer.state()["round"]["alerts"]
    assert alerts and alerts[0]["code"] == "duplicate_card"
    assert any(r.type == AuditType.ALERT and r.data["code"] == "duplicate_card" for r in audit.records())
    # The dealer takes the misread 4S off seat 1: the fault is gone from the screen, kept in the log.
    service.correct("1", "4S", None, "dealer1", "misread")
    assert dealer.state()["round"]["alerts"] == []
    assert sum(r.type == AuditType.ALERT for r in audit.records()) == 1


def test_a_sixth_card_alert_leaves_the_screen_once_the_hand_is_five_again(dealer, service):
    bet(dealer, "1", "10")
    service.observe([hand("banker", "4S 6H QD 9C 9H"), hand("1", "7S 8C 5H KD 10C 2D")], 1)
    assert [a["code"] for a in dealer.state()["round"]["alerts"]] == ["too_many_cards"]
    service.correct("1", "2D", None, "dealer1", "not this seat's")
    assert dealer.state()["round"]["alerts"] == []


# ------------------------------------------------------------------ live feed


def read_events(response, count):
    events, buffer = [], ""
    for chunk in response.response:
        buffer += chunk.decode() if isinstance(chunk, bytes) else chunk
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
            if "event" in fields:
                events.append(fields)
        if len(events) >= count:
            break
    response.close()
    return events


def test_sse_sends_every_state_in_order_and_status(dealer, client, service):
    bet(dealer, "1", "100")
    start = service.version
    service.observe([hand("banker", "4S")], 1)
    service.observe([hand("banker", "4S 6H")], 2)
    response = client.get(f"/live/events?since={start}", buffered=False)
    assert response.mimetype == "text/event-stream"
    events = read_events(response, 3)
    states = [e for e in events if e["event"] == "state"]
    ids = [int(e["id"].split(":")[1]) for e in states]
    assert {e["id"].split(":")[0] for e in states} == {service.run}
    assert ids == list(range(start + 1, start + 1 + len(ids))) and len(ids) >= 2
    last = json.loads(states[-1]["data"])
    assert last["round"]["state"] == "dealing"
    assert any(e["event"] == "status" for e in read_events(client.get("/live/events", buffered=False), 2))


def test_camera_offline_and_online_are_logged(service, audit):
    from vision.round import EventKind, RoundEvent
    service.on_pipeline_event(RoundEvent(EventKind.camera_offline, 0, 1.0, None, data={"reason": "unplugged"}))
    service.on_pipeline_event(RoundEvent(EventKind.camera_offline, 0, 2.0, None, data={"reason": "still"}))
    service.on_pipeline_event(RoundEvent(EventKind.camera_online, 0, 3.0, None, data={"reason": "back"}))
    kinds = [(r.type, r.actor) for r in audit.records() if r.type.startswith("camera")]
    assert kinds == [("camera_offline", "camera"), ("camera_online", "camera")]
    assert service.status()["camera"] == "online"


def test_a_mirrored_camera_and_its_mending_are_logged_once_each_for_surveillance(service, audit):
    """A tool that passes a turn on twice still leaves each turn once in the log."""
    from vision.round import EventKind, RoundEvent
    mirrored = RoundEvent(EventKind.camera_mirrored, 0, 60.0, 12, data={"reason": "looks mirrored", "log_odds": 25.0,
                                                                        "checks": 3})
    cleared = RoundEvent(EventKind.camera_mirror_cleared, 0, 150.0, 40, data={"reason": "right way round", "checks": 6})
    for event in (mirrored, mirrored, cleared, cleared):
        service.on_pipeline_event(event)
    logged = [(r.type, r.actor, r.data["frame_no"], r.data["log_odds"] if "log_odds" in r.data else None)
              for r in audit.records() if r.type.startswith("camera")]
    assert logged == [("camera_mirrored", "camera", 12, 25.0), ("camera_mirror_cleared", "camera", 40, None)]


def test_a_moved_camera_is_logged_at_each_turn_moved_lost_and_back(service, audit):
    """Moved, then covered, then put back: three records for surveillance, repeats dropped."""
    from vision.round import EventKind, RoundEvent
    moved = RoundEvent(EventKind.camera_moved, 0, 60.0, 12, data={"aim": "moved", "shift": 0.047, "inliers": 295})
    lost = RoundEvent(EventKind.camera_moved, 0, 90.0, 20, data={"aim": "lost", "shift": None, "inliers": 0})
    back = RoundEvent(EventKind.camera_move_cleared, 0, 150.0, 40, data={"aim": "aimed", "shift": 0.0})
    for event in (moved, moved, lost, back, back):
        service.on_pipeline_event(event)
    logged = [(r.type, r.data["aim"], r.data["frame_no"]) for r in audit.records() if r.type.startswith("camera")]
    assert logged == [("camera_moved", "moved", 12), ("camera_moved", "lost", 20), ("camera_move_cleared", "aimed", 40)]


def test_sse_resumes_from_last_event_id_after_a_reconnect(dealer, client, service):
    bet(dealer, "1", "100")
    mark = service.version
    service.observe([hand("banker", "4S")], 1)
    service.observe([hand("banker", "4S 6H")], 2)
    response = client.get("/live/events", headers={"Last-Event-ID": f"{service.run}:{mark}"}, buffered=False)
    ids = [int(e["id"].split(":")[1]) for e in read_events(response, 2) if e["event"] == "state"]
    assert ids[0] == mark + 1


def test_a_screen_left_open_across_a_restart_gets_the_new_kiosks_state_at_once(dealer, client, service):
    """QA47 UX F2: the restarted kiosk counts versions from 1 again; a page that had drawn
    version 500 of the old process asked for states after 500 and got none for hours."""
    bet(dealer, "1", "100")
    service.observe([hand("banker", "4S")], 1)
    for asked in ({"headers": {"Last-Event-ID": "0badc0de:500"}}, {"query_string": {"since": 500, "run": "0badc0de"}}):
        response = client.get("/live/events", buffered=False, **asked)
        [first] = [e for e in read_events(response, 2) if e["event"] == "state"][:1]
        assert first["id"] == f"{service.run}:{service.version}"
        assert json.loads(first["data"])["round"]["state"] == "dealing"
    # the same process's count is kept: nothing newer than what the screen has drawn
    response = client.get("/live/events", buffered=False, headers={"Last-Event-ID": f"{service.run}:{service.version}"})
    assert [e for e in read_events(response, 2) if e["event"] == "state"] == []


def test_a_browser_far_behind_gets_the_newest_state(dealer, client, service):
    for i in range(300):  # more changes than the feed keeps
        service.observe([hand("banker", "4S")] if i % 2 == 0 else [], i + 1)
    response = client.get("/live/events?since=1", buffered=False)
    first = [e for e in read_events(response, 1) if e["event"] == "state"][0]
    assert int(first["id"].split(":")[1]) == service.version


def test_a_failing_audit_log_stops_the_settlement_and_raises_the_alarm(dealer, service, monkeypatch):
    import sqlite3
    bet(dealer, "1", "100")
    deal(service, s1=NIU_NIU)

    def disk_full(entries):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(service.audit, "append_many", disk_full)
    body = dealer.post("/dealer/api/settle", status=400)
    assert "audit log could not be written" in body["error"]
    assert "disk is full" in service.status()["audit_error"]


def test_a_settlement_the_log_could_not_take_is_not_settled_and_can_be_settled_later(dealer, service, audit):
    import sqlite3
    bet(dealer, "1", "100")
    deal(service, s1=NIU_NIU)
    real = audit.append_many

    def disk_full(entries):
        raise sqlite3.OperationalError("database or disk is full")

    audit.append_many = disk_full
    dealer.post("/dealer/api/settle", status=400)
    state = dealer.state()
    # the screen must not show a payout that is in nobody's books
    assert state["round"]["state"] == "complete" and state["totals"]["final"] is False
    assert not seat(state, "1")["line_final"] and seat(state, "1")["bet"]["amount"] == "100.00"

    audit.append_many = real                      # space freed: the same round settles, once, on record
    state = dealer.post("/dealer/api/settle")["state"]
    assert state["round"]["state"] == "settled" and seat(state, "1")["line"]["net"] == "285.00"
    assert [r.round_no for r in audit.records(types=[AuditType.ROUND_SETTLED])] == [1]


def test_a_card_the_log_could_not_take_is_accepted_with_the_next_frame_once(dealer, service, audit):
    import sqlite3
    bet(dealer, "1", "100")
    real = audit.append_many

    def disk_full(entries):
        raise sqlite3.OperationalError("database or disk is full")

    audit.append_many = disk_full
    with pytest.raises(AuditError):
        service.observe([hand("banker", "4S 6H")], 1)
    assert dealer.state()["round"]["state"] == "idle" and dealer.state()["seats"][0]["cards"] == []
    audit.append_many = real
    service.observe([hand("banker", "4S 6H")], 2)
    assert [r.data["card"] for r in audit.records(types=[AuditType.CARD_ACCEPTED])] == ["4S", "6H"]
    assert len(audit.records(types=[AuditType.ROUND_START])) == 1
    assert audit.records(types=[AuditType.ROUND_START])[0].data["bets"]["1"]["amount"] == "100.00"


def test_any_failure_to_record_a_round_start_keeps_the_bets_for_the_deal(dealer, service, monkeypatch):
    """The machine undoes a change whatever stopped its records; the bets moved to the round
    must go back with it, or the next try of the same deal starts with none."""
    bet(dealer, "1", "100")
    real = service.audit.append_many

    def broken(entries):
        raise ValueError("a record that cannot be encoded")

    monkeypatch.setattr(service.audit, "append_many", broken)
    with pytest.raises(ValueError):
        service.observe([hand("banker", "4S")], 1)
    monkeypatch.setattr(service.audit, "append_many", real)
    service.observe([hand("banker", "4S")], 2)
    state = dealer.state()
    assert state["round"]["state"] == "dealing" and seat(state, "1")["bet"]["amount"] == "100.00"
    assert service.audit.records(types=[AuditType.ROUND_START])[0].data["bets"]["1"]["amount"] == "100.00"


def test_the_next_round_plays_the_next_rounds_bets_not_the_last_ones(dealer, service):
    bet(dealer, "1", "100")
    bet(dealer, "2", "100")
    deal(service, frame=1, s1=NIU_NIU, s2=BULL_5)
    dealer.post("/dealer/api/settle")
    service.observe([], 2)
    deal(service, frame=3, s1=NIU_NIU)   # no bets this time; only seat 1 is dealt
    state = dealer.state()
    assert state["round"]["no"] == 2 and state["round"]["state"] == "complete"
    assert state["round"]["settle_blocker"] == "no bets on this round"


def test_between_rounds_the_table_shows_no_cards_and_no_money(dealer, service):
    settled_round(dealer, service)
    dealer.post("/dealer/api/correct", {"seat": "2", "old": "4D", "new": "9D", "reason": "r", "pin": "4321"})
    service.observe([], 2)
    state = dealer.state()
    assert state["round"]["state"] == "cleared" and state["totals"] is None
    assert all(not s["cards"] and s["line"] is None and s["outcome"] is None for s in state["seats"])
    assert state["history"][0]["lines"]["2"]["net"] == "47.50"


def test_the_screen_is_told_how_many_decks_the_table_deals_from(dealer):
    """The correction grid greys out cards already dealt, which a shoe of several decks
    may deal again: the screen needs the number to know."""
    assert dealer.state()["table"]["decks"] == 1


def test_a_left_over_card_swept_away_leaves_every_screen(service):
    """QA47 UX: the screen shows the cards ignored as left-overs after a restart; one swept
    away changed no round, so no state was published and the screen kept showing it."""
    service.machine.ignore_present([("1", "KS")])
    service.observe([hand("1", "KS")], 1)
    service.observe([hand("1", "KS"), hand("banker", "4S")], 2)
    assert json.loads(service.latest()[1])["round"]["stale_cards"][0][:2] == ["1", "KS"]
    service.observe([hand("banker", "4S")], 3)              # the dealer swept the old KS away
    assert json.loads(service.latest()[1])["round"]["stale_cards"] == []
