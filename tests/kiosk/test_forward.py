"""The audit log's copy on the casino's log collector (kiosk.forward, kiosk.forward_check).

A real collector here is a socket server writing each line it receives to a file, as rsyslog
does; the forwarder is the thread the kiosk runs, against a real audit log."""

from __future__ import annotations

import datetime
import json
import socket
import sqlite3
import ssl
import time
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.x509.oid import NameOID

from kiosk.audit import AuditLog, AuditType
from kiosk.forward import STATE_FILE, AuditForwarder, head_message, record_message, syslog_line
from kiosk.forward_check import check_forwarded
from kiosk.preflight import WARN, check_device
from kiosk.signing import public_pem, table_key
from kiosk_testing import SyslogServer, fill, rewrite_history, settings, table_dict, wait_for
from vision.table import ConfigError, AuditForwardSettings, dump_table_config, table_config_from_dict


def forwarded_through(log: AuditLog, collector: SyslogServer) -> bool:
    return f'"seq":{log.last().seq},' in collector.path.read_text() if collector.path.exists() else False


@pytest.fixture
def data_dir(tmp_path):
    return tmp_path / "data"


@pytest.fixture
def log(data_dir):
    log = AuditLog.in_dir(data_dir, "t1")
    yield log
    log.close()


@pytest.fixture
def collector(tmp_path):
    server = SyslogServer(tmp_path / "collector.log")
    yield server
    server.close()


def run_forwarder(log, data_dir, to: AuditForwardSettings, **kw) -> AuditForwarder:
    forwarder = AuditForwarder(log, to, data_dir, period=0.05, max_backoff=0.2, timeout=2.0, **kw)
    forwarder.start()
    return forwarder


def stop(forwarder: AuditForwarder) -> None:
    forwarder.stop_event.set()
    forwarder.join(timeout=10)
    assert not forwarder.is_alive()


def test_every_record_reaches_the_collector_signed_and_checks_against_the_log(log, data_dir, collector):
    fill(log, 30)
    console = AuditLog.in_dir(data_dir, create=False)       # the nightly backup's record names no table
    console.append(AuditType.BACKUP_MADE, "console:root", {"to": "/mnt/backup/x", "head_seq": 60})
    console.close()
    forwarder = run_forwarder(log, data_dir, settings(collector.port), batch=25)
    wait_for(lambda: forwarded_through(log, collector), "the collector to get the log")
    fill(log, 3, start=31)          # written while it runs: sent within the period
    wait_for(lambda: forwarded_through(log, collector), "the new records")
    stop(forwarder)
    assert all(line.startswith("Dec  6") and "niuniu t1 audit" in line for line in collector.lines())
    assert sum('"audit-head/1"' in line for line in collector.lines()) >= 3   # a signed head per batch
    public = table_key(data_dir, log, "test").public_key()

    result = check_forwarded([collector.path], log=log, public_key=public)
    assert result.ok, result.problems
    facts = "\n".join(result.facts)
    assert f"table t1: {log.last().seq} records, seq 1..{log.last().seq}" in facts
    assert f"the log holds every one of the {log.last().seq} records as it was forwarded" in facts
    assert "signed by the published key" in facts and "signed by the key this log made" in facts
    assert "none missing" in facts
    state = json.loads((data_dir / STATE_FILE).read_text())
    assert state["seq"] == log.last().seq and state["hash"] == log.last().hash


def test_a_collector_down_loses_nothing_and_the_outage_is_logged(log, data_dir, tmp_path):
    with socket.socket() as probe:          # a port nobody listens on, to start the collector on later
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    fill(log, 5)
    forwarder = run_forwarder(log, data_dir, settings(port))
    wait_for(lambda: log.last().type == AuditType.FORWARD_FAILED, "the outage to be logged")
    failed = log.last()
    assert failed.data["to"] == f"tcp://127.0.0.1:{port}" and "Connection" in failed.data["error"]
    assert forwarder.status()["down_since"] is not None
    fill(log, 5, start=6)                    # the table plays on meanwhile
    time.sleep(0.5)
    assert log.records(types=[AuditType.FORWARD_FAILED]) == [failed]   # one record per outage, not per retry
    collector = SyslogServer(tmp_path / "collector.log", port=port)
    try:
        wait_for(lambda: log.records(types=[AuditType.FORWARD_RESTORED]), "the collector to answer again")
        wait_for(lambda: forwarded_through(log, collector), "the records kept meanwhile")
        stop(forwarder)
        assert forwarder.status()["down_since"] is None
        restored = log.records(types=[AuditType.FORWARD_RESTORED])[0]
        assert restored.data["down_since"] == failed.ts[:-1] or restored.data["down_since"]
        result = check_forwarded([collector.path], log=log)
        assert result.ok and "none missing" in "\n".join(result.facts), result.problems
    finally:
        collector.close()


def test_a_restart_carries_on_from_the_last_record_sent(log, data_dir, collector):
    fill(log, 5)
    first = run_forwarder(log, data_dir, settings(collector.port))
    wait_for(lambda: forwarded_through(log, collector), "the first records")
    stop(first)
    sent, last_sent = len(collector.lines()), log.last().seq     # the key's record, made on first use, too
    fill(log, 5, start=6)
    second = AuditForwarder(log, settings(collector.port), data_dir)
    assert second.sent_seq == last_sent     # it resumes there (and replays a little on connecting)
    second.period = 0.05
    second.start()
    wait_for(lambda: forwarded_through(log, collector), "the new records")
    stop(second)
    assert len(collector.lines()) > sent
    result = check_forwarded([collector.path], log=log)
    assert result.ok and "sent again after a reconnect" in "\n".join(result.facts)
    assert AuditForwarder(log, settings(collector.port + 1 if collector.port < 65535 else 1), data_dir).sent_seq == 0


def test_the_kiosk_stopping_sends_its_last_records_before_the_thread_ends(log, data_dir, collector):
    forwarder = run_forwarder(log, data_dir, settings(collector.port))
    fill(log, 1)
    wait_for(lambda: forwarded_through(log, collector), "the first records")
    forwarder.period = 30.0                 # it would not look again for half a minute
    time.sleep(0.2)
    log.append(AuditType.KIOSK_STOP, "system", {"reason": "normal shutdown"})
    stop(forwarder)
    # Sent before the thread ended (nothing sends once it has); the collector's own thread
    # may take a moment to write the line down on a busy machine.
    wait_for(lambda: forwarded_through(log, collector), "the stop record", timeout=5.0)


def test_a_history_rewritten_or_cut_after_it_was_forwarded_shows_against_the_copy(log, data_dir, collector):
    fill(log, 10)
    forwarder = run_forwarder(log, data_dir, settings(collector.port))
    wait_for(lambda: forwarded_through(log, collector), "the log")
    stop(forwarder)
    assert log.verify().ok
    rewrite_history(log.path, 7, "ghost")
    assert log.verify().ok                  # the chain alone cannot tell
    result = check_forwarded([collector.path], log=log)
    assert not result.ok
    assert any("not as they were forwarded (first: seq 7)" in p for p in result.problems)

    conn = sqlite3.connect(log.path)
    conn.execute("DROP TRIGGER audit_no_delete")
    conn.execute("DELETE FROM audit WHERE seq > 15")
    conn.commit()
    conn.close()
    result = check_forwarded([collector.path], log=log)
    assert any("the log ends at seq 15" in p and "removed from the log" in p for p in result.problems)


def test_a_record_changed_at_the_collector_or_a_forged_head_is_named(log, data_dir, collector, tmp_path):
    fill(log, 4)
    forwarder = run_forwarder(log, data_dir, settings(collector.port))
    wait_for(lambda: forwarded_through(log, collector), "the log")
    stop(forwarder)
    text = collector.path.read_text()
    edited = tmp_path / "edited.log"
    edited.write_text(text.replace('"card":"QH"', '"card":"KH"', 1))
    result = check_forwarded([edited])
    assert any("does not hash to its own hash" in p for p in result.problems)

    stranger = Ed25519PrivateKey.generate()
    forged = tmp_path / "forged.log"
    head = syslog_line(head_message(log.last(), stranger, "t1"), table_id="t1", kind="audit-head").decode()
    forged.write_text(text + head + "\n")
    published = table_key(data_dir, log, "test").public_key()
    result = check_forwarded([forged], public_key=published)
    assert any("not by the published key" in p for p in result.problems)
    result = check_forwarded([forged], log=log)
    assert any("which this log never made" in p for p in result.problems)
    tampered = tmp_path / "tampered.log"
    tampered.write_text(text.replace('"signature":"', '"signature":"AAAA', 1))
    assert any("not signed by the key it names" in p for p in check_forwarded([tampered]).problems)


def test_a_restored_backup_sends_its_history_again_without_calling_it_a_rewrite(tmp_path):
    """Two histories of one table at the collector: the first, then the one a restore of an
    older backup put back (``backup_restored``), sent again in full after it."""
    first = AuditLog(tmp_path / "a.sqlite3", "t1")
    fill(first, 2)                          # seq 1..4, then the backup is made
    first.close()
    (tmp_path / "b.sqlite3").write_bytes((tmp_path / "a.sqlite3").read_bytes())
    first = AuditLog(tmp_path / "a.sqlite3", "t1")
    fill(first, 1, start=3)                 # seq 5, 6 of the history the disk took with it
    second = AuditLog(tmp_path / "b.sqlite3", "t1")
    second.append(AuditType.BACKUP_RESTORED, "admin", {"from": "/mnt/backup/x", "head_seq": 4, "head_hash": "ab"})
    fill(second, 1, start=3)                # seq 5 is the restore, 6 and 7 the rounds after it
    (tmp_path / "keys").mkdir()
    key = table_key(tmp_path / "keys", second, "test")
    lines = [syslog_line(record_message(r, "t1"), table_id="t1", kind="audit").decode()
             for log in (first, second) for r in log.records()]
    copy = tmp_path / "collector.log"
    copy.write_text("\n".join(["Dec  6 other program: hello", *lines,
                               syslog_line(head_message(second.last(), key, "t1"), table_id="t1",
                                           kind="audit-head").decode(),
                               ""]))
    result = check_forwarded([copy], log=second)
    assert result.ok, result.problems
    assert any("2 records were sent again with a new history after the restore logged at seq 5" in f
               for f in result.facts)
    plain = tmp_path / "plain.log"          # the same without the restore record: a rewrite
    plain.write_text("\n".join(line for line in copy.read_text().splitlines() if "backup_restored" not in line))
    result = check_forwarded([plain])
    assert any("seq 6 reached the collector twice, differently" in p for p in result.problems)
    first.close(), second.close()


def test_a_restored_log_that_no_longer_holds_the_last_record_sent_sends_everything_again(log, data_dir):
    fill(log, 3)
    (data_dir / STATE_FILE).write_text(json.dumps({"to": "tcp://127.0.0.1:9", "seq": 5, "hash": "00" * 32}))
    assert AuditForwarder(log, settings(9), data_dir).sent_seq == 0
    (data_dir / STATE_FILE).write_text(json.dumps({"to": "tcp://127.0.0.1:9", "seq": 6, "hash": log.last().hash}))
    assert AuditForwarder(log, settings(9), data_dir).sent_seq == 6
    (data_dir / STATE_FILE).write_text("{not json")
    assert AuditForwarder(log, settings(9), data_dir).sent_seq == 0


def test_udp_and_tls_collectors(log, data_dir, tmp_path):
    fill(log, 3)
    udp = SyslogServer(tmp_path / "udp.log", protocol="udp")
    try:
        log.append(AuditType.CONFIG_CHANGED, "admin", {"note": "x" * 70_000})   # no datagram holds it
        fill(log, 1, start=4)
        forwarder = run_forwarder(log, data_dir, settings(udp.port, "udp"))
        wait_for(lambda: forwarded_through(log, udp), "the UDP collector")
        stop(forwarder)
        result = check_forwarded([udp.path], log=log)
        assert result.ok and result.warnings == [
            "seq 7: 1 record in 1 stretch between records the collector holds is not in the copy (lost in transit, "
            "or removed at the collector)"], result
    finally:
        udp.close()

    cert, key_pem = self_signed("localhost")
    (tmp_path / "ca.pem").write_bytes(cert)
    (tmp_path / "key.pem").write_bytes(key_pem)
    server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_tls.load_cert_chain(tmp_path / "ca.pem", tmp_path / "key.pem")
    tls = SyslogServer(tmp_path / "tls.log", tls=server_tls)
    try:
        state = data_dir / STATE_FILE
        state.unlink()
        good = AuditForwardSettings(to=f"tls://localhost:{tls.port}", ca_file=str(tmp_path / "ca.pem"))
        forwarder = run_forwarder(log, data_dir, good)
        wait_for(lambda: forwarded_through(log, tls), "the TLS collector")
        stop(forwarder)
        assert check_forwarded([tls.path], log=log).ok
        untrusted = AuditForwarder(log, AuditForwardSettings(to=f"tls://localhost:{tls.port}"), data_dir, timeout=2.0)
        with pytest.raises(ssl.SSLError):       # the system's CAs do not vouch for it
            untrusted.step()
        missing = AuditForwarder(log, AuditForwardSettings(to=f"tls://localhost:{tls.port}",
                                                           ca_file=str(tmp_path / "nope.pem")), data_dir)
        with pytest.raises(OSError, match="cannot read audit_forward.ca_file .*nope.pem"):
            missing.step()
        with pytest.raises(OSError, match="cannot read audit_forward.ca_file"):
            not_a_ca = AuditForwardSettings(to=f"tls://localhost:{tls.port}", ca_file=str(tmp_path / "key.pem"))
            AuditForwarder(log, not_a_ca, data_dir).step()
    finally:
        tls.close()


def self_signed(host: str) -> tuple[bytes, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


@pytest.mark.parametrize("to, says", [
    ("syslog.lan:514", "write it like tcp://syslog.casino.lan:514"),
    ("ftp://syslog.lan:514", "ftp:// is not a syslog transport"),
    ("tcp://syslog.lan:70000", "port 70000 is not a port"),
])
def test_a_wrong_collector_address_is_refused_with_the_key_and_the_fix(to, says):
    with pytest.raises(ConfigError) as err:
        table_config_from_dict({**table_dict(), "audit_forward": {"to": to}}, "table.yaml")
    assert "audit_forward.to" in str(err.value) and says in str(err.value)
    with pytest.raises(ConfigError, match="ca_file is for a tls:// collector"):
        table_config_from_dict({**table_dict(), "audit_forward": {"to": "tcp://h:514", "ca_file": "ca.pem"}}, "t.yaml")
    with pytest.raises(ConfigError, match="audit_forward.port"):
        table_config_from_dict({**table_dict(), "audit_forward": {"to": "tcp://h:514", "port": 1}}, "t.yaml")


def test_the_table_file_keeps_its_collector_when_rewritten(tmp_path):
    config = table_config_from_dict({**table_dict(), "audit_forward": {"to": "tls://[::1]:6514"}}, "t.yaml")
    assert config.audit_forward.address == ("::1", 6514) and config.audit_forward.protocol == "tls"
    for name in ("t.yaml", "t.toml", "t.json"):
        dump_table_config(config, tmp_path / name)
        from vision.table import load_table_config
        assert load_table_config(tmp_path / name).audit_forward == config.audit_forward


def test_the_collectors_copy_is_checked_from_the_console(log, data_dir, collector, runner, tmp_path):
    fill(log, 3)
    forwarder = run_forwarder(log, data_dir, settings(collector.port))
    wait_for(lambda: forwarded_through(log, collector), "the log")
    stop(forwarder)
    pem = tmp_path / "table.pem"
    pem.write_text(public_pem(table_key(data_dir, log, "test").public_key()))
    code, out, _ = runner(["audit", "check-forwarded", str(collector.path), "--data-dir", str(data_dir),
                           "--public-key", str(pem), "--json"])
    assert code == 0 and json.loads(out)["ok"] and json.loads(out)["against_log"]
    rewrite_history(log.path, 2, "ghost")
    code, out, _ = runner(["audit", "check-forwarded", str(collector.path), "--data-dir", str(data_dir)])
    assert code == 1 and "PROBLEM:" in out and "rewritten after the collector received it" in out

    other = tmp_path / "two-tables.log"          # two tables forward to one collector
    second = AuditLog(tmp_path / "t2.sqlite3", "t2")
    stray = second.append(AuditType.KIOSK_START, "system", {})
    second.close()
    other.write_text(collector.path.read_text() + syslog_line(record_message(stray, "t2"), table_id="t2",
                                                              kind="audit").decode() + "\n")
    code, _, err = runner(["audit", "check-forwarded", str(other)])
    assert code == 2 and "tables t1, t2; choose one with --table" in err
    code, out, _ = runner(["audit", "check-forwarded", str(other), "--table", "t2"])
    assert code == 0 and "table t2: 1 records" in out
    code, out, _ = runner(["audit", "check-forwarded", str(other), "--data-dir", str(data_dir)])
    assert "table t1: " in out              # the log's own table
    junk = tmp_path / "junk.log"
    junk.write_text("hello\n" + '<134>1 x y niuniu t1 audit - {"niuniu":"audit-record/1","seq":1,"ts\n')
    code, out, _ = runner(["audit", "check-forwarded", str(junk)])
    assert code == 1 and "no audit records of any table in" in out
    code, _, err = runner(["audit", "check-forwarded", str(tmp_path / "missing.log")])
    assert code == 2 and "cannot read the collector's file" in err


def test_a_cut_line_is_named_with_the_fix(log, tmp_path):
    fill(log, 2)
    lines = [syslog_line(record_message(r, "t1"), table_id="t1", kind="audit").decode() for r in log.records()]
    copy = tmp_path / "cut.log"
    copy.write_text("\n".join([lines[0], lines[1][:len(lines[1]) // 2], *lines[2:]]) + "\n")
    result = check_forwarded([copy])
    assert any("1 lines cut short or garbled (first: " in p and "maxMessageSize" in p for p in result.problems)
    assert any(w.startswith("seq 2: 1 record in 1 stretch ") for w in result.warnings)
    odd = tmp_path / "odd.log"          # a record whose previous hash is no hash is not half taken
    odd.write_text(lines[0] + "\n" + lines[1].replace('"prev_hash":"', '"prev_hash":"zz', 1) + "\n")
    result = check_forwarded([odd])
    assert any("1 lines cut short or garbled" in p for p in result.problems)
    assert any("table t1: 1 records, seq 1..1" in f for f in result.facts)


def test_niuniu_check_says_whether_the_collector_answers(tmp_path, collector):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    for port, level, says in ((collector.port, "ok", "takes connections; nothing sent to it yet"),
                              (free_port(), WARN, "does not answer")):
        table_file = tmp_path / "table.yaml"
        dump_table_config(table_config_from_dict({**table_dict(), "audit_forward": {"to": f"tcp://127.0.0.1:{port}"}},
                                                 table_file), table_file)
        found = {f.part: f for f in check_device(table_file, data_dir, camera=False)}
        assert found["log collector"].level == level and says in found["log collector"].message


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_surveillance_sees_the_collectors_state_on_the_chain_page(played, service, audit, collector, tmp_path):
    page = played.get("/review/chain").get_data(as_text=True)
    assert "No log collector" in page
    forwarder = AuditForwarder(audit, settings(collector.port), Path(tmp_path / "data"), period=0.05)
    service.forwarder = forwarder
    forwarder.start()
    wait_for(lambda: forwarded_through(audit, collector), "the log")
    page = played.get("/review/chain").get_data(as_text=True)
    assert f"goes to the log collector tcp://127.0.0.1:{collector.port}" in page
    stop(forwarder)
    forwarder._failed(ConnectionRefusedError(111, "Connection refused"))
    page = played.get("/review/chain").get_data(as_text=True)
    assert "has not answered since" in page and "Connection refused" in page
    from kiosk_testing import login
    login(played, "admin1")                 # the admin, who sets the table file, sees it beside the backup
    page = played.get("/admin/users").get_data(as_text=True)
    assert "has not answered since" in page and "Connection refused" in page


def test_niuniu_kiosk_forwards_from_its_first_record_to_its_stop_record(tmp_path, collector):
    """The production command with a collector in its table file: everything it logs, from
    ``kiosk_start`` to the ``kiosk_stop`` of a clean stop, is on the collector."""
    import signal

    from kiosk_testing import production_kiosk, write_demo
    from vision.table import load_table_config

    demo = tmp_path / "demo"
    write_demo(demo, [{"banker": "4S 6H QD 9C 9H", "1": "KS QS JS 10S 10H"}])
    config = load_table_config(demo / "table.yaml")
    dump_table_config(config.model_copy(update={"audit_forward": settings(collector.port)}), demo / "table.yaml")
    data = tmp_path / "data"
    proc = production_kiosk(demo, data)
    try:
        wait_for(lambda: '"type":"kiosk_start"' in (collector.path.read_text() if collector.path.exists() else ""),
                 "the kiosk's first record at the collector", timeout=60)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0, proc.stdout.read()
    assert '"type":"kiosk_stop"' in collector.path.read_text()
    log = AuditLog.in_dir(data, create=False)
    try:
        result = check_forwarded([collector.path], log=log)
        assert result.ok, result.problems
        assert f"the log holds every one of the {log.last().seq} records" in "\n".join(result.facts)
    finally:
        log.close()


def test_a_log_that_cannot_be_written_does_not_end_the_forwarding(log, data_dir, collector, monkeypatch):
    """The outage record cannot be written (a full disk): the journal says so, and the thread
    carries on, sending what the log holds once the collector answers."""
    from kiosk.audit import AuditError

    fill(log, 2)
    dead = free_port()
    forwarder = AuditForwarder(log, settings(dead), data_dir, period=0.05, max_backoff=0.1)
    real_append = log.append

    def full_disk(*args, **kwargs):
        raise AuditError("database or disk is full")
    monkeypatch.setattr(log, "append", full_disk)
    forwarder.start()
    wait_for(lambda: forwarder.status()["down_since"] is not None, "the outage")
    time.sleep(0.3)
    assert forwarder.is_alive()
    monkeypatch.setattr(log, "append", real_append)
    forwarder.settings = settings(collector.port)
    wait_for(lambda: forwarded_through(log, collector), "the records, once it answers")
    stop(forwarder)


def signed_copy(log: AuditLog, data_dir: Path, path: Path, heads: list[int], records=None) -> Path:
    """The collector's file as the table would have sent it: every record, and a signed head
    after each seq in ``heads``."""
    key = table_key(data_dir, log, "test")
    lines = []
    for record in records or log.records():
        lines.append(syslog_line(record_message(record, "t1"), table_id="t1", kind="audit").decode())
        if record.seq in heads:
            signed = log.records(after_seq=record.seq - 1, upto_seq=record.seq)[0]
            lines.append(syslog_line(head_message(signed, key, "t1"), table_id="t1", kind="audit-head").decode())
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_hole_in_the_middle_of_the_copy_is_a_warning_not_ok(log, data_dir, runner, tmp_path):
    """Each TCP connection sends the last records again: a hole between records the collector
    holds was lost or removed there, and must not read as "ok", exit 0."""
    fill(log, 6)
    whole = signed_copy(log, data_dir, tmp_path / "whole.log", heads=[12])
    holed = tmp_path / "holed.log"
    holed.write_text("".join(line + "\n" for line in whole.read_text().splitlines()
                             if not any(f'"seq":{n},"ts"' in line for n in (5, 6, 7))))
    result = check_forwarded([holed])
    assert result.warnings == ["seq 5..7: 3 records in 1 stretch between records the collector holds are not in the "
                               "copy (lost in transit, or removed at the collector)"]
    assert not any("never reached" in f for f in result.facts)
    code, out, _ = runner(["audit", "check-forwarded", str(holed)])
    assert code == 1 and "WARNING: seq 5..7: 3 records" in out
    code, out, _ = runner(["audit", "check-forwarded", str(holed), "--json"])
    assert code == 1 and json.loads(out)["ok"] is False and json.loads(out)["warnings"]
    # Records the kiosk has not sent yet are no hole: the log says so, and the copy checks clean.
    fill(log, 1, start=7)
    code, out, _ = runner(["audit", "check-forwarded", str(whole), "--data-dir", str(data_dir)])
    assert code == 0 and "WARNING" not in out and "not forwarded yet" in out


def test_a_record_edited_and_rehashed_at_the_collector_is_placed_between_signed_heads(log, data_dir, tmp_path):
    """The signed heads after the edit all fail, but the head seqs are records nobody touched:
    the stretch between the last head that matches and the first that does not is named."""
    from dataclasses import replace

    fill(log, 8)
    records = log.records()
    changed, prev = [], None
    for record in records:
        if record.seq == 7:
            record = replace(record, actor="someone else")
        if prev is not None and record.seq > 7:
            record = replace(record, prev_hash=prev)
        if record.seq >= 7:
            record = replace(record, hash=record.expected_hash())
        changed.append(record)
        prev = record.hash
    copy = signed_copy(log, data_dir, tmp_path / "edited.log", heads=[4, 10, 13, 16], records=changed)
    result = check_forwarded([copy])
    assert result.problems == ["records seq 5..10 differ from what the table signed: a record among them was changed "
                               "at the collector and the rest re-hashed (the signed head at seq 4 still matches, the "
                               "one at seq 10 does not; nor 2 later signed heads)"]
    assert any(f.startswith("each head line is signed by key") for f in result.facts)
