"""Exports: the sessions asked for, read from the index as a stream, redacted,
written in one of :data:`agentlog.export.FORMATS`.

The CLI (``agentlog export``) and the Python API call :func:`export_sessions`;
the writers are :mod:`agentlog.export`'s modules.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import sqlite3
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO, TextIO, cast

import msgspec

from agentlog.errors import AgentlogError, UsageError
from agentlog.export import ExportOptions, Format, Transcript, focus
from agentlog.export.redaction import redact_header, redact_message
from agentlog.export.target import Target
from agentlog.index import queries
from agentlog.index.db import conn_path
from agentlog.live.procs import ProcessTable
from agentlog.live.procs import scan as scan_processes
from agentlog.model import Message, Session
from agentlog.present import clean
from agentlog.query import SessionFilter
from agentlog.service.home import Home, own_guard
from agentlog.service.status import refine_sessions

PAGE = 500
"""Messages read from the index at once while exporting."""


def stream_messages(
    conn: sqlite3.Connection, key: str, include_hidden: bool = False, page: int = PAGE
) -> Iterator[Message]:
    """Session ``key``'s messages in order (meta ones only when
    ``include_hidden``), read :data:`PAGE` at a time; none is held after it is
    yielded.

    Read without the index's memory map while the stream lasts
    (:data:`STREAM_MMAP_SIZE`): every page read through the map stays in the
    process's resident memory, so streaming a session of 315 MB (a 224 MB index)
    showed 170 MB of mapped file on top of 22 MB of its own."""
    (mapped,) = conn.execute("PRAGMA mmap_size").fetchone()
    conn.execute(f"PRAGMA mmap_size = {STREAM_MMAP_SIZE}")
    try:
        after = 0
        while True:
            batch, after = queries.messages_after(conn, key, after, page, include_hidden=include_hidden)
            batch.reverse()
            full = len(batch) == page
            while batch:
                yield batch.pop()
            if not full:
                return
    finally:
        conn.execute(f"PRAGMA mmap_size = {mapped}")


STREAM_MMAP_SIZE = 0
"""Bytes of the index a message stream reads through a memory map (none: SQLite's
page cache, bounded; as a sync reads, :data:`agentlog.index.sync.SYNC_MMAP_SIZE`)."""


def _transcript(
    conn: sqlite3.Connection, header: Session, options: ExportOptions, procs: ProcessTable | None, depth: int = 0
) -> Transcript:
    key = header.key
    kids = refine_sessions(conn, queries.children(conn, key), procs=procs)  # the board status, as every listing

    def messages() -> Iterator[Message]:  # map, not a generator: the last message is not kept
        found = stream_messages(conn, key, include_hidden=options.hidden)
        if options.focused:
            found = focus(found)
        return map(redact_message, found) if options.redact else found

    children = (
        [_transcript(conn, c, options, procs, depth + 1) for c in kids] if options.subagents and depth < 32 else []
    )
    shown = (lambda s: redact_header(s)) if options.redact else (lambda s: s)
    return Transcript(
        shown(header),
        messages,
        children,
        {c.parent_tool_call_id: shown(c) for c in kids if c.parent_tool_call_id},
        [shown(c) for c in kids if not c.parent_tool_call_id],
    )


def select(
    conn: sqlite3.Connection, refs: Sequence[str], where: SessionFilter | None, options: ExportOptions
) -> list[Transcript]:
    """The sessions ``refs`` name (keys, ids or unique id prefixes, in that
    order) or, with ``where``, every session it keeps that is not a child of
    another it keeps (whose subagents come with it when ``options.subagents``);
    ``codex exec`` runs (kind ``exec``) only with ``where.include_exec`` or
    ``options.subagents``, as ``agentlog sessions`` lists them.  Raises
    :class:`~agentlog.errors.NotFound` for a ref that names no session."""
    if where is not None:  # a subagent whose parent is not kept (gone, empty, out of span) stands alone
        listed = queries.list_sessions(conn, msgspec.structs.replace(where, include_children=True))
        kept = {s.key for s in listed}
        keys = [
            s.key
            for s in listed
            if (s.parent_key is None or s.parent_key not in kept)
            and (s.kind != "exec" or where.include_exec or options.subagents)
        ]
    else:
        keys = list(dict.fromkeys(queries.resolve_key(conn, ref) for ref in refs))
    by_key: dict[str, Session] = {}
    for at in range(0, len(keys), PAGE):  # headers with their sources, a bounded IN list at a time
        by_key.update((s.key, s) for s in queries.list_sessions_by_keys(conn, keys[at : at + PAGE]))
    procs = scan_processes()  # once for the export, not once a session
    headers = refine_sessions(conn, [by_key[k] for k in keys], procs=procs)  # the board status, as every listing
    return [_transcript(conn, h, options, procs) for h in headers]


class ExportReport(msgspec.Struct, kw_only=True):
    """What an export wrote: ``format``, ``sessions`` (exported, children
    included), ``path`` (``None``: standard output), ``pages_written``,
    ``pages_unchanged`` and ``pages_removed`` (an HTML site: pages of sessions an
    earlier export wrote and this one does not), ``rows`` (Parquet rows per table)."""

    format: str
    sessions: int
    path: str | None = None
    pages_written: int = 0
    pages_unchanged: int = 0
    pages_removed: int = 0
    rows: dict[str, int] = msgspec.field(default_factory=dict)


def _parquet(
    conn: sqlite3.Connection, transcripts: list[Transcript], path: Path, target: Target
) -> dict[str, int]:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise UsageError("--format parquet needs pyarrow: pip install 'agentlog[parquet]'") from None
    from agentlog.export.parquet import write_dataset
    from agentlog.service.usage import UsageQuery, index_usage

    keys = {m.session.key for t in transcripts for m in t.tree()}
    calls = [pc for pc in index_usage(conn, UsageQuery()).calls if pc.call.session_key in keys]
    return write_dataset(transcripts, calls, path, target)


SOURCE_SQL = """SELECT 1 FROM sources WHERE path = ?1
    OR EXISTS (SELECT 1 FROM json_each(CASE WHEN json_valid(sidecars) THEN sidecars ELSE '[]' END) WHERE value = ?1)
    OR (NOT json_valid(sidecars) AND instr(sidecars, ?1) > 0)"""
"""Whether a path is a source or one of its sidecars.  A ``sidecars`` value that
is not JSON (a damaged row) is not read as a list (SQLite's ``json_each`` raised
"malformed JSON" for the whole export): a path written anywhere in it counts."""


def _is_source(conn: sqlite3.Connection, real: str) -> bool:
    """Whether ``real`` (a real path) is a source the index has read, one of its
    sidecars, or the same file as a source by device and inode (the index keeps
    each source's inode, of the file its path names, symlinks followed): another
    hard link of it (a file agents keep in projects, such as Aider's history,
    lies in no log folder :func:`~agentlog.service.home.linked_in` walks), or the
    file a source's path reaches through a symlink inside a log folder (the
    index stores the path as discovery found it)."""
    row = conn.execute(SOURCE_SQL, (real,)).fetchone()
    if row is not None:
        return True
    try:
        st = os.stat(real)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    for (path,) in conn.execute("SELECT path FROM sources WHERE inode = ?", (st.st_ino,)):
        with contextlib.suppress(OSError):
            if os.path.samestat(os.stat(path), st):
                return True
    return False


def _gone_targets(conn: sqlite3.Connection) -> set[str]:
    """The real paths of the archived sources (their files gone): for a symlink
    whose target was deleted, the path it names — a file written there becomes
    that transcript, and its session, kept only by the index, is read again as
    the export (tester14 finding 23: an export onto it lost the session)."""
    found: set[str] = set()
    for (path,) in conn.execute("SELECT path FROM sources WHERE archived_at IS NOT NULL AND typeof(path) = 'text'"):
        with contextlib.suppress(ValueError):  # a damaged row (a NUL in its path) costs only itself
            found.add(os.path.realpath(path))
    return found


def export_sessions(
    conn: sqlite3.Connection,
    fmt: Format,
    transcripts: list[Transcript],
    options: ExportOptions,
    path: Path | None,
    stdout: BinaryIO,
    site: bool = False,
    home: Home | None = None,
) -> ExportReport:
    """Write ``transcripts`` (from :func:`select`) as ``fmt`` to ``path`` (a file;
    a folder for ``parquet`` and for an HTML ``site``) or, without one, to
    ``stdout``.  Raises :class:`~agentlog.errors.UsageError` when a format needs a
    folder and none is given, when ``path`` is in one of ``home``'s log folders
    or is a log file (:meth:`~agentlog.service.home.Home.guard`: read-only,
    always; the ``--root`` folders any sync of this index was given count:
    :func:`~agentlog.index.queries.stored_roots`), or is agentlog's own: its index (the one in use too) or a sidecar,
    its caches and config, the resident's socket and lock
    (:func:`~agentlog.service.home.own_guard`; each checked
    before a byte is written, for each file written, symlinks resolved; each
    file written whole to a temporary file beside it and renamed into place:
    :class:`~agentlog.export.target.Target`), or pyarrow is missing for
    ``parquet``; :class:`~agentlog.errors.AgentlogError` naming the path when it
    cannot be written (a folder where a file goes, no permission, a full disk …)."""
    index = conn_path(conn) or None  # None: an index in memory
    own = own_guard(home.env if home is not None else os.environ, index)
    if home is not None:  # the --root folders earlier syncs were given are log folders too
        home = home.with_roots(queries.stored_roots(conn))
        sources = (path for (path,) in conn.execute("SELECT path FROM sources"))
        gone = functools.cache(lambda: _gone_targets(conn))
        logs = home.guard(lambda real: _is_source(conn, real) or real in gone(), index, sources)
        target = Target(lambda p: logs(p) or own(p))
    else:
        target = Target(own)
    if path is not None:
        target.check(path)
    try:
        return _export(conn, fmt, transcripts, options, path, stdout, site, target)
    except OSError as exc:
        if isinstance(exc, BrokenPipeError) or path is None:
            raise
        where = exc.filename or path
        raise AgentlogError(f"{where}: cannot write the export: {exc.strerror or exc}") from None


def _export(
    conn: sqlite3.Connection,
    fmt: Format,
    transcripts: list[Transcript],
    options: ExportOptions,
    path: Path | None,
    stdout: BinaryIO,
    site: bool,
    target: Target,
) -> ExportReport:
    count = sum(1 for t in transcripts for _ in t.tree())
    report = ExportReport(format=fmt, sessions=count, path=str(path) if path else None)
    if fmt == "parquet" or (fmt == "html" and site):
        if path is None:
            raise UsageError(
                f"--format {fmt}{' --all' if site else ''} writes a folder: give it with -o PATH"
            )
        if fmt == "parquet":
            report.rows = _parquet(conn, transcripts, path, target)
        else:
            from agentlog.export.html import write_site

            done = write_site(transcripts, path, options.redact, target, f"{options.focused}")
            report.pages_written, report.pages_unchanged = len(done.written), done.unchanged
            report.pages_removed = len(done.removed)
        return report
    if path is not None:
        target.write_bytes(path, lambda out: _write_stream(fmt, transcripts, options, out))
    else:
        _write_stream(fmt, transcripts, options, stdout)
    return report


class _Visible(io.TextIOBase):
    """A text stream writing to ``out`` with control characters shown as symbols
    (:func:`agentlog.present.clean`, no markup): a Markdown or slim export read
    with ``cat`` never runs a terminal escape sequence from a log."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._out.write(clean(text, markup=False))
        return len(text)


def _write_stream(fmt: Format, transcripts: list[Transcript], options: ExportOptions, out: BinaryIO) -> None:
    if fmt == "json":
        from agentlog.export.jsonfmt import write_json

        write_json(transcripts, out, many=len(transcripts) > 1)
        return
    if fmt == "jsonl":
        from agentlog.export.jsonfmt import write_jsonl

        write_jsonl(transcripts, out)
        return
    text = io.TextIOWrapper(out, encoding="utf-8", newline="\n", write_through=True)
    try:
        if fmt == "md":
            from agentlog.export.markdown import write_markdown

            write_markdown(transcripts, cast(TextIO, _Visible(text)))
        elif fmt == "slim":
            from agentlog.export.slim import write_slim

            write_slim(transcripts, cast(TextIO, _Visible(text)), options.max_tokens)
        else:
            from agentlog.export.html import write_page

            write_page(transcripts, text, options.redact)
        text.flush()
    finally:
        text.detach()
