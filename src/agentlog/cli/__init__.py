"""The ``agentlog`` command line.

This module holds the command group, the global options and the one place that
maps errors to exit codes: a user error prints one line and exits 1 (2 for bad
arguments); an unexpected exception prints one line asking for ``--debug``
(which shows the traceback) and exits 70.
"""

from __future__ import annotations

import gc
import importlib
import sys
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import msgspec

from agentlog._version import __version__
from agentlog.cli.globals import attach, make_app, said
from agentlog.cli.globals import options as global_options
from agentlog.collector import gc_paused
from agentlog.errors import AgentlogError
from agentlog.index.db import explain
from agentlog.present import clean
from agentlog.service.home import Home

if TYPE_CHECKING:
    from rich.console import Console

# rich is imported only by the commands that draw on a terminal: a ``--json``
# report or a piped listing never pays for it.


class App(msgspec.Struct, dict=True):
    """Settings every command shares (set by the global options); ``console``
    (stdout) and ``err`` (stderr) are rich consoles made on first use."""

    env: dict[str, str]
    home: Path
    index_path: Path
    roots: list[Path] = msgspec.field(default_factory=list)
    debug: bool = False
    demo: bool = False
    no_sync: bool = False

    @property
    def where(self) -> Home:
        """The logs' home these settings name: environment, home folder, ``--root`` folders."""
        return Home(self.env, self.home, self.roots)

    @cached_property
    def console(self) -> Console:
        from agentlog.cli.consoles import PipeConsole

        return PipeConsole()

    @cached_property
    def err(self) -> Console:
        from rich.console import Console

        return Console(stderr=True, highlight=False)


COMMANDS: dict[str, str] = {
    "agents": "commands",
    "daemon": "daemon",
    "detect": "commands",
    "doctor": "commands",
    "export": "export",
    "index": "upkeep",
    "mcp": "mcp",
    "overview": "commands",
    "prices": "usage",
    "prune": "upkeep",
    "schema": "commands",
    "search": "indexing",
    "secrets": "secrets",
    "serve": "serve",
    "sessions": "commands",
    "show": "commands",
    "standup": "summarize",
    "status": "live",
    "statusline": "statusline",
    "summarize": "summarize",
    "tail": "live",
    "usage": "usage",
    "watch": "live",
}
"""Every command and the module of :mod:`agentlog.cli` that defines it (each
module registers its commands on :data:`main` when imported).  A command's
module is imported only when that command runs, or when ``--help`` lists them
all: ``agentlog usage`` does not load the viewer, the live board or search
(click's lazy group pattern, click.palletsprojects.com/en/stable/complex/
#lazily-loading-subcommands).  A new command adds its line here."""


class AgentlogGroup(click.Group):
    """A click group that turns every error into a one-line message, and loads
    each command's module when the command is looked up (:data:`COMMANDS`); its
    commands (and subgroups, of this class too) take the global options."""

    group_class = type

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command's name, sorted (none imported)."""
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name``, its module imported first when it is not yet
        (as :mod:`agentlog._console` imports the command line: with the garbage
        collector paused, what it made frozen when the entry point froze its own)."""
        module = COMMANDS.get(cmd_name)
        if module is not None and cmd_name not in self.commands:
            with gc_paused():
                importlib.import_module(f"agentlog.cli.{module}")
                if gc.get_freeze_count():  # the agentlog process, not a program that called main()
                    gc.freeze()
        return super().get_command(ctx, cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """The command named by ``args``, taking the global options too."""
        name, command, rest = super().resolve_command(ctx, args)
        return name, (attach(command) if command is not None else None), rest

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; an unexpected error is first explained by the index
        (damaged, read-only, full: :func:`agentlog.index.db.explain`)."""
        try:
            return super().invoke(ctx)
        except (AgentlogError, click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as exc:  # a damaged index can raise anything: diagnosed before it is called a bug
            problem = explain(exc, ctx.obj.index_path) if isinstance(ctx.obj, App) else None
            if problem is None:
                raise
            raise problem from exc

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        debug = "--debug" in sys.argv
        try:
            return super().main(args, prog_name, complete_var, False, **extra)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.UsageError as exc:  # one line, as every other error (click's own shows four)
            names: list[str] = []
            ctx = exc.ctx
            while ctx is not None and ctx.parent is not None:  # the root is `agentlog`, however started
                names.insert(0, ctx.info_name or "")
                ctx = ctx.parent
            command = " ".join(["agentlog", *names])
            message = clean(exc.format_message(), markup=False)
            click.echo(f"{command}: {message} (see `{command} --help`)", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            click.echo("aborted", err=True)
            sys.exit(130)
        except AgentlogError as exc:
            click.echo(f"agentlog: {clean(str(exc), markup=False)}", err=True)
            sys.exit(exc.exit_code)
        except BrokenPipeError:
            sys.stderr.close()
            sys.exit(0)
        except Exception as exc:
            if debug:
                raise
            message = clean(f"{type(exc).__name__}: {exc}", markup=False)
            click.echo(f"agentlog: internal error: {message} (run with --debug)", err=True)
            sys.exit(70)


@click.group(
    cls=AgentlogGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    params=global_options(),
)
@click.version_option(__version__, prog_name="agentlog")
@click.pass_context
def main(ctx: click.Context) -> None:
    """Every coding agent's session logs, in one place.

    With no command: find every agent's logs and print an overview.  The
    options below go before the command or after it.
    """
    ctx.obj = make_app(said(ctx))
    tz = ctx.obj.env.get("TZ")
    if tz:
        from agentlog.usage.report import unknown_tz

        if unknown_tz(tz):
            ctx.obj.err.print(
                f"agentlog: TZ={clean(tz, one_line=True)} is not a time zone; local times are UTC"
            )
    if ctx.invoked_subcommand is None:
        from agentlog.cli.commands import overview

        ctx.invoke(overview)


__all__ = ["COMMANDS", "App", "main"]
