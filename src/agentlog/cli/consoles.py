"""The stdout console of the CLI (rich; imported only when something is drawn)."""

from __future__ import annotations

import os
import sys

from rich.console import Console


class PipeConsole(Console):
    """A console that ends quietly and successfully when its reader goes away
    (``agentlog show X | head``), like ``sessions`` and ``--json`` do."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(0)
