"""A kiosk killed (or a power cut) with a round on the table, then started again.

The chips are still on the layout and the cards still on the table: an unfinished round's
bets stand for the cards the camera reads again, and a finished round's cards are not
read as a new round nobody dealt."""

from __future__ import annotations


import pytest

from kiosk.app import create_app
from kiosk.audit import AuditType
from kiosk_testing import HOUSE_STACK, hand, login, make_table

BANKER_BULL_8 = "4S 6H QD 9C 9H"
NIU_NIU = "KS QS JS 10S 10H"
BULL_5 = "AS 2S 3D 4D 5C"


def the_table():
    return [hand("banker", BANKER_BULL_8), hand("1", NIU_NIU), hand("2", BULL_5)]


class Kiosk:
    """One run of the kiosk on a data directory, driven as the dealer's screen drives it."""

    def __init__(self, app_config):
        self.app = create_app(app_config)
        self.service = self.app.extensions["niuniu"].service
        self.client = self.app.test_client()
        self.token = login(self.client, "dealer1")

    def post(self, url, body=None, status=200):
        r = self.client.post(url, json=body or {}, headers={"X-CSRF-Token": self.token})
        assert r.status_code == status, r.get_json()
        return r.get_json()

    def state(self):
        return self.client.get("/dealer/api/state").get_json()["state"]

    def stop(self):
        self.service.stop()
        self.service.audit.close()


@pytest.fixture
def run(app, app_config):
    """The first run is the test's app (accounts made); each call starts the next run."""
    runs = []

    def next_run(table=None):
        config = app_config if table is None else {**app_config, "TABLE": table}
        runs.append(Kiosk(config))
        return runs[-1]
    yield next_run
    for kiosk in runs:
        kiosk.stop()


def seat(state, name):
    return next(s for s in state["seats"] if s["name"] == name)


def test_an_interrupted_rounds_bets_stand_for_the_cards_still_on_the_table(dealer, service, run):
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "100", "kind": "double"})
    dealer.post("/dealer/api/bet", {"seat": "2", "amount": "50", "kind": "equal"})
    service.observe(the_table(), 1)
    assert dealer.state()["round"]["state"] == "complete"
    # killed: the next run starts with no stop record (this one is left as a dead process leaves it)

    again = run()
    state = again.state()
    assert seat(state, "1")["bet"] == {"amount": "100.00", "kind": "double"} and seat(state, "1")["bet_pending"]
    assert seat(state, "2")["bet"] == {"amount": "50.00", "kind": "equal"}
    again.service.observe(the_table(), 1)                      # the camera reads the same cards again
    state = again.post("/dealer/api/settle")["state"]
    assert state["round"]["no"] == 2 and state["round"]["state"] == "settled"
    assert seat(state, "1")["line"]["net"] == "285.00" and seat(state, "2")["line"]["net"] == "-50.00"
    audit = again.service.audit
    assert audit.records(types=[AuditType.KIOSK_START])[-1].data["previous_run"] == "crashed or killed"
    interrupted = audit.records(types=[AuditType.ROUND_INTERRUPTED])
    assert [r.round_no for r in interrupted] == [1]
    stood = [r for r in audit.records(types=[AuditType.BETS_PLACED]) if "stand_from_interrupted" in r.data["change"]]
    assert [(r.data["change"]["stand_from_interrupted"], r.data["for_round"]) for r in stood] == [(1, 2)]


@pytest.mark.parametrize("table", [make_table(rules=str(HOUSE_STACK))])
def test_the_bank_bid_and_stack_stand_with_them(dealer, service, run, table):
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "100", "kind": "standard", "multiple": 3})
    dealer.post("/dealer/api/bid", {"bid": 2})
    dealer.post("/dealer/api/stack", {"amount": "1000"})
    service.observe(the_table(), 1)

    again = run()
    round_ = again.state()["round"]
    assert (round_["banker_bid"], round_["banker_stack"]) == (2, "1000.00")
    again.service.observe(the_table(), 1)
    line = seat(again.post("/dealer/api/settle")["state"], "1")["line"]
    assert (line["banker_bid"], line["owed"], line["net"]) == (2, "1800.00", "950.00")


def test_a_settled_rounds_cards_are_not_read_as_a_new_round_after_a_restart(dealer, service, run):
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "100", "kind": "double"})
    service.observe(the_table(), 1)
    dealer.post("/dealer/api/settle")
    # killed before the dealer swept the cards

    again = run()
    again.service.observe(the_table(), 1)
    state = again.state()
    assert state["round"]["state"] == "idle" and state["round"]["no"] == 1
    assert again.service.audit.records(types=[AuditType.ROUND_START], round_no=2) == []
    again.service.observe([], 2)                               # swept
    again.service.observe(the_table(), 3)                      # the next deal is a round again
    assert again.state()["round"]["no"] == 2


@pytest.mark.parametrize("end", ["settled", "void"])
def test_a_finished_round_cleared_with_its_cards_still_there_is_not_played_again(dealer, service, run, end):
    """Settle (or void), then Clear with the cards still lying there, then a restart: a hand
    already paid must not be paid again, a misdeal not played, even if the camera needs a few
    seconds to show them (warming up, a hand over the layout)."""
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "100", "kind": "double"})
    service.observe(the_table(), 1)
    if end == "settled":
        dealer.post("/dealer/api/settle")
    else:
        dealer.post("/dealer/api/void", {"reason": "misdeal", "pin": "4321"})
    dealer.post("/dealer/api/clear")
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "50", "kind": "double"})   # the next round's stake

    again = run()
    for frame in range(2, 62):                                 # three seconds of nothing
        again.service.observe([], frame)
    again.service.observe(the_table(), 62)                     # then the old cards, still there
    state = again.state()
    assert state["round"]["state"] == "idle" and state["round"]["no"] == 1
    assert seat(state, "1")["bet"]["amount"] == "50.00"
    again.service.observe([], 63)                              # swept; the next deal is a round
    again.service.observe([hand("banker", BULL_5), hand("1", BANKER_BULL_8)], 64)
    assert again.state()["round"]["no"] == 2


def test_a_voided_deal_is_not_played_after_a_restart_and_its_bets_still_stand(dealer, service, run):
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "100", "kind": "double"})
    service.observe(the_table(), 1)
    dealer.post("/dealer/api/void", {"reason": "misdeal", "pin": "4321"})

    again = run()
    again.service.observe(the_table(), 1)                      # the misdealt cards, still there
    state = again.state()
    assert state["round"]["state"] == "idle" and seat(state, "1")["bet"]["amount"] == "100.00"
    again.service.observe([], 2)
    again.service.observe([hand("banker", BANKER_BULL_8), hand("1", NIU_NIU)], 3)   # dealt again
    state = again.state()
    assert state["round"]["no"] == 2 and state["round"]["state"] == "complete"
    assert seat(again.post("/dealer/api/settle")["state"], "1")["line"]["net"] == "285.00"


def test_a_settled_rounds_cards_swept_while_the_kiosk_was_down_are_read_when_dealt_again(dealer, service, run):
    """The left-overs are ignored only while the camera may still show them: swept during
    the stop, the same card dealt to the same seat later is a card like any other."""
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "100", "kind": "double"})
    service.observe(the_table(), 1)
    dealer.post("/dealer/api/settle")
    # killed; the dealer sweeps the table before the kiosk is back

    again = run()
    for frame in range(2, 220):                                # an empty table for over ten seconds (20 fps)
        again.service.observe([], frame)
    again.service.observe(the_table(), 220)                    # the same cards, dealt again
    state = again.state()
    assert state["round"]["no"] == 2 and state["round"]["state"] == "complete"
    assert [c["code"] for c in seat(state, "1")["cards"]] == NIU_NIU.split()


def test_recordings_left_unsealed_are_sealed_at_the_next_start_as_they_ended(tmp_path):
    """Recordings no seal covers (the kiosk died before sealing, or a release before seals
    made them) are sealed at the next start; only one cut off mid-round is called interrupted."""
    import json
    from types import SimpleNamespace

    from kiosk.audit import AuditLog
    from kiosk.table_service import TableService
    from vision.round import RoundMachine

    root = tmp_path / "recordings"
    for number, ended, interrupted in ((1, 1700000000.5, False), (2, None, True)):
        folder = root / f"2026-12-07T01-00-0{number}-round-{number:04d}"
        folder.mkdir(parents=True)
        (folder / "meta.json").write_text(json.dumps({"round_no": number, "ended": ended,
                                                      "interrupted": interrupted}))
        (folder / "events.jsonl").write_text("")
    table = make_table()
    log = AuditLog(tmp_path / "audit.sqlite3", table_id="t1")
    pipeline = SimpleNamespace(recorder=SimpleNamespace(root=root, on_finished=None), machine=RoundMachine(table))
    service = TableService(table, log, pipeline=pipeline)
    service.start()
    service.wait_sealed()
    seals = {r.round_no: r.data for r in log.records(types=[AuditType.RECORDING_SEALED])}
    assert (seals[1]["interrupted"], seals[2]["interrupted"]) == (False, True)
    assert seals[1]["after_restart"] == "first start"
    service.stop()
    log.close()


def test_an_interrupted_round_ends_when_it_was_cut_off_not_when_the_next_start_noticed(app_config, run, dealer,
                                                                                        service):
    """After a power cut the Pi boots with the clock it last saved (behind by the whole cut):
    the interruption record it writes must not make the round end before it began."""
    from kiosk.rounds import load_round

    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "100", "kind": "double"})
    service.observe(the_table(), 1)
    last = service.audit.last()
    again = run()
    log = again.service.audit
    interrupted = log.records(types=[AuditType.ROUND_INTERRUPTED])[0]
    assert interrupted.round_no == 1
    summary = load_round(log, 1, table_id="t1")
    assert summary["status"] == "interrupted" and summary["ended"] == last.ts
    assert summary["ended_seq"] == interrupted.seq
