"""Tool names: an agent's own name in snake case, mapped through the agent's table; OpenAI-style function calls."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from agentlog.adapters._json import json_object
from agentlog.model import (
    ToolCallPart,
)

_SNAKE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def snake(name: str) -> str:
    """``TodoWrite`` → ``todo_write``; ``web-fetch`` → ``web_fetch``."""
    return _SNAKE.sub("_", name).replace("-", "_").lower()


def normalise_tool(raw: str, names: Mapping[str, str]) -> str:
    """An agent's tool name in snake case, mapped through ``names`` (the agent's
    table of standard names: ``bash``, ``read``, ``edit`` …) when listed there."""
    name = snake(raw)
    return names.get(name, name)


def mapped_tool(raw: str, names: Mapping[str, str]) -> str:
    """A tool name through an agent's table of ``raw → normalised`` names; MCP tools
    (``mcp__server__tool``) and names not in the table are kept as they are."""
    return raw if raw.startswith("mcp__") else names.get(raw, raw)


def function_call(call: dict[str, Any], tool_name: Callable[[str], str]) -> ToolCallPart:
    """An OpenAI-style ``{id, function{name, arguments}}`` tool call (Kimi CLI, Hermes):
    ``arguments`` is a JSON string, decoded when it holds an object, kept as written
    otherwise; ``tool_name`` normalises the agent's tool name."""
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    raw = str(function.get("name") or call.get("name") or "unknown")
    arguments = function.get("arguments")
    decoded = json_object(arguments) if isinstance(arguments, str) else None
    return ToolCallPart(
        call_id=str(call.get("id") or call.get("call_id")),
        tool=tool_name(raw),
        raw_name=raw,
        input=decoded if decoded is not None else arguments,
    )
