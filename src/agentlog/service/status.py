"""The live board: which sessions are working, which need you (``agentlog status``,
``watch``, the viewer's board, the MCP tool and the Python API).

:func:`live_status` reads the index; :func:`logged_live_status` reads the logs
directly (no index) — both call :func:`board`, which applies
:func:`agentlog.live.status.refine` (the clock, the agent processes) to each
session's stored :func:`~agentlog.live.status.log_status`, so both paths give the
same answer for the same logs.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, NamedTuple

import msgspec

from agentlog.live.procs import ProcessTable
from agentlog.live.status import TAIL, facts_of, is_prompt, refine
from agentlog.model import Message, Session, SessionStatus, Usage
from agentlog.query import SessionFilter, Span
from agentlog.service.home import Home

if TYPE_CHECKING:
    from agentlog.usage.pricing import Pricer

DEFAULT_SINCE = timedelta(hours=24)
"""The span ``status`` and ``watch`` look back by default: sessions written to since."""

STATUS_ORDER: tuple[SessionStatus, ...] = (
    "needs_you",
    "errored",
    "running_tool",
    "waiting_for_subagents",
    "working",
    "stale",
    "interrupted",
    "waiting_for_user",
    "done",
    "unknown",
)
"""The board's order: the sessions that need you first."""


class TurnUsage(msgspec.Struct, kw_only=True):
    """The current turn's usage (the messages after the last prompt among the last
    :data:`~agentlog.live.status.TAIL`): tokens, and ``cost_usd`` as ``agentlog
    usage`` prices it (``None`` when no call has a price)."""

    input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float | None = None


class LiveSession(msgspec.Struct, kw_only=True):
    """One session on the board (the ``status --json`` row).

    ``status`` (:data:`agentlog.model.SessionStatus`) began at ``since`` (UTC);
    ``evidence`` names the record that shows it, written at ``evidence_at``;
    ``inferred`` says it is a guess, ``reason`` why; ``pending`` are the tools of
    the calls still waiting for a result.  ``last_write`` is the source file's
    modification time, ``alive`` whether a process of the agent runs in the
    session's folder (``None``: unknown).  ``turn`` is the current turn's usage;
    ``children`` its subagents and forks active in the span, on the board too."""

    key: str
    agent: str
    id: str
    title: str | None
    cwd: str | None
    kind: str
    parent_key: str | None
    status: SessionStatus
    since: datetime | None
    evidence: str | None
    evidence_at: datetime | None
    inferred: bool
    reason: str | None
    pending: list[str]
    last_write: datetime | None
    alive: bool | None
    turn: TurnUsage
    resume_command: str | None
    children: list[LiveSession] = msgspec.field(default_factory=list)


def turn_messages(messages: list[Message]) -> list[Message]:
    """The current turn: the messages after the last prompt among the last
    :data:`~agentlog.live.status.TAIL` (all of them when none is a prompt)."""
    tail = messages[-TAIL:]
    start = max((i for i, m in enumerate(tail) if is_prompt(m)), default=-1)
    return tail[start + 1 :]


def turn_usage(session: Session, turn: list[Message], prices: Pricer | None) -> TurnUsage:
    """:class:`TurnUsage` of ``turn`` (messages of ``session``), priced by ``prices``
    (a :class:`agentlog.usage.pricing.Pricer`; ``None``: no cost)."""
    from agentlog.usage.calls import calls_from_sessions
    from agentlog.usage.money import usd_float

    total = sum((m.usage for m in turn if m.usage is not None and "replayed" not in m.flags), Usage())
    cost: int | None = None
    if prices is not None:
        for call in calls_from_sessions([msgspec.structs.replace(session, messages=turn)]):
            priced = prices.price(call)
            if priced.cost is not None:
                cost = (cost or 0) + priced.cost
    return TurnUsage(
        input_tokens=total.input_tokens,
        cache_read_tokens=total.cache_read_tokens,
        cache_write_tokens=total.cache_write_tokens,
        output_tokens=total.output_tokens,
        total_tokens=total.total_tokens,
        cost_usd=None if cost is None else usd_float(cost),
    )


def last_write(path: str | None) -> datetime | None:
    """The modification time of ``path`` (UTC), ``None`` when it cannot be read."""
    return look(path)[0]


def look(path: str | None) -> tuple[datetime | None, int | None]:
    """One ``stat`` of ``path``: its modification time (UTC; ``None`` when it
    cannot be read) and its size in bytes (``None`` unless it is a regular file)."""
    if not path:
        return None, None
    try:
        st = os.stat(path)
        return datetime.fromtimestamp(st.st_mtime, UTC), st.st_size if stat.S_ISREG(st.st_mode) else None
    except (OSError, ValueError):
        return None, None


def board(
    sessions: Iterable[Session],
    turns: Mapping[str, TurnUsage],
    writes: Mapping[str, datetime | None],
    now: datetime,
    procs: ProcessTable | None,
    redact_secrets: bool = True,
) -> list[LiveSession]:
    """The board of ``sessions`` (headers with their stored log status): each
    refined by the clock (``writes``: key → its source's last write) and the agent
    processes (``procs``; ``None``: unknown), children nested under their parent
    (the parent's ``waiting_for_subagents`` ends when none of them is active),
    ordered by :data:`STATUS_ORDER` then the latest write first; the
    header's log text (:func:`agentlog.export.redaction.redact_header`: title,
    folder, evidence, pending tool names…) with secrets replaced unless not
    ``redact_secrets``.  Pure."""
    from agentlog.export.redaction import redact_header

    sessions = list(sessions)
    views = {s.key: redact_header(s) if redact_secrets else s for s in sessions}
    by_key = {s.key: s for s in sessions}
    kids: dict[str, list[Session]] = {}
    for s in sessions:
        if s.parent_key in by_key:
            kids.setdefault(s.parent_key, []).append(s)

    def row(s: Session, cwd: str | None, shown_cwd: str | None) -> LiveSession:
        view = views[s.key]
        children = [row(c, cwd or c.cwd, shown_cwd or views[c.key].cwd) for c in kids.get(s.key, [])]
        folder = s.cwd or cwd
        alive = procs.alive(s.agent, folder) if procs is not None else None
        wrote = writes.get(s.key)
        facts = refine(
            facts_of(view),
            s.agent,
            last_write=wrote,
            now=now,
            alive=alive,
            children=[c.status for c in children] if children else None,
        )
        return LiveSession(
            key=s.key,
            agent=s.agent,
            id=s.id,
            title=view.title,
            cwd=view.cwd or shown_cwd,
            kind=s.kind,
            parent_key=s.parent_key,
            status=facts.status,
            since=facts.since,
            evidence=facts.evidence,
            evidence_at=facts.at,
            inferred=facts.inferred,
            reason=facts.reason,
            pending=list(facts.pending),
            last_write=wrote,
            alive=alive,
            turn=turns.get(s.key, TurnUsage()),
            resume_command=view.resume_command,
            children=_ordered(children),
        )

    return _ordered([row(s, None, None) for s in sessions if s.parent_key not in by_key])


def _ordered(rows: list[LiveSession]) -> list[LiveSession]:
    def when(r: LiveSession) -> float:
        stamp = r.last_write or r.evidence_at
        return -(stamp.timestamp() if stamp else 0.0)

    return sorted(rows, key=lambda r: (STATUS_ORDER.index(r.status), when(r), r.key))


def by_project(rows: list[LiveSession]) -> list[tuple[str, list[LiveSession]]]:
    """``rows`` grouped by folder (``""`` when unknown), the group of the most
    urgent row first (:data:`STATUS_ORDER`), rows keeping their order."""
    groups: dict[str, list[LiveSession]] = {}
    for row in rows:
        groups.setdefault(row.cwd or "", []).append(row)
    return sorted(groups.items(), key=lambda g: (min(STATUS_ORDER.index(r.status) for r in g[1]), g[0]))


def flatten(rows: Iterable[LiveSession]) -> list[LiveSession]:
    """Every row and its children, depth first, in board order."""
    out: list[LiveSession] = []
    for r in rows:
        out.append(r)
        out += flatten(r.children)
    return out


def needs_attention(rows: Iterable[LiveSession]) -> list[LiveSession]:
    """Every row (children too) whose status is ``needs_you``, board order."""
    out: list[LiveSession] = []
    for r in rows:
        if r.status == "needs_you":
            out.append(r)
        out += needs_attention(r.children)
    return out


def refine_sessions(
    conn: sqlite3.Connection,
    sessions: list[Session],
    now: datetime | None = None,
    procs: ProcessTable | bool | None = True,
) -> list[Session]:
    """``sessions`` (headers read from the index, e.g. a listing's page), each given
    in place its board status: the stored log status refined by the clock and the
    processes, as :func:`live_status` refines it (a parent's
    ``waiting_for_subagents`` is refined with the children among ``sessions``
    only).  Every listing and header :mod:`agentlog.service.sessions` and
    :mod:`agentlog.service.transcript` give goes through it."""
    from agentlog.index.live import source_paths

    if not sessions:
        return sessions
    paths = source_paths(conn, [s.key for s in sessions])
    rows = board(
        sessions, {}, {k: last_write(p) for k, p in paths.items()}, now or datetime.now(UTC), _procs(procs)
    )
    found: dict[str, LiveSession] = {}
    stack = list(rows)
    while stack:
        row = stack.pop()
        found[row.key] = row
        stack += row.children
    for s in sessions:
        row = found[s.key]
        s.status, s.status_since, s.status_inferred = row.status, row.since, row.inferred
        s.status_reason = row.reason
    return sessions


def _where(where: SessionFilter | None, now: datetime) -> SessionFilter:
    base = where or SessionFilter()
    span = base.span if base.span.bounded else Span(since=now - DEFAULT_SINCE)
    return msgspec.structs.replace(base, span=span, include_children=True)


class LiveRead(NamedTuple):
    """What the board reads from the index (:func:`read_live`): the sessions'
    headers, each one's current turn (key → :class:`TurnUsage`) and its source's
    last write (key → UTC time, ``None`` when unknown)."""

    sessions: list[Session]
    turns: dict[str, TurnUsage]
    writes: dict[str, datetime | None]


def read_live(
    conn: sqlite3.Connection, where: SessionFilter | None = None, *, now: datetime | None = None, costs: bool = True
) -> LiveRead:
    """The index's part of :func:`live_status`: the sessions ``where`` keeps at
    ``now`` (its default span: :data:`DEFAULT_SINCE`), their turns (priced when
    ``costs``) and last writes; :func:`board` of it at any later time is the
    board then, as long as no log changed.  Raises ``sqlite3.Error`` only for a
    damaged index."""
    from agentlog.index import queries
    from agentlog.index.live import last_messages, source_paths

    found = queries.list_sessions(conn, _where(where, now or datetime.now(UTC)), include_empty=True)
    paths = source_paths(conn, [s.key for s in found])
    prices = None
    if costs:
        from agentlog.service.usage import pricer

        prices = pricer(conn)
    turns = {s.key: turn_usage(s, turn_messages(last_messages(conn, s.key, TAIL)), prices) for s in found}
    return LiveRead(found, turns, {k: last_write(p) for k, p in paths.items()})


def live_status(
    conn: sqlite3.Connection,
    where: SessionFilter | None = None,
    *,
    now: datetime | None = None,
    procs: ProcessTable | bool | None = True,
    costs: bool = True,
    redact_secrets: bool = True,
) -> list[LiveSession]:
    """The board read from the index at ``conn``: the sessions ``where`` keeps
    (:class:`agentlog.query.SessionFilter`; its ``span`` defaults to the last
    :data:`DEFAULT_SINCE`; subagents always included, nested under their parent)
    as :class:`LiveSession` rows, ``needs_you`` first (:data:`STATUS_ORDER`):
    :func:`board` of :func:`read_live`.

    ``now`` defaults to the current time; ``procs`` is a process table, ``True``
    to read ``/proc`` (:func:`agentlog.live.procs.scan`) or ``None``/``False`` for
    unknown liveness; ``costs`` prices the current turn; titles and evidence
    with secrets replaced unless not ``redact_secrets``.  Raises
    ``sqlite3.Error`` only for a damaged index."""
    now = now or datetime.now(UTC)
    read = read_live(conn, where, now=now, costs=costs)
    return board(read.sessions, read.turns, read.writes, now, _procs(procs), redact_secrets)


def logged_live_status(
    home: Home,
    where: SessionFilter | None = None,
    *,
    now: datetime | None = None,
    procs: ProcessTable | bool | None = True,
) -> list[LiveSession]:
    """:func:`live_status` read from the logs directly (no index, no costs)."""
    from agentlog.load import load_sessions
    from agentlog.query import filter_sessions

    now = now or datetime.now(UTC)
    chosen = _where(where, now)
    found = load_sessions([chosen.agent] if chosen.agent else None, home.env, home.home, home.roots)
    kept = filter_sessions(found, chosen)
    turns = {s.key: turn_usage(s, turn_messages(s.messages), None) for s in kept}
    writes = {s.key: last_write(s.sources[0] if s.sources else None) for s in kept}
    return board(kept, turns, writes, now, _procs(procs))


def _procs(procs: ProcessTable | bool | None) -> ProcessTable | None:
    if procs is True:
        from agentlog.live.procs import scan

        return scan()
    return procs or None
