"""Paging a search sorted by rank past one window (issue 16, tester finding): the hits
are ranked in fixed blocks of ``RANK_WINDOW`` in index order (``agentlog.index.blocks``),
so paging through every page, flat or grouped by session, with or without a filter,
through the index, the command line, the Python API's cursor and MCP's
``next_cursor``, gives every hit (or session) exactly once, in the order a reference
built from plain SQL ``bm25()`` per block gives, under a total that does not change
with the offset."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

import agentlog
from agentlog.cli import main
from agentlog.index import db, rank
from agentlog.index import search as search_module
from agentlog.index.search import search

WINDOW = 7
"""The block size the tests rank in (``RANK_WINDOW``), so that a few dozen hits span blocks."""
CAP = 40
"""The hits counted at most (``TOTAL_CAP``): fewer than the word's, more than the user's prompts holding it."""
WORDS = ["rocket", "fuel", "pad", "orbit", "crew"]


def _home(home: Path) -> Path:
    """Nine sessions of 2 to 30 prompts and answers, half holding "rocket" (some twice,
    with other words: unequal scores; some equal texts: ties), some at the same
    second, one without times; every answer says "fuel" too."""
    rng = random.Random(16)
    project = home / ".claude/projects/-rockets"
    project.mkdir(parents=True, exist_ok=True)
    for s in range(9):
        rows = []
        for n in range(rng.randint(2, 30)):
            words = ["rocket"] * rng.choice((0, 0, 0, 1, 2)) + rng.choices(WORDS[1:], k=rng.randint(1, 6))
            rng.shuffle(words)
            text = "rocket" if n % 7 == 2 else " ".join(words)
            line: dict[str, Any] = {"sessionId": f"s{s}", "uuid": f"s{s}-{n}", "parentUuid": None, "cwd": "/work/r"}
            if s != 4:
                line["timestamp"] = f"2026-04-0{1 + s % 3}T09:{(n * 3 + s) % 20:02d}:00Z"
            if n % 2:
                message = {
                    "id": f"a{s}-{n}",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [{"type": "text", "text": f"fuel {text}"}],
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                }
                rows.append(json.dumps({**line, "type": "assistant", "message": message}))
            else:
                rows.append(json.dumps({**line, "type": "user", "message": {"role": "user", "content": text}}))
        (project / f"s{s}.jsonl").write_text("\n".join(rows) + "\n")
    return home


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return _home(tmp_path_factory.mktemp("paging") / "home")


@pytest.fixture(params=["builtin", "apsw"])
def blocks(request, monkeypatch):
    """Rank in blocks of :data:`WINDOW`, scored by the built-in ``bm25()`` or through
    ``apsw`` (``agentlog.index.rank``; its counts are exact here: the same scores)."""
    monkeypatch.setattr(search_module, "RANK_WINDOW", WINDOW)
    monkeypatch.setattr(search_module, "TOTAL_CAP", CAP)
    if request.param == "apsw":
        pytest.importorskip("apsw")
        monkeypatch.setattr(rank, "_KEPT", {})
        monkeypatch.setattr(rank, "SCORE_S", -1.0)  # counting always "took longer": apsw scores
    else:
        monkeypatch.setattr(rank, "_kept", lambda conn: None)


FILTERS = {"none": ("", ()), "role": ("AND m.role = ?", ("user",)), "agent": ("AND s.agent = ?", ("claude_code",))}
KW: dict[str, dict[str, str]] = {"none": {}, "role": {"role": "user"}, "agent": {"agent": "claude_code"}}


def _reference(conn: sqlite3.Connection, query: str, filtered: str, window: int = WINDOW) -> list[tuple[Any, ...]]:
    """Every hit of ``query`` in the rank order, by plain SQL: the hits passing the
    filter numbered newest rowid first, cut in blocks of ``window``, each ranked by
    ``bm25()``, then newest, session, message and part.  Rows: ``(block, session,
    message, part type, score, timestamp)``."""
    clause, params = FILTERS[filtered]
    rows = conn.execute(
        f"""SELECT block, key, id, type, score, ts FROM (
            SELECT (row_number() OVER (ORDER BY part DESC) - 1) / {window} AS block, * FROM (
                SELECT parts_fts.rowid AS part, bm25(parts_fts) AS score, m.timestamp AS ts,
                       m.session_key AS key, m.id AS id, p.idx AS idx, p.type AS type
                FROM parts_fts JOIN parts p ON p.rowid = parts_fts.rowid
                JOIN messages m ON m.rowid = p.message_rowid JOIN sessions s ON s.key = m.session_key
                WHERE parts_fts MATCH ? {clause}))
        ORDER BY block, score, ts IS NULL, ts DESC, key, id, idx""",
        (f"{{text}} : ({query})", *params),
    ).fetchall()
    return [tuple(r) for r in rows]


def _flat_reference(conn, query: str, filtered: str) -> list[tuple[Any, ...]]:
    return [(key, message, part, score) for _, key, message, part, score, _ in _reference(conn, query, filtered)]


def _sessions_reference(conn, query: str, filtered: str, wanted: int) -> tuple[list[tuple[str, str, int]], int, bool]:
    """The sessions a grouped page wanting ``wanted`` sessions finds: blocks walked from
    the first until ``wanted`` sessions are found or a block is not full (the hits end:
    the total is exact); the sessions new to a block ordered by their best score, their
    newest hit in that block (no time last), then their best hit.  Rows: ``(session,
    best hit's message, hits in the blocks walked)``; with the total and its exactness."""
    hits = _reference(conn, query, filtered)
    order: list[tuple[str, str]] = []
    seen: set[str] = set()
    block = 0
    while True:
        rows = [h for h in hits if h[0] == block]
        new: dict[str, list[Any]] = {}
        for _, key, message, _, score, ts in rows:  # in rank order: a session's first is its best
            if key in seen:
                continue
            group = new.setdefault(key, [score, None, message])
            if ts is not None and (group[1] is None or ts > group[1]):
                group[1] = ts
        firsts = sorted(new.items(), key=lambda kv: (kv[0], kv[1][2]))
        firsts.sort(key=lambda kv: (kv[1][1] is not None, kv[1][1] or ""), reverse=True)
        firsts.sort(key=lambda kv: kv[1][0])
        order += [(key, group[2]) for key, group in firsts]
        seen |= set(new)
        ended = len(rows) < WINDOW
        if ended or len(order) >= wanted:
            break
        block += 1
    counts = {key: sum(1 for h in hits if h[1] == key and h[0] <= block) for key, _ in order}
    return [(key, message, counts[key]) for key, message in order], len(order), ended


def _count(conn, query: str, filtered: str) -> int:
    return len(_reference(conn, query, filtered))


def test_the_home_spans_blocks(conn):
    hits = _reference(conn, "rocket", "none")
    assert len(hits) > 5 * WINDOW and len({h[1] for h in hits}) == 9  # every session holds the word
    assert len(hits) > CAP >= len(_reference(conn, "rocket", "role")) > 2 * WINDOW  # the user's prompts: under it
    assert len(hits) % WINDOW == 0 and len(_reference(conn, "rocket", "role")) % WINDOW  # a last block full, and not
    scores = [h[4] for h in hits]
    assert len(set(scores)) > 5 and len(set(scores)) < len(scores)  # unequal scores, and ties
    assert {h[0] for h in _reference(conn, '"rocket" "fuel"', "none")} == set(range(7))  # two phrases: 44 hits


@pytest.mark.parametrize("filtered", ["none", "role", "agent"])
@pytest.mark.parametrize("query", ["rocket", '"rocket" "fuel"'])
def test_every_hit_is_on_exactly_one_page(conn, blocks, filtered, query):
    expected = _flat_reference(conn, query, filtered)
    n = len(expected)
    total = (n, True) if n <= CAP else (CAP, False)
    note = f"ranked within each {WINDOW} newest hits of {n if n <= CAP else f'{CAP}+'}"
    for limit in (1, 3, WINDOW, 10, 2 * WINDOW + 1, 200):
        got: list[tuple[Any, ...]] = []
        offset: int | None = 0
        while offset is not None:
            page = search(conn, query, limit=limit, offset=offset, **KW[filtered])
            assert len(page.hits) <= limit
            assert (page.total, page.total_exact, page.note) == (*total, note), (limit, offset)
            got += [(h.session_key, h.message_id, h.part_type, h.rank) for h in page.hits]
            offset = page.next_offset
        assert got == expected, (query, filtered, limit)
    for offset in (n - 1, n, n + 5, 10 * n):  # past the last block: the same total
        past = search(conn, query, limit=4, offset=offset, **KW[filtered])
        assert [(h.session_key, h.message_id, h.part_type, h.rank) for h in past.hits] == expected[offset : offset + 4]
        assert (past.total, past.total_exact, past.note) == (*total, note)


@pytest.mark.parametrize("filtered", ["none", "role", "agent"])
def test_every_session_is_on_exactly_one_page(conn, blocks, filtered):
    everyone = {h[1] for h in _reference(conn, "rocket", filtered)}
    for limit in (1, 2, 4, 9, 30):
        got: list[str] = []
        offset: int | None = 0
        while offset is not None:
            page = search(conn, "rocket", limit=limit, offset=offset, by_session=True, **KW[filtered])
            sessions, total, exact = _sessions_reference(conn, "rocket", filtered, offset + limit)
            shown = [(h.session_key, h.message_id, h.session_hits) for h in page.hits]
            assert shown == sessions[offset : offset + limit], (filtered, limit, offset)
            assert (page.total, page.total_exact) == (total, exact)
            got += [h.session_key for h in page.hits]
            offset = page.next_offset
        assert len(got) == len(set(got)) and set(got) == everyone, (filtered, limit)
        assert got == [key for key, _, _ in _sessions_reference(conn, "rocket", filtered, 99)[0]]


def test_fewer_hits_than_a_window_are_ranked_together(conn, monkeypatch):
    monkeypatch.setattr(search_module, "RANK_WINDOW", 1000)
    hits = _reference(conn, "rocket", "none", window=1000)  # one block: the plain rank order
    assert {h[0] for h in hits} == {0} and hits != _reference(conn, "rocket", "none")
    for offset, limit in ((0, len(hits)), (3, 10)):
        page = search(conn, "rocket", limit=limit, offset=offset)
        assert [(h.session_key, h.message_id) for h in page.hits] == [(h[1], h[2]) for h in hits][offset : offset + limit]
        assert (page.total, page.total_exact, page.note) == (len(hits), True, None)


def _cli(index: Path, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["--index", str(index), "search", "--no-sync", "--json", *args])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_the_command_line_pages_every_hit_and_session(index, blocks):
    conn = db.connect(index, readonly=True)
    for filtered, flags in (("none", []), ("agent", ["--agent", "claude_code"])):
        expected = [(key, message) for key, message, _, _ in _flat_reference(conn, "rocket", filtered)]
        got, totals, offset = [], set(), 0
        while offset is not None:
            data = _cli(index, "rocket", "--limit", "4", "--offset", str(offset), *flags)
            got += [(h["session_key"], h["message_id"]) for h in data["hits"]]
            totals.add((data["total"], data["total_exact"], data["note"]))
            offset = data["next_offset"]
        assert got == expected
        assert totals == {(CAP, False, f"ranked within each {WINDOW} newest hits of {CAP}+")}
        sessions, offset = [], 0
        while offset is not None:
            data = _cli(index, "rocket", "--sessions", "--limit", "2", "--offset", str(offset), *flags)
            sessions += [h["session_key"] for h in data["hits"]]
            offset = data["next_offset"]
        assert sessions == [key for key, _, _ in _sessions_reference(conn, "rocket", filtered, 99)[0]]
    _, total, _ = _sessions_reference(conn, "rocket", "none", 2)
    conn.close()
    text = CliRunner().invoke(main, ["--index", str(index), "search", "--no-sync", "--sessions", "-n", "2", "rocket"])
    assert f"1–2 of {total}+ sessions · next page: --offset 2" in text.stderr


def test_the_api_cursor_and_mcp_next_cursor_page_every_hit_and_session(index, home, blocks, monkeypatch):
    conn = db.connect(index, readonly=True)
    expected = [(key, message) for key, message, _, _ in _flat_reference(conn, "rocket", "none")]
    everyone = [key for key, _, _ in _sessions_reference(conn, "rocket", "none", 99)[0]]
    conn.close()
    monkeypatch.setenv("HOME", str(home))
    with agentlog.open(index, sync=False) as archive:
        got, cursor = [], 0
        while cursor is not None:
            page = archive.search("rocket", limit=6, cursor=cursor)
            got += [(h.session_key, h.message_id) for h in page.hits]
            assert (page.total, page.total_exact) == (CAP, False)
            cursor = page.next_offset
        assert got == expected
        sessions, cursor = [], 0
        while cursor is not None:
            page = archive.search("rocket", limit=2, cursor=cursor, by_session=True)
            sessions += [h.session_key for h in page.hits]
            cursor = page.next_offset
        assert sessions == everyone

    pytest.importorskip("mcp")
    from mcp.client import Client

    from agentlog.mcp.server import Index, build_server

    server = build_server(Index(lambda: db.connect(index, readonly=True), None))

    async def call() -> list[str]:
        found: list[str] = []
        cursor: int | None = 0
        async with Client(server) as mcp:
            while cursor is not None:
                args = {"query": "rocket", "limit": 2, "cursor": cursor, "include_active": True}
                result = await mcp.call_tool("search_sessions", args)
                assert result.structured_content is not None
                found += [r["session_id"] for r in result.structured_content["results"]]
                cursor = result.structured_content["next_cursor"]
        return found

    assert anyio.run(call) == everyone


@pytest.mark.parametrize(
    "walk, ratio, walked, answered",
    [(64, 8, 3, 3), (64, 10**6, 27, 24), (1, 10**6, 27, 17), (0, 10**6, 27, 16), (64, 0, 0, 0)],
)
def test_the_newest_time_of_a_sessions_hits_is_that_of_its_newest_hit(
    conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch, walk: int, ratio: int, walked: int, answered: int
) -> None:
    """:func:`agentlog.index.search.newest_times` (the time that orders sessions whose best
    hits tie in a grouped block) gives each group's newest hit time, ``None`` when none has
    one, whether read from the session's newest messages or looked up hit by hit: every
    session's hits, its newest-written half and its oldest hit alone, walked up to many or
    few parts (a walk stopping before a hit falls back to the look-up): ``walked`` groups
    walked (the default: the three with hits close enough), ``answered`` by their walk
    (all but s4's, whose messages have no time, when walked whole)."""
    rows = conn.execute(
        """SELECT parts_fts.rowid, m.session_key, m.timestamp FROM parts_fts JOIN parts p ON p.rowid = parts_fts.rowid
        JOIN messages m ON m.rowid = p.message_rowid WHERE parts_fts MATCH '{text} : (rocket)' ORDER BY 1 DESC"""
    ).fetchall()
    hits: dict[tuple[int, str], list[int]] = {}
    times = {rowid: ts for rowid, _, ts in rows}
    for rowid, key, _ in rows:
        hits.setdefault((0, key), []).append(rowid)
    for key, rowids in list((key, r) for (_, key), r in hits.items()):
        hits[(1, key)] = rowids[: max(1, len(rowids) // 2)]
        hits[(2, key)] = rowids[-1:]
    expected = {held: max((times[r] for r in rowids if times[r] is not None), default=None) for held, rowids in hits.items()}
    assert expected[(0, "claude_code:s4")] is None and len({ts for ts in expected.values() if ts}) > 9
    monkeypatch.setattr(search_module, "NEWEST_WALK", walk)
    monkeypatch.setattr(search_module, "NEWEST_WALK_RATIO", ratio)
    asked: list[tuple[str, bool]] = []  # each statement run and whether it found a row

    def run(conn: sqlite3.Connection, sql: str, params: tuple[object, ...]) -> list[tuple[Any, ...]]:
        found = conn.execute(sql, params).fetchall()
        asked.append((sql, bool(found)))
        return found

    assert search_module.newest_times(conn, run, hits) == expected
    walks = [found for sql, found in asked if sql == search_module._NEWEST_WALK]
    assert len(asked) == len(walks) + 1  # the groups no walk answered (s4's at least), looked up in one statement
    assert (len(walks), sum(walks), len(hits)) == (walked, answered, 27)
