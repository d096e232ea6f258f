"""An OSError the command did not handle, with standard output working (QA51 L7): the output
holds what the command wrote and nothing more, and the error stays a traceback.  Probing whether
standard output still took writes put a newline into it (into `--json` output too)."""

from __future__ import annotations

import errno
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

COMMAND = """
import errno, sys
import kiosk.commands
def failing(args):
    print('{"rounds": 3}')
    raise OSError(errno.%s, "refused", "/var/lib/niuniu/elsewhere")
kiosk.commands.run_audit_verify = failing
from kiosk.cli import main
sys.exit(main(["audit", "verify", "--data-dir", "unused"]))
"""


@pytest.mark.parametrize("error", ["ENOENT", "EACCES", "ENOSPC"])
def test_an_unhandled_os_error_adds_nothing_to_the_output_file(tmp_path, error):
    """ENOSPC too: another file's disk was full, not the one the output goes to."""
    out = tmp_path / "out.json"
    with open(out, "w") as stdout:
        done = subprocess.run([sys.executable, "-c", COMMAND % error], stdout=stdout, stderr=subprocess.PIPE,
                              text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 1 and "Traceback" in done.stderr
    assert f"[Errno {getattr(errno, error)}] refused" in done.stderr
    assert out.read_bytes() == b'{"rounds": 3}\n'


def test_an_unhandled_os_error_adds_nothing_to_a_pipe(tmp_path):
    done = subprocess.run([sys.executable, "-c", COMMAND % "ENOSPC"], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 1 and "Traceback" in done.stderr
    assert done.stdout == '{"rounds": 3}\n'
