"""The tool calls that may have touched a file, out of the index (the rule of
which file a call touched is :mod:`agentlog.touched`)."""

from __future__ import annotations

import posixpath
import sqlite3
from collections.abc import Iterator
from datetime import datetime

import msgspec

from agentlog.index.queries import EVERY_SESSION, _session_filters
from agentlog.index.stored import stored
from agentlog.model import Part, ToolCallPart
from agentlog.query import SessionFilter
from agentlog.touched import FILE_TOOLS


class FileCall(msgspec.Struct, frozen=True):
    """A file tool call: its session, the session's folder, the message it is in
    (id, time) and the call."""

    session_key: str
    cwd: str | None
    message_id: str
    timestamp: datetime | None
    call: ToolCallPart


def file_calls(
    conn: sqlite3.Connection, name: str, where: SessionFilter = EVERY_SESSION
) -> Iterator[FileCall]:
    """The ``read``/``write``/``edit`` calls whose stored part holds the last
    component of ``name`` (a cheap filter on the packed bytes, where msgpack and
    JSON both keep a string's UTF-8 as is; the caller applies
    :func:`agentlog.touched.path_matches`) in the sessions ``where`` keeps,
    newest message first.  Visible, not replayed messages only."""
    base = posixpath.basename(name.strip().replace("\\", "/").rstrip("/"))
    if not base:
        return
    clauses, params = _session_filters(conn, where)
    marks = ", ".join("?" for _ in FILE_TOOLS)
    sql = f"""SELECT s.key, s.cwd, m.id, m.timestamp, p.data
        FROM parts p JOIN messages m ON m.rowid = p.message_rowid
        JOIN sessions s ON s.key = m.session_key JOIN sources src ON src.id = s.source_id
        WHERE p.type = 'tool_call' AND p.tool IN ({marks}) AND instr(p.data, ?) > 0
          AND m.hidden = 0 AND m.replayed = 0 AND {" AND ".join(clauses)}
        ORDER BY m.timestamp DESC, m.rowid DESC"""
    for key, cwd, message_id, stamp, data in conn.execute(sql, (*FILE_TOOLS, base.encode(), *params)):
        part: Part = stored(data, Part, "part")  # type: ignore[arg-type]
        if isinstance(part, ToolCallPart):
            yield FileCall(key, cwd, message_id, datetime.fromisoformat(stamp) if stamp else None, part)
