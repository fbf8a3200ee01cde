"""The session columns the Arrow session tables share: the Python API's
(:data:`agentlog.tables.SESSION_COLUMNS`) and the Parquet export's ``sessions``
table (:mod:`agentlog.export.parquet`).  Each adds its own columns around
these (the key and agent, usage buckets, cost, partition columns).  Needs no
pyarrow until :func:`session_fields` is called with it.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from agentlog.model import Session

HEADER = (
    ("id", "string"),
    ("title", "string"),
    ("cwd", "string"),
    ("git_branch", "string"),
    ("started_at", "time"),
    ("ended_at", "time"),
    ("models", "strings"),
    ("parent_key", "string"),
    ("kind", "string"),
    ("subagent_type", "string"),
    ("status", "string"),
    ("message_count", "int"),
)
"""The shared columns, in order: each a :class:`~agentlog.model.Session` field
and its kind (``time`` is ``timestamp[us, UTC]``, ``strings`` a list of strings,
``int`` ``int64``)."""


def session_fields(pa: ModuleType) -> list[tuple[str, Any]]:
    """The shared columns as ``(name, pyarrow type)`` pairs (``pa``: the pyarrow module)."""
    kinds = {
        "string": pa.string(),
        "time": pa.timestamp("us", tz="UTC"),
        "strings": pa.list_(pa.string()),
        "int": pa.int64(),
    }
    return [(name, kinds[kind]) for name, kind in HEADER]


def session_values(s: Session) -> dict[str, Any]:
    """``s``'s values of the shared columns, by name."""
    return {name: getattr(s, name) for name, _ in HEADER}
