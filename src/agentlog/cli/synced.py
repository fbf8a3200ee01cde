"""The index a command reads, brought up to date first (unless ``--no-sync``):
the sync every read command runs, with its progress bar on a terminal."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import click

from agentlog.cli import App
from agentlog.errors import AgentlogError
from agentlog.index import db
from agentlog.index.sync import SyncReport
from agentlog.present import clean
from agentlog.service.index import update_index


def open_index(
    app: App, full: bool = False, first_run: bool = False, building: str = "read"
) -> tuple[sqlite3.Connection, SyncReport]:
    """The index, brought up to date first unless ``app.no_sync`` (``--no-sync``); a progress bar on a
    terminal while logs are parsed (quiet when piped).

    While the index is built in the background (:mod:`agentlog.service.first_run`)
    it is read as it is, saying so on stderr (``building="sync"``: synced all
    the same, as ``agentlog index`` does).  With ``first_run``, an index never
    synced starts that build instead of syncing (when
    :func:`~agentlog.service.first_run.wanted`): the caller reads the logs
    directly; either way ``SyncReport.building`` tells."""
    from agentlog.service import first_run as background

    path, no_sync = app.index_path, app.no_sync
    reader = db.connect_current(path) if no_sync and not app.demo else None
    if reader is not None:  # nothing to write: works on an index you may only read
        _say_partial(app, background.build_state(path))
        return reader, SyncReport()
    try:
        with db.telling_upgrades(lambda line: say_upgrade(app, line)):
            if app.demo:  # only a cache: rebuilt when another build left it (then synced all the same)
                conn, rebuilt = db.connect_cache(path)
                no_sync = no_sync and not rebuilt
            else:
                conn = db.connect(path)
    except (sqlite3.Error, OSError) as exc:
        problem = db.explain(exc, path) if isinstance(exc, sqlite3.Error) else None
        raise problem or AgentlogError(f"cannot open the index {path}: {exc}") from None
    state = background.build_state(path)
    if no_sync:
        _say_partial(app, state)
        return conn, SyncReport()
    if building == "read" and state == "running":
        _say_partial(app, state)
        return conn, SyncReport(building=True)
    interactive = sys.stderr.isatty()
    if first_run and background.never_synced(conn) and background.wanted(app.env, interactive):
        home = app.where
        background.start_build_at_exit(path, home, app.demo)
        first_run_note(app.env)
        return conn, SyncReport(building=True)
    own = background.build_here(path) if state is None and background.never_synced(conn) else None
    try:
        report = _sync(app, conn, full)
    except sqlite3.OperationalError as exc:  # a full disk, a read-only file or folder
        problem = db.explain(exc, path)
        if problem is None:
            raise
        raise problem from None
    if own is not None:  # built: not partial (a failed or killed build leaves its marker)
        background.end_build(own)
    if state == "interrupted":
        background.clear_interrupted(path)  # this sync finished what the build left
    return conn, report


NOT_READ = "--no-sync: the logs were not read; `agentlog index` reads them"
"""Why a ``--no-sync`` command may find nothing: said after "no sessions found" and the like."""

PARTIAL = {
    "running": "the index is still being built in the background (first run): what it holds so far is shown",
    "interrupted": "the index's first build was interrupted: what it holds so far is shown "
    "(`agentlog index`, or any command without --no-sync, finishes it)",
}
"""What a command reading an index that holds only part of the logs says on stderr,
by :func:`agentlog.service.first_run.build_state`."""


def say_upgrade(app: App, line: str) -> None:
    """Say on stderr that the index is being upgraded (:func:`db.telling_upgrades`)."""
    app.err.print(f"[yellow]{clean(line)}[/yellow]", soft_wrap=True)


def _say_partial(app: App, state: str | None) -> None:
    if state is not None:
        app.err.print(f"[yellow]{PARTIAL[state]}[/yellow]", soft_wrap=True)


def first_run_note(env: dict[str, str]) -> None:
    """Say on stderr that a first run reads the logs while the index is built: dim
    on a terminal (plain when piped, or with ``NO_COLOR`` set, no-color.org), as
    ``app.err`` would print it, without loading rich (~40 ms, 3% of a first run)."""
    click.secho(
        "first run: read from the logs; the index is being built in the background",
        err=True,
        dim=True,
        color=False if "NO_COLOR" in env else None,
    )


def _sync(app: App, conn: sqlite3.Connection, full: bool) -> SyncReport:
    """Sync, with a progress bar on a terminal (quiet when piped)."""
    home = app.where
    if not sys.stderr.isatty() or not app.err.is_terminal:
        return update_index(conn, home, full)
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    with Progress(
        TextColumn("indexing"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.description}", style="dim"),
        console=app.err,
        transient=True,
    ) as bar:
        task = bar.add_task("", total=None, visible=False)

        def progress(done: int, total: int, path: str) -> None:
            bar.update(
                task,
                completed=done,
                total=total,
                visible=total > 1 << 20,
                description=clean(Path(path).name[:32], one_line=True),
            )

        return update_index(conn, home, full, progress)
