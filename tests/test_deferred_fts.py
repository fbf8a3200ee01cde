"""Full-text rows written once per sync batch (:mod:`agentlog.index.deferred`) give
the index that writing them at once gives: the same terms at the same places, the
same search results, an FTS5 table that passes its integrity check, when copies
of one session in other files are marked replayed within the batch, when a
source of the batch is undone, and when parts that waited are deleted later."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from agentlog.adapters import all_adapters
from agentlog.index import deferred, store, sync
from agentlog.index.db import connect
from agentlog.index.search import search
from conftest import FIXTURES

ADAPTERS = all_adapters()
QUERIES = ["the", "file", "error", "read", "test", "python", "git", "a*"]


def _home(tmp_path: Path) -> Path:
    """Claude Code and Codex fixtures, and copies of Claude sessions under other
    session ids (their calls and prompts are replays of the originals)."""
    home = tmp_path / "home"
    project = home / ".claude/projects/-tmp-project"
    shutil.copytree(FIXTURES / "claude_code", project)
    shutil.copytree(FIXTURES / "codex", home / ".codex/sessions/2025/11/25")
    for n, original in enumerate(sorted(project.glob("*.jsonl"))[:4]):
        lines = []
        for line in original.read_text().splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                lines.append(line)
                continue
            if isinstance(record, dict) and "sessionId" in record:
                record["sessionId"] = f"copy-{n}"
            lines.append(json.dumps(record))
        (project / f"copy-{n}.jsonl").write_text("\n".join(lines) + "\n")
    return home


def _fts(conn: sqlite3.Connection) -> list[tuple[object, ...]]:
    """Every term instance ``parts_fts`` holds (term, part, column, offset), after
    FTS5's integrity check against the parts (raises when they disagree)."""
    conn.execute("INSERT INTO parts_fts (parts_fts, rank) VALUES ('integrity-check', 1)")
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.terms USING fts5vocab(main, parts_fts, 'instance')")
    return conn.execute("SELECT term, doc, col, offset FROM temp.terms ORDER BY 1, 2, 3, 4").fetchall()


def _searches(conn: sqlite3.Connection) -> list[object]:
    pages = [search(conn, q, limit=200) for q in QUERIES]
    return [(p.total, [(h.session_key, h.message_id, h.part_type, h.snippet) for h in p.hits]) for p in pages]


def _index(
    tmp_path: Path, home: Path, name: str, defer: bool, monkeypatch: pytest.MonkeyPatch
) -> sqlite3.Connection:
    monkeypatch.setattr(sync, "DEFER_MAX", sync.DEFER_MAX if defer else 0)
    monkeypatch.setattr(sync, "BATCH_SECONDS", 3600.0)  # every source in one batch
    conn = connect(tmp_path / f"{name}.sqlite")
    report = sync.sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    assert not report.failed
    return conn


def test_rows_inserted_at_the_batch_commit_equal_rows_inserted_at_once(tmp_path, monkeypatch):
    home = _home(tmp_path)
    now = _index(tmp_path, home, "now", False, monkeypatch)
    later = _index(tmp_path, home, "later", True, monkeypatch)
    replayed = later.execute("SELECT COUNT(*) FROM messages WHERE replayed = 1").fetchone()[0]
    assert replayed > 0  # the copies' parts left the text index while their rows waited
    assert later.execute("SELECT COUNT(*) FROM parts WHERE searchable != 0").fetchone()[0] > 100
    assert _fts(later) == _fts(now)
    assert _searches(later) == _searches(now)
    assert all(total for total, _ in _searches(later)[:3])
    # the copies gone: their parts, once waiting, leave the index as parts written at once do
    for copy in (home / ".claude/projects/-tmp-project").glob("copy-*.jsonl"):
        copy.unlink()
    for conn in (now, later):
        sync.sync(conn, ADAPTERS, {"HOME": str(home)}, home)
        conn.execute("DELETE FROM sources WHERE archived_at IS NOT NULL")  # as prune does
    assert _fts(later) == _fts(now)
    assert _searches(later) == _searches(now)


def test_a_source_undone_leaves_no_waiting_row(tmp_path, monkeypatch):
    home = _home(tmp_path)
    bad = sorted((home / ".claude/projects/-tmp-project").glob("*.jsonl"))[2]
    real = store.Store.put_headers

    def failing(self: store.Store, source_id: int, headers: object) -> None:
        path = self.conn.execute("SELECT path FROM sources WHERE id = ?", (source_id,)).fetchone()[0]
        if path == str(bad):
            raise OSError(5, "Input/output error")
        real(self, source_id, headers)  # type: ignore[arg-type]

    after_undo: list[tuple[int, set[int]]] = []  # (rows waiting, those whose part is gone)
    real_undo = sync._Batch.undo

    def undo(self: sync._Batch) -> None:
        real_undo(self)
        waiting = {rowid for rowid in range(1, 100_000) if self.deferred.waits(rowid)}
        parts = {rowid for (rowid,) in self.conn.execute("SELECT rowid FROM parts")}
        after_undo.append((len(waiting), waiting - parts))

    monkeypatch.setattr(store.Store, "put_headers", failing)
    monkeypatch.setattr(sync._Batch, "undo", undo)
    monkeypatch.setattr(sync, "BATCH_SECONDS", 3600.0)
    conn = connect(tmp_path / "later.sqlite")
    report = sync.sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    assert [path for path, _ in report.failed] == [str(bad)]
    [(waiting, gone)] = after_undo
    assert waiting > 0 and gone == set()  # the sources before it wait; nothing of the undone one
    monkeypatch.setattr(store.Store, "put_headers", real)
    bad.unlink()  # the same home without it, indexed at once
    reference = _index(tmp_path, home, "now", False, monkeypatch)
    assert _fts(conn) == _fts(reference)
    assert _searches(conn) == _searches(reference)


def test_nothing_waits_after_a_sync(tmp_path):
    home = _home(tmp_path)
    conn = connect(tmp_path / "index.sqlite")
    sync.sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    assert conn.execute(f"SELECT {deferred.PENDING_SQL}(rowid) FROM parts LIMIT 1").fetchone() == (0,)
    assert conn.execute(f"SELECT MAX({deferred.PENDING_SQL}(rowid)) FROM parts").fetchone() == (0,)
