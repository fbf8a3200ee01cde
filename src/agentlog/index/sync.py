"""Incremental sync: bring the index up to date with the logs on disk.

A sync that would change nothing answers from the memo of the last one
(:mod:`agentlog.index.memo`): when no folder or path discovery looked at has
changed, the sources it found are compared with their rows in one query, a
``stat`` each, without running discovery.  Otherwise, per source
(``shared/DESIGN.md`` §5):

* unchanged (size, mtime_ns, ctime_ns, inode, sidecars, parser version) → skipped after
  a ``stat`` (the ctime catches a permission change, which leaves the mtime alone);
* an append-only source that grew and whose bytes before ``parsed_offset``
  still end with the stored tail → only the new bytes are parsed, resuming the
  saved parser state; one that kept its size but not its whole stat was rewritten
  in place — a new mtime, or only a new ctime, which any write sets and ``utime``
  cannot restore (a rewrite whose mtime was put back: #12 rule 18) — and is read
  whole;
* anything else (rewritten, truncated, rotated, a document source, a new parser
  version, ``--full``) → re-read whole, its old rows replaced;
* a source that vanished (deleted, or under a folder discovery could not look at:
  ``LoadReport.problems``), or that held sessions and can no longer be read →
  archived: its sessions kept until ``agentlog prune`` (:mod:`agentlog.index.archive`);
  one that comes back is un-archived, one whose session turns up at another path
  (Codex moves finished sessions to ``archived_sessions/``) hands the session over;
* Claude Code's prompt history (``history.jsonl``) then gives a prompt-only session for
  each session whose transcript the index does not hold (:mod:`agentlog.index.history`);
* sources agents keep inside projects (Aider's history) are then looked for in the
  folders the stored sessions recorded as ``cwd`` (:func:`agentlog.load.project_sources`)
  and, once found, remembered like sources found under a ``--root``;
* a source whose content fails to parse → recorded with its error (its sessions
  removed: it changed), retried when it changes;
* a source whose first session has the key another source holds is judged by
  :func:`agentlog.rules.copy_verdict` on its whole content, as
  :func:`agentlog.load.build_sessions` does: a copy (Codex ``sessions/`` and
  ``archived_sessions/``, the same tree reached twice) → recorded as a duplicate;
  a longer copy → it takes the session over and the other source becomes its
  duplicate; a copy that went on apart, or a different session → stored under
  :func:`~agentlog.rules.distinct_id` ids.

Each source is written in a savepoint of its own, and small ones committed
together (:class:`_Batch`), so a crash (even SIGKILL) never corrupts the rest
and a bad file costs only itself; the next sync completes the work.  Parsing
happens outside the write lock; the transaction re-checks that no other
process stored the same bytes meanwhile.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from agentlog.adapters import Adapter, JsonlAdapter, LazyAdapter, SourceRef, resolved
from agentlog.adapters.base import Fragment, reads_lines
from agentlog.index import archive, deferred, history, memo
from agentlog.index.db import MMAP_SIZE, rollback, transaction
from agentlog.index.deferred import DeferredText
from agentlog.load import (
    Batch,
    LoadReport,
    SourceParse,
    discover_sources,
    project_sources,
    rename_source,
    signatures,
    still_there,
)
from agentlog.probe import recording
from agentlog.readers import describe_error, open_regular
from agentlog.rules import Signature, copy_verdict, distinct_id, session_key

if TYPE_CHECKING:
    from agentlog.index.store import Store
    from agentlog.worker import ParseJob, SharedParse

TAIL = 64
WORKER_MIN = 32 << 20
"""New bytes from which a JSONL source is parsed in a second process while this
one stores (both cores busy: 300 MB synced in ~40% less time)."""


@dataclass
class SyncReport:
    """What one sync did: counts of sources by outcome, bytes parsed, time (s).
    ``archived``: sources newly found gone, their sessions kept; ``restored``:
    archived sources found again; ``removed``: sources gone that held no session."""

    sources: int = 0
    unchanged: int = 0
    appended: int = 0
    reparsed: int = 0
    archived: int = 0
    restored: int = 0
    removed: int = 0
    duplicates: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)
    bytes_parsed: int = 0
    seconds: float = 0.0
    roots: LoadReport = field(default_factory=LoadReport)
    checked: int | None = None
    """Paths the no-change check ``stat``-ed to find nothing changed (0: a resident's
    watch vouched for them, :mod:`agentlog.resident.fresh`); ``None``: the full sync ran."""
    building: bool = False
    """Nothing synced: the index is being built in the background
    (:mod:`agentlog.service.first_run`)."""


@dataclass
class _Row:
    id: int
    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    parsed_offset: int
    tail_hash: bytes | None
    parser_version: int | None
    parser_state: bytes | None
    headers: bytes | None
    sidecar_sig: str
    error: str | None
    duplicate_of: str | None
    archived_at: str | None
    sidecars: str
    """The sidecar paths as a JSON list."""


Progress = Callable[[int, int, str], None]
"""``progress(bytes_done, bytes_total, path)`` while sources are parsed."""


def sync(
    conn: sqlite3.Connection,
    adapters: Iterable[Adapter | LazyAdapter],
    env: Mapping[str, str],
    home: Path,
    extra_roots: Iterable[Path] = (),
    full: bool = False,
    progress: Progress | None = None,
) -> SyncReport:
    """Bring the index up to date for ``adapters`` (adapters, or
    :class:`~agentlog.adapters.LazyAdapter` objects: imported only when their
    files are found); returns what was done.  ``conn`` comes from
    :func:`agentlog.index.db.connect`."""
    conn.execute(f"PRAGMA mmap_size = {SYNC_MMAP_SIZE}")
    try:
        return _sync(conn, adapters, env, home, extra_roots, full, progress)
    finally:
        conn.execute(f"PRAGMA mmap_size = {MMAP_SIZE}")


SYNC_MMAP_SIZE = 0
"""Bytes of the index a sync reads through a memory map (none: SQLite's page
cache, bounded).  Every page a sync touches through the map counts in the
process's RSS: a first index of a 1.6 GB home peaked at 730–880 MB with the 1 GiB
map reads use (:data:`agentlog.index.db.MMAP_SIZE`), which is set back after."""


def _sync(
    conn: sqlite3.Connection,
    adapters: Iterable[Adapter | LazyAdapter],
    env: Mapping[str, str],
    home: Path,
    extra_roots: Iterable[Path],
    full: bool,
    progress: Progress | None,
) -> SyncReport:
    start = time.perf_counter()
    adapters = list(adapters)
    extra_roots = list(extra_roots)
    if not full and not extra_roots and (quick := _unchanged_home(conn, adapters, env, home)) is not None:
        quick.seconds = time.perf_counter() - start
        return quick
    started_ns = memo.clock_ns()
    with recording() as looks:
        report, found, cwds = _sync_home(conn, adapters, env, home, extra_roots, full, progress)
    if not extra_roots:
        memo.record(conn, adapters, home, looks, started_ns, found, cwds, report.roots)
    report.seconds = time.perf_counter() - start
    return report


def _unchanged_home(
    conn: sqlite3.Connection, adapters: list[Adapter | LazyAdapter], env: Mapping[str, str], home: Path
) -> SyncReport | None:
    """The report of a sync that changes nothing, when the memo of the last one
    shows that nothing changed (:func:`agentlog.index.memo.unchanged`), without
    running discovery; else ``None``."""
    outcome = memo.unchanged(conn, adapters, env, home)
    if outcome is None:
        return None
    roots = LoadReport(
        roots=outcome.roots,
        sources=outcome.counts,
        errors=outcome.errors,
        duplicates=outcome.duplicates,
        problems=outcome.problems,
    )
    report = SyncReport(sources=outcome.sources, unchanged=outcome.sources, roots=roots, checked=outcome.checked)
    report.failed.extend(roots.errors)
    report.sources += len(roots.errors)
    if any(a.slug == "claude_code" for a in adapters):
        history.sync_history(conn, env, home, report)
    return report


def remember_roots(conn: sqlite3.Connection, roots: Iterable[Path]) -> None:
    """Keep ``roots`` (``--root`` folders) in the index as real paths: its later
    syncs read their sources without the flag, so they stay log folders
    (:func:`agentlog.index.queries.stored_roots`)."""
    conn.executemany("INSERT OR IGNORE INTO roots (path) VALUES (?)", [(os.path.realpath(r),) for r in roots])


def _sync_home(
    conn: sqlite3.Connection,
    adapters: list[Adapter | LazyAdapter],
    env: Mapping[str, str],
    home: Path,
    extra_roots: list[Path],
    full: bool,
    progress: Progress | None,
) -> tuple[SyncReport, set[str], list[str]]:
    """The full sync: discovery, then every source checked; with the paths of the
    sources it handled and the folders it looked for project files in."""
    by_slug = {a.slug: a for a in adapters}
    report = SyncReport()
    remember_roots(conn, extra_roots)
    stats: dict[str, os.stat_result] = {}  # each source's stat from discovery: one per file
    refs = {
        ref.path: (adapter, ref)
        for adapter, ref in discover_sources(adapters, env, home, extra_roots, report.roots, stats)
    }
    report.failed.extend(report.roots.errors)  # e.g. file names that are not UTF-8
    report.sources += len(report.roots.errors)  # found, then failed: counted as every failed source is
    rows = _known(conn, list(by_slug))  # one query for every known source
    # Sources found once under a --root are remembered and kept fresh.
    for path, known in rows.items():
        agent = known.agent
        if path not in refs and agent in by_slug and still_there(agent, path, report.roots):
            sidecars = tuple(json.loads(known.sidecars)) if known.sidecars != "[]" else ()
            refs[path] = (resolved(by_slug[agent]), SourceRef(agent=agent, path=path, sidecars=sidecars))
    gone = set(rows) - set(refs)
    hidden = {path: report.roots.hides(path, rows[path].agent) for path in gone}
    why = {
        path: f"{problem.path} cannot be looked at: {problem.error}"
        for path, problem in hidden.items()
        if problem
    }
    if gone:
        archived, removed = archive.archive_gone(conn, gone, why)
        report.archived += archived
        report.removed += removed
        rows = _known(conn, list(by_slug))  # it marks the copies of what it archived
    _sync_all(conn, list(refs.values()), full, progress, report, rows, stats)
    found = set(refs)
    cwds: list[str] = []
    # Then the sources agents keep inside projects, in the folders the sessions
    # stored so far were recorded in (kept fresh above once found).
    if any(a.project_files for a in adapters):
        cwds = [cwd for (cwd,) in conn.execute("SELECT DISTINCT cwd FROM sessions WHERE cwd IS NOT NULL")]
        extra = project_sources(adapters, cwds, refs, report.roots, stats)
        _sync_all(conn, extra, full, progress, report)
        found.update(ref.path for _, ref in extra)
    if "claude_code" in by_slug:  # last: the transcripts it must not count twice are stored
        history.sync_history(conn, env, home, report, full)
    return report, found, cwds


def _sync_all(
    conn: sqlite3.Connection,
    refs: list[tuple[Adapter, SourceRef]],
    full: bool,
    progress: Progress | None,
    report: SyncReport,
    rows: Mapping[str, _Known] | None = None,
    stats: Mapping[str, os.stat_result] | None = None,
) -> None:
    """Sync ``refs``: skip the unchanged ones after a ``stat``, parse the rest.
    ``rows``: what the index holds of every known source (else looked up one by
    one); ``stats``: each source's ``stat`` taken by discovery in this sync (else
    taken here).  An unchanged source costs a dictionary look-up and a tuple
    comparison: no query, no second ``stat``."""
    work: list[tuple[Adapter, SourceRef, os.stat_result, _Row | None, str]] = []
    stats = stats or {}
    unchanged = 0
    for adapter, ref in refs:
        path = ref.path
        st = stats.get(path)
        if st is None:
            try:
                st = os.stat(path)
            except OSError as exc:
                report.sources += 1
                if not _gone_meanwhile(conn, ref, exc, report):
                    _record_error(conn, adapter, ref, describe_error(exc), None, report)
                continue
        seen = rows.get(path) if rows is not None else _row(conn, path)
        sig = _sidecar_sig(ref) if ref.sidecars else ""
        if (
            not full
            and seen is not None
            and seen.size == st.st_size
            and seen.mtime_ns == st.st_mtime_ns
            and _unchanged(seen, st, sig, adapter)
        ):  # the first two tests alone turn most changed files away
            if seen.archived_at is not None:  # back as it was read: what is stored is its content
                with transaction(conn):
                    conn.execute(
                        "UPDATE sources SET archived_at = NULL, error = NULL WHERE id = ?", (seen.id,)
                    )
                report.restored += 1
            unchanged += 1
            continue
        row = seen if isinstance(seen, _Row) or seen is None else _row(conn, path)
        work.append((adapter, ref, st, row, sig))
    report.sources += unchanged + len(work)
    report.unchanged += unchanged
    if not work:
        if progress:
            progress(0, 0, "")
        return
    total = sum(
        st.st_size - (row.parsed_offset if row and _appendable(row, st, sig, a, full) else 0)
        for a, _, st, row, sig in work
    )
    done = 0
    batch = _Batch(conn)
    plans = [_plan(a, ref, st, row, sig, full) for a, ref, st, row, sig in work]
    shared = _shared_parse(work, plans)
    try:
        for n, (adapter, ref, st, row, _) in enumerate(work):
            if progress:
                progress(done, total, ref.path)
            parsed = None
            if shared is not None and n in shared[1] and not shared[0].broken:
                parsed = shared[0].batches(shared[1][n])
            done += _sync_one(conn, adapter, ref, st, row, plans[n], report, batch, parsed)
        batch.commit()
    finally:
        if shared is not None:
            shared[0].close()
        rollback(conn)  # only when an exception left the batch open
        batch.close()
    if progress:
        progress(total, total, "")


BATCH_SECONDS = 0.25
"""How long small sources are stored in one transaction before it is committed:
a commit per source (each a new segment of the full-text index, WAL frames for
every b-tree touched) cost a third of a first index of 3,000 small sessions."""


DEFER_MAX = 4 << 20
"""New bytes under which a source's full-text rows wait for its batch's commit
(:mod:`agentlog.index.deferred`: one FTS5 segment per batch, not per source);
a larger one indexes its text as it is written (memory stays a batch of lines)."""


class _Batch:
    """Sources committed together, each in a savepoint of its own: a source that
    fails is undone alone (the others of the batch stay), a crash loses at most
    the batch (the next sync reads those sources again), and the write lock is
    held at most :data:`BATCH_SECONDS` beyond one source's work.  The full-text
    rows of its small sources (``deferred``) are inserted just before it commits."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.started = 0.0
        self.deferred = DeferredText()
        deferred.register(conn, self.deferred)

    def close(self) -> None:
        """After the last commit (or a rollback): nothing waits any more."""
        self.deferred.clear()
        deferred.register(self.conn)

    def begin(self) -> None:
        """Start one source's writes (taking the write lock if the batch has none)."""
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN IMMEDIATE")
            self.started = time.monotonic()
        self.conn.execute("SAVEPOINT source")

    def end(self) -> None:
        """Keep the source's writes; commit the batch once it is old enough."""
        self.conn.execute("RELEASE source")
        self.deferred.keep()
        if time.monotonic() - self.started >= BATCH_SECONDS:
            self.commit()

    def undo(self) -> None:
        """Drop the source's writes (the batch's other sources stay)."""
        self.deferred.drop()
        if self.conn.in_transaction:  # SQLite ends it itself on a full disk or an I/O error
            self.conn.execute("ROLLBACK TO source")
            self.conn.execute("RELEASE source")
        else:
            self.deferred.clear()  # the whole batch is gone

    def commit(self) -> None:
        if self.conn.in_transaction:
            self.deferred.flush(self.conn)
            self.conn.execute("COMMIT")


_COLUMNS = """id, size, mtime_ns, ctime_ns, inode, parsed_offset, tail_hash, parser_version, parser_state, headers,
    sidecar_sig, error, duplicate_of, archived_at, sidecars"""


class _Known(NamedTuple):
    """What the no-change check needs of a known source (no blobs: one query for
    thousands of sources stays a few milliseconds)."""

    path: str
    agent: str
    id: int
    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    parser_version: int | None
    sidecar_sig: str
    sidecars: str
    archived_at: str | None
    duplicate_of: str | None


def _known(conn: sqlite3.Connection, agents: list[str]) -> dict[str, _Known]:
    """``path -> what the no-change check needs`` of every source of ``agents`` the index knows."""
    marks = ", ".join("?" * len(agents))
    query = f"SELECT {', '.join(_Known._fields)} FROM sources WHERE agent IN ({marks})"  # index sources_known
    return {row.path: row for row in map(_Known._make, conn.execute(query, agents))}


def _row(conn: sqlite3.Connection, path: str) -> _Row | None:
    found = conn.execute(f"SELECT {_COLUMNS} FROM sources WHERE path = ?", (path,)).fetchone()
    return _Row(*found) if found else None


def _sidecar_sig(ref: SourceRef) -> str:
    return _sidecar_sig_of(ref.sidecars)


def _sidecar_sig_of(sidecars: Iterable[str]) -> str:
    """What the index keeps of a source's sidecars: each one's size and mtime."""
    parts = []
    for path in sidecars:
        try:
            st = os.stat(path)
            parts.append(f"{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append("-")
    return ",".join(parts)


def _unchanged(row: _Row | _Known, st: os.stat_result, sig: str, adapter: Adapter) -> bool:
    return (row.size, row.mtime_ns, row.ctime_ns, row.inode, row.sidecar_sig, row.parser_version) == (
        st.st_size,
        st.st_mtime_ns,
        st.st_ctime_ns,
        st.st_ino,
        sig,
        adapter.parser_version,
    )


def _appendable(row: _Row, st: os.stat_result, sig: str, adapter: Adapter, full: bool) -> bool:
    return (
        not full
        and isinstance(adapter, JsonlAdapter)
        and row.error is None
        and row.duplicate_of is None
        and row.parser_version == adapter.parser_version
        and row.inode == st.st_ino
        and row.sidecar_sig == sig
        and st.st_size >= row.parsed_offset
        # Same size: nothing was appended, yet the stat differs — a new mtime, or only
        # a new ctime (a rewrite in place whose mtime was restored with utime, which
        # cannot restore the ctime; or a chmod): read whole (#12 rule 18).
        and st.st_size > row.size
        and row.parser_state is not None
    )


def tail_hash(path: str, offset: int) -> bytes:
    """SHA-1 of the :data:`TAIL` bytes before ``offset``: an appended file still ends with them there."""
    return _digest(_tail(path, offset))


def _tail(path: str, offset: int) -> bytes:
    """The :data:`TAIL` bytes before ``offset`` (fewer at the file's start)."""
    with open_regular(path) as fh:
        fh.seek(max(0, offset - TAIL))
        return fh.read(min(TAIL, offset))


def _digest(data: bytes) -> bytes:
    import hashlib  # OpenSSL: only when a source changed

    return hashlib.sha1(data).digest()


def _resumable(path: str, offset: int, stored: bytes | None) -> bool:
    """Whether the new bytes of a grown file can be read on their own, from
    ``offset``: the bytes before it are still those stored (``stored``: their
    :func:`tail_hash`), and they end with a newline (or there are none).  A
    complete last line written without one was read as a line; bytes appended
    to it continue that line, which a fresh read sees as one (invalid) line, so
    the file is read again whole.  One read serves both checks."""
    tail = _tail(path, offset)
    return _digest(tail) == stored and (offset == 0 or tail.endswith(b"\n"))


class SourceError(Exception):
    """The source itself could not be read or parsed (not an index problem);
    ``unreadable`` when it could not be read (an ``OSError``): then what the index
    holds of it is kept."""

    def __init__(self, message: str, unreadable: bool = False) -> None:
        super().__init__(message)
        self.unreadable = unreadable


_CANNOT_READ = (
    "SQLITE_CANTOPEN",
    "SQLITE_BUSY",
    "SQLITE_LOCKED",
    "SQLITE_IOERR",
    "SQLITE_PERM",
    "SQLITE_AUTH",
)
"""SQLite errors that say a database source cannot be read now, not that it changed."""


def _unreadable(exc: BaseException) -> bool:
    """Whether ``exc`` says the source cannot be read (its stored sessions are kept)
    rather than that its content is bad (they are dropped)."""
    if isinstance(exc, OSError):
        return True
    return isinstance(exc, sqlite3.Error) and (getattr(exc, "sqlite_errorname", None) or "").startswith(
        _CANNOT_READ
    )


def _guarded(batches: Iterator[list[Fragment]]) -> Iterator[list[Fragment]]:
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except (OSError, ValueError, RecursionError, sqlite3.Error) as exc:
            raise SourceError(describe_error(exc), unreadable=_unreadable(exc)) from exc
        yield batch
        del batch  # not kept while the next one is made


class _Plan(NamedTuple):
    """How one changed source is read: appended from ``start`` resuming ``state``,
    or whole (``append`` false, 0, ``None``); ``error``: the check of its tail
    failed so (raised when it is synced)."""

    append: bool
    start: int
    state: bytes | None
    sig: str
    error: OSError | None = None


def _plan(
    adapter: Adapter, ref: SourceRef, st: os.stat_result, row: _Row | None, sig: str, full: bool
) -> _Plan:
    """Whether a changed source can be read from where the last sync stopped: it
    grew, its bytes before that point are those stored, and they end a line."""
    if row is None or not _appendable(row, st, sig, adapter, full):
        return _Plan(False, 0, None, sig)
    try:
        resumable = _resumable(ref.path, row.parsed_offset, row.tail_hash)
    except OSError as exc:
        return _Plan(False, 0, None, sig, exc)
    if not resumable:  # rewritten, or glued onto a last line that had no newline
        return _Plan(False, 0, None, sig)
    return _Plan(True, row.parsed_offset, row.parser_state, sig)


SHARED_MIN = 2
"""Changed small JSONL sources from which one worker parses them all
(:class:`~agentlog.worker.SharedParse`)."""


def _shared_parse(
    work: list[tuple[Adapter, SourceRef, os.stat_result, _Row | None, str]], plans: list[_Plan]
) -> tuple[SharedParse, dict[int, int]] | None:
    """One worker parsing, ahead of the store, the small line-by-line sources of
    ``work`` (those under :data:`WORKER_MIN` new bytes, without sidecars: a large
    one gets a worker of its own); with ``{position in work: job number}``.
    The worker is a new interpreter when their new bytes reach :data:`WORKER_MIN`,
    else a fork of this process.  ``None`` when there are too few, no second core, or
    a fork would be needed where it is not safe (:func:`agentlog.worker.forks_safely`:
    ``serve``'s threads, a notebook's)."""
    if len(work) < SHARED_MIN:
        return None
    from agentlog import worker  # multiprocessing: only when logs changed

    if not worker.available():
        return None
    jobs: list[ParseJob] = []
    numbers: dict[int, int] = {}
    size = 0
    for n, ((adapter, ref, st, _, _), plan) in enumerate(zip(work, plans, strict=True)):
        if (
            plan.error is None
            and not ref.sidecars
            and isinstance(adapter, JsonlAdapter)
            and reads_lines(adapter, ref)
            and st.st_size - plan.start < WORKER_MIN
        ):
            numbers[n] = len(jobs)
            jobs.append((adapter, ref, plan.start, plan.state))
            size += st.st_size - plan.start
    # a new interpreter (~0.1-0.3 s to start) for seconds of parsing, as a large source's
    # worker; a fork (~10 ms) for a few appended lines, as a warm report's sync has
    fresh = size >= WORKER_MIN
    if len(jobs) < SHARED_MIN or not (fresh or worker.forks_safely()):
        return None
    return worker.SharedParse(jobs, fresh=fresh), numbers


def _sync_one(
    conn: sqlite3.Connection,
    adapter: Adapter,
    ref: SourceRef,
    st: os.stat_result,
    row: _Row | None,
    plan: _Plan,
    report: SyncReport,
    batch: _Batch,
    parsed: Iterator[Batch] | None = None,
) -> int:
    """Parse and store one source in a savepoint of ``batch``, streaming (memory
    stays bounded by a batch of lines, not by the file); returns the bytes parsed.
    ``parsed``: its batches as a worker parses them, following ``plan``."""
    from agentlog.index.store import encode_headers  # loaded only to write

    append, start, state, sig = plan.append, plan.start, plan.state, plan.sig
    batch.begin()
    try:
        if _row(conn, ref.path) != row:
            batch.undo()  # another agentlog synced this source meanwhile
            return 0
        try:
            if plan.error is not None:
                raise plan.error
            parse = SourceParse(adapter, ref, start, state, worker_min=WORKER_MIN, parsed=parsed)
            waits = batch.deferred if st.st_size - start < DEFER_MAX else None
            duplicate_of = _store(conn, adapter, ref, parse, append, waits)
            tail = tail_hash(ref.path, parse.consumed)
            headers = encode_headers(parse.headers)
        except (OSError, OverflowError, RecursionError) as exc:  # the file, or values the index cannot hold
            raise SourceError(describe_error(exc), unreadable=_unreadable(exc)) from exc
        conn.execute(
            """UPDATE sources SET size = ?, mtime_ns = ?, ctime_ns = ?, inode = ?, parsed_offset = ?, tail_hash = ?,
                   parser_version = ?, parser_state = ?, headers = ?, sidecars = ?, sidecar_sig = ?,
                   error = NULL, duplicate_of = ?, archived_at = NULL, synced_at = datetime('now')
               WHERE path = ?""",
            (
                st.st_size,
                st.st_mtime_ns,
                st.st_ctime_ns,
                st.st_ino,
                parse.consumed,
                tail,
                adapter.parser_version,
                parse.state or None,
                headers,
                json.dumps(list(ref.sidecars)),
                sig,
                duplicate_of,
                ref.path,
            ),
        )
        batch.end()
    except SourceError as exc:
        batch.undo()
        if not _gone_meanwhile(conn, ref, exc.__cause__, report):
            _record_error(conn, adapter, ref, str(exc), (st, sig), report, keep=exc.unreadable)
        return st.st_size
    except BaseException:
        rollback(conn)
        raise
    if duplicate_of:
        report.duplicates += 1
    elif append:
        report.appended += 1
    else:
        report.reparsed += 1
    if row is not None and row.archived_at is not None and not duplicate_of:
        report.restored += 1
    report.bytes_parsed += parse.consumed - start
    return parse.consumed - start


def _store(
    conn: sqlite3.Connection,
    adapter: Adapter,
    ref: SourceRef,
    parse: SourceParse,
    append: bool,
    waits: DeferredText | None = None,
) -> str | None:
    """Write what ``parse`` yields (its full-text rows into ``waits`` when given);
    returns the path of the source that already holds this session (nothing is
    then stored), else ``None``."""
    from agentlog.index.store import Store

    store = Store(conn, fresh_source=not append, deferred=waits)
    source_id, new = _added_source(conn, adapter, ref)
    if not append and not new:  # a new row: nothing references it yet (foreign keys cascade)
        store.clear_source(source_id)
    keys: set[str] = set()
    renamed: bool | None = None  # decided on the first batch that has a header
    batches = _guarded(parse.batches())
    again: SourceParse | None = None  # a second read, when judging it took the whole source
    while (batch := next(batches, None)) is not None:
        if renamed is None and parse.headers:
            head = parse.headers[0]
            owner = store.owner_of(head.key)
            if (
                owner is not None
                and owner != source_id
                and history.yield_prompt_only(conn, head.key, owner)
            ):
                owner = None  # its transcript is back: the prompts alone are not kept beside it
            renamed = owner is not None and owner != source_id
            # Another source holds this key: a copy, a longer copy or a different session
            # (as build_sessions decides).  Once stored under its own ids, an append is no
            # copy and stays so (the session is not split when the other source is gone).
            if store.owner_of(session_key(adapter.slug, distinct_id(head.id, ref.path))) == source_id:
                renamed = True
            elif owner is not None and renamed:
                mine = signatures(batch, head.id)
                whole = True  # judged on the whole source: its later batches are read for it
                for later in batches:
                    whole = False
                    mine.extend(signatures(later, head.id))
                held_path: str = conn.execute("SELECT path FROM sources WHERE id = ?", (owner,)).fetchone()[0]
                taken = _judge(conn, store, owner, held_path, ref.path, _held(store, head.key), mine)
                if taken is None:
                    return held_path
                renamed = not taken
                if not whole:  # read again, to store it
                    again = SourceParse(adapter, ref, parse.start, parse.resume_state)
                    batches = _guarded(again.batches())
                    continue
        if renamed:
            batch = rename_source(parse.headers, batch, ref.path)[1]
        keys |= store.put_fragments(source_id, adapter.slug, batch)
        del batch  # not kept while the next one is made
    if again is not None:
        parse.headers, parse.consumed, parse.state = again.headers, again.consumed, again.state
    if renamed:
        parse.headers = rename_source(parse.headers, [], ref.path)[0]  # stored so too
    headers = parse.headers
    store.put_headers(source_id, headers)
    store.refresh_sessions(keys | {h.key for h in headers})
    return None


def _held(store: Store, key: str) -> list[Signature]:
    """The signatures of session ``key``'s stored messages that a parse yields
    (:func:`agentlog.load.signatures`, what a new source is compared by): the
    orphan ``tool`` messages the assembly made for results whose call it never
    saw (:func:`agentlog.assemble.is_orphan`) are left out.  Kept in, they are
    messages a copy of the same file "lacks" (a Codex rollout moved to
    ``archived_sessions/`` was never taken over from its archived source)."""
    from agentlog.assemble import is_orphan

    return [signature for signature in store.signatures(key) if not is_orphan(signature[0])]


def _judge(
    conn: sqlite3.Connection,
    store: Store,
    owner: int,
    held_path: str,
    path: str,
    held: list[Signature],
    mine: list[Signature],
) -> bool | None:
    """What the source at ``path`` does whose first session, with messages
    ``mine``, has the key source ``owner`` (at ``held_path``) holds, with messages
    ``held`` — as :func:`agentlog.load.build_sessions` decides, by
    :func:`agentlog.rules.copy_verdict`: ``None``, a copy: it is not stored;
    ``True``, it takes the session over — a longer copy (the held source becomes
    its copy, and copies of that are judged again at the next sync), or the same
    session back at another path while the held source is archived (Codex moves
    finished sessions to ``archived_sessions/``); ``False``: both are kept, it
    under :func:`~agentlog.rules.distinct_id` ids."""
    verdict = copy_verdict(held, mine)
    archived = archive.is_archived(conn, owner)
    if verdict == "copy" and not (archived and copy_verdict(mine, held) == "copy"):
        return None
    if verdict in ("overlaps", "different"):
        return False
    if archived:
        store.remove_source(held_path)
    else:
        store.clear_source(owner)
        conn.execute("UPDATE sources SET duplicate_of = ? WHERE id = ?", (path, owner))
        conn.execute("UPDATE sources SET size = -1 WHERE duplicate_of = ?", (held_path,))
    return True


def _added_source(conn: sqlite3.Connection, adapter: Adapter, ref: SourceRef) -> tuple[int, bool]:
    """The id of ``ref``'s row in ``sources`` (added if missing), and whether it
    was added now (on a first index, every source: no look-ups for it)."""
    added = conn.execute("INSERT OR IGNORE INTO sources (path, agent) VALUES (?, ?)", (ref.path, adapter.slug))
    if added.rowcount == 1 and added.lastrowid:
        return added.lastrowid, True
    return _upsert_source(conn, adapter, ref), False


def _upsert_source(conn: sqlite3.Connection, adapter: Adapter, ref: SourceRef) -> int:
    conn.execute("INSERT OR IGNORE INTO sources (path, agent) VALUES (?, ?)", (ref.path, adapter.slug))
    source_id: int = conn.execute("SELECT id FROM sources WHERE path = ?", (ref.path,)).fetchone()[0]
    return source_id


def _gone_meanwhile(
    conn: sqlite3.Connection, ref: SourceRef, exc: BaseException | None, report: SyncReport
) -> bool:
    """Whether ``exc`` (met reading ``ref``) says the source itself is gone since
    discovery listed it (``FileNotFoundError``, nothing at its path now: removed
    or moved while the sync ran).  It is then what the next sync finds it to be,
    gone (:func:`agentlog.index.archive.archive_gone`: its sessions kept, archived;
    else ``removed``, a source new in this sync included: it leaves nothing), not
    a failure."""
    if not isinstance(exc, FileNotFoundError) or os.path.lexists(ref.path):
        return False
    archived, _ = archive.archive_gone(conn, [ref.path])
    report.archived += archived
    report.removed += 1 - archived
    return True


def _record_error(
    conn: sqlite3.Connection,
    adapter: Adapter,
    ref: SourceRef,
    error: str,
    seen: tuple[os.stat_result, str] | None,
    report: SyncReport,
    keep: bool = True,
) -> None:
    """Record why a source failed.  One that cannot be read (``keep``) and holds
    sessions keeps them, archived; otherwise its sessions are dropped and, with the
    ``seen`` stat kept, an unchanged failing file is not retried until it changes."""
    report.failed.append((ref.path, error))
    row = _row(conn, ref.path)
    if keep and row is not None and archive.keep_unreadable(conn, row.id, error):
        return
    size, mtime, ctime, inode, sig = (
        (seen[0].st_size, seen[0].st_mtime_ns, seen[0].st_ctime_ns, seen[0].st_ino, seen[1])
        if seen
        else (-1, -1, -1, -1, "")
    )
    from agentlog.index.store import Store

    with transaction(conn):
        source_id = _upsert_source(conn, adapter, ref)
        store = Store(conn)
        store.clear_source(source_id)
        store.refresh_sessions(())  # copies of its calls elsewhere are counted instead
        conn.execute(
            """UPDATE sources SET error = ?, size = ?, mtime_ns = ?, ctime_ns = ?, inode = ?, sidecar_sig = ?,
                   parser_version = ?, parsed_offset = 0, parser_state = NULL, headers = NULL, archived_at = NULL,
                   synced_at = datetime('now') WHERE id = ?""",
            (error, size, mtime, ctime, inode, sig, adapter.parser_version, source_id),
        )


def sync_known(
    conn: sqlite3.Connection, adapters: Iterable[Adapter], paths: Iterable[str]
) -> tuple[SyncReport, set[str]]:
    """Sync only the already-known sources among ``paths`` (what a file watcher saw
    change; a sidecar stands for its source), as :func:`sync` syncs them, without
    discovery: a new file needs :func:`sync`.  Returns the report and the paths the
    index does not know (left out)."""
    start = time.perf_counter()
    by_slug = {a.slug: a for a in adapters}
    rows = _known(conn, list(by_slug))
    sidecars = {path: list(json.loads(row.sidecars)) for path, row in rows.items()}
    owner = {side: path for path, sides in sidecars.items() for side in sides}
    wanted = {owner.get(p, p) for p in paths}
    unknown = {p for p in wanted if p not in rows}
    refs = [
        (by_slug[rows[p].agent], SourceRef(agent=rows[p].agent, path=p, sidecars=tuple(sidecars[p])))
        for p in sorted(wanted)
        if p in rows
    ]
    report = SyncReport()
    _sync_all(conn, refs, False, None, report, rows)
    report.seconds = time.perf_counter() - start
    return report, unknown
