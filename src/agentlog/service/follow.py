"""Keeping the index current from file-system events, and telling who waits.

:class:`Follower` is the one loop behind ``serve``, ``watch`` and ``tail``: a
daemon thread that syncs once, then sleeps on a :class:`~agentlog.live.watch.LogWatcher`
and, for each burst of changed files, syncs only the sources that changed
(:func:`agentlog.service.index.sync_changed`; a path the index does not know
triggers a whole sync that discovers new logs, and is ignored afterwards if it
is no log), rebuilds the usage roll-ups of what changed, then bumps
:attr:`Follower.version` and wakes every :meth:`Follower.wait`.  Idle, it costs
no CPU (the watcher blocks in the kernel); without watchfiles it polls every
``interval`` seconds with a whole sync (the former behaviour of ``serve``).
"""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime
from pathlib import Path

from agentlog.errors import AgentlogError
from agentlog.index import db
from agentlog.index.usage import refresh_rollups
from agentlog.live.watch import STEP, LogWatcher, roots_to_watch
from agentlog.service.home import Home
from agentlog.service.index import sync_changed, update_index

log = logging.getLogger(__name__)

TICK = 2.0
"""Seconds of quiet after which the watcher reports in: the first report means the
watch is in place, and one catch-up sync reads what was written meanwhile; the
others cost a wake-up of the thread and nothing else."""


class Follower(threading.Thread):
    """Syncs the index at ``path`` for ``home`` whenever its logs change, until :meth:`stop`.

    ``last`` is the UTC time the last sync finished (``None`` before the first),
    ``error`` the message of the last failed one (a failure only waits for the
    next change); it syncs everything first unless ``synced``; ``version`` counts the syncs that ran, ``mode`` is the
    watcher's (``events`` or ``polling``)."""

    def __init__(
        self,
        path: Path,
        home: Home,
        interval: float = 30.0,
        force_polling: bool = False,
        debounce: int = STEP,
        synced: bool = False,
    ) -> None:
        super().__init__(name="agentlog-follow", daemon=True)
        self.path, self.home = path, home
        self.last: datetime | None = None
        self.error: str | None = None
        self.version = 0
        self.synced = synced
        self.ignored: set[str] = set()
        self._changed = threading.Condition()
        self.watcher = LogWatcher(
            roots_to_watch(dict(home.env), home.home, home.roots), debounce, interval, force_polling, TICK
        )

    @property
    def mode(self) -> str:
        return self.watcher.mode

    def sync_once(self, changed: set[str] | None = None) -> None:
        """One sync on a fresh read-write connection: of ``changed`` paths, or of
        everything (``None``)."""
        conn = db.connect(self.path)
        try:
            if changed is None:
                update_index(conn, self.home)
            else:
                _, whole = sync_changed(conn, self.home, changed)
                if whole:  # a changed path that is still no source is no log: not synced again for it
                    known = {p for (p,) in conn.execute("SELECT path FROM sources")}
                    known |= {
                        s for (row,) in conn.execute("SELECT sidecars FROM sources") for s in _json_list(row)
                    }
                    self.ignored |= {p for p in changed if p and p not in known}
            refresh_rollups(conn)
        finally:
            conn.close()
        self.last = datetime.now(UTC)

    def sync_round(self, changed: set[str] | None = None) -> None:
        """:meth:`sync_once`; a failure only sets :attr:`error` (a damaged index:
        the one line that says to delete it).  Wakes the waiters."""
        try:
            self.sync_once(changed)
            self.error = None
        except Exception as exc:  # a bad round must not end the viewer
            problem = db.explain(exc, self.path)
            self.error = (
                str(problem or exc)
                if problem or isinstance(exc, AgentlogError)
                else f"{type(exc).__name__}: {exc}"
            )
            log.warning("background sync failed: %s", self.error)
        with self._changed:
            self.version += 1
            self._changed.notify_all()

    def run(self) -> None:
        if not self.synced:  # ``synced``: the caller has just synced
            self.sync_round()
        index = str(self.path)
        caught_up = False
        for changed in self.watcher:
            if not changed:  # a quiet tick; the first: the watch is set up
                if not caught_up:
                    caught_up = True
                    self.sync_round()  # what was written while the watch was being set up
                continue
            wanted = {p for p in changed if not p.startswith(index)} - self.ignored
            if wanted:
                self.sync_round(None if "" in wanted else wanted)

    def wait(self, version: int, timeout: float) -> int:
        """Block until :attr:`version` passes ``version`` (or ``timeout`` seconds
        or :meth:`stop`); returns the version then."""
        with self._changed:
            self._changed.wait_for(lambda: self.version > version or self.watcher.stopped, timeout)
            return self.version

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called."""
        return self.watcher.stopped

    def stop(self) -> None:
        self.watcher.stop()
        with self._changed:
            self._changed.notify_all()


def _json_list(text: str | None) -> list[str]:
    import json

    value = json.loads(text) if text else []
    return [str(v) for v in value] if isinstance(value, list) else []
