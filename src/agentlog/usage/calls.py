"""Per-call usage records: the one input every usage report consumes.

A :class:`Call` is one billed API call after dedup, attributed to the session
where it happened.  :func:`calls_from_sessions` makes them from assembled
sessions (replayed copies already carry no usage, see :mod:`agentlog.link`);
the fast scanner and, later, the index make the same records.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime

import msgspec

from agentlog.model import Session, Usage
from agentlog.rules import MODEL_INFERRED


class Call(msgspec.Struct, gc=False, kw_only=True, frozen=True):
    """One billed API call.

    ``session_key`` is the session where the call happened; ``parent_key`` its
    direct parent session (subagent/fork), ``root_key`` the top of its tree (the
    session key itself for a main session).  ``project`` is the recorded working
    folder.  ``timestamp`` is aware UTC (``None`` when the agent wrote none).
    ``usage`` holds the exclusive token buckets, the recorded service tier and,
    when the agent wrote one, a ``recorded`` cost in USD.

    A record can also stand for ``calls`` calls of one session, model and service
    tier within one 15-minute span (the index's roll-up, :mod:`agentlog.index.usage`):
    ``usage`` is then their sum at that tier, ``timestamp`` the first call's time,
    ``last_timestamp`` the last one's, and ``prompt_range`` the smallest and
    largest whole prompt (input + cache read + cache writes) of one of them;
    ``recorded_nano`` the sum of their recorded costs, each counted as
    :func:`agentlog.usage.money.recorded_nano` (``usage.cost_usd`` is then that sum
    in USD, for show; ``None`` on a single call, whose cost is converted when priced).
    """

    session_key: str
    agent: str
    model: str | None
    timestamp: datetime | None
    usage: Usage
    parent_key: str | None = None
    root_key: str = ""
    project: str | None = None
    calls: int = 1
    last_timestamp: datetime | None = None
    prompt_range: tuple[int, int] | None = None
    recorded_nano: int | None = None
    model_inferred: bool = False
    """The agent recorded no model: ``model`` is the adapter's documented fallback
    (message flag ``model_inferred``)."""

    @property
    def service_tier(self) -> str | None:
        """The recorded speed/priority tier the call is priced at (``fast``,
        ``priority``, …), ``None`` for the standard one."""
        return self.usage.service_tier

    @property
    def prompt_tokens(self) -> tuple[int, int]:
        """``(smallest, largest)`` whole prompt of one call in this record (tokens)."""
        if self.prompt_range is not None:
            return self.prompt_range
        u = self.usage
        whole = u.input_tokens + u.cache_read_tokens + u.cache_write_5m_tokens + u.cache_write_1h_tokens
        return whole, whole


def root_keys(sessions: Iterable[Session]) -> dict[str, str]:
    """Session key → key of its top-most ancestor (itself for a root); a parent
    that is not among ``sessions`` is still the top of its children's tree."""
    return roots_of({s.key: s.parent_key for s in sessions})


def roots_of(parent: Mapping[str, str | None]) -> dict[str, str]:
    """Session key → key of its top-most ancestor, from ``key → parent_key``."""
    roots: dict[str, str] = {}
    for key in parent:
        seen = [key]
        up = parent[key]
        while up is not None and up not in seen:
            seen.append(up)
            up = parent.get(up)
        roots[key] = seen[-1]
    return roots


NOT_CONSUMPTION = "usage_context_inclusive"
"""Message flag of usage that is not consumption: a per-turn context size that
includes earlier turns (Cursor)."""


def counts_as_call(flags: Iterable[str]) -> bool:
    """False for usage flagged :data:`NOT_CONSUMPTION`."""
    return NOT_CONSUMPTION not in flags


def calls_from_sessions(sessions: Iterable[Session]) -> Iterator[Call]:
    """Every call of ``sessions``: one per message that carries ``usage``.

    A subagent's or fork's calls stay on that session (``root_key`` names the
    tree top for roll-ups), so each call counts once.
    """
    sessions = list(sessions)
    roots = root_keys(sessions)
    for session in sessions:
        for message in session.messages:
            if message.usage is None or not counts_as_call(message.flags):
                continue
            yield Call(
                session_key=session.key,
                agent=session.agent,
                model=message.model,
                timestamp=message.timestamp,
                usage=message.usage,
                parent_key=session.parent_key,
                root_key=roots[session.key],
                project=session.cwd,
                model_inferred=MODEL_INFERRED in message.flags,
            )
