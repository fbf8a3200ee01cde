"""The ``agentlog`` commands: overview, sessions, show, agents, doctor, detect, schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import msgspec

from agentlog.adapters import LOAD_ERRORS, all_adapters
from agentlog.cli import App, main
from agentlog.cli.indexing import no_sync_option, open_index, resolve_agent
from agentlog.cli.render import (
    clean,
    compact,
    local,
    plain_table,
    plural,
    print_json,
    render_transcript,
    session_row,
    sessions_table,
    tilde,
)
from agentlog.errors import NotFound, UsageError
from agentlog.index import db, queries
from agentlog.load import LoadReport, discover_sources, sniff
from agentlog.model import Diagnostics, Usage, json_schema
from agentlog.query import parse_since
from agentlog.readers import read_head
from agentlog.retention import claude_cleanup_warnings

pass_app = click.make_pass_decorator(App)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
agent_option = click.option("--agent", "-a", help="Only this agent (see `agentlog agents`).")


@main.command()
@click.option(
    "--recent",
    default=10,
    show_default=True,
    type=click.IntRange(min=1),
    help="How many recent sessions to list.",
)
@json_option
@no_sync_option
@pass_app
def overview(app: App, recent: int, as_json: bool, no_sync: bool) -> None:
    """Agents found, session counts, recent sessions, tokens per agent."""
    conn, report = open_index(app, no_sync)
    sessions = queries.list_sessions(conn)
    errors, _ = queries.source_problems(conn)
    per_agent: dict[str, dict[str, Any]] = {}
    for adapter in all_adapters():
        mine = [s for s in sessions if s.agent == adapter.slug]
        total = sum((s.usage for s in mine), Usage())
        per_agent[adapter.slug] = {
            "agent": adapter.slug,
            "name": adapter.display_name,
            "roots": [str(r) for r, ok in report.roots.roots.get(adapter.slug, []) if ok],
            "sessions": sum(1 for s in mine if not s.parent_key),
            "subagents": sum(1 for s in mine if s.parent_key),
            "total_tokens": total.total_tokens,
            "last_active": max((s.ended_at for s in mine if s.ended_at), default=None),
        }
    mains = [s for s in sessions if not s.parent_key]
    children = queries.child_counts(conn)
    if as_json:
        print_json(
            {
                "agents": [row for row in per_agent.values() if row["sessions"] or row["roots"]],
                "recent": [session_row(s, children.get(s.key, 0)) for s in mains[:recent]],
                "errors": [{"path": p, "error": e} for p, e in errors],
            }
        )
        return
    console = app.console
    where = " (demo corpus)" if app.demo else ""
    subs = len(sessions) - len(mains)
    console.print(
        f"[bold]agentlog[/bold]{where}: {plural(len(mains), 'session')}, {plural(subs, 'subagent')}"
    )
    table = plain_table()
    for col in ("agent", "sessions", "subagents", "tokens", "last active", "found in"):
        table.add_column(col, justify="right" if col in ("sessions", "subagents", "tokens") else "left")
    for row in per_agent.values():
        if not row["sessions"] and not row["subagents"]:
            continue
        table.add_row(
            row["name"],
            str(row["sessions"]),
            str(row["subagents"]),
            compact(row["total_tokens"]),
            local(row["last_active"]),
            "\n".join(tilde(r, str(app.home)) for r in row["roots"]),
        )
    if table.row_count:
        console.print(table)
    else:
        console.print(
            "No agent logs found. Try `agentlog --demo` or `agentlog agents` to see where I looked."
        )
        return
    console.print("\n[bold]recent sessions[/bold]")
    console.print(sessions_table(mains[:recent], children, console.width))
    if errors:
        console.print(f"\n[red]{plural(len(errors), 'log')} could not be read[/red] (see `agentlog doctor`)")


@main.command()
@agent_option
@click.option("--project", "-p", help="Only sessions whose folder contains this text.")
@click.option("--since", "-s", help="Only sessions active since a date (YYYY-MM-DD) or span (7d, 12h).")
@click.option("--subagents", is_flag=True, help="Also list subagent and fork sessions.")
@click.option("--limit", "-n", type=click.IntRange(min=1), default=None, help="At most this many sessions.")
@json_option
@no_sync_option
@pass_app
def sessions(
    app: App,
    agent: str | None,
    project: str | None,
    since: str | None,
    subagents: bool,
    limit: int | None,
    as_json: bool,
    no_sync: bool,
) -> None:
    """List sessions, newest first."""
    agent = resolve_agent(agent)
    since_at = parse_since(since) if since is not None else None
    conn, _ = open_index(app, no_sync)
    selected = queries.list_sessions(conn, agent, project, since_at, include_children=subagents, limit=limit)
    children = queries.child_counts(conn)
    if as_json:
        print_json([session_row(s, children.get(s.key, 0)) for s in selected])
        return
    errors, _ = queries.source_problems(conn)
    if errors:
        app.err.print(f"[red]{plural(len(errors), 'log')} could not be read[/red] (see `agentlog doctor`)")
    if not selected:
        app.err.print("no sessions match" if queries.list_sessions(conn, limit=1) else "no sessions found")
        return
    app.console.print(sessions_table(selected, children, app.console.width))


@main.command()
@click.argument("session")
@click.option("--all", "show_all", is_flag=True, help="Also show meta/injected messages.")
@click.option("--reasoning", is_flag=True, help="Expand reasoning.")
@click.option("--full", is_flag=True, help="Do not cut long prompts and replies.")
@json_option
@no_sync_option
@pass_app
def show(
    app: App, session: str, show_all: bool, reasoning: bool, full: bool, as_json: bool, no_sync: bool
) -> None:
    """Show one session (a key, an id, or a unique id prefix) as a transcript."""
    if not session.strip():
        raise UsageError("give a session key, id or id prefix (see `agentlog sessions`)")
    conn, _ = open_index(app, no_sync)
    found = queries.get_session(conn, session)
    if as_json:
        print_json(found)
        return
    render_transcript(app.console, found, show_all=show_all, reasoning=reasoning, full=full)
    subs = queries.children(conn, found.key)
    if subs:
        app.console.print("\n[bold]subagents[/bold]")
        for sub in subs:
            app.console.print(clean(f"  {sub.key}  {sub.subagent_type or sub.kind}  {sub.title or ''}"[:160]))


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
    rows = [
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
        print_json({"agents": rows, "plugin_errors": LOAD_ERRORS})
        return
    for row in rows:
        files = f"{row['sources']} file" + ("" if row["sources"] == 1 else "s")
        app.console.print(f"[bold]{row['name']}[/bold] ({row['agent']}): {files}")
        missing = [r for r in row["roots"] if not r["exists"]]
        for root in (
            row["roots"] if show_all or len(missing) == 1 else [r for r in row["roots"] if r["exists"]]
        ):
            mark = "[green]✓[/green]" if root["exists"] else "[dim]✗[/dim]"
            app.console.print(f"  {mark} {clean(tilde(root['path'], str(app.home)))}", soft_wrap=True)
        if len(missing) > 1 and not show_all:
            what = (
                f"none of {len(missing)} places present"
                if len(missing) == len(row["roots"])
                else f"{plural(len(missing), 'other place')} not present"
            )
            app.console.print(f"  [dim]✗ {what} (--all lists them)[/dim]")
        if row["env"]:
            app.console.print(f"  [dim]set by {', '.join(row['env'])}[/dim]")
    for error in LOAD_ERRORS:
        app.err.print(f"[red]plugin failed to load:[/red] {error}")


@main.command()
@agent_option
@json_option
@no_sync_option
@pass_app
def doctor(app: App, agent: str | None, as_json: bool, no_sync: bool) -> None:
    """Parse anomalies per agent: records skipped by reason, unknown types, errors."""
    agent = resolve_agent(agent)
    conn, synced = open_index(app, no_sync)
    problem = db.diagnose(app.index_path)  # every page read once: a damaged index is said first
    if problem is not None:
        raise problem
    unreadable, duplicates = queries.source_problems(conn, agent)
    unreadable += synced.roots.errors  # found but never stored (e.g. a name that is not UTF-8)
    rows: dict[str, dict[str, Any]] = {}
    for slug, diagnostics in queries.agent_diagnostics(conn, agent).items():
        total = Diagnostics()
        for d in diagnostics:
            total.merge(d)
        rows[slug] = {
            "agent": slug,
            "sessions": len(diagnostics),
            "records_total": total.records_total,
            "records_used": total.records_used,
            "skipped": total.skipped,
            "unknown_types": total.unknown_types,
            "incomplete_tail_bytes": total.incomplete_tail_bytes,
            "errors": total.errors,
        }
    retention = claude_cleanup_warnings(app.env, app.home) if agent in (None, "claude_code") else []
    result = {
        "agents": list(rows.values()),
        "unreadable": [{"path": p, "error": e} for p, e in unreadable],
        "duplicates": [{"path": p, "copy_of": c} for p, c in duplicates],
        "retention": [msgspec.to_builtins(w) for w in retention],
    }
    if as_json:
        print_json(result)
        return
    console = app.console
    for r in result["agents"]:
        console.print(
            f"[bold]{r['agent']}[/bold]: {r['sessions']} sessions, {r['records_total']:,} records, "
            f"{r['records_used']:,} used"
        )
        for reason, n in sorted(r["skipped"].items(), key=lambda kv: -kv[1]):
            console.print(f"  skipped {n:>7,}  {reason}")
        for kind, n in sorted(r["unknown_types"].items(), key=lambda kv: -kv[1]):
            console.print(f"  kept raw {n:>6,}  unknown type {kind}")
        if r["incomplete_tail_bytes"]:
            console.print(
                f"  {r['incomplete_tail_bytes']:,} bytes of half-written last lines (read once complete)"
            )
        for error in r["errors"]:
            console.print(f"  [yellow]{error}[/yellow]")
    for item in result["unreadable"]:
        console.print(f"[red]unreadable[/red] {item['path']}: {item['error']}")
    for item in result["duplicates"]:
        console.print(
            f"[dim]duplicate copy ignored: {item['path']} (same session as {item['copy_of']})[/dim]"
        )
    for warning in retention:
        console.print(f"[yellow]warning:[/yellow] {clean(warning.message)}")
    if not result["agents"] and not result["unreadable"]:
        console.print("No agent logs found.")


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
    best_score, best = scores[0]
    if as_json:
        print_json(
            {
                "file": str(file),
                "agent": best.slug if best_score > 0 else None,
                "confidence": best_score,
                "scores": {a.slug: s for s, a in scores},
            }
        )
        return
    if best_score <= 0:
        click.echo(f"{file}: not a format agentlog knows")
        raise SystemExit(1)
    click.echo(f"{file}: {best.display_name} ({best.slug}), confidence {best_score:.2f}")


@main.command()
def schema() -> None:
    """Print the JSON Schema of the session model (the export format)."""
    print_json(json_schema())
