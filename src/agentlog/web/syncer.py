"""Keeping the index current while the viewer runs.

The viewer's background thread is the one :class:`~agentlog.service.follow.Follower`:
it syncs once, then only when a log changes (file-system events; a poll every
``interval`` seconds without watchfiles), on its own read-write connection, and
rebuilds the usage roll-ups of the sessions it touched (the requests'
read-only connections could only sum them per request); the web requests see
the new rows when the write commits, and the live pages are woken
(:meth:`~agentlog.service.follow.Follower.wait`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from agentlog.service.follow import Follower
from agentlog.service.home import Home


class Syncer(Follower):
    """A :class:`Follower` of the index at ``path`` over the logs of ``env``,
    ``home`` and ``roots``; ``interval`` is the polling fallback's period (s)."""

    def __init__(
        self, path: Path, env: Mapping[str, str], home: Path, roots: list[Path], interval: float
    ) -> None:
        super().__init__(path, Home(dict(env), home, roots), interval)
