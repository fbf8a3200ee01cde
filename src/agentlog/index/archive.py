"""Logs are evidence: the index keeps what it read.

A source that a sync no longer finds — deleted by its agent (Claude Code removes
transcripts after ``cleanupPeriodDays``, 30 by default:
https://docs.anthropic.com/en/docs/claude-code/settings), moved away, or inside a
folder that turned unreadable — keeps its sessions: they stay listed, searchable
and counted by ``usage``, marked archived (``sources.archived_at``), until
:func:`prune` removes them (``agentlog prune``).  A source that could be stored
before and now cannot be read (``EACCES``, ``EIO``) is archived the same way.  One
that comes back is read again and un-archived; a source rewritten with other
content still replaces its sessions (that is a change, not a loss).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Literal

import msgspec

from agentlog.index.db import transaction
from agentlog.probe import is_within


class ArchivedSource(msgspec.Struct, kw_only=True):
    """A source kept after it was found gone or unreadable: its ``path`` and
    ``agent``, when a sync first found it so (``archived_at``, aware UTC; ``None``
    for a source :func:`forget_root` removes that was not archived), why
    (``error``: ``None`` when it is gone, else why it cannot be read) and the keys
    of the ``sessions`` it holds."""

    path: str
    agent: str
    archived_at: datetime | None
    error: str | None = None
    sessions: list[str] = msgspec.field(default_factory=list)
    copies: list[str] = msgspec.field(default_factory=list)
    """Sources kept as duplicate copies of this one: read again by the next sync
    once it is removed, they hold its sessions then."""


KeptWhy = Literal["agent_folder", "remembered_root", "project_file"]
"""Why :func:`forget_root` leaves a source: it lies in an agent's own log folder,
in another remembered root that holds the one forgotten, or it is a file an
agent keeps inside a project (Aider's history) in a folder other sessions were
recorded in — each read by later syncs without the root."""


class KeptLogs(msgspec.Struct, kw_only=True):
    """Sources :func:`forget_root` leaves: ``logs`` of them in ``folder``, for the
    reason ``why``."""

    folder: str
    logs: int
    why: KeptWhy


def now() -> str:
    """The current time as the index stores it (ISO 8601 UTC, microseconds)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def archive_gone(
    conn: sqlite3.Connection, paths: Iterable[str], why: Mapping[str, str] | None = None
) -> tuple[int, int]:
    """Mark the sources at ``paths`` (known to the index, no longer found) archived
    when they hold sessions, with ``why[path]`` as their error when known (e.g. the
    folder discovery could not look at), and forget those that hold none (a failed
    or duplicate source: nothing to keep).  Sources that were duplicates of an
    archived one are read again by the next pass (the copy that is left takes the
    sessions over).  Returns ``(newly archived, removed)``."""
    archived = removed = 0
    paths = sorted(paths)
    if not paths:
        return 0, 0
    from agentlog.index.store import Store  # loaded only to write

    stamp = now()
    with transaction(conn):
        store = Store(conn)
        for path in paths:
            row = conn.execute(
                "SELECT id, archived_at, EXISTS (SELECT 1 FROM sessions WHERE source_id = sources.id) "
                "FROM sources WHERE path = ?",
                (path,),
            ).fetchone()
            if row is None:
                continue
            source_id, was_archived, holds = row
            if not holds:
                store.remove_source(path)
                removed += 1
                continue
            if was_archived is None:
                conn.execute("UPDATE sources SET archived_at = ? WHERE id = ?", (stamp, source_id))
                archived += 1
            if why and path in why:
                conn.execute("UPDATE sources SET error = ? WHERE id = ?", (why[path], source_id))
            conn.execute("UPDATE sources SET size = -1 WHERE duplicate_of = ?", (path,))
    return archived, removed


def keep_unreadable(conn: sqlite3.Connection, source_id: int, error: str) -> bool:
    """Archive a source that holds sessions and cannot be read now, keeping them
    and what is known of the file (so it is read again once it changes); whether
    it held any (else the caller records the failure as for a new source)."""
    if conn.execute("SELECT 1 FROM sessions WHERE source_id = ? LIMIT 1", (source_id,)).fetchone() is None:
        return False
    with transaction(conn):
        conn.execute(
            "UPDATE sources SET error = ?, archived_at = COALESCE(archived_at, ?) WHERE id = ?",
            (error, now(), source_id),
        )
    return True


def is_archived(conn: sqlite3.Connection, source_id: int) -> bool:
    row = conn.execute("SELECT archived_at FROM sources WHERE id = ?", (source_id,)).fetchone()
    return row is not None and row[0] is not None


def archived_sources(conn: sqlite3.Connection, agent: str | None = None) -> list[ArchivedSource]:
    """Every archived source (of ``agent`` when given), oldest first, with its sessions."""
    only = " AND src.agent = ?" if agent else ""
    return _sources(conn, f"src.archived_at IS NOT NULL{only}", (agent,) if agent else ())


def _sources(conn: sqlite3.Connection, where: str, args: tuple[str, ...]) -> list[ArchivedSource]:
    """The sources ``where`` holds for (SQL over ``sources src``), archived first by
    when, then by path, each with its sessions."""
    out: dict[int, ArchivedSource] = {}
    for source_id, path, slug, stamp, error, key in conn.execute(
        f"""SELECT src.id, src.path, src.agent, src.archived_at, src.error, s.key FROM sources src
            LEFT JOIN sessions s ON s.source_id = src.id
            WHERE {where} ORDER BY src.archived_at IS NULL, src.archived_at, src.path, s.key""",
        args,
    ):
        found = out.setdefault(
            source_id,
            ArchivedSource(
                path=path, agent=slug, archived_at=datetime.fromisoformat(stamp) if stamp else None, error=error
            ),
        )
        if key is not None:
            found.sessions.append(key)
    return list(out.values())


def _read_renamed_again(conn: sqlite3.Connection, path: str) -> None:
    """Have the next sync read again whole each source holding a session under
    the :func:`~agentlog.rules.distinct_id` of a session of source ``path``
    (``{key}~{8 hex digits}``; the index on ``sessions.key`` finds them): once
    ``path`` is gone its sessions' plain ids are free, and a source read whole
    takes them, as a fresh index and the in-memory loader do."""
    conn.execute(
        """UPDATE sources SET size = -1, parser_state = NULL WHERE id IN (
               SELECT o.source_id FROM sources src JOIN sessions s ON s.source_id = src.id
               JOIN sessions o ON o.key >= s.key || '~0' AND o.key < s.key || '~g'
                   AND length(o.key) = length(s.key) + 9
               WHERE src.path = ?)""",
        (path,),
    )


def prune(conn: sqlite3.Connection, agent: str | None = None, dry_run: bool = False) -> list[ArchivedSource]:
    """Remove the archived sources (of ``agent``) and their sessions; copies of
    their calls in other sessions are counted instead.  With ``dry_run`` nothing
    changes.  Returns what was (or would be) removed."""
    return _remove(conn, archived_sources(conn, agent), dry_run)


def forget_root(
    conn: sqlite3.Connection,
    folder: str,
    dry_run: bool = False,
    keep: Sequence[str] = (),
    keep_files: Sequence[str] = (),
) -> tuple[list[ArchivedSource], list[KeptLogs]] | None:
    """Forget ``folder`` (a real path), a ``--root`` an earlier sync was given and
    the index remembers (:func:`agentlog.index.sync.remember_roots`): later syncs
    no longer read it (nor a remembered root inside it), and the sources under it
    (by their path as stored, or their real path: a root given through a symlink
    is remembered by its real path, its sources by the path discovery found) and
    their sessions are removed as :func:`prune` removes archived ones.  Sources
    inside the folders ``keep`` (real paths: the agents' own, which syncs read
    without a ``--root``) or inside another remembered root that holds ``folder``
    are left, archived ones too: they are the agents' logs, or that root's; so
    are the files ``keep_files`` (project files later syncs find).  With
    ``dry_run`` nothing changes.  ``(what was, or would be, removed; the sources
    left, by the folder that holds them)``, or ``None`` when ``folder`` is not
    remembered."""
    if conn.execute("SELECT 1 FROM roots WHERE path = ?", (folder,)).fetchone() is None:
        return None
    outer = [p for (p,) in conn.execute("SELECT path FROM roots WHERE path != ?", (folder,)) if is_within(folder, p)]
    holders: list[tuple[str, KeptWhy]] = [(own, "agent_folder") for own in keep]
    holders += [(root, "remembered_root") for root in outer]  # a remembered root holding it stays
    files = {os.path.realpath(f) for f in keep_files}
    found: list[ArchivedSource] = []
    kept: dict[tuple[str, KeptWhy], int] = {}
    for source in _sources(conn, "1", ()):
        try:
            real = os.path.realpath(source.path)
        except ValueError:  # a damaged row's path (a NUL in it): by its path as stored
            real = source.path
        if not (is_within(source.path, folder) or is_within(real, folder)):
            continue
        holder = next((h for h in holders if is_within(source.path, h[0]) or is_within(real, h[0])), None)
        if holder is None and real in files:
            holder = (os.path.dirname(real), "project_file")
        if holder is not None:
            kept[holder] = kept.get(holder, 0) + 1
        else:
            found.append(source)
    if not dry_run:
        with transaction(conn):  # with any remembered root inside it: its sources go too
            conn.execute("DELETE FROM roots WHERE path = ? OR (path >= ? AND path < ?)", (folder, *_subtree(folder)))
    _remove(conn, found, dry_run)
    return found, [KeptLogs(folder=f, logs=n, why=why) for (f, why), n in sorted(kept.items())]


def cwds_outside(conn: sqlite3.Connection, folder: str) -> list[str]:
    """The folders recorded as ``cwd`` by sessions whose source is not under
    ``folder`` (by its stored path): where later syncs look for project files
    once ``folder`` is forgotten."""
    return [
        cwd
        for (cwd,) in conn.execute(
            """SELECT DISTINCT s.cwd FROM sessions s JOIN sources src ON src.id = s.source_id
               WHERE s.cwd IS NOT NULL AND NOT (src.path >= ? AND src.path < ?)""",
            _subtree(folder),
        )
    ]


def _subtree(folder: str) -> tuple[str, str]:
    """The bounds of the paths under ``folder``, ``(low, high)`` for ``path >= low
    AND path < high``: ``folder/`` and ``folder0`` ("0" follows "/")."""
    under = folder.rstrip("/") + "/"
    return under, under[:-1] + "0"


def _remove(conn: sqlite3.Connection, found: list[ArchivedSource], dry_run: bool) -> list[ArchivedSource]:
    """Remove the sources ``found`` and their sessions (unless ``dry_run``):
    ``found``, each with the :attr:`~ArchivedSource.copies` that keep its sessions."""
    from agentlog.index.history import read_again  # it archives through this module
    from agentlog.index.store import Store

    for source in found:
        source.copies = [p for (p,) in conn.execute("SELECT path FROM sources WHERE duplicate_of = ? ORDER BY path", (source.path,))]
    if found and not dry_run:
        with transaction(conn):
            store = Store(conn)
            for source in found:
                _read_renamed_again(conn, source.path)
                store.remove_source(source.path)
            read_again(conn)  # a pruned transcript's prompts come back as a prompt-only session
    return found
