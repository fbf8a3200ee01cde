"""Which session each part belongs to, by runs of part rowids (table ``part_runs``).

A store writes the parts of one session's messages together, under consecutive
rowids from the largest part rowid + 1 (:meth:`agentlog.index.store.Store._write_messages`),
so a session's parts are a few runs of rowids: 3,095 runs for 2.36 M parts on a
1 M-message index (one a session), a few hundred KB.  A search grouped by session
reads the session of a thousand hits from the runs that cover them
(:func:`sessions_of`) instead of looking up each hit's part and message
(1.5 µs a hit), and knows that every hit between two rowids of one run is that
session's (:func:`run_of`).

The rule kept (``tests/test_part_runs.py``): runs do not overlap, and every part's
rowid lies in a run of its message's session.  A run may also cover rowids of
parts since deleted; a new run starts above every part, so only such rowids of
older runs can lie at or above it, and :func:`add` cuts them off before it records
the new one (SQLite gives a new part the largest rowid + 1, also one a deleted
part had).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Any, NamedTuple

Run = Callable[[sqlite3.Connection, str, tuple[object, ...]], list[tuple[Any, ...]]]
"""How a statement is run (e.g. :meth:`agentlog.index.search.Budget.run`)."""


class PartRun(NamedTuple):
    """Part rowids ``first`` to ``last`` (inclusive) are ``session``'s (or deleted)."""

    first: int
    last: int
    session: str


def add(conn: sqlite3.Connection, first: int, last: int, session: str) -> None:
    """Record that the parts just written at rowids ``first`` to ``last`` are
    ``session``'s; ``first`` must be above every other part's rowid (as the store
    writes them).  Older runs at or above ``first`` (deleted parts only) are cut off;
    the newest run below is extended when it is the same session's (rowids between
    them are deleted parts)."""
    if last < first:
        return
    conn.execute("DELETE FROM part_runs WHERE first_rowid >= ?", (first,))
    below = conn.execute(
        "SELECT first_rowid, session_key FROM part_runs ORDER BY first_rowid DESC LIMIT 1"
    ).fetchone()
    if below is not None and below[1] == session:
        conn.execute("UPDATE part_runs SET last_rowid = ? WHERE first_rowid = ?", (last, below[0]))
        return
    if below is not None:
        conn.execute(
            "UPDATE part_runs SET last_rowid = ? WHERE first_rowid = ? AND last_rowid >= ?",
            (first - 1, below[0], first),
        )
    conn.execute(
        "INSERT INTO part_runs (first_rowid, last_rowid, session_key) VALUES (?, ?, ?)", (first, last, session)
    )


_COVERING = """SELECT first_rowid, last_rowid, session_key FROM part_runs
    WHERE first_rowid <= ? AND first_rowid >= COALESCE(
        (SELECT first_rowid FROM part_runs WHERE first_rowid <= ? ORDER BY first_rowid DESC LIMIT 1), ?)
    ORDER BY first_rowid"""
"""The runs that may hold rowids from the second parameter (least) to the first."""

_LOOKED_UP = """SELECT p.rowid, m.session_key FROM parts p JOIN messages m ON m.rowid = p.message_rowid
    WHERE p.rowid IN (SELECT value FROM json_each(?))"""


def sessions_of(conn: sqlite3.Connection, run: Run, rowids: list[int]) -> list[str]:
    """The session of each part of ``rowids`` (newest, i.e. highest, first), in that
    order, from the runs that cover them; a part no run covers (a ``part_runs`` row
    deleted by hand) is looked up through its message.  Raises ``KeyError`` for a
    rowid that is no part."""
    if not rowids:
        return []
    runs = [PartRun(*row) for row in run(conn, _COVERING, (rowids[0], rowids[-1], rowids[-1]))]
    out: list[str] = []
    missing: list[int] = []
    at = len(runs) - 1
    for rowid in rowids:
        while at >= 0 and runs[at].first > rowid:
            at -= 1
        if at >= 0 and rowid <= runs[at].last:
            out.append(runs[at].session)
        else:
            out.append("")
            missing.append(rowid)
    if missing:
        found: dict[int, str] = dict(run(conn, _LOOKED_UP, (json.dumps(missing),)))
        out = [key or found[rowid] for rowid, key in zip(rowids, out, strict=True)]
    return out


def run_of(conn: sqlite3.Connection, run: Run, rowid: int) -> PartRun | None:
    """The run that covers part ``rowid``, ``None`` when none does."""
    rows = run(
        conn,
        "SELECT first_rowid, last_rowid, session_key FROM part_runs WHERE first_rowid <= ? ORDER BY first_rowid DESC LIMIT 1",
        (rowid,),
    )
    return PartRun(*rows[0]) if rows and rows[0][1] >= rowid else None
