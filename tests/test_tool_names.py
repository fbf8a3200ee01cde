"""One tool-name normaliser with one canonical vocabulary, for every adapter.

Every adapter's table of standard names maps onto :data:`CANONICAL_TOOLS`; every name
an adapter emits for the fixtures of ``tests/fixtures`` (each agent's home laid out by
``tests/homes.py``) is canonical, ``mcp__*``, or the agent's own name in snake case —
never a common alias of a canonical name (Cursor and Copilot said ``ls`` where 13
adapters said ``list``).
"""

from __future__ import annotations

import importlib
import re
from collections import defaultdict
from pathlib import Path

import pytest

from agentlog.adapters import all_adapters
from agentlog.adapters._tools import ALIASES, CANONICAL_TOOLS, normalise_tool
from agentlog.load import load_sessions
from agentlog.model import ToolCallPart

NAME = re.compile(r"^[a-z0-9][a-z0-9_]*$")


def _tables() -> dict[str, dict[str, str]]:
    """Each adapter module's table(s) of standard tool names."""
    out = {}
    for adapter in all_adapters():
        module = importlib.import_module(type(adapter).__module__)
        for attribute in ("TOOL_NAMES", "_TOOL_NAMES"):
            table = getattr(module, attribute, None)
            if isinstance(table, dict):
                out[f"{module.__name__}.{attribute}"] = table
    return out


def test_every_adapter_table_maps_onto_the_canonical_vocabulary():
    tables = _tables()
    assert len(tables) >= 20
    off = {name: sorted(set(t.values()) - set(CANONICAL_TOOLS)) for name, t in tables.items()}
    assert {name: values for name, values in off.items() if values} == {}


def test_aliases_name_canonical_tools():
    assert set(ALIASES.values()) <= set(CANONICAL_TOOLS)
    assert not set(ALIASES) & set(CANONICAL_TOOLS)


@pytest.mark.parametrize(
    ("raw", "table", "expected"),
    [
        ("mcp__github__get_issue", {}, "mcp__github__get_issue"),
        ("Bash", {"Bash": "bash"}, "bash"),
        ("ReadFile", {"read_file": "read"}, "read"),
        ("list_dir", {}, "list"),
        ("ls", {}, "list"),
        ("TodoWrite", {}, "todo"),
        ("codebase_investigator", {}, "codebase_investigator"),
        ("web-fetch", {}, "web_fetch"),
        ("[trimmed for fixture]", {}, "trimmed_for_fixture"),
        ("!!!", {}, "unknown"),
    ],
)
def test_normalise_tool(raw, table, expected):
    assert normalise_tool(raw, table) == expected


def test_every_emitted_name_over_all_fixtures_is_canonical_or_the_agent_s_own(tmp_path):
    homes = pytest.importorskip("homes")  # tests/homes.py: every agent's fixtures laid out
    emitted: dict[str, set[str]] = defaultdict(set)
    for slug, lay_out in sorted(homes.LAYOUTS.items()):
        home = tmp_path / slug
        lay_out(home)
        for session in load_sessions([slug], env={"HOME": str(home)}, home=Path(home)):
            for message in session.messages:
                for part in message.parts:
                    if isinstance(part, ToolCallPart):
                        emitted[part.tool].add(slug)
    assert {"bash", "read", "edit", "write", "task"} <= set(emitted)
    bad = {
        name: sorted(slugs)
        for name, slugs in emitted.items()
        if not name.startswith("mcp__") and (not NAME.match(name) or name in ALIASES)
    }
    assert bad == {}
