"""LineReader against a plain reference split, on random files read in tiny
chunks: lines longer than a chunk (held as pieces, joined once) come out whole,
with their offsets, ``\\r\\n`` endings trimmed, a half-written tail held back."""

from __future__ import annotations

import json
import random

from agentlog.readers import LineReader


def _reference(data: bytes, start: int) -> tuple[list[tuple[int, bytes]], int, int]:
    out, pos = [], start
    while True:
        nl = data.find(b"\n", pos)
        if nl < 0:
            break
        line = data[pos:nl]
        out.append((pos, line[:-1] if line.endswith(b"\r") else line))
        pos = nl + 1
    tail = data[pos:]
    try:
        json.loads(tail)
        complete = bool(tail)
    except ValueError:
        complete = False
    if complete:
        out.append((pos, tail))
        return out, len(data), 0
    return out, pos, len(tail)


def test_line_reader_equals_a_plain_split_at_every_chunk_size(tmp_path):
    rng = random.Random(18)
    path = tmp_path / "lines.jsonl"
    for case in range(300):
        lines = [
            json.dumps({"n": i, "text": "x" * rng.choice([0, 1, 5, 17, 40, 300])})
            + rng.choice(["\n", "\n", "\r\n"])
            for i in range(rng.randint(0, 12))
        ]
        data = "".join(lines).encode() + rng.choice([b"", b'{"half": ', b'{"whole": 1}', b"\r\n", b"\n\n"])
        path.write_bytes(data)
        start = 0 if case % 3 else rng.randint(0, len(data)) if data else 0
        if start:  # offsets given to a reader are line starts
            start = data.rfind(b"\n", 0, start) + 1
        reader = LineReader(path, start, chunk_size=rng.choice([1, 2, 3, 7, 16, 64, 1 << 20]))
        got = list(reader)
        want, consumed, tail = _reference(data, start)
        assert got == want, (case, data)
        assert (reader.consumed, reader.tail_bytes) == (consumed, tail), (case, data)


def test_a_line_past_the_cap_is_skipped_counted_and_never_held(tmp_path, monkeypatch):
    """A line longer than ``MAX_LINE_BYTES`` is not yielded but counted (``oversized``),
    the lines around it are; with no newline it is the tail, of its whole length.
    ``read_blocks`` (the usage scanner) skips it too.  Every chunk size: the cap
    is met inside a chunk, at its end, and across several."""
    from agentlog import readers

    monkeypatch.setattr(readers, "MAX_LINE_BYTES", 100)
    data = b'{"a":1}\n' + b"x" * 101 + b'\r\n{"b":2}\n' + b"y" * 100 + b'\n' + b"z" * 250
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    wanted = [(0, b'{"a":1}'), (111, b'{"b":2}'), (119, b"y" * 100)]
    for chunk in (1, 7, 64, 100, 101, 4096):
        reader = LineReader(path, chunk_size=chunk)
        assert list(reader) == wanted, chunk
        assert (reader.oversized, reader.tail_bytes, reader.consumed) == (1, 250, 220), chunk
    for size in (1, 8, 64):
        blocks = [(at, block[:end]) for at, block, end in readers.read_blocks(path, size=size)]
        lines = [(at + i, line) for at, block in blocks for i, line in _split(block)]
        assert lines == [(0, b'{"a":1}'), (111, b'{"b":2}'), (119, b"y" * 100)], size


def _split(block: bytes) -> list[tuple[int, bytes]]:
    out, pos = [], 0
    for line in block.split(b"\n")[:-1]:
        out.append((pos, line))
        pos += len(line) + 1
    return out


def test_a_claude_log_with_a_line_past_the_cap_keeps_the_others_and_counts_it(tmp_path, monkeypatch):
    from agentlog import readers
    from agentlog.adapters import get_adapter
    from agentlog.load import build_sessions, parse_source

    monkeypatch.setattr(readers, "MAX_LINE_BYTES", 400)
    line = '{"type":"user","sessionId":"s1","uuid":"u%d","timestamp":"2026-01-01T00:00:0%dZ","message":{"role":"user","content":"%s"}}'
    path = tmp_path / "projects" / "-w" / "s1.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join([line % (1, 1, "hi"), line % (2, 2, "x" * 500), line % (3, 3, "bye")]) + "\n")
    adapter = get_adapter("claude_code")
    (ref,) = [r for r in adapter.discover(tmp_path) if r.path.endswith("s1.jsonl")] or [None]
    parsed = parse_source(adapter, ref)
    (session,) = build_sessions([(adapter, parsed)])
    assert [part.text for m in session.messages for part in m.parts] == ["hi", "bye"]
    assert session.diagnostics.skipped == {"line_too_long": 1}
