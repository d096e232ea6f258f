"""A period's audit export that a regulator can check without the kiosk: the signed statement.

``niuniu audit export`` (and the review page's Export) hands the records of a period out as
CSV or JSON.  Each record carries its hash, so anyone can recompute it — but a file rebuilt
with edited records and recomputed hashes recomputes just as well, and nothing in it says
which records were left out.  So each export comes with a *statement* the table signs with
its evidence key (``kiosk.signing``): which table, which period, how many records, the
first and last seq, the chain head the export stopped at, and the SHA-256 of the records'
seq and hash in order.  The statement names records by their hashes, not by the file's
bytes, so one statement covers the same period as CSV or as JSON, and the log records it
(``audit_exported``) so the kiosk can hand it out again later.

``niuniu audit check-export FILE --public-key table.pem`` then proves, with nothing but the
key the casino published, that the file holds exactly the records the table signed — none
edited, none added, none left out; with ``--data-dir`` it also checks them against the log.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import time
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from kiosk.anchors import HELD, check_head
from kiosk.audit import AuditError, AuditLog, AuditRecord, AuditType, canonical_json, utc_iso
from kiosk.evidence import EvidenceCheck
from kiosk.signing import ALGORITHM, UNREADABLE, check_signer, fingerprint, logged_key, verified_signer

STATEMENT_FORMAT = "niuniu-export-statement/1"
SUFFIX = ".statement.json"
PROBLEMS_NAMED = 20
# The statement's fields the signature covers, besides the format; the log's record holds them
# all but the three it has columns for (table_id, actor, ts).
_SIGNED = ("from", "to", "count", "first_seq", "last_seq", "records_sha256", "head_seq", "head_hash",
           "signing_key")


def statement_path(export: str | Path) -> Path:
    """Where a statement sits beside the export it signs: ``audit.csv`` -> ``audit.csv.statement.json``."""
    return Path(f"{export}{SUFFIX}")


def records_digest(records) -> tuple[str, int, int | None, int | None]:
    """SHA-256 of the records' "seq hash" lines in order, with their count and first and last seq.

    Hashes, not file bytes: a record's hash covers every field of it and the hash before it."""
    digest, count, first, last = hashlib.sha256(), 0, None, None
    for record in records:
        digest.update(f"{record.seq} {record.hash}\n".encode("utf-8"))
        count, first, last = count + 1, record.seq if first is None else first, record.seq
    return digest.hexdigest(), count, first, last


def sign_export(log: AuditLog, key: Ed25519PrivateKey, *, actor: str, fmt: str, since: str | None,
                until: str | None, upto_seq: int | None = None) -> AuditRecord:
    """Sign the statement of the records of a period up to ``upto_seq`` (default: the head now)
    and log it (``audit_exported``); return the logged record (``statement_of`` it is the
    statement).

    The export itself must stop at the same seq (``AuditLog.export_text(..., upto_seq=...)``):
    the kiosk goes on appending while it is written."""
    head = log.last() if upto_seq is None else next(iter(log.records(after_seq=upto_seq - 1, upto_seq=upto_seq)),
                                                     None)
    upto = head.seq if head else 0
    digest, count, first, last = records_digest(log.iter_records(since=since, until=until, upto_seq=upto))
    now = time.time()
    payload = {"format": fmt, "from": since, "to": until, "count": count, "first_seq": first, "last_seq": last,
               "records_sha256": digest, "head_seq": upto, "head_hash": head.hash if head else None,
               "signing_key": fingerprint(key.public_key())}
    # A console opens the log without a table id: the export is then the table whose head it is.
    table_id = log.table_id or (head.table_id if head else "")
    body = _body(payload, table_id=table_id, exported_by=actor, exported_at=utc_iso(now))
    payload["signature"] = base64.b64encode(key.sign(canonical_json(body).encode("utf-8"))).decode("ascii")
    return log.append(AuditType.EXPORTED, actor, payload, ts=now, table_id=table_id)


def _body(fields: dict, *, table_id: str, exported_by: str, exported_at: str) -> dict:
    return {"format": STATEMENT_FORMAT, "table_id": table_id, "exported_by": exported_by,
            "exported_at": exported_at, **{name: fields.get(name) for name in _SIGNED}}


def statement_of(log: AuditLog, record: AuditRecord) -> dict:
    """The statement a logged, signed export record stands for (to hand out again later)."""
    data = record.data
    if "signature" not in data:
        raise AuditError(f"audit record seq {record.seq} is not a signed export (exported before exports were "
                         "signed, or an evidence package)")
    made = logged_key(log, data["signing_key"])
    if made is None:
        raise AuditError(f"the key that signed export seq {record.seq} is not in this log")
    body = _body(data, table_id=record.table_id, exported_by=record.actor, exported_at=record.ts)
    return {**body, "algorithm": ALGORITHM, "public_key": made.data["public_key"], "signature": data["signature"]}


def statement_bytes(statement: dict) -> bytes:
    return (json.dumps(statement, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def read_export(data: bytes) -> list[AuditRecord]:
    """The records of a CSV or JSON export, as they were hashed; :class:`AuditError` if it is neither."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AuditError(f"the file is not UTF-8 text ({exc})") from None
    try:
        if text.lstrip().startswith("{"):
            return [AuditRecord.from_json(item) for item in json.loads(text)["records"]]
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
        return [AuditRecord(seq=int(row["seq"]), ts=row["ts"], table_id=row["table_id"], type=row["type"],
                            actor=row["actor"], round_no=int(row["round"]) if row["round"] else None,
                            payload=row["payload"], prev_hash=row["prev_hash"], hash=row["hash"])
                for row in rows]
    except (KeyError, ValueError, TypeError) as exc:
        raise AuditError(f"the file is not a niuniu audit export, CSV or JSON ({type(exc).__name__}: {exc})") from None


def check_export(export: str | Path, statement: str | Path | None = None, log: AuditLog | None = None,
                 public_key: Ed25519PublicKey | None = None) -> EvidenceCheck:
    """Everything wrong with an export and its statement, and what was confirmed; never raises
    on a bad file.  ``statement`` defaults to the one beside the export."""
    statement = statement_path(export) if statement is None else Path(statement)
    problems: list[str] = []
    facts: list[str] = []
    try:
        records = read_export(Path(export).read_bytes())
    except OSError as exc:
        return EvidenceCheck([f"cannot read the export {export}: {exc.strerror}"], [])
    except AuditError as exc:
        return EvidenceCheck([f"{export}: {exc}"], [])
    try:
        signed = json.loads(Path(statement).read_bytes())
        if signed.get("format") != STATEMENT_FORMAT:
            raise ValueError(f"format {signed.get('format')!r}, not {STATEMENT_FORMAT}")
    except OSError as exc:
        return EvidenceCheck([f"cannot read the statement {statement}: {exc.strerror} (it is written beside the "
                              f"export as <export>{SUFFIX}; name another with --statement)"], [])
    except (ValueError, AttributeError) as exc:
        return EvidenceCheck([f"{statement} is not an export statement ({exc})"], [])
    _check_records(records, signed, problems, facts)
    _check_statement_signature(signed, public_key, log, problems, facts)
    if log is not None:
        _check_export_against_log(log, records, signed, problems, facts)
    return EvidenceCheck(problems, facts)


def _check_records(records: list[AuditRecord], signed: dict, problems: list[str], facts: list[str]) -> None:
    found: list[str] = []
    before = None
    for record in records:
        if record.expected_hash() != record.hash:
            found.append(f"audit record seq {record.seq} ({record.type}) does not hash to its stored hash: "
                         "its contents were changed")
        if before is not None and record.seq <= before.seq:
            found.append(f"audit record seq {record.seq} comes after seq {before.seq}: records were reordered "
                         "or repeated")
        elif before is not None and record.seq == before.seq + 1 and record.prev_hash != before.hash:
            found.append(f"audit record seq {record.seq} does not follow seq {before.seq} in the chain")
        before = record
    # A year's export edited throughout would name every record: the first few say what happened.
    problems.extend(found[:PROBLEMS_NAMED])
    if len(found) > PROBLEMS_NAMED:
        problems.append(f"and {len(found) - PROBLEMS_NAMED} more problems with single records")
    if not found:
        facts.append(f"{len(records)} audit records, each hash recomputes and each follows the one before")
    digest, count, first, last = records_digest(records)
    if (digest, count, first, last) == tuple(signed.get(k) for k in ("records_sha256", "count", "first_seq",
                                                                       "last_seq")):
        facts.append(f"the file holds exactly the records the statement names: seq {first}..{last}, {count} records")
    elif isinstance(signed.get("count"), int) and count != signed["count"]:
        problems.append(f"the file holds {count} records, the statement {signed['count']}: records were "
                        f"{'added' if count > signed['count'] else 'left out'} after export")
    else:
        problems.append("the file's records are not the ones the statement names (SHA-256 of their seq and hash "
                        "differs): a record was changed or swapped after export")


def _check_statement_signature(signed: dict, published: Ed25519PublicKey | None, log: AuditLog | None,
                               problems: list[str], facts: list[str]) -> None:
    try:
        body = _body(signed, table_id=signed["table_id"], exported_by=signed["exported_by"],
                     exported_at=signed["exported_at"])
        key_id = verified_signer(signed, canonical_json(body).encode("utf-8"))
    except InvalidSignature:
        problems.append("the statement's signature does not match it: the statement was changed after it was signed")
        return
    except UNREADABLE as exc:
        problems.append(f"the statement's signature cannot be read ({type(exc).__name__}: {exc})")
        return
    if signed.get("signing_key") != key_id:
        problems.append(f"the statement names signing key {signed.get('signing_key')}, but is signed by key {key_id}")
        return
    period = f"{signed.get('from') or 'the start'} to {signed.get('to') or 'its head'}"
    check_signer(key_id, published, log, problems, facts, signed="the statement",
                 proves=f"table {signed['table_id']}'s export of {period}, by {signed['exported_by']} at "
                        f"{signed['exported_at']}")


def _check_export_against_log(log: AuditLog, records: list[AuditRecord], signed: dict, problems: list[str],
                              facts: list[str]) -> None:
    if records:
        stored = {r.seq: r.hash for r in log.records(after_seq=records[0].seq - 1, upto_seq=records[-1].seq)}
        changed = [r.seq for r in records if stored.get(r.seq) != r.hash]
        if changed:
            problems.append(f"{len(changed)} audit records are not the ones the log holds at their seq (first: "
                            f"seq {changed[0]})")
        else:
            facts.append("each audit record is the one the log holds at its seq")
    after = signed.get("head_seq") if isinstance(signed.get("head_seq"), int) else 0
    vouched = next((r for r in log.records(types=[AuditType.EXPORTED], after_seq=after)
                    if r.data.get("signature") == signed.get("signature")), None)
    if vouched is None:
        problems.append("the log has no audit_exported record of this statement: it was not signed by this log's "
                        "kiosk as it is")
    else:
        try:
            logged = statement_of(log, vouched)
        except AuditError as exc:
            logged = {"error": str(exc)}
        differ = [k for k in ("table_id", "exported_by", "exported_at", *_SIGNED) if logged.get(k) != signed.get(k)]
        if differ:
            problems.append(f"the log's record of this export (seq {vouched.seq}) differs from the statement in "
                            f"{', '.join(differ)}: the statement was changed after export")
        else:
            facts.append(f"the log records this export: seq {vouched.seq}, by {vouched.actor} at {vouched.ts}")
    seq, digest = signed.get("head_seq"), signed.get("head_hash")
    if isinstance(seq, int) and seq > 0 and isinstance(digest, str) and check_head(log, seq, digest).verdict != HELD:
        problems.append(f"the log no longer holds the head it had when this was exported (seq {seq}): its history "
                        "was rewritten or cut since (niuniu audit verify --against the backups)")
