"""Golden tests for the Cline / Roo Code / Kilo Code adapters (exact values).

Expected numbers come from a throwaway script over the raw JSON, independent of the
adapter: sums of ``metrics`` (SDK; uncached input = ``inputTokens − cacheReadTokens −
cacheWriteTokens``), of the ``api_req_started``/``deleted_api_reqs`` JSON in
``ui_messages.json`` (tasks), ``tool_use``/``tool_result`` ids.  Two cross-checks that
do not come from us: the SDK compaction fixture records ``usageBefore`` for the
session it compacted, and it equals the SDK session's sums (inclusive input 630,254 =
95,819 uncached + 534,435 cache reads; output 4,395; $2.036022565).
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentlog.adapters.cline import ClineAdapter, KiloCodeAdapter, RooCodeAdapter, tool_name
from agentlog.cli import main
from agentlog.load import load_sessions
from agentlog.model import CompactionPart, FilePart, ReasoningPart, Session, ToolCallPart
from conftest import fixture, parse_files

SDK = "cline/sdk-session.messages.json"
SDK_ID = "1784094124598_rruoq"
TASK = "cline/vscode-task-written/1750000000000"
ROO_PARENT = "0197a0b0-0000-7000-8000-00000000000a"
ROO_CHILD = "0197a0b0-0000-7000-8000-00000000000b"
CLEAN_ENV = {"CLINE_DIR": None, "CLINE_DATA_DIR": None, "XDG_CONFIG_HOME": None, "APPDATA": None}


def roles(session: Session) -> dict[str, int]:
    out: Counter[str] = Counter()
    for m in session.messages:
        out[m.role + ("*" if m.hidden else "")] += 1
    return dict(out)


def buckets(session: Session) -> tuple[int, int, int, int]:
    u = session.usage
    return u.input_tokens, u.cache_read_tokens, u.cache_write_5m_tokens, u.output_tokens


def calls(session: Session) -> tuple[int, int]:
    real = [c for m in session.messages if m.role != "tool" for c in m.parts if isinstance(c, ToolCallPart)]
    return sum(1 for c in real if c.result is not None), len(real)


def sdk_session(path: Path, manifest: Path | None = None) -> Session:
    sidecars = {path: (manifest,)} if manifest else None
    (session,) = parse_files("cline", path, sidecars=sidecars)
    return session


def test_sdk_session_golden(tmp_path):
    src = tmp_path / f"{SDK_ID}.messages.json"
    shutil.copy(fixture(SDK), src)
    shutil.copy(fixture("cline/sdk-session.json"), tmp_path / f"{SDK_ID}.json")
    s = sdk_session(src, tmp_path / f"{SDK_ID}.json")
    assert s.key == f"cline:{SDK_ID}"
    assert roles(s) == {"user": 5, "assistant": 16}
    assert calls(s) == (11, 11)
    assert Counter(c.tool for c in s.tool_calls()) == {"read": 6, "edit": 4, "bash": 1}
    assert buckets(s) == (95_819, 534_435, 0, 4_395)
    assert s.usage.cost_usd == pytest.approx(2.036022565)
    assert s.usage.cost_source == "recorded"
    assert s.models == ["anthropic/claude-opus-4.8-fast", "mistralai/voxtral-small-24b-2507"]
    # From the manifest: a fork of another session, completed, in /Users/example/dev/cline.
    assert (s.kind, s.parent_key) == ("fork", "cline:1784094053271_p8pzo")
    assert (s.status, s.cwd) == ("done", "/Users/example/dev/cline")
    assert s.title.endswith("comes afte (fork)")
    assert isinstance(s.messages[0].parts[1], FilePart)
    assert s.diagnostics.records_total == s.diagnostics.records_used == 32


def test_sdk_compaction_matches_the_usage_it_recorded(tmp_path):
    src = tmp_path / f"{SDK_ID}.messages.json"  # the same session file, rewritten after /compact
    shutil.copy(fixture("cline/sdk-basic.compaction.json"), src)
    s = sdk_session(src)
    assert roles(s) == {"user": 5, "assistant": 5, "user*": 4, "system": 1}
    (compaction,) = [p for m in s.messages for p in m.parts if isinstance(p, CompactionPart)]
    assert compaction.trigger == "manual"
    assert compaction.summary.startswith("<SYSTEM_NOTICE>\nEarlier context was compacted.")
    assert s.messages[0].role == "system" and s.messages[1].text.startswith("can you update")
    assert s.usage.total_tokens == 0  # the rewritten file keeps no metrics


def test_classic_task_golden():
    (s,) = parse_files(
        "cline",
        fixture(f"{TASK}/api_conversation_history.json"),
        sidecars={
            fixture(f"{TASK}/api_conversation_history.json"): (
                fixture(f"{TASK}/ui_messages.json"),
                fixture(f"{TASK}/task_metadata.json"),
            )
        },
    )
    assert s.key == "cline:1750000000000"
    assert s.title == "List the files and fix the typo in README.md"
    assert roles(s) == {"user": 2, "user*": 2, "assistant": 5, "system*": 2}
    assert (s.status, s.status_evidence) == ("done", "ui_messages.json ends with completion_result")
    assert calls(s) == (3, 3)
    assert [(c.tool, c.result.status) for c in s.tool_calls()] == [
        ("list", "completed"),
        ("edit", "error"),
        ("mcp__github__get_issue", "completed"),
    ]
    # Five live requests, a deleted_api_reqs and a subagent_usage row; one row is not JSON.
    assert buckets(s) == (95, 25_610, 5_570, 902)
    assert s.usage.cost_usd == pytest.approx(0.0498)
    assistants = [m for m in s.messages if m.role == "assistant"]
    assert [m.usage.output_tokens for m in assistants] == [85, 210, 7, 40, 30]
    assert [m.model for m in assistants] == ["claude-sonnet-4-20250514"] * 3 + ["claude-opus-4-20250514"] * 2
    assert [m.flags for m in assistants] == [[], [], ["interrupted"], [], []]
    assert isinstance(assistants[1].parts[0], ReasoningPart)
    carriers = [(m.text, m.flags, m.usage.output_tokens) for m in s.messages if m.role == "system"]
    assert carriers == [
        ("usage of deleted API requests", ["meta", "synthetic"], 500),
        ("usage of subagents", ["meta", "synthetic"], 30),
    ]
    d = s.diagnostics
    assert d.skipped == {"ignored:ui_message": 4, "malformed:api_req_info": 1}
    assert (d.records_total, d.records_used) == (22, 17)


def test_roo_parent_and_child_tasks(tmp_path):
    root = tmp_path / "rooveterinaryinc.roo-cline" / "tasks"
    shutil.copytree(fixture("roo_code/tasks"), root)
    adapter = RooCodeAdapter()
    assert len(list(adapter.discover(root))) == 2
    assert list(ClineAdapter().discover(root)) == []  # Roo's folder belongs to Roo
    sessions = load_sessions(agents=["roo_code"], env={}, home=tmp_path, extra_roots=[root])
    by_id = {s.id: s for s in sessions}
    parent, child = by_id[ROO_PARENT], by_id[ROO_CHILD]
    assert (child.kind, child.parent_key) == ("subagent", f"roo_code:{ROO_PARENT}")
    # The child's first prompt is the new_task message inside <task> tags.
    assert child.parent_tool_call_id == "call_p1"
    assert (parent.cwd, parent.status, parent.title) == ("/home/dev/parser", "done", "Add a test for parse()")
    assert buckets(parent) == (4_900, 0, 0, 270)  # = history_item.json tokensIn/tokensOut
    assert buckets(child) == (1_800, 1_500, 0, 240)
    assert roles(parent) == {"user": 1, "user*": 1, "assistant": 3, "assistant*": 1, "system*": 2}
    assert parent.diagnostics.unknown_types == {"str": 1}
    summary = next(m for m in parent.messages if "compaction_summary" in m.flags)
    assert summary.usage is None
    reasoning = parent.messages[2].parts[0]
    assert isinstance(reasoning, ReasoningPart) and reasoning.text.startswith("Delegate")
    assert calls(child) == (1, 2)


def test_found_under_home_and_shown(tmp_path):
    vscode_task = tmp_path / ".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1750000000000"
    shutil.copytree(fixture(TASK), vscode_task)
    sdk_dir = tmp_path / ".cline/data/sessions" / SDK_ID
    sdk_dir.mkdir(parents=True)
    shutil.copy(fixture(SDK), sdk_dir / f"{SDK_ID}.messages.json")
    shutil.copy(fixture("cline/sdk-session.json"), sdk_dir / f"{SDK_ID}.json")
    kilo = tmp_path / "Library/Application Support/Cursor/User/globalStorage/kilocode.kilo-code/tasks"
    shutil.copytree(fixture("roo_code/tasks"), kilo)
    sessions = load_sessions(agents=["cline", "kilo_code"], env={}, home=tmp_path)
    keys = sorted(s.key for s in sessions)
    assert keys == [
        "cline:1750000000000",
        f"cline:{SDK_ID}",
        f"kilo_code:{ROO_PARENT}",
        f"kilo_code:{ROO_CHILD}",
    ]
    assert next(s for s in sessions if s.id == "1750000000000").models == [
        "claude-sonnet-4-20250514",
        "claude-opus-4-20250514",
    ]
    result = CliRunner().invoke(
        main, ["show", "cline:1750000000000"], env={**CLEAN_ENV, "HOME": str(tmp_path)}
    )
    assert result.exit_code == 0, result.output
    assert "List the files and fix the typo" in result.output
    assert "Fixed the typo in README.md." in result.output


def test_roots_follow_the_environment(tmp_path):
    roots = ClineAdapter().default_roots({"CLINE_DIR": "/x/cl", "APPDATA": "/w/Roaming"}, tmp_path)
    assert roots[:2] == [Path("/x/cl/data/tasks"), Path("/x/cl/data/sessions")]
    assert Path("/w/Roaming/Code/User/globalStorage/saoudrizwan.claude-dev/tasks") in roots
    roots = ClineAdapter().default_roots({"CLINE_DATA_DIR": "/d", "CLINE_DIR": "/x"}, tmp_path)
    assert roots[0] == Path("/d/tasks")
    kilo = KiloCodeAdapter().default_roots({}, Path("/h"))
    assert Path("/h/.vscode-server/data/User/globalStorage/kilocode.kilo-code/tasks") in kilo


def test_sniff_and_tool_names():
    head = fixture(SDK).read_bytes()[:4096]
    assert ClineAdapter().sniff(f"{SDK_ID}.messages.json", head) == 0.9
    assert ClineAdapter().sniff("api_conversation_history.json", b'[{"role":"user","content":"x"}]') == 0.9
    assert RooCodeAdapter().sniff("rollout.jsonl", head) == 0.0
    assert tool_name("use_mcp_tool", {"server_name": "gh", "tool_name": "get_issue"}) == "mcp__gh__get_issue"
    assert tool_name("execute_command", {}) == "bash"
    assert tool_name("browser_action", {}) == "browser_action"


def test_unpaired_usage_rows_take_their_model_and_feedback_missing_from_history_is_a_prompt(tmp_path):
    """Issue #12 rule 9: the third ``api_req_started`` row has no assistant entry to
    pair with: its carrier takes the ``model_usage`` model at or before its time
    (opus from 1750000119000), so it is priced; the second ``user_feedback`` is not
    in the API history and becomes a user message (the first one is there)."""
    from agentlog.load import load_sessions
    from agentlog.usage import calls_from_sessions
    from homes import LAYOUTS

    LAYOUTS["cline"](tmp_path)
    sessions = load_sessions(["cline"], {}, tmp_path)
    (task,) = [s for s in sessions if s.id == "1750000100000"]
    assert [(m.id, m.role, m.model, m.flags) for m in task.messages] == [
        ("1750000100000@0", "user", None, []),
        ("1750000100000@1", "assistant", "claude-sonnet-4-20250514", []),
        ("1750000100000@2", "user", None, []),
        ("1750000100000@3", "assistant", "claude-sonnet-4-20250514", []),
        ("1750000100000@usage0", "system", "claude-opus-4-20250514", ["meta", "synthetic"]),
        ("1750000100000@feedback1", "user", None, []),
    ]
    assert task.messages[-1].text == "also link the releases"
    assert task.message_count == 5
    calls = [(c.model, c.usage.input_tokens, c.usage.output_tokens) for c in calls_from_sessions([task])]
    assert calls == [
        ("claude-sonnet-4-20250514", 100, 10),
        ("claude-sonnet-4-20250514", 200, 20),
        ("claude-opus-4-20250514", 300, 30),
    ]
    assert task.models == ["claude-sonnet-4-20250514"]  # a carrier names no model of the session
    d = task.diagnostics
    assert (d.records_total, d.records_used, d.skipped) == (11, 9, {"ignored:ui_message": 2})
    assert task.status == "done"
