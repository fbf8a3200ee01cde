"""Golden tests for the Claude Code adapter over real fixtures (exact values).

Expected numbers were computed independently of the adapter (a throwaway
script over the raw JSON: distinct ``message.id`` per sidechain flag, largest
usage copy kept) and cross-checked with the issue's acceptance figures.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from agentlog.adapters.claude_code import ClaudeCodeAdapter, prompt_title, tool_name
from agentlog.model import CompactionPart, ReasoningPart, Session, ToolCallPart
from conftest import fixture, parse_files, parse_one, shared_fixture

CC = "claude_code"


def roles(session: Session) -> dict[str, int]:
    """Messages by role; hidden ones counted as ``role*``."""
    return dict(Counter(m.role + ("*" if m.hidden else "") for m in session.messages))


def buckets(session: Session) -> tuple[int, int, int, int, int]:
    u = session.usage
    return (
        u.input_tokens,
        u.output_tokens,
        u.cache_write_5m_tokens,
        u.cache_write_1h_tokens,
        u.cache_read_tokens,
    )


def paired(session: Session) -> tuple[int, int]:
    calls = session.tool_calls()
    return sum(1 for c in calls if c.result is not None), len(calls)


def test_v1_0_17_session_with_tools_acceptance():
    s = parse_one(CC, fixture("claude_code/v1.0.17-real-session-with-tools.jsonl"))
    assistant = [m for m in s.messages if m.role == "assistant"]
    assert len(assistant) == 24  # 40 assistant lines, merged by message.id
    assert buckets(s) == (91, 2266, 16072, 0, 503769)
    assert s.usage.total_tokens == 91 + 2266 + 16072 + 503769
    assert paired(s) == (30, 30)
    assert roles(s) == {"user": 6, "assistant": 24}
    assert s.title == "/init"
    assert s.cwd == "/Users/USER/dev/ai-music"
    assert s.models == ["claude-sonnet-4-20250514"]
    assert s.diagnostics.records_total == 76 and s.diagnostics.records_used == 76
    assert s.resume_command == "claude --resume ba79134d-b6e9-4867-af0c-6941038c9e4b"  # its records' id


def test_summary_title_and_interruption():
    s = parse_one(CC, fixture("claude_code/v1.0.17-real-session-with-summary.jsonl"))
    assert s.title == "AI Music Generation: Diverse Embedding Mapping"
    assert buckets(s) == (88, 278, 16000, 0, 44544)
    interrupted = [m for m in s.messages if "interrupted" in m.flags]
    assert [m.text for m in interrupted] == ["[Request interrupted by user for tool use]"]
    assert interrupted[0].role == "user" and "synthetic" in interrupted[0].flags
    assert paired(s) == (7, 7)


def test_summary_only_file_is_a_titled_empty_session():
    s = parse_one(CC, fixture("claude_code/v1.0.17-summary-only-file.jsonl"))
    assert s.title == "AI Music Generation from Word Embeddings"
    assert s.messages == [] and s.usage.total_tokens == 0
    assert s.diagnostics.records_used == 1


def test_inline_sidechains_become_linked_subagents():
    sessions = parse_files(CC, fixture("claude_code/v1.0.108-inline-sidechain-task.jsonl"))
    main = next(s for s in sessions if s.kind == "main")
    subs = sorted((s for s in sessions if s.kind == "subagent"), key=lambda s: s.started_at)
    assert main.title.startswith("/orchestrator @CLAUDE.md")
    assert buckets(main) == (64, 2003, 26074, 0, 190261)
    assert [s.id[:18] for s in subs] == ["sidechain-6340ddef", "sidechain-83e2917c"]
    assert [buckets(s) for s in subs] == [(18, 485, 13436, 0, 25737), (47, 1141, 8237, 0, 108261)]
    assert [s.parent_key for s in subs] == [main.key, main.key]
    # Linked to the spawning Task call by its prompt.
    assert [s.parent_tool_call_id for s in subs] == [
        "toolu_014YF9TXhDRR7BnpasNJ7gjC",
        "toolu_01LKfUwrsnof18CpWZQcJH44",
    ]
    task_ids = {c.call_id for c in main.tool_calls() if c.tool == "task"}
    assert {s.parent_tool_call_id for s in subs} <= task_ids
    assert all(m.is_sidechain for s in subs for m in s.messages)
    assert [paired(s) for s in subs] == [(2, 2), (6, 6)]
    # 53 lines, 22 of them sidechain: every line used once, by the main session's source.
    assert main.diagnostics.records_total == 53 == main.diagnostics.records_used


def test_split_response_keeps_final_usage_copy():
    s = parse_one(CC, fixture("claude_code/v1.0.108-inline-sidechain-task.jsonl"))
    # One API response over two lines (text, then tool_use): output 3 then 263 — 263 wins.
    first = next(m for m in s.messages if m.role == "assistant")
    assert [type(p).__name__ for p in first.parts] == ["TextPart", "ToolCallPart"]
    assert first.usage is not None and first.usage.output_tokens == 263


def test_v2_0_root_agent_file_links_to_parent_by_session_id():
    s = parse_files(CC, fixture("claude_code/v2.0.28-legacy-root-agent-file/agent-test-hash-123.jsonl"))[0]
    assert (s.id, s.kind) == ("agent-test-hash-123", "subagent")
    assert s.parent_key == "claude_code:5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
    assert buckets(s) == (100, 10, 0, 0, 0)
    assert s.resume_command is None


def test_v2_1_subagents_folder_with_meta():
    root = fixture("claude_code/v2.1-subagents-layout")
    parent_file = root / "0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f.jsonl"
    sub_dir = root / "0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f" / "subagents"
    sub_file = sub_dir / "agent-a0ad4f44468bdf20d.jsonl"
    sessions = parse_files(
        CC, parent_file, sub_file, sidecars={sub_file: (sub_dir / "agent-a0ad4f44468bdf20d.meta.json",)}
    )
    parent, child = sessions
    assert parent.kind == "main" and parent.title == "Delegate a repo search to a subagent"
    assert (child.id, child.kind, child.subagent_type) == (
        "agent-a0ad4f44468bdf20d",
        "subagent",
        "general-purpose",
    )
    assert child.parent_key == parent.key
    assert child.title == "Search the repo for TODO comments"
    # The child's tool_result has no tool_use_id and its tool_use no id: kept unpaired, never dropped.
    assert roles(child) == {"user": 1, "assistant": 1, "tool": 1}
    assert child.diagnostics.skipped == {"ignored:attachment": 1}


def test_shape_catalog_2_1_counts_every_record():
    sessions = parse_files(CC, fixture("claude_code/v2.1-shape-catalog-trimmed.jsonl"))
    main = next(s for s in sessions if s.kind == "main")
    d = main.diagnostics
    assert d.records_total == 89
    assert d.records_total == d.records_used + sum(d.skipped.values())
    assert d.skipped["ignored:attachment"] == 34  # the 4 queued_command attachments are prompts
    assert main.title == "Stage0 small fixture"  # custom-title beats ai-title and summary
    compaction = [p for m in main.messages for p in m.parts if isinstance(p, CompactionPart)]
    assert compaction[0].trigger == "auto" and compaction[0].tokens_before == 120000
    assert any("api_error" in m.flags for m in main.messages)
    thinking = [p for m in main.messages for p in m.parts if isinstance(p, ReasoningPart)]
    assert thinking and thinking[0].text == "[trimmed for fixture]"
    side = next(s for s in sessions if s.kind == "subagent")
    assert any("compaction_summary" in m.flags for m in side.messages)
    assert any("interrupted" in m.flags for m in side.messages)  # isAbortedMidStream


def test_edge_cases_corrupt_lines_are_counted_not_raised():
    s = parse_one(CC, fixture("claude_code/edge-cases.jsonl"))
    d = s.diagnostics
    assert d.skipped == {"not_an_object": 3, "malformed:message": 1, "empty_message": 1}
    assert d.unknown_types == {"<none>": 1}
    assert d.records_total == 19
    assert roles(s) == {"user": 5, "assistant": 4, "user*": 2, "system*": 1}
    assert buckets(s) == (488, 435, 0, 0, 0)
    meta = [m.text for m in s.messages if "meta" in m.flags]
    assert meta[0].startswith("Caveat: The messages below") and meta[1].startswith("<local-command-stdout>")


def test_schema_drift_top_level_tool_lines_pair_by_name():
    s = parse_one(CC, fixture("claude_code/schema-drift.jsonl"))
    calls = s.tool_calls()
    assert [(c.tool, c.result.output if c.result else None) for c in calls] == [("bash", "# Title\n\nBody\n")]


def test_costusd_lines_without_type_are_recorded_costs():
    s = parse_one(CC, fixture("claude_code/usage-costUSD-minimal.jsonl"))
    assert buckets(s) == (600, 250, 75, 0, 70)
    assert s.usage.cost_usd == pytest.approx(1.02)
    assert s.usage.cost_source == "recorded"
    assert s.models == ["claude-sonnet-4-20250514", "claude-opus-4-20250514"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("representative-messages.jsonl", ((218, 445, 0, 0, 0), (2, 2), {"user": 4, "assistant": 5})),
        ("todowrite-examples.jsonl", ((883, 328, 0, 0, 0), (3, 3), {"user": 2, "assistant": 6})),
        (
            "v1.0.98-session.jsonl",
            ((93, 953, 12698, 0, 103219), (12, 12), {"user": 1, "user*": 1, "assistant": 7}),
        ),
    ],
)
def test_golden_small_sessions(name, expected):
    s = parse_one(CC, fixture(f"claude_code/{name}"))
    assert (buckets(s), paired(s), roles(s)) == expected


def test_todo_and_mcp_tool_names():
    assert tool_name("TodoWrite") == "todo"
    assert tool_name("MultiEdit") == "edit"
    assert tool_name("mcp__github__create_issue") == "mcp__github__create_issue"
    assert tool_name("SomeNewTool") == "some_new_tool"
    s = parse_one(CC, fixture("claude_code/todowrite-examples.jsonl"))
    assert {c.tool for c in s.tool_calls()} == {"todo"}
    assert all(isinstance(c, ToolCallPart) and c.result.structured is not None for c in s.tool_calls())


def test_prompt_title_for_slash_commands():
    text = (
        "<command-message>x</command-message>\n<command-name>/review</command-name>\n"
        "<command-args>pr 12</command-args>"
    )
    assert prompt_title(text) == "/review pr 12"
    assert prompt_title("  plain prompt ") == "plain prompt"


def test_sniff_recognises_claude_lines():
    adapter = ClaudeCodeAdapter()
    head = fixture("claude_code/v1.0.98-session.jsonl").read_bytes()[:4096]
    assert adapter.sniff("x.jsonl", head) >= 0.9
    assert adapter.sniff("x.jsonl", b'{"type":"session_meta","payload":{}}') == 0.0
    huge_prompt = (  # the head of a record whose prompt is megabytes: no "type" or "uuid" within it
        b'{"type":"permission-mode","permissionMode":"default","sessionId":"s"}\n'
        b'{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/p","sessionId":"s",'
        b'"version":"2.1.140","message":{"role":"user","content":"' + b"x" * 70_000
    )[: 64 * 1024]
    assert adapter.sniff("x.jsonl", huge_prompt) == 0.9


def test_default_roots_follow_env(tmp_path: Path):
    adapter = ClaudeCodeAdapter()
    home = tmp_path
    assert adapter.default_roots({}, home) == [home / ".claude/projects", home / ".config/claude/projects"]
    assert adapter.default_roots({"XDG_CONFIG_HOME": "/x"}, home)[1] == Path("/x/claude/projects")
    env = {"CLAUDE_CONFIG_DIR": "/a, /b/projects"}
    assert adapter.default_roots(env, home) == [Path("/a/projects"), Path("/b/projects")]


def test_unlicensed_shared_fixtures_parse(request):
    # Files with no visible licence are read from ../shared, never copied.
    s = parse_one(CC, shared_fixture("claude-code/branching-parentUuid.jsonl"))
    assert roles(s) == {"user": 3, "assistant": 3}
    s = parse_one(CC, shared_fixture("claude-code/non-message-parents.jsonl"))
    assert s.diagnostics.skipped == {"ignored:progress": 3}


def _line(**kw) -> str:
    import json

    base = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/w",
        "version": "2.1.200",
        "timestamp": "2026-01-01T00:00:00Z",
    }
    return json.dumps({**base, **kw}, separators=(",", ":")) + "\n"


def _assistant(uuid: str, mid: str, out: int, **kw) -> str:
    usage = {
        "input_tokens": 10,
        "output_tokens": out,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 0,
    }
    msg = {
        "id": mid,
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "hi"}],
        "usage": usage,
    }
    return _line(type="assistant", uuid=uuid, requestId="r-" + mid, message=msg, **kw)


def test_workflow_agents_nest_under_their_session(tmp_path):
    """2.1 Workflow agents live one level deeper: subagents/workflows/wf_*/agent-*.jsonl."""
    from agentlog.load import load_sessions

    project = tmp_path / ".claude/projects/-w"
    wf = project / "sess-1/subagents/workflows/wf_0a1b2c3d-4e5"
    wf.mkdir(parents=True)
    (project / "sess-1.jsonl").write_text(
        _line(
            type="user",
            uuid="u1",
            sessionId="sess-1",
            message={"role": "user", "content": "run the workflow"},
        )
    )
    (wf / "agent-w1.jsonl").write_text(
        _line(
            type="user",
            uuid="w-u1",
            sessionId="sess-1",
            isSidechain=True,
            message={"role": "user", "content": "phase 1"},
        )
        + _assistant("w-a1", "msg_w1", 42, sessionId="sess-1", isSidechain=True)
    )
    (wf / "agent-w1.meta.json").write_text('{"agentType":"workflow-subagent","description":"Phase one"}')
    (wf / "journal.jsonl").write_text('{"type":"launched"}\n')
    sessions = {s.id: s for s in load_sessions(env={}, home=tmp_path)}
    assert set(sessions) == {"sess-1", "agent-w1"}
    child = sessions["agent-w1"]
    assert (child.parent_key, child.subagent_type, child.title) == (
        "claude_code:sess-1",
        "workflow-subagent",
        "Phase one",
    )
    assert child.usage.output_tokens == 42


def test_replayed_history_in_a_resumed_file_is_counted_once(tmp_path):
    """A resumed session's file replays earlier responses (same message.id): usage once."""
    from agentlog.load import load_sessions

    project = tmp_path / ".claude/projects/-w"
    project.mkdir(parents=True)
    first = _line(type="user", uuid="u1", message={"role": "user", "content": "start"}) + _assistant(
        "a1", "msg_1", 50
    )
    (project / "old.jsonl").write_text(first)
    # Replayed lines keep their original timestamps; the resumed file then adds its own.
    resumed = first + _assistant("a2", "msg_2", 7, timestamp="2026-01-02T00:00:00Z")
    (project / "new.jsonl").write_text(resumed)
    sessions = {s.id: s for s in load_sessions(env={}, home=tmp_path)}
    assert sessions["old"].usage.output_tokens == 50
    assert sessions["new"].usage.output_tokens == 7
    replay = next(m for m in sessions["new"].messages if m.id == "msg_1")
    assert replay.usage is None and "replayed" in replay.flags and replay.hidden


def test_user_roots_are_claimed_by_content(tmp_path):
    """Under --root, a Codex rollout is not parsed as Claude Code (and vice versa)."""
    from agentlog.adapters import all_adapters
    from agentlog.load import LoadReport, discover_sources

    shutil_src = fixture("claude_code/v1.0.98-session.jsonl")
    (tmp_path / "a.jsonl").write_bytes(shutil_src.read_bytes())
    (tmp_path / "notes.jsonl").write_text('{"hello": "world"}\n')
    report = LoadReport()
    found = discover_sources(all_adapters(), {}, tmp_path / "nohome", [tmp_path], report)
    assert [(a.slug, Path(r.path).name) for a, r in found] == [("claude_code", "a.jsonl")]


# --- issue #12 rules 5 and 6 ----------------------------------------------------------------


def _written_home(tmp_path: Path, *names: str) -> Path:
    project = tmp_path / ".claude/projects/-w"
    for name in names:
        source = fixture(f"claude_code/{name}")
        target = project / source.relative_to(source.parents[len(Path(name).parts) - 1])
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
    return tmp_path


RESUMED = (
    "written-resumed/5a1e0000-0000-4000-8000-000000000001.jsonl",
    "written-resumed/5a1e0000-0000-4000-8000-000000000002.jsonl",
)


def test_replayed_prompts_of_a_resumed_file_are_flagged_like_their_replies(tmp_path):
    """A resumed file re-persists the earlier chain with the same uuids (agentsview
    claude_lineage.go): its copied prompts are ``replayed``, so it counts and is
    titled by its own prompts only; the original keeps all of them."""
    from agentlog.load import load_sessions

    home = _written_home(tmp_path, *RESUMED)
    sessions = {s.id[-1]: s for s in load_sessions(["claude_code"], {}, home)}
    original, resumed = sessions["1"], sessions["2"]
    assert (original.title, original.message_count, original.usage.output_tokens) == (
        "add logging to the worker",
        4,
        100,
    )
    assert [(m.id, m.flags) for m in original.messages] == [
        ("r-u1", []), ("msg_r1", []), ("r-u2", []), ("msg_r2", []),
    ]  # fmt: skip
    assert (resumed.title, resumed.message_count, resumed.usage.output_tokens) == ("ship it", 2, 7)
    assert [(m.id, m.role, m.flags) for m in resumed.messages] == [
        ("r-u1", "user", ["replayed"]),
        ("msg_r1", "assistant", ["replayed"]),
        ("r-u2", "user", ["replayed"]),
        ("msg_r2", "assistant", ["replayed"]),
        ("r-u3", "user", []),
        ("msg_r3", "assistant", []),
    ]


def test_replayed_prompts_through_the_index_equal_memory(tmp_path, private_index):
    from agentlog.adapters import get_adapter
    from agentlog.index.db import connect
    from agentlog.index.sync import sync

    home = _written_home(tmp_path, *RESUMED)
    conn = connect(tmp_path / "index.sqlite")
    sync(conn, [get_adapter("claude_code")], {}, home)
    rows = conn.execute("SELECT id, title, message_count FROM sessions ORDER BY id").fetchall()
    assert rows == [
        ("5a1e0000-0000-4000-8000-000000000001", "add logging to the worker", 4),
        ("5a1e0000-0000-4000-8000-000000000002", "ship it", 2),
    ]
    # the resumed file grows (parsed from where it stopped): its title stays its own
    resumed = home / ".claude/projects/-w/written-resumed/5a1e0000-0000-4000-8000-000000000002.jsonl"
    with resumed.open("a") as fh:
        fh.write(
            _line(
                type="user",
                uuid="r-u4",
                sessionId=resumed.stem,
                message={"role": "user", "content": "thanks"},
            )
        )
    sync(conn, [get_adapter("claude_code")], {}, home)
    rows = conn.execute("SELECT id, title, message_count FROM sessions ORDER BY id").fetchall()
    assert rows[1] == ("5a1e0000-0000-4000-8000-000000000002", "ship it", 3)


def test_a_prompt_and_a_reply_sharing_an_id_are_no_replay(tmp_path):
    """Only copies of the same role are one message (a synthetic fixture's user
    ``uuid`` "msg_001" is not another file's ``message.id`` "msg_001")."""
    from agentlog.load import load_sessions

    project = tmp_path / ".claude/projects/-w"
    project.mkdir(parents=True)
    (project / "a.jsonl").write_text(
        _line(type="user", uuid="msg_1", sessionId="a", message={"role": "user", "content": "hi"})
    )
    (project / "b.jsonl").write_text(_assistant("x1", "msg_1", 5))
    sessions = {s.id: s for s in load_sessions(["claude_code"], {}, tmp_path)}
    assert [m.flags for m in sessions["a"].messages] == [[]]
    assert sessions["b"].usage.output_tokens == 5


def test_queued_commands_are_prompts_and_task_notifications_system_messages():
    """``attachment``/``queued_command`` (2.1.x; agentsview ``extractQueuedCommand``)."""
    session = parse_one("claude_code", fixture("claude_code/written-queued-command.jsonl"))
    assert [(m.id, m.role, m.flags, m.text[:40]) for m in session.messages] == [
        ("q-u1", "user", [], "run the test suite"),
        ("msg_q1", "assistant", [], ""),
        ("q-att1", "user", [], "also check the linter"),
        ("q-att3", "system", ["meta"], "<task-notification>\n<task-id>bash_1</tas"),
        ("q-att4", "user", [], "and this screenshot"),
        ("msg_q2", "assistant", [], "Tests pass; the linter is clean."),
    ]
    shot = session.messages[4]
    assert [(type(p).__name__, getattr(p, "media_type", None)) for p in shot.parts] == [
        ("FilePart", "image/png"),
        ("TextPart", None),
    ]
    assert session.messages[2].timestamp is not None and session.messages[2].timestamp.second == 3
    assert session.message_count == 5
    assert session.title == "run the test suite"
    d = session.diagnostics
    assert (d.records_total, d.records_used) == (9, 7)
    assert d.skipped == {"ignored:attachment": 1, "empty:queued_command": 1}
    assert (session.usage.output_tokens, session.usage.cache_read_tokens) == (31, 1000)


# --- issue #12 rule 7: duplicate files are decided by content ------------------------------

COPY_ID = "7e57c0de-0000-4000-8000-00000000c0de"


def _sync_rows(home: Path, tmp_path: Path) -> list[tuple[str, str | None, int]]:
    from agentlog.adapters import get_adapter
    from agentlog.index.db import connect
    from agentlog.index.sync import sync

    conn = connect(tmp_path / "rule7.sqlite")
    sync(conn, [get_adapter("claude_code")], {}, home)
    return conn.execute("SELECT id, resume_command, message_count FROM sessions ORDER BY id").fetchall()


def test_a_renamed_file_is_the_session_its_records_name():
    (session,) = parse_files(CC, fixture("claude_code/written-renamed-copy.jsonl"))
    assert (session.key, session.id, session.kind) == (f"claude_code:{COPY_ID}", COPY_ID, "main")
    assert session.resume_command == f"claude --resume {COPY_ID}"
    assert session.title == "Renamed copy of a session"  # the summary before the first sessionId line
    assert [m.id for m in session.messages] == ["c-u1", "msg_c1"]


def test_the_same_session_under_two_names_is_one_session_named_by_its_records(tmp_path):
    from agentlog.adapters import SourceRef
    from agentlog.load import LoadReport, load_sessions
    from agentlog.usage import calls_from_sessions
    from agentlog.usage.scan import scan_calls

    project = tmp_path / ".claude/projects/-w-copy"
    (project / "backup").mkdir(parents=True)
    data = fixture("claude_code/written-renamed-copy.jsonl").read_bytes()
    (project / f"{COPY_ID}.jsonl").write_bytes(data)
    (project / "backup" / "session (copy).jsonl").write_bytes(data)
    report = LoadReport()
    sessions = load_sessions(["claude_code"], {}, tmp_path, report=report)
    assert [(s.id, s.resume_command, s.message_count) for s in sessions] == [
        (COPY_ID, f"claude --resume {COPY_ID}", 2)
    ]
    assert report.duplicates == [str(project / "backup" / "session (copy).jsonl")]
    assert _sync_rows(tmp_path, tmp_path) == [(COPY_ID, f"claude --resume {COPY_ID}", 2)]
    refs = [SourceRef(agent=CC, path=str(p)) for p in sorted(project.rglob("*.jsonl"))]
    fast = [(c.session_key, c.usage.total_tokens) for c in scan_calls(refs)]
    assert fast == [(f"claude_code:{COPY_ID}", 2039)]
    assert fast == [(c.session_key, c.usage.total_tokens) for c in calls_from_sessions(sessions)]


def test_two_files_of_one_name_holding_different_sessions_are_two_sessions(tmp_path):
    """``p1/chat.jsonl`` and ``p2/chat.jsonl``: no message in common, so the later
    one is kept under ``chat~<crc of its path>`` (:func:`agentlog.rules.distinct_id`)."""
    from agentlog.load import LoadReport, load_sessions
    from agentlog.rules import distinct_id

    first = tmp_path / ".claude/projects/p1/chat.jsonl"
    second = tmp_path / ".claude/projects/p2/chat.jsonl"
    for path, uuid, text, when in ((first, "n-1", "one", "01"), (second, "n-2", "two", "02")):
        path.parent.mkdir(parents=True)
        line = _line(
            type="user",
            uuid=uuid,
            timestamp=f"2026-01-{when}T00:00:00Z",
            message={"role": "user", "content": text},
        )
        path.write_text(line)
    report = LoadReport()
    sessions = load_sessions(["claude_code"], {}, tmp_path, report=report)
    other = distinct_id("chat", str(second))
    expected = sorted([("chat", "claude --resume chat", 1), (other, "claude --resume chat", 1)])
    assert (
        sorted((s.id, s.resume_command, s.message_count) for s in sessions) == expected
    )  # the real id resumes
    assert sorted(s.title or "" for s in sessions) == ["one", "two"]
    assert report.duplicates == []
    assert sorted(_sync_rows(tmp_path, tmp_path)) == expected
