"""Cursor CLI (``cursor-agent``) agent transcripts (JSONL, append-only).

Spec (``shared/formats.md`` §10 "Cursor CLI agent"; jazzyalex/agent-sessions
``AgentSessionsTests/Fixtures/Cursor/*@651e854f4dbf`` and its 2026-07-11 notes; the
subagent layout as documented by several third-party readers, e.g. ConfabulousDev/
confab ``pkg/provider`` "Cursor subagent sidechain discovery"):

Locations
    ``~/.cursor/projects/<project slug>/agent-transcripts/<id>/<id>.jsonl`` (older
    builds: ``agent-transcripts/<id>.jsonl``); a subagent the session started writes
    ``agent-transcripts/<id>/subagents/<sub id>.jsonl`` (kind ``subagent``, parent
    ``<id>``).  Metadata: ``~/.cursor/chats/<md5(project path)>/<id>/store.db``, a
    SQLite file whose ``meta`` row ``"0"`` is **hex-encoded JSON** ``{agentId, name,
    mode, createdAt (ms), lastUsedModel, latestRootBlobId}``; it is read (in memory,
    from its bytes) as a sidecar of the transcript with the same id: title
    ``name``, start ``createdAt``, model ``lastUsedModel`` (the last one used, given
    to the assistant messages: transcripts name no model).  The ``blobs`` table
    holds protobuf message blobs and is not decoded.

Records
    ``{"role": "user"|"assistant", "message": {"content": [block…]}}``; blocks
    ``text`` (a user's typed prompt is wrapped in ``<user_query>…</user_query>``,
    which is removed), ``tool_use {name, input, id?}`` and ``tool_result
    {tool_use_id?, content}`` (a result without id pairs with the oldest open call).
    ``{"type": "turn_ended", "status"}`` ends a turn (status ``waiting_for_user``,
    evidence ``turn_ended:<status>``).  No ids, no timestamps, no usage are
    recorded: message ids are ``<session id>@<byte offset>``, tool calls without
    an id ``<session id>@<offset>#<n>``.  Anything else is kept raw (``unknown``).
    Sample: ``{"role":"assistant","message":{"content":[{"type":"tool_use",
    "name":"Shell","input":{"command":"ls"}}]}}``.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePath
from typing import Any

import msgspec

from agentlog import probe
from agentlog.adapters._headers import snapshot_header
from agentlog.adapters._json import json_value
from agentlog.adapters._tools import normalise_tool
from agentlog.adapters._values import as_str, parse_time
from agentlog.adapters.base import JsonlAdapter, LineParser, SourceRef, ToolOutput, resume_line
from agentlog.model import (
    Diagnostics,
    Message,
    Part,
    Session,
    TextPart,
    ToolCallPart,
    ToolResult,
    UnknownPart,
)
from agentlog.readers import walk_files
from agentlog.rules import session_key

SLUG = "cursor_cli"
_QUERY = re.compile(r"^\s*<user_query>\s*(.*?)\s*</user_query>\s*$", re.S)
_TOOL_NAMES = {
    "shell": "bash",
    "read_file": "read",
    "str_replace": "edit",
    "strreplace": "edit",
    "todo_write": "todo",
}


def tool_name(raw: str) -> str:
    """Cursor CLI tool names (``Shell``, ``Read``, ``StrReplace`` …) normalised."""
    return normalise_tool(raw, _TOOL_NAMES)


def store_meta(data: bytes) -> dict[str, Any]:
    """The hex-encoded JSON ``meta`` row ``"0"`` of a ``store.db`` given as bytes
    (``{}`` when the bytes are no such database)."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.deserialize(data)
        row = conn.execute("SELECT value FROM meta WHERE key = '0'").fetchone()
    except (sqlite3.Error, ValueError):
        return {}
    finally:
        conn.close()
    value = row[0] if row else None
    try:
        text = bytes.fromhex(value.decode() if isinstance(value, bytes) else str(value))
    except ValueError:
        return {}
    meta = json_value(text)
    return meta if isinstance(meta, dict) else {}


class CursorCliState(msgspec.Struct, kw_only=True):
    """Parser state (resumable)."""

    header: Session | None = None
    model: str | None = None
    first_prompt: str | None = None
    pending: list[str] = msgspec.field(default_factory=list)
    diagnostics: Diagnostics = msgspec.field(default_factory=Diagnostics)


class CursorCliParser(LineParser[CursorCliState]):
    """Parses one Cursor CLI transcript (one session)."""

    state_type = CursorCliState

    def initial_state(self) -> CursorCliState:
        return CursorCliState()

    @property
    def session(self) -> Session:
        if self.state.header is None:
            path = PurePath(self.ref.path)
            header = Session(key="", agent=SLUG, id=path.stem, sources=[self.ref.path])
            if path.parent.name == "subagents":
                header.kind = "subagent"
                header.parent_key = session_key(SLUG, path.parent.parent.name)
            header.key = session_key(SLUG, header.id)
            meta = next((store_meta(d) for d in self.sidecars.values()), {})
            header.title = as_str(meta.get("name"))
            header.started_at = parse_time(meta.get("createdAt"))
            self.state.model = as_str(meta.get("lastUsedModel"))
            self.state.header = header
        return self.state.header

    def handle(self, record: dict[str, Any], offset: int) -> None:
        sid = self.session.id
        role = record.get("role")
        message = record.get("message")
        if record.get("type") == "turn_ended":
            self.session.status = "waiting_for_user"
            self.session.status_evidence = f"turn_ended:{record.get('status', '')}"
            self.diagnostics.use()
            return
        if role not in ("user", "assistant") or not isinstance(message, dict):
            self.diagnostics.unknown(str(record.get("type") or role or "record"))
            raw: list[Part] = [UnknownPart(raw=record)]
            self.emit(
                sid, Message(id=f"{sid}@{offset}", role="system", offset=offset, parts=raw, flags=["unknown"])
            )
            return
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            self.diagnostics.skip("malformed:content")
            return
        parts: list[Part] = []
        for n, block in enumerate(blocks):
            if isinstance(block, dict):
                self._block(block, parts, f"{sid}@{offset}#{n}", offset)
        self.diagnostics.use()
        if parts:
            out = Message(id=f"{sid}@{offset}", role=role, offset=offset, parts=parts)
            if role == "assistant":
                out.model = self.state.model
            elif self.state.first_prompt is None and out.text:
                self.state.first_prompt = out.text
            self.emit(sid, out)

    def _block(self, block: dict[str, Any], parts: list[Part], fallback_id: str, offset: int) -> None:
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            text = block["text"]
            match = _QUERY.match(text)
            parts.append(TextPart(text=match.group(1) if match else text))
        elif kind == "tool_use":
            raw = as_str(block.get("name")) or "unknown"
            call_id = as_str(block.get("id")) or fallback_id
            self.state.pending.append(call_id)
            parts.append(
                ToolCallPart(call_id=call_id, tool=tool_name(raw), raw_name=raw, input=block.get("input"))
            )
        elif kind == "tool_result":
            recorded = as_str(block.get("tool_use_id"))
            if recorded in self.state.pending:
                self.state.pending.remove(recorded)
            elif recorded is None and self.state.pending:
                recorded = self.state.pending.pop(0)
            call_id = recorded or ""
            output = ToolResult(output=block.get("content"), is_error=bool(block.get("is_error")))
            if block.get("is_error"):
                output.status = "error"
            self.emit(
                self.session.id, ToolOutput(call_id=call_id or fallback_id, result=output, offset=offset)
            )
        else:
            parts.append(UnknownPart(raw=block))

    def headers(self) -> list[Session]:
        if self.state.header is None and self.diagnostics.records_total == 0:
            return []
        header = snapshot_header(self.session, self.session.title, self.diagnostics)
        header.title = header.title or self.state.first_prompt
        header.models = [self.state.model] if self.state.model else []
        return [header]


class CursorCliAdapter(JsonlAdapter):
    """Cursor CLI: ``~/.cursor/projects/*/agent-transcripts/``."""

    slug = SLUG
    display_name = "Cursor CLI"
    parser_version = 3

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [home / ".cursor" / "projects"]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        stores: dict[str, str] = {}
        chats = root.parent / "chats"
        if probe.is_dir(chats):
            for db in walk_files(chats, "store.db"):
                stores.setdefault(db.parent.name, str(db))
        for path in walk_files(root, ".jsonl"):
            parts = path.parts
            if "agent-transcripts" not in parts:
                continue
            depth = len(parts) - parts.index("agent-transcripts")
            if (
                depth == 2
                or (depth == 3 and path.stem == path.parent.name)
                or path.parent.name == "subagents"
            ):
                store = stores.get(path.stem)
                yield SourceRef(agent=SLUG, path=str(path), sidecars=(store,) if store else ())

    def sniff(self, name: str, head: bytes) -> float:
        record = json_value(head.split(b"\n", 1)[0])
        if isinstance(record, dict) and record.get("role") in ("user", "assistant"):
            message = record.get("message")
            if isinstance(message, dict) and isinstance(message.get("content"), list) and len(record) == 2:
                return 0.8 if b"<user_query>" in head[:2048] else 0.5
        return 0.0

    def new_parser(self, ref: SourceRef, sidecars: Mapping[str, bytes]) -> CursorCliParser:
        return CursorCliParser(ref, sidecars)

    def resume_command(self, session: Session) -> str | None:
        return resume_line("cursor-agent --resume", session.id) if session.kind == "main" else None
