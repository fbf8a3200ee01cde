"""Huge records (#17 part 3): a part too long to index whole is stored whole,
written apart from the others (``store._insert_apart``), and indexed up to its
head (:func:`agentlog.index.fts.indexed_head`), the same on insert, delete and
re-read (FTS5's own check against the stored parts)."""

from __future__ import annotations

import pytest

from agentlog.adapters import get_adapter
from agentlog.index import fts, store
from agentlog.index.search import search
from agentlog.index.sync import sync
from fuzz import checks
from test_equivalence import claude_line

CHECK = "INSERT INTO parts_fts (parts_fts, rank) VALUES ('integrity-check', 1)"


def test_the_indexed_head_of_a_long_text_ends_at_a_word(monkeypatch):
    monkeypatch.setattr(fts, "INDEXED_CHARS", 20)
    assert fts.indexed_head("short text") == "short text"
    assert fts.indexed_head("alpha beta gamma delta epsilon") == "alpha beta gamma "
    assert fts.indexed_head("x" * 30) == "x" * 20  # no white space: cut at the bound
    assert fts.index_text("alpha beta gamma delta epsilon") == "alpha beta gamma "


@pytest.mark.parametrize("apart", [True, False], ids=["written apart", "written with the others"])
def test_a_huge_part_is_stored_whole_and_searched_in_its_head(tmp_path, monkeypatch, apart):
    monkeypatch.setattr(fts, "INDEXED_CHARS", 2_000)
    if apart:
        monkeypatch.setattr(store, "HUGE_VALUE", 1_000)
    prompt = "alpha " * 400 + "omega"  # 2,405 characters: "omega" is past the indexed head
    output = "line of output\n" * 200 + "zebra"  # a tool result past the head too
    folder = tmp_path / "home" / ".claude" / "projects" / "-w"
    folder.mkdir(parents=True)
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "cat log"}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": output}
    log = folder / "big.jsonl"
    log.write_text(
        claude_line("big", "u1", "2026-11-01T10:00:00Z", "user", prompt)
        + claude_line("big", "a1", "2026-11-01T10:00:01Z", "assistant", [call], "m1")
        + claude_line("big", "u2", "2026-11-01T10:00:02Z", "user", [result])
    )
    home = tmp_path / "home"
    sessions, _ = checks.load("claude_code", home)
    conn = checks.synced("claude_code", home, tmp_path / "index.sqlite")
    try:
        assert checks.index_view(conn) == checks.memory_view(sessions)
        (session,) = sessions
        assert session.messages[0].text == prompt  # stored whole
        assert [search(conn, w).total for w in ("alpha", "omega", "line", "zebra")] == [1, 0, 1, 0]
        conn.execute(CHECK)
        with open(
            log, "a"
        ) as fh:  # a rewrite of the stored call: its parts deleted from the index, then added
            fh.write(
                claude_line(
                    "big", "a2", "2026-11-01T10:00:03Z", "assistant", [{"type": "text", "text": "done"}], "m1"
                )
            )
        sync(conn, [get_adapter("claude_code")], {"HOME": str(home)}, home)
        conn.execute(CHECK)
        sync(conn, [get_adapter("claude_code")], {"HOME": str(home)}, home, full=True)  # a whole re-read
        conn.execute(CHECK)
        assert [search(conn, w).total for w in ("alpha", "omega", "done")] == [1, 0, 1]
        assert checks.index_view(conn) == checks.memory_view(checks.load("claude_code", home)[0])
    finally:
        conn.close()
