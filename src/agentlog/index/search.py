"""Full-text search over the index (SQLite FTS5, ranked by bm25).

Indexed: user prompts, assistant text, tool names, inputs and outputs, and
(only with ``reasoning=True``) reasoning.  Meta/injected messages are not
searched.  Query syntax is FTS5's: words (all must match), ``"a phrase"``,
``prefix*``, ``OR``, ``NOT``, ``NEAR(a b)``.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

import msgspec

from agentlog.errors import UsageError
from agentlog.index.db import conn_path, schema_matches
from agentlog.index.store import iso
from agentlog.query import TEXT_CONTAINS_SQL, sql_functions

MARK_START, MARK_END = "\x02", "\x03"
"""Snippet highlight markers (control characters never found in logs)."""


class Hit(msgspec.Struct, kw_only=True):
    """One search result: where it is and a snippet (markers around matches)."""

    session_key: str
    session_title: str | None
    agent: str
    message_id: str
    role: str
    timestamp: datetime | None
    part_type: str
    tool: str | None
    snippet: str
    rank: float


def search(
    conn: sqlite3.Connection,
    query: str,
    agent: str | None = None,
    project: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    role: str | None = None,
    tool: str | None = None,
    reasoning: bool = False,
    limit: int = 20,
) -> list[Hit]:
    """Hits among messages at or after ``since`` and before ``until`` (aware
    datetimes) in sessions whose folder contains ``project``
    (:func:`agentlog.query.text_contains`).  Best matches first (equal ranks:
    newest first, then by session, message and part, so every index of the same
    logs gives the same order).  Raises :class:`~agentlog.errors.UsageError` for
    a query FTS5 cannot parse."""
    if not query.strip():
        raise UsageError("empty search query")
    sql_functions(conn)
    where, params = ["parts_fts MATCH ?", "m.hidden = 0", "m.replayed = 0"], [query]
    if not reasoning:
        where.append("p.type != 'reasoning'")
    for clause, value in (
        ("s.agent = ?", agent),
        (f"{TEXT_CONTAINS_SQL}(s.cwd, ?)", project or None),
        ("m.timestamp >= ?", iso(since)),
        ("m.timestamp < ?", iso(until)),
        ("m.role = ?", role),
        ("p.tool = ?", tool),
    ):
        if value is not None:
            where.append(clause)
            params.append(value)
    sql = f"""
        SELECT m.session_key, s.title, s.agent, m.id, m.role, m.timestamp, p.type, p.tool,
               snippet(parts_fts, 0, '{MARK_START}', '{MARK_END}', '…', 16), bm25(parts_fts)
        FROM parts_fts
        JOIN parts p ON p.rowid = parts_fts.rowid
        JOIN messages m ON m.rowid = p.message_rowid
        JOIN sessions s ON s.key = m.session_key
        WHERE {" AND ".join(where)}
        ORDER BY bm25(parts_fts), m.timestamp DESC, m.session_key, m.id, p.idx LIMIT ?"""
    try:
        rows = conn.execute(sql, (*params, limit)).fetchall()
    except sqlite3.OperationalError as exc:
        if not any(word in str(exc) for word in ("locked", "busy", "disk", "readonly")) and schema_matches(
            Path(conn_path(conn))
        ):
            raise UsageError(
                f"cannot parse search query {query!r} ({exc}); "
                'quote phrases and special characters: "like this"'
            ) from None
        raise
    return [
        Hit(
            session_key=r[0],
            session_title=r[1],
            agent=r[2],
            message_id=r[3],
            role=r[4],
            timestamp=datetime.fromisoformat(r[5]) if r[5] else None,
            part_type=r[6],
            tool=r[7],
            snippet=r[8],
            rank=r[9],
        )
        for r in rows
    ]
