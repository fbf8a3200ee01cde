"""Golden tests for the Qwen Code adapter (exact values).

Expected values come from a throwaway script over the raw JSONL (records by
``type``/``subtype``, ``uuid`` counts, ``usageMetadata`` fields, the glued line split
by hand) and from the fixtures' own notes (jazzyalex/agent-sessions): which branch
is active, which title wins, which record carries the wrong session id.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from agent_checks import accounted, buckets, calls, found_and_shown, roles
from agentlog.adapters import all_adapters
from agentlog.adapters.qwen import QwenAdapter, split_glued, usage_of
from agentlog.index import queries
from agentlog.index.db import connect
from agentlog.index.sync import sync
from agentlog.model import CompactionPart, ReasoningPart
from conftest import FIXTURES, fixture, parse_one

QWEN = "qwen"


def test_prompt_hook_context_reasoning_and_tool_pairing():
    s = parse_one(QWEN, fixture("qwen/019f0000-0000-7000-8000-000000000001.jsonl"))
    assert (s.cwd, s.git_branch, s.agent_version) == (
        "/tmp/as-qwen-fixture/project",
        "fixture-branch",
        "0.21.13",
    )
    # The typed prompt, its injected hook context (meta), the notification (meta).
    assert roles(s) == {"user": 1, "user*": 2, "assistant": 2}
    assert s.messages[0].text == "Inspect the synthetic fixture."
    assert "user-prompt-submit-context" in s.messages[1].text and "meta" in s.messages[1].flags
    assert isinstance(s.messages[2].parts[0], ReasoningPart)
    assert calls(s) == (1, 1)
    call = s.tool_calls()[0]
    assert (call.tool, call.raw_name) == ("read", "read_file")
    assert call.result is not None and call.result.output == "Synthetic file contents."
    assert s.diagnostics.skipped == {"ignored:system/ui_telemetry": 1}
    assert s.diagnostics.records_total == 6 and accounted(s)
    assert QwenAdapter().resume_command(s) == f"qwen --resume {s.id}"


def test_file_name_is_the_session_id():
    s = parse_one(QWEN, fixture("qwen/019f0000-0000-7000-8000-000000000002.jsonl"))
    assert s.id == "019f0000-0000-7000-8000-000000000002"
    compact = parse_one(QWEN, fixture("qwen/019f0000000070008000000000000003.jsonl"))
    assert compact.id == "019f0000000070008000000000000003"


def test_rewind_leaves_the_old_branch_and_repeated_uuid_is_one_message():
    s = parse_one(QWEN, fixture("qwen/019f0000-0000-7000-8000-000000000004.jsonl"))
    assert [m.id for m in s.messages if "abandoned" in m.flags] == ["019f0000-0000-7000-8000-000000000042"]
    assert roles(s) == {"user": 2, "assistant*": 1, "assistant": 1}
    answer = s.messages[-1]
    assert answer.model == "synthetic-active-model"
    assert [type(p).__name__ for p in answer.parts] == ["ReasoningPart", "ToolCallPart", "TextPart"]
    assert s.title == "Active branch title"
    assert s.cwd == "/tmp/as-qwen-fixture/new-project"  # not the ignored artifact record's
    assert calls(s) == (0, 1)
    assert buckets(s) == (12, 0, 0, 4, 0)
    assert s.diagnostics.records_total == 9 and accounted(s)


def test_glued_records_on_one_line_are_split():
    s = parse_one(QWEN, fixture("qwen/019f0000-0000-7000-8000-000000000005.jsonl"))
    assert roles(s) == {"user": 1, "assistant": 1}
    assert s.messages[0].text == 'Inspect {"glued": "objects"} safely.'
    assert s.diagnostics.records_total == 2 and not s.diagnostics.skipped
    pieces = split_glued(b'{"a":"}{"}{"b":2}')
    assert pieces == [(0, b'{"a":"}{"}'), (10, b'{"b":2}')]


def test_telemetry_is_not_usage():
    s = parse_one(QWEN, fixture("qwen/system_telemetry.jsonl"))
    assert s.diagnostics.skipped == {"ignored:system/ui_telemetry": 4}
    assert buckets(s) == (0, 0, 0, 0, 0)


def test_usage_counts_cached_input_once():
    u = usage_of({"promptTokenCount": 1000, "cachedContentTokenCount": 700, "candidatesTokenCount": 50,
                  "thoughtsTokenCount": 20, "totalTokenCount": 1070})  # fmt: skip
    assert u is not None
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens, u.total_tokens) == (
        300,
        700,
        70,
        20,
        1070,
    )


def test_found_under_home_and_shown(tmp_path):
    chats = tmp_path / ".qwen" / "projects" / "-tmp-as-qwen-fixture-project" / "chats"
    shutil.copytree(FIXTURES / "qwen", chats)
    sessions = found_and_shown(QWEN, tmp_path)
    assert len(sessions) == 6
    assert QwenAdapter().default_roots({"QWEN_CODE_HOME": "/q"}, tmp_path) == [
        Path("/q/projects"),
        Path("/q/tmp"),
    ]
    head = (chats / "019f0000-0000-7000-8000-000000000001.jsonl").read_bytes()
    assert QwenAdapter().sniff("x.jsonl", head) > 0.95


def test_compression_and_agent_message(tmp_path):
    records = [
        '{"uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"2026-08-17T12:00:00Z","type":"user",'
        '"message":{"role":"user","parts":[{"text":"go"}]}}',
        '{"uuid":"c1","parentUuid":"u1","sessionId":"s","timestamp":"2026-08-17T12:01:00Z","type":"system",'
        '"subtype":"chat_compression","systemPayload":{"info":{"originalTokenCount":100,"newTokenCount":10},'
        '"compressedHistory":[{"role":"user","parts":[{"text":"summary"}]}]}}',
        '{"uuid":"m1","parentUuid":"c1","sessionId":"s","timestamp":"2026-08-17T12:02:00Z","type":"user",'
        '"subtype":"agent_message","systemPayload":{"displayText":"alice reply"}}',
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(records) + "\n")
    s = parse_one(QWEN, path)
    compaction = s.messages[1].parts[0]
    assert isinstance(compaction, CompactionPart)
    assert (compaction.summary, compaction.tokens_before) == ("summary", 100)
    assert (s.messages[2].text, s.messages[2].flags) == ("alice reply", ["meta"])


LEGACY = "qwen_legacy/session-2025-09-02T10-15-7c1e4a2b.json"


def test_older_gemini_style_chat_is_read_with_the_gemini_parser():
    # Expected values from the raw document: 2 user, 3 "qwen" replies, 1 info
    # notice; tokens summed by hand with Gemini semantics (input − cached + tool).
    s = parse_one(QWEN, fixture(LEGACY))
    assert (s.key, s.agent) == ("qwen:7c1e4a2b-5d3f-4e8a-9b61-0f2c7d9e1a34", "qwen")
    assert roles(s) == {"user": 2, "assistant": 3, "system*": 1}
    assert s.title == "What does main.py print?"
    assert {m.model for m in s.messages if m.role == "assistant"} == {"qwen3-coder-plus"}
    assert isinstance(s.messages[1].parts[0], ReasoningPart)
    assert calls(s) == (2, 2)
    read, shell = s.tool_calls()
    assert (read.tool, read.raw_name, read.result.output) == ("read", "read_file", "print('hello')\n")
    assert (shell.tool, shell.result.status) == ("bash", "interrupted")
    assert buckets(s) == (594, 26944, 0, 90, 18)
    assert s.diagnostics.records_total == 7 and accounted(s)
    assert s.resume_command is None


def test_older_chat_found_under_tmp_and_claimed_over_gemini(tmp_path):
    chats = tmp_path / ".qwen" / "tmp" / ("3f79" * 16) / "chats"
    chats.mkdir(parents=True)
    shutil.copy(fixture(LEGACY), chats)
    shutil.copy(fixture("qwen/019f0000-0000-7000-8000-000000000005.jsonl"), chats)
    sessions = found_and_shown(QWEN, tmp_path)
    assert sorted(s.id for s in sessions) == [
        "019f0000-0000-7000-8000-000000000005",
        "7c1e4a2b-5d3f-4e8a-9b61-0f2c7d9e1a34",
    ]
    head = fixture(LEGACY).read_bytes()
    scores = {a.slug: a.sniff("session-x.json", head) for a in all_adapters()}
    assert max(scores, key=lambda slug: scores[slug]) == QWEN


def test_index_reparses_an_older_chat_whole_never_appends(tmp_path):
    chats = tmp_path / ".qwen" / "tmp" / "h" / "chats"
    chats.mkdir(parents=True)
    path = Path(shutil.copy(fixture(LEGACY), chats))
    env = {"HOME": str(tmp_path)}
    conn = connect(tmp_path / "index.sqlite")
    sync(conn, [QwenAdapter()], env, tmp_path)
    with path.open("ab") as fh:  # old bytes unchanged, file longer: a JSONL source would append
        fh.write(b"\n")
    report = sync(conn, [QwenAdapter()], env, tmp_path)
    assert (report.reparsed, report.appended) == (1, 0)
    stored = queries.get_session(conn, "qwen:7c1e4a2b-5d3f-4e8a-9b61-0f2c7d9e1a34")
    assert stored is not None and len(stored.messages) == 6
