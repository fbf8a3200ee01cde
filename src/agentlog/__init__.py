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
    from agentlog.model import Message, Session, Usage

__all__ = ["Message", "Session", "Usage", "sessions"]


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
