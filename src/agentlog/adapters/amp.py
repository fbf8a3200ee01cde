"""Amp (Sourcegraph's coding agent) threads: one JSON document per thread, rewritten
in place.

Spec (``shared/formats.md`` §13; ryoppippi/ccusage ``rust/crates/ccusage/src/adapter/amp/
parser.rs``; kenn-io/agentsview ``internal/parser/amp.go`` and ``amp_test.go``):

Location
    ``${AMP_DATA_DIR:-~/.local/share/amp}/threads/T-<uuid>.json`` (the variable is the
    override ccusage honours).

Thread ``{v, id, created (epoch ms), title?, env{initial{trees[{displayName, uri}]}},
meta{traces[{name, startTime, endTime}]}, messages[…], usageLedger?{events[…]}}``
    ``id`` (= file stem) → session id; ``created`` → start; the last trace ``endTime`` →
    end; ``env.initial.trees[0].uri`` (``file://…``) → ``cwd``; ``title`` (else the first
    prompt) → title.
    ``messages[{role, messageId, content[], usage?}]``: Anthropic-style content
    (``text``, ``thinking``, ``tool_use`` …).  Tool results come as Amp blocks
    ``{type:"tool_result", toolUseID, run{status:"done"|"error"|"cancelled", result?,
    error{message}?}}`` (``result`` kept as the output; ``error`` → ``is_error``;
    ``cancelled`` → ``interrupted``) or as the canonical ``tool_use_id``/``content``.
    Message ids are per thread (``messageId`` 0, 1 …): stored as ``<threadId>:<messageId>``.

Tokens (per inference, exclusive)
    ``messages[].usage{model, timestamp, inputTokens, outputTokens,
    cacheCreationInputTokens, cacheReadInputTokens, totalInputTokens, credits?}`` —
    ``totalInputTokens = inputTokens + cacheCreationInputTokens + cacheReadInputTokens``
    (Anthropic semantics).  For OpenAI models (``gpt-*``) Amp reports ``inputTokens`` 0 and
    files the uncached prompt under ``cacheCreationInputTokens``; that bucket is uncached
    input there (agentsview ``ampFoldsCacheCreationIntoInput``).  ``usage.model`` and
    ``usage.timestamp`` date the message.  Older threads keep usage only in
    ``usageLedger.events[{id, timestamp, model, tokens{input, output, total}, credits,
    toMessageId}]``: used when no message carries ``usage``, on the message
    ``toMessageId`` names (else a hidden ``synthetic`` carrier).  An event with only
    ``tokens.total`` (no ``input``/``output`` split; :func:`ledger_usage`) is kept,
    its total counted as input and flagged ``usage_partial``, never dropped.  Credits are not money
    and are not kept.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePath
from typing import Any, ClassVar, Literal

from agentlog.adapters._content import content_parts, tool_output, unknown_message
from agentlog.adapters._json import read_document
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
from agentlog.model import Message, MessageFlag, Session, TextPart, ToolResult, Usage
from agentlog.readers import walk_files
from agentlog.rules import session_key

SLUG = "amp"

TOOL_NAMES = {
    "Bash": "bash",
    "Read": "read",
    "create_file": "write",
    "edit_file": "edit",
    "Grep": "grep",
    "glob": "glob",
    "list_directory": "list",
    "web_search": "web_search",
    "read_web_page": "web_fetch",
    "Task": "task",
    "todo_write": "todo",
    "todo_read": "todo",
}
"""Amp tool names → agentlog's normalised names (others: snake_case)."""

_RUN_STATUS = {"done": "completed", "error": "error", "cancelled": "interrupted"}


def tool_name(raw: str, tool_input: Any = None) -> str:
    """Normalised name of Amp tool ``raw``."""
    return normalise_tool(raw, TOOL_NAMES)


def usage_of(usage: dict[str, Any]) -> Usage:
    """Exclusive buckets from a ``messages[].usage`` object (see the module docstring)."""
    model = str(usage.get("model") or "")
    write = as_int(usage.get("cacheCreationInputTokens"))
    folded = model.startswith("gpt-")
    return Usage(
        input_tokens=as_int(usage.get("inputTokens")) + (write if folded else 0),
        cache_read_tokens=as_int(usage.get("cacheReadInputTokens")),
        cache_write_5m_tokens=0 if folded else write,
        output_tokens=as_int(usage.get("outputTokens")),
    )


def _amp_output(block: dict[str, Any]) -> ToolOutput:
    """An Amp ``{toolUseID, run{status, result, error}}`` block as a tool output."""
    run = as_dict(block.get("run"))
    status = _RUN_STATUS.get(str(run.get("status")), "pending")
    error = as_dict(run.get("error"))
    output = run.get("result") if "result" in run else error.get("message")
    return ToolOutput(
        call_id=str(block.get("toolUseID") or ""),
        result=ToolResult(output=output, is_error=status == "error", status=status),  # type: ignore[arg-type]
    )


class _ThreadParse(DocumentParser):
    """One thread file; each message and each ledger event is one record."""

    def __init__(self, ref: SourceRef, doc: Document) -> None:
        super().__init__(ref, doc)
        self.data = doc.data
        sid = PurePath(ref.path).stem
        self.header = Session(key=session_key(SLUG, sid), agent=SLUG, id=sid, sources=[ref.path])

    def parse(self) -> None:
        thread = read_document(self.data, self.diagnostics)
        if isinstance(thread, dict):
            self._thread(thread)
        elif thread is not None:
            self.diagnostics.skip("not_a_thread")

    def headers(self) -> list[Session]:
        self.header.diagnostics = self.diagnostics
        return [self.header]

    def _thread(self, thread: dict[str, Any]) -> None:
        header = self.header
        header.title = as_str(thread.get("title"))
        header.started_at = parse_time(thread.get("created"))
        meta = as_dict(thread.get("meta"))
        traces = as_list(meta.get("traces"))
        ends = [parse_time(t.get("endTime")) for t in traces if isinstance(t, dict)]
        header.ended_at = next((t for t in reversed(ends) if t is not None), None)
        env = as_dict(thread.get("env"))
        initial = as_dict(env.get("initial"))
        trees = as_list(initial.get("trees"))
        uri = as_str(trees[0].get("uri")) if trees and isinstance(trees[0], dict) else None
        if uri and uri.startswith("file://"):
            header.cwd = urllib.parse.unquote(urllib.parse.urlparse(uri).path)
        messages = as_list(thread.get("messages"))
        by_number: dict[int, Message] = {}
        for index, entry in enumerate(messages):
            with self.guard():
                message = self._message(entry, index)
                if message is not None and isinstance(entry.get("messageId"), int):
                    by_number[entry["messageId"]] = message
        if not any(isinstance(m, dict) and isinstance(m.get("usage"), dict) for m in messages):
            self._ledger(thread.get("usageLedger"), by_number)

    def _message(self, entry: Any, index: int) -> Message | None:
        role = entry.get("role") if isinstance(entry, dict) else None
        if role not in ("user", "assistant"):
            kind = entry.get("role") if isinstance(entry, dict) else type(entry).__name__
            self.diagnostics.unknown(str(kind))
            self._emit(unknown_message(f"{self.header.id}@{index}", entry))
            return None
        number = entry.get("messageId")
        mid = f"{self.header.id}:{number}" if isinstance(number, int | str) else f"{self.header.id}@{index}"
        parts, results = content_parts(entry.get("content"), tool_name)
        for block in results:
            self.emit(
                self.header.id, _amp_output(block) if "toolUseID" in block else tool_output(block, None)
            )
        self.diagnostics.use()
        usage = entry.get("usage") if isinstance(entry.get("usage"), dict) else None
        if not parts and usage is None:
            return None
        message = Message(id=mid, role=role, parts=parts)
        if usage is not None:
            message.usage = usage_of(usage)
            message.model = as_str(usage.get("model"))
            message.timestamp = parse_time(usage.get("timestamp"))
        if role == "user" and self.header.title is None and message.text.strip():
            self.header.title = message.text.strip()
        self._emit(message)
        return message

    def _ledger(self, ledger: Any, by_number: dict[int, Message]) -> None:
        events = ledger.get("events") if isinstance(ledger, dict) else None
        for n, event in enumerate(events if isinstance(events, list) else []):
            with self.guard():
                self._event(n, event, by_number)

    def _event(self, n: int, event: Any, by_number: dict[int, Message]) -> None:
        tokens = event.get("tokens") if isinstance(event, dict) else None
        if not isinstance(tokens, dict):
            self.diagnostics.skip("malformed:ledger_event")
            return
        self.diagnostics.use()
        usage, partial = ledger_usage(tokens)
        flags: list[MessageFlag] = ["usage_partial"] if partial else []
        target = by_number.get(event.get("toMessageId"))
        if target is not None and target.usage is None:
            target.usage, target.model = usage, as_str(event.get("model"))
            target.timestamp = target.timestamp or parse_time(event.get("timestamp"))
            target.flags.extend(flags)
            return
        self._emit(
            Message(
                id=f"{self.header.id}@ledger{n}",
                role="system",
                timestamp=parse_time(event.get("timestamp")),
                model=as_str(event.get("model")),
                parts=[TextPart(text="usage of an inference with no recorded message")],
                usage=usage,
                flags=["meta", "synthetic", *flags],
            )
        )

    def _emit(self, message: Message) -> None:
        self.emit(self.header.id, message)


def ledger_usage(tokens: dict[str, Any]) -> tuple[Usage, bool]:
    """``(usage, partial)`` of a ledger event's ``tokens{input, output, total}``:
    the split when it is there; an event with only ``total`` counts it as input
    (the split is unknown: ``partial``), so its tokens are never lost."""
    if "input" not in tokens and "output" not in tokens and as_int(tokens.get("total")):
        return Usage(input_tokens=as_int(tokens.get("total"))), True
    return Usage(input_tokens=as_int(tokens.get("input")), output_tokens=as_int(tokens.get("output"))), False


class AmpAdapter(DocumentAdapter):
    """Amp: ``~/.local/share/amp/threads/T-*.json``."""

    slug = SLUG
    display_name = "Amp"
    parser_version = 4
    source_format: ClassVar[Literal["json", "sqlite"]] = "json"
    env_vars = ("AMP_DATA_DIR",)

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [Path(env.get("AMP_DATA_DIR") or home / ".local" / "share" / "amp") / "threads"]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        for path in walk_files(root, ".json"):
            if path.name.startswith("T-"):
                yield SourceRef(agent=SLUG, path=str(path))

    def sniff(self, name: str, head: bytes) -> float:
        thread = b'"messages"' in head and (b'"T-' in head or b'"usageLedger"' in head)
        if thread and b'"created"' in head:
            return 0.9 if name.startswith("T-") else 0.6
        return 0.0

    def parse_document(self, ref: SourceRef, doc: Document) -> DocumentResult:
        return _ThreadParse(ref, doc).result()

    def resume_command(self, session: Session) -> str | None:
        """``amp threads continue <threadId>`` (Amp's CLI; documented by its runners)."""
        return resume_line("amp threads continue", session.id)
