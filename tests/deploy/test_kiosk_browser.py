"""The kiosk browser launcher waits for the app and brings the browser back when it dies.

A real HTTP server on loopback plays the app; a fake ``chromium-browser`` on PATH records
each launch and exits at once, as a crashed browser would.
"""

from __future__ import annotations

import http.server
import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = REPO / "deploy/kiosk-browser.sh"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Quiet(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - http.server's name
        self.send_response(302)  # like a login redirect: still "the app answers"
        self.send_header("Location", "/login")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture()
def browser_env(tmp_path):
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    launches = tmp_path / "launches.txt"
    fake = bin_dir / "chromium-browser"
    fake.write_text(f'#!/bin/sh\necho "$@" >> "{launches}"\nexit 1\n')  # "crashes" at once
    fake.chmod(0o755)
    port = _free_port()
    env_file = tmp_path / "niuniu.env"
    env_file.write_text(f"# local settings\nNIUNIU_PORT={port}\nNIUNIU_ARGS=\n")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path),
           "NIUNIU_ENV_FILE": str(env_file), "NIUNIU_KIOSK_POLL_S": "0.1",
           "NIUNIU_KIOSK_RESTART_DELAY_S": "0.1", "NIUNIU_KIOSK_MAX_LAUNCHES": "3"}
    env.pop("NIUNIU_URL", None)
    env.pop("WAYLAND_DISPLAY", None)
    return env, port, launches


def _serve(port: int) -> http.server.HTTPServer:
    server = http.server.HTTPServer(("127.0.0.1", port), _Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_browser_starts_only_once_the_app_answers_and_is_restarted(browser_env):
    env, port, launches = browser_env
    proc = subprocess.Popen(["bash", str(LAUNCHER)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.0)
        assert not launches.exists(), "browser opened before the app answered"
        server = _serve(port)
        try:
            _, stderr = proc.communicate(timeout=30)
        finally:
            server.shutdown()
            server.server_close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, stderr
    runs = launches.read_text().splitlines()
    assert len(runs) == 3  # the dead browser was started again, each time
    url = f"http://127.0.0.1:{port}/"
    assert all(run.endswith(url) and "--kiosk" in run for run in runs)
    assert f"waiting for the app at {url}" in stderr


def test_after_a_power_cut_chromium_is_not_asked_to_restore_pages(browser_env, tmp_path):
    env, port, launches = browser_env
    prefs = tmp_path / ".config/niuniu-kiosk-chromium/Default/Preferences"
    prefs.parent.mkdir(parents=True)
    prefs.write_text('{"profile":{"exit_type":"Crashed","exited_cleanly":false}}')
    server = _serve(port)
    try:
        subprocess.run(["bash", str(LAUNCHER)], env={**env, "NIUNIU_KIOSK_MAX_LAUNCHES": "1"},
                       capture_output=True, timeout=30, check=True)
    finally:
        server.shutdown()
        server.server_close()
    assert prefs.read_text() == '{"profile":{"exit_type":"Normal","exited_cleanly":true}}'


def test_no_browser_installed_is_one_clear_error(browser_env, tmp_path):
    env, _, _ = browser_env
    tools = tmp_path / "tools"  # the few commands the script needs, and no browser
    tools.mkdir()
    for name in ("date", "grep", "tail", "sed", "curl", "sleep"):
        (tools / name).symlink_to(shutil.which(name))
    result = subprocess.run([shutil.which("bash"), str(LAUNCHER)], env={**env, "PATH": str(tools)},
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert "no chromium-browser or chromium on PATH" in result.stderr
