"""Message content shared by several formats: Anthropic-style content blocks (Cline,
Roo, Kilo, Factory Droid), text of block lists, tool results, records kept raw."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from agentlog.adapters._binary import inline_size
from agentlog.adapters._values import as_dict
from agentlog.adapters.base import ToolOutput
from agentlog.model import (
    FilePart,
    Message,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResult,
    UnknownPart,
)


def block_text(content: Any) -> str:
    """Text of a content value that is a string or a list of ``{type: text}`` blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def content_parts(
    content: Any, tool_name: Callable[[str, Any], str]
) -> tuple[list[Part], list[dict[str, Any]]]:
    """Parts of an Anthropic ``MessageParam.content`` (a string or a list of blocks),
    and apart from them the ``tool_result`` blocks (to merge into their calls).

    ``text`` → text; ``thinking``/``redacted_thinking``/``reasoning`` → reasoning;
    ``tool_use`` → tool call named ``tool_name(raw_name, input)``; ``image``/
    ``document``/``file`` → file; anything else is kept as an unknown part."""
    if isinstance(content, str):
        return ([TextPart(text=content)] if content else []), []
    parts: list[Part] = []
    results: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        if not isinstance(block, dict):
            parts.append(UnknownPart(raw=block))
        elif kind == "tool_result":
            results.append(block)
        elif kind == "text":
            parts.append(TextPart(text=str(block.get("text") or "")))
        elif kind in ("thinking", "reasoning"):
            text = str(block.get("thinking") or block.get("text") or "")
            parts.append(ReasoningPart(text=text, encrypted=not text and bool(block.get("signature"))))
        elif kind == "redacted_thinking":
            parts.append(ReasoningPart(encrypted=True))
        elif kind == "tool_use":
            raw = str(block.get("name") or "")
            parts.append(
                ToolCallPart(
                    call_id=str(block.get("id") or ""),
                    tool=tool_name(raw, block.get("input")),
                    raw_name=raw,
                    input=block.get("input"),
                )
            )
        elif kind in ("image", "document", "file"):
            source = as_dict(block.get("source"))
            parts.append(
                FilePart(
                    media_type=str(source.get("media_type") or block.get("mediaType") or ""),
                    name=str(block.get("path") or block.get("name") or ""),
                    ref=str(source.get("url") or block.get("path") or ""),
                    size=inline_size(source),
                )
            )
        else:
            parts.append(UnknownPart(raw=block))
    return parts, results


def tool_output(block: dict[str, Any], when: datetime | None, offset: int | None = None) -> ToolOutput:
    """A ``tool_result`` block (``tool_use_id``, ``content``, ``is_error``) as a tool output."""
    is_error = block.get("is_error") is True
    return ToolOutput(
        call_id=str(block.get("tool_use_id") or ""),
        result=ToolResult(
            output=block.get("content"),
            is_error=is_error,
            status="error" if is_error else "completed",
            ended_at=when,
        ),
        timestamp=when,
        offset=offset,
    )


def unknown_message(
    mid: str, raw: Any, timestamp: datetime | None = None, offset: int | None = None
) -> Message:
    """A record of a type the adapter does not know, kept verbatim: a ``system``
    message flagged ``unknown`` holding one :class:`UnknownPart` (count it with
    ``Diagnostics.unknown``)."""
    return Message(
        id=mid,
        role="system",
        timestamp=timestamp,
        parts=[UnknownPart(raw=raw)],
        flags=["unknown"],
        offset=offset,
    )
