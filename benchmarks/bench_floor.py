"""The floor of a full index: the least work any design of agentlog's must do to
index a Claude Code file, in Python and SQLite (issue #17: is a full index at
0.2x agentsview's ``sync`` reachable at all?).

    python benchmarks/bench_floor.py FILE.jsonl INDEX.sqlite   # prints JSON: CPU s per step
    python benchmarks/bench_index.py --only floor --mb 300     # beside agentlog's index and agentsview's sync

On one Claude Code file of the shapes :func:`corpus.claude_lines` writes (user
prompts, assistant lines of one content block each, tool results as user lines
with ``toolUseResult``), in the batches :func:`agentlog.load.jsonl_batches`
reads (2,000 lines, doubling up to 25,000), one process, one thread:

``decode``
    reading the lines and ``msgspec``-decoding each into minimal typed structs
    (:class:`Line`: only the fields the index stores);
``assemble``
    what no design avoids: a message per prompt and per API response (its lines
    merged by ``message.id``, the last usage copy kept), each tool result put into
    its call (``toolUseResult`` kept without the copy of the output it holds, as
    the index keeps it), and the row tuples: ``messages``, ``parts`` (a plain text
    part's text in ``text``, any other part packed in ``data``), ``usage``, and the
    full-text row of each part: the same search text agentlog indexes
    (:func:`agentlog.index.fts.index_text`; a tool call's normalised name, its
    input as JSON, its output);
``fts``
    ``executemany`` of those rows into ``parts_fts``;
``rows``
    ``executemany`` of the ``messages``, ``parts`` and ``usage`` rows;
``commit``
    the one commit (FTS5 writes its last pending terms then).

The tables are agentlog's own: the index file is made by
:func:`agentlog.index.db.connect` (its schema, indexes, FTS5 table, tokenizer,
pragmas), so every row costs what it costs there.  Left out, as derived data a
design could compute otherwise: session headers beyond one row, titles and
live status, usage roll-ups, the parser's saved state.  :func:`compare` checks
that the floor indexed what agentlog's index holds: the same counts of rows and
of tokens in each full-text column.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec

from agentlog.adapters.claude_code import tool_name
from agentlog.index.db import connect
from agentlog.index.fts import index_text
from agentlog.rules import session_key

BATCH_FIRST, BATCH_MAX = 2_000, 25_000
"""Lines of the first batch and of the largest (:func:`agentlog.load.jsonl_batches`)."""


class CacheCreation(msgspec.Struct):
    ephemeral_5m_input_tokens: int = 0
    ephemeral_1h_input_tokens: int = 0


class ServerToolUse(msgspec.Struct):
    web_search_requests: int = 0


class Usage(msgspec.Struct):
    input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    output_tokens: int = 0
    cache_creation: CacheCreation | None = None
    server_tool_use: ServerToolUse | None = None
    service_tier: str | None = None


class Text(msgspec.Struct, tag="text", tag_field="type"):
    text: str


class Thinking(msgspec.Struct, tag="thinking", tag_field="type"):
    thinking: str


class ToolUse(msgspec.Struct, tag="tool_use", tag_field="type"):
    id: str
    name: str
    input: msgspec.Raw
    """As written (compact JSON): the search text and the stored input."""


class ToolResultBlock(msgspec.Struct, tag="tool_result", tag_field="type"):
    tool_use_id: str
    content: str | list[dict[str, Any]] = ""
    is_error: bool = False


class Body(msgspec.Struct):
    id: str | None = None
    model: str | None = None
    content: str | list[Text | Thinking | ToolUse | ToolResultBlock] = ""
    usage: Usage | None = None


class Line(msgspec.Struct):
    type: str = ""
    uuid: str | None = None
    sessionId: str | None = None
    timestamp: datetime | None = None
    isSidechain: bool = False
    message: Body | None = None
    toolUseResult: Any = None


class _Call:
    """A tool call part waiting for (or holding) its result."""

    __slots__ = ("call_id", "input", "name", "output", "owner", "structured", "tool")

    def __init__(self, block: ToolUse, owner: _Message) -> None:
        self.owner = owner
        self.call_id, self.name, self.tool = block.id, block.name, tool_name(block.name)
        self.input = bytes(block.input).decode()
        self.output: str | None = None
        self.structured: Any = None


class _Message:
    __slots__ = ("id", "model", "offset", "open_calls", "parts", "role", "rowid", "sidechain", "stamp", "usage")

    def __init__(self, rowid: int, mid: str, role: str, line: Line, offset: int) -> None:
        self.rowid, self.id, self.role, self.offset = rowid, mid, role, offset
        self.stamp = line.timestamp.isoformat(timespec="microseconds") if line.timestamp else None
        self.model = line.message.model if line.message else None
        self.sidechain = int(line.isSidechain)
        self.parts: list[tuple[str, Any]] = []
        self.usage: Usage | None = None
        self.open_calls = 0


_PACK = msgspec.msgpack.Encoder().encode
_OUTPUT_COPY = "\x00agentlog:output"


def _lean(structured: Any, output: str) -> Any:
    """``toolUseResult`` without the strings that repeat the output (as the index keeps it)."""
    if isinstance(structured, dict):
        return {k: {_OUTPUT_COPY: [0, len(output)]} if v == output else v for k, v in structured.items()}
    return structured


def _part_rows(
    m: _Message, part_rowid: int, parts: list[tuple[Any, ...]], fts: list[tuple[int, str | None, str | None]]
) -> int:
    """Append ``m``'s ``parts`` rows and full-text rows; returns the next part rowid."""
    for idx, (kind, value) in enumerate(m.parts):
        if kind == "text":
            parts.append((part_rowid, m.rowid, idx, "text", None, None, value, None, 1))
            fts.append((part_rowid, index_text(value), None))
        elif kind == "reasoning":
            parts.append((part_rowid, m.rowid, idx, "reasoning", None, None, "", _PACK((kind, value)), 2))
            fts.append((part_rowid, None, index_text(value)))
        else:
            call: _Call = value
            output = call.output or ""
            data = _PACK(("tool_call", call.call_id, call.tool, call.name, call.input, output, _lean(call.structured, output)))
            parts.append((part_rowid, m.rowid, idx, "tool_call", call.tool, call.call_id, "", data, 1))
            text = "\n".join(p for p in (call.tool, call.input, call.output) if p)
            fts.append((part_rowid, index_text(text), None))
        part_rowid += 1
    return part_rowid


def _batches(path: Path) -> Iterator[list[tuple[int, bytes]]]:
    """``(offset, line)`` in batches of :data:`BATCH_FIRST` lines doubling to :data:`BATCH_MAX`."""
    limit, out, offset = BATCH_FIRST, [], 0
    with open(path, "rb") as fh:
        for line in fh:
            out.append((offset, line))
            offset += len(line)
            if len(out) >= limit:
                yield out
                out, limit = [], min(BATCH_MAX, 2 * limit)
    if out:
        yield out


def floor(path: Path, index: Path) -> dict[str, float]:
    """Index ``path`` the least way into a new agentlog index at ``index``: CPU
    seconds of each step (see the module docstring) and ``wall``."""
    conn = connect(index)
    conn.execute("PRAGMA mmap_size = 0")  # as a sync sets it (agentlog.index.sync.SYNC_MMAP_SIZE)
    conn.execute("INSERT INTO sources (path, agent) VALUES (?, 'claude_code')", (str(path),))
    decode = msgspec.json.Decoder(Line).decode
    cpu = dict.fromkeys(("decode", "assemble", "fts", "rows", "commit"), 0.0)
    clock = time.process_time
    start_wall = time.perf_counter()
    conn.execute("BEGIN")
    key: str | None = None
    by_id: dict[str, _Message] = {}
    calls: dict[str, _Call] = {}
    pending: list[_Message] = []  # in rowid order, not yet written
    next_rowid = part_rowid = first_part = 1
    for batch in _batches(path):
        t0 = clock()
        lines = [(offset, decode(line)) for offset, line in batch]
        t1 = clock()
        for offset, line in lines:
            body = line.message
            if body is None or line.type not in ("user", "assistant"):
                continue
            if key is None:
                key = session_key("claude_code", line.sessionId or path.stem)
                conn.execute(
                    "INSERT INTO sessions (key, agent, id, source_id, kind) VALUES (?, 'claude_code', ?, 1, 'main')",
                    (key, line.sessionId or path.stem),
                )
            content = body.content
            if line.type == "user":
                if isinstance(content, str):
                    m = _Message(next_rowid, line.uuid or "", "user", line, offset)
                    next_rowid += 1
                    m.parts.append(("text", content))
                    pending.append(m)
                    continue
                for block in content:
                    if isinstance(block, ToolResultBlock) and (call := calls.pop(block.tool_use_id, None)):
                        c = block.content
                        call.output = c if isinstance(c, str) else "\n".join(b.get("text", "") for b in c)
                        call.structured = line.toolUseResult
                        call.owner.open_calls -= 1
                continue
            mid = body.id or line.uuid or ""
            found = by_id.get(mid)
            if found is None:
                found = by_id[mid] = _Message(next_rowid, mid, "assistant", line, offset)
                next_rowid += 1
                pending.append(found)
            m = found
            m.usage = body.usage or m.usage  # the last copy: its output_tokens grew
            for block in content if isinstance(content, list) else ():
                if isinstance(block, Text):
                    m.parts.append(("text", block.text))
                elif isinstance(block, Thinking):
                    m.parts.append(("reasoning", block.thinking))
                elif isinstance(block, ToolUse):
                    call = calls[block.id] = _Call(block, m)
                    m.open_calls += 1
                    m.parts.append(("call", call))
        # write what no later line changes: the messages before the first one still open
        cut = next((n for n, m in enumerate(pending) if m.open_calls or m is pending[-1]), len(pending))
        ready, pending = pending[:cut], pending[cut:]
        rows, part_rowid = _rows(ready, key, part_rowid)
        for m in ready:
            by_id.pop(m.id, None)
        del lines, batch
        t2 = clock()
        _write(conn, rows, cpu)
        cpu["decode"] += t1 - t0
        cpu["assemble"] += t2 - t1
    rows, part_rowid = _rows(pending, key, part_rowid)  # the messages still held at the end
    _write(conn, rows, cpu)
    t0 = clock()
    conn.execute(
        "INSERT INTO part_runs (first_rowid, last_rowid, session_key) VALUES (?, ?, ?)", (first_part, part_rowid - 1, key)
    )
    conn.execute("COMMIT")
    cpu["commit"] += clock() - t0
    conn.close()
    return {**cpu, "sum": sum(cpu.values()), "wall": time.perf_counter() - start_wall}


_Rows = tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[int, str | None, str | None]]]


def _rows(ready: list[_Message], key: str | None, part_rowid: int) -> tuple[_Rows, int]:
    """The ``messages``, ``parts``, ``usage`` and ``parts_fts`` rows of ``ready``; the next part rowid."""
    message_rows: list[tuple[Any, ...]] = []
    part_rows: list[tuple[Any, ...]] = []
    usage_rows: list[tuple[Any, ...]] = []
    fts_rows: list[tuple[int, str | None, str | None]] = []
    for m in ready:
        message_rows.append((m.rowid, key, 1, m.id, m.role, m.stamp, m.model, "[]", m.sidechain, m.offset, 0))
        part_rowid = _part_rows(m, part_rowid, part_rows, fts_rows)
        if (u := m.usage) is not None:
            split = u.cache_creation
            cw1h = split.ephemeral_1h_input_tokens if split else 0
            web = u.server_tool_use.web_search_requests if u.server_tool_use else 0
            tier = u.service_tier if u.service_tier not in (None, "standard") else None
            usage_rows.append(
                (m.rowid, u.input_tokens, u.cache_read_input_tokens, u.cache_creation_input_tokens - cw1h,
                 cw1h, u.output_tokens, 0, web, None, None, tier)
            )  # fmt: skip
    return (message_rows, part_rows, usage_rows, fts_rows), part_rowid


def _write(conn: sqlite3.Connection, rows: _Rows, cpu: dict[str, float]) -> None:
    """Insert ``rows``, adding the CPU seconds to ``cpu["fts"]`` and ``cpu["rows"]``."""
    message_rows, part_rows, usage_rows, fts_rows = rows
    t0 = time.process_time()
    conn.executemany("INSERT INTO parts_fts (rowid, text, reasoning) VALUES (?, ?, ?)", fts_rows)
    t1 = time.process_time()
    conn.executemany(
        "INSERT INTO messages (rowid, session_key, source_id, id, role, timestamp, model, flags,"
        " is_sidechain, offset, hidden) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        message_rows,
    )
    conn.executemany(
        "INSERT INTO parts (rowid, message_rowid, idx, type, tool, call_id, text, data, searchable)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        part_rows,
    )
    conn.executemany("INSERT INTO usage VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", usage_rows)
    cpu["fts"] += t1 - t0
    cpu["rows"] += time.process_time() - t1


def _census(index: Path) -> dict[str, int]:
    """Rows of ``messages``, ``parts``, ``usage`` and tokens of each ``parts_fts``
    column in the index at ``index`` (opened read-only)."""
    conn = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    try:
        out = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("messages", "parts", "usage")}
        conn.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, parts_fts, col)")
        for col, tokens, terms in conn.execute("SELECT col, sum(cnt), count(*) FROM temp.vocab GROUP BY col"):
            out[f"{col} tokens"], out[f"{col} terms"] = tokens, terms
        out["usage tokens"] = conn.execute(
            "SELECT sum(input_tokens + cache_read_tokens + cache_write_5m_tokens + output_tokens) FROM usage"
        ).fetchone()[0]
        return out
    finally:
        conn.close()


def compare(floor_index: Path, agentlog_index: Path) -> list[str]:
    """What the floor's index holds differently from agentlog's (:func:`_census`):
    ``"what: floor N, agentlog M"`` lines, none when it indexed the same."""
    mine, theirs = _census(floor_index), _census(agentlog_index)
    return [
        f"{name}: floor {mine.get(name)}, agentlog {theirs.get(name)}"
        for name in sorted(set(mine) | set(theirs))
        if mine.get(name) != theirs.get(name)
    ]


if __name__ == "__main__":
    print(json.dumps(floor(Path(sys.argv[1]), Path(sys.argv[2]))))
