"""Where the logs are: the environment, home folder and extra roots a query reads."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Mapping
from fnmatch import fnmatchcase
from pathlib import Path

import msgspec

from agentlog.probe import is_within

SHARED_FOLDERS = frozenset(
    {".config", ".local", ".cache", ".vscode-server", ".vscode-server-insiders", ".cursor-server"}
)
"""Hidden folders of the home folder that many programs share: an agent's own
folder is the root inside them, not the shared folder."""


class ReadFolders:
    """Folders logs were read from (:meth:`Home._source_folders`): ``by_identity``
    (device and inode: the folder's path), their real paths resolved once, when
    first asked (:meth:`holding`)."""

    __slots__ = ("_real", "by_identity")

    def __init__(self, by_identity: dict[tuple[int, int], str]) -> None:
        self.by_identity = by_identity
        self._real: list[str] | None = None

    def __bool__(self) -> bool:
        return bool(self.by_identity)

    def holding(self, real: str) -> str | None:
        """The first (sorted) real path of these folders that is or holds the real path ``real``."""
        if self._real is None:
            self._real = sorted({os.path.realpath(f) for f in self.by_identity.values()})
        return next((f for f in self._real if is_within(real, f)), None)


class Home(msgspec.Struct, frozen=True):
    """The environment (agents' own variables such as ``CODEX_HOME``), the home
    folder and the extra folders (``--root``) discovery searches."""

    env: dict[str, str]
    home: Path
    roots: list[Path] = msgspec.field(default_factory=list)

    @classmethod
    def of(cls, environ: Mapping[str, str], roots: Iterable[str | Path] = (), demo: bool = False) -> Home:
        """The home ``environ`` names (``HOME``, else the user's), or with ``demo``
        the bundled sample home (:func:`agentlog.demo.demo_env`); ``roots`` made
        absolute here, once (against the working folder now: the index keeps
        the paths of the files it reads, and a relative one would name other
        files, or none, from another folder)."""
        if demo:
            from agentlog.demo import demo_env

            env = demo_env(environ)
        else:
            env = dict(environ)
        return cls(env, Path(env.get("HOME") or Path.home()), [Path(r).absolute() for r in roots])

    def with_roots(self, roots: Iterable[Path]) -> Home:
        """This home with ``roots`` among its ``--root`` folders (those it has already kept once)."""
        new = [r for r in roots if r not in self.roots]
        return msgspec.structs.replace(self, roots=[*self.roots, *new]) if new else self

    def log_folders(self) -> list[str]:
        """The folders agents keep their logs in (every adapter's default roots,
        whether they exist or not, the agent's own folder holding each, and the
        ``--root`` folders), as real paths: a root that is a symlink
        (``~/.claude/projects -> ~/store``) is its target, wherever that is.
        The home folder and the project folders that Aider and Crush scan for a
        file inside each project (:func:`agentlog.adapters._common.project_roots`)
        are not log folders: their log files are protected one by one
        (:meth:`guard`)."""
        return sorted({os.path.realpath(folder) for folder in self._folders()})

    def _folders(self) -> set[Path]:
        """:meth:`log_folders` as the adapters and ``--root`` name them (not resolved)."""
        from agentlog.adapters import registered
        from agentlog.adapters._common import project_roots

        scanned = set(project_roots(self.home))
        folders = set(self.roots)  # a set: many agents share one folder (~/.config/Code), resolved once
        for adapter in registered():
            try:
                roots = adapter.default_roots(self.env, self.home)
            except Exception:  # a third-party adapter's bug: it protects nothing
                continue
            for root in roots:
                if root not in scanned:
                    folders.update((root, self._agent_folder(root)))
        return folders

    @staticmethod
    def _source_folders(sources: Iterable[str], folders: set[Path]) -> ReadFolders:
        """The folders logs were read from: the folder of each of ``sources``
        (paths as the index keeps them) and each of its ancestors up to the log
        folder (one of ``folders``, :meth:`_folders`, as named) that holds it, by
        identity (``os.stat``: device and inode, symlinks followed: its real
        path, wherever a symlink inside a log folder leads), each with its path.
        A source in no log folder (a file agents keep in a project, such as
        Aider's history: protected as a file), or whose folder is gone, adds none."""
        named = {os.fspath(f) for f in folders}
        inside: dict[str, bool] = {}
        for source in sources:
            walked: list[str] = []
            at = os.path.dirname(source)
            while True:
                if at in inside:
                    held = inside[at]
                    break
                if at in named:
                    held = True
                    break
                up = os.path.dirname(at)
                if up == at or not at:
                    held = False
                    break
                walked.append(at)
                at = up
            inside.update(dict.fromkeys(walked, held))
        identities: dict[tuple[int, int], str] = {}
        for folder, held in inside.items():
            if held:
                try:
                    st = os.stat(folder)
                except (OSError, ValueError):  # gone, or a damaged row's path (a NUL in it)
                    continue
                identities.setdefault((st.st_dev, st.st_ino), folder)
        return ReadFolders(identities)

    def _holder(
        self, real: str, folders: set[Path], read: ReadFolders | None = None
    ) -> str | None:
        """The first (sorted) of ``folders`` (:meth:`_folders`) and of the folders
        logs were ``read`` from (:meth:`_source_folders`) that is or holds the
        real path ``real``, as a real path, or ``None``.  When ``real``'s folder exists, a folder is
        compared by identity (``os.stat``: device and inode) with ``real`` and
        each of its ancestors: one ``stat`` a folder, where ``os.path.realpath``
        of every folder took one ``lstat`` per path component (~770 for 90
        folders, 15 ms of a warm report given ``--index``).  A folder that does
        not exist then holds nothing that does; one with ``..`` in it, or whose
        ``stat`` fails otherwise, is resolved as before."""
        ancestors: dict[tuple[int, int], None] = {}
        up = real
        while True:
            try:
                st = os.stat(up)
            except OSError:
                if up != real:  # an ancestor is missing: compare every folder's real path
                    found = self._holder_by_path(real, folders)
                    return found or (read.holding(real) if read is not None else None)
            else:
                ancestors[(st.st_dev, st.st_ino)] = None
            if os.path.dirname(up) == up:
                break
            up = os.path.dirname(up)
        held: list[str] = []
        unsure: list[Path] = []
        for folder in folders:
            if ".." in folder.parts:
                unsure.append(folder)
                continue
            try:
                st = os.stat(folder)
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError:
                unsure.append(folder)
                continue
            if (st.st_dev, st.st_ino) in ancestors:
                held.append(os.path.realpath(folder))
        held += [os.path.realpath(read.by_identity[key]) for key in ancestors if read and key in read.by_identity]
        found = self._holder_by_path(real, unsure)
        return min([*held, *([found] if found else [])], default=None)

    @staticmethod
    def _holder_by_path(real: str, folders: Iterable[Path]) -> str | None:
        """The first (sorted) real path of ``folders`` that is or holds ``real``."""
        return next((f for f in sorted({os.path.realpath(f) for f in folders}) if is_within(real, f)), None)

    def _agent_folder(self, root: Path) -> Path:
        """The agent's own folder holding ``root``: its hidden folder in the home
        folder (``~/.claude`` for ``~/.claude/projects``), else ``root`` itself
        (under a shared folder such as ``~/.config`` or outside the home folder)."""
        try:
            top = root.relative_to(self.home).parts[0]
        except (ValueError, IndexError):
            return root
        return self.home / top if top.startswith(".") and top not in SHARED_FOLDERS else root

    def guard(
        self,
        known: Callable[[str], bool] = lambda _: False,
        index: str | Path | None = None,
        sources: Iterable[str] = (),
    ) -> Callable[[str | Path], str | None]:
        """The read-only rule, as a function: for a path, why agentlog must not
        write it (an export, an index), or ``None``.  Refused, by real path
        (symlinks and ``..`` resolved; a file and its SQLite ``-wal``, ``-shm``
        and ``-journal`` alike):

        - a path inside a log folder (:meth:`log_folders`: each root by its real
          path too, so ``~/.claude/projects -> ~/store`` makes ``~/store`` one)
          or inside a folder logs were read from: the folder of each of
          ``sources`` (the index's) and those between it and its log folder
          (:meth:`_source_folders`: a symlinked ``projects/-w-a -> ~/x``);
        - a path with a component an agent owns inside projects
          (:attr:`~agentlog.adapters.base.Adapter.project_owned`: Crush's
          ``.crush`` folder, Aider's ``.aider*`` files) or ending with the
          name of a file agents keep there (Aider's history, Crush's database);
        - a log file ``known`` recognises (e.g. a source in the index);
        - a file with another hard link inside a log folder (:func:`linked_in`:
          the rename an export makes would spare its bytes, but it is an
          agent's file all the same, and said so before a byte is written);
        - ``index``, agentlog's index in use (an export over it).

        The log folders are listed once: call the function for each file written.
        Read-only, always: agentlog never writes in an agent's folder."""
        from agentlog.adapters import registered

        folders = self._folders()
        read = self._source_folders(sources, folders)
        adapters = registered()
        names = {name for a in adapters for name in getattr(a, "project_files", ())}
        owned = {pattern for a in adapters for pattern in getattr(a, "project_owned", ())}

        def why(path: str | Path) -> str | None:
            real = os.path.realpath(path)
            base = sqlite_main(real)
            folder = self._holder(real, folders, read)
            if folder is not None:
                return f"{path} is inside an agent's folder ({folder})"
            parts = Path(real).parts
            for at, part in enumerate(parts):
                if any(fnmatchcase(part, pattern) for pattern in owned):
                    if at < len(parts) - 1:
                        return f"{path} is inside an agent's folder ({Path(*parts[: at + 1])})"
                    return f"{path} is an agent's log file"
            link = linked_in(real, folders)
            if link is not None:
                return f"{path} is a hard link to {link}, a file in an agent's folder"
            if known(real) or known(base) or any(base.endswith(os.sep + name) for name in names):
                return f"{path} is an agent's log file"
            return in_use_refusal(path, index)

        return why

    def guards(
        self, path: str | Path, known: Callable[[str], bool] = lambda _: False, index: str | Path | None = None
    ) -> str | None:
        """Why ``path`` must not be written by agentlog, or ``None``: :meth:`guard` for one path."""
        return self.guard(known, index)(path)

    def check_index(self, path: str | Path) -> None:
        """Raises :class:`~agentlog.errors.UsageError` when ``path`` may not be
        an index file (:meth:`guard`): the CLI's ``--index`` and
        ``AGENTLOG_INDEX``, and the Python API's ``index=``, before anything is
        created there."""
        refused = self.guards(path)
        if refused:
            from agentlog.errors import UsageError

            raise UsageError(f"--index {refused}: agentlog never writes there; choose another file")


def hard_linked(path: str) -> os.stat_result | None:
    """The ``stat`` of ``path`` when it is a regular file with more than one hard
    link (``st_nlink``), else ``None`` (also when it cannot be ``stat``ed)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) and st.st_nlink > 1 else None


def linked_in(real: str, folders: Iterable[Path]) -> str | None:
    """Another name of the file ``real`` (a real path) inside ``folders``, when it
    is a regular file with more than one hard link (``st_nlink``), else ``None``.
    The folders on its device are walked, symlinks not followed, and entries
    compared by inode from the directory listing first (``DirEntry.inode``, no
    ``stat``), then by device and inode: the walk runs only for a file with
    several links, which no export of agentlog's makes.  A folder that cannot
    be listed is skipped."""
    st = hard_linked(real)
    if st is None:
        return None
    for folder in sorted(folders):
        try:
            if os.stat(folder).st_dev != st.st_dev:
                continue
        except OSError:
            continue
        pending = [os.fspath(folder)]
        while pending:
            try:
                with os.scandir(pending.pop()) as entries:
                    for entry in entries:
                        if entry.is_dir(follow_symlinks=False):
                            pending.append(entry.path)
                        elif entry.inode() == st.st_ino and os.path.samestat(entry.stat(follow_symlinks=False), st):
                            return entry.path
            except OSError:
                continue
    return None


SQLITE_SIDECARS = ("-wal", "-shm", "-journal")
"""What SQLite adds to a database's file name for the files it keeps beside it
(https://www.sqlite.org/tempfiles.html)."""


def sqlite_main(path: str) -> str:
    """The database whose sidecar ``path`` would be (:data:`SQLITE_SIDECARS`), else ``path``."""
    for suffix in SQLITE_SIDECARS:
        if path.endswith(suffix):
            return path[: -len(suffix)]
    return path


def in_use_refusal(path: str | Path, index: str | Path | None) -> str | None:
    """Why ``path`` must not be written while ``index`` is agentlog's index in use
    (it is the index, or its ``-wal``, ``-shm`` or ``-journal``), or ``None``."""
    real = os.path.realpath(path)
    if index is None or sqlite_main(real) != os.path.realpath(index):
        return None
    if real == os.path.realpath(index):
        return f"{path} is agentlog's index in use"
    return f"{path} is a file of agentlog's index in use ({index})"


Named = list[tuple[str, str]]
"""Paths, each with what it is (``("index", "/…/index.sqlite")``)."""


def own_paths(env: Mapping[str, str], index: str | Path | None = None) -> tuple[Named, Named]:
    """agentlog's own files and folders, ``(what, path)`` each, by the path
    functions that make them: its index (:func:`agentlog.index.db.default_path`,
    the demo's too) and ``index`` in use, the status line's cache beside either
    (:func:`agentlog.statusline.cache_path`); its cache and config folders
    (``platformdirs``: the schema, registry and price caches, ``prices.toml``)
    and the resident's folder (:func:`agentlog.resident.paths.folder`: sockets, locks)."""
    import platformdirs

    from agentlog.index.db import default_path
    from agentlog.resident.paths import folder
    from agentlog.statusline import cache_path

    files = [
        ("index", default_path(env)),
        ("demo index", default_path(env, demo=True)),
        ("status-line cache", cache_path(env)),
    ]
    if index is not None:
        files.append(("status-line cache", cache_path(env, Path(index))))
    folders = [
        ("cache", platformdirs.user_cache_dir("agentlog")),
        ("config", platformdirs.user_config_dir("agentlog")),
        ("resident", folder(env)),
    ]
    return [(w, os.path.realpath(f)) for w, f in files], [(w, os.path.realpath(f)) for w, f in folders]


def own_guard(env: Mapping[str, str], index: str | Path | None = None) -> Callable[[str | Path], str | None]:
    """Why an export must not write a path, as a function (the paths listed once):
    it is one of agentlog's own files (:func:`own_paths`; a database's ``-wal``,
    ``-shm`` and ``-journal`` alike), inside one of its folders, or of ``index``,
    the index in use (:func:`in_use_refusal`); ``None`` when it is none of them.
    By real path, symlinks and ``..`` resolved."""
    files, folders = own_paths(env, index)

    def why(path: str | Path) -> str | None:
        refused = in_use_refusal(path, index)
        if refused is not None:
            return refused
        real = os.path.realpath(path)
        for what, file in files:
            if sqlite_main(real) == file or real == file:
                return f"{path} is agentlog's {what} ({file})"
        for what, held in folders:
            if is_within(real, held):
                return f"{path} is inside agentlog's {what} folder ({held})"
        return None

    return why
