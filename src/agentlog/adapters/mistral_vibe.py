"""Mistral Vibe sessions: the legacy store (``messages.jsonl`` + ``meta.json``) and
the unified store of the Unified Harness (``logs/session/unified/<id>/``).

Spec (``shared/formats.md`` §7 and §14.1; mistralai/mistral-vibe
``vibe/core/session/session_logger.py``, ``vibe/core/types.py`` @ac8f1a09fdfb (2.18.4);
harness ``_storage.py``@503a4dcb2cc6, ``_projection.py``/``session_protocol.py``
@63d9d9085ec7; legacy fixtures from kenn-io/agentsview):

Locations
    ``$VIBE_HOME/logs/session`` (default ``~/.vibe/logs/session``).  Legacy: one
    folder per session ``<prefix>_<YYYYmmdd>_<HHMMSS>_<short id>/`` with
    ``messages.jsonl`` (the source) and ``meta.json`` (a sidecar); subagent traces
    in ``<session folder>/agents/<…>/`` (kind ``subagent`` of the enclosing
    session).  Unified: ``unified/<session id>/`` (the source is its ``CURRENT``
    file; manifests, projection states, chunks and journals are sidecars).
    ``.session_index.json`` and ``unified/.session-index.json`` are listing
    caches and ``active/*.lock*`` leases: not read.

Legacy store
    ``messages.jsonl``: one ``LLMMessage`` per line ``{role: user|assistant|tool,
    content, reasoning_content?, tool_calls?[{id, function{name, arguments (JSON
    string, or an object in some samples)}}], tool_call_id?, name?, injected?,
    message_id?}``; system messages are not written.  ``injected`` → ``meta``;
    tool messages are results merged into their call.  Ids: ``message_id``, else
    ``<session id>@<line number>``.  ``meta.json``: ``session_id``, ``start_time``,
    ``end_time``, ``title``, ``git_branch``, ``environment.working_directory``,
    ``parent_session_id`` (a continued session → kind ``fork``), ``model`` (or
    ``config.active_model``), ``stats``.

    **Timestamps are approximate.**  Vibe writes none per message: the N lines are
    spread evenly from ``start_time`` (line 1) to ``end_time`` (line N) — line i
    at ``start + (end − start)·(i−1)/(N−1)`` — and every message is flagged
    ``approximate_time``.  Without ``meta.json`` messages have no time.

    **Why a document:** spreading needs the line count and ``meta.json`` (rewritten
    in place) holds the tokens, so the pair is parsed whole on each change.

Pre-2.0 documents (``<prefix>_<YYYYmmdd>_<HHMMSS>_<id8>.json`` directly in the folder)
    Before 2.0 Vibe rewrote one pretty-printed document per session, ``{metadata,
    messages[]}`` — mistralai/mistral-vibe ``vibe/core/interaction_logger.py``
    @da826205dabe (``_get_save_filepath``, ``save_interaction``); 2.0 moves each
    into a folder of the same stem (``vibe/core/session/session_migration.py``
    @a7e2f81adbcc), so a file not yet migrated is read here.  ``metadata`` is
    ``meta.json``'s content (title as ``name`` in some versions, the model as
    ``agent_config.active_model``); ``messages`` are the same ``LLMMessage`` dumps
    **including** the system prompt (role ``system`` → a ``meta`` system message).
    Times are spread the same way.  Only files in the folder itself are read (Vibe
    globs ``<prefix>_*.json`` there).  No public sample exists (fixture written for
    agentlog).

Unified store (read-only, as the harness reads it)
    ``CURRENT{session_id, generation, snapshot_sequence, manifest_sha256,
    store_format_minor}`` → ``generations/<generation>/manifest.json`` →
    ``projection_state{path, chunks?}``: the ``projection-state.json`` envelope whose
    ``snapshot.history.entries`` is empty when ``chunks`` are named (the list is then
    the concatenation of ``chunks/<sha>.json`` arrays, in order) → fold of the
    journal segment ``recovery_journal_segment.path``: ``projection_delta`` ops
    (``append_entry``, ``replace_entry``, ``remove_entry``, ``set_envelope``,
    ``set_history_entries``) and ``projection_advanced`` (whole snapshot).  A
    missing sidecar or a torn journal line is counted, never raised.  History
    entries: ``message`` (role, ``content`` blocks ``text``/``image``/``resource``;
    ``source: turn_steer`` is a typed prompt too), ``reasoning``, ``effect`` (a tool
    call: ``detail.toolName`` (else ``title``), ``detail.input``, ``state.status``
    ``running``/``completed``/``failed``/``skipped``/``cancelled``, ``state.output``/
    ``outputText``, ``detail.childSessionId`` → the child session is a subagent
    linked to this call), ``checkpoint`` (``compaction`` → compaction part,
    ``model_change``), ``notice`` (meta).  Entry ids are the message ids;
    ``createdAt`` (unix ms) the time.  ``session.title``, ``session.parentSessionId``
    (a subagent when ``rootSessionId`` differs from the id), ``session.status``:
    ``running`` → working, ``blocked`` (an approval or question) → needs_you; the
    ``idle`` → waiting for the user (done for a subagent), ``failed`` →
    errored, ``archived`` → done.  A ``running`` status is what the store says; the
    lease that tells a live process from a dead one is not read.

Tokens (session-level, cumulative)
    Vibe records no per-call usage: legacy ``stats{session_prompt_tokens ⊇
    session_cached_tokens, session_completion_tokens, session_cost}``, unified
    ``session.tokenUsage{inputTokens ⊇ cachedInputTokens, outputTokens}``.  The
    session carries them on one ``synthetic`` + ``meta`` system message whose text
    says so (input = prompt − cached, cache read = cached, output = completion);
    ``session_cost`` (Vibe's own cache-blind estimate, USD) is kept as recorded.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path, PurePath
from typing import Any

import msgspec

from agentlog import probe
from agentlog.adapters._content import block_text
from agentlog.adapters._json import (
    JsonError,
    json_or_text,
    parse_json,
    parse_object,
    read_document,
)
from agentlog.adapters._tools import normalise_tool
from agentlog.adapters._values import as_dict, as_int, as_list, as_str, parse_time
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
    CompactionPart,
    Diagnostics,
    FilePart,
    Message,
    MessageFlag,
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

SLUG = "mistral_vibe"

TOOL_NAMES = {
    "bash": "bash",
    "read_file": "read",
    "write_file": "write",
    "search_replace": "edit",
    "grep": "grep",
    "todo": "todo",
    "web_fetch": "web_fetch",
    "web_search": "web_search",
    "task": "task",
    "spawn": "task",
}
"""Vibe tool names (legacy ``read_file``; unified ``file_system.read_file``, ``subagent.spawn``
— the last dotted segment is looked up) → agentlog's."""

_EFFECT_STATUS = {
    "completed": "completed",
    "failed": "error",
    "cancelled": "interrupted",
    "skipped": "interrupted",
}
_SESSION_STATUS: dict[str, SessionStatus] = {
    "running": "working",
    "blocked": "needs_you",  # an approval or a question waits (agentlog.live.status)
    "idle": "waiting_for_user",
    "failed": "errored",
    "archived": "done",
}
_PRE2_FILE = re.compile(r"^.+_\d{8}_\d{6}_[^_]+\.json$")
_DECODER = msgspec.json.Decoder()
USAGE_NOTE = "Session-level cumulative tokens (Mistral Vibe records no per-call usage)."


def tool_name(raw: str) -> str:
    """Normalised name of a Vibe tool (MCP tools keep ``mcp__server__tool``)."""
    return raw if raw.startswith("mcp__") else normalise_tool(raw.rsplit(".", 1)[-1], TOOL_NAMES)


def session_usage(prompt: int, cached: int, completion: int, cost: Any = None) -> Usage:
    """Exclusive buckets from Vibe's cumulative counters (prompt ⊇ cached)."""
    recorded = isinstance(cost, int | float) and not isinstance(cost, bool)
    return Usage(
        input_tokens=max(0, prompt - cached),
        cache_read_tokens=cached,
        output_tokens=completion,
        cost_usd=float(cost) if recorded else None,
        cost_source="recorded" if recorded else None,
    )


def usage_message(sid: str, usage: Usage, when: datetime | None, model: str | None) -> Message:
    """The synthetic message that carries a session's cumulative usage, with the
    model the session's metadata names (``meta.json`` ``model`` /
    ``config.active_model``; the unified store's last model), so it is priced."""
    return Message(
        id=f"{sid}@usage",
        role="system",
        timestamp=when,
        model=model,
        parts=[TextPart(text=USAGE_NOTE)],
        usage=usage,
        flags=["synthetic", "meta"],
    )


def decode(data: bytes | None, diagnostics: Diagnostics, what: str) -> dict[str, Any]:
    """A JSON object from ``data``; ``{}`` (with an error noted: ``missing``, a
    reason of :mod:`agentlog.adapters._json`) when missing, bad or another value."""
    if data is None:
        diagnostics.errors.append(f"{what}: missing")
        return {}
    try:
        return parse_object(data)
    except JsonError as exc:
        diagnostics.errors.append(f"{what}: {exc.reason}")
        return {}


def spread(start: datetime | None, end: datetime | None, index: int, count: int) -> datetime | None:
    """The approximate time of line ``index`` (0-based) of ``count`` between start and end."""
    if start is None:
        return None
    if end is None or count < 2 or end <= start:
        return start
    return start + (end - start) * index / (count - 1)


class _Legacy(DocumentParser):
    """Parses one legacy session: a 2.x folder (``doc.data`` is ``messages.jsonl``;
    ``meta.json`` and, for a subagent, the enclosing session's are sidecars) or a
    pre-2.0 ``<prefix>_<date>_<time>_<id8>.json`` document ``{metadata, messages[]}``.
    Each line or message is one record."""

    def __init__(self, ref: SourceRef, doc: Document) -> None:
        super().__init__(ref, doc)
        path = PurePath(ref.path)
        self.parent_meta: dict[str, Any] | None = None
        self.records: list[Any]
        if path.suffix == ".json":
            whole = read_document(doc.data, self.diagnostics, as_object=True) or {}
            self.meta = as_dict(whole.get("metadata"))
            self.records = as_list(whole.get("messages"))
        else:
            meta_path = str(path.with_name("meta.json"))
            self.meta = decode(doc.sidecars.get(meta_path), self.diagnostics, "meta.json")
            self.parent_meta = next(
                (
                    decode(data, Diagnostics(), "parent meta.json")
                    for p, data in doc.sidecars.items()
                    if p != meta_path
                ),
                None,
            )
            self.records = [line for line in doc.data.split(b"\n") if line.strip()]
        fallback = path.stem if path.suffix == ".json" else path.parent.name
        sid = as_str(self.meta.get("session_id")) or fallback
        self.session = Session(key=session_key(SLUG, sid), agent=SLUG, id=sid, sources=[ref.path])

    def headers(self) -> list[Session]:
        self.session.diagnostics = self.diagnostics
        return [self.session]

    def parse(self) -> None:
        records = self.records
        meta, session = self.meta, self.session
        env = as_dict(meta.get("environment"))
        config: dict[str, Any] = next(
            (meta[k] for k in ("config", "agent_config") if isinstance(meta.get(k), dict)), {}
        )
        session.title = as_str(meta.get("title")) or as_str(meta.get("name"))
        session.cwd = as_str(env.get("working_directory"))
        session.git_branch = as_str(meta.get("git_branch"))
        session.started_at = start = parse_time(meta.get("start_time"))
        session.ended_at = end = parse_time(meta.get("end_time"))
        model = as_str(meta.get("model")) or as_str(config.get("active_model"))
        if "agents" in PurePath(self.ref.path).parts[:-2]:
            session.kind = "subagent"
            parent = as_str((self.parent_meta or {}).get("session_id")) or as_str(
                meta.get("parent_session_id")
            )
            session.parent_key = session_key(SLUG, parent) if parent else None
        elif as_str(meta.get("parent_session_id")):
            session.kind = "fork"
            session.parent_key = session_key(SLUG, meta["parent_session_id"])
        for index, record in enumerate(records):
            with self.guard():
                if isinstance(record, bytes):
                    record = parse_object(record)
                elif not isinstance(record, dict):
                    self.diagnostics.skip("not_an_object")
                    continue
                self._record(record, index, spread(start, end, index, len(records)), model)
        stats = meta.get("stats")
        if isinstance(stats, dict):
            usage = session_usage(
                as_int(stats.get("session_prompt_tokens")),
                as_int(stats.get("session_cached_tokens")),
                as_int(stats.get("session_completion_tokens")),
                stats.get("session_cost"),
            )
            self.fragments.append((session.id, usage_message(session.id, usage, end, model)))
        if model and model not in session.models:
            session.models.append(model)

    def _record(self, record: dict[str, Any], index: int, when: datetime | None, model: str | None) -> None:
        sid = self.session.id
        mid = as_str(record.get("message_id")) or f"{sid}@{index + 1}"
        role = record.get("role")
        flags: list[MessageFlag] = ["approximate_time"]
        if record.get("injected") is True:
            flags.append("meta")
        if role == "tool":
            self.diagnostics.use()
            result = ToolResult(output=record.get("content"), ended_at=when)
            call_id = str(record.get("tool_call_id") or "")
            self.fragments.append((sid, ToolOutput(call_id=call_id, result=result, timestamp=when)))
            return
        if role == "system":  # the system prompt (pre-2.0 documents only)
            self.diagnostics.use()
            text = block_text(record.get("content"))
            prompt = Message(
                id=mid, role="system", timestamp=when, parts=[TextPart(text=text)], flags=[*flags, "meta"]
            )
            self.fragments.append((sid, prompt))
            return
        if role not in ("user", "assistant"):
            self.diagnostics.unknown(f"role/{role}")
            unknown = Message(
                id=mid, role="system", timestamp=when, parts=[UnknownPart(raw=record)], flags=["unknown"]
            )
            self.fragments.append((sid, unknown))
            return
        self.diagnostics.use()
        parts: list[Part] = []
        reasoning = as_str(record.get("reasoning_content"))
        if reasoning:
            parts.append(ReasoningPart(text=reasoning))
        text = block_text(record.get("content"))
        if text:
            parts.append(TextPart(text=text))
        for n, call in enumerate(record.get("tool_calls") or []):
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                parts.append(UnknownPart(raw=call))
                continue
            raw = str(function.get("name") or "")
            call_id = as_str(call.get("id")) or f"{mid}#{n}"
            parts.append(
                ToolCallPart(
                    call_id=call_id,
                    tool=tool_name(raw),
                    raw_name=raw,
                    input=json_or_text(function.get("arguments")),
                )
            )
        message = Message(
            id=mid,
            role=role,
            timestamp=when,
            model=model if role == "assistant" else None,
            parts=parts,
            flags=flags,
        )
        self.fragments.append((sid, message))


class _Unified(DocumentParser):
    """Reads one unified-store session (``CURRENT`` and its sidecars); each history
    entry and journal line is one record."""

    def __init__(self, ref: SourceRef, doc: Document) -> None:
        super().__init__(ref, doc)
        self.folder = PurePath(ref.path).parent
        self.session = Session(key="", agent=SLUG, id=self.folder.name, sources=[ref.path])

    def sidecar(self, rel: str) -> bytes | None:
        return self.doc.sidecars.get(str(self.folder / rel))

    def headers(self) -> list[Session]:
        self.session.diagnostics = self.diagnostics
        return [self.session]

    def parse(self) -> None:
        current = decode(self.doc.data, self.diagnostics, "CURRENT")
        session = self.session
        sid = session.id = as_str(current.get("session_id")) or session.id
        session.key = session_key(SLUG, sid)
        generation = as_str(current.get("generation"))
        manifest = decode(
            self.sidecar(f"generations/{generation}/manifest.json"), self.diagnostics, "manifest"
        )
        if current:
            self.diagnostics.use()
        state = self._projection(generation, manifest)
        segment = manifest.get("recovery_journal_segment")
        if isinstance(segment, dict) and as_str(segment.get("path")):
            self._fold_journal(state, self.sidecar(segment["path"]))
        history = state.get("history")
        entries = history.get("entries") if isinstance(history, dict) else None
        self._entries(sid, entries if isinstance(entries, list) else [])
        self._header(session, as_dict(state.get("session")))
        token_usage = (
            state.get("session", {}).get("tokenUsage") if isinstance(state.get("session"), dict) else None
        )
        if isinstance(token_usage, dict):
            usage = session_usage(
                as_int(token_usage.get("inputTokens")),
                as_int(token_usage.get("cachedInputTokens")),
                as_int(token_usage.get("outputTokens")),
            )
            model = session.models[-1] if session.models else None
            self.emit(sid, usage_message(sid, usage, session.ended_at, model))

    def _projection(self, generation: str | None, manifest: dict[str, Any]) -> dict[str, Any]:
        """The generation's ``PublicSessionState`` with its chunks attached."""
        ref = manifest.get("projection_state")
        if not isinstance(ref, dict):
            return {}
        path = as_str(ref.get("path")) or "projection-state.json"
        envelope = decode(
            self.sidecar(f"generations/{generation}/{PurePath(path).name}"), self.diagnostics, "projection"
        )
        if envelope:
            self.diagnostics.use()
        state = as_dict(envelope.get("snapshot"))
        chunks = ref.get("chunks")
        if isinstance(chunks, list) and chunks:
            entries: list[Any] = []
            for sha in chunks:
                data = self.sidecar(f"chunks/{sha}.json") if isinstance(sha, str) else None
                chunk = read_document(data, self.diagnostics) if data is not None else None
                if isinstance(chunk, list):
                    self.diagnostics.use()
                    entries.extend(chunk)
                else:
                    self.diagnostics.skip("missing:chunk")
            history = state.setdefault("history", {})
            if isinstance(history, dict):
                history["entries"] = entries
        return state

    def _fold_journal(self, state: dict[str, Any], data: bytes | None) -> None:
        if data is None:
            self.diagnostics.errors.append("journal: missing")
            return
        history = state["history"] = as_dict(state.get("history"))
        entries: list[Any] = as_list(history.get("entries"))
        for line in data.split(b"\n"):
            if not line.strip():
                continue
            with self.guard():
                entries = self._journal_line(state, entries, parse_json(line))
        history = state.setdefault("history", {})
        if isinstance(history, dict):
            history["entries"] = entries

    def _journal_line(self, state: dict[str, Any], entries: list[Any], record: Any) -> list[Any]:
        """Apply one journal record; returns the entries list now in use."""
        kind = record.get("type") if isinstance(record, dict) else None
        payload = record.get("payload") if isinstance(record, dict) else None
        if kind == "projection_delta" and isinstance(payload, dict):
            self.diagnostics.use()
            for op in payload.get("delta") or []:
                entries = self._apply(state, entries, op)
        elif (
            kind == "projection_advanced"
            and isinstance(payload, dict)
            and isinstance(payload.get("snapshot"), dict)
        ):
            self.diagnostics.use()
            state.clear()
            state.update(payload["snapshot"])
            entries = state.setdefault("history", {}).setdefault("entries", [])
        elif isinstance(kind, str):
            self.diagnostics.skip(f"ignored:{kind}")
        else:
            self.diagnostics.skip("not_an_object")
        return entries

    def _apply(self, state: dict[str, Any], entries: list[Any], op: Any) -> list[Any]:
        kind = op.get("op") if isinstance(op, dict) else None
        if kind == "append_entry":
            entries.append(op.get("entry"))
        elif kind in ("replace_entry", "remove_entry"):
            ids = [e.get("id") if isinstance(e, dict) else None for e in entries]
            if op.get("id") not in ids:
                self.diagnostics.skip(f"missing_entry:{kind}")
                return entries
            at = ids.index(op.get("id"))
            if kind == "replace_entry":
                entries[at] = op.get("entry")
            else:
                del entries[at]
        elif kind == "set_envelope" and isinstance(op.get("state"), dict):
            state.update({k: v for k, v in op["state"].items() if k != "history"})
        elif kind == "set_history_entries" and isinstance(op.get("entries"), list):
            entries = list(op["entries"])
        else:
            self.diagnostics.skip(f"unknown_op:{kind}")
        return entries

    def _header(self, session: Session, info: dict[str, Any]) -> None:
        session.title = as_str(info.get("title"))
        session.started_at = parse_time(info.get("createdAt"))
        session.ended_at = parse_time(info.get("updatedAt"))
        parent, root = as_str(info.get("parentSessionId")), as_str(info.get("rootSessionId"))
        if parent:
            session.parent_key = session_key(SLUG, parent)
            session.kind = "subagent" if root and root != session.id else "fork"
        status = info.get("status")
        kind = status.get("type") if isinstance(status, dict) else status
        if isinstance(kind, str) and kind in _SESSION_STATUS:
            mapped = _SESSION_STATUS[kind]
            session.status = (
                "done"
                if mapped == "waiting_for_user" and kind == "idle" and session.kind == "subagent"
                else mapped
            )
            session.status_evidence = f"session.status={kind}"

    def _entries(self, sid: str, entries: list[Any]) -> None:
        for n, entry in enumerate(entries):
            with self.guard():
                if not isinstance(entry, dict):
                    self.diagnostics.skip("not_an_object")
                    continue
                self.emit(sid, self._entry(entry, as_str(entry.get("id")) or f"{sid}@{n}"))

    def _entry(self, entry: dict[str, Any], mid: str) -> Message:
        when = parse_time(entry.get("createdAt"))
        known = self._entry_parts(entry, mid)
        if known is None:
            self.diagnostics.unknown(f"entry/{entry.get('type')}")
            return Message(
                id=mid, role="system", timestamp=when, parts=[UnknownPart(raw=entry)], flags=["unknown"]
            )
        self.diagnostics.use()
        parts, role, flags = known
        return Message(id=mid, role=role, timestamp=when, parts=parts, flags=flags)

    def _entry_parts(
        self, entry: dict[str, Any], mid: str
    ) -> tuple[list[Part], Role, list[MessageFlag]] | None:
        """``(parts, role, flags)`` of a history entry; ``None`` for an unknown one."""
        kind = entry.get("type")
        if kind == "message" and entry.get("role") in ("user", "assistant"):
            return [self._block(b) for b in entry.get("content") or []], entry["role"], []
        if kind == "reasoning":
            summary = "\n".join(s for s in entry.get("summary") or [] if isinstance(s, str))
            return [ReasoningPart(text=str(entry.get("text") or ""), summary=summary)], "assistant", []
        if kind == "effect":
            return [self._effect(entry, mid)], "assistant", []
        details = as_dict(entry.get("details"))
        if kind == "checkpoint" and entry.get("kind") == "compaction":
            return (
                [CompactionPart(trigger=str(details.get("trigger") or ""))],
                "system",
                ["compaction_summary"],
            )
        if kind == "checkpoint":
            text = (
                f"model changed to {details.get('model')}"
                if entry.get("kind") == "model_change"
                else str(details)
            )
            return [TextPart(text=text)], "system", ["meta"]
        if kind == "notice":
            return [TextPart(text=str(entry.get("message") or ""))], "system", ["meta"]
        return None

    @staticmethod
    def _block(block: Any) -> Part:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            return TextPart(text=str(block.get("text") or ""))
        if kind == "image":
            attachment = as_dict(block.get("attachment"))
            return FilePart(media_type=str(attachment.get("mimeType") or "image"))
        if kind == "resource":
            resource = as_dict(block.get("resource"))
            return FilePart(ref=str(resource.get("uri") or ""))
        return UnknownPart(raw=block)

    @staticmethod
    def _effect(entry: dict[str, Any], mid: str) -> ToolCallPart:
        detail = as_dict(entry.get("detail"))
        state = as_dict(entry.get("state"))
        raw = as_str(detail.get("toolName")) or str(entry.get("title") or "")
        status = _EFFECT_STATUS.get(str(state.get("status")))
        result = None
        if status is not None:
            error = state.get("error")
            output = state.get("outputText") or state.get("output")
            if output in (None, "") and isinstance(error, dict):
                output = error.get("message")
            result = ToolResult(
                output=output,
                is_error=status == "error",
                status=status,  # type: ignore[arg-type]
                ended_at=parse_time(entry.get("updatedAt")),
                structured={"childSessionId": detail["childSessionId"]}
                if detail.get("childSessionId")
                else None,
            )
        return ToolCallPart(
            call_id=mid.removeprefix("effect-") or mid,
            tool=tool_name(raw),
            raw_name=raw,
            input=detail.get("input"),
            result=result,
        )


class MistralVibeAdapter(DocumentAdapter):
    """Mistral Vibe: ``~/.vibe/logs/session/`` (legacy folders and ``unified/``)."""

    slug = SLUG
    display_name = "Mistral Vibe"
    parser_version = 5
    env_vars = ("VIBE_HOME",)
    source_format = "json"

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [Path(env.get("VIBE_HOME") or home / ".vibe") / "logs" / "session"]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        for path in walk_files(root, "messages.jsonl"):
            if path.name != "messages.jsonl":
                continue
            sidecars = [path.with_name("meta.json")]
            parts = path.parts
            if "agents" in parts[:-2]:
                at = len(parts) - 1 - parts[::-1].index("agents")
                sidecars.append(Path(*parts[:at]) / "meta.json")
            yield SourceRef(agent=SLUG, path=str(path), sidecars=probe.regular_files(sidecars))
        for path in probe.glob(root, "*.json"):  # Vibe globs its folder, not below
            if _PRE2_FILE.match(path.name):
                yield SourceRef(agent=SLUG, path=str(path))
        for path in walk_files(root, "CURRENT"):
            if path.name == "CURRENT":
                folder = path.parent
                sidecars = [
                    p for p in sorted(walk_files(folder, "")) if p != path and ".staging-" not in str(p)
                ]
                yield SourceRef(agent=SLUG, path=str(path), sidecars=tuple(str(p) for p in sidecars))

    def sniff(self, name: str, head: bytes) -> float:
        if name == "CURRENT" and b"mistral.vibe.unified-session-store" in head:
            return 0.99
        if name == "messages.jsonl" and b'"role"' in head:
            return 0.7
        if _PRE2_FILE.match(name) and b'"metadata"' in head and b'"session_id"' in head:
            return 0.8
        return 0.0

    def parse_document(self, ref: SourceRef, doc: Document) -> DocumentResult:
        if PurePath(ref.path).name == "CURRENT":
            return _Unified(ref, doc).result()
        return _Legacy(ref, doc).result()

    def resume_command(self, session: Session) -> str | None:
        return resume_line("vibe --resume", session.id) if session.kind != "subagent" else None
