"""DeepSeek Harness (``dsh``, deepseek-ai/deepseek-harness) session event logs (JSONL).

Spec (``shared/formats.md`` §14.4, after agentsview ``session-format-sources.md``
pinning ``deepseek-harness@47f943859bef``; fixture ``shared/fixtures/deepseek-harness/
bash-tool-turn.session.jsonl`` from getagentseal/codeburn):

Locations
    ``$DSH_HOME/sessions`` (default ``~/.dsh/sessions``)
    ``/<project>/<encoded session id>/session.jsonl``, or ``session.jsonl.zstd``:
    the same lines as Zstandard frames, one per durable batch, the first holding
    only the header line (``zstd -dc`` decodes it; the reader layer decompresses
    it, see :mod:`agentlog.readers`).  Versioned names ``session.v<N>.jsonl[.zstd]``
    exist too.  When a session folder holds several, only one is read, as the
    harness does: the highest version, compressed before plain (third-party
    readers: deepseek-harness plugins ``sessionHistoryText`` prefers
    ``session.jsonl.zstd`` over ``session.jsonl``; a bench lists ``session.v4``,
    ``session.v3``, ``session`` in that order).

Records
    Line 1 ``{type: "session", version, id, createdAt (ms), cwd, delegationDepth}``
    (``delegationDepth > 0`` → a delegated subagent; its parent is not recorded).
    Then ``{type, seq, time (ms), data}`` events in ``seq`` order (``time`` is not
    monotonic in the fixture, so it is only a timestamp):

    * ``user/message{id, content[text], source{kind}}``: ``source.kind`` ``user`` is
      a prompt; ``plugin`` (runtime-context snapshots, system-prompt plugins) is
      ``meta``.
    * ``assistant/message{turn, step, message{id, content[reasoning | text |
      tool-call{id, name, arguments (JSON string)}], source{model}}, usage}``: one
      model step, with its usage.
    * ``tool/result{message{content[tool-result{toolCallId, content, isError}]}}``:
      merged into the call.
    * ``session/title{title}`` (last wins); ``request/header{header{config{model}}}``
      and ``request/context{model}`` (the model); ``turn/end{reason{kind}}``
      (status: ``completed`` → waiting for the user, ``interrupted``/``aborted`` →
      interrupted, ``error``/``failed`` → errored).
    * Ignored with a reason code: streaming (``assistant/chunk`` — its ``usage``
      chunk repeats ``assistant/message.usage`` — and the packed
      ``text-chunks``/``reasoning-chunks``/``tool-call-chunks``), ``tool/call``
      (repeats the call in ``assistant/message``), ``agent/inbox/spliced`` (queued
      input that reappears as ``user/message``), ``turn/start``, ``step/start``,
      ``step/end``.  Anything else is kept raw.

Tokens (exclusive)
    ``usage{inputTokens, cacheReadTokens, cacheWriteTokens?, outputTokens ⊇
    reasoningTokens}``: the buckets are disjoint (fixture step 2: input 168, cache
    read 2816), so they map one to one.  No cost is recorded.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import msgspec

from agentlog.adapters._headers import snapshot_header
from agentlog.adapters._json import json_or_text
from agentlog.adapters._tools import normalise_tool
from agentlog.adapters._values import as_dict, as_int, as_str, parse_time
from agentlog.adapters.base import JsonlAdapter, LineParser, SourceRef, ToolOutput
from agentlog.model import (
    Diagnostics,
    Message,
    Part,
    ReasoningPart,
    Session,
    SessionStatus,
    TextPart,
    ToolCallPart,
    ToolResult,
    UnknownPart,
    Usage,
)
from agentlog.readers import walk_files
from agentlog.rules import session_key

SLUG = "deepseek_harness"

TOOL_NAMES = {
    "bash": "bash",
    "shell": "bash",
    "read": "read",
    "read_file": "read",
    "write": "write",
    "write_file": "write",
    "edit": "edit",
    "edit_file": "edit",
    "grep": "grep",
    "glob": "glob",
    "web_fetch": "web_fetch",
    "web_search": "web_search",
    "task": "task",
    "todo_write": "todo",
}
IGNORED_TYPES = frozenset(
    {
        "assistant/chunk",
        "text-chunks",
        "reasoning-chunks",
        "tool-call-chunks",
        "tool/call",
        "agent/inbox/spliced",
        "turn/start",
        "step/start",
        "step/end",
    }
)
_TURN_END: dict[str, SessionStatus] = {
    "completed": "waiting_for_user",
    "interrupted": "interrupted",
    "aborted": "interrupted",
    "cancelled": "interrupted",
    "error": "errored",
    "failed": "errored",
}


def tool_name(raw: str) -> str:
    """Normalised name of a DeepSeek Harness tool (MCP tools keep ``mcp__server__tool``)."""
    return normalise_tool(raw, TOOL_NAMES)


def usage_of(usage: Any) -> Usage | None:
    """Exclusive buckets from a harness ``usage`` object."""
    if not isinstance(usage, dict):
        return None
    return Usage(
        input_tokens=as_int(usage.get("inputTokens")),
        cache_read_tokens=as_int(usage.get("cacheReadTokens")),
        cache_write_5m_tokens=as_int(usage.get("cacheWriteTokens")),
        output_tokens=as_int(usage.get("outputTokens")),
        reasoning_tokens=as_int(usage.get("reasoningTokens")),
    )


def text_of(content: Any) -> list[Part]:
    """Text parts of a ``content`` list of ``{type: text}`` blocks (others kept raw)."""
    parts: list[Part] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(TextPart(text=str(block.get("text") or "")))
        else:
            parts.append(UnknownPart(raw=block))
    return parts


class HarnessState(msgspec.Struct, kw_only=True):
    """Parser state between reads."""

    diagnostics: Diagnostics = msgspec.field(default_factory=Diagnostics)
    header: Session | None = None
    model: str | None = None
    title: str | None = None
    first_prompt: str | None = None


class HarnessParser(LineParser[HarnessState]):
    """Parses one DeepSeek Harness ``session.jsonl``."""

    state_type = HarnessState

    def initial_state(self) -> HarnessState:
        return HarnessState()

    @property
    def session(self) -> Session:
        if self.state.header is None:
            sid = Path(self.ref.path).parent.name
            self.state.header = Session(
                key=session_key(SLUG, sid), agent=SLUG, id=sid, sources=[self.ref.path]
            )
        return self.state.header

    def handle(self, record: dict[str, Any], offset: int) -> None:
        kind = record.get("type")
        data = as_dict(record.get("data"))
        when = parse_time(record.get("time"))
        if kind == "session" and self.state.header is None:
            self._header(record)
        elif kind == "user/message":
            self._user(data, offset, when)
        elif kind == "assistant/message":
            self._assistant(data, offset, when)
        elif kind == "tool/result":
            self._tool_result(data, offset, when)
        elif kind == "session/title":
            self.diagnostics.use()
            self.state.title = as_str(data.get("title")) or self.state.title
        elif kind in ("request/header", "request/context"):
            self.diagnostics.use()
            header = as_dict(data.get("header"))
            config = header["config"] if isinstance(header.get("config"), dict) else data
            self.state.model = as_str(config.get("model")) or self.state.model
        elif kind == "turn/end":
            self.diagnostics.use()
            reason = as_dict(data.get("reason"))
            status = _TURN_END.get(str(reason.get("kind")))
            if status is not None:
                session = self.session
                session.status = (
                    "done" if status == "waiting_for_user" and session.kind == "subagent" else status
                )
                session.status_evidence = f"turn/end reason={reason.get('kind')}"
        elif isinstance(kind, str) and kind in IGNORED_TYPES:
            self.diagnostics.skip(f"ignored:{kind}")
        else:
            name = kind if isinstance(kind, str) else "<none>"
            self.diagnostics.unknown(name)
            mid = f"{self.session.id}@{offset}"
            unknown = Message(
                id=mid, role="system", timestamp=when, parts=[UnknownPart(raw=record)], flags=["unknown"]
            )
            self.emit(self.session.id, unknown)

    def _header(self, record: dict[str, Any]) -> None:
        self.diagnostics.use()
        session = self.session
        sid = as_str(record.get("id"))
        if sid:
            session.id, session.key = sid, session_key(SLUG, sid)
        session.cwd = as_str(record.get("cwd"))
        session.started_at = parse_time(record.get("createdAt"))
        if as_int(record.get("delegationDepth")) > 0:
            session.kind = "subagent"

    def _user(self, data: dict[str, Any], offset: int, when: Any) -> None:
        source = as_dict(data.get("source"))
        parts = text_of(data.get("content"))
        if not parts:
            self.diagnostics.skip("empty_message")
            return
        self.diagnostics.use()
        meta = source.get("kind") != "user"
        mid = as_str(data.get("id")) or f"{self.session.id}@{offset}"
        message = Message(
            id=mid, role="user", timestamp=when, parts=parts, flags=["meta"] if meta else [], offset=offset
        )
        if not meta:
            text = message.text.strip()
            self.state.first_prompt = self.state.first_prompt or text or None
        self.emit(self.session.id, message)

    def _assistant(self, data: dict[str, Any], offset: int, when: Any) -> None:
        message = as_dict(data.get("message"))
        source = as_dict(message.get("source"))
        parts: list[Part] = []
        for block in message.get("content") or []:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                parts.append(TextPart(text=str(block.get("text") or "")))
            elif kind == "reasoning":
                parts.append(ReasoningPart(text=str(block.get("text") or "")))
            elif kind == "tool-call":
                raw = str(block.get("name") or "")
                call_id = as_str(block.get("id")) or f"{self.session.id}@{offset}#{len(parts)}"
                args = json_or_text(block.get("arguments"))
                parts.append(ToolCallPart(call_id=call_id, tool=tool_name(raw), raw_name=raw, input=args))
            else:
                parts.append(UnknownPart(raw=block))
        self.diagnostics.use()
        turn, step = data.get("turn"), data.get("step")
        mid = as_str(message.get("id")) or f"{self.session.id}@{turn}.{step}"
        out = Message(
            id=mid,
            role="assistant",
            timestamp=when,
            model=as_str(source.get("model")) or self.state.model,
            parts=parts,
            usage=usage_of(data.get("usage")),
            offset=offset,
        )
        self.emit(self.session.id, out)

    def _tool_result(self, data: dict[str, Any], offset: int, when: Any) -> None:
        message = as_dict(data.get("message"))
        results = [
            b for b in message.get("content") or [] if isinstance(b, dict) and b.get("type") == "tool-result"
        ]
        if not results:
            self.diagnostics.skip("empty_message")
            return
        self.diagnostics.use()
        for block in results:
            failed = block.get("isError") is True
            result = ToolResult(
                output=block.get("content"),
                is_error=failed,
                status="error" if failed else "completed",
                ended_at=when,
            )
            call_id = str(block.get("toolCallId") or "")
            self.emit(
                self.session.id, ToolOutput(call_id=call_id, result=result, timestamp=when, offset=offset)
            )

    def headers(self) -> list[Session]:
        if self.diagnostics.records_total == 0:
            return []
        return [snapshot_header(self.session, self.state.title or self.state.first_prompt, self.diagnostics)]


_SESSION_FILE = re.compile(r"session(?:\.v(?P<version>\d+))?\.jsonl(?P<zstd>\.zstd)?")


class DeepSeekHarnessAdapter(JsonlAdapter):
    """DeepSeek Harness (``dsh``): ``~/.dsh/sessions/<project>/<id>/session[.vN].jsonl[.zstd]``."""

    slug = SLUG
    display_name = "DeepSeek Harness"
    parser_version = 3
    env_vars = ("DSH_HOME",)

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [Path(env.get("DSH_HOME") or home / ".dsh") / "sessions"]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        chosen: dict[Path, tuple[tuple[int, bool], Path]] = {}
        for suffix in (".jsonl", ".jsonl.zstd"):
            for path in walk_files(root, suffix):
                if path.name.endswith(".session.jsonl"):  # a loose capture (fixtures)
                    yield SourceRef(agent=SLUG, path=str(path))
                elif (match := _SESSION_FILE.fullmatch(path.name)) is not None:
                    rank = (int(match["version"] or 0), bool(match["zstd"]))
                    if path.parent not in chosen or rank > chosen[path.parent][0]:
                        chosen[path.parent] = (rank, path)
        for _, path in chosen.values():
            yield SourceRef(agent=SLUG, path=str(path))

    def sniff(self, name: str, head: bytes) -> float:
        first = head.split(b"\n", 1)[0]
        if b'"type":"session"' in first and b'"delegationDepth"' in first:
            return 0.95
        return 0.6 if b'"assistant/chunk"' in head or b'"user/message"' in head else 0.0

    def new_parser(self, ref: SourceRef, sidecars: Mapping[str, bytes]) -> HarnessParser:
        return HarnessParser(ref, sidecars)
