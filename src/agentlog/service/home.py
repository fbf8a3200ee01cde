"""Where the logs are: the environment, home folder and extra roots a query reads."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

SHARED_FOLDERS = frozenset(
    {".config", ".local", ".cache", ".vscode-server", ".vscode-server-insiders", ".cursor-server"}
)
"""Hidden folders of the home folder that many programs share: an agent's own
folder is the root inside them, not the shared folder."""


@dataclass(frozen=True)
class Home:
    """The environment (agents' own variables such as ``CODEX_HOME``), the home
    folder and the extra folders (``--root``) discovery searches."""

    env: dict[str, str]
    home: Path
    roots: list[Path] = field(default_factory=list)

    @classmethod
    def of(cls, environ: Mapping[str, str], roots: Iterable[str | Path] = (), demo: bool = False) -> Home:
        """The home ``environ`` names (``HOME``, else the user's), or with ``demo``
        the bundled sample home (:func:`agentlog.demo.demo_env`)."""
        if demo:
            from agentlog.demo import demo_env

            env = demo_env(environ)
        else:
            env = dict(environ)
        return cls(env, Path(env.get("HOME") or Path.home()), [Path(r) for r in roots])

    def log_folders(self) -> list[str]:
        """The folders agents keep their logs in (every adapter's default roots,
        whether they exist or not, and the ``--root`` folders), as real paths.
        The home folder and the project folders that Aider and Crush scan for a
        file inside each project (:func:`agentlog.adapters._common.project_roots`)
        are not log folders: their log files are protected one by one
        (:meth:`guards`)."""
        from agentlog.adapters import registered
        from agentlog.adapters._common import project_roots

        scanned = set(project_roots(self.home))
        owned: set[Path] = set()  # each resolved once: many agents share one folder (~/.config/Code)
        for adapter in registered():
            try:
                roots = adapter.default_roots(self.env, self.home)
            except Exception:  # a third-party adapter's bug: it protects nothing
                continue
            owned.update(self._agent_folder(r) for r in roots if r not in scanned)
        return sorted({os.path.realpath(p) for p in (*self.roots, *owned)})

    def _agent_folder(self, root: Path) -> Path:
        """The agent's own folder holding ``root``: its hidden folder in the home
        folder (``~/.claude`` for ``~/.claude/projects``), else ``root`` itself
        (under a shared folder such as ``~/.config`` or outside the home folder)."""
        try:
            top = root.relative_to(self.home).parts[0]
        except (ValueError, IndexError):
            return root
        return self.home / top if top.startswith(".") and top not in SHARED_FOLDERS else root

    def guards(self, path: Path, known: Callable[[str], bool] = lambda _: False) -> str | None:
        """Why ``path`` must not be written by agentlog (an export, an index), or
        ``None``: it is inside a log folder (:meth:`log_folders`), it is a log
        file ``known`` recognises (by real path: e.g. a source in the index),
        or it has the name of a file an agent keeps inside projects (Aider's
        history, Crush's database).  Read-only, always: agentlog never writes
        in an agent's folder."""
        from agentlog.adapters import registered

        real = os.path.realpath(path)
        for folder in self.log_folders():
            if real == folder or real.startswith(folder.rstrip(os.sep) + os.sep):
                return f"{path} is inside an agent's folder ({folder})"
        names = {name for adapter in registered() for name in getattr(adapter, "project_files", ())}
        if known(real) or any(real.endswith(os.sep + name) for name in names):
            return f"{path} is an agent's log file"
        return None
