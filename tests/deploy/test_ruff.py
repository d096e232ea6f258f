"""Every Python file in the repository passes ruff with the project's settings (pyproject.toml).

pyflakes finds the unused import or undefined name a test run can miss (a branch that only a
camera failure reaches); bugbear finds a closure over a loop variable.  One configuration,
checked on every run, keeps the style from drifting file by file.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_ruff_clean():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=REPO,
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
