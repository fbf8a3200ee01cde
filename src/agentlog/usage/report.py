"""Usage reports: pure functions from priced calls to rows (no I/O).

Rows group calls by day, ISO week (its Monday), month — all in the zone given
(``shared/cost.md`` §0.5: local date in a chosen IANA zone) — or by session,
model, project or agent.  Every row and ``totals`` carry the token buckets,
``cost_usd`` (``None`` when no call in it has a cost), ``cost_source``
(``recorded``/``estimated``/``unpriced``, or ``mixed``), ``models`` and ``calls``.
``blocks`` are Claude's 5-hour billing windows.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal
from zoneinfo import ZoneInfo

import msgspec

from agentlog import lazy
from agentlog.rules import project_folder
from agentlog.usage.money import usd, usd_float

if TYPE_CHECKING:
    from agentlog.usage.pricing import PricedCall

Group = Literal["daily", "weekly", "monthly", "session", "model", "project", "agent"]
GROUPS: tuple[Group, ...] = ("daily", "weekly", "monthly", "session", "model", "project", "agent")
BUCKETS = (
    "input_tokens",
    "cache_read_tokens",
    "cache_write_5m_tokens",
    "cache_write_1h_tokens",
    "output_tokens",
    "reasoning_tokens",
    "total_tokens",
    "web_search_requests",
)
BLOCK = timedelta(hours=5)


class Totals(msgspec.Struct):
    """A running sum of priced calls (tokens, ``cost`` in pico-dollars, sources,
    models seen); ``calls`` and ``priced`` count single calls, also inside a summed
    record.  Costs are integers (:mod:`agentlog.usage.money`), so a sum is the same
    however the calls were grouped."""

    tokens: dict[str, int] = msgspec.field(default_factory=lambda: dict.fromkeys(BUCKETS, 0))
    cost: int = 0
    priced: int = 0
    calls: int = 0
    sources: set[str] = msgspec.field(default_factory=set)
    models: dict[str, None] = msgspec.field(default_factory=dict)
    first: datetime | None = None
    last: datetime | None = None

    def add(self, pc: PricedCall) -> None:
        u = pc.call.usage
        t = self.tokens
        t["input_tokens"] += u.input_tokens
        t["cache_read_tokens"] += u.cache_read_tokens
        t["cache_write_5m_tokens"] += u.cache_write_5m_tokens
        t["cache_write_1h_tokens"] += u.cache_write_1h_tokens
        t["output_tokens"] += u.output_tokens
        t["reasoning_tokens"] += u.reasoning_tokens
        t["total_tokens"] += u.total_tokens
        t["web_search_requests"] += u.web_search_requests
        self.calls += pc.call.calls
        self.sources.add(pc.cost_source)
        if pc.cost is not None:
            self.cost += pc.cost
            self.priced += pc.call.calls
        if pc.call.model:
            self.models.setdefault(pc.call.model)
        first = pc.call.timestamp
        if first is not None:
            last = pc.call.last_timestamp or first
            if self.first is None or first < self.first:
                self.first = first
            if self.last is None or last > self.last:
                self.last = last

    def merge(self, other: Totals) -> None:
        """Add ``other``'s sums into this one."""
        for name, n in other.tokens.items():
            self.tokens[name] += n
        self.cost += other.cost
        self.priced += other.priced
        self.calls += other.calls
        self.sources |= other.sources
        for model in other.models:
            self.models.setdefault(model)
        for stamp in (other.first, other.last):
            if stamp is not None:
                self.first = stamp if self.first is None or stamp < self.first else self.first
                self.last = stamp if self.last is None or stamp > self.last else self.last

    @property
    def cost_usd(self) -> float:
        """:attr:`cost` in USD, unrounded."""
        return usd_float(self.cost)

    def as_dict(self, with_cost: bool = True) -> dict[str, Any]:
        """The JSON shape of a row's numbers (see the README, "agentlog usage")."""
        out: dict[str, Any] = dict(self.tokens)
        if with_cost:
            out["cost_usd"] = usd(self.cost) if self.priced else None
            out["cost_source"] = (
                None if not self.sources else next(iter(self.sources)) if len(self.sources) == 1 else "mixed"
            )
        out["models"] = sorted(self.models)
        out["calls"] = self.calls
        return out


def zone(name: str | None) -> ZoneInfo | None:
    """The IANA zone ``name``; for ``None`` or ``"local"`` the machine's zone (``TZ`` or the
    system setting, read by tzlocal), or ``None`` (the C library's local time)
    when that cannot be told.

    Raises ``zoneinfo.ZoneInfoNotFoundError`` (a ``KeyError``) for an unknown name.
    """
    if name and name != "local":
        return ZoneInfo(name)
    from tzlocal import get_localzone

    try:
        return get_localzone()
    except Exception:  # tzlocal's own errors for a setting it cannot read
        return None


_POSIX_TZ = lazy.pattern(r"(?:[A-Za-z]{3,}|<[A-Za-z0-9+-]{3,}>)[+-]?\d")
"""The start of a POSIX ``TZ`` rule (``EST5EDT``, ``<+03>-3``, ``UTC0``): a zone name
and an offset, which the C library reads without a zone file (POSIX.1, 8.3)."""


def unknown_tz(value: str | None) -> bool:
    """Whether ``TZ`` = ``value`` names no time zone, so that the C library (and
    :func:`zone`) silently use UTC: not a zone name or file the system has
    (``Europe/Paris``, ``:Europe/Paris``, ``/etc/localtime``), nor a POSIX rule
    (:data:`_POSIX_TZ`).  ``None`` or empty (UTC, by POSIX) is known."""
    name = (value or "").removeprefix(":")
    if not name or _POSIX_TZ.match(name):
        return False
    if name.startswith("/"):
        return not os.path.isfile(name)
    try:
        ZoneInfo(name)
    except (ValueError, OSError, KeyError):  # ZoneInfoNotFoundError is a KeyError
        return True
    return False


def local_day(stamp: datetime, tz: ZoneInfo | None) -> date:
    """The calendar day of aware ``stamp`` in ``tz`` (``None`` = local zone)."""
    return stamp.astimezone(tz).date()


def group_key(pc: PricedCall, group: Group, tz: ZoneInfo | None, rollup: bool = True) -> str:
    """The row a call belongs to: ``YYYY-MM-DD`` (day, or a week's Monday),
    ``YYYY-MM``, a session key (the tree's root when ``rollup``), a model id,
    a project folder or an agent slug; ``"unknown"`` when the field is missing."""
    call = pc.call
    if group in ("daily", "weekly", "monthly"):
        if call.timestamp is None:
            return "unknown"
        day = local_day(call.timestamp, tz)
        if group == "weekly":
            return (day - timedelta(days=day.weekday())).isoformat()
        return day.isoformat() if group == "daily" else day.strftime("%Y-%m")
    if group == "session":
        return (call.root_key or call.session_key) if rollup else call.session_key
    value = {"model": call.model, "project": project_folder(call.project), "agent": call.agent}[group]
    return value or "unknown"


class Row(msgspec.Struct):
    """One report row: its ``key``, totals, per-model totals and, for session
    rows, the sessions it rolls up."""

    key: str
    totals: Totals = msgspec.field(default_factory=Totals)
    by_model: dict[str, Totals] = msgspec.field(default_factory=dict)
    sessions: set[str] = msgspec.field(default_factory=set)
    agent: str = ""
    project: str = ""


def build_rows(
    priced: Iterable[PricedCall], group: Group, tz: ZoneInfo | None, rollup: bool = True
) -> tuple[list[Row], Totals]:
    """Rows of ``group`` (sorted by key; sessions by last activity) and the grand total;
    the project folders of ``session`` rows (and ``project`` rows' keys), the
    rows that show them, with their secrets replaced (:mod:`agentlog.redact`)."""
    rows: dict[str, Row] = {}
    for pc in priced:
        call = pc.call
        key = group_key(pc, group, tz, rollup)
        row = rows.get(key)
        if row is None:
            row = rows[key] = Row(key=key, agent=call.agent, project=call.project or "")
        model = call.model or "unknown"
        per_model = row.by_model.get(model)
        if per_model is None:
            per_model = row.by_model[model] = Totals()
        per_model.add(pc)
        row.sessions.add(call.session_key)
        if call.root_key == call.session_key and call.project:
            row.project = call.project
    total = Totals()
    for row in rows.values():
        for per_model in row.by_model.values():
            row.totals.merge(per_model)
        total.merge(row.totals)
    if group in ("session", "project"):  # the rows that show a folder's name, which is log text
        from agentlog.redact import redact

        for row in rows.values():
            row.project = redact(row.project)
            if group == "project":
                row.key = redact(row.key)
    out = list(rows.values())
    if group == "session":
        out.sort(key=lambda r: (r.totals.last is None, r.totals.last or datetime.min, r.key))
    else:
        out.sort(key=lambda r: r.key)
    return out, total


def row_dict(row: Row, group: Group, with_cost: bool, breakdown: bool) -> dict[str, Any]:
    """The JSON object of one row."""
    out: dict[str, Any] = {"key": row.key, **row.totals.as_dict(with_cost)}
    if group == "session":
        out.update(
            agent=row.agent,
            project=row.project or None,
            sessions=sorted(row.sessions),
            first_activity=row.totals.first,
            last_activity=row.totals.last,
        )
    if breakdown:
        out["breakdown"] = [
            {"model": model, **t.as_dict(with_cost)} for model, t in sorted(row.by_model.items())
        ]
    return out


class Block(msgspec.Struct):
    """A 5-hour billing window: ``start`` is the first call's hour (UTC),
    ``end = start + 5 h``; ``active`` when now is between ``start`` and ``end``
    and within 5 h of the last call (never a block that opens after now)."""

    start: datetime
    totals: Totals = msgspec.field(default_factory=Totals)
    active: bool = False

    @property
    def end(self) -> datetime:
        return self.start + BLOCK

    def burn_rate(self) -> tuple[float, float | None] | None:
        """``(tokens per minute, USD per hour)`` from the first to the last call
        (USD ``None`` when no call of the block could be priced), or ``None`` when
        they are less than a minute apart."""
        t = self.totals
        if t.first is None or t.last is None:
            return None
        minutes = (t.last - t.first).total_seconds() / 60
        if minutes < 1:
            return None
        return t.tokens["total_tokens"] / minutes, t.cost_usd / minutes * 60 if t.priced else None

    def as_dict(self, now: datetime, with_cost: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "start": self.start,
            "end": self.end,
            "active": self.active,
            "first_activity": self.totals.first,
            "last_activity": self.totals.last,
            **self.totals.as_dict(with_cost),
        }
        rate = self.burn_rate() if self.active else None
        if rate is not None:
            tokens_per_minute, usd_per_hour = rate
            left = max(0.0, (self.end - now).total_seconds() / 60)
            out["burn_rate"] = {
                "tokens_per_minute": round(tokens_per_minute, 1),
                "cost_usd_per_hour": round(usd_per_hour, 6) if with_cost and usd_per_hour is not None else None,
                "remaining_minutes": round(left),
                "projected_total_tokens": round(
                    self.totals.tokens["total_tokens"] + tokens_per_minute * left
                ),
                "projected_cost_usd": round(self.totals.cost_usd + usd_per_hour * left / 60, 6)
                if with_cost and usd_per_hour is not None
                else None,
            }
        return out


def build_blocks(priced: Iterable[PricedCall], now: datetime) -> list[Block]:
    """Claude's 5-hour windows (ccusage ``blocks``): a window opens at the hour of
    its first call and takes every call until 5 h after that hour; a call after
    that, or after 5 h without calls, opens the next one."""
    timed = sorted(
        ((pc.call.timestamp, n, pc) for n, pc in enumerate(priced) if pc.call.timestamp is not None),
        key=lambda t: (t[0], t[1]),
    )
    blocks: list[Block] = []
    for stamp, _, pc in timed:
        current = blocks[-1] if blocks else None
        if (
            current is None
            or stamp >= current.end
            or (current.totals.last is not None and stamp - current.totals.last >= BLOCK)
        ):
            current = Block(start=stamp.replace(minute=0, second=0, microsecond=0))
            blocks.append(current)
        current.totals.add(pc)
    if blocks:
        last = blocks[-1]
        last.active = (
            last.start <= now < last.end and last.totals.last is not None and now - last.totals.last < BLOCK
        )  # a block that opens after now (calls stamped by a clock ahead) is not under way
    return blocks
