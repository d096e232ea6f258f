"""The kiosk's command line: accounts from the console, start-up errors, start/stop records."""

from __future__ import annotations

import io
import json

import yaml

from kiosk.app import create_app
from kiosk.audit import AUDIT_FILE, AuditLog, AuditType
from kiosk_testing import FAST_HASH, hand, make_table, table_dict


def test_users_add_and_list_from_the_console(tmp_path, runner, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("a-long-password\n2468\n"))
    code, out, _ = runner(["users", "add", "--data-dir", str(tmp_path), "--username", "pat", "--role",
                           "supervisor", "--password-stdin"])
    assert code == 0 and "created supervisor pat" in out
    code, out, _ = runner(["users", "list", "--data-dir", str(tmp_path), "--json"])
    assert json.loads(out)[0]["username"] == "pat"
    log = AuditLog.in_dir(tmp_path, create=False)
    assert log.last().type == AuditType.USER_CREATED and log.last().actor.startswith("console:")
    log.close()
    monkeypatch.setattr("sys.stdin", io.StringIO("short\n"))
    code, _, err = runner(["users", "add", "--data-dir", str(tmp_path), "--username", "kim", "--role", "dealer",
                           "--password-stdin"])
    assert code == 2 and "too short" in err and err.count("\n") == 1


def test_users_list_of_a_mistyped_data_dir_says_so_and_creates_nothing(tmp_path, runner):
    """A supervisor who mistypes --data-dir must not be told there are no accounts (nor
    leave an empty kiosk database behind to be found later)."""
    wrong = tmp_path / "kiosk-dta"
    code, out, err = runner(["users", "list", "--data-dir", str(wrong)])
    assert code == 2 and out == "" and "no kiosk database" in err and "--data-dir" in err
    assert not wrong.exists()


def test_kiosk_refuses_a_bad_table_file_in_one_line(tmp_path, runner):
    bad = tmp_path / "table.yaml"
    data = table_dict()
    data["colour"] = "green"
    bad.write_text(yaml.safe_dump(data))
    code, out, err = runner(["kiosk", "--config", str(bad), "--data-dir", str(tmp_path / "d")])
    assert code == 2 and "colour" in err and "Traceback" not in err
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(table_dict()))
    code, _, err = runner(["kiosk", "--config", str(good), "--data-dir", str(tmp_path / "d")])
    assert code == 2 and "no camera given" in err


def test_demo_without_a_recording_says_where_to_put_it(tmp_path, runner, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = runner(["demo", "--dataset", str(tmp_path / "missing")])
    assert code == 2 and "table.yaml" in err


def app_for(tmp_path, table):
    return create_app({"DATA_DIR": str(tmp_path), "TABLE": table, "PASSWORD_HASH_METHOD": FAST_HASH})


def one_round_then_stop(tmp_path, table, amount: str, seat_1: str) -> None:
    """A kiosk that settles one round (seat 1 staking ``amount`` on equal against Bull 8) and stops."""
    from decimal import Decimal

    service = app_for(tmp_path, table).extensions["niuniu"].service
    service.set_bet("1", Decimal(amount), "equal", "dealer1")
    service.observe([hand("banker", "4S 6H QD 9C 9H"), hand("1", seat_1)], 1)
    service.settle("dealer1")
    service.observe([], 2)
    service.stop("test")
    service.audit.close()


def test_restart_logs_start_stop_config_change_and_keeps_history(tmp_path):
    one_round_then_stop(tmp_path, make_table(), "10", "KS QS JS 10S 10H")

    app = app_for(tmp_path, make_table(rules="classic"))
    service = app.extensions["niuniu"].service
    records = service.audit.records()
    types = [r.type for r in records]
    assert types.count("kiosk_start") == 2 and types.count("kiosk_stop") == 1
    start = [r for r in records if r.type == "kiosk_start"][-1]
    assert start.data["previous_run"] == "clean shutdown"
    change = [r for r in records if r.type == AuditType.CONFIG_CHANGED][0]
    assert change.data["old_rules"] == "cambodia" and change.data["new_rules"] == "classic"
    assert "rules" in change.data["keys"]
    state = service.snapshot()
    assert state["history"][0]["round"] == 1 and state["history"][0]["status"] == "settled"
    assert service.machine.round_no == 1  # the next round will be 2
    service.stop()
    service.audit.close()


def test_a_round_corrected_after_a_change_of_rules_is_resettled_under_its_own(tmp_path):
    from kiosk.table_service import Approval

    # cambodia: 5% commission, equal and double bets; Bull 5 loses to Bull 8
    one_round_then_stop(tmp_path, make_table(), "100", "AS 2S 3D 4D 5C")

    app = app_for(tmp_path, make_table(rules="classic"))   # no commission, no "equal" bet
    service = app.extensions["niuniu"].service
    service.correct("1", "5C", "7C", "dealer1", "a 7 read as 5", Approval("dealer1", "super1"), round_no=1)
    resettled = service.audit.records(types=[AuditType.SETTLEMENT_CORRECTED])[-1].data["new"]
    assert resettled["preset"] == "cambodia"
    line = resettled["lines"][0]     # A 2 7 (10) + 3 4: Bull 7 still loses to Bull 8
    assert (line["outcome"], line["net"]) == ("lose", "-100.00")
    service.stop()
    service.audit.close()


def test_a_round_of_rules_this_kiosk_cannot_load_is_not_resettled_under_others(tmp_path):
    import pytest

    from kiosk.table_service import Approval, TableError
    from scoring.rules import PRESET_DIR

    custom = tmp_path / "house-rules.toml"
    custom.write_text((PRESET_DIR / "cambodia.toml").read_text().replace('name = "cambodia"', 'name = "house-rules"'))
    one_round_then_stop(tmp_path, make_table(rules=str(custom)), "100", "AS 2S 3D 4D 5C")

    app = app_for(tmp_path, make_table())
    service = app.extensions["niuniu"].service
    before = service.audit.last().seq
    with pytest.raises(TableError, match="settled under preset 'house-rules'.*cannot load"):
        service.correct("1", "5C", "7C", "dealer1", "a 7 read as 5", Approval("dealer1", "super1"), round_no=1)
    assert service.audit.last().seq == before      # nothing half-written
    service.stop()
    service.audit.close()


def test_a_round_is_resettled_only_under_the_rules_it_was_played_under(tmp_path):
    import pytest

    from kiosk.table_service import Approval, TableError
    from scoring.rules import PRESET_DIR

    def house_file(rate: str):
        """A custom preset that reuses the built-in name with another commission."""
        path = tmp_path / "house.toml"
        path.write_text((PRESET_DIR / "cambodia.toml").read_text().replace('rate = "0.05"', f'rate = "{rate}"'))
        return make_table(rules=str(path))

    # Played under the built-in cambodia (5%); the table now plays a file named cambodia at 10%.
    # Correcting 5H to 10H makes seat 1 a winning Niu Niu: paid 100 less the built-in's 5%.
    one_round_then_stop(tmp_path / "a", make_table(), "100", "KS QS JS 10S 5H")
    service = app_for(tmp_path / "a", house_file("0.10")).extensions["niuniu"].service
    assert service.preset.name == "cambodia"
    service.correct("1", "5H", "10H", "dealer1", "a 10 read as 5", Approval("dealer1", "super1"), round_no=1)
    line = service.audit.records(types=[AuditType.SETTLEMENT_CORRECTED])[-1].data["new"]["lines"][0]
    assert (line["outcome"], line["commission"], line["net"]) == ("win", "5.00", "95.00")
    service.stop()
    service.audit.close()

    # Played under that 10% file, edited to 20% since: refused, nothing written.
    one_round_then_stop(tmp_path / "b", house_file("0.10"), "100", "KS QS JS 10S 5H")
    service = app_for(tmp_path / "b", house_file("0.20")).extensions["niuniu"].service
    before = service.audit.last().seq
    with pytest.raises(TableError, match="with rules this kiosk no longer has"):
        service.correct("1", "5H", "10H", "dealer1", "a 10 read as 5", Approval("dealer1", "super1"), round_no=1)
    assert service.audit.last().seq == before
    service.stop()
    service.audit.close()


def test_production_kiosk_first_start_setup_and_clean_stop(tmp_path):
    """``niuniu kiosk`` binds loopback, prints the one-time setup code, serves, stops cleanly."""
    import re
    import signal
    import time

    from kiosk_testing import HttpSession, production_kiosk, write_demo

    demo = tmp_path / "demo"
    write_demo(demo, [{"banker": "4S 6H QD 9C 9H", "1": "KS QS JS 10S 10H"}])
    data = tmp_path / "data"
    proc = production_kiosk(demo, data)
    try:
        lines = []
        deadline = time.monotonic() + 30
        while not any(line.startswith("First start") for line in lines):
            assert time.monotonic() < deadline and proc.poll() is None, lines
            lines.append(proc.stdout.readline())
        url = re.search(r"on (http://127\.0\.0\.1:\d+/)", "".join(lines)).group(1)
        code = re.search(r"setup code (\w+)", "".join(lines)).group(1)
        web = HttpSession(url)
        status, headers, _ = web.get("/")
        assert status == 302 and headers["Location"].endswith("/auth/login")
        assert web.get("/auth/login")[1]["Location"].endswith("/auth/setup")
        _, _, page = web.get("/auth/setup")
        from kiosk_testing import csrf_from
        form = {"csrf_token": csrf_from(page), "setup_code": code, "username": "boss",
                "password": "long-enough-pw", "password2": "long-enough-pw"}
        assert web.request("POST", "/auth/setup", form=form)[0] == 302
        web.login("boss", "long-enough-pw")
        assert web.get("/admin/users")[0] == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
    log = AuditLog.in_dir(data, create=False)
    kinds = [r.type for r in log.records()]
    log.close()
    assert kinds[0] == "kiosk_start" and "setup_admin" in kinds and kinds[-1] == "kiosk_stop"
    assert not (data / "setup_code").exists()


def test_the_kiosk_hears_each_camera_turn_once(tmp_path):
    """A table's camera turns reach the kiosk through the round machine alone, so an
    unplugged camera is one audit record from one delivery, not two deduplicated ones."""
    from kiosk.commands import build_kiosk
    from kiosk_testing import ScriptedDetector
    from vision.sources import ImageFilesSource

    source = ImageFilesSource([tmp_path / "0000.png"], "a test folder")
    _, service, pipeline = build_kiosk(make_table(), source, ScriptedDetector({}), tmp_path / "d")
    heard = []
    original = service._camera_event
    service._camera_event = lambda ev: (heard.append(ev.kind), original(ev))
    pipeline.machine.note_camera(False, "unplugged")
    pipeline.machine.note_camera_mirrored(True, "looks mirrored")
    assert [str(k) for k in heard] == ["camera_offline", "camera_mirrored"]
    kinds = [r.type for r in service.audit.records() if r.type.startswith("camera")]
    assert kinds == ["camera_offline", "camera_mirrored"]
    service.audit.close()


def test_the_table_runs_unchecked_for_mirror_images_when_its_judge_is_unusable(tmp_path, capsys):
    """`niuniu serve` builds the table's reader with the mirror judge; a judge file that is
    no judge costs the check, with one warning naming it, not the table."""
    import argparse
    import shutil

    import pytest

    pytest.importorskip("ultralytics", reason="the card model needs the ml extra: pip install -e '.[ml]'")
    from kiosk.commands import _detector
    from vision.detector import MODELS_DIR

    for name in ("index-detector.pt", "card-classifier.pt", "card-second-opinion.pt"):
        shutil.copy(MODELS_DIR / name, tmp_path / name)
    assert _detector(argparse.Namespace(model=tmp_path / "index-detector.pt", model_format="pt")).mirror_judge
    shutil.copy(MODELS_DIR / "card-second-opinion.pt", tmp_path / "card-mirror.pt")   # reads cards, not mirrors
    detector = _detector(argparse.Namespace(model=tmp_path / "index-detector.pt", model_format="pt"))
    assert detector.mirror_judge is None and detector.classifier is not None
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "card-mirror.pt" in err[0] and "will not be checked for mirror images" in err[0]


def test_a_camera_knocked_during_service_is_on_the_screens_and_in_the_log(tmp_path):
    """The kiosk as `niuniu kiosk` builds it, with the picture the zones were marked on:
    the camera shifted 70 px after calibration is in the dealer's status, on the admin's
    page and, once, in the audit log."""
    from pathlib import Path

    import cv2
    import numpy as np

    from kiosk.commands import build_kiosk
    from kiosk_testing import ScriptedDetector, create_accounts, login
    from vision.sources import Frame, ImageFilesSource
    from vision.table import load_table_config

    demo = Path(__file__).resolve().parents[2] / "datasets" / "demo"
    config = load_table_config(demo / "table.yaml")
    empty = cv2.imread(str(demo / "frames" / "000000.jpg"))
    knocked = np.roll(empty, 70, axis=1)
    source = ImageFilesSource([demo / "frames" / "000000.jpg"], "the demo's first frame")
    app, service, pipeline = build_kiosk(config, source, ScriptedDetector({}), tmp_path / "d", view=empty,
                                         app_config={"TESTING": True, "PASSWORD_HASH_METHOD": FAST_HASH})
    try:
        create_accounts(app)
        for i in range(4):
            pipeline.step(Frame(knocked, 10.0 * i, i))
        dealer, admin = app.test_client(), app.test_client()
        login(dealer, "dealer1")
        assert dealer.get("/live/status").get_json()["camera_warning"].startswith("the camera has moved")
        login(admin, "admin1")
        page = admin.get("/admin/users").get_data(as_text=True)
        assert "Camera aim: moved, compared with the table as it lay when its seat zones were marked" in page
        logged = [(r.type, r.data["aim"]) for r in service.audit.records() if r.type.startswith("camera_mov")]
        assert logged == [("camera_moved", "moved")]
    finally:
        service.stop()
        service.audit.close()


# --------------------------------------------------------------------------- QA of the console (qa45)


def _accounts(data_dir) -> list:
    import sqlite3

    path = data_dir / "kiosk.sqlite3"
    if not path.exists():
        return []
    conn = sqlite3.connect(path)
    try:
        return [row[0] for row in conn.execute("SELECT username FROM users")]
    finally:
        conn.close()


def test_users_add_makes_no_account_when_its_record_cannot_be_written(tmp_path, runner, monkeypatch):
    """An admin account that no `user_created` record shows being made must not exist."""
    from kiosk.audit import AuditError

    data = tmp_path / "data"
    monkeypatch.setattr("sys.stdin", io.StringIO("a-long-password\n"))
    assert runner(["users", "add", "--data-dir", str(data), "--username", "first", "--role", "admin",
                   "--password-stdin"])[0] == 0
    good_log = (data / "audit.sqlite3").read_bytes()

    (data / "audit.sqlite3").write_bytes(b"garbage\n")                # the log cannot be opened
    monkeypatch.setattr("sys.stdin", io.StringIO("pass-word-123\n"))
    code, out, err = runner(["users", "add", "--data-dir", str(data), "--username", "mallory", "--role", "admin",
                             "--password-stdin"])
    assert code == 2 and out == "" and err.count("\n") == 1 and "audit.sqlite3" in err, err
    assert _accounts(data) == ["first"]

    (data / "audit.sqlite3").write_bytes(good_log)                     # it opens, but the append fails

    def full_disk(*args, **kwargs):
        raise AuditError("cannot append to the audit log: database or disk is full")

    monkeypatch.setattr(AuditLog, "append", full_disk)
    monkeypatch.setattr("sys.stdin", io.StringIO("pass-word-123\n"))
    code, _, err = runner(["users", "add", "--data-dir", str(data), "--username", "mallory", "--role", "admin",
                           "--password-stdin"])
    assert code == 2 and "disk is full" in err
    assert _accounts(data) == ["first"]
    monkeypatch.undo()

    # And once the log can be written, the name is free and the record is there.
    monkeypatch.setattr("sys.stdin", io.StringIO("pass-word-123\n"))
    code, _, err = runner(["users", "add", "--data-dir", str(data), "--username", "mallory", "--role", "admin",
                           "--password-stdin"])
    assert code == 0, err
    log = AuditLog.in_dir(data, create=False)
    try:
        assert log.last().type == AuditType.USER_CREATED and log.last().data["username"] == "mallory"
    finally:
        log.close()


def test_users_add_refuses_a_bad_name_before_making_anything_and_echoes_it_short(tmp_path, runner, monkeypatch):
    data = tmp_path / "new" / "data"
    for name in ("xy", "a" * 5000):
        monkeypatch.setattr("sys.stdin", io.StringIO("pass-word-123\n"))
        code, out, err = runner(["users", "add", "--data-dir", str(data), "--username", name, "--role", "dealer",
                                 "--password-stdin"])
        assert code == 2 and out == "" and err.count("\n") == 1 and "3 to 32 letters" in err, err
        assert len(err) < 200
    monkeypatch.setattr("sys.stdin", io.StringIO("short\n"))
    code, _, err = runner(["users", "add", "--data-dir", str(data), "--username", "kim", "--role", "dealer",
                           "--password-stdin"])
    assert code == 2 and "too short" in err
    assert not (tmp_path / "new").exists()


def test_a_data_dir_that_is_a_file_or_read_only_is_one_line_for_users_and_kiosk(tmp_path, runner, monkeypatch):
    import sqlite3

    a_file = tmp_path / "passwd"
    a_file.write_text("root:x:0:0\n")
    table = tmp_path / "table.yaml"
    table.write_text(yaml.safe_dump(table_dict()))
    commands = [["users", "add", "--data-dir", str(a_file), "--username", "abc", "--role", "dealer",
                 "--password-stdin"],
                ["users", "list", "--data-dir", str(a_file)],
                ["kiosk", "--config", str(table), "--source", str(tmp_path / "frames"), "--data-dir", str(a_file)]]
    for argv in commands:
        monkeypatch.setattr("sys.stdin", io.StringIO("pass-word-123\n"))
        code, out, err = runner(argv)
        assert code == 2 and out == "" and err.count("\n") == 1 and f"{a_file} is a file" in err, (argv, err)
    assert a_file.read_text() == "root:x:0:0\n"

    # A read-only mount (the tests run as root, whom permissions do not stop): as access(2) says.
    data = tmp_path / "data"
    monkeypatch.setattr("sys.stdin", io.StringIO("pass-word-123\n"))
    assert runner(["users", "add", "--data-dir", str(data), "--username", "abc", "--role", "dealer",
                   "--password-stdin"])[0] == 0
    before = {p.name: p.read_bytes() for p in data.iterdir()}
    monkeypatch.setattr("kiosk.backup.os.access", lambda path, mode: False)
    for argv in ([c if c != str(a_file) else str(data) for c in argv] for argv in commands):
        monkeypatch.setattr("sys.stdin", io.StringIO("pass-word-123\n"))
        if argv[:2] == ["users", "list"]:    # the kiosk database cannot be opened there
            def unable(*args, **kwargs):
                raise sqlite3.OperationalError("unable to open database file")

            monkeypatch.setattr("kiosk.db.connect", unable)
        code, out, err = runner(argv)
        assert code == 2 and out == "" and err.count("\n") == 1, (argv, err)
        assert "not writable by this user" in err and "Traceback" not in err, (argv, err)
    assert {p.name: p.read_bytes() for p in data.iterdir()} == before


def test_an_upgrade_that_only_adds_settings_logs_no_config_change(tmp_path):
    """A release that adds a setting (at its default) changes the loaded config's digest, but
    nobody edited the table file: a config_changed at every upgrade would hide the real edits."""
    one_round_then_stop(tmp_path, make_table(), "10", "KS QS JS 10S 10H")
    log = AuditLog(tmp_path / AUDIT_FILE, table_id="t1")
    older = json.loads(json.dumps(log.records(types=[AuditType.CONFIG_LOADED])[-1].data))
    del older["config"]["camera"]                    # as a release before the camera settings wrote it
    older["sha256"] = "0" * 64
    log.append(AuditType.CONFIG_LOADED, "system", older)
    log.close()

    for table, keys in ((make_table(), []), (make_table(n=6), [["thresholds.n"]])):   # the same file; an edit
        app = app_for(tmp_path, table)
        service = app.extensions["niuniu"].service
        assert [c.data["keys"] for c in service.audit.records(types=[AuditType.CONFIG_CHANGED])] == keys
        service.stop()
        service.audit.close()
