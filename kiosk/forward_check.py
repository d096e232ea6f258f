"""Does the collector's copy of the audit log agree with the log?  ``niuniu audit check-forwarded``.

The collector (``kiosk.forward``) keeps every record the table sent, as the table sent it.
Read back, that copy says three things: whether it is itself intact (each record re-hashes
and follows the one before; each head line is signed by the table), whether it is complete
(seq ranges that never arrived: an outage replayed too late, or UDP loss), and — against the
kiosk's log — whether the log still holds every record as it was when it left the table.  A
record the log now holds differently, or no longer holds, was rewritten or removed after it
was forwarded, however consistent the log's own chain is.

The collector's files hold other programs' lines and its own prefixes; a line is ours where
it carries the marker ``{"niuniu":"audit-``.  Records can arrive twice (each connection
replays the last few); twice *differently* is a rewrite, unless the log restored a backup
older than that record (``backup_restored``), which replaced that stretch of history on
purpose.  Only hashes are kept per record, so a month of a busy table checks in a few
hundred MB; check a year as its monthly files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from kiosk.audit import AuditError, AuditLog, AuditRecord, AuditType, DamagedRecord
from kiosk.evidence import EvidenceCheck
from kiosk.exports import PROBLEMS_NAMED
from kiosk.forward import HEAD_FORMAT, RECORD_FORMAT, head_signer
from kiosk.signing import UNREADABLE, check_signer

MARKER = '{"niuniu":"audit-'


@dataclass
class Collected:
    """One table's records as the collector holds them: hashes only, by seq."""

    table_id: str
    hashes: dict[int, bytes] = field(default_factory=dict)
    links: dict[int, bytes] = field(default_factory=dict)      # each record's prev_hash
    heads: list[dict] = field(default_factory=list)
    restores: list[tuple[int, int]] = field(default_factory=list)   # (seq of the record, head_seq restored)
    repeated: int = 0
    conflicts: list[tuple[int, str, str]] = field(default_factory=list)   # (seq, first hash, later hash)
    unhashed: list[int] = field(default_factory=list)
    sent_damaged: dict[int, str] = field(default_factory=dict)   # seq -> why, as the table marked it when sent
    unreadable: dict[int, str] = field(default_factory=dict)   # seq -> a restore record that cannot be read, in words


@dataclass
class Reading:
    tables: dict[str, Collected] = field(default_factory=dict)
    lines: int = 0
    cut: list[str] = field(default_factory=list)    # "file:line" of our lines that do not parse


def our_lines(paths: list[str | Path]):
    """``(where, text)`` of each line of ours in ``paths``, in order, its JSON not yet read;
    :class:`AuditError` for a file that cannot be read."""
    for path in paths:
        try:
            handle = open(path, encoding="utf-8", errors="replace")
        except OSError as exc:
            raise AuditError(f"cannot read the collector's file {path}: {exc.strerror}") from None
        with handle:
            for number, line in enumerate(handle, 1):
                start = line.find(MARKER)
                if start >= 0:
                    yield f"{path}:{number}", line[start:].rstrip("\r\n")


def read_collected(paths: list[str | Path]) -> Reading:
    """Every line of ours in ``paths``, in order, kept as hashes."""
    reading = Reading()
    for where, text in our_lines(paths):
        reading.lines += 1
        try:
            _take(reading, json.loads(text))
        except (KeyError, ValueError, TypeError, AttributeError):
            reading.cut.append(where)
    return reading


def _take(reading: Reading, item: dict) -> None:
    if item["niuniu"] == HEAD_FORMAT:
        _table(reading, item["table_id"]).heads.append(item)
        return
    if item["niuniu"] != RECORD_FORMAT:
        raise ValueError(f"unknown line format {item['niuniu']!r}")
    record = AuditRecord.from_json(item)
    digest, link = bytes.fromhex(record.hash), bytes.fromhex(record.prev_hash)   # both read before either is kept
    table = _table(reading, item.get("log", record.table_id))
    if record.expected_hash() != record.hash:
        table.unhashed.append(record.seq)
    if item.get("damaged") and record.damage:
        # AuditRecord.to_json's mark: its payload could not be read on the kiosk.  Outside the
        # record's hash and the signed head, so a claim only; a payload that reads belies it.
        table.sent_damaged[record.seq] = str(item["damaged"])
    seen = table.hashes.get(record.seq)
    if seen is not None:
        if seen == digest:
            table.repeated += 1
            return
        table.conflicts.append((record.seq, seen.hex(), record.hash))
    table.hashes[record.seq] = digest
    table.links[record.seq] = link
    if record.type == AuditType.BACKUP_RESTORED:
        restored, why = _restored(record)
        if why:
            table.unreadable[record.seq] = f"the collector's copy of {why}"
        elif restored is not None:
            table.restores.append(restored)


def _restored(record: AuditRecord) -> tuple[tuple[int, int] | None, str | None]:
    """A ``backup_restored`` record as ``(its seq, the head seq it put back)``; where it cannot
    be read, what that costs in words: the records that restore replaced cannot be told from a
    rewrite, so they are named as one (never taken as excused)."""
    data, damage = record.read()
    if damage:
        return None, (f"{DamagedRecord(record, damage)}; which backup it put back is not known, so the records it "
                      "replaced read as rewritten")
    return ((record.seq, data["head_seq"]) if isinstance(data.get("head_seq"), int) else None), None


def _table(reading: Reading, table_id) -> Collected:
    if not isinstance(table_id, str):
        raise TypeError("table_id is not text")
    return reading.tables.setdefault(table_id, Collected(table_id))


def check_forwarded(paths: list[str | Path], *, table_id: str | None = None, log: AuditLog | None = None,
                    public_key: Ed25519PublicKey | None = None) -> EvidenceCheck:
    """Everything wrong with the collector's copy of one table's log, and what held."""
    reading = read_collected(paths)
    if table_id is None and log is not None:
        table_id = log.table() or None
    if table_id is None:
        if len(reading.tables) > 1:
            raise AuditError(f"the collector's files hold the records of tables {', '.join(sorted(reading.tables))}; "
                             "choose one with --table")
        table_id = next(iter(reading.tables), None)
    collected = reading.tables.get(table_id) if table_id is not None else None
    if collected is None or not collected.hashes:
        where = f"table {table_id}" if table_id else "any table"
        return EvidenceCheck([f"no audit records of {where} in {', '.join(map(str, paths))} ({reading.lines} lines "
                              "of ours): is this the collector's file, and audit_forward set in the table file?"], [])
    problems: list[str] = []
    facts: list[str] = []
    warnings: list[str] = []
    if reading.cut:
        problems.append(f"{len(reading.cut)} lines cut short or garbled (first: {reading.cut[0]}): raise the "
                        "collector's maximum message size (rsyslog: global(maxMessageSize=\"64k\"), as "
                        "deploy/collector/niuniu-rsyslog.conf sets it); over UDP, forward over TCP instead")
    problems.extend(collected.unreadable.values())
    _check_copy(collected, log, problems, facts, warnings)
    _check_heads(collected, public_key, log, problems, facts)
    if log is not None:
        _check_against_log(log, collected, problems, facts)
    return EvidenceCheck(problems, facts, warnings)


def _superseded(restores: list[tuple[int, int]], seq: int) -> tuple[int, int] | None:
    """The logged restore that replaced the history holding ``seq``, if any."""
    return next((r for r in restores if r[1] < seq), None)


def _named(problems: list[str], found: list[str]) -> None:
    problems.extend(found[:PROBLEMS_NAMED])
    if len(found) > PROBLEMS_NAMED:
        problems.append(f"and {len(found) - PROBLEMS_NAMED} more")


def _check_copy(collected: Collected, log: AuditLog | None, problems: list[str], facts: list[str],
                warnings: list[str]) -> None:
    seqs = sorted(collected.hashes)
    first, last = seqs[0], seqs[-1]
    # a damaged restore record is named once, by the line that says what its damage costs
    kiosk_damage = _as_the_log_holds(log, collected, [s for s in collected.unhashed if s in collected.sent_damaged])
    found = [f"the collector's record seq {seq} does not hash to its own hash: "
             + _unhashed_words(seq, collected.sent_damaged.get(seq), kiosk_damage, log is not None)
             for seq in collected.unhashed if seq not in collected.unreadable]
    replaced = []
    for seq, before, after in collected.conflicts:
        if _superseded(collected.restores, seq):
            replaced.append(seq)
        else:
            found.append(f"seq {seq} reached the collector twice, differently ({before[:16]}... then {after[:16]}...): "
                         "the table's log was rewritten between the two sends")
    broken = [seq for seq in seqs[1:] if seq - 1 in collected.hashes
              and collected.links[seq] != collected.hashes[seq - 1]]
    found += [f"the collector's record seq {seq} does not follow seq {seq - 1} in the chain" for seq in broken
              if not _superseded(collected.restores, seq)]
    _named(problems, found)
    facts.append(f"table {collected.table_id}: {len(seqs)} records, seq {first}..{last}"
                 + (f" ({collected.repeated} sent again after a reconnect)" if collected.repeated else ""))
    if replaced:
        restore = _superseded(collected.restores, replaced[0])
        facts.append(f"{len(replaced)} records were sent again with a new history after the restore logged at seq "
                     f"{restore[0]} (a backup of seq {restore[1]} put back)")
    gaps = _gaps(seqs)
    if gaps:
        # A hole between records the collector holds is not "never sent": over TCP each
        # connection sends the last records again, so a hole there was lost in transit (UDP, an
        # outage longer than the replay) or removed at the collector — the copy cannot say which,
        # so it is a warning, not an "ok".  Records after the newest held are the kiosk not yet
        # caught up (said against the log), not a hole.
        shown = ", ".join(f"{a}..{b}" if a != b else str(a) for a, b in gaps[:5])
        total = sum(b - a + 1 for a, b in gaps)
        warnings.append(f"seq {shown}{', ...' if len(gaps) > 5 else ''}: {_count(total, 'record')} in "
                        f"{_count(len(gaps), 'stretch', 'stretches')} between records the collector holds "
                        f"{'is' if total == 1 else 'are'} not in the copy (lost in transit, or removed at the "
                        "collector)")
    elif not found:
        facts.append("every record re-hashes and follows the one before, none missing")


def _as_the_log_holds(log: AuditLog | None, collected: Collected, seqs: list[int]) -> dict[int, str | None]:
    """What is wrong (:meth:`AuditRecord.problem`, None: nothing) with the log's record at each
    of ``seqs`` that is the record the collector holds there (the same hash); a seq the log
    holds otherwise or not at all is left out: the log cannot say how that one left the table."""
    found: dict[int, str | None] = {}
    for seq in seqs if log is not None else ():
        held = log.records(after_seq=seq - 1, upto_seq=seq)
        if held and held[0].seq == seq and held[0].hash == collected.hashes[seq].hex():
            found[seq] = held[0].problem()
    return found


def _unhashed_words(seq: int, marked: str | None, kiosk_damage: dict[int, str | None], log_given: bool) -> str:
    """Why a record of the copy fails its hash, as far as anything signed or the log can tell.

    The table's "damaged" mark is not signed (as a copy with no signed heads is trusted only as
    far as the collector is), so it never excuses a record by itself: whoever edits the copy
    can add it (QA52 review M2).  The kiosk's log decides where it holds the record; without
    it the mark is said as the claim it is."""
    if marked is None:
        return "changed after it left the table"
    if seq in kiosk_damage:
        if kiosk_damage[seq] is None:
            return ("changed after it left the table (the kiosk's log holds it whole; the copy's mark that it was "
                    "sent damaged is not signed)")
        return (f"it left the table so, damaged on the kiosk's disk ({marked}; the log's own record "
                f"{kiosk_damage[seq]}): run niuniu audit verify on the kiosk and call surveillance")
    where = ("the kiosk's log no longer holds this record to tell" if log_given
             else "check again with --data-dir on the kiosk, whose log tells")
    return (f"marked as sent damaged ({marked}), but the mark is not signed: damaged on the kiosk's disk or changed "
            f"at the collector ({where}); run niuniu audit verify on the kiosk and call surveillance")


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def _gaps(seqs: list[int]) -> list[tuple[int, int]]:
    return [(a + 1, b - 1) for a, b in zip(seqs, seqs[1:]) if b - a > 1]


def _check_heads(collected: Collected, published: Ed25519PublicKey | None, log: AuditLog | None,
                 problems: list[str], facts: list[str]) -> None:
    signers: dict[str, int] = {}
    found: list[str] = []
    verdicts: dict[int, bool] = {}      # signed head seq -> does the collector's record there match it
    newest = None
    for head in collected.heads:
        try:
            seq, digest = head["seq"], head["hash"]
            key_id = head_signer(head, collected.table_id)
        except InvalidSignature:
            found.append(f"a head line for seq {head.get('seq')} is not signed by the key it names: not sent by "
                         "the table (forged on the network?), or changed at the collector")
            continue
        except UNREADABLE as exc:
            found.append(f"a head line for seq {head.get('seq')} cannot be read ({type(exc).__name__}: {exc})")
            continue
        if head.get("signing_key") != key_id:
            found.append(f"the head line for seq {seq} names key {head.get('signing_key')} but is signed by {key_id}")
            continue
        held = collected.hashes.get(seq)
        if held is not None and not _superseded(collected.restores, seq):
            verdicts[seq] = held.hex() == digest
        signers[key_id] = signers.get(key_id, 0) + 1
        newest = seq if newest is None else max(newest, seq)
    found += _unmatched_heads(verdicts)
    _named(problems, found)
    if not collected.heads:
        facts.append("no signed head lines (the table had no readable evidence key): the copy says what the table "
                     "sent only as far as the collector's network is trusted")
        return
    if newest is not None:
        facts.append(f"{sum(signers.values())} signed heads, the newest at seq {newest}")
    for key_id in signers:
        check_signer(key_id, published, log, problems, facts, signed="each head line",
                     proves=f"table {collected.table_id} sent these records")


def _unmatched_heads(verdicts: dict[int, bool]) -> list[str]:
    """Signed heads the collector's records no longer match, as the stretches that hold the change.

    A head's hash covers every record before it, so a record edited at the collector and the
    chain re-hashed after it fails every later head: the change lies after the last head that
    still matches and at or before the first that does not — the head seqs themselves (often
    a record nobody touched) are not what changed."""
    found, matched, run = [], None, []
    for seq in sorted(verdicts) + [None]:
        if seq is not None and not verdicts[seq]:
            run.append(seq)
            continue
        if run:
            later = f"; nor {_count(len(run) - 1, 'later signed head')}" if len(run) > 1 else ""
            if matched is None:
                found.append(f"records up to seq {run[0]} differ from what the table signed: a record at or before "
                             f"seq {run[0]} was changed at the collector and the rest re-hashed (the signed head at "
                             f"seq {run[0]} no longer matches{later})")
            else:
                found.append(f"records seq {matched + 1}..{run[0]} differ from what the table signed: a record among "
                             f"them was changed at the collector and the rest re-hashed (the signed head at seq "
                             f"{matched} still matches, the one at seq {run[0]} does not{later})")
            run = []
        matched = seq
    return found


def _check_against_log(log: AuditLog, collected: Collected, problems: list[str], facts: list[str]) -> None:
    seqs = sorted(collected.hashes)
    restores = []
    for restored, why in map(_restored, log.records(types=[AuditType.BACKUP_RESTORED])):
        if why:
            problems.append(f"the log's {why}")
        elif restored is not None:
            restores.append(restored)
    changed: list[int] = []
    held = 0
    for record in log.iter_records(after_seq=seqs[0] - 1, upto_seq=seqs[-1]):
        digest = collected.hashes.get(record.seq)
        if digest is None:
            continue
        held += 1
        if digest.hex() != record.hash and not _superseded(restores, record.seq):
            changed.append(record.seq)
    if changed:
        problems.append(f"{len(changed)} records the log holds are not as they were forwarded (first: seq "
                        f"{changed[0]}): the log's history was rewritten after the collector received it")
    head = log.last()
    beyond = [seq for seq in seqs if head is None or seq > head.seq]
    if beyond and not _superseded(restores, beyond[0]):
        problems.append(f"the collector holds records up to seq {seqs[-1]} but the log ends at seq "
                        f"{head.seq if head else 0}: {len(beyond)} records were removed from the log")
    if not changed and held:
        facts.append(f"the log holds every one of the {held} records as it was forwarded")
    if head is not None and head.seq > seqs[-1]:
        facts.append(f"the log has {head.seq - seqs[-1]} records after the newest the collector holds "
                     f"(seq {seqs[-1]}): not forwarded yet, or the collector was not answering")
