"""Usage reports as documents: the one shape ``agentlog usage … --json``
prints, the Python API's ``Archive.usage`` returns and the MCP server's
``get_usage_summary`` sends.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from agentlog.errors import UsageError
from agentlog.service.usage import PricedUsage
from agentlog.usage.report import GROUPS, Group, build_blocks, build_rows, row_dict

REPORTS = (*GROUPS, "blocks")
"""The reports :func:`usage_document` builds (``limits`` is not a report of calls)."""


def usage_document(
    found: PricedUsage,
    report: str,
    tz: ZoneInfo | None,
    *,
    with_cost: bool = True,
    breakdown: bool = False,
    rollup: bool = True,
    now: datetime | None = None,
) -> dict[str, Any]:
    """The ``--json`` document of ``report`` over ``found``'s priced calls:
    for a group (``daily`` … ``agent``) ``{"report", "timezone", "rows",
    "totals", "inferred_models", "warnings"}`` (tokens as integers, ``cost_usd``
    in USD; ``inferred_models``: the models calls without a recorded one were
    priced at); for
    ``blocks`` ``{"blocks", "warnings"}`` (5-hour windows, active at ``now``).
    Raises :class:`UsageError` for an unknown report."""
    if report == "blocks":
        now = now or datetime.now(UTC)
        blocks = build_blocks(found.calls, now)
        return {"blocks": [b.as_dict(now, with_cost) for b in blocks], "warnings": found.warnings}
    if report not in GROUPS:
        raise UsageError(f"unknown report {report!r} (known: {', '.join(REPORTS)})")
    group: Group = report
    rows, total = build_rows(found.calls, group, tz, rollup=rollup)
    return {
        "report": group,
        "timezone": tz.key if tz is not None else "local",
        "rows": [row_dict(r, group, with_cost, breakdown) for r in rows],
        "totals": total.as_dict(with_cost),
        "inferred_models": found.inferred_models,
        "warnings": found.warnings,
    }
