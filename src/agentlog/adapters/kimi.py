"""Kimi CLI (MoonshotAI/kimi-cli, Python): ``context.jsonl`` history + ``wire.jsonl`` events.

Spec (``shared/formats.md`` §5; MoonshotAI/kimi-cli ``src/kimi_cli/soul/context.py``,
``soul/message.py``, ``wire/``, ``subagents/store.py``, ``metadata.py``@4a550effdfcb and
later).  Not Kimi Code (``kimi_code``), the separate TypeScript product.

Locations
    Share dir ``$KIMI_SHARE_DIR`` or ``~/.kimi``.  A session is the folder
    ``sessions/<md5(work dir)>/<session id>/`` (non-local KAOS: ``<kaos>_<md5>``) with
    ``context.jsonl`` (the messages), ``context_1.jsonl``, ``context_2.jsonl`` … (older
    history rotated away by ``/clear``, revert and compaction), ``wire.jsonl`` (UI
    events: usage, status) and ``state.json`` (``custom_title``).  Subagents live in
    ``subagents/<agent id>/{context.jsonl, wire.jsonl, meta.json}``.  The work dir is not
    stored in the session: ``kimi.json`` (``work_dirs[{path, kaos}]``) maps the md5 back.
    Legacy single-file sessions ``sessions/<md5>/<id>.jsonl`` are read as context only.

Why a :class:`~agentlog.adapters.base.DocumentAdapter`
    One session spans several files that are renamed under the writer (rotation moves
    ``context.jsonl`` aside and starts a new one), and its usage lives in a second
    journal that must be joined to the messages: byte offsets into one file cannot
    resume it, so the session (``context.jsonl`` + sidecars) is parsed whole.

context.jsonl (one kosong ``Message`` per line)
    ``{role: user|assistant|tool|system, content: str | [part], tool_calls?[{id,
    function{name, arguments (JSON string)}}], tool_call_id?}``; parts ``text``,
    ``think`` (→ reasoning; ``encrypted``), ``image_url``/``audio_url``/``video_url``
    (→ files).  ``_system_prompt``, ``_checkpoint`` and ``_usage`` lines are bookkeeping
    (``_usage.token_count`` is the context size, never usage) and skipped as
    ``ignored:<role>``.  User text wrapped in ``<system>…</system>`` (``CHECKPOINT N``,
    tool notes) is flagged ``meta``.  A ``tool`` message is the result of
    ``tool_call_id``; it is an error when it starts with ``<system>ERROR</system>``.
    History = rotations in order, then ``context.jsonl``; a revert copies the kept
    prefix into the new file (everything before a ``_checkpoint`` line), so lines
    repeating the previous file's head up to such a line are skipped as
    ``duplicate:rotation``.  Message ids are ``<session>@<n>`` (the format has none).

wire.jsonl (``{"timestamp": epoch s, "message": {"type", "payload"}}``, line 1 metadata)
    ``StatusUpdate.token_usage{input_other, output, input_cache_read,
    input_cache_creation}`` is one LLM step (``input_other`` exclusive of cache;
    creation → 5-minute tier); exact repeats (same ``message_id`` and tokens) are
    counted once.  The *k*-th usage goes to the *k*-th assistant message of the history
    (one assistant message per step — **inferred** from ``kimisoul.py``: the wire has
    no message ids in common with the context); usage beyond the last assistant message
    is kept on a ``meta`` system message so totals stay exact.  ``TurnBegin.user_input``
    gives the prompts' times and the fallback title.  Status, the last one wins:
    ``TurnBegin`` → ``working``, ``TurnEnd`` → ``waiting_for_user``, ``StepInterrupted`` →
    ``interrupted``, ``ApprovalRequest`` → ``needs_you`` until ``ApprovalRequestResolved``
    (``working``; MoonshotAI/kimi-cli ``klips/klip-8-kimi-agent-sdk.md``: a request the
    user answers).  ``SubagentEvent``
    (events a subagent also writes to its own wire) is not counted here; its
    ``parent_tool_call_id``/``agent_id`` link the tool call to the child session
    ``<session>/<agent id>``.  Other wire types are skipped as ``ignored:wire:<type>``.

Subagents: ``meta.json`` gives ``subagent_type``, ``description`` and ``status``
(``completed`` → done, ``failed`` → errored, ``killed`` → interrupted).  Resume:
``kimi --session <id>`` (kimi-cli docs "Sessions and Context").
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import msgspec

from agentlog import probe
from agentlog.adapters._json import json_object, parse_object
from agentlog.adapters._tools import function_call, normalise_tool
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
    SessionStatus,
    TextPart,
    ToolResult,
    UnknownPart,
    Usage,
)
from agentlog.readers import walk_files
from agentlog.rules import session_key

SLUG = "kimi"

TOOL_NAMES = {
    "Shell": "bash",
    "Bash": "bash",
    "ReadFile": "read",
    "ReadMediaFile": "read",
    "WriteFile": "write",
    "StrReplaceFile": "edit",
    "PatchFile": "edit",
    "Glob": "glob",
    "Grep": "grep",
    "SearchWeb": "web_search",
    "FetchURL": "web_fetch",
    "Task": "task",
    "Agent": "task",
    "SetTodoList": "todo",
}
"""Kimi CLI tool names → agentlog's."""

_ROTATION = re.compile(r"^context_(\d+)\.jsonl$")
_SUBAGENT_STATUS: dict[str, SessionStatus] = {
    "completed": "done",
    "failed": "errored",
    "killed": "interrupted",
}
_ERROR_MARK = "<system>ERROR</system>"


def tool_name(raw: str) -> str:
    """Normalised name of the Kimi CLI tool ``raw``."""
    return normalise_tool(raw, TOOL_NAMES)


def work_dir_key(path: str, kaos: str = "local") -> str:
    """The session folder name of a work dir: ``md5(path)``, ``<kaos>_<md5>`` off local."""
    import hashlib  # OpenSSL: only when Kimi's logs are read

    digest = hashlib.md5(path.encode(), usedforsecurity=False).hexdigest()
    return digest if kaos == "local" else f"{kaos}_{digest}"


def _lines(data: bytes) -> list[bytes]:
    return [line for line in data.splitlines() if line.strip()]


def _content(content: Any) -> list[Part]:
    if isinstance(content, str):
        return [TextPart(text=content)] if content else []
    parts: list[Part] = []
    for block in content if isinstance(content, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            parts.append(TextPart(text=str(block.get("text") or "")))
        elif kind == "think":
            parts.append(
                ReasoningPart(text=str(block.get("think") or ""), encrypted=bool(block.get("encrypted")))
            )
        elif kind in ("image_url", "audio_url", "video_url"):
            media = block.get(kind) if isinstance(block.get(kind), dict) else {}
            parts.append(FilePart(media_type=kind.removesuffix("_url"), ref=str(media.get("url") or "")))
        else:
            parts.append(UnknownPart(raw=block))
    return parts


def _usage(token_usage: dict[str, Any]) -> Usage:
    return Usage(
        input_tokens=as_int(token_usage.get("input_other")),
        cache_read_tokens=as_int(token_usage.get("input_cache_read")),
        cache_write_5m_tokens=as_int(token_usage.get("input_cache_creation")),
        output_tokens=as_int(token_usage.get("output")),
    )


class _Wire(msgspec.Struct, kw_only=True):
    """What the session uses from ``wire.jsonl``."""

    usages: list[tuple[float | None, Usage]] = msgspec.field(default_factory=list)
    prompts: list[tuple[float | None, str]] = msgspec.field(default_factory=list)
    spawned: dict[str, str] = msgspec.field(default_factory=dict)
    first: float | None = None
    last: float | None = None
    status: SessionStatus = "unknown"
    status_evidence: str | None = None


def _read_wire(data: bytes, parser: _Session) -> None:
    """Read ``wire.jsonl`` into ``parser.wire``, one guarded record per line."""
    wire, diagnostics = parser.wire, parser.diagnostics
    seen: set[tuple[str, tuple[tuple[str, Any], ...]]] = set()
    for line in _lines(data):
        with parser.guard():
            _wire_record(parse_object(line), wire, diagnostics, seen)


def _wire_record(
    record: dict[str, Any],
    wire: _Wire,
    diagnostics: Diagnostics,
    seen: set[tuple[str, tuple[tuple[str, Any], ...]]],
) -> None:
    message = record.get("message")
    when = record.get("timestamp") if isinstance(record.get("timestamp"), int | float) else None
    if when is not None:
        wire.first = when if wire.first is None else min(wire.first, when)
        wire.last = when if wire.last is None else max(wire.last, when)
    if not isinstance(message, dict):
        if record.get("type") == "metadata":
            diagnostics.use()
        else:
            diagnostics.skip("not_a_wire_message")
        return
    kind = str(message.get("type"))
    payload = as_dict(message.get("payload"))
    if kind == "StatusUpdate" and isinstance(payload.get("token_usage"), dict):
        usage = _usage(payload["token_usage"])
        key = (str(payload.get("message_id")), tuple(sorted(payload["token_usage"].items())))
        if key in seen:
            diagnostics.skip("duplicate:StatusUpdate")
            return
        seen.add(key)
        diagnostics.use()
        wire.usages.append((when, usage))
    elif kind == "TurnBegin":
        diagnostics.use()
        wire.status, wire.status_evidence = "working", "TurnBegin without TurnEnd"
        user_input = payload.get("user_input")
        text = "".join(p.text for p in _content(user_input) if isinstance(p, TextPart))
        wire.prompts.append((when, text))
    elif kind in ("TurnEnd", "StepInterrupted"):
        diagnostics.use()
        wire.status = "waiting_for_user" if kind == "TurnEnd" else "interrupted"
        wire.status_evidence = kind
    elif kind in ("ApprovalRequest", "ApprovalRequestResolved"):  # a request waits on the user, then not
        diagnostics.use()
        wire.status = "needs_you" if kind == "ApprovalRequest" else "working"
        wire.status_evidence = kind
    elif kind == "SubagentEvent":
        call = payload.get("parent_tool_call_id") or payload.get("task_tool_call_id")
        if isinstance(call, str) and isinstance(payload.get("agent_id"), str):
            wire.spawned[call] = payload["agent_id"]
        diagnostics.skip("subagent_copy:SubagentEvent")
    else:
        diagnostics.skip(f"ignored:wire:{kind}")


class _Session(DocumentParser):
    """Builds one session from its context lines and its wire; each line of either is
    one record."""

    def __init__(self, ref: SourceRef, doc: Document) -> None:
        super().__init__(ref, doc)
        self.session_id, self.agent_id = _identity(ref)
        self.sid = self.session_id if self.agent_id is None else f"{self.session_id}/{self.agent_id}"
        self.wire = _Wire()
        self.n = 0

    def parse(self) -> None:
        wire_data = next((d for p, d in self.doc.sidecars.items() if Path(p).name == "wire.jsonl"), b"")
        _read_wire(wire_data, self)
        diagnostics = self.diagnostics
        previous: list[bytes] = []
        for data in _ordered_contexts(self.doc):
            lines = _lines(data)
            shared = 0
            while shared < min(len(lines), len(previous)) and lines[shared] == previous[shared]:
                shared += 1
            # revert_to copies the history up to (not including) a `_checkpoint` line.
            while (
                0 < shared < len(previous)
                and (json_object(previous[shared]) or {}).get("role") != "_checkpoint"
            ):
                shared -= 1
            if shared:
                diagnostics.skip("duplicate:rotation", shared)
            for line in lines[shared:]:
                with self.guard():
                    self.feed(parse_object(line))
            previous = lines
        self.finish()

    def headers(self) -> list[Session]:
        if self.diagnostics.records_total == 0:
            self.fragments.clear()
            return []
        header = _header(self.ref, self.doc, self.session_id, self.agent_id, self.wire)
        header.diagnostics = self.diagnostics
        return [header]

    def feed(self, record: dict[str, Any]) -> None:
        """Convert one context line (bookkeeping lines are counted and skipped)."""
        role = record.get("role")
        if role in ("_system_prompt", "_checkpoint", "_usage"):
            self.diagnostics.skip(f"ignored:{role}")
            return
        mid = f"{self.sid}@{self.n}"
        self.n += 1
        if role == "tool" and isinstance(record.get("tool_call_id"), str):
            self.diagnostics.use()
            parts = _content(record.get("content"))
            texts = [p.text for p in parts if isinstance(p, TextPart)]
            failed = bool(texts) and texts[0] == _ERROR_MARK
            self.emit(
                self.sid,
                ToolOutput(
                    call_id=record["tool_call_id"],
                    result=ToolResult(
                        output="\n".join(texts), is_error=failed, status="error" if failed else "completed"
                    ),
                ),
            )
            return
        if role not in ("user", "assistant", "system"):
            self.diagnostics.unknown(f"role:{role}")
            self.emit(
                self.sid, Message(id=mid, role="system", parts=[UnknownPart(raw=record)], flags=["unknown"])
            )
            return
        self.diagnostics.use()
        message = Message(id=mid, role=role, parts=_content(record.get("content")))
        for call in record.get("tool_calls") or []:
            message.parts.append(function_call(call, tool_name))
        if role == "user" and message.text.lstrip().startswith("<system>"):
            message.flags.append("meta")
        self.emit(self.sid, message)

    def finish(self) -> None:
        """Pair wire usage with assistant messages and prompt times with user messages."""
        items = [item for _, item in self.fragments]
        for output in items:
            if isinstance(output, ToolOutput) and output.call_id in self.wire.spawned:
                output.result.structured = {"agent_id": f"{self.sid}/{self.wire.spawned[output.call_id]}"}
        messages = [m for m in items if isinstance(m, Message)]
        assistants = [m for m in messages if m.role == "assistant"]
        for i, (when, usage) in enumerate(self.wire.usages):
            if i < len(assistants):
                assistants[i].usage = usage
                assistants[i].timestamp = parse_time(when)
            else:
                self.emit(
                    self.sid,
                    Message(
                        id=f"{self.sid}@usage{i}",
                        role="system",
                        timestamp=parse_time(when),
                        usage=usage,
                        flags=["meta"],
                    ),
                )
        prompts = iter(self.wire.prompts)
        pending = next(prompts, None)
        for message in messages:
            user = message.role == "user" and "meta" not in message.flags
            if pending is not None and user and message.text.strip() == pending[1].strip():
                message.timestamp = parse_time(pending[0])
                pending = next(prompts, None)


def _ordered_contexts(doc: Document) -> list[bytes]:
    """The context files' bytes, oldest first: ``context_1.jsonl``, … then ``context.jsonl``."""
    rotations = sorted(
        (int(found.group(1)), data)
        for path, data in doc.sidecars.items()
        if (found := _ROTATION.match(Path(path).name))
    )
    return [data for _, data in rotations] + [doc.data]


def _identity(ref: SourceRef) -> tuple[str, str | None]:
    """``(session id, agent id)`` from the source path."""
    p = Path(ref.path)
    if p.parent.parent.name == "subagents":
        return p.parent.parent.parent.name, p.parent.name
    if p.name == "context.jsonl":
        return p.parent.name, None
    return p.stem, None


def _cwd(doc: Document, session_dir: Path) -> str | None:
    """The work dir whose key names ``session_dir``'s parent folder (from ``kimi.json``)."""
    kimi = next((json_object(d) for p, d in doc.sidecars.items() if Path(p).name == "kimi.json"), None)
    work_dirs = (kimi or {}).get("work_dirs")
    for entry in work_dirs if isinstance(work_dirs, list) else []:  # a kimi.json of another shape: no cwd
        path = entry.get("path") if isinstance(entry, dict) else None
        if (
            isinstance(path, str)
            and work_dir_key(path, str(entry.get("kaos") or "local")) == session_dir.parent.name
        ):
            return path
    return None


class KimiAdapter(DocumentAdapter):
    """Kimi CLI: ``~/.kimi/sessions/<md5>/<id>/context.jsonl`` (+ rotations, wire, state)."""

    slug = SLUG
    display_name = "Kimi CLI"
    parser_version = 3
    env_vars = ("KIMI_SHARE_DIR",)
    source_format = "json"

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [Path(env["KIMI_SHARE_DIR"]) if env.get("KIMI_SHARE_DIR") else home / ".kimi"]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        base = root / "sessions" if probe.is_dir(root / "sessions") else root
        for path in walk_files(base, ".jsonl"):
            folder = path.parent
            if path.name == "context.jsonl":
                subagent = folder.parent.name == "subagents"
                session_dir = folder.parent.parent if subagent else folder
                names = ["wire.jsonl", "meta.json" if subagent else "state.json"]
                extra = [folder / n for n in names] + [session_dir.parent.parent.parent / "kimi.json"]
                extra += [p for p in probe.glob(folder, "context_*.jsonl") if _ROTATION.match(p.name)]
            elif not _ROTATION.match(path.name) and path.name != "wire.jsonl" and folder.parent == base:
                extra = [folder.parent.parent / "kimi.json"]  # legacy sessions/<md5>/<id>.jsonl
            else:
                continue
            yield SourceRef(agent=SLUG, path=str(path), sidecars=probe.regular_files(extra))

    def sniff(self, name: str, head: bytes) -> float:
        first = head.split(b"\n", 1)[0]
        if b'"role":"_system_prompt"' in first.replace(b" ", b"") or b'"role": "_checkpoint"' in head:
            return 0.95
        if name.startswith("context") and name.endswith(".jsonl") and b'"role"' in first:
            return 0.6
        return 0.0

    def parse_document(self, ref: SourceRef, doc: Document) -> DocumentResult:
        return _Session(ref, doc).result()

    def resume_command(self, session: Session) -> str | None:
        return resume_line("kimi --session", session.id) if session.kind == "main" else None


def _header(ref: SourceRef, doc: Document, session_id: str, agent_id: str | None, wire: _Wire) -> Session:
    sid = session_id if agent_id is None else f"{session_id}/{agent_id}"
    p = Path(ref.path)
    session_dir = p.parent.parent.parent if agent_id else p.parent
    sidecar = {Path(k).name: json_object(v) for k, v in doc.sidecars.items() if k.endswith(".json")}
    state = sidecar.get("state.json") or {}
    meta = sidecar.get("meta.json") or {}
    title = as_str(state.get("custom_title")) or as_str(state.get("title"))
    if title is None and wire.prompts:
        title = wire.prompts[0][1][:50] or None
    header = Session(
        key=session_key(SLUG, sid),
        agent=SLUG,
        id=sid,
        title=title,
        cwd=_cwd(doc, session_dir if p.name == "context.jsonl" else p),
        started_at=parse_time(wire.first),
        ended_at=parse_time(wire.last),
        status=wire.status,
        status_evidence=wire.status_evidence,
        sources=[ref.path],
    )
    if agent_id is not None:
        header.kind = "subagent"
        header.parent_key = session_key(SLUG, session_id)
        header.subagent_type = as_str(meta.get("subagent_type"))
        header.description = as_str(meta.get("description"))
        if meta.get("status") in _SUBAGENT_STATUS:
            header.status = _SUBAGENT_STATUS[meta["status"]]
            header.status_evidence = f"meta.json:{meta['status']}"
    return header
