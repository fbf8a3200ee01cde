"""What the MCP tools send: sessions, messages and hits as bounded JSON
objects, their text redacted (:func:`agentlog.redact.redact`) and cut to the
caps each tool's description states.

Field names follow agentsview's MCP tools where they overlap (``session_id``,
``name``, ``snippet``, ``match_ordinal``, ``next_cursor``, ``next_from``,
``full_length``, ``truncated``; kenn-io/agentsview ``internal/mcp/tools.go``),
so a client can switch between the two.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agentlog.index.search import MARK_END, MARK_START
from agentlog.model import Message, Session, ToolCallPart
from agentlog.plaintext import message_text
from agentlog.redact import redact

NAME_CHARS = 200
"""The most characters of a session's name (its title) any tool sends."""


def cut(text: str, limit: int) -> tuple[str, bool]:
    """``text`` redacted, then at most ``limit`` characters (``…`` ending a cut
    one), and whether it was cut."""
    text = redact(text)
    if len(text) <= limit:
        return text, False
    return text[: max(limit - 1, 0)] + "…", True


def snippet(text: str, limit: int) -> str:
    """A search hit's snippet, redacted, its matches marked «like this» (as
    ``agentlog search --json`` marks them), at most ``limit`` characters."""
    return cut(text, limit)[0].replace(MARK_START, "«").replace(MARK_END, "»")


def stamp(value: datetime | None) -> str | None:
    """An aware time as ISO 8601 UTC text (``Z``), ``None`` unknown."""
    return None if value is None else value.isoformat().replace("+00:00", "Z")


def session_row(s: Session) -> dict[str, Any]:
    """One session's header: ``session_id`` (the key ``get_messages`` takes),
    ``agent``, ``project`` (its folder), ``name`` (title, at most
    :data:`NAME_CHARS`), times, counts, tokens, cost (USD, ``null``: no price)."""
    name, _ = cut(s.title or "", NAME_CHARS)
    return {
        "session_id": s.key,
        "agent": s.agent,
        "project": s.cwd,
        "name": name,
        "started_at": stamp(s.started_at),
        "ended_at": stamp(s.ended_at),
        "message_count": s.message_count,
        "total_tokens": s.usage.total_tokens,
        "output_tokens": s.usage.output_tokens,
        "cost_usd": s.usage.cost_usd,
        "git_branch": s.git_branch,
        "kind": s.kind,
        "parent_session_id": s.parent_key,
        "status": s.status,
    }


def message_row(ordinal: int, message: Message, max_chars: int) -> dict[str, Any]:
    """One message: its ``ordinal`` (0-based, the ``from`` of ``get_messages``),
    role, time, model, ``content`` (:func:`agentlog.plaintext.message_text`, redacted, at most
    ``max_chars``), ``full_length`` (characters before the cut) and ``truncated``."""
    text = message_text(message)
    content, truncated = cut(text, max_chars)
    return {
        "ordinal": ordinal,
        "role": message.role,
        "timestamp": stamp(message.timestamp),
        "model": message.model,
        "content": content,
        "full_length": len(text),
        "truncated": truncated,
        "has_tool_use": any(isinstance(p, ToolCallPart) for p in message.parts),
    }
