"""The ``doctor`` query: parse anomalies per agent, unreadable and duplicate
sources, the folders a sync reads, and whether the index was ever synced."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec

from agentlog.index import queries
from agentlog.index.damage import SAMPLE_PARTS, RowCheck, check_rows
from agentlog.load import LoadReport
from agentlog.model import Diagnostics
from agentlog.probe import PathProblem
from agentlog.retention import RetentionWarning, claude_cleanup_warnings
from agentlog.service.first_run import never_synced
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


class RootsRead(msgspec.Struct):
    """The places that exist and that a sync reads for ``agent`` (``roots``:
    folders or files; a ``--root`` only when the agent found any log), with the
    number of log files discovery found for it (``sources``)."""

    agent: str
    roots: list[str]
    sources: int


class DoctorReport(msgspec.Struct, kw_only=True):
    """What ``agentlog doctor`` reports."""

    agents: list[AgentDiagnostics]
    unreadable: list[UnreadableSource]
    duplicates: list[DuplicateCopy]
    path_problems: list[PathProblem] = msgspec.field(default_factory=list)
    """Paths the sync's discovery could not look at (:class:`agentlog.load.LoadReport`)."""
    retention: list[RetentionWarning] = msgspec.field(default_factory=list)
    """Agent settings that delete logs (Claude Code's ``cleanupPeriodDays``)."""
    synced: bool = True
    """Whether the index was synced: ``False`` when it holds no source and this
    command did not sync it (``--no-sync`` on a new install: never synced, or
    synced where no agent's logs were), whatever the logs hold now."""
    roots: list[RootsRead] = msgspec.field(default_factory=list)
    """The places a sync reads, those that exist (of ``agent`` when one is given)."""
    remembered_roots: list[str] = msgspec.field(default_factory=list)
    """The ``--root`` folders earlier syncs of this index were given (real paths,
    :func:`agentlog.index.queries.stored_roots`): their logs stay synced, and
    read-only, without the flag."""
    rows: RowCheck | None = None
    """The stored rows read back (:func:`agentlog.index.damage.check_rows`), of every agent."""

    def as_json(self) -> dict[str, Any]:
        """The ``doctor --json`` shape."""
        return {
            "agents": [a.as_json() for a in self.agents],
            "unreadable": self.unreadable,
            "path_problems": self.path_problems,
            "duplicates": self.duplicates,
            "retention": self.retention,
            "synced": self.synced,
            "roots": self.roots,
            "remembered_roots": self.remembered_roots,
            "rows": self.rows,
        }


def doctor(
    conn: sqlite3.Connection,
    agent: str | None = None,
    found: LoadReport | None = None,
    home: Home | None = None,
    deep: bool = False,
) -> DoctorReport:
    """The diagnostics of ``agent`` (every agent when ``None``) in the index.
    ``found`` is what the sync's discovery met (:attr:`agentlog.index.sync.SyncReport.roots`):
    the problems it could not store (e.g. a file name that is not UTF-8), the
    paths it could not look at (those of ``agent`` and under a ``--root`` kept)
    and the places it read; when it is ``None`` or lists no place (``--no-sync``,
    a background build), discovery runs here on ``home`` (it reads the file
    system, writes nothing).  With ``home``, the agents' settings there that
    delete logs too (:func:`agentlog.retention.claude_cleanup_warnings`).
    The stored rows are read back by the read paths' decoders: the newest parts,
    messages and usage rows and every session, with ``deep`` every row
    (:func:`agentlog.index.damage.check_rows`)."""
    synced_now = found is not None and bool(found.roots)
    if not synced_now and home is not None:
        found = discovered(home)
    found = found or LoadReport()
    unstored, path_problems = found.errors, found.problems
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
        synced=synced_now or not never_synced(conn),
        roots=roots_read(found, agent, scanned(home) if home else ()),
        remembered_roots=[str(p) for p in queries.stored_roots(conn)],
        rows=check_rows(conn, None if deep else SAMPLE_PARTS),
    )


def discovered(home: Home) -> LoadReport:
    """What a sync's discovery finds on ``home`` (:func:`agentlog.load.discover_sources`),
    without reading a log or writing anything."""
    from agentlog.adapters import all_adapters
    from agentlog.load import discover_sources

    found = LoadReport()
    discover_sources(all_adapters(), home.env, home.home, home.roots, found)
    return found


def scanned(home: Home) -> set[Path]:
    """The places on ``home`` a sync looks in for any agent's files, not an agent's
    own folder: the ``--root`` folders (every agent's) and the folders Aider and
    Crush scan for files inside projects (:func:`agentlog.adapters._common.project_roots`)."""
    from agentlog.adapters._common import project_roots

    return {*home.roots, *project_roots(home.home)}


def roots_read(found: LoadReport, agent: str | None = None, shared: Iterable[Path] = ()) -> list[RootsRead]:
    """The places in ``found`` that exist, per agent (``agent``'s only when given),
    in the adapters' order; a ``shared`` place (:func:`scanned`) only for the
    agents that found any log, and an agent only when it has a place left."""
    shared = set(shared)
    rows = []
    for slug, roots in found.roots.items():
        count = found.sources.get(slug, 0)
        paths = [str(p) for p, present in roots if present and (count or p not in shared)]
        if paths and agent in (None, slug):
            rows.append(RootsRead(slug, paths, count))
    return rows
