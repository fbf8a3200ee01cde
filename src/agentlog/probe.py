"""Looking at paths during discovery without the file system ever raising.

Discovery stats files an agent may or may not have written and lists folders
the user may not be allowed to enter: agent folders, sidecars, the project
folders other agents' sessions recorded as ``cwd``.  Every such look goes
through this module, with one rule:

* a path that is not there (``ENOENT``, or ``ENOTDIR``: a file where a folder
  was expected) is simply absent;
* any other ``OSError`` — ``EACCES`` (a folder the user cannot enter),
  ``ENAMETOOLONG`` (a recorded ``cwd`` longer than ``NAME_MAX``/``PATH_MAX``),
  ``ELOOP`` (a symbolic-link loop), ``EIO`` … — and any ``ValueError`` (a
  recorded ``cwd`` holding a NUL or a lone surrogate) makes the path absent too,
  and is recorded as a :class:`PathProblem` of that path;
* a FIFO, socket or device where a file is expected is no file: absent, and
  recorded (opening a FIFO would block until a writer comes, forever).

Problems go to the list given to :func:`collecting` for the current thread or
task (a :class:`contextvars.ContextVar`, so adapters' ``discover`` methods
need no extra argument); outside of it they are dropped, and the probes still
never raise.  Only ``stat`` and ``scandir`` calls are made here: nothing is
opened (that is :mod:`agentlog.readers`).
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import msgspec

ABSENT = (errno.ENOENT, errno.ENOTDIR)
"""``errno`` values that only mean "not there"."""


class PathProblem(msgspec.Struct, frozen=True, kw_only=True):
    """A path discovery could not look at, or that is not what it must be.

    ``agent`` is the adapter slug whose discovery met it (``None`` under a
    user-given ``--root``, which every adapter searches); ``path`` the path as
    probed (a root, a folder inside one, a log, a sidecar, ``<cwd>/<project
    file>``); ``error`` one line as :func:`describe_error` gives it, e.g.
    ``PermissionError: Permission denied``, ``OSError: File name too long``,
    ``OSError: not a regular file (FIFO)``.

    What lies at or below ``path`` (:meth:`covers`) may still exist: a sync must
    not take the sources it held before as deleted.
    """

    agent: str | None
    path: str
    error: str

    def covers(self, path: str) -> bool:
        """Whether ``path`` is this problem's path or lies below it (plain string
        comparison of absolute paths, no file-system access)."""
        base = self.path.rstrip("/")
        return path == self.path or path.startswith(base + "/")


def describe_error(exc: BaseException) -> str:
    """One line saying why a path could not be read: ``PermissionError: Permission
    denied`` (an OS error's own message, without the path), else ``Type: message``."""
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
    return f"{type(exc).__name__}: {reason}"


_KINDS = {
    stat.S_IFIFO: "FIFO",
    stat.S_IFSOCK: "socket",
    stat.S_IFCHR: "character device",
    stat.S_IFBLK: "block device",
    stat.S_IFDIR: "folder",
    stat.S_IFLNK: "symbolic link",
}


def not_regular(path: str | os.PathLike[str], mode: int) -> OSError:
    """The error for a path whose ``st_mode`` is not a regular file's, naming
    what it is: ``OSError: not a regular file (FIFO)``."""
    kind = _KINDS.get(stat.S_IFMT(mode), "special file")
    return OSError(errno.EINVAL, f"not a regular file ({kind})", os.fspath(path))


def root_problem(mode: int) -> str | None:
    """Why a search root whose ``st_mode`` is ``mode`` cannot be searched, or
    ``None`` for a folder or a regular file (a single log): ``not a folder
    (FIFO)`` for a FIFO, socket or device, which is never opened."""
    if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
        return None
    return f"not a folder ({_KINDS.get(stat.S_IFMT(mode), 'special file')})"


def is_root(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a root to search: a folder or a regular file (or a
    link to one).  A FIFO, socket or device is recorded as a problem
    (:func:`root_problem`); a ``stat`` that fails, too (see :func:`stat_of`)."""
    st = stat_of(path)
    reason = root_problem(st.st_mode) if st is not None else None
    if reason is not None:
        problem(path, OSError(errno.EINVAL, reason, os.fspath(path)))
    return st is not None and reason is None


class Problems(list[PathProblem]):
    """A list of :class:`PathProblem`, once per path: :meth:`add` leaves out a
    problem of a path at or below one the same agent already has, and one of a
    folder replaces those below it (``~/.codex/sessions: Permission denied``
    says all of ``~/.codex/sessions/...``).  Each add costs one set look-up per
    component of the path, not a pass over the list."""

    def __init__(self, problems: Iterable[PathProblem] = ()) -> None:
        super().__init__()
        self._paths: set[tuple[str | None, str]] = set()
        self._above: set[tuple[str | None, str]] = set()  # every folder holding a recorded path
        for found in problems:
            self.add(found)

    def add(self, found: PathProblem) -> None:
        """Record ``found`` unless it is said already (see the class)."""
        agent, path = found.agent, found.path.rstrip("/") or "/"
        folders = _folders_of(path)
        if (agent, path) in self._paths or any((agent, f) in self._paths for f in folders):
            return
        if (agent, path) in self._above:  # this folder's problem says those below it
            self[:] = [p for p in self if p.agent != agent or not found.covers(p.path)]
            self._paths = {(p.agent, p.path.rstrip("/") or "/") for p in self}
            self._above = {(p.agent, f) for p in self for f in _folders_of(p.path.rstrip("/") or "/")}
        self.append(found)
        self._paths.add((agent, path))
        self._above.update((agent, f) for f in folders)


def _folders_of(path: str) -> list[str]:
    """The folders above ``path`` as text: ``/a/b/c`` → ``/a/b``, ``/a``, ``/``."""
    out = []
    while (cut := path.rfind("/")) > 0:
        path = path[:cut]
        out.append(path)
    return [*out, "/"] if path.startswith("/") else out


class _Collector(msgspec.Struct):
    agent: str | None
    into: Problems


_current: ContextVar[_Collector | None] = ContextVar("agentlog_probe_collector", default=None)


@contextmanager
def collecting(agent: str | None, into: Problems) -> Iterator[Problems]:
    """Record the problems met by every probe made inside the ``with`` block (in
    this thread or task) in ``into`` (:meth:`Problems.add`), as ``agent``'s.
    Nested blocks: the innermost one collects."""
    token = _current.set(_Collector(agent, into))
    try:
        yield into
    finally:
        _current.reset(token)


def problem(path: str | os.PathLike[str], error: BaseException | str) -> None:
    """Record that ``path`` could not be looked at (see :func:`collecting`)."""
    collector = _current.get()
    if collector is None:
        return
    text = error if isinstance(error, str) else describe_error(error)
    collector.into.add(PathProblem(agent=collector.agent, path=shown_path(path), error=text))


def is_within(real: str, folder: str) -> bool:
    """Whether the real path ``real`` is the real path ``folder`` or inside it (by
    name: ``/a/bc`` is not inside ``/a/b``)."""
    return real == folder or real.startswith(folder.rstrip(os.sep) + os.sep)


def shown_path(path: str | os.PathLike[str]) -> str:
    """``path`` as text that can be printed and stored: a name that is not UTF-8
    keeps its bytes as ``\\xNN`` escapes."""
    return os.fspath(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def stat_of(
    path: str | os.PathLike[str], blame: str | os.PathLike[str] | None = None, look: bool = True
) -> os.stat_result | None:
    """``os.stat(path)`` (symbolic links followed), or ``None`` when it is not
    there or cannot be looked at — then recorded as a problem of ``blame``
    (default: ``path``; e.g. the folder that could not be looked in).  Inside
    :func:`recording` (unless not ``look``: a source, whose ``stat`` the sync
    compares with its row), the result is recorded as a look."""
    looks = _looks.get()
    try:
        st = os.stat(path)
    except OSError as exc:
        if looks is not None and look:
            looks.append((os.fspath(path), [-(exc.errno or 1)]))
        if exc.errno not in ABSENT:
            problem(path if blame is None else blame, exc)
    except ValueError as exc:  # a NUL or an unencodable character in the name
        if looks is not None and look:
            looks.append((shown_path(path), [_INVALID]))
        problem(path if blame is None else blame, exc)
    else:
        if looks is not None and look:
            looks.append((os.fspath(path), _fingerprint(st)))
        return st
    return None


Look = tuple[str, list[int]]
"""A path discovery looked at and :func:`fingerprint` of what it found there."""

_looks: ContextVar[list[Look] | None] = ContextVar("agentlog_probe_looks", default=None)
_INVALID = -100_000
"""The fingerprint of a name no ``stat`` can take (a NUL in it)."""


@contextmanager
def recording() -> Iterator[list[Look]]:
    """Record, in the list given, every look the probes inside the ``with`` block
    make (in this thread or task): each ``stat`` and each folder listed (with
    the ``stat`` of the folder, taken before the listing, and of every symbolic
    link in it) — what :mod:`agentlog.index.memo` checks again to know that a
    discovery would find what it found."""
    looks: list[Look] = []
    token = _looks.set(looks)
    try:
        yield looks
    finally:
        _looks.reset(token)


def _fingerprint(st: os.stat_result) -> list[int]:
    return [st.st_mode, st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def fingerprint(path: str) -> list[int]:
    """What a ``stat`` of ``path`` finds: ``[mode, inode, device, size, mtime_ns,
    ctime_ns]``, or ``[-errno]`` when it fails (``[-ENOENT]``: not there)."""
    try:
        return _fingerprint(os.stat(path))
    except OSError as exc:
        return [-(exc.errno or 1)]
    except ValueError:
        return [_INVALID]


def exists(path: str | os.PathLike[str]) -> bool:
    """Whether anything is at ``path`` (see :func:`stat_of`)."""
    return stat_of(path) is not None


def is_dir(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a folder (or a link to one)."""
    st = stat_of(path)
    return st is not None and stat.S_ISDIR(st.st_mode)


def regular_stat(
    path: str | os.PathLike[str], blame: str | os.PathLike[str] | None = None
) -> os.stat_result | None:
    """``os.stat(path)`` if it is a regular file (or a link to one), else ``None``.
    A FIFO, socket or device there is recorded as a problem (a folder is not:
    layouts are told apart by probing); a ``stat`` that fails, as one of
    ``blame`` (see :func:`stat_of`)."""
    st = stat_of(path, blame)
    if st is None or stat.S_ISREG(st.st_mode):
        return st
    if not stat.S_ISDIR(st.st_mode):
        problem(path, not_regular(path, st.st_mode))
    return None


def is_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a regular file (see :func:`regular_stat`)."""
    return regular_stat(path) is not None


def identity(path: str | os.PathLike[str], st: os.stat_result) -> tuple[int, int] | str:
    """What tells the file or folder at ``path`` (whose ``os.stat`` is ``st``)
    from others: ``(st_dev, st_ino)``, the same for every path to it (an
    overlapping root, a symbolic link, a hard link) — one ``stat`` where
    resolving the path takes one ``lstat`` per component.  On a file system that
    numbers no inodes (``st_ino`` 0), its resolved path."""
    return (st.st_dev, st.st_ino) if st.st_ino else os.path.realpath(path)


def regular_files(paths: Iterable[str | os.PathLike[str]]) -> tuple[str, ...]:
    """Those of ``paths`` that are regular files (:func:`is_file`), as strings, in
    order: the sidecars of a source."""
    return tuple(os.fspath(p) for p in paths if is_file(p))


def _scan(folder: str | os.PathLike[str]) -> list[os.DirEntry[str]]:
    """The entries of ``folder``, sorted by name; ``[]`` when it is not there or
    cannot be listed (then recorded)."""
    looks = _looks.get()
    try:
        if looks is not None:
            looks.append((os.fspath(folder), fingerprint(os.fspath(folder))))
        with os.scandir(folder) as it:
            found = sorted(it, key=lambda e: e.name)
        if looks is not None:  # a link's target may change with the folder as it is
            looks.extend((e.path, fingerprint(e.path)) for e in found if e.is_symlink())
        return found
    except OSError as exc:
        if exc.errno not in ABSENT:
            problem(folder, exc)
    except ValueError as exc:  # a NUL or an unencodable character in the name
        problem(folder, exc)
    return []


def entries(folder: str | os.PathLike[str]) -> list[Path]:
    """The paths in ``folder``, sorted by name; ``[]`` when it is not there or
    cannot be listed (then recorded)."""
    return [Path(folder, entry.name) for entry in _scan(folder)]


def subfolders(folder: str | os.PathLike[str]) -> list[Path]:
    """The folders (or links to folders) in ``folder``, sorted by name; an entry
    that cannot be looked at (a link that loops) is recorded and left out."""
    found = []
    for entry in _scan(folder):
        try:
            if entry.is_dir():
                found.append(Path(folder, entry.name))
        except OSError as exc:
            if exc.errno not in ABSENT:
                problem(entry.path, exc)
    return found


def glob(folder: str | os.PathLike[str], pattern: str) -> list[Path]:
    """The regular files in ``folder`` (not below) whose name matches the
    :mod:`fnmatch` ``pattern``, sorted by name."""
    return [p for p in entries(folder) if fnmatch.fnmatchcase(p.name, pattern) and is_file(p)]


def walk_files(root: Path, suffix: str) -> Iterator[Path]:
    """Regular files under ``root`` whose name ends with ``suffix``, sorted per
    folder, following folder symlinks once (a folder seen twice, by
    :func:`identity`, is not walked again, so a link to a parent folder ends there).

    A folder that cannot be listed, an entry that cannot be looked at (a link
    that loops) and a FIFO, socket or device whose name ends with ``suffix`` are
    recorded as problems and skipped; a link to nothing is skipped silently."""
    for path in walk_paths(root, suffix):
        yield Path(path)


def walk_paths(root: str | os.PathLike[str], suffix: str) -> Iterator[str]:
    """:func:`walk_files` as strings: the walk of a discovery that meets thousands
    of files, each a ``Path`` it would make only to take its name and text again
    (~15 µs each, a tenth of a no-change sync)."""
    seen: set[tuple[int, int] | str] = set()
    stack = [os.fspath(root)]
    while stack:
        folder = stack.pop()
        st = stat_of(folder)
        if st is None or (key := identity(folder, st)) in seen:
            continue
        seen.add(key)
        found = _scan(folder)
        subdirs = []
        for entry in found:
            try:
                if entry.is_dir():
                    subdirs.append(entry.path)
                    continue
                if not entry.name.endswith(suffix):
                    continue
                mode = None if entry.is_file() else entry.stat().st_mode
            except OSError as exc:
                if exc.errno not in ABSENT:
                    problem(entry.path, exc)
                continue
            if mode is None:
                yield entry.path
            else:
                problem(entry.path, not_regular(entry.path, mode))
        stack.extend(reversed(subdirs))
