"""Golden tests for the Gemini CLI adapter (exact values).

Expected numbers come from a throwaway script over the raw files: the last record
per message ``id`` (after ``$rewindTo`` and ``$set.messages``), token fields
converted by hand (input − cached + tool, cached, output + thoughts).  The
``chats/`` files were written for agentlog from formats.md §4 (see SOURCES.md).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from agent_checks import accounted, buckets, calls, found_and_shown, only, roles
from agentlog.adapters.gemini_cli import GeminiCliAdapter, tool_name, usage_of
from agentlog.model import FilePart, ReasoningPart
from conftest import FIXTURES, fixture, parse_files, parse_one, shared_fixture

UPSERT = "gemini_cli/chats/session-2026-05-01T10-00-a1b2c3d4.jsonl"
CHECKPOINT = "gemini_cli/chats/session-2026-05-02T09-00-c0ffee00.jsonl"
CHILD = "gemini_cli/chats/a1b2c3d4-0000-4000-8000-000000000001/b2c3d4e5-0000-4000-8000-000000000002.jsonl"


def test_upsert_log_keeps_each_message_once_with_its_final_content():
    s = parse_one("gemini_cli", fixture(UPSERT))
    assert s.key == "gemini_cli:a1b2c3d4-0000-4000-8000-000000000001"
    # u2/a2 were rewound (a2, a billed response, is kept hidden with its usage); a1 and a3 were written twice.
    assert [(m.id.split(":")[1], m.flags) for m in s.messages] == [
        ("u1", []),
        ("a1", []),
        ("a2#rewound", ["abandoned"]),
        ("u3", []),
        ("a3", []),
        ("i1", ["meta"]),
    ]
    assert [m.id.split(":")[1] for m in s.messages if not m.hidden] == ["u1", "a1", "u3", "a3"]
    assert s.messages[0].id == "a1b2c3d4-0000-4000-8000-000000000001:u1"
    assert roles(s) == {"user": 2, "assistant": 2, "assistant*": 1, "system*": 1}
    a3 = s.messages[4]
    assert a3.text == "util.py holds the string helpers."
    assert [p.summary for p in a3.parts if isinstance(p, ReasoningPart)] == [
        "Reading: Summarise the helpers."
    ]
    shell = s.tool_calls()[0]
    assert (shell.tool, shell.raw_name, shell.input) == ("bash", "run_shell_command", {"command": "ls *.py"})
    assert shell.result is not None and shell.result.output == "main.py\nutil.py"
    assert calls(s) == (2, 2)
    # a1: 500/0/40+10; a2 (rewound, billed): 700−100 / 100 / 20; a3: 1000−600+20 / 600 / 50+30.
    assert buckets(s) == (1520, 700, 0, 150, 40)
    assert s.title == "Summarise util.py"
    assert s.diagnostics.skipped == {"superseded:message": 2, "rewound:message": 1}
    assert s.diagnostics.records_total == 13 and accounted(s)
    assert GeminiCliAdapter().resume_command(s) == "gemini --resume a1b2c3d4-0000-4000-8000-000000000001"


def test_set_messages_checkpoint_replaces_the_list():
    s = parse_one("gemini_cli", fixture(CHECKPOINT))
    assert [(m.id.split(":")[1], m.text) for m in s.messages] == [
        ("c1", "Hi"),
        ("c2", "Hello!"),
        ("c3", "Bye"),
    ]
    assert buckets(s) == (20, 10, 0, 5, 0)
    assert s.diagnostics.skipped == {"superseded:message": 2} and accounted(s)


def test_subagent_chat_links_to_its_parent_folder():
    child = only(parse_files("gemini_cli", fixture(CHILD)))
    assert (child.kind, child.parent_key) == ("subagent", "gemini_cli:a1b2c3d4-0000-4000-8000-000000000001")
    assert buckets(child) == (200, 0, 0, 10, 0)


def test_jsonl_v040_capture():
    s = parse_one("gemini_cli", fixture("gemini_cli/session-jsonl-v0.40.jsonl"))
    assert roles(s) == {"user": 1, "assistant": 2}
    assert calls(s) == (1, 1)
    # 11855−0 + 12069−11502 input, 11502 cached, 81 + 147 output.
    assert buckets(s) == (12422, 11502, 0, 228, 0)
    assert s.models == ["gemini-3-flash-preview"]


def test_legacy_documents():
    large = parse_one("gemini_cli", fixture("gemini_cli/session-large.json"))
    assert roles(large) == {"user": 2, "assistant": 4, "system*": 1}
    assert calls(large) == (2, 2)
    assert buckets(large) == (100, 0, 0, 10, 0)
    small = parse_one("gemini_cli", fixture("gemini_cli/session-small.json"))
    assert roles(small) == {"user": 1, "assistant": 1} and buckets(small) == (10, 0, 0, 5, 0)
    drift = parse_one("gemini_cli", fixture("gemini_cli/session-schema_drift.json"))
    assert drift.title == "Redacted session summary"
    assert roles(drift) == {"user": 1, "assistant": 1}
    assert any(isinstance(p, FilePart) and p.media_type == "image/png" for p in drift.messages[0].parts)
    cass = parse_one("gemini_cli", shared_fixture("gemini/cass-session-test.json"))
    assert [m.text for m in cass.messages] == ["Gemini hello", "Hello from Gemini!"]


def test_token_conversion():
    u = usage_of({"input": 1000, "output": 50, "cached": 600, "thoughts": 30, "tool": 20, "total": 1100})
    assert u is not None
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens, u.total_tokens) == (
        420,
        600,
        80,
        30,
        1100,
    )
    assert [tool_name(n) for n in ("run_shell_command", "replace", "github__create_issue")] == [
        "bash",
        "edit",
        "mcp__github__create_issue",
    ]


def test_found_under_home_and_shown(tmp_path):
    project = tmp_path / ".gemini" / "tmp" / "0b7dfb12"
    shutil.copytree(FIXTURES / "gemini_cli", project)
    (project / "logs.json").write_text('[{"sessionId":"x","messageId":0,"type":"user","message":"hi"}]')
    (project / "chats" / "checkpoint-save1.json").write_text('{"history":[]}')
    # A migrated legacy file next to its .jsonl is not read twice.
    shutil.copy(project / "chats" / "session-2026-05-02T09-00-c0ffee00.jsonl", project / "chats" / "x.tmp")
    (project / "chats" / "session-2026-05-02T09-00-c0ffee00.json").write_text(
        '{"sessionId":"old","messages":[]}'
    )
    sessions = found_and_shown("gemini_cli", tmp_path)
    assert len(sessions) == 9  # with session-written-damaged-text.json and written-project's chat
    # Two samples both call a message "m2": neither is taken for a replayed copy.
    assert not [m for s in sessions for m in s.messages if "replayed" in m.flags]
    assert "gemini_cli:old" not in {s.key for s in sessions}
    child = next(s for s in sessions if s.kind == "subagent")
    assert child.parent_key == "gemini_cli:a1b2c3d4-0000-4000-8000-000000000001"
    assert GeminiCliAdapter().default_roots({"GEMINI_CLI_HOME": "/g"}, tmp_path) == [Path("/g/.gemini/tmp")]


def test_a_set_of_messages_keeps_billed_usage_reads_project_root_and_cached_once(tmp_path):
    """Issue #12 rule 8 (gemini-cli ``chatRecordingService.ts`` ``$set``/``recordMessageTokens``,
    ``projectRegistry.ts`` ``.project_root``): the checkpoint rewrites the transcript,
    the billed reply it drops (m2) is kept hidden with its usage, the rewritten copy
    that lost its tokens (m4) keeps them, and m4's ``total`` shows its ``input``
    excludes ``cached``."""
    from agentlog.load import load_sessions
    from homes import LAYOUTS

    LAYOUTS["gemini_cli"](tmp_path)
    (session,) = [s for s in load_sessions(["gemini_cli"], {}, tmp_path) if s.id == "written-compress"]
    assert session.cwd == "/home/me/src/parser"
    assert [(m.id, m.role, m.flags) for m in session.messages] == [
        ("written-compress:m2", "assistant", ["abandoned"]),
        ("written-compress:c1", "user", []),
        ("written-compress:m3", "user", []),
        ("written-compress:m4", "assistant", []),
        ("written-compress:m5", "assistant", []),
    ]
    calls = [
        (m.usage.input_tokens, m.usage.cache_read_tokens, m.usage.output_tokens)
        for m in session.messages
        if m.usage
    ]
    assert calls == [(600, 400, 120), (310, 700, 50), (500, 0, 5)]
    assert (session.usage.input_tokens, session.usage.cache_read_tokens, session.usage.output_tokens) == (
        1410,
        1100,
        175,
    )
    assert session.message_count == 4
    d = session.diagnostics
    assert (d.records_total, d.records_used, d.skipped) == (10, 7, {"superseded:message": 3})


def test_usage_of_subtracts_cached_unless_total_says_it_is_apart():
    from agentlog.adapters.gemini_cli import usage_of

    inclusive = usage_of(
        {"input": 1000, "cached": 400, "output": 10, "thoughts": 5, "tool": 2, "total": 1017}
    )
    apart = usage_of({"input": 600, "cached": 400, "output": 10, "thoughts": 5, "tool": 2, "total": 1017})
    no_total = usage_of({"input": 1000, "cached": 400, "output": 10})
    assert (inclusive.input_tokens, inclusive.cache_read_tokens, inclusive.output_tokens) == (602, 400, 15)
    assert (apart.input_tokens, apart.cache_read_tokens, apart.output_tokens) == (602, 400, 15)
    assert (no_total.input_tokens, no_total.cache_read_tokens) == (600, 400)
