"""The ``agentlog`` command's entry point (``python -m agentlog`` too).

Importing the CLI, its libraries and the adapters creates ~150,000 objects
that live until the process ends; Python's cyclic garbage collector, run again
and again while they are made, costs ~15 ms of a ~90 ms warm report.  They are
loaded with the collector paused, then frozen (never scanned again), and the
collector resumes for the command's own work.  The module of the command that
runs is imported later, the same way (:meth:`agentlog.cli.AgentlogGroup.get_command`).
"""

from __future__ import annotations

import gc
import sys

from agentlog.collector import gc_paused


def main() -> None:
    """Run the ``agentlog`` command line (``agentlog --version`` alone answers
    before the command line and its libraries are imported, as click would;
    ``agentlog statusline`` takes its fast path)."""
    if sys.argv[1:] == ["--version"]:
        from agentlog._version import __version__

        print(f"agentlog, version {__version__}")
        return
    if sys.argv[1:2] == ["statusline"]:
        from agentlog.statusline import fast_main

        if fast_main(sys.argv):
            return
    with gc_paused():
        from agentlog.adapters import registered
        from agentlog.cli import main as cli

        registered()  # those a command reads: imported when their logs are found
        gc.freeze()
    cli()
