"""The ``doctor`` query: parse anomalies per agent, unreadable and duplicate sources."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

import msgspec

from agentlog.index import queries
from agentlog.model import Diagnostics


class AgentDiagnostics(msgspec.Struct, kw_only=True):
    """One agent's parse diagnostics summed over its sessions: records read and
    used, skipped records by reason, unknown record types kept raw, bytes of
    half-written last lines, and source errors."""

    agent: str
    sessions: int
    records_total: int
    records_used: int
    skipped: dict[str, int]
    unknown_types: dict[str, int]
    incomplete_tail_bytes: int
    errors: list[str]


class PathProblem(msgspec.Struct):
    """A path that could not be read and why."""

    path: str
    error: str


class DuplicateCopy(msgspec.Struct):
    """A source ignored as a copy of another (``copy_of``)."""

    path: str
    copy_of: str


class DoctorReport(msgspec.Struct, kw_only=True):
    """What ``agentlog doctor`` reports (also its ``--json`` shape)."""

    agents: list[AgentDiagnostics]
    unreadable: list[PathProblem]
    duplicates: list[DuplicateCopy]


def doctor(
    conn: sqlite3.Connection, agent: str | None = None, unstored: Iterable[tuple[str, str]] = ()
) -> DoctorReport:
    """The diagnostics of ``agent`` (every agent when ``None``) in the index;
    ``unstored`` are ``(path, error)`` problems a sync met but could not store
    (e.g. a file name that is not UTF-8)."""
    unreadable, duplicates = queries.source_problems(conn, agent)
    rows = []
    for slug, diagnostics in queries.agent_diagnostics(conn, agent).items():
        total = Diagnostics()
        for d in diagnostics:
            total.merge(d)
        rows.append(
            AgentDiagnostics(
                agent=slug,
                sessions=len(diagnostics),
                records_total=total.records_total,
                records_used=total.records_used,
                skipped=total.skipped,
                unknown_types=total.unknown_types,
                incomplete_tail_bytes=total.incomplete_tail_bytes,
                errors=total.errors,
            )
        )
    return DoctorReport(
        agents=rows,
        unreadable=[PathProblem(p, e) for p, e in [*unreadable, *unstored]],
        duplicates=[DuplicateCopy(p, c) for p, c in duplicates],
    )
