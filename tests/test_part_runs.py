"""Runs of part rowids (``part_runs``, ``agentlog.index.runs``): every part's session as
its message says, after a first sync, appends, re-reads, deletions, pruning (rowids
used again) and the migration; and the grouped rank walk that reads them (block
sessions from the runs, whole blocks of one session counted, not read, one new
session keyed by its best hits only) gives exactly the pages of the walk that looks
every hit up (issues #15, #16)."""

from __future__ import annotations

import itertools
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agentlog.adapters import all_adapters
from agentlog.index import db, rank, runs
from agentlog.index import search as search_module
from agentlog.index.archive import prune
from agentlog.index.blocks import First, Walked, firsts_of
from agentlog.index.db import _statements
from agentlog.index.schema import MIGRATIONS
from agentlog.index.search import search
from agentlog.index.sync import sync

WINDOW = 5


def _run(conn: sqlite3.Connection, sql: str, params: tuple[object, ...]) -> list[tuple[Any, ...]]:
    return conn.execute(sql, params).fetchall()


def _session(project: Path, name: str, prompts: int, word: str = "alpha", start: int = 0) -> Path:
    """A Claude Code session ``name`` of ``prompts`` prompts and answers (from number
    ``start``), each holding ``word`` once or twice (unequal scores) with other words."""
    path = project / f"{name}.jsonl"
    rows = []
    for n in range(start, start + prompts):
        line: dict[str, Any] = {"sessionId": name, "parentUuid": None, "cwd": "/work/r"}
        stamp = f"2026-05-0{1 + n % 3}T10:{n % 60:02d}:00Z"
        text = " ".join([word] * (1 + n % 2) + ["beta"] * (n % 4) + ["gamma"] * (n % 3))
        rows.append({**line, "uuid": f"{name}-u{n}", "timestamp": stamp, "type": "user",
                     "message": {"role": "user", "content": text}})  # fmt: skip
        message = {"id": f"{name}-m{n}", "role": "assistant", "model": "claude-sonnet-4-5",
                   "content": [{"type": "text", "text": f"{word} {text} delta"}],
                   "usage": {"input_tokens": 1, "output_tokens": 1}}  # fmt: skip
        rows.append({**line, "uuid": f"{name}-a{n}", "timestamp": stamp, "type": "assistant", "message": message})
    with path.open("a") as f:
        f.write("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _sync(conn: sqlite3.Connection, home: Path) -> None:
    sync(conn, all_adapters(), {"HOME": str(home)}, home)


def _check(conn: sqlite3.Connection) -> int:
    """Assert the rule: runs do not overlap, and every part's session from the runs
    (:func:`agentlog.index.runs.spans_of`) is its message's; the parts checked."""
    covering = conn.execute("SELECT first_rowid, last_rowid FROM part_runs ORDER BY first_rowid").fetchall()
    assert all(last >= first for first, last in covering)
    assert all(a[1] < b[0] for a, b in itertools.pairwise(covering))
    truth = conn.execute(
        "SELECT p.rowid, m.session_key FROM parts p JOIN messages m ON m.rowid = p.message_rowid ORDER BY p.rowid DESC"
    ).fetchall()
    rowids = [rowid for rowid, _ in truth]
    got: list[str] = []
    for key, start, end in runs.spans_of(conn, _run, rowids):
        assert start == len(got) and end > start
        got += [key] * (end - start)
    assert got == [key for _, key in truth]
    for rowid, key in truth[:: max(1, len(truth) // 50)]:  # and one hit at a time
        assert runs.spans_of(conn, _run, [rowid]) == [(key, 0, 1)]
    session_of = dict(truth)
    starts = [first for (first,) in conn.execute("SELECT first_rowid FROM part_runs ORDER BY 1 DESC")]
    sparse = [rowid for rowid in starts[::2] if rowid in session_of]  # fewer hits than runs: looked up each
    assert len(sparse) >= 2 and len(starts) > len(sparse)
    got = []
    for key, start, end in runs.spans_of(conn, _run, sparse):
        assert start == len(got) and end > start
        got += [key] * (end - start)
    assert got == [session_of[rowid] for rowid in sparse]
    return len(truth)


@pytest.fixture
def home(tmp_path):
    project = tmp_path / "home/.claude/projects/-r"
    project.mkdir(parents=True)
    for s, prompts in enumerate((3, 9, 1, 14, 6)):
        _session(project, f"s{s}", prompts)
    return tmp_path / "home"


def test_runs_follow_every_write(home, tmp_path):
    conn = db.connect(tmp_path / "index.sqlite")
    _sync(conn, home)
    assert _check(conn) == 66
    assert conn.execute("SELECT count(*), count(DISTINCT session_key) FROM part_runs").fetchone() == (5, 5)
    project = home / ".claude/projects/-r"
    _session(project, "s1", 4, start=9)  # appended: parts of s1 above every other
    _session(project, "s5", 2)
    _sync(conn, home)
    assert _check(conn) == 66 + 12
    rewritten = project / "s3.jsonl"
    rewritten.unlink()
    _session(project, "s3", 5, word="omega")  # not an append: read again whole
    _sync(conn, home)
    assert _check(conn) == 66 + 12 - 28 + 10
    top = conn.execute("SELECT max(rowid) FROM parts").fetchone()[0]
    rewritten.unlink()  # its parts hold the largest rowids: pruned, then used again by new parts
    _sync(conn, home)
    assert [a.path for a in prune(conn)] == [str(rewritten)]
    assert conn.execute("SELECT max(rowid) FROM parts").fetchone()[0] == top - 10
    _session(project, "s6", 8)
    _session(project, "s0", 1, start=3)
    _sync(conn, home)
    reused = "SELECT min(p.rowid) FROM parts p JOIN messages m ON m.rowid = p.message_rowid WHERE m.session_key = ?"
    assert conn.execute(reused, ("claude_code:s6",)).fetchone()[0] <= top  # a pruned part's rowid, now s6's
    assert _check(conn) == 66 + 12 - 28 + 10 - 10 + 16 + 2
    sessions = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
    assert sessions == 6 and conn.execute("SELECT count(*) FROM part_runs").fetchone()[0] >= sessions


def test_the_migration_makes_the_runs_of_any_index(home, tmp_path):
    conn = db.connect(tmp_path / "index.sqlite")
    _sync(conn, home)
    # parts of one session deleted in the middle, and one session's parts moved to rowids above the others
    conn.execute(
        "DELETE FROM parts WHERE rowid IN (SELECT p.rowid FROM parts p JOIN messages m ON m.rowid = p.message_rowid "
        "WHERE m.session_key = 'claude_code:s3' AND m.id IN ('s3-u4', 's3-m8'))"
    )
    top = conn.execute("SELECT max(rowid) FROM parts").fetchone()[0]
    conn.execute(
        f"UPDATE parts SET rowid = rowid + {top} WHERE message_rowid IN (SELECT rowid FROM messages "
        "WHERE session_key = 'claude_code:s1' AND (id LIKE 's1-_4' OR id LIKE 's1-_7'))"
    )
    (migration,) = [m for m in MIGRATIONS if "CREATE TABLE IF NOT EXISTS part_runs" in m]
    for statement in _statements(migration):
        conn.execute(statement)
    made = conn.execute("SELECT first_rowid, last_rowid, session_key FROM part_runs ORDER BY 1").fetchall()
    by_session = [key for _, _, key in made]
    # s3 cut at its two gaps; s1 at the two prompts moved, and those two apart (not consecutive)
    assert [by_session.count(f"claude_code:s{s}") for s in range(5)] == [1, 5, 1, 3, 1]
    assert _check(conn) == 66 - 2


def test_a_part_no_run_covers_is_looked_up(home, tmp_path):
    conn = db.connect(tmp_path / "index.sqlite")
    _sync(conn, home)
    conn.execute("DELETE FROM part_runs WHERE session_key IN ('claude_code:s1', 'claude_code:s4')")
    assert _check(conn) == 66
    truth = conn.execute(
        "SELECT p.rowid, m.session_key FROM parts p JOIN messages m ON m.rowid = p.message_rowid ORDER BY p.rowid DESC"
    ).fetchall()
    held = [None if key in ("claude_code:s1", "claude_code:s4") else key for _, key in truth]
    assert held.count(None) == 18 + 12
    assert runs._each(conn, _run, [rowid for rowid, _ in truth]) == [(key, i, i + 1) for i, key in enumerate(held)]
    assert runs.run_of(conn, _run, 1) == runs.PartRun(1, 6, "claude_code:s0")
    with pytest.raises(KeyError):
        runs.spans_of(conn, _run, [10_000])


class _Spy:
    """Counts the whole blocks the walk skipped and the hits it keyed."""

    def __init__(self) -> None:
        self.skipped = 0
        self.keyed = 0


def _looked_up_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk as it was before the runs: each block's sessions looked up hit by hit,
    every block read, each block's new sessions ranked apart, every hit of theirs keyed."""

    def sessions(self: Any, before: int | None) -> Walked:
        bound = "" if before is None else f" AND rowid < {int(before)}"
        rows = self.budget.run(
            self.conn,
            f"""SELECT f.rowid, m.session_key FROM (
                SELECT rowid FROM parts_fts WHERE parts_fts MATCH ?{bound} ORDER BY rowid DESC LIMIT {self.window}) f
            JOIN parts p ON p.rowid = f.rowid JOIN messages m ON m.rowid = p.message_rowid ORDER BY f.rowid DESC""",
            (self.match,),
        )
        return Walked([r[0] for r in rows], [(key, i, i + 1) for i, (_, key) in enumerate(rows)])

    def firsts(self: Any, parts: list[dict[int, str]], wanted: int) -> list[list[First]]:
        out = []
        for fresh in parts:  # each block's part ranked on its own, every hit keyed
            lowest, highest = min(fresh), max(fresh)
            (count,) = self.conn.execute(
                "SELECT count(*) FROM parts_fts WHERE parts_fts MATCH ? AND rowid BETWEEN ? AND ?",
                (self.match, lowest, highest),
            ).fetchone()
            out.append(firsts_of(self(0, highest + 1, None, count).hits, fresh))
        return out

    monkeypatch.setattr(search_module._IndexBlocks, "sessions", sessions)
    monkeypatch.setattr(search_module._IndexBlocks, "whole_blocks", lambda self, before: None)
    monkeypatch.setattr(search_module._IndexBlocks, "firsts", firsts)


def _pages(conn: sqlite3.Connection, query: str, limit: int, **filters: Any) -> list[Any]:
    out: list[Any] = []
    offset: int | None = 0
    while offset is not None:
        page = search(conn, query, limit=limit, offset=offset, by_session=True, **filters)
        out.append((page.total, page.total_exact, page.note))
        out += [(h.session_key, h.message_id, h.part_type, h.rank, h.session_hits, h.snippet) for h in page.hits]
        offset = page.next_offset
    return out


@pytest.mark.parametrize("scorer", ["builtin", "apsw"])
def test_the_grouped_walk_equals_the_walk_that_looks_every_hit_up(home, tmp_path, monkeypatch, scorer):
    project = home / ".claude/projects/-r"
    _session(project, "s1", 6, start=9)  # s1 in two runs, s2's word in none of the newest
    _session(project, "s2", 3, word="beta", start=1)
    _session(project, "s7", 2)
    conn = db.connect(tmp_path / "index.sqlite")
    _sync(conn, home)
    monkeypatch.setattr(search_module, "RANK_WINDOW", WINDOW)
    monkeypatch.setattr(search_module, "TOTAL_CAP", 20)
    if scorer == "apsw":
        pytest.importorskip("apsw")
        monkeypatch.setattr(rank, "_KEPT", {})
        monkeypatch.setattr(rank, "SCORE_S", -1.0)  # always the apsw scores
    else:
        monkeypatch.setattr(rank, "_kept", lambda conn: None)
    spy = _Spy()
    whole, keys = search_module._IndexBlocks.whole_blocks, search_module.hit_keys

    def counted_whole(self: Any, before: int) -> Any:
        found = whole(self, before)
        spy.skipped += 0 if found is None else found[1]
        return found

    def counted_keys(conn: Any, run: Any, rowids: Any) -> Any:
        rows = keys(conn, run, rowids)
        spy.keyed += len(rows)
        return rows

    monkeypatch.setattr(search_module._IndexBlocks, "whole_blocks", counted_whole)
    monkeypatch.setattr(search_module, "hit_keys", counted_keys)
    cases = [("alpha", {}), ("beta", {}), ('"alpha beta"', {}), ("gam*", {}), ("alpha", {"role": "user"}), ("delta", {})]
    got = {(q, limit, str(kw)): _pages(conn, q, limit, **kw) for q, kw in cases for limit in (1, 2, 3, 8)}
    assert spy.skipped >= 20 * WINDOW  # whole blocks were counted, not read
    keyed = spy.keyed
    monkeypatch.undo()
    monkeypatch.setattr(search_module, "RANK_WINDOW", WINDOW)
    monkeypatch.setattr(search_module, "TOTAL_CAP", 20)
    if scorer == "apsw":
        monkeypatch.setattr(rank, "_KEPT", {})
        monkeypatch.setattr(rank, "SCORE_S", -1.0)
    else:
        monkeypatch.setattr(rank, "_kept", lambda conn: None)
    _looked_up_walk(monkeypatch)
    spy.keyed = 0
    monkeypatch.setattr(search_module, "hit_keys", counted_keys)
    expected = {(q, limit, str(kw)): _pages(conn, q, limit, **kw) for q, kw in cases for limit in (1, 2, 3, 8)}
    assert got == expected
    assert keyed * 3 < spy.keyed * 2  # and fewer hits were keyed
    holding = {key for (key,) in conn.execute(
        "SELECT DISTINCT m.session_key FROM parts_fts JOIN parts p ON p.rowid = parts_fts.rowid "
        "JOIN messages m ON m.rowid = p.message_rowid WHERE parts_fts MATCH 'alpha'")}  # fmt: skip
    assert len(holding) == 6 and sorted(r[0] for r in got[("alpha", 1, "{}")] if len(r) == 6) == sorted(holding)


@pytest.mark.parametrize("filters", [{}, {"role": "user"}])
def test_sessions_new_to_one_block_tied_on_score_go_newest_first(tmp_path, filters):
    """Two sessions whose best hits score the same: the one whose hits in the block
    are newer comes first (its weaker hit is its newest), not the one whose best hit
    is newer, nor the first session key."""
    project = tmp_path / "home/.claude/projects/-r"
    project.mkdir(parents=True)
    for name, times in (("zb", ("10:00", "12:00")), ("za", ("11:00", "10:30"))):
        rows = [
            {"sessionId": name, "uuid": f"{name}-{n}", "parentUuid": None, "cwd": "/work/r", "type": "user",
             "timestamp": f"2026-05-01T{stamp}:00Z", "message": {"role": "user", "content": text}}
            for n, (stamp, text) in enumerate(zip(times, ("zeta zeta", "zeta filler filler filler"), strict=True))
        ]
        (project / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    conn = db.connect(tmp_path / "index.sqlite")
    _sync(conn, tmp_path / "home")
    page = search(conn, "zeta", by_session=True, **filters)
    assert [(h.session_key, h.message_id, h.session_hits) for h in page.hits] == [
        ("claude_code:zb", "zb-0", 2),
        ("claude_code:za", "za-0", 2),
    ]
    assert page.hits[0].rank == page.hits[1].rank
    pages = [search(conn, "zeta", by_session=True, limit=1, offset=n, **filters).hits for n in (0, 1)]
    assert [(h.session_key, h.message_id, h.session_hits) for hits in pages for h in hits] == [
        ("claude_code:zb", "zb-0", 2),
        ("claude_code:za", "za-0", 2),
    ]  # a page of one session: the tie at its edge still ordered by time
