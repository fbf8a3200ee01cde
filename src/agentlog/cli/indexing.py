"""Commands and helpers around the index: ``index``, ``search``, and the sync
every read command runs first (unless ``--no-sync``)."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
import msgspec

from agentlog.adapters import all_adapters
from agentlog.cli import App, main
from agentlog.cli.render import clean, local, plural, print_json
from agentlog.errors import AgentlogError, UsageError
from agentlog.index import archive, db
from agentlog.index.search import MARK_END, MARK_START, Hit, search
from agentlog.index.sync import SyncReport, sync
from agentlog.query import parse_since

F = TypeVar("F", bound=Callable[..., Any])


def no_sync_option(f: F) -> F:
    """``--no-sync``: read the index as it is."""
    return click.option("--no-sync", is_flag=True, help="Read the index as it is; do not look for new logs.")(
        f
    )


def resolve_agent(agent: str | None) -> str | None:
    """The adapter slug for ``agent``: a slug or a unique prefix of one
    (``claude`` → ``claude_code``).  Raises :class:`UsageError` otherwise."""
    if agent is None:
        return None
    slugs = [a.slug for a in all_adapters()]
    if agent in slugs:
        return agent
    matches = [s for s in slugs if s.startswith(agent)] if agent else []
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise UsageError(f"ambiguous agent {agent!r}: {', '.join(matches)}")
    raise UsageError(f"unknown agent {agent!r} (known: {', '.join(slugs)})")


def open_index(app: App, no_sync: bool = False, full: bool = False) -> tuple[sqlite3.Connection, SyncReport]:
    """The index, brought up to date first unless ``no_sync``; a progress bar on a
    terminal while logs are parsed (quiet when piped)."""
    path = app.index_path
    reader = db.connect_current(path) if no_sync else None
    if reader is not None:  # nothing to write: works on an index you may only read
        return reader, SyncReport()
    try:
        conn = db.connect(path)
    except (sqlite3.Error, OSError) as exc:
        problem = db.explain(exc, path) if isinstance(exc, sqlite3.Error) else None
        raise problem or AgentlogError(f"cannot open the index {path}: {exc}") from None
    if no_sync:
        return conn, SyncReport()
    try:
        return conn, _sync(app, conn, full)
    except sqlite3.OperationalError as exc:  # a full disk, a read-only file or folder
        problem = db.explain(exc, path)
        if problem is None:
            raise
        raise problem from None


def _sync(app: App, conn: sqlite3.Connection, full: bool) -> SyncReport:
    """Sync, with a progress bar on a terminal (quiet when piped)."""
    adapters = all_adapters()
    if not sys.stderr.isatty() or not app.err.is_terminal:
        return sync(conn, adapters, app.env, app.home, app.roots, full=full)
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
                description=clean(Path(path).name[:32]),
            )

        return sync(conn, adapters, app.env, app.home, app.roots, full=full, progress=progress)


@main.command("index")
@click.option("--full", is_flag=True, help="Re-read every log instead of only what changed.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a summary.")
@click.pass_obj
def index_command(app: App, full: bool, as_json: bool) -> None:
    """Bring the index up to date (every read command does this first)."""
    _, report = open_index(app, full=full)
    if not db.schema_matches(app.index_path):  # what was not touched is checked too (~7 ms)
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
        "bytes_parsed": report.bytes_parsed,
        "seconds": round(report.seconds, 3),
    }
    if as_json:
        print_json(result)
        return
    lines = [
        f"{report.sources} sources: {report.unchanged} unchanged, {report.appended} appended, "
        f"{report.reparsed} read whole, {report.duplicates} duplicates, {len(report.failed)} failed; "
        f"{report.bytes_parsed / 1e6:.1f} MB in {report.seconds:.2f} s",
        *(f"  failed: {clean(path)}: {clean(error)}" for path, error in report.failed),
        *(
            [
                f"  {report.archived} gone since the last sync: their sessions are kept (agentlog prune removes them)"
            ]
            if report.archived
            else []
        ),
        *([f"  {report.restored} archived sources back"] if report.restored else []),
        *([f"  {report.removed} gone that held no session: forgotten"] if report.removed else []),
        f"index: {clean(str(app.index_path))}",
    ]
    for line in lines:  # through the console: a closed pipe ends quietly, like the other commands
        app.console.print(line, highlight=False, soft_wrap=True)


@main.command("prune")
@click.option("--agent", "-a", help="Only this agent's sources.")
@click.option("--dry-run", "-n", is_flag=True, help="List what would be removed; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a list.")
@no_sync_option
@click.pass_obj
def prune_command(app: App, agent: str | None, dry_run: bool, as_json: bool, no_sync: bool) -> None:
    """Remove the sessions of logs that are gone (archived) from the index.

    The index keeps the sessions of a log its agent deleted (Claude Code's
    cleanup) or that cannot be read any more; they are listed as archived until
    this removes them.  They cannot be read again from the logs.
    """
    agent = resolve_agent(agent)
    conn, _ = open_index(app, no_sync)
    pruned = archive.prune(conn, agent, dry_run=dry_run)
    if as_json:
        print_json({"dry_run": dry_run, "sources": [msgspec.to_builtins(p) for p in pruned]})
        return
    verb = "would remove" if dry_run else "removed"
    for source in pruned:
        why = f" ({clean(source.error)})" if source.error else ""
        app.console.print(
            f"{verb} {clean(source.path)}{why}: {plural(len(source.sessions), 'session')}, "
            f"archived {local(source.archived_at)}",
            highlight=False,
            soft_wrap=True,
        )
    sessions = sum(len(p.sessions) for p in pruned)
    app.err.print(
        f"{verb} {plural(len(pruned), 'archived source')}, {plural(sessions, 'session')}"
        if pruned
        else "nothing archived"
    )


@main.command("search")
@click.argument("query")
@click.option("--agent", "-a", help="Only this agent.")
@click.option("--project", "-p", help="Only sessions whose folder contains this text.")
@click.option("--since", "-s", help="Only messages since a date (YYYY-MM-DD) or span (7d).")
@click.option("--until", "-u", help="Only messages before a date (YYYY-MM-DD) or span.")
@click.option("--role", type=click.Choice(["user", "assistant", "system", "tool"]), help="Only this role.")
@click.option("--tool", help="Only calls of this tool (normalised name: bash, read, edit …).")
@click.option("--reasoning", is_flag=True, help="Also search reasoning.")
@click.option(
    "--limit", "-n", default=20, show_default=True, type=click.IntRange(min=1), help="At most this many hits."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a list.")
@no_sync_option
@click.pass_obj
def search_command(
    app: App,
    query: str,
    agent: str | None,
    project: str | None,
    since: str | None,
    until: str | None,
    role: str | None,
    tool: str | None,
    reasoning: bool,
    limit: int,
    as_json: bool,
    no_sync: bool,
) -> None:
    """Full-text search: words, "a phrase", prefix*, OR, NOT, NEAR(a b).

    Ranked by relevance (bm25); each hit names its session (open it with
    `agentlog show KEY`).
    """
    agent = resolve_agent(agent)
    since_at = parse_since(since) if since is not None else None
    until_at = parse_since(until) if until is not None else None
    conn, _ = open_index(app, no_sync)
    hits = search(
        conn,
        query,
        agent=agent,
        project=project,
        since=since_at,
        until=until_at,
        role=role,
        tool=tool,
        reasoning=reasoning,
        limit=limit,
    )
    if as_json:
        print_json([{**_plain(h), "show": f"agentlog show {h.session_key}"} for h in hits])
        return
    if not hits:
        app.err.print("no matches")
        return
    for h in hits:
        where = f"{h.role}" + (f" · {h.tool}" if h.tool else "")
        app.console.print(
            f"[cyan]{clean(h.session_key)}[/cyan] [dim]{local(h.timestamp)} · {where}[/dim]"
            f"  {clean((h.session_title or '')[:60])}"
        )
        app.console.print("  " + highlight(h.snippet))
    app.err.print(f"[dim]{len(hits)} hits · open one with: agentlog show <key>[/dim]")


def highlight(snippet: str) -> str:
    """A search snippet as rich markup on one line: content cleaned (no control
    characters reach the terminal), the marked matches in bold yellow."""
    pieces = " ".join(snippet.split()).replace(MARK_END, MARK_START).split(MARK_START)
    return "".join(f"[bold yellow]{clean(p)}[/]" if i % 2 else clean(p) for i, p in enumerate(pieces))


def _plain(hit: Hit) -> dict[str, Any]:
    """A hit as JSON: the snippet's matches marked «like this»."""
    data: dict[str, Any] = msgspec.to_builtins(hit)
    data["snippet"] = hit.snippet.replace(MARK_START, "«").replace(MARK_END, "»")
    return data
