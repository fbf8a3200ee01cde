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
from agentlog.service.status import LiveSession

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
    :data:`NAME_CHARS`), times, counts, tokens, cost (USD, ``null``: no price);
    its log text redacted (the fields :func:`agentlog.export.redaction.redact_header`
    redacts that it holds: title, folder, branch; the others are not read)."""
    name, _ = cut(s.title or "", NAME_CHARS)
    return {
        "session_id": s.key,
        "agent": s.agent,
        "project": s.cwd and redact(s.cwd),
        "name": name,
        "started_at": stamp(s.started_at),
        "ended_at": stamp(s.ended_at),
        "message_count": s.message_count,
        "total_tokens": s.usage.total_tokens,
        "output_tokens": s.usage.output_tokens,
        "cost_usd": s.usage.cost_usd,
        "git_branch": s.git_branch and redact(s.git_branch),
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


EVIDENCE_CHARS = 300
"""The most characters of a live row's evidence and reason."""


def live_row(row: LiveSession, depth: int = 0) -> dict[str, Any]:
    """One board row (:class:`agentlog.service.status.LiveSession`) as the
    ``get_live_status`` tool sends it: ``session_id``, ``agent``, ``project``,
    ``name``, ``status`` with ``since`` (when it began), ``evidence`` (the record
    that shows it) and ``evidence_at``, ``inferred`` and ``reason``, ``pending``
    (tools of the calls still waiting), ``last_write``, ``alive`` (``null``:
    unknown), the current turn's tokens and ``cost_usd`` (USD), ``resume_command``
    and ``subagents`` (the same rows, three levels at most); text redacted and cut."""
    name, _ = cut(row.title or "", NAME_CHARS)
    return {
        "session_id": row.key,
        "agent": row.agent,
        "project": row.cwd,
        "name": name,
        "kind": row.kind,
        "status": row.status,
        "since": stamp(row.since),
        "evidence": cut(row.evidence or "", EVIDENCE_CHARS)[0] or None,
        "evidence_at": stamp(row.evidence_at),
        "inferred": row.inferred,
        "reason": cut(row.reason or "", EVIDENCE_CHARS)[0] or None,
        "pending": row.pending[:20],
        "last_write": stamp(row.last_write),
        "alive": row.alive,
        "turn": {
            "input_tokens": row.turn.input_tokens,
            "cache_read_tokens": row.turn.cache_read_tokens,
            "cache_write_tokens": row.turn.cache_write_tokens,
            "output_tokens": row.turn.output_tokens,
            "total_tokens": row.turn.total_tokens,
            "cost_usd": row.turn.cost_usd,
        },
        "resume_command": row.resume_command,
        "subagents": [live_row(child, depth + 1) for child in row.children] if depth < 2 else [],
    }
