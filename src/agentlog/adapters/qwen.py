"""Qwen Code chat recordings (JSONL, append-only).

Spec (``shared/formats.md`` §8, ``shared/cost.md`` §4; QwenLM/qwen-code
``packages/core/src/services/chatRecordingService.ts@015346f1d5d7`` ``ChatRecord``;
fixtures ``shared/fixtures/qwen/`` from jazzyalex/agent-sessions):

Locations
    ``$QWEN_CODE_HOME`` (default ``~/.qwen``) ``/projects/<sanitized project>/chats/
    <sessionId>.jsonl``, and the older Gemini-CLI-style ``tmp/<project hash>/chats/
    *.jsonl``.  The file name is the session id (a record's ``sessionId`` can
    disagree: fixture ``…0002.jsonl``).

Older Gemini-style chats (``tmp/<sha256 of the project path>/chats/session-*.json``)
    Before the JSONL recorder, Qwen Code wrote Gemini CLI's ``ConversationRecord``
    document ``{sessionId, projectHash, startTime, lastUpdated, messages[{id,
    timestamp, type: "user"|"qwen", content, thoughts?, tokens?{input ⊇ cached,
    output, cached, thoughts, tool, total}, model?}]}`` — QwenLM/qwen-code
    ``packages/vscode-ide-companion/src/services/qwenSessionReader.ts`` (early
    version: ``QwenMessage``/``QwenSession``, ``~/.qwen/tmp/<projectHash>/chats``,
    files ``session-*.json``).  They are parsed by the Gemini CLI adapter's code
    (:class:`~agentlog.adapters.gemini_cli.GeminiCliAdapter`: same record, tokens
    and tool-call semantics) with ``qwen`` as the reply type; sessions keep the
    ``qwen`` slug.  No public sample exists (fixture written for agentlog).

Records (``{uuid, parentUuid, sessionId, timestamp, type, subtype?, cwd, version,
gitBranch?, message?: {role, parts[]}, usageMetadata?, model?, toolCallResult?,
systemPayload?}``)
    ``user`` (no subtype): the prompt — ``systemPayload.displayText`` is what was
    typed; other text parts of ``message.parts`` are injected hook context, kept as
    a ``meta`` message of their own; subtype ``mid_turn_user_message`` is a typed
    prompt too, ``notification`` and ``agent_message`` (another agent's reply, its
    ``displayText``) are ``meta``.  ``assistant``: parts ``text``,
    ``text`` with ``thought: true`` (reasoning), ``functionCall{id, name, args}``;
    one response can be written as several records with the same ``uuid`` (they
    are one message: parts appended, the usage copy kept).  ``tool_result``:
    ``functionResponse{id, name, response}`` parts merged into their call,
    ``toolCallResult.status`` (``error``/``cancelled``).  ``system``:
    ``chat_compression`` (compaction: ``systemPayload{info{originalTokenCount},
    compressedHistory[Content]}``, the summary is the text of that history),
    ``custom_title`` (title, last wins), ``slash_command``/``at_command`` (meta),
    ``rewind`` (moves the tree, see below); telemetry and state snapshots
    (``ui_telemetry``, ``session_model``, ``file_history_snapshot``,
    ``session_artifact_snapshot``, ``turn_result``, ``agent_*``) are ignored with
    reason ``ignored:system/<subtype>`` (their ``cwd`` is not the session's either).
    ``cwd``, ``gitBranch``, ``version``: the latest used record's.  Anything else is
    kept raw.
    Several JSON objects glued on one line (seen in fixture ``…0005.jsonl``) are
    split and read one by one.

Tree
    ``uuid``/``parentUuid`` form a tree like Pi's: the transcript is the path from
    the last record back to the root; messages on a branch left behind (after a
    ``rewind``, whose ``parentUuid`` is the rewind target) are flagged ``abandoned``.

Tokens (Gemini semantics, inclusive)
    ``usageMetadata{promptTokenCount ⊇ cachedContentTokenCount, candidatesTokenCount,
    thoughtsTokenCount}``: input = prompt − cached, cache read = cached (counted
    once — ccusage bills it twice), output = candidates + thoughts, reasoning =
    thoughts.  ``ui_telemetry`` records repeat the same numbers and are ignored.
    No cost is recorded.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePath
from typing import Any, ClassVar, Literal

from agentlog.adapters._tree import TreeParser, TreeState
from agentlog.adapters._values import as_dict, as_int, as_str, parse_time
from agentlog.adapters.base import JsonlAdapter, SourceRef, ToolOutput, resume_line
from agentlog.adapters.gemini_cli import (
    GeminiCliAdapter,
    function_output,
    gemini_parts,
    legacy_chats,
    tool_name,
)
from agentlog.model import (
    CompactionPart,
    Message,
    Part,
    Session,
    TextPart,
    ToolCallPart,
    ToolResult,
    Usage,
)
from agentlog.readers import walk_files
from agentlog.rules import session_key

SLUG = "qwen"

IGNORED_SYSTEM = frozenset(
    {"ui_telemetry", "session_model", "file_history_snapshot", "session_artifact_snapshot", "turn_result"}
)
_TOOL_STATUS = {"error": "error", "cancelled": "interrupted"}
_SPLITTER = json.JSONDecoder()


def usage_of(meta: Any) -> Usage | None:
    """Exclusive buckets from a Gemini-style ``usageMetadata`` (``None`` if absent or empty)."""
    if not isinstance(meta, dict) or not meta:
        return None
    prompt, cached = as_int(meta.get("promptTokenCount")), as_int(meta.get("cachedContentTokenCount"))
    thoughts = as_int(meta.get("thoughtsTokenCount"))
    return Usage(
        input_tokens=max(0, prompt - cached),
        cache_read_tokens=cached,
        output_tokens=as_int(meta.get("candidatesTokenCount")) + thoughts,
        reasoning_tokens=thoughts,
    )


def compaction(payload: dict[str, Any]) -> CompactionPart:
    """The compaction part of a ``chat_compression`` record's ``systemPayload``."""
    history = payload.get("compressedHistory")
    texts = [
        part["text"]
        for content in (history if isinstance(history, list) else [])
        if isinstance(content, dict)
        for part in content.get("parts") or []
        if isinstance(part, dict) and isinstance(part.get("text"), str)
    ]
    info = as_dict(payload.get("info"))
    before = info.get("originalTokenCount")
    return CompactionPart(
        summary="\n\n".join(texts),
        tokens_before=before if isinstance(before, int) and not isinstance(before, bool) else None,
    )


def split_glued(line: bytes) -> list[tuple[int, bytes]]:
    """``(byte offset, bytes)`` of each JSON value in a line holding several glued
    together (``{…}{…}``); ``[]`` when the line is not such a sequence."""
    try:
        text = line.decode()
    except UnicodeDecodeError:
        return []
    out, pos = [], 0
    while pos < len(text):
        try:
            _, end = _SPLITTER.raw_decode(text, pos)
        except ValueError:
            return []
        out.append((len(text[:pos].encode()), text[pos:end].encode()))
        pos = end
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return out if len(out) > 1 else []


class QwenParser(TreeParser[TreeState]):
    """Parses one Qwen Code chat file."""

    state_type = TreeState
    id_field = "uuid"
    parent_field = "parentUuid"

    def initial_state(self) -> TreeState:
        sid = PurePath(self.ref.path).name.removesuffix(".jsonl")
        return TreeState(
            header=Session(key=session_key(SLUG, sid), agent=SLUG, id=sid, sources=[self.ref.path])
        )

    @property
    def session(self) -> Session:
        assert self.state.header is not None
        return self.state.header

    def feed(self, line: bytes, offset: int) -> None:
        pieces = split_glued(line) if line.count(b"}{") else []
        for start, piece in pieces:
            super().feed(piece, offset + start)
        if not pieces:
            super().feed(line, offset)

    def handle(self, record: dict[str, Any], offset: int) -> None:
        kind, subtype = record.get("type"), record.get("subtype")
        if kind == "system" and (subtype in IGNORED_SYSTEM or str(subtype).startswith("agent_")):
            self._tree(record, None)
            self.diagnostics.skip(f"ignored:system/{subtype}")
            return
        session = self.session
        session.cwd = as_str(record.get("cwd")) or session.cwd
        session.git_branch = as_str(record.get("gitBranch")) or session.git_branch
        session.agent_version = as_str(record.get("version")) or session.agent_version
        payload = as_dict(record.get("systemPayload"))
        if kind == "user" and subtype in (None, "mid_turn_user_message"):
            self._prompt(record, payload, offset)
        elif kind == "user" and subtype in ("notification", "agent_message"):
            typed = as_str(payload.get("displayText"))
            parts: list[Part] = [TextPart(text=typed)] if typed else self._parts(record)
            self._emit(record, offset, "user", parts, ["meta"])
        elif kind == "assistant":
            message = as_dict(record.get("message"))
            parts = self._assistant_parts(message.get("parts"), record, offset)
            usage = usage_of(record.get("usageMetadata"))
            self._emit(record, offset, "assistant", parts, [], as_str(record.get("model")), usage)
        elif kind == "tool_result":
            self._tool_result(record, offset)
        elif kind == "system" and subtype == "chat_compression":
            self._emit(record, offset, "system", [compaction(payload)], ["compaction_summary"])
        elif kind == "system" and subtype == "custom_title":
            self._tree(record, None)
            self.state.title = as_str(payload.get("customTitle")) or self.state.title
            self.diagnostics.use()
        elif kind == "system" and subtype in ("slash_command", "at_command"):
            text = as_str(payload.get("rawCommand")) or ""
            self._emit(record, offset, "system", [TextPart(text=text)], ["meta"])
        elif kind == "system" and subtype == "rewind":
            self._tree(record, None)
            self.diagnostics.use()
        else:
            self._unknown(record, offset, f"{kind}/{subtype}" if subtype else str(kind))

    @staticmethod
    def _parts(record: dict[str, Any]) -> list[Part]:
        message = record.get("message")
        return gemini_parts(message.get("parts")) if isinstance(message, dict) else []

    def _prompt(self, record: dict[str, Any], payload: dict[str, Any], offset: int) -> None:
        parts = self._parts(record)
        typed = as_str(payload.get("displayText"))
        if typed is None:
            prompt, context = parts, []
        else:
            prompt = [TextPart(text=typed)]
            context = [p for p in parts if not (isinstance(p, TextPart) and p.text == typed)]
        if not prompt and not context:
            self._tree(record, None)
            self.diagnostics.skip("empty_message")
            return
        text = "\n\n".join(p.text for p in prompt if isinstance(p, TextPart)).strip()
        self.state.first_prompt = self.state.first_prompt or text or None
        self._emit(record, offset, "user", prompt, [])
        if context:
            message = Message(
                id=f"{as_str(record.get('uuid')) or f'{self.session.id}@{offset}'}#context",
                role="user",
                timestamp=parse_time(record.get("timestamp")),
                parts=context,
                flags=["meta"],
                offset=offset,
            )
            self.emit(self.session.id, message)

    @staticmethod
    def _assistant_parts(blocks: Any, record: dict[str, Any], offset: int) -> list[Part]:
        parts: list[Part] = []
        for index, block in enumerate(blocks if isinstance(blocks, list) else []):
            call = block.get("functionCall") if isinstance(block, dict) else None
            if isinstance(call, dict):
                raw = str(call.get("name") or "")
                call_id = as_str(call.get("id")) or f"{record.get('uuid') or offset}#{index}"
                parts.append(
                    ToolCallPart(call_id=call_id, tool=tool_name(raw), raw_name=raw, input=call.get("args"))
                )
            else:
                parts.extend(gemini_parts([block]))
        return parts

    def _tool_result(self, record: dict[str, Any], offset: int) -> None:
        self._tree(record, None)
        message = as_dict(record.get("message"))
        outcome = as_dict(record.get("toolCallResult"))
        status = _TOOL_STATUS.get(str(outcome.get("status")), "completed")
        when = parse_time(record.get("timestamp"))
        responses = [
            b
            for b in message.get("parts") or []
            if isinstance(b, dict) and isinstance(b.get("functionResponse"), dict)
        ]
        if not responses:
            self.diagnostics.skip("empty_message")
            return
        self.diagnostics.use()
        for block in responses:
            response = block["functionResponse"]
            call_id = as_str(response.get("id")) or as_str(outcome.get("callId")) or ""
            result = ToolResult(
                output=function_output([block]),
                is_error=status == "error",
                status=status,  # type: ignore[arg-type]
                ended_at=when,
                structured={"resultDisplay": outcome["resultDisplay"]}
                if "resultDisplay" in outcome
                else None,
            )
            self.emit(
                self.session.id, ToolOutput(call_id=call_id, result=result, timestamp=when, offset=offset)
            )


class QwenAdapter(JsonlAdapter, GeminiCliAdapter):
    """Qwen Code: ``~/.qwen/projects/<project>/chats/<id>.jsonl`` (line by line) and
    the older ``~/.qwen/tmp/<hash>/chats/session-*.json`` (whole, Gemini CLI's parser)."""

    slug = SLUG
    display_name = "Qwen Code"
    parser_version = 4
    env_vars = ("QWEN_CODE_HOME",)
    assistant_types: ClassVar[tuple[str, ...]] = ("qwen", "gemini", "model")

    def format_of(self, ref: SourceRef) -> Literal["json", "sqlite", "jsonl"]:
        return "json" if ref.path.endswith(".json") else "jsonl"

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        base = Path(env.get("QWEN_CODE_HOME") or home / ".qwen")
        return [base / "projects", base / "tmp"]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        for path in walk_files(root, ".jsonl"):
            if "chats" in path.parts or root.name not in ("projects", "tmp"):
                yield SourceRef(agent=SLUG, path=str(path))
        for path in legacy_chats(root):
            yield SourceRef(agent=SLUG, path=str(path))

    def sniff(self, name: str, head: bytes) -> float:
        if b'"projectHash"' in head and (b'"type":"qwen"' in head or b'"type": "qwen"' in head):
            return 0.97  # above Gemini CLI's 0.95 for the same document shape
        if b'"parentUuid"' not in head or b'"sessionId"' not in head:
            return 0.0
        # Above Claude Code's 0.95: Qwen records carry the same envelope keys.
        if b'"role":"model"' in head or b'"systemPayload"' in head or b'"usageMetadata"' in head:
            return 0.98
        return 0.97 if b'"parts":[' in head else 0.0

    def new_parser(self, ref: SourceRef, sidecars: Mapping[str, bytes]) -> QwenParser:
        return QwenParser(ref, sidecars)

    def resume_command(self, session: Session) -> str | None:
        """``qwen --resume ID``; none for an older ``.json`` chat (the current CLI
        resumes only what it finds under ``projects/``)."""
        if any(source.endswith(".json") for source in session.sources):
            return None
        return resume_line("qwen --resume", session.id)
