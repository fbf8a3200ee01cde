"""Keeping the index current while the viewer runs.

A daemon thread runs the same sync as the CLI
(:func:`agentlog.service.index.update_index`) on its own read-write connection, every
``interval`` seconds, and rebuilds the usage roll-ups of the sessions it touched
(the requests' read-only connections could only sum them per request); the web
requests see the new rows when the write commits.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from agentlog.errors import AgentlogError
from agentlog.index import db
from agentlog.index.usage import refresh_rollups
from agentlog.service.home import Home
from agentlog.service.index import update_index

log = logging.getLogger(__name__)


class Syncer(threading.Thread):
    """Syncs the index at ``path`` every ``interval`` seconds until :meth:`stop`.

    ``last`` is the UTC time the last sync finished (``None`` before the first),
    ``error`` the message of the last failed one (a failure only waits for the
    next round)."""

    def __init__(
        self, path: Path, env: Mapping[str, str], home: Path, roots: list[Path], interval: float
    ) -> None:
        super().__init__(name="agentlog-sync", daemon=True)
        self.path, self.env, self.home, self.roots, self.interval = path, env, home, roots, interval
        self.last: datetime | None = None
        self.error: str | None = None
        self._stop = threading.Event()

    def sync_once(self) -> None:
        """One sync on a fresh read-write connection."""
        conn = db.connect(self.path)
        try:
            update_index(conn, Home(dict(self.env), self.home, self.roots))
            refresh_rollups(conn)
        finally:
            conn.close()
        self.last = datetime.now(UTC)

    def run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sync_round()

    def sync_round(self) -> None:
        """One sync; a failure only sets :attr:`error` (a damaged index: the one
        line that says to delete it) and waits for the next round."""
        try:
            self.sync_once()
            self.error = None
        except Exception as exc:  # a bad round must not end the viewer
            problem = db.explain(exc, self.path)
            self.error = (
                str(problem or exc)
                if problem or isinstance(exc, AgentlogError)
                else f"{type(exc).__name__}: {exc}"
            )
            log.warning("background sync failed: %s", self.error)

    def stop(self) -> None:
        self._stop.set()
