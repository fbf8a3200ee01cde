"""Following one session as it is written (``agentlog tail``, the viewer's live
session view): what is new since the last look.

:class:`SessionTail` remembers, for the session and its subagents/forks (the
tree below it), the last :data:`~agentlog.live.status.TAIL` messages it has
seen (each message's part count and which tool calls had a result) and the
board status; :meth:`SessionTail.poll` returns the :class:`TailEvent` items
since: a ``message`` (a new message), a ``part`` (a new part of a known message,
or a tool call whose ``tool_result`` arrived: the call with its result), a
``status`` (the status, :class:`~agentlog.service.status.LiveSession`, changed), a
``log`` (a log file of the tree was ``removed``, is ``back``, or was ``truncated``:
shorter than at the last look; once a file, under the first of its sessions; the
index keeps what it read, so the messages stay).
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import Literal

import msgspec

from agentlog.export.redaction import redact_message, redact_part
from agentlog.index import queries
from agentlog.index.live import last_messages, source_paths
from agentlog.live.procs import ProcessTable
from agentlog.live.status import TAIL
from agentlog.model import Message, Part, Session, ToolCallPart
from agentlog.service.status import LiveSession, TurnUsage, board, look

EventKind = Literal["message", "part", "status", "log"]
LogChange = Literal["removed", "back", "truncated"]


class TailEvent(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One NDJSON line of ``tail --json``: ``event`` (``message``, ``part``,
    ``status``, ``log``), the ``session`` key it belongs to and its ``parent`` (a
    subagent's messages come under their parent), then ``message`` (the whole
    message), ``message_id`` + ``part`` (the new part), ``status`` (the row) or
    ``log`` (what happened to the log file) + ``path`` (that file)."""

    event: EventKind
    session: str
    parent: str | None = None
    message: Message | None = None
    message_id: str | None = None
    part: Part | None = None
    status: LiveSession | None = None
    log: LogChange | None = None
    path: str | None = None


def log_change(before: int | None, after: int | None) -> LogChange | None:
    """What happened to a log between two looks at its size in bytes (``None``:
    absent; a first look, ``before`` ``-1``, tells nothing): ``removed``, ``back``,
    ``truncated`` (shorter), else ``None``.  Pure."""
    if before == -1 or before == after:
        return None
    if after is None:
        return "removed"
    if before is None:
        return "back"
    return "truncated" if after < before else None


def _signature(message: Message) -> tuple[int, tuple[bool, ...]]:
    calls = tuple(p.result is not None for p in message.parts if isinstance(p, ToolCallPart))
    return len(message.parts), calls


def _flat(row: LiveSession) -> list[LiveSession]:
    return [row, *(r for c in row.children for r in _flat(c))]


class SessionTail:
    """Follows the session ``key`` resolves to (a key, an id or a unique prefix;
    :class:`~agentlog.errors.NotFound` otherwise) and its subagents.  The first
    :meth:`poll` returns its last ``backlog`` messages (of the session itself)
    and its status.  Log text in the events has its secrets replaced unless not
    ``redact_secrets``."""

    def __init__(self, conn: sqlite3.Connection, ref: str, backlog: int = 10, redact_secrets: bool = True) -> None:
        self.key = queries.resolve_key(conn, ref)
        self.backlog = backlog
        self.redact_secrets = redact_secrets
        self.seen: dict[tuple[str, str], tuple[int, tuple[bool, ...]]] = {}
        self.statuses: dict[str, tuple[object, ...]] = {}
        self.sizes: dict[str, int | None] = {}
        self.started = False

    def tree(self, conn: sqlite3.Connection) -> list[Session]:
        """The session and every session below it (headers)."""
        everything = queries.session_tree(conn, self.key)
        wanted, out = {self.key}, []
        for _, s in everything:
            if s.key in wanted or s.parent_key in wanted:
                wanted.add(s.key)
                out.append(s)
        return out

    def poll(
        self, conn: sqlite3.Connection, now: datetime | None = None, procs: ProcessTable | None = None
    ) -> list[TailEvent]:
        """The events since the last poll (see the module)."""
        now = now or datetime.now(UTC)
        sessions = self.tree(conn)
        parents = {s.key: s.parent_key for s in sessions}
        events: list[TailEvent] = []
        for s in sessions:
            messages = last_messages(conn, s.key, TAIL)
            if not self.started:
                shown = messages[-self.backlog :] if s.key == self.key and self.backlog else []
                for m in messages:
                    self.seen[(s.key, m.id)] = _signature(m)
                events += [
                    TailEvent(event="message", session=s.key, parent=parents[s.key], message=self._shown(m))
                    for m in shown
                ]
                continue
            for m in messages:
                events += self._changes(s.key, parents[s.key], m)
        paths = source_paths(conn, [s.key for s in sessions])
        looks = {k: look(p) for k, p in paths.items()}
        writes = {k: wrote for k, (wrote, _) in looks.items()}
        owners: dict[str, str] = {}  # a file's first session in the tree (one log holds a subagent's too)
        for s in sessions:
            if s.key in paths:
                owners.setdefault(paths[s.key], s.key)
        for path, key in owners.items():
            size = looks[key][1]
            change = log_change(self.sizes.get(path, -1), size)
            self.sizes[path] = size
            if change is not None:
                events.append(TailEvent(event="log", session=key, parent=parents[key], log=change, path=path))
        rows = board(sessions, {}, writes, now, procs, self.redact_secrets)
        for row in (r for top in rows for r in _flat(top)):
            seen = (row.status, row.since, row.evidence, row.inferred)  # not the reason: "no write for 31 min" ticks
            if self.statuses.get(row.key) != seen:
                self.statuses[row.key] = seen
                bare = msgspec.structs.replace(row, children=[], turn=TurnUsage())
                events.append(TailEvent(event="status", session=row.key, parent=row.parent_key, status=bare))
        self.started = True
        return events

    def _changes(self, key: str, parent: str | None, m: Message) -> list[TailEvent]:
        before = self.seen.get((key, m.id))
        after = _signature(m)
        self.seen[(key, m.id)] = after
        if before is None:
            return [TailEvent(event="message", session=key, parent=parent, message=self._shown(m))]
        if before == after:
            return []
        count, results = before
        out = [
            TailEvent(event="part", session=key, parent=parent, message_id=m.id, part=self._shown_part(p))
            for p in m.parts[count:]
        ]
        calls = [p for p in m.parts[:count] if isinstance(p, ToolCallPart)]
        for call, had in zip(calls, results, strict=False):
            if not had and call.result is not None:
                shown = self._shown_part(call)
                out.append(TailEvent(event="part", session=key, parent=parent, message_id=m.id, part=shown))
        return out

    def _shown(self, message: Message) -> Message:
        """``message`` as an event carries it: redacted unless not ``redact_secrets``
        (only what is emitted is redacted, not every message looked at)."""
        return redact_message(message) if self.redact_secrets else message

    def _shown_part(self, part: Part) -> Part:
        return redact_part(part) if self.redact_secrets else part
