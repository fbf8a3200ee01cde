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
