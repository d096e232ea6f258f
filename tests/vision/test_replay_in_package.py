"""QA49 watch L6: a recording replayed inside an unzipped evidence package is checked against
the package's own audit.json (its seal, and the corrections made after it), as a recording on
the kiosk is against the kiosk's log; the officer with only the package is not told "seal not
checked" of a round whose seal lies two folders up."""

from __future__ import annotations

import json
import zipfile

from test_replay_names_corrections import corrected_round

from kiosk.audit import AuditLog
from kiosk.cli import main
from kiosk.evidence import write_evidence
from vision.replay import format_rounds, replay


def unzipped_package(tmp_path):
    """The corrected round's evidence package as the officer unzips it: recording/<folder> beside audit.json."""
    folder, sealed, fixed = corrected_round(tmp_path / "data")
    log = AuditLog.in_dir(tmp_path / "data", "t1")
    try:
        with open(tmp_path / "evidence.zip", "wb") as out:
            write_evidence(out, log, table_id="t1", round_no=1, recording=folder, exported_by="watch1")
    finally:
        log.close()
    with zipfile.ZipFile(tmp_path / "evidence.zip") as package:
        package.extractall(tmp_path / "case")
    return tmp_path / "case", tmp_path / "case" / "recording" / folder.name, sealed, fixed


def test_a_replay_inside_an_unzipped_package_checks_its_seal_and_names_its_corrections(tmp_path):
    root, copy, sealed, fixed = unzipped_package(tmp_path)
    [result] = replay(copy)
    assert "seal_unchecked" not in result                           # was: "no kiosk audit log beside ..."
    assert result["seal"]["ok"] is True and result["seal"]["seq"] == sealed
    text = format_rounds([result])
    assert f"seal: every file is as sealed in the package's audit.json (seq {sealed})" in text
    assert f"log: 2 correction(s) after the recording (seq {fixed} card_corrected seat banker 2H -> KH" in text
    assert "settled as corrected: seat 1 LOSE -200.00, seat 2 LOSE -20.00" in text
    assert "niuniu audit check-evidence" in text      # the package itself is checked by its signature, not here
    [whole] = replay(root)                            # the package folder itself: the same
    assert whole["seal"]["seq"] == sealed and whole["log"]["lines"]["1"]["net"] == "-200.00"


def test_a_frame_changed_in_the_unzipped_package_fails_against_its_seal(tmp_path, capsys):
    root, copy, sealed, _ = unzipped_package(tmp_path)
    frame = sorted((copy / "frames").iterdir())[0]
    frame.write_bytes(frame.read_bytes() + b"edited")
    code = main(["replay", str(copy)])
    out, err = capsys.readouterr()
    assert code == 1
    assert f"NOT AS SEALED in the package's audit.json (seq {sealed})" in out and "NOT AS SEALED" in err


def test_an_audit_json_edited_in_the_unzipped_package_is_not_trusted(tmp_path, capsys):
    root, copy, _, _ = unzipped_package(tmp_path)
    records = json.loads((root / "audit.json").read_text())
    for record in records:
        if record["type"] == "card_corrected":
            record["payload"] = record["payload"].replace("banker card misread", "dealer asked")
    (root / "audit.json").write_text(json.dumps(records))
    [result] = replay(copy)
    assert result["seal"]["ok"] is False and "log" not in result
    assert "audit.json is not the file the package's MANIFEST.json lists" in result["seal"]["error"]
    assert main(["replay", str(copy)]) == 1
