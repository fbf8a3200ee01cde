"""What a sync notices, at what cost: a rewrite hidden behind a restored mtime
(#12 rule 18) is read again; an unchanged home costs a constant number of queries
whatever its size (#17 part 1)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import msgspec

from agentlog.adapters import all_adapters
from agentlog.index import queries
from agentlog.index.db import connect
from agentlog.index.sync import sync
from agentlog.model import TextPart


def _line(session: str, n: int, text: str) -> str:
    return msgspec.json.encode(
        {
            "type": "user",
            "sessionId": session,
            "uuid": f"{session}-u{n}",
            "timestamp": f"2026-10-01T10:00:{n:02d}Z",
            "cwd": "/tmp/p",
            "message": {"role": "user", "content": text},
        }
    ).decode()


def _write(path: Path, session: str, texts: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(_line(session, n, t) + "\n" for n, t in enumerate(texts)))


def _texts(conn: sqlite3.Connection, key: str) -> list[str]:
    session = queries.get_session(conn, key)
    return [part.text for m in session.messages for part in m.parts if isinstance(part, TextPart)]


def test_a_rewrite_in_place_with_its_mtime_restored_is_read_again(tmp_path):
    home = tmp_path / "home"
    path = home / ".claude/projects/-p/s1.jsonl"
    texts = ["first prompt alpha", "second prompt", "third prompt, the last 64 bytes stay the same"]
    _write(path, "s1", texts)
    conn = connect(tmp_path / "index.sqlite")
    env = {"HOME": str(home)}
    sync(conn, all_adapters(), env, home)
    assert _texts(conn, "claude_code:s1") == texts
    before = os.stat(path)
    # Same size, same tail, other bytes: an editor or a tool rewriting the file in
    # place, then putting the old mtime back.
    edited = ["first prompt omega", *texts[1:]]
    _write(path, "s1", edited)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )
    assert after.st_ctime_ns != before.st_ctime_ns
    report = sync(conn, all_adapters(), env, home)
    assert (report.unchanged, report.appended, report.reparsed) == (0, 0, 1)
    assert _texts(conn, "claude_code:s1") == edited
    again = sync(conn, all_adapters(), env, home)  # and now it is known as it is
    assert (again.unchanged, again.reparsed) == (1, 0)


def test_a_grown_file_is_still_read_from_where_it_stopped(tmp_path):
    home = tmp_path / "home"
    path = home / ".claude/projects/-p/s1.jsonl"
    _write(path, "s1", ["one", "two"])
    conn = connect(tmp_path / "index.sqlite")
    env = {"HOME": str(home)}
    sync(conn, all_adapters(), env, home)
    with open(path, "a") as fh:
        fh.write(_line("s1", 2, "three") + "\n")
    report = sync(conn, all_adapters(), env, home)
    assert (report.appended, report.reparsed, report.bytes_parsed) == (1, 0, len(_line("s1", 2, "three")) + 1)
    assert _texts(conn, "claude_code:s1") == ["one", "two", "three"]


def _statements(conn: sqlite3.Connection, home: Path) -> tuple[int, int]:
    """(SQL statements run, sources unchanged) by a sync of ``home``."""
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        report = sync(conn, all_adapters(), {"HOME": str(home)}, home)
    finally:
        conn.set_trace_callback(None)
    return len(seen), report.unchanged


def test_an_unchanged_sync_runs_the_same_queries_for_10_files_as_for_60(tmp_path):
    counts = []
    for files in (10, 60):
        home = tmp_path / f"home{files}"
        for n in range(files):
            _write(home / f".claude/projects/-p{n % 3}/s{n}.jsonl", f"s{n}", [f"prompt {n}"])
            _write(home / f".codex/sessions/2026/10/01/rollout-2026-10-01T10-00-00-{n}.jsonl", f"c{n}", ["x"])
        conn = connect(tmp_path / f"index{files}.sqlite")
        sync(conn, all_adapters(), {"HOME": str(home)}, home)
        counts.append(_statements(conn, home))
    assert counts[1][1] == 120 and counts[0][1] == 20
    assert counts[0][0] == counts[1][0]
