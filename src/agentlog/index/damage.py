"""Looking for stored rows that do not decode (``doctor``): every row of the tables
the read paths decode, read back through the decoders those paths call, or only
the newest of the large tables.

A row that does not decode is what every command reading it answers with the
damaged-index line (:func:`agentlog.index.db.damaged`): a part
(:func:`agentlog.index.store.part_from`), a message
(:func:`agentlog.index.store.message_from`), a call's usage and a session's totals
(:func:`agentlog.index.usage.usage_from`), a session
(:func:`agentlog.index.store.session_from_row`), a source's recorded session
headers (:func:`agentlog.index.store.recorded_headers`).  Each is read with the
columns its read path selects and decoded by the same function, so doctor names
exactly the rows a read would stop at; it names their sessions and sources, and
reads nothing else.  Reading every row (``doctor --deep``) of the 1M-message
benchmark index (818 MB: 1.9M parts, 0.8M messages, 0.55M usage rows) takes
23–26 s on a loaded 2-core machine, the bounded check 0.16–0.18 s
(``benchmarks/bench_doctor.py``): each row is decoded whole, as a read would.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from agentlog.index.queries import ARCHIVED
from agentlog.index.store import message_from, part_from, recorded_headers, session_from_row
from agentlog.index.stored import DamagedRow
from agentlog.index.usage import SESSION_TOTAL_COLUMNS, USAGE_COLUMNS, usage_from

SAMPLE_PARTS = 5_000
"""Rows of each large table (parts, messages, usage) decoded by a bounded check
(the newest by rowid: the last written)."""


class DamagedAt(msgspec.Struct, frozen=True):
    """One stored row that does not decode: row ``rowid`` of table ``table``
    (``usage`` rows are keyed by their message's rowid, ``session_usage`` rows
    by their session's), read as ``what`` (a part,
    a message, usage, a session, a source's session headers, a session's usage
    totals) of session ``session`` (``None`` for a source's headers) from source
    ``path``; ``error`` the decoder's line, the one a read of it says."""

    what: str
    rowid: int
    session: str | None
    path: str | None
    error: str
    table: str


class RowCheck(msgspec.Struct, kw_only=True):
    """What :func:`check_rows` read: ``parts``, ``messages``, ``usage`` rows,
    ``sessions`` and ``headers`` (sources' session headers) decoded, ``every_row``
    whether those were all the index holds, and the rows that did not decode (at
    most ``limit`` named, ``damaged_count`` all)."""

    parts: int
    messages: int
    usage: int
    sessions: int
    headers: int
    every_row: bool
    damaged: list[DamagedAt]
    damaged_count: int

    @property
    def sessions_damaged(self) -> list[str]:
        """The sessions with a damaged row, sorted."""
        return sorted({d.session for d in self.damaged if d.session})


class _Table(msgspec.Struct, frozen=True):
    """One table's check: what its rows are read as, the table, its key column,
    the columns its read path selects (``FROM`` included) and the decoder."""

    what: str
    table: str
    key: str
    select: str
    decode: Callable[[Any], object]


_SAMPLED = (
    _Table("part", "parts", "rowid", "data, text FROM parts", lambda r: part_from(r[1], r[2])),
    _Table(
        "message",
        "messages",
        "rowid",
        "id, role, timestamp, model, flags, is_sidechain, offset, replayed FROM messages",
        lambda r: message_from((*r, None)),  # no usage: the next check reads it
    ),
    _Table("usage", "usage", "message_rowid", f"{USAGE_COLUMNS} FROM usage u", lambda r: usage_from(r[1:])),
)
"""The large tables, newest rows first, as
:meth:`agentlog.index.store.Store.messages_by_rowid` reads them."""

_WHOLE = (
    _Table(
        "session",
        "sessions",
        "s.rowid",
        f"s.*, {ARCHIVED} FROM sessions s JOIN sources src ON src.id = s.source_id",
        session_from_row,
    ),
    _Table(
        "session header",
        "sources",
        "id",
        "headers FROM sources WHERE headers IS NOT NULL",
        lambda r: recorded_headers(r[1]),
    ),
    _Table(
        "session usage",
        "session_usage",
        "(SELECT rowid FROM sessions WHERE key = t.session_key)",  # a table without rowids: its session's
        f"{SESSION_TOTAL_COLUMNS} FROM session_usage t",
        lambda r: usage_from([*r[1:], None]),
    ),
)
"""The tables read whole: sessions (as :mod:`agentlog.index.queries` selects
them), sources' recorded headers, sessions' usage totals (as
:func:`agentlog.index.usage.session_usage` reads them)."""


def check_rows(conn: sqlite3.Connection, sample: int | None = SAMPLE_PARTS, limit: int = 100) -> RowCheck:
    """Every session, source header and session total, and the newest ``sample``
    parts, messages and usage rows (every row when ``None``), decoded as the index
    reads them; the damaged rows found, the first ``limit`` of them named (in
    :data:`_SAMPLED` then :data:`_WHOLE` order, newest first).  Only reads.
    Raises ``sqlite3.DatabaseError`` for damage below the rows (a page
    ``PRAGMA quick_check`` would flag)."""
    damaged: list[tuple[str, str, int, str]] = []
    counts: dict[str, int] = {}
    every = True
    for check in _SAMPLED:
        sql = f"SELECT {check.key}, {check.select}"
        rows = conn.execute(
            f"{sql} ORDER BY {check.key} DESC" + ("" if sample is None else " LIMIT ?"),
            () if sample is None else (sample,),
        )
        counts[check.table], oldest = _decode(rows, check, damaged)
        if sample is not None and counts[check.table] >= sample:
            older = f"SELECT EXISTS (SELECT 1 FROM {check.table} WHERE {check.key} < ?)"
            every = every and not conn.execute(older, (oldest,)).fetchone()[0]
    for check in _WHOLE:
        cursor = conn.cursor()
        cursor.row_factory = sqlite3.Row  # session_from_row reads columns by name, the others by place
        counts[check.table], _ = _decode(
            cursor.execute(f"SELECT {check.key} AS doctor_rowid, {check.select}"), check, damaged
        )
    return RowCheck(
        parts=counts["parts"],
        messages=counts["messages"],
        usage=counts["usage"],
        sessions=counts["sessions"],
        headers=counts["sources"],
        every_row=every,
        damaged=[_located(conn, *found) for found in damaged[:limit]],
        damaged_count=len(damaged),
    )


def _decode(rows: Iterable[Any], check: _Table, damaged: list[tuple[str, str, int, str]]) -> tuple[int, int]:
    """Each of ``rows`` (its key first) through ``check``'s decoder, those that
    raise :class:`DamagedRow` added to ``damaged``; how many were read, and the
    last key."""
    count, last = 0, 0
    for row in rows:
        count, last = count + 1, row[0]
        try:
            check.decode(row)
        except DamagedRow as exc:
            damaged.append((check.what, check.table, row[0], str(exc)))
    return count, last


_WHERE = {
    "parts": """SELECT m.session_key, s.path FROM parts p JOIN messages m ON m.rowid = p.message_rowid
                LEFT JOIN sources s ON s.id = m.source_id WHERE p.rowid = ?""",
    "messages": "SELECT m.session_key, s.path FROM messages m LEFT JOIN sources s ON s.id = m.source_id WHERE m.rowid = ?",
    "usage": "SELECT m.session_key, s.path FROM messages m LEFT JOIN sources s ON s.id = m.source_id WHERE m.rowid = ?",
    "sessions": "SELECT x.key, s.path FROM sessions x LEFT JOIN sources s ON s.id = x.source_id WHERE x.rowid = ?",
    "sources": "SELECT NULL, path FROM sources WHERE id = ?",
    "session_usage": "SELECT x.key, s.path FROM sessions x LEFT JOIN sources s ON s.id = x.source_id WHERE x.rowid = ?",
}
"""Each table's row's session and source path."""


def _located(conn: sqlite3.Connection, what: str, table: str, rowid: int, error: str) -> DamagedAt:
    """The damaged row ``rowid`` of ``table`` with its session and source path."""
    row = conn.execute(_WHERE[table], (rowid,)).fetchone()
    session, path = row if row else (None, None)
    return DamagedAt(what, rowid, session, path, error, table)
