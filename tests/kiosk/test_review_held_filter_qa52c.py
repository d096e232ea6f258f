"""The round list's Under review filter past a damaged hold (QA52 review M4).  One damaged
``recording_held`` record emptied the filter and dropped every round's held flag, though the
other holds read fine.  The list now holds what retention keeps: the readable holds, and each
damaged hold's round (stored beside the payload) until a readable release of it is logged."""

from __future__ import annotations

from kiosk.audit import AuditType
from test_damaged_record_kiosk import damage
from test_damaged_record_more import text
from test_review import round_numbers
from test_review_flags_qa52 import row_html
from vision.record import round_suffix


def folder(round_no: int) -> str:
    return f"20260101T000000Z{round_suffix(round_no)}"


def hold(audit, round_no: int, reason: str):
    return audit.append(AuditType.RECORDING_HELD, "watch1", {"folder": folder(round_no), "reason": reason},
                        round_no=round_no)


def test_a_damaged_hold_leaves_the_readable_holds_under_review_and_holds_its_own_round(played, audit):
    hold(audit, 1, "dispute 1")
    bad = hold(audit, 2, "dispute 2")
    damage(audit.path, bad.seq)
    page = played.get("/review/?held=1").get_data(as_text=True)
    assert round_numbers(page.encode()) == [2, 1]
    assert "recording held by watch1: dispute 1" in row_html(page, 1)
    assert f"recording held by watch1: hold record damaged (audit record {bad.seq} cannot be read)" \
        in row_html(page, 2)
    assert f"audit record seq {bad.seq} (recording_held) cannot be read" in text(page)
    assert "round 2 is listed as under review (hold record damaged)" in text(page)
    assert "cannot be told" not in text(page)


def test_a_damaged_hold_released_since_holds_nothing(played, audit):
    hold(audit, 1, "dispute 1")
    bad = hold(audit, 2, "dispute 2")
    audit.append(AuditType.RECORDING_RELEASED, "watch1", {"folder": folder(2), "reason": "case closed"},
                 round_no=2)
    damage(audit.path, bad.seq)
    page = played.get("/review/?held=1").get_data(as_text=True)
    assert round_numbers(page.encode()) == [1]
    assert 'id="holds-unread"' not in page
