""".ci/run drives the README's two commands the way CI needs: demo until it answers, then tests.

Each test writes a small README into a scratch checkout whose first command starts a
stand-in demo (a real HTTP server on loopback) and whose second plays the test suite's
exit status.  apt is skipped (NIUNIU_CI_SKIP_APT=1); everything else is the real script.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

FAKE_DEMO = textwrap.dedent("""\
    import argparse, http.server, sys, time
    p = argparse.ArgumentParser(); p.add_argument("--port", type=int); p.add_argument("--delay", type=float, default=0)
    p.add_argument("--status", type=int, default=200); p.add_argument("--exit-early", action="store_true")
    a = p.parse_args()
    print("demo accounts: dealer/demo", flush=True)
    if a.exit_early:
        sys.exit(3)
    time.sleep(a.delay)  # "installing"
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(a.status); self.end_headers()
        def log_message(self, *args):
            pass
    http.server.HTTPServer(("127.0.0.1", a.port), H).serve_forever()
""")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port_is_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def _checkout(tmp_path: Path, first: str, second: str) -> Path:
    checkout = tmp_path / "checkout"
    (checkout / ".ci").mkdir(parents=True)
    shutil.copy(REPO / ".ci/run", checkout / ".ci/run")
    (checkout / "fake_demo.py").write_text(FAKE_DEMO)
    (checkout / "README.md").write_text(
        f"# Project\n\n## Quick start\n\n```bash\n{first}\n{second}\n```\n\n## Next\n\n```bash\nnot a command\n```\n")
    return checkout


def _ci(checkout: Path) -> subprocess.CompletedProcess:
    if shutil.which("curl") is None or shutil.which("setsid") is None:
        pytest.skip("curl and setsid are needed")
    env = {**os.environ, "NIUNIU_CI_SKIP_APT": "1", "NIUNIU_CI_DEMO_DEADLINE_S": "60"}
    return subprocess.run(["bash", str(checkout / ".ci/run")], cwd=checkout, env=env,
                          capture_output=True, text=True, timeout=120)


def _demo(port: int, extra: str = "") -> str:
    return f"{sys.executable} fake_demo.py --port {port} {extra}".strip()


def test_waits_for_the_demo_stops_it_and_runs_the_tests(tmp_path):
    port = _free_port()
    checkout = _checkout(tmp_path, _demo(port, "--delay 2"), "echo TESTS RAN; exit 0")
    result = _ci(checkout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "demo accounts: dealer/demo" in result.stdout  # the demo's own output is shown
    assert f"demo answered HTTP 200 at http://127.0.0.1:{port}/" in result.stdout
    assert "TESTS RAN" in result.stdout
    assert _port_is_free(port), "the demo was left running"


def test_pytest_exit_5_no_tests_is_not_a_failure(tmp_path):
    checkout = _checkout(tmp_path, _demo(_free_port()), "exit 5")
    result = _ci(checkout)
    assert result.returncode == 0
    assert "collected no tests (exit 5)" in result.stdout


def test_failing_tests_fail_ci(tmp_path):
    checkout = _checkout(tmp_path, _demo(_free_port()), "exit 1")
    assert _ci(checkout).returncode == 1


def test_a_demo_that_dies_before_answering_fails_ci(tmp_path):
    checkout = _checkout(tmp_path, _demo(_free_port(), "--exit-early"), "exit 0")
    result = _ci(checkout)
    assert result.returncode == 1
    assert "exited with status 3 before" in result.stderr
    assert "demo accounts" in result.stdout  # its log is printed to explain why


def test_a_demo_answering_server_errors_fails_ci(tmp_path):
    port = _free_port()
    checkout = _checkout(tmp_path, _demo(port, "--status 500"), "exit 0")
    result = _ci(checkout)
    assert result.returncode == 1
    assert "HTTP 500" in result.stderr
    assert _port_is_free(port)


def test_a_readme_without_two_commands_fails_ci(tmp_path):
    checkout = _checkout(tmp_path, _demo(_free_port()), "exit 0")
    readme = checkout / "README.md"
    readme.write_text(readme.read_text().replace("exit 0\n", "exit 0\necho third\n", 1))
    result = _ci(checkout)
    assert result.returncode == 1
    assert "exactly two commands, found 3" in result.stderr
