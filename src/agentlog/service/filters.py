"""The filter vocabulary of every surface (the command line, the web viewer,
the Python API, the MCP server): :func:`session_filter` and :func:`search_filter`
build the filters by the command line's rules (:mod:`agentlog.query`), taking
Python values too — a ``date``, a ``datetime`` or a ``timedelta`` back from
now, besides the texts ``--since``/``--until`` take.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, get_args

from agentlog.errors import UsageError
from agentlog.model import SESSION_STATUSES, Role
from agentlog.query import SQL_INT_MAX, SessionFilter, Span, parse_span, parse_zone, resolve_agent

if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

    from agentlog.service.search import SearchFilter

ROLES: tuple[str, ...] = get_args(Role)
"""The roles a search may be limited to."""

TimeArg = str | date | datetime | timedelta | None
"""A bound of a time span: a text by the command line's rule (an ISO time, a
date, ``30m``/``12h``/``7d``/``2w`` back from now), a ``date`` (as that bare
date), a ``datetime`` (naive: the chosen zone) or a ``timedelta`` back from now."""


def _as_text(value: TimeArg, now: datetime, name: str) -> str | None:
    if isinstance(value, str) and not value.strip():  # as the command line's ``--since ''``
        raise UsageError(f"{name} is empty (leave it out for no bound)")
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
    end).  Raises :class:`UsageError` for a bad value (an empty or blank text
    included, as the command line refuses it) or ``since`` after ``until``."""
    now = now or datetime.now(UTC)
    return parse_span(_as_text(since, now, "since"), _as_text(until, now, "until"), tz, now)


def zone_of(name: str | None) -> ZoneInfo | None:
    """The time zone ``name`` names by :func:`agentlog.query.parse_zone` (``None``
    or ``"local"``: the machine's).  Raises :class:`UsageError` for an unknown
    name or an empty or blank one (as the command line's ``--timezone ''``)."""
    if name is not None and not name.strip():
        raise UsageError("timezone is empty (leave it out for the local zone)")
    return parse_zone(name)


def check_page(offset: int, limit: int) -> None:
    """Refuse a page SQLite cannot count to: ``offset`` negative, or ``offset +
    limit`` past :data:`~agentlog.query.SQL_INT_MAX` (a search reads the first
    ``offset + limit`` hits: beyond 2**63 - 1 SQLite raises ``datatype mismatch``).
    Raises :class:`UsageError`."""
    if not 0 <= offset <= SQL_INT_MAX - max(limit, 0):
        raise UsageError(f"offset {offset} is not in 0…{SQL_INT_MAX - max(limit, 0)} (with limit {limit})")


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
    Raises :class:`UsageError` for a bad agent, time or status."""
    if status is not None and status not in SESSION_STATUSES:
        raise UsageError(f"unknown status {status!r} (one of {', '.join(SESSION_STATUSES)})")
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
    for a bad agent, time or role (any case)."""
    from agentlog.service.search import SearchFilter

    if role is not None and role.lower() not in ROLES:
        raise UsageError(f"unknown role {role!r} (one of {', '.join(ROLES)})")
    return SearchFilter(
        agent=resolve_agent(agent),
        project=project,
        span=span_of(since, until, tz),
        role=role.lower() if role is not None else None,
        tool=tool,
        reasoning=reasoning,
    )
