"""Reading the index: sessions, one session in full, facts for ``agents``/``doctor``.

The service layer (:mod:`agentlog.service`) reads the index through these
functions; the surfaces call the service layer.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from agentlog.errors import NotFound
from agentlog.index.usage import TOKENS_SQL, session_usage
from agentlog.model import SHORT_ID_PREFIXES, Diagnostics, Message, Session, Usage
from agentlog.query import FOLDER_CONTAINS_SQL, TEXT_CONTAINS_SQL, SessionFilter, sql_functions
from agentlog.readers import LineReader

ARCHIVED = "src.archived_at IS NOT NULL AS archived"
"""What :func:`~agentlog.index.store.session_from_row` reads as ``Session.archived``
(``sources src`` joined): the session's source is gone, its rows are kept."""

NOT_DUPLICATE = "s.source_id NOT IN (SELECT id FROM sources WHERE duplicate_of IS NOT NULL)"
"""Session ``s`` is not from a copy of a source another holds (``sources.duplicate_of``)."""

EVERY_SESSION = SessionFilter(include_children=True)
"""The filter that keeps every (non-empty) session, subagents and forks too."""


def _session_filters(
    conn: sqlite3.Connection, where: SessionFilter, include_empty: bool = False
) -> tuple[list[str], list[Any]]:
    """SQL conditions on ``sessions s`` for ``where`` and their parameters (no
    other table joined: sessions of a duplicate source are left out through the
    index ``sources_duplicates``); the text matches call
    :func:`agentlog.query.text_contains` (registered on ``conn``), as the in-memory
    filter does."""
    from agentlog.index.store import iso  # the store: only the reads that need it

    sql_functions(conn)
    clauses, params = [NOT_DUPLICATE], []
    if not include_empty:
        clauses.append(
            "(s.message_count > 0 OR EXISTS (SELECT 1 FROM messages m JOIN usage u ON u.message_rowid = m.rowid"
            " WHERE m.session_key = s.key))"
        )
    span = where.span
    for clause, value in (
        ("s.agent = ?", where.agent),
        (f"{FOLDER_CONTAINS_SQL}(s.cwd, ?)", where.project),
        ("COALESCE(s.ended_at, s.started_at) >= ?", iso(span.since) if span.since else None),
        ("COALESCE(s.started_at, s.ended_at) < ?", iso(span.until) if span.until else None),
        ("s.status = ?", where.status),
        (
            f"{TEXT_CONTAINS_SQL}(COALESCE(s.title, '') || ' ' || s.id || ' ' || COALESCE(s.cwd, ''), ?)",
            where.text,
        ),
    ):
        if value:
            clauses.append(clause)
            params.append(value)
    if where.has_children:
        clauses.append("EXISTS (SELECT 1 FROM sessions c WHERE c.parent_key = s.key)")
    if not where.include_children:
        clauses.append("s.parent_key IS NULL")
        if not where.include_exec:
            clauses.append("s.kind != 'exec'")
    return clauses, params


def list_sessions(
    conn: sqlite3.Connection,
    where: SessionFilter = EVERY_SESSION,
    limit: int | None = None,
    include_empty: bool = False,
) -> list[Session]:
    """Session headers (no messages) with usage totals, newest first, that
    ``where`` keeps (:class:`agentlog.query.SessionFilter`).  Sessions with no
    visible message and no usage (an empty or damaged file, a title-only file)
    are left out unless ``include_empty``."""
    clauses, params = _session_filters(conn, where, include_empty)
    order = f"{SESSION_SORTS['started']} DESC, s.key"
    return _headers(conn, _keys(conn, " AND ".join(clauses), params, order, -1 if limit is None else limit))


def _keys(
    conn: sqlite3.Connection, condition: str, params: Sequence[Any], order: str, limit: int, offset: int = 0
) -> list[str]:
    """The keys of sessions ``limit`` … ``offset + limit`` (-1: every one) that SQL
    ``condition`` keeps, in SQL ``order`` (which ends with the key: no ties).  The
    sort holds the key and the sort columns, not the sessions' whole rows (a deep
    page of 3,000 sessions: 20 → 3 ms)."""
    return [
        key
        for (key,) in conn.execute(
            f"SELECT s.key FROM sessions s WHERE {condition} ORDER BY {order} LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
    ]


def _headers(conn: sqlite3.Connection, keys: list[str]) -> list[Session]:
    """The headers of sessions ``keys`` in that order, with usage totals."""
    from agentlog.index.store import session_from_row  # the store: only the reads that need it

    conn.row_factory = sqlite3.Row
    try:
        rows = {
            row["key"]: row
            for row in conn.execute(
                f"""SELECT s.*, {ARCHIVED} FROM (SELECT value FROM json_each(?)) k
                    CROSS JOIN sessions s ON s.key = k.value JOIN sources src ON src.id = s.source_id""",
                (json.dumps(keys),),
            )
        }
    finally:
        conn.row_factory = None
    totals = session_usage(conn, keys)
    out = []
    for key in keys:
        session = session_from_row(rows[key])
        session.message_count = rows[key]["message_count"]
        session.usage = totals.get(key, Usage())
        out.append(session)
    return out


#: Sort orders for :func:`page_sessions`: column name → SQL expression.
SESSION_SORTS = {
    "started": "COALESCE(s.started_at, '')",
    "duration": "COALESCE(julianday(s.ended_at) - julianday(s.started_at), 0)",
    "messages": "s.message_count",
    "tokens": TOKENS_SQL,
    "model": "s.models",
    "project": "COALESCE(s.cwd, '')",
    "agent": "s.agent",
}


def page_sessions(
    conn: sqlite3.Connection,
    where: SessionFilter,
    sort: str = "started",
    descending: bool = True,
    offset: int = 0,
    limit: int = 50,
    first_by: Sequence[str] = (),
) -> tuple[list[Session], int]:
    """One page of session headers (usage totals included) and how many sessions
    match in all.  ``sort`` is a key of :data:`SESSION_SORTS`; ``first_by`` (keys too)
    order before it, ascending (to group rows, e.g. by project).  Raises
    ``KeyError`` for an unknown sort."""
    clauses, params = _session_filters(conn, where)
    condition = " AND ".join(clauses)
    order = f"{SESSION_SORTS[sort]} {'DESC' if descending else 'ASC'}, s.key"
    order = ", ".join([*(SESSION_SORTS[k] for k in first_by), order])
    sessions = _headers(conn, _keys(conn, condition, params, order, limit, offset))
    (total,) = conn.execute(f"SELECT COUNT(*) FROM sessions s WHERE {condition}", params).fetchone()
    return sessions, total


MAX_REF = 4096
"""The longest session reference looked up, in characters: far above any key
agents write, and below SQLite's 50,000-byte limit on a LIKE pattern."""


def resolve_key(conn: sqlite3.Connection, ref: str) -> str:
    """The key of the session with key or id ``ref``, or whose id/key starts with
    it (also after a ``sidechain-``/``agent-`` prefix, as short ids are shown).

    Raises :class:`~agentlog.errors.NotFound` when none or several match (a
    ``ref`` longer than :data:`MAX_REF` characters matches none)."""
    if len(ref) > MAX_REF:
        raise NotFound(f"no session matches {ref[:40]!r}… ({len(ref):,} characters; try `agentlog sessions`)")
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
    return str(keys[0])


def get_session(conn: sqlite3.Connection, ref: str) -> Session:
    """The session :func:`resolve_key` finds for ``ref``, in full.

    Raises :class:`~agentlog.errors.NotFound` when none or several match."""
    from agentlog.index.store import Store  # the store: only the reads that need it

    (session,) = list_sessions_by_keys(conn, [resolve_key(conn, ref)])
    rowids = [
        r[0]
        for r in conn.execute(
            "SELECT rowid FROM messages WHERE session_key = ? ORDER BY rowid", (session.key,)
        )
    ]
    session.messages = Store(conn).messages_by_rowid(rowids)
    return session


def message_page(
    conn: sqlite3.Connection, key: str, offset: int = 0, limit: int = 200, include_hidden: bool = False
) -> tuple[list[Message], int]:
    """Messages ``offset`` … ``offset + limit`` of session ``key`` in order (meta,
    injected, unknown and replayed ones left out unless ``include_hidden``), and
    how many there are in all."""
    from agentlog.index.store import Store  # the store: only the reads that need it

    visible = "" if include_hidden else " AND hidden = 0 AND replayed = 0"
    rowids = [
        r[0]
        for r in conn.execute(
            f"SELECT rowid FROM messages WHERE session_key = ?{visible} ORDER BY rowid LIMIT ? OFFSET ?",
            (key, limit, offset),
        )
    ]
    (total,) = conn.execute(
        f"SELECT COUNT(*) FROM messages WHERE session_key = ?{visible}", (key,)
    ).fetchone()
    return Store(conn).messages_by_rowid(rowids), total


def messages_after(
    conn: sqlite3.Connection, key: str, after: int = 0, limit: int = 200, include_hidden: bool = False
) -> tuple[list[Message], int]:
    """Up to ``limit`` messages of session ``key`` after the one of rowid ``after``
    (0: from the first; ``limit`` -1: every one), in :func:`message_page`'s
    order, and the rowid of the last one (``after`` when there is none): the pages of a session read whole,
    each found by the index on ``(session_key, rowid)`` without counting or
    skipping the earlier ones."""
    from agentlog.index.store import Store  # the store: only the reads that need it

    visible = "" if include_hidden else " AND hidden = 0 AND replayed = 0"
    rowids = [
        r[0]
        for r in conn.execute(
            f"SELECT rowid FROM messages WHERE session_key = ? AND rowid > ?{visible} ORDER BY rowid LIMIT ?",
            (key, after, limit),
        )
    ]
    return Store(conn).messages_by_rowid(rowids), rowids[-1] if rowids else after


def message_position(
    conn: sqlite3.Connection, key: str, message_id: str, include_hidden: bool = False
) -> int | None:
    """The 0-based place of message ``message_id`` in :func:`message_page`'s order,
    or ``None`` when the session has no such (visible) message."""
    visible = "" if include_hidden else " AND hidden = 0 AND replayed = 0"
    found = conn.execute(
        f"SELECT MIN(rowid) FROM messages WHERE session_key = ? AND id = ?{visible}", (key, message_id)
    ).fetchone()[0]
    if found is None:
        return None
    (count,) = conn.execute(
        f"SELECT COUNT(*) FROM messages WHERE session_key = ? AND rowid < ?{visible}", (key, found)
    ).fetchone()
    return int(count)


class RawRecords(msgspec.Struct, kw_only=True):
    """A message's records as its agent wrote them: ``lines`` (decoded UTF-8, bad
    bytes replaced) read from ``path`` at byte ``offset``; ``truncated`` when the
    byte limit cut them."""

    path: str
    offset: int
    lines: list[str]
    truncated: bool = False


def raw_records(
    conn: sqlite3.Connection, key: str, message_id: str, max_bytes: int = 256 * 1024
) -> RawRecords | None:
    """The source lines of message ``message_id`` of session ``key``: from the
    message's byte ``offset`` up to the next message's offset in the same source
    file (at most ``max_bytes``), read read-only through
    :class:`~agentlog.readers.LineReader`.  The path comes from the index, never
    from the caller.  ``None`` when there is no such message or it has no offset
    (documents and databases).  Raises ``OSError`` when the file cannot be read."""
    row = conn.execute(
        """SELECT m.offset, m.source_id, src.path FROM messages m JOIN sources src ON src.id = m.source_id
           WHERE m.session_key = ? AND m.id = ? ORDER BY m.rowid LIMIT 1""",
        (key, message_id),
    ).fetchone()
    if row is None or row[0] is None:
        return None
    offset, source_id, path = row
    (end,) = conn.execute(
        "SELECT MIN(offset) FROM messages WHERE source_id = ? AND offset > ?", (source_id, offset)
    ).fetchone()
    out = RawRecords(path=path, offset=offset, lines=[])
    size = 0
    for at, line in LineReader(path, offset, chunk_size=64 * 1024):
        if end is not None and at >= end:
            break
        size += len(line)
        if size > max_bytes:
            out.truncated = True
            break
        out.lines.append(line.decode("utf-8", "replace"))
    return out


def session_tree(conn: sqlite3.Connection, key: str) -> list[tuple[int, Session]]:
    """The whole subagent/fork tree ``key`` belongs to, from its root, depth-first
    in start order, as ``(depth, session header)`` pairs (depth 0 = the root)."""
    parents = dict(conn.execute("SELECT key, parent_key FROM sessions"))
    root, seen = key, {key}
    while parents.get(root) and parents[root] not in seen:
        root = parents[root]
        seen.add(root)
    out: list[tuple[int, Session]] = []
    stack: list[tuple[int, Session]] = [(0, s) for s in list_sessions_by_keys(conn, [root])]
    while stack:
        depth, session = stack.pop()
        out.append((depth, session))
        below = [c for c in children(conn, session.key) if all(c.key != s.key for _, s in out)]
        stack.extend((depth + 1, c) for c in reversed(below))
    return out


def list_sessions_by_keys(conn: sqlite3.Connection, keys: list[str]) -> list[Session]:
    from agentlog.index.store import session_from_row  # the store: only the reads that need it

    conn.row_factory = sqlite3.Row
    try:
        rows = conn.execute(
            f"""SELECT s.*, {ARCHIVED} FROM sessions s JOIN sources src ON src.id = s.source_id
                WHERE s.key IN ({", ".join("?" * len(keys))})""",
            keys,
        ).fetchall()
    finally:
        conn.row_factory = None
    totals = session_usage(conn, keys)
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


def agent_counts(conn: sqlite3.Connection) -> dict[str, int]:
    """How many sessions each agent has in the index (duplicate sources left out)."""
    return dict(
        conn.execute(
            """SELECT s.agent, COUNT(*) FROM sessions s JOIN sources src ON src.id = s.source_id
               WHERE src.duplicate_of IS NULL GROUP BY s.agent ORDER BY s.agent"""
        )
    )


def child_counts(conn: sqlite3.Connection) -> dict[str, int]:
    return dict(
        conn.execute(
            "SELECT parent_key, COUNT(*) FROM sessions WHERE parent_key IS NOT NULL GROUP BY parent_key"
        )
    )


def source_problems(
    conn: sqlite3.Connection, agent: str | None = None
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(unreadable [(path, error)], duplicates [(path, copy of)])``, of one agent's
    sources when ``agent`` is given."""
    only = " AND agent = ?" if agent else ""
    args = (agent,) if agent else ()
    errors = conn.execute(
        f"SELECT path, error FROM sources WHERE error IS NOT NULL{only} ORDER BY path", args
    ).fetchall()
    dups = conn.execute(
        f"SELECT path, duplicate_of FROM sources WHERE duplicate_of IS NOT NULL{only} ORDER BY path", args
    ).fetchall()
    return errors, dups


def agent_diagnostics(
    conn: sqlite3.Connection, agent: str | None = None
) -> dict[str, list[tuple[str, Diagnostics]]]:
    """Every session's parse diagnostics with the path of its source, by agent."""
    out: dict[str, list[tuple[str, Diagnostics]]] = {}
    query = (
        "SELECT s.agent, src.path, s.diagnostics FROM sessions s JOIN sources src ON src.id = s.source_id"
        + (" WHERE s.agent = ?" if agent else "")
    )
    for slug, path, blob in conn.execute(query, (agent,) if agent else ()):
        out.setdefault(slug, []).append((path, msgspec.json.decode(blob, type=Diagnostics)))
    return out


def stored_roots(conn: sqlite3.Connection) -> list[Path]:
    """Every ``--root`` folder a sync of this index was given, as real paths
    (:func:`agentlog.index.sync.remember_roots`), sorted; a damaged row (not text)
    costs only itself."""
    return [Path(path) for (path,) in conn.execute("SELECT path FROM roots WHERE typeof(path) = 'text' ORDER BY path")]
