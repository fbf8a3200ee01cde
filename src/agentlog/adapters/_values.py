"""Scalar values of agent records: timestamps (ISO-8601 or epoch), token counts,
strings, service tiers."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any


def parse_time(value: Any) -> datetime | None:
    """An ISO-8601 string, or epoch seconds/milliseconds, as an aware UTC datetime;
    ``None`` for anything else (agents write placeholders such as ``"[trimmed]"``)."""
    if isinstance(value, str):
        try:
            stamp = datetime.fromisoformat(value)
        except ValueError:
            return None
        return stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp.astimezone(UTC)
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        seconds = value / 1000 if value > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    return None


BOUND = 1 << 53
"""``as_int`` keeps values within ±2**53: the first count out of range
(:data:`agentlog.rules.MAX_TOKENS`), small enough that sums of a few stay in
SQLite's and msgpack's 64-bit integers."""


def as_int(value: Any) -> int:
    """A recorded number (a token count, a sort key) as ``int``: missing,
    ``null``, non-numeric or NaN → 0; beyond ±2**53 (or infinite) → the bound, so
    that a count out of range stays out of range and is zeroed and reported by
    the one rule for token counts (:func:`agentlog.rules.bounded_usage`)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return 0
    if value >= BOUND:
        return BOUND
    if value <= -BOUND:
        return -BOUND
    return int(value)


def as_str(value: Any) -> str | None:
    """``value`` if it is a non-empty string, else ``None``."""
    return value if isinstance(value, str) and value else None


STANDARD_TIERS = frozenset({"standard", "default"})
"""Recorded tier names that mean the standard rates: Claude Code ``usage.service_tier``
``"standard"``, Codex ``thread_settings.service_tier`` ``"default"`` (openai/codex
``SERVICE_TIER_DEFAULT_REQUEST_VALUE``)."""


def service_tier(tier: Any, speed: Any = None) -> str | None:
    """The service tier a call is priced at: ``"fast"`` when ``speed`` is
    ``"fast"`` (Claude Code ``usage.speed``), else ``tier`` lower-cased, ``None``
    for a standard tier (:data:`STANDARD_TIERS`) or none recorded."""
    if speed == "fast":
        return "fast"
    name = as_str(tier)
    if name is None or name.lower() in STANDARD_TIERS:
        return None
    return name.lower()


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object (``dict``), else ``{}``."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` if it is a JSON array (``list``), else ``[]``."""
    return value if isinstance(value, list) else []
