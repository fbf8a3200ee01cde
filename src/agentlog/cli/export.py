"""``agentlog export``: sessions as JSON, JSONL, Markdown, HTML, a slim transcript or Parquet."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import cast

import click

from agentlog.cli import App, main
from agentlog.cli.options import filter_options, pass_app
from agentlog.cli.synced import open_index
from agentlog.errors import UsageError
from agentlog.export import DATA_FORMATS, FORMATS, ExportOptions, Format
from agentlog.present import plural
from agentlog.query import SQL_INT_MAX
from agentlog.service.export import export_sessions, select
from agentlog.service.filters import session_filter


@main.command("export")
@click.argument("sessions", nargs=-1)
@click.option(
    "--all", "everything", is_flag=True, help="Every session the filters keep (instead of naming them)."
)
@filter_options("sessions")
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(FORMATS),
    default="md",
    show_default=True,
    help="json: the model; jsonl: one message per line; md: Markdown; html: one self-contained page "
    "(--all: a static site); slim: compact text for another model; parquet: a dataset (needs agentlog[parquet]).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="File to write (a folder for parquet and html --all); default (or -) standard output.",
)
@click.option(
    "--focused", is_flag=True, help="Only prompts and replies: no reasoning, tool calls or meta messages."
)
@click.option(
    "--subagents", is_flag=True, help="Include each session's subagents and forks (parquet always does)."
)
@click.option(
    "--hidden",
    is_flag=True,
    help="Include the messages a transcript hides (meta, compaction summaries, replayed copies), "
    "with their flags (json, jsonl and parquet always do).",
)
@click.option("--no-redact", is_flag=True, help="Keep API keys, tokens and passwords (redacted by default).")
@click.option(
    "--max-tokens",
    type=click.IntRange(min=50, max=SQL_INT_MAX),
    help="slim: fit each session in about this many tokens (4 characters each).",
)
@pass_app
def export_command(
    app: App,
    sessions: tuple[str, ...],
    everything: bool,
    agent: str | None,
    project: str | None,
    since: str | None,
    until: str | None,
    fmt: str,
    output: Path | None,
    focused: bool,
    subagents: bool,
    hidden: bool,
    no_redact: bool,
    max_tokens: int | None,
) -> None:
    """Export sessions (keys, ids or unique id prefixes), or --all that the filters keep.

    Secrets are replaced by [REDACTED:<kind>] unless --no-redact.
    """
    if bool(sessions) == everything:
        raise UsageError("name the sessions to export, or give --all (with filters), not both")
    if max_tokens is not None and fmt != "slim":
        raise UsageError("--max-tokens is for --format slim")
    filtered = any(v is not None for v in (agent, project, since, until))
    if filtered and not everything:
        raise UsageError("--agent, --project, --since and --until go with --all")
    where = session_filter(agent, project, since, until) if everything else None
    if output == Path("-"):  # the usual spelling of standard output
        output = None
    options = ExportOptions(
        focused=focused,
        subagents=subagents or fmt == "parquet",
        redact=not no_redact,
        max_tokens=max_tokens,
        hidden=hidden or fmt in DATA_FORMATS,
    )
    if output is None and sys.stdout.isatty() and fmt in ("html", "parquet"):
        raise UsageError(f"--format {fmt} is not for a terminal: give a file with -o PATH")
    conn, _ = open_index(app)
    transcripts = select(conn, sessions, where, options)
    report = export_sessions(
        conn,
        cast(Format, fmt),
        transcripts,
        options,
        output,
        sys.stdout.buffer,
        site=everything,
        home=app.where,
    )
    sys.stdout.flush()
    if not transcripts:
        app.err.print("no sessions match")
    if output is not None:
        done = f"{plural(report.sessions, 'session')} exported to {output}"
        if report.pages_written or report.pages_unchanged or report.pages_removed:
            removed = f", {report.pages_removed} removed" if report.pages_removed else ""
            done += f" ({report.pages_written} pages written, {report.pages_unchanged} unchanged{removed})"
        if report.rows:
            done += " (" + ", ".join(f"{n:,} {table}" for table, n in report.rows.items()) + ")"
        click.echo(done, err=True)
