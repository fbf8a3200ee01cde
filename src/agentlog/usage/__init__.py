"""Usage and cost: per-call records, pricing, reports.

The pipeline is a stream of :class:`~agentlog.usage.calls.Call` records (one per
billed API call, after dedup) produced from sessions (:func:`calls_from_sessions`),
by the fast Claude Code scanner (:mod:`agentlog.usage.scan`), or later from the
index; :mod:`agentlog.usage.pricing` prices them and :mod:`agentlog.usage.report`
turns them into rows.  Token and cost rules: ``shared/cost.md``.
"""

from typing import Any

from agentlog.usage.calls import Call, calls_from_sessions

__all__ = ["Call", "PricedCall", "Pricer", "calls_from_sessions"]


def __getattr__(name: str) -> Any:
    # Pricing imports genai-prices (~0.1 s): only when asked for.
    if name in ("PricedCall", "Pricer"):
        from agentlog.usage import pricing

        return getattr(pricing, name)
    raise AttributeError(name)
