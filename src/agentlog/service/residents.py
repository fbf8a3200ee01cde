"""This user's resident agentlog processes (:mod:`agentlog.resident`): list them, stop them.

Every socket in the user's resident folder (:func:`agentlog.resident.paths.folder`)
is asked over the socket itself (the resident checks the asker's user), so a
resident of another virtual environment or checkout is listed and stopped too.
"""

from __future__ import annotations

import contextlib
import fcntl
import marshal
import os
import socket
import time
from pathlib import Path
from typing import Any

from agentlog.resident import paths


def residents(env: dict[str, str]) -> list[dict[str, Any]]:
    """Each live resident's state: ``pid``, ``executable``, ``version``,
    ``started`` (Unix seconds), ``served`` (commands), ``running`` (commands now),
    ``socket``, ``idle_seconds``, ``stopping``, ``cpu`` (its own CPU seconds),
    ``children_cpu`` (CPU seconds of the commands it served and reaped); by
    socket name."""
    return [found for sock in _sockets(env) if (found := _ask(sock, "status")) is not None]


def stop(env: dict[str, str], wait: float = 10.0) -> list[dict[str, Any]]:
    """Ask every resident to stop (each ends once the commands it is running end),
    and wait up to ``wait`` seconds for them to be gone; those asked (their
    state as :func:`residents` gives it)."""
    stopped = [found for sock in _sockets(env) if (found := _ask(sock, "stop")) is not None]
    deadline = time.monotonic() + wait
    for found in stopped:
        lock = paths.lock_path(str(found["socket"]))
        while _held(lock) and time.monotonic() < deadline:
            time.sleep(0.02)
    return stopped


def _sockets(env: dict[str, str]) -> list[str]:
    base = paths.folder(env)
    if not paths.safe_folder(base):
        return []
    return sorted(str(p) for p in Path(base).glob("r-*.sock"))


def _ask(sock_path: str, op: str) -> dict[str, Any] | None:
    """The resident's answer to ``op`` on ``sock_path`` (``None``: nobody answers)."""
    data = marshal.dumps({"op": op})
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        try:
            sock.connect(sock_path)
            sock.sendall(len(data).to_bytes(4, "little") + data)
            answer = b""
            while chunk := sock.recv(1 << 16):
                answer += chunk
        except OSError:
            return None
    with contextlib.suppress(ValueError, EOFError, TypeError):
        found = marshal.loads(answer)
        if isinstance(found, dict):
            return found
    return None


def _held(lock: str) -> bool:
    """Whether a resident still holds the lock file ``lock``."""
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False
