"""The reader layer: streaming lines, half-written tails, read-only SQLite."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import msgspec

from agentlog.adapters import Document, DocumentAdapter, DocumentResult, SourceRef
from agentlog.load import build_sessions, parse_source
from agentlog.model import Message, Session, TextPart
from agentlog.readers import LineReader, read_sqlite_tables


def test_lines_across_chunk_boundaries_and_crlf(tmp_path):
    path = tmp_path / "a.jsonl"
    lines = [b'{"n":%d,"pad":"%s"}' % (i, b"x" * (i * 7 % 50)) for i in range(200)]
    path.write_bytes(b"\r\n".join(lines) + b"\r\n")
    reader = LineReader(path, chunk_size=64)
    got = list(reader)
    assert [line for _, line in got] == lines
    assert all(path.read_bytes()[o : o + len(line)] == line for o, line in got)
    assert reader.consumed == path.stat().st_size and reader.tail_bytes == 0


def test_half_written_last_line_is_left_for_next_read(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":')
    reader = LineReader(path)
    assert [line for _, line in reader] == [b'{"a":1}']
    assert (reader.consumed, reader.tail_bytes) == (8, 5)
    path.write_bytes(b'{"a":1}\n{"b":2}\n')
    again = LineReader(path, start=reader.consumed)
    assert list(again) == [(8, b'{"b":2}')]


def test_complete_last_line_without_newline_is_read(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}')
    reader = LineReader(path)
    assert [line for _, line in reader] == [b'{"a":1}', b'{"b":2}']
    assert reader.consumed == 15


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir()}


def test_sqlite_read_only_without_and_with_wal(tmp_path):
    db = tmp_path / "store.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE session (id TEXT, title TEXT)")
    conn.execute("INSERT INTO session VALUES ('s1', 'first')")
    conn.commit()
    conn.close()
    before = _snapshot(tmp_path)
    assert read_sqlite_tables(db, ["session", "missing"]) == {"session": [{"id": "s1", "title": "first"}]}
    assert _snapshot(tmp_path) == before  # no -shm, no -journal, no mtime change

    # The owner is running in WAL mode with un-checkpointed rows.
    owner = sqlite3.connect(db)
    owner.execute("PRAGMA journal_mode=WAL")
    owner.execute("PRAGMA wal_autocheckpoint=0")
    owner.execute("INSERT INTO session VALUES ('s2', 'second')")
    owner.commit()
    before = _snapshot(tmp_path)
    rows = read_sqlite_tables(db, ["session"])["session"]
    assert [r["id"] for r in rows] == ["s1", "s2"]
    assert _snapshot(tmp_path) == before
    owner.close()


class _Notes(DocumentAdapter):
    """A minimal document format for the test: {"id", "notes": [text…]}."""

    slug = "notes"
    display_name = "Notes"
    parser_version = 1
    source_format = "json"

    def default_roots(self, env, home):
        return []

    def discover(self, root):
        return iter(())

    def sniff(self, name, head):
        return 0.0

    def parse_document(self, ref: SourceRef, doc: Document) -> DocumentResult:
        data = msgspec.json.decode(doc.data)
        header = Session(key=f"notes:{data['id']}", agent="notes", id=data["id"], sources=[ref.path])
        header.diagnostics.use(len(data["notes"]))
        fragments = [
            (data["id"], Message(id=f"{data['id']}@{i}", role="user", parts=[TextPart(text=t)]))
            for i, t in enumerate(data["notes"])
        ]
        return DocumentResult(headers=[header], fragments=fragments)


def test_document_adapters_are_parsed_whole(tmp_path):
    path = tmp_path / "n.json"
    path.write_text('{"id": "n1", "notes": ["one", "two"]}')
    adapter = _Notes()
    parsed = parse_source(adapter, SourceRef(agent="notes", path=str(path)))
    assert parsed.consumed == os.path.getsize(path) and parsed.state == b""
    (session,) = build_sessions([(adapter, parsed)])
    assert [m.text for m in session.messages] == ["one", "two"]
    assert session.diagnostics.records_used == 2
