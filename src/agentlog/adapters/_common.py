"""Small pure helpers shared by adapters: timestamps, text, tool names, JSON values."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import msgspec

from agentlog.model import ToolCallPart

_SNAKE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

MALFORMED = (KeyError, TypeError, ValueError, AttributeError, IndexError)
"""What converting a record whose shape defies its format raises.  Document adapters
catch these per record and count it as skipped ``malformed:<exception>``, as
:meth:`~agentlog.adapters.base.LineParser.feed` does for lines."""


def parse_time(value: Any) -> datetime | None:
    """An ISO-8601 string, or epoch seconds/milliseconds, as an aware UTC datetime;
    ``None`` for anything else (agents write placeholders such as ``"[trimmed]"``)."""
    if isinstance(value, str):
        try:
            stamp = datetime.fromisoformat(value)
        except ValueError:
            return None
        return stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp.astimezone(UTC)
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        seconds = value / 1000 if value > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    return None


def snake(name: str) -> str:
    """``TodoWrite`` → ``todo_write``; ``web-fetch`` → ``web_fetch``."""
    return _SNAKE.sub("_", name).replace("-", "_").lower()


def as_int(value: Any) -> int:
    """A token count as ``int``: missing, ``null`` or non-numeric → 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    return 0


def as_str(value: Any) -> str | None:
    """``value`` if it is a non-empty string, else ``None``."""
    return value if isinstance(value, str) and value else None


def block_text(content: Any) -> str:
    """Text of a content value that is a string or a list of ``{type: text}`` blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def decode_object(value: Any) -> dict[str, Any] | None:
    """A JSON object given as bytes or text (a file, a SQLite ``data`` column), or
    ``None`` when ``value`` is not the JSON of an object."""
    if isinstance(value, dict):
        return value
    if not isinstance(value, bytes | str) or not value:
        return None
    try:
        decoded = msgspec.json.decode(value)
    except msgspec.DecodeError:
        return None
    return decoded if isinstance(decoded, dict) else None


def function_call(call: dict[str, Any], tool_name: Callable[[str], str]) -> ToolCallPart:
    """An OpenAI-style ``{id, function{name, arguments}}`` tool call (Kimi CLI, Hermes):
    ``arguments`` is a JSON string, decoded when it holds an object, kept as written
    otherwise; ``tool_name`` normalises the agent's tool name."""
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    raw = str(function.get("name") or call.get("name") or "unknown")
    arguments = function.get("arguments")
    decoded = decode_object(arguments) if isinstance(arguments, str) else None
    return ToolCallPart(
        call_id=str(call.get("id") or call.get("call_id")),
        tool=tool_name(raw),
        raw_name=raw,
        input=decoded if decoded is not None else arguments,
    )
