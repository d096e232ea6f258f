"""The kiosk's own changeable state: accounts, sessions, failed-login counters, small settings.

It lives in ``kiosk.sqlite3`` beside, never inside, the audit log: accounts are
edited and counters expire, which the append-only log must refuse.  Everything
that matters to a dispute is also written to the audit log.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import sqlite3
import tempfile
from pathlib import Path

from flask import Flask, current_app, g, jsonify, render_template, request

from kiosk.audit import disk_refused
from scoring.errors import NiuniuError

KIOSK_DB = "kiosk.sqlite3"
SECRET_FILE = "secret_key"
SETUP_CODE_FILE = "setup_code"

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    id            INTEGER PRIMARY KEY,
    username      TEXT NOT NULL UNIQUE COLLATE NOCASE,
    role          TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    pin_hash      TEXT,
    active        INTEGER NOT NULL DEFAULT 1,
    created_at    TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    session_gen   INTEGER NOT NULL DEFAULT 0  -- see _migrate and auth.end_sessions
);
CREATE TABLE IF NOT EXISTS failures (
    kind  TEXT NOT NULL,          -- 'login', 'pin', or 'pin_cleared' (a 'pin' followed by a right PIN)
    key   TEXT NOT NULL,          -- 'user:<name>' or 'ip:<addr>'
    ts    REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS failures_key ON failures(kind, key, ts);
CREATE TABLE IF NOT EXISTS sessions (
    id       TEXT PRIMARY KEY,    -- the random id a session cookie carries (auth.load_user)
    user_id  INTEGER NOT NULL,
    started  REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS throttle_log (
    kind     TEXT NOT NULL,       -- 'login'
    key      TEXT NOT NULL,       -- as in failures
    logged   REAL NOT NULL,       -- when the last record of refused attempts was written
    refused  INTEGER NOT NULL,    -- attempts refused since then, not each written
    PRIMARY KEY (kind, key)
);
CREATE TABLE IF NOT EXISTS settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""
# A database missing any of these is given the schema again (every statement is "IF NOT
# EXISTS"), which is how one from before ``sessions`` and ``throttle_log`` gets them.
_SCHEMA_NAMES = frozenset({"users", "failures", "failures_key", "sessions", "throttle_log", "settings"})


def connect(data_dir: str | Path, *, create: bool = True) -> sqlite3.Connection:
    """The kiosk database of ``data_dir``, made ready (WAL, tables, columns) where it is not
    yet; with ``create=False`` (a console command that only reads) a missing one is an
    error, as ``AuditLog`` does for the log: a mistyped --data-dir must not make a new,
    empty database there and answer "no accounts".

    A database already made ready is only read here, never written: a console command (or
    a stream's account check) that opens it on a full disk still reads the accounts."""
    path = Path(data_dir) / KIOSK_DB
    if not create and not path.exists():
        raise NiuniuError(f"no kiosk database at {path}; check --data-dir (the kiosk creates it on first start, "
                          "`niuniu users add` before that)")
    path.parent.mkdir(parents=True, exist_ok=True)
    made = not path.exists()
    conn = None
    try:
        conn = _open(path)
        if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            conn.execute("PRAGMA journal_mode=WAL")
        have = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")}
        if not _SCHEMA_NAMES <= have:
            conn.executescript(f"BEGIN IMMEDIATE; {_SCHEMA} COMMIT;")      # all the tables or none
        _migrate(conn)
    except sqlite3.DatabaseError as exc:
        if conn is not None:
            conn.close()
        if made:
            _unmake(path)
        if isinstance(exc, sqlite3.OperationalError):
            raise        # a disk or permission problem: the caller knows the data directory's state
        # A damaged or foreign file ("file is not a database"): one line with the fix, at the
        # kiosk's start as in `niuniu users`, not a traceback in a restart loop.
        raise NiuniuError(damaged_accounts(path, exc)) from None
    return conn


def _unmake(path: Path) -> None:
    """Remove the database this start began to make and could not finish (a full disk, a
    read-only mount): an empty ``kiosk.sqlite3`` beside the audit log reads as a first run at
    the next start, its setup code letting whoever types it make an administrator."""
    for name in (path.name, f"{path.name}-wal", f"{path.name}-shm", f"{path.name}-journal"):
        try:
            path.with_name(name).unlink(missing_ok=True)
        except OSError:
            pass        # what is left is an empty file, which the next start makes ready again


def write_refused(path: Path, exc: sqlite3.Error, *, again: str, what: str = "") -> str | None:
    """One line for a database of the data directory that SQLite would not open or write for a
    reason of the disk's or another program's, naming the file, why and the fix (``again``:
    what to do once fixed); None for any other reason, which the caller words.

    Shared by the audit log's start and the accounts' (``what``: "the accounts database "), so
    a full disk, a read-only mount or a sqlite3 shell holding the file reads the same whichever
    file met it first."""
    name = getattr(exc, "sqlite_errorname", None) or ""
    if disk_refused(exc):
        return (f"cannot write {what}{path}: {exc}; free space on the data disk ({path.parent}), or check the disk "
                f"if it is not full, then {again}")
    if name in ("SQLITE_BUSY", "SQLITE_LOCKED") or str(exc) == "database is locked":
        return (f"cannot write {what}{path}: another program holds it for writing ({exc}: a second kiosk or "
                f"`niuniu demo` on this data directory, a sqlite3 shell, a restore); stop that program, then {again}")
    if name.startswith("SQLITE_READONLY") or "readonly database" in str(exc):
        if _read_only_disk(path):
            return f"cannot write {what}{path}: it is on a read-only file system ({exc}): remount it read-write"
        from kiosk.backup import unwritable_file     # kiosk.backup imports this module

        return f"{unwritable_file(path)} ({exc})"
    return None


def _read_only_disk(path: Path) -> bool:
    try:
        return bool(os.statvfs(path.parent).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def damaged_accounts(path: Path, exc: Exception) -> str:
    """What to say of an accounts database SQLite cannot read as one."""
    return f"cannot open the accounts in {path}: {exc}; is it the kiosk's database? (restore it with `niuniu restore`)"


def account_roles(data_dir: str | Path) -> dict[str, int] | None:
    """How many accounts of each role ``data_dir``'s database holds (None: it has no
    database yet), read without writing or creating a file: ``niuniu check`` may run as
    another user than the kiosk, and a ``-shm`` it left behind, owned by that user, would
    stop the kiosk.  A damaged database is a :class:`NiuniuError` with the fix."""
    path = Path(data_dir) / KIOSK_DB
    if not path.exists():
        return None
    wal = path.with_name(path.name + "-wal")
    query = "mode=ro" if wal.exists() else "mode=ro&immutable=1"     # as AuditLog reads: no files made
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?{query}", uri=True, timeout=30)
        try:
            rows = conn.execute("SELECT role, COUNT(*) FROM users GROUP BY role").fetchall()
        finally:
            conn.close()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return {}
        raise NiuniuError(f"cannot read the accounts in {path}: {exc}; run the command as the kiosk's user "
                          "(sudo -u niuniu ...)") from None
    except sqlite3.DatabaseError as exc:
        raise NiuniuError(damaged_accounts(path, exc)) from None
    return dict(rows)


def _open(path: Path) -> sqlite3.Connection:
    """A connection that changes nothing in the file: what every request uses, the database
    having been made ready once, at start (:func:`init_app`)."""
    conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA synchronous=FULL")     # this connection's setting, not stored in the file
    return conn


def _migrate(conn: sqlite3.Connection) -> None:
    """Bring a database made by an older kiosk up to ``_SCHEMA`` (``CREATE TABLE IF NOT
    EXISTS`` leaves an existing table as it was).

    ``users.session_gen`` arrived with "a password reset ends the account's sessions":
    old accounts start at 0, the generation that cookies from before the change are read
    as carrying, so an upgrade logs nobody out and the first reset still ends them all.
    """
    columns = {row["name"] for row in conn.execute("PRAGMA table_info(users)")}
    if "session_gen" not in columns:
        try:
            conn.execute("ALTER TABLE users ADD COLUMN session_gen INTEGER NOT NULL DEFAULT 0")
        except sqlite3.OperationalError as exc:
            # The kiosk and a console command (niuniu users ...) may open an old database at
            # the same moment; whichever comes second finds the column already added.
            if "duplicate column" not in str(exc):
                raise


def get_db() -> sqlite3.Connection:
    """One connection per request, as in flaskr; closed by :func:`close_db`.

    It only opens the database, which :func:`init_app` made ready, so a request that reads
    writes nothing: on a full disk the pages that read (the dealer's screen with its AUDIT
    LOG FAILURE banner, the login page) still answer."""
    if "kiosk_db" not in g:
        g.kiosk_db = _open(Path(current_app.config["DATA_DIR"]) / KIOSK_DB)
    return g.kiosk_db


def close_db(_exc: BaseException | None = None) -> None:
    conn = g.pop("kiosk_db", None)
    if conn is not None:
        conn.close()


KEEPER = "niuniu.kiosk_db"


def init_app(app: Flask) -> None:
    """Make the database ready, and hold that connection open for the app's life.

    SQLite deletes a WAL database's ``-wal`` and ``-shm`` files when its last connection
    closes, and the next connection must make them again (the ``-shm`` is 32 KiB): on a
    full disk that fails, "disk I/O error", even for a read.  With a connection per request
    every page of the kiosk was then a 500 and no alarm reached the dealer.  The held
    connection keeps both files, so requests read the accounts whatever space is left."""
    app.extensions[KEEPER] = _ready_to_write(Path(app.config["DATA_DIR"]) / KIOSK_DB)
    app.teardown_appcontext(close_db)
    app.register_error_handler(sqlite3.OperationalError, _disk_refused)


def _ready_to_write(path: Path) -> sqlite3.Connection:
    """The kiosk's held connection, once the accounts have been seen to take a write.

    Opening a database the kiosk made before writes nothing, so a file SQLite may only read
    (a mount that lies to access(2), a sqlite3 shell holding its write lock) used to start a
    kiosk on which no one could log in, and a full disk ended the start in SQLite's
    traceback (QA52).  Either is now one line before the audit log's first record: a write
    begun and rolled back changes nothing in the file."""
    try:
        conn = connect(path.parent)
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("DELETE FROM settings WHERE 0")
            conn.execute("ROLLBACK")
        except BaseException:
            conn.close()
            raise
    except sqlite3.OperationalError as exc:
        said = write_refused(path, exc, what="the accounts database ", again="start the kiosk again") or \
            f"cannot open the accounts database {path}: {exc}; keep the data directory as it is and run niuniu " \
            "check on it"
        raise NiuniuError(f"{said}: the kiosk stopped before its first record") from None
    return conn


def _disk_refused(exc: sqlite3.OperationalError):
    """A request whose write the data disk refused (full, or failing): one line saying so and
    what to do, not a 500.  Other SQLite failures stay what they are (a 500 and a traceback
    in the journal): they are bugs.  (A refused audit-log write is an ``AuditError``, answered
    by the app's handler for those, which names the log.)"""
    if not disk_refused(exc):
        raise exc
    from kiosk.auth import wants_json

    message = (f"{exc}: the kiosk could not use its data directory {current_app.config['DATA_DIR']}; "
               "free space on the data disk (or check the disk, if it is not full), then try again")
    current_app.logger.error("%s (%s %s)", message, request.method, request.path)
    if wants_json():
        return jsonify(error=message), 503
    return render_template("error.html", code=503, message=message), 503


def get_setting(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
    return None if row is None else row["value"]


def set_setting(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT INTO settings(key, value) VALUES (?, ?) "
                 "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))


# What ``make`` writes in each private file, and so the only thing either may hold: 64 and 8
# lowercase hex digits (``secrets.token_hex``).  A file cut short by a power cut is most often
# empty, but some file systems (XFS, f2fs, exFAT, ext4 with data=writeback) leave one of the
# right length filled with NUL bytes instead: a key anyone can guess, so the length alone
# proves nothing.
MADE_LENGTH = {SECRET_FILE: 64, SETUP_CODE_FILE: 8}


def private_file_problem(path: Path) -> str | None:
    """Why the private file at ``path`` cannot be used as it is (None: it can, or it does
    not exist yet), in words for ``niuniu check`` and the kiosk's journal.

    An empty secret key is no key (every login fails, HTTP 500), one of NUL bytes is a key
    anyone can sign sessions with, and an empty setup code is a code anyone can type: none
    may ever be used."""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        return f"{path} is not text (damaged)"
    except OSError as exc:
        raise NiuniuError(f"cannot read {path}: {exc.strerror or exc}; it must belong to the kiosk's user "
                          f"(sudo chown niuniu:niuniu {path}), or run the command as that user") from None
    if not text:
        return f"{path} is empty (a start cut short, by a power cut or a full disk?)"
    if not re.fullmatch(f"[0-9a-f]{{{MADE_LENGTH[path.name]}}}", text):
        return (f"{path} does not hold the {MADE_LENGTH[path.name]} hex digits it is made with "
                f"(damaged, by a power cut while it was written?)")
    return None


def _private_file(path: Path, make) -> str:
    """Read a secret from ``path``, creating it readable by the owner only on first use.

    It is written whole or not at all (a temporary file, synced, then renamed over), and a
    file found empty, cut short or otherwise damaged is made again, said once in the journal:
    these files hold nothing worth keeping (a new secret key logs everyone out once; a new
    setup code is printed at start), and used as they are they lock every account out or let
    anyone in."""
    problem = private_file_problem(path)
    if problem is None and path.exists():
        return path.read_text(encoding="utf-8").strip()
    if problem is not None:
        log.warning("%s: making a new one", problem)
    path.parent.mkdir(parents=True, exist_ok=True)
    value = make()
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")     # made 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(value + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    _sync_dir(path.parent)
    return value


def _sync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` survive a power cut (where the system allows it)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def secret_key(data_dir: str | Path) -> str:
    """The session-signing key: random per device, kept across restarts so a restart
    does not log every dealer out, never shipped in the code."""
    return _private_file(Path(data_dir) / SECRET_FILE, lambda: secrets.token_hex(32))


def setup_code(data_dir: str | Path) -> str:
    """A one-time code the first-run admin form asks for.

    Without it, whoever reached the screen first after installation would own the
    device; the code is printed only on the console of the process that started it.
    """
    return _private_file(Path(data_dir) / SETUP_CODE_FILE, lambda: secrets.token_hex(4))


def forget_setup_code(data_dir: str | Path) -> None:
    (Path(data_dir) / SETUP_CODE_FILE).unlink(missing_ok=True)
