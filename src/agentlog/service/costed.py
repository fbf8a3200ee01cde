"""Sessions with their cost in ``usage.cost_usd``: the form the Python API and
the MCP server hand out (the CLI's listings show tokens only)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

import msgspec

from agentlog.model import CostSource, Session
from agentlog.service.usage import SessionCost, session_costs
from agentlog.usage.money import usd


def cost_source(cost: SessionCost) -> CostSource | None:
    """The one cost source of a session whose calls came from ``cost.sources``:
    the weakest of them (``unpriced`` when any call has no price, else
    ``estimated`` when any was computed from a price table, else ``recorded``);
    ``None`` for a session without usage."""
    for weakest in ("unpriced", "estimated", "recorded"):
        if weakest in cost.sources:
            return weakest
    return None


def cost_usd(cost: SessionCost) -> float | None:
    """A session's cost in USD rounded to 6 decimals as ``agentlog usage`` prints
    it (:func:`agentlog.usage.money.usd`), ``None`` when no call has a price."""
    return None if cost.cost is None else usd(cost.cost)


def with_costs(conn: sqlite3.Connection, sessions: Iterable[Session]) -> list[Session]:
    """``sessions``, each with ``usage.cost_usd`` (USD, unrounded; ``None`` when
    no call has a price) and ``usage.cost_source`` (:func:`cost_source`) set as
    ``agentlog usage session`` prices its own calls (not its subagents')."""
    found = list(sessions)
    costs = session_costs(conn, [s.key for s in found])
    out = []
    for s in found:
        cost = costs.get(s.key, SessionCost())
        usage = msgspec.structs.replace(s.usage, cost_usd=cost_usd(cost), cost_source=cost_source(cost))
        out.append(msgspec.structs.replace(s, usage=usage))
    return out
