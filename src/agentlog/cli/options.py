"""Options several commands share, each written once with one help text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from agentlog.cli import App
from agentlog.query import TIME_HELP, UNTIL_HELP

F = TypeVar("F", bound=Callable[..., Any])

pass_app = click.make_pass_decorator(App)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
agent_option = click.option(
    "--agent", "-a", help="Only this agent: a slug or a unique prefix, any case (see `agentlog agents`)."
)


def project_option(what: str) -> Callable[[F], F]:
    """``--project/-p``: only ``what`` whose folder contains this text (any case)."""
    return click.option("--project", "-p", help=f"Only {what} whose folder contains this text (any case).")


def since_option(what: str) -> Callable[[F], F]:
    """``--since/-s``: ``what`` from this time on (the one time rule, :mod:`agentlog.query`)."""
    return click.option("--since", "-s", help=f"Only {what} since {TIME_HELP}.")


until_option = click.option("--until", "-u", help=f"{UNTIL_HELP} Takes {TIME_HELP}.")


def no_sync_option(f: F) -> F:
    """``--no-sync``: read the index as it is."""
    return click.option("--no-sync", is_flag=True, help="Read the index as it is; do not look for new logs.")(
        f
    )
