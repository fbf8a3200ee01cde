"""The figures of Claude Code's status line (``agentlog statusline``): the
session's cost, today's cost, the current 5-hour block with its burn rate and
the context used — all read from the index, synced first as every read command
syncs it (the session's subagent files and every other agent's logs count in
today's cost and the block, as in ``agentlog usage``).

Claude Code runs the ``statusLine`` command after each message with a JSON
object on stdin (``session_id``, ``transcript_path``, ``model.id``/``display_name``,
``workspace.current_dir`` …; https://docs.anthropic.com/en/docs/claude-code/statusline).
"""

from __future__ import annotations

import os
import re
import sqlite3
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from agentlog.probe import is_within
from agentlog.rules import session_key
from agentlog.service.home import Home

if TYPE_CHECKING:
    from agentlog.usage.pricing import PricedCall

CONTEXT_WINDOW = 200_000
"""Claude's context window (tokens); a model id ending ``[1m]`` has 1,000,000."""


class StatuslineFacts(msgspec.Struct, kw_only=True):
    """What the status line shows: costs in USD (0.0 when there were no calls,
    ``None`` when there were some and none could be priced),
    the active 5-hour block (``block_start``/``block_end`` UTC, ``None`` when no
    block is active) with its cost and burn rate (USD per hour, tokens per minute;
    ``None`` under a minute of calls), and the context the last call used
    (``context_tokens``: its whole prompt, ``context_percent`` of the window)."""

    session_cost_usd: float | None = None
    today_cost_usd: float | None = None
    block_start: datetime | None = None
    block_end: datetime | None = None
    block_cost_usd: float | None = None
    burn_usd_per_hour: float | None = None
    burn_tokens_per_minute: float | None = None
    context_tokens: int | None = None
    context_percent: float | None = None
    partial: list[str] = msgspec.field(default_factory=list)
    """The costs (``session``, ``today``, ``block``) summed over only some of
    their calls: the others could not be priced (printed with ``*``, as
    ``agentlog usage`` marks such a sum)."""
    synced: bool = True
    """``False`` when another agentlog process held the index's write lock past
    :data:`SYNC_WAIT_MS`: the figures are the index's as it was."""


SYNC_WAIT_MS = 1_000
"""How long the status line waits for another process's write lock before it
answers from the index as it is (a long sync elsewhere held every call for the
minute of the usual busy timeout: tester14 finding 20)."""


_ENCODED_CWD = re.compile(r"-|[A-Za-z]--")
"""The start of a project folder's name in Claude Code's ``projects/``: the
session's working folder with each character that is not a letter or digit
written as ``-`` (``/home/me/app`` → ``-home-me-app``, ``C:\\Users`` → ``C--Users``)."""


def _partly_priced(items: list[PricedCall]) -> bool:
    """Whether some of ``items`` have a cost and some have none."""
    costs = {p.cost is None for p in items}
    return costs == {True, False}


def transcript_home(home: Home, transcript_path: str | None, session_id: str) -> Home:
    """``home``, with the ``projects`` folder of the transcript Claude Code named as
    one more root when that lies outside every folder agentlog reads (Claude Code
    run with another ``CLAUDE_CONFIG_DIR`` than the status line sees): that config
    folder's sessions are then read, subagents and other projects' sessions today
    included, and the folder is remembered as a ``--root`` is.  Only a transcript
    as Claude Code writes it counts: a regular file ``<session_id>.jsonl`` in
    ``…/projects/<project>/``, ``<project>`` a working folder as Claude Code
    encodes it (``-home-me-app``, ``C--Users-me-app``; not a code folder such as
    ``~/projects/repo``: tester14 finding 24) — any other file named on stdin made
    its folder, ``/`` or ``/etc``, a root scanned whole (finding 14)."""
    if not transcript_path or not session_id:
        return home
    path = Path(transcript_path)
    if (
        path.name != f"{session_id}.jsonl"
        or path.parent.parent.name != "projects"
        or not _ENCODED_CWD.match(path.parent.name)
        or not path.is_file()
    ):
        return home
    folder = os.path.realpath(path.parent.parent)
    if any(is_within(folder, f) for f in home.log_folders()):
        return home
    return home.with_roots([Path(folder)])


def statusline_facts(
    conn: sqlite3.Connection,
    home: Home,
    session_id: str,
    transcript_path: str | None,
    model_id: str | None = None,
    now: datetime | None = None,
    tz: tzinfo | None = None,
    sync: bool = True,
) -> StatuslineFacts:
    """The figures for Claude Code session ``session_id``, read from the index at
    ``conn`` once synced with every log under ``home`` (the no-change sync of
    every read command: the session's subagent files and other sessions' calls
    today are counted, so the figures are ``agentlog usage``'s) and the folder of
    its transcript ``transcript_path`` when that lies outside them
    (:func:`transcript_home`), unless not ``sync`` (``--no-sync``); ``conn``
    waits :data:`SYNC_WAIT_MS` at most for another process's write lock
    (``synced`` says whether the sync ran); ``tz`` (default: local) says where today begins.
    Raises ``sqlite3.Error`` for a damaged index."""
    from agentlog.service.index import update_index
    from agentlog.service.usage import UsageQuery, index_usage
    from agentlog.usage.money import usd_float
    from agentlog.usage.report import build_blocks

    now = now or datetime.now(UTC)
    synced = sync
    conn.execute(f"PRAGMA busy_timeout = {SYNC_WAIT_MS}")  # for the prices it keeps too
    if sync:
        try:
            update_index(conn, transcript_home(home, transcript_path, session_id))
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            synced = False
            conn.execute("PRAGMA busy_timeout = 0")  # the prices and roll-ups it would keep: not waited for again
    key = session_key("claude_code", session_id)
    priced = index_usage(conn, UsageQuery()).calls  # as `agentlog usage` prices them (the tables kept)
    today = now.astimezone(tz).date()
    mine = [p for p in priced if p.call.session_key == key or p.call.root_key == key]
    todays = [p for p in priced if p.call.timestamp and p.call.timestamp.astimezone(tz).date() == today]

    def total(items: list[PricedCall]) -> float | None:
        costs = [p.cost for p in items if p.cost is not None]
        return usd_float(sum(costs)) if costs else None if items else 0.0

    facts = StatuslineFacts(session_cost_usd=total(mine), today_cost_usd=total(todays), synced=synced)
    facts.partial = [name for name, items in (("session", mine), ("today", todays)) if _partly_priced(items)]
    blocks = build_blocks([p for p in priced if p.call.agent == "claude_code"], now)
    if blocks and blocks[-1].active:
        block = blocks[-1]
        facts.block_start, facts.block_end = block.start, block.end
        facts.block_cost_usd = block.totals.cost_usd if block.totals.priced else None
        if 0 < block.totals.priced < block.totals.calls:
            facts.partial.append("block")
        rate = block.burn_rate()
        if rate is not None:
            facts.burn_tokens_per_minute, facts.burn_usd_per_hour = rate
    row = conn.execute(
        """SELECT u.input_tokens + u.cache_read_tokens + u.cache_write_5m_tokens + u.cache_write_1h_tokens
           FROM messages m JOIN usage u ON u.message_rowid = m.rowid
           WHERE m.session_key = ? AND m.role = 'assistant' ORDER BY m.rowid DESC LIMIT 1""",
        (key,),
    ).fetchone()
    if row is not None:
        window = 1_000_000 if (model_id or "").lower().endswith("[1m]") else CONTEXT_WINDOW
        facts.context_tokens = int(row[0])
        facts.context_percent = round(100 * row[0] / window, 1)
    return facts
