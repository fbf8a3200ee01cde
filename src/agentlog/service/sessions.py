"""Session queries: listings with the filter vocabulary, one session, the
overview, a session's page for the viewer, and the logs read without an index.

Every function reads the index through :mod:`agentlog.index.queries` (or the
logs through :mod:`agentlog.load`) and returns plain results; surfaces only
present them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import msgspec

from agentlog.export.redaction import redact_header
from agentlog.index import queries
from agentlog.model import Message, Session, Usage
from agentlog.query import SQL_INT_MAX, SessionFilter, filter_sessions
from agentlog.service.home import Home
from agentlog.service.status import refine_sessions
from agentlog.service.usage import SessionCost, session_costs

SORTS = (*queries.SESSION_SORTS, "cost")
"""The orders :func:`page_sessions` knows."""


@dataclass
class SessionList:
    """Sessions a filter keeps (newest first), each one's number of subagents
    and forks (``children``, by key), the sources that could not be read
    (``unreadable``: ``(path, error)``) and whether the index holds any session."""

    sessions: list[Session]
    children: dict[str, int]
    unreadable: list[tuple[str, str]]
    indexed: bool


def list_sessions(
    conn: sqlite3.Connection, where: SessionFilter, limit: int | None = None, redact_secrets: bool = True
) -> SessionList:
    """At most ``limit`` sessions ``where`` keeps, newest first; their titles and
    descriptions with secrets replaced (:func:`agentlog.redact.redact`) unless
    not ``redact_secrets``; each with its board status (:func:`~agentlog.service.status.refine_sessions`), which
    ``where.status`` is matched against."""
    if where.status is None:
        selected = refine_sessions(conn, queries.list_sessions(conn, where, limit=limit))
    else:
        every = queries.list_sessions(conn, msgspec.structs.replace(where, status=None))
        selected = with_status(conn, every, where.status)[:limit]
    if redact_secrets:
        selected = [redact_header(s) for s in selected]
    indexed = bool(selected) or bool(queries.list_sessions(conn, limit=1))
    return SessionList(selected, queries.child_counts(conn), queries.source_problems(conn)[0], indexed)


def with_status(conn: sqlite3.Connection, sessions: list[Session], status: str) -> list[Session]:
    """The ``sessions`` (headers read from the index, every one a filter keeps
    whatever its status) whose board status
    (:func:`~agentlog.service.status.refine_sessions`) is ``status``, in order:
    a listing's ``--status``, matched against what the board shows, not the stored
    log status."""
    return [s for s in refine_sessions(conn, sessions) if s.status == status]


@dataclass
class SessionPage:
    """One page of a sorted listing: the sessions, how many match in all, each
    one's number of subagents (``children``) and cost (``costs``, by key)."""

    sessions: list[Session]
    total: int
    children: dict[str, int]
    costs: dict[str, SessionCost]


class SessionOrder(msgspec.Struct, frozen=True):
    """How a listing is ordered: ``first_by`` (keys of
    :data:`agentlog.index.queries.SESSION_SORTS`, ascending, to group rows), then
    ``sort`` (one of :data:`SORTS`), newest/largest first when ``descending``."""

    sort: str = "started"
    descending: bool = True
    first_by: tuple[str, ...] = ()


def page_sessions(
    conn: sqlite3.Connection, where: SessionFilter, order: SessionOrder, offset: int = 0, limit: int = 50
) -> SessionPage:
    """Sessions ``offset`` … ``offset + limit`` that ``where`` keeps, in ``order``,
    each with its board status (:func:`~agentlog.service.status.refine_sessions`); ``where.status`` is matched
    against that status (every session the rest of the filter keeps is refined
    first).  ``cost`` is priced, not SQL: every matching session is priced, those
    without a price last.  Raises ``KeyError`` for an unknown sort."""
    if where.status is None:
        found = _stored_page(conn, where, order, offset, limit)
        refine_sessions(conn, found.sessions)
        return found
    everything = _stored_page(conn, msgspec.structs.replace(where, status=None), order, 0, SQL_INT_MAX)
    kept = with_status(conn, everything.sessions, where.status)
    rows = kept[offset : offset + limit]
    return SessionPage(
        rows, len(kept), everything.children, {s.key: everything.costs[s.key] for s in rows if s.key in everything.costs}
    )


def _stored_page(
    conn: sqlite3.Connection, where: SessionFilter, order: SessionOrder, offset: int, limit: int
) -> SessionPage:
    """:func:`page_sessions` on the stored statuses (``where.status`` in SQL)."""
    sort, descending, first_by = order.sort, order.descending, order.first_by
    if sort != "cost":
        rows, total = queries.page_sessions(conn, where, sort, descending, offset, limit, first_by)
        return SessionPage(
            rows, total, queries.child_counts(conn), session_costs(conn, [s.key for s in rows])
        )
    everything, total = queries.page_sessions(conn, where, "started", True, 0, -1, first_by)
    costs = session_costs(conn, [s.key for s in everything])

    def cost(s: Session) -> float | None:
        found = costs.get(s.key)
        return found.cost_usd if found else None

    priced = sorted(
        (s for s in everything if cost(s) is not None), key=lambda s: cost(s) or 0.0, reverse=descending
    )
    ordered = priced + [s for s in everything if cost(s) is None]
    if first_by:  # keep the grouping: a stable sort by the group fields
        fields: dict[str, Callable[[Session], str]] = {
            "project": lambda s: s.cwd or "",
            "agent": lambda s: s.agent,
        }
        ordered.sort(key=lambda s: tuple(fields[f](s) for f in first_by))
    rows = ordered[offset : offset + limit]
    return SessionPage(
        rows, total, queries.child_counts(conn), {k: costs[k] for k in (s.key for s in rows) if k in costs}
    )


@dataclass
class SessionView:
    """One session in full (messages included) and its direct subagents and forks."""

    session: Session
    children: list[Session]


def session(conn: sqlite3.Connection, ref: str) -> SessionView:
    """The session with key or id ``ref`` or a unique prefix of one.  Raises
    :class:`~agentlog.errors.NotFound` when none or several match."""
    found = queries.get_session(conn, ref)
    children = queries.children(conn, found.key)
    refine_sessions(conn, [found, *children])
    return SessionView(found, children)


@dataclass
class TranscriptPage:
    """A page of one session for the viewer: its header, the messages shown, how
    many are shown in all and hidden (meta, injected, replayed), its subagents
    (``children``; ``links``: by the tool call that started them), the tree it
    belongs to (when it has more than one session), its parent, its cost."""

    header: Session
    messages: list[Message]
    total: int
    hidden: int
    children: list[Session]
    links: dict[str, Session]
    tree: list[tuple[int, Session]]
    parent: list[Session]
    cost: SessionCost


def transcript_page(
    conn: sqlite3.Connection, ref: str, offset: int, limit: int, include_hidden: bool = False
) -> TranscriptPage:
    """Messages ``offset`` … ``offset + limit`` of the session ``ref`` names
    (:func:`agentlog.index.queries.resolve_key`) and what the page shows beside them."""
    key = queries.resolve_key(conn, ref)
    (header,) = queries.list_sessions_by_keys(conn, [key])
    messages, total = queries.message_page(conn, key, offset, limit, include_hidden=include_hidden)
    _, everything = queries.message_page(conn, key, 0, 0, include_hidden=True)
    kids = queries.children(conn, key)
    tree = queries.session_tree(conn, key)
    parent = queries.list_sessions_by_keys(conn, [header.parent_key]) if header.parent_key else []
    refine_sessions(conn, [header, *kids, *parent, *(s for _, s in tree)])
    return TranscriptPage(
        header=header,
        messages=messages,
        total=total,
        hidden=0 if include_hidden else everything - total,
        children=kids,
        links={c.parent_tool_call_id: c for c in kids if c.parent_tool_call_id},
        tree=tree if len(tree) > 1 else [],
        parent=parent,
        cost=session_costs(conn, [key]).get(key, SessionCost()),
    )


class AgentSummary(msgspec.Struct, kw_only=True):
    """One agent in the overview: the folders where its logs were found, its main
    sessions (as ``agentlog sessions`` lists them), its non-interactive runs
    (``exec_runs``: ``codex exec``, listed with ``--exec``) and subagents/forks,
    their tokens and the last activity."""

    agent: str
    name: str
    roots: list[str]
    sessions: int
    exec_runs: int
    subagents: int
    total_tokens: int
    last_active: datetime | None


@dataclass
class Overview:
    """Every agent (registry order), every indexed session's count (``mains``:
    main sessions, ``exec_runs``, ``subagents``), the ``recent`` main sessions,
    subagent counts by key and the sources that could not be read."""

    agents: list[AgentSummary]
    mains: int
    exec_runs: int
    subagents: int
    recent: list[Session]
    children: dict[str, int]
    unreadable: list[tuple[str, str]] = field(default_factory=list)


def overview(conn: sqlite3.Connection, found_roots: dict[str, list[str]], recent: int = 10) -> Overview:
    """The overview: ``found_roots`` are the folders (by agent slug) where a sync
    found logs; the recent sessions' titles with secrets replaced."""
    from agentlog.adapters import all_adapters

    everything = queries.list_sessions(conn)
    listed = SessionFilter().matches  # as `agentlog sessions` lists them: no `codex exec` runs
    agents = []
    for adapter in all_adapters():
        mine = [s for s in everything if s.agent == adapter.slug]
        own_mains = sum(1 for s in mine if not s.parent_key)
        shown = sum(1 for s in mine if listed(s))
        agents.append(
            AgentSummary(
                agent=adapter.slug,
                name=adapter.display_name,
                roots=found_roots.get(adapter.slug, []),
                sessions=shown,
                exec_runs=own_mains - shown,
                subagents=len(mine) - own_mains,
                total_tokens=sum((s.usage for s in mine), Usage()).total_tokens,
                last_active=max((s.ended_at for s in mine if s.ended_at), default=None),
            )
        )
    mains = [s for s in everything if not s.parent_key]
    shown_mains = [s for s in mains if listed(s)]
    return Overview(
        agents=agents,
        mains=len(shown_mains),
        exec_runs=len(mains) - len(shown_mains),
        subagents=len(everything) - len(mains),
        recent=[redact_header(s) for s in refine_sessions(conn, shown_mains[:recent])],
        children=queries.child_counts(conn),
        unreadable=queries.source_problems(conn)[0],
    )


def logged_sessions(home: Home, where: SessionFilter) -> list[Session]:
    """The sessions ``where`` keeps, read from the logs directly (no index), newest
    first; their titles and descriptions with secrets replaced."""
    from agentlog.load import load_sessions

    found = load_sessions([where.agent] if where.agent else None, home.env, home.home, home.roots)
    return [redact_header(s) for s in filter_sessions(found, where)]
