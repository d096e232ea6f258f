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
from collections import deque
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from kiosk.anchors import HELD, check_head
from kiosk.audit import (AuditError, AuditLog, AuditRecord, AuditType, canonical_json, damaged_words, log_moment,
                         noting_broken, utc_iso)
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
    # A console opens the log without a table id: the export is then the table of the newest
    # record naming one — the head itself may be the console's own key record, of no table.
    table_id = log.table()
    body = _body(payload, table_id=table_id, exported_by=actor, exported_at=utc_iso(now))
    payload["signature"] = base64.b64encode(key.sign(canonical_json(body).encode("utf-8"))).decode("ascii")
    return log.append(AuditType.EXPORTED, actor, payload, ts=now, table_id=table_id)


def damaged_records(log: AuditLog, *, since: str | None, until: str | None,
                    upto_seq: int | None = None) -> list[tuple[AuditRecord, str]]:
    """``(record, problem)`` of each record of a period that cannot be read or fails its hash
    (:meth:`AuditRecord.problem`, the words the console's export warns in): the review page
    asks before it signs and streams an export, since a download cannot carry a warning that a
    CSV reader would not take for a record, and the officer must know before handing it on
    (QA52)."""
    broken: list[tuple[AuditRecord, str]] = []
    deque(noting_broken(log.iter_records(since=since, until=until, upto_seq=upto_seq), broken), maxlen=0)
    return broken


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
    named = statement
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
    except FileNotFoundError:
        if named is None:       # none beside the export; a statement named and mistyped is below
            return _check_unstated(records, statement, log)
        return EvidenceCheck([f"cannot read the statement {statement}: no such file (check the path given "
                              "with --statement)"], [])
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


def _check_unstated(records: list[AuditRecord], statement: Path, log: AuditLog | None) -> EvidenceCheck:
    """An export with no statement beside it: one made before this kiosk signed its exports,
    or one whose statement was not kept.  Nothing shows it holds every record of its period,
    which stays a problem; but each record it holds can still be checked, and against the log."""
    found, gaps = _chain_problems(records)
    problems = [f"no statement beside the export ({statement}): an export made before this kiosk signed its "
                "exports, or one whose statement was lost, cannot show that it holds every record of its period "
                "(name a statement kept elsewhere with --statement)"
                + ("" if log is not None else "; check its records against the kiosk's log with --data-dir")]
    problems += [_gap_text(a, b)
                 for a, b in gaps] + found[:PROBLEMS_NAMED]
    facts = [] if found or gaps else [f"{len(records)} audit records, each hash recomputes and each follows the "
                                      "one before"]
    if log is not None:
        _check_records_against_log(log, records, problems, facts)
    return EvidenceCheck(problems, facts)


def _gap_text(before: int, after: int) -> str:
    return f"seq {_span(before + 1, after - 1)} {'is' if after - before == 2 else 'are'} missing " \
           f"(seq {after} follows seq {before})"


def _chain_problems(records: list[AuditRecord]) -> tuple[list[str], list[tuple[int, int]]]:
    """What is wrong with single records (hash, order, chain links), and where the seqs jump."""
    found: list[str] = []
    gaps: list[tuple[int, int]] = []        # (seq before, seq after) where seqs jump
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
        elif before is not None and record.seq > before.seq + 1:
            gaps.append((before.seq, record.seq))
        before = record
    return found, gaps


def _check_records(records: list[AuditRecord], signed: dict, problems: list[str], facts: list[str]) -> None:
    found, gaps = _chain_problems(records)
    digest, count, first, last = records_digest(records)
    named = (digest, count, first, last) == tuple(signed.get(k) for k in ("records_sha256", "count", "first_seq",
                                                                           "last_seq"))
    # A jump in the seqs is a record left out, unless the statement signed the same jump (a
    # record whose time lies outside the period: the clock was set back between them).
    if not named:
        found += [_gap_text(a, b)
                  for a, b in gaps]
    # A year's export edited throughout would name every record: the first few say what happened.
    problems.extend(found[:PROBLEMS_NAMED])
    if len(found) > PROBLEMS_NAMED:
        problems.append(f"and {len(found) - PROBLEMS_NAMED} more problems with single records")
    if not found and not gaps:
        facts.append(f"{len(records)} audit records, each hash recomputes and each follows the one before")
    elif not found:
        facts.append(f"{len(records)} audit records, each hash recomputes; the seqs jump where the statement's "
                     f"do too ({', '.join(f'{a} to {b}' for a, b in gaps[:5])}: records outside the period)")
    if named:
        facts.append(f"the file holds exactly the records the statement names: seq {first}..{last}, {count} records")
        return
    s_count, s_first, s_last = signed.get("count"), signed.get("first_seq"), signed.get("last_seq")
    if not (isinstance(s_count, int) and isinstance(s_first, int) and isinstance(s_last, int)) \
            or first is None or (first, last) == (s_first, s_last):
        if isinstance(s_count, int) and count != s_count:
            problems.append(f"the file holds {count} records, the statement {s_count}: records were "
                            f"{'added' if count > s_count else 'left out'} after export")
        else:
            problems.append("the file's records are not the ones the statement names (SHA-256 of their seq and hash "
                            "differs): a record was changed or swapped after export")
    elif s_first <= first and last <= s_last and (first == s_first or last == s_last):
        # Cut at one end: the records the statement names there are the ones left out.
        if first > s_first:
            problems.append(f"seq {_span(s_first, first - 1)} missing at the start (the statement's first is seq "
                            f"{s_first})")
        if last < s_last:
            problems.append(f"seq {_span(last + 1, s_last)} missing at the end (the statement's last is seq {s_last})")
        problems.append(f"the file holds {count} records, the statement {s_count}: records were left out after export")
    else:
        # Neither end agrees, or the file reaches past the statement's: another period's statement
        # is the likelier mistake than records added or cut at both ends, so say both.
        period = _period(signed)
        problems.append(f"the file holds seq {first}..{last} ({count} records), the statement seq {s_first}..{s_last} "
                        f"({s_count} records, {period}): it is another export's statement, or records were added or "
                        "left out at the ends after export")


def _period(signed: dict) -> str:
    """The statement's period, its bounds said plainly as UTC: the log stores them so, and a
    day asked for in the table's zone otherwise reads as the wrong day."""
    def bound(value, open_end: str) -> str:
        if not isinstance(value, str) or not value:
            return open_end
        try:
            return log_moment(value).strftime("%Y-%m-%d %H:%M:%S UTC")
        except ValueError:
            return value
    return f"{bound(signed.get('from'), 'the start')} to {bound(signed.get('to'), 'its head')}"


def _span(a: int, b: int) -> str:
    return str(a) if a == b else f"{a}..{b}"


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
    check_signer(key_id, published, log, problems, facts, signed="the statement",
                 proves=f"table {signed['table_id']}'s export of {_period(signed)}, by {signed['exported_by']} at "
                        f"{signed['exported_at']}")


def _check_export_against_log(log: AuditLog, records: list[AuditRecord], signed: dict, problems: list[str],
                              facts: list[str]) -> None:
    _check_records_against_log(log, records, problems, facts)
    _check_statement_logged(log, signed, problems, facts)


def _check_records_against_log(log: AuditLog, records: list[AuditRecord], problems: list[str],
                               facts: list[str]) -> None:
    if records:
        # The log read a batch at a time (a year's export), each row compared with the file's.
        # The log's hash column alone would vouch for a row edited in place with its hash left:
        # each row compared is re-hashed too, or "the one the log holds" is untrue.
        held = {r.seq: r for r in records}
        matched: set[int] = set()
        edited: list[tuple[int, bool]] = []     # (seq, whether the file's copy re-hashes: holds it as written)
        for row in log.iter_records(after_seq=records[0].seq - 1, upto_seq=records[-1].seq):
            mine = held.get(row.seq)
            if mine is not None and row.hash == mine.hash:
                matched.add(row.seq)
                if row.expected_hash() != row.hash:
                    edited.append((row.seq, mine.expected_hash() == mine.hash))
        changed = [r.seq for r in records if r.seq not in matched]
        if changed:
            problems.append(f"{len(changed)} audit records are not the ones the log holds at their seq (first: "
                            f"seq {changed[0]})")
        # "As written" only of a copy that re-hashes (QA51 operator M6): one exported after the change
        # holds it changed too, and must not read as the good copy.
        problems.extend(f"the log's record seq {seq} no longer matches its hash: the log was edited; "
                        + ("the file holds the record as written" if sound else
                           "the file holds it damaged as well (exported after the change): look for the record as "
                           "written in a backup made before then")
                        for seq, sound in edited[:PROBLEMS_NAMED])
        if len(edited) > PROBLEMS_NAMED:
            problems.append(f"and {len(edited) - PROBLEMS_NAMED} more records of the log edited")
        if not changed and not edited:
            facts.append("each audit record is the one the log holds at its seq")


def _check_statement_logged(log: AuditLog, signed: dict, problems: list[str], facts: list[str]) -> None:
    after = signed.get("head_seq") if isinstance(signed.get("head_seq"), int) else 0
    vouched, damaged = None, []
    for record in log.records(types=[AuditType.EXPORTED], after_seq=after):
        data, damage = record.read()
        if damage:
            damaged.append(record)
        elif vouched is None and "signature" in data and data["signature"] == signed.get("signature"):
            vouched = record, data
    if vouched is None and damaged:
        # The record that would vouch for the statement may be the one that cannot be read: not
        # signed by this kiosk is then an accusation the log cannot make (QA52 review M3).
        problems.append(f"the log's record of this export cannot be read: {damaged_words(damaged)}; whether it is "
                        "this export's cannot be told, so the log neither vouches for the statement nor denies it")
    elif vouched is None:
        problems.append("the log has no audit_exported record of this statement: it was not signed by this log's "
                        "kiosk as it is")
    else:
        # The signed fields only: whether the log made the key is check_signer's, which names a
        # key record that cannot be read instead of calling every field changed.
        record, data = vouched
        logged = _body(data, table_id=record.table_id, exported_by=record.actor, exported_at=record.ts)
        differ = [k for k in ("table_id", "exported_by", "exported_at", *_SIGNED) if logged.get(k) != signed.get(k)]
        if differ:
            problems.append(f"the log's record of this export (seq {record.seq}) differs from the statement in "
                            f"{', '.join(differ)}: the statement was changed after export")
        else:
            facts.append(f"the log records this export: seq {record.seq}, by {record.actor} at {record.ts}")
    seq, digest = signed.get("head_seq"), signed.get("head_hash")
    if isinstance(seq, int) and seq > 0 and isinstance(digest, str) and check_head(log, seq, digest).verdict != HELD:
        problems.append(f"the log no longer holds the head it had when this was exported (seq {seq}): its history "
                        "was rewritten or cut since (niuniu audit verify --against the backups)")
