"""The reader layer: the only code that opens agent data, always read-only.

Files are opened ``rb`` and never written, renamed, locked or touched; only
regular files are opened (:func:`open_regular`: a FIFO, socket or device where a
log or sidecar is expected raises ``OSError`` instead of blocking).  JSONL is
streamed in fixed-size chunks, so a 300 MB log never sits in memory whole.

A Zstandard-compressed log (recognised by the frame magic ``28 B5 2F FD``, not by
its name; e.g. DeepSeek Harness ``session.jsonl.zstd``, one frame per appended
batch) is decompressed on the fly, every frame in turn (what ``zstd -dc`` prints):
:class:`LineReader` offsets and :func:`read_head` bytes are then those of the
decompressed stream.  A last frame cut short by a writer that is still appending
yields what it holds so far.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import msgspec
import zstandard

from agentlog.probe import describe_error as describe_error  # the reader layer's errors read the same
from agentlog.probe import not_regular
from agentlog.probe import walk_files as walk_files  # listing lives with the other probes

CHUNK_SIZE = 1 << 20
HEAD_SIZE = 64 * 1024
MAX_LINE_BYTES = 256 << 20
"""A JSONL line longer than this (256 MiB) is not read: it is skipped and counted
(:attr:`LineReader.oversized`; a last line with no newline is a half-written tail
of its length).  Held whole it would take twice its size in memory: an 8 GB file
of zeros with no newline took 16.8 GB, again at every append."""
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def open_regular(path: str | os.PathLike[str]) -> IO[bytes]:
    """``path`` opened ``rb``, if it is a regular file (or a link to one).

    It is opened ``O_NONBLOCK`` and checked with ``fstat`` on the open descriptor,
    so a FIFO is never waited on and a file swapped for one after a ``stat`` is
    caught too.  Raises ``IsADirectoryError`` for a folder, ``OSError`` ("not a
    regular file (FIFO)", …) for anything else that is no regular file, and the
    ``OSError`` of ``open`` itself (``EACCES``, ``ENOENT``…)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", os.fspath(path))
        if not stat.S_ISREG(mode):
            raise not_regular(path, mode)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def require_regular(path: str | os.PathLike[str]) -> None:
    """Raise as :func:`open_regular` would unless ``path`` is a regular file (for
    readers that cannot be handed an open file: SQLite, ``shutil.copyfile``)."""
    mode = os.stat(path).st_mode
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "Is a directory", os.fspath(path))
    if not stat.S_ISREG(mode):
        raise not_regular(path, mode)


def decompressed(fh: IO[bytes]) -> IO[bytes] | _ZstdReader:
    """``fh`` (a seekable binary file at offset 0), or a reader of its decompressed
    bytes when it starts with a Zstandard frame.  Reading corrupt compressed data
    raises ``ValueError``."""
    magic = fh.read(len(ZSTD_MAGIC))
    fh.seek(0)
    if magic != ZSTD_MAGIC:
        return fh
    reader = zstandard.ZstdDecompressor().stream_reader(fh, read_across_frames=True, closefd=False)
    return _ZstdReader(reader)


class _ZstdReader:
    """A Zstandard stream reader whose decoding errors are ``ValueError`` (a bad
    source, as the loader counts it) instead of ``zstandard.ZstdError``."""

    def __init__(self, reader: Any) -> None:
        self._reader = reader

    def read(self, size: int = -1) -> bytes:
        data: bytes = self._checked(self._reader.read, size)
        return data

    def seek(self, offset: int) -> int:
        """Skip forward to ``offset`` decompressed bytes (Zstandard cannot go back)."""
        position: int = self._checked(self._reader.seek, offset)
        return position

    @staticmethod
    def _checked(call: Any, arg: int) -> Any:
        try:
            return call(arg)
        except zstandard.ZstdError as exc:
            raise ValueError(f"corrupt Zstandard data: {exc}") from exc


class LineReader:
    """Iterate ``(offset, line)`` over the complete lines of a JSONL file from ``start``.

    ``line`` excludes its ``\\n`` (and a trailing ``\\r``).  A last line with no
    newline is yielded only if it is a complete JSON value (a writer that ends
    the file without a newline); otherwise it is a half-written line: it is not
    yielded, ``tail_bytes`` says how long it is, and ``consumed`` (the offset to
    resume from next time) stops before it.  A line longer than
    :data:`MAX_LINE_BYTES` is never held: it is not yielded, and ``oversized``
    counts it (once its newline comes; without one it is the tail).

    Raises ``OSError`` if the file cannot be opened or read, ``ValueError`` if its
    Zstandard compression is corrupt.
    """

    def __init__(self, path: str | Path, start: int = 0, chunk_size: int = CHUNK_SIZE) -> None:
        self.path = Path(path)
        self.start = start
        self.chunk_size = chunk_size
        self.consumed = start
        self.tail_bytes = 0
        self.oversized = 0

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        # A line longer than a chunk is kept as the list of its pieces and joined
        # once, when its newline comes: the line is then in memory once (with its
        # last chunk), not twice or three times (a 64 MiB record: ~130 MB less).
        with open_regular(self.path) as raw:
            fh = decompressed(raw)
            fh.seek(self.start)
            pos = self.start
            pieces: list[bytes] = []  # the start of a line that continues in the next chunk
            held = 0  # their length
            while True:
                chunk = fh.read(self.chunk_size)
                if not chunk:
                    break
                pos += len(chunk)
                begin = 0
                nl = chunk.find(b"\n")
                if nl < 0:
                    held += len(chunk)
                    if held > MAX_LINE_BYTES:
                        pieces.clear()  # too long to read: only its length is kept
                    else:
                        pieces.append(chunk)
                    continue
                if held:  # the held line ends in this chunk
                    start = pos - len(chunk) - held
                    if held + nl > MAX_LINE_BYTES:
                        self.oversized += 1
                    else:
                        line = b"".join([*pieces, chunk[:nl]])
                        yield start, line[:-1] if line.endswith(b"\r") else line
                        del line
                    pieces.clear()
                    held = 0
                    begin = nl + 1
                    self.consumed = pos - len(chunk) + begin
                base = pos - len(chunk)
                while True:
                    nl = chunk.find(b"\n", begin)
                    if nl < 0:
                        break
                    if nl - begin > MAX_LINE_BYTES:
                        self.oversized += 1
                    else:
                        end = nl - 1 if nl > begin and chunk[nl - 1] == 13 else nl
                        yield base + begin, chunk[begin:end]
                    begin = nl + 1
                    self.consumed = base + begin
                if begin < len(chunk):
                    held += len(chunk) - begin
                    if held <= MAX_LINE_BYTES:
                        pieces.append(chunk[begin:])
            if held > MAX_LINE_BYTES:
                self.tail_bytes = held
            elif pieces:
                pending = b"".join(pieces)
                if _is_complete_json(pending):
                    yield pos - len(pending), pending
                    self.consumed = pos
                else:
                    self.tail_bytes = len(pending)


def read_blocks(
    path: str | Path, size: int = CHUNK_SIZE, start: int = 0, stop: int | None = None
) -> Iterator[tuple[int, bytes, int]]:
    """Iterate ``(offset, block, end)`` over a JSONL file: ``block[:end]`` is whole
    lines (ending with ``\n``, except a complete last line written without one; a
    half-written last line is left out).  For scanners that look for a few lines
    in bulk instead of visiting every line; ``block`` is not copied to trim it.

    Only the lines in bytes ``start`` to ``stop`` (the end of the file when
    ``None``) are read; both must be line starts (see :func:`line_start_after`).

    Raises ``OSError`` if the file cannot be opened or read.
    """
    first = size
    with open_regular(path) as fh:
        pos = start
        fh.seek(pos)
        while True:
            data = fh.read(size if stop is None else min(size, stop - pos))
            if not data:
                return
            end = data.rfind(b"\n") + 1
            if len(data) > MAX_LINE_BYTES and end and (nl := data.find(b"\n")) > MAX_LINE_BYTES:
                pos, size = pos + nl + 1, first  # a first line too long to read: skipped
                fh.seek(pos)
                continue
            if len(data) < size:  # the last block
                if end < len(data) and _is_complete_json(data[end:]):
                    end = len(data)
                if end:
                    yield pos, data, end
                return
            if not end:  # one line longer than a block: read more of it
                if size >= MAX_LINE_BYTES:  # too long to read: skipped, with what it ends
                    after = _after_newline(fh)
                    if after is None or (stop is not None and after >= stop):
                        return  # no newline: a half-written tail
                    pos, size = after, first
                else:
                    size *= 2
                fh.seek(pos)
                continue
            yield pos, data, end
            pos += end
            fh.seek(pos)


def _after_newline(fh: IO[bytes]) -> int | None:
    """The offset just after the next ``\n`` from ``fh``'s position (read a chunk at
    a time, nothing held), ``None`` when the file ends first."""
    while chunk := fh.read(CHUNK_SIZE):
        nl = chunk.find(b"\n")
        if nl >= 0:
            return fh.tell() - len(chunk) + nl + 1
    return None


def line_start_after(path: str | Path, pos: int) -> int:
    """The byte offset of the first line of a file that starts at or after byte
    ``pos`` (the file's size when none does).

    Raises ``OSError`` if the file cannot be opened or read.
    """
    if pos <= 0:
        return 0
    with open_regular(path) as fh:
        fh.seek(pos - 1)
        while chunk := fh.read(CHUNK_SIZE):
            newline = chunk.find(b"\n")
            if newline >= 0:
                return fh.tell() - len(chunk) + newline + 1
        return fh.seek(0, os.SEEK_END)


def read_lines_at(path: str | Path, offsets: Iterable[int]) -> Iterator[bytes]:
    """The line (without its ``\n``) that starts at each byte offset of ``offsets``,
    in that order.

    Raises ``OSError`` if the file cannot be opened or read.
    """
    with open_regular(path) as fh:
        for offset in offsets:
            fh.seek(offset)
            yield fh.readline().removesuffix(b"\n")


def _is_complete_json(data: bytes) -> bool:
    try:
        msgspec.json.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return False
    return True


def read_head(path: str | Path, size: int = HEAD_SIZE) -> bytes:
    """The first ``size`` bytes of a regular file (for content sniffing), decompressed
    when it is Zstandard-compressed.

    Raises as :func:`open_regular` does (``IsADirectoryError`` for a folder,
    ``OSError`` for a FIFO or another file that is not regular or cannot be
    read), ``ValueError`` for corrupt compressed data."""
    with open_regular(path) as fh:
        return decompressed(fh).read(size)


def read_small(path: str | Path, limit: int = 16 * 1024 * 1024) -> bytes:
    """A small regular file's bytes (sidecars such as ``.meta.json``); raises
    ``OSError`` when unreadable or not a regular file (:func:`open_regular`) and
    ``ValueError`` when larger than ``limit`` bytes."""
    with open_regular(path) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path}: larger than {limit} bytes")
    return data


DOCUMENT_LIMIT = 512 * 1024 * 1024
"""Largest JSON document read whole (bytes)."""


def read_sqlite_tables(
    path: str | Path,
    tables: Iterable[str],
    queries: Mapping[str, tuple[str, Sequence[Any]]] | None = None,
    notes: list[str] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Every row of each of ``tables`` that exists in the SQLite database ``path``,
    plus the rows of each named read-only ``queries`` entry (``name → (sql, params)``,
    for sources where only some rows may be read, e.g. a few keys of a table that
    also holds secrets).  A query on a table the database lacks has no key.

    A ``TEXT`` cell that is not valid UTF-8 (SQLite does not check what its
    writers store; Python would fail the whole query on it) is read with U+FFFD
    in place of the bad bytes, and said so in ``notes`` — the row keeps its other
    cells, and a session row its messages.

    Never writes to the agent's folder: a database without a ``-wal`` file is
    opened ``mode=ro&immutable=1`` (no locks, no ``-shm``); one with a write-ahead
    log (its owner may be running) is copied with its ``-wal`` to a private
    temporary folder and read there, so committed but un-checkpointed rows are
    seen.  Raises ``OSError`` or ``sqlite3.Error`` when it cannot be read, and
    ``OSError`` when it or its ``-wal`` is no regular file (SQLite would wait on
    a FIFO).
    """
    import shutil  # these three only when a database is read
    import tempfile
    import urllib.parse

    path = Path(path)
    wal = path.with_name(path.name + "-wal")
    require_regular(path)
    with tempfile.TemporaryDirectory(prefix="agentlog-") as tmp:
        if _present(wal):
            require_regular(wal)
            copy = Path(tmp) / path.name
            shutil.copyfile(path, copy)
            shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
            uri = f"file:{urllib.parse.quote(str(copy))}?mode=ro"
        else:
            uri = f"file:{urllib.parse.quote(str(path))}?mode=ro&immutable=1"
        conn = sqlite3.connect(uri, uri=True)
        try:
            text = _Text()
            conn.text_factory = text
            conn.row_factory = sqlite3.Row
            present = {
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table','view')")
            }
            out = {
                table: text.rows(conn.execute(f'SELECT * FROM "{table}"'))
                for table in tables
                if table in present
            }
            for name, (sql, params) in (queries or {}).items():
                try:
                    out[name] = text.rows(conn.execute(sql, tuple(params)))
                except sqlite3.OperationalError as exc:
                    if "no such table" not in str(exc):
                        raise
            if text.bad_cells and notes is not None:
                notes.append(f"{text.bad_cells} TEXT cell(s) not valid UTF-8, read with U+FFFD")
            return out
        finally:
            conn.close()


class _Text:
    """A ``text_factory`` that decodes UTF-8 and, instead of failing the query on a
    cell that is not UTF-8, reads it with U+FFFD and counts it."""

    def __init__(self) -> None:
        self.bad_cells = 0

    def __call__(self, data: bytes) -> str:
        try:
            return data.decode()
        except UnicodeDecodeError:
            self.bad_cells += 1
            return data.decode("utf-8", "replace")

    @staticmethod
    def rows(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
        return [dict(row) for row in cursor]


def _present(path: Path) -> bool:
    """Whether anything is at ``path``: not when it is not there or its name is
    too long to exist (a ``-wal`` beside a database whose name is 252 bytes long:
    ``ENAMETOOLONG``); raises any other ``OSError``."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG):
            return False
        raise
    return True
