"""Searches sorted newest or oldest first by walking messages in time order
(``agentlog.index.timeline``, issue 16) give the page the all-hits sort gives:
ties of time (broken by bm25, then session, message and part), messages with no
time (last), several batches, pages, filters; its total is counted up to the cap."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agentlog.adapters import all_adapters
from agentlog.index import db, timeline
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
                monkeypatch.setattr(timeline, "TIME_SCAN_FROM", 10**9)  # few: every hit sorted
                few = search(conn, query, **kwargs)  # type: ignore[arg-type]
                monkeypatch.setattr(timeline, "TIME_SCAN_FROM", 1)  # many: the walk
                walked = search(conn, query, **kwargs)  # type: ignore[arg-type]
                assert _shown(walked) == _shown(whole), (query, filters, offset, limit)
                assert _shown(few) == _shown(whole), (query, filters, offset, limit)
                assert (walked.total, walked.total_exact, walked.note) == (whole.total, True, whole.note)
                assert (few.total, few.total_exact, few.note) == (whole.total, True, whole.note)
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
                monkeypatch.setattr(timeline, "TIME_SCAN_FROM", 10**9)  # few: every hit's session and time
                few = search(conn, query, **kwargs)  # type: ignore[arg-type]
                assert _grouped(few) == _grouped(whole), (query, filters, offset, limit)
                assert (few.total, few.total_exact) == (whole.total, True)
                monkeypatch.setattr(timeline, "TIME_SCAN_FROM", 1)  # the walk
                walked = search(conn, query, **kwargs)  # type: ignore[arg-type]
                assert _grouped(walked) == _grouped(whole), (query, filters, offset, limit)
                if walked.total_exact:  # sorted whole: the walk gave up
                    assert walked.total == whole.total
                else:  # the sessions walked: a lower bound
                    assert offset + len(walked.hits) <= walked.total <= whole.total
    assert sum(w[0] is not None for w in walks) > len(walks) / 3
    assert any(w[0] is None for w in walks)


def test_the_walk_counts_the_total_up_to_the_cap(timed, monkeypatch):
    conn = db.connect(timed, readonly=True)
    monkeypatch.setattr(timeline, "TIME_SCAN_FROM", 1)
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
    assert timeline.by_time(conn, run, scores, match, [], [], False, 40, "newest", 0.5) is None
    monkeypatch.setattr(timeline, "WALK_LIMIT", 10**6)
    walked = timeline.by_time(conn, run, scores, match, [], [], False, 40, "newest", 0.5)
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
                    for scan_from in (1, 10**9):  # walked, and every hit sorted
                        monkeypatch.setattr(timeline, "TIME_SCAN_FROM", scan_from)
                        page = search(conn, word, **kwargs)  # type: ignore[arg-type]
                        assert _grouped(page) == _grouped(whole), (word, sort, offset, by_session, scan_from)
                        assert page.total == whole.total or not page.total_exact


def test_the_migration_adds_the_time_index(tmp_path):
    conn = db.connect(tmp_path / "index.sqlite")
    assert conn.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)
    assert conn.execute("SELECT sql FROM sqlite_master WHERE name = 'messages_timestamp'").fetchone() == (
        "CREATE INDEX messages_timestamp ON messages(timestamp)",
    )
