"""Folders agents keep their data in, shared by adapters: VS Code-family user and
storage folders (``workspace.json``, ``state.vscdb``) and project-local stores
(Aider, Crush).  (Parsing helpers live in ``_json``, ``_values``, ``_tools``,
``_content``, ``_headers`` and ``_tree``.)"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from agentlog import probe
from agentlog.adapters._json import json_value
from agentlog.readers import walk_files


def file_url_path(url: Any) -> str | None:
    """``file:///home/me/my%20proj`` → ``/home/me/my proj``; ``file:///c%3A/x`` →
    ``c:/x``; a remote URL (``vscode-remote://…/path``) → its path; ``None`` for
    anything that is not a string."""
    if not isinstance(url, str) or not url:
        return None
    import urllib.parse  # only for the agents that record folders as URLs

    parsed = urllib.parse.urlsplit(url)
    if not parsed.scheme:
        return url
    path = urllib.parse.unquote(parsed.path)
    if re.match(r"^/[A-Za-z]:", path):
        path = path[1:]
    return path or None


def vscode_user_dirs(env: Mapping[str, str], home: Path, products: Iterable[str]) -> list[Path]:
    """The ``User`` folders of VS Code-family editors called ``products`` (``Code``,
    ``Cursor``, ``Trae`` …) on Linux (``$XDG_CONFIG_HOME`` or ``~/.config``), macOS
    (``~/Library/Application Support``) and Windows (``%APPDATA%``).  Pure."""
    bases = [Path(env["XDG_CONFIG_HOME"])] if env.get("XDG_CONFIG_HOME") else []
    bases += [home / ".config", home / "Library" / "Application Support"]
    if env.get("APPDATA"):
        bases.append(Path(env["APPDATA"]))
    out: list[Path] = []
    for product in products:
        for base in bases:
            path = base / product / "User"
            if path not in out:
                out.append(path)
    return out


def workspace_folder(data: bytes | None) -> str | None:
    """The folder of a VS Code ``workspaceStorage/<id>/workspace.json``
    (``{"folder": "file:///…"}`` or ``{"workspace": "file:///….code-workspace"}``)."""
    doc = json_value(data)
    if not isinstance(doc, dict):
        return None
    return file_url_path(doc.get("folder")) or file_url_path(doc.get("workspace"))


def vscode_state_dbs(root: Path) -> list[tuple[Path, Path | None]]:
    """The ``state.vscdb`` files of a VS Code-family user dir, each with its
    ``workspace.json`` (``None`` for ``globalStorage``): the global one first, then
    one per ``workspaceStorage/<id>/``.  A folder that is no user dir is searched
    whole for ``*.vscdb`` files (a user-given root)."""
    folders = probe.entries(root / "workspaceStorage")
    glob = root / "globalStorage" / "state.vscdb"
    global_db = probe.is_file(glob)
    if not global_db and not folders:
        return [(path, None) for path in walk_files(root, ".vscdb")]
    found: list[tuple[Path, Path | None]] = [(glob, None)] if global_db else []
    for folder in folders:
        if probe.is_file(folder / "state.vscdb"):
            meta = folder / "workspace.json"
            found.append((folder / "state.vscdb", meta if probe.is_file(meta) else None))
    return found


# --- Anthropic-style content blocks (Cline, Roo, Kilo, Factory Droid) --------


# --- VS Code-family user folders --------------------------------------------

VSCODE_EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor")
"""Editor folder names under the platform's config folder (VS Code, Insiders, VSCodium, Cursor)."""
VSCODE_SERVERS = (".vscode-server", ".vscode-server-insiders", ".cursor-server")
"""Remote-server folders in the home folder (SSH, WSL, containers): ``<server>/data/User``."""


def vscode_global_storage(env: Mapping[str, str], home: Path) -> list[Path]:
    """Every VS Code-family ``User/globalStorage`` folder, for all platforms at once:
    ``$XDG_CONFIG_HOME`` (default ``~/.config``, Linux), ``~/Library/Application Support``
    (macOS), ``$APPDATA`` (default ``~/AppData/Roaming``, Windows) for each editor of
    :data:`VSCODE_EDITORS`; the remote servers of :data:`VSCODE_SERVERS`; and
    ``$VSCODE_PORTABLE/user-data`` for a portable install.  Pure."""
    bases = [
        Path(env.get("XDG_CONFIG_HOME") or home / ".config"),
        home / "Library" / "Application Support",
        Path(env.get("APPDATA") or home / "AppData" / "Roaming"),
    ]
    users = [base / editor / "User" for base in bases for editor in VSCODE_EDITORS]
    users += [home / server / "data" / "User" for server in VSCODE_SERVERS]
    if env.get("VSCODE_PORTABLE"):
        users.insert(0, Path(env["VSCODE_PORTABLE"]) / "user-data" / "User")
    return [user / "globalStorage" for user in users]


# --- one-session JSONL parsers (Factory Droid, Grok) -------------------------


# --- project-local stores (Aider, Crush) --------------------------------------

PROJECT_PARENTS = ("src", "code", "projects", "Projects", "dev", "work", "repos", "git", "Developer")
"""Folders under the home folder where repositories usually live; with the home folder
itself they are the default roots of agents that keep history inside each project."""


def project_roots(home: Path) -> list[Path]:
    """The home folder and its :data:`PROJECT_PARENTS` (pure)."""
    return [home, *(home / name for name in PROJECT_PARENTS)]


def project_files(root: Path, relative: str, depth: int = 2) -> Iterator[Path]:
    """Files ``<root>/[<dir>/…]<relative>`` with at most ``depth`` folders between,
    sorted; folders whose name starts with ``.`` are not entered (``relative`` itself
    may name one, e.g. ``.crush/crush.db``).  Bounded so a home folder is cheap to scan."""
    folders = [root]
    for level in range(depth + 1):
        for folder in folders:
            if probe.is_file(folder / relative):
                yield folder / relative
        if level < depth:
            folders = [
                p for folder in folders for p in probe.subfolders(folder) if not p.name.startswith(".")
            ]
