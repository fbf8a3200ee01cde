"""Small pure helpers shared by adapters: timestamps, text, tool names, JSON
strings, and the active path of tree-shaped logs."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import msgspec

_SNAKE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


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


def decode_json(text: Any) -> Any:
    """``text`` decoded when it is a JSON string, else ``text`` unchanged."""
    if isinstance(text, str):
        try:
            return msgspec.json.decode(text)
        except msgspec.DecodeError:
            return text
    return text


class Branches(msgspec.Struct, kw_only=True):
    """The active path of a tree-shaped append-only log (Pi, Qwen Code): entries
    carry ``id``/``parentId`` and the transcript is the path from the last
    appended entry (the leaf) back to the root; older branches stay in the file.

    Only a small map is kept: entry id → parent id, and the message ids emitted
    per entry so they can be flagged when their branch is left behind.
    """

    parents: dict[str, str | None] = msgspec.field(default_factory=dict)
    leaf: str | None = None
    messages: dict[str, tuple[str, str]] = msgspec.field(default_factory=dict)
    """Entry id → (message id, role) of the message it produced."""

    def advance(self, entry: str, parent: str | None) -> list[tuple[str, str]]:
        """Append ``entry`` under ``parent``; return ``(message id, role)`` of every
        message the new leaf's path no longer contains.  A parent that is no known
        entry (OpenClaw writes the session id or a tool-call id there) continues
        from the current leaf; ``None`` starts a new root."""
        if parent is not None and parent not in self.parents:
            parent = self.leaf
        left: list[tuple[str, str]] = []
        if self.leaf is not None and parent != self.leaf and entry not in self.parents:
            keep = set(self._path(parent))
            for node in self._path(self.leaf):
                if node in keep:
                    break
                if node in self.messages:
                    left.append(self.messages[node])
        if entry not in self.parents:
            self.parents[entry] = parent
        self.leaf = entry
        return left

    def _path(self, node: str | None) -> list[str]:
        out: list[str] = []
        seen: set[str] = set()
        while node is not None and node not in seen:
            seen.add(node)
            out.append(node)
            node = self.parents.get(node)
        return out
