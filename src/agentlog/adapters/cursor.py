"""Cursor IDE chats and agent runs ("composers") in VS Code-style ``state.vscdb`` (SQLite).

Spec (``shared/formats.md`` §10 and §14.6; Cursor publishes no schema, all facts
come from third-party readers: Dicklesworthstone/franken_agent_detection
``src/connectors/cursor.rs@6ae73d5f78d2``, agentsview branch
``internal/parser/cursor_vscdb.go@fcb256435847``, getagentseal/codeburn
``src/providers/cursor.ts@ed8fa3af3d58``, ryandemelo/token-monitor issue #9):

Locations
    ``<Cursor user dir>/globalStorage/state.vscdb`` and
    ``<Cursor user dir>/workspaceStorage/<id>/state.vscdb`` (+ ``workspace.json``),
    the user dir being ``~/.config/Cursor/User`` (Linux, or ``$XDG_CONFIG_HOME``),
    ``~/Library/Application Support/Cursor/User`` (macOS), ``%APPDATA%/Cursor/User``
    (Windows); ``CURSOR_USER_DIR`` overrides.  The global database is listed with
    every ``workspaceStorage/*/workspace.json`` as sidecars.

What is read (and nothing else)
    ``cursorDiskKV`` rows whose key starts with ``composerData:`` or ``bubbleId:``
    (range scans) and the two ``ItemTable`` keys ``composer.composerData`` and
    ``workbench.panel.aichat.view.aichat.chatdata``.  ``ItemTable`` also holds
    ``cursorAuth/*`` secrets: it is only ever queried by those exact keys.  A
    database held by a running Cursor is read through a private copy (DB + WAL).

Composers (one session each; id = ``composerId``)
    ``composerData:<id>`` = ``{name, createdAt, lastUpdatedAt (epoch ms),
    modelConfig{modelName}, fullConversationHeadersOnly[{bubbleId, type}],
    subagentComposerIds[], subComposerIds[], workspaceIdentifier{id, uri{fsPath}}}``;
    bubbles in ``bubbleId:<composerId>:<bubbleId>`` rows (older builds:
    ``bubbleId:<bubbleId>`` with ``conversationId`` in the value), in the order of
    ``fullConversationHeadersOnly``.  Older composers (no headers list) keep their
    bubbles inline in ``conversation`` (or ``bubbles``), in order; the oldest keep
    whole composers inline in the workspace ``ItemTable`` ``composer.composerData``
    ``{allComposers[…]}`` (entries without bubbles there are only an index of the
    global composers: ``ignored:composer_index_entry``).  Bubbles no header lists
    are left-overs of edits (``orphan_bubble``).  A composer named in another's
    ``subagentComposerIds``/``subComposerIds`` is a ``subagent`` of it.
    Workspace folder: ``workspaceIdentifier.id`` → ``workspaceStorage/<id>/
    workspace.json`` ``folder``, else ``workspaceIdentifier.uri.fsPath``, else a
    bubble's ``workspaceProjectDir`` or first ``workspaceUris`` entry, else the
    ``workspace.json`` of the workspace database being read.

Bubbles (one message each; id = ``bubbleId``)
    ``type`` 1 = user, 2 = assistant (any other type is kept raw as ``unknown``);
    text in ``text``, ``rawText``, ``content`` or ``message``; time ``createdAt``
    (ISO-8601 or epoch ms) or ``timestamp``; model ``modelInfo.modelName``, else the
    composer's ``modelConfig.modelName`` unless it is ``default`` (Auto).  Tool
    bubbles carry ``toolFormerData{toolCallId, name, params (JSON string),
    rawArgs, status, result (JSON string)}``: a tool call with its result (status
    ``completed`` → completed, ``error``/``failed`` → error, ``cancelled``/
    ``aborted`` → interrupted, else pending).  Sample bubble:
    ``{"type":2,"text":"Done.","createdAt":"2025-11-02T10:00:03.000Z",
    "modelInfo":{"modelName":"claude-4-sonnet"},"tokenCount":{"inputTokens":0,
    "outputTokens":0}}``.

Tokens
    ``tokenCount{inputTokens, outputTokens}`` is non-zero only on the turn-final
    assistant bubble of older builds and stays ``{0, 0}`` on current ones; when
    non-zero it becomes that message's usage: ``inputTokens`` is the whole prompt
    of the turn (context-inclusive, no cache split) → ``input_tokens``,
    ``outputTokens`` → ``output_tokens``; the message is flagged
    ``usage_context_inclusive``.  ``contextTokensUsed``/``promptTokenBreakdown``
    are context-meter snapshots, not usage, and are ignored.  No cost is recorded.

Legacy chat (``ItemTable`` ``workbench.panel.aichat.view.aichat.chatdata``,
**shape unverified**: ``{tabs[{tabId, chatTitle, lastSendTime, bubbles[{id, type:
"user"|"ai", text, modelType}]}]}``): one session per tab.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from agentlog.adapters._common import file_url_path, vscode_state_dbs, vscode_user_dirs, workspace_folder
from agentlog.adapters._json import json_value
from agentlog.adapters._tools import normalise_tool
from agentlog.adapters._values import as_int, as_str, parse_time
from agentlog.adapters.base import Document, DocumentAdapter, DocumentResult, Fragment, RecordGuard, SourceRef
from agentlog.model import (
    Diagnostics,
    Message,
    Part,
    Session,
    TextPart,
    ToolCallPart,
    ToolResult,
    ToolStatus,
    UnknownPart,
    Usage,
)
from agentlog.rules import session_key

SLUG = "cursor"
COMPOSER_INDEX_KEY = "composer.composerData"
LEGACY_CHAT_KEY = "workbench.panel.aichat.view.aichat.chatdata"

_TOOL_NAMES = {
    "run_terminal_cmd": "bash",
    "run_terminal_command": "bash",
    "run_terminal_command_v2": "bash",
    "shell": "bash",
    "read_file": "read",
    "read_file_v2": "read",
    "edit_file": "edit",
    "edit_file_v2": "edit",
    "search_replace": "edit",
    "multi_edit": "edit",
    "delete_file": "delete",
    "grep_search": "grep",
    "ripgrep_search": "grep",
    "file_search": "glob",
    "glob_file_search": "glob",
    "list_dir": "list",
    "fetch": "web_fetch",
    "todo_write": "todo",
}
_TOOL_STATUS: dict[str, ToolStatus] = {
    "completed": "completed",
    "error": "error",
    "failed": "error",
    "cancelled": "interrupted",
    "aborted": "interrupted",
}


def tool_name(raw: str) -> str:
    """Cursor's tool name (``edit_file_v2``, ``Shell`` …) normalised (``edit``, ``bash`` …)."""
    return normalise_tool(raw, _TOOL_NAMES)


def tool_part(data: dict[str, Any], fallback_id: str) -> ToolCallPart:
    """A ``toolFormerData`` object as a tool call (with its result once it has one)."""
    raw = as_str(data.get("name")) or str(data.get("tool", "unknown"))
    params = data.get("params")
    args = json_value(params)
    if args is None:
        args = json_value(data.get("rawArgs"))
    if args is None:
        args = params if params is not None else data.get("rawArgs")
    result_text = data.get("result")
    result_value = json_value(result_text)
    status = _TOOL_STATUS.get(str(data.get("status", "")).lower())
    result = None
    if status is not None or result_text is not None:
        result = ToolResult(
            output=result_value if result_value is not None else result_text,
            is_error=status == "error",
            status=status or "pending",
        )
    call_id = as_str(data.get("toolCallId")) or as_str(data.get("modelCallId")) or fallback_id
    return ToolCallPart(call_id=call_id, tool=tool_name(raw), raw_name=raw, input=args, result=result)


def bubble_text(bubble: dict[str, Any]) -> str:
    """The text of a bubble: ``text``, ``rawText``, ``content`` or ``message``."""
    for key in ("text", "rawText", "content", "message"):
        text = as_str(bubble.get(key))
        if text:
            return text
    return ""


def bubble_workspace(bubble: dict[str, Any]) -> str | None:
    """The project folder a bubble names (``workspaceProjectDir``, ``workspaceUris[0]``)."""
    folder = as_str(bubble.get("workspaceProjectDir"))
    if folder:
        return folder
    uris = bubble.get("workspaceUris")
    return file_url_path(uris[0]) if isinstance(uris, list) and uris else None


def token_usage(bubble: dict[str, Any]) -> Usage | None:
    """``tokenCount`` as usage when non-zero (context-inclusive input, per turn)."""
    count = bubble.get("tokenCount")
    if not isinstance(count, dict):
        return None
    inp, out = as_int(count.get("inputTokens")), as_int(count.get("outputTokens"))
    return Usage(input_tokens=inp, output_tokens=out) if inp or out else None


@dataclass
class _Composer:
    """One composer being built: its header, messages, and the workspace hints."""

    header: Session
    fragments: list[Fragment] = field(default_factory=list)
    folder_hint: str | None = None


class _Parse:
    """One ``state.vscdb`` parse: rows in, sessions and fragments out."""

    def __init__(self, ref: SourceRef, doc: Document) -> None:
        self.ref = ref
        self.doc = doc
        self.spare = Diagnostics()  # records not tied to a session
        self.composers: dict[str, _Composer] = {}
        self.parents: dict[str, str] = {}
        self.folders: dict[str, str] = {}
        own_workspace: str | None = None
        for path, data in doc.sidecars.items():
            folder = workspace_folder(data)
            if folder:
                self.folders[Path(path).parent.name] = folder
                own_workspace = own_workspace or folder
        self.own_folder = own_workspace if Path(ref.path).parent.parent.name == "workspaceStorage" else None

    # -- rows -------------------------------------------------------------------

    def bubbles(self) -> dict[str, dict[str, dict[str, Any]]]:
        """``bubbleId:`` rows grouped by composer id (rows that are not JSON objects
        are counted in :attr:`spare`)."""
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for row in self.doc.tables.get("bubbles", []):
            key = str(row.get("key", ""))
            value = json_value(row.get("value"))
            if not isinstance(value, dict):
                self.spare.skip("invalid_json")
                continue
            segments = key.split(":")
            if len(segments) >= 3:
                cid, bid = segments[1], ":".join(segments[2:])
            else:
                cid, bid = str(value.get("conversationId") or ""), segments[-1]
            out.setdefault(cid, {})[bid] = value
        return out

    def run(self) -> DocumentResult:
        bubbles = self.bubbles()
        for row in self.doc.tables.get("composers", []):
            data = json_value(row.get("value"))
            cid = str(row.get("key", "")).removeprefix("composerData:")
            if not isinstance(data, dict):
                self.spare.skip("invalid_json")
                continue
            with RecordGuard([], self.spare):
                self.composer(cid, data, bubbles.pop(cid, {}))
        items = {str(r.get("key")): r.get("value") for r in self.doc.tables.get("items", [])}
        if COMPOSER_INDEX_KEY in items:
            self.composer_index(items[COMPOSER_INDEX_KEY], bubbles)
        if LEGACY_CHAT_KEY in items:
            self.legacy_chat(items[LEGACY_CHAT_KEY])
        orphans = sum(len(rows) for rows in bubbles.values())
        if orphans:
            self.spare.skip("orphan_bubble", orphans)
        return self.result()

    def composer_index(self, value: Any, bubbles: dict[str, dict[str, dict[str, Any]]]) -> None:
        index = json_value(value)
        entries = index.get("allComposers") if isinstance(index, dict) else None
        if not isinstance(entries, list):
            self.spare.skip("invalid_json" if index is None else "malformed:composer_index")
            return
        for entry in entries:
            cid = as_str(entry.get("composerId")) if isinstance(entry, dict) else None
            if cid is None or not isinstance(entry, dict):
                self.spare.skip("malformed:composer_index_entry")
            elif isinstance(entry.get("conversation") or entry.get("bubbles"), list):
                with RecordGuard([], self.spare):
                    self.composer(cid, entry, bubbles.pop(cid, {}))
            else:
                self.spare.skip("ignored:composer_index_entry")

    # -- composers --------------------------------------------------------------

    def composer(self, cid: str, data: dict[str, Any], rows: dict[str, dict[str, Any]]) -> None:
        header = Session(
            key=session_key(SLUG, cid),
            agent=SLUG,
            id=cid,
            title=as_str(data.get("name")),
            started_at=parse_time(data.get("createdAt")),
            sources=[self.ref.path],
        )
        header.diagnostics.use()
        build = _Composer(header)
        for child in (data.get("subagentComposerIds") or []) + (data.get("subComposerIds") or []):
            if isinstance(child, str):
                self.parents[child] = cid
        model = as_str((data.get("modelConfig") or {}).get("modelName"))
        default_model = None if model in (None, "default") else model
        headers = data.get("fullConversationHeadersOnly")
        inline = data.get("conversation") or data.get("bubbles")
        ordered: list[tuple[dict[str, Any], str]] = []
        if not headers and isinstance(inline, list):
            ordered = [(b, str(b.get("bubbleId") or "")) for b in inline if isinstance(b, dict)]
            if len(ordered) < len(inline):
                header.diagnostics.skip("not_an_object", len(inline) - len(ordered))
        elif isinstance(headers, list):
            for entry in headers:
                bid = str(entry.get("bubbleId", "")) if isinstance(entry, dict) else ""
                found = rows.pop(bid, None)
                if found is not None:
                    ordered.append((found, bid))
        if rows:
            header.diagnostics.skip("orphan_bubble", len(rows))
        for n, (bubble, bid) in enumerate(ordered):
            with RecordGuard(build.fragments, header.diagnostics):
                build.fragments.append((cid, self.message(build, bubble, bid or f"{cid}@{n}", default_model)))
        identifier = data.get("workspaceIdentifier")
        if isinstance(identifier, dict):
            uri = identifier.get("uri")
            header.cwd = self.folders.get(str(identifier.get("id"))) or (
                as_str(uri.get("fsPath")) if isinstance(uri, dict) else None
            )
        header.cwd = header.cwd or build.folder_hint or self.own_folder
        self.composers[cid] = build

    def message(
        self, build: _Composer, bubble: dict[str, Any], bid: str, default_model: str | None
    ) -> Message:
        when = parse_time(bubble.get("createdAt")) or parse_time(bubble.get("timestamp"))
        if when is None and isinstance(bubble.get("timingInfo"), dict):
            when = parse_time(bubble["timingInfo"].get("clientRpcSendTime"))
        build.folder_hint = build.folder_hint or bubble_workspace(bubble)
        kind = bubble.get("type")
        if kind not in (1, 2):
            build.header.diagnostics.unknown(f"bubble_type:{kind}")
            raw: list[Part] = [UnknownPart(raw=bubble)]
            return Message(id=bid, role="system", timestamp=when, parts=raw, flags=["unknown"])
        build.header.diagnostics.use()
        parts: list[Part] = []
        text = bubble_text(bubble)
        if text:
            parts.append(TextPart(text=text))
        tool = bubble.get("toolFormerData")
        if isinstance(tool, dict):
            parts.append(tool_part(tool, f"{bid}#tool"))
        message = Message(id=bid, role="user" if kind == 1 else "assistant", timestamp=when, parts=parts)
        if kind == 2:
            info = bubble.get("modelInfo")
            message.model = (
                as_str(info.get("modelName")) if isinstance(info, dict) else None
            ) or default_model
            message.usage = token_usage(bubble)
            if message.usage is not None:
                message.flags.append("usage_context_inclusive")
        return message

    def legacy_chat(self, value: Any) -> None:
        chat = json_value(value)
        tabs = chat.get("tabs") if isinstance(chat, dict) else None
        if not isinstance(tabs, list):
            self.spare.skip("invalid_json" if chat is None else "malformed:chatdata")
            return
        for tab in tabs:
            tid = as_str(tab.get("tabId")) if isinstance(tab, dict) else None
            if tid is None or not isinstance(tab, dict):
                self.spare.skip("malformed:chat_tab")
                continue
            header = Session(
                key=session_key(SLUG, tid),
                agent=SLUG,
                id=tid,
                title=as_str(tab.get("chatTitle")),
                cwd=self.own_folder,
                sources=[self.ref.path],
            )
            header.diagnostics.use()
            build = _Composer(header)
            bubbles = tab.get("bubbles")
            for n, bubble in enumerate(bubbles if isinstance(bubbles, list) else []):
                if not isinstance(bubble, dict) or bubble.get("type") not in ("user", "ai"):
                    header.diagnostics.skip("malformed:chat_bubble")
                    continue
                header.diagnostics.use()
                build.fragments.append(
                    (
                        tid,
                        Message(
                            id=as_str(bubble.get("id")) or f"{tid}@{n}",
                            role="user" if bubble["type"] == "user" else "assistant",
                            model=as_str(bubble.get("modelType")) if bubble["type"] == "ai" else None,
                            parts=[TextPart(text=bubble_text(bubble))] if bubble_text(bubble) else [],
                        ),
                    ),
                )
            header.ended_at = parse_time(tab.get("lastSendTime"))
            self.composers[tid] = build

    # -- output -----------------------------------------------------------------

    def result(self) -> DocumentResult:
        headers: list[Session] = []
        fragments: list[Fragment] = []
        for cid, build in self.composers.items():
            parent = self.parents.get(cid)
            if parent is not None:
                build.header.parent_key = session_key(SLUG, parent)
                build.header.kind = "subagent"
            headers.append(build.header)
            fragments.extend(build.fragments)
        if headers:
            headers[0].diagnostics.merge(self.spare)
        return DocumentResult(headers=headers, fragments=fragments)


class CursorAdapter(DocumentAdapter):
    """Cursor IDE: composers and chats in ``state.vscdb`` (global and per workspace)."""

    slug = SLUG
    display_name = "Cursor"
    parser_version = 3
    env_vars = ("CURSOR_USER_DIR", "XDG_CONFIG_HOME", "APPDATA")
    source_format = "sqlite"
    sqlite_queries: ClassVar[Mapping[str, tuple[str, tuple[Any, ...]]]] = {
        "composers": (
            "SELECT key, value FROM cursorDiskKV WHERE key >= 'composerData:' AND key < 'composerData;'",
            (),
        ),
        "bubbles": ("SELECT key, value FROM cursorDiskKV WHERE key >= 'bubbleId:' AND key < 'bubbleId;'", ()),
        "items": (
            "SELECT key, value FROM ItemTable WHERE key IN (?, ?)",
            (COMPOSER_INDEX_KEY, LEGACY_CHAT_KEY),
        ),
    }

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        if env.get("CURSOR_USER_DIR"):
            return [Path(env["CURSOR_USER_DIR"])]
        return vscode_user_dirs(env, home, ["Cursor"])

    def discover(self, root: Path) -> Iterator[SourceRef]:
        dbs = vscode_state_dbs(root)
        workspaces = tuple(str(meta) for _, meta in dbs if meta is not None)
        for db, meta in dbs:
            if db.parent.name == "globalStorage":
                yield SourceRef(agent=SLUG, path=str(db), sidecars=workspaces)
            else:
                yield SourceRef(agent=SLUG, path=str(db), sidecars=(str(meta),) if meta else ())

    def sniff(self, name: str, head: bytes) -> float:
        if not head.startswith(b"SQLite format 3\x00"):
            return 0.0
        if b"cursorDiskKV" in head:
            return 0.9
        return 0.2 if name == "state.vscdb" else 0.0

    def parse_document(self, ref: SourceRef, doc: Document) -> DocumentResult:
        return _Parse(ref, doc).run()
