"""Golden tests for the Goose adapter (exact values).

The database is built from ``fixtures/goose/sessions.sql`` (written for agentlog; no
public ``sessions.db`` sample exists).  Expected numbers are read off the SQL by hand:
the three ``usage_ledger`` rows of session 1 sum to input 1,000 + 150 + 50 = 1,200,
cache reads 0 + 2,000 + 6,000 = 8,000, cache writes 2,000, output 120 + 200 + 20 = 340
(the same as its ``accumulated_*`` columns, which are therefore not added again), and
costs $0.0123 (provider-reported) + $0.002 (estimated); the third row's cost is
``carried_forward`` and not kept.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentlog.adapters.goose import GooseAdapter, tool_name
from agentlog.cli import main
from agentlog.load import LoadReport, load_sessions
from agentlog.model import UnknownPart
from conftest import fixture, parse_files


def build(path: Path, script: str | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(script or fixture("goose/sessions.sql").read_text())
    conn.commit()
    conn.close()
    return path


def test_database_golden(tmp_path):
    main_session, child = parse_files("goose", build(tmp_path / "sessions.db"))
    assert (main_session.key, main_session.title, main_session.cwd) == (
        "goose:20260105_1",
        "Fix the build",
        "/home/dev/app",
    )
    assert main_session.started_at.isoformat() == "2026-01-05T09:00:00+00:00"
    assert main_session.resume_command == "goose session --resume --session-id 20260105_1"
    assert main_session.models == ["claude-sonnet-4-5"]
    roles = Counter(m.role + ("*" if m.hidden else "") for m in main_session.messages)
    assert roles == {"user": 1, "user*": 1, "assistant": 5, "system*": 3}
    assert [(c.tool, c.result.status) for c in main_session.tool_calls()] == [
        ("bash", "completed"),
        ("edit", "error"),
        ("mcp__github__create_issue", "completed"),
    ]
    assert main_session.tool_calls()[1].result.output == "main.c is read-only"
    assert main_session.tool_calls()[2].result.output == [{"type": "text", "text": "issue #12"}]
    u = main_session.usage
    assert (u.input_tokens, u.cache_read_tokens, u.cache_write_5m_tokens, u.output_tokens) == (
        1_200,
        8_000,
        2_000,
        340,
    )
    assert u.cost_usd == pytest.approx(0.0143)
    d = main_session.diagnostics
    assert d.skipped == {"malformed:message_row": 1, "no_session_row": 1}
    assert (d.records_total, d.records_used) == (16, 14)
    # The subagent has no ledger rows: its session totals ride on one hidden message.
    assert (child.kind, child.parent_key, child.title) == ("subagent", "goose:20260105_1", "check tests")
    assert child.resume_command is None
    (carrier,) = [m for m in child.messages if m.usage]
    assert carrier.id == "20260105_2@session-totals" and carrier.hidden
    assert (child.usage.input_tokens, child.usage.output_tokens, child.usage.cost_source) == (
        300,
        40,
        "estimated",
    )


def test_older_schema_without_ledger_or_cache_columns(tmp_path):
    script = """
    CREATE TABLE sessions (id TEXT PRIMARY KEY, model_config_json TEXT, provider_name TEXT, created_at TEXT,
        total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER, accumulated_total_tokens INTEGER,
        accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER);
    INSERT INTO sessions (id, model_config_json, created_at, accumulated_total_tokens,
        accumulated_input_tokens, accumulated_output_tokens)
        VALUES ('session-a', '{"model_name":"gpt-5"}', '2026-05-01 01:02:03', 180, 100, 50);
    """
    (s,) = parse_files("goose", build(tmp_path / "sessions.db", script))
    assert (s.id, s.models, s.usage.input_tokens, s.usage.output_tokens) == ("session-a", ["gpt-5"], 100, 50)
    assert s.started_at.isoformat() == "2026-05-01T01:02:03+00:00"


def test_found_under_home_and_shown(tmp_path):
    build(tmp_path / ".local" / "share" / "goose" / "sessions" / "sessions.db")
    sessions = load_sessions(agents=["goose"], env={}, home=tmp_path)
    assert sorted(s.key for s in sessions) == ["goose:20260105_1", "goose:20260105_2"]
    result = CliRunner().invoke(
        main, ["show", "goose:20260105_1"], env={"HOME": str(tmp_path), "GOOSE_PATH_ROOT": None}
    )
    assert result.exit_code == 0, result.output
    assert "The build fails, fix it." in result.output and "Opened issue #12." in result.output


def test_roots_and_names():
    assert GooseAdapter().default_roots({"GOOSE_PATH_ROOT": "/g"}, Path("/h")) == [Path("/g/data/sessions")]
    assert Path("/h/.local/share/goose/sessions") in GooseAdapter().default_roots({}, Path("/h"))
    assert tool_name("developer__shell") == "bash"
    assert tool_name("computercontroller__web_scrape") == "mcp__computercontroller__web_scrape"
    assert GooseAdapter().sniff("sessions.db", b"SQLite format 3\x00") == 0.6
    assert GooseAdapter().sniff("other.db", b"SQLite format 3\x00") == 0.0


LEGACY = "goose/legacy"


def test_legacy_jsonl_golden():
    # Expected values read off the written file: a metadata line, eight message lines
    # (two holding only tool responses), one cut-off line; accumulated 4,800 in / 600 out.
    (s,) = parse_files("goose", fixture(f"{LEGACY}/20250110_093000.jsonl"))
    assert (s.key, s.title, s.cwd) == ("goose:20250110_093000", "Add a footer", "/home/dev/site")
    assert (s.started_at.isoformat(), s.ended_at.isoformat()) == (
        "2025-01-10T09:30:00+00:00",
        "2025-01-10T09:30:30+00:00",
    )
    assert s.resume_command == "goose session --resume --session-id 20250110_093000"
    roles = Counter(m.role + ("*" if m.hidden else "") for m in s.messages)
    assert roles == {"user": 1, "user*": 1, "assistant": 4, "system*": 1}
    calls = s.tool_calls()
    assert [(c.call_id, c.tool, c.raw_name, c.result.status) for c in calls] == [
        ("toolu_1", "edit", "developer__text_editor", "completed"),
        ("toolu_2", "bash", "developer__shell", "error"),
    ]
    assert calls[0].result.output == [{"type": "text", "text": "<html><body></body></html>"}]
    assert calls[1].result.output == "cat: site.css: No such file or directory"
    (unknown,) = [p for m in s.messages for p in m.parts if isinstance(p, UnknownPart)]
    assert unknown.raw["type"] == "contextLengthExceeded"
    u = s.usage
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.cost_usd) == (4_800, 0, 600, None)
    assert s.diagnostics.skipped == {"invalid_json": 1}
    assert (s.diagnostics.records_total, s.diagnostics.records_used) == (10, 9)


def test_legacy_file_whose_first_line_is_a_message():
    (s,) = parse_files("goose", fixture(f"{LEGACY}/20240301_101500.jsonl"))
    assert (s.title, s.cwd, [m.role for m in s.messages]) == (None, None, ["user", "assistant"])
    assert (s.usage.total_tokens, s.diagnostics.records_used) == (0, 2)


def test_legacy_files_beside_the_database(tmp_path):
    folder = tmp_path / ".local" / "share" / "goose" / "sessions"
    build(folder / "sessions.db")
    for name in ("20240301_101500", "20250110_093000", "20260105_2"):  # 20260105_2 was imported
        shutil.copy(fixture(f"{LEGACY}/{name}.jsonl"), folder)
    report = LoadReport()
    sessions = load_sessions(agents=["goose"], env={}, home=tmp_path, report=report)
    keys = ["goose:20240301_101500", "goose:20250110_093000", "goose:20260105_1", "goose:20260105_2"]
    assert sorted(s.key for s in sessions) == keys
    assert report.duplicates == [str(folder / "20260105_2.jsonl")]
    imported = next(s for s in sessions if s.id == "20260105_2")
    assert [m.text for m in imported.messages if not m.hidden] == ["Run the tests", "All tests pass."]
    env = {"HOME": str(tmp_path), "GOOSE_PATH_ROOT": None}
    result = CliRunner().invoke(main, ["sessions", "--agent", "goose", "--subagents", "--json"], env=env)
    rows = {row["key"]: row for row in json.loads(result.stdout)}
    assert sorted(rows) == keys
    assert (
        rows["goose:20260105_2"]["messages"] == imported.message_count == 2
    )  # not doubled by the legacy copy
    result = CliRunner().invoke(main, ["show", "goose:20250110_093000"], env=env)
    assert "Add a footer to index.html" in result.output and "Added the footer." in result.output


def test_legacy_sniff():
    head = fixture(f"{LEGACY}/20250110_093000.jsonl").read_bytes()[:4096]
    assert GooseAdapter().sniff("20250110_093000.jsonl", head) == 0.6
    assert GooseAdapter().sniff("notes.jsonl", b'{"role":"user"}\n') == 0.0
