"""Crush (Charm's terminal agent) sessions: one SQLite database per project.

Spec (charmbracelet/crush ``internal/db/migrations/20250424200609_initial.sql``,
``internal/db/connect.go``, ``internal/message/content.go``; the usage rule from
``TrackUsage`` in Crush's agent, inherited from opencode-ai/opencode):

Location
    ``<project>/.crush/crush.db`` (the data directory defaults to ``.crush`` in the
    project; ``options.data_directory`` can move it, which is not followed).  Crush
    also lists projects in ``~/.local/share/crush/projects.json``; adapters may not
    parse during discovery, so agentlog looks for ``.crush/crush.db`` in the home
    folder, its usual project folders (``~/src``, ``~/code``, ``~/projects``, ``~/dev``
    … — see :data:`agentlog.adapters._common.PROJECT_PARENTS`) and every ``--root``, at
    most two folders deep, and in every folder (or its parents) another agent's
    session recorded as its ``cwd`` (:attr:`CrushAdapter.project_files`).  Tables ``sessions`` and ``messages`` are read read-only.

``sessions``
    ``id, parent_session_id, title, message_count, prompt_tokens, completion_tokens,
    cost, updated_at, created_at`` (epoch s), ``summary_message_id`` (newer) → header;
    a parent → ``kind="subagent"``; ``cwd`` is the project folder (the parent of
    ``.crush``).

``messages`` (``id, session_id, role, parts, model, provider?, created_at, updated_at,
finished_at``), ordered by ``created_at``
    ``parts`` is a JSON list of ``{type, data}``: ``text{text}``, ``reasoning{thinking,
    signature}``, ``image_url{url}``, ``binary{Path, MIMEType}``, ``tool_call{id, name,
    input (JSON string), finished}``, ``tool_result{tool_call_id, name, content,
    is_error}`` (merged into its call; ``tool`` role messages hold only these),
    ``finish{reason, time, message}`` (``canceled`` → ``interrupted``, ``error`` →
    ``api_error``), ``shell_command{command, output, exit_code}`` (a user ``!`` command:
    a completed ``bash`` call).  Unknown part types are kept as unknown parts.  The
    message named by ``summary_message_id`` is flagged ``compaction_summary``.

Tokens (session cost only)
    Crush records no per-message usage.  ``TrackUsage`` *overwrites* ``prompt_tokens``
    (input + cache writes) and ``completion_tokens`` (output + cache reads) with the
    last request's numbers — a context size, not consumption — so they are not
    counted; ``cost`` is cumulative (Crush's own estimate from its model prices).  Each
    session carries that cost on **one hidden message** ``<sessionId>@session-cost``
    (``system``, ``meta`` + ``synthetic``, zero tokens, ``cost_source="estimated"``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path, PurePath
from typing import Any, ClassVar, Literal

from agentlog.adapters._common import project_files, project_roots
from agentlog.adapters._headers import database_headers
from agentlog.adapters._json import json_value
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
    FilePart,
    Message,
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
from agentlog.rules import session_key

SLUG = "crush"
DATABASE = ".crush/crush.db"
TOOL_NAMES = {
    "bash": "bash",
    "view": "read",
    "write": "write",
    "edit": "edit",
    "multiedit": "edit",
    "grep": "grep",
    "glob": "glob",
    "ls": "list",
    "fetch": "web_fetch",
    "agentic_fetch": "web_fetch",
    "web_search": "web_search",
    "agent": "task",
    "todos": "todo",
}
"""Crush tool names → agentlog's normalised names (MCP tools ``mcp_<server>_<tool>`` and
others: snake_case)."""
_FINISH_FLAGS: dict[str, MessageFlag] = {"canceled": "interrupted", "error": "api_error"}


def tool_name(raw: str) -> str:
    """Normalised name of Crush tool ``raw``."""
    return normalise_tool(raw, TOOL_NAMES)


class _DatabaseParse(DocumentParser):
    """One ``crush.db``; each ``sessions`` and ``messages`` row is one record, counted
    in its session's diagnostics (rows no session owns in ``self.diagnostics``)."""

    def __init__(self, ref: SourceRef, doc: Document) -> None:
        super().__init__(ref, doc)
        self.tables = doc.tables
        self.project = str(PurePath(ref.path).parent.parent)
        self.sessions: dict[str, Session] = {}
        self.summaries: set[str] = set()

    def parse(self) -> None:
        for row in self.tables.get("sessions", []):
            with self.guard():
                self._header(row)
        rows = sorted(
            self.tables.get("messages", []), key=lambda r: (as_int(r.get("created_at")), str(r.get("id")))
        )
        for row in rows:
            header = self.sessions.get(str(row.get("session_id") or ""))
            with self.guard(header.diagnostics if header else None):
                self._message(row)
        for row in self.tables.get("sessions", []):
            with self.guard():
                self._cost(row)

    def headers(self) -> list[Session]:
        return database_headers(
            SLUG, list(self.sessions.values()), PurePath(self.project).name, self.diagnostics, self.ref.path
        )

    def _header(self, row: dict[str, Any]) -> None:
        sid = as_str(row.get("id"))
        if sid is None:
            self.diagnostics.skip("malformed:session_row")
            return
        header = Session(
            key=session_key(SLUG, sid),
            agent=SLUG,
            id=sid,
            title=as_str(row.get("title")),
            cwd=as_str(row.get("workspace_cwd")) or self.project,
            started_at=parse_time(row.get("created_at")),
            ended_at=parse_time(row.get("updated_at")),
        )
        parent = as_str(row.get("parent_session_id"))
        if parent:
            header.kind, header.parent_key = "subagent", session_key(SLUG, parent)
        summary = as_str(row.get("summary_message_id"))
        if summary:
            self.summaries.add(summary)
        header.diagnostics.use()
        self.sessions[sid] = header

    def _message(self, row: dict[str, Any]) -> None:
        sid = str(row.get("session_id") or "")
        header = self.sessions.get(sid)
        if header is None:
            self.diagnostics.skip("no_session_row")
            return
        parts = json_value(row.get("parts"))  # TEXT or BLOB; another type is no JSON
        role = row.get("role")
        if role not in ("user", "assistant", "tool", "system") or not isinstance(parts, list):
            header.diagnostics.skip("malformed:message_row")
            return
        header.diagnostics.use()
        when = parse_time(row.get("created_at"))
        out = Message(
            id=str(row.get("id")),
            role=role,
            timestamp=when,
            model=as_str(row.get("model")) if role == "assistant" else None,
        )
        for wrapper in parts:
            self._part(sid, out, wrapper, when)
        if out.id in self.summaries:
            out.flags.append("compaction_summary")
        if out.parts:
            self.emit(sid, out)

    def _part(self, sid: str, out: Message, wrapper: Any, when: datetime | None) -> None:
        kind = wrapper.get("type") if isinstance(wrapper, dict) else None
        data = as_dict(wrapper.get("data")) if isinstance(wrapper, dict) else {}
        part: Part | None = None
        if kind == "text":
            part = TextPart(text=str(data.get("text") or ""))
        elif kind == "reasoning":
            text = str(data.get("thinking") or "")
            part = ReasoningPart(text=text, encrypted=not text and bool(data.get("signature")))
        elif kind == "image_url":
            part = FilePart(media_type="image", ref=str(data.get("url") or ""))
        elif kind == "binary":
            part = FilePart(media_type=str(data.get("MIMEType") or ""), name=str(data.get("Path") or ""))
        elif kind == "tool_call":
            raw = str(data.get("name") or "")
            arguments = data.get("input")
            decoded = json_value(arguments.encode()) if isinstance(arguments, str) else arguments
            part = ToolCallPart(
                call_id=str(data.get("id") or ""),
                tool=tool_name(raw),
                raw_name=raw,
                input=decoded if decoded is not None else arguments,
            )
        elif kind == "tool_result":
            error = data.get("is_error") is True
            result = ToolResult(
                output=data.get("content"),
                is_error=error,
                status="error" if error else "completed",
                ended_at=when,
            )
            self.emit(sid, ToolOutput(call_id=str(data.get("tool_call_id") or ""), result=result))
        elif kind == "finish":
            flag = _FINISH_FLAGS.get(str(data.get("reason")))
            if flag:
                out.flags.append(flag)
        elif kind == "shell_command":
            failed = as_int(data.get("exit_code")) != 0
            part = ToolCallPart(
                call_id=f"{out.id}#shell",
                tool="bash",
                raw_name="shell_command",
                input={"command": data.get("command")},
                result=ToolResult(
                    output=data.get("output"), is_error=failed, status="error" if failed else "completed"
                ),
            )
        else:
            part = UnknownPart(raw=wrapper)
        if part is not None:
            out.parts.append(part)

    def _cost(self, row: dict[str, Any]) -> None:
        sid, cost = as_str(row.get("id")), row.get("cost")
        if sid is None or not isinstance(cost, int | float) or isinstance(cost, bool) or cost <= 0:
            return
        usage = Usage(cost_usd=float(cost), cost_source="estimated")
        self.emit(
            sid,
            Message(
                id=f"{sid}@session-cost",
                role="system",
                parts=[TextPart(text="session cost (Crush's estimate)")],
                usage=usage,
                flags=["meta", "synthetic"],
            ),
        )


class CrushAdapter(DocumentAdapter):
    """Crush (Charm): ``<project>/.crush/crush.db``."""

    slug = SLUG
    display_name = "Crush"
    parser_version = 3
    project_files = (DATABASE,)
    project_owned = (".crush",)
    """Crush's data directory in a project (its database, ``-wal`` and ``-shm``, logs)."""
    source_format: ClassVar[Literal["json", "sqlite"]] = "sqlite"
    sqlite_tables = ("sessions", "messages")

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return project_roots(home)

    def discover(self, root: Path) -> Iterator[SourceRef]:
        for path in project_files(root, DATABASE):
            yield SourceRef(agent=SLUG, path=str(path))

    def sniff(self, name: str, head: bytes) -> float:
        return 0.6 if name == "crush.db" and head.startswith(b"SQLite format 3\x00") else 0.0

    def parse_document(self, ref: SourceRef, doc: Document) -> DocumentResult:
        return _DatabaseParse(ref, doc).result()
