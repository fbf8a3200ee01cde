"""Sessions and priced calls as Arrow tables (the Python API's
``Archive.sessions_table`` and ``Archive.calls``); needs pyarrow (the
``parquet`` extra).  Times are ``timestamp[us, UTC]``, tokens ``int64``, costs
``float64`` USD (``null``: no price).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from agentlog.model import Session
from agentlog.session_columns import session_fields, session_values
from agentlog.usage.pricing import PricedCall
from agentlog.usage.report import BUCKETS

_STAMP = pa.timestamp("us", tz="UTC")
_TOKENS = BUCKETS

SESSION_COLUMNS = pa.schema(
    [
        ("key", pa.string()),
        ("agent", pa.string()),
        *session_fields(pa),
        *((name, pa.int64()) for name in _TOKENS),
        ("cost_usd", pa.float64()),
        ("cost_source", pa.string()),
        ("archived", pa.bool_()),
    ]
)
"""One row per session: its key, agent, the shared header columns
(:mod:`agentlog.session_columns`), usage totals, cost and whether it is archived."""

CALL_COLUMNS = pa.schema(
    [
        ("session_key", pa.string()),
        ("root_key", pa.string()),
        ("agent", pa.string()),
        ("project", pa.string()),
        ("model", pa.string()),
        ("service_tier", pa.string()),
        ("timestamp", _STAMP),
        ("last_timestamp", _STAMP),
        ("calls", pa.int64()),
        *((name, pa.int64()) for name in _TOKENS),
        ("cost_usd", pa.float64()),
        ("cost_source", pa.string()),
        ("priced_as", pa.string()),
    ]
)
"""One row per usage record (``calls`` API calls), priced."""


def sessions_table(sessions: Iterable[Session]) -> pa.Table:
    """``sessions`` (headers) as a table of :data:`SESSION_COLUMNS`."""
    rows: list[dict[str, Any]] = [
        {
            "key": s.key,
            "agent": s.agent,
            **session_values(s),
            **{name: getattr(s.usage, name) for name in _TOKENS},
            "cost_usd": s.usage.cost_usd,
            "cost_source": s.usage.cost_source,
            "archived": s.archived,
        }
        for s in sessions
    ]
    return pa.Table.from_pylist(rows, schema=SESSION_COLUMNS)


def calls_table(priced: Iterable[PricedCall]) -> pa.Table:
    """``priced`` calls as a table of :data:`CALL_COLUMNS`."""
    rows: list[dict[str, Any]] = [
        {
            "session_key": pc.call.session_key,
            "root_key": pc.call.root_key or pc.call.session_key,
            "agent": pc.call.agent,
            "project": pc.call.project,
            "model": pc.call.model,
            "service_tier": pc.call.service_tier,
            "timestamp": pc.call.timestamp,
            "last_timestamp": pc.call.last_timestamp or pc.call.timestamp,
            "calls": pc.call.calls,
            **{name: getattr(pc.call.usage, name) for name in _TOKENS},
            "cost_usd": pc.cost_usd,
            "cost_source": pc.cost_source,
            "priced_as": pc.priced_as,
        }
        for pc in priced
    ]
    return pa.Table.from_pylist(rows, schema=CALL_COLUMNS)
