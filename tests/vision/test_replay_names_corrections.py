"""M1: a replay of a round corrected after its recording names the log's corrections and the
round as the log has it now, beside the (matching) replay of the recording."""

from __future__ import annotations

from test_record_replay import ROUND_A, dealing, run_live, settle_when_complete

from kiosk.audit import AuditLog, AuditType
from vision.record import find_recordings, recording_digests
from vision.replay import format_rounds, jsonable, replay


def corrected_round(tmp_path):
    run_live(dealing(ROUND_A), tmp_path, settle_when_complete)
    [folder] = find_recordings(tmp_path)
    log = AuditLog.in_dir(tmp_path, "t1")
    log.append(AuditType.ROUND_COMPLETE, "vision", {"hands": {s: h.split() for s, h in ROUND_A.items()}}, round_no=1)
    log.append(AuditType.SETTLEMENT_LINE, "dealer7", {"seat": "1", "outcome": "win", "net": "190.00"}, round_no=1)
    log.append(AuditType.SETTLEMENT_LINE, "dealer7", {"seat": "2", "outcome": "win", "net": "19.00"}, round_no=1)
    seal = log.append(AuditType.RECORDING_SEALED, "system",
                      {"folder": folder.name, "files": recording_digests(folder)}, round_no=1)
    fix = log.append(AuditType.CARD_CORRECTED, "dealer7",
                     {"seat": "banker", "old": "2H", "new": "KH", "action": "replaced", "approved_by": "super1",
                      "requested_by": "dealer7", "reason": "banker card misread"}, round_no=1)
    log.append(AuditType.SETTLEMENT_CORRECTED, "dealer7",
               {"approved_by": "super1", "requested_by": "dealer7", "reason": "banker card misread",
                "old_lines": [{"seat": "1", "outcome": "win", "net": "190.00"},
                              {"seat": "2", "outcome": "win", "net": "19.00"}],
                "new_lines": [{"seat": "1", "outcome": "lose", "net": "-200.00"},
                              {"seat": "2", "outcome": "lose", "net": "-20.00"}],
                "difference": {"1": "-390.00", "2": "-39.00"}}, round_no=1)
    log.close()
    return folder, seal.seq, fix.seq


def test_replay_of_a_corrected_round_names_the_corrections_and_the_round_as_corrected(tmp_path):
    folder, sealed, fixed = corrected_round(tmp_path)
    [result] = replay(folder)
    assert result["matches_recording"] is True and result["seal"]["ok"] is True     # the recording is honest
    assert result["results"]["1"]["vs_banker"] == "win"                             # as the table settled it
    log = jsonable([result])[0]["log"]
    assert [c["seq"] for c in log["corrections_after_recording"]] == [fixed, fixed + 1]
    first = log["corrections_after_recording"][0]
    assert (first["type"], first["seat"], first["old"], first["new"], first["approved_by"], first["reason"]) == (
        "card_corrected", "banker", "2H", "KH", "super1", "banker card misread")
    assert log["lines"]["1"] == {"outcome": "lose", "net": "-200.00"}
    assert log["hands"]["banker"][1] == "KH"
    text = format_rounds([result])
    assert "replay matches the recording" in text
    assert f"log: 2 correction(s) after the recording (seq {fixed} card_corrected seat banker 2H -> KH, " \
           "approved by super1: banker card misread" in text
    assert "settled as corrected: seat 1 LOSE -200.00, seat 2 LOSE -20.00" in text
    assert "hands as corrected: banker AS KH 3D 4C 5S" in text


def test_replay_without_later_corrections_says_nothing_of_the_log(tmp_path):
    run_live(dealing(ROUND_A), tmp_path, settle_when_complete)
    [folder] = find_recordings(tmp_path)
    log = AuditLog.in_dir(tmp_path, "t1")
    log.append(AuditType.RECORDING_SEALED, "system", {"folder": folder.name, "files": recording_digests(folder)},
               round_no=1)
    log.close()
    [result] = replay(folder)
    assert result["seal"]["ok"] is True and "log" not in result
    assert "log:" not in format_rounds([result])
