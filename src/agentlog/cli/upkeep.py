"""Keeping the index: ``agentlog index`` (the sync every read command runs
first, :func:`agentlog.cli.synced.open_index`) and ``agentlog prune``."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from functools import partial
from pathlib import Path

import click
import msgspec

from agentlog.cli import App, main
from agentlog.cli.render import print_json, print_lines, printed_as_written
from agentlog.cli.synced import open_index
from agentlog.errors import NotFound, UsageError
from agentlog.index import db
from agentlog.index.archive import ArchivedSource
from agentlog.index.sync import SyncReport
from agentlog.present import clean, local, plural, tilde
from agentlog.query import resolve_agent
from agentlog.service.index import forget_root, prune, still_unreadable


@main.command("index")
@click.option("--full", is_flag=True, help="Re-read every log instead of only what changed.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a summary.")
@click.pass_obj
def index_command(app: App, full: bool, as_json: bool) -> None:
    """Bring the index up to date (every read command does this first)."""
    from agentlog.service.first_run import build_ended

    if app.no_sync:
        raise UsageError("index is the sync that --no-sync skips: run it without --no-sync")
    conn, report = open_index(app, full=full, building="sync")
    build_ended(app.env)  # only once built: a build that failed leaves its marker (the index is partial)
    still = still_unreadable(conn, report)
    if not db.schema_matches(app.index_path):  # what was not touched is checked too (~1 ms)
        raise db.damaged(app.index_path, "its tables are not this agentlog's")
    result = {
        "index": str(app.index_path),
        "sources": report.sources,
        "unchanged": report.unchanged,
        "appended": report.appended,
        "reparsed": report.reparsed,
        "archived": report.archived,
        "restored": report.restored,
        "removed": report.removed,
        "duplicates": report.duplicates,
        "failed": [{"path": p, "error": e} for p, e in report.failed],
        "still_unreadable": len(still),
        "bytes_parsed": report.bytes_parsed,
        "seconds": round(report.seconds, 3),
        "checked": report.checked,
        "path_problems": report.roots.problems,
    }
    if as_json:
        print_json(result)
        return
    plain = _summary(report, len(still), app.index_path, partial(clean, markup=False))
    if all(printed_as_written(line) for line in plain):
        print_lines(plain)
        return
    for line in _summary(report, len(still), app.index_path, clean):  # rich: a closed pipe ends quietly there too
        app.console.print(line, highlight=False, soft_wrap=True)


def _summary(report: SyncReport, still: int, index: Path, text: Callable[..., str]) -> list[str]:
    """The lines ``agentlog index`` prints, log text through ``text``
    (:func:`~agentlog.present.clean`, for rich or not); ``still``: the sources an
    earlier sync could not read that are unchanged since (not tried again, so not
    among this sync's failures)."""
    return [
        f"{report.sources} sources: {report.unchanged} unchanged, {report.appended} appended, "
        f"{report.reparsed} read whole, {report.duplicates} duplicates, {len(report.failed)} failed; "
        f"{report.bytes_parsed / 1e6:.1f} MB in {report.seconds:.2f} s",
        *(
            f"  failed: {text(path, one_line=True)}: {text(error, one_line=True)}"
            for path, error in report.failed
        ),
        *(
            [
                f"  {report.archived} gone since the last sync: their sessions are kept (agentlog prune removes them)"
            ]
            if report.archived
            else []
        ),
        *([f"  {report.restored} archived sources back"] if report.restored else []),
        *([f"  {report.removed} gone that held no session: forgotten"] if report.removed else []),
        *(
            [f"  {plural(still, 'source')} an earlier sync could not read, unchanged since (see `agentlog doctor`)"]
            if still
            else []
        ),
        f"index: {text(str(index))}",
        *(
            [f"{plural(len(report.roots.problems), 'path')} could not be looked at (see `agentlog doctor`)"]
            if report.roots.problems
            else []
        ),
    ]


@main.command("prune")
@click.option("--agent", "-a", help="Only this agent's sources.")
@click.option(
    "--forget-root",
    "forget",
    metavar="FOLDER",
    type=click.Path(path_type=Path),
    help="Instead: stop reading FOLDER, a --root given earlier, and remove its logs' sessions.",
)
@click.option("--dry-run", "-n", is_flag=True, help="List what would be removed; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a list.")
@click.pass_obj
def prune_command(app: App, agent: str | None, forget: Path | None, dry_run: bool, as_json: bool) -> None:
    """Remove the sessions of logs that are gone (archived) from the index.

    The index keeps the sessions of a log its agent deleted (Claude Code's
    cleanup) or that cannot be read any more; they are listed as archived until
    this removes them.  They cannot be read again from the logs.  With
    --forget-root, a folder once given as --root is no longer remembered, and
    the sessions of the logs under it are removed instead.
    """
    if forget is not None and agent:
        raise UsageError("--forget-root removes every agent's logs under the folder: it takes no --agent")
    agent = resolve_agent(agent)
    conn, _ = open_index(app)
    if forget is not None:
        _forget(app, conn, forget, dry_run, as_json)
        return
    pruned = prune(conn, agent, dry_run=dry_run)
    if as_json:
        print_json({"dry_run": dry_run, "sources": [msgspec.to_builtins(p) for p in pruned]})
        return
    _list_removed(app, pruned, dry_run)
    sessions = sum(len(p.sessions) for p in pruned)
    verb = "would remove" if dry_run else "removed"
    app.err.print(
        f"{verb} {plural(len(pruned), 'archived source')}, {plural(sessions, 'session')}" if pruned else "nothing archived"
    )


_KEPT_WHY = {
    "agent_folder": "an agent's own folder, which syncs read without --root",
    "remembered_root": "inside another remembered root, which holds them",
    "project_file": "an agent's file in a project other sessions ran in, which syncs find without --root",
}


def _forget(app: App, conn: sqlite3.Connection, folder: Path, dry_run: bool, as_json: bool) -> None:
    """``prune --forget-root FOLDER``: :func:`~agentlog.service.index.forget_root`, said."""
    forgotten = forget_root(conn, app.where, folder, dry_run=dry_run)
    shown = clean(tilde(str(folder), str(app.home)), one_line=True)
    if forgotten is None:
        raise NotFound(f"{tilde(str(folder), str(app.home))} is not a folder the index remembers (agentlog doctor lists them)")
    removed, kept = forgotten
    if as_json:
        print_json({
            "dry_run": dry_run,
            "sources": [msgspec.to_builtins(p) for p in removed],
            "kept": sum(k.logs for k in kept),
            "kept_in": [msgspec.to_builtins(k) for k in kept],
        })
        return
    _list_removed(app, removed, dry_run)
    sessions = sum(len(p.sessions) for p in removed)
    verb = "would remove" if dry_run else "removed"
    said = [f"{verb} {plural(len(removed), 'source')}, {plural(sessions, 'session')}" if removed else f"no log to remove under {shown}"]
    for k in kept:
        where = clean(tilde(k.folder, str(app.home)), one_line=True)
        said.append(f"{plural(k.logs, 'log')} under it kept in {where}: " + _KEPT_WHY[k.why])
    if not dry_run:
        said.append(f"forgot {shown}: later syncs do not read it" + (" (but for those)" if kept else ""))
    for line in said:
        app.err.print(line, highlight=False, soft_wrap=True)


def _list_removed(app: App, removed: list[ArchivedSource], dry_run: bool) -> None:
    """One line a source removed (or, with ``dry_run``, that would be)."""
    verb = "would remove" if dry_run else "removed"
    for source in removed:
        why = f" ({clean(source.error, one_line=True)})" if source.error else ""
        more = f", archived {local(source.archived_at)}" if source.archived_at else ""
        if source.copies:  # its sessions stay: the copy holds them once read again
            kept = ", ".join(clean(c, one_line=True) for c in source.copies)
            more += f" (kept by its copy {kept}, read again by the next sync)"
        app.console.print(
            f"{verb} {clean(source.path, one_line=True)}{why}: {plural(len(source.sessions), 'session')}{more}",
            highlight=False,
            soft_wrap=True,
        )
