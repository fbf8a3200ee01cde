"""zcode (Z.ai ZCode CLI and desktop app): one SQLite database, ``~/.zcode/cli/db/db.sqlite``.

Spec (``shared/formats.md`` §14.2 and pitfall 12).  zcode publishes no source; the
shapes below are the union of what third-party readers parse (agentsview
``internal/parser/zcode.go@538600744d1b``, axisrow/ccusage ``adapter/zcode/loader.rs@14ab4a770fc4``,
codeburn ``docs/providers/zcode.md@ed8fa3af3d58``, "schema verified against CLI db v0.14.8").

Locations
    ``$ZCODE_HOME`` (ccusage; comma-separated homes, each ``<home>/cli/db/db.sqlite``),
    ``$ZCODE_DIR`` (agentsview; the folder holding ``db.sqlite``), else
    ``~/.zcode/cli/db/db.sqlite``.  One database holds every project's sessions.

Why a :class:`~agentlog.adapters.base.DocumentAdapter`
    A SQLite database updated in place (WAL): read whole, read-only.

Tables (columns discovered from the rows; only the ids are required)
    ``session(id, directory, title, version, time_created, time_updated, parent_id?)``
    (epoch ms; ``parent_id`` → a ``subagent`` child); ``message(id, session_id,
    time_created, sequence?, data{role: user|assistant|system|model, modelID | model_id
    | model{id}}, …)``, ordered by ``(time_created, sequence, id)``; ``part(id,
    message_id, time_created?, sequence?, data{type, …})``, ordered by
    ``(sequence, time_created, id)``.  Part types: ``text``; ``thinking``/``reasoning``;
    ``tool``/``tool_use`` (``callID | id | toolCallId``, ``tool | name``, ``state.input |
    input | args``, an OpenCode-style ``state{status, output, error}`` gives the
    result); ``tool_result`` (``tool_use_id | callID | toolCallId``, ``content |
    output``, ``is_error``) → the result of that call; ``compaction``
    (``preCompactTokenCount``) → a compaction part; ``timeline``, ``step-start``,
    ``step-finish`` → ``ignored:<type>``; anything else kept raw.

Usage (``model_usage``; no cost is stored)
    Only rows with ``status='completed'`` are final (ccusage); others are skipped as
    ``ignored:model_usage:<status>``.  ``input_tokens`` **includes** cache read and
    cache creation (codeburn, checked against the provider's nested usage): exclusive
    input = input − cache_read − cache_creation; creation → the 5-minute tier.
    ``reasoning_tokens`` is reported beside ``output_tokens`` and, as ccusage prices it,
    added to output (**unverified** whether output already holds it).  A row is
    charged to the session's last assistant message created before the row's
    ``completed_at`` (rows carry a ``turn_id``, messages none that readers know of);
    a row with no such message is kept on a ``meta`` system message, so totals are
    exact either way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from agentlog import probe
from agentlog.adapters._content import block_text
from agentlog.adapters._json import json_object
from agentlog.adapters._tools import normalise_tool
from agentlog.adapters._values import as_dict, as_int, as_str, parse_time
from agentlog.adapters.base import (
    Document,
    DocumentAdapter,
    DocumentParser,
    DocumentResult,
    SourceRef,
    ToolOutput,
)
from agentlog.model import (
    CompactionPart,
    Diagnostics,
    Message,
    Part,
    ReasoningPart,
    Role,
    Session,
    TextPart,
    ToolCallPart,
    ToolResult,
    UnknownPart,
    Usage,
)
from agentlog.rules import session_key

SLUG = "zcode"
IGNORED_PARTS = frozenset({"timeline", "step-start", "step-finish"})
_ROLES: dict[str, Role] = {"user": "user", "assistant": "assistant", "model": "assistant", "system": "system"}


def usage_of(row: Mapping[str, Any]) -> Usage:
    """Exclusive usage of one ``model_usage`` row (its input includes both cache buckets)."""
    cache_read = as_int(row.get("cache_read_input_tokens"))
    cache_write = as_int(row.get("cache_creation_input_tokens"))
    reasoning = as_int(row.get("reasoning_tokens"))
    return Usage(
        input_tokens=max(0, as_int(row.get("input_tokens")) - cache_read - cache_write),
        cache_read_tokens=cache_read,
        cache_write_5m_tokens=cache_write,
        output_tokens=as_int(row.get("output_tokens")) + reasoning,
        reasoning_tokens=reasoning,
    )


def _first(data: Mapping[str, Any], *keys: str) -> Any:
    return next((data[k] for k in keys if data.get(k) not in (None, "")), None)


def _model(data: Mapping[str, Any]) -> str | None:
    model = _first(data, "modelID", "model_id", "model")
    if isinstance(model, dict):
        model = _first(model, "id", "modelID", "model_id", "name")
    return as_str(model)


def _tool_call(part: dict[str, Any]) -> ToolCallPart:
    state = as_dict(part.get("state"))
    raw = str(_first(part, "tool", "name") or "unknown")
    result = None
    if state.get("status") in ("completed", "error"):
        failed = state["status"] == "error"
        result = ToolResult(
            output=state.get("error") if failed else state.get("output"),
            is_error=failed,
            status="error" if failed else "completed",
        )
    return ToolCallPart(
        call_id=str(_first(part, "callID", "id", "toolCallId", "tool_use_id") or ""),
        tool=normalise_tool(raw),
        raw_name=raw,
        input=_first(state, "input") if state else _first(part, "input", "args", "arguments"),
        result=result,
    )


def _tool_output(part: dict[str, Any], when: Any) -> ToolOutput:
    content = _first(part, "content", "output", "result")
    failed = bool(part.get("is_error") or part.get("isError"))
    return ToolOutput(
        call_id=str(_first(part, "tool_use_id", "callID", "toolCallId", "id") or ""),
        result=ToolResult(
            output=block_text(content) if isinstance(content, list) else content,
            is_error=failed,
            status="error" if failed else "completed",
        ),
        timestamp=parse_time(when),
    )


def _part(part: dict[str, Any], kind: str) -> Part | None:
    if kind == "text":
        return TextPart(text=str(part.get("text") or ""))
    if kind in ("thinking", "reasoning"):
        return ReasoningPart(text=str(_first(part, "text", "thinking") or ""))
    if kind in ("tool", "tool_use"):
        return _tool_call(part)
    if kind == "compaction":
        before = part.get("preCompactTokenCount")
        return CompactionPart(
            summary=str(part.get("summary") or ""), tokens_before=before if isinstance(before, int) else None
        )
    return None


def _order(row: Mapping[str, Any], *keys: str) -> tuple[Any, ...]:
    return (*(as_int(row.get(k)) for k in keys), str(row.get("id")))


class _DatabaseParse(DocumentParser):
    """One ``db.sqlite``: each session and message row is one record, counted in its
    session's diagnostics (rows no session owns in ``self.diagnostics``, merged into
    the first header)."""

    def __init__(self, ref: SourceRef, doc: Document) -> None:
        super().__init__(ref, doc)
        self.sessions: dict[str, Session] = {}

    def header(self, sid: str) -> Session:
        if sid not in self.sessions:
            self.sessions[sid] = Session(
                key=session_key(SLUG, sid), agent=SLUG, id=sid, sources=[self.ref.path]
            )
        return self.sessions[sid]

    def headers(self) -> list[Session]:
        out = list(self.sessions.values())
        if out:
            out[0].diagnostics.merge(self.diagnostics)
        return out

    def parse(self) -> None:
        tables = self.doc.tables
        stray, fragments, header = self.diagnostics, self.fragments, self.header
        for row in tables.get("session", []):
            if not isinstance(row.get("id"), str):
                stray.skip("no_id")
                continue
            session = header(row["id"])
            session.diagnostics.use()
            session.title = as_str(row.get("title"))
            session.cwd = as_str(row.get("directory"))
            session.agent_version = as_str(row.get("version"))
            session.started_at = parse_time(row.get("time_created"))
            if as_str(row.get("parent_id")):
                session.parent_key = session_key(SLUG, row["parent_id"])
                session.kind = "subagent"
        parts: dict[str, list[dict[str, Any]]] = {}
        for row in sorted(tables.get("part", []), key=lambda r: _order(r, "sequence", "time_created")):
            parts.setdefault(str(row.get("message_id")), []).append(row)
        assistants: dict[str, list[Message]] = {}
        for row in sorted(tables.get("message", []), key=lambda r: _order(r, "time_created", "sequence")):
            data = json_object(row.get("data"))
            sid = as_str(row.get("session_id"))
            if data is None or sid is None or not isinstance(row.get("id"), str):
                stray.skip("invalid_message_row")
                continue
            session = header(sid)
            with self.guard(session.diagnostics):
                message = ZcodeAdapter._message(
                    row, data, parts.pop(row["id"], []), session.diagnostics, fragments, sid
                )
                fragments.append((sid, message))
                if message.role == "assistant":
                    assistants.setdefault(sid, []).append(message)
        orphans = sum(len(v) for v in parts.values())
        if orphans:
            stray.skip("orphan_part", orphans)
        ZcodeAdapter._usage(tables.get("model_usage", []), assistants, header, fragments, stray)


class ZcodeAdapter(DocumentAdapter):
    """zcode: ``~/.zcode/cli/db/db.sqlite`` (sessions, messages, parts, model usage)."""

    slug = SLUG
    display_name = "zcode"
    parser_version = 3
    env_vars = ("ZCODE_HOME", "ZCODE_DIR")
    source_format = "sqlite"
    sqlite_tables = ("session", "message", "part", "model_usage")

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        homes = [Path(p.strip()) / "cli" / "db" for p in env.get("ZCODE_HOME", "").split(",") if p.strip()]
        if env.get("ZCODE_DIR"):
            homes.append(Path(env["ZCODE_DIR"]))
        return homes or [home / ".zcode" / "cli" / "db"]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        for candidate in (root / "db.sqlite", root / "cli" / "db" / "db.sqlite"):
            if probe.is_file(candidate):
                yield SourceRef(agent=SLUG, path=str(candidate))

    def sniff(self, name: str, head: bytes) -> float:
        return 0.8 if name == "db.sqlite" and head.startswith(b"SQLite format 3\x00") else 0.0

    def parse_document(self, ref: SourceRef, doc: Document) -> DocumentResult:
        return _DatabaseParse(ref, doc).result()

    @staticmethod
    def _message(
        row: dict[str, Any],
        data: dict[str, Any],
        parts: list[dict[str, Any]],
        diagnostics: Diagnostics,
        fragments: list[tuple[str, Message | ToolOutput]],
        sid: str,
    ) -> Message:
        role = _ROLES.get(str(data.get("role")))
        message = Message(
            id=row["id"],
            role=role or "system",
            timestamp=parse_time(row.get("time_created")),
            model=_model(data) if role == "assistant" else None,
        )
        if role is None:
            diagnostics.unknown(f"role:{data.get('role')}")
            message.parts.append(UnknownPart(raw=data))
            message.flags.append("unknown")
        else:
            diagnostics.use()
        for part_row in parts:
            part = json_object(part_row.get("data"))
            if part is None:
                diagnostics.skip("invalid_json")
                continue
            kind = str(part.get("type"))
            converted = _part(part, kind)
            if converted is not None:
                diagnostics.use()
                message.parts.append(converted)
            elif kind == "tool_result":
                diagnostics.use()
                fragments.append(
                    (sid, _tool_output(part, part_row.get("time_created") or row.get("time_created")))
                )
            elif kind in IGNORED_PARTS:
                diagnostics.skip(f"ignored:{kind}")
            else:
                diagnostics.unknown(kind)
                message.parts.append(UnknownPart(raw=part))
        return message

    @staticmethod
    def _usage(
        rows: list[dict[str, Any]],
        assistants: dict[str, list[Message]],
        header: Callable[[str], Session],
        fragments: list[tuple[str, Message | ToolOutput]],
        stray: Diagnostics,
    ) -> None:
        for row in sorted(rows, key=lambda r: _order(r, "completed_at", "started_at")):
            sid = as_str(row.get("session_id"))
            if sid is None:
                stray.skip("no_session_id")
                continue
            diagnostics = header(sid).diagnostics
            if row.get("status") != "completed":
                diagnostics.skip(f"ignored:model_usage:{row.get('status')}")
                continue
            diagnostics.use()
            usage = usage_of(row)
            done = parse_time(row.get("completed_at") or row.get("started_at"))
            earlier = [
                m
                for m in assistants.get(sid, [])
                if done is None or m.timestamp is None or m.timestamp <= done
            ]
            if earlier:
                target = earlier[-1]
                target.usage = usage if target.usage is None else target.usage + usage
                target.model = target.model or as_str(row.get("model_id"))
                continue
            fragments.append(
                (
                    sid,
                    Message(
                        id=f"{sid}@usage:{row.get('id')}",
                        role="system",
                        timestamp=done,
                        model=as_str(row.get("model_id")),
                        usage=usage,
                        flags=["meta"],
                    ),
                )
            )
