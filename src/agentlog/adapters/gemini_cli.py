"""Gemini CLI chat recordings (legacy JSON documents and the JSONL upsert log).

Spec (``shared/formats.md`` §4, ``shared/cost.md`` §4; google-gemini/gemini-cli
``packages/core/src/services/chatRecordingService.ts`` and ``chatRecordingTypes.ts``
@5411f113cafa; ``packages/core/src/utils/paths.ts`` for ``GEMINI_CLI_HOME``):

Locations
    ``$GEMINI_CLI_HOME/.gemini/tmp`` (``GEMINI_CLI_HOME`` replaces the home folder;
    default ``~/.gemini/tmp``): ``<project hash or slug>/chats/session-<time>-<id8>.json``
    (legacy) or ``.jsonl`` (current); subagent chats in ``chats/<parent session id>/
    <session id>.jsonl``.  A ``.json`` with a ``.jsonl`` of the same name beside it was
    migrated (the CLI re-writes it as ``.jsonl`` on resume): only the ``.jsonl`` is
    read.  ``logs.json`` (prompt history) and ``checkpoint-*.json`` (``/chat save``)
    duplicate the chats and are not sources.

Formats
    Legacy ``session-*.json`` = ``ConversationRecord{sessionId, projectHash, startTime,
    lastUpdated, messages[], summary?, kind?}``.  An older drift shape with
    ``history[{role, parts, ts}]`` instead of ``messages`` is read too.
    ``session-*.jsonl``: line 1 the metadata (``sessionId, projectHash, startTime,
    lastUpdated, kind``); then ``MessageRecord`` lines, ``{"$set": {...}}`` metadata
    patches (a ``$set`` holding ``messages`` replaces the whole list) and
    ``{"$rewindTo": "<message id>"}`` (drops that message and everything after it
    from the transcript; a billed response among them is kept hidden, flagged
    ``abandoned``, with its usage).

    **Why a document, not a resumable line parser:** the log is appended to, but
    its meaning is upserts — ``pushMessage`` re-appends the *whole* message each
    time it changes (tokens and tool results arrive later) — and ``$rewindTo``/
    ``$set messages`` delete or replace what was already written.  Assembled
    fragments can only grow (parts are appended, never replaced), so emitting one
    fragment per line would duplicate every updated message and could not honour
    a rewind.  Chats are small (one conversation), so the file is read whole
    (``source_format = "json"``) and folded: last write wins per ``id``, a message
    keeps the place of its first write.

Messages (``MessageRecord{id, timestamp, type, content, displayContent?}``)
    ``type``: ``user`` → user (``content`` is a string or Gemini ``Part`` list:
    ``text``, ``inlineData``/``fileData`` → file parts); ``gemini`` (``model`` in
    older files) → assistant with ``thoughts[{subject, description}]`` as reasoning
    summaries, ``toolCalls[{id, name, args, result[functionResponse], status,
    resultDisplay}]`` as tool calls with their results (``status`` ``error`` →
    error, ``cancelled`` → interrupted), ``model``, ``tokens``; ``info``/``warning``
    → meta system notices; ``error`` → system message flagged ``api_error``.
    Other types are kept raw.  Message ids are ``<session id>:<record id>``
    (``<session id>@<n>`` without one): record ids are unique within a chat only
    (samples reuse ``m1``, ``m2`` …), and no chat replays another's messages, so
    scoping them keeps unrelated messages from being taken for replayed copies.
    A ``$set`` of ``messages`` rewrites the transcript (``loadConversationRecord``
    clears and rebuilds it); a billed response it leaves out is kept, flagged
    ``abandoned`` (hidden), so its usage is never lost.  Title: ``summary``.
    cwd: the ``.project_root`` marker the CLI writes in the project's folder
    (``<tmp>/<slug>/.project_root``, the project path; ``config/projectRegistry.ts``
    ``PROJECT_ROOT_FILE``), read as a sidecar.  No cost is recorded.

Tokens (Gemini API semantics, inclusive)
    ``tokens{input ⊇ cached, output, thoughts, tool, total}`` (``recordMessageTokens``:
    ``promptTokenCount``, ``cachedContentTokenCount``, …, ``totalTokenCount``): input =
    ``input − cached + tool`` (tool-use prompt tokens are input), cache read =
    ``cached``, output = ``output + thoughts`` (thoughts are billed as output),
    reasoning = ``thoughts``.  A record whose ``total`` is ``input + cached +
    output + thoughts + tool`` counts ``input`` without the cache (a writer that
    subtracted it already): ``cached`` is not subtracted again.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path, PurePath
from typing import Any, ClassVar

from agentlog import probe
from agentlog.adapters._json import parse_object, read_document
from agentlog.adapters._tools import normalise_tool
from agentlog.adapters._values import as_dict, as_int, as_str, parse_time
from agentlog.adapters.base import (
    Document,
    DocumentAdapter,
    DocumentParser,
    DocumentResult,
    RecordGuard,
    SourceRef,
    resume_line,
)
from agentlog.model import (
    Diagnostics,
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
from agentlog.readers import walk_files
from agentlog.rules import session_key

SLUG = "gemini_cli"

TOOL_NAMES = {
    "run_shell_command": "bash",
    "read_file": "read",
    "read_many_files": "read",
    "write_file": "write",
    "replace": "edit",
    "edit": "edit",
    "search_file_content": "grep",
    "grep": "grep",
    "glob": "glob",
    "list_directory": "list",
    "web_fetch": "web_fetch",
    "google_web_search": "web_search",
    "write_todos": "todo",
    "save_memory": "memory",
}
"""Gemini CLI built-in tool names → agentlog's; anything else is kept (MCP tools are
``server__tool`` in Gemini and become ``mcp__server__tool``)."""

_TOOL_STATUS = {"success": "completed", "error": "error", "cancelled": "interrupted"}


def tool_name(raw: str) -> str:
    """Normalised name of a Gemini (or Qwen) tool ``raw``."""
    if raw.startswith("mcp__") or raw in TOOL_NAMES or "__" not in raw.strip("_"):
        return normalise_tool(raw, TOOL_NAMES)
    return f"mcp__{raw}"


def usage_of(tokens: Any) -> Usage | None:
    """Exclusive buckets from a Gemini ``tokens`` object (``None`` if absent)."""
    if not isinstance(tokens, dict):
        return None
    prompt, cached = as_int(tokens.get("input")), as_int(tokens.get("cached"))
    thoughts, tool, output = (
        as_int(tokens.get("thoughts")),
        as_int(tokens.get("tool")),
        as_int(tokens.get("output")),
    )
    if cached and as_int(tokens.get("total")) == prompt + cached + output + thoughts + tool:
        cached_apart = prompt  # its total counts cached beside input: input already excludes it
    else:
        cached_apart = max(0, prompt - cached)
    return Usage(
        input_tokens=cached_apart + tool,
        cache_read_tokens=cached,
        output_tokens=output + thoughts,
        reasoning_tokens=thoughts,
    )


def gemini_parts(content: Any) -> list[Part]:
    """Parts of a Gemini ``PartListUnion`` (string, part, or list of parts); thought
    parts (``thought: true``) become reasoning, function calls/responses are left to
    the caller (Qwen) and kept raw here."""
    if isinstance(content, str):
        return [TextPart(text=content)] if content else []
    if isinstance(content, dict):
        content = [content]
    parts: list[Part] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            parts.append(UnknownPart(raw=block))
        elif isinstance(block.get("text"), str):
            text = block["text"]
            parts.append(ReasoningPart(text=text) if block.get("thought") is True else TextPart(text=text))
        elif isinstance(block.get("inlineData"), dict) or isinstance(block.get("fileData"), dict):
            data = as_dict(block.get("inlineData") or block.get("fileData"))
            parts.append(
                FilePart(media_type=str(data.get("mimeType") or ""), ref=str(data.get("fileUri") or ""))
            )
        else:
            parts.append(UnknownPart(raw=block))
    return parts


def function_output(result: Any) -> Any:
    """The output of a tool result given as ``functionResponse`` parts: the
    ``response.output`` text when there is one, else the response objects."""
    responses = [
        b["functionResponse"].get("response")
        for b in (result if isinstance(result, list) else [result])
        if isinstance(b, dict) and isinstance(b.get("functionResponse"), dict)
    ]
    if len(responses) == 1 and isinstance(responses[0], dict) and isinstance(responses[0].get("output"), str):
        return responses[0]["output"]
    return responses or result


class _Chat:
    """One chat folded from its records: metadata and messages by id (ordered)."""

    def __init__(self) -> None:
        self.meta: dict[str, Any] = {}
        self.messages: dict[str, dict[str, Any]] = {}
        self.anonymous = 0
        self.diagnostics = Diagnostics()

    def upsert(self, record: dict[str, Any]) -> None:
        key = as_str(record.get("id"))
        if key is None:
            self.anonymous += 1
            key = f"@{self.anonymous}"
        if key in self.messages:
            self.diagnostics.skip("superseded:message")
        self.messages[key] = record

    def replace(self, records: list[Any]) -> None:
        """A ``$set`` of ``messages`` (a checkpoint written after history
        compression): the transcript is ``records``, but a billed response it
        leaves out keeps its usage — as a message flagged ``abandoned`` in its
        place, or as the tokens of the rewritten copy that lost them."""
        old = self.messages
        self.messages = {}
        for record in records:
            if isinstance(record, dict):
                self.upsert(record)
        kept: dict[str, dict[str, Any]] = {}
        for key, record in old.items():
            new = self.messages.get(key)
            if not isinstance(record.get("tokens"), dict):
                self.diagnostics.skip("superseded:message")
            elif new is None:
                kept[key] = {**record, "$compressed": True}  # counted as the message it makes
            else:
                if not isinstance(new.get("tokens"), dict):
                    new["tokens"] = record["tokens"]
                self.diagnostics.skip("superseded:message")
        self.messages = {**kept, **self.messages}

    def rewind(self, target: str) -> None:
        """A ``$rewindTo``: message ``target`` and those after it leave the
        transcript, but a billed response among them keeps its usage (as in
        :meth:`replace`: a message flagged ``abandoned`` in its place, under the key
        ``<id>#rewound``, so a later message of that id is a new one); cost.md §0."""
        keys = list(self.messages)
        if target not in keys:
            return
        gone = 0
        for key in keys[keys.index(target) :]:
            record = self.messages[key]
            if record.get("$compressed") is True:
                continue  # left out before: kept as it is
            del self.messages[key]
            if isinstance(record.get("tokens"), dict):
                self.messages[f"{key}#rewound"] = {**record, "$compressed": True}
            else:
                gone += 1
        if gone:
            self.diagnostics.skip("rewound:message", gone)

    def feed(self, record: dict[str, Any]) -> None:
        """Apply one JSONL record (metadata, message, ``$set`` or ``$rewindTo``)."""
        if "$rewindTo" in record:
            self.diagnostics.use()
            self.rewind(str(record["$rewindTo"]))
        elif isinstance(record.get("$set"), dict):
            self.diagnostics.use()
            patch = record["$set"]
            if isinstance(patch.get("messages"), list):
                self.replace(patch["messages"])
            self.meta.update({k: v for k, v in patch.items() if k != "messages"})
        elif "type" in record and ("id" in record or "content" in record):
            self.upsert(record)
        elif not self.meta and "sessionId" in record:
            self.diagnostics.use()
            self.meta.update(record)
        else:
            self.diagnostics.skip("malformed:record")


def fold_document(data: bytes, log: bool) -> _Chat:
    """Fold a ``.jsonl`` log (``log``) or read a legacy ``.json`` chat (see the module
    docstring); bad records are counted in the chat's diagnostics."""
    chat = _Chat()
    if not log:
        whole = read_document(data, chat.diagnostics, as_object=True)
        if whole is None:
            return chat
        chat.diagnostics.use()
        chat.meta = {k: v for k, v in whole.items() if k not in ("messages", "history")}
        messages = whole.get("messages")
        if not isinstance(messages, list) and isinstance(whole.get("history"), list):
            messages = [
                {**h, "type": h.get("role"), "timestamp": h.get("ts")}
                for h in whole["history"]
                if isinstance(h, dict)
            ]
        for record in messages if isinstance(messages, list) else []:
            if isinstance(record, dict):
                chat.upsert(record)
            else:
                chat.diagnostics.skip("not_an_object")
        return chat
    for line in data.split(b"\n"):
        if line.strip():
            with RecordGuard([], chat.diagnostics):
                chat.feed(parse_object(line))
    return chat


PROJECT_ROOT_FILE = ".project_root"
"""The marker holding a project folder's path, in ``<tmp>/<slug>/`` (gemini-cli
``packages/core/src/config/projectRegistry.ts``)."""


def _marker(path: Path) -> tuple[str, ...]:
    """The ``.project_root`` marker of the project folder holding chat ``path``
    (the folder above its ``chats`` folder), when it is a regular file."""
    parts = path.parts
    folder = Path(*parts[: len(parts) - 1 - parts[::-1].index("chats")]) if "chats" in parts else path.parent
    return probe.regular_files([folder / PROJECT_ROOT_FILE])


def project_root(sidecars: Mapping[str, bytes]) -> str | None:
    """The project path a ``.project_root`` marker among ``sidecars`` holds."""
    for path, data in sidecars.items():
        if PurePath(path).name == PROJECT_ROOT_FILE:
            return data.decode("utf-8", "replace").strip() or None
    return None


def legacy_chats(root: Path) -> Iterator[Path]:
    """The legacy ``session-*.json`` chats under ``root`` that were not migrated to a
    ``.jsonl`` of the same name (the CLI does so on resume; the ``.jsonl`` is read)."""
    for path in walk_files(root, ".json"):
        if path.name.startswith("session-") and not probe.exists(path.with_name(path.name + "l")):
            yield path


class GeminiCliAdapter(DocumentAdapter):
    """Gemini CLI: ``~/.gemini/tmp/<project>/chats/session-*.json[l]``."""

    slug = SLUG
    display_name = "Gemini CLI"
    parser_version = 5  # 5: a rewound billed response keeps its usage
    env_vars = ("GEMINI_CLI_HOME",)
    source_format = "json"
    assistant_types: ClassVar[tuple[str, ...]] = ("gemini", "model")
    """``MessageRecord.type`` values of model replies (forks name them after themselves)."""

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [Path(env.get("GEMINI_CLI_HOME") or home) / ".gemini" / "tmp"]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        for path in walk_files(root, ".jsonl"):
            if "chats" in path.parts or path.name.startswith("session-"):
                yield SourceRef(agent=self.slug, path=str(path), sidecars=_marker(path))
        for path in legacy_chats(root):
            yield SourceRef(agent=self.slug, path=str(path), sidecars=_marker(path))

    def sniff(self, name: str, head: bytes) -> float:
        if b'"projectHash"' in head and b'"sessionId"' in head:
            return 0.95
        if b'"$rewindTo"' in head or b'"$set"' in head:
            return 0.8
        if b'"type":"gemini"' in head or b'"type": "gemini"' in head:
            return 0.7
        return 0.6 if b'"lastUpdated"' in head and (b'"messages"' in head or b'"history"' in head) else 0.0

    def parse_document(self, ref: SourceRef, doc: Document) -> DocumentResult:
        return _ChatParse(self, ref, doc).result()

    def _message(self, record: dict[str, Any], mid: str, diagnostics: Diagnostics) -> Message:
        kind = record.get("type")
        when = parse_time(record.get("timestamp"))
        content = record.get("content", record.get("parts"))
        if kind == "user":
            diagnostics.use()
            return Message(id=mid, role="user", timestamp=when, parts=gemini_parts(content))
        if kind in self.assistant_types:
            diagnostics.use()
            parts: list[Part] = []
            for thought in record.get("thoughts") or []:
                if isinstance(thought, dict):
                    subject, text = as_str(thought.get("subject")), str(thought.get("description") or "")
                    parts.append(ReasoningPart(summary=f"{subject}: {text}" if subject else text))
            parts += gemini_parts(content)
            for call in record.get("toolCalls") or []:
                if isinstance(call, dict):
                    parts.append(GeminiCliAdapter._tool_call(call, f"{mid}#{len(parts)}"))
            return Message(
                id=mid,
                role="assistant",
                timestamp=when,
                model=as_str(record.get("model")),
                parts=parts,
                usage=usage_of(record.get("tokens")),
            )
        if kind in ("info", "warning", "error"):
            diagnostics.use()
            flags: list[MessageFlag] = ["api_error"] if kind == "error" else ["meta"]
            return Message(id=mid, role="system", timestamp=when, parts=gemini_parts(content), flags=flags)
        diagnostics.unknown(str(kind) if kind is not None else "<none>")
        return Message(
            id=mid, role="system", timestamp=when, parts=[UnknownPart(raw=record)], flags=["unknown"]
        )

    @staticmethod
    def _tool_call(call: dict[str, Any], fallback_id: str) -> ToolCallPart:
        raw = str(call.get("name") or "")
        status = _TOOL_STATUS.get(str(call.get("status")), "pending")
        result = None
        if status != "pending" or "result" in call:
            result = ToolResult(
                output=function_output(call.get("result")) if "result" in call else call.get("resultDisplay"),
                is_error=status == "error",
                status="completed" if status == "pending" else status,  # type: ignore[arg-type]
                ended_at=parse_time(call.get("timestamp")),
                structured={"resultDisplay": call["resultDisplay"]} if "resultDisplay" in call else None,
            )
        return ToolCallPart(
            call_id=as_str(call.get("id")) or fallback_id,
            tool=tool_name(raw),
            raw_name=raw,
            input=call.get("args"),
            result=result,
        )

    def resume_command(self, session: Session) -> str | None:
        return resume_line("gemini --resume", session.id) if session.kind == "main" else None


class _ChatParse(DocumentParser):
    """One chat (a ``.jsonl`` log folded, or a legacy ``.json`` document); each folded
    message is one record."""

    def __init__(self, adapter: GeminiCliAdapter, ref: SourceRef, doc: Document) -> None:
        super().__init__(ref, doc)
        self.adapter = adapter
        self.header: Session | None = None

    def parse(self) -> None:
        slug, path = self.adapter.slug, PurePath(self.ref.path)
        chat = fold_document(self.doc.data, log=self.ref.path.endswith(".jsonl"))
        self.diagnostics = chat.diagnostics
        meta = chat.meta
        sid = as_str(meta.get("sessionId")) or path.stem
        header = Session(key=session_key(slug, sid), agent=slug, id=sid, sources=[self.ref.path])
        header.title = as_str(meta.get("summary"))
        header.cwd = project_root(self.doc.sidecars)
        header.started_at = parse_time(meta.get("startTime") or meta.get("start_time"))
        header.ended_at = parse_time(meta.get("lastUpdated"))
        if path.parent.name != "chats" and path.parent.parent.name == "chats":
            header.kind = "subagent"
            header.parent_key = session_key(slug, path.parent.name)
        elif meta.get("kind") == "subagent":
            header.kind = "subagent"
        for n, (key, record) in enumerate(chat.messages.items()):
            with self.guard():
                mid = f"{sid}:{key}" if not key.startswith("@") else f"{sid}@{n}"
                message = self.adapter._message(record, mid, self.diagnostics)
                if record.get("$compressed") is True:
                    message.flag("abandoned")  # left out by a $set of messages or a rewind, its usage kept
                self.emit(sid, message)
                if (
                    header.title is None
                    and message.role == "user"
                    and not message.flags
                    and message.text.strip()
                ):
                    header.title = message.text.strip()
        if chat.messages or self.diagnostics.records_total:
            header.diagnostics = self.diagnostics
            self.header = header

    def headers(self) -> list[Session]:
        return [self.header] if self.header is not None else []
