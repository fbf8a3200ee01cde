"""Bringing the index up to date: the one sync call the CLI and the viewer's
background thread make; and removing what it keeps of logs that are gone
(:func:`prune`, :mod:`agentlog.index.archive`), or of a ``--root`` given once
(:func:`forget_root`)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path

import msgspec

from agentlog.index import archive
from agentlog.index.archive import ArchivedSource, KeptLogs
from agentlog.index.sync import Progress, SyncReport, sync, sync_known
from agentlog.service.home import Home


def update_index(
    conn: sqlite3.Connection, home: Home, full: bool = False, progress: Progress | None = None
) -> SyncReport:
    """Sync the index at ``conn`` with every registered adapter's logs under
    ``home`` (``full``: re-read every source, not only what changed); see
    :func:`agentlog.index.sync.sync`."""
    from agentlog.adapters import registered, save_registry

    try:
        return sync(conn, registered(), home.env, home.home, home.roots, full=full, progress=progress)
    finally:
        save_registry()


def with_remembered_roots(home: Home, index_path: Path) -> Home:
    """``home`` with the ``--root`` folders the index at ``index_path`` remembers
    (read only; none when there is no index at this agentlog's schema, or it
    cannot be read): what a sync reads, for a command that reads the logs
    directly (``usage --no-index``, a first run), so both count the same logs."""
    from agentlog.errors import AgentlogError
    from agentlog.index import db
    from agentlog.index.queries import stored_roots

    try:
        conn = db.connect_current(index_path)
    except (AgentlogError, sqlite3.Error, OSError):
        return home
    if conn is None:
        return home
    try:
        roots = stored_roots(conn)
    except sqlite3.Error:
        roots = []
    finally:
        conn.close()
    return home.with_roots(roots)


def still_unreadable(conn: sqlite3.Connection, report: SyncReport) -> list[str]:
    """The sources an earlier sync could not read that are unchanged since (so not
    tried again, and not among ``report``'s failures): what ``index`` says is still
    unreadable beside what it failed now."""
    from agentlog.index.queries import source_problems

    failed_now = {path for path, _ in report.failed}
    return [path for path, _ in source_problems(conn)[0] if path not in failed_now]


def sync_changed(
    conn: sqlite3.Connection, home: Home, paths: Iterable[str], discover: bool = True
) -> tuple[SyncReport, bool]:
    """Sync the sources among ``paths`` (what a watcher saw change; ``""`` means
    "anything"): the known ones directly, and — when another path changed and
    ``discover`` — a whole :func:`update_index` to find new logs.  Returns the
    report and whether the whole sync ran."""
    from agentlog.adapters import all_adapters

    wanted = set(paths)
    report, unknown = sync_known(conn, all_adapters(), wanted - {""})
    if discover and (unknown or "" in wanted):
        return update_index(conn, home), True
    return report, False


def prune(conn: sqlite3.Connection, agent: str | None = None, dry_run: bool = False) -> list[ArchivedSource]:
    """Remove the archived sources of ``agent`` (every agent when ``None``) and
    their sessions (``dry_run``: change nothing); what was, or would be, removed."""
    return archive.prune(conn, agent, dry_run=dry_run)


def forget_root(
    conn: sqlite3.Connection, home: Home, folder: Path, dry_run: bool = False
) -> tuple[list[ArchivedSource], list[KeptLogs]] | None:
    """Stop reading ``folder``, a ``--root`` an earlier sync was given (symlinks and
    ``..`` resolved, as it was remembered): the sources under it and their sessions
    are removed (``dry_run``: change nothing), except those in the agents' own
    folders under ``home`` (:meth:`Home.log_folders` without roots), which syncs
    read without it, in another remembered root that holds it, or files agents
    keep inside projects found through other sessions' ``cwd`` (Aider's history).  ``(what was,
    or would be, removed; the sources left, by the folder holding them)``
    (:func:`agentlog.index.archive.forget_root`), ``None`` when the index does not
    remember ``folder``."""
    from agentlog.adapters import registered
    from agentlog.load import project_sources

    real = os.path.realpath(folder)
    own = msgspec.structs.replace(home, roots=[]).log_folders()
    projects = [ref.path for _, ref in project_sources(registered(), archive.cwds_outside(conn, real))]
    return archive.forget_root(conn, real, dry_run=dry_run, keep=own, keep_files=projects)
