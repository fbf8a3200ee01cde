"""Hermes Agent (NousResearch/hermes-agent): ``state.db`` plus per-session JSONL / JSON files.

Spec (``shared/formats.md`` §14.5 and pitfall 13; schema ``SCHEMA_SQL`` in
``hermes_state_common.py@00704d087b7c``; ``divert_session_transcript_jsonl`` in
``hermes_state.py``; legacy snapshots from the jazzyalex/agent-sessions fixtures).

Locations
    ``$HERMES_HOME`` or ``~/.hermes``, and each named profile
    ``<home>/profiles/<name>/``: ``state.db`` (authoritative, WAL SQLite),
    ``sessions/<id>.jsonl`` (message dicts appended when the database refused them)
    and legacy ``sessions/session_<id>.json`` snapshots
    (``{session_id, model, platform, session_start, last_updated, cwd |
    model_config.cwd, messages[]}``).  **``request_dump_*.json``** (debug dumps of a
    failed provider request: the full prompt plus request headers — secret-bearing) are
    never listed, read or imported.

Why a :class:`~agentlog.adapters.base.DocumentAdapter`
    The database is updated in place and one conversation can span several of its rows
    and files: with a ``state.db`` present it is the source and the session files are
    its sidecars (a file whose session has messages in the database is a duplicate,
    skipped as ``duplicate:state_db``); without one, each session file is a source of
    its own, parsed whole (``.jsonl`` files are small fallbacks, not live logs).

Tables (columns discovered from the rows — older databases lack many)
    ``sessions(id, source, model, model_config (JSON; markers ``_branched_from``,
    ``_delegate_from``, ``_reset_from``), parent_session_id, started_at, ended_at
    (epoch s), end_reason, input_tokens, output_tokens, cache_read_tokens,
    cache_write_tokens, reasoning_tokens, estimated_cost_usd, actual_cost_usd,
    cost_status, cost_source, cwd, git_branch, title …)`` and ``messages(id, session_id,
    role, content, tool_call_id, tool_calls (JSON), tool_name, timestamp, finish_reason,
    reasoning | reasoning_content, display_kind …)``.

Session rows → sessions
    Context compression ends a row with ``end_reason='compression'`` and continues in
    a child row (``parent_session_id``): the chain is **one** conversation, stitched
    under the first row's id.  Other children are separate sessions: ``/branch``
    children (``_branched_from`` or a parent ended ``branched``) are ``fork``s,
    delegated runs (``source='tool'`` or ``_delegate_from``) are ``subagent``s, and
    resets (``_reset_from``) are ``main`` sessions of their own.

Messages
    ``role`` user / assistant / system / tool; ``tool_calls[{id, function{name,
    arguments (JSON string)}}]``; a ``tool`` row is the result of ``tool_call_id``
    (``finish_reason='error'`` → an error); ``reasoning``/``reasoning_content`` → a
    reasoning part; ``display_kind='hidden'`` (model-facing scaffolding) → ``meta``;
    ``session_meta`` rows are skipped as ``ignored:session_meta``.  Title: ``sessions.title``,
    else the first prompt (snapshots and JSONL files have none).  Ids:
    ``<session row>@<message id>`` (database), ``<session>@f<n>`` (files).

Usage and cost
    Tokens are **session-row counters** (no per-request rows): each row's counters go
    on its last assistant message (or a ``meta`` system message when it has none), so
    a compression chain sums each row once.  ``input_tokens`` is exclusive of cache
    (``CanonicalUsage.prompt_tokens = input + cache_read + cache_write``); cache write
    → the 5-minute tier; ``reasoning_tokens`` is taken as a subset of output
    (OpenAI-style completion counts — **unverified**).  Cost: ``actual_cost_usd``
    (``recorded``), else ``estimated_cost_usd`` (``estimated``); a ``$0`` with an empty
    or ``none`` ``cost_source`` is unknown, not free (agentsview
    ``hermesHasCostSource``).

Resume: ``hermes --resume <id>`` (Hermes docs ``user-guide/cli.md``) for main sessions and
forks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from agentlog import probe
from agentlog.adapters._content import block_text
from agentlog.adapters._json import json_object, parse_json, read_document
from agentlog.adapters._tools import function_call, normalise_tool
from agentlog.adapters._values import as_dict, as_int, as_str, parse_time
from agentlog.adapters.base import (
    Document,
    DocumentAdapter,
    DocumentResult,
    RecordGuard,
    SourceRef,
    ToolOutput,
    resume_line,
)
from agentlog.model import (
    CostSource,
    Diagnostics,
    Message,
    ReasoningPart,
    Session,
    SessionKind,
    TextPart,
    ToolResult,
    UnknownPart,
    Usage,
)
from agentlog.readers import walk_files
from agentlog.rules import session_key

SLUG = "hermes"
TOOL_NAMES = {
    "shell": "bash",
    "terminal": "bash",
    "read_file": "read",
    "write_file": "write",
    "patch": "edit",
    "search_files": "grep",
    "web_search": "web_search",
    "web_extract": "web_fetch",
    "delegate_task": "task",
    "todo": "todo",
}
"""Hermes tool names → agentlog's."""

_ROLES = frozenset({"user", "assistant", "system", "tool"})
_DUMP = re.compile(r"^request_dump_")
_LEGACY_JSON = re.compile(r"^session_(.+)\.json$")
Fragment = tuple[str, Message | ToolOutput]


def tool_name(raw: str) -> str:
    """Normalised name of the Hermes tool ``raw``."""
    return normalise_tool(raw, TOOL_NAMES)


def session_files(folder: Path) -> list[Path]:
    """The session files of a ``sessions/`` folder: ``<id>.jsonl`` and ``session_<id>.json``;
    ``request_dump_*`` debug dumps are never among them."""
    return [p for p in walk_files(folder, ".json") if _LEGACY_JSON.match(p.name)] + [
        p for p in walk_files(folder, ".jsonl") if not _DUMP.match(p.name)
    ]


def file_session_id(path: str) -> str:
    """The session id a session file is named after: ``session_<id>.json`` → ``<id>``,
    ``<id>.jsonl`` → ``<id>``."""
    name = Path(path).name
    found = _LEGACY_JSON.match(name)
    return found.group(1) if found else Path(path).stem


def usage_of(row: Mapping[str, Any]) -> Usage:
    """Usage of one session row's counters (input exclusive of cache), with its cost."""
    has_source = str(row.get("cost_source") or "").lower() not in ("", "none")
    known = [
        (float(value), kind)
        for value, kind in (
            (row.get("actual_cost_usd"), "recorded"),
            (row.get("estimated_cost_usd"), "estimated"),
        )
        if isinstance(value, int | float) and (value > 0 or (value == 0 and has_source))
    ]
    cost: float | None = known[0][0] if known else None
    source: CostSource | None = (
        "recorded" if known and known[0][1] == "recorded" else ("estimated" if known else None)
    )
    return Usage(
        input_tokens=as_int(row.get("input_tokens")),
        cache_read_tokens=as_int(row.get("cache_read_tokens")),
        cache_write_5m_tokens=as_int(row.get("cache_write_tokens")),
        output_tokens=as_int(row.get("output_tokens")),
        reasoning_tokens=as_int(row.get("reasoning_tokens")),
        cost_usd=cost,
        cost_source=source,
    )


class _Messages:
    """Converts Hermes message dicts (database rows, JSONL lines, snapshot entries)."""

    def __init__(self, sid: str, diagnostics: Diagnostics) -> None:
        self.sid = sid
        self.diagnostics = diagnostics
        self.out: list[Fragment] = []
        self.assistants: list[Message] = []
        self.first_prompt: str | None = None

    def add(self, record: dict[str, Any], mid: str, model: str | None) -> None:
        """Convert one message dict; a dict whose shape defies the format costs only itself."""
        with RecordGuard(self.out, self.diagnostics):
            self._add(record, mid, model)

    def _add(self, record: dict[str, Any], mid: str, model: str | None) -> None:
        role = record.get("role")
        when = parse_time(record.get("timestamp"))
        if role == "session_meta":
            self.diagnostics.skip("ignored:session_meta")
            return
        if role not in _ROLES:
            self.diagnostics.unknown(f"role:{role}")
            self.out.append(
                (self.sid, Message(id=mid, role="system", parts=[UnknownPart(raw=record)], flags=["unknown"]))
            )
            return
        self.diagnostics.use()
        text = (
            block_text(record.get("content"))
            if not isinstance(record.get("content"), str)
            else record["content"]
        )
        if role == "tool" and isinstance(record.get("tool_call_id"), str):
            failed = record.get("finish_reason") == "error"
            result = ToolResult(
                output=text, is_error=failed, status="error" if failed else "completed", ended_at=when
            )
            self.out.append(
                (self.sid, ToolOutput(call_id=record["tool_call_id"], result=result, timestamp=when))
            )
            return
        message = Message(id=mid, role=role, timestamp=when, model=model if role == "assistant" else None)
        reasoning = as_str(record.get("reasoning")) or as_str(record.get("reasoning_content"))
        if reasoning and role == "assistant":
            message.parts.append(ReasoningPart(text=reasoning))
        if text:
            message.parts.append(TextPart(text=text))
        for call in _tool_calls(record.get("tool_calls")):
            message.parts.append(function_call(call, tool_name))
        if record.get("display_kind") == "hidden":
            message.flags.append("meta")
        elif role == "user" and self.first_prompt is None and text.strip():
            self.first_prompt = text.strip()
        self.out.append((self.sid, message))
        if role == "assistant":
            self.assistants.append(message)

    def charge(self, usage: Usage, mid: str, when: Any, model: str | None) -> None:
        """Put one row's counters on its last assistant message (else a ``meta`` message)."""
        if usage.total_tokens == 0 and usage.cost_usd is None:
            return
        if self.assistants:
            self.assistants[-1].usage = usage
            return
        message = Message(
            id=mid, role="system", timestamp=parse_time(when), model=model, usage=usage, flags=["meta"]
        )
        self.out.append((self.sid, message))


def _seconds(value: Any) -> float:
    """An epoch-seconds column as a sort key (anything else sorts first)."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _tool_calls(value: Any) -> list[dict[str, Any]]:
    """``tool_calls`` as a list of objects (the database stores it as JSON text; text
    that is not JSON raises :class:`~agentlog.adapters._json.JsonError`)."""
    if isinstance(value, str):
        value = parse_json(value) if value.strip() else None  # JsonError: the row's problem
    return [c for c in value if isinstance(c, dict)] if isinstance(value, list) else []


def _decode_file(
    path: str, data: bytes, diagnostics: Diagnostics
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``(snapshot metadata, message dicts)`` of a ``.json`` snapshot or ``.jsonl`` file."""
    if path.endswith(".jsonl"):
        records = []
        for line in data.splitlines():
            if not line.strip():
                continue
            record = json_object(line)
            if record is None:
                diagnostics.skip("invalid_json")
            else:
                records.append(record)
        return {}, records
    snapshot = read_document(data, diagnostics, as_object=True)
    if snapshot is None:
        return {}, []
    messages = snapshot.get("messages")
    return snapshot, [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


def _kind(
    row: Mapping[str, Any], parent: Mapping[str, Any] | None
) -> SessionKind | Literal["compression"] | None:
    """How a session row relates to its parent row: ``None`` for a root."""
    config = json_object(row.get("model_config")) or {}
    if parent is None or "_reset_from" in config:
        return None
    if "_branched_from" in config or parent.get("end_reason") == "branched":
        return "fork"
    if row.get("source") == "tool" or "_delegate_from" in config:
        return "subagent"
    return "compression" if parent.get("end_reason") == "compression" else "subagent"


class HermesAdapter(DocumentAdapter):
    """Hermes Agent: ``~/.hermes/state.db`` and ``~/.hermes/sessions/``."""

    slug = SLUG
    display_name = "Hermes Agent"
    parser_version = 3
    env_vars = ("HERMES_HOME",)
    source_format = "json"
    sqlite_tables = ("sessions", "messages")

    def format_of(self, ref: SourceRef) -> Literal["json", "sqlite"]:
        return "sqlite" if ref.path.endswith(".db") else "json"

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [Path(env["HERMES_HOME"]) if env.get("HERMES_HOME") else home / ".hermes"]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        profiles = root / "profiles"
        homes = [root, *probe.subfolders(profiles)]
        for home in homes:
            files = (
                [str(p) for p in session_files(home / "sessions")] if probe.is_dir(home / "sessions") else []
            )
            if probe.is_file(home / "state.db"):
                yield SourceRef(agent=SLUG, path=str(home / "state.db"), sidecars=tuple(files))
            else:
                yield from (SourceRef(agent=SLUG, path=f) for f in files)

    def sniff(self, name: str, head: bytes) -> float:
        if _DUMP.match(name):
            return 0.0
        if name == "state.db" and head.startswith(b"SQLite format 3\x00"):
            return 0.6
        if b'"session_id"' in head and b'"session_start"' in head:
            return 0.85
        if name.endswith(".jsonl") and b'"role"' in head.split(b"\n", 1)[0]:
            return 0.2  # bare message dicts: any more specific format wins
        return 0.0

    def resume_command(self, session: Session) -> str | None:
        return resume_line("hermes --resume", session.id) if session.kind in ("main", "fork") else None

    def parse_document(self, ref: SourceRef, doc: Document) -> DocumentResult:
        files = dict(doc.sidecars)
        if self.format_of(ref) == "json":
            files[ref.path] = doc.data
        headers: dict[str, Session] = {}
        fragments: list[Fragment] = []
        in_db = self._database(ref, doc.tables, headers, fragments)
        from_files: dict[str, tuple[Session, list[Fragment]]] = {}
        stray = Diagnostics()
        for path in sorted(files):
            if _DUMP.match(Path(path).name):
                continue  # never imported, whoever listed it
            sid = file_session_id(path)
            if sid in in_db:
                headers[in_db[sid]].diagnostics.skip("duplicate:state_db")
                continue
            parsed = self._file(ref, path, files[path], sid, stray)
            if parsed is None:
                continue
            kept = from_files.get(parsed[0].id)
            if kept is not None:  # a session in two files: the richer one wins
                loser, parsed = (kept, parsed) if len(parsed[1]) > len(kept[1]) else (parsed, kept)
                parsed[0].diagnostics.skip("duplicate:session_file", loser[0].diagnostics.records_total)
            from_files[parsed[0].id] = parsed
        for header, found in from_files.values():
            headers.setdefault(header.id, header)
            fragments.extend(found)
        if headers and stray.records_total:
            next(iter(headers.values())).diagnostics.merge(stray)
        return DocumentResult(headers=list(headers.values()), fragments=fragments)

    def _database(
        self,
        ref: SourceRef,
        tables: Mapping[str, list[dict[str, Any]]],
        headers: dict[str, Session],
        out: list[Fragment],
    ) -> dict[str, str]:
        """Sessions of ``state.db``; returns row id → the session id it is stitched into."""
        rows = {r["id"]: r for r in tables.get("sessions", []) if isinstance(r.get("id"), str)}
        owner: dict[str, str] = {}

        def root_of(rid: str, seen: frozenset[str] = frozenset()) -> str:
            row = rows[rid]
            parent = rows.get(row.get("parent_session_id") or "")
            if parent is None or rid in seen or _kind(row, parent) != "compression":
                return rid
            return root_of(parent["id"], seen | {rid})

        for rid, row in sorted(rows.items(), key=lambda kv: (_seconds(kv[1].get("started_at")), kv[0])):
            sid = owner[rid] = root_of(rid)
            header = headers.get(sid) or self._header(ref, sid, rows[sid], rows, root_of)
            headers[sid] = header
            header.diagnostics.use()
            if sid != rid:
                header.ended_at = parse_time(row.get("ended_at")) or header.ended_at
        messages: dict[str, list[dict[str, Any]]] = {}
        stray = Diagnostics()
        for message in tables.get("messages", []):
            if message.get("session_id") in owner:
                messages.setdefault(message["session_id"], []).append(message)
            else:
                stray.skip("orphan_message")
        with_messages: dict[str, str] = {}
        for rid, row in sorted(rows.items(), key=lambda kv: (_seconds(kv[1].get("started_at")), kv[0])):
            sid = owner[rid]
            converter = _Messages(sid, headers[sid].diagnostics)
            ordered = sorted(
                messages.get(rid, []), key=lambda m: (_seconds(m.get("timestamp")), as_int(m.get("id")))
            )
            for message in ordered:
                converter.add(message, f"{rid}@{message.get('id')}", as_str(row.get("model")))
            converter.charge(
                usage_of(row),
                f"{rid}@usage",
                row.get("ended_at") or row.get("started_at"),
                as_str(row.get("model")),
            )
            out.extend(converter.out)
            headers[sid].title = headers[sid].title or converter.first_prompt
            if ordered:
                with_messages[rid] = sid
        if headers and stray.records_total:
            next(iter(headers.values())).diagnostics.merge(stray)
        return with_messages

    @staticmethod
    def _header(
        ref: SourceRef,
        sid: str,
        row: Mapping[str, Any],
        rows: Mapping[str, Mapping[str, Any]],
        root_of: Callable[[str], str],
    ) -> Session:
        parent = rows.get(row.get("parent_session_id") or "")
        kind = _kind(row, parent)
        header = Session(
            key=session_key(SLUG, sid),
            agent=SLUG,
            id=sid,
            title=as_str(row.get("title")),
            cwd=as_str(row.get("cwd")),
            git_branch=as_str(row.get("git_branch")),
            started_at=parse_time(row.get("started_at")),
            ended_at=parse_time(row.get("ended_at")),
            sources=[ref.path],
        )
        if parent is not None and kind in ("fork", "subagent"):
            header.kind = kind
            header.parent_key = session_key(SLUG, root_of(parent["id"]))
        return header

    @staticmethod
    def _file(
        ref: SourceRef, path: str, data: bytes, sid: str, stray: Diagnostics
    ) -> tuple[Session, list[Fragment]] | None:
        """The session of one snapshot / JSONL file and its fragments; ``None`` (its
        diagnostics added to ``stray``) when it holds neither metadata nor messages."""
        diagnostics = Diagnostics()
        snapshot, records = _decode_file(path, data, diagnostics)
        if not records and not snapshot:
            stray.merge(diagnostics)
            return None
        sid = as_str(snapshot.get("session_id")) or sid
        config = as_dict(snapshot.get("model_config"))
        header = Session(
            key=session_key(SLUG, sid),
            agent=SLUG,
            id=sid,
            cwd=as_str(snapshot.get("cwd")) or as_str(config.get("cwd")),
            started_at=parse_time(snapshot.get("session_start")),
            ended_at=parse_time(snapshot.get("last_updated")),
            sources=[path] if path == ref.path else [ref.path, path],
            diagnostics=diagnostics,
        )
        if snapshot:
            diagnostics.use()
        converter = _Messages(sid, diagnostics)
        for n, record in enumerate(records):
            converter.add(record, f"{sid}@f{n}", as_str(snapshot.get("model")))
        header.title = converter.first_prompt
        return header, converter.out
