"""One fact, one answer on every path, for every agent's fixtures.

* the index ≡ loading in memory: every session with its messages, parts, usage and
  links (``kind``, ``parent_key``), and every counted call summed by session, model
  and tier (``tests/fuzz/checks.py`` holds the views; the fuzz checks the same on
  mutated homes);
* the Claude Code fast usage path (``agentlog.usage.source.collect_calls`` with
  ``fast=True``) ≡ the index ≡ the full model, on every Claude fixture, local and
  shared.
"""

from __future__ import annotations

import pytest

from agentlog.adapters import all_adapters
from fuzz import checks
from fuzz.cases import home_names
from homes import LAYOUTS, shared_layout

HOMES = home_names()
LINKED = {
    "claude_code",
    "codex",
    "gemini_cli",
    "kimi",
    "kimi_code",
    "mistral_vibe",
    "cursor",
    "cursor_cli",
    "trae_cli",
    "goose",
    "crush",
    "roo_code",
    "kilo_code",
}
"""Agents whose fixtures hold a subagent or fork (a parent key to compare)."""


def _lay_out(name: str, root):
    agent, _, shared = name.partition("+")
    shared_layout(agent, root) if shared else LAYOUTS[agent](root)
    return agent


def test_every_adapter_has_a_home():
    assert set(LAYOUTS) == {a.slug for a in all_adapters()}


@pytest.mark.parametrize("name", HOMES)
def test_index_equals_in_memory(name, tmp_path):
    root = tmp_path / "home"
    agent = _lay_out(name, root)
    sessions, report = checks.load(agent, root)
    assert report.errors == [] and sessions
    assert any(s.parent_key for s in sessions) or name not in LINKED  # links are compared too
    conn = checks.synced(agent, root, tmp_path / "index.sqlite")
    try:
        in_index = checks.index_view(conn)
        assert in_index == checks.memory_view(sessions), checks.first_difference(
            in_index, checks.memory_view(sessions)
        )
        assert checks.index_calls_view(conn, agent) == checks.calls_view(sessions)
    finally:
        conn.close()


@pytest.mark.parametrize("name", [n for n in HOMES if n.startswith("claude_code")])
def test_fast_scanner_equals_index(name, tmp_path):
    root = tmp_path / "home"
    agent = _lay_out(name, root)
    sessions, _ = checks.load(agent, root)
    conn = checks.synced(agent, root, tmp_path / "index.sqlite")
    try:
        in_index = checks.index_calls_view(conn, agent)
    finally:
        conn.close()
    assert in_index  # the fixtures bill calls
    assert checks.scanner_view(root) == in_index == checks.calls_view(sessions)
