"""Full-text rows of small sources written once per sync batch, not once per source.

Each source is stored in a savepoint of its own (:mod:`agentlog.index.sync`), and
FTS5 writes its pending terms out as a new segment at every savepoint begun or
released once the table was written in the transaction (``fts5SavepointMethod``
and ``fts5ReleaseMethod`` call ``sqlite3Fts5FlushToDisk``, sqlite
``ext/fts5/fts5_main.c``): on a first index of 3,000 small sessions, those
3,000 tiny segments and their merges cost more than the text's own indexing
(``RELEASE source`` 3.4 s, the ``parts_fts`` inserts 1.8 s).

So while a batch of small sources is stored, the ``parts_fts`` rows of their parts
wait here (:class:`DeferredText`, the text :func:`~agentlog.index.fts.index_text`
computed as the part was written) and are inserted in one go just before the
batch commits, outside every savepoint: one segment per batch.  The full-text
triggers skip a part that waits (SQL function :data:`PENDING_SQL`): deleting it,
or changing its ``searchable`` (a replay marked in another source of the batch),
leaves nothing to undo in ``parts_fts``; its row is then made from what the part
is when the batch commits (gone: none; ``searchable`` 0: none; 1 or 2: that
column).  A source undone drops its waiting rows; a batch rolled back drops
them all.  The index holds exactly what indexing each part at once would give
(``tests/test_index.py``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

PENDING_SQL = "agentlog_fts_pending"
"""The SQL function ``agentlog_fts_pending(parts.rowid)``: 1 while that part's
``parts_fts`` row waits in this connection's :class:`DeferredText`, else 0 (the
full-text triggers then leave ``parts_fts`` alone)."""

_CHUNK = 500


def register(conn: sqlite3.Connection, deferred: DeferredText | None = None) -> sqlite3.Connection:
    """Register :data:`PENDING_SQL` on ``conn`` for ``deferred`` (``None``: no part
    waits); returns ``conn``.  Every connection that writes parts needs it."""
    if deferred is None:
        conn.create_function(PENDING_SQL, 1, _never, deterministic=True)
    else:
        conn.create_function(PENDING_SQL, 1, deferred.waits)
    return conn


def _never(rowid: int) -> int:
    return 0


class DeferredText:
    """The ``parts_fts`` text of the parts a sync batch wrote, by part rowid: the
    current source's (:meth:`add`, then :meth:`keep` or :meth:`drop` as it is
    kept or undone) and the batch's kept ones (:meth:`flush` before COMMIT)."""

    def __init__(self) -> None:
        self._source: dict[int, str] = {}
        self._batch: dict[int, str] = {}

    def waits(self, rowid: int) -> int:
        """1 if part ``rowid``'s row waits here, else 0 (:data:`PENDING_SQL`)."""
        return int(rowid in self._source or rowid in self._batch)

    def add(self, rows: Sequence[tuple[int, str]]) -> None:
        """``(part rowid, its index text)`` of parts the current source wrote."""
        self._source.update(rows)

    def keep(self) -> None:
        """The current source's writes are kept (its savepoint released)."""
        self._batch.update(self._source)
        self._source = {}

    def drop(self) -> None:
        """The current source's writes were undone (rowids are used again)."""
        self._source = {}

    def clear(self) -> None:
        """The batch was rolled back: nothing waits."""
        self._source, self._batch = {}, {}

    def flush(self, conn: sqlite3.Connection) -> None:
        """Insert the kept rows into ``parts_fts`` from each part as it is now (in
        the transaction, outside any savepoint), in rowid order; nothing waits after."""
        waiting = sorted(self._batch.items())
        rows: list[tuple[int, str | None, str | None]] = []
        for start in range(0, len(waiting), _CHUNK):
            chunk = waiting[start : start + _CHUNK]
            marks = ", ".join("?" * len(chunk))
            now = dict(
                conn.execute(
                    f"SELECT rowid, searchable FROM parts WHERE rowid IN ({marks}) AND searchable != 0",
                    [rowid for rowid, _ in chunk],
                )
            )
            rows.extend(
                (rowid, text, None) if now[rowid] == 1 else (rowid, None, text)
                for rowid, text in chunk
                if rowid in now
            )
        conn.executemany("INSERT INTO parts_fts (rowid, text, reasoning) VALUES (?, ?, ?)", rows)
        self._batch = {}
