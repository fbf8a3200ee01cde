"""Where a batch of a large source ends (:func:`agentlog.load.open_tail`): the
messages the next lines are likely to change are carried into the next batch, so
the store does not write them twice (each rewrite made FTS5 write out its pending
terms), and the index is the same as with batches cut anywhere."""

from __future__ import annotations

import sqlite3
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

import agentlog.index.sync as sync_module
from agentlog.adapters import ToolOutput, all_adapters
from agentlog.index.db import connect
from agentlog.index.search import search
from agentlog.index.sync import sync
from agentlog.load import CARRY_MAX, SourceParse, open_tail
from agentlog.model import Message, TextPart, ToolCallPart, ToolResult
from test_index import index_sessions, memory_sessions

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
from corpus import write_claude

WHEN = datetime(2026, 11, 1, tzinfo=UTC)


def _said(mid: str, *calls: str) -> tuple[str, Message]:
    parts = [ToolCallPart(call_id=c, tool="bash", raw_name="Bash") for c in calls] or [TextPart(text=mid)]
    return "s", Message(id=mid, role="assistant", timestamp=WHEN, parts=parts)  # type: ignore[arg-type]


def _answer(call: str) -> tuple[str, ToolOutput]:
    return "s", ToolOutput(call_id=call, result=ToolResult(output="ok"))


def test_the_last_message_is_carried():
    assert open_tail([_said("m1"), _said("m2")]) == 1
    assert open_tail([_said("m1"), _said("m2"), _answer("x")]) == 1  # with what follows it


def test_a_message_continued_under_its_id_is_carried_from_its_first_fragment():
    assert open_tail([_said("m1"), _said("m2"), _said("m3"), _said("m2")]) == 1


def test_an_unanswered_call_is_carried_an_answered_one_not():
    assert open_tail([_said("m1"), _said("m2", "c1"), _said("m3")]) == 1
    assert open_tail([_said("m1"), _said("m2", "c1"), _answer("c1"), _said("m3")]) == 3


def test_a_call_answered_in_the_carried_part_is_carried_with_its_answer():
    fragments = [_said("m1"), _said("m2", "c1"), _said("m3"), _said("m4"), _said("m4"), _answer("c1")]
    assert open_tail(fragments) == 1  # m4 is open, c1's answer goes with it, so m2 too


def test_a_batch_is_never_emptied_and_looks_back_only_so_far():
    assert open_tail([_said("m1")]) == 1
    assert open_tail([_said("m1", "c1"), _said("m2"), _answer("c1"), _said("m2")]) == 1  # not 0
    far = [_said("m0", "c0"), *(_said(f"m{n}") for n in range(1, CARRY_MAX + 5))]
    assert open_tail(far) == len(far) - 1  # the unanswered call lies beyond the look-back


def _rewrites(tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> tuple[sqlite3.Connection, int]:
    """Index the home in batches of 40 lines, its text indexed as it is written
    (as for a large source); the statements that wrote a stored message again."""
    real = SourceParse.batches
    monkeypatch.setattr(SourceParse, "batches", lambda self, lines=40: real(self, 40))
    monkeypatch.setattr(sync_module, "DEFER_MAX", 0)
    conn = connect(tmp_path / f"{name}.sqlite")
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    sync(conn, all_adapters(), {"HOME": str(tmp_path / "home")}, tmp_path / "home")
    conn.set_trace_callback(None)
    return conn, sum(s.startswith(("DELETE FROM parts", "UPDATE messages SET role")) for s in statements)


def _search(conn: sqlite3.Connection, query: str) -> list[tuple[str, str]]:
    return [(h.session_key, h.message_id) for h in search(conn, query, limit=10_000).hits]


def test_batches_carrying_open_messages_store_each_once_and_index_the_same(tmp_path, monkeypatch):
    write_claude(tmp_path / "home/.claude/projects/-bench/big.jsonl", 0.4)
    carried, rewrites = _rewrites(tmp_path, "carried", monkeypatch)
    monkeypatch.setattr("agentlog.load.open_tail", len)  # batches cut after their last line
    cut, rewrites_cut = _rewrites(tmp_path, "cut", monkeypatch)
    assert (rewrites, rewrites_cut > 10) == (0, True)
    for conn in (carried, cut):
        conn.execute("INSERT INTO parts_fts (parts_fts, rank) VALUES ('integrity-check', 1)")
    assert index_sessions(carried) == index_sessions(cut) == memory_sessions(tmp_path / "home")
    for query in ("refactor", "parser", "the"):
        assert _search(carried, query) == _search(cut, query) != []
