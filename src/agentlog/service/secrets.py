"""Secrets: the sessions whose logs hold any, and redacted views for the viewer.

``agentlog secrets`` and the viewer call these; the finding itself is
:mod:`agentlog.redact`, the walk over the model :mod:`agentlog.export.redaction`.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from typing import Any

import msgspec

from agentlog.export.redaction import count_kinds, redact_header, redact_message
from agentlog.index import queries
from agentlog.model import Session
from agentlog.query import SessionFilter
from agentlog.redact import redact, redact_value
from agentlog.service.export import stream_messages
from agentlog.service.sessions import TranscriptPage


class SessionSecrets(msgspec.Struct, kw_only=True):
    """A session holding secrets: its ``key``, ``agent``, ``title`` (redacted),
    ``started_at``, how many secrets of each kind (``kinds``, kind → count) and
    in all (``total``).  Never the secrets themselves."""

    key: str
    agent: str
    title: str | None
    started_at: str | None
    kinds: dict[str, int]
    total: int


def sessions_with_secrets(conn: sqlite3.Connection, where: SessionFilter) -> list[SessionSecrets]:
    """Every session ``where`` keeps (subagents too) whose title, description or
    messages (meta ones included) hold a secret, newest first."""
    found = []
    for s in queries.list_sessions(conn, msgspec.structs.replace(where, include_children=True)):
        kinds = count_kinds(s, stream_messages(conn, s.key, include_hidden=True))
        if kinds:
            found.append(
                SessionSecrets(
                    key=s.key,
                    agent=s.agent,
                    title=redacted_title(s.title),
                    started_at=s.started_at.isoformat() if s.started_at else None,
                    kinds=dict(sorted(kinds.items())),
                    total=sum(kinds.values()),
                )
            )
    return found


def redacted_title(text: str | None) -> str | None:
    """A title (or any one-line text) with its secrets replaced."""
    return redact(text) if text else text


def redacted_records(records: list[Any]) -> list[Any]:
    """Raw records (decoded JSON values or lines of text) with the secrets in every string replaced."""
    return [redact_value(r) for r in records]


def redacted_headers(rows: list[Session]) -> list[Session]:
    """Session headers (a listing's rows) with their secrets replaced
    (:func:`agentlog.export.redaction.redact_header`)."""
    return [redact_header(s) for s in rows]


def redacted_page(page: TranscriptPage) -> TranscriptPage:
    """A viewer page with the secrets of its messages, its header and the titles
    of the sessions it links to replaced."""
    return replace(
        page,
        header=redact_header(page.header),
        messages=[redact_message(m) for m in page.messages],
        children=redacted_headers(page.children),
        links={k: redact_header(s) for k, s in page.links.items()},
        tree=[(depth, redact_header(s)) for depth, s in page.tree],
        parent=redacted_headers(page.parent),
    )
