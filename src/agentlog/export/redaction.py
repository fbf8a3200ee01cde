"""Secrets redacted from the model: every string a session or message shows.

:mod:`agentlog.redact` finds and replaces the secrets; this walks the model:
a session's header (title, description, folder, git branch, resume command,
source paths and live status: evidence, reason, pending tool names), and each part's text,
reasoning, tool name (the agent's and the normalised one), tool input (every
string in it), output and structured result, compaction summary and unknown
record.  File references are kept (a path or ``data:`` URI, not text).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import msgspec

from agentlog.model import (
    CompactionPart,
    Message,
    Part,
    ReasoningPart,
    Session,
    TextPart,
    ToolCallPart,
    UnknownPart,
)
from agentlog.redact import findings, redact, redact_value


def redact_part(part: Part) -> Part:
    """``part`` with its secrets replaced (the same object when it holds none)."""
    if isinstance(part, TextPart):
        text = redact(part.text)
        return part if text is part.text else TextPart(text=text)
    if isinstance(part, ReasoningPart):
        text, summary = redact(part.text), redact(part.summary)
        if text is part.text and summary is part.summary:
            return part
        return msgspec.structs.replace(part, text=text, summary=summary)
    if isinstance(part, ToolCallPart):
        value = redact_value(part.input)
        result = part.result
        if result is not None:
            output, structured = redact_value(result.output), redact_value(result.structured)
            if output is not result.output or structured is not result.structured:
                result = msgspec.structs.replace(result, output=output, structured=structured)
        raw_name, tool = redact_tool(part.raw_name, part.tool)
        if value is part.input and result is part.result and raw_name is part.raw_name and tool is part.tool:
            return part
        return msgspec.structs.replace(part, input=value, result=result, raw_name=raw_name, tool=tool)
    if isinstance(part, CompactionPart):
        summary = redact(part.summary)
        return part if summary is part.summary else msgspec.structs.replace(part, summary=summary)
    if isinstance(part, UnknownPart):
        raw = redact_value(part.raw)
        return part if raw is part.raw else UnknownPart(raw=raw)
    return part


def redact_tool(raw_name: str, tool: str) -> tuple[str, str]:
    """A tool call's agent name and normalised name with their secrets replaced.
    The normaliser keeps a secret as written (:func:`agentlog.adapters._tools.normalise_tool`),
    so redacting ``tool`` finds it; a name normalised before it did (an older index:
    ``ghp_A1b2…`` became ``ghp_a1b2_…``) is normalised again from the redacted agent name."""
    raw = redact(raw_name)
    redacted = redact(tool)
    if raw is not raw_name and redacted is tool:
        from agentlog.adapters._tools import normalise_tool

        redacted = normalise_tool(raw)
    return raw, redacted


def redact_message(message: Message) -> Message:
    """``message`` with every part redacted (the same object when nothing changed)."""
    parts = [redact_part(p) for p in message.parts]
    if all(a is b for a, b in zip(parts, message.parts, strict=True)):
        return message
    return msgspec.structs.replace(message, parts=parts)


_HEADER_TEXT = (
    "title",
    "description",
    "cwd",
    "git_branch",
    "resume_command",
    "status_evidence",
    "status_reason",
)
"""The header's fields of log text (a folder or branch name can hold a token as well as a title)."""


def redact_header(session: Session) -> Session:
    """``session``'s header redacted: :data:`_HEADER_TEXT`, the pending tool names
    and the source files' paths (an agent may name its folder after the session's:
    Claude Code's ``projects/-tmp-clone-<token>``); messages as they are; the same
    object when nothing changed."""
    changed: dict[str, str | list[str]] = {}
    for name in _HEADER_TEXT:
        text = getattr(session, name)
        if text and (redacted := redact(text)) is not text:
            changed[name] = redacted
    for name in ("status_pending", "sources"):
        texts = getattr(session, name)
        redacted_texts = [redact(text) for text in texts]
        if any(a is not b for a, b in zip(redacted_texts, texts, strict=True)):
            changed[name] = redacted_texts
    return msgspec.structs.replace(session, **changed) if changed else session


def part_strings(part: Part) -> Iterable[str]:
    """Every string :func:`redact_part` looks at in ``part``."""
    if isinstance(part, TextPart):
        yield part.text
    elif isinstance(part, ReasoningPart):
        yield from (part.text, part.summary)
    elif isinstance(part, ToolCallPart):
        yield part.raw_name
        yield from _strings(part.input)
        if part.result is not None:
            yield from _strings(part.result.output)
            yield from _strings(part.result.structured)
    elif isinstance(part, CompactionPart):
        yield part.summary
    elif isinstance(part, UnknownPart):
        yield from _strings(part.raw)


def _strings(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def count_kinds(session: Session, messages: Iterable[Message]) -> Counter[str]:
    """How many secrets of each kind ``session``'s title, description, folder and
    branch and ``messages`` hold (not its live status, which repeats its messages)."""
    counts: Counter[str] = Counter()
    texts = [t for t in (session.title, session.description, session.cwd, session.git_branch) if t]
    for text in texts:
        counts.update(f.kind for f in findings(text))
    for message in messages:
        for part in message.parts:
            for text in part_strings(part):
                counts.update(f.kind for f in findings(text))
    return counts
