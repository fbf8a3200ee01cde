"""Opening the index: location, identity, pragmas, migrations, and what a
failing index means to the user.

The index is agentlog's own: a file that is not one (an agent's database, any
other file) is refused before a byte is written to it: it is identified from its
100-byte SQLite header and, for an index made before agentlog stamped its
``application_id``, from its tables read with ``immutable=1`` (no lock, no
``-wal``/``-shm`` made: https://sqlite.org/uri.html#uriimmutable).
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from types import ModuleType

import platformdirs

from agentlog.errors import REBUILD_HINT, IndexProblem
from agentlog.index import deferred
from agentlog.index.schema import APPLICATION_ID, MIGRATIONS
from agentlog.index.stored import DamagedRow

BUSY_TIMEOUT_MS = 60_000
PAGE_SIZE = 16_384
"""Bytes per page of a new index (an existing one keeps its own): a part's text and
data mostly fit in one page, and a 300 MB log is stored with a quarter of the
writes, ~10% faster than with SQLite's 4,096."""
MMAP_SIZE = 1 << 30
"""Bytes of the index read through a memory map rather than copied into the page
cache: searches touch many rows; with 16 KB pages, read() copies cost more than
the search itself (p50 on 71,000 messages: 5.4 ms read(), 2.7 ms mapped)."""


INDEX_TEXT_SQL = "agentlog_index_text"
"""The SQL function ``agentlog_index_text(parts.text, parts.data)``: what
``parts_fts`` indexes for a stored part (:func:`agentlog.index.fts.index_text` of
:func:`~agentlog.index.fts.stored_text`), the ``text`` column of the
``parts_search`` view that is its external content."""


def fts_functions(conn: sqlite3.Connection) -> sqlite3.Connection:
    """Register :data:`INDEX_TEXT_SQL` on ``conn`` (every connection that deletes
    parts, rebuilds or checks ``parts_fts`` needs it); returns ``conn``.
    :mod:`agentlog.index.fts` is imported when SQLite first calls it: a read
    that touches no part does not load the tokenizer's patterns."""
    conn.create_function(INDEX_TEXT_SQL, 2, _index_text, deterministic=True)
    return conn


_UDF_FAILED = "user-defined function raised exception"
"""What SQLite raises (an ``OperationalError``) for any exception in a Python SQL function."""
_udf_damage: list[DamagedRow] = []
"""The last stored value :data:`INDEX_TEXT_SQL` could not decode: SQLite raises only
:data:`_UDF_FAILED`, which :func:`explain` tells apart by it."""


def _index_text(text: str, data: bytes | None) -> str:
    fts = _fts()
    try:
        found: str = fts.index_text(fts.stored_text(text, data))
    except DamagedRow as exc:  # a part re-read or deleted (its FTS entry with it): cannot be done
        _udf_damage[:] = [exc]
        raise
    return found


@cache
def _fts() -> ModuleType:
    from agentlog.index import fts

    return fts


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


SQLITE_MAGIC = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database (https://sqlite.org/fileformat.html §1.3)."""
_INDEX_TABLES = {"sources", "sessions", "messages", "parts", "usage"}
_INDEX_SOURCE_COLUMNS = {"path", "agent", "parsed_offset", "tail_hash", "parser_state", "sidecar_sig"}


def not_an_index(path: Path, why: str) -> IndexProblem:
    """The one-line refusal of a file that is not an agentlog index."""
    return IndexProblem(
        f"{path} is not an agentlog index ({why}); nothing was written to it: choose another file with "
        f"--index; only if this file was agentlog's own index (never another program's) is it damaged: "
        f"{REBUILD_HINT}"
    )


def damaged(path: Path, why: object) -> IndexProblem:
    """The one-line answer to a damaged index (``why`` on one line)."""
    text = " ".join(str(why).replace("*** in database main ***", "").split())
    return IndexProblem(f"the index {path} is damaged ({text}): {REBUILD_HINT}")


def read_head(path: Path, st: os.stat_result, size: int) -> bytes:
    """The first ``size`` bytes of the file at ``path`` (whose ``os.stat`` is ``st``),
    read without closing a descriptor of a file this process's SQLite may hold
    locks on.  Closing any descriptor of a file drops every POSIX lock the process
    holds on it, SQLite's included (sqlite.org/howtocorrupt.html, 2.2): another
    agentlog process then took itself for the index's last connection and deleted
    its ``-wal`` under this one's writes (``tail`` following a session, which
    connects again each round, while ``status`` synced: the index was corrupted).
    So a descriptor this process already has open on the file (SQLite's) is read
    with ``pread``, which moves nothing; only a file no descriptor of the process
    has open is opened and closed.  Raises ``OSError``."""
    for fd in _open_descriptors():
        try:
            found = os.fstat(fd)
        except OSError:  # closed since it was listed (the listing's own descriptor)
            continue
        if (found.st_dev, found.st_ino) == (st.st_dev, st.st_ino) and stat.S_ISREG(found.st_mode):
            return os.pread(fd, size, 0)
    with open(path, "rb") as fh:
        return fh.read(size)


def _open_descriptors() -> list[int]:
    """The descriptors open in this process (``/dev/fd``: Linux and macOS), or none
    where they cannot be listed."""
    try:
        return [int(name) for name in os.listdir("/dev/fd") if name.isdigit()]
    except OSError:
        return []


def check_index(path: Path) -> bool:
    """Whether ``path`` holds an agentlog index (``False``: no file, or an empty
    one, which becomes a new index).  Nothing is written, locked or created.

    Raises :class:`~agentlog.errors.IndexProblem` for anything else: not a regular
    file, not an SQLite database, another application's database."""
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):  # a FIFO would block, a device is no index
            raise not_an_index(path, "not a regular file")
        if st.st_size == 0:
            return False
        head = read_head(path, st, 100)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise IndexProblem(f"cannot read the index {path}: {exc.strerror or exc}") from None
    if not head.startswith(SQLITE_MAGIC):
        raise not_an_index(path, "not an SQLite database")
    if len(head) < 100:
        raise damaged(path, f"{len(head)} bytes, shorter than an SQLite header")
    application_id = int.from_bytes(head[68:72], "big", signed=True)
    if application_id == APPLICATION_ID:
        return True
    if application_id != 0:
        raise not_an_index(path, f"an SQLite database of another application, id {application_id:#x}")
    tables, columns = _schema_of(path)  # written before agentlog stamped its id
    if tables >= _INDEX_TABLES and columns >= _INDEX_SOURCE_COLUMNS:
        return True
    if tables:
        shown = ", ".join(sorted(tables)[:5]) + (" …" if len(tables) > 5 else "")
        raise not_an_index(path, f"an SQLite database with other tables: {shown}")
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise not_an_index(path, f"an SQLite database whose tables are still in {wal.name}")
    user_version = int.from_bytes(head[60:64], "big", signed=True)
    if user_version != 0:  # another program's database before its first table (its schema version)
        raise not_an_index(path, f"an SQLite database of another program (user_version {user_version})")
    return False  # an empty SQLite database: it becomes a new index


def _schema_of(path: Path) -> tuple[set[str], set[str]]:
    """The table names of the database at ``path`` and the columns of its ``sources``
    table, read from the main file alone (``immutable=1``)."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            columns = (
                {r[1] for r in conn.execute("PRAGMA table_info(sources)")} if "sources" in tables else set()
            )
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise not_an_index(path, f"its schema cannot be read: {exc}") from None
    return tables, columns


def connect(path: Path, readonly: bool = False) -> sqlite3.Connection:
    """Open (creating and migrating if needed) the index at ``path``.

    WAL mode, foreign keys on, 16 KB pages for a new file, reads through a
    memory map, and a busy timeout so two agentlog processes wait for each other
    instead of failing.  ``readonly`` writes nothing, and reads an index on
    read-only storage (in WAL mode too).  Raises
    :class:`~agentlog.errors.IndexProblem` for a file that is not an agentlog
    index (before anything is written to it) or an index of a newer agentlog,
    ``sqlite3.Error`` or ``OSError``.
    """
    exists = check_index(path)
    if readonly:
        return _connect_readonly(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute(f"PRAGMA mmap_size = {MMAP_SIZE}")
    conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # before WAL; ignored once the file has tables
    if not exists:  # in the main file's header at once, before WAL: other processes identify it
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    # 32 MB of page cache: the index b-trees stay in memory while a big log is stored.
    conn.execute("PRAGMA cache_size = -32768")
    deferred.register(fts_functions(conn))
    if migrate(conn):
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)")  # the new header reaches the main file
    return conn


def connect_cache(path: Path) -> tuple[sqlite3.Connection, bool]:
    """``(connection, rebuilt)``: :func:`connect` for an index that is only a cache
    of files agentlog ships (the demo corpus's), never the user's own.  When it
    cannot be opened or migrated, or its schema is not this agentlog's (an index
    of another build, whose migrations differ), it is deleted with its ``-wal``
    and ``-shm`` and made anew (``rebuilt``: empty, to be synced).  A file that
    is not agentlog's (another application's database, not a regular file) is
    never deleted: :class:`~agentlog.errors.IndexProblem` as :func:`connect` says."""
    try:
        ours = check_index(path)
    except IndexProblem:
        if not _stamped(path):
            raise
        ours = True
    if not ours:
        return connect(path), False
    try:
        conn = connect(path)
        if schema_matches(path):
            return conn, False
        conn.close()
    except (IndexProblem, sqlite3.Error):
        pass
    for stale in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        stale.unlink(missing_ok=True)
    return connect(path), True


def _stamped(path: Path) -> bool:
    """Whether ``path`` is a regular file whose SQLite header carries agentlog's
    ``application_id`` (a damaged index of ours, not another program's file)."""
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):
            return False
        head = read_head(path, st, 72)
    except OSError:
        return False
    return head.startswith(SQLITE_MAGIC) and int.from_bytes(head[68:72], "big", signed=True) == APPLICATION_ID


_NO_SHM = frozenset({"SQLITE_CANTOPEN", "SQLITE_READONLY_DIRECTORY", "SQLITE_READONLY_CANTINIT"})
"""The errors of a WAL-mode open whose ``-shm`` cannot be made: a read-only mount
(``SQLITE_CANTOPEN``), a folder the user may not write (``SQLITE_READONLY_DIRECTORY``:
the ``-shm`` cannot be created), a ``-shm`` that cannot be initialised
(``SQLITE_READONLY_CANTINIT``); sqlite.org/rescode.html."""


def _connect_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection.  A WAL-mode index on read-only storage cannot get
    its ``-shm``: then, when no write-ahead log is pending, the main file holds
    everything and is read ``immutable=1``."""
    uri = path.resolve().as_uri()  # a URI, so "?" and "#" in a path must be quoted: Path.as_uri does it
    try:
        conn = _open_uri(f"{uri}?mode=ro")
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()  # opens the file (and the WAL)
        return conn
    except sqlite3.OperationalError as exc:
        if getattr(exc, "sqlite_errorname", "") not in _NO_SHM or not path.is_file():
            raise
        problem = exc
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise IndexProblem(
            f"cannot read the index {path} ({problem}): its write-ahead log {wal.name} needs a {path.name}-shm "
            "that cannot be made here; copy both files to writable storage"
        )
    return _open_uri(f"{uri}?mode=ro&immutable=1")


def _open_uri(uri: str) -> sqlite3.Connection:
    conn = deferred.register(
        fts_functions(sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None))
    )
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute(f"PRAGMA mmap_size = {MMAP_SIZE}")
    return conn


def connect_current(path: Path) -> sqlite3.Connection | None:
    """A read-only connection to the index at ``path`` when it exists at this
    agentlog's schema (reading needs no write access then), else ``None``.
    Raises :class:`~agentlog.errors.IndexProblem` for a file that is not an index."""
    if not check_index(path):
        return None
    try:
        conn = connect(path, readonly=True)
        if conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS):
            return conn
        conn.close()
    except sqlite3.Error:
        pass
    return None


_told: ContextVar[Callable[[str], None] | None] = ContextVar("agentlog_upgrade_notice", default=None)


@contextmanager
def telling_upgrades(say: Callable[[str], None]) -> Iterator[None]:
    """Inside the block (in this thread or task), :func:`migrate` calls ``say``
    with one line before it upgrades an existing index by a migration that
    indexes its text again (a 1 GB index takes about half a minute): the
    command would otherwise seem to hang, saying nothing."""
    token = _told.set(say)
    try:
        yield
    finally:
        _told.reset(token)


_REINDEXES = "VALUES ('rebuild')"
"""What a migration that rebuilds ``parts_fts`` from its rows holds."""


def upgrade_notice(path: str, version: int) -> str | None:
    """The line :func:`telling_upgrades` says before the migrations from schema
    ``version`` run on the index at ``path``, or ``None`` when they are quick (or
    build a new index: ``version`` 0)."""
    if not version or not any(_REINDEXES in m for m in MIGRATIONS[version:]):
        return None
    return (
        f"upgrading the index {path} (schema {version} to {len(MIGRATIONS)}): its search text is "
        "indexed again, once; on a large index this takes a minute"
    )


def migrate(conn: sqlite3.Connection) -> bool:
    """Apply the migrations newer than the database's ``user_version``, in one
    transaction; whether there were any (see :func:`telling_upgrades`).  Raises
    :class:`~agentlog.errors.IndexProblem` for an index written by a newer agentlog."""
    if conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS):
        return False  # up to date: no write lock taken (a reader never waits on a writer here)
    with transaction(conn):
        version: int = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > len(MIGRATIONS):
            raise IndexProblem(
                f"the index {conn_path(conn)} has schema {version}, newer than this agentlog's "
                f"({len(MIGRATIONS)}): upgrade agentlog, or delete it to rebuild"
            )
        if (say := _told.get()) is not None and (notice := upgrade_notice(conn_path(conn), version)):
            say(notice)
        for number in range(version, len(MIGRATIONS)):
            for statement in _statements(MIGRATIONS[number]):
                try:
                    conn.execute(statement)
                except sqlite3.OperationalError as exc:  # tables unlike those its schema number names
                    if explain(exc, Path(conn_path(conn))) is not None:
                        raise  # damaged or unusable: said as such by the caller
                    raise IndexProblem(
                        f"the index {conn_path(conn)} cannot be upgraded from schema {version} "
                        f"({exc}): another build of agentlog wrote it; {REBUILD_HINT}"
                    ) from None
            conn.execute(f"PRAGMA user_version = {number + 1}")
    return version < len(MIGRATIONS)


def conn_path(conn: sqlite3.Connection) -> str:
    """The file of ``conn``'s main database."""
    return next((row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"), "")


_MESSAGES = {
    "malformed": "SQLITE_CORRUPT", "not a database": "SQLITE_NOTADB", "disk is full": "SQLITE_FULL",
    "readonly": "SQLITE_READONLY", "unable to open": "SQLITE_CANTOPEN", "disk I/O": "SQLITE_IOERR",
    "locked": "SQLITE_BUSY",
}  # fmt: skip
"""SQLite's messages for the result codes :func:`explain` tells apart, for an error
that carries no ``sqlite_errorname`` (raised by Python code, not by SQLite)."""


def _name_of(message: str) -> str:
    return next((name for text, name in _MESSAGES.items() if text in message), "")


def explain(exc: BaseException, path: Path) -> IndexProblem | None:
    """What an error raised while using the index at ``path`` means to the user,
    as one line: damaged (corrupt pages, truncated, not a database, tables that
    are not this agentlog's: delete it to rebuild) or unusable (read-only storage,
    full disk, lock); ``None`` when the index is sound (the error is a bug).
    A stored value that cannot be decoded (:class:`~agentlog.index.stored.DamagedRow`)
    is damage too.  Any other exception, an SQLite error of another kind included,
    is explained by :func:`diagnose`.  Error names: https://sqlite.org/rescode.html."""
    if isinstance(exc, DamagedRow):
        return damaged(path, exc)
    if isinstance(exc, sqlite3.OperationalError) and _UDF_FAILED in str(exc) and _udf_damage:
        return damaged(path, _udf_damage[0])
    name = getattr(exc, "sqlite_errorname", None) or _name_of(str(exc))
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or name == "SQLITE_IOERR_SHORT_READ":
        return damaged(path, exc)
    if name.startswith(("SQLITE_READONLY", "SQLITE_FULL")):
        return IndexProblem(f"cannot update the index {path}: {exc} (--no-sync reads it as it is)")
    if name.startswith(("SQLITE_CANTOPEN", "SQLITE_PERM")):  # an existing one: read-only storage
        hint = " (--no-sync reads it as it is)" if path.is_file() else ""
        return IndexProblem(f"cannot open the index {path}: {exc}{hint}")
    if name.startswith(("SQLITE_IOERR", "SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_NOLFS")):
        return IndexProblem(f"cannot use the index {path}: {exc}")
    return diagnose(path)


def diagnose(path: Path) -> IndexProblem | None:
    """The damage found in the index at ``path``, else ``None`` (also when there is
    no index there): not an index, tables, indexes or triggers other than the
    migrations make, or pages ``PRAGMA quick_check`` flags (it reads every page:
    ~0.2 s for 200 MB).  Nothing is written."""
    try:
        if not check_index(path):
            return None
    except IndexProblem as problem:
        return problem
    try:
        conn = _connect_readonly(path)
        try:
            if (
                conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
                and _schema(conn) != _expected()
            ):
                return damaged(path, "its tables are not this agentlog's")
            (first, *_) = conn.execute("PRAGMA quick_check(1)").fetchone()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return damaged(path, exc)
    except (sqlite3.Error, OSError):
        return None  # cannot be read now: not known to be damaged
    return None if first == "ok" else damaged(path, first)


def schema_matches(path: Path) -> bool:
    """Whether the index at ``path`` has exactly the tables, columns, indexes and
    triggers the migrations make (``False`` when it cannot be read)."""
    try:
        conn = _connect_readonly(path)
        try:
            return _schema(conn) == _expected()
        finally:
            conn.close()
    except (sqlite3.Error, OSError):
        return False


def _schema(conn: sqlite3.Connection) -> list[tuple[str, str, str]]:
    return sorted(conn.execute("SELECT type, name, COALESCE(sql, '') FROM sqlite_master"))


def _expected() -> list[tuple[str, str, str]]:
    """The schema the migrations make: built in memory (~7–10 ms of CPU, each
    ``agentlog index``) once per set of migrations and SQLite version, then read
    from ``schema-<crc32>.json`` in the user cache folder (which holds the whole
    text it was built from: a file of other migrations is built again)."""
    built_from = [sqlite3.sqlite_version, *MIGRATIONS]
    text = json.dumps(built_from)
    cached = Path(platformdirs.user_cache_dir("agentlog")) / f"schema-{zlib.crc32(text.encode()):08x}.json"
    try:
        kept = json.loads(cached.read_bytes())
        if kept["built_from"] == built_from:
            return [(kind, name, sql) for kind, name, sql in kept["schema"]]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    expected = deferred.register(fts_functions(sqlite3.connect(":memory:", isolation_level=None)))
    try:
        for migration in MIGRATIONS:
            for statement in _statements(migration):
                expected.execute(statement)
        schema = _schema(expected)
    finally:
        expected.close()
    tmp = cached.with_name(f"{cached.name}.{os.getpid()}.tmp")
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps({"built_from": built_from, "schema": schema}))
        os.replace(tmp, cached)
    except OSError:  # a read-only or full cache folder only costs the build next time
        tmp.unlink(missing_ok=True)
    return schema


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` around the block, rolled back when it raises.
    Inside a transaction already (a sync's batch of sources), a savepoint: the
    block is undone alone when it raises, and committed with the batch."""
    if conn.in_transaction:
        conn.execute("SAVEPOINT block")
        try:
            yield
            conn.execute("RELEASE block")
        except BaseException:
            if conn.in_transaction:  # SQLite ends it itself on a full disk or an I/O error
                conn.execute("ROLLBACK TO block")
                conn.execute("RELEASE block")
            raise
        return
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
