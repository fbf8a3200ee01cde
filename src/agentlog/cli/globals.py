"""The global options (``--demo``, ``--root``, ``--index``, ``--no-sync``,
``--debug``): each defined once, taken before the command or after it
(``agentlog --no-sync usage daily`` = ``agentlog usage daily --no-sync``).

The main group carries them as its own parameters (its ``--help`` documents
them); :func:`attach` adds the same definitions, hidden, to every command the
group resolves, so a command's ``--help`` does not repeat them.  Each value
said is kept in :class:`Said` on the root context; the :class:`~agentlog.cli.App`
is built from it by the group and updated in place when a command's own
arguments say more (a flag once set stays set; ``--root`` adds folders; a later
``--index`` wins).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import msgspec

from agentlog.index.db import default_path
from agentlog.service.home import Home

if TYPE_CHECKING:
    from agentlog.cli import App

_KEY = "agentlog.global_options"


class Said(msgspec.Struct, frozen=True):
    """What the global options said, wherever they were written."""

    demo: bool = False
    roots: tuple[Path, ...] = ()
    index: Path | None = None
    debug: bool = False
    no_sync: bool = False


def said(ctx: click.Context) -> Said:
    """The global options given so far (to the root context of ``ctx``)."""
    value = ctx.find_root().meta.get(_KEY)
    return value if isinstance(value, Said) else Said()


def _record(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    if not value:  # a default: says nothing (an earlier --index or flag stands)
        return
    now = said(ctx)
    name = param.name or ""
    if name == "roots":
        _warn_special(value)
    update = {name: now.roots + tuple(value)} if name == "roots" else {name: value}
    now = msgspec.structs.replace(now, **update)
    ctx.find_root().meta[_KEY] = now
    from agentlog.cli import App

    app = ctx.find_object(App)
    if app is not None:  # given after the command: the app is already made
        rebuilt = make_app(now)
        for f in msgspec.structs.fields(App):
            setattr(app, f.name, getattr(rebuilt, f.name))


def _warn_special(roots: tuple[Path, ...]) -> None:
    """One line on stderr for each root that is a FIFO, socket or device (kept:
    discovery records it for ``agentlog doctor``, and never opens it)."""
    from agentlog.present import clean
    from agentlog.probe import root_problem

    for root in roots:
        try:
            reason = root_problem(os.stat(root).st_mode)
        except (OSError, ValueError):  # gone since click looked: discovery says why
            continue
        if reason is not None:
            shown = clean(os.fspath(root), one_line=True, markup=False)
            click.echo(f"agentlog: --root {shown}: {reason}: nothing read from it (see `agentlog doctor`)", err=True)


def make_app(given: Said) -> App:
    """The app the global options describe (``--demo`` keeps its own index)."""
    from agentlog.cli import App

    where = Home.of(os.environ, given.roots, given.demo)
    index_path = given.index if given.index and not given.demo else default_path(where.env, demo=given.demo)
    if given.index and not given.demo:
        where.check_index(given.index)
    return App(
        env=where.env,
        home=where.home,
        index_path=index_path,
        roots=where.roots,
        debug=given.debug,
        demo=given.demo,
        no_sync=given.no_sync,
    )


def options(on_command: bool = False) -> list[click.Parameter]:
    """The global options as parameters: of the main group (``on_command``
    false: shown in its help; ``--index`` also read from ``AGENTLOG_INDEX``) or
    of a command (hidden; only what its command line says)."""
    common: dict[str, Any] = {"expose_value": False, "callback": _record, "hidden": on_command}
    return [
        click.Option(["--demo"], is_flag=True, help="Use the bundled sample home instead of yours.", **common),
        click.Option(
            ["--root", "roots"],
            multiple=True,
            type=click.Path(path_type=Path, exists=True, file_okay=False),
            help="Extra folder to search for logs (repeatable).",
            **common,
        ),
        click.Option(
            ["--index"],
            type=click.Path(path_type=Path, dir_okay=False),
            envvar=None if on_command else "AGENTLOG_INDEX",
            help="Index file (default: in your cache folder; env AGENTLOG_INDEX).",
            **common,
        ),
        click.Option(
            ["--no-sync"], is_flag=True, help="Read the index as it is; do not look for new logs.", **common
        ),
        click.Option(["--debug"], is_flag=True, help="Show tracebacks.", **common),
    ]


def attach(command: click.Command) -> click.Command:
    """``command`` taking the global options too (once: marked when done)."""
    if not getattr(command, "_agentlog_global_options", False):
        command.params.extend(options(on_command=True))
        command._agentlog_global_options = True  # type: ignore[attr-defined]
    return command
