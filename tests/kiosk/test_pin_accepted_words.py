"""A right supervisor PIN for an action the table then refused is filed under its round (QA49
watch M8): the round page told it as its raw JSON, the one record of that approval there."""

from __future__ import annotations

import html

from kiosk.audit import AuditType
from kiosk_testing import hand, login


def test_a_right_pin_for_a_refused_correction_reads_as_words_on_the_rounds_page(dealer, service, audit, client):
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "10", "kind": "equal"})
    service.observe([hand("banker", "4S 6H QD 9C 9H"), hand("1", "AS 2S 3D 4D 5C")], 1)
    dealer.post("/dealer/api/settle")
    round_no = service.machine.round_no
    # 7H is in no hand of the round: the correction is refused after super1's PIN was accepted
    error = dealer.post("/dealer/api/correct", {"seat": "1", "old": "7H", "new": "9D", "reason": "misread",
                                                "pin": "4321", "round": round_no}, status=409)["error"]
    record = audit.records(types=[AuditType.PIN_ACCEPTED])[-1]
    assert record.round_no == round_no and record.data["refused"] == error

    login(client, "watch1")
    page = html.unescape(client.get(f"/review/round/{round_no}").get_data(as_text=True))
    assert (f"A supervisor PIN (super1), typed by dealer1 to {record.data['purpose']}, was accepted but the "
            f"action was refused: {error}") in page


def test_one_without_the_refusals_words_says_its_status(dealer, service, audit, client):
    """A refusal whose answer had no error text keeps its HTTP status, which the words give."""
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "10", "kind": "equal"})
    service.observe([hand("banker", "4S 6H QD 9C 9H"), hand("1", "AS 2S 3D 4D 5C")], 1)
    round_no = service.machine.round_no
    audit.append(AuditType.PIN_ACCEPTED, "dealer1", {"approved_by": "super1", "requested_by": "dealer1",
                                                     "purpose": "void round 1", "status": 409, "refused": ""},
                 round_no=round_no)
    login(client, "watch1")
    page = html.unescape(client.get(f"/review/round/{round_no}").get_data(as_text=True))
    assert ("A supervisor PIN (super1), typed by dealer1 to void round 1, was accepted but the action was "
            "refused (HTTP 409)") in page
