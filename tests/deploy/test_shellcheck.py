"""Every shell script in the repository passes shellcheck.

The scripts run as root on a table device (install.sh) or unattended in a desktop session
(the kiosk browser loop), where a quoting bug is a wiped directory or a dark screen.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".pytest_cache", ".hypothesis",
             "build", "runs", "work-data", ".cache"}


def _is_shell_script(path: Path) -> bool:
    if path.suffix in (".sh", ".bash"):
        return True
    try:
        with path.open("rb") as fh:
            first = fh.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and any(shell in first for shell in (b"bash", b"/sh", b" sh"))


def _repo_files() -> list[Path]:
    try:
        listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others",
                                 "--exclude-standard"], capture_output=True, check=True, timeout=60).stdout
        return [REPO / name for name in listed.decode().split("\0") if name and (REPO / name).is_file()]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for dirpath, dirnames, filenames in os.walk(REPO):
            dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
            files += [Path(dirpath, f) for f in filenames]
        return files


SCRIPTS = sorted(p for p in _repo_files() if _is_shell_script(p))


def test_the_known_scripts_are_found():
    names = {str(p.relative_to(REPO)) for p in SCRIPTS}
    assert {".ci/run", "deploy/install.sh", "deploy/kiosk-browser.sh", "deploy/quickstart.sh"} <= names


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(REPO)))
def test_shellcheck_clean(script):
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (Debian package shellcheck; .ci/run installs it)")
    result = subprocess.run(["shellcheck", "--external-sources", str(script)], cwd=script.parent,
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
