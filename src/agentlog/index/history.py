"""Prompt-only sessions: the prompts of a Claude Code session whose transcript is
gone, from ``history.jsonl`` (:mod:`agentlog.adapters.claude_history`).

Claude Code deletes transcripts after ``cleanupPeriodDays`` (30 by default) but
keeps every prompt typed in ``<config folder>/history.jsonl``.  After each sync,
a changed history file is read and its sessions are matched by key
(``claude_code:<sessionId>``) against the index: a session the index holds from
any other source (a transcript, archived or not) is left out — never counted
twice — and every other one is stored as a prompt-only session
(``sessions.prompt_only = 1``, :attr:`agentlog.model.Session.prompt_only`): listed
and searchable, with no reply and no usage.  A transcript stored later for the
same key takes the session over (:func:`yield_prompt_only`).  The file is
append-only: an append costs only its new lines (:func:`add_prompts`).  ``agentlog prune``
has the history read again, so the prompts of a pruned transcript reappear.  A
history file that disappears keeps its sessions, archived, like any source.

The sources row of a history file has ``agent`` :data:`HISTORY_AGENT`, so the
transcript sync never takes it for a transcript.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agentlog.adapters.claude_history import SLUG, parse_history
from agentlog.index import archive
from agentlog.index.db import transaction
from agentlog.model import Session
from agentlog.readers import DOCUMENT_LIMIT, describe_error
from agentlog.retention import claude_config_dirs

if TYPE_CHECKING:
    from agentlog.index.sync import SyncReport

HISTORY_AGENT = "claude_code/history"
"""``sources.agent`` of a Claude Code prompt history (its sessions' agent is ``claude_code``)."""
HISTORY_VERSION = 1
"""``sources.parser_version`` of a history file: bump to have every history read again."""


def history_paths(env: Mapping[str, str], home: Path) -> list[Path]:
    """``history.jsonl`` of every Claude Code config folder that exists."""
    return [folder / "history.jsonl" for folder in claude_config_dirs(env, home)]


def sync_history(
    conn: sqlite3.Connection, env: Mapping[str, str], home: Path, report: SyncReport, full: bool = False
) -> None:
    """Bring the prompt-only sessions up to date with every history file; one that
    is gone keeps its sessions, archived."""
    paths = {str(p) for p in history_paths(env, home)}
    known = {p for (p,) in conn.execute("SELECT path FROM sources WHERE agent = ?", (HISTORY_AGENT,))}
    for path in sorted(paths):
        _sync_file(conn, Path(path), report, full)
    gone = [p for p in known if p not in paths or not os.path.lexists(p)]
    archived, removed = archive.archive_gone(conn, gone)
    report.archived += archived
    report.removed += removed


def _sync_file(conn: sqlite3.Connection, path: Path, report: SyncReport, full: bool) -> None:
    """Sync one history file: unchanged → a ``stat``; appended (the bytes read
    before still end with the stored tail) → only the new lines; else read whole."""
    from agentlog.index.sync import tail_hash  # it calls this module

    try:
        st = path.stat()
    except FileNotFoundError:
        return
    except OSError as exc:
        report.failed.append((str(path), describe_error(exc)))
        return
    report.sources += 1
    row = conn.execute(
        """SELECT id, size, mtime_ns, ctime_ns, inode, parser_version, parsed_offset, tail_hash
           FROM sources WHERE path = ?""",
        (str(path),),
    ).fetchone()
    seen = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, HISTORY_VERSION)
    if not full and row is not None and tuple(row[1:6]) == seen:
        report.unchanged += 1
        return
    try:
        if not stat.S_ISREG(st.st_mode):  # a FIFO would block
            raise OSError(22, "not a regular file")
        append = (
            not full
            and row is not None
            and (row[4], row[5]) == (st.st_ino, HISTORY_VERSION)
            and 0 < row[6] <= st.st_size
            and tail_hash(str(path), row[6]) == row[7]
        )
        start = row[6] if append else 0
        data = _read_from(path, start)
        sessions, diagnostics = parse_history(data, start)
        consumed = start + data.rfind(b"\n") + 1
        tail = tail_hash(str(path), consumed)
    except (OSError, ValueError) as exc:
        report.failed.append((str(path), describe_error(exc)))
        if row is not None:
            archive.keep_unreadable(conn, row[0], describe_error(exc))
        return
    with transaction(conn):
        conn.execute("INSERT OR IGNORE INTO sources (path, agent) VALUES (?, ?)", (str(path), HISTORY_AGENT))
        (source_id,) = conn.execute("SELECT id FROM sources WHERE path = ?", (str(path),)).fetchone()
        if append:
            add_prompts(conn, source_id, sessions)
        else:
            if sessions:
                sessions[0].diagnostics = diagnostics
            store_prompt_only(conn, source_id, sessions)
        conn.execute(
            """UPDATE sources SET size = ?, mtime_ns = ?, ctime_ns = ?, inode = ?, parser_version = ?,
                   parsed_offset = ?, tail_hash = ?, error = NULL, archived_at = NULL, synced_at = datetime('now')
               WHERE id = ?""",
            (*seen, consumed, tail, source_id),
        )
    if append:
        report.appended += 1
    else:
        report.reparsed += 1
    report.bytes_parsed += consumed - start


def _read_from(path: Path, start: int) -> bytes:
    """The bytes of ``path`` from ``start`` (at most :data:`~agentlog.readers.DOCUMENT_LIMIT`)."""
    with open(path, "rb") as fh:
        fh.seek(start)
        data = fh.read(DOCUMENT_LIMIT + 1)
    if len(data) > DOCUMENT_LIMIT:
        raise ValueError(f"{path}: larger than {DOCUMENT_LIMIT} bytes")
    return data


def add_prompts(conn: sqlite3.Connection, source_id: int, sessions: Sequence[Session]) -> None:
    """Add the prompts of ``sessions`` (read from the appended part of history
    source ``source_id``) to its prompt-only sessions, making new ones for the
    sessions the index holds from no source yet.  The caller owns the transaction."""
    from agentlog.index.store import Store  # loaded only to write

    held = _held_elsewhere(conn, source_id, [s.key for s in sessions])
    store = Store(conn)
    touched: set[str] = set()
    for session in sessions:
        if session.key in held:
            continue
        if store.owner_of(session.key) is None:
            store.put_headers(source_id, [session])
            conn.execute("UPDATE sessions SET prompt_only = 1 WHERE key = ?", (session.key,))
        store.put_fragments(source_id, SLUG, [(session.id, m) for m in session.messages])
        touched.add(session.key)
    store.refresh_sessions(touched)


def store_prompt_only(conn: sqlite3.Connection, source_id: int, sessions: Sequence[Session]) -> None:
    """Make the prompt-only sessions of history source ``source_id`` the ones of
    ``sessions`` the index holds from no other source; a stored one whose prompts
    did not change is left as it is.  The caller owns the transaction."""
    from agentlog.index.store import Store, iso  # loaded only to write

    held = _held_elsewhere(conn, source_id, [s.key for s in sessions])
    wanted = {s.key: s for s in sessions if s.key not in held}
    stored = {
        key: (count, ended)
        for key, count, ended in conn.execute(
            "SELECT key, message_count, ended_at FROM sessions WHERE source_id = ?", (source_id,)
        )
    }
    for key in stored.keys() - wanted.keys():
        _drop(conn, key, source_id)
    store = Store(conn)
    written: set[str] = set()
    for key, session in wanted.items():
        if stored.get(key) == (len(session.messages), iso(session.ended_at)):
            continue
        if key in stored:
            _drop(conn, key, source_id)
        store.put_headers(source_id, [session])
        conn.execute("UPDATE sessions SET prompt_only = 1 WHERE key = ?", (key,))
        store.put_fragments(source_id, SLUG, [(session.id, m) for m in session.messages])
        written.add(key)
    store.refresh_sessions(written)


def yield_prompt_only(conn: sqlite3.Connection, key: str, owner: int) -> bool:
    """Drop session ``key`` when source ``owner`` holds it as prompt-only (a
    transcript for it is being stored); whether it did."""
    row = conn.execute(
        "SELECT prompt_only FROM sessions WHERE key = ? AND source_id = ?", (key, owner)
    ).fetchone()
    if row is None or not row[0]:
        return False
    _drop(conn, key, owner)
    return True


def read_again(conn: sqlite3.Connection) -> None:
    """Have the next sync read every history file again (after a prune: the
    prompts of a transcript removed from the index become a prompt-only session)."""
    conn.execute("UPDATE sources SET size = -1, parsed_offset = 0 WHERE agent = ?", (HISTORY_AGENT,))


def _held_elsewhere(conn: sqlite3.Connection, source_id: int, keys: list[str]) -> set[str]:
    out: set[str] = set()
    for i in range(0, len(keys), 500):
        chunk = keys[i : i + 500]
        out.update(
            key
            for (key,) in conn.execute(
                f"SELECT key FROM sessions WHERE source_id != ? AND key IN ({', '.join('?' * len(chunk))})",
                (source_id, *chunk),
            )
        )
    return out


def _drop(conn: sqlite3.Connection, key: str, source_id: int) -> None:
    conn.execute("DELETE FROM messages WHERE session_key = ? AND source_id = ?", (key, source_id))
    conn.execute("DELETE FROM sessions WHERE key = ? AND source_id = ?", (key, source_id))
