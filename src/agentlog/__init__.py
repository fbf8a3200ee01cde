"""agentlog: every coding agent's session logs in one model.

The Python API for notebooks and scripts (:mod:`agentlog.api`)::

    import agentlog
    with agentlog.open() as archive:
        for s in archive.sessions(agent="codex", since="7d"):
            print(s.key, s.title, s.usage.total_tokens, s.usage.cost_usd)

:func:`sessions` and :func:`search` are one-call shortcuts over it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # the names of annotations only: `import agentlog` imports nothing (the entry point's start)
    from collections.abc import Iterable
    from pathlib import Path
    from typing import Any

    from agentlog.api import Archive, open
    from agentlog.index.search import HitPage
    from agentlog.model import Message, Session, Usage
    from agentlog.service.filters import TimeArg

__all__ = ["Archive", "Message", "Session", "Usage", "open", "search", "sessions"]


def __getattr__(name: str) -> Any:
    # The model is loaded on first use, so `agentlog.cli` starts without it
    # until it needs it (see agentlog._console).
    if name in ("Message", "Session", "Usage"):
        from agentlog import model

        return getattr(model, name)
    if name in ("open", "Archive"):
        from agentlog import api

        return getattr(api, name)
    raise AttributeError(f"module 'agentlog' has no attribute {name!r}")


def sessions(
    agent: str | None = None,
    project: str | None = None,
    since: TimeArg = None,
    roots: str | Path | Iterable[str | Path] = (),
    subagents: bool = False,
    demo: bool = False,
    until: TimeArg = None,
    index: str | Path | None = None,
    sync: bool = True,
    exec_runs: bool = False,
) -> list[Session]:
    """Every session the filters keep, newest first, each in full (messages
    included) with its cost in ``usage.cost_usd``: a shortcut over
    :func:`agentlog.open` and :meth:`agentlog.api.Archive.sessions` (which gives
    headers only, and is what to use on a large home).

    ``agent`` is an adapter slug or a unique prefix of one, any case (``claude``
    → ``claude_code``); ``project`` a text the session's folder must contain (any
    case); ``since``/``until`` the time span the session was active in, by the
    rule of the command line (:mod:`agentlog.query`: an ISO time, a date —
    ``until`` a date counts through its end — or a span back from now: ``30m``,
    ``12h``, ``7d``, ``2w``; ``until`` exclusive), or a ``date``, ``datetime`` or
    ``timedelta``; ``subagents`` also lists subagents and forks as sessions of
    their own (off, as in ``agentlog sessions``), ``exec_runs`` non-interactive
    runs (``codex exec``; off too); ``roots`` one extra folder to
    search or several; ``demo`` reads the bundled sample corpus instead of your
    home; ``index``/``sync`` as :func:`agentlog.open` takes them.  Raises
    :class:`agentlog.errors.UsageError` for a bad time, an unknown or ambiguous
    ``agent``.
    """
    from agentlog.api import open as open_archive

    with open_archive(index, demo=demo, sync=sync, roots=roots) as archive:
        found = archive.sessions(agent, project, since, until, subagents=subagents, exec_runs=exec_runs)
        return [archive.session(s.key) for s in found]


def search(
    query: str,
    agent: str | None = None,
    project: str | None = None,
    since: TimeArg = None,
    until: TimeArg = None,
    role: str | None = None,
    tool: str | None = None,
    reasoning: bool = False,
    limit: int = 20,
    offset: int = 0,
    by_session: bool = False,
    sort: str = "rank",
    fts: bool = False,
    index: str | Path | None = None,
    roots: str | Path | Iterable[str | Path] = (),
    demo: bool = False,
    sync: bool = True,
) -> HitPage:
    """One page of search hits, as ``agentlog search`` finds them: a shortcut
    over :func:`agentlog.open` and :meth:`agentlog.api.Archive.search` (``offset``
    is its ``cursor``; ``page.next_offset`` the next page's, ``None`` on the
    last).  Raises :class:`agentlog.errors.UsageError` for a bad filter or query,
    :class:`agentlog.index.search.SearchStopped` for a search past its time limit.
    """
    from agentlog.api import open as open_archive

    with open_archive(index, demo=demo, sync=sync, roots=roots) as archive:
        return archive.search(
            query,
            agent,
            project,
            since,
            until,
            role=role,
            tool=tool,
            reasoning=reasoning,
            limit=limit,
            cursor=offset,
            by_session=by_session,
            sort=sort,
            fts=fts,
        )
