"""Goose (Block's agent) sessions: one SQLite database for all sessions, and the
per-session JSONL files Goose wrote before 1.10.

Spec (``shared/formats.md`` §13; ryoppippi/ccusage ``adapter/goose/loader.rs``,
``paths.rs``; kenn-io/agentsview ``internal/parser/goose.go`` — the columns and block
types below are the ones those readers query; the legacy files from block/goose
``crates/goose/src/session/storage.rs``, ``legacy.rs`` and ``message.rs``):

Location
    ``$GOOSE_PATH_ROOT/data/sessions/sessions.db`` when the variable is set, else
    ``~/.local/share/goose/sessions/sessions.db``, ``~/Library/Application Support/goose/
    sessions/sessions.db`` and ``~/.local/share/Block/goose/sessions/sessions.db``; the
    legacy ``*.jsonl`` files sit directly in the same ``sessions`` folders.  The
    reader layer reads the tables ``sessions``, ``messages`` and ``usage_ledger``
    read-only (a private copy when a ``-wal`` file shows Goose may be running).

``sessions`` (one row per session)
    ``id``, ``name``/``description`` → title, ``working_dir`` → ``cwd``, ``created_at`` /
    ``updated_at`` (SQLite UTC text or epoch) → start/end, ``model_config_json``
    (``model_name``) → model, ``parent_session_id`` → parent (``kind="subagent"``),
    cumulative ``accumulated_input_tokens``, ``accumulated_output_tokens``,
    ``accumulated_cache_read_tokens``, ``accumulated_cache_write_tokens``,
    ``accumulated_cost`` (columns absent in older schemas count as 0).

``messages`` (``id, message_id, session_id, role, content_json, created_timestamp,
timestamp, tokens, metadata_json``), ordered by ``created_timestamp, id``
    ``content_json`` is a list of Goose content blocks: ``text``, ``thinking``,
    ``redactedThinking``, ``image{mimeType}``, ``toolRequest``/``frontendToolRequest``
    ``{id, toolCall{status:"success", value{name, arguments}} | {status:"error", error}}``,
    ``toolResponse{id, toolResult{status:"success", value (content list or {content})} |
    {status:"error", error}}`` (merged into the call), and ``toolConfirmationRequest`` /
    ``systemNotification`` / ``actionRequired`` notices (kept as text); anything else
    is kept as an unknown part.  ``metadata_json.userVisible == false`` → ``meta``.
    Ids: ``<sessionId>:<message_id or row id>``.  Tool names are ``<extension>__<tool>``
    MCP names: ``developer__shell`` → ``bash``, ``developer__text_editor`` → ``edit``, the
    rest ``mcp__<extension>__<tool>``.

Legacy JSONL (``<sessions folder>/<id>.jsonl``, Goose before 1.10)
    One session per file, id = the file name without ``.jsonl`` (``%Y%m%d_%H%M%S`` or a
    user-given name).  ``save_messages_with_metadata`` rewrites the whole file on each
    save, so it is read whole (the reader layer's ``json`` path, see
    :meth:`GooseAdapter.format_of`).  Line 1 is ``SessionMetadata``: ``working_dir`` →
    ``cwd``, ``description`` → title (whitespace collapsed, as Goose's import does),
    ``schedule_id``, ``message_count``, ``total_tokens``/``input_tokens``/``output_tokens``
    (the last request's: not counted) and ``accumulated_total_tokens``/
    ``accumulated_input_tokens``/``accumulated_output_tokens`` (cumulative: the session
    totals below; no cache or cost fields exist).  A first line with a ``role`` is a
    message (files older than the metadata line).  Every other line is a ``Message``
    ``{id?, role, created (epoch s), content [blocks as above], metadata?{userVisible}}``;
    ids ``<sessionId>:<id or line number>``.  Goose 1.10+ imports these files into
    ``sessions.db`` under the same id and leaves them on disk: discovery lists the
    database first, so such a file is a duplicate of the database's session and is
    skipped whole.

Tokens
    ``usage_ledger`` (newer Goose: ``session_id, created_timestamp, model, input_tokens,
    output_tokens, cache_read_tokens, cache_write_tokens, cost, cost_source,
    is_compaction``) has one row per request; it names no message, so each row is a
    hidden usage message (``system``, ``meta`` + ``synthetic``) dated and modelled by
    the row.  ``cost`` is ``recorded`` when ``cost_source`` is ``provider_reported``,
    ``estimated`` when ``estimated``, else not kept.  Sessions without ledger rows carry
    their **session totals** (the ``accumulated_*`` columns; ``accumulated_cost`` as an
    ``estimated`` cost) on one hidden message ``<sessionId>@session-totals``.  Input is
    read as exclusive of the cache columns, as agentsview does (not verified against
    Goose's source).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path, PurePath
from typing import Any, ClassVar, Literal

from agentlog import probe
from agentlog.adapters._headers import database_headers
from agentlog.adapters._json import json_value, parse_object
from agentlog.adapters._tools import normalise_tool
from agentlog.adapters._values import as_dict, as_int, as_str, parse_time
from agentlog.adapters.base import (
    Document,
    DocumentAdapter,
    DocumentParser,
    DocumentResult,
    SourceRef,
    ToolOutput,
    resume_line,
)
from agentlog.model import (
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

SLUG = "goose"
DATABASE = "sessions.db"
LEGACY_SUFFIX = ".jsonl"
_METADATA_STARTS = (b'{"working_dir":', b'{"description":')
"""How Goose's serde writes the metadata line (fields in declaration order; files from
before ``working_dir`` existed start with ``description``)."""
TOOL_NAMES = {"developer__shell": "bash", "developer__text_editor": "edit"}
_NOTICES = ("toolConfirmationRequest", "systemNotification", "actionRequired")
_COST_SOURCES = {"provider_reported": "recorded", "estimated": "estimated"}


def tool_name(raw: str) -> str:
    """Normalised name of a Goose ``<extension>__<tool>`` tool."""
    if raw in TOOL_NAMES:
        return TOOL_NAMES[raw]
    return f"mcp__{raw}" if "__" in raw else normalise_tool(raw)


def _time(value: Any) -> datetime | None:
    """A Goose time: SQLite ``YYYY-MM-DD HH:MM:SS`` text (UTC), ISO text, or epoch s/ms."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    return parse_time(value)


class _Parse(DocumentParser):
    """What the database and the legacy JSONL files share: Goose messages, content
    blocks and session totals.  Each row or line is one record, counted in its
    session's diagnostics (rows no session owns in ``self.diagnostics``)."""

    def __init__(self, ref: SourceRef, doc: Document) -> None:
        super().__init__(ref, doc)
        self.sessions: dict[str, Session] = {}

    def _add(
        self, header: Session, role: Any, content: Any, when: datetime | None, meta: Any, mid: str
    ) -> None:
        """One Goose message: ``content`` its list of content blocks, ``meta`` its
        ``metadata`` object (``userVisible``), ``mid`` its id within the session."""
        sid = header.id
        if role not in ("user", "assistant") or not isinstance(content, list):
            header.diagnostics.skip("malformed:message_row")
            return
        header.diagnostics.use()
        parts = [part for block in content if (part := self._block(sid, block, when)) is not None]
        if not parts:
            return
        hidden = isinstance(meta, dict) and meta.get("userVisible") is False
        self.emit(
            sid,
            Message(
                id=f"{sid}:{mid}",
                role=role,
                timestamp=when,
                model=header.models[0] if role == "assistant" and header.models else None,
                parts=parts,
                flags=["meta"] if hidden else [],
            ),
        )

    def _block(self, sid: str, block: Any, when: datetime | None) -> Part | None:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            return TextPart(text=str(block.get("text") or ""))
        if kind == "thinking":
            return ReasoningPart(text=str(block.get("thinking") or ""))
        if kind == "redactedThinking":
            return ReasoningPart(encrypted=True)
        if kind == "image":
            return FilePart(media_type=str(block.get("mimeType") or "image"))
        if kind in ("toolRequest", "frontendToolRequest"):
            call = as_dict(block.get("toolCall"))
            value = as_dict(call.get("value"))
            raw = str(value.get("name") or "")
            return ToolCallPart(
                call_id=str(block.get("id") or ""),
                tool=tool_name(raw),
                raw_name=raw,
                input=value.get("arguments") if call.get("status") == "success" else call,
            )
        if kind == "toolResponse":
            self.emit(sid, self._response(block, when))
            return None
        if kind in _NOTICES:
            text = next(
                (block[k] for k in ("prompt", "msg", "message", "text") if isinstance(block.get(k), str)), ""
            )
            return TextPart(text=text or str(kind))
        return UnknownPart(raw=block)

    @staticmethod
    def _response(block: dict[str, Any], when: datetime | None) -> ToolOutput:
        result = as_dict(block.get("toolResult"))
        error = result.get("status") == "error"
        value = result.get("value")
        output = (
            result.get("error")
            if error
            else value.get("content", value)
            if isinstance(value, dict)
            else value
        )
        return ToolOutput(
            call_id=str(block.get("id") or ""),
            result=ToolResult(
                output=output, is_error=error, status="error" if error else "completed", ended_at=when
            ),
            timestamp=when,
        )

    def _totals(self, sid: str, row: dict[str, Any]) -> None:
        cost = row.get("accumulated_cost")
        usage = Usage(
            input_tokens=as_int(row.get("accumulated_input_tokens")),
            cache_read_tokens=as_int(row.get("accumulated_cache_read_tokens")),
            cache_write_5m_tokens=as_int(row.get("accumulated_cache_write_tokens")),
            output_tokens=as_int(row.get("accumulated_output_tokens")),
            cost_usd=float(cost) if isinstance(cost, int | float) else None,
            cost_source="estimated" if isinstance(cost, int | float) else None,
        )
        if usage.total_tokens or usage.cost_usd:
            self._carrier(sid, f"{sid}@session-totals", "session totals", usage, None, None)

    def _carrier(
        self, sid: str, mid: str, text: str, usage: Usage, when: datetime | None, model: str | None
    ) -> None:
        header = self.sessions[sid]
        message = Message(
            id=mid,
            role="system",
            timestamp=when,
            model=model or (header.models[0] if header.models else None),
            parts=[TextPart(text=text)],
            usage=usage,
            flags=["meta", "synthetic"],
        )
        self.emit(sid, message)


class _DatabaseParse(_Parse):
    """``sessions.db``: every session of its ``sessions`` table."""

    def __init__(self, ref: SourceRef, doc: Document) -> None:
        super().__init__(ref, doc)
        self.tables = doc.tables

    def parse(self) -> None:
        for row in self.tables.get("sessions", []):
            with self.guard():
                sid = as_str(str(row.get("id") or ""))
                if sid is None:
                    self.diagnostics.skip("malformed:session_row")
                    continue
                self.sessions[sid] = self._header(sid, row)
        messages = sorted(
            self.tables.get("messages", []),
            key=lambda r: (as_int(r.get("created_timestamp")), as_int(r.get("id"))),
        )
        for row in messages:
            with self.guard(self._diagnostics_of(row)):
                self._message(row)
        ledgered = set()
        for n, row in enumerate(self.tables.get("usage_ledger", [])):
            with self.guard(self._diagnostics_of(row)):
                sid = str(row.get("session_id") or "")
                if self._owner(sid) is not None:
                    ledgered.add(sid)
                    self._ledger(sid, n, row)
        for sid, row in ((r.get("id"), r) for r in self.tables.get("sessions", [])):
            with self.guard():
                if isinstance(sid, str) and sid in self.sessions and sid not in ledgered:
                    self._totals(sid, row)

    def headers(self) -> list[Session]:
        folder = Path(self.ref.path).parent.name
        return database_headers(SLUG, list(self.sessions.values()), folder, self.diagnostics, self.ref.path)

    def _diagnostics_of(self, row: dict[str, Any]) -> Diagnostics | None:
        header = self.sessions.get(str(row.get("session_id") or ""))
        return header.diagnostics if header else None

    def _header(self, sid: str, row: dict[str, Any]) -> Session:
        config = json_value(row.get("model_config_json"))
        config = config if isinstance(config, dict) else {}
        model = as_str(config.get("model_name")) or as_str(config.get("model"))
        header = Session(
            key=session_key(SLUG, sid),
            agent=SLUG,
            id=sid,
            title=as_str(row.get("name")) or as_str(row.get("description")),
            cwd=as_str(row.get("working_dir")),
            started_at=_time(row.get("created_at")),
            ended_at=_time(row.get("updated_at")),
            models=[model] if model else [],
        )
        parent = as_str(str(row.get("parent_session_id") or ""))
        if parent:
            header.kind, header.parent_key = "subagent", session_key(SLUG, parent)
        header.diagnostics.use()
        return header

    def _owner(self, sid: str) -> Session | None:
        header = self.sessions.get(sid)
        if header is None:
            self.diagnostics.skip("no_session_row")
        return header

    def _message(self, row: dict[str, Any]) -> None:
        header = self._owner(str(row.get("session_id") or ""))
        if header is None:
            return
        self._add(
            header,
            row.get("role"),
            json_value(row.get("content_json")),
            _time(row.get("created_timestamp")) or _time(row.get("timestamp")),
            json_value(row.get("metadata_json")),
            as_str(str(row.get("message_id") or "")) or str(row.get("id")),
        )

    def _ledger(self, sid: str, n: int, row: dict[str, Any]) -> None:
        self.sessions[sid].diagnostics.use()
        cost, source = row.get("cost"), _COST_SOURCES.get(str(row.get("cost_source")))
        kept = source is not None and isinstance(cost, int | float)
        usage = Usage(
            input_tokens=as_int(row.get("input_tokens")),
            cache_read_tokens=as_int(row.get("cache_read_tokens")),
            cache_write_5m_tokens=as_int(row.get("cache_write_tokens")),
            output_tokens=as_int(row.get("output_tokens")),
            cost_usd=float(cost) if kept else None,  # type: ignore[arg-type]
            cost_source=source if kept else None,  # type: ignore[arg-type]
        )
        text = "usage of a compaction request" if row.get("is_compaction") else "usage of a request"
        self._carrier(
            sid, f"{sid}@usage{n}", text, usage, _time(row.get("created_timestamp")), as_str(row.get("model"))
        )


class _LegacyParse(_Parse):
    """``<id>.jsonl`` (Goose before 1.10): one session, rewritten whole on each save."""

    def __init__(self, ref: SourceRef, doc: Document) -> None:
        super().__init__(ref, doc)
        sid = PurePath(ref.path).stem
        self.header = Session(
            key=session_key(SLUG, sid), agent=SLUG, id=sid, sources=[ref.path], diagnostics=self.diagnostics
        )
        self.sessions[sid] = self.header

    def parse(self) -> None:
        header = self.header
        metadata: dict[str, Any] = {}
        for n, line in enumerate(self.doc.data.splitlines()):
            if not line.strip():
                continue
            with self.guard():
                record = parse_object(line)
                if n == 0 and "role" not in record:
                    metadata = record
                    self._metadata(header, record)
                else:
                    created, mid = _time(record.get("created")), as_str(record.get("id")) or str(n)
                    self._add(
                        header,
                        record.get("role"),
                        record.get("content"),
                        created,
                        record.get("metadata"),
                        mid,
                    )
        with self.guard():
            self._totals(header.id, metadata)

    def headers(self) -> list[Session]:
        return [self.header]

    @staticmethod
    def _metadata(header: Session, record: dict[str, Any]) -> None:
        description = " ".join(str(record.get("description") or "").split())
        header.title = description or None
        header.cwd = as_str(record.get("working_dir"))
        header.diagnostics.use()


class GooseAdapter(DocumentAdapter):
    """Goose (Block): ``~/.local/share/goose/sessions/sessions.db`` and legacy ``<id>.jsonl``."""

    slug = SLUG
    display_name = "Goose"
    parser_version = 3
    source_format: ClassVar[Literal["json", "sqlite"]] = "sqlite"
    sqlite_tables = ("sessions", "messages", "usage_ledger")
    env_vars = ("GOOSE_PATH_ROOT",)

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        if env.get("GOOSE_PATH_ROOT", "").strip():
            return [Path(env["GOOSE_PATH_ROOT"].strip()) / "data" / "sessions"]
        return [
            home / ".local" / "share" / "goose" / "sessions",
            home / "Library" / "Application Support" / "goose" / "sessions",
            home / ".local" / "share" / "Block" / "goose" / "sessions",
        ]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        """``sessions.db`` first, then the legacy ``*.jsonl`` files beside it (a session
        Goose imported into the database is then a duplicate of the database's)."""
        databases = [p for p in walk_files(root, DATABASE) if p.name == DATABASE]
        for path in [*databases, *probe.glob(root, f"*{LEGACY_SUFFIX}")]:
            yield SourceRef(agent=SLUG, path=str(path))

    def sniff(self, name: str, head: bytes) -> float:
        if head.startswith(b"SQLite format 3\x00") and name == DATABASE:
            return 0.6
        first = head.split(b"\n", 1)[0]
        if (
            name.endswith(LEGACY_SUFFIX)
            and head.startswith(_METADATA_STARTS)
            and b'"message_count":' in first
        ):
            return 0.6
        return 0.0

    def format_of(self, ref: SourceRef) -> Literal["json", "sqlite"]:
        """``json`` (read whole as bytes) for a legacy ``.jsonl`` file, else ``sqlite``."""
        return "json" if ref.path.endswith(LEGACY_SUFFIX) else "sqlite"

    def parse_document(self, ref: SourceRef, doc: Document) -> DocumentResult:
        if self.format_of(ref) == "json":
            return _LegacyParse(ref, doc).result()
        return _DatabaseParse(ref, doc).result()

    def resume_command(self, session: Session) -> str | None:
        """``goose session --resume --session-id <id>`` (Goose CLI reference)."""
        return (
            resume_line("goose session --resume --session-id", session.id) if session.kind == "main" else None
        )
