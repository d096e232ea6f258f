"""Writes the audit log refused, and actions after the kiosk stopped (QA 48: M2, L2, L4).

* M2: a bet, a Same bets, a bank bid or a banker's stack whose ``bets_placed`` record the log
  refused (disk full: the dealer got a 503 "try again") is not placed: it is not on the screen
  and does not play in the next round; the next write goes through.
* L4: a camera turn the log refused is not taken as logged: the camera's next report of it is.
* L2: once ``service.stop()`` wrote ``kiosk_stop``, an action still arriving (a request in
  flight at shutdown, the demo dealer's thread) is refused, and nothing is logged after it.
"""

from __future__ import annotations

import sqlite3
from decimal import Decimal

import pytest

from kiosk.audit import AuditType
from kiosk.table_service import Approval, TableError
from kiosk_testing import HOUSE_STACK, hand, login, make_table
from vision.round import EventKind, RoundEvent

BANKER = "4S 6H QD 9C 9H"
NIU_NIU = "KS QS JS 10S 10H"
BULL_5 = "AS 2S 3D 4D 5C"


@pytest.fixture
def table(request):
    """The default table unless a test asks for another preset (indirect parametrize)."""
    return make_table(rules=getattr(request, "param", "cambodia"))


def refuse_next_append(monkeypatch, audit) -> list:
    """The log refuses its next ``append`` as a full disk does, then takes records again.
    Returns a list that gets one item when the refusal happened."""
    real = audit.append
    refused: list = []

    def append(*args, **kwargs):
        if not refused:
            refused.append(args)
            raise sqlite3.OperationalError("database or disk is full")
        return real(*args, **kwargs)

    monkeypatch.setattr(audit, "append", append)
    return refused


def screen_bets(service) -> dict:
    return {s["name"]: s["bet"]["amount"] for s in service.snapshot()["seats"] if s["bet"]}


def bets_placed(audit) -> list:
    return audit.records(types=[AuditType.BETS_PLACED])


def settled_bets(audit) -> dict:
    settled = audit.records(types=[AuditType.ROUND_SETTLED], newest_first=True, limit=1)[0]
    return {seat: bet["amount"] for seat, bet in settled.data["bets"].items()}


def play_round(service, players: dict[str, str], frame: int = 1) -> None:
    service.observe([hand("banker", BANKER)] + [hand(s, t) for s, t in players.items()], frame)
    service.settle("dealer1")
    service.observe([], frame + 1)          # the table swept: cleared


# ------------------------------------------------------------------ M2: bets, Same bets, bid, stack


def test_a_bet_the_log_refused_is_not_on_the_screen_and_does_not_play(dealer, service, audit, monkeypatch):
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "100", "kind": "equal"})
    before = len(bets_placed(audit))
    refused = refuse_next_append(monkeypatch, audit)
    dealer.post("/dealer/api/bet", {"seat": "2", "amount": "500", "kind": "equal"}, status=503)
    assert refused and len(bets_placed(audit)) == before
    assert screen_bets(service) == {"1": "100.00"}
    assert set(service._pending) == {"1"}
    assert [s["name"] for s in dealer.state()["seats"] if s["bet"]] == ["1"]

    dealer.post("/dealer/api/bet", {"seat": "3", "amount": "50", "kind": "equal"})     # the next write works
    assert bets_placed(audit)[-1].data["bets"].keys() == {"1", "3"}
    assert screen_bets(service) == {"1": "100.00", "3": "50.00"}
    play_round(service, {"1": NIU_NIU, "2": BULL_5, "3": BULL_5})
    assert settled_bets(audit).keys() == {"1", "3"}


def test_a_changed_or_removed_bet_the_log_refused_stays_as_it_was(service, audit, monkeypatch):
    service.set_bet("1", "100", None, "dealer1")
    service.set_bet("2", "200", None, "dealer1")
    refuse_next_append(monkeypatch, audit)
    with pytest.raises(sqlite3.OperationalError):
        service.set_bet("1", "300", None, "dealer1")
    refuse_next_append(monkeypatch, audit)
    with pytest.raises(sqlite3.OperationalError):
        service.set_bet("2", None, None, "dealer1")       # removing it
    assert screen_bets(service) == {"1": "100.00", "2": "200.00"}
    play_round(service, {"1": NIU_NIU, "2": BULL_5})
    assert settled_bets(audit) == {"1": "100.00", "2": "200.00"}


def test_same_bets_the_log_refused_are_not_placed(service, audit, monkeypatch):
    service.set_bet("1", "100", None, "dealer1")
    play_round(service, {"1": NIU_NIU})
    assert service.snapshot()["round"]["repeat_from"] == 1
    before = len(bets_placed(audit))
    refuse_next_append(monkeypatch, audit)
    with pytest.raises(sqlite3.OperationalError):
        service.repeat_bets("dealer1")
    assert len(bets_placed(audit)) == before
    assert service._pending == {} and screen_bets(service) == {}
    assert service.snapshot()["round"]["repeat_from"] == 1      # Same bets can be pressed again

    assert set(service.repeat_bets("dealer1")) == {"1"}         # the next write works
    assert screen_bets(service) == {"1": "100.00"}
    play_round(service, {"1": NIU_NIU}, frame=3)
    assert settled_bets(audit) == {"1": "100.00"}


def test_same_bets_refused_leave_the_bets_already_typed(service, audit, monkeypatch):
    service.set_bet("1", "100", None, "dealer1")
    service.set_bet("2", "200", None, "dealer1")
    play_round(service, {"1": NIU_NIU, "2": BULL_5})
    service.set_bet("1", "50", None, "dealer1")
    refuse_next_append(monkeypatch, audit)
    with pytest.raises(sqlite3.OperationalError):
        service.repeat_bets("dealer1")                          # would add seat 2's 200
    assert screen_bets(service) == {"1": "50.00"}
    play_round(service, {"1": NIU_NIU, "2": BULL_5}, frame=3)
    assert settled_bets(audit) == {"1": "50.00"}                # seat 2 got cards, but no bet


@pytest.mark.parametrize("table", ["grab-banker"], indirect=True)
def test_a_bank_bid_the_log_refused_is_not_entered(dealer, service, audit, monkeypatch):
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "100", "kind": "standard"})
    dealer.post("/dealer/api/bid", {"bid": 2})
    refuse_next_append(monkeypatch, audit)
    dealer.post("/dealer/api/bid", {"bid": 4}, status=503)
    assert service.snapshot()["round"]["banker_bid"] == 2
    assert bets_placed(audit)[-1].data["banker_bid"] == 2
    play_round(service, {"1": NIU_NIU})
    settled = audit.records(types=[AuditType.ROUND_SETTLED], newest_first=True, limit=1)[0]
    assert settled.data["banker_bid"] == 2, settled.data
    dealer.post("/dealer/api/bid", {"bid": 3})                  # the next write works
    assert service.snapshot()["round"]["banker_bid"] == 3


@pytest.mark.parametrize("table", [str(HOUSE_STACK)], indirect=True)
def test_a_banker_stack_the_log_refused_is_not_entered(service, audit, monkeypatch):
    service.set_bet("1", "100", None, "dealer1")
    refuse_next_append(monkeypatch, audit)
    with pytest.raises(sqlite3.OperationalError):
        service.set_stack("300", "dealer1")
    assert service.next_stack is None and service.snapshot()["round"]["banker_stack"] is None
    assert bets_placed(audit)[-1].data["banker_stack"] is None
    service.observe([hand("banker", BANKER), hand("1", NIU_NIU)], 1)
    with pytest.raises(TableError, match="no banker's stack was entered"):   # not played with the refused stack
        service.settle("dealer1")
    assert service._round_stack is None


@pytest.mark.parametrize("table", [str(HOUSE_STACK)], indirect=True)
def test_a_changed_banker_stack_the_log_refused_stays_as_it_was(service, audit, monkeypatch):
    service.set_bet("1", "100", None, "dealer1")
    service.set_stack("300", "dealer1")
    refuse_next_append(monkeypatch, audit)
    with pytest.raises(sqlite3.OperationalError):
        service.set_stack("5000", "dealer1")
    assert service.next_stack == Decimal("300")
    service.set_stack("400", "dealer1")                         # the next write works
    assert bets_placed(audit)[-1].data["banker_stack"] == "400.00"
    play_round(service, {"1": NIU_NIU})
    settled = audit.records(types=[AuditType.ROUND_SETTLED], newest_first=True, limit=1)[0]
    assert "400.00" in str(settled.data) and "5000" not in str(settled.data)


# ------------------------------------------------------------------ L4: camera turns


def test_a_camera_offline_the_log_refused_is_logged_when_reported_again(service, audit, monkeypatch):
    refuse_next_append(monkeypatch, audit)
    offline = RoundEvent(EventKind.camera_offline, 0, 1.0, 4, data={"reason": "unplugged"})
    with pytest.raises(sqlite3.OperationalError):
        service.on_pipeline_event(offline)
    assert audit.records(types=[AuditType.CAMERA_OFFLINE]) == []
    assert service.status()["camera"] != "offline"

    service.on_pipeline_event(RoundEvent(EventKind.camera_offline, 0, 2.0, 5, data={"reason": "unplugged"}))
    logged = audit.records(types=[AuditType.CAMERA_OFFLINE])
    assert len(logged) == 1 and logged[0].data["frame_no"] == 5
    assert service.status()["camera"] == "offline"
    service.on_pipeline_event(RoundEvent(EventKind.camera_offline, 0, 3.0, 6, data={"reason": "unplugged"}))
    assert len(audit.records(types=[AuditType.CAMERA_OFFLINE])) == 1    # logged once per turn still


# ------------------------------------------------------------------ L2: after stop


def records_after_stop(audit) -> list[str]:
    types = [str(r.type) for r in audit.iter_records()]
    return types[len(types) - types[::-1].index(str(AuditType.KIOSK_STOP)):]


@pytest.mark.parametrize("action", ["settle", "void", "correct", "clear", "bet", "same_bets", "observe"])
def test_actions_after_stop_are_refused_and_nothing_is_logged_after_kiosk_stop(service, audit, action):
    service.set_bet("1", "100", None, "dealer1")
    play_round(service, {"1": NIU_NIU})             # a settled round: Same bets has something to repeat
    if action not in ("bet", "same_bets"):      # bets stay open for those two: only the stop refuses them
        service.set_bet("1", "100", None, "dealer1")
        service.observe([hand("banker", BANKER), hand("1", NIU_NIU)], 3)
    if action == "clear":
        service.settle("dealer1")
    service.stop("SIGTERM")
    supervisor = Approval("dealer1", "super1")
    do = {
        "settle": lambda: service.settle("dealer1"),
        "void": lambda: service.void("misdeal", supervisor),
        "correct": lambda: service.correct("1", "KS", "2D", "dealer1", "misread"),
        "clear": lambda: service.clear("dealer1"),
        "bet": lambda: service.set_bet("2", "100", None, "dealer1"),
        "same_bets": lambda: service.repeat_bets("dealer1"),
    }
    if action == "observe":
        assert service.observe([], 4) == []                     # frames after stop are dropped
    else:
        with pytest.raises(TableError, match="the kiosk is stopping"):
            do[action]()
    assert records_after_stop(audit) == []


@pytest.mark.parametrize("table", ["grab-banker"], indirect=True)
def test_a_bid_after_stop_is_refused(service, audit):
    service.stop()
    with pytest.raises(TableError, match="the kiosk is stopping"):
        service.set_bid(2, "dealer1")
    assert records_after_stop(audit) == []


@pytest.mark.parametrize("table", [str(HOUSE_STACK)], indirect=True)
def test_a_stack_after_stop_is_refused(service, audit):
    service.stop()
    with pytest.raises(TableError, match="the kiosk is stopping"):
        service.set_stack("300", "dealer1")
    assert records_after_stop(audit) == []


def test_a_settle_after_stop_answers_the_dealer_with_one_clear_line(client, service, audit):
    token = login(client, "dealer1")
    r = client.post("/dealer/api/bet", json={"seat": "1", "amount": "100", "kind": "equal"},
                    headers={"X-CSRF-Token": token})
    assert r.status_code == 200, r.get_json()
    service.observe([hand("banker", BANKER), hand("1", NIU_NIU)], 1)
    service.stop()
    r = client.post("/dealer/api/settle", json={}, headers={"X-CSRF-Token": token})
    assert 400 <= r.status_code < 500 and "the kiosk is stopping" in r.get_json()["error"], r.get_json()
    assert records_after_stop(audit) == []


def test_the_demo_dealer_ends_when_the_service_stops_and_logs_nothing_after(service, audit):
    from kiosk.demo import DemoDealer

    service.set_bet("1", "100", None, "dealer1")
    service.observe([hand("banker", BANKER), hand("1", NIU_NIU)], 1)       # complete: the demo dealer settles it
    demo = DemoDealer(service, pause=60, poll=0.01)
    demo.start()
    try:
        service.stop("SIGTERM")         # as ``niuniu demo`` stops: the dealer's thread is not told
        demo.join(5)
        assert not demo.is_alive()
    finally:
        demo.stop_event.set()
        demo.join(5)
    assert records_after_stop(audit) == []
