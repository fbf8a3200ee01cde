"""Session headers as parsers hand them out: copies for ``LineParser.headers()``, one-
session states, the headers of a database holding many sessions."""

from __future__ import annotations

import msgspec

from agentlog.model import (
    Diagnostics,
    Session,
)
from agentlog.rules import session_key


class OneSessionState(msgspec.Struct, kw_only=True):
    """Parser state of a file that holds exactly one session: its header and diagnostics."""

    diagnostics: Diagnostics = msgspec.field(default_factory=Diagnostics)
    header: Session


def one_header(state: OneSessionState) -> list[Session]:
    """``LineParser.headers()`` for a :class:`OneSessionState`: a copy of the header
    owning a copy of the diagnostics."""
    header = msgspec.structs.replace(state.header, sources=list(state.header.sources))
    header.diagnostics = msgspec.msgpack.decode(msgspec.msgpack.encode(state.diagnostics), type=Diagnostics)
    return [header]


def database_headers(
    agent: str, headers: list[Session], fallback_id: str, orphans: Diagnostics, path: str
) -> list[Session]:
    """The session headers of a database holding many sessions: each gets ``path`` as
    its source; rows no session owns (``orphans``) are counted on the first one; a
    database without sessions still yields one empty header (id ``fallback_id``)
    carrying those diagnostics."""
    headers = headers or [Session(key=session_key(agent, fallback_id), agent=agent, id=fallback_id)]
    headers[0].diagnostics.merge(orphans)
    for header in headers:
        header.sources = [path]
    return headers


def snapshot_header(session: Session, title: str | None, diagnostics: Diagnostics) -> Session:
    """A copy of a parser's session header for :meth:`LineParser.headers`, with
    ``title`` and a copy of ``diagnostics`` (the parser keeps counting in its own)."""
    header = msgspec.structs.replace(session, sources=list(session.sources))
    header.title = title
    header.diagnostics = msgspec.msgpack.decode(msgspec.msgpack.encode(diagnostics), type=Diagnostics)
    return header
