"""Reading the index: sessions, one session in full, facts for ``agents``/``doctor``.

The CLI (and later the web viewer) read through these functions only.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any

import msgspec

from agentlog.errors import NotFound
from agentlog.index.store import Store, iso, session_from_row
from agentlog.model import SHORT_ID_PREFIXES, Diagnostics, Session, Usage
from agentlog.usage.calls import NOT_CONSUMPTION, Call, roots_of

USAGE_SUM = """
    COALESCE(SUM(u.input_tokens), 0), COALESCE(SUM(u.cache_read_tokens), 0),
    COALESCE(SUM(u.cache_write_5m_tokens), 0), COALESCE(SUM(u.cache_write_1h_tokens), 0),
    COALESCE(SUM(u.output_tokens), 0), COALESCE(SUM(u.reasoning_tokens), 0),
    COALESCE(SUM(u.web_search_requests), 0), SUM(u.cost_usd),
    CASE WHEN COUNT(DISTINCT u.cost_source) = 1 THEN MIN(u.cost_source) END
"""


def _usage(values: tuple[Any, ...]) -> Usage:
    return Usage(
        input_tokens=values[0],
        cache_read_tokens=values[1],
        cache_write_5m_tokens=values[2],
        cache_write_1h_tokens=values[3],
        output_tokens=values[4],
        reasoning_tokens=values[5],
        web_search_requests=values[6],
        cost_usd=values[7],
        cost_source=values[8],
    )


def list_sessions(
    conn: sqlite3.Connection,
    agent: str | None = None,
    project: str | None = None,
    since: datetime | None = None,
    include_children: bool = True,
    limit: int | None = None,
    include_empty: bool = False,
) -> list[Session]:
    """Session headers (no messages) with usage totals, newest first.

    ``project`` matches text in ``cwd`` (case-insensitive); ``since`` keeps
    sessions active at or after that time (aware datetime).  Sessions with no
    visible message and no usage (an empty or damaged file, a title-only file)
    are left out unless ``include_empty``."""
    where, params = ["1 = 1"], []
    if not include_empty:
        where.append(
            "(s.message_count > 0 OR EXISTS (SELECT 1 FROM messages m JOIN usage u ON u.message_rowid = m.rowid"
            " WHERE m.session_key = s.key))"
        )
    if agent:
        where.append("s.agent = ?")
        params.append(agent)
    if project:
        where.append("instr(lower(COALESCE(s.cwd, '')), ?) > 0")
        params.append(project.lower())
    if since:
        where.append("COALESCE(s.ended_at, s.started_at) >= ?")
        params.append(iso(since))
    if not include_children:
        where.append("s.parent_key IS NULL")
    conn.row_factory = sqlite3.Row
    try:
        rows = conn.execute(
            f"""SELECT s.* FROM sessions s JOIN sources src ON src.id = s.source_id
                WHERE src.duplicate_of IS NULL AND {" AND ".join(where)}
                ORDER BY COALESCE(s.started_at, '') DESC, s.key LIMIT ?""",
            (*params, -1 if limit is None else limit),
        ).fetchall()
    finally:
        conn.row_factory = None
    totals = _totals(conn, [r["key"] for r in rows])
    out = []
    for row in rows:
        session = session_from_row(row)
        session.message_count = row["message_count"]
        session.usage = totals.get(session.key, Usage())
        out.append(session)
    return out


def _totals(conn: sqlite3.Connection, keys: list[str]) -> dict[str, Usage]:
    out: dict[str, Usage] = {}
    for i in range(0, len(keys), 500):
        chunk = keys[i : i + 500]
        for key, *values in conn.execute(
            f"""SELECT m.session_key, {USAGE_SUM} FROM messages m JOIN usage u ON u.message_rowid = m.rowid
                WHERE m.replayed = 0 AND m.session_key IN ({", ".join("?" * len(chunk))})
                GROUP BY m.session_key""",
            chunk,
        ):
            out[key] = _usage(tuple(values))
    return out


def get_session(conn: sqlite3.Connection, ref: str) -> Session:
    """The session with key or id ``ref``, or whose id/key starts with it (also
    after a ``sidechain-``/``agent-`` prefix, as short ids are shown), in full.

    Raises :class:`~agentlog.errors.NotFound` when none or several match."""
    keys = [
        r[0] for r in conn.execute("SELECT key FROM sessions WHERE key = ? OR id = ? LIMIT 2", (ref, ref))
    ]
    if not keys and ref:
        like = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        patterns = [like] + [p + like for p in SHORT_ID_PREFIXES]
        keys = sorted(
            {
                r[0]
                for pattern in patterns
                for r in conn.execute(
                    "SELECT key FROM sessions WHERE id LIKE ? ESCAPE '\\' OR key LIKE ? ESCAPE '\\' LIMIT 6",
                    (pattern, pattern),
                )
            }
        )
    if not keys:
        raise NotFound(f"no session matches {ref!r} (try `agentlog sessions`)")
    if len(keys) > 1:
        shown = ", ".join(keys[:5])
        raise NotFound(f"{ref!r} is ambiguous: {shown}{' and more' if len(keys) > 5 else ''}")
    (session,) = list_sessions_by_keys(conn, keys)
    rowids = [
        r[0]
        for r in conn.execute(
            "SELECT rowid FROM messages WHERE session_key = ? ORDER BY rowid", (session.key,)
        )
    ]
    session.messages = Store(conn).messages_by_rowid(rowids)
    return session


def list_sessions_by_keys(conn: sqlite3.Connection, keys: list[str]) -> list[Session]:
    conn.row_factory = sqlite3.Row
    try:
        rows = conn.execute(
            f"SELECT * FROM sessions WHERE key IN ({', '.join('?' * len(keys))})", keys
        ).fetchall()
    finally:
        conn.row_factory = None
    totals = _totals(conn, keys)
    out = []
    for row in rows:
        session = session_from_row(row)
        session.message_count = row["message_count"]
        session.usage = totals.get(session.key, Usage())
        session.sources = [
            r[0] for r in conn.execute("SELECT path FROM sources WHERE id = ?", (row["source_id"],))
        ]
        out.append(session)
    return out


def children(conn: sqlite3.Connection, key: str) -> list[Session]:
    """Direct subagents and forks of ``key``."""
    keys = [
        r[0]
        for r in conn.execute("SELECT key FROM sessions WHERE parent_key = ? ORDER BY started_at", (key,))
    ]
    return list_sessions_by_keys(conn, keys) if keys else []


def child_counts(conn: sqlite3.Connection) -> dict[str, int]:
    return dict(
        conn.execute(
            "SELECT parent_key, COUNT(*) FROM sessions WHERE parent_key IS NOT NULL GROUP BY parent_key"
        )
    )


def source_problems(conn: sqlite3.Connection) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(unreadable [(path, error)], duplicates [(path, copy of)])``."""
    errors = conn.execute("SELECT path, error FROM sources WHERE error IS NOT NULL ORDER BY path").fetchall()
    dups = conn.execute(
        "SELECT path, duplicate_of FROM sources WHERE duplicate_of IS NOT NULL ORDER BY path"
    ).fetchall()
    return errors, dups


def agent_diagnostics(conn: sqlite3.Connection, agent: str | None = None) -> dict[str, list[Diagnostics]]:
    """Every session's parse diagnostics, by agent."""
    out: dict[str, list[Diagnostics]] = {}
    query = "SELECT agent, diagnostics FROM sessions" + (" WHERE agent = ?" if agent else "")
    for slug, blob in conn.execute(query, (agent,) if agent else ()):
        out.setdefault(slug, []).append(msgspec.json.decode(blob, type=Diagnostics))
    return out


def usage_calls(conn: sqlite3.Connection, agent: str | None = None) -> list[Call]:
    """Every counted call in the index (replayed copies and duplicate sources
    left out), as :class:`~agentlog.usage.calls.Call` records."""
    parents = dict(conn.execute("SELECT key, parent_key FROM sessions"))
    roots = roots_of(parents)
    query = f"""SELECT s.key, s.agent, s.parent_key, s.cwd, m.model, m.timestamp,
                       u.input_tokens, u.cache_read_tokens, u.cache_write_5m_tokens, u.cache_write_1h_tokens,
                       u.output_tokens, u.reasoning_tokens, u.web_search_requests, u.cost_usd, u.cost_source
                FROM usage u JOIN messages m ON m.rowid = u.message_rowid
                JOIN sessions s ON s.key = m.session_key JOIN sources src ON src.id = s.source_id
                WHERE m.replayed = 0 AND src.duplicate_of IS NULL
                    AND m.flags NOT LIKE '%"{NOT_CONSUMPTION}"%' {"AND s.agent = ?" if agent else ""}
                ORDER BY m.rowid"""
    out = []
    for row in conn.execute(query, (agent,) if agent else ()):
        out.append(
            Call(
                session_key=row[0],
                agent=row[1],
                parent_key=row[2],
                project=row[3],
                model=row[4],
                timestamp=datetime.fromisoformat(row[5]) if row[5] else None,
                root_key=roots.get(row[0], row[0]),
                usage=Usage(
                    input_tokens=row[6],
                    cache_read_tokens=row[7],
                    cache_write_5m_tokens=row[8],
                    cache_write_1h_tokens=row[9],
                    output_tokens=row[10],
                    reasoning_tokens=row[11],
                    web_search_requests=row[12],
                    cost_usd=row[13],
                    cost_source=row[14],
                ),
            )
        )
    return out
