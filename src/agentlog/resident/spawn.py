"""Starting a resident when a command that found none exits.

It is started after the command's output is complete (``atexit``, as
:func:`agentlog.service.first_run.start_build_at_exit` starts its build), in a
session of its own (``setsid``: no terminal, not reached by the terminal's
Ctrl-C), its standard streams on ``/dev/null`` and none of the caller's other
descriptors — it never holds the caller's pipes, so a caller waiting for a pipe's end (a CI job, ``$(agentlog …)``) does
not wait for it — and with the caller's ``sys.path`` and environment, so it
computes the caller's :func:`agentlog.resident.paths.identity`.  Only a command
run at a terminal starts one, or any with ``AGENTLOG_DAEMON=1``.
"""

from __future__ import annotations

import os
import sys

from agentlog.resident import paths

BOOT = "import sys\nsys.path[:] = sys.argv[1:]\nfrom agentlog.resident.server import main\nmain()\n"
"""The resident's program: the caller's ``sys.path`` (its arguments), then serve."""


def wanted() -> bool:
    """Whether this command starts a resident at exit (see the module)."""
    if os.environ.get(paths.START_ENV, "") not in ("", "0"):
        return True
    return any(_isatty(fd) for fd in (0, 1, 2))


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _inherited() -> list[int]:
    """The descriptors above 2 an ``exec`` would pass on (this process's own are
    close-on-exec, as Python opens them; these came from its caller: a pipe a
    CI runner or ``make`` waits on must not be held by the resident)."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if fd > 2 and os.get_inheritable(fd):
                found.append(fd)
        except OSError:  # the listing's own descriptor, closed by now
            continue
    return found


def start_at_exit() -> None:
    """Start a resident when this process exits (see the module)."""
    import atexit

    atexit.register(start)


def flush_output() -> None:
    """This process's stdout and stderr flushed, before a process is started in
    the background (a resident, the first index's build), so the caller's output
    is whole first; a closed or broken stream is not the caller's to report here."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except Exception:
            pass


def start() -> int | None:
    """Start a resident now; its process id, or ``None`` when it cannot be started
    (nothing then changes: commands run in-process)."""
    flush_output()
    null = os.devnull
    actions: list[tuple[int, ...] | tuple[int, int, str, int, int]] = [
        (os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0),
    ]
    actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in _inherited()]
    try:
        return os.posix_spawn(
            sys.executable,
            [sys.executable, "-c", BOOT, *sys.path],
            os.environ,
            file_actions=actions,
            setsid=True,
        )
    except OSError:
        return None
