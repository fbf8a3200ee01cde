"""Bringing the index up to date: the one sync call the CLI and the viewer's
background thread make; and removing what it keeps of logs that are gone
(:func:`prune`, :mod:`agentlog.index.archive`)."""

from __future__ import annotations

import sqlite3

from agentlog.index.archive import ArchivedSource
from agentlog.index.archive import prune as prune_archived
from agentlog.index.sync import Progress, SyncReport, sync
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


def prune(conn: sqlite3.Connection, agent: str | None = None, dry_run: bool = False) -> list[ArchivedSource]:
    """Remove the archived sources of ``agent`` (every agent when ``None``) and
    their sessions (``dry_run``: change nothing); what was, or would be, removed."""
    return prune_archived(conn, agent, dry_run=dry_run)
