"""Secrets redacted from the model: every string a session or message shows.

:mod:`agentlog.redact` finds and replaces the secrets; this walks the model:
a session's title and description, and each part's text, reasoning, tool input
(every string in it), output and structured result, compaction summary and
unknown record.  File references are kept (a path or ``data:`` URI, not text).
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
        if value is part.input and result is part.result:
            return part
        return msgspec.structs.replace(part, input=value, result=result)
    if isinstance(part, CompactionPart):
        summary = redact(part.summary)
        return part if summary is part.summary else msgspec.structs.replace(part, summary=summary)
    if isinstance(part, UnknownPart):
        raw = redact_value(part.raw)
        return part if raw is part.raw else UnknownPart(raw=raw)
    return part


def redact_message(message: Message) -> Message:
    """``message`` with every part redacted (the same object when nothing changed)."""
    parts = [redact_part(p) for p in message.parts]
    if all(a is b for a, b in zip(parts, message.parts, strict=True)):
        return message
    return msgspec.structs.replace(message, parts=parts)


def redact_header(session: Session) -> Session:
    """``session``'s title and description redacted (messages as they are)."""
    title = redact(session.title) if session.title else session.title
    description = redact(session.description) if session.description else session.description
    if title is session.title and description is session.description:
        return session
    return msgspec.structs.replace(session, title=title, description=description)


def part_strings(part: Part) -> Iterable[str]:
    """Every string :func:`redact_part` looks at in ``part``."""
    if isinstance(part, TextPart):
        yield part.text
    elif isinstance(part, ReasoningPart):
        yield from (part.text, part.summary)
    elif isinstance(part, ToolCallPart):
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
    """How many secrets of each kind ``session``'s title, description and ``messages`` hold."""
    counts: Counter[str] = Counter()
    texts = [t for t in (session.title, session.description) if t]
    for text in texts:
        counts.update(f.kind for f in findings(text))
    for message in messages:
        for part in message.parts:
            for text in part_strings(part):
                counts.update(f.kind for f in findings(text))
    return counts
