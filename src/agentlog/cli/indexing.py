"""Commands and helpers around the index: ``index``, ``search``, and the sync
every read command runs first (unless ``--no-sync``)."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

import click
import msgspec

from agentlog.cli import App, main
from agentlog.cli.options import filter_options
from agentlog.cli.render import print_json
from agentlog.errors import AgentlogError
from agentlog.index import db
from agentlog.index.search import MARK_END, MARK_START, SORTS, Hit, SearchSort
from agentlog.index.sync import SyncReport
from agentlog.present import clean, local, plural
from agentlog.query import SQL_INT_MAX, resolve_agent
from agentlog.service.filters import search_filter
from agentlog.service.home import Home
from agentlog.service.index import prune, update_index
from agentlog.service.search import MAX_HITS, SearchPaging, search


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
    path, no_sync = app.index_path, app.no_sync
    reader = db.connect_current(path) if no_sync and not app.demo else None
    if reader is not None:  # nothing to write: works on an index you may only read
        return reader, SyncReport()
    try:
        if app.demo:  # only a cache: rebuilt when another build left it (then synced all the same)
            conn, rebuilt = db.connect_cache(path)
            no_sync = no_sync and not rebuilt
        else:
            conn = db.connect(path)
    except (sqlite3.Error, OSError) as exc:
        problem = db.explain(exc, path) if isinstance(exc, sqlite3.Error) else None
        raise problem or AgentlogError(f"cannot open the index {path}: {exc}") from None
    if no_sync:
        return conn, SyncReport()
    from agentlog.service import first_run as background

    if building == "read" and background.build_running(path):
        app.err.print(
            "[yellow]the index is still being built in the background (first run): "
            "what it holds so far is shown[/yellow]"
        )
        return conn, SyncReport(building=True)
    interactive = sys.stderr.isatty()
    if first_run and background.never_synced(conn) and background.wanted(app.env, interactive):
        home = Home(app.env, app.home, app.roots)
        if background.start_build(path, home, app.demo):
            app.err.print("[dim]first run: read from the logs; the index is being built in the background[/dim]")
            return conn, SyncReport(building=True)
    try:
        return conn, _sync(app, conn, full)
    except sqlite3.OperationalError as exc:  # a full disk, a read-only file or folder
        problem = db.explain(exc, path)
        if problem is None:
            raise
        raise problem from None


def _sync(app: App, conn: sqlite3.Connection, full: bool) -> SyncReport:
    """Sync, with a progress bar on a terminal (quiet when piped)."""
    home = Home(app.env, app.home, app.roots)
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


@main.command("index")
@click.option("--full", is_flag=True, help="Re-read every log instead of only what changed.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a summary.")
@click.pass_obj
def index_command(app: App, full: bool, as_json: bool) -> None:
    """Bring the index up to date (every read command does this first)."""
    from agentlog.service.first_run import build_ended

    try:
        _, report = open_index(app, full=full, building="sync")
    finally:
        build_ended(app.env)
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
        "path_problems": report.roots.problems,
    }
    if as_json:
        print_json(result)
        return
    lines = [
        f"{report.sources} sources: {report.unchanged} unchanged, {report.appended} appended, "
        f"{report.reparsed} read whole, {report.duplicates} duplicates, {len(report.failed)} failed; "
        f"{report.bytes_parsed / 1e6:.1f} MB in {report.seconds:.2f} s",
        *(
            f"  failed: {clean(path, one_line=True)}: {clean(error, one_line=True)}"
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
        f"index: {clean(str(app.index_path))}",
        *(
            [f"{plural(len(report.roots.problems), 'path')} could not be looked at (see `agentlog doctor`)"]
            if report.roots.problems
            else []
        ),
    ]
    for line in lines:  # through the console: a closed pipe ends quietly, like the other commands
        app.console.print(line, highlight=False, soft_wrap=True)


@main.command("prune")
@click.option("--agent", "-a", help="Only this agent's sources.")
@click.option("--dry-run", "-n", is_flag=True, help="List what would be removed; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a list.")
@click.pass_obj
def prune_command(app: App, agent: str | None, dry_run: bool, as_json: bool) -> None:
    """Remove the sessions of logs that are gone (archived) from the index.

    The index keeps the sessions of a log its agent deleted (Claude Code's
    cleanup) or that cannot be read any more; they are listed as archived until
    this removes them.  They cannot be read again from the logs.
    """
    agent = resolve_agent(agent)
    conn, _ = open_index(app)
    pruned = prune(conn, agent, dry_run=dry_run)
    if as_json:
        print_json({"dry_run": dry_run, "sources": [msgspec.to_builtins(p) for p in pruned]})
        return
    verb = "would remove" if dry_run else "removed"
    for source in pruned:
        why = f" ({clean(source.error, one_line=True)})" if source.error else ""
        app.console.print(
            f"{verb} {clean(source.path, one_line=True)}{why}: {plural(len(source.sessions), 'session')}, "
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


@main.command("search", context_settings={"ignore_unknown_options": True})
@click.argument("words", nargs=-1, required=True)
@filter_options("messages")
@click.option(
    "--role",
    type=click.Choice(["user", "assistant", "system", "tool"], case_sensitive=False),
    help="Only this role (any case).",
)
@click.option("--tool", help="Only calls of this tool (normalised name, any case: bash, read, edit …).")
@click.option("--reasoning", is_flag=True, help="Also search reasoning.")
@click.option(
    "--limit",
    "-n",
    default=20,
    show_default=True,
    type=click.IntRange(min=1, max=MAX_HITS),
    help="At most this many hits.",
)
@click.option(
    "--offset",
    default=0,
    show_default=True,
    type=click.IntRange(min=0, max=SQL_INT_MAX),
    help="Skip this many hits first.",
)
@click.option(
    "--sessions", "by_session", is_flag=True, help="One line per session: its best hit and hit count."
)
@click.option(
    "--sort",
    type=click.Choice(SORTS),
    default="rank",
    show_default=True,
    help="Best match first, or newest/oldest message first.",
)
@click.option("--fts", "raw", is_flag=True, help="Read QUERY as SQLite FTS5 syntax (columns, NEAR, ^ …).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a list.")
@click.pass_obj
def search_command(
    app: App,
    words: tuple[str, ...],
    agent: str | None,
    project: str | None,
    since: str | None,
    until: str | None,
    role: str | None,
    tool: str | None,
    reasoning: bool,
    limit: int,
    offset: int,
    by_session: bool,
    sort: SearchSort,
    raw: bool,
    as_json: bool,
) -> None:
    """Search what was said and done: the WORDS as written, punctuation and all
    (CLAUDE.md, src/app.py, don't, C++, --force are found as typed; write `--`
    first when a word is one of the options below, e.g. `-- git push -n`).

    Operators only when written so: "a phrase", prefix*, OR, AND, NOT (upper
    case, between words), NEAR(a b); --fts reads the WORDS as FTS5 syntax.  Ranked by
    relevance (bm25); each hit names its session (open it with
    `agentlog show KEY`).
    """
    where = search_filter(agent, project, since, until, role, tool, reasoning)
    paging = SearchPaging(limit=limit, offset=offset, sort=sort, by_session=by_session, raw=raw)
    conn, _ = open_index(app)
    page = search(conn, " ".join(words), where, paging)
    if page.note:
        app.err.print(f"[yellow]{clean(page.note, one_line=True)}[/yellow]")
    if as_json:
        print_json(
            {
                "total": page.total,
                "total_exact": page.total_exact,
                "offset": page.offset,
                "next_offset": page.next_offset,
                "note": page.note,
                "hits": [{**_plain(h), "show": f"agentlog show {h.session_key}"} for h in page.hits],
            }
        )
        return
    if not page.hits:
        app.err.print("no matches" if not page.total else f"no hits past {offset} (of {page.total_text})")
        return
    for h in page.hits:
        role = h.role + (f" · {h.tool}" if h.tool else "")
        count = f" · {h.session_hits} hit{'s' if h.session_hits != 1 else ''}" if by_session else ""
        app.console.print(
            f"[cyan]{clean(h.session_key, one_line=True)}[/cyan] [dim]{local(h.timestamp)} · "
            f"{clean(role, one_line=True)}{count}[/dim]  {clean((h.session_title or '')[:60], one_line=True)}"
        )
        app.console.print("  " + highlight(h.snippet))
    unit = ("session" if by_session else "hit") + ("s" if page.total != 1 or not page.total_exact else "")
    last = offset + len(page.hits)
    whole = offset == 0 and last == page.total and page.total_exact
    shown = f"{page.total_text} {unit}" if whole else f"{offset + 1}–{last} of {page.total_text} {unit}"
    more = f" · next page: --offset {page.next_offset}" if page.next_offset is not None else ""
    app.err.print(f"[dim]{shown}{more} · open one with: agentlog show <key>[/dim]")


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
