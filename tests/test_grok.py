"""Golden tests for the Grok CLI adapter (exact values read off the 11 raw lines of
the fixture by hand: 1 system, 3 user, 2 reasoning, 2 assistant, 2 tool_result,
1 backend_tool_call)."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from agentlog.adapters.grok import GrokAdapter
from agentlog.cli import main
from agentlog.load import load_sessions
from agentlog.model import FilePart, ReasoningPart
from conftest import fixture, parse_files

SID = "019f6851-7ec4-7ef0-97d3-03f3eee38755"
CWD = "/tmp/as-agent-lab/grok/project"


def lay_out(home: Path) -> Path:
    folder = home / ".grok" / "sessions" / "%2Ftmp%2Fas-agent-lab%2Fgrok%2Fproject" / SID
    folder.mkdir(parents=True)
    shutil.copy(fixture("grok/chat_history.jsonl"), folder / "chat_history.jsonl")
    shutil.copy(fixture("grok/summary.json"), folder / "summary.json")
    return folder


def test_golden_with_summary(tmp_path):
    folder = lay_out(tmp_path)
    history = folder / "chat_history.jsonl"
    (s,) = parse_files("grok", history, sidecars={history: (folder / "summary.json",)})
    assert s.key == f"grok:{SID}"
    assert (s.title, s.cwd, s.git_branch, s.models) == (
        "Read hello.py and summarize what it prints",
        CWD,
        "main",
        ["grok-4.5"],
    )
    assert s.started_at.isoformat() == "2026-07-31T10:13:27.574131+00:00"
    assert s.ended_at.isoformat() == "2026-07-31T10:15:02.118940+00:00"
    roles = Counter(m.role + ("*" if m.hidden else "") for m in s.messages)
    assert roles == {
        "system*": 1,
        "user*": 1,
        "user": 2,
        "assistant": 5,
    }  # 2 reasoning + 2 replies + 1 backend call
    calls = s.tool_calls()
    assert [(c.tool, c.raw_name, c.result.status) for c in calls] == [
        ("read", "read_file", "completed"),
        ("web_search", "web_search", "completed"),
        ("bash", "run_terminal_cmd", "completed"),
    ]
    assert calls[0].input == {"target_file": f"{CWD}/hello.py"}
    assert calls[2].result.output == "hello from the grok fixture\n"
    assert calls[1].result.structured["query"] == "python print builtin"
    reasoning = [p for m in s.messages for p in m.parts if isinstance(p, ReasoningPart)]
    assert [r.summary[:16] for r in reasoning] == ["The user wants a", "Confirmed the ou"]
    assert all(r.encrypted for r in reasoning)
    image = s.messages[-1].parts[0]
    assert isinstance(image, FilePart) and image.media_type == "image/png"
    assert s.usage.total_tokens == 0  # the history records no tokens
    assert (s.diagnostics.records_total, s.diagnostics.records_used) == (11, 11)


def test_without_summary_the_folder_names_the_cwd(tmp_path):
    folder = lay_out(tmp_path)
    (s,) = parse_files("grok", folder / "chat_history.jsonl")
    assert s.cwd == CWD
    assert s.title == "Read hello.py and summarize what it prints without editing files."


def test_found_under_home_and_shown(tmp_path):
    lay_out(tmp_path)
    (s,) = load_sessions(agents=["grok"], env={}, home=tmp_path)
    assert s.key == f"grok:{SID}" and s.git_branch == "main"
    result = CliRunner().invoke(main, ["show", s.key], env={"HOME": str(tmp_path), "GROK_HOME": None})
    assert result.exit_code == 0, result.output
    assert "Read hello.py and summarize" in result.output
    assert "I'll read the file first." in result.output


def test_roots_and_sniff():
    assert GrokAdapter().default_roots({"GROK_HOME": "/g"}, Path("/h")) == [Path("/g/sessions")]
    assert GrokAdapter().default_roots({}, Path("/h")) == [Path("/h/.grok/sessions")]
    head = fixture("grok/chat_history.jsonl").read_bytes()
    assert GrokAdapter().sniff("chat_history.jsonl", head) == 0.95
    assert GrokAdapter().sniff("x.jsonl", b'{"type":"user","sessionId":"s","uuid":"u"}') == 0.0


def test_interjections_forks_subagents_and_format_0_histories(tmp_path):
    """Issue #12 rule 10 (agentsview ``internal/parser/grok.go`` and its
    ``testdata/grok-build``): an ``interjection`` is a prompt, ``parent_session_id``
    links a fork, ``session_kind: "subagent"`` is a subagent, and a
    ``chat_format_version`` 0 history (``role`` records, OpenAI-style tool calls) is read."""
    from agentlog.load import load_sessions
    from homes import LAYOUTS

    LAYOUTS["grok"](tmp_path)
    by_id = {s.id: s for s in load_sessions(["grok"], {}, tmp_path)}
    fork, child = by_id["019f7000-0000-7000-8000-00000000f0c1"], by_id["019f7000-0000-7000-8000-00000000f0c2"]
    assert (fork.kind, fork.parent_key) == ("fork", "grok:019f7000-0000-7000-8000-00000000f0c0")
    assert [(m.role, m.flags, m.text) for m in fork.messages if m.role == "user"] == [
        ("user", [], "tidy the parser"),
        ("user", [], "keep the old names"),
        ("user", ["meta"], "<user_info>\nOS Version: linux\n</user_info>"),
    ]
    assert fork.message_count == 4
    assert (child.kind, child.parent_key) == ("subagent", "grok:019f7000-0000-7000-8000-00000000f0c1")
    assert [(m.role, [type(p).__name__ for p in m.parts]) for m in child.messages] == [
        ("system", ["TextPart"]),
        ("user", ["TextPart"]),
        ("assistant", ["ReasoningPart", "TextPart", "ToolCallPart"]),
        ("assistant", ["TextPart"]),
    ]
    (call,) = child.tool_calls()
    assert (call.call_id, call.tool, call.input) == ("call_1", "read", {"target_file": "src/writer.rs"})
    assert call.result is not None and call.result.output == "fn write() {}"
    assert child.models == ["grok-4.5"]
    assert child.diagnostics.unknown_types == {} and child.diagnostics.skipped == {}
