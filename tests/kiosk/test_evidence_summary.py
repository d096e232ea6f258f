"""QA48 dispute M9: an evidence package read without the kiosk — the round in plain words
(summary.txt), key frames with what the camera read drawn on them (boxed/), and the
account records of the staff it names (staff.json) — while check-evidence still tells a
changed reading aid from changed evidence, and still checks packages made before them."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import timezone
from zoneinfo import ZoneInfo

import cv2
import numpy as np
import pytest

from kiosk.audit import AuditType, local_text, log_moment
from kiosk.evidence import check_evidence
from kiosk_testing import login, make_table
from test_paid_and_corrected import two_corrections

ZONE = "Asia/Phnom_Penh"


@pytest.fixture
def table():
    return make_table().model_copy(update={"timezone": ZONE})


def accounts_logged(audit) -> None:
    """The accounts as the admin page logs them (the test accounts are made without records)."""
    audit.append(AuditType.USER_CREATED, "admin1", {"username": "dealer1", "role": "dealer"})
    audit.append(AuditType.USER_CREATED, "admin1", {"username": "super1", "role": "supervisor"})


def exported(client, round_no: int) -> bytes:
    login(client, "watch1")
    response = client.get(f"/review/round/{round_no}/evidence.zip")
    assert response.status_code == 200 and response.mimetype == "application/zip"
    return response.data


def read(data: bytes, name: str) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return z.read(name)


def rezip(source: bytes, target, change: dict[str, bytes | None]):
    """A copy of a package with members replaced (bytes) or left out (None)."""
    with zipfile.ZipFile(io.BytesIO(source)) as old, zipfile.ZipFile(target, "w") as new:
        for name in old.namelist():
            if name in change and change[name] is None:
                continue
            new.writestr(name, change.get(name) or old.read(name))
    return target


def flat(text: str) -> str:
    """summary.txt's words with its line folds undone, to find a sentence in it."""
    return " ".join(text.split())


def when(ts: str) -> str:
    """A log time as the summary writes it: the table's zone, UTC beside it (with its date when the
    two days differ: run between 17:00 and 24:00 UTC, Bangkok is already on the next day)."""
    local, utc = local_text(ts, ZoneInfo(ZONE)), log_moment(ts).astimezone(timezone.utc)
    day = "" if local[:10] == f"{utc:%Y-%m-%d}" else f"{utc:%Y-%m-%d} "
    return f"{local} ({day}{utc:%H:%M:%S} UTC)"


def test_the_summary_tells_a_corrected_round_in_plain_words(dealer, client, service, audit):
    accounts_logged(audit)
    two_corrections(dealer, service)
    text = read(exported(client, 1), "summary.txt").decode("utf-8")
    records = audit.records(round_no=1)
    settled = next(r for r in records if r.type == AuditType.ROUND_SETTLED)
    first, second = [r for r in records if r.type == AuditType.CARD_CORRECTED]

    assert f"Times are in the table's time zone, {ZONE}, with UTC in brackets" in flat(text)
    assert "Amounts are in USD, written to the table's money unit (0.01)" in flat(text)
    assert f"Settled by dealer1 (dealer at the time) at {when(settled.ts)}" in text
    # Hands as the camera read them and as corrected, each seat's changed cards marked.
    hands = text.split("\nHands\n")[1].split("\nBets\n")[0]
    camera, corrected = hands.split("As corrected")
    assert "Seat 2  AS 2S 3D 4D 5C" in camera and "Seat 1  KS QS JS 10S 10H" in camera
    assert "AS 2S 3D 9D 5C" in corrected and "KS QS JS 10S 9S" in corrected and "(changed)" in corrected
    # What was paid, what the books hold now, and the difference in words, to the money unit.
    paid = text.split("\nSettlement paid at the table")[1].split("\nSettlement as corrected")[0]
    now = text.split("\nSettlement as corrected")[1].split("\nDifference")[0]
    assert "WIN     300.00  15.00       +285.00" in paid and "LOSE    -50.00  0.00        -50.00" in paid
    assert "WIN     200.00  10.00       +190.00" in now and "WIN     50.00   2.50        +47.50" in now
    assert "Seat 1: seat 1 owes the house 95.00" in text and "Seat 2: the house owes seat 2 97.50" in text
    # Every correction: when, what, why, who and their role then.
    assert f"{when(first.ts)}, log seq {first.seq}\n     Seat 2: card 4D replaced by 9D — after settlement\n" \
           "     Why: 9 read as 4\n     Entered by dealer1 (dealer at the time); approved by super1 (supervisor at " \
           "the time)" in text
    assert f"log seq {second.seq}\n     Seat 1: card 10H replaced by 9S" in text
    assert "Why: seat 1 disputes: last card a nine" in text
    assert "Seat 1: WIN +285.00 -> WIN +190.00 (seat 1 owes the house 95.00)" in text
    assert "niuniu audit check-evidence THIS.zip --public-key" in text and "derived, not sealed" in flat(text)
    ended = next(r for r in records if r.type == AuditType.ROUND_SETTLED).seq     # not a later record (QA49 L6)
    assert f"super1: supervisor when the round ended (log seq {ended})" in text
    # The page a browser opens says the same.
    page = read(exported(client, 1), "summary.html").decode("utf-8")
    assert "Why: 9 read as 4" in page and "seat 1 owes the house 95.00" in page


def test_the_staff_named_travel_with_their_account_records_and_a_changed_role_shows(dealer, client, service,
                                                                                    audit, tmp_path):
    accounts_logged(audit)
    audit.append(AuditType.USER_CREATED, "admin1", {"username": "pit9", "role": "dealer"})     # not in the round
    two_corrections(dealer, service)
    audit.append(AuditType.USER_CHANGED, "admin1", {"username": "super1", "change": "disabled"})   # after the round
    data = exported(client, 1)
    staff = json.loads(read(data, "staff.json"))
    assert [(r["type"], json.loads(r["payload"])["username"]) for r in staff] == [
        ("user_created", "dealer1"), ("user_created", "super1")]
    path = tmp_path / "round1.zip"
    path.write_bytes(data)
    result = check_evidence(path, audit)
    assert result.ok, result.problems
    assert "2 account records of the staff the round names, each hash recomputes" in result.facts

    # "super1 was a supervisor": the record edited to say so where it said dealer shows, log or no log.
    forged_staff = [dict(r) for r in staff]
    forged_staff[0]["payload"] = forged_staff[0]["payload"].replace("dealer", "supervisor")
    manifest = json.loads(read(data, "MANIFEST.json"))
    forged = rezip(data, tmp_path / "f.zip", {"staff.json": json.dumps(forged_staff).encode()})
    for log in (audit, None):
        problems = check_evidence(forged, log).problems
        assert f"account record seq {staff[0]['seq']} (user_created) does not hash to its stored hash: its " \
               "contents were changed" in problems
    assert manifest["files"]["staff.json"]


def frame_recording(app, service, round_no: int):
    """A recording with a real key frame, its detections line, and the zones as recorded."""
    folder = app.extensions["niuniu"].data_dir / "recordings" / service.config.table_id / \
        f"20260101T000000Z-round-{round_no:04d}"
    (folder / "frames").mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps({"round_no": round_no, "format": "niuniu-round/1",
                                                  "table": service.config.model_dump(mode="json")}))
    cv2.imwrite(str(folder / "frames" / "00000001.jpg"), np.full((120, 160, 3), 90, np.uint8))
    (folder / "frames" / "00000002.jpg").write_bytes(b"\xff\xd8not an image")
    (folder / "detections.jsonl").write_text(json.dumps(
        {"frame_no": 1, "ts": 1.0, "size": [160, 120],
         "detections": [{"card": "KS", "conf": 0.97, "box": [10, 10, 40, 50]}]}) + "\n")
    service.seal_recording(folder, {"round_no": round_no, "interrupted": False})
    service.wait_sealed()
    return folder


def test_key_frames_come_boxed_outside_the_seal_and_a_changed_reading_aid_is_named_as_one(
        dealer, client, app, service, audit, tmp_path):
    two_corrections(dealer, service)
    folder = frame_recording(app, service, 1)
    data = exported(client, 1)
    raw = read(data, f"recording/{folder.name}/frames/00000001.jpg")
    boxed = read(data, "boxed/00000001.jpg")
    drawn = cv2.imdecode(np.frombuffer(boxed, np.uint8), cv2.IMREAD_COLOR)
    assert boxed != raw and abs(int(drawn[10, 25, 1]) - 90) > 60      # the card's box edge, green on grey
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert "boxed/00000002.jpg" not in z.namelist()                 # not an image: the raw frame stands
    text = read(data, "summary.txt").decode("utf-8")
    assert "NOT part of the recording the audit log sealed" in flat(text)
    assert "frame 1 · " in text and ": boxed/00000001.jpg" in flat(text) and "frame 2 · " not in text
    assert "frame 2: no boxed copy" in text
    seal = audit.records(round_no=1, types=[AuditType.RECORDING_SEALED])[0]
    assert "frames/00000001.jpg" in seal.data["files"] and not any("boxed" in f for f in seal.data["files"])

    path = tmp_path / "r1.zip"
    path.write_bytes(data)
    result = check_evidence(path, audit)
    assert result.ok, result.problems
    sealed_fact = f"the recording's 4 files are the ones sealed in the audit log when the round ended (seq {seal.seq})"
    assert sealed_fact in result.facts

    # A boxed frame or the summary edited after export: named as a changed reading aid, and only that;
    # the records and the recording still check as sound.
    for name, change in (("boxed/00000001.jpg", raw), ("summary.txt", b"seat 1 was paid in full\n")):
        result = check_evidence(rezip(data, tmp_path / "t.zip", {name: change}), audit)
        assert result.problems == [f"{name} differs from the file exported (SHA-256 mismatch); it is a reading aid "
                                   "written at export, not evidence: do not rely on it, the records and the "
                                   "recording are checked on their own"]
        assert sealed_fact in result.facts
        assert any("audit records of round 1, each hash recomputes" in f for f in result.facts)
    # A sealed frame changed is still a change of the recording, whatever the boxed copy says.
    swapped = rezip(data, tmp_path / "s.zip", {f"recording/{folder.name}/frames/00000001.jpg": boxed})
    problems = check_evidence(swapped, audit).problems
    assert f"recording: frames/00000001.jpg differs from the file sealed in the log (seq {seal.seq})" in problems


def test_a_package_made_before_the_summary_still_checks(played, app, audit, runner, tmp_path):
    """A package as the kiosk made it before summary.txt, summary.html, staff.json, table.json
    and boxed/ existed: signed and logged as then, it checks against the log and the key."""
    from kiosk.evidence import export_record
    from kiosk.signing import signature_bytes, table_key

    data_dir = app.extensions["niuniu"].data_dir
    data = played.get("/review/round/2/evidence.zip").data
    manifest = json.loads(read(data, "MANIFEST.json"))
    new = [n for n in manifest["files"] if n in ("summary.txt", "summary.html", "staff.json", "table.json")
           or n.startswith("boxed/")]
    assert sorted(new) == ["staff.json", "summary.html", "summary.txt", "table.json"]
    for name in new:
        del manifest["files"][name]
    raw = (json.dumps(manifest, indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode()   # as exported
    key = table_key(data_dir, audit, "watch1")
    old = rezip(data, tmp_path / "old.zip", {**dict.fromkeys(new), "MANIFEST.json": raw,
                                             "SIGNATURE.json": signature_bytes(key, raw)})
    audit.append(AuditType.EXPORTED, "watch1", export_record(manifest), round_no=2)
    result = check_evidence(old, audit)
    assert result.ok and not result.warnings, result.problems
    code, out, _ = runner(["audit", "public-key", "--data-dir", str(data_dir), "-o", str(tmp_path / "t.pem")])
    code, out, _ = runner(["audit", "check-evidence", str(old), "--public-key", str(tmp_path / "t.pem")])
    assert code == 0 and "PROBLEM" not in out


def test_the_console_package_holds_the_same_summary(played, app, service, audit, runner, tmp_path):
    data_dir = str(app.extensions["niuniu"].data_dir)
    target = tmp_path / "round2.zip"
    code, out, err = runner(["audit", "evidence", "--data-dir", data_dir, "--round", "2", "--by", "inspector",
                             "-o", str(target)])
    assert code == 0, err
    assert "summary.txt" in out
    console = read(target.read_bytes(), "summary.txt").decode("utf-8")
    web = read(played.get("/review/round/2/evidence.zip").data, "summary.txt").decode("utf-8")
    assert "Seat 1: card AS replaced by AD" in console and "Why: misread" in console
    # The same round told the same, whoever exported it and however: up to the exports before it.
    def told(text):
        return text.split("\nHands\n")[1].split("\nHolds and earlier exports\n")[0]
    assert told(console) == told(web)


def test_a_voided_round_says_who_voided_it_and_why_and_that_nothing_was_settled(played, audit):
    text = read(played.get("/review/round/3/evidence.zip").data, "summary.txt").decode("utf-8")
    void = audit.records(round_no=3, types=[AuditType.ROUND_VOID])[0]
    assert "Status:   void" in text and "Not settled: the round ended void." in text
    assert f"log seq {void.seq}\n     Round voided: its bets returned, nothing settled\n     Why: misdeal\n" in text
    assert "Entered by dealer1 (no account record in the log before then); approved by super1 (no account " \
           "record in the log before then)" in flat(text)
    assert "super1: no account record in the log up to this round" in flat(text)
