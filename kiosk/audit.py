"""The tamper-evident audit log: append-only SQLite, one SHA-256 hash chain.

Regulators and surveillance must be able to trust that what the log says happened
did happen and that nobody quietly rewrote it afterwards.  Three layers make that so:

* SQLite triggers refuse every UPDATE and DELETE, so an honest mistake (or a
  careless script) cannot rewrite history;
* each record stores the previous record's hash and
  ``SHA-256(prev_hash + canonical JSON of the record)``, so anyone who drops the
  triggers and edits a row breaks the chain at that row, and :func:`verify` names it;
* WAL mode with ``synchronous=FULL`` means an append that returned is on disk, so a
  kill -9 or power cut loses nothing that the dealer's screen already showed.

The hashed text covers every column except the hash itself (seq, time, table, type,
actor, round and payload), not only the payload: an edited actor or timestamp is as
much a forgery as an edited card.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import sqlite3
import threading
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from decimal import Decimal
from enum import Enum, StrEnum
from pathlib import Path
from typing import Any, Iterable, Iterator

from scoring.errors import NiuniuError

GENESIS_HASH = "0" * 64
AUDIT_FILE = "audit.sqlite3"


class AuditError(NiuniuError):
    """The audit log cannot be opened, read or written; the message says which file and why."""


class DamagedRecord(AuditError, ValueError):
    """A record whose payload no longer reads as the JSON object the kiosk wrote: bytes of it
    changed on the disk (an SD card's bit rot) or by hand.  SQLite still opens the file, so
    nothing else says so until the payload is read.

    One condition, raised in one place (:attr:`AuditRecord.data`), so that each reader decides
    what a damaged record means to it (the round folding marks its round ``damaged``, the shift
    report names it and goes on) instead of a ``JSONDecodeError`` traceback taking down the
    kiosk's start or a whole report.  Also a ``ValueError``, as that error was, so the readers
    that already guarded a payload that is not JSON still do."""

    def __init__(self, record: "AuditRecord", why: str) -> None:
        self.seq, self.type, self.why = record.seq, record.type, why
        super().__init__(f"audit record seq {record.seq} ({record.type}) cannot be read: {why}; the log was "
                         "damaged (on the disk, or edited): run niuniu audit verify, keep the data directory as it "
                         "is and call surveillance")


class AuditDiskError(AuditError, sqlite3.OperationalError):
    """The disk refused an append (full, or failing); nothing of it was written.

    Also the ``sqlite3.OperationalError`` it was, so the callers that catch SQLite's
    failures around an append (the table service, which raises the dealer's AUDIT LOG
    FAILURE) still do, now with a message that says what to do."""


def disk_refused(exc: BaseException) -> bool:
    """Whether SQLite failed because the disk would not take a write: full (SQLITE_FULL,
    "database or disk is full") or failing (SQLITE_IOERR, "disk I/O error")."""
    name = getattr(exc, "sqlite_errorname", None) or ""
    if name:
        return name == "SQLITE_FULL" or name.startswith("SQLITE_IOERR")
    return str(exc) in ("database or disk is full", "disk I/O error")


class AuditType(StrEnum):
    """Every kind of record the log can hold; the review screen filters on these."""

    KIOSK_START = "kiosk_start"
    KIOSK_STOP = "kiosk_stop"
    CONFIG_LOADED = "config_loaded"
    CONFIG_CHANGED = "config_changed"
    MODEL_LOADED = "model_loaded"
    CAMERA_OFFLINE = "camera_offline"
    CAMERA_ONLINE = "camera_online"
    CAMERA_MIRRORED = "camera_mirrored"
    CAMERA_MIRROR_CLEARED = "camera_mirror_cleared"
    CAMERA_MOVED = "camera_moved"
    CAMERA_MOVE_CLEARED = "camera_move_cleared"
    GUARDS_RESTORED = "audit_guards_restored"
    SETUP_ADMIN = "setup_admin"
    LOGIN = "login"
    LOGOUT = "logout"
    LOGIN_FAILED = "login_failed"
    SESSION_TIMEOUT = "session_timeout"
    PIN_FAILED = "pin_failed"
    PIN_ACCEPTED = "pin_accepted"      # a right PIN for an action then refused (kiosk.auth)
    USER_CREATED = "user_created"
    USER_CHANGED = "user_changed"
    BETS_PLACED = "bets_placed"
    ROUND_START = "round_start"
    CARD_ACCEPTED = "card_accepted"
    CARD_REMOVED = "card_removed"
    CARD_CORRECTED = "card_corrected"
    ROUND_COMPLETE = "round_complete"
    ROUND_SETTLED = "round_settled"
    SETTLEMENT_LINE = "settlement_line"
    SETTLEMENT_CORRECTED = "settlement_corrected"
    ADJUSTMENT_SETTLED = "adjustment_settled"   # a correction's difference paid, collected or waived (table_service)
    ROUND_CLEARED = "round_cleared"
    ROUND_VOID = "round_void"
    ROUND_INTERRUPTED = "round_interrupted"
    ALERT = "alert"
    EXPORTED = "audit_exported"
    RECORDINGS_PRUNED = "recordings_pruned"
    DISK_LOW = "disk_low"
    RECORDING_HELD = "recording_held"
    RECORDING_RELEASED = "recording_released"
    ROUND_NOTE = "round_note"       # surveillance's case note on a round (kiosk.review)
    RECORDING_SEALED = "recording_sealed"
    RECORDING_CHANGED = "recording_changed"
    RECORDING_HOLD_LOST = "recording_hold_lost"     # the log holds a recording whose hold.json is gone
    RECORDING_FAILED = "recording_failed"   # a round's recording failed or lost part of itself (vision.record)
    BACKUP_MADE = "backup_made"
    BACKUP_FAILED = "backup_failed"
    BACKUP_RESTORED = "backup_restored"
    SIGNING_KEY_CREATED = "signing_key_created"
    FORWARD_FAILED = "audit_forward_failed"
    FORWARD_RESTORED = "audit_forward_restored"
    CLOCK_CHANGED = "clock_changed"     # the system clock stepped, or became (un)synchronised (kiosk.clockwatch)


def _json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    code = getattr(value, "code", None)  # scoring.cards.Card
    if isinstance(code, str):
        return code
    raise TypeError(f"{type(value).__name__} is not JSON-safe for the audit log")


def canonical_json(value: Any) -> str:
    """One byte-exact text per value: sorted keys, no spaces, Decimals as strings.

    The hash is over text, so two writers (or a verifier in another language) must
    produce the same text for the same record; NaN and infinity are refused because
    JSON has no single spelling for them.
    """
    return _CANONICAL.encode(value)


# json.dumps with these options builds an encoder per call; every record hashed (a chain walk,
# the shift report's check) pays for that, so one is built once.  Same options, same text.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                              default=_json_default)


def utc_iso(ts: float | None = None) -> str:
    """UTC time with microseconds and a Z: sorts as text, reads as a time."""
    moment = datetime.now(timezone.utc) if ts is None else datetime.fromtimestamp(ts, timezone.utc)
    return _log_text(moment)


def _log_text(moment: datetime) -> str:
    # The year padded to four digits by hand: strftime's %Y writes year 999 as "999",
    # which neither sorts as text nor reads back as ISO.
    return f"{moment.year:04d}" + moment.strftime("-%m-%dT%H:%M:%S.%fZ")


EARLIEST_YEAR = 2000    # no table's log starts earlier: an older year is a typo (0202 for 2026)


def parse_time(text: str, *, where: str, end: bool = False, zone: tzinfo = timezone.utc,
               day: date | None = None) -> str:
    """Turn a user's ``2024-05-01`` or ``2024-05-01T12:30`` (in ``zone`` unless an offset is
    given) into the log's text form (UTC), so range filters compare like with like.

    ``end``: the time closes the range.  A bare date means the whole of that day —
    ``--from 2024-05-01 --to 2024-05-01`` is one day, not the instant of midnight; a time of
    day is the first instant *after* the range, so that one shift's ``--to 14:00`` and the
    next one's ``--from 14:00`` never both hold a record stamped 14:00:00.000000.

    Also as people say a time: a one-digit hour (``2024-05-01T6:24``) and a 12-hour time
    (``2024-05-01 10:40 pm``); and, where ``day`` is given, a time alone (``22:40``,
    ``10:40 pm``) on that day.  Each is tried only after the ISO forms, so nothing those read
    changes meaning; without ``day`` a time alone is refused, as before."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        whole_day = "T" not in text and " " not in text.strip()
    except ValueError:
        moment, whole_day = _spoken_time(text, where=where, zone=zone, day=day), False
    if moment.year < EARLIEST_YEAR:
        raise AuditError(f"{where} {text!r}: the year {moment.year} is before any audit log began; "
                         f"check the year (like {datetime.now().year})")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone)
        if not whole_day:     # a typed time; a bare date's midnight is taken as it falls
            _check_local(moment, text.strip(), where, zone)
    try:
        return _log_text(_closing(moment, whole_day) if end else moment.astimezone(timezone.utc))
    except OverflowError:          # 9999-12-31T23:00-08:00 lies past year 9999 in UTC
        raise AuditError(f"{where} {text!r} is past the last time the log can write; check the year") from None


# A time as people type it: an optional date, a one- or two-digit hour, minutes unless am/pm
# is given, optional seconds, am/pm (10:40 pm, 10:40pm, 10:40 p.m., 10 pm), an optional offset.
_SPOKEN = re.compile(r"(?:(?P<date>\d{4}-\d{2}-\d{2})(?:T|\s+))?(?P<hour>\d{1,2})"
                     r"(?::(?P<minute>\d{2})(?::(?P<second>\d{2}))?)?"
                     r"(?:\s*(?P<half>[ap])\.?\s?m\.?)?(?P<offset>Z|[+-]\d{2}:\d{2})?", re.IGNORECASE)


def _spoken_time(text: str, *, where: str, zone: tzinfo, day: date | None) -> datetime:
    """:func:`parse_time`'s forms beyond ISO, as a datetime (naive unless an offset is typed)."""
    name = getattr(zone, "key", "UTC")
    alone = " (or a time alone, 22:40 or 10:40 pm, on the day the other end gives or else today)" if day else ""
    unread = AuditError(f"{where} {text!r} is not a date or time; write it like 2024-05-01 or "
                        f"2024-05-01T18:30 ({name}) or 2024-05-01T18:30+08:00{alone}")
    found = _SPOKEN.fullmatch(text.strip())
    if found is None or (found["minute"] is None and found["half"] is None):
        raise unread
    hour, minute, second = int(found["hour"]), int(found["minute"] or 0), int(found["second"] or 0)
    if found["half"]:
        if not 1 <= hour <= 12:
            raise AuditError(f"{where} {text!r} is not a time: with am/pm the hour is 1 to 12 "
                             f"(12:30 am is half past midnight); for a 24-hour time leave out am/pm")
        hour = hour % 12 + (12 if found["half"].lower() == "p" else 0)
    if found["date"] is None and day is None:
        raise AuditError(f"{where} {text!r} is a time with no date; write the date too, like "
                         f"{datetime.now(zone).date().isoformat()}T{hour:02d}:{minute:02d}")
    try:
        on = date.fromisoformat(found["date"]) if found["date"] else day
        moment = datetime.combine(on, time(hour, minute, second))
        if found["offset"]:
            moment = datetime.fromisoformat(moment.isoformat() + found["offset"].upper().replace("Z", "+00:00"))
    except ValueError:
        raise unread from None
    return moment


def around_period(text: str, minutes: int, *, where: str, zone: tzinfo = timezone.utc,
                  day: date | None = None) -> tuple[str, str]:
    """``around ± minutes`` as a period in the log's text form: ``text`` read as a ``from`` is
    read by :func:`parse_time` (a skipped or repeated local time refused the same way)."""
    centre = log_moment(parse_time(text, where=where, zone=zone, day=day))
    try:
        return _log_text(centre - timedelta(minutes=minutes)), _log_text(centre + timedelta(minutes=minutes))
    except (OverflowError, ValueError):
        raise AuditError(f"{where} {text!r} ± {minutes} min lies past the times the log can write; "
                         "check the year") from None


def typed_day(text: str | None) -> date | None:
    """The date a typed time begins with (``2024-05-01`` of ``2024-05-01T18:30``), if any."""
    found = re.match(r"\s*(\d{4}-\d{2}-\d{2})", text or "")
    try:
        return date.fromisoformat(found[1]) if found else None
    except ValueError:
        return None


def _closing(moment: datetime, whole_day: bool) -> datetime:
    """The last instant (UTC) of a range closed by ``moment``: just before it, or for a whole
    day just before the next day starts, that start resolved as a ``--from`` resolves it, so
    one shift's end and the next one's start are always a microsecond apart.

    Worked out in UTC: an aware local time minus a microsecond is taken on the wall clock
    and lands on the pre-change side of a night the clocks change (02:00 less 1 µs is
    01:59:59 in summer time on the night they go back), and the hour either side of it is
    then in neither shift's books, or in both."""
    if whole_day:
        try:
            moment = datetime.combine(moment.date() + timedelta(days=1), time(0), tzinfo=moment.tzinfo)
        except OverflowError:      # 9999-12-31: nothing is stamped after the last instant the log can write
            return datetime.max.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc) - timedelta(microseconds=1)


def _check_local(moment: datetime, text: str, where: str, zone: tzinfo) -> None:
    """Refuse a local time the clocks skipped or showed twice (daylight saving): Python would
    move the first an hour on and take the first of the second without a word, and a
    shift's books would silently cover an hour more or less than the supervisor typed."""
    name = getattr(zone, "key", "UTC")
    offset = moment.utcoffset()
    other = moment.replace(fold=1).utcoffset()
    if offset == other:
        return
    naive = moment.replace(tzinfo=None)
    if moment.astimezone(timezone.utc).astimezone(zone).replace(tzinfo=None) != naive:
        same = naive + (other - offset) if other is not None and offset is not None else naive
        raise AuditError(f"{where} {text!r} does not exist in {name}: the clocks went forward that night and "
                         f"skipped it; write a time they showed, like {same.isoformat(timespec='minutes')} "
                         "(the same moment, by the clocks as they were set)")
    first, second = moment.replace(fold=0), moment.replace(fold=1)
    raise AuditError(f"{where} {text!r} happened twice in {name} (the clocks went back): write "
                     f"{naive.isoformat(timespec='minutes')}{_offset_text(first.utcoffset())} for the first "
                     f"({first.tzname()}) or {naive.isoformat(timespec='minutes')}{_offset_text(second.utcoffset())} "
                     f"for the second ({second.tzname()})")


def _offset_text(offset: timedelta | None) -> str:
    minutes = int((offset or timedelta()).total_seconds() // 60)
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def parse_period(since: str | None, until: str | None, *, zone: tzinfo = timezone.utc,
                 names: tuple[str, str] = ("--from", "--to"),
                 days: tuple[date | None, date | None] = (None, None)) -> tuple[str | None, str | None]:
    """A typed range in the log's text form (either end may be open); a reversed range is a
    typo, not an empty answer.  ``names`` say where the two came from, for the errors;
    ``days``, the day a time typed alone at each end is on (none: a time alone is refused)."""
    start = parse_time(since, where=names[0], zone=zone, day=days[0]) if since else None
    end = parse_time(until, where=names[1], end=True, zone=zone, day=days[1]) if until else None
    if start and end and end < start:
        raise AuditError(f"{names[1]} {until} is before {names[0]} {since}; swap them")
    return start, end


def log_moment(ts: str) -> datetime:
    """A log time (``utc_iso``'s text) as an aware datetime.

    Records written before the year was padded may say ``1-01-01T...`` (an export asked
    for from year 1); they are in the log for good, so they are read padded."""
    date, sep, rest = ts.partition("-")
    if sep and date.isdigit() and len(date) < 4:
        ts = date.zfill(4) + sep + rest
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def local_text(ts: str, zone: tzinfo) -> str:
    """A log time (UTC, to the microsecond) as people read it: in ``zone``, to the second.
    In the hour the clocks go back, which shows every time twice, the zone's abbreviation
    is added (01:15:00 GMT after 01:45:00 BST), or the list reads as if time ran backwards."""
    local = log_moment(ts).astimezone(zone)
    text = local.strftime("%Y-%m-%d %H:%M:%S")
    if local.replace(fold=1 - local.fold).utcoffset() != local.utcoffset():
        text += f" {local.tzname()}"
    return text


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One row of the log, exactly as hashed."""

    seq: int
    ts: str
    table_id: str
    type: str
    actor: str
    round_no: int | None
    payload: str  # canonical JSON text, stored and hashed verbatim
    prev_hash: str
    hash: str

    @property
    def data(self) -> dict:
        """The payload as the object the kiosk wrote; :class:`DamagedRecord` where it is not one."""
        return self._decoded()

    def _decoded(self) -> dict:
        bad = _undecodable(self.payload)
        if bad is not None:
            raise DamagedRecord(self, f"its payload is not UTF-8 (byte 0x{ord(self.payload[bad]) - 0xDC00:02x} at "
                                      f"character {bad})")
        try:
            value = json.loads(self.payload)
        except ValueError as exc:       # JSONDecodeError, or a character JSON cannot hold
            raise DamagedRecord(self, f"its payload is not JSON ({getattr(exc, 'msg', exc)} at character "
                                      f"{getattr(exc, 'pos', '?')})") from None
        except RecursionError:
            raise DamagedRecord(self, "its payload is nested too deep to be the kiosk's") from None
        if not isinstance(value, dict):
            raise DamagedRecord(self, f"its payload is a JSON {type(value).__name__}, not the object the kiosk "
                                      "writes")
        return value

    @property
    def damage(self) -> str | None:
        """Why the payload cannot be read (:class:`DamagedRecord`'s reason), None where it can."""
        return self.read()[1]

    def read(self) -> tuple[dict | None, str | None]:
        """``(data, None)``, or ``(None, why)`` where the record is damaged: for the readers
        that go on past a damaged record (name it, use the rest), with the payload parsed once
        where ``damage`` then ``data`` parsed it twice."""
        try:
            return self._decoded(), None
        except DamagedRecord as exc:
            return None, exc.why

    def problem(self) -> str | None:
        """What is wrong with the record as stored, in the words every copy of it uses
        (``broken_records`` of an evidence package, the export's warning): it cannot be read,
        does not match its hash, or both; None where it is sound.  One decision, so a copy and
        the log never disagree on which records are damaged."""
        _, why = self.read()
        unhashed = self.expected_hash() != self.hash
        if why is not None:
            return f"cannot be read ({why})" + (" and does not match its hash" if unhashed else "")
        return "does not match its hash" if unhashed else None

    def body(self) -> str:
        return canonical_json({"seq": self.seq, "ts": self.ts, "table_id": self.table_id,
                               "type": self.type, "actor": self.actor, "round": self.round_no,
                               "payload": self.payload})

    def expected_hash(self) -> str:
        return record_hash(self.prev_hash, self.body())

    def to_json(self) -> dict:
        """The record as an export holds it; a payload that cannot be read goes out as the text
        stored (``payload`` a string, ``damaged`` saying why), so the export still holds every
        record and :meth:`from_json` gives back the very text hashed, damage and all."""
        try:
            payload, damaged = self.data, None
        except DamagedRecord as exc:
            payload, damaged = self.payload, exc.why
        return {"seq": self.seq, "ts": self.ts, "table_id": self.table_id, "type": self.type,
                "actor": self.actor, "round": self.round_no, "payload": payload,
                "prev_hash": self.prev_hash, "hash": self.hash, **({"damaged": damaged} if damaged else {})}

    @classmethod
    def from_json(cls, item: dict) -> "AuditRecord":
        """The record :meth:`to_json` wrote (an export's, a collector's copy), as it was hashed.

        Raises KeyError, ValueError or TypeError where ``item`` is not one: a seq or round that
        is not a whole number (``1.0``, ``true``) is no record the log could have written."""
        payload = item["payload"]
        text = payload if item.get("damaged") and isinstance(payload, str) else canonical_json(payload)
        return cls(seq=_whole(item["seq"]), ts=item["ts"], table_id=item["table_id"], type=item["type"],
                   actor=item["actor"], round_no=None if item["round"] is None else _whole(item["round"]),
                   payload=text, prev_hash=item["prev_hash"], hash=item["hash"])


def _whole(value) -> int:
    """A seq or round number as the log stores it."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{value!r} is not a whole number")
    return value


def _fits(number: int) -> bool:
    """Whether SQLite can bind the integer; a typed round number can be any size."""
    return -(1 << 63) <= number < (1 << 63)


def record_hash(prev_hash: str, body: str) -> str:
    """SHA-256 of the text as UTF-8.  A payload read with bytes that were not UTF-8 (see
    :func:`_stored_text`) goes back to those very bytes (``surrogateescape``), so the damaged
    record hashes as what is on the disk, fails its hash, and ``verify`` names its seq instead
    of a UnicodeEncodeError ending the walk."""
    return hashlib.sha256((prev_hash + body).encode("utf-8", "surrogateescape")).hexdigest()


def _stored_text(raw: bytes) -> str:
    """The connections' text_factory: a TEXT column as the kiosk wrote it (UTF-8), and where bit
    rot or an edit left bytes that are not UTF-8, those bytes as lone surrogates
    (``surrogateescape``) instead of SQLite's OperationalError "Could not decode to UTF-8",
    which no reader can catch per record: it ended the kiosk's start, ``audit verify`` and
    the shift report (QA51 review H1).  :attr:`AuditRecord.data` then calls the record
    damaged."""
    return raw.decode("utf-8", "surrogateescape")


def _undecodable(text: str) -> int | None:
    """Where the first byte :func:`_stored_text` could not decode sits in ``text`` (None: all
    of it was UTF-8).  Only those bytes become U+DC80..U+DCFF: a lone surrogate cannot be
    written as UTF-8, so no record the kiosk wrote holds one."""
    found = _SURROGATE.search(text)
    return found.start() if found else None


_SURROGATE = re.compile("[\udc80-\udcff]")


@dataclass(frozen=True, slots=True)
class VerifyResult:
    """What :func:`AuditLog.verify` found: a count, or the first record that does not hold."""

    count: int
    first_bad_seq: int | None = None
    reason: str = ""
    guards_present: bool = True
    head_hash: str = GENESIS_HASH

    @property
    def ok(self) -> bool:
        return self.first_bad_seq is None and self.guards_present

    def summary(self) -> str:
        if self.first_bad_seq is not None:
            text = f"BROKEN at seq {self.first_bad_seq}: {self.reason}"
        else:
            text = f"OK {self.count} records, head {self.head_hash[:16]}"
        if not self.guards_present:
            text += ("; WARNING: the append-only triggers are missing, so someone altered the "
                     "database schema")
        return text

    def to_json(self) -> dict:
        return {"ok": self.ok, "count": self.count, "first_bad_seq": self.first_bad_seq,
                "reason": self.reason, "guards_present": self.guards_present,
                "head_hash": self.head_hash}


_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit (
    seq       INTEGER PRIMARY KEY,
    ts        TEXT NOT NULL,
    table_id  TEXT NOT NULL,
    type      TEXT NOT NULL,
    actor     TEXT NOT NULL,
    round_no  INTEGER,
    payload   TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_round ON audit(table_id, round_no);
CREATE INDEX IF NOT EXISTS audit_ts ON audit(ts);
CREATE INDEX IF NOT EXISTS audit_type ON audit(type);
"""
_TRIGGERS = {
    "audit_no_update": "CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit "
                       "BEGIN SELECT RAISE(ABORT, 'the audit log is append-only: UPDATE refused'); END;",
    "audit_no_delete": "CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit "
                       "BEGIN SELECT RAISE(ABORT, 'the audit log is append-only: DELETE refused'); END;",
}
_COLUMNS = "seq, ts, table_id, type, actor, round_no, payload, prev_hash, hash"


@dataclass(frozen=True, slots=True)
class Entry:
    """A record still to be written: the log assigns seq, time text and hashes."""

    type: str
    actor: str
    payload: dict
    round_no: int | None = None
    ts: float | None = None
    table_id: str | None = None


def _row(row: tuple) -> AuditRecord:
    return AuditRecord(*row)


def _insert(conn: sqlite3.Connection, record: AuditRecord) -> None:
    conn.execute(f"INSERT INTO audit ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?)",
                 (record.seq, record.ts, record.table_id, record.type, record.actor, record.round_no,
                  record.payload, record.prev_hash, record.hash))


class AuditLog:
    """The log of one data directory; safe to share between threads.

    Appends take SQLite's write lock (``BEGIN IMMEDIATE``) before reading the chain
    head, so two processes appending at once (the kiosk and an admin command) still
    produce one unbroken chain.
    """

    def __init__(self, path: str | Path, table_id: str = "", *, create: bool = True, read_only: bool = False):
        """``read_only``: for the commands that only read (verify, report, an unsigned export, the
        checks) — surveillance runs them on a seized disk or a write-protected copy, where a
        read-write open fails, and a forensic copy must not gain files.  Implies ``create=False``."""
        self.path = Path(path)
        self.table_id = table_id
        self._lock = threading.Lock()
        create = create and not read_only
        if not create and not self.path.exists():
            raise AuditError(f"no audit log at {self.path}; check --data-dir (the kiosk creates "
                             f"{AUDIT_FILE} there on first start)")
        try:
            if read_only:
                self._conn = self._connect_read_only()
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._conn = self._connect()
            if create:
                self._ensure_schema()
            elif not self._has_table():
                raise AuditError(f"{self.path} holds no audit table; it is not a niuniu audit log")
        except sqlite3.DatabaseError as exc:
            if read_only:
                raise AuditError(f"cannot open the audit log {self.path} to read: {exc}; is it a niuniu "
                                 "audit database?") from None
            raise AuditError(f"cannot open the audit log {self.path}: {exc}; is it a niuniu "
                             "audit database and is the disk writable?") from None

    @classmethod
    def in_dir(cls, data_dir: str | Path, table_id: str = "", *, create: bool = True,
               read_only: bool = False) -> "AuditLog":
        return cls(Path(data_dir) / AUDIT_FILE, table_id, create=create, read_only=read_only)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        conn.text_factory = _stored_text
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        return conn

    def _connect_read_only(self) -> sqlite3.Connection:
        """A connection that cannot write, and creates no file where it need not.

        A WAL database opened ``mode=ro`` needs its ``-wal`` and ``-shm`` beside it: on
        read-only media without them the open fails, and on a writable disk SQLite creates
        them and, read-only, cannot remove them again.  While a ``-wal`` exists a kiosk has
        the log open (or was killed with records still in it): read through it, with
        SQLite's locks, or those records go unseen.  Without one the database file holds
        every record and no writer has it open, so it is read as ``immutable`` — no locks,
        no files made.  (A kiosk starting during the read writes to a new ``-wal``, which
        this read does not see: as if it had finished a moment earlier.)"""
        wal = self.path.with_name(self.path.name + "-wal")
        shm = self.path.with_name(self.path.name + "-shm")
        query = "mode=ro" if wal.exists() else "mode=ro&immutable=1"
        try:
            conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?{query}", uri=True, timeout=30,
                                   isolation_level=None, check_same_thread=False)
            conn.text_factory = _stored_text
            conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone()     # the open happens here
        except sqlite3.OperationalError:
            if wal.exists() and not shm.exists():
                raise AuditError(f"{wal.name} beside {self.path} holds records not yet in the database file, and "
                                 f"without {shm.name} beside it they cannot be read from read-only media: copy the "
                                 "data directory (all of its audit.sqlite3* files) to a writable disk and run this "
                                 "on the copy") from None
            raise
        return conn

    def _has_table(self) -> bool:
        return self._conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='audit'").fetchone() is not None

    def guards_present(self) -> bool:
        names = {r[0] for r in self._conn.execute("SELECT name FROM sqlite_master WHERE type='trigger'")}
        return set(_TRIGGERS) <= names

    def _ensure_schema(self) -> None:
        existed = self._has_table()
        missing = existed and not self.guards_present()
        self._conn.executescript(_SCHEMA)
        for sql in _TRIGGERS.values():
            self._conn.execute(sql)
        if missing:
            self.append(AuditType.GUARDS_RESTORED, "system",
                        {"detail": "append-only triggers were missing at open and were recreated; "
                                   "run `niuniu audit verify` to check the chain"})

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # -- writing ---------------------------------------------------------------------------

    def append(self, type: str, actor: str, payload: dict | None = None, *, round_no: int | None = None,
               ts: float | None = None, table_id: str | None = None) -> AuditRecord:
        """Add one record and return it once it is durably on disk."""
        return self.append_many([Entry(type, actor, payload or {}, round_no, ts, table_id)])[0]

    def append_many(self, entries: Iterable["Entry"]) -> list[AuditRecord]:
        """Add several records in one transaction: all of them are on disk, or none.

        A settlement is one ``round_settled`` plus a line per seat; a crash must never
        leave half of it.
        """
        texts = [(entry, canonical_json(entry.payload)) for entry in entries]
        written: list[AuditRecord] = []

        def insert(conn: sqlite3.Connection) -> None:
            head = conn.execute("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
            seq, prev = (head[0] + 1, head[1]) if head else (1, GENESIS_HASH)
            for entry, text in texts:
                draft = AuditRecord(seq, utc_iso(entry.ts),
                                    self.table_id if entry.table_id is None else entry.table_id,
                                    str(entry.type), entry.actor or "system", entry.round_no, text, prev, "")
                record = replace(draft, hash=draft.expected_hash())
                _insert(conn, record)
                written.append(record)
                seq, prev = seq + 1, record.hash
        self._transaction(insert)
        return written

    def _transaction(self, work) -> None:
        """Run ``work(conn)`` in one write transaction: committed whole, or rolled back.

        SQLite rolls a transaction back by itself when the disk refuses a write (a full
        disk at an INSERT or at COMMIT); a ROLLBACK after that fails ("cannot rollback -
        no transaction is active"), and that second error used to replace the real one in
        what the dealer and the journal were told.  So the rollback is only issued while a
        transaction is open, and a refused write becomes an :class:`AuditDiskError` that
        names the cause and the fix."""
        with self._lock:
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    work(conn)
                    conn.execute("COMMIT")
                except BaseException as exc:
                    if conn.in_transaction:
                        try:
                            conn.execute("ROLLBACK")
                        except sqlite3.Error as undo:   # keep the first error: it is the cause
                            exc.add_note(f"the rollback after it failed too: {undo}")
                    raise
            except sqlite3.OperationalError as exc:
                if isinstance(exc, AuditError) or not disk_refused(exc):
                    raise
                raise AuditDiskError(f"{exc}: nothing was written to the audit log {self.path}; free space on the "
                                     f"data disk ({self.path.parent}), or check the disk if it is not full, "
                                     "then try again") from exc

    def extend(self, records: Iterable[AuditRecord]) -> int:
        """Append records this log wrote once and lost — the collector's copy of the tail a dead
        disk took with it — exactly as they were hashed, so the chain reads as if never lost.

        Each must follow the head (next seq, its link, its own hash); one that does not stops
        the whole call, nothing appended (:class:`AuditError`).  Returns how many."""
        count = 0

        def insert(conn: sqlite3.Connection) -> None:
            nonlocal count
            head = conn.execute("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
            seq, prev = head if head else (0, GENESIS_HASH)
            for record in records:
                if record.seq != seq + 1 or record.prev_hash != prev or record.expected_hash() != record.hash:
                    raise AuditError(f"record seq {record.seq} does not follow the log's head (seq {seq}); "
                                     "nothing was appended")
                _insert(conn, record)
                seq, prev, count = record.seq, record.hash, count + 1
        self._transaction(insert)
        return count

    # -- reading ---------------------------------------------------------------------------

    def _query(self, sql: str, params: Iterable = ()) -> list[AuditRecord]:
        with self._lock:
            return [_row(r) for r in self._conn.execute(sql, tuple(params))]

    @staticmethod
    def _range(since: str | None, until: str | None, upto_seq: int | None) -> tuple[list[str], list]:
        where, params = [], []
        for clause, value in (("ts >= ?", since), ("ts <= ?", until), ("seq <= ?", upto_seq)):
            if value is not None:
                where.append(clause), params.append(value)
        return where, params

    def count(self, *, since: str | None = None, until: str | None = None, upto_seq: int | None = None) -> int:
        where, params = self._range(since, until, upto_seq)
        sql = "SELECT COUNT(*) FROM audit" + (f" WHERE {' AND '.join(where)}" if where else "")
        with self._lock:
            return self._conn.execute(sql, params).fetchone()[0]

    def seq_span(self, *, since: str | None = None, until: str | None = None) -> tuple[int, int] | None:
        """The first and last seq of the records in a time range (None: it holds none), read
        off the time index alone: a reader of a short period (the shift report) then pages
        through that period's seqs, not the whole log's."""
        where, params = self._range(since, until, None)
        sql = "SELECT MIN(seq), MAX(seq) FROM audit" + (f" WHERE {' AND '.join(where)}" if where else "")
        with self._lock:
            first, last = self._conn.execute(sql, params).fetchone()
        return None if first is None else (first, last)

    def table(self) -> str:
        """The table this log belongs to: its own id, or — a console opens it without one — that of
        the newest record naming one; "" for a log of no table's records yet."""
        if self.table_id:
            return self.table_id
        with self._lock:
            row = self._conn.execute("SELECT table_id FROM audit WHERE table_id != '' ORDER BY seq DESC LIMIT 1"
                                     ).fetchone()
        return row[0] if row else ""

    def tables(self) -> list[str]:
        """Every table id the log holds records of (sorted), to name them when a typed one is not there."""
        with self._lock:
            return [row[0] for row in self._conn.execute(
                "SELECT DISTINCT table_id FROM audit WHERE table_id != '' ORDER BY table_id")]

    def links(self, seqs: Iterable[int]) -> dict[int, tuple[str, str]]:
        """``{seq: (prev_hash, hash)}`` of the given records that exist: what a reader of a few
        records (the shift report) needs to check they are still linked to their neighbours,
        without walking the chain."""
        wanted = sorted({s for s in seqs if _fits(s)})
        found: dict[int, tuple[str, str]] = {}
        with self._lock:
            for at in range(0, len(wanted), 500):      # under SQLite's bound-parameter limit
                chunk = wanted[at:at + 500]
                sql = f"SELECT seq, prev_hash, hash FROM audit WHERE seq IN ({','.join('?' * len(chunk))})"
                found.update((seq, (prev, digest)) for seq, prev, digest in self._conn.execute(sql, chunk))
        return found

    def last(self) -> AuditRecord | None:
        rows = self._query(f"SELECT {_COLUMNS} FROM audit ORDER BY seq DESC LIMIT 1")
        return rows[0] if rows else None

    def records(self, *, since: str | None = None, until: str | None = None,
                types: Iterable[str] | None = None, round_no: int | None = None,
                table_id: str | None = None, after_seq: int = 0, upto_seq: int | None = None,
                limit: int | None = None, newest_first: bool = False) -> list[AuditRecord]:
        if round_no is not None and not _fits(round_no):
            return []               # no round is numbered beyond what SQLite stores
        where, params = self._range(since or None, until or None, upto_seq)
        where.insert(0, "seq > ?"), params.insert(0, after_seq)
        if round_no is not None:
            where.append("round_no = ?"), params.append(round_no)
        if table_id is not None:
            where.append("table_id = ?"), params.append(table_id)
        if types is not None:
            kinds = [str(t) for t in types]
            where.append(f"type IN ({','.join('?' * len(kinds))})"), params.extend(kinds)
        sql = f"SELECT {_COLUMNS} FROM audit WHERE {' AND '.join(where)} ORDER BY seq"
        if newest_first:
            sql += " DESC"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return self._query(sql, params)

    def round_numbers(self, *, table_id: str | None = None, since: str | None = None, until: str | None = None,
                      before: int | None = None, limit: int = 50,
                      types: Iterable[str] = (AuditType.ROUND_START,)) -> list[int]:
        """Distinct round numbers with a record of one of ``types`` (in the range), newest
        first (one indexed query)."""
        if before is not None and not _fits(before):
            if before < 0:
                return []
            before = None           # every stored round is below it
        types = [str(t) for t in types]
        where = [f"type IN ({', '.join('?' * len(types))})", "round_no IS NOT NULL"]
        params: list = list(types)
        for clause, value in (("table_id = ?", table_id), ("ts >= ?", since), ("ts <= ?", until),
                              ("round_no < ?", before)):
            if value is not None:
                where.append(clause), params.append(value)
        sql = (f"SELECT round_no FROM audit WHERE {' AND '.join(where)} GROUP BY round_no "
               f"ORDER BY round_no DESC LIMIT {int(limit)}")
        with self._lock:
            return [row[0] for row in self._conn.execute(sql, params)]

    def iter_records(self, *, since: str | None = None, until: str | None = None, after_seq: int = 0,
                     upto_seq: int | None = None, types: Iterable[str] | None = None,
                     batch: int = 2000) -> Iterator[AuditRecord]:
        """Records in seq order, read a batch at a time: a year's log does not fit in a Pi's memory."""
        after = after_seq
        types = list(types) if types is not None else None
        while True:
            rows = self.records(since=since, until=until, after_seq=after, upto_seq=upto_seq, types=types,
                                limit=batch)
            if not rows:
                return
            yield from rows
            after = rows[-1].seq

    def verify(self, *, after: tuple[int, str] | None = None) -> VerifyResult:
        """Walk the chain; stop at the first record whose seq, link or hash is wrong.

        ``after``: ``(seq, hash)`` of a record an earlier walk found sound; only the records
        after it are walked (``count`` then counts those)."""
        start_seq, prev = after or (0, GENESIS_HASH)
        expected_seq, count = start_seq + 1, 0
        guards = self.guards_present()
        for record in self.iter_records(after_seq=start_seq):
            if record.seq != expected_seq:
                return VerifyResult(count, expected_seq,
                                    f"record {expected_seq} is missing (next is {record.seq}): deleted",
                                    guards, prev)
            if record.prev_hash != prev:
                return VerifyResult(count, record.seq, "previous-hash link does not match the record "
                                    "before it: a record was removed or replaced", guards, prev)
            if record.expected_hash() != record.hash:
                return VerifyResult(count, record.seq, "hash does not match the record's content: "
                                    "the record was edited", guards, prev)
            prev, expected_seq, count = record.hash, expected_seq + 1, count + 1
        return VerifyResult(count, None, "", guards, prev)

    # -- export ----------------------------------------------------------------------------

    def export_text(self, fmt: str, *, since: str | None = None, until: str | None = None,
                    upto_seq: int | None = None, broken: list | None = None) -> Iterator[str]:
        """The records in a time range (up to ``upto_seq``) as CSV or JSON text, a record a
        piece, read a batch at a time: an export of a year's log needs no more memory than
        one of an hour.  Each record keeps its hashes, so a copy can be checked later
        against the chain head recorded at export time.

        ``broken``: a list that gets ``(record, problem)`` of each record written that cannot be
        read or fails its hash (:meth:`AuditRecord.problem`): it is exported as stored, and
        whoever exports must be told (QA51 review M5), in the same pass over the log."""
        if fmt not in ("csv", "json"):
            raise AuditError(f"export format {fmt!r} is not csv or json")
        rows = self.iter_records(since=since, until=until, upto_seq=upto_seq)
        if broken is not None:
            rows = noting_broken(rows, broken)
        if fmt == "json":
            yield '{"records": ['
            count = 0
            for r in rows:
                item = r.to_json()
                # a damaged payload may hold bytes that were not UTF-8 (lone surrogates): escaped,
                # they go out as ASCII and come back (from_json) as the very text hashed
                yield ("," if count else "") + "\n" + json.dumps(item, ensure_ascii="damaged" in item)
                count += 1
            yield f'\n], "count": {count}}}\n'
            return
        line = io.StringIO()
        writer = csv.writer(line, lineterminator="\n")

        def text(row: list) -> str:
            writer.writerow(row)
            out = line.getvalue()
            line.seek(0), line.truncate()
            return out
        yield text(["seq", "ts", "table_id", "type", "actor", "round", "payload", "prev_hash", "hash"])
        for r in rows:
            yield text([r.seq, r.ts, r.table_id, r.type, r.actor, "" if r.round_no is None else r.round_no,
                        r.payload, r.prev_hash, r.hash])

    def export(self, out: io.TextIOBase, fmt: str, *, since: str | None = None,
               until: str | None = None, upto_seq: int | None = None, broken: list | None = None) -> int:
        """Write :meth:`export_text` to ``out``, up to ``upto_seq`` (default: the head as it is
        now); return how many records."""
        if upto_seq is None:
            head = self.last()
            upto_seq = head.seq if head else 0
        for piece in self.export_text(fmt, since=since, until=until, upto_seq=upto_seq, broken=broken):
            out.write(piece)
        return self.count(since=since, until=until, upto_seq=upto_seq)


def noting_broken(records: Iterable[AuditRecord], broken: list) -> Iterator[AuditRecord]:
    """``records``, each that :meth:`AuditRecord.problem` finds wrong noted in ``broken``: the
    export notes them in the pass that writes them, and a check before an export with no pass
    of its own (the review page's) in the same words."""
    for record in records:
        problem = record.problem()
        if problem is not None:
            broken.append((record, problem))
        yield record


def damaged_words(damaged: list[AuditRecord], kind: str = "record") -> str:
    """The first of ``damaged`` (records that cannot be read) in :class:`DamagedRecord`'s words,
    and how many more: naming each would bury the one line that says what to do, and a backup
    and a key check count them alike."""
    first, more = damaged[0], len(damaged) - 1
    return f"{DamagedRecord(first, first.damage)}" + (f" ({more} more {kind}{'s' if more > 1 else ''} cannot be "
                                                      "read)" if more else "")
