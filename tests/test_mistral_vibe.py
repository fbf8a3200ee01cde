"""Golden tests for the Mistral Vibe adapter (exact values).

Legacy expectations come from the raw files (lines by role, ``meta.json`` times and
``stats``); timestamps are the even spread the adapter documents, computed here by
hand.  The unified store under ``fixtures/mistral_vibe/unified/`` was written for
agentlog from formats.md §14.1 (see SOURCES.md): its expected transcript is the
fold of the chunk list and the journal ops, worked out by hand.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

from agent_checks import accounted, buckets, calls, found_and_shown, roles
from agentlog.adapters import SourceRef, get_adapter
from agentlog.load import build_sessions, parse_source
from agentlog.model import CompactionPart, Session
from conftest import FIXTURES, parse_files

VIBE = "mistral_vibe"


def legacy(folder: str) -> Session:
    adapter = get_adapter(VIBE)
    base = FIXTURES / VIBE / folder
    ref = SourceRef(agent=VIBE, path=str(base / "messages.jsonl"), sidecars=(str(base / "meta.json"),))
    [session] = build_sessions([(adapter, parse_source(adapter, ref))])
    return session


def unified_sessions() -> dict[str, Session]:
    adapter = get_adapter(VIBE)
    parsed = [(adapter, parse_source(adapter, ref)) for ref in adapter.discover(FIXTURES / VIBE / "unified")]
    return {s.id: s for s in build_sessions(parsed)}


def test_legacy_basic_spreads_times_and_carries_session_usage():
    s = legacy("legacy-session-basic")
    assert s.key == "mistral_vibe:abc123def-0000-0000-0000-000000000000"
    assert (s.title, s.cwd, s.git_branch) == (
        "Create a Python function to sort a list",
        "/home/user/projects/myapp",
        "main",
    )
    assert roles(s) == {"user": 2, "assistant": 3, "system*": 1}
    # 5 lines over 10:00:00 → 10:05:00: one every 75 s.
    stamps = [m.timestamp for m in s.messages if "approximate_time" in m.flags]
    assert stamps == [datetime(2026, 6, 13, 10, 0, 0, tzinfo=UTC).replace(minute=m // 60, second=m % 60)
                      for m in (0, 75, 150, 225, 300)]  # fmt: skip
    assert buckets(s) == (100, 0, 0, 50, 0)
    usage_note = s.messages[-1]
    assert usage_note.flags == ["synthetic", "meta"] and "Session-level cumulative" in usage_note.text
    assert s.models == ["mistral-medium-3.5"]
    assert s.diagnostics.records_total == 5 and accounted(s)
    assert get_adapter(VIBE).resume_command(s) == "vibe --resume abc123def-0000-0000-0000-000000000000"


def test_legacy_tools():
    s = legacy("legacy-session-with-tools")
    assert roles(s) == {"user": 1, "assistant": 2, "system*": 1}
    assert calls(s) == (1, 1)
    call = s.tool_calls()[0]
    assert (call.tool, call.raw_name, call.input) == ("read", "read_file", {"path": "README.md"})
    assert call.result is not None and call.result.output == "# My Project\n\nThis is a sample project."
    assert buckets(s) == (200, 0, 0, 100, 0)


def test_unified_store_fold_status_and_subagent():
    sessions = unified_sessions()
    root, child = sessions["sess-unified-0001"], sessions["child-0001"]
    # Chunk: user, reasoning (removed later), effect a2 (replaced: completed);
    # journal: assistant a3, effect a4 (spawn), effect a5 (running), compaction.
    assert [m.id for m in root.messages] == [
        "user-t1-1",
        "effect-a2",
        "assistant-a3",
        "effect-a4",
        "effect-a5",
        "checkpoint-compaction-c1",
        "sess-unified-0001@usage",
    ]
    assert calls(root) == (2, 3)
    bash, spawn, running = root.tool_calls()
    assert (bash.tool, bash.raw_name, bash.result and bash.result.output) == (
        "bash",
        "file_system.bash",
        "12\n",
    )
    assert (spawn.tool, spawn.call_id) == ("task", "a4") and running.result is None
    assert isinstance(root.messages[5].parts[0], CompactionPart)
    assert (root.status, root.status_evidence) == ("needs_you", "session.status=blocked")  # an approval or a question waits
    assert root.title == "Count the files"
    assert buckets(root) == (1500, 3500, 0, 300, 0)  # 5000 input ⊇ 3500 cached
    assert root.diagnostics.skipped == {"ignored:action_result": 1} and accounted(root)
    assert (child.kind, child.parent_key, child.parent_tool_call_id) == ("subagent", root.key, "a4")
    assert (child.status, roles(child)) == ("done", {"user": 1, "assistant": 1, "system*": 1})
    assert buckets(child) == (800, 0, 0, 40, 0)


def test_unified_store_missing_pieces_cost_only_diagnostics(tmp_path):
    store = tmp_path / "unified" / "sess-unified-0001"
    shutil.copytree(FIXTURES / VIBE / "unified" / "sess-unified-0001", store)
    for chunk in (store / "chunks").iterdir():
        chunk.unlink()
    with open(store / "journal" / "0000000000000001.jsonl", "ab") as fh:
        fh.write(
            b'{"payload":{"delta":[{"op":"remove_entry","id":"nope"}]},"type":"projection_delta"}\n{"torn'
        )
    adapter = get_adapter(VIBE)
    [ref] = adapter.discover(tmp_path)
    [s] = build_sessions([(adapter, parse_source(adapter, ref))])
    assert s.diagnostics.skipped == {
        "missing:chunk": 1,
        "missing_entry:remove_entry": 2,
        "missing_entry:replace_entry": 1,
        "ignored:action_result": 1,
        "invalid_json": 1,
    }
    assert [m.id for m in s.messages][:2] == ["assistant-a3", "effect-a4"]


def test_found_under_home_and_shown(tmp_path):
    logs = tmp_path / ".vibe" / "logs" / "session"
    shutil.copytree(FIXTURES / VIBE / "legacy-session-basic", logs / "session_20260613_100000_abc123de")
    parent = logs / "session_20260613_110000_def456gh"
    shutil.copytree(FIXTURES / VIBE / "legacy-session-with-tools", parent)
    shutil.copytree(FIXTURES / VIBE / "legacy-session-basic", parent / "agents" / "explore_1")
    meta = parent / "agents" / "explore_1" / "meta.json"
    meta.write_text(meta.read_text().replace("abc123def-0000", "child00000-0000"))
    shutil.copytree(FIXTURES / VIBE / "unified", logs / "unified")
    sessions = {s.id: s for s in found_and_shown(VIBE, tmp_path)}
    assert len(sessions) == 5
    sub = sessions["child00000-0000-0000-0000-000000000000"]
    assert (sub.kind, sub.parent_key) == ("subagent", "mistral_vibe:def456ghi-0000-0000-0000-000000000000")
    assert get_adapter(VIBE).default_roots({"VIBE_HOME": "/v"}, tmp_path) == [Path("/v/logs/session")]


PRE2 = "mistral_vibe_pre2/session_20251118_093012_5f0c2a9e.json"


def test_pre2_single_document_session():
    # Written for agentlog from mistral-vibe's pre-2.0 InteractionLogger: the raw
    # file has 5 messages (system prompt, user, tool call, tool result, answer).
    adapter = get_adapter(VIBE)
    ref = SourceRef(agent=VIBE, path=str(FIXTURES / PRE2))
    [s] = build_sessions([(adapter, parse_source(adapter, ref))])
    assert s.key == "mistral_vibe:5f0c2a9e-8b41-4d6a-9c3e-2a7d1f6b0e55"
    assert (s.title, s.cwd, s.git_branch, s.models) == (
        "Count the lines in setup.py",
        "/home/dev/demo",
        "main",
        ["devstral-medium"],
    )
    # The system prompt and the usage note are meta; the tool result is merged.
    assert roles(s) == {"system*": 2, "user": 1, "assistant": 2}
    assert s.messages[0].text.startswith("You are Vibe")
    assert calls(s) == (1, 1)
    call = s.tool_calls()[0]
    assert (call.tool, call.input) == ("bash", {"command": "wc -l setup.py"})
    assert call.result is not None and "stdout: 42 setup.py" in call.result.output
    assert buckets(s) == (6120, 0, 0, 158, 0)
    assert (s.usage.cost_usd, s.usage.cost_source) == (0.002764, "recorded")
    start = datetime(2025, 11, 18, 9, 30, 12, 402113, tzinfo=UTC)
    end = datetime(2025, 11, 18, 9, 31, 2, 918554, tzinfo=UTC)
    step = (end - start) / 4
    stamps = [m.timestamp for m in s.messages if "approximate_time" in m.flags]
    assert stamps == [start, start + step, start + 2 * step, end]  # line 4, the result, is merged
    assert s.diagnostics.records_total == 5 and accounted(s)


def test_pre2_document_found_beside_session_folders(tmp_path):
    logs = tmp_path / ".vibe" / "logs" / "session"
    shutil.copytree(FIXTURES / VIBE / "legacy-session-basic", logs / "session_20260613_100000_abc123de")
    shutil.copy(FIXTURES / PRE2, logs)
    (logs / "notes").mkdir()
    shutil.copy(FIXTURES / PRE2, logs / "notes" / "session_20251118_093012_5f0c2a9f.json")  # not Vibe's
    sessions = found_and_shown(VIBE, tmp_path)
    assert sorted(s.id for s in sessions) == [
        "5f0c2a9e-8b41-4d6a-9c3e-2a7d1f6b0e55",
        "abc123def-0000-0000-0000-000000000000",
    ]
    head = (FIXTURES / PRE2).read_bytes()
    assert get_adapter(VIBE).sniff("session_20251118_093012_5f0c2a9e.json", head) == 0.8


def test_the_meta_json_model_reaches_the_session_usage_it_belongs_to(tmp_path):
    """Issue #12 rule 13: a legacy Vibe session's usage is only ``meta.json``
    ``stats``; its carrier takes ``meta.json`` ``model`` (else
    ``config.active_model``), so the call is priced."""
    from agentlog.usage import calls_from_sessions

    folder = tmp_path / "session_written"
    folder.mkdir()
    (folder / "messages.jsonl").write_text(
        '{"role": "user", "content": "hi", "message_id": "w1"}\n{"role": "assistant", "content": "hello", "message_id": "w2"}\n'
    )
    meta = {
        "session_id": "written-vibe",
        "start_time": "2026-03-11T10:00:00Z",
        "end_time": "2026-03-11T10:01:00Z",
        "config": {"active_model": "devstral-small"},
        "stats": {"session_prompt_tokens": 120, "session_completion_tokens": 30},
    }
    (folder / "meta.json").write_text(json.dumps(meta))
    (session,) = parse_files(
        "mistral_vibe",
        folder / "messages.jsonl",
        sidecars={folder / "messages.jsonl": (folder / "meta.json",)},
    )
    calls = [(c.model, c.usage.input_tokens, c.usage.output_tokens) for c in calls_from_sessions([session])]
    assert calls == [("devstral-small", 120, 30)]
    assert [(m.role, m.model) for m in session.messages] == [
        ("user", None),
        ("assistant", "devstral-small"),
        ("system", "devstral-small"),
    ]
