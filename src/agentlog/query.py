"""Selecting sessions: filters shared by the CLI and the Python API."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from agentlog.errors import UsageError
from agentlog.model import Session

_RELATIVE = re.compile(r"^(\d+)\s*([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """``2026-11-01``, ``2026-11-01T08:00`` (local time unless an offset is given),
    or a span back from now: ``30m``, ``12h``, ``7d``, ``2w``.  Returns aware UTC.

    Raises :class:`~agentlog.errors.UsageError` for anything else.
    """
    now = now or datetime.now(UTC)
    match = _RELATIVE.match(text.strip().lower())
    if match:
        try:
            return now - timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
        except OverflowError:
            raise UsageError(f"not a date: {text!r} (that is before year 1)") from None
    try:
        stamp = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(f"not a date: {text!r} (use YYYY-MM-DD, an ISO time, or 7d / 12h / 30m)") from None
    if stamp.tzinfo is None:
        stamp = stamp.astimezone()  # local time, as a person means it
    return stamp.astimezone(UTC)


def filter_sessions(
    sessions: Iterable[Session],
    agent: str | None = None,
    project: str | None = None,
    since: datetime | None = None,
    include_children: bool = True,
) -> list[Session]:
    """Sessions of ``agent`` whose ``cwd`` contains ``project`` (case-insensitive)
    and that were active at or after ``since``; subagents/forks only when
    ``include_children``."""
    needle = project.lower() if project else None
    out = []
    for session in sessions:
        if agent and session.agent != agent:
            continue
        if needle and needle not in (session.cwd or "").lower():
            continue
        if since and (session.ended_at or session.started_at or since) < since:
            continue
        if since and session.ended_at is None and session.started_at is None:
            continue
        if not include_children and session.parent_key:
            continue
        out.append(session)
    return out
