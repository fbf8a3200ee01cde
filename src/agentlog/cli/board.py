"""The live board on a terminal (``agentlog status`` and ``watch``): sessions
grouped by project, subagents under their parent, ``needs_you`` first."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from agentlog.model import short_id
from agentlog.present import clean, compact
from agentlog.service.status import LiveSession, by_project, flatten

if TYPE_CHECKING:
    from rich.table import Table

STYLES = {
    "needs_you": "bold reverse red",
    "errored": "red",
    "running_tool": "cyan",
    "waiting_for_subagents": "cyan",
    "working": "green",
    "stale": "yellow",
    "interrupted": "yellow",
    "waiting_for_user": "blue",
    "done": "dim",
    "unknown": "dim",
}
"""The style of each status on the board."""


def age(since: datetime | None, now: datetime) -> str:
    """How long ago ``since`` was: ``12s``, ``4m``, ``3h``, ``2d`` (blank when unknown)."""
    if since is None:
        return ""
    seconds = max(0, int((now - since).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _why(row: LiveSession) -> str:
    text = row.reason if row.inferred and row.reason else row.evidence or ""
    return ("~ " if row.inferred else "") + text


def board_table(rows: list[LiveSession], now: datetime, width: int = 100, numbers: bool = False) -> Table:
    """``rows`` as one table: a line per project (the sessions that need you put
    their project first), each session under it, its subagents indented;
    ``numbers``: each session's number (in :func:`~agentlog.service.status.flatten`
    order) before its status."""
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="bold", expand=True, width=width)
    table.add_column("status", no_wrap=True, min_width=16)
    table.add_column("for", justify="right", no_wrap=True, min_width=3)
    table.add_column("agent", no_wrap=True, min_width=6, max_width=11, overflow="ellipsis")
    table.add_column("session", no_wrap=True, overflow="ellipsis", ratio=2, min_width=12)
    table.add_column("turn", justify="right", no_wrap=True, min_width=5)
    table.add_column("evidence", no_wrap=True, overflow="ellipsis", ratio=3, min_width=12)
    order = {r.key: n for n, r in enumerate(flatten(rows), 1)} if numbers else {}
    for project, members in by_project(rows):
        table.add_row(f"[bold]{clean(project or '(no folder)', one_line=True)}[/bold]", "", "", "", "", "")
        for row in members:
            _add(table, row, now, 1, order)
    return table


def _add(table: Table, row: LiveSession, now: datetime, depth: int, order: dict[str, int]) -> None:
    style = STYLES.get(row.status, "")
    name = clean(f"{short_id(row.id)} {row.title or ''}".strip(), one_line=True)
    cost = f" ${row.turn.cost_usd:.2f}" if row.turn.cost_usd is not None else ""
    number = f"{order[row.key]:>2} " if row.key in order else ""
    table.add_row(
        number + " " * depth + f"[{style}]{row.status}[/{style}]",
        age(row.since, now),
        row.agent.replace("_code", ""),
        ("└ " if depth > 1 else "") + name,
        (compact(row.turn.total_tokens) + cost) if row.turn.total_tokens else "",
        clean(_why(row), one_line=True),
    )
    for child in row.children:
        _add(table, child, now, depth + 1, order)
