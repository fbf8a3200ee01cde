"""agentlog: every coding agent's session logs in one model.

The Python API for notebooks and scripts::

    import agentlog
    for s in agentlog.sessions(agent="codex", since="7d"):
        print(s.key, s.title, s.usage.total_tokens)
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentlog.index.search import HitPage
    from agentlog.model import Message, Session, Usage

__all__ = ["Message", "Session", "Usage", "search", "sessions"]


def __getattr__(name: str) -> Any:
    # The model is loaded on first use, so `agentlog.cli` starts without it
    # until it needs it (see agentlog._console).
    if name in ("Message", "Session", "Usage"):
        from agentlog import model

        return getattr(model, name)
    raise AttributeError(f"module 'agentlog' has no attribute {name!r}")


def sessions(
    agent: str | None = None,
    project: str | None = None,
    since: str | None = None,
    roots: Iterable[str | Path] = (),
    subagents: bool = True,
    demo: bool = False,
    until: str | None = None,
) -> list[Session]:
    """Every session agentlog finds in the logs, newest first.

    ``agent`` is an adapter slug or a unique prefix of one, any case (``claude``
    → ``claude_code``); ``project`` a text the session's folder must contain (any
    case); ``since``/``until`` the time span the session was active in, by the
    rule of the command line (:mod:`agentlog.query`: an ISO time, a date —
    ``until`` a date counts through its end — or a span back from now: ``30m``,
    ``12h``, ``7d``, ``2w``; ``until`` exclusive); ``roots`` extra folders to
    search; ``demo`` reads the bundled sample corpus instead of your home.
    Raises :class:`agentlog.errors.UsageError` for a bad time, an unknown or
    ambiguous ``agent``.
    """
    from agentlog.query import SessionFilter, parse_span, resolve_agent
    from agentlog.service.home import Home
    from agentlog.service.sessions import logged_sessions

    where = SessionFilter(
        agent=resolve_agent(agent), project=project, span=parse_span(since, until), include_children=subagents
    )
    return logged_sessions(Home.of(os.environ, roots, demo), where)


def search(
    query: str,
    agent: str | None = None,
    project: str | None = None,
    since: str | None = None,
    until: str | None = None,
    role: str | None = None,
    tool: str | None = None,
    reasoning: bool = False,
    limit: int = 20,
    offset: int = 0,
    by_session: bool = False,
    sort: str = "rank",
    fts: bool = False,
    index: str | Path | None = None,
    roots: Iterable[str | Path] = (),
    demo: bool = False,
    sync: bool = True,
) -> HitPage:
    """One page of search hits, as ``agentlog search`` finds them: ``query``'s
    words as written (punctuation and all; operators only when written
    explicitly, ``fts`` for FTS5 syntax), filtered like :func:`sessions` plus
    ``role`` and ``tool`` (any case); ``limit`` hits from ``offset``
    (``page.next_offset`` is the next page's, ``None`` on the last),
    ``by_session`` for each session's best hit, ``sort`` ``rank``, ``newest`` or
    ``oldest``.  Reads the index (``index``, default ``$AGENTLOG_INDEX`` or the
    user cache's), brought up to date first unless ``sync`` is false.  Returns an
    :class:`agentlog.index.search.HitPage` (``hits``, ``total``, ``note``).
    Raises :class:`agentlog.errors.UsageError` for a bad filter or query,
    :class:`agentlog.index.search.SearchStopped` for a search past its time limit.
    """
    from agentlog.errors import UsageError
    from agentlog.index import db
    from agentlog.index.search import SORTS
    from agentlog.query import parse_span, resolve_agent
    from agentlog.service.home import Home
    from agentlog.service.index import update_index
    from agentlog.service.search import SearchFilter, SearchPaging
    from agentlog.service.search import search as search_index

    if sort not in SORTS:
        raise UsageError(f"unknown sort {sort!r} (known: {', '.join(SORTS)})")
    where = SearchFilter(
        agent=resolve_agent(agent),
        project=project,
        span=parse_span(since, until),
        role=role,
        tool=tool,
        reasoning=reasoning,
    )
    paging = SearchPaging(limit=limit, offset=offset, sort=sort, by_session=by_session, raw=fts)  # type: ignore[arg-type]
    path = Path(index) if index is not None else db.default_path(os.environ, demo)
    conn = db.connect(path)
    try:
        if sync:
            update_index(conn, Home.of(os.environ, roots, demo))
        return search_index(conn, query, where, paging)
    finally:
        conn.close()
