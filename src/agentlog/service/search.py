"""Search queries: full-text search over the index with the filter vocabulary."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from datetime import datetime

import msgspec

from agentlog.errors import UsageError
from agentlog.index.search import MARK_END, MARK_START, Budget, Hit, HitPage, SearchSort
from agentlog.index.search import search as index_search
from agentlog.index.store import iso
from agentlog.query import Span
from agentlog.redact import redact, redact_snippet
from agentlog.service.filters import check_page

MAX_HITS = 1000
"""The most hits one page holds (``--limit``, the Python API's ``limit``)."""


class SearchFilter(msgspec.Struct, kw_only=True, frozen=True):
    """Which messages a search looks in: ``agent`` (slug), ``project`` (text the
    session's folder contains), ``span`` (message times, ``since <= t < until``),
    ``role``, ``tool`` (normalised tool name; both any case), ``reasoning`` (also
    reasoning)."""

    agent: str | None = None
    project: str | None = None
    span: Span = Span()
    role: str | None = None
    tool: str | None = None
    reasoning: bool = False


class SearchPaging(msgspec.Struct, kw_only=True, frozen=True):
    """Which hits of a search are returned and how: ``limit`` from ``offset``,
    ``sort`` (``rank``, ``newest``, ``oldest``), ``by_session`` (the best hit of
    each session), ``raw`` (the query is FTS5 syntax)."""

    limit: int = 20
    offset: int = 0
    sort: SearchSort = "rank"
    by_session: bool = False
    raw: bool = False


def search(
    conn: sqlite3.Connection,
    query: str,
    where: SearchFilter | None = None,
    paging: SearchPaging | None = None,
    budget: Budget | None = None,
    redact_secrets: bool = True,
) -> HitPage:
    """One page of the hits of ``query`` (read by
    :func:`agentlog.index.fts.translate`: literal words unless operators are
    written explicitly, see :mod:`agentlog.index.search`) among the messages
    ``where`` keeps (all when ``None``).  Raises
    :class:`~agentlog.errors.UsageError` for an empty, over-long or over-wordy
    query or a ``limit`` outside 1…:data:`MAX_HITS` or a negative ``offset``,
    :class:`~agentlog.index.search.SearchStopped` past the ``budget``.

    Unless ``redact_secrets`` is false, secrets in the hits' snippets and session
    titles are replaced (:func:`agentlog.redact.redact_snippet`)."""
    where = where or SearchFilter()
    paging = paging or SearchPaging()
    if not 1 <= paging.limit <= MAX_HITS:
        raise UsageError(f"limit {paging.limit} is not in 1…{MAX_HITS}")
    check_page(paging.offset, paging.limit)
    page = index_search(
        conn,
        query,
        agent=where.agent,
        project=where.project,
        since=where.span.since,
        until=where.span.until,
        role=where.role,
        tool=where.tool,
        reasoning=where.reasoning,
        limit=paging.limit,
        offset=paging.offset,
        by_session=paging.by_session,
        sort=paging.sort,
        raw=paging.raw,
        budget=budget,
    )
    if redact_secrets:
        page.hits = [redact_hit(h) for h in page.hits]
    return page


def redact_hit(hit: Hit) -> Hit:
    """``hit`` with the secrets in its snippet, session title and tool name
    replaced (a tool's name is the agent's to choose: an MCP server's can hold a token)."""
    snippet = redact_snippet(hit.snippet, (MARK_START, MARK_END))
    title = redact(hit.session_title) if hit.session_title else hit.session_title
    tool = redact(hit.tool) if hit.tool else hit.tool
    if snippet is hit.snippet and title is hit.session_title and tool is hit.tool:
        return hit
    return msgspec.structs.replace(hit, snippet=snippet, session_title=title, tool=tool)


def written_since(conn: sqlite3.Connection, keys: Iterable[str], since: datetime) -> set[str]:
    """The sessions of ``keys`` written to at or after ``since`` (an aware time):
    their last message, else their start, is that recent; duplicates of another
    source are never counted.  The sessions ``agentlog sessions --since`` would
    list (:func:`agentlog.index.queries.list_sessions`, subagents and exec runs
    included), looked up by key: MCP ``search_sessions`` leaves them out."""
    rows = conn.execute(
        """SELECT s.key FROM sessions s JOIN sources src ON src.id = s.source_id
        WHERE s.key IN (SELECT value FROM json_each(?)) AND src.duplicate_of IS NULL
        AND COALESCE(s.ended_at, s.started_at) >= ?""",
        (json.dumps(sorted(set(keys))), iso(since)),
    )
    return {key for (key,) in rows}
