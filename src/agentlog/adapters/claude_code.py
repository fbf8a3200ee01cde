"""Claude Code session logs (JSONL, append-only).

Spec (see ``shared/formats.md`` §1, ``shared/cost.md`` §1; versions seen 1.0.0 – 2.1.287):

Locations
    ``$CLAUDE_CONFIG_DIR`` (comma-separated list; each entry is a config dir or its
    ``projects/`` dir) replaces the defaults ``~/.claude/projects`` and
    ``$XDG_CONFIG_HOME/claude/projects`` (``~/.config/claude/projects``).
    ``projects/<encoded-cwd>/<sessionId>.jsonl`` is a session.  Subagents, three
    generations: (1) ≤ 1.0.x inline in the parent file with ``isSidechain: true``;
    (2) 2.0.x ``projects/<p>/agent-<agentId>.jsonl`` whose lines carry the parent's
    ``sessionId``; (3) 2.1.x ``projects/<p>/<sessionId>/subagents/agent-<id>.jsonl``
    with ``agent-<id>.meta.json`` (``agentType``, ``description``, ``toolUseId``),
    and Workflow agents one level deeper in ``subagents/workflows/wf_*/``.
    Subagents are linked by directory and ``agentId``, never by ``sessionId``.
    A main session is the ``sessionId`` its first line that records one gives
    (:func:`agentlog.rules.recorded_session_id`; the file stem only when no line
    gives one): a renamed or backed-up copy is that session, found a duplicate by
    content (:func:`agentlog.rules.same_session`), resumed by that id — e.g.
    sniffly's mock file ``v1.0.17-real-session-with-tools.jsonl`` is
    ``ba79134d-…``, the name it had upstream.
    ``cwd`` comes from the records, never from the lossy folder name.

Records (one JSON object per line, ``type`` discriminates)
    used: ``user``, ``assistant`` (``message`` = Anthropic API message), ``system``
    (``compact_boundary`` → compaction part; ``api_error``/``error``/``api_refusal``/
    ``model_refusal_fallback`` → system message flagged ``api_error``;
    ``local_command`` → meta), ``summary``/``custom-title``/``ai-title`` (titles:
    custom > ai > summary > first real prompt), drift shapes ``tool_use``/``tool_result``
    at top level, and lines with no ``type`` but a ``message.role`` (old usage-only
    lines with ``costUSD``), and ``attachment`` lines of type ``queued_command``
    (2.1.x: ``attachment.prompt``, a string or content blocks, typed while a tool
    ran → a user message; a ``<task-notification>`` prompt → a system message
    flagged ``meta``; agentsview ``internal/parser/claude.go``
    ``extractQueuedCommand``/``classifyClaudeSystemMessage``; shapes in the 2.1
    shape catalog of jazzyalex/agent-sessions).  Ignored with a reason code:
    ``progress``, other ``attachment`` types, ``queue-operation`` (enqueued input
    reappears as a ``user`` line or a ``queued_command`` attachment),
    ``file-history-snapshot``, the small metadata lines (``agent-name``, ``mode`` …)
    and noise ``system`` subtypes (``turn_duration``, ``stop_hook_summary`` …).
    Anything else is kept raw as an ``unknown`` message.

    Sample: ``{"type":"assistant","sessionId":"…","uuid":"…","timestamp":"2025-09-07T09:52:05Z",
    "requestId":"req_…","message":{"id":"msg_…","role":"assistant","model":"claude-sonnet-4",
    "content":[{"type":"tool_use","id":"toolu_…","name":"Bash","input":{"command":"ls"}}],
    "usage":{"input_tokens":4,"cache_creation_input_tokens":120,"cache_read_input_tokens":9000,
    "output_tokens":3}}}``

Messages
    One API response is written as one line per content block, each with a copy of
    ``usage`` whose ``output_tokens`` grows: lines are merged by ``message.id`` and
    the final (largest) usage copy is kept, never summed.  ``model == "<synthetic>"``
    marks locally written placeholders (flag ``synthetic``, no usage).  User lines
    that are only ``tool_result`` blocks become results merged into their tool call
    (``toolUseResult`` kept as ``structured``).  ``isMeta``, system reminders,
    command caveats and local command output are flagged ``meta``; compaction
    summaries (``isCompactSummary``) ``compaction_summary``; ``[Request interrupted
    by user…]`` ``interrupted`` + ``synthetic``; ``isApiErrorMessage`` ``api_error``;
    ``message.stop_reason: end_turn`` ``turn_end``.

Tokens (Anthropic semantics, exclusive)
    ``input_tokens`` excludes cache; ``cache_creation.ephemeral_5m/1h_input_tokens``
    split ``cache_creation_input_tokens`` by TTL (no split → all 5-minute);
    ``cache_read_input_tokens``; ``output_tokens`` includes thinking;
    ``server_tool_use.web_search_requests``.  ``costUSD`` (old versions) is kept as a
    ``recorded`` cost.  ``usage.service_tier`` (``"standard"`` on every line of the
    1.0.17–2.1 fixtures; ``"priority"``/``"batch"`` per Anthropic's API) and
    ``usage.speed`` (``"fast"``, fast mode, claude-code-viewer
    ``AssistantMessageSchema.ts``) give ``Usage.service_tier`` (``fast`` wins; the
    standard tier → ``None``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path, PurePath
from typing import Any

import msgspec

from agentlog import lazy, probe
from agentlog.adapters._binary import inline_size
from agentlog.adapters._content import block_text
from agentlog.adapters._json import JsonError, parse_object
from agentlog.adapters._tools import normalise_tool
from agentlog.adapters._values import as_dict, as_int, as_str, iso_time, service_tier
from agentlog.adapters.base import JsonlAdapter, LineParser, SourceRef, ToolOutput, resume_line
from agentlog.model import (
    CompactionPart,
    Diagnostics,
    FilePart,
    Message,
    MessageFlag,
    Part,
    ReasoningPart,
    Session,
    SessionKind,
    TextPart,
    ToolCallPart,
    ToolResult,
    ToolStatus,
    UnknownPart,
    Usage,
)
from agentlog.rules import (
    TITLE_AI,
    TITLE_CUSTOM,
    TITLE_PROMPT,
    TITLE_SUMMARY,
    bounded_title,
    first_cwd,
    prompt_as_title,
    recorded_session_id,
    session_key,
    session_title,
    title_wins,
)

SLUG = "claude_code"

TOOL_NAMES = {
    "Bash": "bash",
    "BashOutput": "bash_output",
    "KillShell": "kill_shell",
    "Read": "read",
    "Write": "write",
    "Edit": "edit",
    "MultiEdit": "edit",
    "NotebookEdit": "edit",
    "NotebookRead": "read",
    "Grep": "grep",
    "Glob": "glob",
    "LS": "list",
    "WebFetch": "web_fetch",
    "WebSearch": "web_search",
    "Task": "task",
    "Agent": "task",
    "TodoWrite": "todo",
    "TodoRead": "todo",
    "ExitPlanMode": "exit_plan_mode",
    "SubagentHandback": "handback",
}
"""Claude Code tool names → agentlog's normalised names (MCP tools keep ``mcp__server__tool``)."""

IGNORED_TYPES = frozenset(
    {
        "progress",
        "attachment",
        "queue-operation",
        "file-history-snapshot",
        "agent-name",
        "agent-setting",
        "permission-mode",
        "mode",
        "last-prompt",
        "pr-link",
        "bridge-session",
        "worktree-state",
        "relocated",
        "frame-link",
        "atis-latch",
        "started",
        "result",
    }
)
IGNORED_SYSTEM = frozenset(
    {
        "turn_duration",
        "stop_hook_summary",
        "session_start",
        "informational",
        "bridge_status",
        "away_summary",
    }
)
ERROR_SYSTEM = frozenset({"api_error", "error", "api_refusal", "model_refusal_fallback"})
META_PREFIXES = (
    "<local-command-caveat>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<system-reminder>",
    "Caveat: The messages below were generated by the user while running local commands",
    "<user-prompt-submit-hook>",
    "<task-notification>",
    "<agent-message ",
)
INTERRUPTED_PREFIX = "[Request interrupted by user"
_AGENT_FILE = lazy.pattern(r"^agent-(.+)\.jsonl$")


def tool_name(raw: str) -> str:
    """Normalised tool name for a Claude Code tool called ``raw``."""
    return normalise_tool(raw, TOOL_NAMES)


_COMMAND = lazy.pattern(r"<command-name>\s*(.*?)\s*</command-name>", re.S)
_COMMAND_ARGS = lazy.pattern(r"<command-args>\s*(.*?)\s*</command-args>", re.S)
_SPACES = lazy.pattern(r"\s*")


def prompt_title(text: str) -> str:
    """A title from a first prompt: a slash command as ``/name args``, else the text."""
    command = _COMMAND.search(text)
    if command:
        args = _COMMAND_ARGS.search(text)
        name = command.group(1)
        name = name if name.startswith("/") else f"/{name}"
        return f"{name} {args.group(1)}".strip() if args else name
    return prompt_as_title(text)


def file_session(path: PurePath) -> tuple[str, SessionKind, str | None]:
    """``(session id, kind, parent key)`` of a Claude Code file from its path alone:
    ``<sessionId>.jsonl`` is a main session, ``agent-<id>.jsonl`` a subagent whose
    parent is the session folder above ``subagents/`` (generation 3; else found
    later from the lines' ``sessionId``)."""
    agent_file = _AGENT_FILE.match(path.name)
    if not agent_file:
        return path.stem, "main", None
    parts = path.parts
    parent = None
    if "subagents" in parts:
        parent = session_key(SLUG, parts[len(parts) - 1 - parts[::-1].index("subagents") - 1])
    return f"agent-{agent_file.group(1)}", "subagent", parent


def record_time(value: Any) -> datetime | None:
    """A line's ``timestamp`` as an aware UTC time: Claude Code writes an ISO-8601
    string (``new Date().toISOString()``, ``"2025-09-07T09:52:05.123Z"``; ccusage
    validates it as one), so anything else — an epoch number included — is no
    time (:func:`~agentlog.adapters._values.iso_time`).  The one rule for this
    field: the adapter and the fast usage scanner (:mod:`agentlog.usage.scan`)
    both call it."""
    return iso_time(value)


def usage_of(record: dict[str, Any], usage: Any) -> Usage | None:
    """Exclusive buckets from an Anthropic ``usage`` object (``None`` if absent)."""
    if not isinstance(usage, dict):
        return None
    cache_write = as_int(usage.get("cache_creation_input_tokens"))
    split = usage.get("cache_creation")
    w5m, w1h = cache_write, 0
    if isinstance(split, dict):
        s5m = as_int(split.get("ephemeral_5m_input_tokens"))
        s1h = as_int(split.get("ephemeral_1h_input_tokens"))
        if s5m + s1h == cache_write or cache_write == 0:
            w5m, w1h = s5m, s1h
    server = usage.get("server_tool_use")
    cost = record.get("costUSD")
    recorded = isinstance(cost, int | float) and not isinstance(cost, bool)
    return Usage(
        input_tokens=as_int(usage.get("input_tokens")),
        cache_read_tokens=as_int(usage.get("cache_read_input_tokens")),
        cache_write_5m_tokens=w5m,
        cache_write_1h_tokens=w1h,
        output_tokens=as_int(usage.get("output_tokens")),
        web_search_requests=as_int(server.get("web_search_requests")) if isinstance(server, dict) else 0,
        cost_usd=float(cost) if recorded and cost is not None else None,
        cost_source="recorded" if recorded else None,
        service_tier=service_tier(usage.get("service_tier"), usage.get("speed")),
    )


def _user_parts(content: list[Any]) -> list[Part]:
    """The parts of a user message's ``content`` blocks (``tool_result`` blocks are
    tool outputs, left out here)."""
    parts: list[Part] = []
    for block in content:
        if not isinstance(block, dict):
            parts.append(UnknownPart(raw=block))
        elif block.get("type") == "text":
            # A slash command is recorded as <command-name>/<command-args> tags:
            # keep what the person typed ("/review pr 12").
            text = str(block.get("text") or "")
            parts.append(TextPart(text=prompt_title(text) if _COMMAND.search(text) else text))
        elif block.get("type") in ("image", "document"):
            source = as_dict(block.get("source"))
            parts.append(
                FilePart(
                    media_type=str(source.get("media_type") or block["type"]),
                    ref=str(source.get("url") or source.get("path") or ""),
                    size=inline_size(source),
                )
            )
        elif block.get("type") != "tool_result":
            parts.append(UnknownPart(raw=block))
    return parts


class ClaudeState(msgspec.Struct, kw_only=True):
    """Parser state between reads (small: headers, titles, a few maps)."""

    diagnostics: Diagnostics = msgspec.field(default_factory=Diagnostics)
    sessions: dict[str, Session] = msgspec.field(default_factory=dict)
    titles: dict[str, tuple[int, str]] = msgspec.field(default_factory=dict)
    sidechains: dict[str, str] = msgspec.field(default_factory=dict)
    """Inline sidechain line uuid → subagent session id (generation 1 only)."""
    last_call_by_name: dict[str, str] = msgspec.field(default_factory=dict)
    """For drift-shaped ``tool_result`` lines that carry a tool name but no id."""
    named: bool = False
    """Whether the main session's id is settled (:func:`agentlog.rules.recorded_session_id`)."""


class ClaudeParser(LineParser[ClaudeState]):
    """Parses one Claude Code JSONL file (main session or subagent transcript)."""

    state_type = ClaudeState

    def __init__(self, ref: SourceRef, sidecars: Mapping[str, bytes]) -> None:
        self._pending: list[Message | ToolOutput] = []
        """What the main session emitted before its id was settled (:meth:`_name`)."""
        super().__init__(ref, sidecars)

    def initial_state(self) -> ClaudeState:
        state = ClaudeState()
        path = PurePath(self.ref.path)
        sid, kind, parent_key = file_session(path)
        header = Session(
            key="", agent=SLUG, id=sid, kind=kind, parent_key=parent_key, sources=[self.ref.path]
        )
        if kind == "subagent":
            meta = self._meta(state.diagnostics)
            header.subagent_type = as_str(meta.get("agentType"))
            header.description = as_str(meta.get("description"))
            header.parent_tool_call_id = as_str(meta.get("toolUseId"))
        header.key = session_key(SLUG, header.id)
        state.sessions[header.id] = header
        return state

    def _meta(self, diagnostics: Diagnostics) -> dict[str, Any]:
        """The subagent's ``agent-<id>.meta.json``; ``{}`` when absent, and when it is
        no JSON object (its reason noted in ``diagnostics.errors``)."""
        for data in self.sidecars.values():
            try:
                return parse_object(data)
            except JsonError as exc:
                diagnostics.errors.append(f"meta.json: {exc.reason}")
                return {}
        return {}

    def _name(self, record: dict[str, Any]) -> None:
        """Settle the main session's id at the first line that records one
        (:func:`agentlog.rules.recorded_session_id`): a renamed or copied file is
        the session its records name, so a copy is found a duplicate by content
        and ``claude --resume`` gets the real id.  What the main session emitted
        before (a line with no ``sessionId``) waits for that id (:meth:`emit`)."""
        main = self.main
        if main.kind == "main" and record.get("isSidechain") is True:
            return
        recorded = as_str(record.get("sessionId")) if main.kind == "main" else None
        if recorded is None and main.kind == "main":
            return
        sid = recorded_session_id(main.id, recorded)
        if sid != main.id:
            state = self.state
            old = main.key
            state.sessions = {sid: main, **{k: v for k, v in state.sessions.items() if v is not main}}
            if main.id in state.titles:
                state.titles[sid] = state.titles.pop(main.id)
            main.id, main.key = sid, session_key(SLUG, sid)
            for session in state.sessions.values():
                if session.parent_key == old:
                    session.parent_key = main.key
        self._settle()

    def _settle(self) -> None:
        """The main session's id is final: emit what waited for it."""
        self.state.named = True
        pending, self._pending = self._pending, []
        for item in pending:
            super().emit(self.main.id, item)

    def emit(self, session_id: str, item: Message | ToolOutput) -> None:
        if not self.state.named and session_id == self.main.id:
            self._pending.append(item)  # emitted under the id the records give (:meth:`_name`)
            return
        super().emit(session_id, item)

    @property
    def main(self) -> Session:
        return next(iter(self.state.sessions.values()))

    # -- records ------------------------------------------------------------

    def handle(self, record: dict[str, Any], offset: int) -> None:
        if not self.state.named:
            self._name(record)
        kind = record.get("type")
        message = record.get("message")
        if kind is None and isinstance(message, dict) and message.get("role") in ("user", "assistant"):
            kind = message["role"]
        if kind == "assistant":
            self._assistant(record, offset)
        elif kind == "user":
            self._user(record, offset)
        elif kind == "system":
            self._system(record, offset)
        elif kind in ("summary", "custom-title", "ai-title"):
            self._envelope_only(record)
            self._title(record, kind)
        elif kind == "tool_use":
            self._drift_tool_use(record, offset)
        elif kind == "tool_result":
            self._drift_tool_result(record, offset)
        elif kind == "attachment" and as_dict(record.get("attachment")).get("type") == "queued_command":
            self._queued_command(record, offset)
        elif isinstance(kind, str) and kind in IGNORED_TYPES:
            self._envelope_only(record)
            self.diagnostics.skip(f"ignored:{kind}")
        else:
            self._envelope_only(record)
            self._unknown(record, offset, kind if isinstance(kind, str) else "<none>")

    def _envelope_only(self, record: dict[str, Any]) -> None:
        """What a line that makes no message of a session still says, as every line
        says it to the usage scanner: an inline-sidechain line links its chain; else
        a line gives the main session its first cwd (the other lines' envelopes are
        read by :meth:`_session_for`)."""
        main = self.main
        if record.get("isSidechain") is True and main.kind == "main":
            self._sidechain_id(record)
        elif main.cwd is None:
            main.cwd = first_cwd((as_str(record.get("cwd")),))

    def _session_for(self, record: dict[str, Any]) -> Session:
        """The session a line belongs to, updating its header from the envelope."""
        main = self.main
        session = main
        if record.get("isSidechain") is True and main.kind == "main":
            sid = self._sidechain_id(record)
            session = self.state.sessions.get(sid) or self._new_sidechain(sid)
        elif main.kind == "subagent" and main.parent_key is None:
            parent_id = as_str(record.get("sessionId"))
            if parent_id and parent_id != main.id:
                main.parent_key = session_key(SLUG, parent_id)
        if session.cwd is None:
            session.cwd = first_cwd((as_str(record.get("cwd")),))
        session.git_branch = session.git_branch or as_str(record.get("gitBranch"))
        session.agent_version = as_str(record.get("version")) or session.agent_version
        return session

    def _sidechain_id(self, record: dict[str, Any]) -> str:
        """The id of the inline sidechain (generation 1) a line belongs to: its
        parent line's, else ``sidechain-<uuid>`` (a chain's first line); the line's
        ``uuid`` is linked to it (idempotent: a line may be looked up twice)."""
        uuid = as_str(record.get("uuid"))
        parent = as_str(record.get("parentUuid"))
        sid = self.state.sidechains.get(parent or "") or f"sidechain-{uuid or parent}"
        if uuid:
            self.state.sidechains[uuid] = sid
        return sid

    def _new_sidechain(self, sid: str) -> Session:
        main = self.main
        session = Session(
            key=session_key(SLUG, sid),
            agent=SLUG,
            id=sid,
            kind="subagent",
            parent_key=main.key,
            sources=[self.ref.path],
        )
        self.state.sessions[sid] = session
        return session

    def _base(self, record: dict[str, Any], offset: int, mid: str, role: str) -> Message:
        return Message(
            id=mid,
            role=role,  # type: ignore[arg-type]
            timestamp=record_time(record.get("timestamp")),
            is_sidechain=record.get("isSidechain") is True,
            offset=offset,
        )

    def _envelope(self, record: dict[str, Any], offset: int) -> tuple[dict[str, Any], Session, str] | None:
        """The API ``message`` of a user/assistant line, its session and line id;
        ``None`` (counted as malformed) when ``message`` is not an object."""
        message = record.get("message")
        if not isinstance(message, dict):
            self.diagnostics.skip("malformed:message")
            return None
        session = self._session_for(record)
        return message, session, as_str(record.get("uuid")) or f"{session.id}@{offset}"

    def _assistant(self, record: dict[str, Any], offset: int) -> None:
        envelope = self._envelope(record, offset)
        if envelope is None:
            return
        message, session, uuid = envelope
        out = self._base(record, offset, as_str(message.get("id")) or uuid, "assistant")
        model = as_str(message.get("model"))
        if model == "<synthetic>":
            out.flags.append("synthetic")
        else:
            out.model = model
            out.usage = usage_of(record, message.get("usage"))
        if record.get("isApiErrorMessage") is True:
            out.flags.append("api_error")
        if record.get("isAbortedMidStream") is True:
            out.flags.append("interrupted")
        if message.get("stop_reason") == "end_turn":  # the turn ended here (agentlog.live.status)
            out.flags.append("turn_end")
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for index, block in enumerate(content if isinstance(content, list) else []):
            part = self._assistant_part(block, f"{uuid}#{index}")
            if part is not None:
                out.parts.append(part)
        self.diagnostics.use()
        self.emit(session.id, out)

    def _assistant_part(self, block: Any, fallback_id: str) -> Part | None:
        if not isinstance(block, dict):
            return UnknownPart(raw=block)
        kind = block.get("type")
        if kind == "text":
            return TextPart(text=str(block.get("text") or ""))
        if kind == "thinking":
            text = str(block.get("thinking") or "")
            return ReasoningPart(text=text, encrypted=not text and bool(block.get("signature")))
        if kind == "redacted_thinking":
            return ReasoningPart(encrypted=True)
        if kind == "tool_use":
            raw = str(block.get("name") or "")
            call_id = as_str(block.get("id")) or fallback_id
            self.state.last_call_by_name[raw] = call_id
            return ToolCallPart(call_id=call_id, tool=tool_name(raw), raw_name=raw, input=block.get("input"))
        return UnknownPart(raw=block)

    def _user(self, record: dict[str, Any], offset: int) -> None:
        envelope = self._envelope(record, offset)
        if envelope is None:
            return
        message, session, uuid = envelope
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            self.diagnostics.skip("empty_message")
            return
        when = record_time(record.get("timestamp"))
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        structured = record.get("toolUseResult")
        single = len(results) == 1
        for block in results:
            if single and not block.get("tool_use_id") and as_str(record.get("sourceToolUseID")):
                block = {**block, "tool_use_id": record["sourceToolUseID"]}
            self.emit(session.id, self._tool_output(block, structured if single else None, when, offset))
        out = self._base(record, offset, uuid, "user")
        out.parts.extend(_user_parts(content))
        if not out.parts:
            if results:
                self.diagnostics.use()
            else:
                self.diagnostics.skip("empty_message")
            return
        out.flags.extend(self._user_flags(record, out.text))
        self._prompt(session, out)

    def _prompt(self, session: Session, out: Message) -> None:
        """Emit the user message ``out``; the first real prompt names the session."""
        held = self.state.titles.get(session.id)
        text = out.text
        if (
            not out.flags
            and title_wins(TITLE_PROMPT, held[0] if held else None)
            and text
            and not text.isspace()
        ):
            self.state.titles[session.id] = (TITLE_PROMPT, bounded_title(prompt_title(text)))
        self.diagnostics.use()
        self.emit(session.id, out)

    def _queued_command(self, record: dict[str, Any], offset: int) -> None:
        """An ``attachment`` of type ``queued_command`` (2.1.x): input the user typed
        while a tool ran, which the model read with the next tool result.  A prompt
        is a user message; a ``<task-notification>`` (a background task finished) is
        a system message flagged ``meta``, as the same text in a user line is."""
        attachment = as_dict(record.get("attachment"))
        prompt = attachment.get("prompt")
        content = [{"type": "text", "text": prompt}] if isinstance(prompt, str) else prompt
        session = self._session_for(record)
        uuid = as_str(record.get("uuid")) or f"{session.id}@{offset}"
        out = self._base(record, offset, uuid, "user")
        out.timestamp = out.timestamp or record_time(attachment.get("timestamp"))
        out.parts.extend(_user_parts(content if isinstance(content, list) else []))
        if not out.text.strip() and not any(not isinstance(p, TextPart) for p in out.parts):
            self.diagnostics.skip("empty:queued_command")  # nothing typed (agentsview skips it too)
            return
        out.flags.extend(self._user_flags(attachment, out.text))
        if out.text.lstrip().startswith("<task-notification>"):
            out.role = "system"
        self._prompt(session, out)

    @staticmethod
    def _user_flags(record: dict[str, Any], text: str) -> list[MessageFlag]:
        start = _SPACES.match(text).end()  # type: ignore[union-attr]  # always matches; no copy of the text
        if record.get("isCompactSummary") is True:
            return ["compaction_summary"]
        if text.startswith(INTERRUPTED_PREFIX, start):
            return ["interrupted", "synthetic"]
        if record.get("isMeta") is True or record.get("isVisibleInTranscriptOnly") is True:
            return ["meta"]
        if text.startswith(META_PREFIXES, start):
            return ["meta"]
        return []

    @staticmethod
    def _tool_output(
        block: dict[str, Any], structured: Any, when: datetime | None, offset: int
    ) -> ToolOutput:
        is_error = block.get("is_error") is True
        status: ToolStatus = "error" if is_error else "completed"
        if isinstance(structured, dict) and structured.get("interrupted") is True:
            status = "interrupted"
        output = block.get("content")
        if output is None:
            output = block.get("text")
        return ToolOutput(
            call_id=str(block.get("tool_use_id") or ""),
            result=ToolResult(
                output=output, is_error=is_error, status=status, ended_at=when, structured=structured
            ),
            timestamp=when,
            offset=offset,
        )

    def _system(self, record: dict[str, Any], offset: int) -> None:
        subtype = record.get("subtype")
        if subtype in IGNORED_SYSTEM:
            self.diagnostics.skip(f"ignored:system/{subtype}")
            return
        session = self._session_for(record)
        uuid = as_str(record.get("uuid")) or f"{session.id}@{offset}"
        out = self._base(record, offset, uuid, "system")
        content = record.get("content")
        if subtype == "compact_boundary":
            meta = record.get("compactMetadata")
            meta = meta if isinstance(meta, dict) else {}
            pre = meta.get("preTokens")
            out.parts.append(
                CompactionPart(
                    trigger=str(meta.get("trigger") or record.get("trigger") or ""),
                    tokens_before=pre if isinstance(pre, int) and not isinstance(pre, bool) else None,
                )
            )
        elif subtype in ERROR_SYSTEM:
            out.flags.append("api_error")
            error = record.get("error")
            text = as_str(content) or as_str(record.get("apiRefusalExplanation"))
            if text is None and isinstance(error, dict):
                text = as_str(error.get("message")) or as_str(error.get("formatted"))
            out.parts.append(TextPart(text=text or str(subtype)))
        elif subtype == "local_command" or (subtype is None and isinstance(content, str)):
            out.flags.append("meta")
            out.parts.append(TextPart(text=block_text(content)))
        else:
            self._unknown(record, offset, f"system/{subtype}")
            return
        self.diagnostics.use()
        self.emit(session.id, out)

    def _title(self, record: dict[str, Any], kind: str) -> None:
        rank, field = {
            "summary": (TITLE_SUMMARY, "summary"),
            "ai-title": (TITLE_AI, "aiTitle"),
            "custom-title": (TITLE_CUSTOM, "customTitle"),
        }[kind]
        text = as_str(record.get(field))
        if text is None:
            self.diagnostics.skip(f"empty:{kind}")
            return
        sid = self.main.id
        held = self.state.titles.get(sid)
        if title_wins(rank, held[0] if held else None):
            self.state.titles[sid] = (rank, bounded_title(text))
        self.diagnostics.use()

    def _drift_tool_use(self, record: dict[str, Any], offset: int) -> None:
        session = self._session_for(record)
        uuid = as_str(record.get("uuid")) or f"{session.id}@{offset}"
        raw = str(record.get("name") or "")
        call_id = as_str(record.get("id")) or uuid
        self.state.last_call_by_name[raw] = call_id
        out = self._base(record, offset, uuid, "assistant")
        out.parts.append(
            ToolCallPart(call_id=call_id, tool=tool_name(raw), raw_name=raw, input=record.get("input"))
        )
        self.diagnostics.use()
        self.emit(session.id, out)

    def _drift_tool_result(self, record: dict[str, Any], offset: int) -> None:
        session = self._session_for(record)
        raw = str(record.get("name") or "")
        call_id = as_str(record.get("tool_use_id")) or self.state.last_call_by_name.get(raw, "")
        block = {"tool_use_id": call_id, "content": record.get("output"), "is_error": record.get("is_error")}
        self.diagnostics.use()
        self.emit(session.id, self._tool_output(block, None, record_time(record.get("timestamp")), offset))

    def _unknown(self, record: dict[str, Any], offset: int, kind: str) -> None:
        self.diagnostics.unknown(kind)
        session = self.main
        uuid = as_str(record.get("uuid")) or f"{session.id}@{offset}"
        out = self._base(record, offset, uuid, "system")
        out.flags.append("unknown")
        out.parts.append(UnknownPart(raw=record))
        self.emit(session.id, out)

    # -- headers ------------------------------------------------------------

    def headers(self) -> list[Session]:
        if not self.state.named:  # no line named it so far: the file's name does
            self._settle()
        out = []
        for sid, header in self.state.sessions.items():
            copy = msgspec.structs.replace(header, diagnostics=Diagnostics(), sources=list(header.sources))
            copy.title = session_title(self.state.titles.get(sid), header.description)
            out.append(copy)
        out[0].diagnostics = msgspec.msgpack.decode(
            msgspec.msgpack.encode(self.diagnostics), type=Diagnostics
        )
        return out


class ClaudeCodeAdapter(JsonlAdapter):
    """Claude Code (Anthropic's terminal agent): ``~/.claude/projects/**/*.jsonl``."""

    slug = SLUG
    display_name = "Claude Code"
    parser_version = 5
    env_vars = ("CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME")

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        configured = [p.strip() for p in env.get("CLAUDE_CONFIG_DIR", "").split(",") if p.strip()]
        if configured:
            return [Path(p) if Path(p).name == "projects" else Path(p) / "projects" for p in configured]
        xdg = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
        return [home / ".claude" / "projects", xdg / "claude" / "projects"]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        for path in probe.walk_paths(root, ".jsonl"):
            name = os.path.basename(path)
            if name in ("journal.jsonl", "history.jsonl"):
                continue
            sidecars = (
                probe.regular_files([path[: -len(".jsonl")] + ".meta.json"])
                if _AGENT_FILE.match(name)
                else ()
            )
            yield SourceRef(agent=SLUG, path=path, sidecars=sidecars)

    def sniff(self, name: str, head: bytes) -> float:
        if (
            b'"sessionId"' in head
            and b'"uuid"' in head
            and any(t in head for t in (b'"type":"user"', b'"type":"assistant"', b'"type": "user"', b'"type": "assistant"'))
        ):
            return 0.95
        if b'"parentUuid"' in head and b'"isSidechain"' in head and b'"sessionId"' in head:
            return 0.9  # a record's first keys, in Claude Code's order: its message (a huge prompt) comes before "type" and "uuid"
        if b'"leafUuid"' in head and b'"summary"' in head:
            return 0.8
        if b'"sessionId"' in head and b'"requestId"' in head:
            return 0.6
        return 0.0

    def new_parser(self, ref: SourceRef, sidecars: Mapping[str, bytes]) -> ClaudeParser:
        return ClaudeParser(ref, sidecars)

    def resume_command(self, session: Session) -> str | None:
        return resume_line("claude --resume", session.id) if session.kind == "main" else None
