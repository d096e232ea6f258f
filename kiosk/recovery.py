"""The records a dead disk took with it, taken back from the collector's copy.

A restore puts back the last nightly backup: every record written since — up to a day of
rounds, settlements and corrections — died with the disk.  The collector (``kiosk.forward``)
received each of them within a second.  ``niuniu restore BACKUP --collector FILES`` appends
them to the restored log exactly as they were hashed, so the chain reads as if nothing was
lost.

Anyone on the casino's network can send a syslog line, and anyone can compute a chain of
hashes from a known head, so following the backup's head proves nothing by itself.  What
does is the table's signature: a record is taken back only up to the newest ``audit-head``
line signed by a key this table's backup holds or its log made, whose hash is the one the
chain reaches there.  Whatever the copy holds after that (a batch cut by the crash) is
counted, not taken.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature

from kiosk.audit import AuditRecord
from kiosk.forward import HEAD_FORMAT, RECORD_FORMAT, head_signer
from kiosk.forward_check import our_lines
from kiosk.signing import UNREADABLE


@dataclass(frozen=True)
class Recovery:
    records: list[AuditRecord]    # to append after the head, in seq order, each vouched for by a signed head
    unvouched: int                # records that follow on in the copy but no signed head covers
    stopped: str | None           # why the chain in the copy ends before its newest record, if it does
    # Keys (fingerprints) that signed heads over the unvouched records, genuinely and with the
    # chain's hashes, but that the backup does not hold: a key made after the backup.
    other_keys: tuple[str, ...] = ()

    def to_json(self) -> dict:
        first, last = (self.records[0].seq, self.records[-1].seq) if self.records else (None, None)
        return {"records": len(self.records), "first_seq": first, "last_seq": last, "unvouched": self.unvouched,
                "stopped": self.stopped, "other_keys": list(self.other_keys)}


def recover_after(paths: list[str | Path], head: AuditRecord, keys: set[str], table: str) -> Recovery:
    """The records of ``table``'s log after ``head`` in the collector's ``paths``, as far as a
    head signed by one of ``keys`` (fingerprints) vouches for them."""
    candidates: dict[int, list[AuditRecord]] = {}
    heads: list[dict] = []
    for _where, text in our_lines(paths):
        try:
            item = json.loads(text)
            if item["niuniu"] == HEAD_FORMAT:
                if item.get("table_id") == table:
                    heads.append(item)
                continue
            # Most of a month's copy lies before the backup: skipped before it is rebuilt and re-hashed.
            if item["niuniu"] != RECORD_FORMAT or item.get("log", item.get("table_id")) != table \
                    or not isinstance(item.get("seq"), int) or item["seq"] <= head.seq:
                continue
            record = AuditRecord.from_json(item)
        except (KeyError, ValueError, TypeError, AttributeError):
            continue                   # check-forwarded names cut lines; here they are simply not taken
        if record.expected_hash() != record.hash:
            continue
        found = candidates.setdefault(record.seq, [])
        if all(r.hash != record.hash for r in found):
            found.append(record)       # two histories after a restore: the chain below picks its own
    chain, stopped = _chain(candidates, head)
    vouched, others = _vouched(heads, {r.seq: r.hash for r in chain}, table, keys, head.seq)
    taken = [r for r in chain if r.seq <= vouched]
    return Recovery(taken, len(chain) - len(taken), stopped, others)


def _chain(candidates: dict[int, list[AuditRecord]], head: AuditRecord) -> tuple[list[AuditRecord], str | None]:
    chain: list[AuditRecord] = []
    prev, seq = head.hash, head.seq + 1
    newest = max(candidates, default=head.seq)
    while seq <= newest:
        following = next((r for r in candidates.get(seq, []) if r.prev_hash == prev), None)
        if following is None:
            why = "never reached the collector" if seq not in candidates else "does not follow the one before it"
            return chain, f"seq {seq} {why} (the copy holds records up to seq {newest})"
        chain.append(following)
        prev, seq = following.hash, seq + 1
    return chain, None


def _vouched(heads: list[dict], chain: dict[int, str], table: str, keys: set[str],
             start: int) -> tuple[int, tuple[str, ...]]:
    """The newest seq a head signed by one of ``keys`` names with the hash the chain reaches
    there; and the other keys whose heads match the chain beyond it (what restore says when
    a key made after the backup vouches for the rest: not a batch cut short)."""
    vouched, others = start, {}
    for head in heads:
        try:
            key_id = head_signer(head, table)
        except (InvalidSignature, *UNREADABLE):
            continue
        if chain.get(head["seq"]) != head["hash"]:
            continue
        if key_id in keys:
            vouched = max(vouched, head["seq"])
        else:
            others[key_id] = max(others.get(key_id, 0), head["seq"])
    return vouched, tuple(key for key, seq in others.items() if seq > vouched)
