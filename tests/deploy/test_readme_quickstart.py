"""The README's Quick start is exactly two commands, and CI runs exactly those.

A newcomer copies the block; CI (.ci/run) reads the same block, so a README that drifts
from what works fails CI instead of the newcomer.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
FAKE = Path(__file__).with_name("fake_system.py")


def _quickstart_block() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = re.search(r"^#+\s+Quick start\s*$(.*?)(?=^#+\s)", text, re.M | re.S)
    assert section, "README.md has no 'Quick start' section"
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", section.group(1), re.M | re.S)
    assert len(blocks) == 1, f"the Quick start section must hold one code block, found {len(blocks)}"
    return [line for line in blocks[0].splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_quick_start_is_two_commands_demo_then_tests():
    first, second = _quickstart_block()  # exactly two
    assert "niuniu demo" in first
    assert "pytest" in second


def test_ci_runs_the_same_two_commands():
    result = subprocess.run(["bash", str(REPO / ".ci/run"), "--print-quickstart"], cwd=REPO,
                            capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.splitlines() == _quickstart_block()


def test_ci_reads_the_demo_port_from_the_command():
    first = _quickstart_block()[0]
    port = re.search(r"--port[=\s]+(\d+)", first)
    assert port, "the demo command should name its port so CI knows where to look"


def test_documented_torch_pins_are_the_ones_installed():
    readme = README.read_text(encoding="utf-8")
    for script in ("deploy/quickstart.sh", "deploy/install.sh"):
        text = (REPO / script).read_text()
        for pin in ("torch==2.14.1", "torchvision==0.29.1", "torch==2.9.1", "torchvision==0.24.1"):
            assert pin in text, f"{script} lacks {pin}"
            assert pin in readme, f"README does not document {pin}"


def _run_quickstart(tmp_path: Path, arch: str, fakes: tuple[str, ...] = (), **fake_env: str) -> list[dict]:
    """deploy/quickstart.sh in a copy of the checkout, with python, uname and FAKES faked."""
    checkout = tmp_path / "checkout"
    (checkout / "deploy").mkdir(parents=True)
    shutil.copy(REPO / "deploy/quickstart.sh", checkout / "deploy/quickstart.sh")
    fakebin, state = tmp_path / "bin", tmp_path / "state"
    fakebin.mkdir()
    state.mkdir()
    fake = fakebin / "_fake"
    fake.write_text(f"#!{sys.executable}\n" + FAKE.read_text())
    fake.chmod(0o755)
    for name in ("python3", "uname", *fakes):
        (fakebin / name).symlink_to(fake)
    (state / "log.jsonl").write_text("")
    env = {**os.environ, "PATH": f"{fakebin}{os.pathsep}{os.environ['PATH']}", "FAKE_STATE": str(state),
           "FAKE_ARCH": arch, **fake_env}
    env.pop("NIUNIU_TORCH_PINS", None)
    env.pop("PYTHON", None)
    subprocess.run(["bash", str(checkout / "deploy/quickstart.sh")], env=env, cwd=tmp_path,
                   capture_output=True, text=True, timeout=60, check=True)
    return [json.loads(line) for line in (state / "log.jsonl").read_text().splitlines()]


@pytest.mark.parametrize(("arch", "pins"), [
    ("x86_64", ["torch==2.14.1", "torchvision==0.29.1"]),
    ("aarch64", ["torch==2.9.1", "torchvision==0.24.1"]),
])
def test_quickstart_pins_torch_before_installing_the_project(tmp_path, arch, pins):
    calls = _run_quickstart(tmp_path, arch)
    assert ["-m", "venv", ".venv"] in [c["args"] for c in calls if c["cmd"] == "python3"]
    pip = [c["args"] for c in calls if c["cmd"] == "venv-python"]
    assert len(pip) == 2
    assert pip[0][-2:] == pins  # first, so ultralytics' bare "torch" is already satisfied
    assert pip[1][-2:] == ["--editable", ".[ml,dev]"]


def test_quickstart_updates_empty_package_lists_before_installing_venv(tmp_path):
    # A fresh Debian 12 image as root: no python3-venv, and package lists that are empty
    # (the install fails until `apt-get update` has run).
    calls = _run_quickstart(tmp_path, "x86_64", ("apt-get", "id"), FAKE_UID="0", FAKE_NO_ENSUREPIP="1",
                            FAKE_APT_NEEDS_UPDATE="1")
    apt = [c["args"] for c in calls if c["cmd"] == "apt-get"]
    assert ["update"] in apt
    last_install = max(i for i, a in enumerate(apt) if "install" in a)
    assert apt.index(["update"]) < last_install and "python3-venv" in apt[last_install]
    assert ["-m", "venv", ".venv"] in [c["args"] for c in calls if c["cmd"] == "python3"]
