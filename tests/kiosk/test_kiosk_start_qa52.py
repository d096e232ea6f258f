"""The kiosk's start, as the QA52 table technician found it: an audit log that refuses the first
record is one line naming the file and the fix (not SQLite's traceback), `niuniu demo` finds its
port busy before it logs anything, and a reader without its orientation model is on the start
record that a dispute's review reads."""

from __future__ import annotations

import socket
import sqlite3
from pathlib import Path

import cv2
import numpy as np
import pytest

from kiosk.audit import AUDIT_FILE, AuditLog, AuditType
from kiosk.backup import unwritable_file
from kiosk.preflight import FAIL
from kiosk_testing import ScriptedDetector, create_accounts, login, make_table, write_demo
from test_kiosk_start_files import findings, read_only, table_file, types
from test_preflight import data as data_dir


def camera(tmp_path) -> Path:
    frames = tmp_path / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "00000.png"), np.full((240, 320, 3), 40, np.uint8))
    return frames


def kiosk(runner, tmp_path, data: Path):
    return runner(["kiosk", "--config", str(table_file(tmp_path)), "--data-dir", str(data),
                   "--source", str(camera(tmp_path)), "--port", "0"])


def scripted(monkeypatch) -> None:
    monkeypatch.setattr("kiosk.commands._detector", lambda args: ScriptedDetector({}))


def log_connection(monkeypatch, pragma: str) -> None:
    """The kiosk's own connection to its audit log, with one more setting of SQLite's."""
    real = AuditLog._connect

    def connect(self):
        conn = real(self)
        conn.execute(pragma)
        return conn
    monkeypatch.setattr(AuditLog, "_connect", connect)


# -- 1: the first record refused ------------------------------------------------------------------


def test_a_log_another_program_is_writing_stops_the_kiosk_with_one_line(tmp_path, runner, monkeypatch):
    data = data_dir(tmp_path)
    scripted(monkeypatch)
    log_connection(monkeypatch, "PRAGMA busy_timeout = 0")    # SQLite's answer now, not after the 30 s wait
    holder = sqlite3.connect(data / AUDIT_FILE, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")       # a sqlite3 shell, a second kiosk: the write lock is theirs
    try:
        code, out, err = kiosk(runner, tmp_path, data)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert code == 2 and err.count("\n") == 1, err
    assert f"cannot write {data / AUDIT_FILE}: another program holds it for writing" in err
    assert "stop that program, then start the kiosk again: the kiosk stopped at its first record" in err
    assert types(data) == [AuditType.KIOSK_START]       # the test's own: nothing logged, no kiosk_stop either


def test_a_log_sqlite_opens_read_only_stops_the_kiosk_in_the_words_check_fails_it_with(tmp_path, runner,
                                                                                       monkeypatch):
    """What access(2) let through (the kiosk runs as root, a file on a mount that lies) SQLite
    still refuses at the first write: the kiosk says it as `niuniu check` does for a file it sees."""
    data = data_dir(tmp_path)
    scripted(monkeypatch)
    log_connection(monkeypatch, "PRAGMA query_only = 1")    # SQLite's SQLITE_READONLY, as for a read-only open
    code, out, err = kiosk(runner, tmp_path, data)
    assert code == 2 and err.count("\n") == 1, err
    assert f"{unwritable_file(data / AUDIT_FILE)} (attempt to write a readonly database): the kiosk stopped at its " \
           "first record" in err
    assert types(data) == [AuditType.KIOSK_START]

    read_only(monkeypatch, data / AUDIT_FILE)
    level, message = findings(tmp_path, data)["data directory"]
    assert (level, message) == (FAIL, f"{unwritable_file(data / AUDIT_FILE)}: the kiosk would stop at its first record")


# -- 2: the demo's port before anything is logged -------------------------------------------------


def test_a_busy_port_stops_the_demo_before_anything_is_logged(tmp_path, runner, monkeypatch):
    demo, data = tmp_path / "demo", tmp_path / "data"
    write_demo(demo, [{"banker": "4S 6H QD 9C 9H", "1": "KS QS JS 10S 10H"}], dealt=3)
    scripted(monkeypatch)
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen()
    port = held.getsockname()[1]
    try:
        code, out, err = runner(["demo", "--dataset", str(demo), "--data-dir", str(data), "--port", str(port)])
    finally:
        held.close()
    assert code == 2 and err.count("\n") == 1 and f"cannot listen on 127.0.0.1:{port}" in err, err
    assert "choose another --port" in err and not out
    assert not (data / AUDIT_FILE).exists()     # no kiosk_start without a stop, no demo accounts


# -- 3: read without the orientation model, on the start record and in its words -----------------


@pytest.fixture
def unturned(tmp_path):
    """The kiosk as `niuniu kiosk` builds it, its reader without models/card-orientation.pt."""
    from kiosk.commands import build_kiosk
    from vision.sources import ImageFilesSource

    detector = ScriptedDetector({})
    detector.orientation_missing = tmp_path / "models" / "card-orientation.pt"
    source = ImageFilesSource([camera(tmp_path) / "00000.png"], "a test folder")
    app, service, _ = build_kiosk(make_table(), source, detector, tmp_path / "d")
    yield app
    service.stop()
    service.audit.close()


def test_the_start_record_and_its_words_say_the_cards_are_read_without_the_orientation_model(tmp_path, unturned,
                                                                                             app):
    """Said on the surveillance's event log, in kiosk_start and model_loaded; a reader with its
    orientation model (the ``app`` fixture's) is said as before."""
    missing = str(tmp_path / "models" / "card-orientation.pt")
    for kiosk_app, said in ((unturned, True), (app, False)):
        [start] = kiosk_app.extensions["niuniu"].service.audit.records(types=[AuditType.KIOSK_START])
        assert start.data.get("orientation_missing") == (missing if said else None)
        if said:        # the app fixture has its accounts already
            create_accounts(kiosk_app)
        client = kiosk_app.test_client()
        login(client, "watch1")
        for kind in ("kiosk_start", "model_loaded"):
            page = client.get(f"/review/log?type={kind}").get_data(as_text=True)
            assert (f"READ WITHOUT THE ORIENTATION MODEL ({missing} was missing): the cards were not turned upright "
                    "before they were read, and are misread more" in page) is said, (kind, page)
        assert "Kiosk started (table t1" in client.get("/review/log?type=kiosk_start").get_data(as_text=True)
