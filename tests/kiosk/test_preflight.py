"""`niuniu check`: a technician's one command before (re)starting a table."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import cv2
import numpy as np

from kiosk.audit import AuditLog, AuditType
from kiosk.preflight import FAIL, OK, WARN, check_device
from scoring.errors import NiuniuError

DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo"


class Reader:
    detector_path, classifier_path, second_opinion_path, mirror_judge = "d.onnx", "c.onnx", None, object()


def table(tmp_path, *, view=True) -> Path:
    shutil.copy(DEMO / "table.yaml", tmp_path / "table.yaml")
    if view:
        shutil.copy(DEMO / "frames" / "000000.jpg", tmp_path / "table.view.jpg")
    return tmp_path / "table.yaml"


def camera(tmp_path, shift_px: int = 0) -> str:
    folder = tmp_path / "camera"
    folder.mkdir()
    cv2.imwrite(str(folder / "0001.jpg"), np.roll(cv2.imread(str(DEMO / "frames" / "000000.jpg")), shift_px, axis=1))
    return str(folder)


def data(tmp_path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    log = AuditLog.in_dir(folder)
    log.append(AuditType.KIOSK_START, "system", {})
    log.close()
    return folder


def levels(findings):
    return {f.part: f.level for f in findings}


def test_a_ready_device_passes_every_check_and_the_console_says_so(tmp_path, runner):
    config, data_dir = table(tmp_path), data(tmp_path)
    code, out, _ = runner(["check", "--config", str(config), "--data-dir", str(data_dir),
                           "--source", camera(tmp_path), "--model-format", "onnx"])
    lines = out.splitlines()
    assert code == 0, out
    assert [line.split()[0] for line in lines] == ["OK", "OK", "OK", "OK", "OK", "OK", "WARN", "OK",
                                                   lines[-1].split()[0]]
    assert ("card model: index-detector.onnx + card-orientation.onnx + card-classifier.onnx + "
            "card-second-opinion.onnx loaded") in out
    assert "the table lies where its zones were marked (0.0% off)" in out
    assert "audit log: 1 records, chain OK" in out and "backup: no backup recorded" in out


def test_a_camera_moved_since_calibration_fails_the_check(tmp_path):
    findings = check_device(table(tmp_path), data(tmp_path), source=camera(tmp_path, shift_px=60),
                            reader=Reader)
    moved = next(f for f in findings if f.part == "camera")
    assert moved.level == FAIL and "lies 4.7% of the picture's width from where its zones were marked" in moved.message


def test_each_broken_part_is_named_with_its_fix(tmp_path):
    (tmp_path / "bad.yaml").write_text("table_id: t1\nseats: []\n")
    [finding] = check_device(tmp_path / "bad.yaml", tmp_path)
    assert (finding.part, finding.level) == ("table file", FAIL) and "seats" in finding.message

    def missing_model():
        raise NiuniuError("model file models/index-detector.onnx does not exist; ...")

    config = table(tmp_path, view=False)
    findings = check_device(config, tmp_path / "nowhere", source=str(tmp_path / "no-camera"), reader=missing_model)
    by_part = {f.part: f for f in findings}
    assert levels(findings) == {"table file": OK, "camera aim": WARN, "card model": FAIL, "camera": FAIL,
                                "data directory": FAIL, "clock": by_part["clock"].level}
    assert "no calibration picture" in by_part["camera aim"].message
    assert "index-detector.onnx does not exist" in by_part["card model"].message
    assert "is the kiosk running? stop it first" in by_part["camera"].message
    assert "does not exist: create it" in by_part["data directory"].message

    data_dir = data(tmp_path)
    conn = sqlite3.connect(data_dir / "audit.sqlite3")
    conn.execute("DROP TRIGGER audit_no_update")
    conn.execute("UPDATE audit SET actor = 'ghost' WHERE seq = 1")
    conn.commit()
    conn.close()
    chain = next(f for f in check_device(config, data_dir, camera=False) if f.part == "audit log")
    assert chain.level == FAIL and "BROKEN at seq 1" in chain.message


def test_json_lists_every_finding(tmp_path, runner):
    code, out, _ = runner(["check", "--config", str(table(tmp_path)), "--data-dir", str(tmp_path / "none"),
                           "--no-camera", "--model-format", "onnx", "--json"])
    found = json.loads(out)
    assert code == 1 and {f["part"] for f in found} >= {"table file", "camera aim", "card model", "data directory"}
    assert all(set(f) == {"part", "level", "message"} for f in found)


def test_the_evidence_signing_key_is_checked_before_a_dispute_needs_it(tmp_path):
    from kiosk.signing import table_key

    config, data_dir = table(tmp_path), data(tmp_path)

    def key_finding():
        return next(f for f in check_device(config, data_dir, camera=False) if f.part == "evidence key")

    assert key_finding().level == OK and "none yet" in key_finding().message
    log = AuditLog.in_dir(data_dir, create=False)
    table_key(data_dir, log, "watch1")
    made = log.last()
    log.close()
    assert key_finding().level == OK and f"made at audit record {made.seq}" in key_finding().message

    # Another table's key copied in: it would sign packages this log cannot vouch for.
    other = tmp_path / "other"
    other_log = AuditLog.in_dir(other)
    table_key(other, other_log, "watch1")
    other_log.close()
    shutil.copy(other / "evidence_key", data_dir / "evidence_key")
    assert key_finding().level == WARN and "is not a key this audit log made" in key_finding().message

    (data_dir / "evidence_key").write_text("garbage")
    finding = key_finding()
    assert finding.level == WARN and "restore it from the latest backup" in finding.message
    assert "no evidence package can be exported" in finding.message


def test_a_history_rewritten_since_the_last_backup_fails_the_check(tmp_path, runner):
    from kiosk.backup import log_backup, make_backup
    from kiosk_testing import rewrite_history

    config, data_dir = table(tmp_path), data(tmp_path)
    drive = tmp_path / "usb"
    drive.mkdir()
    log = AuditLog.in_dir(data_dir, create=False)
    log_backup(log, make_backup(data_dir, drive), actor="t", destination=drive)
    log.close()
    history = next(f for f in check_device(config, data_dir, camera=False) if f.part == "history")
    assert history.level == OK and "the log holds the head of all 1" in history.message

    rewrite_history(data_dir / "audit.sqlite3", 1, "someone else")
    by_part = {f.part: f for f in check_device(config, data_dir, camera=False)}
    assert by_part["audit log"].level == OK                   # the chain walks whole again
    assert by_part["history"].level == FAIL and "REWRITTEN" in by_part["history"].message


def test_the_camera_is_checked_at_the_table_files_size(tmp_path, monkeypatch):
    """picamera2 opened without a size picks 1920x1080: `niuniu check` then warned that a
    2304x1296 table's camera gave the wrong size, a fault the kiosk never has."""
    from vision.table import load_table_config

    asked = {}

    def grab(spec, **size):
        asked.update(size)
        return cv2.imread(str(DEMO / "frames" / "000000.jpg"))

    monkeypatch.setattr("vision.cli.grab_frame", grab)
    config = table(tmp_path)
    cam = load_table_config(config).camera
    check_device(config, data(tmp_path), source="picamera2", reader=Reader)
    assert asked == {"width": cam.width, "height": cam.height, "fps": cam.fps}
