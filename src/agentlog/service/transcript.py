"""One session's messages in pages, for readers that page through them (the
MCP server's ``get_messages``, the Python API's ``Archive.messages``), or as a
stream, for writers of a whole session (``agentlog show --json``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass

from agentlog.export.redaction import redact_header, redact_message
from agentlog.index import queries
from agentlog.index.summaries import StoredSummary
from agentlog.model import Message, Session
from agentlog.service.export import stream_messages
from agentlog.service.status import refine_sessions


@dataclass
class MessageSlice:
    """Messages ``offset`` … of one session (``header``: the session without its
    messages) and how many it shows in all (``total``)."""

    header: Session
    messages: list[Message]
    offset: int
    total: int


def message_slice(
    conn: sqlite3.Connection, ref: str, offset: int = 0, limit: int = 200, include_hidden: bool = False
) -> MessageSlice:
    """Messages ``offset`` … ``offset + limit`` of the session ``ref`` names (key,
    id, or a unique prefix: :func:`agentlog.index.queries.resolve_key`), meta,
    injected and replayed ones left out unless ``include_hidden``.  Raises
    :class:`~agentlog.errors.NotFound` when no session or several match."""
    key = queries.resolve_key(conn, ref)
    (header,) = refine_sessions(conn, queries.list_sessions_by_keys(conn, [key]))
    messages, total = queries.message_page(conn, key, offset, limit, include_hidden=include_hidden)
    return MessageSlice(header, messages, offset, total)


def message_ordinal(conn: sqlite3.Connection, key: str, message_id: str) -> int | None:
    """The 0-based place of ``message_id`` among session ``key``'s visible
    messages (the ``offset`` that starts a :func:`message_slice` at it), ``None``
    when it is not one."""
    return queries.message_position(conn, key, message_id)


def subagents(conn: sqlite3.Connection, key: str) -> list[Session]:
    """The direct subagents and forks of session ``key`` (headers with their board
    status, :func:`agentlog.service.status.refine_sessions`), oldest first."""
    return refine_sessions(conn, queries.children(conn, key))


@dataclass
class SessionOverview:
    """One session at a glance (:func:`session_overview`): its header (board
    status, ``usage.cost_usd`` in USD), its first user message with its ordinal,
    its last messages with theirs, how many messages it shows, its first
    subagents (each costed) and the newest summary kept of it."""

    header: Session
    opening: tuple[int, Message] | None
    last: list[tuple[int, Message]]
    total: int
    subagents: list[Session]
    summary: StoredSummary | None


def session_overview(
    conn: sqlite3.Connection, ref: str, *, last: int = 3, scanned: int = 20, children: int = 20
) -> SessionOverview:
    """The overview of the session ``ref`` names (as :func:`message_slice`): its
    first user message among its first ``scanned``, its ``last`` messages, its
    first ``children`` subagents, the processes read once for every status.
    Raises :class:`~agentlog.errors.NotFound` when no session or several match."""
    from agentlog.live.procs import scan
    from agentlog.service.costed import with_costs
    from agentlog.service.summaries import latest_summary

    key = queries.resolve_key(conn, ref)
    procs = scan()
    (header,) = with_costs(conn, refine_sessions(conn, queries.list_sessions_by_keys(conn, [key]), procs=procs))
    first, total = queries.message_page(conn, key, 0, scanned)
    start = max(total - last, 0)
    tail, _ = queries.message_page(conn, key, start, last)
    kids = refine_sessions(conn, queries.children(conn, key)[:children], procs=procs)
    return SessionOverview(
        header=header,
        opening=next(((i, m) for i, m in enumerate(first) if m.role == "user"), None),
        last=[(start + i, m) for i, m in enumerate(tail)],
        total=total,
        subagents=with_costs(conn, kids),
        summary=latest_summary(conn, key),
    )


def streamed_session(
    conn: sqlite3.Connection, ref: str, redact: bool = True
) -> tuple[Session, Iterator[Message]]:
    """The whole session ``ref`` names (as :func:`agentlog.service.sessions.session`
    gives it), never held whole: its header (``messages`` empty) and an iterator
    over every message in order, meta and replayed ones included, read from the
    index a page at a time; secrets replaced (:mod:`agentlog.redact`) unless not
    ``redact``.  Raises :class:`~agentlog.errors.NotFound` when no session or
    several match."""
    key = queries.resolve_key(conn, ref)
    (header,) = refine_sessions(conn, queries.list_sessions_by_keys(conn, [key]))
    messages = stream_messages(conn, key, include_hidden=True)
    if not redact:
        return header, messages
    return redact_header(header), map(redact_message, messages)  # map: the last message is not kept
