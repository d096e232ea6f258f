"""Tampering with the audit log's database the way someone with the disk could, for the
checks that must notice it (evidence, exports)."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path


@contextlib.contextmanager
def _unguarded(path: Path):
    """The log's database with its append-only triggers dropped, put back as they were after:
    the log's own guards then say nothing of the change."""
    conn = sqlite3.connect(path)
    guards = [sql for (sql,) in conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger'")]
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        conn.execute(f"DROP TRIGGER {name}")
    try:
        yield conn
        for sql in guards:
            conn.execute(sql)
        conn.commit()
    finally:
        conn.close()


def edit_in_place(path: Path, seq: int, actor: str) -> None:
    """Change one record's actor with the guards dropped, leaving its stored hash as it was:
    the row no longer hashes to its hash column, which still matches every copy handed out."""
    with _unguarded(path) as conn:
        conn.execute("UPDATE audit SET actor = ? WHERE seq = ?", (actor, seq))


def rot_in_place(path: Path, seq: int, old: str, new: str) -> None:
    """Replace the first ``old`` in one record's payload with ``new``, its hash left as it was:
    bit rot that leaves the payload JSON ('1' 0x31 -> '9' 0x39 is one bit), which reads as
    before and only fails the record's hash."""
    with _unguarded(path) as conn:
        (payload,) = conn.execute("SELECT payload FROM audit WHERE seq = ?", (seq,)).fetchone()
        assert old in payload, payload
        conn.execute("UPDATE audit SET payload = ? WHERE seq = ?", (payload.replace(old, new, 1), seq))
