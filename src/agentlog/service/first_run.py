"""A first run that answers at once (#17 part 2): the index built in the background.

The first ``agentlog usage`` on a new install would otherwise build the whole
index (every message, part and word of every log) before it prints a number —
16 s for a 300 MB log, 4x ccusage.  Instead, while the index has never been
synced, ``usage`` reads the logs directly (:func:`agentlog.service.usage.log_usage`,
the fast scanner: exact, the same numbers the index gives, proved equal in
``tests/test_equivalence.py``) and :func:`start_build_at_exit` starts ``agentlog
index`` in a process of its own, detached, once the numbers are printed.  Until it is
done (:func:`build_state` ``running``), read commands read what is stored and say that the
index is still being built; ``usage`` keeps reading the logs.

Only on a terminal (a person waiting) unless ``AGENTLOG_BACKGROUND_INDEX`` says
otherwise (``1``: always; ``0``: never): a script that runs ``usage`` and then
``search`` gets a complete index from the first command, as before.

The build is marked by ``<index>.building`` holding its process id; it removes
the file when it has finished.  A file whose process is gone marks a build that
was killed or failed: the index holds part of the logs, which ``--no-sync``
commands say, until the next sync finishes it and removes the file.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sqlite3
import sys
from collections.abc import Mapping
from pathlib import Path

from agentlog.service.home import Home

ENV = "AGENTLOG_BACKGROUND_INDEX"
MARKER_ENV = "AGENTLOG_BUILD_MARKER"
"""Set for the background ``agentlog index``: the marker it removes when it ends."""


def marker(index_path: Path) -> Path:
    """The file that marks a background build of the index at ``index_path``."""
    return index_path.with_name(index_path.name + ".building")


def wanted(env: Mapping[str, str], interactive: bool) -> bool:
    """Whether a first run builds the index in the background (see the module)."""
    setting = env.get(ENV, "")
    return setting == "1" or (interactive and setting != "0")


def never_synced(conn: sqlite3.Connection) -> bool:
    """Whether the index at ``conn`` holds no source yet (a new install)."""
    return bool(conn.execute("SELECT NOT EXISTS (SELECT 1 FROM sources)").fetchone()[0])


def build_state(index_path: Path) -> str | None:
    """The background build of the index at ``index_path``: ``running`` (its
    marker names a process that is alive), ``interrupted`` (a marker is left
    whose process is gone: it was killed or failed, so the index holds only part
    of the logs until a sync finishes it) or ``None`` (no marker)."""
    try:
        pid = int(marker(index_path).read_text().strip() or 0)
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return "interrupted"
    return "running" if pid > 0 and _alive(pid) else "interrupted"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, someone else's: not ours, but a process is there
        return True
    return not _zombie(pid)


def clear_interrupted(index_path: Path) -> None:
    """Remove the marker of an interrupted build (:func:`build_state`) once a sync
    of the index has finished what it left."""
    if build_state(index_path) == "interrupted":
        with contextlib.suppress(OSError):
            marker(index_path).unlink()


def _zombie(pid: int) -> bool:
    """Whether ``pid`` has ended and waits to be reaped (Linux ``/proc``; else no)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


def start_build(index_path: Path, home: Home, demo: bool = False) -> bool:
    """Start ``agentlog index`` for ``home`` in a detached process (its output
    discarded) and mark it; ``False`` when it cannot be started (nothing then
    changes: the next command builds the index itself)."""
    import subprocess  # ~10 ms: only on a first run
    command = [sys.executable, "-m", "agentlog", "--index", str(index_path)]
    command += [arg for root in home.roots for arg in ("--root", str(root))]
    command += ["--demo"] if demo else []
    env = {**home.env, MARKER_ENV: str(marker(index_path)), ENV: "0"}
    try:
        proc = subprocess.Popen(
            [*command, "index"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # not ended by the terminal's Ctrl-C meant for this command
            preexec_fn=_lower_priority,
        )
        marker(index_path).write_text(str(proc.pid))
    except OSError:
        return False
    return True


def start_build_at_exit(index_path: Path, home: Home, demo: bool = False) -> None:
    """:func:`start_build` when this process exits: after the command has printed
    its numbers, so the build never takes a core from them (on 2 cores a build
    beside a first ``usage``, even at :data:`BUILD_NICENESS`, took a tenth of
    each).  If it cannot be started then, the next command builds the index."""
    atexit.register(_start_after_output, index_path, home, demo)


def _start_after_output(index_path: Path, home: Home, demo: bool) -> None:
    from agentlog.resident.spawn import flush_output

    flush_output()
    start_build(index_path, home, demo)


BUILD_NICENESS = 10
"""How much lower the background build runs than the command that started it: the
numbers a person waits for get the cores first (on 2 cores, a build at the same
priority made the first ``usage`` 1.2x slower); the build takes what is left."""


def _lower_priority() -> None:
    """In the background build's process, before it runs: :data:`BUILD_NICENESS`."""
    with contextlib.suppress(OSError):
        os.nice(BUILD_NICENESS)


def build_here(index_path: Path) -> Path | None:
    """Mark a first build of the index at ``index_path`` that this process runs
    itself (``agentlog index``, or any command, on a new index): killed, it leaves
    the marker, so the index is known to be partial, as a background build's is
    (:func:`build_state`); :func:`end_build` removes it once built.  ``None``
    when another build's marker is there or none can be written."""
    path = marker(index_path)
    try:
        with path.open("x") as out:
            out.write(str(os.getpid()))
    except OSError:
        return None
    return path


def build_ended(env: Mapping[str, str]) -> None:
    """Remove the marker of the background build this process is (if it is one),
    once it has finished: a build that failed leaves it, so the index is known to
    be partial (:func:`build_state`)."""
    path = env.get(MARKER_ENV)
    if path:
        end_build(Path(path))


def end_build(path: Path) -> None:
    """Remove the build marker at ``path`` if it names this process (a build it
    ran that has finished: :func:`build_here`, or the background one)."""
    try:
        if path.read_text().strip() == str(os.getpid()):
            path.unlink()
    except OSError:
        pass
