"""Cline, Roo Code and Kilo Code tasks, and Cline SDK/CLI sessions (JSON documents
rewritten in place).

Spec (``shared/formats.md`` §11, ``shared/cost.md`` §5; cline/cline ``@21cb8d2525bc``,
RooCodeInc/Roo-Code ``@cb836567180a``):

Locations
    Extension tasks: ``<VS Code user dir>/globalStorage/<extension id>/tasks/<taskId>/``
    for every VS Code-family editor (VS Code, Insiders, VSCodium, Cursor; Linux, macOS,
    Windows; ``.vscode-server``/``.cursor-server`` remotes; ``$VSCODE_PORTABLE``).
    Extension ids: Cline ``saoudrizwan.claude-dev``, Roo Code ``rooveterinaryinc.roo-cline``,
    Kilo Code ``kilocode.kilo-code``.  Cline's own file-backed store (CLI, JetBrains,
    newer builds) keeps the same task folders and the SDK sessions under
    ``$CLINE_DATA_DIR`` (default ``$CLINE_DIR/data``, ``~/.cline/data``):
    ``tasks/<taskId>/`` and ``sessions/<sessionId>/``.

Task folder (source: ``api_conversation_history.json``; sidecars read with it)
    ``api_conversation_history.json``: Anthropic ``MessageParam[]`` ``{role, content}``
    (content a string or ``text|image|tool_use|tool_result|thinking`` blocks); newer
    entries add ``ts`` (epoch ms) and ``modelInfo{modelId, providerId}``; Roo adds
    ``{type:"reasoning"}`` blocks and ``isSummary`` (condensed history → flag
    ``compaction_summary``).  ``<environment_details>`` blocks Cline appends to user
    turns are kept as a separate ``meta`` message.
    ``ui_messages.json``: ``ClineMessage[]`` ``{ts, type:"ask"|"say", say?, text?}``.
    Usage rows: ``say:"api_req_started"`` whose ``text`` is a JSON string
    ``{request, tokensIn, tokensOut, cacheWrites, cacheReads, cost, cancelReason?}`` — one
    per API request, ``tokensIn`` exclusive of cache (Anthropic semantics),
    ``cacheWrites`` counted as 5-minute writes, ``cost`` in USD (Cline's own pricing,
    ``recorded``); ``say:"deleted_api_reqs"`` (same JSON) sums the requests removed by a
    checkpoint restore; ``say:"subagent_usage"`` (same fields, cost.md §5) the requests of
    Cline's in-task subagents.  Every other UI row repeats the transcript and is skipped
    (``ignored:ui_message``); when the last one is ``completion_result`` the task is
    ``done``; an ``ask`` row last is a wait on the user (:data:`ASK_STATUS`: a question
    or an approval → ``needs_you``, a failed request → ``errored``).
    ``task_metadata.json``: ``model_usage[{ts, model_id, model_provider_id, mode}]`` — the
    model of each assistant message is the last entry at or before its time.
    ``history_item.json`` (Roo, Kilo): ``HistoryItem{id, parentTaskId?, rootTaskId?,
    workspace?, task, ts, status?}`` → ``cwd``, title, ``status:"completed"`` → ``done``,
    and the parent task (``kind="subagent"``; the spawning ``new_task`` call is found
    by :func:`agentlog.rules.spawning_call`: its ``input.message`` is the child's first
    prompt inside ``<task>`` tags).

    Pairing (there are no ids linking the files): the *n*-th usage row belongs to the
    *n*-th assistant message of the API history (Cline appends one assistant entry per
    request, also for interrupted ones: ``[Response interrupted …]``).  Its ``ts`` dates
    the message when the API entry has none; ``cancelReason`` flags it ``interrupted``.
    Rows left over, ``deleted_api_reqs`` and ``subagent_usage`` rows become hidden usage
    carriers (a ``system`` message flagged ``meta`` + ``synthetic``) so no recorded token
    is lost; each takes its model from ``task_metadata.json`` ``model_usage`` at or
    before its time, so it is priced.  ``say:"user_feedback"`` rows (every prompt after
    the first, ``apps/vscode/src/sdk/message-translator.ts``) whose text the API history
    does not hold become user messages.

SDK session (source: ``sessions/<id>/<id>.messages.json``; sidecar ``<id>.json``)
    Messages file ``{version, sessionId, messages:[{id, role, ts, content, modelInfo{id,
    provider}, metrics{inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens,
    cost}, metadata?}]}``.  ``inputTokens`` is **inclusive** of cache reads and writes
    (cost.md §5; in the fixture ``inputTokens ≥ cacheReadTokens`` on every turn): uncached
    input = ``inputTokens − cacheReadTokens − cacheWriteTokens``.  ``metadata.kind ==
    "compaction"`` on a user message marks a compaction (a ``<SYSTEM_NOTICE>`` summary
    block is inserted into it): a ``system`` message with a compaction part precedes it.
    ``<SYSTEM_NOTICE>`` blocks are kept as a separate ``meta`` message.
    Manifest ``{session_id, started_at, ended_at, status, model, cwd, metadata{title,
    fork{forkedFromSessionId}}}`` → header; ``status:"completed"`` → ``done``; a fork links
    to the session it was forked from (``kind="fork"``).

Tool names are normalised (``execute_command``/``run_commands`` → ``bash``,
``read_file``/``read_files`` → ``read``, ``use_mcp_tool`` → ``mcp__<server>__<tool>`` …).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path, PurePath
from typing import Any, ClassVar, Literal

from agentlog import probe
from agentlog.adapters._common import vscode_global_storage
from agentlog.adapters._content import block_text, content_parts, tool_output, unknown_message
from agentlog.adapters._json import json_object, json_value, read_document
from agentlog.adapters._tools import normalise_tool
from agentlog.adapters._values import as_dict, as_int, as_str, parse_time
from agentlog.adapters.base import Document, DocumentAdapter, DocumentParser, DocumentResult, SourceRef
from agentlog.model import (
    CompactionPart,
    Message,
    Part,
    ReasoningPart,
    Session,
    SessionStatus,
    TextPart,
    Usage,
)
from agentlog.readers import walk_files
from agentlog.rules import session_key

API_HISTORY = "api_conversation_history.json"
UI_MESSAGES = "ui_messages.json"
TASK_METADATA = "task_metadata.json"
HISTORY_ITEM = "history_item.json"
SDK_SUFFIX = ".messages.json"
EXTENSION_IDS = ("saoudrizwan.claude-dev", "rooveterinaryinc.roo-cline", "kilocode.kilo-code")
"""VS Code extension ids of Cline, Roo Code and Kilo Code (their ``globalStorage`` folders)."""

TOOL_NAMES = {
    "execute_command": "bash",
    "run_commands": "bash",
    "read_file": "read",
    "read_files": "read",
    "write_to_file": "write",
    "replace_in_file": "edit",
    "apply_diff": "edit",
    "apply_patch": "edit",
    "insert_content": "edit",
    "search_and_replace": "edit",
    "editor": "edit",
    "search_files": "grep",
    "search_codebase": "grep",
    "list_files": "list",
    "web_fetch": "web_fetch",
    "fetch_web_content": "web_fetch",
    "web_search": "web_search",
    "new_task": "task",
    "update_todo_list": "todo",
    "focus_chain": "todo",
}
"""Cline/Roo/Kilo tool names → agentlog's normalised names (others: snake_case)."""

_WRAPPER = re.compile(r"^\s*<(environment_details|SYSTEM_NOTICE)>")
_TASK = re.compile(r"<task>\s*(.*?)\s*</task>", re.S)


def tool_name(raw: str, tool_input: Any) -> str:
    """Normalised name of tool ``raw``; ``use_mcp_tool`` becomes ``mcp__<server>__<tool>``."""
    if raw == "use_mcp_tool" and isinstance(tool_input, dict):
        server, tool = as_str(tool_input.get("server_name")), as_str(tool_input.get("tool_name"))
        if server and tool:
            return f"mcp__{server}__{tool}"
    return normalise_tool(raw, TOOL_NAMES)


def _usage(info: dict[str, Any], inclusive: bool) -> Usage:
    """Exclusive buckets from Cline's ``{tokensIn, tokensOut, cacheWrites, cacheReads, cost}``
    (exclusive) or the SDK's ``{inputTokens, outputTokens, cacheReadTokens,
    cacheWriteTokens, cost}`` (``inclusive``: input contains both cache buckets)."""
    if inclusive:
        read, write = as_int(info.get("cacheReadTokens")), as_int(info.get("cacheWriteTokens"))
        tokens_in = max(as_int(info.get("inputTokens")) - read - write, 0)
        tokens_out = as_int(info.get("outputTokens"))
    else:
        read, write = as_int(info.get("cacheReads")), as_int(info.get("cacheWrites"))
        tokens_in, tokens_out = as_int(info.get("tokensIn")), as_int(info.get("tokensOut"))
    cost = info.get("cost")
    recorded = isinstance(cost, int | float) and not isinstance(cost, bool)
    return Usage(
        input_tokens=tokens_in,
        cache_read_tokens=read,
        cache_write_5m_tokens=write,
        output_tokens=tokens_out,
        cost_usd=float(cost) if recorded and cost is not None else None,
        cost_source="recorded" if recorded else None,
    )


ASK_STATUS: dict[str, SessionStatus] = {
    "followup": "needs_you",  # a question to the user
    "tool": "needs_you",  # approve a file read/edit
    "command": "needs_you",  # approve a command
    "use_mcp_server": "needs_you",
    "browser_action_launch": "needs_you",
    "plan_mode_respond": "needs_you",
    "api_req_failed": "errored",
    "mistake_limit_reached": "errored",
    "resume_task": "interrupted",
    "resume_completed_task": "done",
}
"""The status a task whose ``ui_messages.json`` ends with an ``ask`` row of this kind
is in: Cline waits on the user's answer (cline/cline ``src/shared/ExtensionMessage.ts``
``ClineAsk``; agentlog.live.status)."""

USAGE_ROWS = {
    "api_req_started": "usage of an API request",
    "deleted_api_reqs": "usage of deleted API requests",
    "subagent_usage": "usage of subagents",
}
"""``say`` values of the ``ui_messages.json`` rows that carry usage → carrier text."""


class _UsageRow:
    """One usage row (see :data:`USAGE_ROWS`) of ``ui_messages.json``."""

    __slots__ = ("interrupted", "kind", "timestamp", "usage")

    def __init__(self, row: dict[str, Any], info: dict[str, Any]) -> None:
        self.timestamp = parse_time(row.get("ts"))
        self.usage = _usage(info, inclusive=False)
        self.interrupted = bool(as_str(info.get("cancelReason")))
        self.kind = str(row.get("say"))


def _is_request(entry: Any) -> bool:
    """Whether an API history entry is an assistant turn, which has its
    ``api_req_started`` row (a condensed summary has none)."""
    return isinstance(entry, dict) and entry.get("role") == "assistant" and entry.get("isSummary") is not True


class _TaskParse(DocumentParser):
    """Parses one task folder or SDK session into a header and fragments; each API
    history entry and each ``ui_messages.json`` row is one record."""

    def __init__(self, slug: str, ref: SourceRef, doc: Document) -> None:
        super().__init__(ref, doc)
        self.slug = slug
        self.sidecars = {PurePath(path).name: data for path, data in doc.sidecars.items()}
        self.data = doc.data
        name = PurePath(ref.path).name
        self.sdk = name.endswith(SDK_SUFFIX)
        sid = name[: -len(SDK_SUFFIX)] if self.sdk else PurePath(ref.path).parent.name
        self.header = Session(key=session_key(slug, sid), agent=slug, id=sid, sources=[ref.path])
        self.models: list[tuple[datetime | None, str]] = []
        self.title: str | None = None
        self.feedback: list[tuple[datetime | None, str]] = []
        """``user_feedback`` rows of ``ui_messages.json``: ``(time, text)``."""

    def parse(self) -> None:
        history = read_document(self.data, self.diagnostics)
        if history is None:
            return
        if isinstance(history, dict) and self.sdk:
            self._manifest()
            history = history.get("messages")
        if not isinstance(history, list):
            self.diagnostics.skip("not_a_message_list")
        elif self.sdk:
            self._sdk(history)
        else:
            self._task(history)

    def headers(self) -> list[Session]:
        self.header.title = self.header.title or self.title
        self.header.diagnostics = self.diagnostics
        return [self.header]

    # -- sidecars -----------------------------------------------------------

    def _sidecar(self, name: str) -> Any:
        data = self.sidecars.get(name)
        if data is None:
            return None
        value = json_value(data)
        if value is None:
            self.diagnostics.errors.append(f"{name}: invalid JSON")
        return value

    def _manifest(self) -> None:
        manifest = self._sidecar(f"{self.header.id}.json")
        if not isinstance(manifest, dict):
            return
        meta = as_dict(manifest.get("metadata"))
        header = self.header
        header.cwd = as_str(manifest.get("cwd")) or as_str(manifest.get("workspace_root"))
        header.started_at = parse_time(manifest.get("started_at"))
        header.ended_at = parse_time(manifest.get("ended_at"))
        header.title = as_str(meta.get("title"))
        if manifest.get("status") == "completed":
            header.status, header.status_evidence = "done", "manifest status: completed"
        fork = as_dict(meta.get("fork"))
        parent = as_str(fork.get("forkedFromSessionId"))
        if parent:
            header.kind, header.parent_key = "fork", session_key(self.slug, parent)

    def _task_sidecars(self) -> list[_UsageRow]:
        meta = self._sidecar(TASK_METADATA)
        entries = meta.get("model_usage") if isinstance(meta, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and as_str(entry.get("model_id")):
                self.models.append((parse_time(entry.get("ts")), entry["model_id"]))
        item = self._sidecar(HISTORY_ITEM)
        if isinstance(item, dict):
            self.header.cwd = as_str(item.get("workspace"))
            self.header.title = as_str(item.get("task"))
            if item.get("status") == "completed":
                self.header.status, self.header.status_evidence = (
                    "done",
                    "history_item.json status: completed",
                )
            parent = as_str(item.get("parentTaskId"))
            if parent:
                self.header.kind, self.header.parent_key = "subagent", session_key(self.slug, parent)
        rows: list[_UsageRow] = []
        data = self.sidecars.get(UI_MESSAGES)
        ui = (
            read_document(data, self.diagnostics) if data is not None else None
        )  # a bad row costs only itself
        last = None
        for row in ui if isinstance(ui, list) else []:
            with self.guard():
                if isinstance(row, dict) and row.get("say") == "user_feedback" and as_str(row.get("text")):
                    self.feedback.append((parse_time(row.get("ts")), row["text"]))
                    last = "user_feedback"
                    self.diagnostics.use()
                    continue
                if not isinstance(row, dict) or row.get("say") not in USAGE_ROWS:
                    self.diagnostics.skip("ignored:ui_message")
                    last = row.get("say") or row.get("ask") if isinstance(row, dict) else None
                    continue
                text = row.get("text")
                info = json_object(text) if isinstance(text, str) else None
                if info is None:
                    self.diagnostics.skip("malformed:api_req_info")
                    continue
                rows.append(_UsageRow(row, info))
                self.diagnostics.use()
                last = row.get("say")
        if last == "completion_result" and self.header.status_evidence is None:
            self.header.status = "done"
            self.header.status_evidence = "ui_messages.json ends with completion_result"
        elif last in ASK_STATUS and self.header.status_evidence is None:
            self.header.status = ASK_STATUS[last]
            self.header.status_evidence = f"ui_messages.json ends with ask:{last}"
        return rows

    def _model_at(self, when: datetime | None) -> str | None:
        """The model in use at ``when`` per ``task_metadata.json`` (the only one if undated)."""
        if when is not None:
            dated = [model for ts, model in self.models if ts is not None and ts <= when]
            if dated:
                return dated[-1]
        distinct = {model for _, model in self.models}
        return distinct.pop() if len(distinct) == 1 else None

    # -- messages -----------------------------------------------------------

    def _task(self, history: list[Any]) -> None:
        rows = self._task_sidecars()
        requests = [r for r in rows if r.kind == "api_req_started"]
        at = 0  # the next request's usage row
        lost: list[_UsageRow] = []  # rows of entries that cost themselves: kept as carriers
        for index, entry in enumerate(history):
            first = at
            guard = self.guard()
            with guard:
                message = self._entry(entry, index)
                if message is None or message.role != "assistant" or "compaction_summary" in message.flags:
                    continue  # a condensed summary is not an ``api_req_started`` request
                row = requests[at] if at < len(requests) else None
                at += 1
                if row is not None:
                    message.usage = row.usage
                    message.timestamp = message.timestamp or row.timestamp
                    if row.interrupted:
                        message.flags.append("interrupted")
                info = as_dict(entry.get("modelInfo"))
                message.model = as_str(info.get("modelId")) or self._model_at(message.timestamp)
            if guard.rejected:  # keep the pairing of the entries after it
                if at == first and _is_request(entry):
                    at += 1
                lost.extend(requests[first:at])
        leftovers = [*requests[at:], *lost, *(r for r in rows if r.kind != "api_req_started")]
        for n, row in enumerate(leftovers):
            self._emit(
                Message(
                    id=f"{self.header.id}@usage{n}",
                    role="system",
                    timestamp=row.timestamp,
                    model=self._model_at(row.timestamp),
                    parts=[TextPart(text=USAGE_ROWS[row.kind])],
                    usage=row.usage,
                    flags=["meta", "synthetic"],
                )
            )
        self._feedback_prompts()

    def _feedback_prompts(self) -> None:
        """The ``user_feedback`` rows whose text the API history does not hold (a
        checkpoint restore or a lost history file): user messages of their own.
        Cline writes every prompt after the first as ``say:"user_feedback"``
        (``apps/vscode/src/sdk/message-translator.ts``) and sends it to the model
        inside the next user turn (often a ``<feedback>`` in a tool result)."""
        history = self.data.decode("utf-8", "replace")
        for n, (when, text) in enumerate(self.feedback):
            if json.dumps(text, ensure_ascii=False)[1:-1] in history:
                continue
            self._emit(
                Message(
                    id=f"{self.header.id}@feedback{n}",
                    role="user",
                    timestamp=when,
                    parts=[TextPart(text=text)],
                )
            )
            self.title = self.title or text.strip()

    def _sdk(self, history: list[Any]) -> None:
        for index, entry in enumerate(history):
            with self.guard():
                message = self._entry(entry, index)
                if message is None or message.role != "assistant":
                    continue
                info = as_dict(entry.get("modelInfo"))
                message.model = as_str(info.get("id"))
                metrics = entry.get("metrics")
                if isinstance(metrics, dict):
                    message.usage = _usage(metrics, inclusive=True)

    def _entry(self, entry: Any, index: int) -> Message | None:
        """Emit one API-history entry; returns the emitted user/assistant message."""
        role = entry.get("role") if isinstance(entry, dict) else None
        if role not in ("user", "assistant"):
            if isinstance(entry, dict) and entry.get("type") == "reasoning":
                self._reasoning(entry, index)
            else:
                self._unknown(entry, index)
            return None
        assert isinstance(entry, dict)
        mid = as_str(entry.get("id")) or f"{self.header.id}@{index}"
        when = parse_time(entry.get("ts"))
        parts, results = content_parts(entry.get("content"), tool_name)
        for block in results:
            self.emit(self.header.id, tool_output(block, when))
        self.diagnostics.use()
        meta = as_dict(entry.get("metadata"))
        if meta.get("kind") == "compaction":
            self._compaction(mid, when, parts, meta)
        visible = [p for p in parts if not (isinstance(p, TextPart) and _WRAPPER.match(p.text))]
        wrappers = [p for p in parts if p not in visible]
        message = None
        if visible or (role == "assistant" and not results):
            message = Message(id=mid, role=role, timestamp=when, parts=visible)
            if entry.get("isSummary") is True:
                message.flags.append("compaction_summary")
            elif role == "user" and self.title is None:
                task = _TASK.search(message.text)
                self.title = (task.group(1) if task else message.text).strip() or None
            self._emit(message)
        if wrappers:
            self._emit(
                Message(id=f"{mid}#context", role=role, timestamp=when, parts=wrappers, flags=["meta"])
            )
        return message

    def _compaction(self, mid: str, when: datetime | None, parts: list[Part], meta: dict[str, Any]) -> None:
        notice = "\n\n".join(p.text for p in parts if isinstance(p, TextPart) and _WRAPPER.match(p.text))
        reason = str(meta.get("reason") or "")
        trigger = "manual" if reason.startswith("manual") else "auto" if reason else ""
        self._emit(
            Message(
                id=f"{mid}#compaction",
                role="system",
                timestamp=when,
                parts=[CompactionPart(summary=notice, trigger=trigger)],
            )
        )

    def _reasoning(self, entry: dict[str, Any], index: int) -> None:
        """A Roo ``{type:"reasoning", text?, summary?, encrypted_content?}`` history item."""
        text = as_str(entry.get("text")) or block_text(entry.get("summary"))
        self.diagnostics.use()
        part = ReasoningPart(text=text, encrypted=not text and bool(entry.get("encrypted_content")))
        self._emit(
            Message(
                id=as_str(entry.get("id")) or f"{self.header.id}@{index}",
                role="assistant",
                timestamp=parse_time(entry.get("ts")),
                parts=[part],
            )
        )

    def _unknown(self, entry: Any, index: int) -> None:
        kind = entry.get("type") if isinstance(entry, dict) else None
        self.diagnostics.unknown(str(kind or type(entry).__name__))
        self._emit(unknown_message(f"{self.header.id}@{index}", entry))

    def _emit(self, message: Message) -> None:
        self.emit(self.header.id, message)


class ClineFamilyAdapter(DocumentAdapter):
    """Cline-style task folders of one VS Code extension (subclasses set the slug and id)."""

    source_format: ClassVar[Literal["json", "sqlite"]] = "json"
    parser_version = 5
    extension_id: ClassVar[str]
    env_vars: ClassVar[tuple[str, ...]] = ("XDG_CONFIG_HOME", "APPDATA", "VSCODE_PORTABLE")

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [storage / self.extension_id / "tasks" for storage in vscode_global_storage(env, home)]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        others = set(EXTENSION_IDS) - {self.extension_id}
        for path in walk_files(root, API_HISTORY):
            if path.name != API_HISTORY or others & set(path.parts):
                continue  # another extension's task: its own adapter reads it
            sidecars = probe.regular_files(
                path.with_name(n) for n in (UI_MESSAGES, TASK_METADATA, HISTORY_ITEM)
            )
            yield SourceRef(agent=self.slug, path=str(path), sidecars=sidecars)

    def sniff(self, name: str, head: bytes) -> float:
        if name != API_HISTORY:
            return 0.0
        return 0.9 if b'"role"' in head and b'"content"' in head else 0.5

    def parse_document(self, ref: SourceRef, doc: Document) -> DocumentResult:
        return _TaskParse(self.slug, ref, doc).result()


class ClineAdapter(ClineFamilyAdapter):
    """Cline (VS Code extension ``saoudrizwan.claude-dev``, CLI and SDK sessions)."""

    slug = "cline"
    display_name = "Cline"
    extension_id = EXTENSION_IDS[0]
    env_vars = ("CLINE_DATA_DIR", "CLINE_DIR", *ClineFamilyAdapter.env_vars)

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        data = env.get("CLINE_DATA_DIR") or Path(env.get("CLINE_DIR") or home / ".cline") / "data"
        return [Path(data) / "tasks", Path(data) / "sessions", *super().default_roots(env, home)]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        yield from super().discover(root)
        for path in walk_files(root, SDK_SUFFIX):
            manifest = path.with_name(path.name[: -len(SDK_SUFFIX)] + ".json")
            sidecars = probe.regular_files([manifest])
            yield SourceRef(agent=self.slug, path=str(path), sidecars=sidecars)

    def sniff(self, name: str, head: bytes) -> float:
        if name.endswith(SDK_SUFFIX) and b'"sessionId"' in head and b'"messages"' in head:
            return 0.9
        return super().sniff(name, head)


class RooCodeAdapter(ClineFamilyAdapter):
    """Roo Code (VS Code extension ``rooveterinaryinc.roo-cline``), a Cline fork."""

    slug = "roo_code"
    display_name = "Roo Code"
    extension_id = EXTENSION_IDS[1]


class KiloCodeAdapter(ClineFamilyAdapter):
    """Kilo Code (VS Code extension ``kilocode.kilo-code``), a Roo Code fork."""

    slug = "kilo_code"
    display_name = "Kilo Code"
    extension_id = EXTENSION_IDS[2]
