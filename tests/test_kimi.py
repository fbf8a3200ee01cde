"""Golden tests for the Kimi CLI adapter (exact values).

No public kimi-cli session exists: ``fixtures/kimi/share`` is a share folder
written for agentlog from the producer's source (see ``fixtures/SOURCES.md``).  The
expected numbers are worked out by hand from its lines: six de-duplicated
``StatusUpdate.token_usage`` records in the main wire, two in the subagent's.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from agentlog.adapters import get_adapter
from agentlog.adapters.kimi import tool_name, work_dir_key
from agentlog.cli import main
from agentlog.load import load_sessions
from agentlog.model import ReasoningPart, Session
from conftest import fixture

ADAPTER = get_adapter("kimi")
SID = "6f1c2a3e-0b1d-4c55-9a0e-1f2e3d4c5b6a"


def load(home: Path) -> dict[str, Session]:
    shutil.copytree(fixture("kimi/share"), home / ".kimi")
    return {s.id: s for s in load_sessions(agents=["kimi"], env={"HOME": str(home)}, home=home)}


def buckets(session: Session) -> tuple[int, int, int, int]:
    u = session.usage
    return u.input_tokens, u.cache_read_tokens, u.cache_write_5m_tokens, u.output_tokens


def test_rotated_context_wire_usage_and_state(tmp_path):
    session = load(tmp_path)[SID]
    assert (session.title, session.cwd) == ("Tidy the project", "/tmp/kimi-project")  # state.json, kimi.json
    # context_1.jsonl (the reverted branch) then context.jsonl without its copied prefix.
    assert [(m.role, m.text) for m in session.messages if m.role == "user"] == [
        ("user", "list files"),
        ("user", "<system>CHECKPOINT 1</system>"),
        ("user", "delete b.txt"),
        ("user", "count the lines of a.txt with a subagent"),
    ]
    assert [m.role for m in session.messages].count("assistant") == 6
    assert [m.flags for m in session.messages if m.role == "user"][1] == ["meta"]
    # 1200+60+30+90+100+50 / 0+1240+1300+1300+1300+1400 / 40+12+20+15+30+10
    assert buckets(session) == (1530, 6540, 0, 127)
    assert all(m.usage is not None for m in session.messages if m.role == "assistant")
    calls = {c.call_id: c for c in session.tool_calls()}
    assert {k: (c.tool, c.result.is_error) for k, c in calls.items()} == {
        "tool_ls1": ("bash", False),
        "tool_rm1": ("bash", True),
        "tool_task1": ("task", False),
    }
    assert calls["tool_ls1"].input == {"command": "ls"}
    assert isinstance(session.messages[1].parts[0], ReasoningPart)
    assert session.messages[0].timestamp.timestamp() == 1767225600.0  # TurnBegin
    assert (session.status, session.status_evidence) == ("interrupted", "StepInterrupted")
    d = session.diagnostics
    assert d.records_total == 24 + 16 + 17  # wire lines + context_1 lines + context lines
    assert d.skipped["duplicate:rotation"] == 10 and d.skipped["duplicate:StatusUpdate"] == 1
    assert d.skipped["ignored:_usage"] == 4  # context size, never usage
    assert d.skipped["subagent_copy:SubagentEvent"] == 1
    assert d.unknown_types == {"role:future_role": 1}
    assert ADAPTER.resume_command(session) == f"kimi --session {SID}"


def test_subagent_is_linked_and_counted_once(tmp_path):
    sessions = load(tmp_path)
    child = sessions[f"{SID}/a1b2c3d4"]
    assert (child.kind, child.parent_key, child.parent_tool_call_id) == (
        "subagent",
        f"kimi:{SID}",
        "tool_task1",
    )
    assert (child.subagent_type, child.description, child.status) == ("coder", "count lines", "done")
    assert buckets(child) == (540, 500, 0, 28)
    assert child.cwd == "/tmp/kimi-project"
    # The SubagentEvent copy of its usage (500/20) is not in the parent's total.
    assert buckets(sessions[SID])[0] == 1530


def test_shown_by_the_cli(tmp_path):
    load(tmp_path)
    result = CliRunner().invoke(
        main, ["show", f"kimi:{SID}"], env={"HOME": str(tmp_path), "KIMI_SHARE_DIR": None}
    )
    assert result.exit_code == 0, result.output
    assert "The delete failed: permission denied." in result.output


def test_roots_sniff_and_names():
    assert ADAPTER.default_roots({"KIMI_SHARE_DIR": "/k"}, Path("/h")) == [Path("/k")]
    assert ADAPTER.default_roots({}, Path("/h")) == [Path("/h/.kimi")]
    head = fixture(f"kimi/share/sessions/e4bcc066aa66c3edf02dc55ab3152b8e/{SID}/context.jsonl").read_bytes()
    assert ADAPTER.sniff("context.jsonl", head) == 0.95
    assert ADAPTER.sniff("wire.jsonl", b'{"type":"metadata","protocol_version":"1.10"}\n') == 0.0
    assert work_dir_key("/tmp/kimi-project") == "e4bcc066aa66c3edf02dc55ab3152b8e"
    assert work_dir_key("/w", "ssh") == "ssh_" + work_dir_key("/w")
    assert (tool_name("StrReplaceFile"), tool_name("SearchWeb"), tool_name("Think")) == (
        "edit",
        "web_search",
        "think",
    )
