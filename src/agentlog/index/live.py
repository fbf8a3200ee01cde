"""Index reads for the live surfaces: a session's source file and its last messages."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from agentlog.index import queries
from agentlog.index.store import Store
from agentlog.model import Message


def source_paths(conn: sqlite3.Connection, keys: Sequence[str]) -> dict[str, str]:
    """Session key → the path of the source that defines it."""
    out: dict[str, str] = {}
    for i in range(0, len(keys), 500):
        chunk = list(keys[i : i + 500])
        out.update(
            conn.execute(
                f"""SELECT s.key, src.path FROM sessions s JOIN sources src ON src.id = s.source_id
                    WHERE s.key IN ({",".join("?" * len(chunk))})""",
                chunk,
            ).fetchall()
        )
    return out


def last_messages(conn: sqlite3.Connection, key: str, n: int) -> list[Message]:
    """The last ``n`` messages of session ``key`` (as a reader sees them), in order."""
    rowids = [
        r[0]
        for r in conn.execute(
            "SELECT rowid FROM messages WHERE session_key = ? ORDER BY rowid DESC LIMIT ?", (key, n)
        )
    ]
    return Store(conn).messages_by_rowid(rowids[::-1])


def messages_after(conn: sqlite3.Connection, key: str, rowid: int) -> tuple[list[Message], int]:
    """Session ``key``'s messages stored after ``rowid`` (in order) and the last rowid."""
    return queries.messages_after(conn, key, rowid, limit=-1, include_hidden=True)
