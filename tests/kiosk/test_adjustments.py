"""The adjustment a settlement correction leaves (QA48 dispute H1, the part left open): a
correction after Settle moves no chips, so the round shows "adjustment outstanding" until the
dealer records the difference as paid or collected, or a supervisor waives it; a stale screen
cannot record an amount a later correction changed; the shift report lists what is owed, and
who paid or waived what."""

from __future__ import annotations

from kiosk.audit import AuditType, Entry, log_moment, utc_iso
from kiosk.report import period_report
from kiosk.rounds import load_round
from kiosk_testing import hand, login
from test_paid_and_corrected import correct, seat, settled_round

ADJUST = "/dealer/api/adjustment"


def owed(state):
    """The table's outstanding adjustments as the screen lists them: {round: {seat: (action, amount)}}."""
    return {a["round"]: {o["seat"]: (o["action"], o["amount"]) for o in a["outstanding"]}
            for a in state["adjustments"]}


def adjustment_records(audit):
    return audit.records(types=(AuditType.ADJUSTMENT_SETTLED,))


def test_a_corrected_round_is_outstanding_until_the_dealer_records_it_paid(dealer, service, audit):
    settled_round(dealer, service)
    assert dealer.state()["adjustments"] == [] and dealer.state()["round"]["adjustment"] is None
    state = correct(dealer, "2", "4D", "9D", "9 read as 4")["state"]
    # seat 2 lost 50.00 at the table and wins 47.50 as corrected: the house owes it 97.50
    assert owed(state) == {1: {"2": ("pay", "97.50")}}
    assert state["round"]["adjustment"]["status"] == "outstanding"
    basis = state["round"]["adjustment"]["basis"]
    assert basis == audit.records(types=(AuditType.SETTLEMENT_CORRECTED,))[-1].seq

    body = dealer.post(ADJUST, {"round": 1, "basis": basis, "action": "paid"})
    [record] = adjustment_records(audit)
    assert (record.actor, record.round_no) == ("dealer1", 1)
    assert record.data["action"] == "paid" and record.data["difference"] == {"2": "97.50"}
    assert record.data["basis"] == basis and record.data["approved_by"] is None
    assert body["state"]["adjustments"] == []
    adjustment = body["state"]["round"]["adjustment"]
    assert adjustment["status"] == "settled" and adjustment["records"][0]["by"] == "dealer1"
    summary = load_round(audit, 1, table_id=service.config.table_id)
    assert summary["adjustment"]["status"] == "settled" and summary["adjustment"]["outstanding"] == {}


def test_a_screen_that_showed_the_first_correction_cannot_record_after_a_second(dealer, service, audit):
    settled_round(dealer, service)
    first = correct(dealer, "2", "4D", "9D", "9 read as 4")["state"]["round"]["adjustment"]["basis"]
    # another screen: seat 1's 10H was a 9S, 285.00 paid, 190.00 as corrected: collect 95.00
    second = correct(dealer, "1", "10H", "9S", "last card a nine")["state"]
    body = dealer.post(ADJUST, {"round": 1, "basis": first, "action": "paid"}, status=409)
    assert "corrected again since your screen showed it" in body["error"]
    assert adjustment_records(audit) == []
    assert owed(second) == {1: {"1": ("collect", "95.00"), "2": ("pay", "97.50")}}

    dealer.post(ADJUST, {"round": 1, "basis": second["round"]["adjustment"]["basis"], "action": "paid"})
    assert adjustment_records(audit)[0].data["difference"] == {"1": "-95.00", "2": "97.50"}
    # the same tap again (a second screen, a double tap): nothing is recorded twice
    body = dealer.post(ADJUST, {"round": 1, "basis": second["round"]["adjustment"]["basis"], "action": "paid"},
                       status=409)
    assert "already recorded (paid by dealer1)" in body["error"]
    assert len(adjustment_records(audit)) == 1


def test_a_request_that_names_no_round_or_correction_records_nothing(dealer, service, audit):
    settled_round(dealer, service)
    basis = correct(dealer, "2", "4D", "9D", "9 read as 4")["state"]["round"]["adjustment"]["basis"]
    assert "which correction" in dealer.post(ADJUST, {"round": 1, "action": "paid"}, status=409)["error"]
    assert "which round" in dealer.post(ADJUST, {"basis": basis, "action": "paid"}, status=409)["error"]
    assert "not an adjustment" in dealer.post(ADJUST, {"round": 1, "basis": basis, "action": "refund"},
                                              status=409)["error"]
    body = dealer.post(ADJUST, {"round": 1, "basis": basis, "seats": ["3"]}, status=409)
    assert "seat 3 has no adjustment outstanding (owed: seat 2)" in body["error"]
    assert adjustment_records(audit) == []


def test_a_supervisor_waives_a_seat_with_a_pin_and_a_reason(dealer, service, audit):
    settled_round(dealer, service)
    correct(dealer, "2", "4D", "9D", "9 read as 4")
    basis = correct(dealer, "1", "10H", "9S", "last card a nine")["state"]["round"]["adjustment"]["basis"]
    waive = {"round": 1, "basis": basis, "action": "waived", "seats": ["1"], "reason": "player 1 left the table"}
    assert "PIN" in dealer.post(ADJUST, waive, status=403)["error"]
    dealer.post(ADJUST, {**waive, "pin": "9999"}, status=403)
    assert "needs a reason" in dealer.post(ADJUST, {**waive, "reason": "", "pin": "4321"}, status=409)["error"]
    assert adjustment_records(audit) == []

    state = dealer.post(ADJUST, {**waive, "pin": "4321"})["state"]
    [record] = adjustment_records(audit)
    assert record.data["action"] == "waived" and record.data["difference"] == {"1": "-95.00"}
    assert (record.data["approved_by"], record.data["requested_by"]) == ("super1", "dealer1")
    assert record.data["reason"] == "player 1 left the table"
    assert owed(state) == {1: {"2": ("pay", "97.50")}}        # seat 2 is still to be paid
    assert [r["action"] for r in state["round"]["adjustment"]["records"]] == ["waived"]
    # each seat's box says what is still to do there: seat 2 to be paid, seat 1 nothing (waived;
    # QA49 supervisor H1: it kept a red COLLECT 95.00 beside a small "waived")
    assert seat(state, "2")["line"]["correction"]["action"] == "pay"
    one = seat(state, "1")["line"]["correction"]
    assert (one["action"], one["paid_net"]) == ("none", "285.00")      # waived: the chips stay as paid

    state = dealer.post(ADJUST, {"round": 1, "basis": basis, "action": "paid"})["state"]
    assert owed(state) == {} and state["round"]["adjustment"]["status"] == "settled"
    two = seat(state, "2")["line"]["correction"]
    assert (two["action"], two["paid_outcome"], two["paid_net"]) == ("none", None, "47.50")   # paid since Settle


def test_a_waived_difference_corrected_back_is_owed_by_no_one(dealer, service, audit):
    """A waiver moves no chips (QA49 supervisor H2: counted as paid, a collection waived and then
    corrected back asked the dealer to pay the player 95.00 + 100.00 never collected)."""
    settled_round(dealer, service)
    basis = correct(dealer, "1", "10H", "9S", "last card a nine")["state"]["round"]["adjustment"]["basis"]
    dealer.post(ADJUST, {"round": 1, "basis": basis, "action": "waived", "reason": "player left", "pin": "4321"})
    state = correct(dealer, "1", "9S", "10H", "the video shows the ten")["state"]
    assert owed(state) == {} and state["round"]["adjustment"]["status"] == "settled"
    assert seat(state, "1")["line"]["correction"]["action"] == "none"
    # corrected again to the figure that was waived: still nothing owed
    state = correct(dealer, "1", "10H", "9S", "it was the nine after all")["state"]
    assert owed(state) == {}
    summary = load_round(audit, 1, table_id=service.config.table_id)
    assert summary["adjustment"]["outstanding"] == {} and summary["adjustment"]["held"]["1"] == "285.00"


def test_a_correction_undone_after_its_difference_was_paid_is_owed_back(dealer, service, audit):
    settled_round(dealer, service)
    basis = correct(dealer, "2", "4D", "9D", "9 read as 4")["state"]["round"]["adjustment"]["basis"]
    dealer.post(ADJUST, {"round": 1, "basis": basis, "action": "paid"})       # 97.50 paid to seat 2
    # the first correction was wrong: seat 2 loses 50.00 again, so the 97.50 paid comes back
    state = correct(dealer, "2", "9D", "4D", "the 4 was right")["state"]
    assert owed(state) == {1: {"2": ("collect", "97.50")}}


def test_an_adjustment_of_a_round_long_gone_stays_on_the_screen(dealer, service, audit):
    settled_round(dealer, service)
    service.observe([], 2)
    basis = correct(dealer, "2", "4D", "9D", "9 read as 4")["state"]["adjustments"][0]["basis"]
    history = dealer.state()["history"][0]
    assert history["round"] == 1 and history["adjustment"]["status"] == "outstanding"
    # eleven more rounds: round 1 leaves the ten-round strip, its adjustment does not leave the screen
    for n in range(11):
        dealer.post("/dealer/api/bet", {"seat": "1", "amount": "10", "kind": "equal"})
        service.observe([hand("banker", "4S 6H QD 9C 9H"), hand("1", "KS QS JS 10S 10H")], 3 + 2 * n)
        dealer.post("/dealer/api/settle")
        service.observe([], 4 + 2 * n)
    state = dealer.state()
    assert 1 not in [h["round"] for h in state["history"]]
    assert owed(state) == {1: {"2": ("pay", "97.50")}}
    # and a restart reads it back from the log
    service._adjustments.clear()
    service._load_adjustments()
    service._publish()
    assert owed(dealer.state()) == {1: {"2": ("pay", "97.50")}}
    dealer.post(ADJUST, {"round": 1, "basis": basis, "action": "paid"})
    assert dealer.state()["adjustments"] == []


def older_kiosk(monkeypatch, audit):
    """Write settlement corrections as a kiosk from before adjustment records did."""
    real = audit.append_many

    def append_many(entries):
        return real([Entry(e.type, e.actor, {k: v for k, v in e.payload.items() if k != "adjustment_tracked"},
                           e.round_no, e.ts, e.table_id) for e in entries])
    monkeypatch.setattr(audit, "append_many", append_many)
    return lambda: monkeypatch.setattr(audit, "append_many", real)


def test_a_round_corrected_before_adjustments_were_recorded_is_not_recorded_not_owed(dealer, service, audit,
                                                                                      monkeypatch, client):
    settled_round(dealer, service)
    upgraded = older_kiosk(monkeypatch, audit)
    state = correct(dealer, "2", "4D", "9D", "9 read as 4")["state"]
    assert "adjustment_tracked" not in audit.records(types=(AuditType.SETTLEMENT_CORRECTED,))[-1].data
    assert owed(state) == {}
    adjustment = load_round(audit, 1, table_id=service.config.table_id)["adjustment"]
    assert adjustment["status"] == "not_recorded" and adjustment["not_recorded"] == {"2": "97.50"}
    body = dealer.post(ADJUST, {"round": 1, "basis": 1, "action": "paid"}, status=409)
    assert "from before adjustments were recorded" in body["error"]
    report = period_report(audit)[service.config.table_id].to_json()
    assert report["adjustments"][0]["status"] == "not_recorded"
    assert report["adjustments_owed"] == {"pay": "0.00", "collect": "0.00", "rounds": []}

    # upgraded: a new correction of the same round is owed from what stood before it
    upgraded()
    state = correct(dealer, "1", "10H", "9S", "last card a nine")["state"]
    assert owed(state) == {1: {"1": ("collect", "95.00")}}
    adjustment = load_round(audit, 1, table_id=service.config.table_id)["adjustment"]
    assert adjustment["not_recorded"] == {"2": "97.50"} and adjustment["outstanding"] == {"1": "-95.00"}


def test_the_shift_report_lists_what_is_owed_and_who_paid_or_waived(dealer, service, audit, client, runner, app):
    settled_round(dealer, service)                                             # round 1
    basis = correct(dealer, "2", "4D", "9D", "9 read as 4")["state"]["round"]["adjustment"]["basis"]
    dealer.post(ADJUST, {"round": 1, "basis": basis, "action": "paid"})
    service.observe([], 2)
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "100", "kind": "double"})   # round 2
    service.observe([hand("banker", "4S 6H QD 9C 9H"), hand("1", "KS QS JS 10S 10H")], 3)
    dealer.post("/dealer/api/settle")
    correct_2 = {"seat": "1", "old": "10H", "new": "9S", "reason": "last card a nine", "pin": "4321", "round": 2}
    dealer.post("/dealer/api/correct", correct_2)

    report = period_report(audit)[service.config.table_id].to_json()
    one, two = report["adjustments"]
    assert (one["round"], one["status"], one["outstanding"]) == (1, "settled", {})
    assert [(r["action"], r["actor"], r["difference"]) for r in one["records"]] == [("paid", "dealer1", {"2": "97.50"})]
    assert (two["round"], two["status"], two["outstanding"]) == (2, "outstanding", {"1": "-95.00"})
    assert report["adjustments_owed"] == {"pay": "0.00", "collect": "95.00", "rounds": [2]}
    # the books count the corrected figures (round 1: 285.00 + 47.50, round 2: 190.00, not the 285.00
    # paid at the table): the list says where the chips have not followed them yet
    assert report["players_net"] == "522.50"

    login(client, "super1")
    page = client.get("/review/report?from=2000-01-01").get_data(as_text=True)
    assert "Adjustment outstanding in round" in page and "(to collect 95.00 USD)" in page
    assert "collect 95.00 from seat 1" in page and "pay 97.50 to seat 2" in page
    assert 'class="adjustment-paid"' in page and "dealer1" in page

    service.stop()
    code, out, _ = runner(["audit", "report", "--data-dir", app.config["DATA_DIR"]])
    assert code == 0
    assert "WARNING: adjustments outstanding in round 2" in out and "(to collect 95.00 USD)" in out
    assert "round 1: paid by dealer1 at" in out and "pay 97.50 USD to seat 2" in out


def test_an_earlier_round_corrected_or_still_owed_is_in_the_next_shift_report(dealer, service, audit):
    settled_round(dealer, service)
    service.observe([], 2)
    ended = audit.records(types=(AuditType.ROUND_SETTLED,))[-1].ts
    basis = correct(dealer, "2", "4D", "9D", "9 read as 4")["state"]["adjustments"][0]["basis"]
    corrected = audit.records(types=(AuditType.SETTLEMENT_CORRECTED,))[-1].ts
    assert ended < corrected
    table = service.config.table_id

    # the next shift starts at the correction: round 1 ended in the one before, and is owed
    [listed] = period_report(audit, since=corrected)[table].to_json()["adjustments"]
    assert (listed["round"], listed["earlier"], listed["outstanding"]) == (1, True, {"2": "97.50"})
    # a shift after that still lists it while it is owed
    later = audit.last().ts
    dealer.post(ADJUST, {"round": 1, "basis": basis, "action": "paid"})
    paid = adjustment_records(audit)[-1].ts
    assert later < paid
    # paid in the shift from ``later``: listed there as paid (the chips moved in it)...
    [listed] = period_report(audit, since=later)[table].to_json()["adjustments"]
    assert listed["status"] == "settled" and listed["records"][0]["action"] == "paid"
    # ...and in no shift after that
    assert table not in period_report(audit, since=utc_iso(log_moment(paid).timestamp() + 1))


def test_the_round_page_and_list_say_what_is_outstanding_and_who_paid_or_waived(dealer, service, audit, app):
    """The officer answering "was I ever paid the difference" reads it on the round page, in words."""
    settled_round(dealer, service)
    correct(dealer, "2", "4D", "9D", "9 read as 4")
    basis = correct(dealer, "1", "10H", "9S", "last card a nine")["state"]["round"]["adjustment"]["basis"]
    client = app.test_client()          # the officer's own browser, beside the dealer's
    login(client, "watch1")
    page = client.get("/review/round/1").get_data(as_text=True)
    assert "Adjustment outstanding:" in page
    assert "seat 1 owes the house 95.00" in page and "the house owes seat 2 97.50" in page
    assert "adjustment outstanding</span>" in client.get("/review/?from=2000-01-01").get_data(as_text=True)

    dealer.post(ADJUST, {"round": 1, "basis": basis, "action": "waived", "seats": ["1"],
                         "reason": "player 1 left the table", "pin": "4321"})
    dealer.post(ADJUST, {"round": 1, "basis": basis, "action": "paid"})
    page = client.get("/review/round/1").get_data(as_text=True)
    assert "Adjustment outstanding:" not in page
    # the adjustment section and the timeline say each record in the one set of words (QA49 review M5)
    waived = "Adjustment waived by super1 (asked by dealer1): not collected 95.00 from seat 1; reason: player 1 left"
    paid = "Adjustment recorded by dealer1: paid 97.50 to seat 2 at the table"
    assert page.count(waived) == 2 and page.count(paid) == 2
    assert "Every difference the corrections moved has been paid, collected or waived." in page
    assert "adjustment outstanding</span>" not in client.get("/review/?from=2000-01-01").get_data(as_text=True)
