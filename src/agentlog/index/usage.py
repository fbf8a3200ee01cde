"""Usage records out of the index, for the usage reports.

:func:`usage_records` gives :class:`~agentlog.usage.calls.Call` records from the
roll-up (table ``usage_rollup``): the calls of one session, model (recorded or
inferred: ``model_inferred`` calls apart) and service tier summed per 15-minute span and cost origin, a few hundred records where a long session has
tens of thousands of calls.  Every report is exact on them: days in any zone
(UTC offsets are whole quarter hours in every zone since 1972; Liberia's
-0:44:30 before that is the last exception), 5-hour blocks (they start on the
hour), price periods (a UTC day; the off-peak windows of genai-prices start on a
quarter hour), and context tiers (a record whose calls straddle a tier boundary
is priced from its :func:`members`).  Recorded costs are summed per record in
nano-dollars, each call's counted as :func:`agentlog.usage.money.recorded_nano`
(:data:`~agentlog.usage.money.RECORDED_NANO_SQL`), and estimated costs are whole
pico-dollars, so every total equals the per-call sum exactly.  Counted: not
``replayed``, not flagged :data:`~agentlog.usage.calls.NOT_CONSUMPTION`, not
from a duplicate source.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from agentlog.index.db import transaction
from agentlog.index.stored import damaged
from agentlog.model import USAGE_COUNTS, Usage
from agentlog.rules import MODEL_INFERRED
from agentlog.usage.calls import NOT_CONSUMPTION, Call, roots_of
from agentlog.usage.money import RECORDED_NANO_SQL

_COUNTED = f"m.replayed = 0 AND m.flags NOT LIKE '%\"{NOT_CONSUMPTION}\"%'"
_INFERRED = f"(m.flags LIKE '%\"{MODEL_INFERRED}\"%')"
_PROMPT = "(u.input_tokens + u.cache_read_tokens + u.cache_write_5m_tokens + u.cache_write_1h_tokens)"


def _bucket(stamp: str) -> str:
    """SQL for the 15-minute span (``YYYY-MM-DDTHH:MM``) of ISO UTC text ``stamp``."""
    return f"substr({stamp}, 1, 14) || printf('%02d', CAST(substr({stamp}, 15, 2) AS INTEGER) / 15 * 15)"


_RECORDED = "(u.cost_source IS 'recorded' AND u.cost_usd IS NOT NULL)"
_STALE = "SELECT key FROM sessions WHERE key NOT IN (SELECT session_key FROM usage_rollup_state)"
_KEYS = "SELECT DISTINCT value FROM json_each(?)"
"""The session keys of a JSON list parameter."""


def _aggregate(keys: str) -> str:
    """The roll-up rows (:data:`usage_rollup` columns) of the sessions SQL ``keys`` selects."""
    return f"""SELECT m.session_key, m.model, u.service_tier, {_bucket("m.timestamp")} AS bucket, {_RECORDED} AS recorded,
        COUNT(*), SUM(u.input_tokens), SUM(u.cache_read_tokens), SUM(u.cache_write_5m_tokens),
        SUM(u.cache_write_1h_tokens), SUM(u.output_tokens), SUM(u.reasoning_tokens),
        SUM(u.web_search_requests), SUM(CASE WHEN {_RECORDED} THEN {RECORDED_NANO_SQL.format("u.cost_usd")} END),
        MIN(m.timestamp), MAX(m.timestamp), MIN({_PROMPT}), MAX({_PROMPT}), {_INFERRED} AS inferred
    FROM messages m JOIN usage u ON u.message_rowid = m.rowid
    WHERE m.session_key IN ({keys}) AND {_COUNTED}
    GROUP BY m.session_key, m.model, u.service_tier, bucket, recorded, inferred"""


_TOTAL_TOKENS = "u.input_tokens + u.cache_read_tokens + u.cache_write_5m_tokens + u.cache_write_1h_tokens + u.output_tokens"
_SESSION_USAGE_SUM = """
    COALESCE(SUM(u.input_tokens), 0), COALESCE(SUM(u.cache_read_tokens), 0),
    COALESCE(SUM(u.cache_write_5m_tokens), 0), COALESCE(SUM(u.cache_write_1h_tokens), 0),
    COALESCE(SUM(u.output_tokens), 0), COALESCE(SUM(u.reasoning_tokens), 0),
    COALESCE(SUM(u.web_search_requests), 0), SUM(u.cost_usd),
    CASE WHEN COUNT(DISTINCT u.cost_source) = 1 THEN MIN(u.cost_source) END
"""
"""A session's header totals (``Session.usage``, the sum of its messages' usage: every
call not ``replayed``, as :meth:`Usage.__add__` sums them; a sum has no service tier)
over ``messages m JOIN usage u``, in :data:`USAGE_COLUMNS` order without the tier."""


def _session_usage(keys: str) -> str:
    """The ``session_usage`` rows of the sessions SQL ``keys`` selects (the rows are
    summed per session in the order of index ``messages_visible``, as a page's
    totals always were: the same float sums)."""
    return f"""SELECT m.session_key, {_SESSION_USAGE_SUM}, COALESCE(SUM({_TOTAL_TOKENS}), 0)
        FROM messages m JOIN usage u ON u.message_rowid = m.rowid
        WHERE m.replayed = 0 AND m.session_key IN ({keys}) GROUP BY m.session_key"""


SESSION_TOTAL_COLUMNS = ", ".join(f"t.{name}" for name in (*USAGE_COUNTS, "cost_usd", "cost_source"))
"""The ``session_usage t`` values :func:`session_usage` reads, :data:`USAGE_COLUMNS`
without the service tier (a sum has none)."""


def session_usage(conn: sqlite3.Connection, keys: Sequence[str]) -> dict[str, Usage]:
    """The header totals (``Session.usage``) of each session of ``keys`` that has
    usage: stored (table ``session_usage``), summed from its calls when its
    roll-ups are stale (a read-only connection after a sync by an older agentlog)."""
    wanted = json.dumps(sorted(set(keys)))
    out = {
        key: usage_from([*values, None])
        for key, *values in conn.execute(
            f"""SELECT t.session_key, {SESSION_TOTAL_COLUMNS} FROM ({_KEYS}) k CROSS JOIN session_usage t
                ON t.session_key = k.value WHERE t.session_key IN (SELECT session_key FROM usage_rollup_state)""",
            (wanted,),
        )
    }
    stale = f"SELECT value FROM ({_KEYS}) WHERE value NOT IN (SELECT session_key FROM usage_rollup_state)"
    for key, *values in conn.execute(_session_usage(stale), (wanted,)):
        out[key] = usage_from([*values[:-1], None])
    return out


TOKENS_SQL = f"""CASE WHEN s.key IN (SELECT session_key FROM usage_rollup_state)
    THEN COALESCE((SELECT t.total_tokens FROM session_usage t WHERE t.session_key = s.key), 0)
    ELSE (SELECT COALESCE(SUM({_TOTAL_TOKENS}), 0) FROM messages m JOIN usage u ON u.message_rowid = m.rowid
          WHERE m.session_key = s.key AND m.replayed = 0) END"""
"""SQL for the total tokens of session ``s`` (its header's), to sort a listing by:
stored, or summed from its calls when its roll-ups are stale."""


_CALL = "s.agent, s.parent_key, s.cwd"
_RECORD_COLUMNS = f"""r.session_key, {_CALL}, r.model, r.first_at, r.input_tokens, r.cache_read_tokens,
    r.cache_write_5m_tokens, r.cache_write_1h_tokens, r.output_tokens, r.reasoning_tokens,
    r.web_search_requests, CASE WHEN r.recorded THEN r.recorded_nano_usd / 1e9 END,
    CASE WHEN r.recorded THEN 'recorded' END, r.service_tier, r.calls, r.last_at, r.min_prompt, r.max_prompt,
    CASE WHEN r.recorded THEN r.recorded_nano_usd END, r.model_inferred"""


def usage_records(
    conn: sqlite3.Connection, agent: str | None = None, keys: Sequence[str] | None = None
) -> list[Call]:
    """The roll-up records of every counted call (of ``agent`` when given; of the
    sessions ``keys`` when given).

    Roll-ups of sessions changed since they were built are rebuilt first and
    stored; on a read-only connection they are summed for this read only (of
    ``keys`` alone when given: a page of sessions sums its own calls).
    """
    stored = refresh_rollups(conn)
    params: list[Any] = []
    if keys is None:
        rows = "SELECT * FROM usage_rollup WHERE session_key IN (SELECT session_key FROM usage_rollup_state)"
        if not stored:
            rows += f" UNION ALL {_aggregate(_STALE)}"
    else:
        # the keys drive the join (CROSS JOIN keeps that order): left to the
        # planner, SQLite walked every roll-up state first (10 ms for 20 keys of
        # 3,000 sessions, against 0.1 ms)
        wanted = json.dumps(sorted(set(keys)))
        rows = f"""SELECT r.* FROM ({_KEYS}) k CROSS JOIN usage_rollup r ON r.session_key = k.value
            WHERE r.session_key IN (SELECT session_key FROM usage_rollup_state)"""
        params.append(wanted)
        if not stored:
            rows += f" UNION ALL {_aggregate(f'SELECT value FROM ({_KEYS}) WHERE value IN ({_STALE})')}"
            params.append(wanted)
    query = f"""SELECT {_RECORD_COLUMNS} FROM ({rows}) r
        JOIN sessions s ON s.key = r.session_key JOIN sources src ON src.id = s.source_id
        WHERE src.duplicate_of IS NULL {"AND s.agent = ?" if agent else ""}"""
    if agent:
        params.append(agent)
    found = conn.execute(query, params).fetchall()
    roots = _roots(conn, None if keys is None else {row[0] for row in found})
    return [
        _call(
            row,
            roots,
            calls=row[16],
            last_timestamp=_time(row[17]),
            prompt_range=(row[18], row[19]),
            recorded_nano=None if row[20] is None else int(row[20]),
            model_inferred=bool(row[21]),
        )
        for row in found
    ]


def members(conn: sqlite3.Connection, record: Call) -> list[Call]:
    """The single calls a roll-up ``record`` sums."""
    where = f"""m.session_key = :key AND m.model IS :model AND u.service_tier IS :tier
        AND {_RECORDED} = :recorded AND {_INFERRED} = :inferred
        AND {_bucket("m.timestamp")} IS {_bucket(":stamp")}"""
    return _calls(
        conn,
        where,
        {
            "key": record.session_key,
            "model": record.model,
            "tier": record.service_tier,
            "recorded": int(record.usage.cost_source == "recorded"),
            "inferred": int(record.model_inferred),
            "stamp": record.timestamp.isoformat() if record.timestamp else None,
        },
    )


def _calls(conn: sqlite3.Connection, where: str, params: Mapping[str, Any]) -> list[Call]:
    """The single calls of session ``params["key"]`` that ``where`` keeps, in order."""
    query = f"""SELECT s.key, {_CALL}, m.model, m.timestamp, {USAGE_COLUMNS}, {_INFERRED}
                FROM usage u JOIN messages m ON m.rowid = u.message_rowid
                JOIN sessions s ON s.key = m.session_key JOIN sources src ON src.id = s.source_id
                WHERE {_COUNTED} AND src.duplicate_of IS NULL AND {where}
                ORDER BY m.rowid"""
    roots = _roots(conn, [params["key"]])
    return [_call(row, roots, model_inferred=bool(row[16])) for row in conn.execute(query, params)]


def refresh_rollups(conn: sqlite3.Connection) -> bool:
    """Rebuild and store the roll-ups of the sessions changed since they were
    built (cost: those sessions' calls); ``False`` when some are changed and the
    connection cannot write."""
    if conn.execute(f"{_STALE} LIMIT 1").fetchone() is None:
        return True
    try:
        with transaction(conn):
            conn.execute(f"DELETE FROM usage_rollup WHERE session_key IN ({_STALE})")
            conn.execute(f"INSERT INTO usage_rollup {_aggregate(_STALE)}")
            conn.execute(f"DELETE FROM session_usage WHERE session_key IN ({_STALE})")
            conn.execute(f"INSERT INTO session_usage {_session_usage(_STALE)}")
            conn.execute(f"INSERT INTO usage_rollup_state (session_key) {_STALE}")
    except sqlite3.OperationalError:  # read-only (the web viewer) or busy past the timeout
        return False
    return True


def store_rollups(conn: sqlite3.Connection, keys: Iterable[str]) -> None:
    """Rebuild the roll-ups of sessions ``keys`` in the caller's transaction (a
    sync's, right after it wrote them: a reader never finds them stale; cost:
    those sessions' calls).  A key with no session stays without roll-ups."""
    wanted = json.dumps(sorted(set(keys)))
    if wanted == "[]":
        return
    conn.execute(f"DELETE FROM usage_rollup WHERE session_key IN ({_KEYS})", (wanted,))
    conn.execute(f"INSERT INTO usage_rollup {_aggregate(_KEYS)}", (wanted,))
    conn.execute(f"DELETE FROM session_usage WHERE session_key IN ({_KEYS})", (wanted,))
    conn.execute(f"INSERT INTO session_usage {_session_usage(_KEYS)}", (wanted,))
    conn.execute(
        f"INSERT OR IGNORE INTO usage_rollup_state (session_key) SELECT key FROM sessions WHERE key IN ({_KEYS})",
        (wanted,),
    )


def _roots(conn: sqlite3.Connection, keys: Iterable[str] | None = None) -> dict[str, str]:
    """Session key → its root's key (:func:`~agentlog.usage.calls.roots_of`), of
    every session, or of ``keys`` and their ancestors only."""
    if keys is None:
        return roots_of(dict(conn.execute("SELECT key, parent_key FROM sessions")))
    chain = f"""WITH RECURSIVE up(key, parent_key) AS (
            SELECT key, parent_key FROM sessions WHERE key IN ({_KEYS})
            UNION SELECT s.key, s.parent_key FROM sessions s JOIN up ON s.key = up.parent_key)
        SELECT key, parent_key FROM up"""
    return roots_of(dict(conn.execute(chain, (json.dumps(sorted(keys)),))))


def _time(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def _call(row: Sequence[Any], roots: dict[str, str], **extra: Any) -> Call:
    """A call from ``(session key, agent, parent key, cwd, model, time, *usage values)``."""
    return Call(
        session_key=row[0],
        agent=row[1],
        parent_key=row[2],
        project=row[3],
        model=row[4],
        timestamp=_time(row[5]),
        root_key=roots.get(row[0], row[0]),
        usage=usage_from(row[6:16]),
        **extra,
    )


USAGE_COLUMNS = ", ".join(f"u.{name}" for name in (*USAGE_COUNTS, "cost_usd", "cost_source", "service_tier"))
"""The ``usage`` table's values in the order :func:`usage_from` takes them."""


def usage_from(values: Sequence[Any]) -> Usage:
    """A :class:`Usage` from the ten values of :data:`USAGE_COLUMNS` (or their sums);
    raises :class:`~agentlog.index.stored.DamagedRow` when a count is not a number
    of 0 or more (``min`` raises ``TypeError`` on text) or the cost is not a number
    (checked inline, in two C calls' time: this runs once a call)."""
    try:
        if min(values[:7]) < 0:
            raise TypeError("token counts are no counts")
        cost = values[7]
        if cost is not None and type(cost) is not float and type(cost) is not int:
            raise TypeError("the cost is no number")
    except TypeError as exc:
        raise damaged("usage", exc) from None
    return Usage(
        input_tokens=values[0],
        cache_read_tokens=values[1],
        cache_write_5m_tokens=values[2],
        cache_write_1h_tokens=values[3],
        output_tokens=values[4],
        reasoning_tokens=values[5],
        web_search_requests=values[6],
        cost_usd=values[7],
        cost_source=values[8],
        service_tier=values[9],
    )
