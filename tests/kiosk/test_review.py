"""Surveillance review (read-only) and the admin's account page."""

from __future__ import annotations

import json
import re
import sqlite3

import cv2
import numpy as np
import pytest

from kiosk.audit import AuditType, local_text
from kiosk_testing import ACCOUNTS, hand, login, play


def round_numbers(page: bytes) -> list[int]:
    import re
    return [int(n) for n in re.findall(rb'/review/round/(\d+)"', page)]


def test_round_list_and_filters(played):
    assert round_numbers(played.get("/review/").data) == [4, 3, 2, 1]
    assert round_numbers(played.get("/review/?corrected=1").data) == [2]
    assert round_numbers(played.get("/review/?voided=1").data) == [3]
    assert round_numbers(played.get("/review/?category=niuniu").data) == [3, 1]
    assert round_numbers(played.get("/review/?seat=1&category=niuniu&voided=1").data) == [3]
    assert round_numbers(played.get("/review/?seat=2").data) == []
    # Who acted on a round: placed bets, settled, corrected, voided or approved.
    assert round_numbers(played.get("/review/?staff=dealer1").data) == [4, 3, 2, 1]
    assert round_numbers(played.get("/review/?staff=super1").data) == [3]     # approved the void
    assert round_numbers(played.get("/review/?staff=vision").data) == []
    assert round_numbers(played.get("/review/?from=2000-01-01&to=2001-01-01").data) == []
    bad = played.get("/review/?from=someday")
    assert b"is not a date or time" in bad.data


def test_alert_filter(client, service):
    token = login(client, "dealer1")
    client.post("/dealer/api/bet", json={"seat": "1", "amount": "10"}, headers={"X-CSRF-Token": token})
    service.observe([hand("banker", "4S 6H"), hand("1", "4S")], 1)
    login(client, "watch1")
    assert round_numbers(client.get("/review/?alerts=1").data) == [1]


def test_round_detail_shows_hands_settlement_corrections_timeline(played):
    page = played.get("/review/round/2").get_data(as_text=True)
    assert "Round #2" in page and "corrected" in page
    assert "AS → AD" in page and "misread" in page and "dealer1" in page
    assert "card_accepted" in page and "round_settled" in page and "settlement_line" in page
    void = played.get("/review/round/3").get_data(as_text=True)
    assert "Voided by dealer1, approved by super1: misdeal" in void
    assert played.get("/review/round/99").status_code == 404
    huge = 10**20                               # past SQLite's integers: no such round, not a crash
    assert played.get(f"/review/round/{huge}").status_code == 404
    assert played.get(f"/review/round/{huge}/evidence.zip").status_code == 404
    assert round_numbers(played.get(f"/review/?before={huge}").data) == [4, 3, 2, 1]


def test_key_frames_are_shown_with_boxes(played, app, service):
    folder = app.extensions["niuniu"].data_dir / "recordings" / "t1" / "20240101T000000Z-round-0001"
    (folder / "frames").mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps({"round_no": 1}))
    image = np.full((120, 160, 3), 90, np.uint8)
    cv2.imwrite(str(folder / "frames" / "00000007.jpg"), image)
    (folder / "detections.jsonl").write_text(json.dumps(
        {"frame_no": 7, "ts": 1.0, "size": [160, 120],
         "detections": [{"card": "AS", "conf": 0.9, "box": [10, 10, 40, 50]}]}) + "\n")
    page = played.get("/review/round/1").get_data(as_text=True)
    assert "/review/round/1/frame/7.jpg" in page
    boxed = played.get("/review/round/1/frame/7.jpg")
    plain = played.get("/review/round/1/frame/7.jpg?boxes=0")
    assert boxed.mimetype == "image/jpeg" and boxed.data != plain.data
    drawn = cv2.imdecode(np.frombuffer(boxed.data, np.uint8), cv2.IMREAD_COLOR)
    assert abs(int(drawn[10, 25, 1]) - 90) > 60  # the box edge is drawn in green over the grey frame
    assert played.get("/review/round/1/frame/8.jpg").status_code == 404


def test_each_key_frame_says_when_it_was_and_what_happened_in_it(played, app, service, audit):
    """QA48 dispute M2: each was captioned "frame N" only; finding the frame of Settle meant
    reading frame numbers out of the timeline's JSON."""
    records = audit.records(round_no=1)
    dealt = next(r for r in records if r.type == AuditType.CARD_ACCEPTED and r.data["seat"] == "1")
    swept = next(r for r in records if r.type == AuditType.ROUND_CLEARED)
    folder = app.extensions["niuniu"].data_dir / "recordings" / "t1" / "20240101T000000Z-round-0001"
    (folder / "frames").mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps({"round_no": 1}))
    for frame_no in (dealt.data["frame_no"], swept.data["frame_no"], 99):
        cv2.imwrite(str(folder / "frames" / f"{frame_no:08d}.jpg"), np.full((12, 16, 3), 90, np.uint8))
    page = played.get("/review/round/1").get_data(as_text=True)
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", page)
    when = local_text(dealt.ts, service.config.time_zone).split(" ", 1)[1]
    assert captions[0].startswith(f"frame {dealt.data['frame_no']} · {when} · ")
    assert "KS read on seat 1" in captions[0] and "settled" in captions[0]
    assert captions[1].endswith("· table cleared") and captions[2] == "frame 99"


def test_event_log_shows_logins_and_system_records(played, service):
    from vision.round import EventKind, RoundEvent
    service.on_pipeline_event(RoundEvent(EventKind.camera_mirrored, 0, 60.0, 12, data={"reason": "looks mirrored"}))
    page = played.get("/review/log").get_data(as_text=True)
    for kind in ("kiosk_start", "config_loaded", "login", "logout", "camera_mirrored"):
        assert f"<td>{kind}</td>" in page
    assert "<td>card_accepted</td>" not in page  # round records live on the round pages
    only = played.get("/review/log?type=logout").get_data(as_text=True)
    assert only.count("<td>logout</td>") == 1 and "<td>config_loaded</td>" not in only


def test_chain_page_reports_ok_and_then_the_break(played, audit):
    page = played.get("/review/chain").get_data(as_text=True)
    assert "OK" in page and "No recording has been found changed since its seal" in page
    conn = sqlite3.connect(audit.path)
    conn.execute("DROP TRIGGER audit_no_update")
    conn.execute("UPDATE audit SET actor = 'ghost' WHERE seq = 5")
    conn.commit()
    conn.close()
    page = played.get("/review/chain").get_data(as_text=True)
    assert "BROKEN at seq 5" in page and "MISSING" in page


def test_a_year_typed_short_is_refused_and_an_old_unpadded_record_still_shows(played, audit):
    """0202 for 2026 once filtered as text ("202-..." sorts after "2026-...") and was
    written into the export's record unpadded, which the chain page then failed on for good."""
    for url in ("/review/export?format=csv&from=0202-12-06", "/review/report?to=0001-01-01",
                "/review/?from=0999-01-01", "/review/log?to=0999-01-01"):
        response = played.get(url)
        assert response.status_code in (200, 400) and "before any audit log began" in response.get_data(as_text=True)
    # A record an older kiosk wrote with the year unpadded, as the append-only log keeps it.
    audit.append(AuditType.EXPORTED, "watch1", {"format": "csv", "from": "1-01-01T00:00:00.000000Z", "to": None,
                                               "records": 0})
    assert played.get("/review/chain").status_code == 200
    assert played.get("/review/log").status_code == 200


def report_figures(page: str) -> dict[str, str]:
    import re
    return dict(re.findall(r'<td id="report-([a-z-]+)">([^<]*)</td>', page))


def test_shift_report_page_for_surveillance_and_the_pit_supervisor(played, client):
    everything = "/review/report?from=2000-01-01&to=2100-01-01"
    page = played.get(everything).get_data(as_text=True)
    # Rounds 1 (Niu Niu wins 10 less 0.50), 2 and 4 (lose 10 each) settled; 3 voided.
    assert "3 settled, 1 void" in page and "1 card(s) while dealing" in page
    assert report_figures(page) == {"stakes": "30.00", "players-net": "-10.50", "commission": "0.50",
                                    "house": "10.50"}
    assert "/review/round/1" in page   # surveillance follows the largest win to its round
    settled_by = re.search(r'id="report-dealers">(.*?)</table>', page, re.S).group(1)
    assert "<td>dealer1</td><td>3</td><td>30.00</td><td>10.50</td>" in settled_by
    assert "No round ended" in played.get("/review/report?from=2000-01-01&to=2000-01-02").get_data(as_text=True)
    reversed_page = played.get("/review/report?from=2001-01-01&to=2000-01-01").get_data(as_text=True)
    # only the error: a report of the whole log under it would read as the period's
    assert "is before" in reversed_page and 'id="report"' not in reversed_page and "No round ended" not in reversed_page

    login(client, "dealer1")
    assert client.get(everything).status_code == 403
    token = login(client, "super1")
    assert 'href="/review/report"' in client.get("/dealer/").get_data(as_text=True)
    # A correction after settlement (round 4's 8D was a 2D: Bull 9 beats Bull 8) changes the books.
    r = client.post("/dealer/api/correct", json={"round": 4, "seat": "1", "old": "8D", "new": "2D", "pin": "4321",
                                                "reason": "a 2 read as 8"}, headers={"X-CSRF-Token": token})
    assert r.status_code == 200, r.get_json()
    page = client.get(everything).get_data(as_text=True)
    assert "1 settlement(s) after it" in page
    assert report_figures(page) == {"stakes": "30.00", "players-net": "9.00", "commission": "1.00",
                                    "house": "-9.00"}
    assert "/review/round/" not in page   # the round pages are surveillance's
    login(client, "watch1")
    detail = client.get("/review/round/4").get_data(as_text=True)
    assert "change per seat 1: +19.50" in detail          # -10.00 became +9.50
    assert "House net -9.50" in detail


def test_export_downloads_and_is_itself_logged(played, audit):
    r = played.get("/review/export?format=json")
    assert r.headers["Content-Disposition"].startswith("attachment")
    data = json.loads(r.data)
    assert data["count"] > 20
    last = audit.last()
    assert last.type == AuditType.EXPORTED and last.actor == "watch1" and last.data["count"] == data["count"]
    csv = played.get("/review/export?format=csv&from=2000-01-01")
    assert csv.data.startswith(b"seq,ts,table_id,type,actor,round,payload,prev_hash,hash")
    assert played.get("/review/export?format=xml").status_code == 400


def test_review_changes_no_round_its_only_writes_are_recording_holds(app, played):
    writing = {rule.endpoint for rule in app.url_map.iter_rules()
               if rule.endpoint.startswith("review.") and not rule.methods <= {"GET", "HEAD", "OPTIONS"}}
    assert writing == {"review.hold", "review.release", "review.note"}     # and case notes (test_review_tools)


def test_surveillance_holds_a_disputed_rounds_recording_against_retention(played, app, service, audit):
    from kiosk.retention import RecordingRetention
    from kiosk_testing import csrf_from
    from vision.table import RecordingSettings

    root = app.extensions["niuniu"].data_dir / "recordings" / service.config.table_id
    folders = []
    for n in (1, 2):
        folder = root / f"2026010{n}T000000Z-round-000{n}"
        (folder / "frames").mkdir(parents=True)
        (folder / "meta.json").write_text(json.dumps({"round_no": n}))
        (folder / "frames" / "00000005.jpg").write_bytes(b"\xff\xd8")
        folders.append(folder)
    page = played.get("/review/round/1").get_data(as_text=True)
    assert 'id="hold-form"' in page
    token = csrf_from(page)
    from kiosk.rounds import load_round
    before = load_round(audit, 1)

    # A hold needs a reason; then retention leaves the recording whatever its age.
    refused = played.post("/review/round/1/hold", data={"csrf_token": token, "reason": "  "}, follow_redirects=True)
    assert "say why" in refused.get_data(as_text=True) and not (folders[0] / "hold.json").exists()
    held = played.post("/review/round/1/hold", data={"csrf_token": token, "reason": "seat 2 disputes the 10H"},
                       follow_redirects=True).get_data(as_text=True)
    assert 'id="recording-held"' in held and "Held by watch1" in held and "seat 2 disputes the 10H" in held
    record = audit.last()
    assert (record.type, record.actor, record.round_no) == (AuditType.RECORDING_HELD, "watch1", 1)
    assert record.data == {"folder": folders[0].name, "reason": "seat 2 disputes the 10H"}
    assert "already held by watch1" in played.post("/review/round/1/hold", data={
        "csrf_token": token, "reason": "again"}, follow_redirects=True).get_data(as_text=True)
    listed = played.get("/review/holds").get_data(as_text=True)
    assert "/review/round/1" in listed and "seat 2 disputes the 10H" in listed and "1 held" in listed

    RecordingRetention(root, RecordingSettings(keep_days=1), audit).check()
    assert folders[0].exists() and not folders[1].exists()
    assert audit.last().data["folders"] == [folders[1].name]
    assert load_round(audit, 1) == before          # a hold changes nothing the round says

    released = played.post("/review/round/1/release", data={"csrf_token": token, "reason": "case 118 closed"},
                           follow_redirects=True).get_data(as_text=True)
    assert 'id="hold-form"' in released and "is released" in released
    record = audit.last()
    assert record.type == AuditType.RECORDING_RELEASED and record.data["held_by"] == "watch1"
    assert record.data["reason"] == "case 118 closed" and record.data["held_reason"] == "seat 2 disputes the 10H"
    assert 'id="no-holds"' in played.get("/review/holds").get_data(as_text=True)
    RecordingRetention(root, RecordingSettings(keep_days=1), audit).check()
    assert not folders[0].exists()
    assert "has no recording on this kiosk" in played.post("/review/round/1/hold", data={
        "csrf_token": token, "reason": "too late"}, follow_redirects=True).get_data(as_text=True)


def test_only_surveillance_holds_recordings(client):
    token = login(client, "super1")
    assert client.post("/review/round/1/hold", data={"csrf_token": token, "reason": "x"}).status_code == 403


# ------------------------------------------------------------------ admin


@pytest.fixture
def admin(client):
    token = login(client, "admin1")
    return client, token


def test_admin_adds_accounts_with_validation(admin, audit):
    client, token = admin
    form = {"csrf_token": token, "username": "newdealer", "role": "dealer", "password": "a-good-password",
            "password2": "a-good-password"}
    assert client.post("/admin/users", data=form).status_code == 302
    assert audit.last().type == AuditType.USER_CREATED and audit.last().actor == "admin1"
    again = client.post("/admin/users", data=form)
    assert again.status_code == 400 and b"is taken" in again.data
    nopin = client.post("/admin/users", data={**form, "username": "sup2", "role": "supervisor"})
    assert b"needs a PIN" in nopin.data
    samepin = client.post("/admin/users", data={**form, "username": "sup2", "role": "supervisor", "pin": "4321"})
    # super1's PIN: refused, and retired, since whoever typed it knows it now (probing PINs
    # on this page until one was "already used" found a supervisor's PIN)
    assert samepin.status_code == 400 and b"was supervisor super1&#39;s, so it is known now" in samepin.data
    assert audit.last().type == AuditType.USER_CHANGED and audit.last().data["username"] == "super1"
    assert "PIN cleared" in audit.last().data["change"]
    retyped = client.post("/admin/users", data={**form, "username": "sup2", "role": "supervisor", "pin": "4321"})
    assert retyped.status_code == 302           # no one's PIN now: sup2 may have it
    client.post("/auth/logout", data={"csrf_token": token})
    login(client, "newdealer", "a-good-password")
    assert client.get("/dealer/").status_code == 200


def test_admin_disables_and_resets_but_keeps_an_admin(admin, app):
    client, token = admin
    conn = sqlite3.connect(f"{app.config['DATA_DIR']}/kiosk.sqlite3")
    ids = dict(conn.execute("SELECT username, id FROM users").fetchall())
    conn.close()
    r = client.post(f"/admin/users/{ids['admin1']}/active", data={"csrf_token": token, "active": "0"},
                    follow_redirects=True)
    assert b"cannot disable your own account" in r.data
    client.post(f"/admin/users/{ids['dealer1']}/active", data={"csrf_token": token, "active": "0"})
    client.post(f"/admin/users/{ids['super1']}/secret",
                data={"csrf_token": token, "password": "brand-new-password", "password2": "brand-new-password",
                      "pin": "8765"})
    client.post("/auth/logout", data={"csrf_token": token})
    other = app.test_client()
    page = other.get("/auth/login")
    from kiosk_testing import csrf_from
    r = other.post("/auth/login", data={"username": "dealer1", "password": ACCOUNTS["dealer1"][1],
                                        "csrf_token": csrf_from(page.get_data(as_text=True))})
    assert r.status_code == 401
    login(other, "super1", "brand-new-password")


def test_a_round_whose_recording_was_deleted_says_so(played, app, service, audit):
    from kiosk.retention import RecordingRetention
    from vision.table import RecordingSettings

    root = app.extensions["niuniu"].data_dir / "recordings" / service.config.table_id
    folder = root / "20260101T000000Z-round-0001"
    (folder / "frames").mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps({"round_no": 1}))
    (folder / "frames" / "00000005.jpg").write_bytes(b"\xff\xd8")
    assert "No key frames recorded" not in played.get("/review/round/1").get_data(as_text=True)
    RecordingRetention(root, RecordingSettings(keep_days=1), audit).check()
    assert not folder.exists()
    page = played.get("/review/round/1").get_data(as_text=True)
    assert 'id="recording-pruned"' in page and "older than 1 day" in page
    assert "No key frames recorded" in played.get("/review/round/2").get_data(as_text=True)


def phnom_penh_table():
    from kiosk_testing import table_dict
    from vision.table import table_config_from_dict
    return table_config_from_dict({**table_dict(), "timezone": "Asia/Phnom_Penh"})   # UTC+7, no summer time


@pytest.mark.parametrize("table", [phnom_penh_table()])
def test_times_are_shown_and_typed_in_the_tables_time_zone(client, service, audit):
    from datetime import datetime, timedelta, timezone

    play(client, service, [("KS QS JS 10S 10H", "settle")])
    login(client, "watch1")
    started = next(r.ts for r in audit.records() if r.type == AuditType.ROUND_START)
    utc = datetime.fromisoformat(started.replace("Z", "+00:00"))
    local = (utc + timedelta(hours=7)).strftime("%Y-%m-%d %H:%M:%S")
    page = client.get("/review/").get_data(as_text=True)
    assert "Started (Asia/Phnom_Penh)" in page and local in page
    # A time typed without an offset is Phnom Penh's: the hour the round started in, locally.
    hour = (utc + timedelta(hours=7)).strftime("%Y-%m-%dT%H:00")
    assert round_numbers(client.get(f"/review/?from={hour}").data) == [1]
    later = (utc + timedelta(hours=7, minutes=61)).strftime("%Y-%m-%dT%H:%M")
    assert round_numbers(client.get(f"/review/?from={later}").data) == []
    assert local in client.get("/review/round/1").get_data(as_text=True)
    today = datetime.now(timezone(timedelta(hours=7))).strftime("%Y-%m-%d")
    assert f"{today} 00:00:00</span> and" in client.get("/review/report").get_data(as_text=True)


def test_a_table_file_with_an_unknown_time_zone_is_refused_in_one_line():
    from kiosk_testing import table_dict
    from vision.table import ConfigError, table_config_from_dict
    with pytest.raises(ConfigError, match="timezone: 'Asia/Phnom Penh' is not a time zone; use an IANA name"):
        table_config_from_dict({**table_dict(), "timezone": "Asia/Phnom Penh"})


def test_a_rounds_page_names_the_camera_faults_in_force_while_it_was_played(client, service):
    """A camera knocked before the deal is logged then, not under the round; the round's
    page still shows it, and a camera that dropped out mid-round, to surveillance."""
    import time

    from vision.round import EventKind, RoundEvent

    def camera(kind, **data):
        time.sleep(0.002)
        service.on_pipeline_event(RoundEvent(kind, 0, time.time(), 1, data=data))
        time.sleep(0.002)

    token = login(client, "dealer1")
    headers = {"X-CSRF-Token": token}
    frames = iter(range(1, 100))

    def deal(cards, *, during=()):
        client.post("/dealer/api/bet", json={"seat": "1", "amount": "10", "kind": "equal"}, headers=headers)
        service.observe([hand("banker", "4S 6H QD 9C 9H"), hand("1", cards)], next(frames))
        for kind, data in during:
            camera(kind, **data)
        assert client.post("/dealer/api/settle", headers=headers).status_code == 200
        service.observe([], next(frames))

    deal("KS QS JS 10S 10H")                                                            # 1
    camera(EventKind.camera_moved, aim="moved", reason="the camera has moved: 5% of the width")
    deal("AS 2S 3D 4D 5C")                                                              # 2
    camera(EventKind.camera_move_cleared, aim="aimed", reason="sees the table where it lay again")
    deal("KC QC JC 10C 9D")                                                             # 3
    deal("2C 3C 5S 7H 8D", during=[(EventKind.camera_offline, {"reason": "no frame for 3 s"}),   # 4
                                   (EventKind.camera_online, {"reason": "frames again"})])
    client.post("/auth/logout", data={"csrf_token": token})
    login(client, "watch1")

    def camera_section(round_no):
        page = client.get(f"/review/round/{round_no}").get_data(as_text=True)
        return page[page.index('id="camera-during"'):].split("</section>")[0]

    for clean in (1, 3):
        assert "No camera fault" in camera_section(clean)
    assert round_numbers(client.get("/review/?camera=1").data) == [4, 2]     # the list flags them too
    assert client.get("/review/").get_data(as_text=True).count(">camera</span>") == 2
    second = camera_section(2)
    assert "camera_moved (moved)" in second and "before the round, still in force" in second
    assert "5% of the width" in second and "camera_move_cleared" not in second
    fourth = camera_section(4)
    assert "camera_offline" in fourth and "camera_online" in fourth and "before the round" not in fourth


def test_a_camera_fault_during_a_round_stays_with_it_when_the_clock_steps_back(client, service):
    """NTP stepping the clock back an hour mid-round stamps the camera's records "before" the
    round; placed by the log's order they still belong to it, on its page and in the list."""
    import time

    from vision.round import EventKind, RoundEvent

    token = login(client, "dealer1")
    headers = {"X-CSRF-Token": token}
    client.post("/dealer/api/bet", json={"seat": "1", "amount": "10", "kind": "equal"}, headers=headers)
    service.observe([hand("banker", "4S 6H QD 9C 9H"), hand("1", "KS QS JS 10S 10H")], 1)
    stepped_back = time.time() - 3600
    service.on_pipeline_event(RoundEvent(EventKind.camera_offline, 0, stepped_back, 1,
                                         data={"reason": "no frame for 3 s"}))
    service.on_pipeline_event(RoundEvent(EventKind.camera_online, 0, stepped_back + 5, 1,
                                         data={"reason": "frames again"}))
    assert client.post("/dealer/api/settle", headers=headers).status_code == 200
    client.post("/auth/logout", data={"csrf_token": token})
    login(client, "watch1")
    page = client.get("/review/round/1").get_data(as_text=True)
    section = page[page.index('id="camera-during"'):].split("</section>")[0]
    assert "No camera fault" not in section and "camera_offline" in section
    assert round_numbers(client.get("/review/?camera=1").data) == [1]


def test_a_round_dealt_across_midnight_is_listed_under_both_days_as_the_report_counts_it(played, audit):
    from datetime import datetime, timezone

    def at(text: str) -> float:
        return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()

    audit.append(AuditType.ROUND_START, "vision", {"bets": {}}, round_no=5, ts=at("2025-01-10T23:58"))
    audit.append(AuditType.ROUND_VOID, "super1", {"reason": "misdeal"}, round_no=5, ts=at("2025-01-11T00:03"))
    assert round_numbers(played.get("/review/?from=2025-01-10&to=2025-01-10").data) == [5]
    page = played.get("/review/?from=2025-01-11&to=2025-01-11").get_data(as_text=True)
    assert round_numbers(page.encode()) == [5]      # the day whose shift report counts it
    assert "2025-01-11 00:03:00" in page and 'id="period-rule"' in page
    assert "1 void" in played.get("/review/report?from=2025-01-11&to=2025-01-11").get_data(as_text=True)
    assert round_numbers(played.get("/review/?from=2025-01-12&to=2025-01-12").data) == []


def test_surveillance_opens_a_round_by_its_number(played):
    """A dispute arrives as "round 3": the list's Round # box opens its page (QA47 UX F7)."""
    assert 'id="go-to-round"' in played.get("/review/").get_data(as_text=True)
    opened = played.get("/review/?round=3")
    assert opened.status_code == 302 and opened.headers["Location"].endswith("/review/round/3")
    assert played.get("/review/?round=%233").headers["Location"].endswith("/review/round/3")
    missing = played.get("/review/?round=99", follow_redirects=True).get_data(as_text=True)
    assert "there is no round &#39;99&#39; on table" in missing and "numbered 1 to 4" in missing
    typo = played.get("/review/?round=seven", follow_redirects=True).get_data(as_text=True)
    assert "type the round&#39;s number, like 7" in typo
    page = played.get("/review/round/3").get_data(as_text=True)
    assert 'href="/review/round/2">← round #2' in page and 'href="/review/round/4">round #4 →' in page
    newest = played.get("/review/round/4").get_data(as_text=True)
    assert "round #5" not in newest and "← round #3" in newest


NOT_A_NUMBER, TOO_LARGE = "type the round&#39;s number", "numbered 1 to 4"


@pytest.mark.parametrize(("typed", "hint"), [("²", NOT_A_NUMBER), ("１", NOT_A_NUMBER), ("9" * 5000, TOO_LARGE),
                                            ("9" * 20, TOO_LARGE)])
def test_a_round_number_int_cannot_read_says_there_is_no_such_round(played, typed, hint):
    """A superscript or full-width digit passes str.isdigit, and more than 4,300 digits pass
    it too, but int() refuses them: each was a 500 (QA48 F3)."""
    answer = played.get("/review/", query_string={"round": typed})
    assert answer.status_code == 302 and answer.headers["Location"].endswith("/review/")
    page = played.get("/review/").get_data(as_text=True)
    assert "there is no round" in page and hint in page


def test_a_round_is_listed_under_the_day_it_ended_not_the_day_it_was_cleared(played, audit):
    """The list's rule is the report's: a round ends at its settlement or void, not at the clear
    that sweeps the table after it; only a round with neither is dated by its clear (QA48 F6)."""
    from datetime import datetime, timezone
    from decimal import Decimal

    from scoring.settle import Bet, settle_round

    def at(text: str) -> float:
        return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()

    seats = {"1": ("KS QS JS 10S 10H", Bet("1", Decimal(100), "equal"))}
    settlement = settle_round("cambodia", "4S 6H QD 9C 9H", seats)
    audit.append(AuditType.ROUND_START, "vision", {"bets": {}}, round_no=5, ts=at("2025-01-10T23:59:00"))
    audit.append(AuditType.ROUND_SETTLED, "dealer1", {"settlement": settlement.to_json()}, round_no=5,
                 ts=at("2025-01-10T23:59:50"))
    audit.append(AuditType.ROUND_CLEARED, "vision", {}, round_no=5, ts=at("2025-01-11T00:00:05"))
    audit.append(AuditType.ROUND_START, "vision", {"bets": {}}, round_no=6, ts=at("2025-01-12T23:59:30"))
    audit.append(AuditType.ROUND_CLEARED, "vision", {}, round_no=6, ts=at("2025-01-13T00:00:10"))
    assert round_numbers(played.get("/review/?from=2025-01-10&to=2025-01-10").data) == [5]
    assert round_numbers(played.get("/review/?from=2025-01-11&to=2025-01-11").data) == []
    assert "1 settled" in played.get("/review/report?from=2025-01-10&to=2025-01-10").get_data(as_text=True)
    assert "settled" not in played.get("/review/report?from=2025-01-11&to=2025-01-11").get_data(as_text=True)
    # a round never settled nor voided ended when it was cleared
    assert round_numbers(played.get("/review/?from=2025-01-13&to=2025-01-13").data) == [6]
    assert round_numbers(played.get("/review/?from=2025-01-12&to=2025-01-12").data) == [6]     # it started then


def test_rounds_cleared_after_the_period_they_ended_in_do_not_use_up_a_page(tmp_path):
    from datetime import datetime, timezone

    from kiosk.audit import AuditLog, parse_period
    from kiosk.rounds import round_numbers as listed

    def at(text: str) -> float:
        return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()

    log = AuditLog.in_dir(tmp_path, "t1")
    log.append(AuditType.ROUND_START, "vision", {"bets": {}}, round_no=1, ts=at("2025-01-11T08:00"))
    log.append(AuditType.ROUND_VOID, "super1", {"reason": "misdeal"}, round_no=1, ts=at("2025-01-11T08:01"))
    for number in (2, 3):       # voided before midnight, swept after it
        log.append(AuditType.ROUND_START, "vision", {"bets": {}}, round_no=number, ts=at("2025-01-10T23:59"))
        log.append(AuditType.ROUND_VOID, "super1", {"reason": "misdeal"}, round_no=number,
                   ts=at("2025-01-10T23:59:50"))
        log.append(AuditType.ROUND_CLEARED, "vision", {}, round_no=number, ts=at("2025-01-11T00:00:05"))
    since, until = parse_period("2025-01-11", "2025-01-11")
    assert listed(log, table_id="t1", since=since, until=until, limit=1) == [1]
    assert listed(log, table_id="t1", since=since, until=until) == [1]
    since, until = parse_period("2025-01-10", "2025-01-10")
    assert listed(log, table_id="t1", since=since, until=until) == [3, 2]
    log.close()
