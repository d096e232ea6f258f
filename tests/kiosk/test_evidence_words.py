"""QA49: a disputed round told the same on the round page and in its evidence package, and an
export that never leaves half a package (review H2, M5, L4, L6; watch H3, M1-M4, M6, L1, L3,
L5, L7).

The round page and summary.txt word each record with one set of functions
(``kiosk.timeline.Say``): the summary said "the difference paid (the house owes seat 2
97.50)" of money paid, and "no difference" where 195.00 was still to collect."""

from __future__ import annotations

import json
import re
import zipfile
from types import SimpleNamespace

import pytest

from kiosk.audit import AuditType
from kiosk.timeline import printed_frames
from kiosk_testing import csrf_from, hand, login, make_table
from test_evidence_summary import accounts_logged, exported, flat, read, rezip
from test_paid_and_corrected import correct, settled_round, two_corrections
from test_review_tools import recording, round_numbers, section, text_of

ADJUST = "/dealer/api/adjustment"


@pytest.fixture
def table(request):
    """The test table, or one with another preset's rules (``indirect`` parametrize)."""
    return make_table(rules=getattr(request, "param", "cambodia"))


def list_rows(page: str) -> dict[str, str]:
    """The round list's rows by round number."""
    return dict(re.findall(r'<tr>\s*<td><a href="/review/round/(\d+)">(.*?)</tr>', page, re.S))


# ------------------------------------------------------------------ review H2: a stray file in frames/


def test_a_stray_jpg_in_frames_is_packed_as_it_is_and_the_export_goes_through(played, app, runner, tmp_path):
    """A Mac's AppleDouble ``._00000003.jpg`` beside the frame crashed the export (int('._00000003'))."""
    folder = recording(app, 2, [3])
    (folder / "frames" / "._00000003.jpg").write_bytes(b"\x00\x05\x16\x07AppleDouble")
    target = tmp_path / "round2.zip"
    code, _, err = runner(["audit", "evidence", "--data-dir", str(app.extensions["niuniu"].data_dir), "--round", "2",
                           "--by", "inspector", "-o", str(target)])
    assert code == 0, err
    with zipfile.ZipFile(target) as package:
        names = package.namelist()
        text = package.read("summary.txt").decode("utf-8")
    assert f"recording/{folder.name}/frames/._00000003.jpg" in names and "MANIFEST.json" in names
    assert "boxed/._00000003.jpg" not in names
    assert "Not key frames: frames/._00000003.jpg (not named by a frame number" in flat(text)
    assert "frame 3 · " in text                     # the real key frame keeps its caption

    assert played.get("/review/round/2/evidence.zip").status_code == 200      # was a 500
    page = played.get("/review/round/2").get_data(as_text=True)
    assert "frames/._00000003.jpg" in text_of(section(page, "stray-frames") + "</p>")


def test_an_export_that_fails_midway_leaves_nothing_behind_and_the_retry_writes_it(played, app, runner, tmp_path,
                                                                                monkeypatch):
    import kiosk.evidence

    out = tmp_path / "out"
    out.mkdir()
    target = out / "round2.zip"
    argv = ["audit", "evidence", "--data-dir", str(app.extensions["niuniu"].data_dir), "--round", "2", "-o",
            str(target)]

    def broken(*args, **kwargs):
        raise RuntimeError("the summary could not be written")

    monkeypatch.setattr(kiosk.evidence, "summary_sections", broken)
    with pytest.raises(RuntimeError):
        runner(argv)
    assert list(out.iterdir()) == []        # no zip without a manifest to block the retry
    monkeypatch.undo()
    code, _, err = runner(argv)
    assert code == 0, err
    with zipfile.ZipFile(target) as package:
        assert "MANIFEST.json" in package.namelist()
    assert [p.name for p in out.iterdir()] == ["round2.zip"]


# ------------------------------------------------------------------ watch H3, M1, review M5: the money


def test_the_summary_says_what_is_still_to_collect_in_the_round_pages_words(dealer, service, client, audit):
    """Paid out on a correction, then corrected back: as corrected equals paid at the table, yet the
    97.50 paid out is now to collect. The summary said "no difference" and nothing else."""
    accounts_logged(audit)
    settled_round(dealer, service)
    basis = correct(dealer, "2", "4D", "9D", "9 read as 4")["state"]["round"]["adjustment"]["basis"]
    dealer.post(ADJUST, {"round": 1, "basis": basis, "action": "paid"})        # 97.50 paid to seat 2
    correct(dealer, "2", "9D", "4D", "it was a 4 after all")
    text = read(exported(client, 1), "summary.txt").decode("utf-8")
    money = flat(text.split("\nDifference and adjustment\n")[1].split("\nCorrections and void")[0])
    assert "Seat 2: no difference" in money
    outstanding = ("Adjustment outstanding: to collect 97.50 from seat 2 (no record yet says the dealer paid or "
                   "collected it, or that a supervisor waived it).")
    assert outstanding in money
    assert "Adjustment recorded by dealer1 (dealer at the time): paid 97.50 to seat 2 at the table" in money
    page = client.get("/review/round/1").get_data(as_text=True)
    assert outstanding in text_of(page)                  # the page says it in the same words


def test_paid_collected_and_waived_read_with_the_dealers_verbs(dealer, service, client, audit):
    accounts_logged(audit)
    settled_round(dealer, service)
    correct(dealer, "2", "4D", "9D", "9 read as 4")
    basis = correct(dealer, "1", "10H", "9S", "last card a nine")["state"]["round"]["adjustment"]["basis"]
    dealer.post(ADJUST, {"round": 1, "basis": basis, "action": "waived", "seats": ["1"],
                         "reason": "player 1 left the table", "pin": "4321"})
    dealer.post(ADJUST, {"round": 1, "basis": basis, "action": "paid"})
    text = flat(read(exported(client, 1), "summary.txt").decode("utf-8"))
    assert "the difference paid (" not in text and "the difference waived (" not in text
    assert ("Adjustment waived by super1 (supervisor at the time) (asked by dealer1 (dealer at the time)): not "
            "collected 95.00 from seat 1; reason: player 1 left the table") in text
    assert "Adjustment recorded by dealer1 (dealer at the time): paid 97.50 to seat 2 at the table" in text
    assert "Every difference the corrections moved has been paid, collected or waived." in text
    page = text_of(client.get("/review/round/1").get_data(as_text=True))
    assert "Adjustment waived by super1 (asked by dealer1): not collected 95.00 from seat 1" in page
    assert "Every difference the corrections moved has been paid, collected or waived." in page


# ------------------------------------------------------------------ watch M2, M6, L7: under review, self-approval


def test_a_self_approved_correction_of_a_held_round_is_flagged_everywhere_surveillance_looks(played, app, client,
                                                                                              runner, tmp_path):
    folder = recording(app, 4, [7])
    token = csrf_from(played.get("/review/round/4").get_data(as_text=True))
    played.post("/review/round/4/hold", data={"csrf_token": token, "reason": "case 77: seat 1 disputes"})
    token = login(client, "super1")        # the supervisor, logged in as herself, types her own PIN
    r = client.post("/dealer/api/correct", json={"round": 4, "seat": "1", "old": "8D", "new": "2D", "pin": "4321",
                                                "reason": "a 2 read as 8"}, headers={"X-CSRF-Token": token})
    assert r.status_code == 200, r.get_json()
    login(client, "watch1")

    rows = list_rows(client.get("/review/").get_data(as_text=True))
    assert "corrected while under review</span>" in rows["4"] and "self-approved</span>" in rows["4"]
    assert "corrected while under review" not in rows["2"] and "self-approved" not in rows["2"]
    holds = text_of(client.get("/review/holds").get_data(as_text=True))
    assert "corrected while under review 2 corrections since held, the last by super1" in holds
    corrections = text_of(section(client.get("/review/round/4").get_data(as_text=True), "corrections"))
    assert "super1 requested and approved by the same person" in corrections

    text = flat(read(client.get("/review/round/4/evidence.zip").data, "summary.txt").decode("utf-8"))
    card = text.split("Seat 1: card 8D replaced by 2D — after settlement")[1].split(" 2. ")[0]
    assert "Made while the round was under review: its recording held by watch1" in card
    assert "(case 77: seat 1 disputes)" in card
    assert "NOTE: requested and approved by the same person: no second person approved it" in card
    assert (f"The camera: 8D read on seat 1 at frame 7, conf 0.95; key frame 7: recording/{folder.name}/frames/"
            "00000007.jpg") in card

    # Released when the case closed: no longer under review, but still found as a round once investigated.
    token = csrf_from(client.get("/review/round/4").get_data(as_text=True))
    client.post("/review/round/4/release", data={"csrf_token": token, "reason": "case 77 closed"})
    assert round_numbers(client.get("/review/?held=1").data) == []
    listed = client.get("/review/?reviewed=1").get_data(as_text=True)
    assert round_numbers(listed) == [4] and "was under review</span>" in list_rows(listed)["4"]


# ------------------------------------------------------------------ watch M3: the printed frames


def test_a_printed_round_keeps_the_frame_that_shows_a_card_changed_in_place():
    def record(kind, **data):
        return SimpleNamespace(type=kind, data=data, seq=0, ts="2026-12-07T08:00:00Z", actor="camera")

    timeline = [record(AuditType.ROUND_COMPLETE, frame_no=115), record(AuditType.ROUND_SETTLED, frame_no=132),
                record(AuditType.ALERT, code="card_changed", seat="3", card="5C", read_as="KH", frame_no=149),
                record(AuditType.ALERT, code="card_after_round", seat="2", card="QH", frame_no=160)]
    frames = ["00000115", "00000132", "00000149", "00000160"]
    assert printed_frames(timeline, frames, {}) == ["00000149", "00000160", "00000132", "00000115"]


def test_the_round_page_prints_the_frame_of_a_card_changed_in_place(played, app, audit):
    recording(app, 1, [1, 2])
    audit.append(AuditType.ALERT, "camera", {"code": "card_changed", "seat": "1", "card": "KS", "read_as": "KH",
                                             "frame_no": 2, "message": "KS on seat 1 has read as KH"}, round_no=1)
    page = played.get("/review/round/1").get_data(as_text=True)
    assert '<figure id="frame-2" class="print-key">' in page and '<figure id="frame-1" class="print-key">' in page


# ------------------------------------------------------------------ watch M4: search by a card the camera saw


def test_the_card_search_finds_a_card_seen_only_in_the_cameras_alerts(played, audit):
    audit.append(AuditType.ALERT, "camera", {"code": "card_changed", "seat": "1", "card": "KS", "read_as": "KH",
                                             "frame_no": 2, "message": "KS on seat 1 has read as KH"}, round_no=1)
    audit.append(AuditType.ALERT, "camera", {"code": "card_after_round", "seat": "1", "card": "QH", "frame_no": 6,
                                             "message": "QH appeared on seat 1 after round 3 was voided"}, round_no=3)
    listed = played.get("/review/?card=kh&seat=1").get_data(as_text=True)
    assert round_numbers(listed) == [1]
    assert "KH seen by the camera, not on record</span>" in list_rows(listed)["1"]
    assert round_numbers(played.get("/review/?card=QH").data) == [3]
    assert round_numbers(played.get("/review/?card=KH&seat=2").data) == []
    # a card on record is found as before, with no such mark
    listed = played.get("/review/?card=KS&seat=1").get_data(as_text=True)
    assert round_numbers(listed) == [1] and "seen by the camera, not on record" not in listed


# ------------------------------------------------------------------ check-evidence: watch L1, L5


def test_check_evidence_does_not_vouch_for_a_file_it_then_finds_changed(played, app, runner, tmp_path):
    data_dir = str(app.extensions["niuniu"].data_dir)
    data = played.get("/review/round/2/evidence.zip").data
    runner(["audit", "public-key", "--data-dir", data_dir, "-o", str(tmp_path / "t.pem")])
    edited = rezip(data, tmp_path / "e.zip", {"summary.txt": b"seat 1 was paid in full\n"})
    code, out, _ = runner(["audit", "check-evidence", str(edited), "--public-key", str(tmp_path / "t.pem")])
    assert code == 1 and "PROBLEM: summary.txt differs from the file exported" in out
    assert "every file it lists is as the table exported it" not in out
    assert "MANIFEST.json is signed by the published key" in out and "the manifest is as the table signed it" in out


def test_check_evidence_tells_of_a_case_note_written_after_the_package(played, app, audit, runner, tmp_path):
    path = tmp_path / "r2.zip"
    path.write_bytes(played.get("/review/round/2/evidence.zip").data)
    token = csrf_from(played.get("/review/round/2").get_data(as_text=True))
    played.post("/review/round/2/note", data={"csrf_token": token, "text": "the correction looks wrong"})
    note = audit.records(types=[AuditType.ROUND_NOTE])[0]
    code, out, _ = runner(["audit", "check-evidence", str(path), "--data-dir", str(app.extensions["niuniu"].data_dir)])
    assert code == 0 and "WARNING" not in out and "PROBLEM" not in out     # a note changes nothing of the round
    assert (f"ok: round 2 has 1 case note or hold record written after this package (seq {note.seq} round_note by "
            "watch1)") in out


# ------------------------------------------------------------------ the round page: watch L3, review L4


def test_the_round_page_gives_the_end_time_its_zone(service, played):
    page = text_of(played.get("/review/round/1").get_data(as_text=True))
    zone = service.config.timezone
    assert re.search(rf"Started [\d-]+ [\d:]+ {zone} · ended [\d-]+ [\d:]+ {zone} · table", page)


def test_the_round_page_counts_one_card_in_the_singular(client, service, played):
    login(client, "dealer1")
    service.observe([hand("banker", "4S 6H QD 9C 9H"), hand("1", "AS")], 20)
    login(client, "watch1")
    hands = section(client.get("/review/round/5").get_data(as_text=True), "hands")
    assert "<td>1 card — not scored</td>" in hands


# ------------------------------------------------------------------ review L6: staff as of the round's end


def test_the_staff_are_named_with_their_role_when_the_round_ended_not_at_its_last_record(dealer, service, client,
                                                                                         audit):
    accounts_logged(audit)
    settled_round(dealer, service)
    audit.append(AuditType.USER_CHANGED, "admin1", {"username": "dealer1", "change": "role", "role": "supervisor"})
    audit.append(AuditType.ROUND_NOTE, "watch1", {"text": "looked at it", "role": "surveillance"}, round_no=1)
    settled = audit.records(round_no=1, types=[AuditType.ROUND_SETTLED])[0]
    text = read(exported(client, 1), "summary.txt").decode("utf-8")
    assert f"dealer1: dealer when the round ended (log seq {settled.seq})" in text
    assert json.loads(read(exported(client, 1), "staff.json"))[-1]["type"] == "user_changed"   # still carried


# ------------------------------------------------------------------ the page and the summary word a correction alike


def test_the_page_and_the_summary_word_a_card_correction_alike(dealer, service, client, audit):
    two_corrections(dealer, service)
    text = flat(read(exported(client, 1), "summary.txt").decode("utf-8"))
    page = text_of(client.get("/review/round/1").get_data(as_text=True))
    assert "Seat 2: card 4D replaced by 9D — after settlement" in text
    assert "Seat 2: card 4D replaced by 9D after settlement, by dealer1, approved by super1: 9 read as 4" in page


# ------------------------------------------------------------------ a player banks: the banker is a party


@pytest.mark.parametrize("table", ["classic"], indirect=True)
def test_where_a_player_banks_the_banker_is_the_other_side_in_the_page_and_the_summary(table, dealer, service,
                                                                                        client, audit):
    dealer.post("/dealer/api/bet", {"seat": "2", "amount": "50", "kind": "standard"})
    service.observe([hand("banker", "4S 6H QD 9C 9H"), hand("2", "AS 2S 3D 4D 5C")], 1)
    dealer.post("/dealer/api/settle")
    correct(dealer, "2", "4D", "9D", "9 read as 4")        # seat 2 now wins against the banker
    summary = audit.records(round_no=1, types=[AuditType.SETTLEMENT_CORRECTED])[-1].data
    owed = summary["difference"]["2"]
    text = flat(read(exported(client, 1), "summary.txt").decode("utf-8"))
    page = text_of(client.get("/review/round/1").get_data(as_text=True))
    assert f"Seat 2: the banker owes seat 2 {owed}" in text and f"the banker owes seat 2 {owed}" in page
    assert "owes the house" not in text and "owes the house" not in page
    due = re.search(r"Adjustment outstanding: to collect ([\d.]+) from the banker; to pay ([\d.]+) to seat 2", text)
    assert due and due.group(2) == owed, text
    assert due.group(0) in page
