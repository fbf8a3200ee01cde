"""The MCP server (``agentlog mcp``): read-only tools over the index, on the
official MCP Python SDK (``mcp``, :class:`mcp.server.mcpserver.MCPServer`).

Tool names mirror agentsview's where they overlap (kenn-io/agentsview
``internal/mcp/server.go``: ``list_sessions``, ``search_sessions``,
``get_session_overview``, ``get_messages``, ``get_usage_summary``,
``get_live_status``), so a client can switch; ``find_sessions_by_file`` is
agentlog's own.  Every tool reads
through the service layer (:mod:`agentlog.service`), validates its inputs
(JSON Schema bounds, then the filter vocabulary of :mod:`agentlog.query`),
bounds its output (pages and character caps, stated in its description) and
redacts log text (:func:`agentlog.redact.redact`).  No tool writes anything;
the index itself is brought up to date at most every :data:`SYNC_EVERY_S`
seconds before a call (never with ``--no-sync``).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

import msgspec
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from agentlog.errors import REBUILD_HINT, AgentlogError
from agentlog.index.stored import DamagedRow
from agentlog.mcp.shape import (
    EVIDENCE_CHARS,
    NAME_CHARS,
    cut,
    live_row,
    message_row,
    session_row,
    snippet,
    stamp,
)
from agentlog.query import SessionFilter, resolve_agent
from agentlog.redact import redact
from agentlog.service.filters import search_filter, session_filter, span_of, zone_of

SYNC_EVERY_S = 60.0
"""The least time between two syncs of the index the server makes."""
SNIPPET_CHARS = 500
PREVIEW_CHARS = 1000
PAGE_CHARS = 100_000
"""The most characters of message content one ``get_messages`` page holds."""
USAGE_ROWS = 100
TOUCHES_PER_SESSION = 10
ACTIVE_MINUTES = 10
"""``search_sessions`` leaves out sessions active this recently (agentsview's rule:
the client's own conversation is recorded too)."""
DEFAULT_ROLES = ("user", "assistant")

Agent = Annotated[
    str | None,
    Field(
        max_length=100, description="An agent: a slug or a unique prefix, any case (claude → claude_code)."
    ),
]
Project = Annotated[
    str | None,
    Field(max_length=1000, description="Only sessions whose folder contains this text (any case)."),
]
Since = Annotated[
    str | None,
    Field(
        max_length=100,
        description="From this time: an ISO time, a date (YYYY-MM-DD) or a span back from now (30m, 12h, 7d, 2w).",
    ),
]
Until = Annotated[
    str | None,
    Field(max_length=100, description="Up to this time (exclusive); a bare date counts through its end."),
]
Cursor = Annotated[
    int, Field(ge=0, le=2**31, description="Pagination cursor from a previous next_cursor (default 0).")
]


class Index:
    """The index the tools read: ``connect`` opens it, ``sync`` (when given)
    brings it up to date, at most every :data:`SYNC_EVERY_S` seconds."""

    def __init__(
        self, connect: Callable[[], sqlite3.Connection], sync: Callable[[sqlite3.Connection], object] | None
    ) -> None:
        self._conn = connect()
        self._sync = sync
        self._synced = float("-inf")

    def conn(self) -> sqlite3.Connection:
        """The connection, synced first when the last sync is older than :data:`SYNC_EVERY_S`."""
        if self._sync is not None and time.monotonic() - self._synced >= SYNC_EVERY_S:
            self._sync(self._conn)
            self._synced = time.monotonic()
        return self._conn

    def close(self) -> None:
        self._conn.close()


def _call(work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``work()``, a user error (bad filter, unknown session) or a damaged index (a
    stored value that cannot be decoded: :mod:`agentlog.index.stored`) as the tool's error."""
    try:
        return work()
    except AgentlogError as exc:
        raise ToolError(str(exc)) from None
    except DamagedRow as exc:
        raise ToolError(f"the index is damaged ({exc}): {REBUILD_HINT}") from None


READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


def build_server(index: Index) -> MCPServer:
    """The server with every tool registered over ``index``."""
    server = MCPServer(
        "agentlog",
        instructions="Read-only access to the user's coding-agent session history (every agent agentlog reads): "
        "search past sessions, read their messages, see token usage and cost, find sessions that touched a file.",
        log_level="WARNING",
    )

    @server.tool(
        description="List recorded coding-agent sessions, newest first, with filters (agent, project folder, time span). "
        "Main sessions only unless include_subagents; non-interactive runs (codex exec) only with include_exec. Pages of at most 100 (default 20); names cut to "
        f"{NAME_CHARS} characters. Returns sessions, total and next_cursor (absent on the last page).",
        annotations=READ_ONLY,
    )
    async def list_sessions(
        agent: Agent = None,
        project: Project = None,
        since: Since = None,
        until: Until = None,
        include_subagents: bool = False,
        include_exec: bool = False,
        limit: Annotated[int, Field(ge=1, le=100, description="Sessions per page, 1–100 (default 20).")] = 20,
        cursor: Cursor = 0,
    ) -> dict[str, Any]:
        from agentlog.service.costed import cost_usd
        from agentlog.service.sessions import SessionOrder, page_sessions

        def work() -> dict[str, Any]:
            where = session_filter(agent, project, since, until, include_subagents, exec_runs=include_exec)
            page = page_sessions(index.conn(), where, SessionOrder(), cursor, limit)
            rows = []
            for s in page.sessions:
                row = session_row(s)
                found = page.costs.get(s.key)
                row["cost_usd"] = cost_usd(found) if found else None
                rows.append(row)
            following = cursor + len(rows)
            return {
                "sessions": rows,
                "total": page.total,
                "next_cursor": following if following < page.total else None,
            }

        return _call(work)

    @server.tool(
        description="Full-text search across every recorded coding-agent session (prompts, replies, tool calls and "
        "their output): one result per session, its best hit. The query's words must all appear, as written; "
        'wrap a phrase in double quotes ("build failed"). Sort relevance (default) or recency. Pages of at most 30 '
        f"(default 10); snippets cut to {SNIPPET_CHARS} characters, matches marked «like this». match_ordinal is "
        "the hit's message, the from_ordinal get_messages takes. Sessions active in the last "
        f"{ACTIVE_MINUTES} minutes are left out unless include_active (the conversation you are in is recorded "
        "too: you would find yourself); excluded_active counts them. total counts the sessions found; when "
        "total_exact is false it is a lower bound (a common word: its hits are ranked 1,000 at a time, newest first, "
        "and read only as far as the page needs; session_hits counts the hits read).",
        annotations=READ_ONLY,
    )
    async def search_sessions(
        query: Annotated[str, Field(min_length=1, max_length=1000, description="Words to find.")],
        agent: Agent = None,
        project: Project = None,
        since: Since = None,
        until: Until = None,
        sort: Literal["relevance", "recency"] = "relevance",
        limit: Annotated[int, Field(ge=1, le=30, description="Results per page, 1–30 (default 10).")] = 10,
        cursor: Cursor = 0,
        include_active: bool = False,
    ) -> dict[str, Any]:
        from agentlog.service.search import SearchPaging, search, written_since
        from agentlog.service.transcript import message_ordinal

        def work() -> dict[str, Any]:
            conn = index.conn()
            where = search_filter(agent, project, since, until)
            paging = SearchPaging(
                limit=limit, offset=cursor, sort="rank" if sort == "relevance" else "newest", by_session=True
            )
            page = search(conn, query, where, paging)
            hits = page.hits
            if not include_active and hits:
                recent = datetime.now(UTC) - timedelta(minutes=ACTIVE_MINUTES)
                active = written_since(conn, (h.session_key for h in hits), recent)
                hits = [h for h in hits if h.session_key not in active]
            results = [
                {
                    "session_id": hit.session_key,
                    "agent": hit.agent,
                    "name": cut(hit.session_title or "", NAME_CHARS)[0],
                    "role": hit.role,
                    "timestamp": stamp(hit.timestamp),
                    "tool": hit.tool,
                    "snippet": snippet(hit.snippet, SNIPPET_CHARS),
                    "match_ordinal": message_ordinal(conn, hit.session_key, hit.message_id),
                    "session_hits": hit.session_hits,
                }
                for hit in hits
            ]
            return {
                "results": results,
                "excluded_active": len(page.hits) - len(hits),
                "total": page.total,
                "total_exact": page.total_exact,
                "next_cursor": page.next_offset,
                "note": page.note,
            }

        return _call(work)

    @server.tool(
        description="One session at a glance: its header (agent, folder, times, tokens, cost), how to resume it, "
        f"its subagents (at most 20), the first user message and the last three messages, and the summary "
        f"`agentlog summarize` kept (if any), each cut to {PREVIEW_CHARS} characters. Cheaper than get_messages.",
        annotations=READ_ONLY,
    )
    async def get_session_overview(
        session_id: Annotated[
            str,
            Field(
                min_length=1,
                max_length=300,
                description="A session id or key (agent:id), or a unique prefix.",
            ),
        ],
    ) -> dict[str, Any]:
        from agentlog.service.transcript import session_overview

        def work() -> dict[str, Any]:
            seen = session_overview(index.conn(), session_id, last=3, scanned=20, children=20)
            header = seen.header
            return {
                "session": session_row(header),
                "resume_command": header.resume_command,
                "usage": {
                    "input_tokens": header.usage.input_tokens,
                    "cache_read_tokens": header.usage.cache_read_tokens,
                    "cache_write_tokens": header.usage.cache_write_5m_tokens
                    + header.usage.cache_write_1h_tokens,
                    "output_tokens": header.usage.output_tokens,
                    "total_tokens": header.usage.total_tokens,
                    "cost_usd": header.usage.cost_usd,
                    "cost_source": header.usage.cost_source,
                },
                "subagents": [session_row(c) for c in seen.subagents],
                "first_message": None if seen.opening is None else message_row(*seen.opening, PREVIEW_CHARS),
                "last_messages": [message_row(i, m, PREVIEW_CHARS) for i, m in seen.last],
                "message_count": seen.total,
                "summary": None
                if (kept := seen.summary) is None
                else {
                    "model": kept.model,
                    "created_at": stamp(kept.created_at),
                    "text": cut(kept.text, PREVIEW_CHARS)[0],
                },
            }

        return _call(work)

    @server.tool(
        description="Read one session's messages in order, a page at a time: from_ordinal (0 = first; a search "
        "hit's match_ordinal), at most 100 messages scanned per page (default 20), each cut to max_chars_per_message "
        f"(default 2000, at most 20000) and a page to {PAGE_CHARS} characters in all. Tool calls show as "
        "'[tool] what it did' with their output. roles filters (default user and assistant; also tool, system); "
        "filtered counts what the page skipped. Keep paging while next_from is present.",
        annotations=READ_ONLY,
    )
    async def get_messages(
        session_id: Annotated[
            str, Field(min_length=1, max_length=300, description="A session id or key, or a unique prefix.")
        ],
        from_ordinal: Annotated[
            int, Field(ge=0, le=2**31, description="The first message's ordinal (default 0).")
        ] = 0,
        limit: Annotated[int, Field(ge=1, le=100, description="Messages scanned, 1–100 (default 20).")] = 20,
        roles: list[Literal["user", "assistant", "tool", "system"]] | None = None,
        max_chars_per_message: Annotated[int, Field(ge=100, le=20_000)] = 2000,
    ) -> dict[str, Any]:
        from agentlog.service.transcript import message_slice

        def work() -> dict[str, Any]:
            got = message_slice(index.conn(), session_id, from_ordinal, limit)
            wanted = set(roles or DEFAULT_ROLES)
            out: list[dict[str, Any]] = []
            filtered, used, scanned = 0, 0, 0
            for i, message in enumerate(got.messages):
                if message.role not in wanted:
                    filtered += 1
                    scanned += 1
                    continue
                row = message_row(from_ordinal + i, message, max_chars_per_message)
                if out and used + len(row["content"]) > PAGE_CHARS:
                    break
                used += len(row["content"])
                out.append(row)
                scanned += 1
            following = from_ordinal + scanned
            return {
                "session_id": got.header.key,
                "messages": out,
                "filtered": filtered,
                "total": got.total,
                "next_from": following if following < got.total else None,
            }

        return _call(work)

    @server.tool(
        description="Token usage and cost (USD) across every agent, as `agentlog usage REPORT --json` reports it: "
        "rows per day, week, month, session, model, project or agent, and totals, with filters. At most "
        f"{USAGE_ROWS} rows (the latest; rows_omitted counts the rest; totals cover all).",
        annotations=READ_ONLY,
    )
    async def get_usage_summary(
        report: Literal["daily", "weekly", "monthly", "session", "model", "project", "agent"] = "daily",
        agent: Agent = None,
        project: Project = None,
        since: Since = None,
        until: Until = None,
        timezone: Annotated[
            str | None, Field(max_length=100, description="IANA zone for days (default the machine's).")
        ] = None,
    ) -> dict[str, Any]:
        from agentlog.service.grouped import report_usage
        from agentlog.service.reports import usage_document
        from agentlog.service.usage import UsageQuery

        def work() -> dict[str, Any]:
            tz = zone_of(timezone)
            query = UsageQuery(agent=resolve_agent(agent), project=project, span=span_of(since, until, tz))
            found = report_usage(index.conn(), query, report, tz)
            document = usage_document(found, report, tz)
            rows = document["rows"]
            document["rows_omitted"] = max(len(rows) - USAGE_ROWS, 0)
            document["rows"] = rows[-USAGE_ROWS:]
            return _jsonable(document)

        return _call(work)

    @server.tool(
        description="Which coding-agent sessions are working right now and which need the user: the sessions "
        "written to in the span (default: the last 24 hours), needs_you first, each with its status (working, "
        "running_tool, needs_you, waiting_for_subagents, waiting_for_user, interrupted, errored, done, stale, "
        "unknown), since when, the record that shows it, whether it is inferred and why, the tools of pending calls, "
        "the current turn's tokens and cost (USD), and its subagents under it. Read from the logs alone. At most "
        f"100 sessions (default 20); names cut to {NAME_CHARS} characters, evidence and reason to {EVIDENCE_CHARS}.",
        annotations=READ_ONLY,
    )
    async def get_live_status(
        agent: Agent = None,
        project: Project = None,
        since: Since = None,
        limit: Annotated[int, Field(ge=1, le=100, description="Sessions, 1–100 (default 20).")] = 20,
    ) -> dict[str, Any]:
        from agentlog.service.status import live_status

        def work() -> dict[str, Any]:
            rows = live_status(index.conn(), session_filter(agent, project, since, None, subagents=True))
            return {"sessions": [live_row(r) for r in rows[:limit]], "total": len(rows)}

        return _call(work)

    @server.tool(
        description="Find the sessions whose tool calls read, wrote or edited a file: an absolute path or its last "
        "components (stats.py, weather/stats.py). The session that touched it last first; at most 100 sessions "
        f"(default 20), each with its latest {TOUCHES_PER_SESSION} touches (tool, path, time) and touch_count.",
        annotations=READ_ONLY,
    )
    async def find_sessions_by_file(
        path: Annotated[str, Field(min_length=1, max_length=4096)],
        agent: Agent = None,
        project: Project = None,
        since: Since = None,
        until: Until = None,
        limit: Annotated[int, Field(ge=1, le=100)] = 20,
    ) -> dict[str, Any]:
        from agentlog.service.costed import with_costs
        from agentlog.service.files import sessions_touching
        from agentlog.service.transcript import message_ordinal

        def work() -> dict[str, Any]:
            conn = index.conn()
            where: SessionFilter = session_filter(agent, project, since, until, subagents=True)
            found = sessions_touching(conn, path, where, limit)
            costed = with_costs(conn, [fs.session for fs in found])
            return {
                "sessions": [
                    {
                        **session_row(header),
                        "touch_count": len(fs.touches),
                        "touches": [
                            {
                                "tool": redact(t.tool),
                                "path": redact(t.path),
                                "timestamp": stamp(t.timestamp),
                                "ordinal": message_ordinal(conn, fs.session.key, t.message_id),
                            }
                            for t in fs.touches[:TOUCHES_PER_SESSION]
                        ],
                    }
                    for fs, header in zip(found, costed, strict=True)
                ]
            }

        return _call(work)

    return server


def _jsonable(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` with datetimes as ISO text (the usage document's times)."""
    out: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(value))
    return out
