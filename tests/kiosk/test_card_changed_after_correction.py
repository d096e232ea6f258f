"""QA50 review M2 and L4: a card read as another after a supervisor's correction after Settle.
The machine keeps the card as it was at Settle (4H); the log, the screen and the supervisor say
AH.  The alert named 4H while the screen showed AH with no "?", "Card is right" on AH was
refused, and a request with no PIN could log "4H confirmed", the card the supervisor ruled out.
And a confirmation after Settle did not say, on the round page or in the evidence summary, which
reading it answered."""

from __future__ import annotations

import pytest

from kiosk.audit import AuditType
from kiosk.rounds import load_round
from kiosk_testing import login
from test_card_changed import dealt, swap
from test_evidence_summary import exported, flat, read


def seat(state, name):
    return next(s for s in state["seats"] if s["name"] == name)


def corrected_then_misread(dealer, service):
    """Settled with 4H on seat 1; swapped to AH; the supervisor corrects 4H to AH; then the
    camera reads that card as 2H."""
    table = dealt(dealer, service)
    dealer.post("/dealer/api/settle")
    swap(table, "4H", "AH")
    dealer.post("/dealer/api/correct", {"seat": "1", "old": "4H", "new": "AH", "pin": "4321", "round": 1,
                                        "reason": "swapped after the payout"})
    swap(table, "AH", "2H")
    return table


def test_the_alert_names_the_card_the_supervisor_put_there_and_confirming_it_answers_it(dealer, service, audit):
    corrected_then_misread(dealer, service)
    state = dealer.state()
    [alert] = state["round"]["alerts"]
    assert alert["card"] == "AH" and alert["message"].startswith("AH on seat 1 has read as 2H")
    assert "corrected it to AH" in alert["message"]
    shown = seat(state, "1")["cards"]
    assert [(c["code"], c["confirm"]) for c in shown][-1] == ("AH", True)      # the "?" is on the card shown
    state = dealer.post("/dealer/api/correct", {"seat": "1", "old": "AH", "new": "AH", "round": 1,
                                                "reason": "looked: the ace is there"})["state"]
    assert state["round"]["alerts"] == [] and not any(c["confirm"] for c in seat(state, "1")["cards"])
    last = audit.last()
    assert (last.type, last.data["action"], last.data["old"], last.data["read_as"]) == (
        AuditType.CARD_CORRECTED, "confirmed", "AH", "2H")


def test_the_card_the_supervisor_corrected_away_cannot_be_confirmed(dealer, service, audit):
    corrected_then_misread(dealer, service)
    before = audit.last().seq
    error = dealer.post("/dealer/api/correct", {"seat": "1", "old": "4H", "new": "4H", "round": 1,
                                                "reason": "looked"}, status=409)["error"]
    assert "4H is not on seat 1 in round 1" in error and "corrected it to AH" in error
    assert "confirm the card the log has" in error
    assert audit.last().seq == before                                   # nothing logged
    assert load_round(audit, 1)["hands"]["1"][-1] == "AH"
    assert [a["card"] for a in dealer.state()["round"]["alerts"]] == ["AH"]   # still asked


@pytest.mark.parametrize("card", ["2H", "KD"])
def test_a_second_correction_of_the_card_answers_its_alert(dealer, service, card):
    corrected_then_misread(dealer, service)
    state = dealer.post("/dealer/api/correct", {"seat": "1", "old": "AH", "new": card, "pin": "4321",
                                                "round": 1, "reason": "swapped again"})["state"]
    assert state["round"]["alerts"] == []
    assert [(c["code"], c["confirm"]) for c in seat(state, "1")["cards"]][-1] == (card, False)


def test_the_round_page_and_the_summary_say_which_reading_a_confirmation_answered(app, dealer, service):
    table = dealt(dealer, service)
    dealer.post("/dealer/api/settle")
    swap(table, "4H", "AH")
    dealer.post("/dealer/api/correct", {"seat": "1", "old": "4H", "new": "4H", "round": 1, "reason": "looked"})
    watcher = app.test_client()
    login(watcher, "watch1")
    page = watcher.get("/review/round/1").get_data(as_text=True)
    assert "card 4H confirmed (not changed; the camera had read it as AH) after settlement, by dealer1" in page
    summary = flat(read(exported(app.test_client(), 1), "summary.txt").decode())
    assert "card 4H confirmed (not changed; the camera had read it as AH) — after settlement" in summary
