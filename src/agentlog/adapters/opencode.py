"""OpenCode (sst/opencode, now anomalyco/opencode): ``opencode.db`` and the legacy JSON tree.

Spec (``shared/formats.md`` §3 and §14.5, ``shared/cost.md`` §3; schema from
anomalyco/opencode ``packages/opencode/src/session/session.sql.ts@063e8306d989`` and
``message-v2.ts@007a9409bafe``):

Locations
    ``$OPENCODE_DATA_DIR`` (ccusage's override, comma-separated) or
    ``${XDG_DATA_HOME:-~/.local/share}/opencode``.  Since v1.2 the store is the SQLite
    database ``opencode.db`` (also ``opencode-*.db``); older versions write
    ``storage/session/<projectID>/<sessionID>.json``,
    ``storage/message/<sessionID>/<messageID>.json`` and
    ``storage/part/<messageID>/<partID>.json`` (the oldest layout keeps parts flat in
    ``storage/part/`` with ``messageID`` inside).

Why a :class:`~agentlog.adapters.base.DocumentAdapter`
    The database is rewritten in place, and the JSON files are rewritten as a message
    streams: neither is append-only.  A part file cannot be attributed to a session
    without reading it, so the JSON tree is **one** source (path = its first file, a
    session file when there is one; every other file a sidecar).  When a database
    exists, the JSON files become sidecars of the ``opencode.db`` source instead, and
    the two are merged by id with
    the **database winning** (sessions, messages and parts alike; a migrated install
    keeps both copies — ccusage ``adapter/opencode/loader.rs``
    ``prefers_database_messages_over_duplicate_json_files``).

Tables (columns discovered from the rows; none beyond the ids is required)
    ``session(id, parent_id, title, directory, version, time_created, time_updated …)``,
    ``message(id, session_id, time_created, data)``,
    ``part(id, message_id, session_id, data)``.  ``data`` is the JSON of the message /
    part without its ids.  Messages are ordered by ``(time_created, id)``, parts by id
    (JSON parts by file name, which is the part id).

Messages and parts
    ``role`` ``user``/``assistant``.  Parts: ``text`` (``ignored`` ones skipped),
    ``reasoning``, ``tool{callID, tool, state{status, input, output|error, metadata,
    time{start, end}}}`` (``completed`` / legacy ``success`` → completed, with
    ``is_error`` when ``metadata.exit`` is non-zero; ``error`` → error;
    ``pending``/``running`` → no result yet, or ``interrupted`` when the message was
    aborted), ``file{mime, filename, url}``, ``compaction{auto}`` (the user message
    that asks for a compaction; the next assistant message has ``summary: true`` and is
    flagged ``compaction_summary``), ``subtask``/``agent`` kept raw.  ``step-start``,
    ``step-finish``, ``snapshot``, ``patch`` and ``retry`` are bookkeeping, skipped as
    ``ignored:<type>`` (``step-finish`` is used for usage only as below).  Any other
    part type is kept raw (``unknown``).  An assistant ``error`` named
    ``MessageAbortedError`` flags the message ``interrupted``; any other error
    ``api_error``.

Usage (per assistant message)
    ``tokens{input, output, reasoning, cache{read, write}}``: ``input`` is already
    exclusive of cache (``session/index.ts`` ``getUsage``); ``reasoning`` is billed at
    the output rate and is **not** part of ``output`` — except for OpenAI models
    (provider ``openai*``/``azure*`` or a ``gpt-``/``o1``/``o3``/``o4``/``codex`` model id),
    whose ``output`` already contains it.  ``cache.write`` → the 5-minute tier.  When
    a message has no ``tokens``, its ``step-finish`` parts are summed instead — never
    both.  ``cost`` (USD, written by OpenCode) is kept with ``cost_source="recorded"``.
    The session rollup columns (``cost``, ``tokens_*``) are sums of step-finish parts
    and are not used (they would double count).

Subagents
    ``session.parent_id`` (JSON: ``parentID``) makes a ``subagent`` child; the parent's
    ``task`` tool part whose ``state.metadata.sessionId`` names the child is its
    spawning call.  Resume: ``opencode -s <id>``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec

from agentlog.adapters._json import JsonError, parse_object
from agentlog.adapters._tools import normalise_tool
from agentlog.adapters._values import as_dict, as_int, as_str, parse_time
from agentlog.adapters.base import (
    Document,
    DocumentAdapter,
    DocumentResult,
    Fragment,
    RecordGuard,
    SourceRef,
    resume_line,
)
from agentlog.model import (
    CompactionPart,
    Diagnostics,
    FilePart,
    Message,
    Part,
    ReasoningPart,
    Session,
    TextPart,
    ToolCallPart,
    ToolResult,
    UnknownPart,
    Usage,
)
from agentlog.readers import walk_files
from agentlog.rules import session_key

SLUG = "opencode"

TOOL_NAMES = {
    "bash": "bash",
    "read": "read",
    "write": "write",
    "edit": "edit",
    "multiedit": "edit",
    "patch": "edit",
    "apply_patch": "edit",
    "grep": "grep",
    "glob": "glob",
    "list": "list",
    "webfetch": "web_fetch",
    "websearch": "web_search",
    "task": "task",
    "todowrite": "todo",
    "todoread": "todo",
}
"""OpenCode tool names → agentlog's (MCP tools are ``<server>_<tool>``, kept as written)."""

BOOKKEEPING_PARTS = frozenset({"step-start", "step-finish", "snapshot", "patch", "retry"})
RAW_PARTS = frozenset({"subtask", "agent"})
_ABORTED = "MessageAbortedError"
_SQLITE_MAGIC = b"SQLite format 3\x00"
_TREE_KINDS = ("session", "message", "part")
_OPENAI_MODELS = ("gpt-", "o1", "o3", "o4", "codex")


def tool_name(raw: str) -> str:
    """Normalised name of the OpenCode tool ``raw``."""
    return TOOL_NAMES.get(raw.lower()) or normalise_tool(raw)


class _Rows(msgspec.Struct, kw_only=True):
    """Sessions and messages keyed by id, parts by ``<message id>/<part id>`` (synthetic
    trees reuse part ids across messages), from the database and/or the JSON tree."""

    sessions: dict[str, dict[str, Any]] = msgspec.field(default_factory=dict)
    messages: dict[str, dict[str, Any]] = msgspec.field(default_factory=dict)
    parts: dict[str, dict[str, Any]] = msgspec.field(default_factory=dict)
    diagnostics: Diagnostics = msgspec.field(default_factory=Diagnostics)


def _json_rows(files: Mapping[str, bytes], rows: _Rows) -> None:
    """Add the records of the JSON tree (``storage/{session,message,part}/…``)."""
    for path in sorted(files):
        p = Path(path)
        kind = p.parent.parent.name if p.parent.parent.name in _TREE_KINDS else None
        kind = kind or ("part" if p.parent.name == "part" else None)
        if kind is None or p.suffix != ".json":
            continue
        with RecordGuard([], rows.diagnostics):
            record = parse_object(files[path])
            if not isinstance(record.get("id"), str):
                rows.diagnostics.skip("no_id")
                continue
            _json_row(kind, p, record, rows)


def _json_row(kind: str, p: Path, record: dict[str, Any], rows: _Rows) -> None:
    """Add one session, message or part file of the JSON tree to ``rows``."""
    created = (record.get("time") or {}).get("created")
    if kind == "session":
        rows.sessions[record["id"]] = {
            "id": record["id"],
            "parent_id": as_str(record.get("parentID")),
            "title": record.get("title"),
            "directory": record.get("directory"),
            "version": record.get("version"),
            "time_created": created,
        }
    elif kind == "message":
        session_id = as_str(record.get("sessionID")) or p.parent.name  # not a string: the folder names it
        rows.messages[record["id"]] = {
            "id": record["id"],
            "session_id": session_id,
            "time_created": created,
            "data": record,
        }
    else:
        owner = as_str(record.get("messageID")) or (p.parent.name if p.parent.name != "part" else None)
        rows.parts[f"{owner}/{record['id']}"] = {
            "id": record["id"],
            "message_id": owner,
            "data": record,
            "order": str(p),
        }


def _db_rows(tables: Mapping[str, list[dict[str, Any]]], rows: _Rows) -> None:
    """Add the database rows, replacing JSON records with the same id."""
    for name, target in (("session", rows.sessions), ("message", rows.messages), ("part", rows.parts)):
        for row in tables.get(name, []):
            if not isinstance(row.get("id"), str):
                rows.diagnostics.skip("no_id")
                continue
            if name != "session":
                try:
                    data = parse_object(row.get("data"))
                except JsonError as exc:
                    rows.diagnostics.skip(exc.reason)
                    continue
                row = {**row, "data": data, "order": row["id"]}
            target[f"{row.get('message_id')}/{row['id']}" if name == "part" else row["id"]] = row


def openai_counts(data: Mapping[str, Any]) -> bool:
    """True when a message's ``output`` already holds its ``reasoning`` tokens: an OpenAI
    or Azure provider, or an OpenAI model family (``gpt-``, ``o1``/``o3``/``o4``, ``codex``)
    behind another provider (cost.md §3; OpenCode issue #17566)."""
    provider = str(data.get("providerID") or "").lower()
    model = str(data.get("modelID") or "").lower().rsplit("/", 1)[-1]
    return provider.startswith(("openai", "azure")) or model.startswith(_OPENAI_MODELS)


def usage_of(data: Mapping[str, Any], cost: Any = None) -> Usage | None:
    """Exclusive usage of an assistant message's (or step-finish part's) ``tokens``."""
    tokens = data.get("tokens")
    if not isinstance(tokens, dict):
        return None
    cache = as_dict(tokens.get("cache"))
    reasoning = as_int(tokens.get("reasoning"))
    output = as_int(tokens.get("output"))
    if not openai_counts(data):
        output += reasoning
    recorded = cost if isinstance(cost, int | float) and not isinstance(cost, bool) else None
    return Usage(
        input_tokens=as_int(tokens.get("input")),
        cache_read_tokens=as_int(cache.get("read")),
        cache_write_5m_tokens=as_int(cache.get("write")),
        output_tokens=output,
        reasoning_tokens=reasoning,
        cost_usd=float(recorded) if recorded is not None else None,
        cost_source="recorded" if recorded is not None else None,
    )


def _tool_part(part: dict[str, Any], aborted: bool) -> ToolCallPart:
    state = as_dict(part.get("state"))
    raw = str(part.get("tool") or "unknown")
    status = state.get("status")
    times = as_dict(state.get("time"))
    metadata = state.get("metadata")
    result = None
    if status in ("completed", "success", "error"):
        exit_code = metadata.get("exit") if isinstance(metadata, dict) else None
        failed = status == "error" or (isinstance(exit_code, int) and exit_code != 0)
        result = ToolResult(
            output=state.get("error") if status == "error" else state.get("output"),
            is_error=failed,
            status="error" if status == "error" else "completed",
            started_at=parse_time(times.get("start")),
            ended_at=parse_time(times.get("end")),
            structured=metadata,
        )
    elif aborted:
        result = ToolResult(output="[Tool execution was interrupted]", status="interrupted")
    call_id = str(part.get("callID") or part.get("id") or "")
    return ToolCallPart(
        call_id=call_id, tool=tool_name(raw), raw_name=raw, input=state.get("input"), result=result
    )


class _Converter:
    """Turns merged rows into session headers and message fragments."""

    def __init__(self, ref: SourceRef, rows: _Rows) -> None:
        self.ref = ref
        self.rows = rows
        self.headers: dict[str, Session] = {}
        self.fragments: list[Fragment] = []
        self.spawned: dict[str, str] = {}

    def run(self) -> DocumentResult:
        """Every session in the rows, its messages in order; the source's own diagnostics
        (unreadable files, orphan parts) go to the first session."""
        by_session: dict[str, list[dict[str, Any]]] = {}
        for message in self.rows.messages.values():
            by_session.setdefault(str(message.get("session_id")), []).append(message)
        by_message: dict[str, list[dict[str, Any]]] = {}
        for part in self.rows.parts.values():
            by_message.setdefault(str(part.get("message_id")), []).append(part)
        orphans = len(self.rows.parts) - sum(len(v) for k, v in by_message.items() if k in self.rows.messages)
        for sid in sorted(set(self.rows.sessions) | set(by_session)):
            header = self._header(sid)
            messages = sorted(by_session.get(sid, []), key=lambda m: (as_int(m.get("time_created")), m["id"]))
            for row in messages:
                parts = sorted(by_message.get(row["id"], []), key=lambda p: p["order"])
                with RecordGuard(self.fragments, header.diagnostics):
                    self.fragments.append((sid, self._message(header, row, parts)))
        for child in self.headers.values():
            child.parent_tool_call_id = self.spawned.get(child.id)
        headers = list(self.headers.values())
        owner = headers[0].diagnostics if headers else None
        if owner is not None:
            owner.merge(self.rows.diagnostics)
            if orphans:
                owner.skip("orphan_part", orphans)
        return DocumentResult(headers=headers, fragments=list(self.fragments))

    def _header(self, sid: str) -> Session:
        row = self.rows.sessions.get(sid, {})
        header = Session(
            key=session_key(SLUG, sid),
            agent=SLUG,
            id=sid,
            agent_version=as_str(row.get("version")),
            title=as_str(row.get("title")),
            cwd=as_str(row.get("directory")),
            started_at=parse_time(row.get("time_created")),
            sources=[self.ref.path],
        )
        if row:
            header.diagnostics.use()
        parent = as_str(row.get("parent_id"))
        if parent:
            header.parent_key = session_key(SLUG, parent)
            header.kind = "subagent"
            header.subagent_type = as_str(row.get("agent"))
        self.headers[sid] = header
        return header

    def _message(self, header: Session, row: dict[str, Any], parts: list[dict[str, Any]]) -> Message:
        data: dict[str, Any] = row["data"]
        diagnostics = header.diagnostics
        diagnostics.use()
        role: Literal["user", "assistant"] = "assistant" if data.get("role") == "assistant" else "user"
        error = data.get("error") if isinstance(data.get("error"), dict) else None
        aborted = bool(error and error.get("name") == _ABORTED)
        model = data.get("modelID") or (data.get("model") or {}).get("modelID")
        time = as_dict(data.get("time"))
        message = Message(
            id=row["id"],
            role=role,
            timestamp=parse_time(time.get("created") or row.get("time_created")),
            model=as_str(model),
        )
        steps = Usage()
        stepped = False
        for raw in parts:
            part: dict[str, Any] = raw["data"]
            kind = str(part.get("type"))
            converted = self._part(part, kind, aborted)
            if converted is not None:
                diagnostics.use()
                message.parts.append(converted)
            elif kind == "step-finish" and isinstance(part.get("tokens"), dict):
                diagnostics.use()
                steps = steps + (usage_of({**data, **part}, part.get("cost")) or Usage())
                stepped = True
            elif kind in BOOKKEEPING_PARTS or (kind == "text" and part.get("ignored")):
                diagnostics.skip(f"ignored:{kind}")
            else:
                diagnostics.unknown(kind)
                message.parts.append(UnknownPart(raw=part))
            state = part.get("state")
            metadata = state.get("metadata") if isinstance(state, dict) else None
            if kind == "tool" and isinstance(metadata, dict) and isinstance(metadata.get("sessionId"), str):
                self.spawned[metadata["sessionId"]] = str(part.get("callID") or "")
        if role == "assistant":
            message.usage = usage_of(data, data.get("cost")) or (steps if stepped else None)
        if aborted:
            message.flags.append("interrupted")
        elif error is not None:
            message.flags.append("api_error")
            message.parts.append(TextPart(text=str((error.get("data") or {}).get("message") or error)))
        if role == "assistant" and data.get("summary") is True:
            message.flags.append("compaction_summary")
        if role == "user" and not message.parts:
            title = (
                (data.get("summary") or {}).get("title") if isinstance(data.get("summary"), dict) else None
            )
            if isinstance(title, str) and title:
                message.parts.append(TextPart(text=title))  # very old sessions kept the prompt here
        return message

    @staticmethod
    def _part(part: dict[str, Any], kind: str, aborted: bool) -> Part | None:
        if kind == "text" and not part.get("ignored"):
            return TextPart(text=str(part.get("text") or ""))
        if kind == "reasoning":
            return ReasoningPart(text=str(part.get("text") or ""))
        if kind == "tool":
            return _tool_part(part, aborted)
        if kind == "file":
            return FilePart(
                media_type=str(part.get("mime") or ""),
                name=str(part.get("filename") or ""),
                ref=str(part.get("url") or ""),
            )
        if kind == "compaction":
            return CompactionPart(trigger="auto" if part.get("auto") else "manual")
        if kind in RAW_PARTS:
            return UnknownPart(raw=part)
        return None


class OpenCodeAdapter(DocumentAdapter):
    """OpenCode: ``~/.local/share/opencode/opencode.db`` plus the legacy ``storage/`` JSON tree."""

    slug = SLUG
    display_name = "OpenCode"
    parser_version = 4  # 4: a sessionID, messageID or parentID that is not a string names no session
    env_vars = ("OPENCODE_DATA_DIR", "XDG_DATA_HOME")
    source_format = "json"
    sqlite_tables = ("session", "message", "part")

    def format_of(self, ref: SourceRef) -> Literal["json", "sqlite"]:
        return "sqlite" if ref.path.endswith(".db") else "json"

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        dirs = [Path(p.strip()) for p in env.get("OPENCODE_DATA_DIR", "").split(",") if p.strip()]
        if dirs:
            return dirs
        data_home = Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME") else home / ".local" / "share"
        return [data_home / "opencode"]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        """One source per data folder under ``root``: its ``opencode.db`` (the JSON tree of
        ``<folder>/storage`` as sidecars), or, with no database, its JSON tree."""
        trees: dict[Path, list[str]] = {}
        for path in walk_files(root, ".json"):
            if path.parent.parent.name in _TREE_KINDS:
                trees.setdefault(path.parents[2], []).append(str(path))
            elif path.parent.name == "part":  # the oldest layout: parts flat in part/
                trees.setdefault(path.parents[1], []).append(str(path))
        dbs: dict[Path, list[Path]] = {}
        for path in walk_files(root, ".db"):
            if path.name == "opencode.db" or (
                path.name.startswith("opencode-") and path.name.endswith(".db")
            ):
                dbs.setdefault(path.parent, []).append(path)
        for folder, found in sorted(dbs.items()):
            found.sort(key=lambda p: (p.name != "opencode.db", p.name))
            tree = tuple(trees.pop(folder / "storage", []))
            for i, db in enumerate(found):
                yield SourceRef(agent=SLUG, path=str(db), sidecars=tree if i == 0 else ())
        for files in trees.values():
            # Session files sort first: the source's path names one when there is one.
            ordered = sorted(files, key=lambda p: (Path(p).parent.parent.name != "session", p))
            yield SourceRef(agent=SLUG, path=ordered[0], sidecars=tuple(ordered[1:]))

    def sniff(self, name: str, head: bytes) -> float:
        if head.startswith(_SQLITE_MAGIC):
            return 0.9 if name.startswith("opencode") and name.endswith(".db") else 0.0
        if b'"projectID"' in head and b'"directory"' in head:
            return 0.8
        if b'"sessionID"' in head and (b'"providerID"' in head or b'"messageID"' in head):
            return 0.7
        return 0.0

    def parse_document(self, ref: SourceRef, doc: Document) -> DocumentResult:
        rows = _Rows()
        files = dict(doc.sidecars)
        if self.format_of(ref) == "json":
            files[ref.path] = doc.data
        _json_rows(files, rows)
        _db_rows(doc.tables, rows)
        return _Converter(ref, rows).run()

    def resume_command(self, session: Session) -> str | None:
        return resume_line("opencode -s", session.id) if session.kind == "main" else None
