"""Exact money: costs held as whole pico-dollars (10⁻¹² USD), USD only for output.

Why integers: a report prices single calls (``--no-index``) or 15-minute roll-up
records (the index); with float per-token rates a sum that lands on a half
micro-dollar is printed either way depending on how it was grouped.  Integers add
the same in any order, so every grouping prints the same number.

The unit fits the price table: a per-token rate in pico-dollars is the price per
million tokens in micro-dollars, and genai-prices' table writes at most six
decimals in USD per million tokens (e.g. DeepSeek's ``0.003625``); its web-search
prices (USD per 1,000 requests) at most two.  A finer value — a few float artefacts
in the table such as ``1.0399999999999998``, or a user's ``prices.toml`` — is
rounded to the nearest unit, half to even (:func:`rate`).

Costs an agent recorded (floats in USD, e.g. Claude Code's ``costUSD``) count as
their nearest nano-dollar (10⁻⁹ USD), half away from zero, computed in binary64
exactly as SQLite's ``ROUND(x)`` computes it, so the index can sum them in SQL
(:data:`RECORDED_NANO_SQL`) and give the sum a per-call loop gives
(:func:`recorded_nano`).  A recorded cost of ``$9,007,199`` or more (2⁵³
nano-dollars), infinite or NaN counts as 0; sums stay exact while a roll-up
record's recorded costs stay below that.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

PICO_PER_USD = 10**12
"""Pico-dollars in one US dollar: the unit of every cost in :mod:`agentlog.usage`."""
PICO_PER_NANO = 1000
_NANO_LIMIT = 2.0**53


def rate(usd: Decimal, per: int) -> int:
    """Pico-dollars per unit of a price of ``usd`` per ``per`` units (``10**6``
    for a per-million-token price, ``1000`` for web searches), rounded half to even."""
    return int((usd * PICO_PER_USD / per).to_integral_value(ROUND_HALF_EVEN))


def recorded_nano(usd: float) -> int:
    """The nano-dollars a recorded cost counts as (see the module docstring)."""
    scaled = usd * 1e9
    if not abs(scaled) < _NANO_LIMIT:  # also NaN
        return 0
    return int(scaled + 0.5) if scaled >= 0 else -int(-scaled + 0.5)


RECORDED_NANO_SQL = f"(CASE WHEN abs({{0}} * 1e9) < {_NANO_LIMIT!r} THEN ROUND({{0}} * 1e9) ELSE 0.0 END)"
"""SQL for :func:`recorded_nano` of the column ``{0}`` (``.format`` it); SQLite's
``ROUND`` of a value below 2⁶³ is ``(double)(sqlite_int64)(x + 0.5)``, mirrored
for negatives (``func.c`` ``roundFunc``)."""


def usd(pico: int) -> float:
    """``pico`` pico-dollars in USD rounded to 6 decimals (half to even, exactly:
    the float nearest that decimal)."""
    return round(pico, -6) / PICO_PER_USD


def usd_float(pico: int) -> float:
    """``pico`` pico-dollars in USD, unrounded (for rates and charts)."""
    return pico / PICO_PER_USD
