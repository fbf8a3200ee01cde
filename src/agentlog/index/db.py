"""Opening the index: location, pragmas, migrations."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import platformdirs

from agentlog.index.schema import MIGRATIONS

BUSY_TIMEOUT_MS = 60_000
PAGE_SIZE = 16_384
"""Bytes per page of a new index (an existing one keeps its own): a part's text and
data mostly fit in one page, and a 300 MB log is stored with a quarter of the
writes, ~10% faster than with SQLite's 4,096."""
MMAP_SIZE = 1 << 30
"""Bytes of the index read through a memory map rather than copied into the page
cache: searches touch many rows; with 16 KB pages, read() copies cost more than
the search itself (p50 on 71,000 messages: 5.4 ms read(), 2.7 ms mapped)."""


def default_path(env: Mapping[str, str], demo: bool = False) -> Path:
    """``$AGENTLOG_INDEX``, else ``<user cache dir>/agentlog/index.sqlite``
    (``demo.sqlite`` for the demo corpus, so it never mixes with yours)."""
    if not demo and env.get("AGENTLOG_INDEX"):
        return Path(env["AGENTLOG_INDEX"])
    base = (
        Path(env["AGENTLOG_INDEX"]).parent
        if env.get("AGENTLOG_INDEX")
        else Path(platformdirs.user_cache_dir("agentlog"))
    )
    return base / ("demo.sqlite" if demo else "index.sqlite")


def connect(path: Path, readonly: bool = False) -> sqlite3.Connection:
    """Open (creating and migrating if needed) the index at ``path``.

    WAL mode, foreign keys on, 16 KB pages for a new file, reads through a
    memory map, and a busy timeout so two agentlog processes wait for each other
    instead of failing.  Raises ``sqlite3.Error`` or ``OSError``.
    """
    if not readonly:
        path.parent.mkdir(parents=True, exist_ok=True)
    if readonly:  # a URI, so "?" and "#" in a path must be quoted: Path.as_uri does it
        conn = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode=ro",
            uri=True,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
        )
    else:
        # A store may index text in a second thread while this one waits (never both at once).
        conn = sqlite3.connect(
            path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute(f"PRAGMA mmap_size = {MMAP_SIZE}")
    if not readonly:
        conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # before WAL; ignored once the file has tables
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        # 32 MB of page cache: the index b-trees stay in memory while a big log is stored.
        conn.execute("PRAGMA cache_size = -32768")
        migrate(conn)
    return conn


def connect_current(path: Path) -> sqlite3.Connection | None:
    """A read-only connection to the index at ``path`` when it exists at this
    agentlog's schema (reading needs no write access then), else ``None``."""
    if not path.is_file():
        return None
    try:
        conn = connect(path, readonly=True)
        if conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS):
            return conn
        conn.close()
    except sqlite3.Error:
        pass
    return None


def migrate(conn: sqlite3.Connection) -> None:
    """Apply the migrations newer than the database's ``user_version``, each in
    its own transaction.  Raises ``sqlite3.DatabaseError`` for an index written
    by a newer agentlog."""
    with transaction(conn):
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > len(MIGRATIONS):
            raise sqlite3.DatabaseError(
                f"index schema {version} is newer than this agentlog ({len(MIGRATIONS)}); delete it to rebuild"
            )
        for number in range(version, len(MIGRATIONS)):
            for statement in _statements(MIGRATIONS[number]):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number + 1}")


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` around the block, rolled back when it raises."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise


def rollback(conn: sqlite3.Connection) -> None:
    """Roll back, unless SQLite already did (it does on a full disk or an I/O error)."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def _statements(script: str) -> list[str]:
    """Split a migration script into statements (triggers keep their inner ``;``)."""
    out: list[str] = []
    buffer = ""
    for line in script.strip().splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            out.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        out.append(buffer.strip())
    return out
