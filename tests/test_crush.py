"""Golden tests for the Crush adapter (exact values).

The database is built from ``fixtures/crush/crush.sql`` (written for agentlog from
Crush's migrations and ``internal/message/content.go``; no public ``crush.db`` sample
exists).  Expected values are read off the SQL by hand: session ``s1`` has 10 message
rows (one with broken ``parts``), two of them ``tool`` rows holding only results; a row
of an unknown session; costs $0.0874 and $0.0012; the ``*_tokens`` columns are the last
request's context and must not be counted.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from agentlog.adapters.crush import CrushAdapter
from agentlog.cli import main
from agentlog.load import load_sessions
from conftest import fixture, parse_files


def build(project: Path) -> Path:
    path = project / ".crush" / "crush.db"
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path)
    conn.executescript(fixture("crush/crush.sql").read_text())
    conn.commit()
    conn.close()
    return path


def test_database_golden(tmp_path):
    parent, child = parse_files("crush", build(tmp_path / "proj"))
    assert (parent.key, parent.title, parent.cwd) == ("crush:s1", "Build failure", str(tmp_path / "proj"))
    assert parent.started_at.isoformat() == "2026-01-06T11:46:40+00:00"
    roles = Counter(m.role + ("*" if m.hidden else "") for m in parent.messages)
    assert roles == {"user": 2, "assistant": 4, "assistant*": 1, "system*": 1}
    flags = {m.id: m.flags for m in parent.messages if m.flags and m.role == "assistant"}
    assert flags == {"m6": ["interrupted"], "m8": ["compaction_summary"], "m9": ["api_error"]}
    calls = parent.tool_calls()
    assert [(c.tool, c.raw_name, c.result.status if c.result else None) for c in calls] == [
        ("read", "view", "completed"),
        ("task", "agent", "completed"),
        ("mcp_github_search", "mcp_github_search", None),
        ("bash", "shell_command", "error"),
    ]
    assert calls[0].input == {"file_path": "build.log"} and calls[2].input == "not json"
    # Only the cumulative cost counts; the token columns are a context snapshot.
    assert (parent.usage.total_tokens, parent.usage.cost_usd, parent.usage.cost_source) == (
        0,
        0.0874,
        "estimated",
    )
    d = parent.diagnostics
    assert d.skipped == {"malformed:message_row": 1, "no_session_row": 1}
    assert (d.records_total, d.records_used) == (12, 10)
    assert (child.kind, child.parent_key, child.parent_tool_call_id) == ("subagent", "crush:s1", "call_2")
    assert (child.models, child.usage.cost_usd) == (["claude-haiku-4-5"], 0.0012)


def test_found_in_a_project_and_shown(tmp_path):
    build(tmp_path / "code" / "app")
    build(tmp_path / "code" / "a" / "b" / "too-deep")
    sessions = load_sessions(agents=["crush"], env={}, home=tmp_path)
    assert sorted(s.key for s in sessions) == ["crush:s1", "crush:s2"]
    assert {s.cwd for s in sessions} == {str(tmp_path / "code" / "app")}
    result = CliRunner().invoke(main, ["show", "crush:s1"], env={"HOME": str(tmp_path)})
    assert result.exit_code == 0, result.output
    assert "Why does the build fail?" in result.output and "Let me check." in result.output


def test_sniff():
    assert CrushAdapter().sniff("crush.db", b"SQLite format 3\x00") == 0.6
    assert CrushAdapter().sniff("sessions.db", b"SQLite format 3\x00") == 0.0
