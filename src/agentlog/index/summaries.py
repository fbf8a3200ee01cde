"""Summaries a model wrote, kept in the index (table ``summaries``): looked up
by what was sent (the prompt's SHA-256) and the model, so the same content is
never sent twice to the same model."""

from __future__ import annotations

import sqlite3
from datetime import datetime

import msgspec

from agentlog.index.db import transaction


class StoredSummary(msgspec.Struct, frozen=True):
    """A summary of ``subject`` (a session key, or ``standup``) by ``model``, of
    the prompt with SHA-256 ``prompt_sha256``, written at ``created_at`` (UTC)."""

    subject: str
    prompt_sha256: str
    model: str
    text: str
    created_at: datetime


_COLUMNS = "subject, prompt_sha256, model, text, created_at"


def _summary(row: tuple[str, str, str, str, str]) -> StoredSummary:
    subject, digest, model, text, created = row
    return StoredSummary(subject, digest, model, text, datetime.fromisoformat(created))


def cached(conn: sqlite3.Connection, subject: str, prompt_sha256: str, model: str) -> StoredSummary | None:
    """The summary of exactly this prompt by this model, if one was kept."""
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM summaries WHERE subject = ? AND prompt_sha256 = ? AND model = ?",
        (subject, prompt_sha256, model),
    ).fetchone()
    return None if row is None else _summary(row)


def latest(conn: sqlite3.Connection, subject: str) -> StoredSummary | None:
    """The newest summary of ``subject`` by any model, of any prompt."""
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM summaries WHERE subject = ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
        (subject,),
    ).fetchone()
    return None if row is None else _summary(row)


def keep(conn: sqlite3.Connection, summary: StoredSummary) -> None:
    """Store ``summary`` (replacing one of the same prompt and model)."""
    with transaction(conn):
        conn.execute(
            f"INSERT OR REPLACE INTO summaries ({_COLUMNS}) VALUES (?, ?, ?, ?, ?)",
            (
                summary.subject,
                summary.prompt_sha256,
                summary.model,
                summary.text,
                summary.created_at.isoformat(),
            ),
        )
