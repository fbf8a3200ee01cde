"""Which file a tool call touched: the one rule the MCP server's
``find_sessions_by_file`` and the Python API's ``Archive.touching`` use.

A call touches a file when its normalised tool is ``read``, ``write`` or
``edit`` and its input names the file as ``file_path`` (Claude Code's
Read/Write/Edit/MultiEdit, Codex's ``apply_patch`` split per file by
:mod:`agentlog.adapters.codex`) or ``path`` (Gemini CLI, Cline).  A relative
path is read against the session's folder.
"""

from __future__ import annotations

import posixpath

from agentlog.model import ToolCallPart

FILE_TOOLS = ("read", "write", "edit")
"""The normalised tools whose input names one file."""
PATH_KEYS = ("file_path", "path")
"""The input keys that name it, first found wins."""


def touched_path(call: ToolCallPart, cwd: str | None) -> str | None:
    """The file ``call`` touched, normalised (``..`` and ``.`` folded) and made
    absolute against ``cwd`` when relative and ``cwd`` is known; ``None`` for a
    call that names no file."""
    if call.tool not in FILE_TOOLS or not isinstance(call.input, dict):
        return None
    path = next((v for k in PATH_KEYS if isinstance(v := call.input.get(k), str) and v.strip()), None)
    if path is None:
        return None
    path = path.strip().replace("\\", "/")
    if not path.startswith(("/", "~")) and cwd and not (len(path) > 1 and path[1] == ":"):
        path = posixpath.join(cwd.replace("\\", "/"), path)
    return posixpath.normpath(path)


def path_matches(path: str, wanted: str) -> bool:
    """Whether ``path`` is the file ``wanted`` names: the same path, or one that
    ends with it at a folder boundary (``stats.py``, ``weather/stats.py`` both
    name ``/src/weather/weather/stats.py``); ``/`` and ``\\`` alike."""
    wanted = posixpath.normpath(wanted.strip().replace("\\", "/"))
    if wanted in ("", "."):
        return False
    if wanted.startswith("/"):
        return path == wanted
    return path == wanted or path.endswith("/" + wanted)
