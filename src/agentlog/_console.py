"""The ``agentlog`` command's entry point (``python -m agentlog`` too).

Importing the CLI, its libraries and the adapters creates ~150,000 objects
that live until the process ends; Python's cyclic garbage collector, run again
and again while they are made, costs ~15 ms of a ~90 ms warm report.  They are
loaded with the collector paused, then frozen (never scanned again), and the
collector resumes for the command's own work.
"""

from __future__ import annotations

import gc

from agentlog.collector import gc_paused


def main() -> None:
    """Run the ``agentlog`` command line (``agentlog statusline`` on its fast path)."""
    import sys

    if sys.argv[1:2] == ["statusline"]:
        from agentlog.statusline import fast_main

        if fast_main(sys.argv):
            return
    with gc_paused():
        from agentlog.adapters import all_adapters
        from agentlog.cli import main as cli

        all_adapters()  # the commands that read logs all need them: loaded the same way
        gc.freeze()
    cli()
