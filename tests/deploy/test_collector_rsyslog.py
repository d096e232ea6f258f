"""The collector side of ``audit_forward``: Debian's rsyslog with ``deploy/collector/niuniu-rsyslog.conf``.

What a casino's IT installs on its log server must keep every line whole — seven seats'
settlement is beyond rsyslog's default 8 kB — and file it by table and month, or
``niuniu audit check-forwarded`` finds cut lines where nothing was tampered with.  This runs
the real daemon on the shipped file (only its port and folder changed) and checks its copy.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from kiosk.audit import AuditLog, AuditType
from kiosk.forward import AuditForwarder
from kiosk.forward_check import check_forwarded
from vision.table import AuditForwardSettings

REPO = Path(__file__).resolve().parents[2]
CONF = REPO / "deploy" / "collector" / "niuniu-rsyslog.conf"
RSYSLOGD = shutil.which("rsyslogd") or "/usr/sbin/rsyslogd"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def collector(tmp_path):
    """rsyslogd in the foreground on the shipped configuration: ``(port, folder)``."""
    if not Path(RSYSLOGD).exists():
        pytest.skip("rsyslog is not installed (Debian package rsyslog; .ci/run installs it)")
    port, folder = free_port(), tmp_path / "logs"
    text = CONF.read_text()
    assert 'port="514"' in text and "/var/log/niuniu/" in text
    conf = tmp_path / "rsyslog.conf"
    conf.write_text(text.replace('port="514"', f'port="{port}"').replace("/var/log/niuniu/", f"{folder}/")
                    + f'global(workDirectory="{tmp_path}")\n')
    check = subprocess.run([RSYSLOGD, "-N1", "-f", str(conf)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr + check.stdout
    proc = subprocess.Popen([RSYSLOGD, "-n", "-f", str(conf), "-i", str(tmp_path / "rsyslogd.pid")],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, "rsyslogd did not start"
            time.sleep(0.1)
    yield port, folder
    proc.terminate()
    proc.wait(10)


def test_rsyslog_keeps_each_tables_records_whole_by_month(collector, tmp_path):
    port, folder = collector
    data = tmp_path / "data"
    log = AuditLog.in_dir(data, "table-7")
    settled = {"seat": "1", "lines": [{"seat": str(s), "note": "牛牛\n\t" + "x" * 2000} for s in range(7)]}
    for n in range(1, 4):
        log.append(AuditType.ROUND_START, "vision", {"bets": {}}, round_no=n)
        log.append(AuditType.ROUND_SETTLED, "dealer", settled, round_no=n)   # ~15 kB, past rsyslog's 8 kB default
    forwarder = AuditForwarder(log, AuditForwardSettings(to=f"tcp://127.0.0.1:{port}"), data, period=0.05)
    forwarder.start()
    month = datetime.now(timezone.utc).strftime("%Y-%m")
    copy = folder / f"table-7-{month}.log"
    deadline = time.monotonic() + 20
    while not (copy.exists() and f'"seq":{log.last().seq},' in copy.read_text()):
        assert time.monotonic() < deadline, f"rsyslog wrote no complete copy: {sorted(folder.glob('*'))}"
        time.sleep(0.1)
    forwarder.stop_event.set()
    forwarder.join(10)
    result = check_forwarded([copy], log=log)
    log.close()
    assert result.ok, result.problems
    facts = "\n".join(result.facts)
    assert "none missing" in facts and "the log holds every one of the" in facts
