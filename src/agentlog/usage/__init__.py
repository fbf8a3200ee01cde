"""Usage and cost: per-call records, pricing, reports.

The pipeline is a stream of :class:`~agentlog.usage.calls.Call` records (one per
billed API call, after dedup) produced from sessions (:func:`calls_from_sessions`),
by the fast Claude Code scanner (:mod:`agentlog.usage.scan`), or later from the
index; :mod:`agentlog.usage.pricing` prices them and :mod:`agentlog.usage.report`
turns them into rows.  Token and cost rules: ``shared/cost.md``.
"""

from agentlog.usage.calls import Call, calls_from_sessions
from agentlog.usage.pricing import PricedCall, Pricer

__all__ = ["Call", "PricedCall", "Pricer", "calls_from_sessions"]
