"""The ``doctor`` query: parse anomalies per agent, unreadable and duplicate sources."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

import msgspec

from agentlog.index import queries
from agentlog.model import Diagnostics
from agentlog.probe import PathProblem
from agentlog.retention import RetentionWarning, claude_cleanup_warnings
from agentlog.service.home import Home


class SkippedIn(msgspec.Struct):
    """The records of one source (``path``) that were skipped, counted by reason."""

    path: str
    skipped: dict[str, int]


class AgentDiagnostics(msgspec.Struct, kw_only=True):
    """One agent's parse diagnostics summed over its ``sessions`` (``total``:
    records read and used, skipped by reason, unknown types kept raw, …);
    ``skipped_in``: the sources those skipped records were in, most skipped first."""

    agent: str
    sessions: int
    total: Diagnostics
    skipped_in: list[SkippedIn] = msgspec.field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """``{"agent", "sessions", <every Diagnostics field>, "skipped_in"}``, defaults included."""
        fields = {name: getattr(self.total, name) for name in self.total.__struct_fields__}
        return {"agent": self.agent, "sessions": self.sessions, **fields, "skipped_in": self.skipped_in}


class UnreadableSource(msgspec.Struct):
    """A source that could not be read and why."""

    path: str
    error: str


class DuplicateCopy(msgspec.Struct):
    """A source ignored as a copy of another (``copy_of``)."""

    path: str
    copy_of: str


class DoctorReport(msgspec.Struct, kw_only=True):
    """What ``agentlog doctor`` reports."""

    agents: list[AgentDiagnostics]
    unreadable: list[UnreadableSource]
    duplicates: list[DuplicateCopy]
    path_problems: list[PathProblem] = msgspec.field(default_factory=list)
    """Paths the sync's discovery could not look at (:class:`agentlog.load.LoadReport`)."""
    retention: list[RetentionWarning] = msgspec.field(default_factory=list)
    """Agent settings that delete logs (Claude Code's ``cleanupPeriodDays``)."""

    def as_json(self) -> dict[str, Any]:
        """The ``doctor --json`` shape."""
        return {
            "agents": [a.as_json() for a in self.agents],
            "unreadable": self.unreadable,
            "path_problems": self.path_problems,
            "duplicates": self.duplicates,
            "retention": self.retention,
        }


def doctor(
    conn: sqlite3.Connection,
    agent: str | None = None,
    unstored: Iterable[tuple[str, str]] = (),
    path_problems: Iterable[PathProblem] = (),
    home: Home | None = None,
) -> DoctorReport:
    """The diagnostics of ``agent`` (every agent when ``None``) in the index;
    ``unstored`` are ``(path, error)`` problems a sync met but could not store
    (e.g. a file name that is not UTF-8); ``path_problems`` the paths its
    discovery could not look at (those of ``agent`` and under a ``--root`` kept);
    with ``home``, the agents' settings there that delete logs
    (:func:`agentlog.retention.claude_cleanup_warnings`)."""
    unreadable, duplicates = queries.source_problems(conn, agent)
    rows = []
    for slug, diagnostics in queries.agent_diagnostics(conn, agent).items():
        total = Diagnostics()
        by_path: dict[str, Diagnostics] = {}
        for path, d in diagnostics:
            total.merge(d)
            if d.skipped:
                by_path.setdefault(path, Diagnostics()).merge(d)
        skipped_in = [SkippedIn(path, d.skipped) for path, d in by_path.items()]
        skipped_in.sort(key=lambda s: (-sum(s.skipped.values()), s.path))
        rows.append(AgentDiagnostics(agent=slug, sessions=len(diagnostics), total=total, skipped_in=skipped_in))
    return DoctorReport(
        agents=rows,
        unreadable=[UnreadableSource(p, e) for p, e in [*unreadable, *unstored]],
        duplicates=[DuplicateCopy(p, c) for p, c in duplicates],
        path_problems=[p for p in path_problems if agent is None or p.agent in (agent, None)],
        retention=claude_cleanup_warnings(home.env, home.home)
        if home and agent in (None, "claude_code")
        else [],
    )
