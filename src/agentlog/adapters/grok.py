"""Grok CLI (xAI ``grok``, "grok-build") chat histories (JSONL, append-only).

Spec (fixtures of jazzyalex/agent-sessions ``Resources/Fixtures/stage0/agents/grok/``
``@651e854f4dbf``, captured from grok 4.5; layout as documented by readers of grok
1.0.x: ``<GROK_HOME or ~/.grok>/sessions/<url-encoded cwd>/<session uuid>/``):

Location
    ``${GROK_HOME:-~/.grok}/sessions/<encodeURIComponent(cwd)>/<sessionId>/chat_history.jsonl``
    with ``summary.json`` beside it (``usage.json`` and ``updates.jsonl`` are there too;
    their shapes are not public and they are not read).

Records (one JSON object per line, ``type`` discriminates; no ids, no timestamps)
    ``system{content}`` → the system prompt (``meta``).  ``user{content, prompt_index?,
    synthetic_reason?, prior_turn_interrupt?}`` — ``content`` a string or ``text``/``image``
    blocks (``image.url``); ``synthetic_reason`` (e.g. ``environment_context``) marks
    injected context (``meta``); ``prior_turn_interrupt`` (about the turn before) is not
    used.  ``reasoning{id, summary[{text}], encrypted_content}`` →
    reasoning summary (``encrypted`` when an opaque blob is kept).
    ``assistant{content, tool_calls[{id, name, arguments (JSON string)}], model_id}``.
    ``tool_result{tool_call_id, content}`` → result of that call.
    ``backend_tool_call{kind{tool_type, action, id, status}}`` → a server-side tool
    (web search) run by xAI: a completed call whose structured result is ``action``.
    Anything else is kept raw as an ``unknown`` message.  Message ids are
    session-scoped (``<sessionId>@<byte offset>``); reasoning keeps its ``rs_…`` id.

    ``synthetic_reason: "interjection"`` is a prompt the user typed mid-turn (a user
    message).  Legacy ``chat_format_version`` 0 histories (agentsview's
    ``testdata/grok-build/legacy``) carry ``role`` (``system``/``user``/``assistant``/
    ``tool``) instead of ``type``, OpenAI-style ``tool_calls[{id, function{name,
    arguments}}]`` and ``reasoning_content``; ``role: "tool"`` is a tool result.

Header (``summary.json``)
    ``info{id, cwd}``, ``generated_title``/``session_summary`` → title, ``created_at`` /
    ``last_active_at`` → start/end, ``head_branch`` → git branch, ``current_model_id``
    → model.  Without it, ``cwd`` is the URL-decoded folder name.
    ``parent_session_id`` links a fork to the session it came from (kind ``fork``;
    agentsview ``grok.go`` reads it as the parent), and ``session_kind:
    "subagent"`` makes it a subagent of that session.

Tokens
    ``chat_history.jsonl`` records none; the session has no usage.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePath
from typing import Any

from agentlog import probe
from agentlog.adapters._content import block_text, unknown_message
from agentlog.adapters._headers import OneSessionState, one_header
from agentlog.adapters._json import json_value
from agentlog.adapters._tools import normalise_tool
from agentlog.adapters._values import as_dict, as_str, parse_time
from agentlog.adapters.base import JsonlAdapter, LineParser, SourceRef, ToolOutput
from agentlog.model import (
    FilePart,
    Message,
    Part,
    ReasoningPart,
    Session,
    TextPart,
    ToolCallPart,
    ToolResult,
    ToolStatus,
    UnknownPart,
)
from agentlog.readers import walk_files
from agentlog.rules import session_key

SLUG = "grok"
HISTORY = "chat_history.jsonl"
SUMMARY = "summary.json"

TOOL_NAMES = {
    "read_file": "read",
    "run_terminal_cmd": "bash",
    "edit_file": "edit",
    "search_replace": "edit",
    "write_file": "write",
    "grep_search": "grep",
    "grep": "grep",
    "file_search": "glob",
    "glob": "glob",
    "list_dir": "list",
    "web_search": "web_search",
    "web_fetch": "web_fetch",
    "todo_write": "todo",
}
"""Grok tool names → agentlog's normalised names (others: snake_case)."""


def tool_name(raw: str) -> str:
    """Normalised name of Grok tool ``raw``."""
    return normalise_tool(raw, TOOL_NAMES)


PROMPT_REASONS = frozenset({"interjection"})
"""``synthetic_reason`` values of user records that are prompts: an
``interjection`` is what the user typed while a turn ran (agentsview
``internal/parser/grok.go`` keeps it as a user message); any other reason
(``environment_context`` …) is injected context."""
LEGACY_ROLES = {"tool": "tool_result"}
"""``chat_format_version`` 0 records carry ``role`` instead of ``type`` (``system``,
``user``, ``assistant``, ``tool``); ``tool`` is a tool result."""


class GrokParser(LineParser[OneSessionState]):
    """Parses one ``chat_history.jsonl`` (and reads its ``summary.json``)."""

    state_type = OneSessionState

    def initial_state(self) -> OneSessionState:
        folder = PurePath(self.ref.path).parent
        header = Session(
            key=session_key(SLUG, folder.name),
            agent=SLUG,
            id=folder.name,
            cwd=urllib.parse.unquote(folder.parent.name) or None,
            sources=[self.ref.path],
        )
        state = OneSessionState(header=header)
        for path, data in self.sidecars.items():
            summary = json_value(data)
            if isinstance(summary, dict):
                self._summary(header, summary)
            else:
                state.diagnostics.errors.append(f"{PurePath(path).name}: invalid JSON")
        return state

    @staticmethod
    def _summary(header: Session, summary: dict[str, Any]) -> None:
        info = as_dict(summary.get("info"))
        header.cwd = as_str(info.get("cwd")) or header.cwd
        header.title = as_str(summary.get("generated_title")) or as_str(summary.get("session_summary"))
        header.started_at = parse_time(summary.get("created_at"))
        header.ended_at = parse_time(summary.get("last_active_at")) or parse_time(summary.get("updated_at"))
        header.git_branch = as_str(summary.get("head_branch"))
        model = as_str(summary.get("current_model_id"))
        header.models = [model] if model else []
        parent = as_str(summary.get("parent_session_id"))
        if summary.get("session_kind") == "subagent":
            header.kind = "subagent"
        elif parent:
            header.kind = "fork"
        header.parent_key = session_key(SLUG, parent) if parent else None

    @property
    def sid(self) -> str:
        return self.state.header.id

    def handle(self, record: dict[str, Any], offset: int) -> None:
        kind = record.get("type")
        if kind is None and isinstance(record.get("role"), str):  # chat_format_version 0
            kind = LEGACY_ROLES.get(record["role"], record["role"])
        if kind in ("system", "user"):
            self._prompt(record, offset, kind)
        elif kind == "assistant":
            self._assistant(record, offset)
        elif kind == "reasoning":
            self._reasoning(record, offset)
        elif kind == "tool_result":
            self.diagnostics.use()
            self.emit(
                self.sid,
                ToolOutput(
                    call_id=str(record["tool_call_id"]),
                    result=ToolResult(output=record.get("content")),
                    offset=offset,
                ),
            )
        elif kind == "backend_tool_call":
            self._backend_tool(record, offset)
        else:
            self.emit(self.sid, unknown_message(f"{self.sid}@{offset}", record, offset=offset))
            self.diagnostics.unknown(str(kind) if isinstance(kind, str) else "<none>")

    def _message(self, offset: int, role: str, parts: list[Part], flags: list[str], **extra: Any) -> None:
        mid = extra.pop("id", None) or f"{self.sid}@{offset}"
        self.emit(self.sid, Message(id=mid, role=role, parts=parts, flags=flags, offset=offset, **extra))  # type: ignore[arg-type]

    def _prompt(self, record: dict[str, Any], offset: int, role: str) -> None:
        content = record.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        parts: list[Part] = []
        for block in blocks if isinstance(blocks, list) else []:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                parts.append(TextPart(text=str(block.get("text") or "")))
            elif kind == "image":
                url = str(block.get("url") or "")
                media = url[5 : url.index(";")] if url.startswith("data:") and ";" in url else ""
                parts.append(FilePart(media_type=media or "image", ref=url))
            else:
                parts.append(UnknownPart(raw=block))
        if not parts:
            self.diagnostics.skip("empty_message")
            return
        reason = as_str(record.get("synthetic_reason"))
        meta = role == "system" or (reason is not None and reason not in PROMPT_REASONS)
        self.diagnostics.use()
        self._message(offset, role, parts, ["meta"] if meta else [])
        if not meta and self.state.header.title is None:
            self.state.header.title = block_text(blocks).strip() or None

    def _assistant(self, record: dict[str, Any], offset: int) -> None:
        parts: list[Part] = []
        reasoning = as_str(record.get("reasoning_content"))  # chat_format_version 0
        if reasoning:
            parts.append(ReasoningPart(text=reasoning))
        text = as_str(record.get("content"))
        if text:
            parts.append(TextPart(text=text))
        for call in record.get("tool_calls") or []:
            function = call.get("function")
            if isinstance(function, dict):  # chat_format_version 0: OpenAI-style
                call = {"id": call.get("id"), **function}
            raw = str(call.get("name") or "")
            arguments = call.get("arguments")
            decoded = json_value(arguments.encode()) if isinstance(arguments, str) else arguments
            parts.append(
                ToolCallPart(
                    call_id=str(call.get("id") or ""),
                    tool=tool_name(raw),
                    raw_name=raw,
                    input=decoded if decoded is not None else arguments,
                )
            )
        self.diagnostics.use()
        self._message(offset, "assistant", parts, [], model=as_str(record.get("model_id")))

    def _reasoning(self, record: dict[str, Any], offset: int) -> None:
        summary = block_text(record.get("summary"))
        part = ReasoningPart(summary=summary, encrypted=bool(record.get("encrypted_content")))
        self.diagnostics.use()
        self._message(offset, "assistant", [part], [], id=as_str(record.get("id")))

    def _backend_tool(self, record: dict[str, Any], offset: int) -> None:
        kind = record["kind"]
        raw = str(kind.get("tool_type") or "")
        status: ToolStatus = "completed" if kind.get("status") == "completed" else "pending"
        action = kind.get("action")
        call = ToolCallPart(
            call_id=str(kind.get("id") or f"{self.sid}@{offset}"),
            tool=tool_name(raw),
            raw_name=raw,
            input=action,
            result=ToolResult(status=status, structured=action),
        )
        self.diagnostics.use()
        self._message(offset, "assistant", [call], [])

    def headers(self) -> list[Session]:
        return one_header(self.state)


class GrokAdapter(JsonlAdapter):
    """Grok CLI (xAI): ``~/.grok/sessions/<cwd>/<id>/chat_history.jsonl``."""

    slug = SLUG
    display_name = "Grok CLI"
    parser_version = 4
    env_vars = ("GROK_HOME",)

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [Path(env.get("GROK_HOME") or home / ".grok") / "sessions"]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        for path in walk_files(root, HISTORY):
            if path.name != HISTORY:
                continue
            summary = path.with_name(SUMMARY)
            yield SourceRef(agent=SLUG, path=str(path), sidecars=probe.regular_files([summary]))

    def sniff(self, name: str, head: bytes) -> float:
        markers = (b'"tool_call_id"', b'"model_id"', b'"prompt_index"', b'"backend_tool_call"')
        hits = sum(marker in head for marker in markers)
        if hits and name == HISTORY:
            return 0.95
        return 0.6 if hits >= 2 else 0.0

    def new_parser(self, ref: SourceRef, sidecars: Mapping[str, bytes]) -> GrokParser:
        return GrokParser(ref, sidecars)
