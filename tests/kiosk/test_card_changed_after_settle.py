"""QA49 dealing2 L1: a card read as another after Settle.  "Card is right" was refused (403 without
a PIN, 409 with one) and the alert stayed on the screen until the sweep, even after the supervisor
had corrected the card.  Now the dealer confirms it (logged, no PIN: it moves no money), a
settled correction of that card answers it, and the alert stays in the log and on the round page."""

from __future__ import annotations

from kiosk.audit import AuditType
from kiosk.rounds import load_round
from kiosk_testing import login
from test_card_changed import dealt, swap


def seat(state, name):
    return next(s for s in state["seats"] if s["name"] == name)


def settled_then_swapped(dealer, service):
    table = dealt(dealer, service)
    dealer.post("/dealer/api/settle")
    swap(table, "4H", "AH")                       # seat 1's 4H replaced in place after the payout
    state = dealer.state()
    [alert] = state["round"]["alerts"]
    assert alert["code"] == "card_changed" and "was settled with 4H" in alert["message"]
    assert [c["confirm"] for c in seat(state, "1")["cards"]] == [False, False, False, False, True]
    return table


def test_the_dealer_confirms_the_card_and_the_alert_leaves_the_screen_not_the_log(app, dealer, service, audit):
    settled_then_swapped(dealer, service)
    state = dealer.post("/dealer/api/correct", {"seat": "1", "old": "4H", "new": "4H", "round": 1,
                                                "reason": "looked: the 4H is on the table"})["state"]
    assert state["round"]["alerts"] == [] and state["round"]["state"] == "settled"
    assert not any(c["confirm"] for c in seat(state, "1")["cards"])
    assert seat(state, "1")["line"]["net"] == "95.00"                    # nothing was resettled
    last = audit.last()
    assert (last.type, last.actor, last.round_no) == (AuditType.CARD_CORRECTED, "dealer1", 1)
    assert last.data["action"] == "confirmed" and last.data["after_settlement"] and last.data["read_as"] == "AH"
    summary = load_round(audit, 1)
    assert [a["code"] for a in summary["alerts"]] == ["card_changed"] and not summary["corrected"]
    watcher = app.test_client()
    login(watcher, "watch1")
    page = watcher.get("/review/round/1").get_data(as_text=True)
    assert "4H on seat 1 has read as AH" in page
    assert "card 4H confirmed (not changed; the camera had read it as AH) after settlement, by dealer1" in page
    corrections = page.split('id="corrections"', 1)[1].split("</table>", 1)[0]   # the table, not the log list
    assert "4H confirmed (not changed; the camera had read it as AH) (after settlement)" in corrections


def test_a_new_reading_after_the_confirmation_is_told_again(dealer, service):
    table = settled_then_swapped(dealer, service)
    dealer.post("/dealer/api/correct", {"seat": "1", "old": "4H", "new": "4H", "reason": "looked"})
    swap(table, "AH", "2H")
    said = [a["message"] for a in dealer.state()["round"]["alerts"] if a["code"] == "card_changed"]
    assert any(m.startswith("4H on seat 1 has read as 2H") for m in said)


def test_the_supervisors_correction_of_the_card_answers_its_alert(dealer, service, audit):
    settled_then_swapped(dealer, service)
    state = dealer.post("/dealer/api/correct", {"seat": "1", "old": "4H", "new": "AH", "pin": "4321", "round": 1,
                                                "reason": "swapped after the payout"})["state"]
    assert state["round"]["alerts"] == []
    assert [c["code"] for c in seat(state, "1")["cards"]] == ["KS", "QS", "JS", "4D", "AH"]
    assert any(r.data.get("code") == "card_changed" for r in audit.records(types=[AuditType.ALERT], round_no=1))


def test_a_reading_of_the_card_the_supervisor_corrected_to_is_no_fault(dealer, service, audit):
    """QA49 dealing2 sc06 on this tree: the swap was corrected before the camera had read the new
    card long enough to say so, and its alert then asked to look at a card already corrected."""
    table = dealt(dealer, service)
    dealer.post("/dealer/api/settle")
    table.cards["AH"] = table.cards.pop("4H")
    table.frames(0.5)
    dealer.post("/dealer/api/correct", {"seat": "1", "old": "4H", "new": "AH", "pin": "4321", "round": 1,
                                        "reason": "swapped after the payout"})
    table.frames(2.5)
    assert any(r.data.get("code") == "card_changed" for r in audit.records(types=[AuditType.ALERT], round_no=1))
    state = dealer.state()
    assert state["round"]["alerts"] == [] and not any(c["confirm"] for c in seat(state, "1")["cards"])


def test_a_card_that_was_not_read_as_another_is_not_confirmed_after_settle(dealer, service, audit):
    settled_then_swapped(dealer, service)
    before = audit.last().seq
    error = dealer.post("/dealer/api/correct", {"seat": "1", "old": "KS", "new": "KS", "reason": "looked"},
                        status=409)["error"]
    assert "KS on seat 1 has not been read as another card since round 1 was settled" in error
    assert "supervisor's PIN" in error
    assert audit.last().seq == before
