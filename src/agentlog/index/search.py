"""Full-text search over the index (SQLite FTS5, ranked by bm25).

Indexed: user prompts, assistant text, tool names, inputs and outputs, and
(only with ``reasoning=True``) reasoning.  Meta/injected messages are not
searched.  What the user typed is read by :func:`agentlog.index.fts.translate`
(literal words by default, operators only when written explicitly, FTS5 syntax
in raw mode).

A search runs in two steps: the matching parts are ranked and counted without
their text, then snippets are cut for the one page shown, by :func:`snippet` from
the stored part (``parts_fts`` holds no text of its own, and what it indexes is
rewritten for unspaced scripts and emoji, see :func:`agentlog.index.fts.index_text`).  Each search has a
time limit, enforced by SQLite's progress handler, which also asks ``cancelled``
(e.g. "has the browser gone away?").
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal, get_args

import msgspec

from agentlog.errors import AgentlogError, UsageError
from agentlog.index import runs
from agentlog.index.blocks import Block, First, Walked, firsts_of, flat, grouped, rank_order
from agentlog.index.fts import Translation, fallback, literal_count, stored_text, translate
from agentlog.index.rank import (
    COUNT_CAP,
    ESTIMATED_NOTE,
    Scored,
    Scores,
    ranges_scores,
    window_scores,
)
from agentlog.index.snippets import snippet
from agentlog.index.store import iso
from agentlog.index.stored import row_decoder, stored_time
from agentlog.index.timeline import hit_keys, time_sorted
from agentlog.query import FOLDER_CONTAINS_SQL, sql_functions

MARK_START, MARK_END = "\x02", "\x03"
"""Snippet highlight markers: control characters a snippet holds only as its marks (the text's own are shown as symbols, :func:`agentlog.index.snippets.snippet`)."""

SearchSort = Literal["rank", "newest", "oldest"]
SORTS: tuple[str, ...] = get_args(SearchSort)
TIME_LIMIT_S = 2.0
"""Seconds a search may run before it is stopped (:class:`SearchStopped`)."""
PROGRESS_STEPS = 2_000
"""SQLite virtual-machine steps between two looks at the clock (a few µs)."""

NOT_SYNTAX = ("locked", "busy", "disk", "readonly", "no such table", "malformed", "memory")
"""Words of the SQLite errors that are not about the query's syntax (all others are)."""

_ORDER = {
    "rank": "score, ts DESC",
    "newest": "ts IS NULL, ts DESC, score",
    "oldest": "ts IS NULL, ts ASC, score",
}
_TIE = "session_key, message_id, idx"
_GROUP_ORDER = {"rank": "score, newest DESC"}


class SearchStopped(AgentlogError):
    """A search that ran out of time or whose client went away."""

    exit_code = 1


class Hit(msgspec.Struct, kw_only=True):
    """One search result: where it is and a snippet (markers around matches).
    ``session_hits``: how many hits its session holds (grouped searches; 1 otherwise)."""

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
    session_hits: int = 1


class HitPage(msgspec.Struct, kw_only=True):
    """One page of a search: ``hits`` (at most ``limit``, from ``offset``),
    ``total`` (every hit — or every session, when grouped — when
    ``total_exact``; otherwise a lower bound: more match, see
    :data:`TOTAL_CAP`), ``match`` (the FTS5 expression run), ``terms`` (the
    query's words, for highlighting) and ``note`` (how the query was read when
    not as typed)."""

    hits: list[Hit]
    total: int
    offset: int
    limit: int
    match: str
    terms: list[str]
    note: str | None = None
    total_exact: bool = True

    @property
    def total_text(self) -> str:
        """``total`` as every surface shows it: ``1,234``, or ``10,000+`` when a lower bound."""
        return total_text(self.total, self.total_exact)

    @property
    def next_offset(self) -> int | None:
        """The ``offset`` of the next page, ``None`` on the last one (the API's page cursor);
        past an inexact ``total``, a full page has a next one."""
        following = self.offset + len(self.hits)
        more = following < self.total or (not self.total_exact and len(self.hits) == self.limit)
        return following if more and self.hits else None


def total_text(total: int, exact: bool) -> str:
    """A hit count as shown: ``1,234``; ``10,000+`` when ``total`` is a lower bound."""
    return f"{total:,}" + ("" if exact else "+")


class Budget:
    """A time limit (``seconds`` from :meth:`start`) and an optional
    ``cancelled()`` check, installed as the connection's progress handler while
    each statement of one search runs."""

    def __init__(self, seconds: float = TIME_LIMIT_S, cancelled: Callable[[], bool] | None = None) -> None:
        self.seconds = seconds
        self.cancelled = cancelled
        self.deadline = time.monotonic() + seconds
        self.reason = ""

    def start(self) -> None:
        """Start the clock."""
        self.deadline = time.monotonic() + self.seconds

    def check(self) -> int:
        """The progress handler: non-zero (stop) past the deadline or once cancelled."""
        if time.monotonic() > self.deadline:
            self.reason = f"the search took longer than {self.seconds:g} s"
            return 1
        if self.cancelled is not None and self.cancelled():
            self.reason = "the search was cancelled"
            return 1
        return 0

    def run(self, conn: sqlite3.Connection, sql: str, params: tuple[object, ...]) -> list[tuple[Any, ...]]:
        """``sql``'s rows within the budget.  Raises :class:`SearchStopped`."""
        conn.set_progress_handler(self.check, PROGRESS_STEPS)
        try:
            return conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError:
            # Once the handler said stop, any error is the interruption's ("interrupted", or
            # "vtable constructor failed" when it struck FTS5 opening its table on this connection).
            if self.reason:
                raise SearchStopped(
                    f"{self.reason}; search for rarer or fewer words, or narrow it with --agent/--since"
                ) from None
            raise
        finally:
            conn.set_progress_handler(None, PROGRESS_STEPS)


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
    offset: int = 0,
    by_session: bool = False,
    sort: SearchSort = "rank",
    raw: bool = False,
    budget: Budget | None = None,
) -> HitPage:
    """The hits of ``query`` (read by :func:`~agentlog.index.fts.translate`;
    ``raw``: FTS5 syntax) among messages at or after ``since`` and before
    ``until`` (aware datetimes) in sessions whose folder contains ``project``
    (:func:`agentlog.query.text_contains`); ``role`` and ``tool`` ignore case.

    ``sort``: ``rank`` (best bm25 first; ties newest first), ``newest`` or
    ``oldest``; then by session, message and part, so every index of the same
    logs gives the same order.  A page by rank shows first, in that order, its hits
    whose text holds the query's pieces with punctuation as typed (``C++``: the
    index reads the word ``c``; :attr:`~agentlog.index.fts.Translation.literals`).  ``by_session``: one hit per session (its best;
    sorted by time, its first in that order, :mod:`agentlog.index.timeline`), with
    ``session_hits``; ``total`` then counts sessions.  ``limit`` hits from
    ``offset``.  Raises :class:`~agentlog.errors.UsageError` for an empty,
    over-long or over-wordy query or a bad ``sort``, :class:`SearchStopped` past
    the ``budget`` (default :data:`TIME_LIMIT_S`)."""
    if sort not in SORTS:
        raise UsageError(f"unknown sort {sort!r} (known: {', '.join(SORTS)})")
    translation = translate(query, raw)
    if not translation.match:
        return _page([], 0, offset, limit, translation)
    sql_functions(conn)
    where: list[str] = []
    params: list[object] = []
    for clause, value in (
        ("s.agent = ?", agent),
        (f"{FOLDER_CONTAINS_SQL}(s.cwd, ?)", project or None),
        ("m.timestamp >= ?", iso(since)),
        ("m.timestamp < ?", iso(until)),
        ("m.role = lower(?)", role),
        ("lower(p.tool) = lower(?)", tool),
    ):
        if value is not None:
            where.append(clause)
            params.append(value)
    budget = budget or Budget()
    budget.start()
    try:
        return _search(conn, translation, where, params, reasoning, limit, offset, by_session, sort, budget)
    except sqlite3.OperationalError as exc:
        if budget.reason or any(word in str(exc) for word in NOT_SYNTAX):
            raise
        translation = fallback(query, f"FTS5 cannot parse {query!r} ({exc})")
        if not translation.match:
            return _page([], 0, offset, limit, translation)
        return _search(conn, translation, where, params, reasoning, limit, offset, by_session, sort, budget)


RANK_WINDOW = 1_000
"""Hits ranked together at most by a search sorted by rank: when more match, they
are ranked in blocks of ``RANK_WINDOW`` in index order (the newest ``RANK_WINDOW``
first, then the next: :mod:`agentlog.index.blocks`), and the page says so;
``total`` then counts the hits up to :data:`TOTAL_CAP` (with filters on the
messages, the matches that pass them).  Ranking costs ~5 µs a hit (bm25 reads each
hit's size, the sort keys its message): a word in every other message of a million
took seconds."""

TOTAL_CAP = 10_000
"""Hits counted at most when a search ranks only some of them: past it, the page's
``total`` is this lower bound and ``total_exact`` is false (shown ``10,000+``).
Counting walks the word's whole list of parts: 20–55 ms for a word in 45% of a
million messages, against < 1 ms for 10,000 of them."""


def _scoped(match: str, reasoning: bool) -> str:
    """``match`` in the columns searched: ``text``, and ``reasoning`` on request."""
    return match if reasoning else f"{{text}} : ({match})"


def _search(
    conn: sqlite3.Connection,
    translation: Translation,
    where: list[str],
    params: list[object],
    reasoning: bool,
    limit: int,
    offset: int,
    by_session: bool,
    sort: SearchSort,
    budget: Budget,
) -> HitPage:
    match = _scoped(translation.match, reasoning)
    if sort == "rank":
        return _ranked(conn, translation, match, where, params, reasoning, limit, offset, by_session, budget)
    if limit > 0:  # newest or oldest: by time, not by sorting every hit (index.timeline)
        return _time_page(conn, translation, match, where, params, reasoning, limit, offset, sort, by_session, budget)
    return _joined_time(conn, translation, match, where, params, limit, offset, sort, by_session, budget)


def _joined_time(
    conn: sqlite3.Connection,
    translation: Translation,
    match: str,
    where: list[str],
    params: list[object],
    limit: int,
    offset: int,
    sort: Literal["newest", "oldest"],
    by_session: bool,
    budget: Budget,
) -> HitPage:
    """A page sorted ``newest`` or ``oldest`` first by the joined query, which scores,
    keys and sorts every hit (the reference :func:`_time_page` equals; run for a page
    of no hits, whose total it counts exactly)."""
    keys = "bm25(parts_fts) AS score, m.timestamp AS ts, m.session_key AS session_key, m.id AS message_id, p.idx AS idx"
    filters = " AND ".join(["parts_fts MATCH ?", *where])
    found = f"SELECT parts_fts.rowid AS part_rowid, {keys} {_joins(where)} WHERE {filters}"
    if by_session:
        ranked, total = _joined_sessions(conn, budget, found, (match, *params), sort, limit, offset)
        return _page(_hits(conn, budget, translation.terms, ranked), total, offset, limit, translation)
    sql = f"SELECT part_rowid, score, 1, 0 FROM ({found}) ORDER BY {_ORDER[sort]}, {_TIE}, {COUNTER}() LIMIT ? OFFSET ?"
    counted = _count(conn)
    ranked = budget.run(conn, sql, (match, *params, limit, offset))
    return _page(_hits(conn, budget, translation.terms, ranked), counted[0], offset, limit, translation)


def _joined_sessions(
    conn: sqlite3.Connection,
    budget: Budget,
    found: str,
    params: tuple[object, ...],
    sort: Literal["newest", "oldest"],
    limit: int,
    offset: int,
) -> tuple[list[tuple[Any, ...]], int]:
    """A page of sessions sorted ``newest`` or ``oldest`` first by sorting every hit
    (``found``: the search's hits keyed as :data:`_ORDER` names them), the rule of
    :func:`agentlog.index.timeline.first_hits`: each session at its first hit in the
    time order, counting its hits of the seconds the page reaches.  Returns the rows
    (``part rowid, score, session hits, 0``) and how many sessions hold hits."""
    order = f"{_ORDER[sort]}, {_TIE}"
    reached = ">=" if sort == "newest" else "<="
    sql = f"""
        WITH hits AS MATERIALIZED ({found}),
        firsts AS (SELECT * FROM (
            SELECT *, row_number() OVER (PARTITION BY session_key ORDER BY {order}) AS r FROM hits) WHERE r = 1),
        page AS (SELECT *, row_number() OVER (ORDER BY {order}) AS n FROM firsts ORDER BY {order} LIMIT ? OFFSET ?),
        edge AS (SELECT ts FROM (SELECT ts, max(n) FROM page))
        SELECT part_rowid, score, (
            SELECT count(*) FROM hits h WHERE h.session_key = page.session_key
            AND ((SELECT ts FROM edge) IS NULL OR h.ts {reached} (SELECT ts FROM edge))), 0
        FROM page ORDER BY n"""
    ranked = budget.run(conn, sql, (*params, limit, offset))
    sessions = budget.run(conn, f"SELECT count(DISTINCT session_key) FROM ({found})", params)[0][0]
    return ranked, sessions


def _time_page(
    conn: sqlite3.Connection,
    translation: Translation,
    match: str,
    where: list[str],
    params: list[object],
    reasoning: bool,
    limit: int,
    offset: int,
    sort: Literal["newest", "oldest"],
    by_session: bool,
    budget: Budget,
) -> HitPage:
    """A page sorted ``newest`` or ``oldest`` first by :func:`agentlog.index.timeline.time_sorted`
    (its total counted by :func:`_capped_count` when many match)."""
    filters, joins = " AND ".join(["parts_fts MATCH ?", *where]), _joins(where)

    def count(rows: int, counted_to: int) -> tuple[int, bool]:  # the MATCH's rows, counted up to counted_to
        if not where and counted_to > TOTAL_CAP:
            return (TOTAL_CAP, False) if rows > TOTAL_CAP else (rows, True)
        return _capped_count(conn, budget, filters, (match, *params), joins if where else None, 0)

    query, scope = "" if translation.raw else translation.match, _scoped("", reasoning).removesuffix("()")
    timed = time_sorted(
        conn, budget.run, budget.check, match, query, scope, where, params, joins == _FROM, offset + limit, sort, by_session, count
    )
    page = _page(_hits(conn, budget, translation.terms, timed.rows[offset:]), timed.total, offset, limit, translation)
    page.total_exact = timed.exact
    if timed.estimated:
        page.note = f"{page.note}; {ESTIMATED_NOTE}" if page.note else ESTIMATED_NOTE
    return page


def _ranked(
    conn: sqlite3.Connection,
    translation: Translation,
    match: str,
    where: list[str],
    params: list[object],
    reasoning: bool,
    limit: int,
    offset: int,
    by_session: bool,
    budget: Budget,
) -> HitPage:
    """A page sorted by rank, in blocks of :data:`RANK_WINDOW` hits
    (:func:`agentlog.index.blocks.flat`, or :func:`~agentlog.index.blocks.grouped`
    ``by_session``: then ``total`` counts the sessions of the blocks walked, exact
    only when they reached the last hit, and each hit's ``session_hits`` its
    session's hits in those blocks).  A flat page's ``total`` is the hits counted up
    to :data:`TOTAL_CAP`, the same on every page."""
    window = RANK_WINDOW
    index = _IndexBlocks(conn, translation, match, reasoning, window, budget)
    source: _IndexBlocks | _JoinedBlocks = _JoinedBlocks(conn, match, where, params, window, budget, index) if where else index
    if by_session:
        walked = grouped(source, window, offset + limit)
        ranked = [(s.rowid, s.score, s.hits, 0) for s in walked.sessions[offset : offset + limit]]
        total, exact = len(walked.sessions), walked.ended
        matches = walked.matches if walked.ended else None
    else:
        page_hits = flat(source, window, offset, limit)
        ranked = [(hit[0], hit[1], 1, 0) for hit in page_hits.hits]
        matches = page_hits.matches
    if matches is None or matches > max(TOTAL_CAP, window):  # more may match: count them, up to the cap
        reused = index.counted if not where and max(TOTAL_CAP, window) == COUNT_CAP else None
        filters = " AND ".join(["parts_fts MATCH ?", *where])
        counted = reused or _capped_count(conn, budget, filters, (match, *params), _joins(where) if where else None, window)
    else:
        counted = (matches, True)
    if not by_session:
        total, exact = counted
    page = _page(_hits(conn, budget, translation.terms, ranked, translation.literals), total, offset, limit, translation)
    page.total_exact = exact
    if source.estimated:
        page.note = f"{page.note}; {ESTIMATED_NOTE}" if page.note else ESTIMATED_NOTE
    if counted[0] > window:
        _windowed(page, window, *counted)
    return page


def _joins(where: list[str]) -> str:
    """The joins a search's filters need: :data:`_FROM` when one names the session (``s.``)."""
    return _FROM if any("s." in clause for clause in where) else _FROM_PARTS


class _JoinedBlocks:
    """The blocks of a search with filters: its hits that pass them, keyed without
    scores in one statement (what a walk reads, :meth:`sessions`), then those of the
    block (or of the part of it asked for) scored by ``scorer`` (:class:`_IndexBlocks`:
    the hits of ``parts_fts`` between their rowids, with counts made once for the
    search) rather than by ``bm25()`` in that statement, which counts the rows of each
    phrase anew in each statement (35 ms a block for a word in a quarter of a million parts)."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        match: str,
        where: list[str],
        params: list[object],
        window: int,
        budget: Budget,
        scorer: _IndexBlocks,
    ) -> None:
        self.conn, self.match, self.params, self.window, self.budget = conn, match, params, window, budget
        self.scorer = scorer
        self.found = f"{_joins(where)} WHERE {' AND '.join(['parts_fts MATCH ?', *where])}"
        self.walked: list[tuple[Any, ...]] = []
        self.walks: dict[int, tuple[Any, ...]] = {}
        """The keyed rows of every block a walk read (:meth:`sessions`), by part rowid."""

    @property
    def estimated(self) -> bool:
        """Whether a score used an estimated count (:attr:`agentlog.index.rank.Scored.estimated`)."""
        return self.scorer.estimated

    def __call__(self, skip: int, before: int | None, need: int | None, count: int | None = None) -> Block:
        if count is None:
            self.walked = self.budget.run(self.conn, self._sql(skip, before), (self.match, *self.params))
        part = self.walked if count is None else self.walked[skip : skip + count]
        if not part:
            return Block([], 0, None)
        newest, oldest = part[0][0], part[-1][0]  # scored: the hits of parts_fts in these rowids
        scores = dict(self.scorer.scores(0, newest + 1, newest - oldest + 1, oldest))
        return Block(rank_order([(row[0], scores[row[0]], *row[1:]) for row in part]), len(part), oldest)

    def sessions(self, before: int | None) -> Walked:
        self.walked = self.budget.run(self.conn, self._sql(0, before), (self.match, *self.params))
        self.walks.update((row[0], row) for row in self.walked)
        spans: list[tuple[str, int, int]] = []
        for i, row in enumerate(self.walked):
            if spans and spans[-1][0] == row[2]:
                spans[-1] = (row[2], spans[-1][1], i + 1)
            else:
                spans.append((row[2], i, i + 1))
        return Walked([row[0] for row in self.walked], spans)

    def firsts(self, parts: list[dict[int, str]], wanted: int) -> list[list[First]]:
        """Every session's best hit and time, ``wanted`` or not."""
        if not parts:
            return []
        scores = dict(self.scorer.ranges_scores(parts))
        return [
            firsts_of(rank_order([(r, scores[r], *self.walks[r][1:]) for r in fresh]), fresh) for fresh in parts
        ]

    def whole_blocks(self, before: int) -> None:
        """No block is skipped with filters (each is read whole)."""
        return None

    def _sql(self, skip: int, before: int | None) -> str:
        """The block's hits that pass the filters, keyed (no score), newest first."""
        keys = "parts_fts.rowid, m.timestamp, m.session_key, m.id, p.idx"
        bound = "" if before is None else f" AND parts_fts.rowid < {int(before)}"
        return f"SELECT {keys} {self.found}{bound} ORDER BY parts_fts.rowid DESC LIMIT {self.window} OFFSET {int(skip)}"


class _IndexBlocks:
    """The blocks of a search with no filter: each block's hits and bm25 scores from
    ``parts_fts`` alone (:func:`agentlog.index.rank.window_scores`, its counts made
    once for every block), then the keys that order them (time, session, message,
    part) looked up by part, for the ``need`` best and every hit tied with the last
    of them (or every hit).  The same blocks as :func:`_joined_blocks` without its
    look-up of every hit in one statement with bm25 (most of a rare word's time).
    ``counted`` and ``estimated``: :class:`agentlog.index.rank.Scored`'s."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        translation: Translation,
        match: str,
        reasoning: bool,
        window: int,
        budget: Budget,
    ) -> None:
        self.conn, self.match, self.window, self.budget = conn, match, window, budget
        self.query = "" if translation.raw else translation.match
        self.scope = _scoped("", reasoning).removesuffix("()")
        self.prior: Scored | None = None
        self.estimated = False

    @property
    def counted(self) -> tuple[int, bool] | None:
        """The one phrase's count of rows, when made (:attr:`agentlog.index.rank.Scored.counted`)."""
        return self.prior.counted if self.prior is not None else None

    def scores(self, skip: int, before: int | None, window: int, least: int | None = None) -> Scores:
        """The ``window`` hits after the newest ``skip`` below rowid ``before`` (from rowid
        ``least``) and their scores (:func:`agentlog.index.rank.window_scores`)."""
        budget = self.budget
        self.prior = window_scores(
            self.conn, self.match, self.query, self.scope, window, budget.run, budget.check, skip, before, self.prior, least
        )
        self.estimated = self.estimated or self.prior.estimated
        return self.prior.scores

    def __call__(self, skip: int, before: int | None, need: int | None, count: int | None = None) -> Block:
        budget = self.budget
        scored = self.scores(skip, before, count or self.window)
        size, oldest = len(scored), (scored[-1][0] if scored else None)
        if need is not None and len(scored) > need:  # the page, and any hit its last score ties with
            last = sorted(score for _, score in scored)[need - 1]
            scored = [row for row in scored if row[1] <= last]
        keys = {row[0]: row[1:] for row in hit_keys(self.conn, budget.run, (rowid for rowid, _ in scored))}
        return Block(rank_order([(rowid, score, *keys[rowid]) for rowid, score in scored]), size, oldest)

    def sessions(self, before: int | None) -> Walked:
        """The block's hits and their sessions, from the runs of part rowids
        (:func:`agentlog.index.runs.spans_of`)."""
        bound = "" if before is None else f" AND rowid < {int(before)}"
        sql = f"SELECT rowid FROM parts_fts WHERE parts_fts MATCH ?{bound} ORDER BY rowid DESC LIMIT {self.window}"
        rowids = [rowid for (rowid,) in self.budget.run(self.conn, sql, (self.match,))]
        return Walked(rowids, runs.spans_of(self.conn, self.budget.run, rowids))

    def ranges_scores(self, parts: list[dict[int, str]]) -> Scores:
        """The scores of the hits from the first to the last rowid of each of ``parts``
        (:func:`agentlog.index.rank.ranges_scores`, in one statement)."""
        ranges = [(min(part), max(part), len(part)) for part in parts]
        budget = self.budget
        self.prior = ranges_scores(
            self.conn, self.match, self.query, self.scope, ranges, budget.run, budget.check, self.prior
        )
        self.estimated = self.estimated or self.prior.estimated
        return self.prior.scores

    def firsts(self, parts: list[dict[int, str]], wanted: int) -> list[list[First]]:
        """Scored from ``parts_fts`` at once; a session's best hit is its best-scored one,
        keyed (time, message, part: :func:`rank_order`) only where several of its hits
        share that score, and its newest time (:func:`newest_times`) only
        where its best score ties another session's new to the same block (elsewhere
        the time orders nothing: :func:`agentlog.index.blocks.grouped`); both only for
        the sessions that may be among the first ``wanted`` (their score at most the
        ``wanted``-th's)."""
        if not parts:
            return []
        scores = dict(self.ranges_scores(parts))
        bests: list[dict[str, list[Any]]] = []  # each part's sessions: [best score, its hits]
        for fresh in parts:
            best: dict[str, list[Any]] = {}
            for rowid, key in fresh.items():
                score, held = scores[rowid], best.get(key)
                if held is None or score < held[0]:
                    best[key] = [score, rowid]
                elif score == held[0]:
                    held.append(rowid)
            bests.append(best)
        shown: list[set[str]] = []  # each part's sessions that may be among the first wanted
        timed: set[tuple[int, str]] = set()  # (part, session) whose best score ties another's shown
        room = wanted
        for n, best in enumerate(bests):
            ordered = sorted(held[0] for held in best.values())
            edge = ordered[min(room, len(ordered)) - 1] if room > 0 else -math.inf
            room -= len(best)
            shown.append({key for key, held in best.items() if held[0] <= edge})
            at: dict[float, list[str]] = {}
            for key in shown[n]:
                at.setdefault(best[key][0], []).append(key)
            timed.update((n, key) for keys_at in at.values() if len(keys_at) > 1 for key in keys_at)
        tied = [r for n, best in enumerate(bests) for key in shown[n] if len(best[key]) > 2 for r in best[key][1:]]
        keys = {row[0]: row[1:] for row in hit_keys(self.conn, self.budget.run, tied)} if tied else {}
        several: dict[tuple[int, str], list[int]] = {}  # the hits of each (part, session) timed
        for n, fresh in enumerate(parts) if timed else ():
            for r, key in fresh.items():
                if (n, key) in timed:
                    several.setdefault((n, key), []).append(r)
        newest = newest_times(self.conn, self.budget.run, several)
        out: list[list[First]] = []
        for n, best in enumerate(bests):
            firsts: list[First] = []
            for key, (score, rowid, *more) in best.items():
                if more and key in shown[n]:
                    rowid = rank_order([(r, score, *keys[r]) for r in (rowid, *more)])[0][0]
                firsts.append(First(rowid, score, key, newest.get((n, key))))
            out.append(firsts)
        return out

    def whole_blocks(self, before: int) -> tuple[str, int, int] | None:
        """The whole blocks below hit ``before`` whose hits all lie in its run of part
        rowids (:func:`agentlog.index.runs.run_of`): its session, their hits and the
        lowest of them; ``None`` when the next block is not all in it.  Counted by
        FTS5 between the run's first rowid and ``before``, no hit read."""
        run = runs.run_of(self.conn, self.budget.run, before)
        if run is None or run.first >= before:
            return None
        inside = f"parts_fts MATCH ? AND rowid >= {int(run.first)} AND rowid < {int(before)}"
        (count,) = self.budget.run(self.conn, f"SELECT count(*) FROM parts_fts WHERE {inside}", (self.match,))[0]
        if count < self.window:
            return None
        # the lowest hit of those blocks: above the run's count % window oldest hits
        sql = f"SELECT rowid FROM parts_fts WHERE {inside} ORDER BY rowid ASC LIMIT 1 OFFSET {count % self.window}"
        return run.session, count - count % self.window, self.budget.run(self.conn, sql, (self.match,))[0][0]


NEWEST_WALK = 64
"""Parts of a session's newest messages :func:`newest_times` reads at least before it
looks each hit's time up instead (and four times the parts between two of its hits)."""
NEWEST_WALK_RATIO = 8
"""Parts :func:`newest_times` reads at most a hit: a part read from the indexes costs
0.3–0.7 µs, a hit's time looked up 2–15 µs (its part's row and its message's, apart)."""
_NEWEST_WALK = """SELECT ts FROM (SELECT max(ts) AS ts, count(*) AS held FROM (
        SELECT p.rowid AS part, m.timestamp AS ts FROM messages m INDEXED BY messages_time
        JOIN parts p INDEXED BY parts_message ON p.message_rowid = m.rowid
        WHERE m.session_key = ? AND m.timestamp IS NOT NULL ORDER BY m.timestamp DESC LIMIT ?)
    WHERE part IN (SELECT value FROM json_each(?))) WHERE held > 0"""
"""The newest time of the listed parts among a session's newest timed messages (up to the
limit's parts; no row: none of those holds one).  ``max``, not the first row in time
order: a query without ORDER BY gives its rows in no order SQL promises."""
_NEWEST = """SELECT json_extract(h.value, '$[1]') AS held, max(m.timestamp) FROM json_each(?) h
    JOIN parts p ON p.rowid = json_extract(h.value, '$[0]') JOIN messages m ON m.rowid = p.message_rowid
    GROUP BY held"""
"""The newest time of each group's parts' messages (``NULL``: none has a time), of a JSON
list of ``[part rowid, group]``: one statement, the same text, however many groups."""


def newest_times(conn: sqlite3.Connection, run: runs.Run, hits: dict[tuple[int, str], list[int]]) -> dict[tuple[int, str], Any]:
    """The newest time of each ``(n, session)``'s hits (part rowids, all that session's;
    ``None``: none has a time), the rule of ``max(timestamp)``.  Where the hits are close
    together, the session's messages are read newest first until one holds a hit (a
    session's first block holds its last written hits, mostly its newest: a few parts
    read), up to :data:`NEWEST_WALK` parts and four times the hits' mean distance, when
    that is at most :data:`NEWEST_WALK_RATIO` parts a hit; the groups no walk answered
    have each hit's time looked up (:data:`_NEWEST`, two seeks a hit, all groups in one
    statement: a compound of one arm a group cost 30–70 µs an arm to prepare, its text
    new at each count).  7,673 hits of a prefix in 18 sessions of 1 M messages: 3–15 ms,
    against 30–160 ms looked up."""
    newest: dict[tuple[int, str], Any] = {}
    looked: list[tuple[tuple[int, str], list[int]]] = []
    for held, rowids in hits.items():
        limit = NEWEST_WALK + 4 * (max(rowids) - min(rowids) + 1) // len(rowids)
        walked = limit <= NEWEST_WALK_RATIO * len(rowids)
        found = run(conn, _NEWEST_WALK, (held[1], limit, json.dumps(rowids))) if walked else []
        if found:
            newest[held] = found[0][0]
        else:
            looked.append((held, rowids))
    if looked:
        pairs = json.dumps([[rowid, n] for n, (_, rowids) in enumerate(looked) for rowid in rowids])
        found_times: dict[int, Any] = dict(run(conn, _NEWEST, (pairs,)))
        newest.update((held, found_times.get(n)) for n, (held, _) in enumerate(looked))
    return newest


def _windowed(page: HitPage, window: int, matches: int, exact: bool) -> None:
    """Say on ``page`` that it is ranked within blocks of ``window`` hits, newest first,
    of ``matches`` (``exact``: counted whole, else a lower bound)."""
    ranked_note = f"ranked within each {window:,} newest hits of {total_text(matches, exact)}"
    page.note = f"{page.note}; {ranked_note}" if page.note else ranked_note


def _capped_count(
    conn: sqlite3.Connection,
    budget: Budget,
    filters: str,
    params: tuple[object, ...],
    joins: str | None,
    window: int,
) -> tuple[int, bool]:
    """How many parts match (``filters`` over ``joins``, e.g. :data:`_FROM`; the
    ``MATCH`` alone when ``None``), counted up to ``cap`` (:data:`TOTAL_CAP`, or
    ``window`` when larger), and whether that count is exact: ``(cap, False)`` when
    more match.  The one place that decides a search's total."""
    cap = max(TOTAL_CAP, window)
    found = f"SELECT 1 {joins} WHERE {filters}" if joins else "SELECT 1 FROM parts_fts WHERE parts_fts MATCH ?"
    count = budget.run(conn, f"SELECT count(*) FROM ({found} LIMIT {cap + 1})", params)[0][0]
    return (cap, False) if count > cap else (count, True)


COUNTER = "agentlog_count_row"
"""An SQL function that counts the rows it is called on.  Called as the last sort
key, it counts every row the search keeps (SQLite computes the sort key of every
row, while result columns only for the rows that reach the page), so the total
comes with the ranking at no extra pass (a ``count(*) OVER ()`` window made a
common word 45% slower)."""


def _count(conn: sqlite3.Connection) -> list[int]:
    """Register a fresh :data:`COUNTER` on ``conn``; its count is the list's one item."""
    counted = [0]

    def count_row() -> int:
        counted[0] += 1
        return 0

    conn.create_function(COUNTER, 0, count_row)
    return counted


def _page(hits: list[Hit], total: int, offset: int, limit: int, translation: Translation) -> HitPage:
    return HitPage(
        hits=hits,
        total=total,
        offset=offset,
        limit=limit,
        match=translation.match,
        terms=list(translation.terms),
        note=translation.note,
    )


_FROM_PARTS = """
    FROM parts_fts
    JOIN parts p ON p.rowid = parts_fts.rowid
    JOIN messages m ON m.rowid = p.message_rowid"""
"""A search's joins when no filter names the session (``s.``)."""
_FROM = f"""{_FROM_PARTS}
    JOIN sessions s ON s.key = m.session_key"""
_HIT_COLUMNS = "m.session_key, s.title, s.agent, m.id, m.role, m.timestamp, p.type, p.tool, p.text, p.data"


def _hits(
    conn: sqlite3.Connection,
    budget: Budget,
    terms: tuple[str, ...],
    ranked: list[tuple[Any, ...]],
    literals: tuple[str, ...] = (),
) -> list[Hit]:
    """The hits at the part rowids of ``ranked`` (``rowid, score, session hits, …``),
    in that order, with their snippets cut for ``terms``; with ``literals`` (a page
    sorted by rank: :attr:`agentlog.index.fts.Translation.literals`), those whose
    text holds more of them first, in that order otherwise (a stable sort: the page
    is the same hits, so pages never overlap).  The index reads ``C++`` as the word
    ``c``, so without this a hit of "C and C#" could rank above one of "C++"."""
    if not ranked:
        return []
    sql = f"""SELECT p.rowid, {_HIT_COLUMNS} FROM parts p JOIN messages m ON m.rowid = p.message_rowid
        JOIN sessions s ON s.key = m.session_key WHERE p.rowid IN ({", ".join("?" * len(ranked))})"""
    rows = {row[0]: row[1:] for row in budget.run(conn, sql, tuple(r[0] for r in ranked))}
    found = [_row_hit(rows[rowid], terms, score, hits, literals) for rowid, score, hits, _ in ranked]
    if literals:
        found.sort(key=lambda hit: -hit[1])
    return [hit for hit, _ in found]


@row_decoder("search hit")
def _row_hit(
    r: tuple[Any, ...], terms: tuple[str, ...], score: float, hits: int, literals: tuple[str, ...] = ()
) -> tuple[Hit, int]:
    """A :data:`_HIT_COLUMNS` row as a :class:`Hit`, its snippet cut for ``terms``, and
    how many of ``literals`` its text holds (:func:`agentlog.index.fts.literal_count`)."""
    text = stored_text(r[8], r[9])
    return Hit(
        session_key=r[0],
        session_title=r[1],
        agent=r[2],
        message_id=r[3],
        role=r[4],
        timestamp=stored_time(r[5]),
        part_type=r[6],
        tool=r[7],
        snippet=snippet(text, terms, MARK_START, MARK_END),
        rank=score,
        session_hits=hits,
    ), literal_count(text, literals)
