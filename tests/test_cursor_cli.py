"""Golden tests for the Cursor CLI adapter (agent transcripts + ``store.db`` metadata).

All four fixtures are jazzyalex/agent-sessions files (MIT).  Expected values were
counted with a throwaway script over the raw lines (roles, ``tool_use`` blocks) and
by decoding the ``meta`` row of ``cli-store.db`` by hand (hex → JSON).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from agentlog.adapters import get_adapter
from agentlog.adapters.cursor_cli import store_meta, tool_name
from agentlog.cli import main
from agentlog.load import load_sessions
from conftest import fixture, parse_files, parse_one

ENV_UNSET = {"CURSOR_USER_DIR": None, "XDG_CONFIG_HOME": None, "APPDATA": None}
AGENT = "a1b2c3d4-e5f6-7890-abcd-ef1234567890"  # the agentId in cli-store.db


def test_transcript_with_store_meta():
    path = fixture("cursor_cli/cli-agent-transcript.jsonl")
    (session,) = parse_files("cursor_cli", path, sidecars={path: (fixture("cursor_cli/cli-store.db"),)})
    assert (session.title, session.models) == ("Test Session", ["claude-4-sonnet"])
    assert session.started_at.isoformat() == "2026-04-07T00:43:10.321000+00:00"
    assert [m.role for m in session.messages] == [
        "user",
        "assistant",
        "assistant",
        "user",
        "assistant",
        "assistant",
    ]
    assert session.messages[0].text == "run ls command"  # <user_query> unwrapped
    assert session.messages[0].id == "cli-agent-transcript@0"
    calls = session.tool_calls()
    assert [(c.tool, c.raw_name, c.input["command"], c.result) for c in calls] == [
        ("bash", "Shell", "ls -la /tmp", None),
        ("bash", "Shell", "git status", None),
    ]
    assert (session.diagnostics.records_total, session.diagnostics.records_used) == (6, 6)
    assert session.usage.total_tokens == 0  # no usage is recorded
    assert session.resume_command == "cursor-agent --resume cli-agent-transcript"


def test_turn_ended_and_no_meta():
    session = parse_one("cursor_cli", fixture("cursor_cli/cli-transcript-turn-ended.jsonl"))
    assert session.title == "List the files." and session.models == []
    assert (session.status, session.status_evidence) == ("waiting_for_user", "turn_ended:success")
    assert [m.role for m in session.messages] == ["user", "assistant", "user", "assistant"]
    assert len(session.tool_calls()) == 1


def test_store_meta_is_hex_json():
    meta = store_meta(fixture("cursor_cli/cli-store.db").read_bytes())
    assert meta["agentId"] == AGENT and meta["createdAt"] == 1775522590321
    assert store_meta(b"not a database") == {}


def test_found_under_home_with_subagent_and_rendered(tmp_path):
    transcripts = tmp_path / ".cursor" / "projects" / "home-dev-api" / "agent-transcripts"
    (transcripts / AGENT / "subagents").mkdir(parents=True)
    shutil.copy(fixture("cursor_cli/cli-agent-transcript.jsonl"), transcripts / AGENT / f"{AGENT}.jsonl")
    shutil.copy(
        fixture("cursor_cli/cli-subagent-transcript.jsonl"), transcripts / AGENT / "subagents" / "sub-1.jsonl"
    )
    shutil.copy(fixture("cursor_cli/cli-transcript-turn-ended.jsonl"), transcripts / "older.jsonl")
    store = tmp_path / ".cursor" / "chats" / "0123abcd" / AGENT
    store.mkdir(parents=True)
    shutil.copy(fixture("cursor_cli/cli-store.db"), store / "store.db")
    sessions = {s.key: s for s in load_sessions(agents=["cursor_cli"], env={}, home=tmp_path)}
    assert sorted(sessions) == [f"cursor_cli:{AGENT}", "cursor_cli:older", "cursor_cli:sub-1"]
    assert sessions[f"cursor_cli:{AGENT}"].title == "Test Session"
    sub = sessions["cursor_cli:sub-1"]
    assert (sub.kind, sub.parent_key, sub.resume_command) == ("subagent", f"cursor_cli:{AGENT}", None)
    result = CliRunner().invoke(main, ["show", AGENT[:8]], env={"HOME": str(tmp_path), **ENV_UNSET})
    assert result.exit_code == 0, result.output
    assert "now show me the git status" in result.stdout and "⚙ bash ls -la /tmp" in result.stdout


def test_sniff_and_names():
    adapter = get_adapter("cursor_cli")
    assert adapter.default_roots({}, Path("/h")) == [Path("/h/.cursor/projects")]
    assert adapter.sniff("x.jsonl", fixture("cursor_cli/cli-agent-transcript.jsonl").read_bytes()) == 0.8
    assert adapter.sniff("x.jsonl", fixture("cursor_cli/cli-transcript-turn-ended.jsonl").read_bytes()) == 0.5
    assert adapter.sniff("x.jsonl", b'{"type":"session_meta","payload":{}}') == 0.0
    assert tool_name("StrReplace") == "edit" and tool_name("Shell") == "bash"
