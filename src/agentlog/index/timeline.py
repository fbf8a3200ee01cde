"""A search sorted newest or oldest first without scoring and sorting every hit.

The joined query (:func:`agentlog.index.search.search`) scores every hit with
bm25, looks up its time and sorts them all: a word in half a million parts took
seconds, and bm25 alone reads each hit's size (FTS5's ``docsize`` table, a few µs
a hit: most of a prefix query's time).  Part rowids do not follow time across
sessions, so FTS5's rowid order cannot stop early.  :func:`time_sorted` first
counts the hits up to :data:`TIME_SCAN_FROM` or :data:`agentlog.index.rank.COUNT_CAP`
(one statement, whose count is also the phrase's count bm25 needs; a word with more
hits is found to have them by two look-ups, its first hit and the one at the cap:
:func:`_head`), then:

* when many parts match, walks the index ``messages_timestamp`` from one end, a
  batch of whole seconds at a time (every message of each ``timestamp`` it reaches,
  so a tie is never cut), and asks FTS5 which of the batch's parts match, by rowid
  ranges (FTS5 seeks its lists to a range); it stops once the page (``offset +
  limit`` hits, or sessions) is full (when every hit was counted, filters or not,
  the batch's parts are kept by that list instead: no FTS5 statement; with a prefix
  term, whose every statement costs FTS5 the merge of all its words' lists, each
  batch is one range, found and scored in one statement: :func:`_gap`; a word's
  batches of a page of hits, when scored through ``apsw``, are found and scored in one
  statement too: the hits sharing the page's seconds, most of a batch's where many
  short sessions share them, are not asked of FTS5 again; a page of sessions scores
  only each session's hits of its own second, a few of the batches' (1,400 hits
  scored a query on 1 M messages, against ~25 needed): its batches are asked of FTS5);
* when few do, looks up every hit's time (a message walked costs about half a hit
  looked up: one seek in ``parts_message`` each);

then scores only the hits sharing a ``timestamp`` with the page's, with each
phrase's rows counted once, up to ``COUNT_CAP`` (:class:`agentlog.index.rank.ListedScores`:
FTS5's own ``bm25()`` first counts every row holding each phrase, 20–280 ms for a
common word), and orders them as the joined query: time (none last), bm25 score,
session, message, part (:data:`agentlog.index.search._ORDER`, ``_TIE``).

A page of sessions is the same order with each session kept at its first hit
(:func:`first_hits`): sessions by their newest (oldest) hit's time, then the best
score among their hits of that second, then session, message and part; a session
shows that hit, and counts its hits of the seconds the page reaches (from the
first to the page's last session's, every hit when that one has no time).  Its
best hit over all its hits would need every hit of the session scored (a hundred
thousand for a common word in the long sessions the oldest page reaches).

A walk gives up when it would reach the messages with no time (sorted last, all
tied) or past :data:`WALK_LIMIT` parts: then every hit's time is looked up.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal, NamedTuple

from agentlog.index.rank import COMPOUND, COUNT_CAP, ListedScores, ranges_asked
from agentlog.index.runs import Run

Scorer = Callable[[list[int]], dict[int, float]]
"""``{rowid: bm25 score}`` of those of the listed part rowids that match the search
(:class:`agentlog.index.rank.ListedScores`, or :class:`_Remembered` of it)."""

TIME_SCAN_FROM = 5_000
"""Parts matching (before filters) from which a time sort walks messages instead of
looking up every hit's time (~3 µs a hit; a walk's first batch costs a few ms)."""
HEAD = COUNT_CAP + 1
"""Hits the first statement of a time sort counts at most (or :data:`TIME_SCAN_FROM`,
when more): its count is bm25's for a one-phrase query (:data:`agentlog.index.rank.COUNT_CAP`)
and, without filters, the total."""
WALK_LIMIT = 200_000
"""Parts walked at most before a walk gives up (a rare filter, a page deep in the list)."""
FIRST_BATCH = 256
"""Messages in the first batch at least; each next batch doubles."""
RANGE_COST_HITS = 300
"""A range query's fixed cost (~60 µs) in hits iterated (~0.2 µs each): two runs of
a batch's part rowids closer than ``RANGE_COST_HITS / density`` are asked as one range."""
MIN_GAP = 64
"""Rowids apart under which two runs of part rowids are always asked as one range."""

KEYED = """SELECT p.rowid, m.timestamp, m.session_key, m.id, p.idx FROM parts p
    JOIN messages m ON m.rowid = p.message_rowid WHERE p.rowid IN (SELECT value FROM json_each(?))"""
"""The keys that order the listed hits (one JSON list of part rowids):
``(part rowid, timestamp, session, message id, part idx)``."""


def hit_keys(conn: sqlite3.Connection, run: Run, rowids: Iterable[int]) -> list[tuple[Any, ...]]:
    """:data:`KEYED` of ``rowids`` (in no order), run by ``run``; one parameter
    however many they are (a deep page lists more than SQLite binds)."""
    return run(conn, KEYED, (json.dumps(list(rowids)),))


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


class Timed(NamedTuple):
    """:func:`time_sorted`'s page: ``rows`` each ``(part rowid, bm25 score, session
    hits, 0)``; ``total`` (``exact``, or a lower bound); ``estimated``: a score used
    an estimated count (:attr:`agentlog.index.rank.ListedScores.estimated`)."""

    rows: list[tuple[int, float, int, int]]
    total: int
    exact: bool
    estimated: bool


def time_sorted(
    conn: sqlite3.Connection,
    run: Run,
    stop: Callable[[], int],
    match: str,
    query: str,
    scope: str,
    where: list[str],
    params: list[object],
    joins_sessions: bool,
    wanted: int,
    sort: Literal["newest", "oldest"],
    by_session: bool,
    count: Callable[[int, int], tuple[int, bool]],
) -> Timed:
    """The first ``wanted`` hits of ``match`` (an FTS5 expression: ``scope`` +
    ``(query)``, ``query`` ``""`` for raw FTS5 syntax) passing ``where`` (SQL over
    ``m`` messages, ``p`` parts and, with ``joins_sessions``, ``s`` sessions;
    ``params`` its values) in ``sort`` order, ``by_session`` one per session
    (:func:`first_hits`).  ``total``: every hit (or session) when fewer than
    :data:`TIME_SCAN_FROM` match or the walk gave up; else ``count(rows, head)``
    (the search's capped count, ``exact`` or a lower bound, given the ``rows`` the
    ``MATCH`` alone finds counted up to ``head``), grouped the sessions walked (a
    lower bound).  ``run``: runs one statement within the search's time limit
    (:meth:`agentlog.index.search.Budget.run`), ``stop`` its progress check."""
    head = max(TIME_SCAN_FROM, HEAD)
    prefix = "*" in match  # (or a "*" in quotes, which FTS5 reads as a separator: only costs)
    rows, first, last, listed = _head(conn, run, match, head, prefix)
    density = min(1.0, rows / (last - first + 1)) if rows else 1.0  # of the oldest rowids' hits: a guess
    cap_counted = rows < head or rows == head == COUNT_CAP + 1  # the count bm25 needs, up to the cap
    counted = (rows, last) if cap_counted and rows <= COUNT_CAP + 1 else None
    listed_scores = ListedScores(conn, match, query, scope, run, stop, counted, _gap(density, prefix))
    scores: Scorer = _Remembered(listed_scores) if prefix else listed_scores
    rowids = json.loads(f"[{listed or ''}]") if rows < head else None  # every hit, when counted whole
    if rowids is not None and rows < TIME_SCAN_FROM:
        # few: every hit's time, scores for the page's times only
        if by_session:
            grouped, sessions = sessions_whole(conn, run, scores, rowids, where, params, joins_sessions, wanted, sort)
            return Timed(grouped, sessions, True, listed_scores.estimated)
        few, total = sorted_whole(conn, run, scores, rowids, where, params, joins_sessions, wanted, sort)
        return Timed([(rowid, score, 1, 0) for rowid, score in few], total, True, listed_scores.estimated)
    total, exact = count(rows, head)
    known = set(rowids) if rowids is not None else None  # counted whole: the walk asks FTS5 nothing
    walked: list[tuple[int, float, int, int]] | None
    scored_walk = prefix or (known is None and not by_session and listed_scores.through_apsw)
    if scored_walk and not prefix:
        scores = _Remembered(listed_scores)
    walk = _Walk(conn, run, match, where, params, joins_sessions, wanted, sort, density, known, scores if scored_walk else None)
    if by_session:
        walked, sessions = sessions_by_time(conn, run, scores, walk, wanted)
        if walked is not None:
            return Timed(walked, sessions, False, listed_scores.estimated)
    else:
        flat = by_time(conn, run, scores, walk, wanted)
        if flat is not None:
            return Timed([(rowid, score, 1, 0) for rowid, score in flat], total, exact, listed_scores.estimated)
    every = [rowid for (rowid,) in run(conn, "SELECT rowid FROM parts_fts WHERE parts_fts MATCH ?", (match,))]
    if by_session:  # the walk gave up: sort them all
        grouped, sessions = sessions_whole(conn, run, scores, every, where, params, joins_sessions, wanted, sort)
        return Timed(grouped, sessions, True, listed_scores.estimated)
    whole, _ = sorted_whole(conn, run, scores, every, where, params, joins_sessions, wanted, sort)
    return Timed([(rowid, score, 1, 0) for rowid, score in whole], total, exact, listed_scores.estimated)


_LISTED = """SELECT count(*), min(rowid), max(rowid), group_concat(rowid)
    FROM (SELECT rowid FROM parts_fts WHERE parts_fts MATCH ? LIMIT ?)"""
"""The first hits of a ``MATCH`` up to a limit, in FTS5's order (rowids ascending):
how many, the lowest and highest rowid, and their rowids (``"1,5,9"``)."""
_NTH = "SELECT rowid FROM parts_fts WHERE parts_fts MATCH ? LIMIT 1 OFFSET ?"
"""The rowid of a ``MATCH``'s hit at an offset, in FTS5's order (none: fewer match)."""


def _head(conn: sqlite3.Connection, run: Run, match: str, head: int, prefix: bool) -> tuple[int, int, int, str | None]:
    """:data:`_LISTED` of ``match`` up to ``head`` hits: ``(rows, lowest rowid, highest
    rowid, rowids)`` (rowids 0 when none match), the rowids ``None`` when ``head`` match
    (a common word: not read).
    Unless ``prefix`` (its every statement merges its words' lists again), the
    ``head``-th hit is asked first (:data:`_NTH`): when there is one, the lowest is
    the first (the list and the ``min``/``max`` of ``head`` hits cost 2–8 ms, the
    two look-ups 0.5–1 ms)."""
    if not prefix:
        nth = run(conn, _NTH, (match, head - 1))
        if nth:
            return head, run(conn, _NTH, (match, 0))[0][0], nth[0][0], None
    rows, first, last, listed = run(conn, _LISTED, (match, head))[0]
    return rows, first or 0, last or 0, listed if rows < head else None


class _Walk:
    """Messages walked from one end of time (``sort``), a batch of whole seconds at a
    time: :meth:`batches` yields each batch's hits ``(part rowid, timestamp)``, and
    stops when the timed messages run out or past :data:`WALK_LIMIT` parts.
    ``density``: the share of parts that match, a guess (sizing the batches and the
    ranges asked of FTS5: never changes a result); ``known``: every hit, when known
    (then kept without asking FTS5); else ``scored``, when given: each batch's parts
    asked of it (the hits found and scored in one statement: for a prefix term, whose
    every statement costs FTS5 the merge of its words' lists (:func:`_gap`), and for
    hits scored through ``apsw``), else :func:`_matching`."""

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
        density: float,
        known: set[int] | None = None,
        scored: Scorer | None = None,
    ) -> None:
        self.conn, self.run, self.match, self.params, self.known = conn, run, match, params, known
        self.scored = scored
        self.newest = sort == "newest"
        last_part = conn.execute("SELECT max(rowid) FROM parts").fetchone()[0] or 1
        last_message = conn.execute("SELECT max(rowid) FROM messages").fetchone()[0] or 1
        self.density = density
        per_message = max(1.0, last_part / last_message)
        self.batch = min(WALK_LIMIT, max(FIRST_BATCH, int(wanted / self.density / per_message)))
        beyond, direction = ("<", "DESC") if self.newest else (">", "ASC")
        sessions, conditions = _filtered(where, joins_sessions)
        # without filters both indexes cover the walk: no message or part row is read; one
        # row a second (its parts' rowids listed): a row a part cost ~1 µs in Python, 3/4 of the walk
        self.walk = f"""SELECT m.timestamp, count(*), group_concat(p.rowid) FROM messages m INDEXED BY messages_timestamp
            JOIN parts p INDEXED BY parts_message ON p.message_rowid = m.rowid {sessions}
            WHERE m.timestamp {">=" if self.newest else "<="} ? AND m.timestamp {beyond} ?{conditions}
            GROUP BY m.timestamp"""
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
            parts: dict[int, str] = {}  # every part of each message of each time reached: its time
            for time, count, rowids in self.run(self.conn, self.walk, (reach, edge, *self.params)):
                stamp: str = time
                parts.update(dict.fromkeys(map(int, rowids.split(",")), stamp))
                walked += count
            if self.known is not None:
                yield [(rowid, parts[rowid]) for rowid in self.known.intersection(parts)]
            elif self.scored is not None:
                yield [(rowid, parts[rowid]) for rowid in self.scored(list(parts))]
            else:
                yield _matching(self.conn, self.run, self.match, parts, _gap(self.density, False))
            if not reached:
                return
            edge, batch = reach, batch * 2


def by_time(
    conn: sqlite3.Connection, run: Run, scores: Scorer, walk: _Walk, wanted: int
) -> list[tuple[int, float]] | None:
    """The first ``wanted`` hits ``walk`` finds (its search's, passing its filters, in its
    order) as ``(part rowid, bm25 score)`` (by ``scores``); ``None`` when the walk gives
    up (see the module).  ``run``: runs one statement within the search's time limit
    (:meth:`agentlog.index.search.Budget.run`)."""
    hits: list[tuple[int, str]] = []  # (part rowid, timestamp)
    for found in walk.batches():
        hits += found
        if len(hits) >= wanted:
            return _ordered(conn, run, scores, hits, wanted, walk.newest)
    return None


def sorted_whole(
    conn: sqlite3.Connection,
    run: Run,
    scores: Scorer,
    rowids: list[int],
    where: list[str],
    params: list[object],
    joins_sessions: bool,
    wanted: int,
    sort: Literal["newest", "oldest"],
) -> tuple[list[tuple[int, float]], int]:
    """:func:`by_time`'s page by sorting every hit (few match), given ``rowids``, every
    part the search's ``MATCH`` finds: their times looked up (with the filters), scores
    read only for the hits of the times the page reaches (each score reads the part's
    size in FTS5's ``docsize`` table: a few µs a hit, most of a prefix query's time
    when every hit was scored).  Also returns how many hits pass the filters."""
    hits = _looked_up(conn, run, "m.timestamp", rowids, where, params, joins_sessions)
    timed = [hit for hit in hits if hit[1] is not None]
    untimed = [hit for hit in hits if hit[1] is None]  # last, tied
    ordered = _ordered(conn, run, scores, timed, wanted, sort == "newest") if timed else []
    if len(ordered) < wanted and untimed:
        ordered += _ordered(conn, run, scores, untimed, wanted - len(ordered), True)
    return ordered, len(hits)


def sessions_by_time(
    conn: sqlite3.Connection, run: Run, scores: Scorer, walk: _Walk, wanted: int
) -> tuple[list[tuple[int, float, int, int]] | None, int]:
    """The first ``wanted`` sessions holding hits ``walk`` finds, in :func:`first_hits`'
    order, walked until ``wanted`` are found: ``(rows, sessions)``, ``rows`` as
    :attr:`Timed.rows` (``None`` when the walk gives up), ``sessions`` how many
    sessions the walk found (a lower bound: it stopped there).  Every hit of the
    seconds walked is keyed (:data:`KEYED`), so the sessions' hits of the seconds the
    page reaches are all known."""
    keyed: list[tuple[Any, ...]] = []
    sessions: set[str] = set()
    for found in walk.batches():
        batch = hit_keys(conn, run, (rowid for rowid, _ in found))
        keyed += batch
        sessions.update(hit[2] for hit in batch)
        if len(sessions) >= wanted:
            return first_hits(scores, keyed, wanted, walk.newest), len(sessions)
    return None, len(sessions)


def sessions_whole(
    conn: sqlite3.Connection,
    run: Run,
    scores: Scorer,
    rowids: list[int],
    where: list[str],
    params: list[object],
    joins_sessions: bool,
    wanted: int,
    sort: Literal["newest", "oldest"],
) -> tuple[list[tuple[int, float, int, int]], int]:
    """:func:`sessions_by_time`'s page from ``rowids``, every part the search's
    ``MATCH`` finds: every hit keyed (with the filters).  Returns every session holding
    hits as the count."""
    keyed = _looked_up(conn, run, "m.timestamp, m.session_key, m.id, p.idx", rowids, where, params, joins_sessions)
    return first_hits(scores, keyed, wanted, sort == "newest"), len({hit[2] for hit in keyed})


def first_hits(
    scores: Scorer, keyed: list[tuple[Any, ...]], wanted: int, newest: bool
) -> list[tuple[int, float, int, int]]:
    """The first ``wanted`` sessions of ``keyed`` (hits as :data:`KEYED` rows: every hit
    of each second they hold) with each session at its first hit in the time order
    (time ``newest`` first or oldest, no time last; bm25 score; session, message,
    part): sessions by their newest (oldest) hit's time, then the best score among
    their hits of that second, then that hit's session, message and part.  Each row
    ``(that hit's rowid, its score, the session's hits, 0)``, the hits those of the
    seconds the page reaches: at or after (``newest``; else at or before) the page's
    last session's time, every hit when it has none.  Only the hits of each session's
    own second, for the sessions of the page's seconds, are scored."""
    edges: dict[str, str | None] = {}  # session: its newest (oldest) hit's time; None: none timed
    for _, time, session, _, _ in keyed:
        edge = edges.get(session)
        if session not in edges or (time is not None and (edge is None or (time > edge if newest else time < edge))):
            edges[session] = time
    order = sorted(edges, key=lambda session: edges[session] or "", reverse=newest)
    order.sort(key=lambda session: edges[session] is None)  # stable: no time last
    reached = {edges[session] for session in order[:wanted]}
    firsts = [hit for hit in keyed if edges[hit[2]] in reached and hit[1] == edges[hit[2]]]
    scored = scores([hit[0] for hit in firsts])
    firsts.sort(key=lambda hit: hit[2:])  # session, message, part
    firsts.sort(key=lambda hit: scored[hit[0]])
    firsts.sort(key=lambda hit: hit[1] or "", reverse=newest)
    firsts.sort(key=lambda hit: hit[1] is None)
    page: dict[str, tuple[Any, ...]] = {}
    for hit in firsts:
        if hit[2] not in page:
            page[hit[2]] = hit
            if len(page) == wanted:
                break
    if not page:
        return []
    last = list(page.values())[-1][1]
    counts: dict[str, int] = dict.fromkeys(page, 0)
    for _, time, session, _, _ in keyed:
        if session in counts and (last is None or (time is not None and (time >= last if newest else time <= last))):
            counts[session] += 1
    return [(hit[0], scored[hit[0]], counts[session], 0) for session, hit in page.items()]


def _matching(
    conn: sqlite3.Connection, run: Run, match: str, parts: dict[int, str], gap: int
) -> list[tuple[int, str]]:
    """The ``parts`` (``{rowid: timestamp}``) that ``match``, as ``(rowid, timestamp)``, asked of
    FTS5 by ranges of their rowids split where two are more than ``gap`` apart
    (:func:`agentlog.index.rank.ranges_asked`), up to
    :data:`~agentlog.index.rank.COMPOUND` in one statement."""
    if not parts:
        return []
    asked = ranges_asked(sorted(parts), gap)
    one = "SELECT rowid FROM parts_fts WHERE parts_fts MATCH ?"
    found: list[tuple[int, str]] = []
    for at in range(0, len(asked), COMPOUND):  # the ranges in one statement (a statement costs ~10 µs)
        part = asked[at : at + COMPOUND]
        sql = " UNION ALL ".join(one + condition for condition, _ in part)
        found += [(rowid, parts[rowid]) for (rowid,) in run(conn, sql, tuple(v for _, bound in part for v in (match, *bound)))]
    return found


class _Remembered:
    """``scores`` (a :data:`Scorer`) that asks each rowid of it once: the scores of
    every hit of a walk's batches are kept for the page's order."""

    def __init__(self, scores: Scorer) -> None:
        self.scores = scores
        self.asked: set[int] = set()
        self.scored: dict[int, float] = {}

    def __call__(self, rowids: list[int]) -> dict[int, float]:
        wanted = set(rowids)  # (by sets: a walk's batch asks every part it walked, a few hits among them)
        new = wanted.difference(self.asked)
        if new:
            self.scored.update(self.scores(list(new)))
            self.asked.update(new)
        scored = self.scored
        small, large = (wanted, scored) if len(wanted) < len(scored) else (scored, wanted)
        return {rowid: scored[rowid] for rowid in small if rowid in large}


def _gap(density: float, prefix: bool) -> int:
    """Rowids apart from which two runs of parts are asked of FTS5 as two ranges, for
    hits of ``density``: a range's fixed cost is :data:`RANGE_COST_HITS` hits iterated;
    with a ``prefix`` term (``*``) it is the whole query's: FTS5 merges every list of
    the prefix's words into one, whatever the range (300–800 ms for ``te*`` on 1 M
    messages), so the parts are asked as one range."""
    return sys.maxsize if prefix else max(MIN_GAP, int(RANGE_COST_HITS / density))


def _ordered(
    conn: sqlite3.Connection,
    run: Run,
    scores: Scorer,
    hits: list[tuple[int, str]],
    wanted: int,
    newest: bool,
) -> list[tuple[int, float]]:
    """The first ``wanted`` of ``hits`` (``(rowid, timestamp)``, every hit of each time
    they hold) in order: time (``newest`` first, or oldest), then bm25 score,
    session, message and part.  Scores (by ``scores``, in one statement) and keys are
    read for the hits of the times the page reaches only."""
    hits.sort(key=lambda hit: hit[1] or "", reverse=newest)  # (no time: hits all without)
    times = {hit[1] for hit in hits[:wanted]}
    tied = [hit for hit in hits if hit[1] in times]
    scored = scores([rowid for rowid, _ in tied])
    tied.sort(key=lambda hit: scored[hit[0]])
    tied.sort(key=lambda hit: hit[1] or "", reverse=newest)
    if len(tied) > wanted:  # keyed: the page's, and those tied with its last in time and score
        last = tied[wanted - 1]
        tied = [hit for hit in tied if _before(hit, last, scored, newest)]
    keyed = hit_keys(conn, run, (rowid for rowid, _ in tied))
    keyed.sort(key=lambda hit: hit[2:])  # session, message, part
    keyed.sort(key=lambda hit: scored[hit[0]])
    keyed.sort(key=lambda hit: hit[1] or "", reverse=newest)
    return [(hit[0], scored[hit[0]]) for hit in keyed[:wanted]]


def _before(hit: tuple[int, str], last: tuple[int, str], scored: dict[int, float], newest: bool) -> bool:
    """Whether ``hit`` (``(rowid, timestamp)``) comes before ``last`` or ties with it in
    time and score (then session, message and part order them)."""
    if hit[1] != last[1]:
        return hit[1] > last[1] if newest else hit[1] < last[1]
    return scored[hit[0]] <= scored[last[0]]
