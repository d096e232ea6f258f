"""A disputed round's evidence package: downloaded by surveillance or made on the console,
and checked so a changed card, amount, frame or manifest shows (kiosk.evidence)."""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from pathlib import Path

import pytest

from kiosk.audit import AuditType
from kiosk.evidence import check_evidence
from kiosk_testing import login


def recording(app, service, round_no: int) -> Path:
    folder = app.extensions["niuniu"].data_dir / "recordings" / service.config.table_id / \
        f"20260101T00000{round_no}Z-round-{round_no:04d}"
    (folder / "frames").mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps({"round_no": round_no, "format": "niuniu-round/1"}))
    (folder / "events.jsonl").write_text('{"kind": "round_start"}\n')
    (folder / "frames" / "00000005.jpg").write_bytes(b"\xff\xd8frame five")
    return folder


def played_page(app, round_no: int) -> str:
    client = app.test_client()
    login(client, "watch1")
    return client.get(f"/review/round/{round_no}").get_data(as_text=True)


def rezip(source: bytes, target: Path, change: dict[str, bytes]) -> Path:
    """A copy of a package with some members replaced (what someone altering it would do)."""
    with zipfile.ZipFile(io.BytesIO(source)) as old, zipfile.ZipFile(target, "w") as new:
        for name in old.namelist():
            new.writestr(name, change.get(name, old.read(name)))
    return target


@pytest.fixture
def package(played, app, service):
    folder = recording(app, service, 2)
    response = played.get("/review/round/2/evidence.zip")
    assert response.status_code == 200 and response.mimetype == "application/zip"
    assert 'filename="evidence-t1-round-0002.zip"' in response.headers["Content-Disposition"]
    return response.data, folder


def test_surveillance_downloads_a_rounds_evidence_and_the_export_is_logged(package, audit, tmp_path):
    data, folder = package
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        manifest = json.loads(z.read("MANIFEST.json"))
        records = json.loads(z.read("audit.json"))
        summary = json.loads(z.read("round.json"))
        frame = z.read(f"recording/{folder.name}/frames/00000005.jpg")
    assert manifest["round"] == 2 and manifest["exported_by"] == "watch1" and manifest["recording"] == folder.name
    assert {r["round_no"] for r in records} == {2} and manifest["records"] == len(records)
    assert "card_corrected" in {r["type"] for r in records}
    assert summary["corrections"][0]["new"] == "AD" and frame == b"\xff\xd8frame five"
    logged = audit.last()
    assert logged.type == AuditType.EXPORTED and logged.round_no == 2 and logged.actor == "watch1"
    assert logged.data["format"] == "evidence" and logged.data["head_seq"] == manifest["head"]["seq"]

    path = tmp_path / "evidence.zip"
    path.write_bytes(data)
    result = check_evidence(path, audit)
    assert result.ok, result.problems
    assert any("each hash recomputes" in f for f in result.facts)
    assert any(f"the log records this export: seq {logged.seq}" in f for f in result.facts)


def test_a_changed_amount_frame_or_manifest_is_caught(package, audit, tmp_path):
    data, folder = package
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        manifest = json.loads(z.read("MANIFEST.json"))
        records = json.loads(z.read("audit.json"))

    # A frame swapped: its digest no longer matches.
    swapped = rezip(data, tmp_path / "a.zip", {f"recording/{folder.name}/frames/00000005.jpg": b"\xff\xd8other"})
    assert any("frames/00000005.jpg differs" in p for p in check_evidence(swapped, audit).problems)

    # A settlement line's net changed, and the manifest's digest of audit.json mended to hide it:
    # the record no longer hashes to its own hash, and the log never vouched for that manifest.
    line = next(r for r in records if r["type"] == "settlement_line")
    line["payload"] = line["payload"].replace('"net":"', '"net":"1')
    altered = json.dumps(records).encode()
    manifest["files"]["audit.json"] = hashlib.sha256(altered).hexdigest()
    forged = rezip(data, tmp_path / "b.zip", {"audit.json": altered, "MANIFEST.json": json.dumps(manifest).encode()})
    problems = check_evidence(forged, audit).problems
    assert any(f"seq {line['seq']} (settlement_line) does not hash" in p for p in problems)
    assert any("no audit_exported record of this manifest" in p for p in problems)
    # Without the log the changed record still shows.
    assert any("does not hash" in p for p in check_evidence(forged).problems)

    added = rezip(data, tmp_path / "c.zip", {})
    with zipfile.ZipFile(added, "a") as z:
        z.writestr("recording/extra.jpg", b"x")
    assert check_evidence(added, audit).problems == ["recording/extra.jpg was added after export (not in the manifest)"]
    (tmp_path / "d.zip").write_bytes(b"not a zip")
    assert "is not a readable zip" in check_evidence(tmp_path / "d.zip").problems[0]


def test_a_round_without_a_recording_or_without_records(played, app, service, audit):
    from kiosk.retention import RecordingRetention
    from vision.table import RecordingSettings

    response = played.get("/review/round/4/evidence.zip")
    with zipfile.ZipFile(io.BytesIO(response.data)) as z:
        manifest = json.loads(z.read("MANIFEST.json"))
        assert manifest["recording"] is None and manifest["recording_deleted"] is None
        assert not [n for n in z.namelist() if n.startswith("recording/")]
    assert played.get("/review/round/99/evidence.zip").status_code == 404
    assert audit.last().round_no == 4          # the missing round logged no export

    # A recording retention deleted: the package names the record that deleted it.
    folder = recording(app, service, 3)
    RecordingRetention(folder.parent, RecordingSettings(keep_days=1), audit).check()
    pruned = audit.last()
    assert pruned.type == AuditType.RECORDINGS_PRUNED and not folder.exists()
    with zipfile.ZipFile(io.BytesIO(played.get("/review/round/3/evidence.zip").data)) as z:
        deleted = json.loads(z.read("MANIFEST.json"))["recording_deleted"]
    assert deleted == {"seq": pruned.seq, "ts": pruned.ts, "reasons": ["older than 1 day"]}


def test_the_console_makes_and_checks_a_package(played, app, service, audit, runner, tmp_path):
    data_dir = str(app.extensions["niuniu"].data_dir)
    folder = recording(app, service, 1)
    target = tmp_path / "round1.zip"
    code, out, err = runner(["audit", "evidence", "--data-dir", data_dir, "--round", "1", "--by", "inspector",
                             "-o", str(target)])
    assert code == 0, err
    assert "round 1 of table t1: " in out and f"recording {folder.name}" in out
    assert audit.last().actor == "inspector" and audit.last().data["format"] == "evidence"
    code, out, _ = runner(["audit", "check-evidence", str(target), "--data-dir", data_dir])
    assert code == 0 and "PROBLEM" not in out and "the log records this export" in out
    code, out, _ = runner(["audit", "check-evidence", str(target)])
    assert code == 0 and "not checked against the log" in out
    code, out, _ = runner(["audit", "check-evidence", str(target), "--data-dir", data_dir, "--json"])
    checked = json.loads(out)
    assert code == 0 and checked["ok"] and checked["against_log"] and checked["problems"] == []
    code, out, _ = runner(["audit", "evidence", "--data-dir", data_dir, "--round", "2", "-o",
                           str(tmp_path / "r2.zip"), "--json"])
    assert code == 0 and json.loads(out)["round"] == 2 and json.loads(out)["package"] == str(tmp_path / "r2.zip")

    code, _, err = runner(["audit", "evidence", "--data-dir", data_dir, "--round", "1", "-o", str(target)])
    assert code != 0 and "exists; give a new file name" in err
    code, _, err = runner(["audit", "evidence", "--data-dir", data_dir, "--round", "77", "-o", str(tmp_path / "x.zip")])
    assert code != 0 and "no round 77" in err and not (tmp_path / "x.zip").exists()
    code, out, _ = runner(["audit", "check-evidence", str(tmp_path / "missing.zip")])
    assert code == 1 and "PROBLEM" in out


def test_a_camera_fault_in_force_when_the_round_was_played_travels_with_it(client, service, audit, tmp_path):
    """The camera knocked before the deal is logged then, under no round; the round's
    package carries that record, checked like the round's own, and a changed one shows."""
    import time

    from kiosk_testing import login, play
    from vision.round import EventKind, RoundEvent

    time.sleep(0.002)
    service.on_pipeline_event(RoundEvent(EventKind.camera_moved, 0, time.time(), 1,
                                         data={"aim": "moved", "reason": "the camera has moved", "shift": 0.047}))
    time.sleep(0.002)
    play(client, service, [("KS QS JS 10S 10H", "settle")])
    login(client, "watch1")
    data = client.get("/review/round/1/evidence.zip").data
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        camera = json.loads(z.read("camera.json"))
        manifest = json.loads(z.read("MANIFEST.json"))
    assert [(r["type"], r["round_no"]) for r in camera] == [("camera_moved", None)]
    assert manifest["camera_records"] == 1
    path = tmp_path / "e.zip"
    path.write_bytes(data)
    result = check_evidence(path, audit)
    assert result.ok, result.problems
    assert "1 camera records bearing on the round, each hash recomputes" in result.facts

    camera[0]["payload"] = camera[0]["payload"].replace("0.047", "0.001")   # "it hardly moved"
    altered = json.dumps(camera).encode()
    manifest["files"]["camera.json"] = hashlib.sha256(altered).hexdigest()
    forged = rezip(data, tmp_path / "f.zip", {"camera.json": altered, "MANIFEST.json": json.dumps(manifest).encode()})
    problems = check_evidence(forged, audit).problems
    assert any(f"camera record seq {camera[0]['seq']} (camera_moved) does not hash" in p for p in problems)


def test_a_key_frame_swapped_on_the_disk_shows_against_the_seal_in_the_log(played, app, service, audit, tmp_path):
    """The seal is made when the round's recording is finished; a frame changed on the
    kiosk's disk afterwards shows on the review page and in a package exported after it,
    with or without the log (the seal travels in audit.json)."""
    folder = recording(app, service, 2)
    service.seal_recording(folder, {"round_no": 2, "interrupted": False})
    service.wait_sealed()
    seal = audit.last()
    assert seal.type == AuditType.RECORDING_SEALED and seal.round_no == 2 and seal.actor == "system"
    assert sorted(seal.data["files"]) == ["events.jsonl", "frames/00000005.jpg", "meta.json"]
    page = played.get("/review/round/2").get_data(as_text=True)
    assert "Every file (3) is as sealed in the audit log" in page

    (folder / "hold.json").write_text("{}")                         # surveillance's own hold: not sealed
    (folder / "frames" / "00000005.jpg").write_bytes(b"\xff\xd8another hand")
    page = played.get("/review/round/2").get_data(as_text=True)
    assert "is not as it was sealed in the audit log" in page
    assert "frames/00000005.jpg differs from the file sealed" in page
    assert "hold.json" not in page.split("Event timeline")[0]

    path = tmp_path / "late.zip"
    path.write_bytes(played.get("/review/round/2/evidence.zip").data)
    for log in (audit, None):
        problems = check_evidence(path, log).problems
        assert problems[:1] == ["recording: frames/00000005.jpg differs from the file sealed in the log "
                                f"(seq {seal.seq})"]


def test_the_console_sweeps_every_sealed_recording_for_changed_files(played, app, service, audit, runner):
    """No round disputed yet: the sweep still finds the frame changed on the disk."""
    import shutil

    data_dir = str(app.extensions["niuniu"].data_dir)
    folders = {n: recording(app, service, n) for n in (1, 2, 4)}
    for n, folder in folders.items():
        service.seal_recording(folder, {"round_no": n, "interrupted": False})
    service.wait_sealed()
    code, out, _ = runner(["audit", "check-recordings", "--data-dir", data_dir])
    assert code == 0 and "3 recordings as sealed, 0 changed since sealed, 0 deleted as the log records" in out

    (folders[2] / "frames" / "00000005.jpg").write_bytes(b"\xff\xd8another hand")
    shutil.rmtree(folders[4])                                   # as retention would, and logs
    audit.append(AuditType.RECORDINGS_PRUNED, "system", {"count": 1, "bytes": 1, "reasons": ["age"],
                                                         "folders": [folders[4].name]})
    code, out, _ = runner(["audit", "check-recordings", "--data-dir", data_dir])
    assert code == 1
    assert f"PROBLEM: round 2 ({folders[2].name}, sealed at seq" in out
    assert "frames/00000005.jpg differs from the file sealed" in out
    assert "1 recording as sealed, 1 changed since sealed, 1 deleted as the log records (retention, or a restore), " \
           "0 missing" in out
    code, out, _ = runner(["audit", "check-recordings", "--data-dir", data_dir, "--json"])
    report = json.loads(out)
    assert code == 1 and not report["ok"] and report["intact"] == 1 and len(report["gone"]) == 1
    assert report["missing"] == []
    code, out, _ = runner(["audit", "check-recordings", "--data-dir", data_dir, "--to", "2000-01-01"])
    assert code == 0 and out.startswith("0 recordings as sealed")


def test_the_kiosk_finds_a_changed_recording_by_itself_and_tells_surveillance(played, app, service, audit):
    """Nobody disputes round 2 yet: the kiosk's own rolling check finds its swapped frame,
    logs it once under the round, and the chain page lists it."""
    import time

    from kiosk.retention import RecordingRetention
    from kiosk.seals import SealWatch
    from vision.record import recordings_dir

    folders = {n: recording(app, service, n) for n in (1, 2, 4)}
    for n, folder in folders.items():
        service.seal_recording(folder, {"round_no": n, "interrupted": False})
    service.wait_sealed()
    (folders[2] / "frames" / "00000005.jpg").write_bytes(b"\xff\xd8another hand")
    root = recordings_dir(app.extensions["niuniu"].data_dir, service.config.table_id)
    (root / "20260101T000009Z-round-0009").mkdir()          # still being recorded: no seal yet
    watch = SealWatch(audit, root, service.config.table_id, budget_bytes=1)   # one recording a step
    retention = RecordingRetention(root, service.config.recordings, audit, seals=watch, period_s=0.01,
                                   free_bytes=lambda path: 10**12)
    retention.start()                      # the kiosk's retention thread runs the check after each pass
    deadline = time.monotonic() + 10
    while watch.checked < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    retention.stop_event.set()
    retention.join(5)
    assert watch.checked >= 3
    changed = audit.records(types=[AuditType.RECORDING_CHANGED])
    assert [(r.round_no, r.data["folder"], r.data["changes"]) for r in changed] == [
        (2, folders[2].name, ["frames/00000005.jpg differs from the file sealed"])]
    before = watch.checked
    for _ in range(4):                     # round and round: told once
        watch.step()
    assert len(audit.records(types=[AuditType.RECORDING_CHANGED])) == 1 and watch.checked >= before + 3
    again = SealWatch(audit, root, service.config.table_id, budget_bytes=1)   # the kiosk restarted
    for _ in range(4):
        again.step()
    assert len(audit.records(types=[AuditType.RECORDING_CHANGED])) == 1 and again.checked >= 3
    page = played.get("/review/chain").get_data(as_text=True)
    assert folders[2].name in page and "frames/00000005.jpg differs from the file sealed" in page
    assert "recording_changed" in played.get("/review/round/2").get_data(as_text=True)   # in its timeline
    # The round list flags it and filters by it: surveillance finds the rounds whose video changed.
    listed = played.get("/review/?changed=1").get_data(as_text=True)
    assert re.findall(r'/review/round/(\d+)"', listed) == ["2"] and "recording changed" in listed
    assert "recording changed</span>" not in played.get("/review/?voided=1").get_data(as_text=True)


def test_an_outside_party_checks_a_package_with_the_published_key_and_no_log(package, app, audit, runner, tmp_path):
    data, _ = package
    data_dir = str(app.extensions["niuniu"].data_dir)
    made = [r for r in audit.records(types=[AuditType.SIGNING_KEY_CREATED])]
    assert len(made) == 1 and made[0].actor == "watch1"       # made, and logged, at the first export
    key_file = Path(data_dir) / "evidence_key"
    assert key_file.stat().st_mode & 0o777 == 0o600 and not list(Path(data_dir).glob(".evidence_key*"))
    code, out, err = runner(["audit", "public-key", "--data-dir", data_dir, "-o", str(tmp_path / "table.pem")])
    assert code == 0, err
    assert made[0].data["fingerprint"] in out and (tmp_path / "table.pem").read_text() == made[0].data["public_key"]
    assert len(audit.records(types=[AuditType.SIGNING_KEY_CREATED])) == 1   # the same key, not a new one

    # The round page links the same key, for surveillance to hand over or publish.
    assert 'id="public-key-link"' in played_page(app, 2)
    pem = app.test_client()
    login(pem, "watch1")
    downloaded = pem.get("/review/evidence-key.pem")
    assert downloaded.status_code == 200 and downloaded.get_data(as_text=True) == made[0].data["public_key"]

    path = tmp_path / "evidence.zip"
    path.write_bytes(data)
    code, out, _ = runner(["audit", "check-evidence", str(path), "--public-key", str(tmp_path / "table.pem")])
    assert code == 0 and "PROBLEM" not in out
    assert f"signed by the published key {made[0].data['fingerprint']}" in out
    code, out, _ = runner(["audit", "check-evidence", str(path), "--data-dir", data_dir])
    assert code == 0 and f"signed by the key this log made at seq {made[0].seq}" in out


def test_a_rebuilt_manifest_or_a_stripped_signature_fails_the_published_key(package, app, audit, runner, tmp_path):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from kiosk.audit import AuditRecord
    from kiosk.signing import fingerprint, load_public_key, signature_bytes

    data, _ = package
    code, _, _ = runner(["audit", "public-key", "--data-dir", str(app.extensions["niuniu"].data_dir),
                         "-o", str(tmp_path / "table.pem")])
    published = load_public_key(tmp_path / "table.pem")
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        manifest = json.loads(z.read("MANIFEST.json"))
        records = json.loads(z.read("audit.json"))

    # A net changed, its record's hash recomputed and the manifest's digest mended: no log to ask,
    # but the manifest no longer matches the table's signature.
    line = next(r for r in records if r["type"] == "settlement_line")
    line["payload"] = line["payload"].replace('"net":"', '"net":"1')
    line["hash"] = AuditRecord(**line).expected_hash()
    altered = json.dumps(records).encode()
    manifest["files"]["audit.json"] = hashlib.sha256(altered).hexdigest()
    forged = rezip(data, tmp_path / "a.zip", {"audit.json": altered, "MANIFEST.json": json.dumps(manifest).encode()})
    assert check_evidence(forged, public_key=published).problems == [
        "SIGNATURE.json does not match MANIFEST.json: the manifest was changed after it was signed"]

    # The signature dropped: the manifest still names its key.  Dropped with the manifest's claim too:
    # the published key has nothing to vouch for.
    stripped = tmp_path / "b.zip"
    with zipfile.ZipFile(io.BytesIO(data)) as old, zipfile.ZipFile(stripped, "w") as new:
        for name in old.namelist():
            if name != "SIGNATURE.json":
                new.writestr(name, old.read(name))
    assert "it was removed after export" in check_evidence(stripped, public_key=published).problems[0]
    unclaimed = dict(json.loads(zipfile.ZipFile(stripped).read("MANIFEST.json")), signing_key=None)
    bare = rezip(stripped.read_bytes(), tmp_path / "c.zip", {"MANIFEST.json": json.dumps(unclaimed).encode()})
    assert "the package is not signed" in check_evidence(bare, public_key=published).problems[0]

    # The forgery re-signed with a key of the forger's own: the signature holds, but the key is not the table's.
    other = Ed25519PrivateKey.generate()
    manifest["signing_key"] = fingerprint(other.public_key())
    raw = json.dumps(manifest).encode()
    resigned = rezip(forged.read_bytes(), tmp_path / "d.zip", {"MANIFEST.json": raw,
                                                               "SIGNATURE.json": signature_bytes(other, raw)})
    code, out, _ = runner(["audit", "check-evidence", str(resigned), "--public-key", str(tmp_path / "table.pem"),
                           "--json"])
    checked = json.loads(out)
    assert code == 1 and checked["against_key"] and checked["problems"] == [
        f"signed by key {fingerprint(other.public_key())}, not by the published key {fingerprint(published)}"]


def test_an_unreadable_signing_key_stops_the_export_and_says_how_to_fix_it(played, app, audit, runner, tmp_path):
    data_dir = app.extensions["niuniu"].data_dir
    (data_dir / "evidence_key").write_bytes(b"damaged by a bad sector")
    before = audit.last().seq
    response = played.get("/review/round/2/evidence.zip", follow_redirects=True)
    assert response.status_code == 200 and response.mimetype == "text/html"
    assert "No evidence exported" in response.get_data(as_text=True)
    assert "restore it from the latest backup" in response.get_data(as_text=True)
    code, _, err = runner(["audit", "evidence", "--data-dir", str(data_dir), "--round", "2",
                           "-o", str(tmp_path / "r2.zip")])
    assert code != 0 and "evidence_key is not a readable private key" in err
    assert not (tmp_path / "r2.zip").exists()
    assert audit.last().seq == before                        # no export logged, no new key made
    assert (data_dir / "evidence_key").read_bytes() == b"damaged by a bad sector"   # kept for recovery
    code, _, err = runner(["audit", "check-evidence", str(tmp_path / "r2.zip"), "--public-key",
                           str(tmp_path / "missing.pem")])
    assert code != 0 and "cannot read the public key" in err


def test_a_history_rewritten_after_the_export_shows_against_the_packages_head(package, audit, tmp_path):
    from kiosk_testing import rewrite_history

    data, _ = package
    path = tmp_path / "evidence.zip"
    path.write_bytes(data)
    with zipfile.ZipFile(path) as z:
        head = json.loads(z.read("MANIFEST.json"))["head"]
    # Round 3, played after round 2, changed and the chain re-hashed from there: round 2's own
    # records and its export record are untouched, the head the package names is not.
    later = audit.records(round_no=3)[0].seq
    rewrite_history(audit.path, later, "someone else")
    assert audit.verify().ok
    assert check_evidence(path, audit).problems == [
        f"the log no longer holds the head it had when this package was exported (seq {head['seq']}): its history "
        "was rewritten or cut since (niuniu audit verify --against the backups)"]


def test_asking_for_a_round_that_does_not_exist_makes_no_signing_key(played, app, audit, runner, tmp_path):
    data_dir = app.extensions["niuniu"].data_dir
    before = audit.last().seq
    assert played.get("/review/round/99/evidence.zip").status_code == 404
    code, _, err = runner(["audit", "evidence", "--data-dir", str(data_dir), "--round", "99", "--table", "t1",
                           "-o", str(tmp_path / "r99.zip")])
    assert code != 0 and "no round 99 on table t1" in err
    assert audit.last().seq == before and not (data_dir / "evidence_key").exists()


def test_a_second_entry_of_the_same_name_is_caught(package, audit, tmp_path):
    """zipfile reads the last entry of a name, other tools the first: a forged round.json put
    before the genuine one must not pass because the checker happened to read the genuine."""
    data, _ = package
    forged = tmp_path / "dup.zip"
    import warnings

    with zipfile.ZipFile(io.BytesIO(data)) as old, zipfile.ZipFile(forged, "w") as new, \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # zipfile warns of the duplicate name
        new.writestr("round.json", b'{"forged": true}')
        for info in old.infolist():
            new.writestr(info, old.read(info))
    for log in (audit, None):
        assert check_evidence(forged, log).problems[:1] == [
            "round.json appears 2 times in the zip: a second copy was added after export"]
    folder_entry = rezip(data, tmp_path / "dir.zip", {})
    with zipfile.ZipFile(folder_entry, "a") as z:
        z.writestr("recording/", b"")
    assert check_evidence(folder_entry, audit).problems == ["recording/ was added after export (not in the manifest)"]


def sealed_recording(app, service, audit, round_no: int):
    folder = recording(app, service, round_no)
    service.seal_recording(folder, {"round_no": round_no, "interrupted": False})
    service.wait_sealed()
    seal = audit.last()
    assert seal.type == AuditType.RECORDING_SEALED
    return folder, seal


def test_a_sealed_recording_deleted_by_hand_is_named_in_the_package_and_by_the_check(
        played, app, service, audit, runner, tmp_path):
    import shutil

    data_dir = str(app.extensions["niuniu"].data_dir)
    folder, seal = sealed_recording(app, service, audit, 2)
    shutil.rmtree(folder)                               # no recordings_pruned record says why
    target = tmp_path / "r2.zip"
    code, out, err = runner(["audit", "evidence", "--data-dir", data_dir, "--round", "2", "-o", str(target)])
    assert code == 0, err
    assert f"no recording: MISSING (sealed at log seq {seal.seq}" in out and "deleted or moved by hand" in err
    with zipfile.ZipFile(target) as z:
        manifest = json.loads(z.read("MANIFEST.json"))
    assert manifest["recording"] is None and manifest["recording_deleted"] is None
    assert manifest["recording_missing"] == {"seq": seal.seq, "folder": folder.name, "restore_seq": None}
    expected = (f"the round's recording {folder.name} was sealed (log seq {seal.seq}) but the package holds none and "
                "no retention record deleted it: it was deleted or moved by hand before the export")
    for log in (audit, None):
        assert check_evidence(target, log).problems == [expected]
    code, out, _ = runner(["audit", "check-evidence", str(target), "--data-dir", data_dir])
    assert code == 1 and f"PROBLEM: {expected}" in out

    # The review page's download carries the same mark.
    with zipfile.ZipFile(io.BytesIO(played.get("/review/round/2/evidence.zip").data)) as z:
        assert json.loads(z.read("MANIFEST.json"))["recording_missing"]["seq"] == seal.seq
    # A package from before this mark (no recording_missing) still fails: its audit.json holds the seal.
    with zipfile.ZipFile(target) as z:
        manifest.pop("recording_missing")
        old = rezip(target.read_bytes(), tmp_path / "old.zip", {"MANIFEST.json": json.dumps(manifest).encode()})
    assert expected in check_evidence(old).problems


def test_a_frame_removed_is_named_as_missing_from_the_recording(played, app, service, audit, tmp_path):
    folder, seal = sealed_recording(app, service, audit, 2)
    (folder / "frames" / "00000005.jpg").unlink()
    path = tmp_path / "r2.zip"
    path.write_bytes(played.get("/review/round/2/evidence.zip").data)
    assert check_evidence(path, audit).problems == [
        f"recording: frames/00000005.jpg was sealed (log seq {seal.seq}) but is missing from the recording"]


def test_a_log_record_edited_in_place_is_not_vouched_for(package, audit, tmp_path):
    """The package matches the log's hash column, but the log's row itself was edited: the
    check re-hashes the rows it reads instead of saying they are "the ones the log holds"."""
    from tamper_testing import edit_in_place

    data, _ = package
    path = tmp_path / "evidence.zip"
    path.write_bytes(data)
    seq = audit.records(round_no=2)[1].seq
    edit_in_place(audit.path, seq, "someone else")
    result = check_evidence(path, audit)
    assert result.problems == [f"the log's record seq {seq} no longer matches its hash: the log was edited; the "
                               "package holds the record as written"]
    assert not any("each audit record is the one the log holds" in f for f in result.facts)


def test_a_package_made_before_a_later_correction_is_said_to_be_out_of_date(package, service, audit, runner,
                                                                            tmp_path):
    """QA48 dispute H2: every file still checks, so six "ok" lines and exit 0 told the officer
    holding it nothing of the settlement corrected since."""
    from kiosk.table_service import Approval

    data, _ = package
    path = tmp_path / "evidence.zip"
    path.write_bytes(data)
    assert check_evidence(path, audit).warnings == []
    service.correct("1", "2S", "9S", "dealer1", "player disputes: a nine", Approval("dealer1", "super1"),
                    round_no=2)
    later = [r for r in audit.records() if r.round_no == 2 and r.type in ("card_corrected", "settlement_corrected")
             and r.data.get("after_settlement", r.type == "settlement_corrected")]
    result = check_evidence(path, audit)
    assert result.ok and result.warnings == [
        f"round 2 has 2 records written after this package (seq {later[0].seq} card_corrected, seq "
        f"{later[1].seq} settlement_corrected): it does not hold the round as the log has it now; export it again "
        "for the round's current settlement"]
    code, out, err = runner(["audit", "check-evidence", str(path), "--data-dir", str(Path(audit.path).parent)])
    assert code != 0 and "WARNING: round 2 has 2 records written after this package" in out + err
