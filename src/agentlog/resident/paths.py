"""Where a resident listens, and which processes it may serve (builtin modules only:
the thin client imports this before anything else).

A resident serves a client only when both would run the same code the same way:
the same Python executable, ``sys.path``, agentlog version, interpreter flags and
the environment variables Python reads at start-up (``PYTHON*``, the locale's)
— :func:`identity`.  Its socket is named after a checksum of that identity, so
two virtual environments, or two checkouts, each get their own resident; the
resident still compares the whole identity on every request.

The socket lives in a folder only its user can enter (mode 0700, owned by the
user, not a symbolic link): ``$XDG_RUNTIME_DIR/agentlog`` (the per-user runtime
folder of the XDG base directory specification), else ``/tmp/agentlog-<uid>``.
"""

from __future__ import annotations

import os
import stat
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

IDLE_SECONDS = 600
"""A resident exits after 10 minutes without a command: long enough to cover a
working session's bursts of commands, short enough not to keep ~60 MB of memory
for the rest of the day.  Idle, it is blocked in ``epoll_wait``: no CPU."""

IDLE_ENV = "AGENTLOG_DAEMON_IDLE"
"""Seconds a resident waits for a command before it exits (default :data:`IDLE_SECONDS`)."""


def idle_seconds(env: Mapping[str, str]) -> float:
    """How long a resident started with ``env`` waits idle (:data:`IDLE_ENV`)."""
    try:
        return max(0.0, float(env.get(IDLE_ENV, "") or IDLE_SECONDS))
    except ValueError:
        return IDLE_SECONDS


OFF_ENV = "AGENTLOG_NO_DAEMON"
"""``1``: never use nor start a resident (every command runs in-process)."""
START_ENV = "AGENTLOG_DAEMON"
"""``1``: start a resident at exit even when no standard stream is a terminal
(scripts, status-line hooks, benchmarks); by default only a command run at a
terminal starts one, so a CI job or a test suite never leaves one behind."""

_STARTUP_ENV = ("LANG", "LC_ALL", "LC_CTYPE")


def identity() -> tuple[object, ...]:
    """What a resident and its client must share: executable, ``sys.path``,
    agentlog's version, interpreter flags and start-up environment (a tuple of
    strings and tuples, comparable and ``marshal``-able)."""
    from agentlog._version import __version__

    env = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("PYTHON") or k in _STARTUP_ENV))
    return (sys.executable, tuple(sys.path), __version__, repr(sys.flags), env)


def folder(env: Mapping[str, str] = os.environ) -> str:
    """The folder of this user's resident sockets (not created: :func:`safe_folder`)."""
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime):
        return os.path.join(runtime, "agentlog")
    return f"/tmp/agentlog-{os.getuid()}"


def safe_folder(path: str, create: bool = False) -> bool:
    """Whether ``path`` is a folder only this user can use (a real folder, not a
    link, owned by the user, no access for group or others); with ``create``,
    made so first when absent (``mkdir`` with mode 0700)."""
    if create:
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError:
            return False
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def socket_path(ident: tuple[object, ...], base: str) -> str:
    """The socket of the resident for ``ident`` in the folder ``base``."""
    import zlib

    # repr, not marshal: marshal's bytes vary with how the objects are shared
    checksum = zlib.crc32(repr(ident).encode("utf-8", "backslashreplace"))
    return os.path.join(base, f"r-{checksum:08x}.sock")


def lock_path(sock: str) -> str:
    """The lock file a resident holds while it lives (its process id inside)."""
    return sock[: -len(".sock")] + ".lock"
