"""Which sessions touched a file: read, wrote or edited it (the rule:
:mod:`agentlog.touched`)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from datetime import datetime

from agentlog.index import queries
from agentlog.index.files import file_calls
from agentlog.model import Session
from agentlog.query import SessionFilter
from agentlog.service.status import refine_sessions
from agentlog.touched import path_matches, touched_path


@dataclass
class Touch:
    """One call that touched the file: the file's path as the call named it
    (made absolute), the tool (``read``, ``write``, ``edit``), the message (id,
    time)."""

    path: str
    tool: str
    message_id: str
    timestamp: datetime | None


@dataclass
class FileSession:
    """A session that touched the file (``session``: its header) and its
    touches, newest first."""

    session: Session
    touches: list[Touch] = field(default_factory=list)


def sessions_touching(
    conn: sqlite3.Connection, path: str, where: SessionFilter, limit: int = 20
) -> list[FileSession]:
    """At most ``limit`` sessions ``where`` keeps whose tool calls read, wrote or
    edited ``path`` (an absolute path, or its last components: ``stats.py``,
    ``weather/stats.py``; :func:`agentlog.touched.path_matches`), the one that
    touched it last first; each header with its board status, as every listing
    gives it (:func:`agentlog.service.status.refine_sessions`)."""
    found: dict[str, list[Touch]] = {}
    for fc in file_calls(conn, path, where):
        touched = touched_path(fc.call, fc.cwd)
        if touched is None or not path_matches(touched, path):
            continue
        if fc.session_key not in found and len(found) == limit:
            continue
        found.setdefault(fc.session_key, []).append(Touch(touched, fc.call.tool, fc.message_id, fc.timestamp))
    headers = {s.key: s for s in refine_sessions(conn, queries.list_sessions_by_keys(conn, list(found)))}
    return [FileSession(headers[key], touches) for key, touches in found.items() if key in headers]
