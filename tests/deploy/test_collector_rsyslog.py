"""The collector side of ``audit_forward``: Debian's rsyslog with ``deploy/collector/``'s files.

What a casino's IT installs on its log server must keep every line whole — records beyond
rsyslog's default 8 kB too — and file it by table and month, or ``niuniu audit
check-forwarded`` finds cut lines where nothing was tampered with.  This runs
the real daemon on the shipped files (only ports, folders and certificate paths changed), over
TCP and over TLS, and checks its copy.
"""

from __future__ import annotations

import datetime as dt
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kiosk.audit import AuditLog, AuditType
from kiosk.forward import AuditForwarder
from kiosk.forward_check import check_forwarded
from vision.table import AuditForwardSettings

REPO = Path(__file__).resolve().parents[2]
CONF = REPO / "deploy" / "collector" / "niuniu-rsyslog.conf"
TLS_CONF = REPO / "deploy" / "collector" / "niuniu-rsyslog-tls.conf"
RSYSLOGD = shutil.which("rsyslogd") or "/usr/sbin/rsyslogd"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def certificates(folder: Path) -> None:
    """A CA, and a certificate for ``localhost`` it signed, where the TLS file expects them."""
    now = dt.datetime.now(dt.timezone.utc)

    def issue(subject: str, key, issuer_name, issuer_key, ca: bool):
        builder = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
                   .issuer_name(issuer_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - dt.timedelta(days=1)).not_valid_after(now + dt.timedelta(days=2))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if not ca:
            builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(subject)]), critical=False)
        return builder.sign(issuer_key, hashes.SHA256())

    ca_key, host_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "casino test CA")])
    ca = issue("casino test CA", ca_key, ca_name, ca_key, True)
    host = issue("localhost", host_key, ca_name, ca_key, False)
    folder.mkdir()
    (folder / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (folder / "collector.pem").write_bytes(host.public_bytes(serialization.Encoding.PEM))
    (folder / "collector.key").write_bytes(host_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))


@pytest.fixture
def collector(tmp_path):
    """rsyslogd in the foreground on the shipped files: ``(tcp port, tls port, log folder, CA file)``."""
    if not Path(RSYSLOGD).exists() or not list(Path("/usr/lib").glob("*/rsyslog/lmnsd_gtls.so")):
        pytest.skip("rsyslog with TLS is not installed (Debian packages rsyslog rsyslog-gnutls; .ci/run installs them)")
    tcp, tls, folder, keys = free_port(), free_port(), tmp_path / "logs", tmp_path / "keys"
    text, tls_text = CONF.read_text(), TLS_CONF.read_text()
    assert 'port="514"' in text and "/var/log/niuniu/" in text
    assert 'port="6514"' in tls_text and "/etc/rsyslog-niuniu/" in tls_text
    certificates(keys)
    conf = tmp_path / "rsyslog.conf"
    conf.write_text(text.replace('port="514"', f'port="{tcp}"').replace("/var/log/niuniu/", f"{folder}/")
                    + tls_text.replace('port="6514"', f'port="{tls}"').replace("/etc/rsyslog-niuniu/", f"{keys}/")
                    + f'global(workDirectory="{tmp_path}")\n')
    check = subprocess.run([RSYSLOGD, "-N1", "-f", str(conf)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr + check.stdout
    proc = subprocess.Popen([RSYSLOGD, "-n", "-f", str(conf), "-i", str(tmp_path / "rsyslogd.pid")],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 20
    for port in (tcp, tls):
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "rsyslogd did not start"
                time.sleep(0.1)
    yield tcp, tls, folder, keys / "ca.pem"
    proc.terminate()
    proc.wait(10)


@pytest.mark.parametrize("over", ["tcp", "tls"])
def test_rsyslog_keeps_each_tables_records_whole_by_month(collector, tmp_path, over):
    tcp, tls, folder, ca = collector
    data = tmp_path / "data"
    log = AuditLog.in_dir(data, "table-7")
    settled = {"seat": "1", "lines": [{"seat": str(s), "note": "牛牛\n\t" + "x" * 2000} for s in range(7)]}
    for n in range(1, 4):
        log.append(AuditType.ROUND_START, "vision", {"bets": {}}, round_no=n)
        log.append(AuditType.ROUND_SETTLED, "dealer", settled, round_no=n)   # ~15 kB: past the 8 kB default
    to = (AuditForwardSettings(to=f"tcp://127.0.0.1:{tcp}") if over == "tcp"
          else AuditForwardSettings(to=f"tls://localhost:{tls}", ca_file=str(ca)))
    forwarder = AuditForwarder(log, to, data, period=0.05)
    forwarder.start()
    month = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m")
    copy = folder / f"table-7-{month}.log"
    deadline = time.monotonic() + 20
    while not (copy.exists() and f'"seq":{log.last().seq},' in copy.read_text()):
        assert time.monotonic() < deadline, f"rsyslog wrote no complete copy: {forwarder.status()}"
        time.sleep(0.1)
    forwarder.stop_event.set()
    forwarder.join(10)
    result = check_forwarded([copy], log=log)
    log.close()
    assert result.ok, result.problems
    facts = "\n".join(result.facts)
    assert "none missing" in facts and "the log holds every one of the" in facts
