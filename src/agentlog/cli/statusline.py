"""``agentlog statusline``: the command (see :mod:`agentlog.statusline`)."""

from __future__ import annotations

import sys

import click

from agentlog.cli import App, main
from agentlog.cli.options import pass_app
from agentlog.statusline import DEFAULT_FORMAT, line


@main.command("statusline")
@click.option("--format", "fmt", default=DEFAULT_FORMAT, show_default=True, help="The line's format.")
@pass_app
def statusline(app: App, fmt: str) -> None:
    """One line for Claude Code's statusLine: session cost, today's cost, the
    5-hour block and its burn rate, context used (JSON on stdin; never fails:
    a short fallback line on any error).  Fields: {session} {today} {block}
    {left} {burn} {context} {context_tokens} {model}."""
    click.echo(line(sys.stdin.read(), fmt, app.env, app.index_path, app.where, sync=not app.no_sync, demo=app.demo))
