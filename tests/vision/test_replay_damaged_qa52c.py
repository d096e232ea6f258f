"""QA52 review M6: `niuniu replay` of a disputed round goes on past a damaged audit record.

Another round's damaged seal is none of the replay's business; the round's own damaged seal
means the recording cannot be checked against it (said, as "seal not checked" is); its own
damaged correction is named as one the replay cannot read.  Before, each ended the replay in
one line: "niuniu replay: error: audit record seq N (...) cannot be read", exit 2, no replay."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import test_replay_in_package

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kiosk"))   # the kiosk tests' damage(), run alone too
from test_damaged_record_kiosk import damage  # noqa: E402
from test_replay_names_corrections import corrected_round  # noqa: E402
from test_replay_seal import run, sealed_day  # noqa: E402

from kiosk.audit import AuditLog, AuditRecord, AuditType, canonical_json  # noqa: E402


def test_another_rounds_damaged_seal_is_passed_over_and_the_rounds_own_is_said(tmp_path, capsys):
    folders, seqs = sealed_day(tmp_path)
    damage(tmp_path / "audit.sqlite3", seqs[1])                   # round 2's seal rots

    code, out, err = run(capsys, "replay", folders[0])            # round 1: its seal is sound
    assert code == 0, err
    assert f"seal: every file is as sealed in the audit log (seq {seqs[0]})" in out
    assert "cannot be read" not in out + err                      # round 2's record is not round 1's business

    code, out, err = run(capsys, "replay", folders[1])            # round 2: its own seal is lost
    assert code == 0, err
    assert "replay matches the recording" in out
    assert (f"seal not checked: audit record seq {seqs[1]} (recording_sealed) cannot be read: its payload is "
            "not JSON") in out
    assert "run niuniu audit verify" in out and "error" not in err
    elsewhere = tmp_path / "copy" / folders[1].name                # copied off the kiosk: --data-dir names the log
    shutil.copytree(folders[1], elsewhere)
    code, out, err = run(capsys, "replay", elsewhere, "--data-dir", tmp_path)
    assert code == 0 and f"seal not checked: audit record seq {seqs[1]} (recording_sealed) cannot be read" in out

    code, out, err = run(capsys, "replay", "--json", tmp_path / "recordings")    # the whole day
    assert code == 0, err
    day = {r["round"]: r for r in json.loads(out)}
    assert day[1]["seal"] == {"seq": seqs[0], "ok": True, "changes": [], "log": str(tmp_path)}
    assert "seal" not in day[2] and day[2]["seal_unchecked"].startswith(f"audit record seq {seqs[1]} ")


def test_the_rounds_own_damaged_correction_is_named_and_the_replay_goes_on(tmp_path, capsys):
    folder, sealed, fixed = corrected_round(tmp_path)
    log = AuditLog.in_dir(tmp_path, "t1")
    later = log.append(AuditType.CARD_CORRECTED, "dealer7", {"seat": "2", "old": "6C", "new": "6D",
                                                             "action": "replaced", "reason": "suit misread"},
                       round_no=1).seq
    log.close()
    damage(tmp_path / "audit.sqlite3", fixed)                     # the first card correction rots

    code, out, err = run(capsys, "replay", folder)
    assert code == 0, err
    assert f"seal: every file is as sealed in the audit log (seq {sealed})" in out
    assert (f"log: 3 correction(s) after the recording (seq {fixed} card_corrected that cannot be read; "
            f"seq {fixed + 1} settlement_corrected settlement recomputed, approved by super1: banker card misread; "
            f"seq {later} card_corrected seat 2 6C -> 6D, by dealer7: suit misread)") in out
    assert (f"the replay cannot name correction seq {fixed}: audit record seq {fixed} (card_corrected) cannot be "
            "read: its payload is not JSON") in out
    # the hands are folded from the records that read, and say so
    assert f"hands as corrected (without seq {fixed}, which cannot be read): seat 2 6D 7C 8C 9C 10C" in out
    assert "banker AS KH" not in out
    assert "settled as corrected: seat 1 LOSE -200.00, seat 2 LOSE -20.00" in out   # the sound one still counts

    code, out, err = run(capsys, "replay", "--json", folder)
    [listed] = [r["log"]["corrections_after_recording"] for r in json.loads(out)]
    assert [c["seq"] for c in listed] == [fixed, fixed + 1, later]
    assert "seat" not in listed[0] and listed[0]["damaged"].startswith(f"audit record seq {fixed} (card_corrected)")


def test_a_damaged_last_settlement_correction_leaves_the_corrected_lines_unknown(tmp_path, capsys):
    """The fold passes over it, so the lines it replaced would read as the round's last word."""
    folder, sealed, fixed = corrected_round(tmp_path)
    damage(tmp_path / "audit.sqlite3", fixed + 1)

    code, out, err = run(capsys, "replay", folder)
    assert code == 0, err
    assert f"seq {fixed + 1} settlement_corrected that cannot be read" in out
    assert "settled as corrected: unknown, the last settlement correction cannot be read" in out
    assert "WIN 190.00" not in out and "LOSE -200.00" not in out
    code, out, _ = run(capsys, "replay", "--json", folder)
    [log] = [r["log"] for r in json.loads(out)]
    assert log["lines"] == {} and log["settlement"] is None


def damaged_package(tmp_path, monkeypatch, which):
    """The corrected round's package, exported from a log in which one of its records rotted
    before the export (the kiosk packs it as the log holds it, and names it broken)."""
    def rotted(data_dir):
        folder, sealed, fixed = corrected_round(data_dir)
        damage(data_dir / "audit.sqlite3", {"seal": sealed, "correction": fixed}[which])
        return folder, sealed, fixed

    monkeypatch.setattr(test_replay_in_package, "corrected_round", rotted)
    return test_replay_in_package.unzipped_package(tmp_path)


def test_a_package_holding_a_damaged_correction_still_checks_its_seal(tmp_path, capsys, monkeypatch):
    root, copy, sealed, fixed = damaged_package(tmp_path, monkeypatch, "correction")
    assert [b["seq"] for b in json.loads((root / "MANIFEST.json").read_text())["broken_records"]] == [fixed]

    code, out, err = run(capsys, "replay", copy)
    assert code == 0, err            # was 1: "record seq N of the package's audit.json does not match its own hash"
    assert f"seal: every file matches the package's own seal in its audit.json (seq {sealed}); UNVERIFIED" in out
    assert f"the replay cannot name correction seq {fixed}: audit record seq {fixed} (card_corrected) cannot" in out
    assert "settled as corrected: seat 1 LOSE -200.00" in out

    # A record that still reads but fails its hash was edited: the package's records stay unused.
    items = json.loads((root / "audit.json").read_text())
    for item in items:
        if item["type"] == "settlement_corrected":
            item["payload"] = canonical_json({**json.loads(item["payload"]), "reason": "dealer asked"})
    (root / "audit.json").write_text(json.dumps(items))
    manifest = json.loads((root / "MANIFEST.json").read_text())
    manifest["files"]["audit.json"] = hashlib.sha256((root / "audit.json").read_bytes()).hexdigest()
    (root / "MANIFEST.json").write_text(json.dumps(manifest))
    code, out, _ = run(capsys, "replay", copy)
    assert code == 1 and f"record seq {fixed + 1} of the package's audit.json does not match its own hash" in out
    assert all(AuditRecord(**item).expected_hash() != item["hash"] for item in items if item["seq"] >= fixed)


def test_a_package_holding_its_damaged_seal_says_the_seal_is_not_checked(tmp_path, capsys, monkeypatch):
    root, copy, sealed, fixed = damaged_package(tmp_path, monkeypatch, "seal")

    code, out, err = run(capsys, "replay", copy)
    assert code == 0, err
    assert "replay matches the recording" in out
    assert (f"seal not checked: audit record seq {sealed} (recording_sealed) cannot be read: its payload is not "
            "JSON") in out and "the package's audit.json holds it so" in out
    assert f"log: 2 correction(s) after the recording (seq {fixed} card_corrected seat banker 2H -> KH" in out
