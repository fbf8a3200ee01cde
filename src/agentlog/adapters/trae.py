"""Trae IDE (ByteDance) agent chats in VS Code-style ``state.vscdb`` (classic layout).

Spec (``shared/formats.md`` §14.3; no producer source exists — the union of two
readers: kenn-io/agentsview ``internal/parser/trae_provider.go``, ``types.go``,
``trae_layout.go@538600744d1b`` and ChatCrystal ``server/src/parser/adapters/trae.ts@03bf99e4ac69``):

Locations
    The ``User`` folder of the products ``Trae``, ``Trae CN`` and ``TRAE SOLO CN``
    under ``~/.config`` (Linux, or ``$XDG_CONFIG_HOME``), ``~/Library/Application
    Support`` (macOS) and ``%APPDATA%`` (Windows); ``TRAE_USER_DIR`` overrides.
    Sources: ``globalStorage/state.vscdb`` and ``workspaceStorage/<hash>/state.vscdb``
    (folder from the sibling ``workspace.json``, a sidecar).  Only the ``ItemTable``
    row with key ``memento/icube-ai-agent-storage`` is read.  Newer builds keep agent
    data in ``ModularData/ai-agent/database.db``, which is encrypted (not SQLite): it
    is not read (a store without the memento key yields no sessions).

Value (JSON text)
    ``{currentSessionId?, list: [{sessionId, createdAt, updatedAt (ms or ISO),
    model?, messages: [{role: user|assistant|system, content, turnIndex, timestamp?
    (ms, s or ISO), agentMessageId?, model?, modelInfo?{config_name,
    display_model_name}, agentTaskContent?}]}]}``.  One session per ``list`` entry;
    messages ordered by ``turnIndex`` (stable), ids ``<session id>@<index in the
    list>``.  ``agentTaskContent`` (an object, or a JSON string of one) of the
    SOLO/Builder agent holds the answer when ``content`` is empty:
    ``proposal``/``content``/``text`` → text, ``proposalReasoningContent`` →
    reasoning, ``guideline.planItems[]``: the item with ``toolName: "finish"`` gives
    the final text (``thought``), every other item is a tool step — a tool call
    named ``toolName`` with no recorded input or result — whose ``thought``/
    ``reasoningContent`` is reasoning.  Model: the message's ``model``, else
    ``modelInfo.display_model_name``/``config_name``, else the session's ``model``.

Caveats
    Assistant timestamps are unreliable (readers order by ``turnIndex`` and clamp
    times to be monotonic): they are clamped and every assistant message is
    flagged ``timestamp_unreliable``.  No tokens, no cost, no tool inputs or
    outputs are recorded.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from agentlog.adapters._common import vscode_state_dbs, vscode_user_dirs, workspace_folder
from agentlog.adapters._json import json_value
from agentlog.adapters._tools import normalise_tool
from agentlog.adapters._values import as_str, parse_time
from agentlog.adapters.base import (
    Document,
    DocumentAdapter,
    DocumentParser,
    DocumentResult,
    Fragment,
    SourceRef,
)
from agentlog.model import Message, Part, ReasoningPart, Session, TextPart, ToolCallPart
from agentlog.rules import session_key

SLUG = "trae"
MEMENTO_KEY = "memento/icube-ai-agent-storage"
_ROLES = {"user": "user", "assistant": "assistant", "system": "system"}
_TOOL_NAMES = {
    "view_file": "read",
    "read_file": "read",
    "edit_file": "edit",
    "write_to_file": "write",
    "create_file": "write",
    "run_command": "bash",
    "search_by_regex": "grep",
    "todo_write": "todo",
}


def task_parts(task: Any, mid: str) -> list[Part]:
    """The parts of a SOLO/Builder ``agentTaskContent`` (object or JSON string)."""
    if isinstance(task, str):
        decoded = json_value(task)
        task = decoded if isinstance(decoded, dict) else {"content": task}
    if not isinstance(task, dict):
        return []
    parts: list[Part] = []
    reasoning = as_str(task.get("proposalReasoningContent"))
    if reasoning:
        parts.append(ReasoningPart(text=reasoning))
    text = as_str(task.get("proposal")) or as_str(task.get("content")) or as_str(task.get("text"))
    guideline = task.get("guideline")
    items = guideline.get("planItems") if isinstance(guideline, dict) else None
    for n, item in enumerate(items if isinstance(items, list) else []):
        if not isinstance(item, dict):
            continue
        tool = as_str(item.get("toolName"))
        if tool == "finish":
            text = as_str(item.get("thought")) or as_str(item.get("content")) or text
            continue
        thought = as_str(item.get("reasoningContent")) or as_str(item.get("thought"))
        if thought:
            parts.append(ReasoningPart(text=thought))
        if tool:
            parts.append(
                ToolCallPart(call_id=f"{mid}#plan{n}", tool=normalise_tool(tool, _TOOL_NAMES), raw_name=tool)
            )
    if text:
        parts.append(TextPart(text=text))
    return parts


def _model(message: dict[str, Any]) -> str | None:
    info = message.get("modelInfo")
    if isinstance(info, dict):
        return (
            as_str(message.get("model"))
            or as_str(info.get("display_model_name"))
            or as_str(info.get("config_name"))
        )
    return as_str(message.get("model"))


class TraeAdapter(DocumentAdapter):
    """Trae IDE (classic layout): ``memento/icube-ai-agent-storage`` in ``state.vscdb``."""

    slug = SLUG
    display_name = "Trae"
    parser_version = 3
    env_vars = ("TRAE_USER_DIR", "XDG_CONFIG_HOME", "APPDATA")
    source_format = "sqlite"
    sqlite_queries: ClassVar[Mapping[str, tuple[str, tuple[Any, ...]]]] = {
        "memento": ("SELECT value FROM ItemTable WHERE key = ?", (MEMENTO_KEY,)),
    }

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        if env.get("TRAE_USER_DIR"):
            return [Path(env["TRAE_USER_DIR"])]
        return vscode_user_dirs(env, home, ["Trae", "Trae CN", "TRAE SOLO CN"])

    def discover(self, root: Path) -> Iterator[SourceRef]:
        for db, meta in vscode_state_dbs(root):
            yield SourceRef(agent=SLUG, path=str(db), sidecars=(str(meta),) if meta else ())

    def sniff(self, name: str, head: bytes) -> float:
        if not head.startswith(b"SQLite format 3\x00"):
            return 0.0
        return 0.3 if name == "state.vscdb" and b"cursorDiskKV" not in head else 0.0

    def parse_document(self, ref: SourceRef, doc: Document) -> DocumentResult:
        return _MementoParse(ref, doc).result()


class _MementoParse(DocumentParser):
    """One ``state.vscdb``'s ``icube-ai-agent-storage`` memento: its sessions, each
    message one record."""

    def __init__(self, ref: SourceRef, doc: Document) -> None:
        super().__init__(ref, doc)
        self.sessions: list[Session] = []

    def headers(self) -> list[Session]:
        return self.sessions

    def parse(self) -> None:
        ref, headers = self.ref, self.sessions
        cwd = next((workspace_folder(d) for d in self.doc.sidecars.values()), None)
        for row in self.doc.tables.get("memento", []):
            store = json_value(row.get("value"))
            sessions = store.get("list") if isinstance(store, dict) else None
            if not isinstance(sessions, list):
                spare = Session(
                    key=session_key(SLUG, Path(ref.path).parent.name),
                    agent=SLUG,
                    id=Path(ref.path).parent.name,
                )
                spare.diagnostics.skip("invalid_json" if store is None else "malformed:memento")
                spare.sources = [ref.path]
                headers.append(spare)
                continue
            for entry in sessions:
                if isinstance(entry, dict) and as_str(entry.get("sessionId")):
                    headers.append(self._session(entry, cwd, ref, self.fragments))
                elif headers:
                    headers[0].diagnostics.skip("malformed:session")

    def _session(
        self, entry: dict[str, Any], cwd: str | None, ref: SourceRef, out: list[Fragment]
    ) -> Session:
        """The header of one session entry; its messages go to ``out``, one guarded
        record each."""
        sid = entry["sessionId"]
        header = Session(
            key=session_key(SLUG, sid),
            agent=SLUG,
            id=sid,
            cwd=cwd,
            started_at=parse_time(entry.get("createdAt")),
            ended_at=parse_time(entry.get("updatedAt")),
            sources=[ref.path],
        )
        header.diagnostics.use()
        raw = entry.get("messages")
        indexed = [(n, m) for n, m in enumerate(raw if isinstance(raw, list) else []) if isinstance(m, dict)]
        if isinstance(raw, list) and len(indexed) < len(raw):
            header.diagnostics.skip("not_an_object", len(raw) - len(indexed))
        indexed.sort(key=lambda t: t[1]["turnIndex"] if isinstance(t[1].get("turnIndex"), int) else t[0])
        default_model = as_str(entry.get("model"))
        last: datetime | None = None
        for n, item in indexed:
            with self.guard(header.diagnostics):
                last = self._message(header, item, n, last, default_model, out)
        return header

    @staticmethod
    def _message(
        header: Session,
        item: dict[str, Any],
        n: int,
        last: datetime | None,
        default_model: str | None,
        out: list[Fragment],
    ) -> datetime | None:
        """Emit one message of a session entry; returns the latest time seen."""
        sid = header.id
        role = _ROLES.get(str(item.get("role")))
        if role is None:
            header.diagnostics.skip(f"ignored:role:{item.get('role')}")
            return last
        header.diagnostics.use()
        mid = f"{sid}@{n}"
        when = parse_time(item.get("timestamp"))
        if when is not None and last is not None and when < last:
            when = last
        last = when or last
        text = as_str(item.get("content"))
        parts: list[Part] = [TextPart(text=text)] if text else []
        message = Message(id=mid, role=role, timestamp=when, parts=parts)  # type: ignore[arg-type]
        if role == "assistant":
            if not text:
                message.parts = task_parts(item.get("agentTaskContent"), mid)
            message.model = _model(item) or default_model
            message.flags.append("timestamp_unreliable")
        elif header.title is None and text and role == "user":
            header.title = text
        out.append((sid, message))
        return last
