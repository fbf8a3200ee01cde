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


def given(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A click callback refusing an empty or blank value (``--since ''`` would
    otherwise read as no option at all)."""
    if value is not None and not value.strip():
        raise click.BadParameter("is empty", ctx, param)
    return value


def filter_options(what: str) -> Callable[[F], F]:
    """``--agent``, ``--project``, ``--since``, ``--until``: the filter vocabulary
    of :mod:`agentlog.query` on ``what`` (``"calls"``, ``"sessions"`` …), with
    the one time rule said in the help."""
    since = "active " if what == "sessions" else ""
    decorators = (
        agent_option,
        click.option("--project", "-p", help=f"Only {what} whose folder contains this text (any case)."),
        click.option("--since", "-s", callback=given, help=f"Only {what} {since}since {TIME_HELP}."),
        click.option("--until", "-u", callback=given, help=f"{UNTIL_HELP} Takes {TIME_HELP}."),
    )

    def apply(f: F) -> F:
        for decorator in reversed(decorators):
            f = decorator(f)
        return f

    return apply

