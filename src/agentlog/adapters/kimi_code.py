"""Kimi Code (npm ``@moonshot-ai/kimi-code``, TypeScript): per-agent ``wire.jsonl`` journals.

Spec (``shared/formats.md`` §5 "Kimi Code", from jazzyalex/agent-sessions
``docs/agent-json-tracking.md@651e854f4dbf``; checked against the redacted real
captures in ``shared/fixtures/kimi-code/``).  Not the Python Kimi CLI (``kimi``).

Locations
    ``$KIMI_CODE_HOME`` or ``~/.kimi-code``:
    ``sessions/wd_<slug>_<sha256[:12]>/<sessionId>/agents/<agentId>/wire.jsonl``.
    ``agents/main`` is the session; every sibling agent (``agent-0`` …) is a subagent
    session keyed ``<sessionId>/<agentId>``.  ``<sessionId>/state.json``
    (``title, workDir, agents{<id>: {type, parentAgentId}}``) is a sidecar of each.

Why a :class:`~agentlog.adapters.base.JsonlAdapter`
    ``wire.jsonl`` is an append-only journal: parsed line by line, resumable.

Records (``{"type", …payload, "time": epoch ms}``; line 1 ``metadata{protocol_version,
created_at}``)
    * ``context.append_message`` — a user message (``message.content[]`` text parts);
      an ``origin.kind`` other than ``user`` (system triggers) is flagged ``meta``,
      except the ``subagent`` trigger that is a subagent's task.
    * ``context.append_loop_event`` — ``event.type``: ``step.begin`` (opens an
      assistant message, id = the step ``uuid``), ``content.part`` (``part.type``
      ``text`` / ``think`` → text / reasoning), ``tool.call{toolCallId, name, args}``,
      ``tool.result{toolCallId, result{output, isError}}`` (the ``Agent`` tool's
      ``agent_id: <id>`` line names the subagent it ran), ``step.end`` (its ``usage``
      repeats the next ``usage.record``: not counted).
    * ``usage.record{model, usage{inputOther, output, inputCacheRead,
      inputCacheCreation}, usageScope}`` — one billed call: ``inputOther`` is exclusive
      of cache, creation → the 5-minute tier.  ``turn`` scope belongs to the current
      step; ``session`` scope is the compaction call.
    * ``llm.request{model}`` — the model of the following steps.
    * ``full_compaction.begin{source}`` … ``context.apply_compaction{summary,
      tokensBefore}`` → a system message with a compaction part (``compaction_summary``).
    * ``turn.cancel`` → a system message flagged ``interrupted`` (status
      ``interrupted``); ``turn.ended{reason}`` → ``waiting_for_user`` (``done`` for a
      subagent); a user message of the main agent after them → ``working`` (subagent
      journals record no turn end, so their status stays ``unknown`` until one does).
    * ``turn.prompt``/``turn.steer`` repeat the prompt (``duplicate:<type>``); UI and
      configuration records in ``IGNORED_TYPES`` are skipped as ``ignored:<type>``;
      anything else is kept raw as an ``unknown`` message.

No resume command: the producer's CLI flag for a given session is not documented in
the sources read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import msgspec

from agentlog import probe
from agentlog.adapters._content import block_text
from agentlog.adapters._json import json_object
from agentlog.adapters._tools import normalise_tool
from agentlog.adapters._values import as_dict, as_int, as_str, parse_time
from agentlog.adapters.base import JsonlAdapter, LineParser, SourceRef, ToolOutput
from agentlog.model import (
    CompactionPart,
    Diagnostics,
    Message,
    Part,
    ReasoningPart,
    Role,
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

SLUG = "kimi_code"

TOOL_NAMES = {
    "Bash": "bash",
    "Read": "read",
    "ReadMediaFile": "read",
    "Write": "write",
    "Edit": "edit",
    "Grep": "grep",
    "Glob": "glob",
    "FetchURL": "web_fetch",
    "WebSearch": "web_search",
    "Agent": "task",
    "TodoList": "todo",
}
"""Kimi Code tool names → agentlog's (MCP tools keep ``mcp__server__tool``)."""

IGNORED_TYPES = frozenset(
    {
        "config.update",
        "tools.set_active_tools",
        "llm.tools_snapshot",
        "permission.set_mode",
        "permission.record_approval_result",
        "plan_mode.enter",
        "plan_mode.exit",
        "profile.bind",
        "plugin.session_start",
        "runtime.set_binding",
        "token_counting.measured",
        "token_counting.turn_recorded",
        "full_compaction.complete",
    }
)
_AGENT_ID = re.compile(r"^agent_id:\s*(\S+)", re.MULTILINE)


def tool_name(raw: str) -> str:
    """Normalised name of the Kimi Code tool ``raw``."""
    return normalise_tool(raw, TOOL_NAMES)


def usage_of(usage: Any) -> Usage | None:
    """Exclusive usage of a ``usage.record`` ``usage`` object (``inputOther`` excludes cache)."""
    if not isinstance(usage, dict):
        return None
    return Usage(
        input_tokens=as_int(usage.get("inputOther")),
        cache_read_tokens=as_int(usage.get("inputCacheRead")),
        cache_write_5m_tokens=as_int(usage.get("inputCacheCreation")),
        output_tokens=as_int(usage.get("output")),
    )


def location(path: str) -> tuple[str, str]:
    """``(session id, agent id)`` of ``…/<sessionId>/agents/<agentId>/wire.jsonl``;
    a file elsewhere is its own main session (its stem)."""
    p = Path(path)
    if p.parent.parent.name == "agents":
        return p.parent.parent.parent.name, p.parent.name
    return p.stem, "main"


class KimiCodeState(msgspec.Struct, kw_only=True):
    """What a Kimi Code parser keeps between lines (resumable): times (epoch ms), the
    current model, step and compaction, the first prompt, the status and open Agent calls."""

    diagnostics: Diagnostics = msgspec.field(default_factory=Diagnostics)
    started_at: float | None = None
    ended_at: float | None = None
    model: str | None = None
    step_id: str | None = None
    step_billed: bool = False
    compaction_id: str | None = None
    compaction_trigger: str = ""
    first_prompt: str | None = None
    status: SessionStatus = "unknown"
    status_evidence: str | None = None
    agent_calls: list[str] = msgspec.field(default_factory=list)
    """Open ``Agent`` tool calls: their result names the subagent they ran."""


class KimiCodeParser(LineParser[KimiCodeState]):
    """Parser of one agent's ``wire.jsonl``; the session's ``state.json`` is its sidecar."""

    state_type = KimiCodeState

    def __init__(self, ref: SourceRef, sidecars: Mapping[str, bytes]) -> None:
        super().__init__(ref, sidecars)
        self.session_id, self.agent_id = location(ref.path)
        self.sid = self.session_id if self.agent_id == "main" else f"{self.session_id}/{self.agent_id}"
        meta = next((json_object(data) for data in sidecars.values()), None)
        self.meta: dict[str, Any] = meta or {}

    def initial_state(self) -> KimiCodeState:
        return KimiCodeState()

    def _message(
        self, offset: int, role: Role, when: Any, parts: list[Part], mid: str | None = None
    ) -> Message:
        return Message(
            id=mid or f"{self.sid}@{offset}",
            role=role,
            timestamp=parse_time(when),
            model=self.state.model if role == "assistant" else None,
            parts=parts,
            offset=offset,
        )

    def handle(self, record: dict[str, Any], offset: int) -> None:
        kind = record.get("type")
        when = record.get("time")
        if isinstance(when, int | float) and not isinstance(when, bool):
            self.state.ended_at = max(self.state.ended_at or 0.0, float(when))
        d = self.diagnostics
        if kind == "metadata":
            d.use()
            self.state.started_at = self.state.started_at or as_int(record.get("created_at")) or None
        elif kind == "context.append_message":
            self._append_message(record["message"], offset, when)
        elif kind == "context.append_loop_event":
            self._loop_event(record["event"], offset, when)
        elif kind == "usage.record":
            self._usage(record, offset, when)
        elif kind == "llm.request":
            d.use()
            self.state.model = as_str(record.get("model")) or self.state.model
        elif kind == "full_compaction.begin":
            d.use()
            self.state.compaction_id = f"{self.sid}@{offset}"
            self.state.compaction_trigger = str(record.get("source") or "")
        elif kind == "context.apply_compaction":
            d.use()
            part = CompactionPart(
                summary=str(record.get("summary") or ""),
                trigger=self.state.compaction_trigger,
                tokens_before=record.get("tokensBefore")
                if isinstance(record.get("tokensBefore"), int)
                else None,
            )
            message = self._message(offset, "system", when, [part], self.state.compaction_id)
            message.flags.append("compaction_summary")
            self.emit(self.sid, message)
            self.state.compaction_id = None
        elif kind == "turn.cancel":
            d.use()
            message = self._message(offset, "system", when, [TextPart(text="Turn cancelled by the user.")])
            message.flags.extend(["interrupted", "synthetic"])
            self.emit(self.sid, message)
            self._status("interrupted", "turn.cancel")
        elif kind == "turn.ended":
            d.use()
            done: SessionStatus = "waiting_for_user" if self.agent_id == "main" else "done"
            self._status(done, f"turn.ended:{record.get('reason')}")
        elif kind in ("turn.prompt", "turn.steer"):
            d.skip(f"duplicate:{kind}")
        elif kind in IGNORED_TYPES:
            d.skip(f"ignored:{kind}")
        else:
            label = kind if isinstance(kind, str) else "<none>"
            d.unknown(label)
            message = self._message(offset, "system", when, [UnknownPart(raw=record)])
            message.flags.append("unknown")
            self.emit(self.sid, message)

    def _status(self, status: SessionStatus, evidence: str) -> None:
        self.state.status = status
        self.state.status_evidence = evidence

    def _append_message(self, message: dict[str, Any], offset: int, when: Any) -> None:
        role = message.get("role")
        if role not in ("user", "assistant", "system", "tool"):
            self.diagnostics.unknown(f"message:{role}")
            unknown = self._message(offset, "system", when, [UnknownPart(raw=message)])
            unknown.flags.append("unknown")
            self.emit(self.sid, unknown)
            return
        self.diagnostics.use()
        text = block_text(message.get("content"))
        out = self._message(offset, role, when, [TextPart(text=text)] if text else [])
        origin = as_dict(message.get("origin"))
        if role == "user" and origin.get("kind") not in (None, "user") and origin.get("name") != "subagent":
            out.flags.append("meta")
        elif role == "user" and self.state.first_prompt is None and text:
            self.state.first_prompt = text
        self.emit(self.sid, out)
        if role == "user" and self.agent_id == "main":
            self._status("working", "context.append_message")

    def _loop_event(self, event: dict[str, Any], offset: int, when: Any) -> None:
        kind = event.get("type")
        d = self.diagnostics
        if kind == "step.begin":
            d.use()
            self.state.step_id = str(event["uuid"])
            self.state.step_billed = False
        elif kind == "step.end":
            d.use()
        elif kind == "content.part":
            d.use()
            part = as_dict(event.get("part"))
            converted: Part
            if part.get("type") == "text":
                converted = TextPart(text=str(part.get("text") or ""))
            elif part.get("type") == "think":
                converted = ReasoningPart(text=str(part.get("think") or ""))
            else:
                converted = UnknownPart(raw=part)
            self._assistant(event, offset, when, converted)
        elif kind == "tool.call":
            d.use()
            raw = str(event.get("name") or "unknown")
            call = ToolCallPart(
                call_id=str(event["toolCallId"]), tool=tool_name(raw), raw_name=raw, input=event.get("args")
            )
            if raw == "Agent":
                self.state.agent_calls.append(call.call_id)
            self._assistant(event, offset, when, call)
        elif kind == "tool.result":
            d.use()
            self.emit(self.sid, self._tool_output(event, offset, when))
        else:
            label = f"loop:{kind}"
            d.unknown(label)
            message = self._message(offset, "system", when, [UnknownPart(raw=event)])
            message.flags.append("unknown")
            self.emit(self.sid, message)

    def _assistant(self, event: dict[str, Any], offset: int, when: Any, part: Part) -> None:
        step = as_str(event.get("stepUuid")) or self.state.step_id or f"{self.sid}@{offset}"
        self.emit(self.sid, self._message(offset, "assistant", when, [part], step))

    def _tool_output(self, event: dict[str, Any], offset: int, when: Any) -> ToolOutput:
        result = as_dict(event.get("result"))
        output = result.get("output")
        call_id = str(event["toolCallId"])
        structured = None
        if call_id in self.state.agent_calls:
            self.state.agent_calls.remove(call_id)
            found = _AGENT_ID.search(output) if isinstance(output, str) else None
            structured = {"agent_id": f"{self.session_id}/{found.group(1)}"} if found else None
        failed = bool(result.get("isError"))
        return ToolOutput(
            call_id=call_id,
            result=ToolResult(
                output=output,
                is_error=failed,
                status="error" if failed else "completed",
                ended_at=parse_time(when),
                structured=structured,
            ),
            timestamp=parse_time(when),
            offset=offset,
        )

    def _usage(self, record: dict[str, Any], offset: int, when: Any) -> None:
        usage = usage_of(record.get("usage"))
        if usage is None:
            self.diagnostics.skip("no_usage")
            return
        self.diagnostics.use()
        model = as_str(record.get("model"))
        if record.get("usageScope") == "turn" and self.state.step_id and not self.state.step_billed:
            mid, role = self.state.step_id, "assistant"
            self.state.step_billed = True
        elif self.state.compaction_id:
            mid, role = self.state.compaction_id, "system"
        else:
            mid, role = f"{self.sid}@{offset}", "system"
        message = self._message(offset, role, when, [], mid)  # type: ignore[arg-type]
        message.usage = usage
        message.model = self.state.model or model
        if role == "system":
            message.flags.append("compaction_summary" if mid == self.state.compaction_id else "meta")
        self.emit(self.sid, message)

    def headers(self) -> list[Session]:
        if self.diagnostics.records_total == 0:
            return []
        main = self.agent_id == "main"
        agents = as_dict(self.meta.get("agents"))
        info = as_dict(agents.get(self.agent_id))
        parent = info.get("parentAgentId") or "main"
        header = Session(
            key=session_key(SLUG, self.sid),
            agent=SLUG,
            id=self.sid,
            title=(as_str(self.meta.get("title")) if main else None) or self.state.first_prompt,
            cwd=as_str(self.meta.get("workDir")),
            started_at=parse_time(self.state.started_at),
            ended_at=parse_time(self.state.ended_at),
            kind="main" if main else "subagent",
            parent_key=None
            if main
            else session_key(SLUG, self.session_id + ("" if parent == "main" else f"/{parent}")),
            status=self.state.status,
            status_evidence=self.state.status_evidence,
            sources=[self.ref.path],
            diagnostics=msgspec.msgpack.decode(msgspec.msgpack.encode(self.diagnostics), type=Diagnostics),
        )
        return [header]


class KimiCodeAdapter(JsonlAdapter):
    """Kimi Code (TypeScript CLI): ``~/.kimi-code/sessions/*/<id>/agents/<agent>/wire.jsonl``."""

    slug = SLUG
    display_name = "Kimi Code"
    parser_version = 3
    env_vars = ("KIMI_CODE_HOME",)

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        base = Path(env["KIMI_CODE_HOME"]) if env.get("KIMI_CODE_HOME") else home / ".kimi-code"
        return [base / "sessions"]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        for path in walk_files(root, "wire.jsonl"):
            if path.name != "wire.jsonl" or path.parent.parent.name != "agents":
                continue
            state = path.parent.parent.parent / "state.json"
            yield SourceRef(agent=SLUG, path=str(path), sidecars=probe.regular_files([state]))

    def sniff(self, name: str, head: bytes) -> float:
        first = head.split(b"\n", 1)[0]
        if b'"protocol_version"' in first and b'"created_at"' in first:
            return 0.95 if name == "wire.jsonl" else 0.9
        if b'"context.append_' in head and b'"time"' in head:
            return 0.8
        return 0.0

    def new_parser(self, ref: SourceRef, sidecars: Mapping[str, bytes]) -> KimiCodeParser:
        return KimiCodeParser(ref, sidecars)
