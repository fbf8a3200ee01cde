"""GitHub Copilot CLI sessions (``events.jsonl``, append-only) and its OpenTelemetry usage.

Spec (``shared/formats.md`` §9 "Copilot CLI"; jazzyalex/agent-sessions
``docs/agent-json-tracking.md@651e854f4dbf`` "GitHub Copilot CLI"; ryoppippi/ccusage
``rust/crates/ccusage/src/adapter/copilot/parser.rs``, ``paths.rs`` for the OTel export):

Locations
    ``$COPILOT_HOME/session-state/<sessionId>/events.jsonl`` (CLI ≥ 1.0.11) and the
    legacy flat ``$COPILOT_HOME/session-state/<sessionId>.jsonl``; ``COPILOT_HOME``
    defaults to ``~/.copilot``.  OpenTelemetry exports (``~/.copilot/otel/*.jsonl``
    and ``$COPILOT_OTEL_FILE_EXPORTER_PATH``) are sidecars of every session file.

Records ``{type, data, id, timestamp (ISO-8601), parentId}``
    * ``session.start`` ``data{sessionId, copilotVersion, startTime, selectedModel,
      context{cwd, gitRoot, branch, …}}`` → id, version, cwd, branch, model;
      ``session.resume`` (``context``, ``selectedModel``) and
      ``session.model_change`` (``newModel``) move the current model.
    * ``user.message`` ``data{content, attachments}`` → user message;
      ``system.message`` → a ``meta`` system message.
    * ``assistant.message`` ``data{messageId, content, toolRequests[{toolCallId,
      name, arguments (object or JSON string)}], reasoningText, reasoningOpaque,
      encryptedContent, model?, outputTokens, parentToolCallId?}`` → assistant
      message (id ``<session>:<messageId>``; chunks with one ``messageId`` merge;
      ``parentToolCallId`` = a subagent's message, ``is_sidechain``);
      ``assistant.reasoning`` ``{reasoningId, content}`` → reasoning.
    * ``tool.execution_complete`` ``data{toolCallId, success, result{content,
      detailedContent}}`` → the call's result (``success: false`` → error).
    * ``session.error`` → a system message flagged ``api_error`` (status
      ``errored``); ``abort`` → one flagged ``interrupted`` (status
      ``interrupted``); ``session.shutdown`` → status ``done``.
    * Lifecycle/telemetry records (``assistant.turn_start/end``,
      ``tool.execution_start``, ``hook.*``, ``session.info``,
      ``session.usage_checkpoint``, ``session.truncation``,
      ``session.auto_mode_resolved``, ``subagent.started/completed``,
      ``system.notification``) are skipped as ``ignored:<type>``; any other type is
      kept raw as an ``unknown`` message.
    Message ids are ``<session id>:<event id>`` (``messageId`` for assistant text),
    so two sessions never share one.  Title: the first prompt.

Tokens
    The events record only ``assistant.message.outputTokens``: without an OTel
    export that is the message's usage (``output_tokens`` only), flagged
    ``usage_partial``.  When an OTel export holds ``chat`` spans
    (``gen_ai.operation.name == "chat"`` or a span named ``chat …``) whose
    ``gen_ai.conversation.id`` (else ``session.id``) is this session's id, those
    spans are the usage instead, one usage-only assistant message each
    (``<session>:otel:<traceId>:<spanId>``; model ``gen_ai.response.model`` else
    ``gen_ai.request.model``; time ``endTime``), and ``outputTokens`` is ignored.
    Buckets as ccusage: input = ``gen_ai.usage.input_tokens`` −
    ``gen_ai.usage.cache_read.input_tokens`` (inclusive input), cache read = the
    latter, cache write = ``gen_ai.usage.cache_write.input_tokens`` (or
    ``…cache_creation…``), output = ``gen_ai.usage.output_tokens``, reasoning =
    ``gen_ai.usage.reasoning.output_tokens``.  Spans are taken when the session id
    is first seen; spans exported after that are read on the next full parse.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from functools import lru_cache
from pathlib import Path, PurePath
from typing import Any

import msgspec

from agentlog import probe
from agentlog.adapters._headers import snapshot_header
from agentlog.adapters._json import add_replaced, json_value, replaced_apart
from agentlog.adapters._tools import normalise_tool
from agentlog.adapters._values import as_int, as_str, epoch_time, parse_time
from agentlog.adapters.base import JsonlAdapter, LineParser, SourceRef, ToolOutput, resume_line
from agentlog.model import (
    Diagnostics,
    Message,
    MessageFlag,
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

SLUG = "copilot_cli"
_IGNORED = frozenset(
    {
        "assistant.turn_start",
        "assistant.turn_end",
        "tool.execution_start",
        "hook.start",
        "hook.end",
        "session.info",
        "session.usage_checkpoint",
        "session.truncation",
        "session.auto_mode_resolved",
        "subagent.started",
        "subagent.completed",
        "system.notification",
    }
)
_TOOL_NAMES = {
    "shell": "bash",
    "powershell": "bash",
    "view": "read",
    "create": "write",
    "str_replace": "edit",
    "str_replace_editor": "edit",
    "apply_patch": "edit",
    "rg": "grep",
    "update_todo": "todo",
}


def tool_name(raw: str) -> str:
    """Copilot CLI tool names (``bash``, ``view``, ``str_replace`` …) normalised."""
    return normalise_tool(raw, _TOOL_NAMES)


def _otel_time(value: Any) -> datetime | None:
    """OTel JS hrtime ``[seconds, nanoseconds]``, or epoch seconds/ms/ISO."""
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, int | float) for v in value):
        return epoch_time(value[0] + value[1] / 1e9)
    return parse_time(value)


def otel_usage(sidecars: Mapping[str, bytes], session_id: str) -> list[Message]:
    """Usage-only assistant messages (ids ``<session_id>:otel:<traceId>:<spanId>``)
    from the ``chat`` spans of the OTel exports in ``sidecars`` whose conversation is
    ``session_id``."""
    out = []
    for data in sidecars.values():
        spans, replaced = _export_spans(data)
        add_replaced(replaced)  # counted by every source that reads the export
        out += [
            msgspec.structs.replace(m, id=f"{session_id}:{m.id}", parts=[], flags=list(m.flags))
            for m in spans.get(session_id, ())
        ]
    return out


@lru_cache(maxsize=4)
def _export_spans(data: bytes) -> tuple[dict[str, tuple[Message, ...]], int]:
    """The chat spans of one OTel export by conversation id, and how many of its
    lines were decoded with replacement characters (cached: every session file of
    a Copilot home shares the same exports)."""
    with replaced_apart() as replaced:
        spans = _chat_spans(data)
    return spans, replaced[0]


def _chat_spans(data: bytes) -> dict[str, tuple[Message, ...]]:
    out: dict[str, list[Message]] = {}
    for line in data.splitlines():
        record = json_value(line)
        attrs = record.get("attributes") if isinstance(record, dict) else None
        if not isinstance(attrs, dict) or not _is_chat_span(record, attrs):
            continue
        conversation = as_str(attrs.get("gen_ai.conversation.id")) or as_str(attrs.get("session.id"))
        if conversation is None:
            continue
        total_in = as_int(attrs.get("gen_ai.usage.input_tokens"))
        cache_read = min(total_in, as_int(attrs.get("gen_ai.usage.cache_read.input_tokens")))
        usage = Usage(
            input_tokens=total_in - cache_read,
            cache_read_tokens=cache_read,
            cache_write_5m_tokens=as_int(attrs.get("gen_ai.usage.cache_write.input_tokens"))
            or as_int(attrs.get("gen_ai.usage.cache_creation.input_tokens")),
            output_tokens=as_int(attrs.get("gen_ai.usage.output_tokens")),
            reasoning_tokens=as_int(attrs.get("gen_ai.usage.reasoning.output_tokens")),
        )
        out.setdefault(conversation, []).append(
            Message(
                id=f"otel:{record.get('traceId', '')}:{record.get('spanId', '')}",
                role="assistant",
                timestamp=_otel_time(record.get("endTime")),
                model=as_str(attrs.get("gen_ai.response.model")) or as_str(attrs.get("gen_ai.request.model")),
                usage=usage,
            )
        )
    return {k: tuple(v) for k, v in out.items()}


def _is_chat_span(record: dict[str, Any], attrs: dict[str, Any]) -> bool:
    is_span = record.get("type") == "span" or "spanId" in record
    name = str(record.get("name", ""))
    return is_span and (attrs.get("gen_ai.operation.name") == "chat" or name.startswith("chat "))


class CopilotCliState(msgspec.Struct, kw_only=True):
    """Parser state (resumable)."""

    header: Session | None = None
    model: str | None = None
    first_prompt: str | None = None
    ended_at: datetime | None = None
    otel_checked: bool = False
    otel_used: bool = False
    diagnostics: Diagnostics = msgspec.field(default_factory=Diagnostics)


class CopilotCliParser(LineParser[CopilotCliState]):
    """Parses one Copilot CLI event log (one session)."""

    state_type = CopilotCliState

    def initial_state(self) -> CopilotCliState:
        return CopilotCliState()

    @property
    def session(self) -> Session:
        """The session header, fixed by ``session.start`` or, when something comes
        first, by the file's name; creating it emits the session's OTel usage."""
        if self.state.header is None:
            self._set_header(self._file_id())
        assert self.state.header is not None
        return self.state.header

    def _file_id(self) -> str:
        path = PurePath(self.ref.path)
        return path.parent.name if path.name == "events.jsonl" else path.stem

    def _new_header(self, sid: str) -> Session:
        return Session(key=session_key(SLUG, sid), agent=SLUG, id=sid, sources=[self.ref.path])

    def _set_header(self, sid: str) -> None:
        self.state.header = self._new_header(sid)
        if not self.state.otel_checked:
            self.state.otel_checked = True
            spans = otel_usage(self.sidecars, sid)
            self.state.otel_used = bool(spans)
            for message in spans:
                self.emit(sid, message)

    def _status(self, status: SessionStatus, evidence: str) -> None:
        self.session.status = status
        self.session.status_evidence = evidence

    def handle(self, record: dict[str, Any], offset: int) -> None:
        kind = record.get("type")
        data = record.get("data")
        when = parse_time(record.get("timestamp"))
        if when is not None:
            self.state.ended_at = when
        if not isinstance(kind, str) or not isinstance(data, dict):
            self.diagnostics.skip("malformed:envelope")
            return
        if kind == "session.start":
            self._start(data, when)
        elif kind in ("session.resume", "session.model_change"):
            self.state.model = (
                as_str(data.get("newModel")) or as_str(data.get("selectedModel")) or self.state.model
            )
            context = data.get("context")
            if isinstance(context, dict) and as_str(context.get("cwd")):
                self.session.cwd = context["cwd"]
        elif kind == "user.message":
            self._text_message("user", data, record, offset, when)
            self._status("working", "user.message")
        elif kind == "system.message":
            self._text_message("system", data, record, offset, when, flags=["meta"])
        elif kind == "assistant.message":
            self._assistant(data, record, offset, when)
        elif kind == "assistant.reasoning":
            text = as_str(data.get("content")) or ""
            mid = as_str(data.get("reasoningId")) or str(record.get("id", offset))
            self._emit(
                Message(
                    id=mid, role="assistant", timestamp=when, offset=offset, parts=[ReasoningPart(text=text)]
                )
            )
        elif kind == "tool.execution_complete":
            self._tool_result(data, when, offset)
        elif kind in ("session.error", "abort"):
            text = as_str(data.get("message")) or as_str(data.get("reason")) or kind
            flag, status = (
                ("api_error", "errored") if kind == "session.error" else ("interrupted", "interrupted")
            )  # type: tuple[MessageFlag, SessionStatus]
            self._system(record, offset, when, TextPart(text=text), flag)
            self._status(status, kind)
        elif kind == "session.shutdown":
            self.diagnostics.use()
            self._status("done", "session.shutdown")
            return
        elif kind in _IGNORED:
            if kind == "assistant.turn_end":
                self._status("waiting_for_user", kind)
            self.diagnostics.skip(f"ignored:{kind}")
            return
        else:
            self._system(record, offset, when, UnknownPart(raw=record), "unknown")
            self.diagnostics.unknown(kind)
            return
        self.diagnostics.use()

    def _system(
        self, record: dict[str, Any], offset: int, when: datetime | None, part: Part, flag: MessageFlag
    ) -> None:
        """Emit a system message (an error, an abort, an unknown record) with one part."""
        mid = str(record.get("id", offset))
        self._emit(Message(id=mid, role="system", timestamp=when, offset=offset, parts=[part], flags=[flag]))

    def _emit(self, message: Message) -> None:
        sid = self.session.id
        message.id = f"{sid}:{message.id}"
        self.emit(sid, message)

    def _start(self, data: dict[str, Any], when: datetime | None) -> None:
        if self.state.header is None:
            self._set_header(as_str(data.get("sessionId")) or self.session.id)
        header = self.session
        header.agent_version = as_str(data.get("copilotVersion"))
        header.started_at = parse_time(data.get("startTime")) or when
        self.state.model = as_str(data.get("selectedModel")) or self.state.model
        context = data.get("context")
        if isinstance(context, dict):
            header.cwd = as_str(context.get("cwd")) or as_str(context.get("gitRoot"))
            header.git_branch = as_str(context.get("branch"))

    def _text_message(
        self,
        role: str,
        data: dict[str, Any],
        record: dict[str, Any],
        offset: int,
        when: datetime | None,
        flags: list[MessageFlag] | None = None,
    ) -> None:
        text = as_str(data.get("content")) or ""
        if role == "user" and text and self.state.first_prompt is None:
            self.state.first_prompt = text
        self._emit(
            Message(
                id=str(record.get("id", offset)),
                role="user" if role == "user" else "system",
                timestamp=when,
                offset=offset,
                parts=[TextPart(text=text)] if text else [],
                flags=flags or [],
            )
        )

    def _assistant(
        self, data: dict[str, Any], record: dict[str, Any], offset: int, when: datetime | None
    ) -> None:
        parts: list[Part] = []
        reasoning = as_str(data.get("reasoningText"))
        if reasoning:
            parts.append(ReasoningPart(text=reasoning))
        elif as_str(data.get("reasoningOpaque")) or as_str(data.get("encryptedContent")):
            parts.append(ReasoningPart(encrypted=True))
        text = as_str(data.get("content"))
        if text:
            parts.append(TextPart(text=text))
        for request in data.get("toolRequests") or []:
            if not isinstance(request, dict):
                continue
            raw = as_str(request.get("name")) or "unknown"
            args = request.get("arguments")
            decoded = json_value(args) if isinstance(args, str) else None
            parts.append(
                ToolCallPart(
                    call_id=as_str(request.get("toolCallId")) or f"{self.session.id}@{offset}",
                    tool=tool_name(raw),
                    raw_name=raw,
                    input=decoded if decoded is not None else args,
                )
            )
        message = Message(
            id=as_str(data.get("messageId")) or str(record.get("id", offset)),
            role="assistant",
            timestamp=when,
            offset=offset,
            model=as_str(data.get("model")) or self.state.model,
            parts=parts,
            is_sidechain=bool(data.get("parentToolCallId")),
        )
        output = as_int(data.get("outputTokens"))
        if output and not self.state.otel_used:
            message.usage = Usage(output_tokens=output)
            message.flags.append("usage_partial")
        self._emit(message)

    def _tool_result(self, data: dict[str, Any], when: datetime | None, offset: int) -> None:
        result = data.get("result")
        content = result.get("content") if isinstance(result, dict) else result
        ok = data.get("success") is not False
        self.emit(
            self.session.id,
            ToolOutput(
                call_id=str(data.get("toolCallId")),
                result=ToolResult(
                    output=content,
                    is_error=not ok,
                    status="completed" if ok else "error",
                    ended_at=when,
                    structured=result.get("detailedContent") if isinstance(result, dict) else None,
                ),
                timestamp=when,
                offset=offset,
            ),
        )

    def headers(self) -> list[Session]:
        if self.state.header is None and self.diagnostics.records_total == 0:
            return []
        current = self.state.header or self._new_header(self._file_id())  # never emits here
        header = snapshot_header(current, current.title, self.diagnostics)
        header.ended_at = self.state.ended_at
        header.title = self.state.first_prompt
        return [header]


class CopilotCliAdapter(JsonlAdapter):
    """GitHub Copilot CLI: ``~/.copilot/session-state/``."""

    slug = SLUG
    display_name = "GitHub Copilot CLI"
    parser_version = 3
    env_vars = ("COPILOT_HOME", "COPILOT_OTEL_FILE_EXPORTER_PATH")

    def __init__(self) -> None:
        self._exporter: Path | None = None  # $COPILOT_OTEL_FILE_EXPORTER_PATH, noted by default_roots

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        base = Path(env["COPILOT_HOME"]) if env.get("COPILOT_HOME") else home / ".copilot"
        exporter = env.get("COPILOT_OTEL_FILE_EXPORTER_PATH")
        self._exporter = Path(exporter) if exporter else None
        return [base / "session-state"]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        folder = root / "session-state" if probe.is_dir(root / "session-state") else root
        exports = list(walk_files(folder.parent / "otel", ".jsonl"))
        if self._exporter is not None and probe.is_file(self._exporter):
            exports.append(self._exporter)
        sidecars = tuple(str(p) for p in exports)
        own = folder.name == "session-state"  # else a user-given root: sniffing decides
        for path in walk_files(folder, ".jsonl"):
            if path.name == "events.jsonl" or path.parent == folder or not own:
                yield SourceRef(agent=SLUG, path=str(path), sidecars=sidecars)

    def sniff(self, name: str, head: bytes) -> float:
        first = head.split(b"\n", 1)[0]
        record = json_value(first)
        if isinstance(record, dict) and isinstance(record.get("data"), dict):
            kind = str(record.get("type", ""))
            if kind == "session.start" and record["data"].get("producer") == "copilot-agent":
                return 0.95
            if kind.startswith(("session.", "user.", "assistant.")):
                return 0.6
        return 0.0

    def new_parser(self, ref: SourceRef, sidecars: Mapping[str, bytes]) -> CopilotCliParser:
        return CopilotCliParser(ref, sidecars)

    def resume_command(self, session: Session) -> str | None:
        return resume_line("copilot --resume", session.id)
