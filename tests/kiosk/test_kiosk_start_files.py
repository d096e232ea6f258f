"""Starting the kiosk on a data directory whose files are not as the kiosk left them (QA 51:
H2, M2, M3, M4; M8's record): each is one line before anything is logged, made good where it holds nothing
worth keeping, and named by `niuniu check` beforehand."""

from __future__ import annotations

import io
import logging
import socket
from pathlib import Path

import pytest
import yaml

from kiosk import db
from kiosk.app import create_app
from kiosk.audit import AUDIT_FILE, AuditLog, AuditType
from kiosk.preflight import FAIL, OK, WARN, check_device
from kiosk_testing import create_accounts, csrf_from, table_dict
from test_preflight import data as data_dir
from scoring.errors import NiuniuError

ADMIN = {"username": "boss", "password": "a-long-password-1", "password2": "a-long-password-1"}


def table_file(tmp_path) -> Path:
    path = tmp_path / "table.yaml"
    path.write_text(yaml.safe_dump(table_dict()))
    return path


def types(data: Path) -> list[str]:
    log = AuditLog.in_dir(data, create=False)
    try:
        return [r.type for r in log.records()]
    finally:
        log.close()


def findings(tmp_path, data) -> dict[str, tuple[str, str]]:
    return {f.part: (f.level, f.message) for f in check_device(table_file(tmp_path), data, camera=False)}


def stop(app) -> None:
    service = app.extensions["niuniu"].service
    service.stop()
    service.audit.close()


# -- H2: an empty secret_key or setup_code ----------------------------------------------------------


def test_an_empty_secret_key_is_made_again_so_the_staff_can_still_log_in(app_config, caplog):
    data = Path(app_config["DATA_DIR"])
    data.mkdir()
    (data / db.SECRET_FILE).write_text("")         # what a power cut at the first start leaves
    with caplog.at_level(logging.WARNING, logger="kiosk.db"):
        app = create_app(app_config)
    try:
        create_accounts(app)
        page = app.test_client().get("/auth/login")
        assert page.status_code == 200 and b"password" in page.data.lower()
    finally:
        stop(app)
    key = (data / db.SECRET_FILE).read_text().strip()
    assert len(key) == 64 and app.secret_key == key
    assert (data / db.SECRET_FILE).stat().st_mode & 0o777 == 0o600
    assert f"{data / db.SECRET_FILE} is empty" in caplog.text and "making a new one" in caplog.text
    assert not [p.name for p in data.iterdir() if p.name.startswith(f".{db.SECRET_FILE}")]   # no temporary left


def test_an_empty_setup_code_never_lets_an_empty_form_make_the_administrator(app_config):
    data = Path(app_config["DATA_DIR"])
    data.mkdir()
    (data / db.SETUP_CODE_FILE).write_text("\n")
    app = create_app(app_config)
    try:
        client = app.test_client()
        token = csrf_from(client.get("/auth/setup").get_data(as_text=True))
        empty = client.post("/auth/setup", data={"csrf_token": token, "setup_code": "", **ADMIN})
        assert empty.status_code == 400 and b"setup code is wrong" in empty.data
        code = (data / db.SETUP_CODE_FILE).read_text().strip()
        assert len(code) == 8 and code == db.setup_code(data)      # a new one, printed at start
        made = client.post("/auth/setup", data={"csrf_token": token, "setup_code": code, **ADMIN})
        assert made.status_code == 302
        with db.connect(data) as conn:
            assert [r["username"] for r in conn.execute("SELECT username FROM users")] == ["boss"]
    finally:
        stop(app)


def test_the_setup_page_refuses_an_empty_expected_code_whatever_the_file_gave(bare_app, monkeypatch):
    monkeypatch.setattr("kiosk.db.setup_code", lambda data_dir: "")
    client = bare_app.test_client()
    token = csrf_from(client.get("/auth/setup").get_data(as_text=True))
    answer = client.post("/auth/setup", data={"csrf_token": token, "setup_code": "", **ADMIN})
    assert answer.status_code == 400
    with db.connect(bare_app.config["DATA_DIR"]) as conn:
        assert conn.execute("SELECT COUNT(*) FROM users").fetchone()[0] == 0


def test_check_names_an_empty_or_short_secret_key_and_setup_code(tmp_path):
    data = data_dir(tmp_path)
    (data / db.SECRET_FILE).write_text("")
    (data / db.SETUP_CODE_FILE).write_text("ab12\n")
    found = findings(tmp_path, data)
    assert found["secret key"][0] == WARN and "is empty" in found["secret key"][1]
    assert "makes a new one at its next start" in found["secret key"][1]
    assert found["setup code"][0] == WARN and "does not hold the 8 hex digits" in found["setup code"][1]
    # and says nothing of files that are right
    (data / db.SECRET_FILE).write_text("ab" * 32 + "\n")
    (data / db.SETUP_CODE_FILE).write_text("0123abcd\n")
    assert not {"secret key", "setup code"} & set(findings(tmp_path, data))


# -- M2: a database file the kiosk's user cannot write ---------------------------------------------


def read_only(monkeypatch, *paths: Path) -> None:
    """As access(2) answers for a file owned by root, mode 444 (the tests run as root)."""
    import os

    real = os.access
    monkeypatch.setattr("kiosk.backup.os.access",
                        lambda path, mode: False if Path(path) in paths and mode & os.W_OK else real(path, mode))


def no_kiosk(monkeypatch) -> None:
    """`niuniu kiosk` stops before the camera, the models and the audit log are touched."""
    def started(*args, **kwargs):
        raise AssertionError("the kiosk went on to start (and log kiosk_start)")

    # vision.cli binds open_source when first imported: imported under the patch (this test run
    # alone, then the console's check), it kept the patched one for every later test
    import vision.cli  # noqa: F401
    monkeypatch.setattr("vision.sources.open_source", started)
    monkeypatch.setattr("kiosk.commands._detector", started)
    monkeypatch.setattr("kiosk.commands.build_kiosk", started)


def test_a_read_only_audit_log_fails_the_check_and_stops_the_kiosk_with_one_line(tmp_path, runner, monkeypatch):
    data = data_dir(tmp_path)
    read_only(monkeypatch, data / AUDIT_FILE)
    level, message = findings(tmp_path, data)["data directory"]
    assert level == FAIL and f"cannot write {data / AUDIT_FILE}" in message and "chown niuniu:niuniu" in message

    no_kiosk(monkeypatch)
    code, out, err = runner(["kiosk", "--config", str(table_file(tmp_path)), "--data-dir", str(data),
                             "--source", str(tmp_path / "frames"), "--port", "0"])
    assert code == 2 and err.count("\n") == 1 and f"cannot write {data / AUDIT_FILE}" in err, err
    monkeypatch.setattr("sys.stdin", io.StringIO("pass-word-123\n"))
    code, _, err = runner(["users", "add", "--data-dir", str(data), "--username", "abc", "--role", "dealer",
                           "--password-stdin"])
    assert code == 2 and f"cannot write {data / AUDIT_FILE}" in err, err


def test_check_fails_when_the_recordings_folder_is_not_writable(tmp_path, monkeypatch):
    data = data_dir(tmp_path)
    folder = data / "recordings" / "t1"
    folder.mkdir(parents=True)
    assert "recordings" not in findings(tmp_path, data)
    read_only(monkeypatch, folder)
    level, message = findings(tmp_path, data)["recordings"]
    assert level == FAIL and f"{folder} is not writable" in message and "no recording" in message


# -- M3: a damaged accounts database --------------------------------------------------------------


def test_a_damaged_accounts_database_is_one_line_at_start_and_a_fail_in_check(tmp_path, app_config):
    data = data_dir(tmp_path)
    (data / db.KIOSK_DB).write_bytes(b"\x13not a database at all" * 500)
    level, message = findings(tmp_path, data)["accounts"]
    assert level == FAIL and "file is not a database" in message and "niuniu restore" in message
    with pytest.raises(NiuniuError, match=r"cannot open the accounts in .*kiosk.sqlite3: file is not a database.*"
                                          r"niuniu restore"):
        create_app({**app_config, "DATA_DIR": str(data)})
    assert types(data) == [AuditType.KIOSK_START]     # no second start logged


def test_check_counts_the_accounts_and_warns_when_there_are_none(tmp_path, bare_app):
    data = Path(bare_app.config["DATA_DIR"])
    assert findings(tmp_path, data)["accounts"][0] == WARN
    create_accounts(bare_app)
    before = sorted(p.name for p in data.iterdir())
    level, message = findings(tmp_path, data)["accounts"]
    assert level == OK and "1 admin" in message and "dealer" in message
    assert sorted(p.name for p in data.iterdir()) == before      # read, nothing made (check may run as root)


# -- M4: a busy port ----------------------------------------------------------------------------


def test_a_busy_port_stops_the_kiosk_before_anything_is_logged_or_started(tmp_path, runner, monkeypatch):
    data = data_dir(tmp_path)
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen()
    try:
        no_kiosk(monkeypatch)
        code, out, err = runner(["kiosk", "--config", str(table_file(tmp_path)), "--data-dir", str(data),
                                 "--source", str(tmp_path / "frames"), "--port", str(held.getsockname()[1])])
    finally:
        held.close()
    assert code == 2 and err.count("\n") == 1 and "cannot listen on 127.0.0.1" in err, err
    assert types(data) == [AuditType.KIOSK_START]


# -- M8: read without the orientation model, on the record --------------------------------------


def test_the_kiosk_records_a_missing_orientation_model_in_model_loaded(tmp_path):
    """A dispute over a misread card must be able to see the table read its cards unturned."""
    from kiosk.commands import build_kiosk
    from kiosk_testing import ScriptedDetector, make_table
    from vision.sources import ImageFilesSource

    detector = ScriptedDetector({})
    detector.orientation_missing = tmp_path / "models" / "card-orientation.pt"
    source = ImageFilesSource([tmp_path / "0000.png"], "a test folder")
    _, service, _ = build_kiosk(make_table(), source, detector, tmp_path / "d")
    try:
        [loaded] = service.audit.records(types=[AuditType.MODEL_LOADED])
        assert loaded.data["orientation_missing"] == str(tmp_path / "models" / "card-orientation.pt")
    finally:
        service.stop()
        service.audit.close()
