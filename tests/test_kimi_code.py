"""Golden tests for the Kimi Code adapter (exact values).

Expected numbers come from a throwaway script over the raw wire journals (sums of
``usage.record`` usage, ``tool.call`` names, ``context.append_message`` origins),
not from the adapter.
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from agentlog.adapters import get_adapter
from agentlog.adapters.kimi_code import location, tool_name
from agentlog.cli import main
from agentlog.load import load_sessions
from agentlog.model import CompactionPart, Session
from conftest import fixture

ADAPTER = get_adapter("kimi_code")
SMALL = "session_9eb1bf57-c1af-48a5-b658-0e8d9fe794f5"
TOOLS = "session_1bcbe023-4f7e-4971-9dc9-43b8756045b0"


def lay_out(home: Path) -> Path:
    """The fixtures where Kimi Code writes them (paths from their state.json)."""
    sessions = home / ".kimi-code/sessions/wd_project_ac3bb318f98e"
    for sid, wire, state, agent in (
        (SMALL, "small.jsonl", "state.json", "main"),
        (TOOLS, "assistant_tools.jsonl", "assistant_tools.state.json", "main"),
        (TOOLS, "subagent_agent-0.jsonl", None, "agent-0"),
    ):
        folder = sessions / sid / "agents" / agent
        folder.mkdir(parents=True)
        shutil.copy(fixture(f"kimi_code/{wire}"), folder / "wire.jsonl")
        if state:
            shutil.copy(fixture(f"kimi_code/{state}"), sessions / sid / "state.json")
    return sessions


def load(home: Path) -> dict[str, Session]:
    return {s.id: s for s in load_sessions(agents=["kimi_code"], env={}, home=home)}


def buckets(session: Session) -> tuple[int, int, int, int]:
    u = session.usage
    return u.input_tokens, u.cache_read_tokens, u.cache_write_5m_tokens, u.output_tokens


def test_session_with_tools_compaction_and_subagent(tmp_path):
    lay_out(tmp_path)
    sessions = load(tmp_path)
    assert sorted(sessions) == [TOOLS, f"{TOOLS}/agent-0", SMALL]
    main_s = sessions[TOOLS]
    assert (main_s.title, main_s.cwd) == ("hi", "/private/tmp/as-agent-lab/kimi/project")
    assert buckets(main_s) == (30174, 661504, 0, 5515)  # 22 turn records + 1 compaction record
    assert main_s.models == ["kimi-k2.7-code"]
    roles = Counter((m.role, tuple(m.flags)) for m in main_s.messages)
    assert roles == {
        ("user", ()): 8,
        ("user", ("meta",)): 5,  # origin.kind == "injection" (system reminders)
        ("assistant", ()): 22,  # one per step with content
        ("system", ("compaction_summary",)): 1,
    }
    calls = main_s.tool_calls()
    assert Counter(c.raw_name for c in calls) == {
        "Bash": 8,
        "Glob": 4,
        "Read": 2,
        "Grep": 2,
        "Agent": 1,
        "Write": 1,
        "ExitPlanMode": 1,
    }
    assert all(c.result is not None for c in calls)
    assert [c.call_id for c in calls if c.result.is_error] == ["Bash_2"]
    compaction = next(m for m in main_s.messages if m.role == "system")
    part = compaction.parts[0]
    assert isinstance(part, CompactionPart) and (part.trigger, part.tokens_before) == ("manual", 15912)
    assert compaction.usage is not None and compaction.usage.input_tokens == 1411
    d = main_s.diagnostics
    assert d.records_total == 200 and d.records_used == 176
    assert (
        d.skipped["duplicate:turn.prompt"] == 8
        and d.skipped["ignored:permission.record_approval_result"] == 8
    )

    child = sessions[f"{TOOLS}/agent-0"]
    assert (child.kind, child.parent_key, child.parent_tool_call_id) == (
        "subagent",
        f"kimi_code:{TOOLS}",
        "Agent_3",
    )
    assert buckets(child) == (12905, 28416, 0, 330)
    assert Counter(c.tool for c in child.tool_calls()) == {"glob": 1, "bash": 1}
    assert child.diagnostics.records_total == 28
    # no turn.ended after, but the log ends with a compaction the user asked for
    # (full_compaction.begin source "manual"): the agent waits at its prompt
    assert (main_s.status, main_s.status_evidence, main_s.status_inferred) == (
        "waiting_for_user",
        f"system message {main_s.messages[-1].id}: a manual compaction ends the log",
        True,
    )
    assert (child.status, child.status_inferred) == ("done", True)  # a subagent whose reply ends its turn


def test_cancelled_turns(tmp_path):
    lay_out(tmp_path)
    small = load(tmp_path)[SMALL]
    assert [m.role for m in small.messages] == ["user", "system", "user", "user", "system"]
    assert [m.text for m in small.messages if m.role == "user"] == ["hi", "hi", "stop"]
    assert [m.flags for m in small.messages if m.role == "system"] == [["interrupted", "synthetic"]] * 2
    assert small.usage.total_tokens == 0  # cancelled before any usage.record
    assert (small.status, small.status_evidence) == ("waiting_for_user", "turn.ended:completed")
    assert small.diagnostics.records_total == 36 and small.diagnostics.skipped["duplicate:turn.steer"] == 1


def test_shown_by_the_cli(tmp_path):
    lay_out(tmp_path)
    result = CliRunner().invoke(
        main, ["show", f"kimi_code:{TOOLS}"], env={"HOME": str(tmp_path), "KIMI_CODE_HOME": None}
    )
    assert result.exit_code == 0, result.output
    assert "run subagent to count swift files in this repo" in result.output


def test_roots_sniff_and_names():
    assert ADAPTER.default_roots({"KIMI_CODE_HOME": "/k"}, Path("/h")) == [Path("/k/sessions")]
    assert ADAPTER.default_roots({}, Path("/h")) == [Path("/h/.kimi-code/sessions")]
    head = fixture("kimi_code/small.jsonl").read_bytes()[:4096]
    assert ADAPTER.sniff("wire.jsonl", head) == 0.95
    assert ADAPTER.sniff("wire.jsonl", b'{"type":"metadata","protocol_version":"1.10"}\n') == 0.0  # Kimi CLI
    assert location("/s/session_x/agents/agent-1/wire.jsonl") == ("session_x", "agent-1")
    assert (tool_name("FetchURL"), tool_name("Agent"), tool_name("mcp__gh__pr")) == (
        "web_fetch",
        "task",
        "mcp__gh__pr",
    )
