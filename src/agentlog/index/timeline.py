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
RANGE_COST_HITS = 300
"""A range query's fixed cost (~60 µs) in hits iterated (~0.2 µs each): two runs of
a batch's part rowids closer than ``RANGE_COST_HITS / density`` are asked as one range."""

SAMPLE = 2_000
"""Hits of the highest rowids counted to guess how dense the hits are (sizing the
batches and the ranges asked of FTS5; a guess: never changes a result)."""
_SAMPLE = f"SELECT count(*), min(rowid) FROM (SELECT rowid FROM parts_fts WHERE parts_fts MATCH ? ORDER BY rowid DESC LIMIT {SAMPLE})"

Run = Callable[[sqlite3.Connection, str, tuple[object, ...]], list[tuple[Any, ...]]]


def by_time(
    conn: sqlite3.Connection,
    run: Run,
    match: str,
    where: list[str],
    params: list[object],
    joins_sessions: bool,
    wanted: int,
    sort: Literal["newest", "oldest"],
) -> list[tuple[int, float]] | None:
    """The first ``wanted`` hits of ``match`` (an FTS5 expression) passing ``where``
    (SQL over ``m`` messages, ``p`` parts and, with ``joins_sessions``, ``s`` sessions;
    ``params`` its values) in ``sort`` order, as ``(part rowid, bm25 score)``; ``None``
    when the walk gives up (see the module).  ``run``: runs one statement within the search's
    time limit (:meth:`agentlog.index.search.Budget.run`)."""
    last_part = conn.execute("SELECT max(rowid) FROM parts").fetchone()[0] or 1
    last_message = conn.execute("SELECT max(rowid) FROM messages").fetchone()[0] or 1
    sample = run(conn, _SAMPLE, (match,))[0]  # the newest rowids' hits: how dense they are
    density = min(1.0, max(sample[0], 1) / max(1, last_part - (sample[1] or last_part) + 1))
    per_message = max(1.0, last_part / last_message)
    batch = min(WALK_LIMIT, max(FIRST_BATCH, int(wanted / density / per_message)))
    newest = sort == "newest"
    beyond, direction = ("<", "DESC") if newest else (">", "ASC")
    sessions = "JOIN sessions s ON s.key = m.session_key" if joins_sessions else ""
    # without filters both indexes cover the walk: no message or part row is read
    walk = f"""SELECT p.rowid, m.timestamp FROM messages m INDEXED BY messages_timestamp
        JOIN parts p INDEXED BY parts_message ON p.message_rowid = m.rowid {sessions}
        WHERE m.timestamp {">=" if newest else "<="} ? AND m.timestamp {beyond} ?
        {"".join(" AND " + clause for clause in where)}"""
    reach_sql = f"""SELECT timestamp FROM messages INDEXED BY messages_timestamp
        WHERE timestamp {beyond} ? ORDER BY timestamp {direction} LIMIT 1 OFFSET ?"""
    last_sql = f"""SELECT timestamp FROM messages INDEXED BY messages_timestamp
        WHERE timestamp {beyond} ? ORDER BY timestamp {"ASC" if newest else "DESC"} LIMIT 1"""
    hits: list[tuple[int, str]] = []  # (part rowid, timestamp)
    scores: dict[int, float] = {}  # the bm25 scores read so far
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
        hits += _matching(conn, run, match, parts, density, scores)
        edge = reach
        if not reached and len(hits) < wanted:
            return None
        batch *= 2
    return _ordered(conn, run, match, hits, scores, wanted, newest)


def _ranges(rowids: list[int], gap: int) -> list[tuple[int, int]]:
    """Sorted ``rowids`` as ``(first, last)`` runs, split where two are more than ``gap`` apart."""
    runs: list[tuple[int, int]] = []
    first = last = rowids[0]
    for rowid in rowids[1:]:
        if rowid - last > gap:
            runs.append((first, last))
            first = rowid
        last = rowid
    return [*runs, (first, last)]


def _matching(
    conn: sqlite3.Connection,
    run: Run,
    match: str,
    parts: list[tuple[int, str]],
    density: float,
    scores: dict[int, float],
) -> list[tuple[int, str]]:
    """The ``parts`` (``(rowid, timestamp)``) that ``match``, asked of FTS5 by ranges
    of their rowids (the batch's rowids a filter FTS5 does not see: ``rowid + 0``).
    Asked in one range, the hits' bm25 scores come with them (into ``scores``)."""
    if not parts:
        return []
    times = dict(parts)
    rowids = sorted(times)
    listed = json.dumps(rowids)
    ranges = _ranges(rowids, max(64, int(RANGE_COST_HITS / density)))
    score = "bm25(parts_fts)" if len(ranges) == 1 else "NULL"
    sql = f"""SELECT rowid, {score} FROM parts_fts WHERE parts_fts MATCH ? AND rowid BETWEEN ? AND ?
        AND (rowid + 0) IN (SELECT value FROM json_each(?))"""
    found: list[tuple[int, str]] = []
    for low, high in ranges:
        for rowid, bm25 in run(conn, sql, (match, low, high, listed)):
            found.append((rowid, times[rowid]))
            if bm25 is not None:
                scores[rowid] = bm25
    return found


def _ordered(
    conn: sqlite3.Connection,
    run: Run,
    match: str,
    hits: list[tuple[int, str]],
    scores: dict[int, float],
    wanted: int,
    newest: bool,
) -> list[tuple[int, float]]:
    """The first ``wanted`` of ``hits`` (``(rowid, timestamp)``, every hit of each time
    they hold) in order: time (``newest`` first, or oldest), then bm25 score,
    session, message and part.  Scores and keys are read for the hits of the times
    the page reaches only, the scores not in ``scores`` (by rowid) in one statement
    (FTS5's bm25 first counts every row holding each phrase, once a statement)."""
    hits.sort(key=lambda hit: hit[1], reverse=newest)
    times = {hit[1] for hit in hits[:wanted]}
    rowids = [rowid for rowid, time in hits if time in times]
    unscored = [rowid for rowid in rowids if rowid not in scores]
    if unscored:
        sql = """SELECT rowid, bm25(parts_fts) FROM parts_fts WHERE parts_fts MATCH ?
            AND rowid BETWEEN ? AND ? AND (rowid + 0) IN (SELECT value FROM json_each(?))"""
        scores.update(run(conn, sql, (match, min(unscored), max(unscored), json.dumps(unscored))))
    listed = json.dumps(rowids)
    keyed = """SELECT p.rowid, m.timestamp, m.session_key, m.id, p.idx FROM parts p
        JOIN messages m ON m.rowid = p.message_rowid WHERE p.rowid IN (SELECT value FROM json_each(?))"""
    scored = run(conn, keyed, (listed,))
    scored.sort(key=lambda hit: hit[2:])  # session, message, part
    scored.sort(key=lambda hit: scores[hit[0]])
    scored.sort(key=lambda hit: hit[1], reverse=newest)
    return [(hit[0], scores[hit[0]]) for hit in scored[:wanted]]
