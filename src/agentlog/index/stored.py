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
from collections.abc import Callable
from datetime import datetime
from functools import wraps
from typing import ParamSpec, TypeVar

import msgspec

from agentlog.packing import unpack

T = TypeVar("T")
P = ParamSpec("P")

ROW_ERRORS = (ValueError, TypeError, KeyError, IndexError, OverflowError, msgspec.DecodeError)
"""What decoding a stored row's columns raises when a value is not what the index
writes: bad ISO text or a number for a time, JSON that does not parse, a shape
msgspec rejects, a text stored as bytes, an unknown role or status."""


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


def damaged(what: str, exc: Exception) -> DamagedRow:
    """The :class:`DamagedRow` for a stored ``what`` whose decoding raised ``exc``."""
    return DamagedRow(f"a stored {what} cannot be decoded: {type(exc).__name__}: {exc}")


def row_decoder(what: str) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """A decorator for a function that turns a stored row into a model object
    (``"message"``, ``"session header"``, ``"search hit"``): any of
    :data:`ROW_ERRORS` it raises becomes :class:`DamagedRow` naming ``what``, so a
    hand-edited or half-written row is the damaged-index answer, never an internal
    error.  A ``try`` costs nothing on rows that decode."""

    def wrap(decode: Callable[P, T]) -> Callable[P, T]:
        @wraps(decode)
        def decoded(*args: P.args, **kwargs: P.kwargs) -> T:
            try:
                return decode(*args, **kwargs)
            except ROW_ERRORS as exc:
                raise damaged(what, exc) from None

        return decoded

    return wrap


def stored_time(text: str | None) -> datetime | None:
    """A time column as the index writes it (ISO 8601 text, or NULL for none);
    raises ``ValueError``/``TypeError`` for anything else (inside a
    :func:`row_decoder`: a damaged row)."""
    return datetime.fromisoformat(text) if text else None


def known(value: str, values: tuple[str, ...]) -> str:
    """``value`` when it is one of ``values`` (a role, a status); raises ``KeyError``."""
    if value not in values:
        raise KeyError(value)
    return value


def text_of(value: object) -> str:
    """A stored part's ``parts.text``; raises :class:`DamagedRow` (``"a stored
    part …"``) when it is stored as bytes or a number, wherever it is read (a
    transcript, a hit's snippet, the full-text index's SQL function)."""
    if type(value) is not str:
        raise damaged("part", TypeError(f"text stored as {type(value).__name__}"))
    return value
