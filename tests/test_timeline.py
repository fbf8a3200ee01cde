"""Searches sorted newest or oldest first by walking messages in time order
(``agentlog.index.timeline``, issue 16) give the page the all-hits sort gives:
ties of time (broken by bm25, then session, message and part), messages with no
time (last), several batches, pages, filters; its total is counted up to the cap."""

from __future__ import annotations

import json
import re
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agentlog.adapters import all_adapters
from agentlog.index import db, rank, timeline
from agentlog.index import search as search_module
from agentlog.index.rank import ListedScores
from agentlog.index.schema import MIGRATIONS
from agentlog.index.search import search
from agentlog.index.sync import sync
from web_helpers import demo_index

TEXTS = ["deploy the rocket", "deploy the rocket now", "rocket", "deploy rocket rocket fuel", "fuel the deploy"]


def _timed_home(home: Path) -> Path:
    """Four sessions in two projects: prompts and answers (a text and a Bash call
    each: two parts of one time) drawn from :data:`TEXTS` (equal texts: equal
    scores), at seconds that repeat across and within sessions; every seventh
    line has no time."""
    for s, session in enumerate(("one", "two", "three", "four")):
        project = home / ".claude/projects" / ("-work-a" if s % 2 else "-work-b")
        project.mkdir(parents=True, exist_ok=True)
        rows, parent = [], None
        for n in range(40):
            uuid = f"{session}-{n}"
            text = TEXTS[(n * 3 + s) % len(TEXTS)]
            if n % 2:
                content: object = [
                    {"type": "text", "text": text},
                    {"type": "tool_use", "id": f"toolu_{uuid}", "name": "Bash", "input": {"command": f"echo {text}"}},
                ]
                message = {"role": "assistant", "model": "claude-sonnet-4-5", "content": content, "id": f"msg_{uuid}"}
            else:
                message = {"role": "user", "content": text}
            line: dict[str, object] = {
                "type": message["role"],
                "sessionId": session,
                "uuid": uuid,
                "parentUuid": parent,
                "cwd": f"/work/{'a' if s % 2 else 'b'}",
                "message": message,
            }
            if (n + s) % 7:
                line["timestamp"] = f"2026-03-01T10:{(n * 7 + s * 3) % 13:02d}:00Z"
            rows.append(json.dumps(line))
            parent = uuid
        (project / f"{session}.jsonl").write_text("\n".join(rows) + "\n")
    return home


@pytest.fixture(scope="module")
def timed(tmp_path_factory):
    home = _timed_home(tmp_path_factory.mktemp("timed") / "home")
    path = tmp_path_factory.mktemp("timed-index") / "index.sqlite"
    conn = db.connect(path)
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    conn.close()
    return path


def _oracle(conn, query: str, sort: str, offset: int, limit: int) -> list[tuple[str, str, str]]:
    """The page the time order defines, in one SQL statement: time (none last), bm25,
    session, message, part."""
    rows = conn.execute(
        f"""SELECT m.session_key, m.id, p.type FROM parts_fts JOIN parts p ON p.rowid = parts_fts.rowid
        JOIN messages m ON m.rowid = p.message_rowid WHERE parts_fts MATCH ?
        ORDER BY m.timestamp IS NULL, m.timestamp {"DESC" if sort == "newest" else "ASC"}, bm25(parts_fts),
        m.session_key, m.id, p.idx LIMIT ? OFFSET ?""",
        (f"{{text}} : ({query})", limit, offset),
    )
    return [tuple(r) for r in rows]


def _shown(page) -> list[tuple[object, ...]]:
    return [(h.session_key, h.message_id, h.part_type, h.rank, h.timestamp, h.snippet) for h in page.hits]


FILTERS: list[dict[str, object]] = [
    {},
    {"role": "ASSISTANT"},
    {"tool": "bash"},
    {"agent": "claude_code"},
    {"project": "work/a"},
    {"since": datetime(2026, 3, 1, 10, 3, tzinfo=UTC), "until": datetime(2026, 3, 1, 10, 9, tzinfo=UTC)},
]


PATHS = ("few", "known", "fts", "scored")
BUILTIN_ROWS = rank.BUILTIN_ROWS


def _path(monkeypatch, path: str, builtin_rows: int = BUILTIN_ROWS) -> None:
    """Send time sorts down one path: ``few`` (every hit's time looked up), ``known``
    (a walk keeping the hits counted), ``fts`` (a walk asking FTS5 by ranges), ``scored``
    (a walk asking the scorer, through ``apsw``, by ranges); ``builtin_rows``: the
    other paths' :data:`agentlog.index.rank.BUILTIN_ROWS`."""
    monkeypatch.setattr(timeline, "TIME_SCAN_FROM", 10**9 if path == "few" else 1)
    walked = path in ("fts", "scored")
    monkeypatch.setattr(timeline, "HEAD", 3 if walked else rank.COUNT_CAP + 1)  # more than counted
    monkeypatch.setattr(rank, "BUILTIN_ROWS", 0 if path == "scored" else builtin_rows)


def _joined(monkeypatch, conn, query: str, **kwargs):
    """The page of the joined query, which sorts every hit (the reference)."""
    def joined(conn, translation, match, where, params, reasoning, limit, offset, sort, by_session, budget):
        return search_module._joined_time(conn, translation, match, where, params, limit, offset, sort, by_session, budget)

    with monkeypatch.context() as patched:
        patched.setattr(search_module, "_time_page", joined)
        return search(conn, query, **kwargs)


@pytest.mark.parametrize("first_batch", [1, 3, 1000])
@pytest.mark.parametrize("sort", ["newest", "oldest"])
def test_the_time_walk_is_the_all_hits_sort(timed, monkeypatch, sort, first_batch):
    conn = db.connect(timed, readonly=True)
    monkeypatch.setattr(timeline, "FIRST_BATCH", first_batch)
    monkeypatch.setattr(search_module, "TOTAL_CAP", 1000)
    walks = []
    real = timeline.by_time

    def counted(*args, **kwargs):
        walks.append(result := real(*args, **kwargs))
        return result

    monkeypatch.setattr(timeline, "by_time", counted)
    for query in ("rocket", "deploy", "fuel", '"the rocket"', "roc*"):
        for filters in FILTERS:
            for offset, limit in ((0, 1), (0, 4), (3, 5), (10, 20), (60, 10), (200, 10)):
                kwargs = {"limit": limit, "offset": offset, "sort": sort, **filters}
                whole = _joined(monkeypatch, conn, query, **kwargs)
                for path in PATHS:
                    _path(monkeypatch, path)
                    walked = search(conn, query, **kwargs)  # type: ignore[arg-type]
                    assert _shown(walked) == _shown(whole), (query, filters, offset, limit, path)
                    assert (walked.total, walked.total_exact, walked.note) == (whole.total, True, whole.note)
                if not filters:
                    assert [(h.session_key, h.message_id, h.part_type) for h in walked.hits] == _oracle(
                        conn, query, sort, offset, limit
                    )
    walked_pages = [w for w in walks if w is not None]
    assert len(walked_pages) > len(walks) / 2  # most pages were walked, not given up
    assert any(w is None for w in walks)  # and the pages past the timed hits were sorted whole


def _grouped(page) -> list[tuple[object, ...]]:
    return [(h.session_key, h.message_id, h.part_type, h.session_hits, h.rank, h.snippet) for h in page.hits]


@pytest.mark.parametrize("first_batch", [1, 1000])
@pytest.mark.parametrize("sort", ["newest", "oldest"])
def test_sessions_walked_by_time_are_the_grouped_sort(timed, monkeypatch, sort, first_batch):
    conn = db.connect(timed, readonly=True)
    monkeypatch.setattr(timeline, "FIRST_BATCH", first_batch)
    walks = []
    real = timeline.sessions_by_time

    def counted(*args, **kwargs):
        walks.append(result := real(*args, **kwargs))
        return result

    monkeypatch.setattr(timeline, "sessions_by_time", counted)
    for query in ("rocket", "deploy", "fuel", '"the rocket"', "roc*", "now"):
        for filters in FILTERS:
            for offset, limit in ((0, 1), (0, 2), (1, 2), (2, 5), (5, 5)):
                kwargs = {"limit": limit, "offset": offset, "sort": sort, "by_session": True, **filters}
                whole = _joined(monkeypatch, conn, query, **kwargs)
                _path(monkeypatch, "few")  # every hit's session and time
                few = search(conn, query, **kwargs)  # type: ignore[arg-type]
                assert _grouped(few) == _grouped(whole), (query, filters, offset, limit)
                assert (few.total, few.total_exact) == (whole.total, True)
                for path in ("known", "fts"):  # the walks
                    _path(monkeypatch, path)
                    walked = search(conn, query, **kwargs)  # type: ignore[arg-type]
                    assert _grouped(walked) == _grouped(whole), (query, filters, offset, limit, path)
                    if walked.total_exact:  # sorted whole: the walk gave up
                        assert walked.total == whole.total
                    else:  # the sessions walked: a lower bound
                        assert offset + len(walked.hits) <= walked.total <= whole.total
    assert sum(w[0] is not None for w in walks) > len(walks) / 3
    assert any(w[0] is None for w in walks)


@pytest.mark.parametrize("path", ["known", "fts"])
def test_the_walk_counts_the_total_up_to_the_cap(timed, monkeypatch, path):
    conn = db.connect(timed, readonly=True)
    _path(monkeypatch, path)
    monkeypatch.setattr(search_module, "TOTAL_CAP", 30)
    page = search(conn, "rocket", limit=5, offset=5, sort="newest")
    whole_hits = conn.execute(
        "SELECT count(*) FROM parts_fts WHERE parts_fts MATCH '{text} : (rocket)'"
    ).fetchone()[0]
    assert whole_hits > 30
    assert (page.total, page.total_exact, page.total_text, page.next_offset) == (30, False, "30+", 10)
    assert [(h.session_key, h.message_id, h.part_type) for h in page.hits] == _oracle(conn, "rocket", "newest", 5, 5)
    few = conn.execute("""SELECT count(*) FROM parts_fts WHERE parts_fts MATCH '{text} : ("rocket now")'""").fetchone()[0]
    monkeypatch.setattr(search_module, "TOTAL_CAP", 100)
    now = search(conn, '"rocket now"', limit=5, sort="oldest")
    assert (now.total, now.total_exact, now.next_offset) == (few, True, 5) and 5 < few <= 100


def test_a_walk_past_its_limit_gives_up_to_the_all_hits_sort(timed, monkeypatch):
    conn = db.connect(timed, readonly=True)
    monkeypatch.setattr(timeline, "FIRST_BATCH", 1)
    monkeypatch.setattr(timeline, "WALK_LIMIT", 2)
    budget = search_module.Budget()
    run = budget.run
    match = "{text} : (rocket)"
    scores = ListedScores(conn, match, '"rocket"', "{text} : ", run, budget.check)

    def walk():
        return timeline._Walk(conn, run, match, [], [], False, 40, "newest", 0.5)

    assert timeline.by_time(conn, run, scores, walk(), 40) is None
    monkeypatch.setattr(timeline, "WALK_LIMIT", 10**6)
    walked = timeline.by_time(conn, run, scores, walk(), 40)
    assert walked is not None and len(walked) == 40
    page = search(conn, "rocket", limit=40, sort="newest")
    assert [rowid for rowid, _ in walked] == [
        conn.execute(
            "SELECT p.rowid FROM parts p JOIN messages m ON m.rowid = p.message_rowid "
            "WHERE m.session_key = ? AND m.id = ? AND p.type = ?",
            (h.session_key, h.message_id, h.part_type),
        ).fetchone()[0]
        for h in page.hits
    ]


def test_the_demo_walked_by_time_is_the_all_hits_sort(tmp_path, monkeypatch):
    conn = db.connect(demo_index(tmp_path / "demo.sqlite"), readonly=True)
    for word in ("the", "file", "test", "a*"):
        for sort in ("newest", "oldest"):
            for offset, limit in ((0, 20), (7, 3), (40, 20)):
                for by_session in (False, True):
                    kwargs = {"limit": limit, "offset": offset, "sort": sort, "by_session": by_session}
                    whole = _joined(monkeypatch, conn, word, **kwargs)
                    for path in PATHS:
                        _path(monkeypatch, path)
                        page = search(conn, word, **kwargs)  # type: ignore[arg-type]
                        assert _grouped(page) == _grouped(whole), (word, sort, offset, by_session, path)
                        assert page.total == whole.total or not page.total_exact


def test_the_migration_adds_the_time_index(tmp_path):
    conn = db.connect(tmp_path / "index.sqlite")
    assert conn.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)
    assert conn.execute("SELECT sql FROM sqlite_master WHERE name = 'messages_timestamp'").fetchone() == (
        "CREATE INDEX messages_timestamp ON messages(timestamp)",
    )


ORACLE_FILTERS: dict[str, tuple[dict[str, object], str]] = {
    "none": ({}, ""),
    "role": ({"role": "ASSISTANT"}, " AND m.role = 'assistant'"),
    "tool": ({"tool": "bash"}, " AND lower(p.tool) = 'bash'"),
    "project": ({"project": "work/a"}, " AND s.cwd LIKE '%work/a%'"),
    "span": (
        {"since": datetime(2026, 3, 1, 10, 3, tzinfo=UTC), "until": datetime(2026, 3, 1, 10, 9, tzinfo=UTC)},
        " AND m.timestamp >= '2026-03-01T10:03:00.000000+00:00' AND m.timestamp < '2026-03-01T10:09:00.000000+00:00'",
    ),
}


def _every_hit(conn, query: str, sort: str, condition: str) -> list[tuple[object, ...]]:
    """Every hit ``(session, message, part type, score, time)`` in the time order, by
    Python's sorts over one statement: time (none last), bm25, session, message, part."""
    rows = conn.execute(
        f"""SELECT m.session_key, m.id, p.type, bm25(parts_fts), m.timestamp, p.idx FROM parts_fts
        JOIN parts p ON p.rowid = parts_fts.rowid JOIN messages m ON m.rowid = p.message_rowid
        JOIN sessions s ON s.key = m.session_key WHERE parts_fts MATCH ?{condition}""",
        (f"{{text}} : ({query})",),
    ).fetchall()
    rows.sort(key=lambda r: (r[0], r[1], r[5]))
    rows.sort(key=lambda r: r[3])
    rows.sort(key=lambda r: r[4] or "", reverse=sort == "newest")
    rows.sort(key=lambda r: r[4] is None)
    return [r[:5] for r in rows]


def _sessions_oracle(hits: list[tuple[object, ...]], sort: str, offset: int, limit: int) -> list[tuple[object, ...]]:
    """The grouped page the rule defines: each session at its first hit of ``hits`` (in
    the time order), counting its hits of the seconds from the first to the page's
    last session's (every hit when that one has no time)."""
    firsts: dict[object, tuple[object, ...]] = {}
    for hit in hits:
        firsts.setdefault(hit[0], hit)
    page = list(firsts.values())[offset : offset + limit]
    if not page:
        return []
    last = page[-1][4]

    def reached(time) -> bool:
        if last is None:
            return True
        return time is not None and (time >= last if sort == "newest" else time <= last)

    return [(s, m, t, sum(1 for h in hits if h[0] == s and reached(h[4])), score) for s, m, t, score, _ in page]


def _keys(page) -> list[tuple[object, ...]]:
    return [(h.session_key, h.message_id, h.part_type, h.session_hits, h.rank) for h in page.hits]


@pytest.mark.parametrize("builtin_rows", [0, 10**9])  # scored through apsw, and by the built-in bm25()
@pytest.mark.parametrize("sort", ["newest", "oldest"])
def test_sessions_by_time_are_each_session_at_its_first_hit(timed, monkeypatch, sort, builtin_rows):
    conn = db.connect(timed, readonly=True)
    monkeypatch.setattr(rank, "BUILTIN_ROWS", builtin_rows)
    monkeypatch.setattr(timeline, "FIRST_BATCH", 1)
    checked = 0
    for query in ("rocket", "deploy", "fuel", '"the rocket"', "roc*", "now", "deploy rocket"):
        for name, (filters, condition) in ORACLE_FILTERS.items():
            hits = _every_hit(conn, query, sort, condition)
            sessions = len({hit[0] for hit in hits})
            for offset, limit in ((0, 1), (0, 2), (1, 2), (2, 5), (0, 10)):
                expected = _sessions_oracle(hits, sort, offset, limit)
                kwargs = {"limit": limit, "offset": offset, "sort": sort, "by_session": True, **filters}
                joined = _joined(monkeypatch, conn, query, **kwargs)
                assert (_keys(joined), joined.total) == (expected, sessions), (query, name, offset, limit)
                for path in PATHS:
                    _path(monkeypatch, path, builtin_rows)
                    page = search(conn, query, **kwargs)  # type: ignore[arg-type]
                    assert _keys(page) == expected, (query, name, offset, limit, path)
                    if page.total_exact:
                        assert page.total == sessions
                    else:
                        assert offset + len(page.hits) <= page.total <= sessions
                checked += len(expected)
    assert checked > 300


def _texts_tied(conn) -> int:
    """Hits of ``rocket`` sharing a second and a score with another hit."""
    hits = _every_hit(conn, "rocket", "newest", "")
    return sum(1 for hit in hits if sum(1 for h in hits if (h[3], h[4]) == (hit[3], hit[4])) > 1)


@pytest.mark.parametrize("by_session", [False, True])
@pytest.mark.parametrize("sort", ["newest", "oldest"])
def test_paging_through_offsets_lists_each_hit_and_session_once(timed, monkeypatch, sort, by_session):
    conn = db.connect(timed, readonly=True)
    monkeypatch.setattr(rank, "BUILTIN_ROWS", 0)
    assert _texts_tied(conn) > 20  # ties of time and score: broken by session, message, part
    for query in ("rocket", "roc*", '"the rocket"'):
        hits = _every_hit(conn, query, sort, "")
        firsts: dict[object, tuple[object, ...]] = {}
        for hit in hits:
            firsts.setdefault(hit[0], hit)
        expected = [hit[:3] for hit in (firsts.values() if by_session else hits)]
        for path, first_batch in (("few", 256), ("known", 1), ("fts", 1), ("fts", 1000), ("scored", 1)):
            _path(monkeypatch, path, 0)
            monkeypatch.setattr(timeline, "FIRST_BATCH", first_batch)
            listed: list[tuple[object, ...]] = []
            offset: int | None = 0
            while offset is not None:
                page = search(conn, query, limit=7, offset=offset, sort=sort, by_session=by_session)  # type: ignore[arg-type]
                listed += [(h.session_key, h.message_id, h.part_type) for h in page.hits]
                offset = page.next_offset
            assert listed == expected, (query, path, first_batch)
            assert len(set(listed)) == len(listed)


def _recorded(monkeypatch) -> list[str]:
    """The statements each search runs from now on (through its budget), as run."""
    statements: list[str] = []
    real = search_module.Budget.run

    def run(self, conn, sql, params):
        statements.append(sql)
        return real(self, conn, sql, params)

    monkeypatch.setattr(search_module.Budget, "run", run)
    return statements


@pytest.mark.parametrize("path", ["known", "fts"])
def test_a_grouped_walk_never_reads_a_sessions_other_hits(timed, monkeypatch, path):
    """Each session at its first hit: the walk reads only the seconds it reaches, never
    a session's parts (what gave up on long sessions: ``messages_time``)."""
    conn = db.connect(timed, readonly=True)
    _path(monkeypatch, path)
    monkeypatch.setattr(timeline, "FIRST_BATCH", 1)
    statements = _recorded(monkeypatch)
    for sort in ("newest", "oldest"):
        page = search(conn, "rocket", limit=2, sort=sort, by_session=True)
        assert _keys(page) == _sessions_oracle(_every_hit(conn, "rocket", sort, ""), sort, 0, 2)
        assert not page.total_exact  # walked, not sorted whole
    assert statements and not any(re.search(r"messages_time\b|session_key IN", sql) for sql in statements)


@pytest.mark.parametrize("filters", FILTERS[1:])
def test_a_walk_with_filters_keeps_the_hits_counted_without_asking_fts5_again(timed, monkeypatch, filters):
    """Every hit counted (the ``known`` path): a walk with filters keeps those of them
    its filtered messages hold, as one without filters does, and never asks FTS5
    which parts match (:func:`timeline._matching`); the page is the joined sort's."""
    conn = db.connect(timed, readonly=True)
    _path(monkeypatch, "known")
    monkeypatch.setattr(timeline, "FIRST_BATCH", 1)
    asked: list[int] = []
    real = timeline._matching

    def matching(*args, **kwargs):
        asked.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(timeline, "_matching", matching)
    for sort in ("newest", "oldest"):
        for by_session in (False, True):
            kwargs = {"limit": 3, "sort": sort, "by_session": by_session, **filters}
            whole = _joined(monkeypatch, conn, "rocket", **kwargs)
            walked = search(conn, "rocket", **kwargs)  # type: ignore[arg-type]
            assert _grouped(walked) == _grouped(whole), (sort, by_session)
    assert asked == []


def test_a_time_sort_counts_the_phrase_once_and_scores_past_the_cap_estimated(timed, monkeypatch):
    conn = db.connect(timed, readonly=True)
    monkeypatch.setattr(rank, "_KEPT", {})  # room for this index's apsw connection (KEPT a process)
    _path(monkeypatch, "known", 0)
    statements: list[str] = []
    real = search_module.Budget.run

    def run(self, conn, sql, params):
        statements.append(" ".join(sql.split()))
        return real(self, conn, sql, params)

    monkeypatch.setattr(search_module.Budget, "run", run)
    exact = search(conn, "now", limit=5, sort="newest")
    assert sum("parts_fts MATCH ?" in sql and "LIMIT" in sql and "count(*)" in sql for sql in statements) == 1
    assert not any("bm25(parts_fts)" in sql for sql in statements)  # scored through apsw, counts given
    assert exact.note is None
    whole = _every_hit(conn, "now", "newest", "")[:5]
    assert [(h.session_key, h.message_id, h.part_type, h.rank) for h in exact.hits] == [hit[:4] for hit in whole]
    monkeypatch.setattr(rank, "COUNT_CAP", 3)  # the rows of "now" estimated
    monkeypatch.setattr(timeline, "COUNT_CAP", 3)
    monkeypatch.setattr(timeline, "HEAD", 4)
    estimated = search(conn, "now", limit=5, sort="newest")
    assert estimated.note == rank.ESTIMATED_NOTE
    assert [(h.session_key, h.message_id, h.part_type) for h in estimated.hits] == [hit[:3] for hit in whole]
    assert [h.rank for h in estimated.hits] != [h.rank for h in exact.hits]  # one phrase: other scores, same order


def test_ranges_asked_list_only_what_lies_between():
    assert rank.rowid_runs([1, 2, 3, 10, 11, 40], 5) == [(1, 3), (10, 11), (40, 40)]
    assert rank.ranges_asked([1, 2, 3, 10, 12, 40], 5) == [
        (" AND rowid BETWEEN ? AND ?", (1, 3)),
        (" AND rowid BETWEEN ? AND ? AND (rowid + 0) IN (SELECT value FROM json_each(?))", (10, 12, "[10, 12]")),
        (" AND rowid BETWEEN ? AND ?", (40, 40)),
    ]


def test_a_prefix_walk_asks_fts5_each_batch_as_one_range(timed, monkeypatch):
    """A prefix term costs FTS5 the merge of every list of its words in each statement
    and range asked (what took a ``te*`` sorted by time past the 2 s limit on 1 M
    messages): a walk asks each batch's parts as one range, in the statement that
    scores them, and finds the page the sort of every hit does."""
    assert (timeline._gap(0.5, False), timeline._gap(0.001, False), timeline._gap(0.5, True)) == (600, 300_000, sys.maxsize)
    conn = db.connect(timed, readonly=True)
    _path(monkeypatch, "fts")
    monkeypatch.setattr(timeline, "FIRST_BATCH", 1)
    monkeypatch.setattr(timeline, "RANGE_COST_HITS", 1)  # a range for each run of rowids, but for a prefix
    monkeypatch.setattr(timeline, "MIN_GAP", 1)
    statements = _recorded(monkeypatch)
    real_apsw = rank._apsw_rows

    def apsw_rows(conn, sql, *args):
        statements.append(sql)
        return real_apsw(conn, sql, *args)

    scored: list[int] = []  # the rowids asked of ListedScores
    real_scores = ListedScores.__call__

    def scores(self, rowids):
        scored.extend(rowids)
        return real_scores(self, rowids)

    monkeypatch.setattr(rank, "_apsw_rows", apsw_rows)
    monkeypatch.setattr(ListedScores, "__call__", scores)
    for query, ranges in (("roc*", 1), ("rocket", 2)):
        for sort in ("newest", "oldest"):
            statements.clear()
            scored.clear()
            page = search(conn, query, limit=5, sort=sort)
            if ranges == 1:  # a batch's hits found and scored in one statement: none scored again
                assert scored and len(set(scored)) == len(scored), (query, sort)
            asked = [sql.count("MATCH") for sql in statements if "rowid BETWEEN" in sql]
            assert asked and (max(asked) == 1 if ranges == 1 else max(asked) >= ranges), (query, sort, asked)
            shown = [(session, message, part, score) for session, message, part, _, score in _keys(page)]
            assert shown == [hit[:4] for hit in _every_hit(conn, query, sort, "")[:5]], (query, sort)


def test_the_head_of_a_word_is_its_listed_count_without_the_list(timed):
    """A time sort's first count (:func:`timeline._head`): for a word, its first hit and
    the one at the cap looked up when that many match, else the listed count; both give
    the rows, lowest and highest rowid the listed count of every head gives."""
    conn = db.connect(timed, readonly=True)
    run = search_module.Budget().run
    listed = {}
    for query in ("rocket", "deploy", "fuel", '"the rocket"', "now", "nothinghere"):
        match = f"{{text}} : ({query})"
        every = [rowid for (rowid,) in conn.execute("SELECT rowid FROM parts_fts WHERE parts_fts MATCH ?", (match,))]
        for head in (1, 2, 5, len(every), len(every) + 1, 10_000):
            word = timeline._head(conn, run, match, head, False)
            whole = timeline._head(conn, run, match, head, True)
            first = every[:head]
            expected = (len(first), min(first, default=0), max(first, default=0))
            listed[query, head] = whole[3]
            assert word[:3] == whole[:3] == expected, (query, head)
            assert whole[3] == (None if len(every) >= head else ",".join(map(str, every)) or None), (query, head)
            assert word[3] == whole[3], (query, head)
    assert listed["rocket", 10_000] and listed["rocket", 1] is None


def test_a_walk_scored_through_apsw_finds_and_scores_each_batch_in_one_statement(timed, monkeypatch):
    """A word's walk whose hits are scored through ``apsw`` asks each batch's parts of
    the scorer, not of FTS5 apart (in a corpus of short sessions sharing seconds, most of
    a batch's hits share the page's: they were asked twice), and finds the page the sort
    of every hit does."""
    conn = db.connect(timed, readonly=True)
    monkeypatch.setattr(rank, "_KEPT", {})  # room for this index's apsw connection (KEPT a process)
    monkeypatch.setattr(timeline, "FIRST_BATCH", 1)
    for path in ("fts", "scored"):
        _path(monkeypatch, path)
        statements = _recorded(monkeypatch)
        for sort in ("newest", "oldest"):
            statements.clear()
            page = search(conn, "rocket", limit=5, sort=sort)
            found_apart = [sql for sql in statements if sql.startswith("SELECT rowid FROM parts_fts WHERE parts_fts MATCH ? AND rowid")]
            assert bool(found_apart) == (path == "fts"), (path, sort)
            shown = [(session, message, part, score) for session, message, part, _, score in _keys(page)]
            assert shown == [hit[:4] for hit in _every_hit(conn, "rocket", sort, "")[:5]], (path, sort)
