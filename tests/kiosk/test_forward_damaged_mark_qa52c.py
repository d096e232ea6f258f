"""`niuniu audit check-forwarded` and the table's "damaged" mark on a forwarded record (QA52
review M2).  The mark lies outside the record's hash and outside the signed head, so whoever
edits the collector's copy can add it: it must never pass an edit at the collector off as the
kiosk's disk rotting.  With the kiosk's log (--data-dir) the log's own record decides; without
it the mark is said as the unsigned claim it is."""

from __future__ import annotations

import json
from pathlib import Path

from kiosk.audit import AuditLog
from kiosk_testing import fill
from test_damaged_record_forwarded_qa52 import collector_copy

BLAMED_ON_THE_KIOSK = "it left the table so, damaged on the kiosk's disk"


def edited_at_the_collector(tmp_path: Path, *, payload_as_text: bool) -> tuple[Path, Path, int]:
    """A whole log of 2 rounds forwarded, then the collector's copy of its second record edited
    and marked "damaged": its payload put as altered text that is not JSON (``payload_as_text``)
    or as an altered object.  Returns the copy, the data directory and the seq edited."""
    log = AuditLog.in_dir(tmp_path / "data", "t1")
    fill(log, 2)
    copy = collector_copy(tmp_path / "collector.log", log)
    assert log.verify().ok
    log.close()
    lines = copy.read_text().splitlines()
    at = lines[1].index('{"niuniu"')
    item = json.loads(lines[1][at:])
    if payload_as_text:
        item["payload"] = json.dumps(item["payload"]).replace("QH", "KH").replace('"', "'")     # not JSON
    else:
        item["payload"]["card"] = "KH"
    item["damaged"] = "its payload is not JSON"
    lines[1] = lines[1][:at] + json.dumps(item, separators=(",", ":"))
    copy.write_text("\n".join(lines) + "\n")
    return copy, tmp_path / "data", item["seq"]


def test_the_kiosks_whole_record_shows_the_marked_copy_changed_at_the_collector(tmp_path, runner):
    copy, data, seq = edited_at_the_collector(tmp_path, payload_as_text=True)
    code, out, _ = runner(["audit", "check-forwarded", str(copy), "--data-dir", str(data)])
    assert code == 1
    assert (f"PROBLEM: the collector's record seq {seq} does not hash to its own hash: changed after it left the "
            "table (the kiosk's log holds it whole; the copy's mark that it was sent damaged is not signed)") in out
    assert BLAMED_ON_THE_KIOSK not in out


def test_without_the_log_the_mark_is_said_as_an_unsigned_claim(tmp_path, runner):
    copy, _, seq = edited_at_the_collector(tmp_path, payload_as_text=True)
    code, out, _ = runner(["audit", "check-forwarded", str(copy)])
    assert code == 1
    assert (f"PROBLEM: the collector's record seq {seq} does not hash to its own hash: marked as sent damaged (its "
            "payload is not JSON), but the mark is not signed: damaged on the kiosk's disk or changed at the "
            "collector (check again with --data-dir on the kiosk, whose log tells)") in out
    assert BLAMED_ON_THE_KIOSK not in out


def test_a_mark_on_a_payload_that_reads_is_no_damage_at_all(tmp_path, runner):
    copy, _, seq = edited_at_the_collector(tmp_path, payload_as_text=False)
    code, out, _ = runner(["audit", "check-forwarded", str(copy)])
    assert code == 1
    assert f"the collector's record seq {seq} does not hash to its own hash: changed after it left the table\n" in out
    assert "damaged" not in out
