"""The ``agentlog`` command's entry point (``python -m agentlog`` too).

Importing the CLI, its libraries and the adapters creates ~150,000 objects
that live until the process ends; Python's cyclic garbage collector, run again
and again while they are made, costs ~15 ms of a ~90 ms warm report.  They are
loaded with the collector paused, then frozen (never scanned again), and the
collector resumes for the command's own work.  The module of the command that
runs is imported later, the same way (:meth:`agentlog.cli.AgentlogGroup.get_command`).

Before any of that, the command is offered to a resident agentlog
(:mod:`agentlog.resident`), which has all of it imported already; when none can
serve it, it runs here, and a command that found no resident starts one as it
exits.  A resident's child runs this same entry point, :data:`OFFER` cleared.
"""

from __future__ import annotations

import gc
import sys


def main() -> None:
    """Run the ``agentlog`` command line (``agentlog --version`` alone answers
    before the command line and its libraries are imported, as click would;
    ``agentlog statusline`` takes its fast path)."""
    if OFFER and sys.argv[1:] != ["--version"]:  # --version: answered sooner than a resident could
        _offer()
    run()


OFFER = True
"""Whether :func:`main` offers the command to a resident (``False`` in a
resident's child, which runs the entry point again to have its frames)."""


def run() -> None:
    """The command line in this process (what a resident's child runs too)."""
    if sys.argv[1:] == ["--version"]:
        from agentlog._version import __version__

        print(f"agentlog, version {__version__}")
        return
    if sys.argv[1:2] == ["statusline"]:
        from agentlog.statusline import fast_main

        if fast_main(sys.argv):
            return
    from agentlog.collector import gc_paused

    with gc_paused():
        from agentlog.adapters import registered
        from agentlog.cli import main as cli

        registered()  # those a command reads: imported when their logs are found
        gc.freeze()
    cli()


def _offer() -> None:
    """Run the command in a resident (this process then exits as it did), or
    return to run it here; start a resident at exit when none was found."""
    from agentlog.resident.client import try_resident

    if try_resident() == "absent":
        from agentlog.resident import spawn

        if spawn.wanted():
            spawn.start_at_exit()
