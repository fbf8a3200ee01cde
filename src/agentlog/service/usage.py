"""Usage queries: the calls a report covers, priced once for every surface.

The one wiring of a usage report — records (the index's roll-up, or the logs
read directly), the filter (agent, folder, time span), the pricer (the user's
price files and the tables the index kept), pricing, the warnings — used by
``agentlog usage``, the web viewer's usage page and session costs.  Reports are
then :func:`agentlog.usage.report.build_rows` / ``build_blocks`` over
:attr:`PricedUsage.calls`.  Token and cost rules: ``shared/cost.md``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from agentlog.adapters.claude_code import SLUG as CLAUDE
from agentlog.errors import NotFound
from agentlog.index.usage import members, usage_records
from agentlog.present import cut
from agentlog.query import SessionFilter, Span
from agentlog.rules import folder_contains
from agentlog.service.home import Home
from agentlog.usage.calls import Call
from agentlog.usage.money import usd_float

if TYPE_CHECKING:
    from agentlog.model import RateLimits
    from agentlog.usage.pricing import CostMode, PricedCall, Pricer

BLOCKS_AGENT = CLAUDE
"""The agent the 5-hour ``blocks`` report is about when no agent is named."""


class UsageQuery(msgspec.Struct, kw_only=True, frozen=True):
    """Which calls a report covers and how they are priced: ``agent`` (slug),
    ``project`` (text the folder contains, :func:`agentlog.query.text_contains`),
    ``span`` (calls at ``since <= t < until``), ``cost_mode`` (``auto``: the
    recorded cost when the agent wrote one, else computed; ``calculate``;
    ``recorded``), ``prices_file`` (price overrides, TOML; default the user's)."""

    agent: str | None = None
    project: str | None = None
    span: Span = Span()
    cost_mode: CostMode = "auto"
    prices_file: Path | None = None


class PricedUsage(msgspec.Struct):
    """The priced calls of a :class:`UsageQuery` (records of the roll-up or
    single calls) and the warnings to show beside any report of them (models
    without a price, logs that could not be read)."""

    calls: list[PricedCall] = msgspec.field(default_factory=list)
    warnings: list[str] = msgspec.field(default_factory=list)
    inferred_models: list[dict[str, object]] = msgspec.field(default_factory=list)
    """Calls priced at a fallback model (none recorded): ``{"model", "calls",
    "tokens"}`` per model, the same figures the warnings name."""


Expand = Callable[[Call], list[Call]]


def select_calls(calls: Iterable[Call], query: UsageQuery, expand: Expand | None = None) -> list[Call]:
    """The calls ``query`` keeps.  A roll-up record that straddles a bound of the
    span is replaced by those of its single calls (``expand``) that lie inside,
    so a span cut at any instant counts exactly the calls in it."""
    span, out = query.span, []
    for call in calls:
        if (query.agent and call.agent != query.agent) or not folder_contains(call.project, query.project):
            continue
        last = call.last_timestamp or call.timestamp
        if span.contains(call.timestamp) and span.contains(last):
            out.append(call)
        elif expand is not None and call.calls > 1 and span.overlaps(call.timestamp, last):
            out.extend(single for single in expand(call) if span.contains(single.timestamp))
    return out


def pricer(conn: sqlite3.Connection | None, prices_file: Path | None = None) -> Pricer:
    """The pricer over the user's price files (or ``prices_file``) seeded with the
    tables the index at ``conn`` kept.  Raises :class:`NotFound` for a
    ``prices_file`` that is not a file."""
    from agentlog.index.prices import kept_pricer

    if prices_file is not None and not prices_file.is_file():
        what = "not a regular file" if prices_file.exists() else "no such price file"
        raise NotFound(f"{prices_file}: {what}")
    return kept_pricer(conn, prices_file)


def _price(
    calls: list[Call], query: UsageQuery, conn: sqlite3.Connection | None, errors: Iterable[tuple[str, str]]
) -> PricedUsage:
    prices = pricer(conn, query.prices_file)
    expand = partial(members, conn) if conn is not None else None
    return priced_usage(prices, list(prices.price_all(calls, query.cost_mode, expand)), conn, errors)


def priced_usage(
    prices: Pricer,
    priced: list[PricedCall],
    conn: sqlite3.Connection | None,
    errors: Iterable[tuple[str, str]],
) -> PricedUsage:
    """``priced`` (priced by ``prices``) with the warnings of that pricing and of
    the unreadable logs ``errors`` (``(path, error)``); the tables ``prices``
    resolved are kept in the index at ``conn``."""
    from agentlog.index.prices import save_prices

    if conn is not None:
        save_prices(conn, prices.fingerprint, prices.resolved)
    warnings = [
        f"no price for model {cut(model)!r}: {tokens:,} tokens shown without cost"
        if model != "<none>"
        else f"calls with no model recorded: {tokens:,} tokens shown without cost"
        for model, tokens in sorted(prices.unpriced.items())
    ]
    inferred = [
        {"model": model, "calls": calls, "tokens": tokens}
        for model, (calls, tokens) in sorted(prices.inferred.items())
    ]
    warnings += [
        f"{row['calls']:,} call{'' if row['calls'] == 1 else 's'} with no model recorded priced as "
        f"{cut(str(row['model']))!r} (inferred): "
        f"{row['tokens']:,} tokens"
        for row in inferred
    ]
    warnings += [f"unreadable: {path}: {error}" for path, error in errors]
    return PricedUsage(priced, warnings, inferred)


def index_usage(conn: sqlite3.Connection, query: UsageQuery) -> PricedUsage:
    """The calls ``query`` covers, read from the index's roll-up, priced."""
    from agentlog.index import queries  # and the store it loads: a report on roll-ups needs neither

    calls = select_calls(usage_records(conn, query.agent), query, partial(members, conn))
    return _price(calls, query, conn, queries.source_problems(conn)[0])


def log_usage(home: Home, query: UsageQuery) -> PricedUsage:
    """The calls ``query`` covers, read from the logs directly (no index; Claude
    Code files by the fast scanner), priced."""
    from agentlog.load import LoadReport
    from agentlog.usage.source import collect_calls

    report = LoadReport()
    found = collect_calls(
        home.env, home.home, home.roots, [query.agent] if query.agent else None, report=report
    )
    return _price(select_calls(found, query), query, None, report.errors)


class SessionCost(msgspec.Struct):
    """A session's cost: ``cost`` in pico-dollars (``None`` when no call has a
    price; :mod:`agentlog.usage.money`) and the cost sources of its calls
    (``recorded``, ``estimated``, ``unpriced``)."""

    cost: int | None = None
    sources: set[str] = msgspec.field(default_factory=set)

    @property
    def cost_usd(self) -> float | None:
        """:attr:`cost` in USD, unrounded."""
        return None if self.cost is None else usd_float(self.cost)


def session_costs(
    conn: sqlite3.Connection, keys: Iterable[str], cost_mode: CostMode = "auto"
) -> dict[str, SessionCost]:
    """The cost of each session of ``keys`` that has usage (its own calls, not its
    subagents'), priced as ``agentlog usage`` prices them."""
    records = usage_records(conn, keys=sorted(set(keys)))
    out: dict[str, SessionCost] = {}
    for pc in _price(records, UsageQuery(cost_mode=cost_mode), conn, ()).calls:
        cost = out.setdefault(pc.call.session_key, SessionCost())
        if pc.cost is not None:
            cost.cost = (cost.cost or 0) + pc.cost
        cost.sources.add(pc.cost_source)
    return out


def codex_limits(conn: sqlite3.Connection) -> list[tuple[str, RateLimits]]:
    """``(session key, rate limits)`` of every Codex session that recorded its
    rate limits, the latest observation first."""
    from agentlog.adapters.codex import SLUG as CODEX
    from agentlog.index import queries

    found = queries.list_sessions(conn, SessionFilter(agent=CODEX, include_children=True), include_empty=True)
    out = [(s.key, s.rate_limits) for s in found if s.rate_limits is not None]
    out.sort(key=lambda pair: pair[1].observed_at or datetime.min.replace(tzinfo=UTC), reverse=True)
    return out
