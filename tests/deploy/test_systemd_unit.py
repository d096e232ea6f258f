"""niuniu.service: systemd accepts it, and it has the recovery settings the table depends on."""

from __future__ import annotations

import configparser
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
UNIT = REPO / "deploy/systemd/niuniu.service"
HOST_UNITS = Path("/usr/lib/systemd/system")


def _unit(path: Path = UNIT) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None, delimiters=("=",))
    parser.optionxform = str  # systemd keys are case-sensitive
    parser.read(path)
    return parser


def _verify(unit_text: str, root: Path, name: str = "niuniu.service",
            others: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """`systemd-analyze verify` in a scratch root holding the unit (and ``others`` of
    deploy/systemd beside it) and its ExecStart binary."""
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed (Debian package systemd)")
    if not (HOST_UNITS / "sysinit.target").exists():
        pytest.skip("no systemd unit directory to resolve dependencies against")
    shutil.copytree(HOST_UNITS, root / "usr/lib/systemd/system", symlinks=True)
    (root / "etc/systemd/system").mkdir(parents=True)
    (root / f"etc/systemd/system/{name}").write_text(unit_text)
    for other in others:
        shutil.copy(REPO / "deploy/systemd" / other, root / "etc/systemd/system" / other)
    exe = root / "opt/niuniu/venv/bin/niuniu"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    return subprocess.run(["systemd-analyze", f"--root={root}", "verify", f"/etc/systemd/system/{name}"],
                          capture_output=True, text=True, timeout=60, check=False)


def test_systemd_analyze_verify_reports_nothing(tmp_path):
    result = _verify(UNIT.read_text(), tmp_path)
    report = (result.stdout + result.stderr).strip()
    assert result.returncode == 0 and report == "", report


def test_verify_catches_a_broken_unit(tmp_path):
    # Guards the test above: systemd-analyze exits 0 on an unknown value, only the report tells.
    result = _verify(UNIT.read_text().replace("Type=notify", "Type=notifyy"), tmp_path)
    assert "Failed to parse service type" in result.stdout + result.stderr


def test_hung_or_crashed_app_is_restarted_within_limits():
    unit = _unit()
    service, head = unit["Service"], unit["Unit"]
    assert service["Type"] == "notify"  # "active" only after READY=1
    assert 5 <= int(service["WatchdogSec"]) <= 120
    assert service["Restart"] == "on-failure"
    assert int(head["StartLimitBurst"]) >= 3
    assert int(head["StartLimitIntervalSec"]) >= int(service["RestartSec"]) * int(head["StartLimitBurst"])


def test_runs_as_the_camera_user_with_the_installed_paths():
    service = _unit()["Service"]
    assert service["User"] == "niuniu"
    assert "video" in service["SupplementaryGroups"].split()
    assert service["StateDirectory"] == "niuniu"  # /var/lib/niuniu, owned by niuniu
    exec_start = service["ExecStart"].split()
    assert exec_start[:2] == ["/opt/niuniu/venv/bin/niuniu", "kiosk"]
    assert exec_start[exec_start.index("--config") + 1] == "/etc/niuniu/table.yaml"
    assert exec_start[exec_start.index("--data-dir") + 1] == "/var/lib/niuniu"
    assert "PrivateDevices" not in service  # would hide the camera
    assert _unit()["Install"]["WantedBy"] == "multi-user.target"


def test_the_nightly_backup_units_verify_and_back_up_the_installed_paths(tmp_path):
    timer = REPO / "deploy/systemd/niuniu-backup.timer"
    result = _verify(timer.read_text(), tmp_path, "niuniu-backup.timer", others=("niuniu-backup.service",))
    report = (result.stdout + result.stderr).strip()
    assert result.returncode == 0 and report == "", report
    service = _unit(REPO / "deploy/systemd/niuniu-backup.service")["Service"]
    assert service["Type"] == "oneshot" and service["User"] == "niuniu"
    exec_start = service["ExecStart"].split()
    assert exec_start[:2] == ["/opt/niuniu/venv/bin/niuniu", "backup"]
    assert exec_start[exec_start.index("--data-dir") + 1] == "/var/lib/niuniu"
    assert exec_start[exec_start.index("--to") + 1] == "${NIUNIU_BACKUP_DIR}"
    assert exec_start[exec_start.index("--config") + 1] == "/etc/niuniu/table.yaml"
    assert "--other-disk" in exec_start      # an unmounted drive fails the night, not fills the SD card
    # Unconfigured, the run is skipped (ExecCondition), not failed every night.
    assert "$$NIUNIU_BACKUP_DIR" in service["ExecCondition"]
    assert _unit(timer)["Timer"]["Persistent"] == "true"
