"""The live board on a terminal (``agentlog status`` and ``watch``): sessions
grouped by project, subagents under their parent, ``needs_you`` first."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from agentlog.model import short_id
from agentlog.present import agent_label, clean, compact
from agentlog.service.status import LiveSession, by_project, flatten

if TYPE_CHECKING:
    from rich.text import Text

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


WIDE = 100
"""From this many columns the board shows each turn's cost and the evidence;
below it, neither (``status --json`` has them), so the session's title has room."""
_GAP = "  "


def board_table(rows: list[LiveSession], now: datetime, width: int = 100, numbers: bool = False) -> Text:
    """``rows`` as lines at most ``width`` columns wide: a line per project (the
    sessions that need you put their project first), each session under it, its
    subagents indented; ``numbers``: each session's number (in
    :func:`~agentlog.service.status.flatten` order) before its status.

    Columns: status, for, agent, session, turn, evidence.  A project's line
    takes the whole width (it never widens the status column).  From
    :data:`WIDE` columns the session and the evidence share what the others
    leave 2:3 and each turn shows its cost; below, the evidence and the cost are
    dropped and the session takes it all."""
    from rich.text import Text

    order = {r.key: n for n, r in enumerate(flatten(rows), 1)} if numbers else {}
    wide = width >= WIDE
    sections = [
        (project, [cells for row in members for cells in _cells(row, now, 1, order, wide)])
        for project, members in by_project(rows)
    ]
    head = tuple(Text(h) for h in HEADINGS)
    every = [head, *(cells for _, members in sections for cells in members)]
    status, since, agent, turn = (max(c[i].cell_len for c in every) for i in (0, 1, 2, 4))
    agent = min(agent, 11)
    left = max(0, width - (status + since + agent + turn) - len(_GAP) * 5)
    session = max(12, left * 2 // 5) if wide else left + len(_GAP)
    evidence = max(0, left - session) if wide else 0
    widths = (status, since, agent, session, turn, evidence)

    def line(cells: tuple[Text, ...]) -> Text:
        shown = []
        for cell, size, right in zip(cells, widths, _RIGHT, strict=True):
            if size:
                cell = cell.copy()
                cell.truncate(size, overflow="ellipsis", pad=not right)
                shown.append(Text(" " * (size - cell.cell_len)) + cell if right else cell)
        out = Text(_GAP).join(shown)
        out.rstrip()
        return out

    lines = [line(head)]
    lines[0].stylize("bold")
    for project, members in sections:
        heading = Text(clean(project or "(no folder)", one_line=True, markup=False), style="bold")
        heading.truncate(width, overflow="ellipsis")
        lines += [heading, *(line(cells) for cells in members)]
    return Text("\n").join(lines)


HEADINGS = ("status", "for", "agent", "session", "turn", "evidence")
_RIGHT = (False, True, False, False, True, False)


def _cells(row: LiveSession, now: datetime, depth: int, order: dict[str, int], cost: bool) -> list[tuple[Text, ...]]:
    """The cells of ``row``'s line and of its subagents' lines, indented."""
    from rich.text import Text

    name = clean(f"{short_id(row.id)} {row.title or ''}".strip(), one_line=True, markup=False)
    spent = f" ${row.turn.cost_usd:.2f}" if cost and row.turn.cost_usd is not None else ""
    number = f"{order[row.key]:>2} " if row.key in order else ""
    status = Text(number + " " * depth) + Text(row.status, style=STYLES.get(row.status, ""))
    cells = (
        status,
        Text(age(row.since, now)),
        Text(agent_label(row.agent)),
        Text(("└ " if depth > 1 else "") + name),
        Text((compact(row.turn.total_tokens) + spent) if row.turn.total_tokens else ""),
        Text(clean(_why(row), one_line=True, markup=False)),
    )
    return [cells, *(c for child in row.children for c in _cells(child, now, depth + 1, order, cost))]
