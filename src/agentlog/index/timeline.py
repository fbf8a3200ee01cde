"""A search sorted newest or oldest first without scoring and sorting every hit.

The joined query (:func:`agentlog.index.search.search`) scores every hit with
bm25, looks up its time and sorts them all: a word in half a million parts took
seconds, and bm25 alone reads each hit's size (FTS5's ``docsize`` table, a few µs
a hit: most of a prefix query's time).  Part rowids do not follow time across
sessions, so FTS5's rowid order cannot stop early.  :func:`time_sorted` instead:

* when many parts match (:data:`TIME_SCAN_FROM`), walks the index
  ``messages_timestamp`` from one end, a batch of whole seconds at a time (every
  message of each ``timestamp`` it reaches, so a tie is never cut), and asks FTS5
  which of the batch's parts match, by rowid ranges (FTS5 seeks its lists to a
  range); it stops once the page (``offset + limit`` hits, or sessions) is full;
* when few do, looks up every hit's time;

then scores only the hits sharing a ``timestamp`` with the page's (``bm25``, in one
statement: the score breaks a tie of times; FTS5's bm25 first counts every row
holding each phrase, once a statement) and orders them exactly as the joined
query (:data:`agentlog.index.search._ORDER` / ``_GROUP_ORDER``, then session,
message and part).  A walk gives up when it would reach the messages with no
time (sorted last, all tied) or past :data:`WALK_LIMIT` parts: then every hit is
sorted (flat) or the joined query runs (grouped).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal

TIME_SCAN_FROM = 5_000
"""Parts matching (before filters) from which a time sort walks messages instead of
looking up every hit's time (~3 µs a hit; a walk's first batch costs a few ms)."""
WALK_LIMIT = 200_000
"""Parts walked (or, grouped, held by the sessions to score) at most before a walk
gives up (a rare filter, a page deep in the list, huge sessions)."""
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

KEYED = """SELECT p.rowid, m.timestamp, m.session_key, m.id, p.idx FROM parts p
    JOIN messages m ON m.rowid = p.message_rowid WHERE p.rowid IN (SELECT value FROM json_each(?))"""
"""The keys that order the listed hits (one JSON list of part rowids):
``(part rowid, timestamp, session, message id, part idx)``."""


def hit_keys(conn: sqlite3.Connection, run: Run, rowids: Iterable[int]) -> list[tuple[Any, ...]]:
    """:data:`KEYED` of ``rowids`` (in no order), run by ``run``; one parameter
    however many they are (a deep page lists more than SQLite binds)."""
    return run(conn, KEYED, (json.dumps(list(rowids)),))


def _scores(conn: sqlite3.Connection, run: Run, match: str, rowids: list[int]) -> list[tuple[int, float]]:
    """The bm25 scores of those of ``rowids`` that ``match``, asked as their one range
    (FTS5's bm25 counts every row holding each phrase once a statement)."""
    sql = """SELECT rowid, bm25(parts_fts) FROM parts_fts WHERE parts_fts MATCH ?
        AND rowid BETWEEN ? AND ? AND (rowid + 0) IN (SELECT value FROM json_each(?))"""
    return run(conn, sql, (match, min(rowids), max(rowids), json.dumps(rowids)))


def _filtered(where: list[str], joins_sessions: bool) -> tuple[str, str]:
    """The join and the conditions that put ``where`` (SQL over ``m`` messages,
    ``p`` parts and, with ``joins_sessions``, ``s`` sessions) on a query of parts."""
    joined = "JOIN sessions s ON s.key = m.session_key" if joins_sessions else ""
    return joined, "".join(" AND " + clause for clause in where)


def _looked_up(
    conn: sqlite3.Connection,
    run: Run,
    columns: str,
    rowids: list[int],
    where: list[str],
    params: list[object],
    joins_sessions: bool,
) -> list[tuple[Any, ...]]:
    """``p.rowid`` and ``columns`` of those of ``rowids`` that pass ``where`` (:func:`_filtered`)."""
    joined, conditions = _filtered(where, joins_sessions)
    sql = f"""SELECT p.rowid, {columns} FROM parts p JOIN messages m ON m.rowid = p.message_rowid {joined}
        WHERE p.rowid IN (SELECT value FROM json_each(?)) {conditions}"""
    return run(conn, sql, (json.dumps(rowids), *params))


def time_sorted(
    conn: sqlite3.Connection,
    run: Run,
    match: str,
    where: list[str],
    params: list[object],
    joins_sessions: bool,
    wanted: int,
    sort: Literal["newest", "oldest"],
    by_session: bool,
    count: Callable[[], tuple[int, bool]],
) -> tuple[list[tuple[int, float, int, int]], int, bool] | None:
    """The first ``wanted`` hits of ``match`` (an FTS5 expression) passing ``where``
    (SQL over ``m`` messages, ``p`` parts and, with ``joins_sessions``, ``s`` sessions;
    ``params`` its values) in ``sort`` order, ``by_session`` one per session (its best
    hit): ``(rows, total, exact)``, ``rows`` each ``(part rowid, bm25 score, session
    hits, 0)``.  ``total``: every hit when fewer than :data:`TIME_SCAN_FROM` match;
    else ``count()`` (the search's capped count, ``exact`` or a lower bound), grouped
    the sessions walked (a lower bound).  ``None``: sort every hit by the joined query
    instead (grouped sessions to score holding too many parts, or a grouped walk
    that gave up).  ``run``: runs one statement within the search's time limit
    (:meth:`agentlog.index.search.Budget.run`); ``count``: :func:`agentlog.index.search._capped_count`'s."""
    found = f"SELECT rowid FROM parts_fts WHERE parts_fts MATCH ? LIMIT {TIME_SCAN_FROM}"
    rowids = [rowid for (rowid,) in run(conn, found, (match,))]
    if len(rowids) < TIME_SCAN_FROM:  # few: every hit's time, scores for the page's times only
        if by_session:
            sessions = sessions_whole(conn, run, match, rowids, where, params, joins_sessions, wanted, sort)
            if sessions is None:
                return None
            return [(rowid, score, hits, 0) for rowid, score, hits in sessions[0]], sessions[1], True
        few, total = sorted_whole(conn, run, match, rowids, where, params, joins_sessions, wanted, sort)
        return [(rowid, score, 1, 0) for rowid, score in few], total, True
    total, exact = count()
    if by_session:
        grouped = sessions_by_time(conn, run, match, where, params, joins_sessions, wanted, sort)
        if grouped is None:
            return None
        return [(rowid, score, hits, 0) for rowid, score, hits in grouped[0]], grouped[1], False
    walked = by_time(conn, run, match, where, params, joins_sessions, wanted, sort)
    if walked is None:  # the walk gave up: sort them all
        every = [rowid for (rowid,) in run(conn, "SELECT rowid FROM parts_fts WHERE parts_fts MATCH ?", (match,))]
        walked, _ = sorted_whole(conn, run, match, every, where, params, joins_sessions, wanted, sort)
    return [(rowid, score, 1, 0) for rowid, score in walked], total, exact


class _Walk:
    """Messages walked from one end of time (``sort``), a batch of whole seconds at a
    time: :meth:`batches` yields each batch's hits ``(part rowid, timestamp)``, and
    stops when the timed messages run out or past :data:`WALK_LIMIT` parts.  The
    scores of the hits a batch asked in one range are kept in ``scores``."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        run: Run,
        match: str,
        where: list[str],
        params: list[object],
        joins_sessions: bool,
        wanted: int,
        sort: Literal["newest", "oldest"],
    ) -> None:
        self.conn, self.run, self.match, self.params = conn, run, match, params
        self.newest = sort == "newest"
        self.scores: dict[int, float] = {}
        last_part = conn.execute("SELECT max(rowid) FROM parts").fetchone()[0] or 1
        last_message = conn.execute("SELECT max(rowid) FROM messages").fetchone()[0] or 1
        sample = run(conn, _SAMPLE, (match,))[0]  # the newest rowids' hits: how dense they are
        self.density = min(1.0, max(sample[0], 1) / max(1, last_part - (sample[1] or last_part) + 1))
        per_message = max(1.0, last_part / last_message)
        self.batch = min(WALK_LIMIT, max(FIRST_BATCH, int(wanted / self.density / per_message)))
        beyond, direction = ("<", "DESC") if self.newest else (">", "ASC")
        sessions, conditions = _filtered(where, joins_sessions)
        # without filters both indexes cover the walk: no message or part row is read
        self.walk = f"""SELECT p.rowid, m.timestamp FROM messages m INDEXED BY messages_timestamp
            JOIN parts p INDEXED BY parts_message ON p.message_rowid = m.rowid {sessions}
            WHERE m.timestamp {">=" if self.newest else "<="} ? AND m.timestamp {beyond} ?{conditions}"""
        self.reach = f"""SELECT timestamp FROM messages INDEXED BY messages_timestamp
            WHERE timestamp {beyond} ? ORDER BY timestamp {direction} LIMIT 1 OFFSET ?"""
        self.last = f"""SELECT timestamp FROM messages INDEXED BY messages_timestamp
            WHERE timestamp {beyond} ? ORDER BY timestamp {"ASC" if self.newest else "DESC"} LIMIT 1"""

    def batches(self) -> Iterator[list[tuple[int, str]]]:
        """Each batch's hits, in walk order (within a batch, in no order)."""
        walked, batch = 0, self.batch
        edge = "\U0010ffff" if self.newest else ""  # the time walked up to, exclusive: none yet
        while walked <= WALK_LIMIT:
            reached = self.run(self.conn, self.reach, (edge, batch - 1))  # the batch-th message's time
            last = reached or self.run(self.conn, self.last, (edge,))  # fewer left: to the last timed one
            if not last:
                return  # every timed message walked: the rest have no time (tied, last)
            reach = last[0][0]
            parts = self.run(self.conn, self.walk, (reach, edge, *self.params))  # every message of each time reached
            walked += len(parts)
            yield _matching(self.conn, self.run, self.match, parts, self.density, self.scores)
            if not reached:
                return
            edge, batch = reach, batch * 2


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
    walk = _Walk(conn, run, match, where, params, joins_sessions, wanted, sort)
    hits: list[tuple[int, str]] = []  # (part rowid, timestamp)
    for found in walk.batches():
        hits += found
        if len(hits) >= wanted:
            return _ordered(conn, run, match, hits, walk.scores, wanted, walk.newest)
    return None


def sorted_whole(
    conn: sqlite3.Connection,
    run: Run,
    match: str,
    rowids: list[int],
    where: list[str],
    params: list[object],
    joins_sessions: bool,
    wanted: int,
    sort: Literal["newest", "oldest"],
) -> tuple[list[tuple[int, float]], int]:
    """:func:`by_time`'s page by sorting every hit (few match), given ``rowids``, every
    part ``match`` finds: their times looked up (with the filters), scores read only
    for the hits of the times the page reaches (each score reads the part's size in
    FTS5's ``docsize`` table: a few µs a hit, most of a prefix query's time when
    every hit was scored).  Also returns how many hits pass the filters."""
    hits = _looked_up(conn, run, "m.timestamp", rowids, where, params, joins_sessions)
    timed = [hit for hit in hits if hit[1] is not None]
    untimed = [hit for hit in hits if hit[1] is None]  # last, tied
    ordered = _ordered(conn, run, match, timed, {}, wanted, sort == "newest") if timed else []
    if len(ordered) < wanted and untimed:
        ordered += _ordered(conn, run, match, untimed, {}, wanted - len(ordered), True)
    return ordered, len(hits)


def sessions_by_time(
    conn: sqlite3.Connection,
    run: Run,
    match: str,
    where: list[str],
    params: list[object],
    joins_sessions: bool,
    wanted: int,
    sort: Literal["newest", "oldest"],
) -> tuple[list[tuple[int, float, int]], int] | None:
    """The first ``wanted`` sessions holding hits (as :func:`by_time`'s), ordered by
    their newest hit (``sort`` newest; oldest: their oldest), then their best hit's
    bm25 score, session, message and part: ``(rows, sessions)``, ``rows`` each
    ``(best hit's part rowid, its score, the session's hits)``, ``sessions`` how many
    sessions the walk found (a lower bound: it stopped there).  A session's best hit
    is its first in the rank order (bm25, newest, message, part) among all its hits.
    ``None`` when the walk gives up, or the sessions to score hold more than
    :data:`WALK_LIMIT` parts."""
    walk = _Walk(conn, run, match, where, params, joins_sessions, wanted, sort)
    edges: dict[str, str] = {}  # session: the time of its newest (oldest) hit
    keyed = """SELECT p.rowid, m.session_key FROM parts p JOIN messages m ON m.rowid = p.message_rowid
        WHERE p.rowid IN (SELECT value FROM json_each(?))"""
    for found in walk.batches():
        times = dict(found)
        for rowid, session in run(conn, keyed, (json.dumps(list(times)),)):
            edge = edges.get(session)
            if edge is None or (times[rowid] > edge if walk.newest else times[rowid] < edge):
                edges[session] = times[rowid]
        if len(edges) >= wanted:
            break
    else:
        return None
    rows = _sessions_page(conn, run, match, where, params, joins_sessions, dict(edges), wanted, walk.newest)
    return None if rows is None else (rows, len(edges))


def sessions_whole(
    conn: sqlite3.Connection,
    run: Run,
    match: str,
    rowids: list[int],
    where: list[str],
    params: list[object],
    joins_sessions: bool,
    wanted: int,
    sort: Literal["newest", "oldest"],
) -> tuple[list[tuple[int, float, int]], int] | None:
    """:func:`sessions_by_time`'s page from ``rowids``, every part ``match`` finds (few):
    their sessions and times looked up (with the filters), and only the hits of the
    sessions the page reaches scored.  Returns every session holding hits as the count."""
    hits = _looked_up(conn, run, "m.session_key, m.timestamp", rowids, where, params, joins_sessions)
    newest = sort == "newest"
    edges: dict[str, str | None] = {}  # session: the time of its newest (oldest) hit; None: none timed
    for _, session, time in hits:
        edge = edges.get(session)
        if edge is None or (time is not None and (time > edge if newest else time < edge)):
            edges[session] = time
    known = {rowid: session for rowid, session, _ in hits}
    rows = _sessions_page(conn, run, match, where, params, joins_sessions, edges, wanted, newest, known)
    return None if rows is None else (rows, len(edges))


def _sessions_page(
    conn: sqlite3.Connection,
    run: Run,
    match: str,
    where: list[str],
    params: list[object],
    joins_sessions: bool,
    edges: dict[str, str | None],
    wanted: int,
    newest: bool,
    known: dict[int, str] | None = None,
) -> list[tuple[int, float, int]] | None:
    """The first ``wanted`` of the sessions of ``edges`` (each session's newest hit's
    time, or oldest when not ``newest``; ``None``: no hit timed, last) in the grouped
    order (:data:`agentlog.index.search._GROUP_ORDER`): that time, then the best hit's
    score, session, message and part; each ``(best hit's rowid, score, hits)``.  Only
    the sessions sharing a time with the page's are scored (:func:`_best_hits`, with
    ``known`` hits); ``None`` when they hold too many parts."""

    def by_edge(sessions: list[str]) -> None:  # newest (oldest) first, no time last: stable
        sessions.sort(key=lambda session: edges[session] or "", reverse=newest)
        sessions.sort(key=lambda session: edges[session] is None)

    order = list(edges)
    by_edge(order)
    reached = {edges[session] for session in order[:wanted]}
    scored = [session for session in order if edges[session] in reached]
    best = _best_hits(conn, run, match, where, params, joins_sessions, scored, known)
    if best is None:
        return None
    scored.sort(key=lambda session: best[session][1:])  # score, then the hit's session, message, part
    by_edge(scored)
    return [(best[session][0], best[session][1], best[session][-1]) for session in scored[:wanted]]


def _best_hits(
    conn: sqlite3.Connection,
    run: Run,
    match: str,
    where: list[str],
    params: list[object],
    joins_sessions: bool,
    sessions: list[str],
    known: dict[int, str] | None = None,
) -> dict[str, tuple[Any, ...]] | None:
    """Each of ``sessions``' best hit (the rank order: bm25, newest, message, part) and
    its hits: ``{session: (part rowid, score, session, message id, part idx, hits)}``.
    ``known``: every hit (filters passed) and its session, when known; else the
    sessions' parts are walked, and ``None`` when they hold more than :data:`WALK_LIMIT`."""
    if known is not None:
        wanted = set(sessions)
        owner = {rowid: session for rowid, session in known.items() if session in wanted}
    else:
        size = "SELECT sum(message_count) FROM sessions WHERE key IN (SELECT value FROM json_each(?))"
        if (run(conn, size, (json.dumps(sessions),))[0][0] or 0) > WALK_LIMIT:  # visible messages: < parts
            return None
        joined, conditions = _filtered(where, joins_sessions)
        parts = run(
            conn,
            f"""SELECT p.rowid, m.session_key FROM messages m INDEXED BY messages_time
            JOIN parts p INDEXED BY parts_message ON p.message_rowid = m.rowid {joined}
            WHERE m.session_key IN (SELECT value FROM json_each(?)){conditions}
            LIMIT {WALK_LIMIT + 1}""",
            (json.dumps(sessions), *params),
        )
        if len(parts) > WALK_LIMIT:
            return None
        owner = dict(parts)
    scores: dict[str, list[tuple[float, int]]] = {}
    for rowid, score in _scores(conn, run, match, sorted(owner)):
        scores.setdefault(owner[rowid], []).append((score, rowid))
    lowest = {session: min(found)[0] for session, found in scores.items()}
    tops = [rowid for session, found in scores.items() for score, rowid in found if score == lowest[session]]
    ranked = sorted(hit_keys(conn, run, tops), key=lambda row: row[2:])  # session, message, part
    ranked.sort(key=lambda row: (row[1] is not None, row[1] or ""), reverse=True)  # newest first, no time last
    best: dict[str, tuple[Any, ...]] = {}
    for rowid, _, session, message, idx in ranked:
        if session not in best:
            best[session] = (rowid, lowest[session], session, message, idx, len(scores[session]))
    return best


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
    hits.sort(key=lambda hit: hit[1] or "", reverse=newest)  # (no time: hits all without)
    times = {hit[1] for hit in hits[:wanted]}
    rowids = [rowid for rowid, time in hits if time in times]
    unscored = [rowid for rowid in rowids if rowid not in scores]
    if unscored:
        scores.update(_scores(conn, run, match, unscored))
    scored = hit_keys(conn, run, rowids)
    scored.sort(key=lambda hit: hit[2:])  # session, message, part
    scored.sort(key=lambda hit: scores[hit[0]])
    scored.sort(key=lambda hit: hit[1] or "", reverse=newest)
    return [(hit[0], scores[hit[0]]) for hit in scored[:wanted]]
