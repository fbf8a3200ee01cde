"""The stdout console of the CLI (rich; imported only when something is drawn)."""

from __future__ import annotations

import os
import sys
from typing import Any

from rich.console import Console


class PipeConsole(Console):
    """A console that ends quietly and successfully when its reader goes away
    (``agentlog show X | head``), like ``sessions`` and ``--json`` do.  Rich's
    automatic highlighting is off: what it prints is mostly log text, and its
    highlighter's patterns take quadratic time on one long token (a 50,000
    character base64 line took 25 s to show)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**{"highlight": False, **options})

    def on_broken_pipe(self) -> None:
        self.quiet = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(0)
