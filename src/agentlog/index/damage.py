"""Looking for stored rows that do not decode (``doctor``): every ``parts.data``
and ``sources.headers`` value read back through the one decoder
(:func:`agentlog.index.stored.stored`), or only the newest of them.

A row that does not decode is what every command reading it answers with the
damaged-index line (:func:`agentlog.index.db.damaged`); this finds them all at
once, names their sessions and sources, and reads nothing else.  Reading every
row costs about 1.8 s for an 87 MB index (the bytes of every part are decoded).
"""

from __future__ import annotations

import sqlite3

import msgspec

from agentlog.index.stored import DamagedRow, stored
from agentlog.model import Part, Session

SAMPLE_PARTS = 5_000
"""Parts decoded by a bounded check (the newest by rowid: the last written)."""


class DamagedAt(msgspec.Struct, frozen=True):
    """One stored value that does not decode: a part (``rowid`` of ``parts``) of
    session ``session``, or the session headers of source ``path``
    (``rowid`` of ``sources``, ``session`` ``None``); ``error`` the decoder's line."""

    what: str
    rowid: int
    session: str | None
    path: str | None
    error: str


class RowCheck(msgspec.Struct, kw_only=True):
    """What :func:`check_rows` read: ``parts`` and ``headers`` (sources' session
    headers) decoded, ``every_row`` whether those were all the index holds, and
    the values that did not decode (at most ``limit`` named, ``damaged_count`` all)."""

    parts: int
    headers: int
    every_row: bool
    damaged: list[DamagedAt]
    damaged_count: int

    @property
    def sessions(self) -> list[str]:
        """The sessions with a damaged part, sorted."""
        return sorted({d.session for d in self.damaged if d.session})


def check_rows(conn: sqlite3.Connection, sample: int | None = SAMPLE_PARTS, limit: int = 100) -> RowCheck:
    """Every source's headers and the newest ``sample`` parts (every part when
    ``None``) decoded as the index reads them; the damaged values found, the
    first ``limit`` of them named (parts newest first, then headers).  Only
    reads.  Raises ``sqlite3.DatabaseError`` for damage below the rows (a page
    ``PRAGMA quick_check`` would flag)."""
    damaged: list[tuple[str, int, str]] = []
    parts_sql = "SELECT rowid, data FROM parts WHERE data IS NOT NULL ORDER BY rowid DESC"
    rows = conn.execute(parts_sql + ("" if sample is None else " LIMIT ?"), () if sample is None else (sample,))
    parts, oldest = 0, 0
    for rowid, data in rows:
        parts, oldest = parts + 1, rowid
        try:
            stored(data, Part, "part")  # type: ignore[arg-type]
        except DamagedRow as exc:
            damaged.append(("part", rowid, str(exc)))
    headers = 0
    for rowid, data in conn.execute("SELECT id, headers FROM sources WHERE headers IS NOT NULL"):
        headers += 1
        try:
            stored(data, list[Session], "session header")
        except DamagedRow as exc:
            damaged.append(("session header", rowid, str(exc)))
    every = sample is None or parts < sample
    if not every:
        older = "SELECT EXISTS (SELECT 1 FROM parts WHERE rowid < ? AND data IS NOT NULL)"
        every = not conn.execute(older, (oldest,)).fetchone()[0]
    return RowCheck(
        parts=parts,
        headers=headers,
        every_row=every,
        damaged=[_located(conn, what, rowid, error) for what, rowid, error in damaged[:limit]],
        damaged_count=len(damaged),
    )


def _located(conn: sqlite3.Connection, what: str, rowid: int, error: str) -> DamagedAt:
    """The damaged value ``rowid`` of ``what`` with its session and source path."""
    if what == "part":
        row = conn.execute(
            """SELECT m.session_key, s.path FROM parts p JOIN messages m ON m.rowid = p.message_rowid
               LEFT JOIN sources s ON s.id = m.source_id WHERE p.rowid = ?""",
            (rowid,),
        ).fetchone()
    else:
        row = conn.execute("SELECT NULL, path FROM sources WHERE id = ?", (rowid,)).fetchone()
    session, path = row if row else (None, None)
    return DamagedAt(what, rowid, session, path, error)
