"""Every audit record, as it is written, to the casino's log collector (syslog): off the device.

The hash chain shows an edit to one record; a history rewritten whole and re-hashed shows
only against a head kept elsewhere (``kiosk.anchors``: the nightly backups, the printed shift
report), so up to a day late, and a disk that dies before its backup takes the day's records
with it.  A collector on another machine — what a casino's surveillance already runs —
keeps its own copy within a second of each append, beyond the reach of anyone with the
kiosk's disk.  ``niuniu audit check-forwarded`` (``kiosk.forward_check``) compares that copy
with the log.

Each record goes as one syslog line (RFC 5424; over TCP one line each, RFC 6587) whose
message is the record as exports write it, so the copy can be re-hashed on its own.  Each
batch ends with a *head* line signed with the table's evidence key (``kiosk.signing``): a
line anyone on the network could have sent proves nothing, one the table signed proves the
table held that head, and the chain vouches for every record before it.

The log is the queue: the forwarder remembers the last seq it sent (``forwarded.json`` in the
data directory) and reads on from the log, so a collector down for a week costs no memory
and loses nothing — it catches up when it answers again.  Each connection starts by sending
again the last ``REPLAY`` records, which a dropped connection may have swallowed; the
collector's copy then holds some records twice, which the check expects.  The outage itself
goes in the log (``audit_forward_failed`` / ``audit_forward_restored``), so the gap it left
in real time is on the record.
"""

from __future__ import annotations

import base64
import functools
import json
import logging
import os
import socket
import ssl
import threading
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from kiosk.audit import AuditLog, AuditRecord, AuditType, canonical_json, utc_iso
from kiosk.signing import SigningError, fingerprint, public_pem, table_key, verified_signer
from vision.table import AuditForwardSettings

log = logging.getLogger(__name__)

STATE_FILE = "forwarded.json"
RECORD_FORMAT = "audit-record/1"
HEAD_FORMAT = "audit-head/1"
REPLAY = 2000             # records sent again on each connection: more than a socket's buffers hold
BATCH = 500
PERIOD_S = 1.0
# Between full batches while catching up (a first start on a year's log, a long outage): at most
# BATCH / CATCH_UP_PAUSE_S records a second, so the frame loop keeps its cores meanwhile.
CATCH_UP_PAUSE_S = 0.05
MAX_BACKOFF_S = 60.0
TIMEOUT_S = 10.0
UDP_MAX = 65_000          # bytes: an IPv4 datagram's payload is at most 65,507
# RFC 5424 PRI: facility local0 (16), severity informational (6).
PRI = 16 * 8 + 6


def record_message(record: AuditRecord, table_id: str) -> str:
    """A record as the collector stores it: ASCII JSON on one line (collectors mangle other
    bytes), the marker first so a check finds it whatever the collector put before it.

    ``table_id`` names the log it comes from (``"log"``): the record's own table id is empty
    where a console command wrote it (a backup, a restore), yet it is this table's record."""
    return json.dumps({"niuniu": RECORD_FORMAT, "log": table_id, **record.to_json()}, ensure_ascii=True,
                      separators=(",", ":"))


def head_body(table_id: str, seq: int, digest: str, sent_at: str) -> bytes:
    """What a head's signature covers."""
    return canonical_json({"format": HEAD_FORMAT, "table_id": table_id, "seq": seq, "hash": digest,
                           "sent_at": sent_at}).encode("utf-8")


def head_signer(head: dict, table_id: str) -> str:
    """The fingerprint of the key whose signature on a head line of ``table_id``'s log holds.

    Raises ``InvalidSignature`` where it does not, one of ``signing.UNREADABLE`` where the line
    cannot be read: for the check and the recovery, a finding, never a crash."""
    return verified_signer(head, head_body(table_id, head["seq"], head["hash"], head["sent_at"]))


def head_message(record: AuditRecord, key: Ed25519PrivateKey, table_id: str, sent_at: str | None = None) -> str:
    """Table ``table_id``'s signed word that its log held ``record`` as its head when it was sent."""
    sent_at = sent_at or utc_iso()
    signature = key.sign(head_body(table_id, record.seq, record.hash, sent_at))
    return json.dumps({"niuniu": HEAD_FORMAT, "table_id": table_id, "seq": record.seq, "hash": record.hash,
                       "sent_at": sent_at, "signing_key": fingerprint(key.public_key()),
                       "public_key": public_pem(key.public_key()),
                       "signature": base64.b64encode(signature).decode("ascii")},
                      ensure_ascii=True, separators=(",", ":"))


def syslog_line(message: str, *, table_id: str, kind: str, ts: str | None = None) -> bytes:
    """RFC 5424: ``<PRI>1 TIME HOST niuniu TABLE KIND - MESSAGE``."""
    return f"<{PRI}>1 {ts or utc_iso()} {_host()} niuniu {table_id or '-'} {kind} - {message}".encode("ascii")


@functools.cache
def _host() -> str:
    """This machine's name as RFC 5424 allows it (printable ASCII), asked once, not per record."""
    return "".join(c for c in socket.gethostname() if 33 <= ord(c) <= 126)[:255] or "-"


def _tls_context(ca_file: str | None) -> ssl.SSLContext:
    """The collector's certificate must chain to ``ca_file`` (or the system's CAs); a CA file
    that cannot be read says which and why, as a connection failure does."""
    try:
        return ssl.create_default_context(cafile=ca_file)
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise OSError(f"cannot read audit_forward.ca_file {ca_file}: {reason}; give the PEM certificate of the CA "
                      "that signed the collector's certificate") from None


class Collector:
    """One open connection to the collector; every error is an ``OSError`` (``ssl.SSLError`` is one)."""

    def __init__(self, settings: AuditForwardSettings, timeout: float = TIMEOUT_S) -> None:
        self.protocol = settings.protocol
        host, port = settings.address
        if self.protocol == "udp":
            family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_DGRAM)[0]
            self._sock = socket.socket(family, kind, proto)
            self._sock.settimeout(timeout)
            self._sock.connect(address)
            return
        context = _tls_context(settings.ca_file) if self.protocol == "tls" else None
        sock = socket.create_connection((host, port), timeout=timeout)
        if context is not None:
            try:
                sock = context.wrap_socket(sock, server_hostname=host)
            except BaseException:
                sock.close()
                raise
        self._sock = sock

    def send(self, lines: list[bytes]) -> None:
        if self.protocol == "udp":
            for line in lines:
                if len(line) > UDP_MAX:   # no datagram carries it: a gap the check names, not a jam
                    log.warning("an audit record of %d bytes is too long for UDP; forward over TCP to keep it",
                                len(line))
                    continue
                self._sock.send(line)
        else:
            self._sock.sendall(b"".join(line + b"\n" for line in lines))

    def close(self) -> None:
        try:
            self._sock.close()
        except OSError:
            pass


class AuditForwarder(threading.Thread):
    """Sends the log to the collector, from where it last stopped, until ``stop_event``."""

    def __init__(self, audit: AuditLog, settings: AuditForwardSettings, data_dir: str | Path, *,
                 period: float = PERIOD_S, batch: int = BATCH, max_backoff: float = MAX_BACKOFF_S,
                 timeout: float = TIMEOUT_S, catch_up_pause: float = CATCH_UP_PAUSE_S) -> None:
        super().__init__(name="audit-forward", daemon=True)
        self.audit = audit
        self.settings = settings
        self.data_dir = Path(data_dir)
        self.period, self.batch, self.max_backoff, self.timeout = period, batch, max_backoff, timeout
        self.catch_up_pause = catch_up_pause
        self.stop_event = threading.Event()
        self.sent_seq = self._resume()     # the highest seq the collector was sent
        self._cursor = self.sent_seq        # where the next batch starts (behind it while replaying)
        self.down_since: str | None = None
        self.error: str | None = None
        self._collector: Collector | None = None
        self._key: Ed25519PrivateKey | None = None
        self._key_warned = False

    # -- where it stopped ------------------------------------------------------------------

    @property
    def state_path(self) -> Path:
        return self.data_dir / STATE_FILE

    def _resume(self) -> int:
        """The last seq sent to this collector, if the log still holds it as it was sent.

        A log restored from a backup (or rewritten) no longer holds it: everything is sent
        again, and the check tells the two histories apart by the restore the log records."""
        try:
            state = json.loads(self.state_path.read_text(encoding="utf-8"))
            seq, digest, to = int(state["seq"]), state["hash"], state["to"]
        except FileNotFoundError:
            return 0
        except (OSError, ValueError, TypeError, KeyError) as exc:
            log.warning("%s is unreadable (%s): sending the whole audit log to the collector again",
                        self.state_path, exc)
            return 0
        if to != self.settings.to:
            return 0            # a new collector gets the whole history
        held = self.audit.records(after_seq=seq - 1, upto_seq=seq) if seq > 0 else []
        if seq > 0 and (not held or held[0].hash != digest):
            log.warning("the audit log no longer holds seq %d as it was forwarded (restored from a backup?): "
                        "sending it all to the collector again", seq)
            return 0
        return seq

    def _save(self, record: AuditRecord) -> None:
        draft = self.state_path.with_name(f".{STATE_FILE}.draft")
        try:
            draft.write_text(json.dumps({"to": self.settings.to, "seq": record.seq, "hash": record.hash,
                                         "ts": utc_iso()}) + "\n", encoding="utf-8")
            os.replace(draft, self.state_path)
        except OSError as exc:     # the next start re-sends a little more; never worth stopping for
            log.warning("cannot write %s: %s", self.state_path, exc.strerror)

    # -- sending ---------------------------------------------------------------------------

    def _signing_key(self) -> Ed25519PrivateKey | None:
        if self._key is None:
            try:
                self._key = table_key(self.data_dir, self.audit, "system")
            except SigningError as exc:
                if not self._key_warned:
                    log.warning("audit records go to the collector without signed heads: %s", exc)
                    self._key_warned = True
        return self._key

    def step(self) -> bool:
        """Send the next batch; True when more are waiting.  Raises ``OSError`` when the
        collector cannot be reached or a send fails."""
        if self._collector is None:
            self._collector = Collector(self.settings, self.timeout)
            self._cursor = max(0, self.sent_seq - REPLAY)
        records = self.audit.records(after_seq=self._cursor, limit=self.batch)
        if not records:
            return False
        table = self.audit.table()
        lines = [syslog_line(record_message(r, table), table_id=table, kind="audit") for r in records]
        key = self._signing_key()
        if key is not None:
            lines.append(syslog_line(head_message(records[-1], key, table), table_id=table, kind="audit-head"))
        self._collector.send(lines)
        self._cursor = records[-1].seq
        if self._cursor > self.sent_seq:
            self.sent_seq = self._cursor
            self._save(records[-1])
        return len(records) == self.batch

    def _failed(self, exc: OSError) -> None:
        if self._collector is not None:
            self._collector.close()
            self._collector = None
        text = f"{type(exc).__name__}: {exc}"
        if self.down_since is None:
            self.down_since, self.error = utc_iso(), text
            log.warning("the audit log collector %s cannot be reached (%s); retrying, nothing is lost",
                        self.settings.to, text)
            self.audit.append(AuditType.FORWARD_FAILED, "system",
                              {"to": self.settings.to, "error": text, "sent_seq": self.sent_seq})

    def _restored(self) -> None:
        if self.down_since is not None:
            log.info("the audit log collector %s answers again", self.settings.to)
            self.audit.append(AuditType.FORWARD_RESTORED, "system",
                              {"to": self.settings.to, "down_since": self.down_since, "error": self.error})
            self.down_since = self.error = None

    def run(self) -> None:
        wait = 0.0
        while not self.stop_event.wait(wait):
            try:
                try:
                    more = self.step()
                except OSError as exc:
                    self._failed(exc)
                    wait = min(max(wait * 2, self.period), self.max_backoff)
                    continue
                self._restored()
                wait = self.catch_up_pause if more else self.period
            except Exception:     # the log itself failing: the table must never stop for its copy
                log.exception("forwarding the audit log failed; retrying")
                wait = self.max_backoff
        self._last_records()

    def _last_records(self) -> None:
        """At shutdown, what the log gained since the last batch (the kiosk's stop record
        among it), if the collector is answering: a few batches at most, never a hang."""
        try:
            for _ in range(5):
                if self.down_since is not None or not self.step():
                    break
        except Exception as exc:     # the next start sends it
            log.warning("the last audit records stay for the next start: %s", exc)
        if self._collector is not None:
            self._collector.close()
            self._collector = None

    def status(self) -> dict:
        """For the surveillance pages and ``niuniu check``: where to, how far, whether it answers."""
        return {"to": self.settings.to, "sent_seq": self.sent_seq, "down_since": self.down_since,
                "error": self.error}
