"""Summary queries: the prompt of a session or a digest, a model's summary of it
(kept in the index, found again for the same content and model), and the
summary to show beside a session (``show``, the viewer)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from agentlog.index import queries
from agentlog.index import summaries as kept
from agentlog.index.summaries import StoredSummary
from agentlog.model import Session
from agentlog.query import SessionFilter
from agentlog.summarize import Prompt, complete, session_prompt, standup_prompt

if TYPE_CHECKING:
    import llm


@dataclass
class Summary:
    """A model's summary of ``prompt`` (``cached``: found in the index, not asked for)."""

    prompt: Prompt
    model: str
    text: str
    created_at: datetime
    cached: bool


def full_sessions(conn: sqlite3.Connection, where: SessionFilter, limit: int) -> list[Session]:
    """At most ``limit`` sessions ``where`` keeps, newest first, each in full."""
    return [queries.get_session(conn, s.key) for s in queries.list_sessions(conn, where, limit=limit)]


def prompt_of(conn: sqlite3.Connection, ref: str) -> Prompt:
    """The summary prompt of the session ``ref`` names (key, id or a unique
    prefix).  Raises :class:`~agentlog.errors.NotFound`."""
    return session_prompt(queries.get_session(conn, ref))


def kept_summary(conn: sqlite3.Connection, prompt: Prompt, model_id: str) -> Summary | None:
    """The summary ``model_id`` wrote of exactly this prompt, if one is kept."""
    found = kept.cached(conn, prompt.subject, prompt.sha256, model_id)
    return None if found is None else Summary(prompt, found.model, found.text, found.created_at, cached=True)


def ask(conn: sqlite3.Connection, prompt: Prompt, model: llm.Model) -> Summary:
    """``model``'s summary of ``prompt``, asked for now
    (:func:`agentlog.summarize.complete`) and kept in the index."""
    text = complete(model, prompt)
    made = StoredSummary(prompt.subject, prompt.sha256, model.model_id, text, datetime.now(UTC))
    kept.keep(conn, made)
    return Summary(prompt, made.model, text, made.created_at, cached=False)


def digest_prompt(
    conn: sqlite3.Connection, sessions: Iterable[Session], model_id: str | None, span: str
) -> Prompt:
    """The stand-up prompt over ``sessions`` (in full), each described by the
    summary ``model_id`` wrote of its current content when one is kept."""
    found = list(sessions)
    notes: dict[str, str] = {}
    for s in found:
        summary = kept.cached(conn, s.key, session_prompt(s).sha256, model_id) if model_id else None
        if summary is not None:
            notes[s.key] = summary.text
    return standup_prompt(found, notes, span)


@dataclass
class ShownSummary:
    """The newest summary kept of a session and whether it is of the session's
    current content (``current``) or of an earlier state of it."""

    summary: StoredSummary
    current: bool


def shown_summary(conn: sqlite3.Connection, key: str) -> ShownSummary | None:
    """The summary to show beside session ``key``, if any was made; only then is
    the session loaded in full, to tell whether it is of the session as it is now."""
    found = kept.latest(conn, key)
    if found is None:
        return None
    return ShownSummary(found, found.prompt_sha256 == session_prompt(queries.get_session(conn, key)).sha256)


def latest_summary(conn: sqlite3.Connection, key: str) -> StoredSummary | None:
    """The newest summary kept of session ``key`` (any model, any state of it):
    what the viewer shows without loading the whole session."""
    return kept.latest(conn, key)
