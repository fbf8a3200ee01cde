"""A search sorted newest or oldest first, by walking messages in time order.

The all-hits sort (:func:`agentlog.index.search.search`) looks up the time of every
hit and sorts them: a word in half a million parts took seconds.  Part rowids do
not follow time across sessions, so FTS5's rowid order cannot stop early.  This
walks the index ``messages_timestamp`` from one end instead, a batch of whole
seconds (every message of each ``timestamp`` it reaches, so a tie is never cut) at
a time, and asks FTS5 which of the batch's parts match, by rowid ranges (cheap:
FTS5 seeks its lists to a range).  Once the page (``offset + limit`` hits) is
full, the hits sharing a ``timestamp`` with the page's are scored (``bm25``, in one
statement: the score breaks a tie of times) and ordered exactly as the all-hits
sort (:data:`agentlog.index.search._ORDER`, then session, message and part).

It gives up (``None``: the caller sorts all hits) when it would reach the messages
with no time (sorted last, all tied) or has walked :data:`WALK_LIMIT` parts; it is
worth it only when many parts match (:data:`TIME_SCAN_FROM`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Any, Literal

TIME_SCAN_FROM = 5_000
"""Hits (filters passed) from which a time sort walks messages instead of sorting
all hits: below it the all-hits sort costs a few ms."""
WALK_LIMIT = 200_000
"""Parts walked at most before the walk gives up to the all-hits sort (a rare
filter, or a page deep in the list)."""
FIRST_BATCH = 256
"""Messages in the first batch at least; each next batch doubles."""
RANGE_COST_HITS = 500
"""A range query's fixed cost (~100 µs) in hits iterated (~0.2 µs each): two runs of
a batch's part rowids closer than ``RANGE_COST_HITS / density`` are asked as one range."""

Run = Callable[[sqlite3.Connection, str, tuple[object, ...]], list[tuple[Any, ...]]]
Hit = tuple[int, str, str, str, int]
"""A hit walked: ``(part rowid, timestamp, session_key, message id, part idx)``."""


def by_time(
    conn: sqlite3.Connection,
    run: Run,
    match: str,
    where: list[str],
    params: list[object],
    joins_sessions: bool,
    matches: int,
    wanted: int,
    sort: Literal["newest", "oldest"],
) -> list[tuple[int, float]] | None:
    """The first ``wanted`` hits of ``match`` (an FTS5 expression) passing ``where``
    (SQL over ``m`` messages, ``p`` parts and, with ``joins_sessions``, ``s`` sessions;
    ``params`` its values) in ``sort`` order, as ``(part rowid, bm25 score)``; ``None``
    when the walk gives up (see the module).  ``matches``: how many hits there are
    (at least), to size the batches.  ``run``: runs one statement within the search's
    time limit (:meth:`agentlog.index.search.Budget.run`)."""
    last_part = conn.execute("SELECT max(rowid) FROM parts").fetchone()[0] or 1
    last_message = conn.execute("SELECT max(rowid) FROM messages").fetchone()[0] or 1
    density = min(1.0, max(matches, 1) / last_part)  # hits per part
    per_message = max(1.0, last_part / last_message)
    batch = max(FIRST_BATCH, int(2 * wanted / density / per_message))
    newest = sort == "newest"
    beyond, direction = ("<", "DESC") if newest else (">", "ASC")
    walk = f"""SELECT p.rowid, m.timestamp, m.session_key, m.id, p.idx
        FROM messages m INDEXED BY messages_timestamp JOIN parts p ON p.message_rowid = m.rowid
        {"JOIN sessions s ON s.key = m.session_key" if joins_sessions else ""}
        WHERE m.timestamp {">=" if newest else "<="} ? AND m.timestamp {beyond} ? AND p.searchable != 0
        {"".join(" AND " + clause for clause in where)}"""
    reach_sql = f"""SELECT timestamp FROM messages INDEXED BY messages_timestamp
        WHERE timestamp {beyond} ? ORDER BY timestamp {direction} LIMIT 1 OFFSET ?"""
    last_sql = f"""SELECT timestamp FROM messages INDEXED BY messages_timestamp
        WHERE timestamp {beyond} ? ORDER BY timestamp {"ASC" if newest else "DESC"} LIMIT 1"""
    hits: list[Hit] = []
    walked = 0
    edge = "\U0010ffff" if newest else ""  # the time walked up to, exclusive: none yet
    while len(hits) < wanted:
        if walked > WALK_LIMIT:
            return None
        reached = run(conn, reach_sql, (edge, batch - 1))  # the batch-th message's time
        last = reached or run(conn, last_sql, (edge,))  # fewer left: to the last timed one
        if not last:
            return None  # every timed message walked: the rest have no time (tied, last)
        reach = last[0][0]
        parts = run(conn, walk, (reach, edge, *params))  # every message of each time reached
        walked += len(parts)
        hits += _matching(conn, run, match, parts, density)
        edge = reach
        if not reached and len(hits) < wanted:
            return None
        batch *= 2
    return _ordered(conn, run, match, hits, wanted, newest)


def _matching(
    conn: sqlite3.Connection, run: Run, match: str, parts: list[tuple[Any, ...]], density: float
) -> list[Hit]:
    """The ``parts`` (walked rows, :data:`Hit` shape) that ``match``, asked of FTS5
    by ranges of their rowids."""
    if not parts:
        return []
    by_rowid = {row[0]: row for row in parts}
    rowids = sorted(by_rowid)
    gap = max(64, int(RANGE_COST_HITS / density))
    ranges: list[list[int]] = [[rowids[0], rowids[0]]]
    for rowid in rowids[1:]:
        if rowid - ranges[-1][1] > gap:
            ranges.append([rowid, rowid])
        else:
            ranges[-1][1] = rowid
    found: list[Hit] = []
    sql = "SELECT rowid FROM parts_fts WHERE parts_fts MATCH ? AND rowid BETWEEN ? AND ?"
    for low, high in ranges:
        found += [by_rowid[rowid] for (rowid,) in run(conn, sql, (match, low, high)) if rowid in by_rowid]
    return found


def _ordered(
    conn: sqlite3.Connection, run: Run, match: str, hits: list[Hit], wanted: int, newest: bool
) -> list[tuple[int, float]]:
    """The first ``wanted`` of ``hits`` (every hit of each time they hold) in order:
    time (``newest`` first, or oldest), then bm25 score, session, message and part.
    Scores are read for the hits of the times the page reaches, in one statement
    (FTS5's bm25 first counts every row holding each phrase, once a statement)."""
    hits.sort(key=lambda hit: hit[1], reverse=newest)
    times = {hit[1] for hit in hits[:wanted]}
    scored = [hit for hit in hits if hit[1] in times]
    rowids = [hit[0] for hit in scored]
    sql = """SELECT rowid, bm25(parts_fts) FROM parts_fts WHERE parts_fts MATCH ?
        AND rowid BETWEEN ? AND ? AND (rowid + 0) IN (SELECT value FROM json_each(?))"""
    scores: dict[int, float] = dict(run(conn, sql, (match, min(rowids), max(rowids), json.dumps(rowids))))
    scored.sort(key=lambda hit: hit[2:])  # session, message, part
    scored.sort(key=lambda hit: scores[hit[0]])
    scored.sort(key=lambda hit: hit[1], reverse=newest)
    return [(hit[0], scores[hit[0]]) for hit in scored[:wanted]]
