"""Golden tests for the Pi and OpenClaw adapters (exact values).

Expected numbers come from a throwaway script over the raw JSONL (messages by
``message.role``, usage fields summed per assistant message, ``cost.total`` summed,
``toolCall`` ids against ``toolResult.toolCallId``), not from the adapter.  The
tree cases were worked out by hand from the ``id``/``parentId`` links.
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from agent_checks import accounted, buckets, calls, found_and_shown, only, roles
from agentlog.adapters.openclaw import OpenClawAdapter
from agentlog.adapters.pi import PiAdapter, tool_name
from agentlog.model import CompactionPart, ReasoningPart
from conftest import FIXTURES, fixture, parse_files, parse_one, shared_fixture

OWN = "pi/2026-03-01T09-00-00-000Z_7f3e9a10-1111-4222-8333-944455556666.jsonl"


def test_v3_tree_fork_bash_execution_and_recorded_cost():
    s = only(parse_files("pi", fixture(OWN)))
    assert s.key == "pi:7f3e9a10-1111-4222-8333-944455556666"
    assert (s.kind, s.parent_key) == ("fork", "pi:01234567-89ab-4cde-8f01-23456789abcd")
    assert (s.cwd, s.title) == ("/home/user/app", "Test run and cleanup")
    # e0000006/e0000007 are on the branch left when e0000009 went back to e0000005.
    abandoned = [m.id for m in s.messages if "abandoned" in m.flags]
    assert abandoned == ["e0000006@2026-03-01T09:01:00.000Z", "e0000007@2026-03-01T09:01:02.000Z"]
    assert roles(s) == {"user": 3, "assistant": 3, "user*": 1, "assistant*": 1, "system*": 1}
    assert calls(s) == (2, 2)
    bash = s.tool_calls()[1]
    assert (bash.tool, bash.raw_name, bash.input) == (
        "bash",
        "bashExecution",
        {"command": "git status --short"},
    )
    assert bash.result is not None and bash.result.output == " M app.py\n"
    assert buckets(s) == (15, 4300, 300, 52, 0)
    assert s.usage.cost_usd == pytest.approx(0.0144) and s.usage.cost_source == "recorded"
    flags = {m.id.split("@")[0]: m.flags for m in s.messages}
    assert flags["e0000007"] == ["interrupted", "abandoned"] and flags["e0000012"] == ["api_error"]
    assert s.diagnostics.skipped == {"ignored:label": 1, "ignored:custom": 1}
    assert s.diagnostics.records_total == 15 and accounted(s)
    assert PiAdapter().resume_command(s) == "pi --session 7f3e9a10-1111-4222-8333-944455556666"


def test_fork_copies_of_parent_entries_count_once(tmp_path):
    lines = fixture(OWN).read_text().splitlines(keepends=True)
    parent = tmp_path / "2026-02-28T08-00-00-000Z_01234567-89ab-4cde-8f01-23456789abcd.jsonl"
    header = '{"type":"session","version":3,"id":"01234567-89ab-4cde-8f01-23456789abcd",'
    parent.write_text(
        header + '"timestamp":"2026-02-28T08:00:00.000Z","cwd":"/home/user/app"}\n' + "".join(lines[1:6])
    )
    sessions = {s.kind: s for s in parse_files("pi", parent, fixture(OWN))}
    main, fork = sessions["main"], sessions["fork"]
    assert buckets(main) == (15, 4300, 300, 52, 0)
    # The fork's copies of the parent's two calls (same entry id and time) are replayed.
    assert [m.id.split("@")[0] for m in fork.messages if "replayed" in m.flags] == ["e0000003", "e0000005"]
    assert buckets(fork) == (0, 0, 0, 0, 0)


def test_v1_linear_real_excerpt():
    s = parse_one("pi", fixture("pi/v1-linear-real-excerpt.jsonl"))
    assert s.id == "d703a1a9-1b7b-4fb1-b512-c9738b1fe617"
    assert roles(s) == {"user": 3, "assistant": 8}
    assert calls(s) == (12, 12)
    assert buckets(s) == (38, 71099, 43073, 5672, 0)
    assert s.usage.cost_usd == pytest.approx(0.26804745)
    assert s.models == ["gpt-5.1-codex", "claude-sonnet-4-5"]
    assert [m.flags for m in s.messages if m.flags] == [["interrupted"]]
    assert Counter(c.tool for c in s.tool_calls()) == {"read": 7, "edit": 4, "bash": 1}
    assert s.diagnostics.records_total == 25 and not s.diagnostics.skipped


def test_v1_compaction_excerpt_is_a_fork_with_index_compaction():
    s = only(parse_files("pi", fixture("pi/v1-compaction-real-excerpt.jsonl")))
    assert s.kind == "fork" and s.parent_key == "pi:d97339c6-6c10-4827-846b-9ff1d9c3dc37"
    assert roles(s) == {"user": 3, "assistant": 7, "system*": 1}
    # A non-contiguous excerpt: 6 calls, 3 results in the kept lines.
    assert calls(s) == (3, 6)
    assert buckets(s) == (2789, 546556, 27915, 1151, 0)
    assert s.usage.cost_usd == pytest.approx(0.49046675)
    compaction = next(p for m in s.messages for p in m.parts if isinstance(p, CompactionPart))
    assert compaction.tokens_before is not None and compaction.summary


def test_v3_real_capture_compactions_and_thinking_level():
    s = parse_one("pi", fixture("pi/v3-real-capture.jsonl"))
    assert roles(s) == {"user": 2, "assistant": 2, "system*": 2}
    assert buckets(s) == (24, 0, 0, 14, 0)
    assert s.usage.cost_usd == 0.0 and s.usage.cost_source == "recorded"
    assert s.diagnostics.skipped == {"ignored:thinking_level_change": 1}


def test_v3_branching_shared_fixture_keeps_the_dead_branch_flagged():
    s = parse_one("pi", shared_fixture("pi/v3-branching.jsonl"))
    # g3/g4 (TypeScript) were left when g5 branched from g2.
    assert [m.id.split("@")[0] for m in s.messages if "abandoned" in m.flags] == ["g3000003", "g4000004"]
    visible = [m.text for m in s.messages if not m.hidden]
    assert visible[-1].startswith("For minimal and fast")
    assert buckets(s) == (400, 0, 0, 65, 0)  # the abandoned call was billed too


def test_v3_thinking_and_tools_shared_fixtures():
    thinking = parse_one("pi", shared_fixture("pi/v3-with-thinking.jsonl"))
    assert any(isinstance(p, ReasoningPart) and p.text for m in thinking.messages for p in m.parts)
    tools = parse_one("pi", shared_fixture("pi/v3-with-tools.jsonl"))
    assert calls(tools) == (1, 1)


def test_openclaw_small_and_drift():
    small = parse_one("openclaw", fixture("openclaw/small.jsonl"))
    assert small.key == "openclaw:openclaw-stage0-small"
    # The tool result's parentId is the call id, not an entry: nothing is abandoned.
    assert roles(small) == {"user": 1, "assistant": 1}
    assert calls(small) == (1, 1)
    call = small.tool_calls()[0]
    assert (call.tool, call.raw_name) == ("bash", "shell_exec")
    assert small.models == ["openclaw-small"]
    drift = parse_one("openclaw", fixture("openclaw/schema_drift.jsonl"))
    assert roles(drift) == {"user": 1, "assistant": 1, "system*": 2}
    assert drift.diagnostics.unknown_types == {"compact": 1}
    assert drift.diagnostics.skipped == {"ignored:custom": 1}
    assert OpenClawAdapter().resume_command(drift) is None


def test_tool_names():
    assert [tool_name(n) for n in ("read", "bash", "find", "ls", "mcp__gh__issue")] == [
        "read",
        "bash",
        "glob",
        "list",
        "mcp__gh__issue",
    ]


def test_found_under_home_and_shown(tmp_path):
    sessions_dir = tmp_path / ".pi" / "agent" / "sessions" / "--home-user-app--"
    shutil.copytree(FIXTURES / "pi", sessions_dir)
    claw = tmp_path / ".openclaw" / "agents" / "main" / "sessions"
    shutil.copytree(FIXTURES / "openclaw", claw)
    (claw / "gone.jsonl.deleted.2026-02-24T10-00-00").write_bytes((claw / "small.jsonl").read_bytes())
    pi = found_and_shown("pi", tmp_path)
    assert len(pi) == 5  # with the parentless-entries fixture (rule 11)
    claws = found_and_shown("openclaw", tmp_path)
    assert sorted(s.id for s in claws) == [
        "openclaw-stage0-drift",
        "openclaw-stage0-small",
        "openclaw-written-parentless",
    ]


def test_env_override_and_sniff():
    adapter = PiAdapter()
    home = Path("/home/u")
    assert adapter.default_roots({}, home) == [home / ".pi/agent/sessions"]
    assert adapter.default_roots({"PI_CODING_AGENT_DIR": "/x"}, home) == [Path("/x/sessions")]
    assert OpenClawAdapter().default_roots({"OPENCLAW_STATE_DIR": "/s"}, home) == [Path("/s/agents")]
    head = fixture(OWN).read_bytes()[:4096]
    assert adapter.sniff(fixture(OWN).name, head) > OpenClawAdapter().sniff(fixture(OWN).name, head)
    claw = fixture("openclaw/small.jsonl").read_bytes()
    assert OpenClawAdapter().sniff("small.jsonl", claw) > adapter.sniff("small.jsonl", claw)


@pytest.mark.parametrize(
    ("agent", "name"),
    [
        ("openclaw", "openclaw/written-missing-parent.jsonl"),
        ("pi", "pi/2026-03-09T08-00-00-000Z_9a9a0000-1111-4222-8333-000000000011.jsonl"),
    ],
)
def test_an_entry_without_a_parent_id_key_continues_the_transcript(agent, name, tmp_path):
    """Issue #12 rule 11 (pi-mono ``session-manager.ts``: ``parentId: string | null``;
    ``migrateV1ToV2`` chains parentless entries to the previous one): e3 and e4 have
    no ``parentId`` key, so nothing is abandoned; an explicit ``null`` is a new root."""
    session = parse_one(agent, fixture(name))
    assert [(m.id.split("@")[0], m.role, m.flags) for m in session.messages] == [
        ("e1", "user", []),
        ("e2", "assistant", []),
        ("e3", "user", []),
        ("e4", "assistant", []),
        ("e5", "user", []),
    ]
    assert (session.message_count, session.usage.input_tokens, session.usage.output_tokens) == (5, 300, 30)
    rooted = tmp_path / fixture(name).name
    rooted.write_text(
        fixture(name)
        .read_text()
        .replace('{"type":"message","id":"e3",', '{"type":"message","id":"e3","parentId":null,')
    )
    again = parse_one(agent, rooted)
    assert [m.id.split("@")[0] for m in again.messages if "abandoned" in m.flags] == ["e1", "e2"]
    assert again.usage.input_tokens == 300  # abandoned calls were billed: still counted
