"""The stdout console of the CLI (rich; imported only when something is drawn)."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from agentlog.cli.render import closed_pipe


class PipeConsole(Console):
    """A console that ends quietly and successfully when its reader goes away
    (``agentlog show X | head``), like ``sessions`` and ``--json`` do.  Rich's
    automatic highlighting is off: what it prints is mostly log text, and its
    highlighter's patterns take quadratic time on one long token (a 50,000
    character base64 line took 25 s to show).  Off a terminal, whether it is one
    and its size are found once (rich looks them up again for each print: a
    quarter of the time ``show`` of a 10,000-message session took to a file)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**{"highlight": False, **options})
        if not self.is_terminal:  # a pipe or a file: what rich found stays true while it is written
            self._force_terminal = False  # rich asks again (the environment, isatty) at each print
            self.size = self.size  # and the terminal size, three times a print

    def on_broken_pipe(self) -> None:
        self.quiet = True
        closed_pipe()
