"""QA49 watch L6: a recording replayed inside an unzipped evidence package is checked against
the package's own audit.json (its seal, and the corrections made after it), as a recording on
the kiosk is against the kiosk's log; the officer with only the package is not told "seal not
checked" of a round whose seal lies two folders up."""

from __future__ import annotations

import hashlib
import json
import zipfile

import pytest
from test_replay_names_corrections import corrected_round

from kiosk.audit import AuditLog, AuditRecord, canonical_json
from kiosk.cli import main
from kiosk.evidence import write_evidence
from kiosk.signing import public_pem, table_key
from vision.record import recording_digests
from vision.replay import format_rounds, replay


def unzipped_package(tmp_path, signed=False):
    """The corrected round's evidence package as the officer unzips it: recording/<folder> beside
    audit.json; ``signed`` as the kiosk signs it, the public key the casino publishes in table.pem."""
    folder, sealed, fixed = corrected_round(tmp_path / "data")
    log = AuditLog.in_dir(tmp_path / "data", "t1")
    try:
        signer = table_key(tmp_path / "data", log, "admin") if signed else None
        if signer is not None:
            (tmp_path / "table.pem").write_text(public_pem(signer.public_key()))
        with open(tmp_path / "evidence.zip", "wb") as out:
            write_evidence(out, log, table_id="t1", round_no=1, recording=folder, exported_by="watch1",
                           signer=signer)
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
    assert f"seal: every file matches the package's own seal in its audit.json (seq {sealed}); UNVERIFIED" in text
    assert result["seal"]["verified"] is False
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


def forge(root, copy):
    """QA50 review M1, as a forger does it with no key: change a key frame, seal the changed
    recording anew in audit.json (the record's own hash recomputed), and list the new
    audit.json in MANIFEST.json."""
    frame = sorted((copy / "frames").iterdir())[0]
    frame.write_bytes(frame.read_bytes() + b"FORGED")
    items = json.loads((root / "audit.json").read_text())
    for item in items:
        if item["type"] == "recording_sealed":
            item["payload"] = canonical_json({**json.loads(item["payload"]), "files": recording_digests(copy)})
            item["hash"] = AuditRecord(**item).expected_hash()
    (root / "audit.json").write_text(json.dumps(items))
    manifest = json.loads((root / "MANIFEST.json").read_text())
    manifest["files"]["audit.json"] = hashlib.sha256((root / "audit.json").read_bytes()).hexdigest()
    (root / "MANIFEST.json").write_text(json.dumps(manifest, indent=2))


@pytest.mark.parametrize("signed", [False, True])
def test_a_forged_package_is_not_said_to_be_as_sealed_without_its_key(tmp_path, capsys, signed):
    """QA50 review M1: it was "every file is as sealed in the package's audit.json", JSON ok: true
    and nothing more.  The seal matches (the forger wrote it), so the replay must say whose seal it
    is and how to check it, and the JSON must say it is not verified."""
    root, copy, sealed, _ = unzipped_package(tmp_path)
    forge(root, copy)
    if signed:                                   # a package the kiosk signed, its manifest rewritten
        (tmp_path / "signed").mkdir()
        signed_root, _, _, _ = unzipped_package(tmp_path / "signed", signed=True)
        (root / "SIGNATURE.json").write_bytes((signed_root / "SIGNATURE.json").read_bytes())
        manifest = json.loads((root / "MANIFEST.json").read_text())
        manifest["signing_key"] = json.loads((signed_root / "MANIFEST.json").read_text())["signing_key"]
        (root / "MANIFEST.json").write_text(json.dumps(manifest, indent=2))
    code = main(["replay", "--json", str(copy)])
    out, err = capsys.readouterr()
    [seal] = [r["seal"] for r in json.loads(out)]
    if signed:              # a signature that does not hold is caught even without the key
        assert code == 1 and seal["ok"] is False and seal["verified"] is False
        assert "SIGNATURE.json does not match MANIFEST.json" in seal["error"]
        return
    assert code == 0 and seal["seq"] == sealed and seal["ok"] is True
    assert seal["verified"] is False and seal["signature"].startswith("absent")
    text = format_rounds(replay(copy))
    assert "every file is as sealed" not in text
    assert "own seal in its audit.json" in text and "UNVERIFIED" in text
    assert "niuniu audit check-evidence PACKAGE.zip --data-dir DIR" in text   # unsigned: only the log can say


def test_a_signed_package_replayed_with_the_published_key_is_verified(tmp_path, capsys):
    root, copy, sealed, _ = unzipped_package(tmp_path, signed=True)
    [result] = replay(copy)                                          # without the key: not vouched for
    assert result["seal"]["ok"] is True and result["seal"]["verified"] is False
    text = format_rounds([result])
    assert f"niuniu replay {root.resolve()} --public-key TABLE-KEY.pem" in text     # the command that checks it
    assert "MANIFEST.json is signed by key " in text                                 # and the key to compare
    assert replay(root)[0]["seal"]["verified"] is False

    code = main(["replay", str(copy), "--public-key", str(tmp_path / "table.pem")])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert f"seal: every file is as sealed in the package's audit.json (seq {sealed}), verified: MANIFEST.json " \
           "is signed by the published key" in out and "UNVERIFIED" not in out
    [checked] = replay(copy, public_key=tmp_path / "table.pem")
    assert checked["seal"]["verified"] is True and checked["seal"]["ok"] is True and checked["log"]


def test_a_forged_signed_package_fails_its_published_key_with_one_error(tmp_path, capsys):
    root, copy, _, _ = unzipped_package(tmp_path, signed=True)
    forge(root, copy)
    code = main(["replay", "--json", str(copy), "--public-key", str(tmp_path / "table.pem")])
    out, err = capsys.readouterr()
    [result] = json.loads(out)
    assert code == 1
    assert result["seal"]["ok"] is False and result["seal"]["verified"] is False and "log" not in result
    [line] = err.splitlines()
    assert "the package's signature check failed: SIGNATURE.json does not match MANIFEST.json" in line


@pytest.mark.parametrize("case", ["unsigned", "another key"])
def test_a_package_the_published_key_cannot_vouch_for_is_an_error(tmp_path, capsys, case):
    root, copy, _, _ = unzipped_package(tmp_path, signed=case != "unsigned")
    (tmp_path / "other").mkdir()
    unzipped_package(tmp_path / "other", signed=True)           # another table's key
    key = tmp_path / "other" / "table.pem"
    code = main(["replay", str(copy), "--public-key", str(key)])
    out, err = capsys.readouterr()
    assert code == 1 and "every file" not in out
    [line] = err.splitlines()
    assert ("the package is not signed" if case == "unsigned" else "not by the published key") in line


def test_an_unreadable_public_key_is_one_error_before_any_replay(tmp_path, capsys):
    root, copy, _, _ = unzipped_package(tmp_path)
    (tmp_path / "key.pem").write_text("not a key")
    assert main(["replay", str(copy), "--public-key", str(tmp_path / "key.pem")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "is not a PEM public key" in err
