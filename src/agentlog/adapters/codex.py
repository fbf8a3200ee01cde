"""Codex CLI / Codex Desktop / Codex VS Code rollouts (JSONL, append-only).

Spec (see ``shared/formats.md`` §2 and ``shared/cost.md`` §2; record shapes from
openai/codex ``codex-rs/protocol/src/protocol.rs@001cb8e233f2``; versions seen in
fixtures 0.42 – 0.146, plus pre-envelope files of spring 2025):

Locations
    ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<uuid>.jsonl`` and
    ``$CODEX_HOME/archived_sessions/…``; ``CODEX_HOME`` defaults to ``~/.codex`` and
    may be a comma-separated list (as in ccusage).  All of every home's ``sessions/``
    are listed before any ``archived_sessions/``, because the loader keeps the first
    copy of a session found twice.  Under a home's ``sessions``/``archived_sessions``
    only ``rollout-*.jsonl`` files are sources; under any other root (``--root``)
    every ``*.jsonl`` file is offered, and content sniffing picks the agent (a
    saved ``codex exec --json`` stream has any name).  ``~/.codex/state.sqlite`` is
    ignored (rollouts are the truth).

Records
    Current form: ``{"timestamp", "type", "payload"}`` with ``type`` one of
    ``session_meta``, ``response_item``, ``turn_context``, ``event_msg``, ``compacted``
    (newer builds add ``world_state`` and ``inter_agent_communication[_metadata]``,
    ignored with reason ``ignored:<type>``).  Pre-envelope files (≤ 0.3x) start with a
    bare ``{id, timestamp, instructions, git}`` object followed by bare response
    items and ``{"record_type": "state"}`` lines (ignored); flat ``role``/``content``
    lines and ``function_call``/``function_result`` lines without call ids are read
    too (a result pairs with the last call of that name).

    * ``session_meta``: the FIRST one defines the session (``id``, ``cwd``,
      ``cli_version``, ``git.branch``, ``timestamp``, ``source``, ``forked_from_id``,
      ``parent_thread_id``, ``thread_source``, ``agent_role``/``agent_nickname``);
      later ones (forks and subagents embed their ancestors' metas) are skipped as
      ``ignored:session_meta``.  No meta → the uuid in the file name (else its stem).
    * ``turn_context``: ``model`` for the following assistant messages and usage,
      ``cwd`` (latest wins).
    * ``response_item``: ``message`` (role ``user``/``assistant``/``developer``/
      ``system``), ``reasoning`` (``summary[].text``; ``content[].text``;
      ``encrypted_content`` → ``encrypted``), ``function_call`` (``arguments`` is a
      JSON string, decoded when valid), ``custom_tool_call`` (``apply_patch`` raw
      patch text → one tool call per file: ``*** Update File`` → ``edit``,
      ``*** Add File`` → ``write``, ``*** Delete File`` → ``delete``, input
      ``{file_path, patch}``, call ids ``<call_id>``, ``<call_id>#1``, …),
      ``local_shell_call``, ``web_search_call``, ``tool_search_call``,
      ``image_generation_call``, their ``*_output`` by ``call_id``, and inter-agent
      ``agent_message`` (a ``meta`` user message).  ``ghost_snapshot``, ``compaction``
      (opaque) and ``other`` are ignored.
    * ``event_msg``: ``user_message`` (and ``item_completed`` of a ``UserMessage``,
      0.147+) are the typed prompts; ``token_count`` (usage, below);
      ``thread_name_updated`` (title); ``thread_settings_applied`` (the service
      tier, below); ``task_started``/``task_complete``/
      ``turn_aborted``/``error`` (status; an aborted turn adds a system message
      flagged ``interrupted`` and marks its open tool calls ``interrupted``, an error
      a system message flagged ``api_error``); ``context_compacted``;
      ``exec_command_end``/``mcp_tool_call_end``/``patch_apply_end``/``collab_*_end``
      (details merged into the pending call's result as ``structured``; an
      ``exec``/``mcp`` end with no pending call becomes a result of its own);
      ``web_search_end`` (results of the last web search).  UI duplicates
      (``agent_message``, ``agent_reasoning``, other ``item_completed`` items) and
      the lifecycle/approval noise listed in ``_IGNORED_EVENTS`` are skipped as
      ``ignored:<type>``.  Any other type is kept raw as an ``unknown`` message.
    * ``compacted`` → a system message with a compaction part (``payload.message``),
      flagged ``compaction_summary``; a ``context_compacted`` event right after it
      is the same compaction (``duplicate:context_compacted``), alone it makes one.

    Sample: ``{"timestamp":"2026-02-23T12:19:52.620Z","type":"response_item",
    "payload":{"type":"function_call","name":"exec_command","arguments":"{\\"cmd\\":
    \\"ls\\"}","call_id":"call_UtYw…"}}``

``codex exec``
    A rollout whose ``session_meta.source`` is ``"exec"`` (openai/codex
    ``protocol.rs`` ``SessionSource``, ``rename_all = "lowercase"``: ``cli``,
    ``vscode``, ``exec``, ``mcp``, ``{"subagent": …}``; ``exec/src/lib.rs``
    starts threads with ``SessionSource::Exec``) is kind ``exec``: a
    non-interactive run, left out of the default session list like subagents
    (``sessions --exec`` lists them), resumed by ``codex exec resume <id>``.
    A saved ``codex exec --json`` stream (``exec/src/exec_events.rs``
    ``ThreadEvent``: ``thread.started {thread_id}``, ``turn.started``,
    ``turn.completed {usage: {input_tokens, cached_input_tokens,
    output_tokens}}``, ``turn.failed {error.message}``, ``item.started``/
    ``item.updated``/``item.completed {item: {id, type, …}}``, ``error``) is read
    too: the session id is ``thread_id``, kind ``exec``; completed items only
    (``agent_message``/``plan`` → text, ``reasoning`` → a reasoning summary,
    ``command_execution`` → ``bash`` with its output and exit code,
    ``file_change`` → ``write``/``edit``/``delete`` per change,
    ``mcp_tool_call`` → ``mcp__server__tool``, ``web_search``, ``todo_list`` →
    ``todo``, ``collab_tool_call`` → ``task``, ``error`` → an ``api_error``
    system message); started/updated items are ``ignored:<type>``.  The
    stream has no timestamps, prompt, cwd or model.  ``turn.completed.usage`` is
    the thread's cumulative total (``event_processor_with_jsonl_output.rs``
    ``usage_from_last_total``, the last ``TokenCount`` ``total_token_usage``), so
    each turn's call is the difference, as for ``token_count`` (input includes
    cached).  Unknown item types are kept raw.

Messages
    Codex has no message ids: every message is ``<session id>@<byte offset>`` of its
    first record.  Assistant items between two inputs (a user/developer message, a
    tool output, a ``turn_context``, a usage event) form one assistant message —
    about one API response.  Developer/system messages and user messages that are
    injected context (``<environment_context>``, ``# AGENTS.md instructions``,
    ``<user_instructions>``, ``<skill>``, ``<turn_aborted>`` … — Codex's own
    contextual-fragment markers) are flagged ``meta``.  The typed prompt is recorded
    twice (response item and event, either order): the pair is emitted once; a user
    response item not matching an event (injected text the markers do not catch,
    e.g. redacted files) is flagged ``meta`` once an event or the model's reply
    shows it was not the prompt.  Title: last ``thread_name_updated``, else the
    first prompt.  Status: ``working`` after a prompt/``task_started``;
    ``waiting_for_user`` (``done`` for subagents) after ``task_complete``;
    ``interrupted``; ``errored``.

Subagents and forks
    ``source.subagent``: ``review``/``compact`` → kind ``review``/``compact``;
    ``{"other": name}`` → ``subagent`` of type ``name``; ``{"thread_spawn": {...}}``
    → ``subagent`` of type ``agent_role`` (else nickname), parent
    ``parent_thread_id``.  ``thread_source: "subagent"`` or a top-level
    ``parent_thread_id`` → ``subagent``.  Otherwise ``forked_from_id`` → ``fork``.
    Forks (any meta with ``forked_from_id``) copy their parent's rollout, with
    re-stamped timestamps, after their own meta.  Replay rule: the copy starts at a
    ``session_meta`` of another thread (or at a ``turn_context``/``task_started``
    whose UUIDv7 ``turn_id`` predates the fork) and ends at the fork's own
    ``session_meta`` repeated, or at the first ``turn_context``/``task_started``
    whose UUIDv7 ``turn_id`` is not older than the fork (its id's UUIDv7 time, else
    its meta timestamp) — turn ids are minted when a turn first ran (agentsview
    PR #657, tokscale #895).  Replayed messages are flagged ``replayed``; replayed
    ``token_count`` events only move the cumulative baseline
    (``replayed:token_count``).  Subagents that are not forks do not replay usage:
    their first event counts.

    No recorded model (rollouts before ``turn_context`` existed, pre-envelope
    files, calls before a session's first ``turn_context``): the call is flagged
    ``model_inferred`` and takes the session's nearest recorded model — the
    first ``turn_context`` model written after it — else Codex's default model
    for the rollout's ``cli_version`` (else its date), :data:`DEFAULT_MODELS`.
    ccusage prices such calls as ``gpt-5`` whatever the version
    (``adapter/codex/README.md``, ``shared/cost.md`` §2 "Model").

    0.4x forks have no such marker: ``turn_context`` has no ``turn_id`` and the
    fork's own meta is written once, before the copied items (openai/codex
    ``codex-rs/core/src/codex.rs``: ``InitialHistory::Forked`` mints a new
    conversation id, writes its meta, then persists the parent's rollout items
    "as-is", their ``session_meta`` and ``token_count`` events included, with
    the fork's timestamps; the fork's token counter is seeded from the copy in
    builds that call ``last_token_info_from_rollout`` there, and starts again
    in builds that do not — whether 0.4x did was not checked, both are
    handled).  When a fork's first turn boundary carries no
    UUIDv7 ``turn_id`` the parser stops guessing: messages are not flagged, every
    call is counted and flagged ``replay_candidate``, and a restarted counter (a
    component falls, or ``total == last`` after another total) gives the call
    its ``last`` vector.  :func:`agentlog.rules.replayed_prefix` then drops the
    fork's first calls that repeat its parent's calls one for one, and
    everything before the last of them (in memory :mod:`agentlog.link`, in the
    index ``index.store``), as ``shared/cost.md`` §2 asks ("skip the prefix whose
    cumulative vectors match the parent's stream"; ccusage's same-second
    heuristic, ``adapter/codex/parser.rs`` ``detect_subagent_replay_second``,
    is not used: it drops real first subagent turns, ccusage #1370).  A
    subagent with ``forked_from_id`` is such a fork; sibling subagents are never
    compared with each other.

Tokens (OpenAI semantics: inclusive, cumulative)
    ``token_count.info`` is ``null`` (rate limits only: ``ignored:token_count_null``)
    or has ``total_token_usage`` (cumulative per thread)
    and ``last_token_usage``, each ``{input_tokens ⊇ cached_input_tokens
    [⊇ cache_write_input_tokens], output_tokens ⊇ reasoning_output_tokens}``.  One
    call = ``total − previous total`` per component, clamped at 0; an unchanged
    total is a re-emit (``duplicate:token_count``; 27 of 55 in the real 0.104 file).
    Without totals (old flat ``token_count`` lines too) ``last_token_usage`` is
    used, identical consecutive values skipped.  Exclusive buckets: input =
    input − cached − cache_write, cache read = cached, cache write (5m) =
    cache_write, output = output, reasoning = reasoning_output.  Each call's usage
    goes on the latest assistant message of the turn that has none yet, else on an
    empty assistant message of its own (``model`` = ``info.model`` or the latest
    ``turn_context`` model); web searches since the previous call are counted in
    ``web_search_requests``.  No cost is recorded.  The service tier is
    ``thread_settings.service_tier`` of the latest ``thread_settings_applied`` event
    (0.146 shape catalog: ``"default"``; openai/codex ``ServiceTier::request_value``
    writes ``"priority"`` for fast mode and ``"flex"``, older builds ``"fast"``); it
    holds for the thread's later calls until another one changes it (``"default"``
    or null: the standard tier, ``None``).

Rate limits
    ``token_count.rate_limits`` (with or without ``info``): ``primary``/``secondary``
    ``{used_percent, window_minutes, resets_at (epoch s)}`` — older builds
    ``reset_at``, or ``resets_in_seconds`` from the event time — and
    ``plan_type``.  The last snapshot is the session's ``rate_limits``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from datetime import UTC, date, datetime
from pathlib import Path, PurePath
from typing import Any, ClassVar

import msgspec

from agentlog import lazy, probe
from agentlog.adapters._content import block_text
from agentlog.adapters._json import json_or_text, json_value
from agentlog.adapters._tools import normalise_tool
from agentlog.adapters._values import as_int, as_str, later_time, parse_time, service_tier
from agentlog.adapters.base import JsonlAdapter, LineParser, SourceRef, ToolOutput, resume_line
from agentlog.model import (
    CompactionPart,
    Diagnostics,
    FilePart,
    Message,
    MessageFlag,
    Part,
    RateLimits,
    RateWindow,
    ReasoningPart,
    Role,
    Session,
    SessionKind,
    SessionStatus,
    TextPart,
    ToolCallPart,
    ToolResult,
    UnknownPart,
    Usage,
)
from agentlog.rules import MAX_TOKENS, bounded_title, session_key

SLUG = "codex"

_ENVELOPES = ("session_meta", "response_item", "turn_context", "event_msg", "compacted")
_EXEC_EVENTS = frozenset({
    "thread.started", "turn.started", "turn.completed", "turn.failed", "item.started", "item.updated",
    "item.completed", "item.plan.delta", "request_user_input", "error",
})  # fmt: skip
_IGNORED_ENVELOPES = ("world_state", "inter_agent_communication", "inter_agent_communication_metadata")
_IGNORED_ITEMS = ("ghost_snapshot", "compaction", "other")
# fmt: off
# Event types deliberately not used: UI duplicates of response items, lifecycle,
# approvals, streaming deltas and settings.
_IGNORED_EVENTS = frozenset({
    "agent_message", "agent_message_delta", "agent_message_content_delta", "agent_reasoning",
    "agent_reasoning_delta", "agent_reasoning_raw_content", "agent_reasoning_raw_content_delta",
    "agent_reasoning_section_break", "apply_patch_approval_request", "background_event",
    "collab_agent_interaction_begin", "collab_agent_spawn_begin", "collab_close_begin",
    "collab_waiting_begin", "deprecation_notice", "dynamic_tool_call_request",
    "dynamic_tool_call_response", "entered_review_mode", "exec_approval_request", "exec_command_begin",
    "exec_command_output_delta", "exited_review_mode", "guardian_assessment", "image_generation_begin",
    "image_generation_end", "item_started", "mcp_startup_complete", "mcp_startup_update",
    "mcp_tool_call_begin", "patch_apply_begin", "plan_update", "session_configured",
    "shutdown_complete", "stream_error", "sub_agent_activity", "terminal_interaction",
    "thread_goal_updated", "thread_rolled_back", "turn_diff",
    "undo_completed", "undo_started", "view_image_tool_call", "warning", "web_search_begin",
})
# ``*_end`` events whose details are merged into the pending call's result.
_END_EVENTS = frozenset({
    "exec_command_end", "mcp_tool_call_end", "patch_apply_end", "collab_agent_spawn_end",
    "collab_agent_interaction_end", "collab_waiting_end", "collab_close_end",
})
# fmt: on
# Bulky copies of the output that ``structured`` does not repeat.
_END_BULK = ("type", "stdout", "stderr", "aggregated_output", "formatted_output")

_TOOL_NAMES = {
    "exec_command": "bash",
    "shell": "bash",
    "shell_command": "bash",
    "container.exec": "bash",
    "local_shell": "bash",
    "local_shell_call": "bash",
    "write_stdin": "bash",
    "apply_patch": "edit",
    "update_plan": "todo",
    "view_image": "read",
    "read_file": "read",
    "list_dir": "glob",
    "grep_files": "grep",
    "web_search": "web_search",
    "web_search_call": "web_search",
    "spawn_agent": "task",
}
_PATCH_TOOLS = {"Add": "write", "Update": "edit", "Delete": "delete"}
_PATCH_FILE = lazy.pattern(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$", re.M)
_PATCH_END = lazy.pattern(r"^\*\*\* End Patch\s*$", re.M)
# Codex's contextual user-fragment markers (injected context, not typed prompts).
_CONTEXT_MARKERS = (
    "<environment_context",
    "<user_instructions",
    "# agents.md instructions",
    "<instructions>",
    "<skill>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<plugins>",
    "<subagents>",
    "<subagent_notification>",
)
_CONTEXT_KINDS = ("user_instructions", "environment_context")
_FILE_UUID = lazy.pattern(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
_EXIT_CODE = lazy.pattern(r"^(?:Exit code:|Process exited with code) (-?\d+)", re.M)
_LEGACY_ITEMS = (
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "function_result",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
)
_FORK_BEFORE, _FORK_REPLAY, _FORK_LIVE, _FORK_MATCH = 0, 1, 2, 3


def tool_name(name: str, namespace: str | None = None) -> str:
    """Normalised tool name for a Codex tool ``name`` (MCP tools → ``mcp__server__tool``)."""
    if namespace:
        qualified = f"{namespace}__{name}"
        return qualified if qualified.startswith("mcp__") else f"mcp__{qualified}"
    if name.startswith("mcp__"):
        return name
    if name in _TOOL_NAMES:
        return _TOOL_NAMES[name]
    return f"mcp__{name}" if "__" in name.strip("_") else normalise_tool(name)


def is_context(text: str) -> bool:
    """True when a user message's text is context Codex injected, not a typed prompt."""
    return text.lstrip().lower().startswith(_CONTEXT_MARKERS)


def uuid7_ms(value: Any) -> int | None:
    """The millisecond timestamp of a UUIDv7 string, else ``None``."""
    if not isinstance(value, str):
        return None
    digits = value.replace("-", "")
    if len(digits) != 32 or digits[12] != "7":
        return None
    try:
        return int(digits[:12], 16)
    except ValueError:
        return None


def split_patch(patch: str) -> list[tuple[str, str, str]]:
    """``(tool, file_path, section)`` per file of an ``apply_patch`` text."""
    end = _PATCH_END.search(patch)
    body = patch[: end.start()] if end else patch
    heads = list(_PATCH_FILE.finditer(body))
    out = []
    for i, head in enumerate(heads):
        stop = heads[i + 1].start() if i + 1 < len(heads) else len(body)
        out.append((_PATCH_TOOLS[head.group(1)], head.group(2), body[head.start() : stop].rstrip("\n")))
    return out


def token_vector(usage: Any) -> list[int] | None:
    """``[input, cached, cache_write, output, reasoning]`` of a Codex ``TokenUsage``."""
    if not isinstance(usage, dict):
        return None
    return [
        as_int(usage.get("input_tokens")),
        as_int(usage.get("cached_input_tokens")),
        as_int(usage.get("cache_write_input_tokens")),
        as_int(usage.get("output_tokens")),
        as_int(usage.get("reasoning_output_tokens")),
    ]


DEFAULT_MODELS: tuple[tuple[tuple[int, ...], date, str], ...] = (
    ((0, 0, 0), date(2025, 4, 16), "o4-mini"),
    ((0, 1, 2505160811), date(2025, 5, 16), "codex-mini-latest"),
    ((0, 16, 0), date(2025, 8, 7), "gpt-5"),
    ((0, 40, 0), date(2025, 9, 23), "gpt-5-codex"),
    ((0, 58, 0), date(2025, 11, 13), "gpt-5.1-codex"),
)
"""Codex's default model, ``(first cli_version, first UTC day, model)``, oldest
first, from openai/codex's history: ``o4-mini`` (PRs #12 and #39, 2025-04-16:
"codex defaults to o4-mini"); ``codex-mini-latest`` from 0.1.2505160811 (PR #953,
2025-05-16, "bump(version): 0.1.2505160811 codex-mini-latest"; codex-rs PR #1164,
2025-05-29); ``gpt-5`` (PR #1943 "change OPENAI_DEFAULT_MODEL to gpt-5", the
GPT-5 launch, 2025-08-07; PR #2199, 2025-08-11: "gpt-5 has replaced
codex-mini-latest as the default"); ``gpt-5-codex`` (PR #4076, 2025-09-23,
"Default model and docs now use gpt-5-codex"); ``gpt-5.1-codex`` (PRs #6653/#6654,
2025-11-14, and #6922 "Keep gpt-5.1-codex the default"; issue #6711: 0.58.0 runs
gpt-5.1-codex).  The days are the PRs' dates; the versions 0.16.0 and 0.40.0 are
the first releases after them by date, not checked against the release tags.
Later rollouts always record a ``turn_context`` model.  genai-prices' bundled table
has no ``codex-mini-latest`` (removed from the API in 2026): such calls stay
unpriced, named in the warning, unless ``prices.toml`` prices it."""

_VERSION = lazy.pattern(r"^(\d+)\.(\d+)(?:\.(\d+))?")


def default_model(cli_version: str | None, when: datetime | None) -> str | None:
    """Codex's default model for a rollout written by ``cli_version`` (else at
    ``when``, aware), from :data:`DEFAULT_MODELS`; ``None`` when neither is known
    or both predate the table."""
    found = _VERSION.match(cli_version or "")
    if found:
        version = tuple(int(g or 0) for g in found.groups())
        models = [model for first, _, model in DEFAULT_MODELS if first <= version]
    elif when is not None:
        day = when.astimezone(UTC).date()
        models = [model for _, first, model in DEFAULT_MODELS if first <= day]
    else:
        models = []
    return models[-1] if models else None


MAX_CALL_TOKENS = 10**9
"""The most tokens of one kind a single Codex call may spend: its context window
is at most ~10^6 tokens (gpt-5: 400k), so a cumulative total that grew by a
billion in one call is no counter's reading (a total of 999,999,999,999 after
1,000 priced one call at $1.25 million: tester14 finding 15)."""


def count_total(
    total: list[int], prev: list[int] | None, last: list[int] | None, fork_copy: bool = False
) -> tuple[list[int], list[int] | None]:
    """``(the call's token vector, the baseline the next total counts from)`` for a
    cumulative ``total`` after ``prev``, the last total believed (``None``: none yet).

    The call is ``total − prev`` per component, clamped at 0 — unless the counter
    restarted (a component fell; or, in a fork's unmarked copy (``fork_copy``),
    ``total`` equals the call's own ``last`` vector while ``prev`` differs: the
    fork's first call after the copied history), when it is ``last`` (else
    ``total``).  A fork's counter either continues from the copied totals (builds
    that seed it: openai/codex ``codex-rs/core/src/codex.rs``
    ``InitialHistory::Forked`` calls ``last_token_info_from_rollout``) or starts
    again (builds without that seeding); both read right.

    A total is believed when every component is in range (``0 ≤ n <``
    :data:`agentlog.rules.MAX_TOKENS`), not all are zero (a total whose fields
    are all ``null`` or missing, read as zeros by :func:`token_vector`, says
    nothing) and the call it gives spends under :data:`MAX_CALL_TOKENS` of each
    kind.  One that is not counts nothing of its own and ``prev`` stays the
    baseline, so the next believed total counts what the call spent, once: its
    components out of range come back as ``MAX_TOKENS``, so the one rule for
    token counts zeroes and reports them (:func:`agentlog.rules.bounded_usage`),
    the others as 0.  Counting its good components, or reading it as a restart,
    counted them twice or the next total whole (tester14 findings 5, 6, 15)."""
    if min(total) >= 0 and max(total) < MAX_TOKENS and any(total):
        if prev is None:
            call = total
        elif any(now < before for now, before in zip(total, prev, strict=True)) or (
            fork_copy and total == last and total != prev
        ):
            call = last if last is not None else total
        else:
            call = [now - before for now, before in zip(total, prev, strict=True)]
        if max(call) < MAX_CALL_TOKENS:
            return call, total
        return [MAX_TOKENS if n >= MAX_CALL_TOKENS else 0 for n in call], prev
    return [0 if 0 <= now < MAX_TOKENS else MAX_TOKENS for now in total], prev


def usage_of(vector: list[int], web_searches: int = 0, tier: str | None = None) -> Usage:
    """Exclusive buckets from an inclusive Codex token vector (see :func:`token_vector`),
    at service tier ``tier``.  Cached and cache-write tokens are part of the input
    (OpenAI's ``prompt_tokens_details``), so a vector recording more of them than
    input tokens counts at most the input (a cached count of 5,000 on 1,000 input
    tokens was 5,000 tokens read)."""
    inp, cached, cache_write, out, reasoning = vector
    if min(vector) >= 0 and max(vector) < MAX_TOKENS:  # values out of range stay so: zeroed and reported
        cached = min(cached, inp)
        cache_write = min(cache_write, inp - cached)
    return Usage(
        input_tokens=max(0, inp - cached - cache_write),
        cache_read_tokens=cached,
        cache_write_5m_tokens=cache_write,
        output_tokens=out,
        reasoning_tokens=reasoning,
        web_search_requests=web_searches,
        service_tier=tier,
    )


def _rate_window(window: Any, when: datetime | None) -> RateWindow | None:
    if not isinstance(window, dict):
        return None
    used = window.get("used_percent")
    if isinstance(used, bool) or not isinstance(used, int | float):
        return None
    resets = parse_time(window.get("resets_at", window.get("reset_at")))
    after = window.get("resets_in_seconds")
    if resets is None and when is not None and isinstance(after, int | float) and not isinstance(after, bool):
        resets = later_time(when, seconds=after) if after > 0 else None
    minutes = window.get("window_minutes")
    return RateWindow(
        used_percent=float(used),
        window_minutes=(as_int(minutes) or None) if isinstance(minutes, int) else None,  # as_int: 0..2**53
        resets_at=resets,
    )


def rate_limits_of(raw: Any, when: datetime | None) -> RateLimits | None:
    """A :class:`RateLimits` from a ``token_count.rate_limits`` object (``None`` if absent)."""
    if not isinstance(raw, dict):
        return None
    primary, secondary = _rate_window(raw.get("primary"), when), _rate_window(raw.get("secondary"), when)
    if primary is None and secondary is None:
        return None
    return RateLimits(
        observed_at=when, primary=primary, secondary=secondary, plan_type=as_str(raw.get("plan_type"))
    )


def content_parts(content: Any) -> list[Part]:
    """Parts of a message ``content`` (a string or Responses-API content items)."""
    if isinstance(content, str):
        return [TextPart(text=content)] if content else []
    parts: list[Part] = []
    for item in content if isinstance(content, list) else []:
        kind = item.get("type") if isinstance(item, dict) else None
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            parts.append(TextPart(text=item["text"]))
        elif kind in ("input_image", "output_image", "image"):
            parts.append(image_part(item.get("image_url") or item.get("url")))
        else:
            parts.append(UnknownPart(raw=item))
    return parts


def image_part(ref: Any, local: bool = False) -> FilePart:
    """A file part for an image URL or path; ``data:`` URLs keep only their media type."""
    if not isinstance(ref, str):
        return FilePart(media_type="image")
    if ref.startswith("data:"):
        return FilePart(media_type=ref[5:].split(";", 1)[0].split(",", 1)[0] or "image")
    return FilePart(media_type="image", name=PurePath(ref).name if local else "", ref=ref)


def failed_exit(code: Any) -> bool:
    """True for a recorded non-zero process exit code (negative ones included)."""
    return isinstance(code, int) and not isinstance(code, bool) and code != 0


def tool_result(output: Any, success: Any = None) -> ToolResult:
    """A :class:`ToolResult` from a ``*_output`` item's ``output``."""
    structured = None
    decoded = json_or_text(output) if isinstance(output, str) and output.startswith("{") else None
    if isinstance(decoded, dict) and "output" in decoded and isinstance(decoded.get("metadata"), dict):
        output, structured = decoded["output"], decoded["metadata"]
    is_error = success is False
    if isinstance(structured, dict) and failed_exit(structured.get("exit_code")):
        is_error = True
    elif isinstance(output, str):
        code = _EXIT_CODE.search(output[:400])
        is_error = is_error or (code is not None and code.group(1) != "0")
    return ToolResult(
        output=output, is_error=is_error, status="error" if is_error else "completed", structured=structured
    )


def _exec_calls(item: dict[str, Any]) -> list[tuple[str, str, Any]] | None:
    """``(tool, raw name, input)`` per tool call of a ``codex exec --json`` item
    (``None``: not a tool item); shapes of openai/codex
    ``codex-rs/exec/src/exec_events.rs`` ``ThreadItemDetails``."""
    kind = item.get("type")
    if kind == "command_execution":
        return [("bash", "command_execution", {"command": item.get("command")})]
    if kind == "file_change":
        raw = item.get("changes")
        changes: list[Any] = raw if isinstance(raw, list) else []
        tools = {"add": "write", "update": "edit", "delete": "delete"}
        return [
            (tools.get(str(c.get("kind")), "edit"), "file_change", {"file_path": c.get("path")})
            for c in changes
            if isinstance(c, dict)
        ] or [("edit", "file_change", {})]
    if kind == "mcp_tool_call":
        server, tool = as_str(item.get("server")) or "", as_str(item.get("tool")) or "unknown"
        return [(tool_name(tool, server or None), f"{server}__{tool}", item.get("arguments"))]
    if kind == "web_search":
        return [("web_search", "web_search", {"query": item.get("query"), "action": item.get("action")})]
    if kind == "todo_list":
        return [("todo", "todo_list", {"items": item.get("items")})]
    if kind == "collab_tool_call":
        args = {k: item.get(k) for k in ("tool", "prompt", "receiver_thread_ids")}
        return [("task", "collab_tool_call", args)]
    return None


def _exec_result(item: dict[str, Any]) -> ToolResult:
    """The result of a completed ``codex exec --json`` tool item."""
    status = as_str(item.get("status"))
    failed = status in ("failed", "declined") or failed_exit(item.get("exit_code"))
    output: Any = item.get("aggregated_output")
    if item.get("type") == "mcp_tool_call":
        result, error = item.get("result"), item.get("error")
        output = result.get("content") if isinstance(result, dict) else None
        if isinstance(error, dict):
            output, failed = error.get("message"), True
    structured = {k: item[k] for k in ("exit_code", "status", "changes") if k in item}
    return ToolResult(
        output=output,
        is_error=failed,
        status="error" if failed else "completed",
        structured=structured or None,
    )


class _Pending(msgspec.Struct, array_like=True):
    """A user response item emitted as a prompt that may turn out to be injected context."""

    id: str
    text: str


class CodexState(msgspec.Struct, kw_only=True):
    """Parser state between reads: the header, turn pointers, usage baseline, open calls."""

    diagnostics: Diagnostics = msgspec.field(default_factory=Diagnostics)
    header: Session | None = None
    meta_seen: bool = False
    thread_name: str | None = None
    first_prompt: str | None = None
    first_item_text: str | None = None
    ended_at: datetime | None = None
    fork_start_ms: int | None = None
    fork_phase: int = _FORK_LIVE
    model: str | None = None
    current: str | None = None
    """The assistant message receiving parts (closed by any input)."""
    usage_target: str | None = None
    """The latest assistant message of this turn without usage yet."""
    prev_total: list[int] | None = None
    prev_last: list[int] | None = None
    web_searches: int = 0
    service_tier: str | None = None
    """The thread's service tier (``thread_settings_applied``), ``None`` for the standard one."""
    prompt_events: bool = False
    pending: list[_Pending] = msgspec.field(default_factory=list)
    echo: str | None = None
    """The last prompt event's text, until its response-item copy is seen."""
    open_calls: dict[str, int] = msgspec.field(default_factory=dict)
    """Call id → number of tool-call parts (several for a multi-file patch)."""
    end_details: dict[str, Any] = msgspec.field(default_factory=dict)
    last_call_by_name: dict[str, str] = msgspec.field(default_factory=dict)
    last_web_search: str | None = None
    compaction_open: bool = False
    rate_limits: RateLimits | None = None
    inferred: list[str] = msgspec.field(default_factory=list)
    """Calls priced at the version's default model until a ``turn_context`` names one."""


class CodexParser(LineParser[CodexState]):
    """Parses one Codex rollout file (one session)."""

    state_type = CodexState
    slug: ClassVar[str] = SLUG
    """The agent the sessions belong to (a fork of Codex writing the same rollouts
    subclasses the parser with its own slug)."""

    def initial_state(self) -> CodexState:
        return CodexState()

    # -- session --------------------------------------------------------------

    def _new_header(self, sid: str | None = None) -> Session:
        if sid is None:
            name = PurePath(self.ref.path).name
            found = _FILE_UUID.findall(name)
            sid = found[-1] if found else name.removesuffix(".jsonl")
        return Session(key=session_key(self.slug, sid), agent=self.slug, id=sid, sources=[self.ref.path])

    @property
    def session(self) -> Session:
        """The session header; its id is fixed here, by the first session_meta or,
        when something must be emitted before one, by the file name."""
        if self.state.header is None:
            self.state.header = self._new_header()
        return self.state.header

    @property
    def replaying(self) -> bool:
        return self.state.fork_phase == _FORK_REPLAY

    def _mid(self, offset: int) -> str:
        return f"{self.session.id}@{offset}"

    def _message(
        self,
        offset: int,
        role: Role,
        when: datetime | None,
        parts: list[Part],
        flags: tuple[MessageFlag, ...] = (),
        model: str | None = None,
    ) -> Message:
        """A new message whose id is this record's offset (flagged ``replayed`` in a fork's copy)."""
        all_flags: list[MessageFlag] = [*flags, "replayed"] if self.replaying else list(flags)
        return Message(
            id=self._mid(offset),
            role=role,
            timestamp=when,
            model=model,
            parts=parts,
            flags=all_flags,
            offset=offset,
        )

    def _emit(self, item: Message | ToolOutput) -> None:
        if isinstance(item, Message):
            self.state.compaction_open = False
        self.emit(self.session.id, item)

    def _status(self, status: SessionStatus, evidence: str) -> None:
        if not self.replaying:
            self.session.status = status
            self.session.status_evidence = evidence

    # -- dispatch -------------------------------------------------------------

    def handle(self, record: dict[str, Any], offset: int) -> None:
        kind = record.get("type")
        when = parse_time(record.get("timestamp", record.get("created_at")))
        if when is not None and (self.state.ended_at is None or when > self.state.ended_at):
            self.state.ended_at = when
        payload = record.get("payload")
        if kind in _IGNORED_ENVELOPES:
            self.diagnostics.skip(f"ignored:{kind}")
        elif kind in _ENVELOPES:
            if not isinstance(payload, dict):
                self.diagnostics.skip(f"malformed:{kind}")
            elif kind == "session_meta":
                self._session_meta(payload, when)
            elif kind == "turn_context":
                self._turn_context(payload)
            elif kind == "compacted":
                self._compaction(offset, when, as_str(payload.get("message")) or "")
            elif kind == "event_msg":
                self._event(payload, record, offset, when)
            else:
                self._item(payload, record, offset, when)
        elif kind in _EXEC_EVENTS:
            self._exec_event(kind, record, offset)
        elif isinstance(kind, str) and "payload" in record:
            self._unknown(record, offset, when, kind)
        elif record.get("record_type") == "state":
            self.diagnostics.skip("ignored:state")
        elif kind is None and "role" in record:
            self._item({**record, "type": "message"}, record, offset, when)
        elif kind is None and "id" in record:
            self._session_meta(record, when)
        elif kind in _LEGACY_ITEMS:
            self._item(record, record, offset, when)
        else:
            self._unknown(record, offset, when, kind if isinstance(kind, str) else "<none>")

    def _unknown(self, record: dict[str, Any], offset: int, when: datetime | None, kind: str) -> None:
        self.diagnostics.unknown(kind)
        self._emit(self._message(offset, "system", when, [UnknownPart(raw=record)], ("unknown",)))

    # -- session_meta / turn_context ------------------------------------------

    def _session_meta(self, meta: dict[str, Any], when: datetime | None) -> None:
        meta_id = as_str(meta.get("id"))
        if self.state.meta_seen:
            self.diagnostics.skip("ignored:session_meta")
            if self.state.fork_phase == _FORK_BEFORE and meta_id != self.session.id:
                self.state.fork_phase = _FORK_REPLAY
            elif self.state.fork_phase in (_FORK_REPLAY, _FORK_MATCH) and meta_id == self.session.id:
                self.state.fork_phase = _FORK_LIVE
            return
        self.diagnostics.use()
        self.state.meta_seen = True
        if self.state.header is None and meta_id:
            self.state.header = self._new_header(meta_id)
        header = self.session
        header.agent_version = as_str(meta.get("cli_version"))
        header.cwd = as_str(meta.get("cwd"))
        git = meta.get("git")
        header.git_branch = as_str(git.get("branch")) if isinstance(git, dict) else None
        header.started_at = parse_time(meta.get("timestamp")) or when
        self._lineage(header, meta)
        if as_str(meta.get("forked_from_id")):
            self.state.fork_phase = _FORK_BEFORE
            start = uuid7_ms(header.id)
            if start is None and header.started_at is not None:
                start = int(header.started_at.timestamp() * 1000)
            self.state.fork_start_ms = start

    @classmethod
    def _lineage(cls, header: Session, meta: dict[str, Any]) -> None:
        source = meta.get("source")
        sub = source.get("subagent") if isinstance(source, dict) else None
        parent = as_str(meta.get("parent_thread_id"))
        kind: SessionKind = "main"
        if sub is not None:
            kind = "subagent"
            if sub in ("review", "compact"):
                kind = sub
                header.subagent_type = sub
            elif isinstance(sub, str):
                header.subagent_type = sub
            elif isinstance(sub, dict) and isinstance(sub.get("thread_spawn"), dict):
                spawn = sub["thread_spawn"]
                parent = as_str(spawn.get("parent_thread_id")) or parent
                role = as_str(spawn.get("agent_role")) or as_str(meta.get("agent_role"))
                nick = as_str(spawn.get("agent_nickname")) or as_str(meta.get("agent_nickname"))
                header.subagent_type = role or nick
                header.description = nick if role else None
            elif isinstance(sub, dict):
                header.subagent_type = as_str(sub.get("other")) or next(iter(sub), None)
        elif meta.get("thread_source") == "subagent" or parent:
            kind = "subagent"
            header.subagent_type = as_str(meta.get("agent_role")) or as_str(meta.get("agent_nickname"))
        elif as_str(meta.get("forked_from_id")):
            kind = "fork"
        elif source == "exec":
            kind = "exec"
        header.kind = kind
        parent = parent or as_str(meta.get("forked_from_id"))
        header.parent_key = session_key(cls.slug, parent) if parent else None

    def _turn_boundary(self, payload: dict[str, Any]) -> None:
        """Close the assistant message; end (or detect) a fork's replayed copy by turn id."""
        self.state.current = None
        start, turn = self.state.fork_start_ms, uuid7_ms(payload.get("turn_id"))
        if self.state.fork_phase == _FORK_LIVE or not self.state.meta_seen:
            return
        if turn is None:
            if self.state.fork_phase in (_FORK_BEFORE, _FORK_REPLAY):
                self.state.fork_phase = _FORK_MATCH  # no marker will come: the link rule decides
            return
        if start is None:
            return
        if turn >= start:
            self.state.fork_phase = _FORK_LIVE
        else:
            self.state.fork_phase = _FORK_REPLAY

    def _turn_context(self, payload: dict[str, Any]) -> None:
        self.diagnostics.use()
        self._turn_boundary(payload)
        self.state.model = as_str(payload.get("model")) or self.state.model
        if self.state.model is not None and self.state.inferred:
            for mid in self.state.inferred:  # the nearest recorded model, over the version's default
                self._emit(
                    Message(id=mid, role="assistant", model=self.state.model, flags=["model_inferred"])
                )
            self.state.inferred.clear()
        cwd = as_str(payload.get("cwd"))
        if cwd and not self.replaying:
            self.session.cwd = cwd

    # -- response items ---------------------------------------------------------

    def _item(self, item: dict[str, Any], record: dict[str, Any], offset: int, when: datetime | None) -> None:
        kind = item.get("type")
        if kind == "message":
            self._response_message(item, record, offset, when)
        elif kind == "reasoning":
            self._reasoning(item, offset, when)
        elif kind in ("function_call", "custom_tool_call", "local_shell_call", "tool_search_call"):
            self._call(item, offset, when)
        elif kind in (
            "function_call_output",
            "custom_tool_call_output",
            "tool_search_output",
            "function_result",
        ):
            self._output(item, offset, when)
        elif kind == "web_search_call":
            self._web_search(item, offset, when)
        elif kind == "image_generation_call":
            self._image_generation(item, offset, when)
        elif kind == "agent_message":
            self.diagnostics.use()
            self.state.current = None
            self._emit(self._message(offset, "user", when, content_parts(item.get("content")), ("meta",)))
        elif kind in _IGNORED_ITEMS:
            self.diagnostics.skip(f"ignored:{kind}")
        else:
            self._unknown(record, offset, when, kind if isinstance(kind, str) else "<none>")

    def _assistant(self, parts: list[Part], offset: int, when: datetime | None) -> None:
        """Add ``parts`` to the open assistant message (opening one at this record)."""
        self._settle_pending()
        if self.state.current is None:
            message = self._message(offset, "assistant", when, parts, model=self.state.model)
            self.state.current = self.state.usage_target = message.id
        else:
            message = Message(id=self.state.current, role="assistant", parts=parts)
        self._emit(message)

    def _response_message(
        self, item: dict[str, Any], record: dict[str, Any], offset: int, when: datetime | None
    ) -> None:
        role = item.get("role")
        content = item.get("content", item.get("message"))
        if role == "assistant":
            self.diagnostics.use()
            self._assistant(content_parts(content), offset, when)
            return
        if role not in ("user", "developer", "system"):
            self._unknown(record, offset, when, f"message/{role}")
            return
        self.state.current = None
        text = block_text(content).strip()
        if role != "user" or is_context(text):
            self.diagnostics.use()
            self._emit(
                self._message(
                    offset, "system" if role != "user" else "user", when, content_parts(content), ("meta",)
                )
            )
            return
        if self.state.echo is not None and text == self.state.echo:
            self.state.echo = None
            self.diagnostics.skip("duplicate:user_message")
            return
        self.diagnostics.use()
        message = self._message(offset, "user", when, content_parts(content))
        self._emit(message)
        self.state.pending.append(_Pending(id=message.id, text=text))
        if not self.replaying:
            self.state.first_item_text = self.state.first_item_text or bounded_title(text)

    def _settle_pending(self) -> None:
        """The model replies: user items still unconfirmed are context if prompts are typed
        events in this file, else they were the prompts."""
        if self.state.prompt_events:
            for pending in self.state.pending:
                self._emit(Message(id=pending.id, role="user", flags=["meta"]))
        self.state.pending.clear()
        self.state.echo = None

    def _reasoning(self, item: dict[str, Any], offset: int, when: datetime | None) -> None:
        self.diagnostics.use()
        summary = item.get("summary")
        content = item.get("content")
        part = ReasoningPart(
            text=block_text(content) if isinstance(content, list) else "",
            summary="\n\n".join(
                s["text"] for s in summary if isinstance(s, dict) and isinstance(s.get("text"), str)
            )
            if isinstance(summary, list)
            else "",
            encrypted=bool(item.get("encrypted_content")),
        )
        self._assistant([part], offset, when)

    def _call(self, item: dict[str, Any], offset: int, when: datetime | None) -> None:
        kind = item["type"]
        function = item.get("function")
        name = as_str(item.get("name")) or (
            as_str(function.get("name")) if isinstance(function, dict) else None
        )
        call_id = as_str(item.get("call_id")) or as_str(item.get("id")) or self._mid(offset)
        namespace = as_str(item.get("namespace"))
        if kind == "local_shell_call":
            name, raw_input = "local_shell_call", item.get("action")
        elif kind == "tool_search_call":
            name, raw_input = "tool_search", item.get("arguments")
        elif kind == "custom_tool_call":
            raw_input = item.get("input")
        else:
            raw_input = item.get("arguments")
        name = name or "unknown"
        self.diagnostics.use()
        self.state.last_call_by_name[name] = call_id
        args = json_or_text(raw_input)
        patch = args if kind == "custom_tool_call" else args.get("input") if isinstance(args, dict) else None
        files = split_patch(patch) if name == "apply_patch" and isinstance(patch, str) else []
        if files:
            parts: list[Part] = [
                ToolCallPart(
                    call_id=call_id if i == 0 else f"{call_id}#{i}",
                    tool=tool,
                    raw_name=name,
                    input={"file_path": path, "patch": section},
                )
                for i, (tool, path, section) in enumerate(files)
            ]
        else:
            raw_name = f"{namespace}__{name}" if namespace else name
            parts = [
                ToolCallPart(call_id=call_id, tool=tool_name(name, namespace), raw_name=raw_name, input=args)
            ]
        self.state.open_calls[call_id] = len(parts)
        self._assistant(parts, offset, when)

    def _output(self, item: dict[str, Any], offset: int, when: datetime | None) -> None:
        call_id = as_str(item.get("call_id"))
        if call_id is None and item.get("type") == "function_result":
            call_id = self.state.last_call_by_name.get(as_str(item.get("name")) or "")
        if call_id is None:
            self.diagnostics.skip("malformed:tool_output")
            return
        self.diagnostics.use()
        self.state.current = None
        output = (
            item.get("tools")
            if item.get("type") == "tool_search_output"
            else item.get("output", item.get("result"))
        )
        result = tool_result(output, item.get("success"))
        result.ended_at = when
        details = self.state.end_details.pop(call_id, None)
        if details is not None:
            result.structured = details if result.structured is None else {**result.structured, **details}
            result.is_error = result.is_error or details.get("exit_code") not in (None, 0)
            result.status = "error" if result.is_error else result.status
        self._results(call_id, self.state.open_calls.pop(call_id, 1), result, offset, when)

    def _results(
        self, call_id: str, count: int, result: ToolResult, offset: int, when: datetime | None
    ) -> None:
        for i in range(count):
            self._emit(
                ToolOutput(
                    call_id=call_id if i == 0 else f"{call_id}#{i}",
                    result=msgspec.structs.replace(result),
                    timestamp=when,
                    offset=offset,
                )
            )

    def _web_search(self, item: dict[str, Any], offset: int, when: datetime | None) -> None:
        self.diagnostics.use()
        call_id = as_str(item.get("call_id")) or as_str(item.get("id")) or self._mid(offset)
        self.state.web_searches += 1
        self.state.last_web_search = call_id
        self._assistant(
            [
                ToolCallPart(
                    call_id=call_id, tool="web_search", raw_name="web_search_call", input=item.get("action")
                )
            ],
            offset,
            when,
        )
        status = item.get("status")
        if status in ("completed", "failed"):
            failed = status == "failed"
            self._emit(
                ToolOutput(
                    call_id=call_id,
                    result=ToolResult(
                        is_error=failed, status="error" if failed else "completed", ended_at=when
                    ),
                    timestamp=when,
                    offset=offset,
                )
            )

    def _image_generation(self, item: dict[str, Any], offset: int, when: datetime | None) -> None:
        self.diagnostics.use()
        call_id = as_str(item.get("id")) or self._mid(offset)
        prompt = item.get("revised_prompt")
        self._assistant(
            [
                ToolCallPart(
                    call_id=call_id,
                    tool="image_generation",
                    raw_name="image_generation_call",
                    input={"revised_prompt": prompt} if prompt else None,
                )
            ],
            offset,
            when,
        )

    # -- events -------------------------------------------------------------------

    def _event(
        self, event: dict[str, Any], record: dict[str, Any], offset: int, when: datetime | None
    ) -> None:
        kind = event.get("type")
        if kind == "user_message":
            self._prompt(event, offset, when)
        elif kind == "item_completed":
            item = event.get("item")
            if isinstance(item, dict) and item.get("type") == "UserMessage":
                self._prompt({"message": block_text(item.get("content"))}, offset, when)
            else:
                self.diagnostics.skip("ignored:item_completed")
        elif kind == "token_count":
            self._token_count(event, offset, when)
        elif kind == "thread_name_updated":
            self._thread_name(event)
        elif kind == "thread_settings_applied":
            self._thread_settings(event)
        elif kind in ("task_started", "task_complete", "turn_aborted", "error"):
            self._lifecycle(kind, event, offset, when)
        elif kind == "context_compacted":
            if self.state.compaction_open:
                self.state.compaction_open = False
                self.diagnostics.skip("duplicate:context_compacted")
            else:
                self._compaction(offset, when, "")
        elif kind in _END_EVENTS:
            self._end_event(kind, event, offset, when)
        elif kind == "web_search_end" and self.state.last_web_search:
            self.diagnostics.use()
            structured = {k: event[k] for k in ("query", "action") if k in event}
            self._emit(
                ToolOutput(
                    call_id=self.state.last_web_search,
                    result=ToolResult(
                        output=event.get("results"), ended_at=when, structured=structured or None
                    ),
                    timestamp=when,
                    offset=offset,
                )
            )
            self.state.last_web_search = None
        elif kind in _IGNORED_EVENTS or kind == "web_search_end":
            self.diagnostics.skip(f"ignored:{kind}")
        else:
            self._unknown(record, offset, when, kind if isinstance(kind, str) else "<none>")

    def _prompt(self, event: dict[str, Any], offset: int, when: datetime | None) -> None:
        text = (as_str(event.get("message")) or "").strip()
        if event.get("kind") in _CONTEXT_KINDS or is_context(text):
            # Context is also recorded as a response item, which is kept (flagged meta).
            self.diagnostics.skip("duplicate:user_message")
            return
        state = self.state
        state.current = state.usage_target = None
        match = next((p for p in state.pending if p.text == text), None)
        for pending in state.pending:
            if pending is not match:
                self._emit(Message(id=pending.id, role="user", flags=["meta"]))
        state.pending.clear()
        state.prompt_events = True
        if not self.replaying:
            state.first_prompt = state.first_prompt or bounded_title(text)  # held in the state
        self._status("working", "event_msg/user_message")
        if match is not None:
            state.echo = None
            self.diagnostics.skip("duplicate:user_message")
            return
        state.echo = text
        self.diagnostics.use()
        parts: list[Part] = [TextPart(text=text)] if text else []
        images, local = event.get("images"), event.get("local_images")
        parts += [image_part(ref) for ref in (images if isinstance(images, list) else [])]
        parts += [image_part(ref, local=True) for ref in (local if isinstance(local, list) else [])]
        self._emit(self._message(offset, "user", when, parts))

    def _token_count(self, event: dict[str, Any], offset: int, when: datetime | None) -> None:
        state = self.state
        limits = rate_limits_of(event.get("rate_limits"), when)
        if limits is not None and not self.replaying:
            state.rate_limits = limits
        info = event.get("info")
        if "info" not in event and ("input_tokens" in event or "output_tokens" in event):
            info = {"last_token_usage": event}
        if info is None:
            self.diagnostics.skip("ignored:token_count_null")
            return
        if not isinstance(info, dict):
            self.diagnostics.skip("malformed:token_count")
            return
        total, last = token_vector(info.get("total_token_usage")), token_vector(info.get("last_token_usage"))
        if total is not None:
            delta, state.prev_total = count_total(
                total, state.prev_total, last, state.fork_phase in (_FORK_BEFORE, _FORK_MATCH)
            )
        elif last is not None:
            delta = [0] * 5 if last == state.prev_last else last
            state.prev_last = last
        else:
            self.diagnostics.skip("malformed:token_count")
            return
        if self.replaying:
            self.diagnostics.skip("replayed:token_count")
            return
        if not any(delta):
            self.diagnostics.skip("duplicate:token_count")
            return
        self.diagnostics.use()
        self._settle_pending()
        usage = usage_of(delta, state.web_searches, state.service_tier)
        state.web_searches = 0
        model = as_str(info.get("model")) or state.model
        flags: list[MessageFlag] = (
            ["replay_candidate"] if state.fork_phase in (_FORK_BEFORE, _FORK_MATCH) else []
        )
        if model is None:
            model = default_model(self.session.agent_version, when or self.session.started_at)
            if model is not None:
                flags.append("model_inferred")
                self.diagnostics.infer("model")
            state.inferred.append(state.usage_target or self._mid(offset))
        if state.usage_target is not None:
            self._emit(
                Message(id=state.usage_target, role="assistant", model=model, usage=usage, flags=flags)
            )
        else:
            message = self._message(offset, "assistant", when, [], tuple(flags), model=model)
            message.usage = usage
            self._emit(message)
        state.current = state.usage_target = None

    def _thread_settings(self, event: dict[str, Any]) -> None:
        settings = event.get("thread_settings")
        if not isinstance(settings, dict):
            self.diagnostics.skip("malformed:thread_settings_applied")
            return
        self.diagnostics.use()
        if "service_tier" in settings:
            self.state.service_tier = service_tier(settings["service_tier"])

    def _thread_name(self, event: dict[str, Any]) -> None:
        name = as_str(event.get("thread_name")) or as_str(event.get("name"))
        if name is None:
            self.diagnostics.skip("empty:thread_name_updated")
            return
        self.diagnostics.use()
        if not self.replaying:
            self.state.thread_name = name

    def _lifecycle(self, kind: str, event: dict[str, Any], offset: int, when: datetime | None) -> None:
        self.diagnostics.use()
        if kind == "task_started":
            self._turn_boundary(event)
            self._status("working", "event_msg/task_started")
            return
        self.state.current = None
        error = event.get("error")
        if kind == "error" or isinstance(error, dict):
            detail = error if isinstance(error, dict) else event
            text = as_str(detail.get("message")) or "error"
            self._emit(self._message(offset, "system", when, [TextPart(text=text)], ("api_error",)))
            self._status("errored", f"event_msg/{kind}")
        elif kind == "turn_aborted":
            reason = as_str(event.get("reason")) or "interrupted"
            self._emit(
                self._message(
                    offset, "system", when, [TextPart(text=f"Turn aborted: {reason}")], ("interrupted",)
                )
            )
            for call_id, count in self.state.open_calls.items():
                self._results(call_id, count, ToolResult(status="interrupted", ended_at=when), offset, when)
            self.state.open_calls.clear()
            self.state.end_details.clear()
            self._status("interrupted", "event_msg/turn_aborted")
        else:
            done: SessionStatus = "waiting_for_user" if self.session.kind in ("main", "fork") else "done"
            self._status(done, "event_msg/task_complete")

    def _compaction(self, offset: int, when: datetime | None, summary: str) -> None:
        self.diagnostics.use()
        self.state.current = None
        self._emit(
            self._message(offset, "system", when, [CompactionPart(summary=summary)], ("compaction_summary",))
        )
        self.state.compaction_open = True

    def _end_event(self, kind: str, event: dict[str, Any], offset: int, when: datetime | None) -> None:
        call_id = as_str(event.get("call_id"))
        details = {k: v for k, v in event.items() if k not in _END_BULK}
        if call_id is not None and call_id in self.state.open_calls:
            self.diagnostics.use()
            self.state.end_details[call_id] = details
        elif call_id is not None and kind in ("exec_command_end", "mcp_tool_call_end"):
            self.diagnostics.use()
            outcome = event.get("result")
            if kind == "exec_command_end":
                output: Any = event.get("aggregated_output", event.get("stdout"))
                failed = failed_exit(event.get("exit_code"))
            else:
                ok = outcome.get("Ok") if isinstance(outcome, dict) else None
                output = ok.get("content") if isinstance(ok, dict) else outcome
                failed = not isinstance(ok, dict) or ok.get("isError") is True
            self._emit(
                ToolOutput(
                    call_id=call_id,
                    result=ToolResult(
                        output=output,
                        is_error=failed,
                        status="error" if failed else "completed",
                        ended_at=when,
                        structured=details,
                    ),
                    timestamp=when,
                    offset=offset,
                )
            )
        else:
            self.diagnostics.skip(f"ignored:{kind}")

    # -- codex exec --json streams --------------------------------------------------

    def _exec_event(self, kind: str, record: dict[str, Any], offset: int) -> None:
        """One line of a saved ``codex exec --json`` stream (no timestamps)."""
        thread = as_str(record.get("thread_id")) if kind == "thread.started" else None
        if self.state.header is None and thread:
            self.state.header = self._new_header(thread)
        if not self.state.meta_seen:
            self.session.kind = "exec"
        if kind == "thread.started":
            self.diagnostics.use()
        elif kind == "turn.started":
            self.diagnostics.use()
            self.state.current = None
            self._status("working", "turn.started")
        elif kind == "turn.completed":
            usage = record.get("usage")
            if not isinstance(usage, dict):
                self.diagnostics.skip("malformed:turn.completed")
                return
            self._token_count({"info": {"total_token_usage": usage}}, offset, None)
            self._status("done", "turn.completed")
        elif kind in ("turn.failed", "error"):
            self.diagnostics.use()
            error = record.get("error") if kind == "turn.failed" else record
            text = (as_str(error.get("message")) if isinstance(error, dict) else None) or kind
            self._emit(self._message(offset, "system", None, [TextPart(text=text)], ("api_error",)))
            self._status("errored", kind)
        elif kind == "item.completed" and isinstance(record.get("item"), dict):
            self._exec_item(record["item"], record, offset)
        else:
            self.diagnostics.skip(f"ignored:{kind}")

    def _exec_item(self, item: dict[str, Any], record: dict[str, Any], offset: int) -> None:
        kind = item.get("type")
        item_id = as_str(item.get("id")) or self._mid(offset)
        if kind == "agent_message" or kind == "plan":
            self.diagnostics.use()
            self._assistant([TextPart(text=as_str(item.get("text")) or "")], offset, None)
            return
        if kind == "reasoning":
            self.diagnostics.use()
            self._assistant([ReasoningPart(summary=as_str(item.get("text")) or "")], offset, None)
            return
        if kind == "error":
            self.diagnostics.use()
            text = as_str(item.get("message")) or "error"
            self._emit(self._message(offset, "system", None, [TextPart(text=text)], ("api_error",)))
            return
        calls = _exec_calls(item)
        if calls is None:
            self._unknown(record, offset, None, f"item/{kind if isinstance(kind, str) else '<none>'}")
            return
        self.diagnostics.use()
        parts: list[Part] = [
            ToolCallPart(call_id=item_id if i == 0 else f"{item_id}#{i}", tool=tool, raw_name=raw, input=args)
            for i, (tool, raw, args) in enumerate(calls)
        ]
        self._assistant(parts, offset, None)
        self.state.current = None
        self._results(item_id, len(parts), _exec_result(item), offset, None)

    # -- headers ------------------------------------------------------------------

    def headers(self) -> list[Session]:
        if self.state.header is None and self.diagnostics.records_total == 0:
            return []
        current = self.state.header or self._new_header()
        header = msgspec.structs.replace(current, sources=list(current.sources))
        header.ended_at = self.state.ended_at
        header.rate_limits = self.state.rate_limits
        header.title = self.state.thread_name or self.state.first_prompt or self.state.first_item_text
        header.diagnostics = msgspec.msgpack.decode(
            msgspec.msgpack.encode(self.diagnostics), type=Diagnostics
        )
        return [header]


class CodexAdapter(JsonlAdapter):
    """OpenAI Codex (CLI, Desktop, VS Code): ``~/.codex/sessions/**/rollout-*.jsonl``."""

    slug = SLUG
    display_name = "Codex"
    parser_version = 9  # 6: a cumulative total out of range is zeroed and counted; 7: and is no baseline; 8: nothing of it counted; 9: nor of a call of 10^9 tokens (count_total)
    env_vars: ClassVar[tuple[str, ...]] = ("CODEX_HOME",)

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        homes = [Path(p.strip()) for p in env.get("CODEX_HOME", "").split(",") if p.strip()]
        homes = homes or [home / ".codex"]
        return [h / "sessions" for h in homes] + [h / "archived_sessions" for h in homes]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        folders = [root / "sessions", root / "archived_sessions"]
        layout = any(probe.is_dir(f) for f in folders)
        # outside a home's sessions a saved `codex exec --json` stream may have any name
        any_name = not layout and not {"sessions", "archived_sessions"} & set(root.parts)
        for folder in folders if layout else [root]:
            for path in probe.walk_paths(folder, ".jsonl"):
                if any_name or os.path.basename(path).startswith("rollout-"):
                    yield SourceRef(agent=self.slug, path=path)

    def sniff(self, name: str, head: bytes) -> float:
        rollout = name.startswith("rollout-") and name.endswith(".jsonl")
        best = 0.0
        for line in head.split(b"\n")[:8]:
            record = json_value(line)
            if isinstance(record, dict):
                best = max(best, self._sniff_record(record))
        return min(1.0, best + 0.05) if rollout and best else (0.3 if rollout else best)

    @staticmethod
    def _sniff_record(record: dict[str, Any]) -> float:
        kind = record.get("type")
        payload = record.get("payload")
        if kind in _ENVELOPES and isinstance(payload, dict):
            return (
                0.95
                if kind in ("session_meta", "turn_context")
                or payload.get("type") in ("token_count", "user_message", "function_call", "reasoning")
                else 0.85
            )
        if kind == "thread.started" and isinstance(record.get("thread_id"), str):
            return 0.9
        if kind in ("turn.started", "turn.completed", "item.started", "item.completed") and (
            kind.startswith("turn") or isinstance(record.get("item"), dict)
        ):
            return 0.7
        if record.get("record_type") == "state":
            return 0.8
        if kind is None and "id" in record and "instructions" in record:
            return 0.7
        if kind in ("reasoning", "function_call", "function_call_output") and "call_id" in record:
            return 0.6
        return 0.0

    def new_parser(self, ref: SourceRef, sidecars: Mapping[str, bytes]) -> CodexParser:
        return CodexParser(ref, sidecars)

    def resume_command(self, session: Session) -> str | None:
        if session.kind == "exec":
            return resume_line("codex exec resume", session.id)
        return resume_line("codex resume", session.id) if session.kind in ("main", "fork") else None
