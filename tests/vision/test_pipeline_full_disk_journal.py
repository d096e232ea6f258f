"""A full data disk is said on the dealer's screen and in the journal as one line, not a traceback
(QA51 L6): the audit log's refusal already names the cause and what to do, and 20 lines of traceback
per frame's failure buried it in the journal."""

from __future__ import annotations

import logging

from scripted_frames import coded_image
from test_record_replay import CONFIG, ROUND_A, ScriptedDetector, dealing

from kiosk.audit import AuditError
from vision.pipeline import TablePipeline
from vision.sources import Frame

REFUSED = ("the audit log could not be written (database or disk is full); stop the game and call the "
           "supervisor: events are not being recorded")


def test_a_refused_audit_write_is_one_journal_line(caplog):
    script = dealing(ROUND_A)
    pipeline = TablePipeline(CONFIG, None, ScriptedDetector(script), data_dir=None)

    def full_disk(events):
        raise AuditError(REFUSED)

    pipeline.machine.add_gate(full_disk)
    with caplog.at_level(logging.ERROR, logger="vision.pipeline"):
        for i in range(len(script)):
            pipeline._safe_step(Frame(coded_image(i), 1_700_000_000.0 + i * 0.1, i))
    said = [r for r in caplog.records if r.name == "vision.pipeline"]
    assert said, "the refused frame was not logged"
    assert all(r.exc_info is None for r in said)               # no traceback
    assert REFUSED in said[0].getMessage() and said[0].getMessage().startswith("frame ")
