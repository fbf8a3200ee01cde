"""Which session each part belongs to, by runs of part rowids (table ``part_runs``).

A store writes the parts of one session's messages together, under consecutive
rowids from the largest part rowid + 1 (:meth:`agentlog.index.store.Store._write_messages`),
so a session's parts are a few runs of rowids: 3,095 runs for 2.36 M parts on a
1 M-message index (one a session), a few hundred KB.  A search grouped by session
reads the session of a thousand hits from the runs that cover them
(:func:`spans_of`) instead of looking up each hit's part and message
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

import bisect
import json
import operator
import sqlite3
from collections.abc import Callable
from typing import Any, NamedTuple

Run = Callable[[sqlite3.Connection, str, tuple[object, ...]], list[tuple[Any, ...]]]
"""How a statement is run on the caller's connection within its search's budget
(:meth:`agentlog.index.search.Budget.run`); the one alias the search modules share."""


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


_FROM = """FROM part_runs WHERE first_rowid <= ? AND first_rowid >= COALESCE(
        (SELECT first_rowid FROM part_runs WHERE first_rowid <= ? ORDER BY first_rowid DESC LIMIT 1), ?)"""
_COVERING = f"SELECT first_rowid, last_rowid, session_key {_FROM} ORDER BY first_rowid"
"""The runs that may hold rowids from the second parameter (least) to the first."""
_COVERING_COUNT = f"SELECT count(*) FROM (SELECT 1 {_FROM} LIMIT ?)"
"""How many of them there are, up to the last parameter (an index walk, no row read)."""

_EACH = """SELECT h.value, r.last_rowid, r.session_key FROM json_each(?) h JOIN part_runs r
    ON r.first_rowid = (SELECT first_rowid FROM part_runs WHERE first_rowid <= h.value ORDER BY first_rowid DESC LIMIT 1)"""
"""Each rowid of a JSON list with the run that may hold it (none: left out)."""

_LOOKED_UP = """SELECT p.rowid, m.session_key FROM parts p JOIN messages m ON m.rowid = p.message_rowid
    WHERE p.rowid IN (SELECT value FROM json_each(?))"""


Span = tuple[str, int, int]
"""``(session, start, end)``: the hits ``rowids[start:end]`` of a list are that session's."""


def spans_of(conn: sqlite3.Connection, run: Run, rowids: list[int]) -> list[Span]:
    """The sessions of the parts ``rowids`` (highest first), as spans of consecutive
    hits of one session in that order (every index of ``rowids`` in one span), from
    the runs that cover them: read once and matched to the hits when there are fewer
    runs than hits (hits close together: a long session's), else looked up hit by hit
    (hits far apart: a rare word's); a part no run covers (a ``part_runs`` row deleted
    by hand) is looked up through its message.  Raises ``KeyError`` for a rowid that
    is no part.  The one place that says which session a hit is of without its message."""
    if not rowids:
        return []
    bounds = (rowids[0], rowids[-1], rowids[-1])
    if run(conn, _COVERING_COUNT, (*bounds, len(rowids) + 1))[0][0] > len(rowids):
        pieces = _each(conn, run, rowids)
    else:
        pieces = _matched(rowids, run(conn, _COVERING, bounds))
    looked_up = _looked_up(conn, run, [rowids[i] for key, start, end in pieces if key is None for i in range(start, end)])
    spans: list[Span] = []
    for key, start, end in pieces:
        for i in range(start, end) if key is None else (start,):
            session = looked_up[rowids[i]] if key is None else key
            last = i + 1 if key is None else end
            if spans and spans[-1][0] == session and spans[-1][2] == i:
                spans[-1] = (session, spans[-1][1], last)
            else:
                spans.append((session, i, last))
    return spans


Piece = tuple[str | None, int, int]
"""A :data:`Span` whose session is ``None`` when no run holds its hits."""


def _matched(rowids: list[int], covering: list[tuple[Any, ...]]) -> list[Piece]:
    """The pieces of ``rowids`` (highest first) that the runs ``covering`` them (rows
    of :data:`_COVERING`) hold, found by bisection for each run."""
    pieces: list[Piece] = []
    at = 0
    for first, last, session in reversed(covering):  # highest first, as rowids
        start = bisect.bisect_left(rowids, -last, lo=at, key=operator.neg)
        end = bisect.bisect_right(rowids, -first, lo=start, key=operator.neg)
        if start > at:
            pieces.append((None, at, start))
        if end > start:
            pieces.append((session, start, end))
        at = end
    if at < len(rowids):
        pieces.append((None, at, len(rowids)))
    return pieces


def _each(conn: sqlite3.Connection, run: Run, rowids: list[int]) -> list[Piece]:
    """The pieces of ``rowids``, one a hit, each hit's run looked up in SQL (:data:`_EACH`)."""
    held = {rowid: session for rowid, last, session in run(conn, _EACH, (json.dumps(rowids),)) if rowid <= last}
    return [(held.get(rowid), i, i + 1) for i, rowid in enumerate(rowids)]


def _looked_up(conn: sqlite3.Connection, run: Run, rowids: list[int]) -> dict[int, str]:
    """``{part rowid: session}`` of ``rowids``, through their messages."""
    return dict(run(conn, _LOOKED_UP, (json.dumps(rowids),))) if rowids else {}


def run_of(conn: sqlite3.Connection, run: Run, rowid: int) -> PartRun | None:
    """The run that covers part ``rowid``, ``None`` when none does."""
    rows = run(
        conn,
        "SELECT first_rowid, last_rowid, session_key FROM part_runs WHERE first_rowid <= ? ORDER BY first_rowid DESC LIMIT 1",
        (rowid,),
    )
    return PartRun(*rows[0]) if rows and rows[0][1] >= rowid else None
