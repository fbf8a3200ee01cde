"""Rank-sorted search without FTS5's whole-list count (issue 16): ``agentlog.index.rank``
scores the newest hits through ``apsw`` with FTS5's bm25 formula, given bounded row
counts.  Where every count is exact its scores are the built-in ``bm25()``'s, bit for
bit, and so are the pages (ties, windows, pages, flat and grouped, on the demo and a
generated index); past the cap the count is estimated and the page says so; without
``apsw`` (or for raw FTS5 syntax) the built-in runs."""

from __future__ import annotations

import json
import math
import random
import sys
from pathlib import Path

import pytest

from agentlog.adapters import all_adapters
from agentlog.demo import demo_env, demo_home
from agentlog.index import db, rank
from agentlog.index import search as search_module
from agentlog.index.fts import translate
from agentlog.index.search import Budget, SearchStopped, search
from agentlog.index.sync import sync

apsw = pytest.importorskip("apsw")

@pytest.fixture(autouse=True)
def registry(monkeypatch):
    """A registry of ``apsw`` connections of this test's own (the process's keeps
    its first :data:`~agentlog.index.rank.KEPT`)."""
    monkeypatch.setattr(rank, "_KEPT", {})


WORDS = ["deploy", "rocket", "fuel", "the", "launch", "pad", "orbit", "crew", "abort", "stage"]


def _generated_home(home: Path, seed: int = 3) -> Path:
    """Four sessions of prompts and answers (text and reasoning) of 1 to 30 words drawn
    unevenly from :data:`WORDS`, some repeated texts (ties), some at the same second."""
    rng = random.Random(seed)
    project = home / ".claude/projects/-gen"
    project.mkdir(parents=True, exist_ok=True)
    for s in range(4):
        rows = []
        for n in range(40):
            text = " ".join(rng.choices(WORDS, weights=range(len(WORDS), 0, -1), k=rng.randint(1, 30)))
            if n % 7 == 3:
                text = "deploy the rocket"  # repeated: equal scores
            line = {"sessionId": f"s{s}", "uuid": f"s{s}-{n}", "parentUuid": None, "cwd": "/work/gen"}
            stamp = f"2026-03-0{1 + s % 2}T10:{(n * 7 + s) % 60:02d}:00Z"
            if n % 2:
                thought = " ".join(rng.choices(WORDS, k=rng.randint(1, 12)))
                message = {
                    "id": f"a{s}-{n}",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [{"type": "thinking", "thinking": thought}, {"type": "text", "text": text}],
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                }
                rows.append(json.dumps({**line, "type": "assistant", "timestamp": stamp, "message": message}))
            else:
                message = {"role": "user", "content": text}
                rows.append(json.dumps({**line, "type": "user", "timestamp": stamp, "message": message}))
        (project / f"s{s}.jsonl").write_text("\n".join(rows) + "\n")
    return home


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    base = tmp_path_factory.mktemp("rank")
    home = _generated_home(base / "home")
    conn = db.connect(base / "index.sqlite")
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    return conn


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    conn = db.connect(tmp_path_factory.mktemp("demo") / "index.sqlite")
    sync(conn, all_adapters(), demo_env({}), demo_home())
    return conn


def _builtin(conn, match: str, window: int) -> list[tuple[int, float]]:
    sql = f"SELECT rowid, bm25(parts_fts) FROM parts_fts WHERE parts_fts MATCH ? ORDER BY rowid DESC LIMIT {window}"
    return [tuple(r) for r in conn.execute(sql, (match,))]


def _ours(conn, query: str, reasoning: bool, window: int) -> tuple[list[tuple[int, float]], bool]:
    """The newest ``window`` hits of ``query`` scored through ``apsw`` (never the
    built-in), and whether a count was estimated."""
    translation = translate(query)
    match = search_module._scoped(translation.match, reasoning)
    scope = "" if reasoning else "{text} : "
    budget = Budget()
    counts, estimated, *_ = rank._counts(conn, budget.run, [scope + p for p in rank.phrases(translation.match)])
    scored = rank._apsw_scores(conn, match, counts, window, budget.run, budget.check)
    assert scored is not None, "the apsw path fell back"
    return [tuple(r) for r in scored], estimated


@pytest.fixture
def scored(monkeypatch):
    """Every query scored through ``apsw`` (by default only those with a phrase in
    more than 10,000 rows or slow to count: none here)."""
    monkeypatch.setattr(rank, "SCORE_S", -1.0)


QUERIES = [
    "rocket",
    "the",
    "deploy rocket",
    '"deploy the rocket"',
    "rocket OR crew",
    "launch NOT abort",
    "NEAR(fuel orbit, 3)",
    "sta*",
    "the crew abort stage pad",
    "orbit orbit",
    "nowhere",
]


@pytest.mark.parametrize("reasoning", [False, True])
@pytest.mark.parametrize("window", [1, 7, 1000])
def test_scores_are_the_builtin_bm25_bit_for_bit(generated, reasoning, window):
    for query in QUERIES:
        match = search_module._scoped(translate(query).match, reasoning)
        got, estimated = _ours(generated, query, reasoning, window)
        assert (got, estimated) == (_builtin(generated, match, window), False), query


def test_scores_on_the_demo_are_the_builtin_bm25(demo):
    queries = ("claude", "the", "error test", "git push", '"pull request"', "fix*", "def OR class", "最新", "プロジェクト")
    for query in queries:  # the last two: phrases of pairs of characters (agentlog.index.fts.query_phrases)
        match = search_module._scoped(translate(query).match, False)
        assert _ours(demo, query, False, 1000) == (_builtin(demo, match, 1000), False), query


def _pages(conn, query: str, **kw) -> list[tuple[object, ...]]:
    page = search(conn, query, **kw)
    hits = [(h.session_key, h.message_id, h.part_type, h.session_hits, h.rank) for h in page.hits]
    return [*hits, (page.total, page.total_exact, page.note)]


@pytest.mark.parametrize("window", [1, 5, 16, 1000])
def test_pages_are_those_of_the_builtin_bm25(generated, demo, monkeypatch, scored, window):
    monkeypatch.setattr(search_module, "RANK_WINDOW", window)
    monkeypatch.setattr(search_module, "TOTAL_CAP", 30)
    cases = [(generated, q) for q in ("rocket", "the", "deploy rocket", '"deploy the rocket"', "crew OR pad")]
    cases += [(demo, q) for q in ("claude", "the", "git push")]
    for conn, query in cases:
        for offset, limit in ((0, 1), (0, 4), (3, 5), (8, 8), (60, 10)):
            for by_session in (False, True):
                for reasoning in (False, True):
                    kw = {"offset": offset, "limit": limit, "by_session": by_session, "reasoning": reasoning}
                    ours = _pages(conn, query, **kw)
                    with monkeypatch.context() as m:
                        m.setattr(rank, "_kept", lambda conn: None)  # as without apsw
                        assert ours == _pages(conn, query, **kw), (query, kw)


def test_kept_counts_are_those_counted_again_after_a_write(tmp_path, monkeypatch):
    """A phrase's row count is kept for the index it was counted on, and counted again
    once the full-text index changed (its records) or the file was made anew."""
    monkeypatch.setattr(rank, "_COUNTED", {})
    home = _generated_home(tmp_path / "home")
    path = tmp_path / "index.sqlite"
    conn = db.connect(path)
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    budget = Budget()
    scoped = ["{text} : " + p for p in rank.phrases(translate("rocket").match)]
    first = rank._counts(conn, budget.run, scoped)[:3]
    assert first == rank._counts(conn, budget.run, scoped)[:3] and len(rank._COUNTED) == 1
    (count,) = conn.execute("SELECT count(*) FROM parts_fts WHERE parts_fts MATCH ?", (scoped[0],)).fetchone()
    assert first == ([count], False, (count, True))
    extra = {"sessionId": "s9", "uuid": "s9-0", "parentUuid": None, "cwd": "/work/gen", "type": "user",
             "timestamp": "2026-03-03T10:00:00Z", "message": {"role": "user", "content": "rocket rocket"}}  # fmt: skip
    (home / ".claude/projects/-gen/s9.jsonl").write_text(json.dumps(extra) + "\n")
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    assert rank._counts(conn, budget.run, scoped)[:3] == ([count + 1], False, (count + 1, True))
    conn.close()
    for name in ("index.sqlite", "index.sqlite-wal", "index.sqlite-shm"):
        (tmp_path / name).unlink(missing_ok=True)
    (home / ".claude/projects/-gen/s9.jsonl").unlink()
    (home / ".claude/projects/-gen/s0.jsonl").unlink()
    conn = db.connect(path)  # the same path, made anew of fewer sessions
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    (fewer,) = conn.execute("SELECT count(*) FROM parts_fts WHERE parts_fts MATCH ?", (scoped[0],)).fetchone()
    assert fewer < count and rank._counts(conn, budget.run, scoped)[:3] == ([fewer], False, (fewer, True))


def test_without_apsw_the_builtin_ranks(generated, monkeypatch):
    expected = _pages(generated, "deploy rocket", limit=5)
    monkeypatch.setitem(sys.modules, "apsw", None)  # import apsw raises ImportError
    assert rank._kept(generated) is None
    assert _pages(generated, "deploy rocket", limit=5) == expected


def test_past_the_cap_a_count_is_estimated_and_the_page_says_so(generated, monkeypatch):
    monkeypatch.setattr(rank, "COUNT_CAP", 5)
    monkeypatch.setattr(rank, "SCORE_S", 1e9)  # scored through apsw since estimated
    rows = generated.execute("SELECT min(id), max(id) FROM parts_fts_docsize").fetchone()
    capped = generated.execute(
        "SELECT rowid FROM parts_fts WHERE parts_fts MATCH '{text} : \"stage\"' ORDER BY rowid LIMIT 1 OFFSET 5"
    ).fetchone()[0]
    n = rank.estimated_rows(rows[0], rows[1], capped)
    assert n == max(6, round(6 * (rows[1] - rows[0] + 1) / (capped - rows[0] + 1)))
    total = generated.execute("SELECT count(*) FROM parts_fts WHERE parts_fts MATCH '{text} : \"stage\"'").fetchone()[0]
    assert 5 < total < rows_count(generated) / 2  # counted past the cap; an IDF above the floor
    got, estimated = _ours(generated, "stage", False, 1000)
    builtin = _builtin(generated, "{text} : (\"stage\")", 1000)
    assert estimated
    assert [r for r, _ in got] == [r for r, _ in builtin]
    tokens = rank_totals(generated)
    for (_, score), (rowid, _) in zip(got, builtin, strict=True):
        freq, length = _row(generated, rowid, "stage")
        assert score == rank.bm25([freq], length, tokens, [rank.idf(rows_count(generated), n)])
        assert score != rank.bm25([freq], length, tokens, [rank.idf(rows_count(generated), total)])
    # one phrase: the order is the built-in's (an IDF scales every score alike)
    order = sorted(got, key=lambda r: (r[1], -r[0]))
    assert [r for r, _ in order] == [r for r, _ in sorted(builtin, key=lambda r: (r[1], -r[0]))]
    page = search(generated, "stage", limit=3)
    assert page.note == rank.ESTIMATED_NOTE
    assert [h.rank for h in page.hits] == sorted(s for _, s in got)[:3]


def rows_count(conn) -> int:
    return conn.execute("SELECT count(*) FROM parts_fts_docsize").fetchone()[0]


def rank_totals(conn) -> float:
    sizes = [_sizes(blob) for (blob,) in conn.execute("SELECT sz FROM parts_fts_docsize")]
    return sum(map(sum, sizes)) / len(sizes)


def _sizes(blob: bytes) -> list[int]:
    """A ``parts_fts_docsize`` blob: one varint per column (all below 128 here)."""
    assert all(b < 128 for b in blob)
    return list(blob)


def _row(conn, rowid: int, word: str) -> tuple[float, int]:
    """(instances of ``word`` in the row's text column, the row's tokens in every column)."""
    (blob,) = conn.execute("SELECT sz FROM parts_fts_docsize WHERE id = ?", (rowid,)).fetchone()
    marked = conn.execute(
        "SELECT highlight(parts_fts, 0, char(2), char(3)) FROM parts_fts WHERE parts_fts MATCH ? AND rowid = ?",
        (f'{{text}} : "{word}"', rowid),
    ).fetchone()[0]
    return float(marked.count("\x02")), sum(_sizes(blob))


def test_the_estimate_extrapolates_the_oldest_hits_density():
    assert rank.estimated_rows(1, 1_000_000, 100_000) == 100_010  # 10,001 hits in the first tenth
    assert rank.estimated_rows(1, 1_000_000, 10_500) == 952_476
    assert rank.estimated_rows(1, 1_000, 1_000) == rank.COUNT_CAP + 1  # never below the count
    assert rank.idf(100, 100) == rank.IDF_FLOOR == rank.idf(100, 60) == rank.idf(100, 200)
    assert rank.idf(100, 10) == math.log(90.5 / 10.5) == 2.1539745935424026


def test_raw_syntax_and_another_view_of_the_index_use_the_builtin(generated, monkeypatch):
    raw = search(generated, "{text}: rocket", raw=True, limit=4)
    with monkeypatch.context() as m:
        m.setattr(rank, "_kept", lambda conn: None)
        assert [h.rank for h in raw.hits] == [h.rank for h in search(generated, "{text}: rocket", raw=True, limit=4).hits]
    calls = []

    def stale(conn, sql, params):  # the caller's connection sees other FTS records
        calls.append(sql)
        return [(1, b"other")] if sql == rank._CHECK else generated.execute(sql, params).fetchall()

    budget = Budget()
    assert rank._apsw_scores(generated, '{text} : ("rocket")', [137], 10, stale, budget.check) is None
    assert calls == [rank._CHECK]
    monkeypatch.setattr(rank, "SCORE_S", -1.0)
    got = rank.window_scores(generated, '{text} : ("rocket")', '"rocket"', "{text} : ", 10, stale, budget.check)
    assert got == (_builtin(generated, '{text} : ("rocket")', 10), False, (137, True), None)
    # the records (the counts kept by them), count, check (another view), built-in
    assert calls == [rank._CHECK, rank._CHECK, calls[2], rank._CHECK, calls[4]]
    assert "count(*)" in calls[2] and "bm25(parts_fts)" in calls[4]


def test_phrases_in_few_rows_counted_fast_are_scored_by_the_builtin(generated, monkeypatch):
    monkeypatch.setattr(rank, "SCORE_S", 1e9)
    expected = _pages(generated, "deploy rocket", limit=5, by_session=True)

    def unused(*args):
        raise AssertionError("scored through apsw")

    monkeypatch.setattr(rank, "_apsw_scores", unused)
    assert _pages(generated, "deploy rocket", limit=5, by_session=True) == expected
    monkeypatch.setattr(rank, "COUNT_CAP", 136)  # "rocket" is in 137 rows: estimated
    with pytest.raises(AssertionError, match="scored through apsw"):
        search(generated, "deploy rocket")


def test_a_search_past_its_time_limit_stops(generated, monkeypatch):
    monkeypatch.setattr(search_module, "PROGRESS_STEPS", 1)  # a small index: look at the clock at every step
    budget = Budget(seconds=0.0)
    with pytest.raises(SearchStopped, match="longer than 0 s"):
        search(generated, "the", budget=budget)

    def interrupted(api, *counts):  # stopped in the middle of its read transaction
        raise apsw.InterruptError("interrupted")

    with monkeypatch.context() as m:
        m.setattr(rank, "FUNCTION", "agentlog_interrupted")
        kept = rank._kept(generated)
        assert kept is not None
        kept.db.register_fts5_function("agentlog_interrupted", interrupted)
        assert rank._apsw_scores(generated, '{text} : ("the")', [126], 9, Budget().run, lambda: 0) is None
    kept = rank._kept(generated)
    assert kept is not None and not kept.db.in_transaction and not kept.lock.locked()
    assert _ours(generated, "the", False, 1000) == (_builtin(generated, '{text} : ("the")', 1000), False)


def test_a_rebuilt_index_or_a_new_shm_gets_a_connection_of_its_own(tmp_path, monkeypatch):
    home = _generated_home(tmp_path / "home", seed=5)
    path = tmp_path / "index.sqlite"
    conn = db.connect(path)
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    first = rank._kept(conn)
    assert first is not None and rank._kept(conn) is first
    conn.close()
    # closing, sqlite3 dropped the apsw connection's locks too (POSIX), so it was the last to close:
    # it deleted the -shm and -wal that connection still has open
    assert not Path(f"{path}-shm").exists() and not Path(f"{path}-wal").exists()
    conn = db.connect(path)
    second = rank._kept(conn)
    assert second is not None and second is not first
    assert _ours(conn, "rocket", False, 1000) == (_builtin(conn, '{text} : ("rocket")', 1000), False)
    conn.close()
    path.unlink()
    conn = db.connect(path)  # rebuilt
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    third = rank._kept(conn)
    assert third is not None and third not in (first, second)
    assert _ours(conn, "rocket", False, 1000) == (_builtin(conn, '{text} : ("rocket")', 1000), False)
    assert len(rank._KEPT) == 3 and first.db.in_transaction is False  # never closed


def test_past_its_connections_a_process_scores_with_the_builtin(tmp_path, monkeypatch, scored):
    monkeypatch.setattr(rank, "KEPT", 1)
    conns = []
    for n in range(2):
        home = _generated_home(tmp_path / f"home{n}", seed=n)
        conns.append(db.connect(tmp_path / f"index{n}.sqlite"))
        sync(conns[-1], all_adapters(), {"HOME": str(home)}, home)
    assert rank._kept(conns[0]) is not None
    assert rank._kept(conns[1]) is None
    budget = Budget()
    for conn in conns:
        got = rank.window_scores(conn, '{text} : ("rocket")', '"rocket"', "{text} : ", 50, budget.run, budget.check)
        assert got.scores == _builtin(conn, '{text} : ("rocket")', 50) and not got.estimated


@pytest.mark.parametrize("cap", [20, 137, 1000])
def test_one_phrase_counted_for_its_idf_gives_the_total_the_cap_count_would(generated, monkeypatch, scored, cap):
    monkeypatch.setattr(search_module, "RANK_WINDOW", 10)
    monkeypatch.setattr(search_module, "TOTAL_CAP", cap)
    monkeypatch.setattr(search_module, "COUNT_CAP", cap)
    monkeypatch.setattr(rank, "COUNT_CAP", cap)
    capped = []
    original = search_module._capped_count
    monkeypatch.setattr(search_module, "_capped_count", lambda *a: capped.append(a) or original(*a))
    for query, phrases in (("rocket", 1), ("stage", 1), ('"deploy the rocket"', 1), ("deploy rocket", 2)):
        for by_session in (False, True):
            start = len(capped)
            page = search(generated, query, limit=3, by_session=by_session)
            assert len(capped) - start == phrases - 1  # one phrase: its count for the IDF is the total's
            with monkeypatch.context() as m:
                m.setattr(rank, "_kept", lambda conn: None)
                start = len(capped)
                builtin = search(generated, query, limit=3, by_session=by_session)
                assert len(capped) - start == 1  # more hits than the window: counted
            assert (page.total, page.total_exact) == (builtin.total, builtin.total_exact), (query, cap)
