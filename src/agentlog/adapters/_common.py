"""Small pure helpers shared by adapters: timestamps, text, tool names, JSON text,
VS Code-family folders."""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from agentlog.model import Diagnostics, Session
from agentlog.readers import walk_files

_SNAKE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def parse_time(value: Any) -> datetime | None:
    """An ISO-8601 string, or epoch seconds/milliseconds, as an aware UTC datetime;
    ``None`` for anything else (agents write placeholders such as ``"[trimmed]"``)."""
    if isinstance(value, str):
        try:
            stamp = datetime.fromisoformat(value)
        except ValueError:
            return None
        return stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp.astimezone(UTC)
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        seconds = value / 1000 if value > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    return None


def snake(name: str) -> str:
    """``TodoWrite`` → ``todo_write``; ``web-fetch`` → ``web_fetch``."""
    return _SNAKE.sub("_", name).replace("-", "_").lower()


MAX_COUNT = 1 << 53
"""Larger token counts are not real (and would not survive JSON or SQLite)."""


def as_int(value: Any) -> int:
    """A token count as ``int``: missing, ``null``, non-numeric, negative or
    absurdly large (≥ 2**53) → 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if value != value or not 0 <= value < MAX_COUNT:  # NaN, negative, huge
        return 0
    return int(value)


def as_str(value: Any) -> str | None:
    """``value`` if it is a non-empty string, else ``None``."""
    return value if isinstance(value, str) and value else None


def block_text(content: Any) -> str:
    """Text of a content value that is a string or a list of ``{type: text}`` blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def json_value(value: Any) -> Any:
    """A JSON text (``str`` or ``bytes``) decoded; ``None`` when it is not valid JSON
    (e.g. SQLite values that hold JSON text, tool arguments stored as strings) or
    nests too deep to decode."""
    if not isinstance(value, str | bytes) or not value:
        return None
    try:
        return msgspec.json.decode(value)
    except (msgspec.DecodeError, RecursionError):  # RecursionError: absurdly deep nesting
        return None


def file_url_path(url: Any) -> str | None:
    """``file:///home/me/my%20proj`` → ``/home/me/my proj``; ``file:///c%3A/x`` →
    ``c:/x``; a remote URL (``vscode-remote://…/path``) → its path; ``None`` for
    anything that is not a string."""
    if not isinstance(url, str) or not url:
        return None
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


def normalise_tool(raw: str, names: Mapping[str, str]) -> str:
    """An agent's tool name in snake case, mapped through ``names`` (the agent's
    table of standard names: ``bash``, ``read``, ``edit`` …) when listed there."""
    name = snake(raw)
    return names.get(name, name)


def header_copy(header: Session, diagnostics: Diagnostics) -> Session:
    """A copy of a parser's session header carrying a copy of ``diagnostics``, so the
    parser can go on updating its own (for :meth:`LineParser.headers`)."""
    copy = msgspec.structs.replace(header, sources=list(header.sources))
    copy.diagnostics = msgspec.msgpack.decode(msgspec.msgpack.encode(diagnostics), type=Diagnostics)
    return copy


def vscode_state_dbs(root: Path) -> list[tuple[Path, Path | None]]:
    """The ``state.vscdb`` files of a VS Code-family user dir, each with its
    ``workspace.json`` (``None`` for ``globalStorage``): the global one first, then
    one per ``workspaceStorage/<id>/``.  A folder that is no user dir is searched
    whole for ``*.vscdb`` files (a user-given root)."""
    workspaces = root / "workspaceStorage"
    folders = sorted(workspaces.iterdir()) if workspaces.is_dir() else []
    glob = root / "globalStorage" / "state.vscdb"
    if not glob.is_file() and not folders:
        return [(path, None) for path in walk_files(root, ".vscdb")]
    found: list[tuple[Path, Path | None]] = [(glob, None)] if glob.is_file() else []
    for folder in folders:
        if (folder / "state.vscdb").is_file():
            meta = folder / "workspace.json"
            found.append((folder / "state.vscdb", meta if meta.is_file() else None))
    return found
