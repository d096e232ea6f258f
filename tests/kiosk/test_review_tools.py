"""The surveillance officer's tools on a disputed round (QA48 dispute M6, M7, M2, L4, L5): the
round page in words with the JSON behind a toggle, rounds under review, case notes, search by
card and by alert, the event log a page at a time, the frame that shows a corrected card,
and the Staff filter in any case with the accounts to pick from."""

from __future__ import annotations

import html
import json
import re

import cv2
import numpy as np
import pytest

from kiosk.audit import AuditType, Entry
from kiosk_testing import csrf_from, hand, login


def round_numbers(page: bytes | str) -> list[int]:
    text = page if isinstance(page, str) else page.decode()
    return [int(n) for n in re.findall(r'/review/round/(\d+)"', text)]


def text_of(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def section(page: str, ident: str) -> str:
    start = page.index(f'id="{ident}"')
    return page[start:page.index("</section>", start)]


def timeline_rows(page: str) -> dict[str, list[str]]:
    """Each timeline row's words (its toggled JSON left out), by record type."""
    rows: dict[str, list[str]] = {}
    for row in re.split(r"(?=<tr><td>\d+</td>)", section(page, "timeline"))[1:]:
        words = re.sub(r"<details.*?</details>", "", row, flags=re.S)
        cells = re.findall(r"<td[^>]*>(.*?)</td>", words, re.S)
        rows.setdefault(text_of(cells[2]), []).append(text_of(words.split("</td>", 4)[4]))
    return rows


def recording(app, round_no: int, frames: list[int]):
    folder = app.extensions["niuniu"].data_dir / "recordings" / "t1" / f"20240101T00000{round_no}Z-round-{round_no:04d}"
    (folder / "frames").mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps({"round_no": round_no}))
    for frame_no in frames:
        cv2.imwrite(str(folder / "frames" / f"{frame_no:08d}.jpg"), np.full((12, 16, 3), 90, np.uint8))
    return folder


# ------------------------------------------------------------------ M6: the round in words


def test_the_timeline_says_each_record_in_words_with_its_json_behind_a_toggle(played, audit):
    """QA48 dispute M6: every payload was raw JSON, the settlement's a 3,000-character cell."""
    page = played.get("/review/round/2").get_data(as_text=True)
    rows = timeline_rows(page)
    accepted = next(r for r in audit.records(round_no=2) if r.type == AuditType.CARD_ACCEPTED
                    and r.data["card"] == "AS")
    assert f"AS accepted on seat 1, conf 0.95, frame {accepted.data['frame_no']}" in rows["card_accepted"]
    assert rows["card_corrected"] == ["Seat 1: card AS replaced by AD, by dealer1, no supervisor's approval: misread"]
    settled = rows["round_settled"][0]
    assert settled.startswith("Settled by dealer1") and "the banker had Bull 8" in settled
    # the lines as a table: seat, hand, bet, result, gross, commission, net
    assert "Seat Hand Bet Result Gross Commission Net Seat 1 Bull 5 10.00 equal LOSE -10.00 0.00 -10.00" in settled
    assert rows["settlement_line"][0].startswith("Seat 1: LOSE -10.00 (Bull 5 against the banker's Bull 8)")
    # the record as logged is one click away, exactly as the chain hashes it, and nowhere else
    timeline = section(page, "timeline")
    raw = [html.unescape(t) for t in re.findall(r'<details class="raw"><summary>record as logged</summary>'
                                                r'<pre class="mono">(.*?)</pre></details>', timeline, re.S)]
    assert accepted.payload in raw and len(raw) == len(audit.records(round_no=2))
    assert '"settlement":{' not in re.sub(r"<details.*?</details>", "", timeline, flags=re.S).replace("&#34;", '"')


def test_a_record_of_an_unknown_type_or_an_older_shape_is_shown_as_its_json(played, audit):
    """No words that guess: a later release's record, or one without the fields its words need,
    is shown as logged, in plain sight (not behind the toggle), and the page still opens."""
    audit.append("card_swapped_later_release", "vision", {"card": "KH", "seat": "1"}, round_no=4)
    audit.append(AuditType.ALERT, "vision", {"seat": "1"}, round_no=4)      # no message: not a shape said here
    page = played.get("/review/round/4")
    assert page.status_code == 200
    rows = timeline_rows(page.get_data(as_text=True))
    assert rows["card_swapped_later_release"] == ['{"card":"KH","seat":"1"}'] and rows["alert"] == ['{"seat":"1"}']


def test_a_case_note_written_after_an_export_leaves_the_package_current(played, audit, tmp_path):
    """The package's check warns of the round's records written since it was made (QA48 H2): a
    note, like a hold, changes nothing of the round, so it is not one of them."""
    from kiosk.evidence import check_evidence

    package = tmp_path / "round2.zip"
    package.write_bytes(played.get("/review/round/2/evidence.zip").data)
    token = csrf_from(played.get("/review/round/2").get_data(as_text=True))
    played.post("/review/round/2/note", data={"csrf_token": token, "text": "package sent to the regulator"})
    assert audit.last().type == AuditType.ROUND_NOTE
    assert check_evidence(package, audit).warnings == []


def test_the_printed_round_leaves_out_the_timeline_the_forms_and_all_but_a_few_frames(played, app, audit):
    """A print of round 2 was 29 pages of JSON and thumbnails: the page marks what a print keeps."""
    records = audit.records(round_no=2)
    accepted = next(r.data["frame_no"] for r in records if r.type == AuditType.CARD_ACCEPTED and r.data["card"] == "AS")
    recording(app, 2, list(range(1, 40)))
    page = played.get("/review/round/2").get_data(as_text=True)
    assert re.search(r'<section class="panel no-print" id="event-timeline">', page)
    printed = re.findall(r'<figure id="frame-(\d+)" class="print-key"', page)
    assert accepted and str(accepted) in printed and 1 <= len(printed) <= 4
    assert len(re.findall(r"<figure ", page)) == 39
    assert 'id="printed"' in page and "Printed " in page


# ------------------------------------------------------------------ M2 and L4: the frames


def test_a_correction_links_the_key_frame_that_shows_the_card_with_the_cameras_confidence(played, app, audit):
    """QA48 dispute M2: finding the frame that showed the corrected card meant reading frame_no out of JSON."""
    accepted = next(r for r in audit.records(round_no=2) if r.type == AuditType.CARD_ACCEPTED
                    and r.data["card"] == "AS")
    frame_no = accepted.data["frame_no"]
    recording(app, 2, [frame_no + 1, frame_no + 5])       # no frame at the reading: the first after it
    page = played.get("/review/round/2").get_data(as_text=True)
    row = text_of(re.findall(r"<tr.*?</tr>", section(page, "corrections"), re.S)[1])
    assert f"AS read on seat 1 at frame {frame_no}, conf 0.95: key frame {frame_no + 1}" in row
    assert f'class="seen-frame" href="/review/round/2/frame/{frame_no + 1}.jpg"' in page
    # L4: every key frame opens full size
    assert re.search(rf'<figure id="frame-{frame_no + 5}"[^>]*><a href="/review/round/2/frame/{frame_no + 5}.jpg"',
                     page)


def test_a_card_a_correction_put_there_is_followed_back_to_what_the_camera_read(client, service, app, audit):
    token = login(client, "dealer1")
    headers = {"X-CSRF-Token": token}
    client.post("/dealer/api/bet", json={"seat": "1", "amount": "10", "kind": "equal"}, headers=headers)
    service.observe([hand("banker", "4S 6H QD 9C 9H"), hand("1", "AS 2S 3D 4D 5C", conf=0.81)], 7)
    for old, new in (("AS", "AD"), ("AD", "AH")):
        r = client.post("/dealer/api/correct", json={"seat": "1", "old": old, "new": new, "reason": "misread"},
                        headers=headers)
        assert r.status_code == 200, r.get_json()
    recording(app, 1, [7])
    login(client, "watch1")
    rows = re.findall(r"<tr.*?</tr>", section(client.get("/review/round/1").get_data(as_text=True), "corrections"),
                      re.S)
    assert "AS read on seat 1 at frame 7, conf 0.81: key frame 7" in text_of(rows[1])
    second = text_of(rows[2])
    assert "AS read on seat 1 at frame 7" in second and "the card the camera read where AD was put" in second


# ------------------------------------------------------------------ M7: under review


def test_a_held_round_is_under_review_in_the_list_and_corrections_since_are_marked(played, app, client):
    recording(app, 4, [5])
    token = csrf_from(played.get("/review/round/4").get_data(as_text=True))
    assert 'id="under-review"' not in played.get("/review/round/4").get_data(as_text=True)
    played.post("/review/round/4/hold", data={"csrf_token": token, "reason": "case 77: seat 1 disputes"})
    listed = played.get("/review/").get_data(as_text=True)
    rows = {n: row for n, row in re.findall(r'<tr>\s*<td><a href="/review/round/(\d+)">(.*?)</tr>', listed, re.S)}
    assert ">under review</span>" in rows["4"] and "under review" not in rows["2"]
    assert 'title="recording held by watch1: case 77: seat 1 disputes"' in rows["4"]
    assert round_numbers(played.get("/review/?held=1").data) == [4]
    assert round_numbers(played.get("/review/?held=1&from=2000-01-01&to=2001-01-01").data) == []

    token = login(client, "super1")       # the pit corrects the round surveillance is holding
    r = client.post("/dealer/api/correct", json={"round": 4, "seat": "1", "old": "8D", "new": "2D", "pin": "4321",
                                                "reason": "a 2 read as 8"}, headers={"X-CSRF-Token": token})
    assert r.status_code == 200, r.get_json()
    login(client, "watch1")
    page = client.get("/review/round/4").get_data(as_text=True)
    assert 'id="under-review"' in page and "Under review: this round" in page
    corrections = section(page, "corrections")
    assert corrections.count(">made while under review</span>") == 2      # the card, and the settlement
    assert "held by watch1 at audit record" in corrections
    # a correction made before any hold is not marked
    assert "made while under review" not in section(client.get("/review/round/2").get_data(as_text=True),
                                                    "corrections")


# ------------------------------------------------------------------ M7: case notes


def test_surveillance_adds_case_notes_kept_in_order_in_the_log(played, audit):
    page = played.get("/review/round/2").get_data(as_text=True)
    assert 'id="note-form"' in page and 'id="no-notes"' in page
    token = csrf_from(page)
    for text in ("Player at seat 1 says the AS was an AD.", "Frames checked:\r\nAS is plain on frame 3."):
        r = played.post("/review/round/2/note", data={"csrf_token": token, "text": text})
        assert r.status_code == 302 and r.headers["Location"].endswith("/review/round/2#notes")
    notes = audit.records(types=[AuditType.ROUND_NOTE])
    assert [(n.actor, n.round_no, n.data) for n in notes] == [
        ("watch1", 2, {"text": "Player at seat 1 says the AS was an AD.", "role": "surveillance"}),
        ("watch1", 2, {"text": "Frames checked:\nAS is plain on frame 3.", "role": "surveillance"})]
    listed = section(played.get("/review/round/2").get_data(as_text=True), "notes")
    first, second = listed.index("says the AS was an AD"), listed.index("AS is plain on frame 3")
    assert first < second and f"audit record {notes[0].seq}" in listed


def test_a_refused_note_keeps_what_was_written_and_says_why(played, audit):
    token = csrf_from(played.get("/review/round/2").get_data(as_text=True))
    empty = played.post("/review/round/2/note", data={"csrf_token": token, "text": "   "})
    assert empty.status_code == 400 and "the note is empty" in empty.get_data(as_text=True)
    long = "x" * 2001
    refused = played.post("/review/round/2/note", data={"csrf_token": token, "text": long})
    page = refused.get_data(as_text=True)
    assert refused.status_code == 400 and "the note is 2001 characters; a note holds at most 2000" in page
    assert f">{long}</textarea>" in page                     # not lost: shortened where it is
    assert played.post("/review/round/2/note", data={"text": "no token"}).status_code == 400
    assert played.post("/review/round/99/note", data={"csrf_token": token, "text": "x"}).status_code == 404
    assert not audit.records(types=[AuditType.ROUND_NOTE])


@pytest.mark.parametrize("who", ["super1", "dealer1"])
def test_only_surveillance_writes_case_notes(client, played, who, audit):
    token = login(client, who)
    assert client.post("/review/round/2/note", data={"csrf_token": token, "text": "x"}).status_code == 403
    assert not audit.records(types=[AuditType.ROUND_NOTE])


# ------------------------------------------------------------------ M7: search by card and by alert


def test_rounds_are_found_by_a_card_on_a_seat_as_dealt_or_corrected(played):
    assert round_numbers(played.get("/review/?card=KS").data) == [1]
    assert round_numbers(played.get("/review/?card=k%E2%99%A0").data) == [1]      # "k♠" is KS
    assert round_numbers(played.get("/review/?card=AD&seat=1").data) == [2]
    assert round_numbers(played.get("/review/?card=as").data) == [2]      # corrected away: still its round
    assert round_numbers(played.get("/review/?card=KS&seat=2").data) == []
    refused = played.get("/review/?card=ZZ").get_data(as_text=True)
    assert "suit &#39;Z&#39; is not one of" in refused and "type one card, like KH or 10S" in refused
    assert 'id="card-refused"' in refused and round_numbers(refused) == []


def test_rounds_are_found_by_the_kind_of_alert(client, service):
    token = login(client, "dealer1")
    headers = {"X-CSRF-Token": token}
    client.post("/dealer/api/bet", json={"seat": "1", "amount": "10"}, headers=headers)
    service.observe([hand("banker", "4S 6H"), hand("1", "4S")], 1)      # one card on two seats
    login(client, "watch1")
    page = client.get("/review/").get_data(as_text=True)
    assert '<option value="duplicate_card" >duplicate card</option>' in page
    assert round_numbers(client.get("/review/?alert=duplicate_card").data) == [1]
    assert round_numbers(client.get("/review/?alert=too_many_cards").data) == []
    assert round_numbers(client.get("/review/?alert=duplicate_card&seat=2").data) == []
    assert 'id="alert-refused"' in client.get("/review/?alert=gremlins").get_data(as_text=True)


# ------------------------------------------------------------------ L5: the Staff filter


def test_the_staff_filter_is_in_any_case_and_offers_the_accounts(played):
    assert round_numbers(played.get("/review/?staff=DEALER1").data) == [4, 3, 2, 1]
    assert round_numbers(played.get("/review/?staff=Super1").data) == [3]
    page = played.get("/review/").get_data(as_text=True)
    staff = re.search(r'<datalist id="staff-accounts">(.*?)</datalist>', page).group(1)
    assert re.findall(r'value="([^"]+)"', staff) == ["dealer1", "super1"]
    assert 'list="staff-accounts"' in page and 'list="approver-accounts"' in page
    approvers = re.search(r'<datalist id="approver-accounts">(.*?)</datalist>', page).group(1)
    assert re.findall(r'value="([^"]+)"', approvers) == ["super1"]


# ------------------------------------------------------------------ M7: the event log a page at a time


def test_the_event_log_pages_through_a_long_log(played, audit):
    """Only the newest 500 of a type were ever shown, with no way to the older ones."""
    audit.append_many([Entry(AuditType.LOGIN_FAILED, f"guess{i:03d}", {"reason": "wrong password"})
                       for i in range(450)])
    seqs = [r.seq for r in audit.records(types=[AuditType.LOGIN_FAILED], newest_first=True)]

    def page_of(url: str) -> tuple[list[int], str]:
        page = played.get(url).get_data(as_text=True)
        return [int(n) for n in re.findall(r"<tr><td>(\d+)</td>", page)], page

    shown, page = page_of("/review/log?type=login_failed")
    assert shown == seqs[:200] and "newer" not in page
    pages = [shown]
    while (older := re.search(r'<a class="older" href="([^"]+)"', page)):
        shown, page = page_of(html.unescape(older.group(1)))
        pages.append(shown)
    assert [len(p) for p in pages] == [200, 200, 50] and sum(pages, []) == seqs
    back = html.unescape(re.search(r'<a class="newer" href="([^"]+)"', page).group(1))
    assert "type=login_failed" in back and page_of(back)[0] == pages[1]     # newer: the page before it
    assert "wrong password" in text_of(page)     # said in words, not JSON
