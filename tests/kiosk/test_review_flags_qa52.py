"""What the surveillance officer scans for disputes (QA52): the round list says in words which
rounds' recording failed and which hold a damaged audit record, and filters for them; the
review page's export says which records are damaged before it hands the file out, and the
file still holds every record."""

from __future__ import annotations

import html
import json
import re

from kiosk.audit import AuditType
from test_damaged_record_kiosk import damage
from test_damaged_record_more import text
from test_review import round_numbers

NOT_WRITABLE = "cannot start recording in /var/lib/niuniu/recordings/t1/round-0002: [Errno 13] Permission denied"


def row_of(page: str, round_no: int) -> str:
    """The round list's row of one round, as words."""
    return text(row_html(page, round_no))


def row_html(page: str, round_no: int) -> str:
    """The row as HTML, its character references read: what its flags say on hover."""
    found = re.search(rf'<tr>\s*<td><a href="/review/round/{round_no}">.*?</tr>', page, re.S)
    assert found, f"round {round_no} is not on the list"
    return html.unescape(found.group(0))


def test_the_round_list_says_which_rounds_recording_failed_and_filters_them(played, audit):
    audit.append(AuditType.RECORDING_FAILED, "system", {"error": NOT_WRITABLE, "stopped": True}, round_no=2)
    audit.append(AuditType.RECORDING_FAILED, "system", {"error": "disk full", "stopped": False}, round_no=4)
    page = played.get("/review/").get_data(as_text=True)
    assert "not recorded" in row_of(page, 2) and NOT_WRITABLE in row_html(page, 2)      # the error, on hover
    assert "recording incomplete" in row_of(page, 4)
    assert "recording" not in row_of(page, 1) and "recording" not in row_of(page, 3)
    assert round_numbers(played.get("/review/?recording_failed=1").data) == [4, 2]


def test_the_round_list_says_which_rounds_hold_a_damaged_record_and_filters_them(played, audit):
    [settled] = audit.records(types=[AuditType.ROUND_SETTLED], round_no=4)
    note = audit.append(AuditType.ROUND_NOTE, "watch1", {"text": "case 7", "role": "surveillance"}, round_no=1)
    failed = audit.append(AuditType.RECORDING_FAILED, "system", {"error": "disk full", "stopped": True}, round_no=3)
    for seq in (settled.seq, note.seq, failed.seq):
        damage(audit.path, seq)
    page = played.get("/review/").get_data(as_text=True)
    assert "1 audit record damaged" in row_of(page, 4) and f"seq {settled.seq} (round_settled)" in row_html(page, 4)
    assert "1 audit record damaged" in row_of(page, 1) and f"seq {note.seq} (round_note)" in row_html(page, 1)
    # its kind alone says the recording failed, though the record cannot say why
    assert "recording failed" in row_of(page, 3) and "its record cannot be read" in row_html(page, 3)
    assert "damaged" not in row_of(page, 2)
    assert round_numbers(played.get("/review/?damaged=1").data) == [4, 3, 1]


def test_a_held_round_with_a_damaged_correction_is_listed_flagged(played, audit):
    """A round under review whose correction is damaged: the list flags it, rather than failing
    on it while it reads which corrections were made under review."""
    audit.append(AuditType.RECORDING_HELD, "watch1", {"folder": "round-0002", "reason": "dispute"}, round_no=2)
    [corrected] = audit.records(types=[AuditType.CARD_CORRECTED], round_no=2)
    damage(audit.path, corrected.seq)
    listed = played.get("/review/")
    assert listed.status_code == 200
    row = row_of(listed.get_data(as_text=True), 2)
    assert "under review" in row and "1 audit record damaged" in row


def test_the_review_export_names_the_damaged_records_before_it_downloads_them_all(played, audit):
    [settled] = audit.records(types=[AuditType.ROUND_SETTLED], round_no=1)
    damage(audit.path, settled.seq)
    exported = len(audit.records(types=[AuditType.EXPORTED]))
    told = played.get("/review/export?format=json&from=2000-01-01")
    assert told.status_code == 200 and not told.headers.get("Content-Disposition")
    words = text(told.get_data(as_text=True))
    assert "1 audit record of this period cannot be read or does not match its hash" in words
    assert f"seq {settled.seq} (round_settled) cannot be read (its payload is not JSON" in words
    assert "no readable record is lost" in words
    assert len(audit.records(types=[AuditType.EXPORTED])) == exported        # nothing exported yet
    link = re.search(r'id="download-anyway" href="([^"]+)"', told.get_data(as_text=True)).group(1)
    got = played.get(link.replace("&amp;", "&"))
    assert got.headers["Content-Disposition"].startswith("attachment")
    records = json.loads(got.data)["records"]
    assert len(records) == audit.count(upto_seq=records[-1]["seq"])           # every record, the readable ones too
    assert [r["seq"] for r in records if r.get("damaged")] == [settled.seq]
    assert len(audit.records(types=[AuditType.EXPORTED])) == exported + 1



def test_a_damaged_hold_leaves_no_round_off_the_list(played, audit):
    """A hold the log no longer holds readable: every round is still listed, the page names the
    record and what it costs, and the round it held is flagged and still under review.

    This pinned "Which rounds are under review cannot be told" until QA52 review M4: that
    banner came with an empty Under review filter, though the damaged hold still holds its
    round's recording (retention keeps it, stored round and all) and the other holds read fine."""
    held = audit.append(AuditType.RECORDING_HELD, "watch1", {"folder": "round-0002", "reason": "dispute"}, round_no=2)
    damage(audit.path, held.seq)
    listed = played.get("/review/")
    assert listed.status_code == 200 and round_numbers(listed.data) == [4, 3, 2, 1]
    page = listed.get_data(as_text=True)
    assert f"audit record seq {held.seq} (recording_held) cannot be read" in text(page)
    assert "round 2 is listed as under review (hold record damaged)" in text(page)
    assert "1 audit record damaged" in row_of(page, 2) and "under review" in row_of(page, 2)
    assert f"hold record damaged (audit record {held.seq} cannot be read)" in row_html(page, 2)
    assert round_numbers(played.get("/review/?held=1").data) == [2]


def test_the_chain_page_names_a_damaged_export_or_recording_record_in_its_row(played, audit):
    played.get("/review/export?format=csv")
    [exported] = audit.records(types=[AuditType.EXPORTED])
    changed = audit.append(AuditType.RECORDING_CHANGED, "system", {"folder": "round-0001", "changes": ["a.jpg"],
                                                                    "changed_files": 1}, round_no=1)
    damage(audit.path, exported.seq)
    damage(audit.path, changed.seq)
    chain = played.get("/review/chain")
    assert chain.status_code == 200
    words = text(chain.get_data(as_text=True))
    assert f"cannot be read audit record seq {exported.seq}: its payload is not JSON" in words
    assert f"cannot be read audit record seq {changed.seq}: its payload is not JSON" in words
