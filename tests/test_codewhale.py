"""Golden tests for the CodeWhale / DeepSeek-TUI adapter (exact values).

The documents were written for agentlog from formats.md §14.4 (see SOURCES.md);
the expected values are read off the files by hand.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agent_checks import accounted, calls, found_and_shown, roles
from agentlog.adapters.codewhale import CodeWhaleAdapter, tool_name
from conftest import FIXTURES, fixture, parse_one

WHALE = "codewhale"
WHALE_ID = "4f1c2b3a-5d6e-4f70-8a91-b2c3d4e5f607"


def test_codewhale_document():
    s = parse_one(WHALE, fixture(f"codewhale/sessions/{WHALE_ID}.json"))
    assert (s.title, s.cwd, s.models) == (
        "Fix the failing build",
        "/home/user/build-fix",
        ["deepseek-v4-pro"],
    )
    assert roles(s) == {"system*": 2, "user": 1, "assistant": 3}
    assert calls(s) == (2, 2)
    shell, edit = s.tool_calls()
    assert (shell.tool, shell.raw_name) == ("bash", "exec_shell")
    assert shell.result is not None and shell.result.is_error and shell.result.status == "error"
    assert (edit.tool, edit.result and edit.result.output) == ("edit", "edited main.c")
    assert all(m.timestamp is None for m in s.messages if "synthetic" not in m.flags)
    # Only the unsplit total is recorded; cost = session + subagent USD.
    assert s.usage.total_tokens == 48210
    assert s.usage.cost_usd == pytest.approx(0.05) and s.usage.cost_source == "recorded"
    assert s.diagnostics.records_total == 7 and accounted(s)


def test_legacy_deepseek_flat_cost():
    s = parse_one(WHALE, fixture("codewhale/deepseek-sessions/9a8b7c6d-0000-4000-8000-00000000beef.json"))
    assert roles(s) == {"user": 1, "assistant": 1, "system*": 1}
    assert s.usage.total_tokens == 3100 and s.usage.cost_usd == pytest.approx(0.0015)


def test_tool_names():
    names = ("exec_shell_wait", "read_file", "agents/spawn", "grep_files", "mcp__x__y")
    assert [tool_name(n) for n in names] == ["bash", "read", "task", "grep", "mcp__x__y"]


def test_found_under_home_and_shown(tmp_path):
    whale = tmp_path / ".codewhale" / "sessions"
    shutil.copytree(FIXTURES / WHALE / "sessions", whale)
    (whale / "checkpoints").mkdir()
    shutil.copy(whale / f"{WHALE_ID}.json", whale / "checkpoints" / "latest.json")
    legacy = tmp_path / ".deepseek" / "sessions"
    shutil.copytree(FIXTURES / WHALE / "deepseek-sessions", legacy)
    shutil.copy(whale / f"{WHALE_ID}.json", legacy / f"{WHALE_ID}.json")  # same id in both: .codewhale wins
    sessions = found_and_shown(WHALE, tmp_path)
    assert sorted(s.id for s in sessions) == [WHALE_ID, "9a8b7c6d-0000-4000-8000-00000000beef"]
    assert next(s for s in sessions if s.id == WHALE_ID).sources == [str(whale / f"{WHALE_ID}.json")]
    roots = CodeWhaleAdapter().default_roots({"CODEWHALE_HOME": "/c"}, tmp_path)
    assert roots == [Path("/c/sessions"), tmp_path / ".deepseek" / "sessions"]
