"""Bringing the index up to date: the one sync call the CLI and the viewer's
background thread make."""

from __future__ import annotations

import sqlite3

from agentlog.index.sync import Progress, SyncReport, sync
from agentlog.service.home import Home


def update_index(
    conn: sqlite3.Connection, home: Home, full: bool = False, progress: Progress | None = None
) -> SyncReport:
    """Sync the index at ``conn`` with every registered adapter's logs under
    ``home`` (``full``: re-read every source, not only what changed); see
    :func:`agentlog.index.sync.sync`."""
    from agentlog.adapters import all_adapters

    return sync(conn, all_adapters(), home.env, home.home, home.roots, full=full, progress=progress)
