"""Reading back what the index stored in binary form (``parts.data``,
``sources.headers``): a value no decoder reads is a damaged index.

The index writes these values itself (:func:`agentlog.packing.pack`), so bytes
that do not decode were changed under it — a disk fault, another program, a
hand edit.  Its other contents may be wrong too, and it is a cache: the answer is
the one every damaged index gets (:func:`agentlog.index.db.explain`, "damaged …:
delete it to rebuild", exit 1 on the command line, 503 in the viewer, the tool's
error over MCP, :class:`~agentlog.errors.IndexProblem` from the Python API),
never an internal error.
"""

from __future__ import annotations

import sqlite3
from typing import TypeVar

import msgspec

from agentlog.packing import unpack

T = TypeVar("T")


class DamagedRow(sqlite3.DatabaseError):
    """A stored value that cannot be decoded: ``"a stored part cannot be decoded:
    Invalid UTF-8 encoded string"``.  An ``sqlite3.DatabaseError``, as a corrupt
    page is, so every surface that explains SQLite's damage explains this too."""


def stored(data: bytes | memoryview, kind: type[T], what: str) -> T:
    """``data`` as :func:`agentlog.packing.unpack` reads it as a ``kind``; raises
    :class:`DamagedRow` naming ``what`` (``"part"``, ``"session header"``) when it
    cannot be decoded."""
    try:
        return unpack(data, kind)
    except msgspec.DecodeError as exc:  # a ValidationError (a shape that is no part) too
        raise DamagedRow(f"a stored {what} cannot be decoded: {exc}") from None
