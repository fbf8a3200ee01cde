"""Where an export writes: every file checked by the read-only rule, then written
whole to a temporary file in its folder and renamed into place.

The rename (``os.replace``, atomic on one file system) puts a new inode at the
name, so a target that is a hardlink to an agent's transcript never truncates
it: the transcript keeps its bytes under its own name.  A target that is a
symlink is resolved first and the file it names is checked and replaced (the
link stays).  A target that exists and is not a regular file (``/dev/null``,
a FIFO, a terminal) is written in place: it holds no one's bytes to lose.
A file replaced keeps its permission bits.
"""

from __future__ import annotations

import errno
import io
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, TextIO

from agentlog.errors import UsageError

Refuse = Callable[[str | Path], str | None]
"""Why a path must not be written, or ``None`` (:meth:`agentlog.service.home.Home.guard`)."""


class Target:
    """The files one export writes, each through :meth:`check`.  ``refuse`` is
    the read-only rule; without one, nothing is refused (a test's own folder)."""

    def __init__(self, refuse: Refuse | None = None) -> None:
        self._refuse: Refuse = refuse or (lambda _: None)

    def check(self, path: Path) -> Path:
        """``path`` resolved (symlinks and ``..``); raises
        :class:`~agentlog.errors.UsageError` when it must not be written."""
        refused = self._refuse(path)
        if refused:
            raise UsageError(f"{refused}: agentlog never writes there; give another -o")
        return Path(os.path.realpath(path))

    def folder(self, path: Path) -> Path:
        """The folder ``path`` (checked, resolved), made with its parents if missing."""
        real = self.check(path)
        if real.exists() and not real.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), os.fspath(path))
        real.mkdir(parents=True, exist_ok=True)
        return real

    def write_bytes(self, path: Path, write: Callable[[BinaryIO], object]) -> None:
        """``path`` (checked) holding what ``write`` writes, replaced at once when
        ``write`` returns (never half a file; on an error the old file stays).
        An ``OSError`` names the file (resolved) or the folder that failed."""
        with self._replacing(path, self.check(path)) as out:
            write(out)

    def write_text(self, path: Path, write: Callable[[TextIO], object]) -> None:
        """:meth:`write_bytes` for text (UTF-8, ``\\n`` line ends)."""

        def text(out: BinaryIO) -> None:
            wrapper = io.TextIOWrapper(out, encoding="utf-8", newline="\n")
            try:
                write(wrapper)
                wrapper.flush()
            finally:
                wrapper.detach()

        self.write_bytes(path, text)

    def replace_folder(self, built: Path, path: Path) -> None:
        """The folder ``built`` (made by this export on ``path``'s file system)
        moved to ``path`` (checked; what was there removed first — a symlink
        itself, not what it names); only the removal when ``built`` is missing."""
        self.check(path)
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.exists():
            shutil.rmtree(path)
        if built.exists():
            os.replace(built, path)

    @contextmanager
    def _replacing(self, path: Path, real: Path) -> Iterator[BinaryIO]:
        try:
            mode = os.stat(path).st_mode  # as named: /dev/stdout is a pipe, its real path no file
        except OSError:  # missing (or a file where a folder goes: said when its folder is made)
            mode = None
        if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            with path.open("wb") as out:  # a device, FIFO or pipe: no bytes of anyone's to keep
                yield out
            return
        real.parent.mkdir(parents=True, exist_ok=True)
        temp = real.with_name(f".{real.name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # a new inode, never a link's
            if mode is not None and stat.S_ISREG(mode):
                os.fchmod(fd, stat.S_IMODE(mode))  # a file kept private (0600) stays so
        except OSError as exc:
            raise _naming(exc, temp, real) from None
        try:
            with os.fdopen(fd, "wb") as out:
                yield out
            os.replace(temp, real)
        except BaseException as exc:
            temp.unlink(missing_ok=True)
            if isinstance(exc, OSError):
                raise _naming(exc, temp, real) from None
            raise


def _naming(exc: OSError, temp: Path, real: Path) -> OSError:
    """``exc`` naming ``real`` where it named the temporary file ``temp``."""
    if exc.filename == os.fspath(temp):
        exc.filename, exc.filename2 = os.fspath(real), None
    return exc


def scratch_folder(parent: Path) -> Path:
    """A new empty folder in ``parent`` (made by this process: nothing in it is
    a link), for a tree built whole and then moved into place."""
    return Path(tempfile.mkdtemp(prefix=".agentlog-", dir=parent))
