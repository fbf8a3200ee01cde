"""The priced calls of one usage report, summed per row in SQL where that is exact.

:func:`report_usage` is what ``agentlog usage REPORT``, ``Archive.usage`` and
the MCP ``get_usage_summary`` read.  For the reports whose rows are days, weeks,
months, models or agents, with no folder or time filter, it prices the roll-up's
sums per local day, model, service tier, cost origin and UTC day
(:func:`agentlog.index.grouped.day_sums`) instead of every roll-up record: on
3,000 small sessions 28 sums instead of 3,026 records.  A sum that cannot be
priced whole (:meth:`~agentlog.usage.pricing.Pricer.prices_whole`: its calls in
two context tiers, or a price that changes within the day) is priced from its
records, as :func:`agentlog.service.usage.index_usage` prices them.  Every
other report, and an index whose roll-ups cannot be rebuilt (read-only), goes
through :func:`~agentlog.service.usage.index_usage` itself.  Rows, totals,
costs (whole pico-dollars) and warnings are the same either way
(``tests/test_grouped_usage.py``).
"""

from __future__ import annotations

import sqlite3
from functools import partial
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from agentlog.index.grouped import DayKey, day_sums
from agentlog.index.usage import members, usage_records
from agentlog.service.usage import PricedUsage, UsageQuery, index_usage, priced_usage, pricer

if TYPE_CHECKING:
    from agentlog.usage.pricing import PricedCall

SUMMED = frozenset({"daily", "weekly", "monthly", "model", "agent"})
"""The reports whose rows :func:`report_usage` builds from sums."""


def report_usage(
    conn: sqlite3.Connection, query: UsageQuery, report: str, tz: ZoneInfo | None
) -> PricedUsage:
    """The priced calls of ``report`` (``daily`` … ``blocks``) over ``query``,
    days local to ``tz`` (``None``: local time): sums of calls where the report's
    rows are exact on them (:data:`SUMMED`, no ``project`` or ``span`` filter),
    else roll-up records (:func:`~agentlog.service.usage.index_usage`).  The
    sums are fit only for that report and zone (``session_key`` ``""``)."""
    sums = None
    if report in SUMMED and not query.project and not query.span.bounded:
        sums = day_sums(conn, tz, agent=query.agent, by_agent=report == "agent")
    if sums is None:
        return index_usage(conn, query)
    from agentlog.index import queries

    prices = pricer(conn, query.prices_file)
    priced: list[PricedCall] = []
    apart: set[DayKey] = set()
    for key, call in zip(sums.keys, sums.calls, strict=True):
        if prices.prices_whole(call, query.cost_mode):
            priced.append(prices.price(call, query.cost_mode))
        else:
            apart.add(key)
    if apart:
        records = [r for r in usage_records(conn, query.agent) if sums.key_of(r) in apart]
        priced += prices.price_all(records, query.cost_mode, partial(members, conn))
    return priced_usage(prices, priced, conn, queries.source_problems(conn)[0])
