"""Scalar values of agent records: timestamps (ISO-8601 or epoch), token counts,
strings, service tiers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

EARLIEST = datetime(1000, 1, 1, tzinfo=UTC)
LATEST = datetime(9000, 1, 1, tzinfo=UTC)
"""The span of times believed, ``EARLIEST <= t < LATEST``: a recorded time outside it
is no time (``None``), like a placeholder.  Agents write such times as "unset"
(Go's zero time ``0001-01-01T00:00:00Z``, ``9999-12-31T23:59:59Z``), never as
when something happened; inside the span every time has a four-digit year (its
ISO text sorts, ``%Y`` pads it) and stays a time in any zone and after any span
a report adds to it (five-hour blocks, weeks, a day's end): ``datetime`` ends at
years 1 and 9999, and moving one there across a zone raises ``OverflowError``."""


def known_time(stamp: datetime | None) -> datetime | None:
    """``stamp`` (aware) if it lies in ``EARLIEST … LATEST``, else ``None``: the one
    rule every parsed or derived record time passes (:func:`parse_time`, the
    adapters' own time formats, a time plus a recorded duration)."""
    return stamp if stamp is not None and EARLIEST <= stamp < LATEST else None


def later_time(stamp: datetime | None, **span: float) -> datetime | None:
    """``stamp`` plus ``timedelta(**span)`` (a recorded duration) by :func:`known_time`:
    ``None`` when ``stamp`` is, or the sum falls outside the span or overflows."""
    if stamp is None:
        return None
    try:
        return known_time(stamp + timedelta(**span))
    except (OverflowError, ValueError):
        return None


def epoch_time(seconds: float) -> datetime | None:
    """Epoch ``seconds`` as an aware UTC time by :func:`known_time` (``None`` when out of range)."""
    try:
        return known_time(datetime.fromtimestamp(seconds, UTC))
    except (OverflowError, OSError, ValueError):
        return None


def iso_time(value: Any) -> datetime | None:
    """An ISO-8601 string as an aware UTC datetime (no offset: UTC) by
    :func:`known_time`; ``None`` for anything else, a number included."""
    if not isinstance(value, str):
        return None
    try:
        stamp = datetime.fromisoformat(value)
        return known_time(stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp.astimezone(UTC))
    except (ValueError, OverflowError):  # ``0001-01-01T00:00:00+01:00`` is before year 1 in UTC
        return None


def parse_time(value: Any) -> datetime | None:
    """An ISO-8601 string (:func:`iso_time`), or epoch seconds/milliseconds, as an
    aware UTC datetime; ``None`` for anything else (agents write placeholders such
    as ``"[trimmed]"``) and for a time outside :data:`EARLIEST` … :data:`LATEST`."""
    if isinstance(value, str):
        return iso_time(value)
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return epoch_time(value / 1000 if value > 1e11 else value)
    return None


BOUND = 1 << 53
"""``as_int`` keeps values within ±2**53 (out of range as token counts:
:data:`agentlog.rules.MAX_TOKENS`), small enough that sums of a few stay in
SQLite's and msgpack's 64-bit integers."""


def as_int(value: Any) -> int:
    """A recorded number (a token count, a sort key) as ``int``: missing,
    ``null``, non-numeric or NaN → 0; beyond ±2**53 (or infinite) → the bound, so
    that a count out of range stays out of range and is zeroed and reported by
    the one rule for token counts (:func:`agentlog.rules.bounded_usage`)."""
    if type(value) is int and -BOUND < value < BOUND:  # most counts: returned without more tests
        return value
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
