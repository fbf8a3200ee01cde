"""Usage summed per report row in SQL, out of the roll-up (table ``usage_rollup``).

A daily, weekly, monthly, model or agent report needs of each roll-up record
(one session, model, service tier, cost origin and 15-minute span) only its
local day, model, service tier, cost origin and ``model_inferred`` flag (and its
agent, for the agent report) besides its sums.  :func:`day_sums` sums, in one
query, the records that share those keys and their UTC day (the price period):
a few rows a day where the roll-up has one per session and quarter hour (on
3,000 small sessions, 28 rows for 3,026 records).  The sums are exact:

* a record's local day is that of its 15-minute span's start
  (:func:`agentlog.usage.report.local_day`), given once per distinct span
  (:func:`span_days`): UTC offsets are whole quarter hours
  (:mod:`agentlog.index.usage`), so every call of a span falls on that day;
* tokens, calls and recorded nano-dollars are integer sums, first and last
  times the minimum and maximum, the prompt range the widest of the records';
* the records summed are those :func:`agentlog.index.usage.usage_records`
  gives: built roll-ups of sessions whose source is not a duplicate copy (every
  roll-up row has its session and every session its source: foreign keys).

Pricing a sum as one call is exact only when
:meth:`agentlog.usage.pricing.Pricer.prices_whole` says so;
:mod:`agentlog.service.grouped` prices the other sums record by record
(:meth:`DaySums.key_of` tells which records a sum holds).
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import msgspec

from agentlog.index.usage import refresh_rollups, usage_from
from agentlog.usage.calls import Call
from agentlog.usage.report import local_day

DayKey = tuple[str, str | None, str | None, bool, bool, str | None, str | None]
"""``(agent or "", model, service tier, recorded, model_inferred, UTC day, local
day)`` of a sum; days as ``YYYY-MM-DD``, ``None`` for calls without a time."""

_SUMS = """SUM(r.calls), SUM(r.input_tokens), SUM(r.cache_read_tokens), SUM(r.cache_write_5m_tokens),
    SUM(r.cache_write_1h_tokens), SUM(r.output_tokens), SUM(r.reasoning_tokens), SUM(r.web_search_requests),
    SUM(CASE WHEN r.recorded THEN r.recorded_nano_usd END), MIN(r.first_at), MAX(r.last_at),
    MIN(r.min_prompt), MAX(r.max_prompt)"""
_COUNTED = """+r.session_key IN (SELECT session_key FROM usage_rollup_state)
    AND r.session_key NOT IN (SELECT key FROM sessions WHERE source_id IN
                              (SELECT id FROM sources WHERE duplicate_of IS NOT NULL))"""
# ``+``: the roll-up is scanned once and each span's day found by an automatic
# index; searched by session instead, SQLite scanned the days for every record


class DaySums(msgspec.Struct):
    """The sums of a report (:func:`day_sums`): ``calls[i]`` sums the records of
    key ``keys[i]``; ``days`` maps each 15-minute span (``YYYY-MM-DDTHH:MM``,
    UTC) to its local day; ``by_agent``: keys name the agent (else ``""``)."""

    calls: list[Call]
    keys: list[DayKey]
    days: dict[str, str]
    by_agent: bool

    def key_of(self, record: Call) -> DayKey:
        """The key of the sum that holds roll-up ``record``."""
        stamp = record.timestamp
        span = None if stamp is None else f"{stamp:%Y-%m-%dT%H:}{stamp.minute // 15 * 15:02d}"
        return (
            record.agent if self.by_agent else "",
            record.model,
            record.service_tier,
            record.usage.cost_source == "recorded",
            record.model_inferred,
            None if stamp is None else f"{stamp:%Y-%m-%d}",
            None if span is None else self.days[span],
        )


def span_days(spans: list[str], tz: ZoneInfo | None) -> dict[str, str]:
    """Each 15-minute span's (UTC ``YYYY-MM-DDTHH:MM``) local day in ``tz``
    (``None``: the C library's local time), ``YYYY-MM-DD``, as
    :func:`~agentlog.usage.report.local_day` gives it for the span's start.

    Per UTC day, the zone's offset at its first and last quarter hour: when they
    are the same whole quarter hours (the zone changed offset neither that day
    nor twice within it, as no zone has since tz data began recording), each
    span's day is the UTC day, the one before or the one after, from its minutes
    plus that offset (no ``datetime`` a span: 3 times faster); otherwise, and
    for a span not of that form, each span's start is converted."""
    by_day: dict[str, list[str]] = {}
    for span in spans:
        by_day.setdefault(span[:10], []).append(span)
    days: dict[str, str] = {}
    quarter = timedelta(minutes=15)

    def converted(span: str) -> str:
        return local_day(datetime.fromisoformat(span).replace(tzinfo=UTC), tz).isoformat()

    for day, group in by_day.items():
        try:
            start = datetime.fromisoformat(day).replace(tzinfo=UTC)
            first, last = (start.astimezone(tz).utcoffset(), (start + 95 * quarter).astimezone(tz).utcoffset())
        except ValueError:  # not a day: converted span by span (raising as they would)
            first = last = None
        if first is None or first != last or first % quarter:
            days.update({span: converted(span) for span in group})
            continue
        shift = first // timedelta(minutes=1)
        base = date.fromisoformat(day)
        names = {n: (base + timedelta(days=n)).isoformat() for n in (-1, 0, 1)}
        for span in group:
            minute = _MINUTES.get(span[10:]) if len(span) == 16 else None
            days[span] = converted(span) if minute is None else names[(minute + shift) // 1440]
    return days


_MINUTES = {f"T{hour:02d}:{minute:02d}": hour * 60 + minute for hour in range(24) for minute in range(60)}
"""A span's ``THH:MM`` tail as its minute of the day."""


def day_sums(
    conn: sqlite3.Connection, tz: ZoneInfo | None, agent: str | None = None, by_agent: bool = False
) -> DaySums | None:
    """The counted roll-up records (of ``agent`` when given) summed per
    :data:`DayKey`, days local to ``tz`` (``None``: the C library's local time),
    the agent in the key when ``by_agent``.  Each sum is a
    :class:`~agentlog.usage.calls.Call` as a roll-up record is one
    (``session_key`` ``""``, ``agent`` ``""`` unless ``by_agent``): ``calls`` and
    ``usage`` its sums, ``timestamp`` / ``last_timestamp`` its first and last
    call, ``prompt_range`` the smallest and largest prompt of one of them.

    Roll-ups of changed sessions are rebuilt first (``None`` when some are
    changed and ``conn`` cannot write them: the caller reads the records instead).
    """
    if not refresh_rollups(conn):
        return None
    spans = conn.execute("SELECT DISTINCT bucket FROM usage_rollup WHERE bucket IS NOT NULL")
    days = span_days([span for (span,) in spans], tz)
    who = "s.agent" if by_agent else "''"
    # every span on its UTC day (UTC, or a zone near it at the hours used): no join with the map
    utc = all(day == span[:10] for span, day in days.items())
    query = f"""{"" if utc else "WITH day(span, local_day) AS MATERIALIZED (SELECT key, value FROM json_each(?))"}
        SELECT {who}, r.model, r.service_tier, r.recorded, r.model_inferred, substr(r.bucket, 1, 10) AS utc_day,
            {"substr(r.bucket, 1, 10)" if utc else "d.local_day"}, {_SUMS}
        FROM usage_rollup r {"JOIN sessions s ON s.key = r.session_key" if by_agent else ""}
        {"" if utc else "LEFT JOIN day d ON d.span = r.bucket"}
        WHERE {_COUNTED} {"AND r.session_key IN (SELECT key FROM sessions WHERE agent = ?)" if agent else ""}
        GROUP BY 1, 2, 3, 4, 5, 6, 7"""
    params = [*([] if utc else [json.dumps(days)]), *([agent] if agent else [])]
    calls: list[Call] = []
    keys: list[DayKey] = []
    for row in conn.execute(query, params):
        who_, model, tier, recorded, inferred, utc_day, local, count, *sums = row
        nano, first, last, low, high = sums[7:]
        keys.append((who_, model, tier, bool(recorded), bool(inferred), utc_day, local))
        cost = (nano / 1e9, "recorded") if recorded else (None, None)
        calls.append(
            Call(
                session_key="",
                agent=who_,
                model=model,
                timestamp=datetime.fromisoformat(first) if first else None,
                usage=usage_from((*sums[:7], *cost, tier)),
                calls=count,
                last_timestamp=datetime.fromisoformat(last) if last else None,
                prompt_range=(low, high),
                recorded_nano=int(nano) if recorded else None,
                model_inferred=bool(inferred),
            )
        )
    return DaySums(calls, keys, days, by_agent)
