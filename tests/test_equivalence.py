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

import json

import pytest

from agentlog.adapters import all_adapters
from agentlog.rules import TITLE_CHARS
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


def claude_line(sid: str, uuid: str, when: str, role: str, content: object, mid: str | None = None) -> str:
    message: dict[str, object] = {"role": role, "content": content}
    if mid is not None:
        message |= {
            "id": mid,
            "model": "claude-sonnet-4-5-20250929",
            "usage": {"input_tokens": 3, "output_tokens": 5},
        }
    line = {"type": role, "sessionId": sid, "uuid": uuid, "timestamp": when, "cwd": "/w", "message": message}
    return json.dumps(line) + "\n"


def test_long_prompts_title_their_sessions_bounded_on_both_paths(tmp_path):
    """A first prompt longer than :data:`~agentlog.rules.TITLE_CHARS` titles its
    session by its bounded head, on the loader and the index alike; a resumed
    file that copied it (the prompt replayed) takes its own first prompt,
    bounded too (:func:`~agentlog.rules.title_after_replays` compares prompts as
    titles)."""
    first = "\n  " + "word " * 3000  # 15,003 characters, white space around
    own = "next " * 400 + "tail"  # 2,004 characters
    folder = tmp_path / "home" / ".claude" / "projects" / "-w"
    folder.mkdir(parents=True)
    copied = [
        ("u1", "2026-11-01T10:00:00Z", "user", first, None),
        ("a1", "2026-11-01T10:00:01Z", "assistant", [{"type": "text", "text": "ok"}], "m1"),
    ]
    (folder / "s-one.jsonl").write_text("".join(claude_line("s-one", *c) for c in copied))
    resumed = [
        *copied,
        ("u2", "2026-11-02T10:00:00Z", "user", own, None),
        ("a2", "2026-11-02T10:00:01Z", "assistant", [{"type": "text", "text": "done"}], "m2"),
    ]
    (folder / "s-two.jsonl").write_text("".join(claude_line("s-two", *c) for c in resumed))
    sessions, report = checks.load("claude_code", tmp_path / "home")
    assert report.errors == []
    titles = {s.id: s.title for s in sessions}
    assert titles == {"s-one": "word " * 199 + "word…", "s-two": "next " * 199 + "next…"}
    assert {len(t or "") for t in titles.values()} == {TITLE_CHARS}
    conn = checks.synced("claude_code", tmp_path / "home", tmp_path / "index.sqlite")
    try:
        assert checks.index_view(conn) == checks.memory_view(sessions)
        stored = dict(conn.execute("SELECT id, title FROM sessions").fetchall())
    finally:
        conn.close()
    assert stored == titles
