"""A restart seals recordings no seal covers; one whose round holds a seal the disk damaged is
not sealed again (QA51 review L3): the new seal would hash the files as they are now, and the
evidence package and the round page would take it for the one made when the round ended."""

from __future__ import annotations

import json
from types import SimpleNamespace

from kiosk.audit import AuditLog, AuditType
from kiosk.table_service import TableService
from kiosk_testing import make_table
from test_damaged_record_kiosk import damage
from vision.round import RoundMachine


def test_a_recording_whose_seal_is_damaged_is_not_sealed_again_at_the_next_start(tmp_path, caplog):
    root = tmp_path / "recordings"
    folder = root / "2026-12-07T01-00-01-round-0001"
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps({"round_no": 1, "ended": 1700000000.5, "interrupted": False}))
    (folder / "events.jsonl").write_text("")
    table = make_table()
    log = AuditLog(tmp_path / "audit.sqlite3", table_id="t1")
    sealed = log.append(AuditType.RECORDING_SEALED, "system",
                        {"folder": folder.name, "files": {"events.jsonl": "0" * 64}, "bytes": 0,
                         "interrupted": False}, round_no=1)
    log.close()
    damage(tmp_path / "audit.sqlite3", sealed.seq)
    (folder / "events.jsonl").write_text('{"changed": "after the seal"}\n')

    log = AuditLog(tmp_path / "audit.sqlite3", table_id="t1")
    pipeline = SimpleNamespace(recorder=SimpleNamespace(root=root, on_finished=None), machine=RoundMachine(table))
    service = TableService(table, log, pipeline=pipeline)
    service.start()
    service.wait_sealed()
    assert [r.seq for r in log.records(types=[AuditType.RECORDING_SEALED])] == [sealed.seq]
    assert "cannot be read" in caplog.text and "not sealed again" in caplog.text
    service.stop()
    log.close()
