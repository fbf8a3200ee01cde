"""The filter vocabulary of every surface (the command line, the web viewer,
the Python API, the MCP server): :func:`session_filter` and :func:`search_filter`
build the filters by the command line's rules (:mod:`agentlog.query`), taking
Python values too — a ``date``, a ``datetime`` or a ``timedelta`` back from
now, besides the texts ``--since``/``--until`` take.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING

from agentlog.errors import UsageError
from agentlog.query import SessionFilter, Span, parse_span, resolve_agent

if TYPE_CHECKING:
    from agentlog.service.search import SearchFilter

TimeArg = str | date | datetime | timedelta | None
"""A bound of a time span: a text by the command line's rule (an ISO time, a
date, ``30m``/``12h``/``7d``/``2w`` back from now), a ``date`` (as that bare
date), a ``datetime`` (naive: the chosen zone) or a ``timedelta`` back from now."""


def _as_text(value: TimeArg, now: datetime) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, timedelta):
        return (now - value).isoformat()
    if isinstance(value, datetime):  # before date: a datetime is a date
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    raise UsageError(f"not a time: {value!r} (use a str, date, datetime or timedelta)")


def span_of(since: TimeArg, until: TimeArg, tz: tzinfo | None = None, now: datetime | None = None) -> Span:
    """``since``/``until`` as a :class:`~agentlog.query.Span`, by the rule of
    :func:`agentlog.query.parse_span` (a date as ``until`` counts through its
    end).  Raises :class:`UsageError` for a bad value or ``since`` after ``until``."""
    now = now or datetime.now(UTC)
    return parse_span(_as_text(since, now), _as_text(until, now), tz, now)


def session_filter(
    agent: str | None = None,
    project: str | None = None,
    since: TimeArg = None,
    until: TimeArg = None,
    subagents: bool = False,
    status: str | None = None,
    text: str | None = None,
    exec_runs: bool = False,
    *,
    has_children: bool = False,
    tz: tzinfo | None = None,
) -> SessionFilter:
    """The :class:`~agentlog.query.SessionFilter` ``agentlog sessions`` builds:
    ``agent`` a slug or unique prefix (:func:`agentlog.query.resolve_agent`),
    ``project`` text the folder contains, the span (:func:`span_of`, dates in
    ``tz``, default local), ``subagents`` (subagents and forks as rows of their
    own; off, as on the command line), ``status``, ``text`` (in title, id or
    folder), ``exec_runs`` (non-interactive runs such as ``codex exec``; off, as
    on the command line), ``has_children`` (only sessions with subagents).
    Raises :class:`UsageError` for a bad agent or time."""
    return SessionFilter(
        agent=resolve_agent(agent),
        project=project,
        span=span_of(since, until, tz),
        status=status,
        has_children=has_children,
        text=text,
        include_children=subagents,
        include_exec=exec_runs,
    )


def search_filter(
    agent: str | None = None,
    project: str | None = None,
    since: TimeArg = None,
    until: TimeArg = None,
    role: str | None = None,
    tool: str | None = None,
    reasoning: bool = False,
    *,
    tz: tzinfo | None = None,
) -> SearchFilter:
    """The :class:`~agentlog.service.search.SearchFilter` ``agentlog search``
    builds: ``agent``, ``project`` and the span as :func:`session_filter` takes
    them (the span bounds message times), ``role``, ``tool`` (a normalised tool
    name) and ``reasoning`` (search reasoning too).  Raises :class:`UsageError`
    for a bad agent or time."""
    from agentlog.service.search import SearchFilter

    return SearchFilter(
        agent=resolve_agent(agent),
        project=project,
        span=span_of(since, until, tz),
        role=role,
        tool=tool,
        reasoning=reasoning,
    )
