"""A search's total (issue 16): exact up to a cap, a lower bound past it, decided in
one place (``agentlog.index.search._capped_count``) and shown the same way by every
surface: ``search --json`` (``total_exact``), the command line's "3+ hits", the
Python API's page, the MCP ``search_sessions`` tool and the viewer."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

import agentlog
from agentlog.adapters import all_adapters
from agentlog.cli import main
from agentlog.index import db
from agentlog.index import search as search_module
from agentlog.index.search import search
from agentlog.index.sync import sync
from agentlog.web import pages
from agentlog.web.app import create_app
from search_home import write_home

#: The five prompts holding the word "claude", the newest two last (index order).
CLAUDE = ["m_claude_md", "m_claude_word", "m_dot_claude", "m_model", "m_claude_beta"]


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return write_home(tmp_path_factory.mktemp("total") / "home")


@pytest.fixture
def capped(monkeypatch):
    """Rank the newest 2 hits, count at most 3."""
    monkeypatch.setattr(search_module, "RANK_WINDOW", 2)
    monkeypatch.setattr(search_module, "TOTAL_CAP", 3)


def test_a_total_past_the_cap_is_a_lower_bound(conn, capped):
    page = search(conn, "claude", limit=2)
    assert [h.message_id for h in page.hits] == ["m_claude_beta", "m_model"]  # bm25 ties: newest first
    assert (page.total, page.total_exact, page.total_text) == (3, False, "3+")
    assert page.note == "ranked within each 2 newest hits of 3+"
    assert page.next_offset == 2
    second = search(conn, "claude", limit=2, offset=2)  # the next block of 2: never the first page's hits
    assert [h.message_id for h in second.hits] == ["m_claude_word", "m_dot_claude"]  # the shorter text first
    assert (second.total, second.total_exact, second.next_offset) == (3, False, 4)  # the same total
    assert second.note == "ranked within each 2 newest hits of 3+"
    last = search(conn, "claude", limit=2, offset=4)  # the last block: one hit
    assert ([h.message_id for h in last.hits], last.total, last.total_exact) == (["m_claude_md"], 3, False)
    assert (last.note, last.next_offset) == ("ranked within each 2 newest hits of 3+", None)


def test_a_total_at_the_cap_or_with_every_hit_ranked_is_exact(conn, monkeypatch):
    monkeypatch.setattr(search_module, "RANK_WINDOW", 2)
    monkeypatch.setattr(search_module, "TOTAL_CAP", 5)  # five hits, cap five: counted whole
    page = search(conn, "claude", limit=2)
    assert (page.total, page.total_exact, page.total_text) == (5, True, "5")
    assert page.note == "ranked within each 2 newest hits of 5"
    monkeypatch.setattr(search_module, "TOTAL_CAP", 4)
    assert (search(conn, "claude", limit=2).total, search(conn, "claude", limit=2).total_exact) == (4, False)
    monkeypatch.setattr(search_module, "RANK_WINDOW", 1000)
    monkeypatch.setattr(search_module, "TOTAL_CAP", 1)  # every hit ranked: the cap is never needed
    whole = search(conn, "claude", limit=2)
    assert (whole.total, whole.total_exact, whole.note) == (5, True, None)


def test_the_cap_counts_through_the_filters(conn, capped):
    alpha = search(conn, "claude", limit=1, project="alpha")  # four hits in session alpha
    assert (alpha.total, alpha.total_exact) == (3, False)
    beta = search(conn, "claude", limit=1, project="beta")  # one: under the window
    assert ([h.message_id for h in beta.hits], beta.total, beta.total_exact) == (["m_claude_beta"], 1, True)


def test_grouped_sessions_past_the_window_are_a_lower_bound(conn, capped):
    grouped = search(conn, "claude", limit=1, by_session=True)  # the newest 2 hits: one in each session
    assert [(h.session_key, h.message_id, h.session_hits) for h in grouped.hits] == [
        ("claude_code:beta", "m_claude_beta", 1)
    ]
    assert (grouped.total, grouped.total_exact, grouped.total_text, grouped.next_offset) == (2, False, "2+", 1)
    assert grouped.note == "ranked within each 2 newest hits of 3+"


def test_sorted_by_time_every_hit_is_counted(conn, capped):
    newest = search(conn, "claude", limit=2, sort="newest")
    assert [h.message_id for h in newest.hits] == ["m_claude_beta", "m_model"]
    assert (newest.total, newest.total_exact, newest.note) == (5, True, None)


def test_every_surface_shows_the_lower_bound(index, home, capped, monkeypatch):
    result = CliRunner().invoke(main, ["--index", str(index), "search", "--no-sync", "--limit", "2", "--json", "claude"])
    data = json.loads(result.stdout)
    assert (result.exit_code, data["total"], data["total_exact"], data["next_offset"]) == (0, 3, False, 2)
    assert [h["message_id"] for h in data["hits"]] == ["m_claude_beta", "m_model"]
    text = CliRunner().invoke(main, ["--index", str(index), "search", "--no-sync", "--limit", "2", "claude"])
    assert "1–2 of 3+ hits · next page: --offset 2" in text.stderr
    assert "ranked within each 2 newest hits of 3+" in text.stderr

    monkeypatch.setenv("HOME", str(home))
    with agentlog.open(index, sync=False) as archive:
        page = archive.search("claude", limit=2)
    assert (page.total, page.total_exact, page.next_offset) == (3, False, 2)

    monkeypatch.setattr(pages, "HITS", 2)
    html = create_app(index).test_client().get("/search", query_string={"q": "claude"}).get_data(as_text=True)
    assert re.search(r'class="count-line">1–2 of 3\+ hits for', html)
    assert "<span>page 1 of 2+</span>" in html and ">next →</a>" in html

    pytest.importorskip("mcp")
    from mcp.client import Client

    from agentlog.mcp.server import Index, build_server

    server = build_server(Index(lambda: db.connect(index, readonly=True), None))

    async def call() -> dict:
        async with Client(server) as mcp:
            found = await mcp.call_tool("search_sessions", {"query": "claude", "limit": 1, "include_active": True})
            assert found.structured_content is not None
            return found.structured_content

    found = anyio.run(call)
    assert [r["session_id"] for r in found["results"]] == ["claude_code:beta"]
    assert (found["total"], found["total_exact"], found["next_cursor"]) == (2, False, 1)


def _tied_home(home: Path) -> Path:
    """Three sessions of prompts drawn from four texts (equal texts: equal bm25
    scores), some at the same second, so every tie-break of the rank order is used."""
    texts = ["deploy the rocket", "deploy the rocket now", "rocket", "deploy rocket rocket fuel"]
    project = home / ".claude/projects/-work"
    project.mkdir(parents=True, exist_ok=True)
    for s, session in enumerate(("one", "two", "three")):
        rows = []
        for n in range(12):
            stamp = f"2026-03-01T10:{(n * 7 + s * 3) % 10:02d}:00Z"  # repeats across and within sessions
            message = {"role": "user", "content": texts[(n + s) % len(texts)]}
            line = {"type": "user", "sessionId": session, "uuid": f"{session}-{n}", "parentUuid": None}
            rows.append(json.dumps({**line, "timestamp": stamp, "cwd": "/work/p", "message": message}))
        (project / f"{session}.jsonl").write_text("\n".join(rows) + "\n")
    return home


def _oracle(conn, match: str, window: int, offset: int, limit: int) -> list[tuple[str, str]]:
    """The page the rank order defines: the hits in index order (newest first) cut in
    blocks of ``window``, each block sorted by bm25, then newest first, then session,
    message, part."""
    rows = conn.execute(
        f"""SELECT m.session_key, m.id FROM (
            SELECT (row_number() OVER (ORDER BY part DESC) - 1) / {window} AS block, * FROM (
                SELECT parts_fts.rowid AS part, bm25(parts_fts) AS score, m.timestamp AS ts,
                       m.session_key AS key, m.id AS id, p.idx AS idx
                FROM parts_fts JOIN parts p ON p.rowid = parts_fts.rowid JOIN messages m ON m.rowid = p.message_rowid
                WHERE parts_fts MATCH ?)) h
        JOIN messages m ON m.session_key = h.key AND m.id = h.id
        ORDER BY block, score, ts IS NULL, ts DESC, key, h.id, idx LIMIT ? OFFSET ?""",
        (f"{{text}} : ({match})", limit, offset),
    )
    return [tuple(r) for r in rows]


@pytest.mark.parametrize("window", [1, 5, 16, 1000])
def test_the_index_only_ranking_is_the_joined_ranking(tmp_path, monkeypatch, window):
    home = _tied_home(tmp_path / "home")
    conn = db.connect(tmp_path / "index.sqlite")
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    monkeypatch.setattr(search_module, "RANK_WINDOW", window)
    monkeypatch.setattr(search_module, "TOTAL_CAP", 20)
    for query, hits in (("rocket", 36), ("deploy", 27), ("fuel", 9), ('"the rocket"', 18)):
        for offset, limit in ((0, 1), (0, 4), (3, 5), (8, 8), (30, 10)):
            page = search(conn, query, limit=limit, offset=offset)
            joined = search(conn, query, limit=limit, offset=offset, agent="claude_code")  # the joined query
            got = [(h.session_key, h.message_id) for h in page.hits]
            assert got == [(h.session_key, h.message_id) for h in joined.hits]
            assert [h.rank for h in page.hits] == [h.rank for h in joined.hits]
            assert got == _oracle(conn, query, window, offset, limit)
            assert (page.total, page.total_exact, page.note) == (joined.total, joined.total_exact, joined.note)
            expected = (hits, True) if hits <= max(20, window) else (max(20, window), False)
            assert (page.total, page.total_exact) == expected
            grouped = search(conn, query, limit=limit, offset=offset, by_session=True)
            grouped_joined = search(conn, query, limit=limit, offset=offset, by_session=True, agent="claude_code")
            shown = [(h.session_key, h.message_id, h.session_hits, h.rank) for h in grouped.hits]
            assert shown == [(h.session_key, h.message_id, h.session_hits, h.rank) for h in grouped_joined.hits]
            assert (grouped.total, grouped.total_exact, grouped.note) == (
                grouped_joined.total,
                grouped_joined.total_exact,
                grouped_joined.note,
            )


def test_sessions_written_since_are_those_the_listing_keeps(index):
    from datetime import UTC, datetime

    from agentlog.query import SessionFilter, Span
    from agentlog.service.search import written_since
    from agentlog.service.sessions import list_sessions

    conn = db.connect(index)
    keys = [k for (k,) in conn.execute("SELECT key FROM sessions")]
    for since in ("2026-03-01T10:00:00", "2026-03-01T10:17:00", "2026-03-01T10:30:00"):
        moment = datetime.fromisoformat(since).replace(tzinfo=UTC)
        listed = list_sessions(conn, SessionFilter(span=Span(since=moment), include_children=True, include_exec=True))
        assert written_since(conn, keys, moment) == {s.key for s in listed.sessions}
    assert written_since(conn, keys, datetime(2026, 3, 1, 10, 17, tzinfo=UTC)) == {"claude_code:beta", "claude_code:gamma"}


def test_a_deep_page_ranks_more_hits_than_sqlite_binds(tmp_path, monkeypatch):
    home = _tied_home(tmp_path / "home")
    conn = db.connect(tmp_path / "index.sqlite")
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 8)  # fewer than the 36 hits ranked (the default: 32,766)
    for by_session in (False, True):
        page = search(conn, "rocket", limit=3, offset=1, by_session=by_session)
        joined = search(conn, "rocket", limit=3, offset=1, by_session=by_session, agent="claude_code")
        assert [(h.message_id, h.session_hits) for h in page.hits] == [(h.message_id, h.session_hits) for h in joined.hits]
        assert (page.total, page.total_exact, page.note) == ((3, True, None) if by_session else (36, True, None))
