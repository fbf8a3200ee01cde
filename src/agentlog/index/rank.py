"""bm25 scores of a search's newest hits without FTS5's count of every hit.

FTS5's built-in ``bm25()`` first counts, for each phrase of the query, every row
that holds it (``xQueryPhrase`` over the phrase's whole list of rows) to get its
IDF, and only then scores the rows asked for: for a word in a quarter of a million
parts that count is 25–45 ms, for ``the`` 70–280 ms, while the newest 1,000 hits
themselves are found in under a millisecond.  :func:`window_scores` counts each
phrase's rows itself, up to :data:`COUNT_CAP` (< 1 ms), and estimates past it
(:func:`estimated_rows`; the page then says so, :data:`ESTIMATED_NOTE`).  Python's
``sqlite3`` cannot register an FTS5 auxiliary function, so the scores given those
counts come through ``apsw`` (the optional ``rank`` extra), whose SQLite calls
:func:`bm25`, FTS5's formula, for each hit.  Where every count is exact, and
counting was quick, the built-in ``bm25()`` scores instead (its count is then as
quick, and it scores in C); where every count is exact the two give the same
doubles, bit for bit.  Without ``apsw``, or for raw FTS5 syntax, it is always the
built-in.

Source of the formula: SQLite's ``ext/fts5/fts5_aux.c`` (``fts5Bm25GetData``,
``fts5Bm25Function``): k1 = 1.2, b = 0.75, IDF = log((N − n + 0.5) / (n + 0.5))
floored at 1e-6 (N rows in the table, n rows holding the phrase in the columns the
query names), phrase frequency from ``xInst``, document length ``xColumnSize(-1)``
(every column), average length ``xColumnTotalSize(-1) / xRowCount``; the score is
the negated sum over phrases.

Two copies of SQLite in one process (``apsw`` bundles its own) must never close a
file the other holds locks on: POSIX drops all of a process's locks on a file when
any descriptor of it closes (sqlite.org/howtocorrupt.html, 2.2.1), and in WAL mode
every connection holds a shared lock on the database file for as long as it is
open, which tells a closing process it is not the last (the last checkpoints and
deletes the ``-wal``).  So each index gets one read-only ``apsw`` connection that
is never closed before the process ends (:data:`KEPT` at most, three descriptors each): ``apsw`` never
drops the locks of the caller's ``sqlite3``.  The other way round cannot be
prevented (the caller's last connection closing drops the ``apsw`` one's locks),
and ``apsw`` only reads, so what can go wrong is its view: a query's scores are
used only when that connection saw the same full-text index as the caller's (its
structure and totals records equal), else the built-in runs, and a ``-shm`` made
anew gets a new connection (:func:`_kept`).
"""

from __future__ import annotations

import bisect
import json
import math
import os
import re
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from agentlog.index.db import BUSY_TIMEOUT_MS, MMAP_SIZE, conn_path
from agentlog.index.runs import Run

if TYPE_CHECKING:
    import apsw

K1 = 1.2
"""bm25's term-frequency saturation (FTS5's ``k1``)."""
B = 0.75
"""bm25's document-length normalisation (FTS5's ``b``)."""
IDF_FLOOR = 1e-6
"""The least IDF: FTS5's for a phrase in half the rows or more."""
COUNT_CAP = 10_000
"""Rows counted at most for one phrase's IDF (< 1 ms); past it the count is
estimated (:func:`estimated_rows`)."""
SCORE_S = 2e-6
"""Seconds :func:`_apsw_scores` takes a hit (its Python, against ~0.5 µs in C): when
every count is exact, the scores come through ``apsw`` only if counting took
longer than scoring the hits would (the built-in ``bm25()`` counts again, as
long).  The choice changes only the time: the two give the same scores."""
KEPT = 16
"""``apsw`` connections a process opens at most (one an index file, and one more
each time its ``-shm`` is made anew); past that the built-in ``bm25()`` scores."""
ESTIMATED_NOTE = "scores use estimated counts of the commonest words"
"""What the page says when a phrase's row count was estimated."""
FUNCTION = "agentlog_bm25"
"""The auxiliary function :func:`window_scores` registers on ``apsw``."""

_PHRASE = re.compile(r'"(?:[^"]|"")*"(?: \*)?')
"""A phrase of a translated query (:func:`agentlog.index.fts.phrase`: a string, maybe a prefix)."""
_CHECK = "SELECT id, block FROM parts_fts_data WHERE id IN (1, 10) ORDER BY id"
"""FTS5's averages (id 1: rows, tokens per column) and structure (id 10: its
segments, with a cookie that changes at every write) records: equal on two
connections, they see the same full-text index."""

_BOUNDS = "SELECT (SELECT min(id) FROM parts_fts_docsize), (SELECT max(id) FROM parts_fts_docsize)"
"""The table's first and last rowids (two b-tree descents; ``min(id), max(id)`` in one
``SELECT`` walks every row)."""

Scores = list[tuple[int, float]]
"""``(part rowid, score)`` of the hits ranked, newest first; lower is better."""


class Scored(NamedTuple):
    """:func:`window_scores`'s answer: ``scores``; ``estimated`` when a phrase's
    IDF is an estimate; ``counted``, for a query of one phrase whose rows were
    counted, ``(rows, True)``, or ``(COUNT_CAP, False)`` past the cap (the search's
    total, counted already), else ``None``; ``counts``, the phrases' row counts
    when the scores came through ``apsw`` (``None``: the built-in scored), for the
    next block's call (``prior``)."""

    scores: Scores
    estimated: bool = False
    counted: tuple[int, bool] | None = None
    counts: list[int] | None = None


def idf(rows: int, hits: int) -> float:
    """FTS5's IDF of a phrase in ``hits`` of ``rows`` rows (never below :data:`IDF_FLOOR`)."""
    ratio = (rows - hits + 0.5) / (hits + 0.5)
    if ratio <= 1.0:
        return IDF_FLOOR
    value = math.log(ratio)
    return value if value > 0.0 else IDF_FLOOR


def bm25(frequencies: Sequence[float], length: int, average: float, idfs: Sequence[float]) -> float:
    """FTS5's bm25 of a row: ``frequencies`` (each phrase's instances in it),
    ``length`` (its tokens, every column), ``average`` (tokens per row in the table)
    and the phrases' ``idfs``; operations in FTS5's order (the length term, the same
    for every phrase, computed once), so equal inputs give ``bm25()``'s double
    exactly.  Lower is better (negated)."""
    norm = K1 * (1 - B + B * length / average)
    score = 0.0
    for i, weight in enumerate(idfs):
        f = frequencies[i]
        score += weight * ((f * _K1_1) / (f + norm))
    return -1.0 * score


_K1_1 = K1 + 1.0


def estimated_rows(first_rowid: int, last_rowid: int, capped_rowid: int) -> int:
    """Rows holding a phrase found in more than :data:`COUNT_CAP`: its
    ``COUNT_CAP + 1`` oldest hits end at ``capped_rowid``, so its density there,
    over the table's rowids ``first_rowid`` to ``last_rowid``."""
    span = last_rowid - first_rowid + 1
    return max(COUNT_CAP + 1, round((COUNT_CAP + 1) * span / max(1, capped_rowid - first_rowid + 1)))


def phrases(match: str) -> list[str]:
    """The phrases of a translated ``match`` in FTS5's order (left to right)."""
    return _PHRASE.findall(match)



def window_scores(
    conn: sqlite3.Connection,
    match: str,
    query: str,
    scope: str,
    window: int,
    run: Run,
    stop: Callable[[], int],
    skip: int = 0,
    before: int | None = None,
    prior: Scored | None = None,
    least: int | None = None,
) -> Scored:
    """The newest ``window`` hits of ``match`` (the ``MATCH`` expression run,
    ``scope`` + ``(query)``) after the newest ``skip`` of those below rowid
    ``before`` (every hit when ``None``) and at or above rowid ``least`` (when
    given), and their bm25 scores (:class:`Scored`).
    Each phrase's rows are counted first (over the whole table: an IDF is global),
    up to :data:`COUNT_CAP`: when one holds more, or counting took
    longer than scoring the hits would (:data:`SCORE_S`), the scores come from :func:`_apsw_scores`;
    otherwise (and without ``apsw``, or for raw FTS5 syntax: ``query`` ``""``, the
    translated expression without the scope otherwise) from the built-in
    ``bm25()``, whose count then costs little and whose scoring runs in C.  ``prior``:
    an earlier call's answer for the same ``match``, whose counts and choice are
    reused (one search ranking several blocks counts once).  ``run`` runs a
    statement on ``conn`` within the search's budget (raising its error when
    stopped), ``stop`` is that budget's progress check."""
    counted, counts, estimated = _chosen(conn, query, scope, window, run, prior)
    if counts is not None:
        scored = _apsw_scores(conn, match, counts, window, run, stop, skip, before, least)
        if scored is not None:
            return Scored(scored, estimated, counted, counts)
    bound = _bounds(before, least)
    sql = (
        f"SELECT rowid, bm25(parts_fts) FROM parts_fts WHERE parts_fts MATCH ?{bound} "
        f"ORDER BY rowid DESC LIMIT {window} OFFSET {int(skip)}"
    )
    return Scored(run(conn, sql, (match,)), False, counted)


def ranges_scores(
    conn: sqlite3.Connection,
    match: str,
    query: str,
    scope: str,
    ranges: list[tuple[int, int, int]],
    run: Run,
    stop: Callable[[], int],
    prior: Scored | None = None,
) -> Scored:
    """The hits of ``match`` in each of ``ranges`` (``(lowest rowid, highest rowid,
    hits)``, inclusive, apart) and their scores as :func:`window_scores` gives them
    (the same counts, the same choice of scorer), in one statement: one ``apsw``
    transaction and check for all of them, not one a range."""
    counted, counts, estimated = _chosen(conn, query, scope, sum(n for *_, n in ranges), run, prior)
    arms = [f"parts_fts MATCH ? AND rowid >= {int(lo)} AND rowid <= {int(hi)}" for lo, hi, _ in ranges]
    if counts is not None:
        score = f"{FUNCTION}(parts_fts, {', '.join('?' * len(counts))})"
        sql = " UNION ALL ".join(f"SELECT rowid, {score} FROM parts_fts WHERE {arm}" for arm in arms)
        scored = _apsw_rows(conn, sql, tuple(v for _ in arms for v in (*counts, match)), run, stop)
        if scored is not None:
            return Scored(scored, estimated, counted, counts)
    sql = " UNION ALL ".join(f"SELECT rowid, bm25(parts_fts) FROM parts_fts WHERE {arm}" for arm in arms)
    return Scored(run(conn, sql, tuple(match for _ in arms)), False, counted)


def _chosen(
    conn: sqlite3.Connection, query: str, scope: str, hits: int, run: Run, prior: Scored | None
) -> tuple[tuple[int, bool] | None, list[int] | None, bool]:
    """What :func:`window_scores` scores ``hits`` hits with: :attr:`Scored.counted`, the
    phrases' counts for :func:`_apsw_scores` (``None``: the built-in ``bm25()``) and
    whether one is estimated; ``prior``'s when given."""
    found = phrases(query) if query else []
    counted = prior.counted if prior is not None else None
    counts, estimated = (prior.counts, prior.estimated) if prior is not None else (None, False)
    if prior is None and found and _kept(conn) is not None:
        counted_all, estimated, first, seconds = _counts(conn, run, [scope + p for p in found])
        counted = first if len(found) == 1 else None
        if estimated or seconds > SCORE_S * min(hits, max(counted_all)):
            counts = counted_all
    return counted, counts, estimated


def _bounds(before: int | None, least: int | None) -> str:
    """The rowid bounds of a :func:`window_scores` statement, after its ``MATCH``."""
    return ("" if before is None else f" AND rowid < {int(before)}") + ("" if least is None else f" AND rowid >= {int(least)}")


COUNTS_KEPT = 1_024
"""Phrases whose row counts :func:`_counts` keeps at most (then it starts afresh)."""
_COUNTED: dict[tuple[Any, ...], tuple[int, int, float]] = {}
"""``(rows up to COUNT_CAP + 1, highest rowid of them (0: none), seconds the count took)`` of a
phrase, by index file (path, device, inode and change time: a file made anew at the
same path is another), :data:`_CHECK`'s records when counted, the cap and the phrase: a write
to the full-text index changes its structure record, so a kept count is the one
counting again would give."""

Seen = tuple[Any, ...]
"""An index file and its full-text records as :func:`_seen` reads them."""


def _counted(conn: sqlite3.Connection, run: Run, phrase: str, seen: Seen | None) -> tuple[int, int, float]:
    """The rows of ``phrase`` up to ``COUNT_CAP + 1``, the highest rowid of them (0: none) and
    the seconds counting took: kept from an earlier count of the same index
    (``seen``, :func:`_seen`; ``None``: never kept) or counted now."""
    key = None if seen is None else (*seen, COUNT_CAP, phrase)
    kept = None if key is None else _COUNTED.get(key)
    if kept is None:
        start = time.perf_counter()
        sql = f"SELECT count(*), max(rowid) FROM (SELECT rowid FROM parts_fts WHERE parts_fts MATCH ? LIMIT {COUNT_CAP + 1})"
        n, capped = run(conn, sql, (phrase,))[0]
        kept = (n, capped or 0, time.perf_counter() - start)
        if key is not None:
            if len(_COUNTED) >= COUNTS_KEPT:
                _COUNTED.clear()
            _COUNTED[key] = kept
    return kept


def _seen(conn: sqlite3.Connection, run: Run) -> Seen | None:
    """``conn``'s main database file (path, device, inode, change time) and the
    full-text index's records :data:`_CHECK` reads; ``None`` without a file."""
    name = conn_path(conn)
    try:
        st = os.stat(name) if name else None
    except OSError:
        st = None
    if st is None:
        return None
    return name, st.st_dev, st.st_ino, st.st_ctime_ns, tuple(tuple(row) for row in run(conn, _CHECK, ()))


def _counts(
    conn: sqlite3.Connection, run: Run, scoped: list[str]
) -> tuple[list[int], bool, tuple[int, bool], float]:
    """Each phrase's rows (``scoped``: its ``MATCH`` expression), counted up to
    :data:`COUNT_CAP` and estimated past it (:func:`_counted`); whether one was
    estimated; the first phrase's count as :attr:`Scored.counted` says it; and the
    seconds counting took (when first counted)."""
    counts: list[int] = []
    estimated, first, seconds = False, (0, True), 0.0
    bounds: tuple[int, int] | None = None
    seen = _seen(conn, run)
    for phrase in scoped:
        n, capped, took = _counted(conn, run, phrase, seen)
        seconds += took
        if not counts:
            first = (n, True) if n <= COUNT_CAP else (COUNT_CAP, False)
        if n > COUNT_CAP:
            if bounds is None:
                bounds = run(conn, _BOUNDS, ())[0]
            n, estimated = estimated_rows(bounds[0], bounds[1], capped), True
        counts.append(n)
    return counts, estimated, first, seconds


def _apsw_scores(
    conn: sqlite3.Connection,
    match: str,
    counts: list[int],
    window: int,
    run: Run,
    stop: Callable[[], int],
    skip: int = 0,
    before: int | None = None,
    least: int | None = None,
) -> Scores | None:
    """The newest ``window`` hits of ``match`` (after ``skip`` below rowid ``before``,
    from rowid ``least``, as :func:`window_scores`) and their :func:`bm25` for these
    phrases' row ``counts``, through :func:`_apsw_rows`."""
    params = ", ".join("?" * len(counts))
    sql = (
        f"SELECT rowid, {FUNCTION}(parts_fts, {params}) FROM parts_fts WHERE parts_fts MATCH ? "
        f"{_bounds(before, least)} ORDER BY rowid DESC LIMIT {window} OFFSET {int(skip)}"
    )
    return _apsw_rows(conn, sql, (*counts, match), run, stop)


def _apsw_rows(
    conn: sqlite3.Connection, sql: str, params: tuple[object, ...], run: Run, stop: Callable[[], int]
) -> Scores | None:
    """The rows of ``sql`` (``rowid`` and :data:`FUNCTION`'s score, given each phrase's
    row count) through the index's ``apsw`` connection; ``None`` when there is none,
    another thread's search holds it, it was stopped, or it did not see the caller's
    view of the index."""
    kept = _kept(conn)
    if kept is None or not kept.lock.acquire(blocking=False):
        return None
    db = kept.db
    try:
        db.set_progress_handler(lambda: bool(stop()), 2_000)
        db.execute("BEGIN")  # one snapshot for the scores and the records checked
        scores: Scores = list(db.execute(sql, params))
        seen = list(db.execute(_CHECK))
    except kept.errors:
        return None
    finally:
        db.set_progress_handler(None)
        _end(db, kept.errors)
        kept.lock.release()
    if [tuple(row) for row in run(conn, _CHECK, ())] != [tuple(row) for row in seen]:
        return None
    return scores


def _end(db: apsw.Connection, errors: tuple[type[BaseException], ...]) -> None:
    """End ``db``'s read transaction, if one is open (a stopped statement leaves it)."""
    try:
        if db.in_transaction:
            db.execute("ROLLBACK")  # read-only: nothing to keep
    except errors:
        pass  # the next BEGIN fails in turn: that search falls back to the built-in


def _score(api: apsw.FTS5ExtensionApi, *counts: int) -> float:
    """The auxiliary function :data:`FUNCTION`: the row's :func:`bm25`, given each
    phrase's row count (one phrase, the most common query, inline: this runs for
    every hit ranked)."""
    data = api.aux_data
    if data is None:
        if api.phrase_count != len(counts):
            raise ValueError(f"{api.phrase_count} phrases, {len(counts)} counts")
        rows = api.row_count
        data = api.aux_data = (api.column_total_size(-1) / rows, [idf(rows, n) for n in counts])
    average: float = data[0]
    idfs: list[float] = data[1]
    if len(idfs) == 1:
        f = float(api.inst_count)
        return -1.0 * (idfs[0] * ((f * _K1_1) / (f + K1 * (1 - B + B * api.column_size(-1) / average))))
    frequencies = [float(sum(map(len, api.phrase_locations(i)))) for i in range(len(idfs))]
    return bm25(frequencies, api.column_size(-1), average, idfs)


class _Kept:
    """One index file's ``apsw`` connection and the lock one search holds on it."""

    def __init__(self, db: apsw.Connection, errors: tuple[type[BaseException], ...]) -> None:
        self.db = db
        self.errors = errors
        self.lock = threading.Lock()


_KEPT: dict[tuple[str, int, int, int], _Kept | None] = {}
"""The ``apsw`` connections opened, by database file and its ``-shm`` (path, device
and inodes): never closed, never dropped (see the module's docstring)."""
_KEPT_LOCK = threading.Lock()


def _kept(conn: sqlite3.Connection) -> _Kept | None:
    """The ``apsw`` connection to ``conn``'s main database file, opened read-only
    on first use; ``None`` without ``apsw``, a file, or room for another
    (:data:`KEPT`).  A ``-shm`` made anew (another process, the last to close the
    index while this one's ``sqlite3`` had it closed, deleted it with the ``-wal``)
    gets a connection of its own: the old one reads files no writer writes."""
    try:
        import apsw
    except ImportError:
        return None
    name = conn_path(conn)
    if not name:
        return None
    try:
        st = os.stat(name)
        shm = os.stat(f"{name}-shm").st_ino
    except OSError:
        return None
    key = (name, st.st_dev, st.st_ino, shm)
    with _KEPT_LOCK:
        if key not in _KEPT:
            if len(_KEPT) >= KEPT:
                return None
            _KEPT[key] = _open(apsw, Path(name))
        return _KEPT[key]


def _open(apsw: Any, path: Path) -> _Kept | None:
    uri = f"file:{urllib.parse.quote(str(path))}?mode=ro"
    try:
        db = apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
        db.set_busy_timeout(BUSY_TIMEOUT_MS)
        db.execute(f"PRAGMA mmap_size = {MMAP_SIZE}")  # as the caller's (agentlog.index.db.connect)
        db.register_fts5_function(FUNCTION, _score)
    except apsw.Error:
        return None
    return _Kept(db, (apsw.Error, ValueError))


BUILTIN_ROWS = 2_000
"""Rows (every phrase's, exact) up to which :class:`ListedScores` lets the built-in
``bm25()`` score: its count of that few rows costs less than ``apsw``'s round trip."""
COMPOUND = 400
"""Ranges asked at most in one statement (``UNION ALL``; SQLite's limit is 500)."""


def rowid_runs(rowids: list[int], gap: int) -> list[tuple[int, int]]:
    """Sorted ``rowids`` as ``(first, last)`` runs, split where two are more than ``gap`` apart."""
    runs: list[tuple[int, int]] = []
    first = last = rowids[0]
    for rowid in rowids[1:]:
        if rowid - last > gap:
            runs.append((first, last))
            first = rowid
        last = rowid
    return [*runs, (first, last)]


def ranges_asked(rowids: list[int], gap: int) -> list[tuple[str, tuple[object, ...]]]:
    """Conditions (after a ``MATCH``) that find the hits among sorted ``rowids`` by
    ranges (FTS5 seeks its lists to a range; :func:`rowid_runs`), each with its
    values: a range holding only listed rowids as is, one with others between with
    its own rowids listed too (a filter FTS5 does not see: ``rowid + 0``; a list is
    built for each statement, so each range lists only its own)."""
    asked: list[tuple[str, tuple[object, ...]]] = []
    at = 0
    for low, high in rowid_runs(rowids, gap):
        end = bisect.bisect_right(rowids, high, at)
        if end - at == high - low + 1:
            asked.append((" AND rowid BETWEEN ? AND ?", (low, high)))
        else:
            listed = " AND rowid BETWEEN ? AND ? AND (rowid + 0) IN (SELECT value FROM json_each(?))"
            asked.append((listed, (low, high, json.dumps(rowids[at:end]))))
        at = end
    return asked


class ListedScores:
    """bm25 scores of listed hits of one search, in any order (e.g. the hits a time sort
    finds sharing a time, :mod:`agentlog.index.timeline`): each phrase's rows counted
    once for the search, up to :data:`COUNT_CAP` and estimated past it, as
    :func:`window_scores` does, and the hits scored through ``apsw`` with those counts
    (the built-in ``bm25()`` counts every row holding each phrase again in each
    statement: 20–280 ms for a common word, to score a few hundred hits).  Without
    ``apsw``, for raw FTS5 syntax (``query`` ``""``), or when ``apsw`` cannot score,
    the built-in ``bm25()`` scores; where every count is exact the two give the same
    doubles.  ``estimated``: a score used an estimated count.

    ``first``: the caller's own count of ``match``'s rows when ``query`` is one phrase
    (``match`` is ``scope`` + ``(query)``: they find the same rows), so it is not
    counted again: ``(rows, last)``, its rows up to ``COUNT_CAP + 1`` in FTS5's order
    (rowids ascending) and the highest rowid of those.  ``gap``: rowids apart from
    which two runs of the listed hits are asked as two ranges (one range when ``None``)."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        match: str,
        query: str,
        scope: str,
        run: Run,
        stop: Callable[[], int],
        first: tuple[int, int] | None = None,
        gap: int | None = None,
    ) -> None:
        self.conn, self.match, self.query, self.scope, self.run, self.stop = conn, match, query, scope, run, stop
        self.first, self.gap = first, gap
        self.counts: list[int] | None = None
        self.decided = self.estimate = self.estimated = False

    def _decide(self) -> None:
        """Count the phrases (once), when ``apsw`` is there to score with the counts."""
        self.decided = True
        found = phrases(self.query) if self.query else []
        if not found or _kept(self.conn) is None:
            return
        if len(found) == 1 and self.first is not None:
            rows, capped = self.first
            if rows <= COUNT_CAP:
                self.counts = [rows]
                return
            first, last = self.run(self.conn, _BOUNDS, ())[0]
            self.counts, self.estimate = [estimated_rows(first, last, capped)], True
            return
        self.counts, self.estimate, _, _ = _counts(self.conn, self.run, [self.scope + p for p in found])

    @property
    def through_apsw(self) -> bool:
        """Whether the hits are scored through ``apsw`` with the phrases' counts (unless it
        cannot score at the time: then by the built-in), not by the built-in ``bm25()``."""
        if not self.decided:
            self._decide()
        return self.counts is not None and (self.estimate or sum(self.counts) > BUILTIN_ROWS)

    def __call__(self, rowids: list[int]) -> dict[int, float]:
        """``{rowid: score}`` of those of ``rowids`` that match (lower is better),
        asked by ranges of rowids split where two are more than ``gap`` apart
        (:func:`ranges_asked`; by the built-in, one range: it counts again in each)."""
        if not rowids:
            return {}
        ordered = sorted(rowids)
        counts = self.counts if self.through_apsw else None
        if counts is not None:
            scored: dict[int, float] = {}
            asked = ranges_asked(ordered, self.gap or ordered[-1])
            params = ", ".join("?" * len(counts))
            one = f"SELECT rowid, {FUNCTION}(parts_fts, {params}) FROM parts_fts WHERE parts_fts MATCH ?"
            for at in range(0, len(asked), COMPOUND):
                part = asked[at : at + COMPOUND]
                sql = " UNION ALL ".join(one + condition for condition, _ in part)
                values = tuple(v for _, bound in part for v in (*counts, self.match, *bound))
                rows = _apsw_rows(self.conn, sql, values, self.run, self.stop)
                if rows is None:
                    break
                scored.update(rows)
            else:
                self.estimated = self.estimated or self.estimate
                return scored
        condition, bound = ranges_asked(ordered, ordered[-1])[0]
        sql = f"SELECT rowid, bm25(parts_fts) FROM parts_fts WHERE parts_fts MATCH ?{condition}"
        return dict(self.run(self.conn, sql, (self.match, *bound)))
