"""The kiosk's start on an accounts database it cannot use (QA52): a full disk, a file SQLite
may only read, a sqlite3 shell holding its write lock.  Each stops `niuniu kiosk` (and `niuniu
demo`, `niuniu users`) with one line naming the file, why and the fix, before the audit log's
first record, and leaves the accounts as they were: no traceback of SQLite's, no half-made
database that the next start would take for a first run."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path

import pytest

from kiosk import db
from kiosk.audit import AuditType
from kiosk.backup import unwritable_file
from kiosk_testing import write_demo
from test_disk_full import disk_full
from test_kiosk_start_files import types
from test_kiosk_start_qa52 import kiosk, scripted
from test_preflight import data as data_dir

STOPPED = "the kiosk stopped before its first record"


@pytest.fixture
def data(tmp_path) -> Path:
    """A data directory a kiosk has run on: its log, its accounts, its secret key."""
    folder = data_dir(tmp_path)
    db.connect(folder).close()
    db.secret_key(folder)
    return folder


def accounts_on_a_full_disk(monkeypatch) -> None:
    """Every opening of the accounts meets a full disk: SQLite cannot make the ``-shm`` it reads
    a WAL database through ("disk I/O error", as on the QA52 tmpfs with 40 KB free), nor grow a
    new database's file.  The audit log, opened elsewhere, is left its room."""
    real = db.connect

    def full(*args, **kwargs):
        with disk_full():
            return real(*args, **kwargs)
    monkeypatch.setattr("kiosk.db.connect", full)


def accounts_connection(monkeypatch, pragma: str) -> None:
    """The kiosk's own connections to its accounts, with one more setting of SQLite's."""
    real = db._open

    def opened(path):
        conn = real(path)
        conn.execute(pragma)
        return conn
    monkeypatch.setattr("kiosk.db._open", opened)


def kiosk_must_not_run(monkeypatch) -> None:
    """The kiosk may not get as far as its threads: where it does, the test says so (and ends)."""
    def started(*args, **kwargs):
        raise AssertionError("the kiosk started on accounts it cannot write")
    monkeypatch.setattr("kiosk.commands._retention", started)


def test_a_full_disk_stops_the_kiosk_with_one_line_and_the_accounts_as_they_were(tmp_path, data, runner,
                                                                                  monkeypatch):
    scripted(monkeypatch)
    accounts = (data / db.KIOSK_DB).read_bytes()
    accounts_on_a_full_disk(monkeypatch)
    code, out, err = kiosk(runner, tmp_path, data)
    assert code == 2 and err.count("\n") == 1, err
    assert (f"niuniu kiosk: error: cannot write the accounts database {data / db.KIOSK_DB}: disk I/O error; free space "
            f"on the data disk ({data}), or check the disk if it is not full, then start the kiosk again: {STOPPED}"
            in err), err
    assert types(data) == [AuditType.KIOSK_START]       # the fixture's own: no kiosk_start, no kiosk_stop
    assert (data / db.KIOSK_DB).read_bytes() == accounts


def test_accounts_the_full_disk_left_half_made_are_not_left_to_read_as_a_first_run(tmp_path, runner, monkeypatch):
    """The first start on a new data directory: the database it began is taken away again, so
    the next start (with room) makes it whole rather than finding an empty file."""
    data = data_dir(tmp_path)
    scripted(monkeypatch)
    accounts_on_a_full_disk(monkeypatch)
    code, out, err = kiosk(runner, tmp_path, data)
    assert code == 2 and err.count("\n") == 1, err
    assert f"cannot write the accounts database {data / db.KIOSK_DB}: " in err and "free space on the data disk" in err
    assert not any(data.glob(f"{db.KIOSK_DB}*")), sorted(p.name for p in data.iterdir())


def test_accounts_sqlite_may_only_read_stop_the_kiosk_before_anyone_is_locked_out(tmp_path, data, runner,
                                                                                  monkeypatch):
    """A file SQLite opened read-only (a mount that lies to access(2), as the kiosk runs as root)
    was only read at start: the kiosk came up, and every login then failed."""
    scripted(monkeypatch)
    kiosk_must_not_run(monkeypatch)
    accounts_connection(monkeypatch, "PRAGMA query_only = 1")     # SQLite's SQLITE_READONLY
    code, out, err = kiosk(runner, tmp_path, data)
    assert code == 2 and err.count("\n") == 1, err
    path = data / db.KIOSK_DB
    assert f"{unwritable_file(path)} (attempt to write a readonly database): {STOPPED}" in err, err
    assert types(data) == [AuditType.KIOSK_START]


def test_accounts_another_program_is_writing_stop_the_kiosk_with_one_line(tmp_path, data, runner, monkeypatch):
    scripted(monkeypatch)
    kiosk_must_not_run(monkeypatch)
    accounts_connection(monkeypatch, "PRAGMA busy_timeout = 0")    # SQLite's answer now, not after 30 s
    holder = sqlite3.connect(data / db.KIOSK_DB, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")       # a sqlite3 shell, `niuniu users add` halfway
    try:
        code, out, err = kiosk(runner, tmp_path, data)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert code == 2 and err.count("\n") == 1, err
    assert (f"cannot write the accounts database {data / db.KIOSK_DB}: another program holds it for writing "
            "(database is locked: " in err), err
    assert f"stop that program, then start the kiosk again: {STOPPED}" in err
    assert types(data) == [AuditType.KIOSK_START]


def test_the_demo_on_a_full_disk_stops_with_the_same_line(tmp_path, runner, monkeypatch):
    demo, data = tmp_path / "demo", tmp_path / "data"
    write_demo(demo, [{"banker": "4S 6H QD 9C 9H", "1": "KS QS JS 10S 10H"}], dealt=3)
    scripted(monkeypatch)
    accounts_on_a_full_disk(monkeypatch)
    code, out, err = runner(["demo", "--dataset", str(demo), "--data-dir", str(data), "--port", "0"])
    assert code == 2 and err.count("\n") == 1 and not out, err
    assert f"niuniu demo: error: cannot write the accounts database {data / db.KIOSK_DB}: " in err
    assert "free space on the data disk" in err and STOPPED in err
    assert not any(data.glob(f"{db.KIOSK_DB}*"))        # no demo accounts, half-made or whole


def test_the_console_says_a_full_disk_not_a_database_to_restore(data, runner, monkeypatch):
    """`niuniu users` told the technician to restore accounts that were whole."""
    accounts = (data / db.KIOSK_DB).read_bytes()
    accounts_on_a_full_disk(monkeypatch)
    monkeypatch.setattr("sys.stdin", io.StringIO("pass-word-123\n"))
    for argv in (["users", "list"], ["users", "add", "--username", "abc", "--role", "dealer", "--password-stdin"]):
        code, out, err = runner([*argv, "--data-dir", str(data)])
        assert code == 2 and err.count("\n") == 1 and not out, err
        assert (f"niuniu users: error: cannot write the accounts database {data / db.KIOSK_DB}: disk I/O error; "
                f"free space on the data disk ({data}), or check the disk if it is not full, then run the command "
                "again" in err), err
        assert "niuniu restore" not in err
    assert types(data) == [AuditType.KIOSK_START]
    assert (data / db.KIOSK_DB).read_bytes() == accounts
