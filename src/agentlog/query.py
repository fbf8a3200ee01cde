"""The filter vocabulary every surface shares: times and spans, agent names, and
"folder contains text".

One rule each, used by the CLI, the web viewer, the Python API and the index
queries (the SQL paths call :func:`text_contains` as a registered SQLite
function, so SQL and in-memory filters cannot disagree).

Time rule (``--since`` / ``--until`` in every command, ``since``/``until`` in the
viewer and the API): a span is half-open, ``since <= t < until``.

- an exact time (``2026-01-01T12:00:00Z``, ``2026-01-01 12:00+02:00``; no offset:
  the chosen zone, default local) is that instant, for both ends;
- a bare date (``2026-01-01`` or ``20260101``) starts at that day's midnight as
  ``--since`` and runs through the end of that day as ``--until`` (days in the
  chosen zone);
- a span back from now (``30m``, ``12h``, ``7d``, ``2w``) is that instant.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import msgspec

from agentlog import lazy
from agentlog.errors import UsageError
from agentlog.model import Session
from agentlog.rules import folder_contains

_RELATIVE = lazy.pattern(r"^(\d+)\s*([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_DATE = lazy.pattern(r"^(\d{4})-?(\d{2})-?(\d{2})$")

TIME_HELP = "an ISO time, a date (YYYY-MM-DD) or a span back from now (30m, 12h, 7d, 2w)"
"""What ``--since``/``--until`` take, for the commands' ``--help``."""
SQL_INT_MAX = 2**63 - 1
"""The largest integer SQLite binds: a row count or offset above it (``LIMIT ?``) raises
``OverflowError``, so every surface bounds what it takes at this value."""

UNTIL_HELP = "Up to this time (exclusive); a bare date counts through the end of that day."
"""The one meaning of ``--until``, said in every command's ``--help``."""


def parse_zone(name: str | None) -> ZoneInfo | None:
    """The IANA zone ``name`` (``None``/``"local"``: the machine's, see
    :func:`agentlog.usage.report.zone`).  Raises :class:`UsageError` for an
    unknown name."""
    from agentlog.usage.report import zone

    try:
        return zone(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise UsageError(f"unknown time zone {name!r} (use an IANA name like Europe/Berlin)") from None


def _day(text: str) -> date | None:
    """``YYYY-MM-DD`` or ``YYYYMMDD`` as a date; ``None`` when ``text`` is not a bare date."""
    match = _DATE.match(text)
    if match is None:
        return None
    try:
        return date(*(int(g) for g in match.groups()))
    except ValueError:
        raise UsageError(f"not a date: {text!r}") from None


def _midnight(day: date, tz: tzinfo | None) -> datetime:
    start = datetime.combine(day, time())
    return start.replace(tzinfo=tz) if tz is not None else start.astimezone()


def parse_time(
    text: str, tz: tzinfo | None = None, *, end: bool = False, now: datetime | None = None
) -> datetime:
    """``text`` as an aware UTC instant, by the module's time rule: ``end`` reads
    a bare date as the end of that day (the next midnight in ``tz``), else as
    its start; ``tz`` (``None``: the local zone) places dates and times written
    without an offset.  Raises :class:`UsageError` for anything else."""
    text = text.strip()
    try:
        return _instant(text, tz, end, now or datetime.now(UTC))
    except (OverflowError, ValueError):  # a date at the calendar's ends, moved across a zone
        raise UsageError(f"not a date: {text!r} (out of range)") from None


def _instant(text: str, tz: tzinfo | None, end: bool, now: datetime) -> datetime:
    match = _RELATIVE.match(text.lower())
    if match:
        return now - timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
    day = _day(text)
    if day is not None:
        try:
            return _midnight(day + timedelta(days=1) if end else day, tz).astimezone(UTC)
        except (OverflowError, ValueError):  # the calendar's first or last day, moved across a zone
            return (datetime.min if day.year == 1 else datetime.max).replace(tzinfo=UTC)
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"not a date: {text!r} (use {TIME_HELP})") from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=tz) if tz is not None else stamp.astimezone()
    return stamp.astimezone(UTC)


def parse_day(text: str, tz: tzinfo | None = None, now: datetime | None = None) -> date:
    """The calendar day (in ``tz``) ``text`` names by the time rule: a bare date
    itself, an exact time or span the day it falls on."""
    day = _day(text.strip())
    return day if day is not None else parse_time(text, tz, now=now).astimezone(tz).date()


class Span(msgspec.Struct, frozen=True):
    """A half-open time span ``since <= t < until`` (aware UTC; ``None``: open)."""

    since: datetime | None = None
    until: datetime | None = None

    @property
    def bounded(self) -> bool:
        return self.since is not None or self.until is not None

    def contains(self, stamp: datetime | None) -> bool:
        """Whether ``stamp`` lies in the span (an unknown time only in an open one)."""
        if stamp is None:
            return not self.bounded
        return (self.since is None or stamp >= self.since) and (self.until is None or stamp < self.until)

    def overlaps(self, first: datetime | None, last: datetime | None) -> bool:
        """Whether something active from ``first`` to ``last`` (either may be
        unknown) was active inside the span."""
        first, last = first or last, last or first
        if first is None or last is None:
            return not self.bounded
        return (self.since is None or last >= self.since) and (self.until is None or first < self.until)


def parse_span(
    since: str | None, until: str | None, tz: tzinfo | None = None, now: datetime | None = None
) -> Span:
    """``--since``/``--until`` texts as a :class:`Span` (either may be ``None``).
    Raises :class:`UsageError` for a bad text, or a ``since`` after ``until`` or at
    its end (an empty span: nothing could be found)."""
    now = now or datetime.now(UTC)
    first = parse_time(since, tz, now=now) if since else None
    last = parse_time(until, tz, end=True, now=now) if until else None
    if first is not None and last is not None and first > last:
        raise UsageError(f"--since {since} is after --until {until}")
    if first is not None and first == last:  # `--since D+1 --until D`: D counts through its end
        raise UsageError(f"--since {since} and --until {until} leave an empty span (a date counts through its end)")
    return Span(first, last)


def resolve_agent(agent: str | None) -> str | None:
    """The adapter slug ``agent`` names: a slug or a unique prefix of one, any
    case, ``-`` for ``_`` (``Claude`` → ``claude_code``).  ``None`` stays ``None``.
    Raises :class:`UsageError` naming the candidates when ``agent`` is ambiguous
    or unknown."""
    if agent is None:
        return None
    from agentlog.adapters import registered

    slugs = [a.slug for a in registered()]  # from the registry cache: no parser imported
    wanted = agent.strip().lower().replace("-", "_")
    if wanted in slugs:
        return wanted
    matches = [s for s in slugs if s.startswith(wanted)] if wanted else []
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise UsageError(f"ambiguous agent {agent!r}: {', '.join(matches)}")
    raise UsageError(f"unknown agent {agent!r} (known: {', '.join(slugs)})")


def text_contains(value: str | None, text: str | None) -> bool:
    """Whether ``value`` (a recorded folder: the ``--project`` match; or a
    title) contains ``text``, ignoring case (Unicode case folding); an empty or
    missing ``text`` matches everything, a missing ``value`` only that."""
    if not text:
        return True
    return text.casefold() in (value or "").casefold()


TEXT_CONTAINS_SQL = "text_contains"
"""The name :func:`text_contains` has in SQL once :func:`sql_functions` registered it."""
FOLDER_CONTAINS_SQL = "folder_contains"
"""The name :func:`agentlog.rules.folder_contains` (the ``--project`` match) has in SQL."""


def sql_functions(conn: sqlite3.Connection) -> sqlite3.Connection:
    """Register the filter rules on ``conn`` (``text_contains(cwd, text)``), so
    SQL uses the same function as the in-memory paths; returns ``conn``."""
    conn.create_function(TEXT_CONTAINS_SQL, 2, text_contains, deterministic=True)
    conn.create_function(FOLDER_CONTAINS_SQL, 2, folder_contains, deterministic=True)
    return conn


class SessionFilter(msgspec.Struct, kw_only=True, frozen=True):
    """Which sessions a listing keeps: ``agent`` (a slug), ``project`` (text the
    folder contains, :func:`text_contains`), ``span`` (active at some time in
    it: ended at or after ``since``, started before ``until``), ``status``,
    ``has_children`` (with subagents or forks), ``text`` (in title, id or folder,
    any case), ``include_children`` (subagents and forks as rows of their own,
    and non-interactive runs), ``include_exec`` (non-interactive runs, kind
    ``exec``: ``codex exec``; left out by default like subagents)."""

    agent: str | None = None
    project: str | None = None
    span: Span = Span()
    status: str | None = None
    has_children: bool = False
    text: str | None = None
    include_children: bool = False
    include_exec: bool = False

    def matches(self, session: Session) -> bool:
        """The in-memory form of the filter (``has_children`` needs the tree:
        see :func:`filter_sessions`)."""
        return (
            (self.agent is None or session.agent == self.agent)
            and folder_contains(session.cwd, self.project)
            and self.span.overlaps(session.started_at, session.ended_at)
            and (self.status is None or session.status == self.status)
            and text_contains(f"{session.title or ''} {session.id} {session.cwd or ''}", self.text)
            and (
                self.include_children
                or (not session.parent_key and (self.include_exec or session.kind != "exec"))
            )
        )


def filter_sessions(sessions: Iterable[Session], where: SessionFilter) -> list[Session]:
    """The sessions ``where`` keeps, in their order."""
    sessions = list(sessions)
    parents = {s.parent_key for s in sessions if s.parent_key} if where.has_children else set()
    return [s for s in sessions if where.matches(s) and (not where.has_children or s.key in parents)]
