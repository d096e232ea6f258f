"""The console's words where QA 51 found a traceback, a muddled line or a slip let through
(L1, L7, L10, L11)."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
import yaml

from kiosk.audit import AuditLog, AuditType
from kiosk.preflight import WARN, check_device
from kiosk_testing import table_dict
from scoring.errors import NiuniuError
from vision.table import load_table_config

DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo"


def test_users_add_with_no_terminal_says_to_pass_password_stdin(tmp_path, runner, monkeypatch):
    """`ssh host niuniu users add ...` (no -t): getpass meets the end of input."""
    def no_terminal(prompt=""):
        raise EOFError

    monkeypatch.setattr("getpass.getpass", no_terminal)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code, out, err = runner(["users", "add", "--data-dir", str(tmp_path / "d"), "--username", "dealer9",
                             "--role", "dealer"])
    assert code == 2 and err.count("\n") == 1 and "no terminal" in err and "--password-stdin" in err, err
    assert not (tmp_path / "d").exists()


def test_check_says_a_backup_that_failed_today_failed_today(tmp_path):
    shutil.copy(DEMO / "table.yaml", tmp_path / "table.yaml")
    data = tmp_path / "data"
    data.mkdir()
    log = AuditLog.in_dir(data)
    log.append(AuditType.BACKUP_FAILED, "niuniu", {"to": "/mnt/niuniu-backup", "error": "mount the backup drive"})
    log.close()
    [backup] = [f for f in check_device(tmp_path / "table.yaml", data, camera=False) if f.part == "backup"]
    assert backup.level == WARN
    assert backup.message == "the last backup, today, failed: mount the backup drive"


@pytest.mark.parametrize("word, read", [("yes", True), ("on", True), ("true", True),
                                        ("no", False), ("off", False), ("false", False)])
def test_a_switch_written_yes_or_on_is_read_as_yaml_always_read_it(tmp_path, word, read):
    """Table files have said `mirror: yes` for years (YAML 1.1): refusing it stopped the kiosk
    at its first start after an upgrade (QA51 L6)."""
    path = tmp_path / "table.yaml"
    path.write_text(yaml.safe_dump(table_dict()).replace("camera:\n", f"camera:\n  mirror: {word}\n"))
    assert load_table_config(path).camera.mirror is read


@pytest.mark.parametrize("word", ["2", "maybe", '"yes"'])
def test_a_switch_written_with_a_real_slip_is_refused_with_the_fix(tmp_path, word):
    path = tmp_path / "table.yaml"
    path.write_text(yaml.safe_dump(table_dict()).replace("camera:\n", f"camera:\n  mirror: {word}\n"))
    with pytest.raises(NiuniuError, match="mirror.*write true or false"):
        load_table_config(path)


def test_a_stake_in_exponent_form_is_named_as_such(runner):
    code, out, err = runner(["settle", "--banker", "5S 8H 2D 4C 9S", "--seat", "1:7S 8C 5H KD 10C:1e20"])
    assert code == 2 and "'1e20' is written in exponent form" in err and "write the amount in digits" in err, err
