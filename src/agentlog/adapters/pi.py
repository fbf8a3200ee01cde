"""Pi coding agent (badlogic/pi-mono) session logs (JSONL, append-only).

Spec (``shared/formats.md`` §6; badlogic/pi-mono ``packages/coding-agent/docs/session.md``
and ``src/config.ts`` @83378aad7e74; versions seen: v1 real files, v3 pi 0.74):

Locations
    ``$PI_CODING_AGENT_DIR/sessions`` (default ``~/.pi/agent/sessions``), or
    ``$PI_CODING_AGENT_SESSION_DIR`` directly (listed by jazzyalex/agent-sessions);
    ``--<cwd with / → ->--/<ISO time>_<uuid>.jsonl`` is a session.  ``cwd`` comes from
    the header, never from the folder name.

Records (one JSON object per line, ``type`` discriminates)
    Line 1 ``session{version, id, timestamp, cwd, parentSession?}`` (v1: no
    ``version``, header ``provider``/``modelId``, fork link ``branchedFrom``).  Then
    entries ``{type, id, parentId, timestamp}`` (v1: no ids) of type ``message``
    (``message.role``: ``user``, ``assistant``, ``toolResult``, ``bashExecution``,
    ``custom``/``hookMessage``, ``branchSummary``, ``compactionSummary``),
    ``model_change{provider, modelId}``, ``compaction{summary, firstKeptEntryId |
    firstKeptEntryIndex (v1), tokensBefore}``, ``branch_summary{summary}``,
    ``custom_message{content}`` (meta), ``session_info{name}`` (title, last wins).
    Ignored with a reason code: ``thinking_level_change``, ``custom`` (extension
    state, not in the model's context) and ``label``.  Anything else is kept raw.

    Sample: ``{"type":"message","id":"22a2720e","parentId":"30c6a75f","timestamp":
    "2026-05-12T01:02:27.762Z","message":{"role":"assistant","content":[{"type":"text",
    "text":"…"}],"model":"…","usage":{"input":12,"output":7,"cacheRead":0,"cacheWrite":0,
    "totalTokens":19,"cost":{"total":0}},"stopReason":"stop"}}``

Messages
    Message ids are ``<entry id>@<entry timestamp>`` (v1: ``<session id>@<byte
    offset>``): entry ids are only 8 hex digits, so two unrelated sessions can share
    one, and message ids that repeat across sessions mark replayed copies
    (:mod:`agentlog.link`); a fork copies its parent's entries verbatim, so its
    copies keep the same id and their usage is counted once.  v1 forks
    (``branchedFrom``) cannot be matched that way and count their copies again.  Assistant
    ``content``: ``text``, ``thinking`` (reasoning; ``redacted`` → encrypted),
    ``toolCall{id, name, arguments}``; ``stopReason`` ``aborted`` → ``interrupted``,
    ``error`` → ``api_error`` (with ``errorMessage``).  ``toolResult{toolCallId,
    content, isError, details}`` is merged into its call.  ``bashExecution`` (a ``!``
    command the user ran) is a user message holding a completed ``bash`` call.
    Compactions are system messages with a compaction part, flagged
    ``compaction_summary``.

Tree (v2, v3)
    The active transcript is the path from the last appended entry back to the
    root; a new entry whose parent is not the current leaf leaves the old branch
    behind: its messages are re-emitted with the flag ``abandoned`` (kept, hidden,
    usage still counted — those calls were billed).  A branch once left stays
    flagged even if the user navigates back to it later.  A ``parentId`` that names
    no entry continues from the current leaf (OpenClaw writes the session id and
    tool-call ids there), and so does an entry with no ``parentId`` key at all
    (entries written before v2 added the tree, and OpenClaw's own records): only
    ``"parentId": null`` starts a new root (badlogic/pi-mono
    ``packages/coding-agent/src/core/session-manager.ts`` @83378aad:
    ``parentId: string | null``, and ``migrateV1ToV2`` gives each entry without one
    the previous entry as parent), so nothing is marked abandoned by mistake.

Forks
    ``parentSession``/``branchedFrom`` is the path of the session forked from: its
    file name's uuid is that session's id → kind ``fork``, ``parent_key``.

Tokens (exclusive, cost recorded)
    ``usage{input, output, cacheRead, cacheWrite, cost{total}}``: ``input`` already
    excludes cache reads, ``output`` includes thinking (pi normalises providers,
    ``packages/ai/src/providers/*``) → input, cache read, cache write (5-minute),
    output; ``cost.total`` (USD) is kept as ``recorded``.  Pi priced some calls
    wrongly in old versions (``shared/cost.md`` §5); the recorded value is kept as is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePath
from typing import Any, ClassVar

from agentlog.adapters._json import json_value
from agentlog.adapters._tools import normalise_tool
from agentlog.adapters._tree import TreeParser, TreeState
from agentlog.adapters._values import as_int, as_str, parse_time
from agentlog.adapters.base import JsonlAdapter, SourceRef, ToolOutput, resume_line
from agentlog.model import (
    CompactionPart,
    FilePart,
    MessageFlag,
    Part,
    ReasoningPart,
    Session,
    TextPart,
    ToolCallPart,
    ToolResult,
    UnknownPart,
    Usage,
)
from agentlog.readers import walk_files
from agentlog.rules import session_key

SLUG = "pi"

TOOL_NAMES = {"find": "glob", "ls": "list", "todo_write": "todo", "fetch": "web_fetch"}
"""Pi's built-in tools are already lower-case (``read``, ``bash``, ``edit``, ``write``,
``grep``); the rest map here."""

IGNORED_TYPES = frozenset({"thinking_level_change", "custom", "label"})
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)


def tool_name(raw: str) -> str:
    """Normalised name of a Pi tool ``raw`` (MCP tools keep ``mcp__server__tool``)."""
    return normalise_tool(raw, TOOL_NAMES)


def usage_of(usage: Any) -> Usage | None:
    """Exclusive buckets and recorded cost from a Pi ``usage`` object."""
    if not isinstance(usage, dict):
        return None
    cost = usage.get("cost")
    total = cost.get("total") if isinstance(cost, dict) else None
    recorded = isinstance(total, int | float) and not isinstance(total, bool)
    return Usage(
        input_tokens=as_int(usage.get("input")),
        cache_read_tokens=as_int(usage.get("cacheRead")),
        cache_write_5m_tokens=as_int(usage.get("cacheWrite")),
        output_tokens=as_int(usage.get("output")),
        cost_usd=float(total) if recorded and total is not None else None,
        cost_source="recorded" if recorded else None,
    )


def session_id_of(path: str) -> str:
    """The session id in a Pi file name (``<time>_<uuid>.jsonl``), else its stem."""
    stem = PurePath(path).name.split(".jsonl")[0]
    found = _UUID.findall(stem)
    return found[-1] if found else stem


def content_parts(content: Any) -> list[Part]:
    """Parts of user/custom ``content`` (a string or text/image blocks)."""
    if isinstance(content, str):
        return [TextPart(text=content)] if content else []
    parts: list[Part] = []
    for block in content if isinstance(content, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            parts.append(TextPart(text=str(block.get("text") or "")))
        elif kind == "image":
            parts.append(FilePart(media_type=str(block.get("mimeType") or "image")))
        else:
            parts.append(UnknownPart(raw=block))
    return parts


class PiState(TreeState, kw_only=True):
    """Parser state between reads: the header, the tree's active path, title, model."""

    model: str | None = None


class PiParser(TreeParser[PiState]):
    """Parses one Pi (or OpenClaw) session file."""

    state_type = PiState
    id_field = "id"
    parent_field = "parentId"
    missing_parent_continues = True
    slug = SLUG

    def initial_state(self) -> PiState:
        return PiState()

    def message_id(self, record: dict[str, Any], offset: int) -> str:
        entry, stamp = as_str(record.get("id")), as_str(record.get("timestamp"))
        return f"{entry}@{stamp}" if entry and stamp else super().message_id(record, offset)

    @property
    def session(self) -> Session:
        if self.state.header is None:
            sid = session_id_of(self.ref.path)
            self.state.header = Session(
                key=session_key(self.slug, sid), agent=self.slug, id=sid, sources=[self.ref.path]
            )
        return self.state.header

    def handle(self, record: dict[str, Any], offset: int) -> None:
        kind = record.get("type")
        if kind == "session" and self.state.header is None:
            self._header(record)
        elif kind == "message" and isinstance(record.get("message"), dict):
            self._message(record, offset)
        elif kind == "model_change":
            self.state.model = as_str(record.get("modelId")) or self.state.model
            self._tree(record, None)
            self.diagnostics.use()
        elif kind == "compaction":
            part = CompactionPart(
                summary=str(record.get("summary") or ""), tokens_before=_count(record.get("tokensBefore"))
            )
            self._emit(record, offset, "system", [part], ["compaction_summary"])
        elif kind == "branch_summary":
            self._emit(record, offset, "system", [TextPart(text=str(record.get("summary") or ""))], ["meta"])
        elif kind == "custom_message":
            self._emit(record, offset, "user", content_parts(record.get("content")), ["meta"])
        elif kind == "session_info":
            self.state.title = as_str(record.get("name")) or self.state.title
            self._tree(record, None)
            self.diagnostics.use()
        elif isinstance(kind, str) and kind in IGNORED_TYPES:
            self._tree(record, None)
            self.diagnostics.skip(f"ignored:{kind}")
        elif kind == "message":
            self.diagnostics.skip("malformed:message")
        else:
            self._unknown(record, offset, kind if isinstance(kind, str) else "<none>")

    def _header(self, record: dict[str, Any]) -> None:
        self.diagnostics.use()
        session = self.session
        sid = as_str(record.get("id"))
        if sid:
            session.id, session.key = sid, session_key(self.slug, sid)
        session.cwd = as_str(record.get("cwd"))
        session.started_at = parse_time(record.get("timestamp"))
        self.state.model = as_str(record.get("modelId"))
        parent = as_str(record.get("parentSession")) or as_str(record.get("branchedFrom"))
        if parent:
            session.kind = "fork"
            session.parent_key = session_key(self.slug, session_id_of(parent))

    def _message(self, record: dict[str, Any], offset: int) -> None:
        message = record["message"]
        role = message.get("role")
        if role == "user":
            parts = content_parts(message.get("content"))
            text = "\n\n".join(p.text for p in parts if isinstance(p, TextPart)).strip()
            self.state.first_prompt = self.state.first_prompt or text or None
            self._emit(record, offset, "user", parts, [])
        elif role == "assistant":
            self._assistant(record, message, offset)
        elif role == "toolResult":
            self._tool_result(record, message, offset)
        elif role == "bashExecution":
            self._bash(record, message, offset)
        elif role in ("custom", "hookMessage"):
            self._emit(record, offset, "user", content_parts(message.get("content")), ["meta"])
        elif role == "branchSummary":
            self._emit(record, offset, "system", [TextPart(text=str(message.get("summary") or ""))], ["meta"])
        elif role == "compactionSummary":
            part = CompactionPart(
                summary=str(message.get("summary") or ""), tokens_before=_count(message.get("tokensBefore"))
            )
            self._emit(record, offset, "system", [part], ["compaction_summary"])
        elif role == "system":
            self._emit(record, offset, "system", content_parts(message.get("content")), ["meta"])
        else:
            self._unknown(record, offset, f"message/{role}")

    def _assistant(self, record: dict[str, Any], message: dict[str, Any], offset: int) -> None:
        parts: list[Part] = []
        content = message.get("content")
        for index, block in enumerate(content if isinstance(content, list) else []):
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                parts.append(TextPart(text=str(block.get("text") or "")))
            elif kind == "thinking":
                text = str(block.get("thinking") or "")
                parts.append(ReasoningPart(text=text, encrypted=not text and bool(block.get("redacted"))))
            elif kind == "toolCall":
                raw = str(block.get("name") or "")
                call_id = as_str(block.get("id")) or f"{record.get('id') or offset}#{index}"
                parts.append(
                    ToolCallPart(
                        call_id=call_id, tool=tool_name(raw), raw_name=raw, input=block.get("arguments")
                    )
                )
            else:
                parts.append(UnknownPart(raw=block))
        if isinstance(content, str) and content:
            parts.append(TextPart(text=content))
        flags: list[MessageFlag] = []
        stop = message.get("stopReason")
        if stop == "aborted":
            flags.append("interrupted")
        elif stop == "error":
            flags.append("api_error")
            parts.append(TextPart(text=str(message.get("errorMessage") or "error")))
        model = as_str(message.get("model")) or self.state.model
        self._emit(record, offset, "assistant", parts, flags, model, usage_of(message.get("usage")))

    def _tool_result(self, record: dict[str, Any], message: dict[str, Any], offset: int) -> None:
        self._tree(record, None)
        self.diagnostics.use()
        when = parse_time(record.get("timestamp"))
        is_error = message.get("isError") is True
        self.emit(
            self.session.id,
            ToolOutput(
                call_id=str(message.get("toolCallId") or ""),
                result=ToolResult(
                    output=message.get("content"),
                    is_error=is_error,
                    status="error" if is_error else "completed",
                    ended_at=when,
                    structured=message.get("details"),
                ),
                timestamp=when,
                offset=offset,
            ),
        )

    def _bash(self, record: dict[str, Any], message: dict[str, Any], offset: int) -> None:
        exit_code = message.get("exitCode")
        cancelled = message.get("cancelled") is True
        failed = isinstance(exit_code, int) and exit_code != 0
        when = parse_time(record.get("timestamp"))
        call = ToolCallPart(
            call_id=as_str(record.get("id")) or f"{self.session.id}@{offset}",
            tool="bash",
            raw_name="bashExecution",
            input={"command": message.get("command")},
            result=ToolResult(
                output=message.get("output"),
                is_error=failed,
                status="interrupted" if cancelled else "error" if failed else "completed",
                ended_at=when,
                structured={
                    k: message[k] for k in ("exitCode", "truncated", "fullOutputPath") if k in message
                },
            ),
        )
        self._emit(record, offset, "user", [call], [])


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def sniff_pi_family(head: bytes, header_keys: tuple[bytes, ...]) -> float:
    """Confidence that ``head`` is a Pi-family session file (header line + entries)."""
    first = head.split(b"\n", 1)[0]
    record = json_value(first)
    if not isinstance(record, dict) or record.get("type") != "session":
        return 0.0
    score = 0.6 if "cwd" in record and "timestamp" in record else 0.3
    if any(key in head for key in header_keys):
        score += 0.3
    return score


class PiAdapter(JsonlAdapter):
    """Pi coding agent: ``~/.pi/agent/sessions/--<cwd>--/*.jsonl``."""

    slug = SLUG
    display_name = "Pi"
    parser_version = 4
    env_vars: ClassVar[tuple[str, ...]] = ("PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR")

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        if env.get("PI_CODING_AGENT_SESSION_DIR"):
            return [Path(env["PI_CODING_AGENT_SESSION_DIR"])]
        agent_dir = Path(env.get("PI_CODING_AGENT_DIR") or home / ".pi" / "agent")
        return [agent_dir / "sessions"]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        for path in walk_files(root, ".jsonl"):
            yield SourceRef(agent=self.slug, path=str(path))

    def sniff(self, name: str, head: bytes) -> float:
        score = sniff_pi_family(head, (b'"thinkingLevel"', b'"role":"toolResult"', b'"provider"'))
        return min(score + (0.05 if _UUID.search(name) and "_" in name else 0.0), 1.0) if score else 0.0

    def new_parser(self, ref: SourceRef, sidecars: Mapping[str, bytes]) -> PiParser:
        return PiParser(ref, sidecars)

    def resume_command(self, session: Session) -> str | None:
        return resume_line("pi --session", session.id)
