"""The Holds page and a hold's release past a damaged audit record (QA52 follow-up): a hold the
disk damaged still holds its round's recording (retention keeps it), so the Holds page lists it
held, names the damaged record once with what to do, and its round's page releases it, a
readable release that lets retention treat the recording as any other again; instead of both
answering one DamagedRecord error (HTTP 400) for a record of any round."""

from __future__ import annotations

import html
import json

import pytest

from kiosk.audit import AuditType
from kiosk.retention import RecordingRetention
from kiosk_testing import csrf_from
from test_damaged_record_kiosk import damage
from test_damaged_record_more import text as words_of
from test_retention import held_in_log
from vision.table import RecordingSettings


def text(page: str) -> str:
    """A page as the words a person reads (its character references read too)."""
    return html.unescape(words_of(page))


@pytest.fixture
def folders(app, service):
    """Rounds 1 and 2's recordings on the kiosk's disk, old enough for any retention."""
    root = app.extensions["niuniu"].data_dir / "recordings" / service.config.table_id
    found = {}
    for n in (1, 2):
        found[n] = root / f"2026010{n}T000000Z-round-000{n}"
        (found[n] / "frames").mkdir(parents=True)
        (found[n] / "meta.json").write_text(json.dumps({"round_no": n}))
        (found[n] / "frames" / "00000005.jpg").write_bytes(b"\xff\xd8")
    return found


def test_a_damaged_hold_is_listed_held_named_once_and_released_from_its_round(played, audit, folders):
    root = folders[1].parent
    hold_seq = held_in_log(audit, folders[1], 1)
    (folders[1] / "hold.json").unlink()             # only the damaged record holds it now
    damage(audit.path, hold_seq)
    held_in_log(audit, folders[2], 2, reason="case 9")
    released = audit.append(AuditType.RECORDING_RELEASED, "watch1", {"folder": folders[2].name, "reason": "x"},
                            round_no=2)
    damage(audit.path, released.seq)                # lifts nothing: round 2 stays held

    page = played.get("/review/holds")
    assert page.status_code == 200
    words = text(page.get_data(as_text=True))
    assert "2 held" in words and folders[1].name in words and folders[2].name in words
    assert f"unknown: its hold record (audit record seq {hold_seq}) cannot be read" in words
    damaged = text(page.get_data(as_text=True).split('id="holds-damaged">')[1].split("</div>")[0])
    assert words.count(f"seq {hold_seq} (recording_held) cannot be read") == 1       # named once
    assert words.count(f"seq {released.seq} (recording_released) cannot be read") == 1
    assert f"round #1 , by watch1: audit record seq {hold_seq} (recording_held) cannot be read: its payload is " \
           "not JSON" in damaged
    assert "run niuniu audit verify, keep the data directory as it is and call surveillance" in damaged
    assert "retention keeps round 1's recording as held until a release of it is logged" in damaged
    assert "retention keeps round 2's recording held, if it was, until a release of it is logged again" in damaged

    RecordingRetention(root, RecordingSettings(keep_days=1), audit).check()
    assert folders[1].exists() and folders[2].exists()

    round_page = played.get("/review/round/1").get_data(as_text=True)
    assert 'id="release-form"' in round_page
    assert "Held by watch1: unknown: its hold record" in text(round_page)
    done = played.post("/review/round/1/release", data={"csrf_token": csrf_from(round_page), "reason": "closed"},
                       follow_redirects=True)
    assert done.status_code == 200 and "is released" in done.get_data(as_text=True)
    record = audit.last()
    assert (record.type, record.data["folder"], record.data["held_by"]) == \
        (AuditType.RECORDING_RELEASED, folders[1].name, "watch1")
    assert f"audit record seq {hold_seq}" in record.data["held_reason"]
    assert 'id="hold-form"' in played.get("/review/round/1").get_data(as_text=True)
    assert "1 held" in text(played.get("/review/holds").get_data(as_text=True))
    RecordingRetention(root, RecordingSettings(keep_days=1), audit).check()
    assert not folders[1].exists() and folders[2].exists()
