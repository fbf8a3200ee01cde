"""``agentlog daemon status|stop``: this user's resident agentlog processes
(:mod:`agentlog.resident`, :mod:`agentlog.service.residents`)."""

from __future__ import annotations

import json
import time

import click

from agentlog.cli import App, main
from agentlog.cli.options import json_option, pass_app
from agentlog.resident.paths import OFF_ENV
from agentlog.service.residents import residents, stop


@main.group()
def daemon() -> None:
    """The resident process that serves commands without Python's start-up
    (started by a command at a terminal, gone after 10 minutes idle; AGENTLOG_NO_DAEMON=1: never)."""


@daemon.command("status")
@json_option
@pass_app
def daemon_status(app: App, as_json: bool) -> None:
    """Each resident: its process id, agentlog version, Python and the commands it served."""
    found = residents(app.env)
    if as_json:
        click.echo(json.dumps(found, indent=2))
        return
    if not found:
        off = f" ({OFF_ENV} is set)" if app.env.get(OFF_ENV, "") not in ("", "0") else ""
        click.echo(f"no resident{off}")
    for r in found:
        age = time.time() - float(r["started"])
        state = "stopping" if r["stopping"] else f"{r['running']} running"
        click.echo(
            f"pid {r['pid']}: agentlog {r['version']} ({r['executable']}), up {age:.0f} s, "
            f"{r['served']} served, {state}, socket {r['socket']}"
        )


@daemon.command("stop")
@pass_app
def daemon_stop(app: App) -> None:
    """Stop every resident (each once the commands it is running end)."""
    stopped = stop(app.env)
    click.echo(f"stopped {len(stopped)} resident{'s' if len(stopped) != 1 else ''}")
