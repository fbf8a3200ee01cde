"""Golden tests for the Codex adapter (exact values).

Expected numbers were computed independently of the adapter: a throwaway script
over the raw JSONL (token-count deltas of ``total_token_usage``, prompt/echo
pairing, record types by reason), cross-checked by hand for the synthetic
fixtures written for this project (``rollout-synthetic-*``, see
``fixtures/SOURCES-codex.md``).
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agentlog.adapters import SourceRef
from agentlog.adapters.codex import CodexAdapter, default_model, split_patch, tool_name, uuid7_ms
from agentlog.load import LoadReport, build_sessions, load_sessions, parse_source
from agentlog.model import CompactionPart, FilePart, ReasoningPart, Session, TextPart, ToolCallPart
from agentlog.query import SessionFilter
from agentlog.rules import replayed_prefix
from conftest import fixture, parse_files, parse_one, shared_fixture
from fuzz import checks
from test_cli import run
from test_usage import usage_json

CODEX = "codex"
ADAPTER = CodexAdapter()


def roles(session: Session) -> dict[str, int]:
    """Messages by role; ``meta`` ones counted as ``role*``, replayed ones as ``role~``."""
    out: Counter[str] = Counter()
    for m in session.messages:
        out[m.role + ("*" if "meta" in m.flags else "") + ("~" if "replayed" in m.flags else "")] += 1
    return dict(out)


def buckets(session: Session) -> tuple[int, int, int, int, int]:
    """(input, cache read, cache write 5m, output, reasoning) of the session."""
    u = session.usage
    return u.input_tokens, u.cache_read_tokens, u.cache_write_5m_tokens, u.output_tokens, u.reasoning_tokens


def calls(session: Session) -> tuple[int, int]:
    """(tool calls with a result, tool calls); orphan results (``tool`` messages) excluded."""
    real = [c for m in session.messages if m.role != "tool" for c in m.parts if isinstance(c, ToolCallPart)]
    return sum(1 for c in real if c.result is not None), len(real)


def accounted(session: Session) -> bool:
    d = session.diagnostics
    return d.records_total == d.records_used + sum(d.skipped.values())


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def env(kind: str, payload: dict[str, Any], ts: str = "2026-03-01T12:00:00Z") -> dict[str, Any]:
    return {"timestamp": ts, "type": kind, "payload": payload}


def token_count(
    total: tuple[int, int, int, int] | None, last: tuple[int, int, int, int] | None = None
) -> dict:
    def usage(v: tuple[int, int, int, int]) -> dict[str, int]:
        return {
            "input_tokens": v[0],
            "cached_input_tokens": v[1],
            "output_tokens": v[2],
            "reasoning_output_tokens": v[3],
            "total_tokens": v[0] + v[2],
        }

    info: dict[str, Any] = {}
    if total:
        info["total_token_usage"] = usage(total)
    if last:
        info["last_token_usage"] = usage(last)
    return env("event_msg", {"type": "token_count", "info": info, "rate_limits": None})


# -- acceptance -----------------------------------------------------------------


def test_v0_104_desktop_28_turns_acceptance():
    s = parse_one(CODEX, shared_fixture("codex/v0.104-desktop-28turns-real-sanitized.jsonl"))
    assert buckets(s) == (99_460, 1_651_968, 0, 14_600, 4_293)
    assert s.usage.total_tokens == 99_460 + 1_651_968 + 14_600
    # 56 token_count events: 1 info=null, 27 exact re-emits, 28 real calls.
    assert s.diagnostics.skipped["duplicate:token_count"] == 27
    assistant = [m for m in s.messages if m.role == "assistant"]
    assert len(assistant) == 28 and all(m.usage is not None for m in assistant)
    assert s.models == ["gpt-5.3-codex"]
    assert s.id == "019c8a4d-8f45-7010-8b5d-7fad920aa6f9"
    assert s.resume_command == "codex resume 019c8a4d-8f45-7010-8b5d-7fad920aa6f9"


# -- golden summaries per fixture ---------------------------------------------------

GOLDEN: dict[str, dict[str, Any]] = {
    "codex/v0.104-desktop-28turns-real-sanitized.jsonl": dict(
        roles={"system*": 4, "user*": 3, "user": 1, "assistant": 28},
        calls=(118, 118),
        usage=(99_460, 1_651_968, 0, 14_600, 4_293),
        skipped={
            "ignored:token_count_null": 1,
            "ignored:agent_reasoning": 26,
            "ignored:agent_message": 17,
            "duplicate:token_count": 27,
        },
        total=417,
    ),
    "codex/v0.104-desktop-6turns-real-sanitized.jsonl": dict(
        roles={"system*": 4, "user*": 3, "user": 1, "assistant": 6},
        calls=(5, 5),
        usage=(59_525, 238_848, 0, 1_123, 483),
        skipped={
            "ignored:token_count_null": 1,
            "ignored:agent_reasoning": 6,
            "ignored:agent_message": 6,
            "duplicate:token_count": 5,
        },
        total=63,
    ),
    "codex/v0.104-desktop-short-real-sanitized.jsonl": dict(
        roles={"system*": 4, "user*": 4, "user": 1, "assistant": 1},
        calls=(0, 1),
        usage=(31_013, 3_456, 0, 431, 264),
        skipped={"ignored:token_count_null": 1, "ignored:agent_reasoning": 1, "ignored:agent_message": 1},
        total=19,
    ),
    "codex/v0.146-shape-catalog-trimmed.jsonl": dict(
        # 3 orphan results: one is absorbed by a later call with the same trimmed id.
        roles={"user": 4, "user*": 2, "system*": 1, "system": 10, "assistant": 9, "tool": 2},
        calls=(7, 8),
        usage=(12_757, 3_584, 0, 81, 63),
        skipped={
            "ignored:world_state": 5,
            "duplicate:user_message": 1,
            "ignored:agent_reasoning": 1,
            "ignored:patch_apply_end": 1,
            "ignored:agent_message": 1,
            "ignored:session_meta": 6,
            "ignored:sub_agent_activity": 1,
            "ignored:inter_agent_communication_metadata": 1,
            "ignored:image_generation_end": 2,
            "ignored:thread_goal_updated": 2,
            "ignored:entered_review_mode": 6,
            "ignored:exited_review_mode": 3,
            "ignored:item_completed": 12,
            "ignored:guardian_assessment": 4,
            "ignored:view_image_tool_call": 1,
            "ignored:dynamic_tool_call_request": 1,
            "ignored:dynamic_tool_call_response": 1,
            "ignored:ghost_snapshot": 1,
            "ignored:undo_completed": 1,
            "ignored:token_count_null": 1,
            "duplicate:token_count": 1,
        },
        total=118,
    ),
    "codex/legacy-pre-envelope-schema-drift.jsonl": dict(
        roles={"user": 1, "assistant": 2},
        calls=(1, 1),
        usage=(0, 0, 0, 0, 0),
        skipped={"ignored:world_state": 1},
        total=5,
    ),
    "codex/token-count-rate-limits.jsonl": dict(
        roles={"assistant": 1, "system": 2},
        calls=(0, 0),
        usage=(1_211, 10_880, 0, 182, 128),
        skipped={"ignored:token_count_null": 1},
        total=5,
        unknown={"account/rateLimits/updated": 1},
    ),
    "codex/usage-last-vs-total.jsonl": dict(
        roles={"assistant": 2},
        calls=(0, 0),
        usage=(2_750, 750, 0, 425, 275),
        skipped={},
        total=3,
    ),
    "codex/swiftdiaries-session.jsonl": dict(
        roles={"user": 1, "assistant": 1, "system": 1},
        calls=(1, 1),
        usage=(0, 0, 0, 0, 0),
        skipped={},
        total=7,
        unknown={"future_codex_event": 1},
    ),
    "codex/sessions/2025/11/25/rollout-test.jsonl": dict(
        roles={"user": 1, "assistant": 1},
        calls=(0, 0),
        usage=(100, 0, 0, 200, 0),
        skipped={"ignored:agent_reasoning": 1},
        total=5,
    ),
    "codex/sessions/2025/11/26/rollout-tool-call.jsonl": dict(
        roles={"user": 1, "system": 1, "assistant": 1},
        calls=(0, 0),
        usage=(120, 0, 0, 45, 0),
        skipped={},
        total=5,
        unknown={"tool_call": 1},
    ),
    "codex/subagent-family/codex-family-main.jsonl": dict(
        roles={"user": 1},
        calls=(0, 0),
        usage=(0, 0, 0, 0, 0),
        skipped={},
        total=3,
    ),
}
LOCAL = {  # MIT fixtures copied into tests/fixtures under a rollout- name
    "codex/v0.146-shape-catalog-trimmed.jsonl": "codex/rollout-v0.146-shape-catalog-trimmed.jsonl",
    "codex/legacy-pre-envelope-schema-drift.jsonl": "codex/rollout-legacy-flat-schema-drift.jsonl",
    "codex/token-count-rate-limits.jsonl": "codex/rollout-token-count-rate-limits.jsonl",
    "codex/usage-last-vs-total.jsonl": "codex/rollout-usage-last-vs-total.jsonl",
}


@pytest.mark.parametrize("rel", sorted(GOLDEN))
def test_golden(rel):
    path = fixture(LOCAL[rel]) if rel in LOCAL else shared_fixture(rel)
    sessions = parse_files(CODEX, path)
    assert len(sessions) == 1
    s = sessions[0]
    want = GOLDEN[rel]
    assert roles(s) == want["roles"]
    assert calls(s) == want["calls"]
    assert buckets(s) == want["usage"]
    assert s.diagnostics.skipped == want["skipped"]
    assert s.diagnostics.unknown_types == want.get("unknown", {})
    assert s.diagnostics.records_total == want["total"]
    assert accounted(s)
    assert s.kind == "main" and s.parent_key is None


def test_catalog_first_session_meta_wins():
    s = parse_one(CODEX, fixture("codex/rollout-v0.146-shape-catalog-trimmed.jsonl"))
    assert s.id == "019fc8be-3658-7ca3-9e29-000000000000"
    assert s.agent_version == "0.146.0"
    assert s.started_at is not None and s.started_at.isoformat() == "2026-08-03T10:48:56+00:00"
    assert s.title == "[trimmed for fixture]"  # thread_name_updated beats the first prompt
    assert s.models == ["gpt-5.6-luna", "gpt-5.5", "gpt-5.6-sol"]
    first_user = next(m for m in s.messages if m.role == "user")
    assert first_user.text == "List the files"  # event first, its response-item echo dropped
    compactions = [m for m in s.messages if any(isinstance(p, CompactionPart) for p in m.parts)]
    assert len(compactions) == 7 and all("compaction_summary" in m.flags for m in compactions)


def test_redacted_prompt_and_injected_context_are_told_apart():
    # Response-item copies whose text differs from the event (redaction) become meta.
    s = parse_one(CODEX, shared_fixture("codex/v0.104-desktop-short-real-sanitized.jsonl"))
    visible = [m for m in s.messages if m.role == "user" and not m.hidden]
    assert [m.text for m in visible] == ["[REDACTED_MESSAGE len=86 sha=2239bcba]"]
    assert s.title == "[REDACTED_MESSAGE len=86 sha=2239bcba]"
    assert s.git_branch == "main" and s.agent_version == "0.104.0-alpha.1"
    assert s.status == "running_tool"  # its last call, exec_command, has no output (agentlog.live.status)


def test_prompt_recorded_item_first_is_emitted_once(tmp_path):
    path = write_jsonl(
        tmp_path / "rollout-x.jsonl",
        [
            env("session_meta", {"id": "s1", "cwd": "/r"}),
            env(
                "response_item",
                {
                    "type": "message",
                    "role": "user",
                    "content": [
                        {
                            "type": "input_text",
                            "text": "<environment_context><cwd>/r</cwd></environment_context>",
                        }
                    ],
                },
            ),
            env(
                "response_item",
                {
                    "type": "message",
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "fix it"},
                        {"type": "input_image", "image_url": "data:image/png;base64,AA"},
                    ],
                },
            ),
            env(
                "event_msg",
                {"type": "user_message", "message": "fix it", "images": ["data:image/png;base64,AA"]},
            ),
            env(
                "response_item",
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
            ),
        ],
    )
    s = parse_one(CODEX, path)
    assert roles(s) == {"user*": 1, "user": 1, "assistant": 1}
    prompt = next(m for m in s.messages if m.role == "user" and not m.hidden)
    assert prompt.parts == [TextPart(text="fix it"), FilePart(media_type="image/png")]
    assert s.diagnostics.skipped == {"duplicate:user_message": 1}


# -- usage semantics ------------------------------------------------------------------


def test_usage_goes_to_the_model_of_its_turn():
    s = parse_one(CODEX, fixture("codex/rollout-usage-last-vs-total.jsonl"))
    assert s.id == "rollout-usage-last-vs-total"  # no session_meta, no uuid in the name: the stem
    got = [(m.model, m.usage.input_tokens, m.usage.cache_read_tokens) for m in s.messages if m.usage]
    assert got == [("gpt-5.2-codex", 750, 250), ("gpt-5.3-codex", 2_000, 500)]


def test_last_token_usage_only_and_legacy_flat_counts(tmp_path):
    path = write_jsonl(
        tmp_path / "rollout-y.jsonl",
        [
            env("session_meta", {"id": "s2"}),
            token_count(None, (100, 40, 10, 5)),
            token_count(None, (100, 40, 10, 5)),  # identical consecutive re-emit
            token_count(None, (300, 200, 20, 0)),
            env("event_msg", {"type": "token_count", "input_tokens": 7, "output_tokens": 3}),  # flat, old
            env("event_msg", {"type": "token_count", "info": 7}),
        ],
    )
    s = parse_one(CODEX, path)
    assert buckets(s) == (60 + 100 + 7, 40 + 200, 0, 33, 5)
    assert s.diagnostics.skipped == {"duplicate:token_count": 1, "malformed:token_count": 1}


def test_cache_write_and_web_searches_are_split_out():
    (s,) = parse_files(CODEX, fixture("codex/rollout-synthetic-tools.jsonl"))
    assert buckets(s) == (2_600, 9_900, 500, 760, 270)
    assert s.usage.web_search_requests == 1
    usages = [m.usage.total_tokens for m in s.messages if m.usage]
    assert usages == [5_300, 7_400, 1_060]  # three calls, each on its own assistant message


# -- tools, compaction, abort, errors ------------------------------------------------------


def test_synthetic_tools():
    (s,) = parse_files(CODEX, fixture("codex/rollout-synthetic-tools.jsonl"))
    # session_meta source "exec": a `codex exec` run, listed apart, resumed by `codex exec resume`
    assert (s.kind, s.parent_key, s.resume_command) == (
        "exec",
        None,
        "codex exec resume 019ca9f0-1c00-7000-8000-0000000000aa",
    )
    assert roles(s) == {"user": 2, "assistant": 8, "system": 3}
    assert s.title == "Config loader refactor"
    assert (s.status, s.status_evidence) == ("errored", "event_msg/error")
    assert s.diagnostics.skipped == {
        "duplicate:user_message": 2,
        "ignored:agent_message": 1,
        "duplicate:context_compacted": 1,
        "ignored:ghost_snapshot": 1,
    }
    assert s.diagnostics.records_used == 32 and accounted(s)
    by_id = {c.call_id: c for c in s.tool_calls()}
    assert [(c.call_id, c.tool, c.raw_name) for c in s.tool_calls()] == [
        ("call_p1", "edit", "apply_patch"),
        ("call_p1#1", "write", "apply_patch"),
        ("call_p1#2", "delete", "apply_patch"),
        ("call_e1", "bash", "exec_command"),
        ("call_l1", "bash", "local_shell_call"),
        ("ws_1", "web_search", "web_search_call"),
        ("call_u1", "todo", "update_plan"),
        ("call_v1", "read", "view_image"),
        ("call_m1", "mcp__github__search_issues", "mcp__github__search_issues"),
        ("call_e2", "bash", "exec_command"),
    ]
    patch = [by_id[k] for k in ("call_p1", "call_p1#1", "call_p1#2")]
    assert [c.input["file_path"] for c in patch] == ["src/config.py", "src/defaults.py", "src/legacy.py"]
    assert (
        patch[1].input["patch"]
        == '*** Add File: src/defaults.py\n+def read_defaults():\n+    return {"debug": False}'
    )
    for c in patch:  # one output, given to every file of the patch, with patch_apply_end merged in
        assert c.result.output.startswith("Success. Updated the following files:")
        assert c.result.structured["exit_code"] == 0 and c.result.structured["success"] is True
    exec_result = by_id["call_e1"].result
    assert by_id["call_e1"].input == {"cmd": "pytest -q", "workdir": "/repo"}
    assert exec_result.structured["exit_code"] == 0 and "aggregated_output" not in exec_result.structured
    assert exec_result.status == "completed" and not exec_result.is_error
    assert by_id["ws_1"].result.output == [
        {"title": "msgspec docs", "url": "https://jcristharif.com/msgspec/"}
    ]
    assert by_id["call_m1"].result.structured["invocation"]["server"] == "github"
    assert by_id["call_e2"].result.status == "interrupted"
    assert all(c.result is not None for c in s.tool_calls())
    first = next(m for m in s.messages if m.role == "assistant")
    assert isinstance(first.parts[0], ReasoningPart) and first.parts[0].encrypted
    assert first.parts[0].summary == "Plan the edit"
    system = [(m.flags, m.parts[0]) for m in s.messages if m.role == "system"]
    assert system == [
        (["interrupted"], TextPart(text="Turn aborted: interrupted")),
        (
            ["compaction_summary"],
            CompactionPart(
                summary="Summary: refactored the config loader; the user interrupted the cleanup."
            ),
        ),
        (["api_error"], TextPart(text="stream disconnected before completion")),
    ]


def test_pre_envelope_file():
    s = parse_one(CODEX, fixture("codex/rollout-synthetic-pre-envelope.jsonl"))
    assert s.id == "5973b6c0-94b8-487b-a530-2aeb6098ae0e" and s.git_branch == "main"
    assert roles(s) == {"user*": 2, "user": 1, "assistant": 2}
    assert s.title == "What does main.py do?"
    assert s.diagnostics.skipped == {"ignored:state": 3} and s.diagnostics.records_used == 8
    (call,) = s.tool_calls()
    assert (call.tool, call.raw_name, call.input) == ("bash", "shell", {"command": ["cat", "main.py"]})
    assert call.result.output == "print('hi')\n" and call.result.structured == {
        "exit_code": 0,
        "duration_seconds": 0.01,
    }


def test_flat_legacy_lines_pair_results_by_name():
    s = parse_one(CODEX, fixture("codex/rollout-legacy-flat-schema-drift.jsonl"))
    (call,) = s.tool_calls()
    assert (call.tool, call.input, call.result.output) == ("translate", {"text": "hello", "to": "es"}, "hola")
    assert [m.text for m in s.messages if m.role != "assistant" or m.text] == [
        "Translate 'hello' to Spanish",
        '"hola"',
    ]


# -- forks and subagents ---------------------------------------------------------------


def test_fork_replay_is_flagged_and_not_counted():
    (s,) = parse_files(CODEX, fixture("codex/rollout-synthetic-fork-replay.jsonl"))
    assert s.kind == "fork" and s.parent_key == "codex:019ca8a0-3e80-7000-8000-000000000002"
    assert s.id == "019ca8d7-2d00-7000-8000-000000000001"
    assert roles(s) == {"user*~": 1, "user~": 1, "assistant~": 1, "user": 1, "assistant": 2}
    # Parent prefix total (1000, 200, 50, 10) is the baseline; the fork's own calls only.
    assert buckets(s) == (800, 2_200, 0, 150, 50)
    assert s.diagnostics.skipped == {
        "ignored:session_meta": 1,
        "duplicate:user_message": 2,
        "replayed:token_count": 1,
        "duplicate:token_count": 1,
    }
    assert (s.title, s.cwd, s.git_branch, s.status) == (
        "Now add tests",
        "/work/fork",
        "feature",
        "waiting_for_user",
    )
    assert s.tool_calls()[0].result.is_error  # "Exit code: 1"
    assert s.resume_command == "codex resume 019ca8d7-2d00-7000-8000-000000000001"


def test_fork_replay_ends_at_the_forks_own_meta(tmp_path):
    own = {"id": "fork-1", "forked_from_id": "parent-1", "timestamp": "2026-03-01T10:00:00Z"}
    path = write_jsonl(
        tmp_path / "rollout-z.jsonl",
        [
            env("session_meta", own),
            env("session_meta", {"id": "parent-1"}),
            env("event_msg", {"type": "user_message", "message": "old prompt"}),
            token_count((1000, 0, 100, 0)),
            env("session_meta", own),
            env("event_msg", {"type": "user_message", "message": "new prompt"}),
            token_count((1500, 0, 120, 0)),
        ],
    )
    (s,) = parse_files(CODEX, path)
    assert buckets(s) == (500, 0, 0, 20, 0)
    assert s.title == "new prompt"
    assert roles(s) == {"user~": 1, "user": 1, "assistant": 1}


def test_subagent_embeds_parent_meta_but_keeps_its_first_call(tmp_path):
    spawn = {"parent_thread_id": "root-1", "depth": 1, "agent_nickname": "Ada", "agent_role": "explorer"}
    path = write_jsonl(
        tmp_path / "rollout-sub.jsonl",
        [
            env(
                "session_meta",
                {"id": "sub-1", "thread_source": "subagent", "source": {"subagent": {"thread_spawn": spawn}}},
            ),
            env("session_meta", {"id": "root-1", "source": "cli"}),
            env("event_msg", {"type": "user_message", "message": "Explore the parser"}),
            token_count((4200, 3600, 180, 64)),
            env("event_msg", {"type": "task_complete"}),
        ],
    )
    (s,) = parse_files(CODEX, path)
    assert (s.kind, s.parent_key, s.subagent_type, s.description) == (
        "subagent",
        "codex:root-1",
        "explorer",
        "Ada",
    )
    assert buckets(s) == (600, 3_600, 0, 180, 64)
    assert s.status == "done" and s.resume_command is None


def test_subagent_family_links():
    family = "codex/subagent-family/"
    sessions = parse_files(
        CODEX, *(shared_fixture(family + f"codex-family-{n}.jsonl") for n in ("main", "worker", "guardian"))
    )
    got = {s.id: (s.kind, s.parent_key, s.subagent_type, s.description) for s in sessions}
    assert got == {
        "codex-root": ("main", None, None, None),
        "codex-worker": ("subagent", "codex:codex-root", "reviewer", "Ada"),
        "codex-guardian": ("subagent", "codex:codex-worker", "guardian", None),
    }


@pytest.mark.parametrize(
    ("source", "kind", "subtype"), [("review", "review", "review"), ("compact", "compact", "compact")]
)
def test_review_and_compact_subagents(tmp_path, source, kind, subtype):
    path = write_jsonl(
        tmp_path / "rollout-r.jsonl", [env("session_meta", {"id": "r1", "source": {"subagent": source}})]
    )
    (s,) = parse_files(CODEX, path)
    assert (s.kind, s.subagent_type) == (kind, subtype)


# -- incremental parsing ------------------------------------------------------------------


INCREMENTAL = [
    *(f"codex/{p.name}" for p in sorted((Path(__file__).parent / "fixtures" / "codex").glob("*.jsonl"))),
    "shared:codex/v0.104-desktop-28turns-real-sanitized.jsonl",
    "shared:codex/v0.104-desktop-short-real-sanitized.jsonl",
]


@pytest.mark.parametrize("rel", INCREMENTAL)
def test_two_halves_equal_one_go(rel, tmp_path):
    src = shared_fixture(rel.removeprefix("shared:")) if rel.startswith("shared:") else fixture(rel)
    data = src.read_bytes()
    growing = tmp_path / src.name
    ref = SourceRef(agent=CODEX, path=str(growing))
    growing.write_bytes(data)
    whole = msgspec.json.encode(build_sessions([(ADAPTER, parse_source(ADAPTER, ref))]))
    newlines = [i for i, b in enumerate(data) if b == 0x0A]
    cuts = {len(data) // 2, len(data) // 3 + 7, newlines[len(newlines) // 2] + 1, newlines[0] + 1}
    for cut in sorted(cuts):
        growing.write_bytes(data[:cut])
        first = parse_source(ADAPTER, ref)
        growing.write_bytes(data)
        second = parse_source(ADAPTER, ref, start=first.consumed, state=first.state)
        halves = build_sessions([(ADAPTER, first), (ADAPTER, second)])
        assert msgspec.json.encode(halves) == whole, f"cut at {cut}"


# -- discovery, duplicates, sniffing ---------------------------------------------------------


def test_default_roots_and_discovery_order(tmp_path):
    home = Path("/home/u")
    assert ADAPTER.default_roots({}, home) == [home / ".codex/sessions", home / ".codex/archived_sessions"]
    assert ADAPTER.default_roots({"CODEX_HOME": "/a, /b"}, home) == [
        Path("/a/sessions"),
        Path("/b/sessions"),
        Path("/a/archived_sessions"),
        Path("/b/archived_sessions"),
    ]
    for rel in (
        "archived_sessions/rollout-1.jsonl",
        "sessions/2025/01/02/rollout-2.jsonl",
        "sessions/2025/01/02/notes.jsonl",
        "log/rollout-3.jsonl",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    found = [Path(r.path).relative_to(tmp_path).as_posix() for r in ADAPTER.discover(tmp_path)]
    assert found == ["sessions/2025/01/02/rollout-2.jsonl", "archived_sessions/rollout-1.jsonl"]
    assert [Path(r.path).name for r in ADAPTER.discover(tmp_path / "log")] == ["rollout-3.jsonl"]


def test_sessions_and_archived_copy_load_once(tmp_path):
    src = fixture("codex/rollout-v0.146-shape-catalog-trimmed.jsonl")
    for folder in ("archived_sessions", "sessions/2026/08/03"):
        (tmp_path / folder).mkdir(parents=True)
        shutil.copy(src, tmp_path / folder / src.name)
    report = LoadReport()
    sessions = load_sessions(agents=[CODEX], env={"CODEX_HOME": str(tmp_path)}, home=tmp_path, report=report)
    assert [s.key for s in sessions] == ["codex:019fc8be-3658-7ca3-9e29-000000000000"]
    assert sessions[0].sources == [str(tmp_path / "sessions/2026/08/03" / src.name)]
    assert report.duplicates == [str(tmp_path / "archived_sessions" / src.name)]
    assert buckets(sessions[0]) == (12_757, 3_584, 0, 81, 63)


def test_sniff():
    envelope = fixture("codex/rollout-synthetic-tools.jsonl").read_bytes()[:4096]
    assert ADAPTER.sniff("whatever.jsonl", envelope) == 0.95
    assert ADAPTER.sniff("rollout-x.jsonl", envelope) == 1.0
    assert ADAPTER.sniff("a.jsonl", fixture("codex/rollout-synthetic-pre-envelope.jsonl").read_bytes()) >= 0.7
    claude = b'{"type":"user","sessionId":"s","uuid":"u","message":{"role":"user","content":"hi"}}\n'
    assert ADAPTER.sniff("s.jsonl", claude) == 0.0
    assert ADAPTER.sniff("rollout-x.jsonl", b"not json\n") == 0.3


def test_malformed_shapes_never_raise(tmp_path):
    path = write_jsonl(
        tmp_path / "rollout-bad.jsonl",
        [
            env("response_item", {"type": "function_call"}),
            env("response_item", {"type": "function_call_output"}),
            env("response_item", {"type": "message", "role": "critic", "content": 3}),
            env("response_item", {"type": "reasoning", "summary": "x", "content": 5}),
            env("event_msg", {"type": "user_message", "message": None, "images": "x"}),
            env("event_msg", {"type": "exec_command_end", "call_id": 5}),
            env("event_msg", {"type": "item_completed", "item": "x"}),
            env("compacted", {"message": None}),
            {"type": "event_msg", "payload": [1]},
            {"type": "turn_context"},
            {"type": "session_meta", "payload": {"id": 7, "git": "x", "source": {"subagent": 3}}},
            {"role": "user"},
        ],
    )
    (s,) = parse_files(CODEX, path)
    assert accounted(s) and s.diagnostics.records_total == 12
    assert s.id == "rollout-bad"


# -- helpers ------------------------------------------------------------------------------


def test_tool_names():
    expected = {
        "exec_command": "bash",
        "shell": "bash",
        "apply_patch": "edit",
        "update_plan": "todo",
        "view_image": "read",
        "web_search_call": "web_search",
        "spawn_agent": "task",
        "mcp__gh__issue": "mcp__gh__issue",
        "gh__issue": "mcp__gh__issue",
        "wait": "wait",
    }
    assert {name: tool_name(name) for name in expected} == expected
    assert tool_name("search", "mcp__github") == "mcp__github__search"


def test_split_patch_and_uuid7():
    assert split_patch("*** Begin Patch\n*** Delete File: a.py\n*** End Patch") == [
        ("delete", "a.py", "*** Delete File: a.py")
    ]
    assert split_patch("[trimmed]") == []
    assert uuid7_ms("019ca8d7-2d00-7000-8000-000000000001") == 1_772_359_200_000
    assert uuid7_ms("5973b6c0-94b8-487b-a530-2aeb6098ae0e") is None


# -- 0.4x forks: the copy has no end marker (issue #12 rule 1) ----------------------------

FORK_FAMILY = "codex/rollout-v0.44-fork-family-"
FAMILY_IDS = {
    "main": "5f0c1a2e-8d3b-4c71-9a55-0e44f0a1b201",
    "fork": "5f0c1a2e-8d3b-4c71-9a55-0e44f0a1b202",
    "chained-fork": "5f0c1a2e-8d3b-4c71-9a55-0e44f0a1b203",
    "subagent-1": "5f0c1a2e-8d3b-4c71-9a55-0e44f0a1b204",
    "subagent-2": "5f0c1a2e-8d3b-4c71-9a55-0e44f0a1b205",
    "subagent-fork": "5f0c1a2e-8d3b-4c71-9a55-0e44f0a1b206",
}


def _family(*names: str) -> list[Path]:
    return [fixture(f"{FORK_FAMILY}{n}.jsonl") for n in names]


def _by_name(sessions: list[Session]) -> dict[str, Session]:
    names = {sid: name for name, sid in FAMILY_IDS.items()}
    return {names[s.id]: s for s in sessions}


def test_v044_fork_family_counts_each_call_once():
    got = _by_name(parse_files(CODEX, *_family(*FAMILY_IDS)))
    counted = {
        name: (s.kind, s.parent_key and s.parent_key[-3:], sum(1 for m in s.messages if m.usage), buckets(s))
        for name, s in got.items()
    }
    assert counted == {
        # 2 calls: totals (3000, 1000, 200, 50) then (5000, 3000, 300, 80)
        "main": ("main", None, 2, (2_000, 3_000, 0, 300, 80)),
        # its copy of main's 2 calls is dropped; its fresh counter's first call (9000, 5000, 400, 120)
        "fork": ("fork", "201", 1, (4_000, 5_000, 0, 400, 120)),
        # the copy holds main's 2 calls and the fork's one: all 3 dropped, its own (12000, 9000, 250, 60)
        "chained-fork": ("fork", "202", 1, (3_000, 9_000, 0, 250, 60)),
        # identical siblings both count (they are never compared with each other)
        "subagent-1": ("subagent", "201", 1, (600, 3_600, 0, 180, 64)),
        "subagent-2": ("subagent", "201", 1, (600, 3_600, 0, 180, 64)),
        # forked_from_id + source.subagent: main's copy dropped, its own (8000, 4000, 150, 40) kept
        "subagent-fork": ("subagent", "201", 1, (4_000, 4_000, 0, 150, 40)),
    }
    assert roles(got["fork"]) == {"user~": 2, "assistant~": 2, "user": 1, "assistant": 1}
    assert roles(got["chained-fork"]) == {"user~": 3, "assistant~": 3, "user": 1, "assistant": 1}
    assert [m.text for m in got["fork"].messages if not m.hidden] == ["Now add a lint target", "Added lint."]
    # titled by its own first prompt, not the parent's (rules.fork_title)
    assert {n: got[n].title for n in ("main", "fork", "chained-fork", "subagent-fork")} == {
        "main": "Explain the build",
        "fork": "Now add a lint target",
        "chained-fork": "Rename lint to check",
        "subagent-fork": "Check the test target",
    }


def test_v044_fork_without_its_parent_counts_the_copy():
    """Nothing to match against: every call is counted (flagged ``replay_candidate``)."""
    (fork,) = parse_files(CODEX, *_family("fork"))
    assert buckets(fork) == (6_000, 8_000, 0, 700, 200)
    assert [m.flags for m in fork.messages if m.usage] == [["replay_candidate"]] * 3


def test_replayed_prefix_rule():
    a, b, c = (1, 0, 0, 0, 1, 0), (2, 0, 0, 0, 1, 0), (3, 0, 0, 0, 1, 0)
    assert replayed_prefix([a, b], [(a, True), (b, True), (c, True)]) == 2
    assert replayed_prefix([a, b], [(a, True), (c, True), (b, True)]) == 1
    assert replayed_prefix([a, b], [(a, False), (b, True)]) == 0  # not a candidate: own call
    assert replayed_prefix([a], [(a, True), (a, True)]) == 1  # the parent's calls bound it
    assert replayed_prefix([], [(a, True)]) == 0


def test_v044_fork_family_index_equals_memory_in_any_order(tmp_path):
    """The index applies the rule when the child comes first and its parent later."""
    root = tmp_path / "home"
    day = root / ".codex/sessions/2025/10/02"
    day.mkdir(parents=True)
    for path in _family("chained-fork", "fork", "subagent-fork", "subagent-1"):
        shutil.copy(path, day / path.name)
    checks.synced(CODEX, root, tmp_path / "index.sqlite").close()
    for path in _family("main", "subagent-2"):
        shutil.copy(path, day / path.name)
    conn = checks.synced(CODEX, root, tmp_path / "index.sqlite")
    try:
        sessions, _ = checks.load(CODEX, root)
        assert checks.index_view(conn) == checks.memory_view(sessions)
        assert checks.index_calls_view(conn, CODEX) == checks.calls_view(sessions)
        assert sum(v[0] for v in checks.index_calls_view(conn, CODEX).values()) == 7
    finally:
        conn.close()


# -- calls with no recorded model (issue #12 rule 2) ----------------------------------------

NO_MODEL = "codex/rollout-v0.x-no-model-"


def test_no_model_calls_take_the_version_default_or_the_nearest_recorded_model():
    old, late = (
        parse_files(CODEX, fixture(NO_MODEL + "no-turn-context.jsonl")),
        parse_files(CODEX, fixture(NO_MODEL + "model-after-first-call.jsonl")),
    )
    # 0.30.0 has no turn_context: both calls at 0.30's default (gpt-5, PR #1943)
    assert [(m.model, m.flags) for m in old[0].messages if m.usage] == [
        ("gpt-5", ["model_inferred"]),
        ("gpt-5", ["model_inferred"]),
    ]
    assert old[0].models == [] and old[0].diagnostics.inferred == {"model": 2}
    # 0.44.0's first call precedes the first turn_context: it takes that model (o3), not gpt-5-codex
    assert [(m.model, m.flags) for m in late[0].messages if m.usage] == [
        ("o3", ["model_inferred"]),
        ("o3", []),
    ]
    assert late[0].models == ["o3"] and late[0].diagnostics.inferred == {"model": 1}


@pytest.mark.parametrize(
    ("version", "when", "model"),
    [
        ("0.1.2505071120", None, "o4-mini"),
        ("0.1.2505160811", None, "codex-mini-latest"),
        ("0.2.0", None, "codex-mini-latest"),
        ("0.16.0", None, "gpt-5"),
        ("0.39.2", None, "gpt-5"),
        ("0.40.0", None, "gpt-5-codex"),
        ("0.58.0-alpha.3", None, "gpt-5.1-codex"),
        (None, datetime(2025, 9, 1, tzinfo=UTC), "gpt-5"),
        (None, datetime(2025, 3, 1, tzinfo=UTC), None),
        (None, None, None),
    ],
)
def test_default_model_by_version(version, when, model):
    assert default_model(version, when) == model


def test_call_without_version_takes_the_default_of_its_day(tmp_path):
    path = write_jsonl(
        tmp_path / "rollout-old.jsonl",
        [
            env("session_meta", {"id": "old-1", "timestamp": "2025-06-10T10:00:00.000Z"}),
            env(
                "event_msg",
                {"type": "token_count", "input_tokens": 1200, "output_tokens": 30},
                ts="2025-06-10T10:00:05.000Z",
            ),
        ],
    )
    (s,) = parse_files(CODEX, path)
    assert [(m.model, m.flags) for m in s.messages if m.usage] == [("codex-mini-latest", ["model_inferred"])]


@pytest.mark.parametrize("no_index", [False, True])
def test_inferred_models_are_priced_and_named(tmp_path, no_index):
    day = tmp_path / ".codex/sessions/2025/10/06"
    day.mkdir(parents=True)
    for name in ("no-turn-context", "model-after-first-call"):
        shutil.copy(fixture(f"{NO_MODEL}{name}.jsonl"), day)
    env = {"HOME": str(tmp_path)}
    data = usage_json(env, "model", *(["--no-index"] if no_index else []))
    assert data["inferred_models"] == [
        {"model": "gpt-5", "calls": 2, "tokens": 9_400},
        {"model": "o3", "calls": 1, "tokens": 2_050},
    ]
    assert data["warnings"] == [
        "2 calls with no model recorded priced as 'gpt-5' (inferred): 9,400 tokens",
        "1 call with no model recorded priced as 'o3' (inferred): 2,050 tokens",
    ]
    # gpt-5 $1.25/$0.125/$10 per MTok on (4000, 5000, 400); o3 $2/$0.5/$8 on (5500, 1500, 250)
    assert (data["totals"]["calls"], data["totals"]["cost_usd"]) == (4, 0.023375)
    if not no_index:
        code, out, _ = run("doctor", env=env)
        assert code == 0 and "inferred      3  model" in out


# -- codex exec runs (issue #12 rule 4) -----------------------------------------------------

EXEC_STREAM = "codex/rollout-exec-json-stream.jsonl"
EXEC_ID = "0199c3d4-5e6f-7a80-9b1c-2d3e4f5a6b7c"


def test_exec_json_stream_is_read():
    (s,) = parse_files(CODEX, fixture(EXEC_STREAM))
    assert (s.key, s.kind, s.status, s.resume_command) == (
        f"codex:{EXEC_ID}",
        "exec",
        "done",
        f"codex exec resume {EXEC_ID}",
    )
    # turn.completed usage is the thread's running total: (24000, 18000, 900) then (31000, 23000, 1000)
    assert [
        (m.usage.input_tokens, m.usage.cache_read_tokens, m.usage.output_tokens)
        for m in s.messages
        if m.usage
    ] == [
        (6_000, 18_000, 900),
        (2_000, 5_000, 100),
    ]
    tools = [(c.tool, c.raw_name, c.input, c.result.is_error, c.result.output) for c in s.tool_calls()]
    assert tools == [
        ("bash", "command_execution", {"command": "bash -lc 'pytest -q'"}, True, "1 failed, 4 passed\n"),
        ("edit", "file_change", {"file_path": "/work/app/tests/test_io.py"}, False, None),
        ("write", "file_change", {"file_path": "/work/app/tests/conftest.py"}, False, None),
        (
            "mcp__docs__search",
            "docs__search",
            {"q": "tmp_path"},
            False,
            [{"type": "text", "text": "tmp_path is a pytest fixture"}],
        ),
    ]
    assert [m.text for m in s.messages if m.role == "assistant" and m.text] == [
        "Fixed the failing test.",
        "All 5 tests pass now.",
    ]
    assert (s.diagnostics.records_total, s.diagnostics.skipped) == (12, {"ignored:item.started": 1})
    assert s.models == [] and s.diagnostics.inferred == {}  # no model, no version, no time: unpriced


def test_exec_stream_under_root_is_found_by_content_and_detected(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(fixture(EXEC_STREAM), folder / "run-42.jsonl")
    (s,) = load_sessions(env={}, home=tmp_path / "nohome", extra_roots=[folder])
    assert (s.key, s.kind, s.usage.total_tokens) == (f"codex:{EXEC_ID}", "exec", 32_000)
    code, out, _ = run("detect", str(folder / "run-42.jsonl"), "--json")
    assert code == 0 and (json.loads(out)["agent"], json.loads(out)["confidence"]) == ("codex", 0.9)


def test_exec_runs_are_left_out_of_the_session_list_unless_asked(tmp_path):
    day = tmp_path / ".codex/sessions/2026/03/01"
    day.mkdir(parents=True)
    for rel in (
        "codex/rollout-synthetic-tools.jsonl",
        EXEC_STREAM,
        "codex/rollout-synthetic-fork-replay.jsonl",
    ):
        shutil.copy(fixture(rel), day)
    env = {"HOME": str(tmp_path)}

    def listed(*flags: str) -> list[tuple[str, str]]:
        code, out, err = run("sessions", "--agent", "codex", "--json", *flags, env=env)
        assert code == 0, err
        return sorted((row["id"], row["kind"]) for row in json.loads(out))

    exec_rows = [(EXEC_ID, "exec"), ("019ca9f0-1c00-7000-8000-0000000000aa", "exec")]
    fork = ("019ca8d7-2d00-7000-8000-000000000001", "fork")
    assert listed() == []  # the fork has a parent (not in this home): a child row
    assert listed("--exec") == sorted(exec_rows)
    assert listed("--subagents") == sorted([*exec_rows, fork])
    code, out, _ = run("overview", "--json", env=env)
    (codex,) = [a for a in json.loads(out)["agents"] if a["agent"] == "codex"]
    assert (code, codex["sessions"], codex["exec_runs"], codex["subagents"]) == (0, 0, 2, 1)
    code, out, _ = run("overview", env=env)
    assert code == 0 and "0 sessions, 2 exec runs (`sessions --exec`), 1 subagent" in out
    assert "0 (+2 exec)" in out  # the Codex row: as `sessions` lists them, and the runs apart
    sessions = load_sessions(["codex"], env, tmp_path)
    assert [s.id for s in sessions if SessionFilter().matches(s)] == []
    assert sorted(s.id for s in sessions if SessionFilter(include_exec=True).matches(s)) == sorted(
        i for i, _ in exec_rows
    )


def test_only_rollouts_are_sources_in_a_codex_home(tmp_path):
    day = tmp_path / ".codex/sessions/2026/03/01"
    day.mkdir(parents=True)
    shutil.copy(fixture(EXEC_STREAM), day / "run-42.jsonl")  # not a rollout name: not Codex's
    shutil.copy(fixture(EXEC_STREAM), day / "rollout-run-42.jsonl")
    names = sorted(Path(r.path).name for r in ADAPTER.discover(tmp_path / ".codex/sessions"))
    assert names == ["rollout-run-42.jsonl"]
    assert sorted(Path(r.path).name for r in ADAPTER.discover(day)) == ["rollout-run-42.jsonl"]
    assert sorted(Path(r.path).name for r in ADAPTER.discover(tmp_path / ".codex")) == [
        "rollout-run-42.jsonl"
    ]


def test_a_cumulative_total_out_of_range_is_zeroed_and_counted_not_a_call_of_its_bound(tmp_path):
    """A ``total_token_usage`` of 1e27 (kept at 2**53 by ``as_int``) less the previous
    total used to fall back in range: a call of 9·10^15 input tokens, $11 billion.
    Now that component is out of range, zeroed and counted (``tokens_out_of_range``),
    and it is no baseline (:func:`count_total`): the next total counts from the last
    believable one (3000 − 1000), where it used to read as a restarted counter and a
    total with no ``last`` was then counted whole a second time (tester13 finding 5)."""
    from agentlog.adapters.codex import MAX_CALL_TOKENS, count_total
    from agentlog.rules import MAX_TOKENS

    prev = [1000, 0, 0, 10, 0]
    # a total out of range counts nothing of its own, the bad component zeroed and reported; prev stays
    assert count_total([MAX_TOKENS, 0, 0, 20, 0], prev, None) == ([MAX_TOKENS, 0, 0, 0, 0], prev)
    assert count_total([-5, 0, 0, 20, 0], prev, None) == ([MAX_TOKENS, 0, 0, 0, 0], prev)
    assert count_total([2**53 - 1, 0, 0, 0, 0], None, None) == ([MAX_TOKENS, 0, 0, 0, 0], None)
    assert count_total([0, 0, 0, 0, 0], prev, None) == ([0, 0, 0, 0, 0], prev)  # all null: says nothing
    # a call of a billion tokens is no reading either (999,999,999,999 after 1,000)
    assert count_total([10**12 - 1, 0, 0, 20, 0], prev, None) == ([MAX_TOKENS, 0, 0, 0, 0], prev)
    assert count_total([1000 + MAX_CALL_TOKENS - 1, 0, 0, 20, 0], prev, None) == (
        [MAX_CALL_TOKENS - 1, 0, 0, 10, 0], [1000 + MAX_CALL_TOKENS - 1, 0, 0, 20, 0]
    )
    assert count_total([3000, 0, 0, 30, 0], prev, [1000, 0, 0, 10, 0]) == ([2000, 0, 0, 20, 0], [3000, 0, 0, 30, 0])

    def count(n: int, total: int) -> str:
        usage = {"input_tokens": total, "cached_input_tokens": 0, "output_tokens": 10 * n, "reasoning_output_tokens": 0}
        last = {"input_tokens": 1000, "cached_input_tokens": 0, "output_tokens": 10, "reasoning_output_tokens": 0}
        payload = {"type": "token_count", "info": {"total_token_usage": usage, "last_token_usage": last}}
        return json.dumps({"timestamp": f"2026-01-01T10:00:0{n + 1}Z", "type": "event_msg", "payload": payload})

    lines = [
        json.dumps({"timestamp": "2026-01-01T10:00:00Z", "type": "session_meta",
                    "payload": {"id": "big-1", "timestamp": "2026-01-01T10:00:00Z", "cwd": "/w", "cli_version": "0.60.0"}}),
        json.dumps({"timestamp": "2026-01-01T10:00:00Z", "type": "turn_context", "payload": {"cwd": "/w", "model": "gpt-5-codex"}}),
        count(1, 1000),
        count(2, 10**27),
        count(3, 3000),
    ]
    path = tmp_path / "rollout-2026-01-01T10-00-00-big-1.jsonl"
    path.write_text("\n".join(lines) + "\n")
    session = parse_one("codex", path)
    inputs = [m.usage.input_tokens for m in session.messages if m.usage is not None]
    assert inputs == [1000, 0, 2000]
    assert session.diagnostics.invalid_values == {"tokens_out_of_range": 1}


def test_totals_out_of_range_without_last_do_not_count_the_next_total_twice(tmp_path):
    """The tester's rollout (finding 5): totals 10,500 → 4,200 (a restarted counter)
    → 15,900, then −5 and 2**60, then 17,000: the last call is 17,000 − 15,900, not
    17,000 again (totals were 57,400 tokens where 41,500 are right)."""
    def count(n: int, inp: int, cached: int, out: int) -> str:
        usage = {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out, "reasoning_output_tokens": 0}
        payload = {"type": "token_count", "info": {"total_token_usage": usage}}
        return json.dumps({"timestamp": f"2026-01-01T10:00:{n:02d}Z", "type": "event_msg", "payload": payload})

    lines = [
        json.dumps({"timestamp": "2026-01-01T10:00:00Z", "type": "session_meta",
                    "payload": {"id": "big-2", "timestamp": "2026-01-01T10:00:00Z", "cwd": "/w", "cli_version": "0.60.0"}}),
        json.dumps({"timestamp": "2026-01-01T10:00:00Z", "type": "turn_context", "payload": {"cwd": "/w", "model": "gpt-5-codex"}}),
        count(1, 10000, 2000, 500),
        count(2, 4000, 1000, 200),
        count(3, 15000, 3000, 900),
        count(4, -5, 0, 0),
        count(5, 2**60, 0, 0),
        count(6, 16000, 3000, 1000),
    ]
    path = tmp_path / "rollout-2026-01-01T10-00-00-big-2.jsonl"
    path.write_text("\n".join(lines) + "\n")
    session = parse_one("codex", path)
    calls = [(m.usage.input_tokens + m.usage.cache_read_tokens, m.usage.output_tokens) for m in session.messages if m.usage]
    assert calls == [(10000, 500), (4000, 200), (11000, 700), (0, 0), (0, 0), (1000, 100)]
    assert sum(i + o for i, o in calls) == 27500


def _rollout_of_totals(path: Path, specs: list[str]) -> None:
    """A rollout whose token counts are ``specs``: each ``in:cached:out:reason``
    cumulative, optionally ``/in:cached:out:reason`` for the call's ``last`` (JSON values)."""
    def vector(spec: str) -> dict[str, object]:
        a, b, c, d = (json.loads(x) for x in spec.split(":"))
        return {"input_tokens": a, "cached_input_tokens": b, "output_tokens": c, "reasoning_output_tokens": d}

    lines = [
        {"timestamp": "2026-01-01T10:00:00Z", "type": "session_meta",
         "payload": {"id": "t-1", "timestamp": "2026-01-01T10:00:00Z", "cwd": "/w", "cli_version": "0.60.0"}},
        {"timestamp": "2026-01-01T10:00:00Z", "type": "turn_context", "payload": {"cwd": "/w", "model": "gpt-5"}},
    ]
    for n, spec in enumerate(specs, 1):
        total, _, last = spec.partition("/")
        info = {"total_token_usage": vector(total), **({"last_token_usage": vector(last)} if last else {})}
        lines.append({"timestamp": f"2026-01-01T10:00:{n:02d}Z", "type": "event_msg", "payload": {"type": "token_count", "info": info}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


@pytest.mark.parametrize(
    ("specs", "expected", "zeroed"),
    [
        (["1000:0:100:0", "2000:0:200:0", "3000:0:300:0"], (3000, 300), 0),
        (["1000:0:100:0", "2000:0:200:0", "-5:0:-5:0", "3000:0:300:0"], (3000, 300), 2),
        (["1000:0:100:0/1000:0:100:0", "-1:0:-1:0/1000:0:100:0", "3000:0:300:0/1000:0:100:0"], (3000, 300), 2),
        (["1000:200:100:0", "2000:-1:200:0", "3000:600:300:0"], (3000, 300), 1),
        (["1000:0:100:0", "9007199254740992:0:200:0", "3000:0:300:0"], (3000, 300), 1),
        (["1000:0:100:0", "9007199254740991:0:200:0", "3000:0:300:0"], (3000, 300), 1),
        (["1000:0:100:0", "999999999999:0:200:0", "3000:0:300:0"], (3000, 300), 1),  # a call of 10^12: finding 15
        (["1000:0:100:0", "1e27:0:1e27:0", "3000:0:300:0"], (3000, 300), 2),
        (["1000:0:100:0", "null:null:null:null", "3000:0:300:0"], (3000, 300), 0),
        (["1000.5:0:100:0", "2000.7:0:200:0", "3000:0:300:0"], (3000, 300), 0),
        (["1000:0:100:0/1000:0:100:0", "2000:0:200:0/1000:0:100:0", "1500:0:150:0/500:0:50:0",
          "2500:0:250:0/1000:0:100:0"], (3500, 350), 0),
        (["1000:5000:100:0", "2000:5000:200:0", "3000:5000:300:0"], (3000, 300), 0),  # cached > input: at most the input
        # a fall with no ``last``: a restarted counter, its total counted whole (1000 + 1000 + 1500 + 1500)
        (["1000:0:100:0", "2000:0:200:0", "1500:0:150:0", "3000:0:300:0"], (5000, 500), 0),
    ],
)
def test_cumulative_totals_count_each_token_once(tmp_path, specs, expected, zeroed):
    """Tester14 findings 5 and 6 (their table): a total partly out of range, one
    component negative, a total of 2**53 − 1, an all-null total — each counted the
    good components twice or the next total whole; now input (cached included) and
    output sum to the session's true totals, the bad values reported."""
    path = tmp_path / "rollout-2026-01-01T10-00-00-t-1.jsonl"
    _rollout_of_totals(path, specs)
    session = parse_one("codex", path)
    calls = [m.usage for m in session.messages if m.usage is not None]
    assert (sum(u.input_tokens + u.cache_read_tokens for u in calls), sum(u.output_tokens for u in calls)) == expected
    assert session.diagnostics.invalid_values.get("tokens_out_of_range", 0) == zeroed


def test_a_last_only_count_of_two_to_the_53_is_zeroed_and_reported(tmp_path):
    """A ``token_count`` with only ``last_token_usage`` (an older form) of
    9,007,199,254,740,991 input tokens priced $11 billion, doctor silent
    (tester14 finding 15): counts from 10^12 on are out of range."""
    path = tmp_path / "rollout-2026-01-01T10-00-00-t-1.jsonl"
    _rollout_of_totals(path, [])
    with path.open("a") as f:
        for n, value in enumerate([1000, 2**53 - 1, 1000], 1):
            usage = {"input_tokens": value, "cached_input_tokens": 0, "output_tokens": 100, "reasoning_output_tokens": 0}
            payload = {"type": "token_count", "info": {"last_token_usage": usage}}
            f.write(json.dumps({"timestamp": f"2026-01-01T10:00:0{n}Z", "type": "event_msg", "payload": payload}) + "\n")
    session = parse_one("codex", path)
    calls = [m.usage for m in session.messages if m.usage is not None]
    assert [(u.input_tokens, u.output_tokens) for u in calls] == [(1000, 100), (0, 100), (1000, 100)]
    assert session.diagnostics.invalid_values == {"tokens_out_of_range": 1}
