"""Tampering with the audit log's database the way someone with the disk could, for the
checks that must notice it (evidence, exports)."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def edit_in_place(path: Path, seq: int, actor: str) -> None:
    """Change one record's actor with the guards dropped, leaving its stored hash as it was:
    the row no longer hashes to its hash column, which still matches every copy handed out."""
    conn = sqlite3.connect(path)
    guards = [sql for (sql,) in conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger'")]
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        conn.execute(f"DROP TRIGGER {name}")
    conn.execute("UPDATE audit SET actor = ? WHERE seq = ?", (actor, seq))
    for sql in guards:
        conn.execute(sql)
    conn.commit()
    conn.close()
