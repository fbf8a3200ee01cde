"""One fact, one answer on every path, for every agent's fixtures.

* the index ≡ loading in memory: every session with its messages, parts, usage and
  links (``kind``, ``parent_key``), and every counted call summed by session, model
  and tier (``tests/fuzz/checks.py`` holds the views; the fuzz checks the same on
  mutated homes);
* the Claude Code fast usage path (``agentlog.usage.source.collect_calls`` with
  ``fast=True``) ≡ the index ≡ the full model, on every Claude fixture, local and
  shared, and on recorded times no path believes (``test_record_times``).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from agentlog.adapters import all_adapters, get_adapter
from agentlog.load import discover_sources, load_sessions
from agentlog.rules import TITLE_CHARS
from agentlog.usage import calls_from_sessions
from agentlog.usage.scan import scan_calls
from fuzz import checks
from fuzz.cases import home_names
from homes import LAYOUTS, shared_layout
from test_cli import run
from test_record_times import ODD_TIMES, odd_times_home

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


def test_loader_scanner_and_index_agree_on_odd_claude_times(tmp_path):
    """Go's zero time, 9999-12-31 and epoch numbers in Claude Code's ``timestamp``
    are no time on every path (:func:`agentlog.adapters.claude_code.record_time`):
    the index put ``1700000000`` in 2023-11-14, ``--no-index`` in ``unknown``."""
    env = odd_times_home(tmp_path, ODD_TIMES)
    sessions = load_sessions(["claude_code"], env, tmp_path)
    conn = checks.synced("claude_code", tmp_path, tmp_path / "check.sqlite")
    try:
        assert checks.index_view(conn) == checks.memory_view(sessions)
    finally:
        conn.close()
    full = list(calls_from_sessions(sessions))
    assert sorted((c.usage.input_tokens, c.timestamp) for c in full) == [
        *[(10 * (i + 1), None) for i in range(len(ODD_TIMES))],
        (1000, datetime(2026, 11, 20, 9, tzinfo=UTC)),
    ]
    refs = [ref for _, ref in discover_sources([get_adapter("claude_code")], env, tmp_path)]
    assert sorted(scan_calls(refs), key=repr) == sorted(full, key=repr)
    for zone in ("UTC", "America/New_York", "Asia/Tokyo"):
        for report, key in (("daily", "2026-11-20"), ("monthly", "2026-11")):
            views = [run("usage", report, "-z", zone, "--json", *mode, env=env) for mode in ((), ("--no-index",))]
            for code, out, err in views:
                assert code == 0, err
                rows = {row["key"]: row["input_tokens"] for row in json.loads(out)["rows"]}
                assert rows == {key: 1000, "unknown": 150}
