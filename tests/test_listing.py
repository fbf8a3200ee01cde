"""Session listings read the page's rows and totals only: equal to the listing that
sorted whole rows and summed usage rows (the SQL reference below, as it was before
``session_usage``), on the demo and on a home of every agent's fixtures plus
generated sessions that tie on every sort column, for every filter and sort the
CLI, viewer, API and MCP offer, and with stale roll-ups on a read-only connection."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from datetime import UTC, datetime
from itertools import product
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agentlog.adapters import all_adapters
from agentlog.demo import demo_home
from agentlog.index import db, queries
from agentlog.index.schema import MIGRATIONS
from agentlog.index.store import session_from_row
from agentlog.index.sync import sync
from agentlog.index.usage import usage_from
from agentlog.model import Session, Usage
from agentlog.query import SessionFilter, Span
from agentlog.service import sessions as service
from agentlog.service.status import refine_sessions
from homes import LAYOUTS

# -- the reference: whole rows sorted, totals summed from usage rows ----------------

_TOTAL = "u.input_tokens + u.cache_read_tokens + u.cache_write_5m_tokens + u.cache_write_1h_tokens + u.output_tokens"
_SORTS = {
    **queries.SESSION_SORTS,
    "tokens": f"""(SELECT COALESCE(SUM({_TOTAL}), 0) FROM messages m JOIN usage u ON u.message_rowid = m.rowid
                  WHERE m.session_key = s.key AND m.replayed = 0)""",
}
_SUM = """
    COALESCE(SUM(u.input_tokens), 0), COALESCE(SUM(u.cache_read_tokens), 0),
    COALESCE(SUM(u.cache_write_5m_tokens), 0), COALESCE(SUM(u.cache_write_1h_tokens), 0),
    COALESCE(SUM(u.output_tokens), 0), COALESCE(SUM(u.reasoning_tokens), 0),
    COALESCE(SUM(u.web_search_requests), 0), SUM(u.cost_usd),
    CASE WHEN COUNT(DISTINCT u.cost_source) = 1 THEN MIN(u.cost_source) END,
    NULL
"""


def _reference_headers(conn: sqlite3.Connection, sql: str, params: list[Any]) -> list[Session]:
    conn.row_factory = sqlite3.Row
    try:
        rows = conn.execute(sql, params).fetchall()
    finally:
        conn.row_factory = None
    totals: dict[str, Usage] = {}
    keys = [r["key"] for r in rows]
    for i in range(0, len(keys), 500):
        chunk = keys[i : i + 500]
        for key, *values in conn.execute(
            f"""SELECT m.session_key, {_SUM} FROM messages m JOIN usage u ON u.message_rowid = m.rowid
                WHERE m.replayed = 0 AND m.session_key IN ({", ".join("?" * len(chunk))})
                GROUP BY m.session_key""",
            chunk,
        ):
            totals[key] = usage_from(values)
    out = []
    for row in rows:
        session = session_from_row(row)
        session.message_count = row["message_count"]
        session.usage = totals.get(session.key, Usage())
        out.append(session)
    return out


def _reference_filters(conn, where, include_empty=False) -> tuple[list[str], list[Any]]:
    """The filter's conditions, duplicates left out through the join to ``sources``."""
    clauses, params = queries._session_filters(conn, where, include_empty)
    return ["src.duplicate_of IS NULL" if c == queries.NOT_DUPLICATE else c for c in clauses], params


def reference_list(conn, where, limit=None, include_empty=False) -> list[Session]:
    clauses, params = _reference_filters(conn, where, include_empty)
    return _reference_headers(
        conn,
        f"""SELECT s.*, {queries.ARCHIVED} FROM sessions s JOIN sources src ON src.id = s.source_id
            WHERE {" AND ".join(clauses)} ORDER BY COALESCE(s.started_at, '') DESC, s.key LIMIT ?""",
        [*params, -1 if limit is None else limit],
    )


def reference_page(conn, where, sort, descending, offset, limit, first_by) -> tuple[list[Session], int]:
    clauses, params = _reference_filters(conn, where)
    condition = " AND ".join(clauses)
    order = f"{_SORTS[sort]} {'DESC' if descending else 'ASC'}, s.key"
    order = ", ".join([*(_SORTS[k] for k in first_by), order])
    rows = _reference_headers(
        conn,
        f"""SELECT s.*, {queries.ARCHIVED} FROM sessions s JOIN sources src ON src.id = s.source_id
            WHERE {condition} ORDER BY {order} LIMIT ? OFFSET ?""",
        [*params, limit, offset],
    )
    (total,) = conn.execute(
        f"SELECT COUNT(*) FROM sessions s JOIN sources src ON src.id = s.source_id WHERE {condition}", params
    ).fetchone()
    return rows, total


def _json(sessions: list[Session]) -> list[Any]:
    return [msgspec.to_builtins(s) for s in sessions]


# -- the homes ------------------------------------------------------------------------

TIE = "2026-11-20T10:00:00.000Z"


def _claude(path: Path, sid: str, stamps: list[str], costs: list[float | None], cwd: str) -> None:
    """A Claude Code session ``sid``: a prompt, then one reply per stamp (the same
    usage each), with a recorded cost where ``costs`` gives one."""
    lines = [
        {
            "type": "user",
            "sessionId": sid,
            "uuid": f"{sid}-u",
            "cwd": cwd,
            "timestamp": stamps[0],
            "message": {"role": "user", "content": f"tie {sid}"},
        }
    ]
    for n, (stamp, cost) in enumerate(zip(stamps, costs, strict=True)):
        usage = {"input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 20}
        line: dict[str, Any] = {
            "type": "assistant",
            "sessionId": sid,
            "uuid": f"{sid}-a{n}",
            "cwd": cwd,
            "timestamp": stamp,
            "message": {"id": f"{sid}-m{n}", "role": "assistant", "model": "claude-sonnet-4-5", "usage": usage},
        }
        if cost is not None:
            line["costUSD"] = cost
        lines.append(line)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def tie_home(home: Path) -> Path:
    """Every agent's fixtures, and Claude sessions that tie on start, length,
    messages, tokens, model, folder and agent (keys alone tell them apart), some with
    costs whose float sum depends on its order, a copy of one (a duplicate source),
    an empty one and one whose file is gone (archived)."""
    for layout in LAYOUTS.values():
        layout(home)
    projects = home / ".claude/projects"
    for n in range(14):
        costs: list[float | None] = [0.1, 0.2, 0.3] if n % 3 == 0 else [None, 1e-9, 0.7] if n % 3 == 1 else [None] * 3
        stamps = [TIE, TIE, TIE] if n // 2 % 2 else [TIE, "2026-11-20T10:05:00.000Z", "2026-11-20T10:07:00.000Z"]
        _claude(projects / f"-tmp-tie{n % 2}" / f"tie{n:02}.jsonl", f"tie{n:02}", stamps, costs, f"/tmp/tie{n % 2}")
    (projects / "-tmp-copy").mkdir()
    shutil.copy(projects / "-tmp-tie0/tie00.jsonl", projects / "-tmp-copy/tie00.jsonl")
    (projects / "-tmp-tie0/empty.jsonl").write_text("")
    _claude(projects / "-tmp-gone/gone.jsonl", "gone", [TIE], [0.25], "/tmp/gone")
    return home


def _index(path: Path, home: Path) -> sqlite3.Connection:
    conn = db.connect(path)
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    return conn


@pytest.fixture(scope="module")
def tie_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("ties")
    home = tie_home(root / "home")
    conn = _index(root / "index.sqlite", home)
    os.remove(home / ".claude/projects/-tmp-gone/gone.jsonl")
    sync(conn, all_adapters(), {"HOME": str(home)}, home)  # gone: archived, still listed
    return root / "index.sqlite", conn


@pytest.fixture(scope="module")
def demo_conn(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo")
    return root / "index.sqlite", _index(root / "index.sqlite", demo_home())


def test_the_tie_home_ties_and_holds_every_kind_of_session(tie_index):
    _, conn = tie_index
    ties = queries.list_sessions(conn, SessionFilter(project="/tmp/tie"))
    assert len(ties) == 14
    assert len({(s.started_at, s.usage.total_tokens, s.message_count, tuple(s.models)) for s in ties}) == 1
    assert len({(s.ended_at, s.cwd) for s in ties}) == 4  # two lengths, two folders
    assert conn.execute("SELECT COUNT(*) FROM sources WHERE duplicate_of IS NOT NULL").fetchone()[0] >= 1
    assert conn.execute("SELECT COUNT(*) FROM sources WHERE archived_at IS NOT NULL").fetchone()[0] == 1
    kinds = {k for (k,) in conn.execute("SELECT DISTINCT kind FROM sessions")}
    assert {"main", "subagent", "exec"} <= kinds
    assert conn.execute("SELECT COUNT(*) FROM sessions WHERE parent_key IS NOT NULL").fetchone()[0] > 0
    assert conn.execute("SELECT COUNT(DISTINCT cost_source) FROM usage").fetchone()[0] >= 2
    context = conn.execute("SELECT COUNT(*) FROM messages WHERE flags LIKE '%usage_context_inclusive%'")
    assert context.fetchone()[0] > 0  # counted in a header, not in a usage report


def _filters(conn: sqlite3.Connection) -> list[SessionFilter]:
    """Every filter field alone, and a few together, with values the index holds."""
    agents = [a for (a,) in conn.execute("SELECT DISTINCT agent FROM sessions ORDER BY agent")]
    statuses = [s for (s,) in conn.execute("SELECT DISTINCT status FROM sessions WHERE status IS NOT NULL")]
    stamps = sorted(s for (s,) in conn.execute("SELECT started_at FROM sessions WHERE started_at IS NOT NULL"))
    middle = datetime.fromisoformat(stamps[len(stamps) // 2]).astimezone(UTC)
    out = [
        SessionFilter(),
        SessionFilter(include_children=True),
        SessionFilter(include_exec=True),
        SessionFilter(has_children=True),
        SessionFilter(has_children=True, include_children=True),
        SessionFilter(project="tie"),
        SessionFilter(project="TMP", include_children=True),
        SessionFilter(text="tie0"),
        SessionFilter(text="a"),
        SessionFilter(span=Span(since=middle)),
        SessionFilter(span=Span(until=middle)),
        SessionFilter(span=Span(since=middle, until=middle), include_children=True),
        SessionFilter(agent="claude_code", project="tie", span=Span(until=middle)),
        SessionFilter(agent="nobody"),
    ]
    out += [SessionFilter(agent=a, include_children=True) for a in agents]
    out += [SessionFilter(agent=a) for a in agents[:6]]
    out += [SessionFilter(status=s, include_children=True) for s in statuses]
    return out


PAGES = [(0, 50), (0, 3), (2, 5), (7, 1), (0, 10_000), (10_000, 20)]
FIRST_BY = [(), ("project",), ("agent",), ("agent", "project")]


def _equal_everywhere(conn: sqlite3.Connection) -> int:
    """Every listing equal to the reference; how many were compared."""
    compared = 0
    for where in _filters(conn):
        for limit in (None, 1, 4):
            for include_empty in (False, True):
                got = queries.list_sessions(conn, where, limit=limit, include_empty=include_empty)
                assert _json(got) == _json(reference_list(conn, where, limit, include_empty)), (where, limit)
                compared += 1
    for where, sort, descending, first_by in product(
        _filters(conn)[:14], queries.SESSION_SORTS, (True, False), FIRST_BY
    ):
        for offset, limit in PAGES if (sort, first_by) == ("started", ()) else PAGES[:3]:
            got, total = queries.page_sessions(conn, where, sort, descending, offset, limit, first_by)
            want, want_total = reference_page(conn, where, sort, descending, offset, limit, first_by)
            assert (_json(got), total) == (_json(want), want_total), (where, sort, descending, first_by, offset)
            compared += 1
    return compared


def test_listings_equal_the_reference_on_ties_and_every_filter_and_sort(tie_index):
    _, conn = tie_index
    assert _equal_everywhere(conn) > 1_000
    keys = [k for (k,) in conn.execute("SELECT key FROM sessions ORDER BY key")]
    (got,) = [queries.list_sessions_by_keys(conn, [k]) for k in keys[:1]]
    want = reference_list(conn, queries.EVERY_SESSION, include_empty=True)
    assert _json([msgspec.structs.replace(got[0], sources=[])]) == _json([s for s in want if s.key == keys[0]])


def test_listings_equal_the_reference_on_the_demo(demo_conn):
    _, conn = demo_conn
    assert len(queries.list_sessions(conn)) > 5
    assert _equal_everywhere(conn) > 500


def test_stale_totals_on_a_read_only_connection_equal_the_reference(tie_index, tmp_path):
    """An index an older agentlog synced (no roll-up states), read without writing:
    the page's totals and the tokens sort are summed from the usage rows."""
    path, conn = tie_index
    copy = tmp_path / "stale.sqlite"
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copy(path, copy)
    writer = sqlite3.connect(copy, isolation_level=None)
    writer.execute("DELETE FROM usage_rollup_state WHERE rowid % 2 = 0")
    (emptied,) = writer.execute(  # a stale session whose calls are gone since its totals were stored
        """SELECT session_key FROM session_usage WHERE session_key NOT IN (SELECT session_key FROM usage_rollup_state)
           ORDER BY session_key LIMIT 1"""
    ).fetchone()
    writer.execute("DELETE FROM usage WHERE message_rowid IN (SELECT rowid FROM messages WHERE session_key = ?)", (emptied,))
    writer.execute(  # outdated: what a stale session's stored totals may say
        """UPDATE session_usage SET total_tokens = total_tokens + 1000, input_tokens = 0
           WHERE session_key NOT IN (SELECT session_key FROM usage_rollup_state)"""
    )
    writer.close()
    readonly = db.connect(copy, readonly=True)
    stale = "SELECT COUNT(*) FROM sessions WHERE key NOT IN (SELECT session_key FROM usage_rollup_state)"
    assert readonly.execute(stale).fetchone()[0] > 10
    for where, sort, descending in product(_filters(readonly)[:6], ("tokens", "started"), (True, False)):
        got = queries.page_sessions(readonly, where, sort, descending, 0, 8)
        assert _json(got[0]) == _json(reference_page(readonly, where, sort, descending, 0, 8, ())[0])
    (gone,) = queries.list_sessions_by_keys(readonly, [emptied])
    assert gone.usage == Usage() and _json(queries.list_sessions(readonly, queries.EVERY_SESSION, include_empty=True)) == (
        _json(reference_list(readonly, queries.EVERY_SESSION, include_empty=True))
    )
    assert readonly.execute("SELECT COUNT(*) FROM usage_rollup_state").fetchone() == stale_states(copy)


def stale_states(path: Path) -> tuple[int]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT COUNT(*) FROM usage_rollup_state").fetchone()
    finally:
        conn.close()


def test_the_service_page_and_cost_sort_are_unchanged_by_the_totals(tie_index):
    _, conn = tie_index
    for order in (service.SessionOrder(), service.SessionOrder("cost"), service.SessionOrder("tokens", False)):
        page = service.page_sessions(conn, SessionFilter(include_children=True), order, 0, 500)
        assert len(page.sessions) == page.total > 20
        reference = refine_sessions(conn, reference_list(conn, SessionFilter(include_children=True)))
        by_key = {s.key: s for s in reference}
        assert _json(page.sessions) == _json([by_key[s.key] for s in page.sessions])


def test_session_usage_is_filled_by_the_migration_for_fresh_roll_ups(tie_index, tmp_path):
    """An index from before ``session_usage`` gets it filled on opening for the
    sessions whose roll-ups were fresh: their totals need no usage row read."""
    path, conn = tie_index
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    old = tmp_path / "old.sqlite"
    shutil.copy(path, old)
    writer = sqlite3.connect(old, isolation_level=None)
    want = writer.execute("SELECT * FROM session_usage ORDER BY session_key").fetchall()
    assert len(want) > 20
    writer.execute("DROP TABLE session_usage")
    number = next(i for i, m in enumerate(MIGRATIONS) if "CREATE TABLE session_usage" in m)
    writer.execute(f"PRAGMA user_version = {number}")
    writer.close()
    upgraded = db.connect(old)
    # the later migrations (when there are) ran too; every stored row came back
    assert upgraded.execute("SELECT * FROM session_usage ORDER BY session_key").fetchall() == want


def test_an_agent_filter_is_resolved_without_importing_the_parsers(tmp_path):
    """The first ``list_sessions(agent=…)`` of a server resolves the agent from the
    registry cache (``adapters.registered``): no parser module is imported."""
    import subprocess
    import sys

    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    warm = "from agentlog.adapters import registered, save_registry; registered(); save_registry()"
    subprocess.run([sys.executable, "-c", warm], env=env, check=True)
    code = (
        "import sys; from agentlog.query import resolve_agent; from agentlog.adapters import all_adapters\n"
        "got = (resolve_agent('Claude'), resolve_agent('GEMINI-CLI'))\n"
        "parsers = sorted(m for m in sys.modules if m.startswith('agentlog.adapters.') and m.count('.') == 2"
        " and not m.split('.')[-1].startswith('_') and m != 'agentlog.adapters.base')\n"
        "print(got, parsers, len(all_adapters()) > 20)"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "('claude_code', 'gemini_cli') [] True"


def test_a_session_row_redacts_the_header_text_it_holds():
    """``list_sessions`` rows redact what they show (title, folder, branch) as the
    whole header's redaction would, without redacting the fields they leave out."""
    from agentlog.export.redaction import redact_header
    from agentlog.mcp.shape import session_row
    from secret_home import TOKEN

    s = Session(key="claude_code:x", agent="claude_code", id="x", title=f"push {TOKEN}", cwd=f"/tmp/{TOKEN}")
    s.git_branch = f"fix-{TOKEN}"
    row = session_row(s)
    whole = redact_header(s)
    assert (row["name"], row["project"], row["git_branch"]) == (whole.title, whole.cwd, whole.git_branch)
    assert [TOKEN in v for v in (row["name"], row["project"], row["git_branch"])] == [False] * 3
    assert "[REDACTED:github_token]" in row["git_branch"]
    bare = session_row(Session(key="codex:y", agent="codex", id="y", cwd=""))
    assert (bare["name"], bare["project"], bare["git_branch"]) == ("", "", None)
