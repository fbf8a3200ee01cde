"""The ``agentlog`` commands: overview, sessions, show, agents, doctor, detect, schema."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

from agentlog.adapters import LOAD_ERRORS, all_adapters
from agentlog.cli import App, main
from agentlog.cli.options import agent_option, filter_options, json_option, pass_app
from agentlog.cli.render import (
    plain_table,
    print_json,
    print_markup,
    print_session_json,
    render_transcript,
    session_row,
    sessions_table,
)
from agentlog.cli.synced import NOT_READ, open_index
from agentlog.errors import NotFound, UsageError
from agentlog.index import db
from agentlog.index.damage import RowCheck
from agentlog.load import LoadReport, discover_sources, most_specific, sniff
from agentlog.model import json_schema
from agentlog.present import clean, compact, local, plural, tilde
from agentlog.probe import PathProblem
from agentlog.query import SQL_INT_MAX, resolve_agent
from agentlog.readers import read_head
from agentlog.service import doctor as doctor_service
from agentlog.service import sessions as session_service
from agentlog.service.filters import session_filter
from agentlog.service.secrets import redacted_headers

UNREADABLE_HINT = "could not be read[/red] (see `agentlog doctor`)"


@main.command()
@click.option(
    "--recent",
    default=10,
    show_default=True,
    type=click.IntRange(min=1, max=SQL_INT_MAX),
    help="How many recent sessions to list.",
)
@json_option
@pass_app
def overview(app: App, recent: int, as_json: bool) -> None:
    """Agents found, session counts, recent sessions, tokens per agent."""
    conn, report = open_index(app)
    found = {slug: [str(r) for r, ok in roots if ok] for slug, roots in report.roots.roots.items()}
    view = session_service.overview(conn, found, recent)
    if as_json:
        print_json(
            {
                "agents": [a for a in view.agents if a.sessions or a.exec_runs or a.roots],
                "recent": [session_row(s, view.children.get(s.key, 0)) for s in view.recent],
                "errors": [{"path": p, "error": e} for p, e in view.unreadable],
                "path_problems": report.roots.problems,
            }
        )
        return
    console = app.console
    where = " (demo corpus)" if app.demo else ""
    runs = f", {plural(view.exec_runs, 'exec run')} (`sessions --exec`)" if view.exec_runs else ""
    console.print(
        f"[bold]agentlog[/bold]{where}: {plural(view.mains, 'session')}{runs}, {plural(view.subagents, 'subagent')}"
    )
    table = plain_table()
    for col in ("agent", "sessions", "subagents", "tokens", "last active", "found in"):
        table.add_column(col, justify="right" if col in ("sessions", "subagents", "tokens") else "left")
    for row in view.agents:
        if not row.sessions and not row.exec_runs and not row.subagents:
            continue
        table.add_row(
            row.name,
            f"{row.sessions} (+{row.exec_runs} exec)" if row.exec_runs else str(row.sessions),
            str(row.subagents),
            compact(row.total_tokens),
            local(row.last_active),
            "\n".join(clean(tilde(r, str(app.home)), one_line=True) for r in row.roots),
        )
    if table.row_count:
        console.print(table)
    elif app.no_sync:  # nothing read: the logs may be there all the same
        console.print(f"No sessions in the index ({NOT_READ}).")
        return
    else:
        console.print(
            "No agent logs found. Try `agentlog --demo` or `agentlog agents` to see where I looked."
        )
        return
    console.print("\n[bold]recent sessions[/bold]")
    console.print(sessions_table(view.recent, view.children, console.width))
    if view.unreadable:
        console.print(f"\n[red]{plural(len(view.unreadable), 'log')} {UNREADABLE_HINT}")
    if report.roots.problems:
        console.print(
            f"[red]{plural(len(report.roots.problems), 'path')} could not be looked at[/red] (see `agentlog doctor`)"
        )


@main.command()
@filter_options("sessions")
@click.option("--subagents", is_flag=True, help="Also list subagent and fork sessions (and exec runs).")
@click.option("--exec", "exec_runs", is_flag=True, help="Also list non-interactive runs (codex exec).")
@click.option(
    "--limit",
    "-n",
    type=click.IntRange(min=1, max=SQL_INT_MAX),
    default=None,
    help="At most this many sessions.",
)
@json_option
@pass_app
def sessions(
    app: App,
    agent: str | None,
    project: str | None,
    since: str | None,
    until: str | None,
    subagents: bool,
    exec_runs: bool,
    limit: int | None,
    as_json: bool,
) -> None:
    """List sessions active in the time span, newest first."""
    where = session_filter(agent, project, since, until, subagents, exec_runs=exec_runs)
    conn, _ = open_index(app)
    found = session_service.list_sessions(conn, where, limit)
    if as_json:
        print_json([session_row(s, found.children.get(s.key, 0)) for s in found.sessions])
        return
    if found.unreadable:
        app.err.print(f"[red]{plural(len(found.unreadable), 'log')} {UNREADABLE_HINT}")
    if not found.sessions:
        found_none = "no sessions match" if found.indexed else "no sessions found"
        app.err.print(f"{found_none} ({NOT_READ})" if app.no_sync and not found.indexed else found_none)
        return
    app.console.print(sessions_table(found.sessions, found.children, app.console.width))


@main.command()
@click.argument("session")
@click.option("--all", "show_all", is_flag=True, help="Also show meta/injected messages.")
@click.option("--reasoning", is_flag=True, help="Expand reasoning.")
@click.option("--full", is_flag=True, help="Do not cut long prompts and replies.")
@click.option("--no-redact", is_flag=True, help="Show API keys, tokens and passwords (redacted by default).")
@json_option
@pass_app
def show(
    app: App,
    session: str,
    show_all: bool,
    reasoning: bool,
    full: bool,
    no_redact: bool,
    as_json: bool,
) -> None:
    """Show one session (a key, an id, or a unique id prefix) as a transcript."""
    if not session.strip():
        raise UsageError("give a session key, id or id prefix (see `agentlog sessions`)")
    conn, _ = open_index(app)
    from agentlog.service.transcript import streamed_session, subagents

    header, messages = streamed_session(conn, session, redact=not no_redact)
    if as_json:
        print_session_json(header, messages)
        return
    render_transcript(app.console, header, messages, show_all=show_all, reasoning=reasoning, full=full)
    _print_summary(app, conn, header.key)
    children = subagents(conn, header.key)
    if children:
        lines = ["\n[bold]subagents[/bold]"]
        for sub in children if no_redact else redacted_headers(children):
            line = f"  {sub.key}  {sub.subagent_type or sub.kind}  {sub.title or ''}"[:160]
            lines.append(clean(line, one_line=True))
        print_markup(app.console, *lines)


def _print_summary(app: App, conn: sqlite3.Connection, key: str) -> None:
    """The summary `agentlog summarize` kept of session ``key``, if any, and
    whether it is of an earlier state of the session."""
    from agentlog.service.summaries import shown_summary

    shown = shown_summary(conn, key)
    if shown is None:
        return
    found = shown.summary
    earlier = "" if shown.current else "; of an earlier state of this session"
    print_markup(
        app.console,
        f"\n[bold]summary[/bold] [dim]({clean(found.model, one_line=True)}, {local(found.created_at)}{earlier})[/dim]",
        clean(found.text),
    )


def agents_markdown() -> str:
    """The supported-agents table of the README, generated from the registry."""
    lines = ["| agent | `--agent` | default locations | environment |", "|---|---|---|---|"]
    for a in all_adapters():
        roots = "<br>".join(f"`{r}`" for r in a.default_roots({}, Path("~")))
        env = ", ".join(f"`{v}`" for v in a.env_vars)
        lines.append(f"| {a.display_name} | `{a.slug}` | {roots} | {env} |")
    return "\n".join(lines) + "\n"


@main.command()
@json_option
@click.option("--markdown", is_flag=True, help="Print the supported-agents table as Markdown.")
@click.option("--all", "show_all", is_flag=True, help="List every folder searched, also the missing ones.")
@pass_app
def agents(app: App, as_json: bool, markdown: bool, show_all: bool) -> None:
    """Supported agents, the folders searched, and what was found there."""
    if markdown:
        click.echo(agents_markdown(), nl=False)
        return
    report = LoadReport()
    discover_sources(all_adapters(), app.env, app.home, app.roots, report)
    rows: list[dict[str, Any]] = [
        {
            "agent": a.slug,
            "name": a.display_name,
            "env": list(a.env_vars),
            "roots": [{"path": str(p), "exists": ok} for p, ok in report.roots[a.slug]],
            "sources": report.sources[a.slug],
        }
        for a in all_adapters()
    ]
    if as_json:
        print_json({"agents": rows, "path_problems": report.problems, "plugin_errors": LOAD_ERRORS})
        return
    for row in rows:
        files = f"{row['sources']} file" + ("" if row["sources"] == 1 else "s")
        app.console.print(f"[bold]{row['name']}[/bold] ({row['agent']}): {files}")
        missing = [r for r in row["roots"] if not r["exists"]]
        for root in (
            row["roots"] if show_all or len(missing) == 1 else [r for r in row["roots"] if r["exists"]]
        ):
            mark = "[green]✓[/green]" if root["exists"] else "[dim]✗[/dim]"
            app.console.print(
                f"  {mark} {clean(tilde(root['path'], str(app.home)), one_line=True)}", soft_wrap=True
            )
        if len(missing) > 1 and not show_all:
            what = (
                f"none of {len(missing)} places present"
                if len(missing) == len(row["roots"])
                else f"{plural(len(missing), 'other place')} not present"
            )
            app.console.print(f"  [dim]✗ {what} (--all lists them)[/dim]")
        if row["env"]:
            app.console.print(f"  [dim]set by {', '.join(row['env'])}[/dim]")
        print_problems(app, [p for p in report.problems if p.agent == row["agent"]], "  ")
    others = [p for p in report.problems if p.agent is None]
    if others:
        app.console.print("[bold]under --root[/bold]")
        print_problems(app, others, "  ")
    for error in LOAD_ERRORS:
        app.err.print(f"[red]plugin failed to load:[/red] {clean(error, one_line=True)}")


@main.command()
@agent_option
@click.option(
    "--deep",
    is_flag=True,
    help="Read back every stored row of the index, not only the newest (about 1 s per 50–100 MB of index).",
)
@json_option
@pass_app
def doctor(app: App, agent: str | None, deep: bool, as_json: bool) -> None:
    """Parse anomalies per agent: records skipped by reason, unknown types, errors;
    stored rows of the index that do not decode (every row with --deep)."""
    agent = resolve_agent(agent)
    conn, synced = open_index(app)
    problem = db.diagnose(app.index_path)  # every page read once: a damaged index is said first
    if problem is not None:
        raise problem
    result = doctor_service.doctor(conn, agent, synced.roots, home=app.where, deep=deep)
    if as_json:
        print_json(result.as_json())
    else:
        print_doctor(app, result)
        print_rows(app, result.rows)
    if result.rows and result.rows.damaged_count:
        rows = result.rows
        what = f"{plural(rows.damaged_count, 'stored row')} cannot be decoded"
        raise db.damaged(app.index_path, what if rows.every_row else f"{what} in the newest rows read")


DAMAGED_SHOWN = 10
"""Damaged rows named on the terminal (``--json`` names up to 100)."""


def print_rows(app: App, rows: RowCheck | None) -> None:
    """What reading back the stored rows found: one line when none is damaged
    (none for an empty index), else each damaged row (its session and source)."""
    if rows is None or not (rows.parts or rows.sessions or rows.headers):
        return
    if not rows.damaged_count:
        whole = f"{plural(rows.sessions, 'session')}, {plural(rows.headers, 'session header')}"
        read = (
            f"every stored row decodes ({rows.parts:,} parts, {rows.messages:,} messages, "
            f"{rows.usage:,} usage rows, {whole})"
            if rows.every_row
            else f"the newest {rows.parts:,} parts, {rows.messages:,} messages and {rows.usage:,} usage rows, "
            f"{whole} decode (doctor --deep reads every row)"
        )
        app.console.print(f"[dim]index: {read}; PRAGMA quick_check: ok[/dim]", soft_wrap=True)
        return
    for row in rows.damaged[:DAMAGED_SHOWN]:
        where = tilde(row.path, str(app.home)) if row.path else "a source gone"
        whose = f" of session {row.session}" if row.session else ""
        app.console.print(
            f"[red]damaged[/red] {row.what} ({row.table} row {row.rowid}){clean(whose, one_line=True)} "
            f"({clean(where, one_line=True)}): {clean(row.error, one_line=True)}",
            soft_wrap=True,
        )
    if rows.damaged_count > DAMAGED_SHOWN:
        app.console.print(f"  and {plural(rows.damaged_count - DAMAGED_SHOWN, 'more')} (doctor --json lists 100)")
    if not rows.every_row:
        app.console.print("  (only the newest rows were read: doctor --deep reads every one)")


SKIPPED_FILES = 5
"""Files named per agent under ``doctor``'s skipped records (``--json`` names all)."""


def print_doctor(app: App, result: doctor_service.DoctorReport) -> None:
    """``doctor``'s report on the terminal (log text escaped)."""
    console = app.console
    for row in result.agents:
        r = row.total
        console.print(
            f"[bold]{row.agent}[/bold]: {plural(row.sessions, 'session')}, {r.records_total:,} records, "
            f"{r.records_used:,} used"
        )
        for reason, n in sorted(r.skipped.items(), key=lambda kv: -kv[1]):
            console.print(f"  skipped {n:>7,}  {clean(reason, one_line=True)}")
        for source in row.skipped_in[:SKIPPED_FILES]:
            counts = ", ".join(f"{n:,} {reason}" for reason, n in sorted(source.skipped.items(), key=lambda kv: -kv[1]))
            path = tilde(source.path, str(app.home))
            console.print(f"    in {clean(path, one_line=True)}: {clean(counts, one_line=True)}", soft_wrap=True)
        if len(row.skipped_in) > SKIPPED_FILES:
            console.print(f"    and in {plural(len(row.skipped_in) - SKIPPED_FILES, 'more file')} (doctor --json lists them)")
        for kind, n in sorted(r.unknown_types.items(), key=lambda kv: -kv[1]):
            console.print(f"  kept raw {n:>6,}  unknown type {clean(kind, one_line=True)}")
        for reason, n in sorted(r.invalid_values.items(), key=lambda kv: -kv[1]):
            console.print(f"  zeroed {n:>8,}  {clean(reason, one_line=True)}")
        for what, n in sorted(r.inferred.items(), key=lambda kv: -kv[1]):
            console.print(
                f"  inferred {n:>6,}  {clean(what, one_line=True)} (not recorded; see usage warnings)"
            )
        if r.incomplete_tail_bytes:
            console.print(
                f"  {r.incomplete_tail_bytes:,} bytes of half-written last lines (read once complete)"
            )
        for error in r.errors:
            console.print(f"  [yellow]{clean(error, one_line=True)}[/yellow]")
    for item in result.unreadable:
        console.print(
            f"[red]unreadable[/red] {clean(item.path, one_line=True)}: {clean(item.error, one_line=True)}"
        )
    print_problems(app, result.path_problems, named=True)
    for copy in result.duplicates:
        path, original = clean(copy.path, one_line=True), clean(copy.copy_of, one_line=True)
        console.print(f"[dim]duplicate copy ignored: {path} (same session as {original})[/dim]")
    for warning in result.retention:
        console.print(f"[yellow]warning:[/yellow] {clean(warning.message, one_line=True)}")
    if result.remembered_roots:
        folders = ", ".join(clean(tilde(p, str(app.home)), one_line=True) for p in result.remembered_roots)
        console.print(
            f"[dim]--root folders of earlier syncs, their logs kept synced (read-only): {folders}"
            " (a new log there is found with --root again; `agentlog prune --forget-root FOLDER` forgets one)[/dim]",
            soft_wrap=True,
        )
    if not result.synced:
        print_never_synced(app, result)
    elif not result.agents and not result.unreadable and not result.path_problems:
        console.print("No agent logs found (`agentlog agents --all` lists where agentlog looks).", soft_wrap=True)


def print_never_synced(app: App, result: doctor_service.DoctorReport) -> None:
    """``doctor`` on an index that holds no source and was not synced now: that
    it is empty, how to sync it, and the places a sync would read."""
    console = app.console
    index = clean(tilde(str(app.index_path), str(app.home)), one_line=True)
    console.print(
        f"The index {index} is empty: it was never synced (or only where no agent's logs were). "
        "Run `agentlog index` (or this command without --no-sync) to read the logs.",
        soft_wrap=True,
    )
    if not result.roots:
        console.print(
            "No agent's folder exists here (`agentlog agents --all` lists where agentlog looks).", soft_wrap=True
        )
        return
    console.print("A sync reads:")
    for row in result.roots:
        places = ", ".join(clean(tilde(root, str(app.home)), one_line=True) for root in row.roots)
        console.print(f"  {row.agent}: {places} ({plural(row.sources, 'file')})", soft_wrap=True)


def print_problems(app: App, problems: Iterable[PathProblem], indent: str = "", named: bool = False) -> None:
    """One line per path discovery could not look at: the path and the error
    (with ``named``, the agent whose discovery met it, ``--root`` for none)."""
    for item in problems:
        who = f"{item.agent or '--root'}: " if named else ""
        path = clean(who + tilde(item.path, str(app.home)), one_line=True)
        app.console.print(
            f"{indent}[red]cannot look at[/red] {path}: {clean(item.error, one_line=True)}", soft_wrap=True
        )


@main.command()
@click.argument("file", type=click.Path(path_type=Path))
@json_option
@pass_app
def detect(app: App, file: Path, as_json: bool) -> None:
    """Which agent's format FILE is, judged by its content."""
    if not str(file).strip() or str(file) == ".":
        raise UsageError("give a log file to look at")
    try:
        head = read_head(file)
    except FileNotFoundError:
        raise NotFound(f"{file}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{file}: is a folder; give a log file") from None
    except OSError as exc:
        raise NotFound(f"{file}: cannot read ({exc.strerror or exc})") from None
    scores = sorted(((sniff(a, file.name, head), a) for a in all_adapters()), key=lambda t: -t[0])
    best_score, best = most_specific(scores)
    if as_json:
        print_json(
            {
                "file": str(file),
                "agent": best.slug if best_score > 0 else None,
                "confidence": best_score,
                "scores": {a.slug: s for s, a in scores},
            }
        )
        if best_score <= 0:  # as without --json: a script can test the exit status
            raise SystemExit(1)
        return
    if best_score <= 0:
        click.echo(f"{clean(str(file), markup=False)}: not a format agentlog knows")
        raise SystemExit(1)
    click.echo(
        f"{clean(str(file), markup=False)}: {best.display_name} ({best.slug}), confidence {best_score:.2f}"
    )


@main.command()
def schema() -> None:
    """Print the JSON Schema of the session model (the export format)."""
    print_json(json_schema())
