"""Search queries: full-text search over the index with the filter vocabulary."""

from __future__ import annotations

import sqlite3

import msgspec

from agentlog.index.search import Hit
from agentlog.index.search import search as index_search
from agentlog.query import Span


class SearchFilter(msgspec.Struct, kw_only=True, frozen=True):
    """Which messages a search looks in: ``agent`` (slug), ``project`` (text the
    session's folder contains), ``span`` (message times, ``since <= t < until``),
    ``role``, ``tool`` (normalised tool name), ``reasoning`` (also reasoning)."""

    agent: str | None = None
    project: str | None = None
    span: Span = Span()
    role: str | None = None
    tool: str | None = None
    reasoning: bool = False


def search(
    conn: sqlite3.Connection, query: str, where: SearchFilter | None = None, limit: int = 20
) -> list[Hit]:
    """The best ``limit`` hits of FTS5 ``query`` (see :mod:`agentlog.index.search`)
    among the messages ``where`` keeps (all when ``None``).  Raises
    :class:`~agentlog.errors.UsageError` for an empty query or one FTS5 cannot parse."""
    where = where or SearchFilter()
    return index_search(
        conn,
        query,
        agent=where.agent,
        project=where.project,
        since=where.span.since,
        until=where.span.until,
        role=where.role,
        tool=where.tool,
        reasoning=where.reasoning,
        limit=limit,
    )
