"""Tool names: the one normaliser and its canonical vocabulary (an agent's own name
mapped through the agent's table, else kept in snake case); OpenAI-style function calls."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from agentlog import lazy
from agentlog.adapters._json import json_object
from agentlog.adapters._values import as_dict
from agentlog.model import (
    ToolCallPart,
)

_SNAKE = lazy.pattern(r"(?<=[a-z0-9])(?=[A-Z])")


def snake(name: str) -> str:
    """``TodoWrite`` → ``todo_write``; ``web-fetch`` → ``web_fetch``."""
    return _SNAKE.sub("_", name).replace("-", "_").lower()


CANONICAL_TOOLS: Mapping[str, str] = {
    "bash": "run a shell command",
    "bash_output": "read the output of a background shell",
    "kill_shell": "stop a background shell",
    "read": "read a file",
    "write": "write a whole file",
    "edit": "change part of a file",
    "delete": "delete a file",
    "glob": "find files by name pattern",
    "grep": "search file contents",
    "list": "list a folder",
    "task": "hand a task to a subagent",
    "todo": "update the todo list",
    "web_fetch": "fetch a URL",
    "web_search": "search the web",
    "memory": "read or write the agent's memory",
    "exit_plan_mode": "leave plan mode",
    "handback": "hand control back to the caller",
    "unknown": "a call whose tool name was not recorded",
}
"""agentlog's normalised tool names (``ToolCallPart.tool``) for the tools most agents
share, each with what it does: every adapter's table maps onto these.  A tool
outside them keeps its own name in snake case; MCP tools are ``mcp__<server>__<tool>``."""

ALIASES: Mapping[str, str] = {
    "ls": "list",
    "list_dir": "list",
    "list_directory": "list",
    "shell": "bash",
    "shell_exec": "bash",
    "run_shell_command": "bash",
    "execute_command": "bash",
    "read_file": "read",
    "write_file": "write",
    "create_file": "write",
    "search_files": "grep",
    "grep_search": "grep",
    "find_files": "glob",
    "todo_write": "todo",
    "update_todo_list": "todo",
    "fetch": "web_fetch",
    "webfetch": "web_fetch",
    "websearch": "web_search",
    "google_web_search": "web_search",
}
"""Common spellings of canonical tools, applied after an agent's own table: the same
tool never gets two names across adapters (Cursor's and Copilot's ``list_dir`` were
``ls`` where 13 adapters said ``list``)."""

_NOT_NAME = lazy.pattern(r"[^a-z0-9_]+")


@lru_cache(maxsize=1024)
def _keeping_secrets(raw: str) -> str | None:
    """``raw`` normalised around the secrets in it, kept as written (``None``: it holds none).
    Only a name of 16+ characters with a digit is looked at: every secret shape is."""
    from agentlog.redact import findings

    secrets = findings(raw)
    if not secrets:
        return None
    pieces, at = [], 0
    for f in secrets:
        pieces += [_NOT_NAME.sub("_", snake(raw[at : f.start])), raw[f.start : f.end]]
        at = f.end
    pieces.append(_NOT_NAME.sub("_", snake(raw[at:])))
    return "".join(pieces).strip("_")


def normalise_tool(raw: str, names: Mapping[str, str] | None = None) -> str:
    """The one tool-name normaliser: MCP tools (``mcp__server__tool``) as they are;
    else ``raw`` (or its snake case) through the agent's table ``names`` (raw →
    :data:`CANONICAL_TOOLS` name), else its snake case through :data:`ALIASES`,
    with anything but ``a-z0-9_`` turned into ``_`` (``unknown`` when nothing is left).
    A secret in ``raw`` (:func:`agentlog.redact.findings`) is kept as written, its
    pieces around it normalised, so redaction still finds it in the name."""
    if raw.startswith("mcp__"):
        return raw
    if len(raw) >= 16 and any(c.isdigit() for c in raw) and (kept := _keeping_secrets(raw)) is not None:
        return kept
    names = names or {}
    mapped = names.get(raw)
    if mapped is not None:
        return mapped
    name = snake(raw)
    name = names.get(name) or ALIASES.get(name, name)
    return (
        name if name.isidentifier() and name.islower() else _NOT_NAME.sub("_", name).strip("_") or "unknown"
    )


def function_call(call: dict[str, Any], tool_name: Callable[[str], str]) -> ToolCallPart:
    """An OpenAI-style ``{id, function{name, arguments}}`` tool call (Kimi CLI, Hermes):
    ``arguments`` is a JSON string, decoded when it holds an object, kept as written
    otherwise; ``tool_name`` normalises the agent's tool name."""
    function = as_dict(call.get("function"))
    raw = str(function.get("name") or call.get("name") or "unknown")
    arguments = function.get("arguments")
    decoded = json_object(arguments) if isinstance(arguments, str) else None
    return ToolCallPart(
        call_id=str(call.get("id") or call.get("call_id")),
        tool=tool_name(raw),
        raw_name=raw,
        input=decoded if decoded is not None else arguments,
    )
