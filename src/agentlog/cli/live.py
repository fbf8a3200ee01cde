"""``agentlog status``, ``tail`` and ``watch``: which session is working, which
needs you, and following one as it is written (:mod:`agentlog.service.status`,
:mod:`agentlog.service.tail`, :mod:`agentlog.service.follow`)."""

from __future__ import annotations

import contextlib
import io
import queue
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Generic, TypeVar

import click
import msgspec

from agentlog.cli import App, main
from agentlog.cli.options import agent_option, given, json_option, pass_app
from agentlog.cli.synced import open_index
from agentlog.errors import UsageError
from agentlog.live.procs import ProcessTable
from agentlog.present import clean, plural
from agentlog.query import TIME_HELP, SessionFilter
from agentlog.service.filters import session_filter
from agentlog.service.follow import Follower

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from agentlog.service.tail import SessionTail

KEYS = 0.5
"""Seconds ``watch`` waits for a typed row number before it looks at the logs again."""
REDRAW = 10.0
"""Seconds between redraws of ``watch`` when no log changes (the ages and the
clock's statuses: a permission prompt, a stale turn)."""
PROCS_EVERY = 120.0
"""Seconds between reads of ``/proc`` by ``watch`` and ``tail`` when no log changes."""
REREAD = 60.0
"""Seconds between ``watch``'s reads of the index when no log changes: a redraw in
between refines the last read by the clock alone (:func:`~agentlog.service.status.board`),
so a quiet board costs no query (#17 part 7); a session leaves the default span up
to this late."""

T = TypeVar("T")


def _filter(agent: str | None, project: str | None, since: str | None) -> SessionFilter:
    return session_filter(agent, project, since)


def _follower(app: App) -> Follower | None:
    if app.no_sync:
        return None
    from agentlog.live.watch import MISSING, events_available

    if not events_available():
        app.err.print(MISSING, markup=False, soft_wrap=True)
    follower = Follower(app.index_path, app.where, synced=True)
    follower.start()
    return follower


class _Kept(Generic[T]):
    """What ``read()`` gives, read again at most every ``every`` seconds unless a
    log changed."""

    def __init__(self, read: Callable[[], T], every: float) -> None:
        self.read, self.every = read, every
        self.kept: tuple[T, float] | None = None  # the value, when it was read

    def get(self, changed: bool) -> T:
        if self.kept is None or changed or time.monotonic() - self.kept[1] > self.every:
            self.kept = self.read(), time.monotonic()
        return self.kept[0]


def _procs() -> _Kept[ProcessTable | None]:
    """The process table, read again at most every :data:`PROCS_EVERY` seconds
    unless a log changed."""
    from agentlog.live.procs import scan

    return _Kept(lambda: scan(), PROCS_EVERY)


since_option = click.option(
    "--since",
    "-s",
    callback=given,
    help=f"Sessions written to since {TIME_HELP} (default: the last 24 hours).",
)
project_option = click.option("--project", "-p", help="Only sessions whose folder contains this text (any case).")


@main.command("status")
@since_option
@agent_option
@project_option
@json_option
@pass_app
def status(
    app: App, since: str | None, agent: str | None, project: str | None, as_json: bool
) -> None:
    """Which sessions are working and which need you, from the logs alone.

    Each session's status (needs_you, running_tool, working, waiting_for_subagents,
    waiting_for_user, stale, interrupted, errored, done), since when, the record
    that shows it (~ marks an inferred one, with the reason), the current turn's
    tokens and cost; subagents under their parent.
    """
    from agentlog.service.status import live_status

    where = _filter(agent, project, since)
    conn, _ = open_index(app)
    try:
        rows = live_status(conn, where)
    finally:
        conn.close()
    if as_json:
        from agentlog.cli.render import print_json

        print_json(rows)
        return
    if not rows:
        app.err.print("no session written to in the span")
        return
    from agentlog.cli.board import board_table

    app.console.print(board_table(rows, datetime.now(UTC), app.console.width))


@main.command("tail")
@click.argument("session")
@click.option("--lines", "-n", default=10, show_default=True, type=click.IntRange(0, 1000), help="Messages shown first.")
@json_option
@pass_app
def tail(app: App, session: str, lines: int, as_json: bool) -> None:
    """Follow one session as it is written, like `tail -f` (Ctrl-C stops).

    Prints its last messages, then each new message, tool result and status
    change; subagents' messages under their parent.  --json: one JSON object per
    line (event: message, part or status).
    """
    from agentlog.service.tail import SessionTail

    if not session.strip():
        raise UsageError("tail: give a session key, id or id prefix")
    with _live_index(app) as (conn, follower):
        _follow(app, conn, SessionTail(conn, session, lines), follower, as_json)


@contextlib.contextmanager
def _live_index(app: App) -> Iterator[tuple[sqlite3.Connection, Follower | None]]:
    """The index (synced unless ``--no-sync``) and its follower, until Ctrl-C ends the block."""
    conn, _ = open_index(app)
    follower = None
    try:
        follower = _follower(app)
        yield conn, follower
    except KeyboardInterrupt:
        pass
    finally:
        if follower is not None:
            follower.stop()
        conn.close()


def _follow(app: App, conn: sqlite3.Connection, follow: SessionTail, follower: Follower | None, as_json: bool) -> None:
    """Print ``follow``'s events as they come, until Ctrl-C (``KeyboardInterrupt``)."""
    procs = _procs()
    version, changed = follower.version if follower else 0, True
    encode = msgspec.json.Encoder().encode
    while True:
        events = follow.poll(conn, procs=procs.get(changed))
        for event in events:
            if as_json:
                sys.stdout.buffer.write(encode(event) + b"\n")
            else:
                _print_event(app, follow.key, event)
        sys.stdout.flush()
        if follower is None:
            time.sleep(1.0)
            changed = False
        else:
            now = follower.wait(version, 1.0)
            changed, version = now != version, now


def _print_event(app: App, key: str, event: object) -> None:
    from agentlog.cli.render import render_message
    from agentlog.model import ToolCallPart
    from agentlog.present import clean
    from agentlog.service.tail import TailEvent

    assert isinstance(event, TailEvent)
    console = app.console
    under = "" if event.session == key else f"[dim]↳ {clean(event.session, one_line=True)}[/dim] "
    if event.event == "message" and event.message is not None:
        if event.message.hidden:
            return
        if under:
            console.print(under)
        render_message(console, event.message)
    elif event.event == "part" and isinstance(event.part, ToolCallPart) and event.part.result is not None:
        from agentlog.present import output_text

        text = output_text(event.part.result.output).strip().splitlines()
        first = text[0][:200] if text else "(empty)"
        console.print(f"{under}  [dim]→ {clean(event.part.tool, one_line=True)}: {clean(first)}[/dim]")
    elif event.event == "log" and event.path is not None:
        kept = "" if event.log == "back" else " (the index keeps what it read)"
        console.print(f"{under}[bold]● log {event.log}[/bold] [dim]{clean(event.path, one_line=True)}{kept}[/dim]")
    elif event.event == "status" and event.status is not None:
        row = event.status
        why = row.reason if row.inferred and row.reason else row.evidence or ""
        console.print(f"{under}[bold]● {row.status}[/bold] [dim]{clean(why, one_line=True)}[/dim]")


@main.command("watch")
@since_option
@agent_option
@project_option
@pass_app
def watch(app: App, since: str | None, agent: str | None, project: str | None) -> None:
    """A live board of every session, updated as the logs change (Ctrl-C exits).

    Grouped by project, subagents under their parent, sessions that need you
    first and highlighted.  Updates come from file-system events (the `live`
    extra: pip install 'agentlog[live]'), else a poll.
    """
    where = _filter(agent, project, since)
    with _live_index(app) as (conn, follower):
        _board(app, conn, follower, where)


def _printed(
    console: Console,
    frame: Callable[[bool], tuple[RenderableType, RenderableType]],
    follower: Follower | None,
) -> None:
    """``watch`` off a terminal (a pipe, a file), where rich's ``Live`` prints only
    its last frame when it exits: the board printed whole (its head line, then the
    table), first and after each sync whose board differs from the last printed."""
    from rich.console import Console as Plain
    from rich.console import Group

    def text(body: RenderableType) -> str:
        out = io.StringIO()
        Plain(file=out, width=console.width, color_system=None).print(body)
        return out.getvalue()

    version, last = (follower.version if follower else 0), None
    changed = True
    while True:
        head, body = frame(changed)
        if (shown := text(body)) != last:
            console.print(Group(head, body))
            console.file.flush()
            last = shown
        if follower is None:  # nothing syncs: the board changes only with the clock
            time.sleep(REDRAW)
            changed = False
        else:
            now_version = follower.wait(version, REDRAW)
            changed, version = now_version != version, now_version


def _board(app: App, conn: sqlite3.Connection, follower: Follower | None, where: SessionFilter) -> None:
    """``watch``'s loop: the board, redrawn on each sync and every :data:`REDRAW` seconds."""
    from rich.live import Live

    from agentlog.cli.board import board_table
    from agentlog.service.status import board, flatten, read_live

    procs = _procs()
    reads = _Kept(lambda: read_live(conn, where), REREAD)
    console = app.console
    numbered: list[str] = []
    typed: queue.Queue[str] = queue.Queue()
    keys = sys.stdin.isatty()

    def read_keys() -> None:
        for line in sys.stdin:
            typed.put(line.strip())

    if keys:  # a row number and Enter: that session's tail (Ctrl-C back to the board)
        threading.Thread(target=read_keys, name="agentlog-keys", daemon=True).start()

    def view(changed: bool) -> RenderableType:
        from rich.console import Group

        return Group(*frame(changed))

    def frame(changed: bool) -> tuple[RenderableType, RenderableType]:
        from rich.text import Text

        read, now = reads.get(changed), datetime.now(UTC)
        rows = board(read.sessions, read.turns, read.writes, now, procs.get(changed))
        numbered[:] = [r.key for r in flatten(rows)]
        mode = follower.mode if follower else "no sync"
        hint = " · a row number + Enter: its tail" if keys else ""
        head = Text.from_markup(
            f"[bold]agentlog watch[/bold] [dim]{now.astimezone():%H:%M:%S} · {plural(len(rows), 'session')} · "
            f"updates: {mode}{hint} · Ctrl-C exits[/dim]"
        )
        body = board_table(rows, now, console.width, numbers=keys) if rows else Text("no session written to in the span")
        return head, body

    def open_tail(choice: str) -> None:
        from agentlog.service.tail import SessionTail

        if not choice.isdigit() or not 0 < int(choice) <= len(numbered):
            return
        key = clean(numbered[int(choice) - 1], one_line=True)
        console.print(f"[dim]tail of {key} · Ctrl-C: back to the board[/dim]", highlight=False)
        with contextlib.suppress(KeyboardInterrupt):
            _follow(app, conn, SessionTail(conn, numbered[int(choice) - 1]), follower, False)

    if not console.is_terminal:  # Live shows only its last frame there: a board a change (`watch | tee`)
        _printed(console, frame, follower)
        return
    while True:
        with Live(view(True), console=console, auto_refresh=False, screen=False) as live:
            version, drawn = follower.version if follower else 0, time.monotonic()
            choice = None
            while choice is None:
                try:
                    choice = typed.get(timeout=KEYS) if keys else None
                except queue.Empty:
                    choice = None
                if follower is None:
                    changed = False
                    if not keys:
                        time.sleep(REDRAW)
                else:
                    now_version = follower.wait(version, 0 if keys else REDRAW)
                    changed, version = now_version != version, now_version
                if changed or time.monotonic() - drawn >= REDRAW:
                    live.update(view(changed), refresh=True)
                    drawn = time.monotonic()
        open_tail(choice)
