"""The ``agentlog`` commands: overview, sessions, show, agents, doctor, detect, schema."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import click
import msgspec
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from agentlog.adapters import LOAD_ERRORS, SourceRef, all_adapters, get_adapter
from agentlog.cli import App, main
from agentlog.cli.render import compact, local, render_transcript, session_row, sessions_table, tilde
from agentlog.errors import NotFound, UsageError
from agentlog.load import LoadReport, discover_sources, load_sessions
from agentlog.model import Session, Usage, json_schema
from agentlog.query import filter_sessions, find_session, parse_since
from agentlog.readers import read_head

pass_app = click.make_pass_decorator(App)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
agent_option = click.option("--agent", "-a", help="Only this agent (see `agentlog agents`).")


def _check_agent(agent: str | None) -> None:
    if agent:
        try:
            get_adapter(agent)
        except KeyError as exc:
            raise UsageError(exc.args[0]) from None


def _load(app: App, agent: str | None = None, report: LoadReport | None = None) -> list[Session]:
    """Discover and parse, with a progress bar on a terminal (quiet when piped)."""
    _check_agent(agent)
    agents = [agent] if agent else None
    if not app.err.is_terminal:
        return load_sessions(agents, app.env, app.home, app.roots, report)
    with Progress(
        TextColumn("reading logs"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=app.err,
        transient=True,
    ) as bar:
        refs = discover_sources(
            [a for a in all_adapters() if agent in (None, a.slug)], app.env, app.home, app.roots
        )
        task = bar.add_task("", total=len(refs))

        def step(ref: SourceRef) -> None:
            bar.update(task, advance=1, description=Path(ref.path).name[:40])

        return load_sessions(agents, app.env, app.home, app.roots, report, progress=step)


def _print_json(data: Any) -> None:
    sys.stdout.buffer.write(msgspec.json.format(msgspec.json.encode(data), indent=2) + b"\n")
    sys.stdout.flush()


def _children(sessions: list[Session]) -> dict[str, int]:
    return dict(Counter(s.parent_key for s in sessions if s.parent_key))


@main.command()
@click.option("--recent", default=10, show_default=True, help="How many recent sessions to list.")
@json_option
@pass_app
def overview(app: App, recent: int, as_json: bool) -> None:
    """Agents found, session counts, recent sessions, tokens per agent."""
    report = LoadReport()
    sessions = _load(app, report=report)
    per_agent: dict[str, dict[str, Any]] = {}
    for adapter in all_adapters():
        mine = [s for s in sessions if s.agent == adapter.slug]
        total = sum((s.usage for s in mine), Usage())
        per_agent[adapter.slug] = {
            "agent": adapter.slug,
            "name": adapter.display_name,
            "roots": [str(r) for r, ok in report.roots.get(adapter.slug, []) if ok],
            "sources": report.sources.get(adapter.slug, 0),
            "sessions": sum(1 for s in mine if not s.parent_key),
            "subagents": sum(1 for s in mine if s.parent_key),
            "total_tokens": total.total_tokens,
            "last_active": max((s.ended_at for s in mine if s.ended_at), default=None),
        }
    mains = [s for s in sessions if not s.parent_key]
    children = _children(sessions)
    if as_json:
        _print_json(
            {
                "agents": list(per_agent.values()),
                "recent": [session_row(s, children.get(s.key, 0)) for s in mains[:recent]],
                "errors": [{"path": p, "error": e} for p, e in report.errors],
            }
        )
        return
    console = app.console
    where = " (demo corpus)" if app.demo else ""
    console.print(
        f"[bold]agentlog[/bold]{where}: {len(mains)} sessions, {len(sessions) - len(mains)} subagents"
    )
    table = Table(box=None, header_style="bold", pad_edge=False)
    for col in ("agent", "sessions", "subagents", "tokens", "last active", "found in"):
        table.add_column(col, justify="right" if col in ("sessions", "subagents", "tokens") else "left")
    for row in per_agent.values():
        if not row["sources"]:
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
    if report.errors:
        console.print(
            f"\n[red]{len(report.errors)} source(s) could not be read[/red] (see `agentlog doctor`)"
        )


@main.command()
@agent_option
@click.option("--project", "-p", help="Only sessions whose folder contains this text.")
@click.option("--since", "-s", help="Only sessions active since a date (YYYY-MM-DD) or span (7d, 12h).")
@click.option("--subagents", is_flag=True, help="Also list subagent and fork sessions.")
@click.option("--limit", "-n", type=int, default=None, help="At most this many sessions.")
@json_option
@pass_app
def sessions(
    app: App,
    agent: str | None,
    project: str | None,
    since: str | None,
    subagents: bool,
    limit: int | None,
    as_json: bool,
) -> None:
    """List sessions, newest first."""
    since_at = parse_since(since) if since else None
    found = _load(app, agent)
    children = _children(found)
    selected = filter_sessions(found, agent, project, since_at, include_children=subagents)[:limit]
    if as_json:
        _print_json([session_row(s, children.get(s.key, 0)) for s in selected])
        return
    if not selected:
        app.err.print("no sessions match")
        return
    app.console.print(sessions_table(selected, children, app.console.width))


@main.command()
@click.argument("session")
@click.option("--all", "show_all", is_flag=True, help="Also show meta/injected messages.")
@click.option("--reasoning", is_flag=True, help="Expand reasoning.")
@json_option
@pass_app
def show(app: App, session: str, show_all: bool, reasoning: bool, as_json: bool) -> None:
    """Show one session (a key, an id, or a unique id prefix) as a transcript."""
    everything = _load(app)
    found = find_session(everything, session)
    if as_json:
        _print_json(found)
        return
    render_transcript(app.console, found, show_all=show_all, reasoning=reasoning)
    subs = [s for s in everything if s.parent_key == found.key]
    if subs:
        app.console.print("\n[bold]subagents[/bold]")
        for sub in subs:
            app.console.print(f"  {sub.key}  {sub.subagent_type or sub.kind}  {sub.title or ''}"[:160])


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
@pass_app
def agents(app: App, as_json: bool, markdown: bool) -> None:
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
        _print_json({"agents": rows, "plugin_errors": LOAD_ERRORS})
        return
    table = Table(box=None, header_style="bold", pad_edge=False)
    for col in ("agent", "name", "files", "roots searched", "env"):
        table.add_column(col)
    for row in rows:
        roots = "\n".join(("✓ " if r["exists"] else "✗ ") + r["path"] for r in row["roots"])
        table.add_row(row["agent"], row["name"], str(row["sources"]), roots, " ".join(row["env"]))
    app.console.print(table)
    for error in LOAD_ERRORS:
        app.err.print(f"[red]plugin failed to load:[/red] {error}")


@main.command()
@agent_option
@json_option
@pass_app
def doctor(app: App, agent: str | None, as_json: bool) -> None:
    """Parse anomalies per agent: records skipped by reason, unknown types, errors."""
    report = LoadReport()
    found = _load(app, agent, report)
    rows: dict[str, dict[str, Any]] = {}
    for s in found:
        row = rows.setdefault(
            s.agent,
            {
                "agent": s.agent,
                "sessions": 0,
                "records_total": 0,
                "records_used": 0,
                "skipped": Counter(),
                "unknown_types": Counter(),
                "incomplete_tail_bytes": 0,
                "errors": [],
            },
        )
        d = s.diagnostics
        row["sessions"] += 1
        row["records_total"] += d.records_total
        row["records_used"] += d.records_used
        row["skipped"].update(d.skipped)
        row["unknown_types"].update(d.unknown_types)
        row["incomplete_tail_bytes"] += d.incomplete_tail_bytes
        row["errors"].extend(d.errors)
    result = {
        "agents": [
            {**r, "skipped": dict(r["skipped"]), "unknown_types": dict(r["unknown_types"])}
            for r in rows.values()
        ],
        "unreadable": [{"path": p, "error": e} for p, e in report.errors],
        "duplicates": report.duplicates,
    }
    if as_json:
        _print_json(result)
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
                f"  {r['incomplete_tail_bytes']:,} bytes of half-written last lines (read next time)"
            )
        for error in r["errors"]:
            console.print(f"  [yellow]{error}[/yellow]")
    for item in result["unreadable"]:
        console.print(f"[red]unreadable[/red] {item['path']}: {item['error']}")
    for path in result["duplicates"]:
        console.print(f"[dim]duplicate copy ignored: {path}[/dim]")
    if not result["agents"] and not result["unreadable"]:
        console.print("No agent logs found.")


@main.command()
@click.argument("file", type=click.Path(path_type=Path))
@json_option
@pass_app
def detect(app: App, file: Path, as_json: bool) -> None:
    """Which agent's format FILE is, judged by its content."""
    try:
        head = read_head(file)
    except FileNotFoundError:
        raise NotFound(f"{file}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{file}: is a folder; give a log file") from None
    except OSError as exc:
        raise NotFound(f"{file}: cannot read ({exc.strerror or exc})") from None
    scores = sorted(((a.sniff(file.name, head), a) for a in all_adapters()), key=lambda t: -t[0])
    best_score, best = scores[0]
    if as_json:
        _print_json(
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
    _print_json(json_schema())
