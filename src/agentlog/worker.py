"""Work in a second process, so both cores are busy: parsing a large JSONL
source while this process stores it (the index sync of a 300 MB log is mostly
both), or scanning half of the usage logs (:mod:`agentlog.usage.scan`).

:func:`run_in_worker` starts a child (forked, or with ``fresh`` a new interpreter:
see there) and streams back the bytes it produces over a pipe; an error in the child is raised again in the caller as the same kind of
exception (``OSError`` with its errno, ``RecursionError``, a
:class:`~agentlog.adapters.base.ParserError` for any other failure of the parser,
else ``ValueError``).
:func:`parse_in_worker` runs :func:`agentlog.load.jsonl_batches` for a
registered adapter that way, its batches sent packed (:mod:`agentlog.packing`).
"""

from __future__ import annotations

import contextlib
import functools
import io
import multiprocessing
import os
import pickle
import struct
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from multiprocessing.connection import Connection

import msgspec

from agentlog.adapters import SourceRef, ToolOutput, get_adapter
from agentlog.adapters.base import JsonlAdapter, ParserError
from agentlog.collector import gc_paused
from agentlog.model import Message, Session
from agentlog.packing import pack, unpack


class _Error(msgspec.Struct, array_like=True):
    kind: str
    errno: int | None
    message: str


class _Batch(msgspec.Struct, array_like=True, gc=False):
    kinds: bytes
    """One byte per fragment: 0 a message, 1 a tool output (their order)."""
    session_ids: list[str]
    messages: list[Message]
    outputs: list[ToolOutput]
    headers: list[Session]
    consumed: int = -1
    state: bytes = b""
    source: int = 0
    """For :class:`SharedParse`: the index of the job this batch belongs to."""
    error: _Error | None = None
    """For :class:`SharedParse`: the job failed (no more batches of it follow)."""


_ERROR = msgspec.msgpack.Decoder(_Error)


@functools.cache
def available() -> bool:
    """A worker needs a second core and POSIX (``fork``; for a ``fresh`` one, file
    descriptors passed to a new interpreter, which a frozen program has none of).
    It never re-imports ``__main__`` and touches no open database of the parent."""
    return (
        "fork" in multiprocessing.get_all_start_methods()
        and (os.cpu_count() or 1) > 1
        and bool(sys.executable)
        and not getattr(sys, "frozen", False)
    )


def parse_in_worker(
    slug: str,
    ref: SourceRef,
    sidecars: Mapping[str, bytes],
    start: int,
    state: bytes | None,
    lines: int,
) -> Iterator[tuple[list[tuple[str, Message | ToolOutput]], list[Session], tuple[int, bytes] | None]]:
    """Like :func:`agentlog.load.jsonl_batches`, computed in a worker process."""
    produce = functools.partial(_batches, slug, ref, dict(sidecars), start, state, lines)
    with run_in_worker(produce, f"the parser process for {ref.path}", ref.path, fresh=True) as stream:
        for data in stream:
            item = _decoded(data)
            del data  # hold no batch while the next one is read: peak memory is one batch
            yield item
            del item


_Decoded = tuple[list[tuple[str, Message | ToolOutput]], list[Session], tuple[int, bytes] | None]


def _decoded(data: memoryview) -> _Decoded:
    """A batch message back as ``(fragments, headers, (consumed, state) on the last)``."""
    return _fragments(unpack(data, _Batch))


def _fragments(batch: _Batch) -> _Decoded:
    messages, outputs = iter(batch.messages), iter(batch.outputs)
    fragments: list[tuple[str, Message | ToolOutput]] = [
        (sid, next(outputs) if kind else next(messages))
        for sid, kind in zip(batch.session_ids, batch.kinds, strict=True)
    ]
    return fragments, batch.headers, (batch.consumed, batch.state) if batch.consumed >= 0 else None


@contextlib.contextmanager
def run_in_worker(
    produce: Callable[[], Iterable[bytes]], name: str, filename: str | None = None, *, fresh: bool = False
) -> Iterator[Iterator[memoryview]]:
    """Start ``produce()`` in a child process at once; the context is an
    iterator over the messages it yields, in order, as they arrive.

    The child is forked from this process, or with ``fresh`` it is a new
    interpreter (:func:`_spawn`) that imports only what ``produce`` needs: a
    forked child starts with this whole process mapped, its pages counted again
    in its RSS and copied as either side writes them (a sync's parse worker
    forked from a 140 MB index process held 85-95 MB of such copies), while a
    fresh one starts at ~25 MB but costs an interpreter's start and its imports
    (~0.1-0.3 s: for a source that takes seconds to parse).  ``produce`` must
    then pickle (a module-level function, or a :func:`functools.partial` of one):
    when it does not (a third-party adapter's state), or no interpreter starts,
    the child is forked, unless this process runs other threads (``serve``'s, a
    notebook's: a fork copies only the calling one, and a lock another held, the
    import lock say, would stay held in the child forever); then ``produce``
    runs in this process, as the iterator is read (its errors raised as they are).

    An error in the child is raised again by that iterator as the same kind of exception
    (``OSError`` with its errno and ``filename``, ``RecursionError``,
    :class:`~agentlog.adapters.base.ParserError`, else ``ValueError``); a child that ends without finishing (killed) raises
    ``OSError`` saying ``name`` ended unexpectedly.  The child dies with this
    process (see :func:`_serve`) and is reaped when the context ends.
    """
    forkable = forks_safely()
    receive, send = multiprocessing.Pipe(duplex=False)
    _widen(receive)
    stop = _spawn(receive, send, produce) if fresh or not forkable else None
    if stop is None and forkable:
        stop = _fork(receive, send, produce)
    send.close()
    if stop is None:
        receive.close()
        yield (memoryview(data) for data in produce())
        return
    try:
        yield _messages(receive, name, filename)
    finally:
        receive.close()
        stop()


def forks_safely() -> bool:
    """Whether a fork of this process is safe: no other thread runs in it (a
    fork copies only the calling thread; what another held stays held)."""
    import threading

    return threading.active_count() == 1


def _fork(
    receive: Connection, send: Connection, produce: Callable[[], Iterable[bytes]]
) -> Callable[[], None]:
    """A forked child serving ``produce``; the function that reaps it."""
    process = multiprocessing.get_context("fork").Process(
        target=_serve, args=(receive, send, produce), daemon=True
    )
    process.start()

    def stop() -> None:
        process.join(timeout=5)
        if process.is_alive():
            process.terminate()
            process.join()

    return stop


_CHILD = (
    "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN);"
    " import io, pickle, sys; payload = io.BytesIO(sys.stdin.buffer.read()); sys.path[:] = pickle.load(payload);"
    " from agentlog.worker import _child; _child(payload, int(sys.argv[1]), int(sys.argv[2]))"
)
"""The program of a fresh child: its standard input is this process's
``sys.path`` (where ``agentlog`` and what ``produce`` names are imported from),
then ``produce``, each pickled; its arguments are the pipe's two ends.  Ctrl-C
is this process's to act on (a traceback of the child's would only add noise):
the child ends when this one closes the pipe or ends."""


def _spawn(
    receive: Connection, send: Connection, produce: Callable[[], Iterable[bytes]]
) -> Callable[[], None] | None:
    """A new interpreter serving ``produce`` (not :mod:`multiprocessing`'s
    ``spawn`` or ``forkserver``: those run the main script again in the child
    when it has no ``if __name__ == "__main__"``, an API caller's script, and
    start a resource tracker process besides); the function that reaps it.
    It gets both ends of the pipe, as a fork does (:func:`_serve` closes the
    read end), its output goes nowhere (``agentlog mcp`` speaks on standard
    output) and its errors to this process's standard error.  ``None`` when
    ``produce`` does not pickle or the interpreter cannot be started."""
    try:
        payload = pickle.dumps(sys.path, pickle.HIGHEST_PROTOCOL) + pickle.dumps(produce, pickle.HIGHEST_PROTOCOL)
    except Exception:  # anything a third party's __reduce__ raises
        return None
    fds = (receive.fileno(), send.fileno())
    try:
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD, *map(str, fds)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            pass_fds=fds,
        )
    except OSError:
        return None
    assert child.stdin is not None
    with contextlib.suppress(BrokenPipeError), child.stdin:  # died at once: its reader says it ended
        child.stdin.write(payload)

    def stop() -> None:
        try:
            child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            child.terminate()
            child.wait()

    return stop


def _child(payload: io.BytesIO, receive: int, send: int) -> None:
    """A fresh child's side (:data:`_CHILD`): ``produce`` from ``payload``, served."""
    produce = pickle.load(payload)
    del payload
    _serve(Connection(receive, writable=False), Connection(send, readable=False), produce)


def _widen(receive: Connection) -> None:
    """On Linux, a 1 MB pipe instead of 64 KB: 16 times fewer reads and writes."""
    import fcntl  # POSIX only, as fork is

    if hasattr(fcntl, "F_SETPIPE_SZ"):
        with contextlib.suppress(OSError):
            fcntl.fcntl(receive.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)


_SIZE = struct.Struct("!Q")
"""The header of each message on the pipe (:func:`_send`): its length in bytes."""


def _send(send: Connection, data: bytes | memoryview) -> None:
    """Write one message: its :data:`_SIZE` header, then its bytes as they are (no
    copy, however large; a small one in the same write as its header)."""
    fd = send.fileno()
    header = _SIZE.pack(len(data))
    pieces = (header + data,) if len(data) <= _SMALL else (header, data)
    for piece in pieces:
        view = memoryview(piece)
        while view:
            view = view[os.write(fd, view) :]


_SMALL = 1 << 16
"""Bytes up to which a message is copied behind its header and written at once (one
system call, as for the many small sources of a first index)."""


def _receive(receive: Connection) -> bytearray:
    """The next message :func:`_send` wrote, read straight into one buffer of its
    size (``Connection.recv_bytes`` copies it chunk by chunk into a growing
    ``BytesIO``, then out of it: 3-4 times the CPU, a 300 MB log's batches 0.46 s
    against 0.13).  ``EOFError`` when the pipe ends between messages; ``OSError``
    without an errno when it ends in the middle of one."""
    fd = receive.fileno()
    header = bytearray(_SIZE.size)
    got = _fill(fd, memoryview(header))
    if got == 0:
        raise EOFError
    if got < len(header):
        raise OSError("got end of file during message")
    data = bytearray(_SIZE.unpack(header)[0])
    if _fill(fd, memoryview(data)) < len(data):
        raise OSError("got end of file during message")
    return data


def _fill(fd: int, view: memoryview) -> int:
    """Read from ``fd`` into ``view`` until it is full or the pipe ends; the bytes read."""
    got = 0
    while got < len(view):
        n = os.readv(fd, [view[got:]])
        if n == 0:
            break
        got += n
    return got


def _messages(receive: Connection, name: str, filename: str | None) -> Iterator[memoryview]:
    """The messages :func:`_serve` sends, up to ``D`` (done) or ``E`` (raised)."""
    while True:
        try:
            data = _receive(receive)
        except EOFError:
            raise OSError(f"{name} ended unexpectedly") from None
        except OSError as error:  # "got end of file during message": killed while writing one
            if error.errno is not None:
                raise
            raise OSError(f"{name} ended unexpectedly (in the middle of a message)") from None
        if data[:1] == _DONE:
            return
        if data[:1] == _RAISED:
            raise _raised(_ERROR.decode(data[1:]), filename)
        held = [data]
        del data
        yield memoryview(held.pop())  # not kept here while the caller stores it (a 64 MiB batch)


def _raised(error: _Error, filename: str | None) -> Exception:
    """The exception an :class:`_Error` from the child stands for."""
    if error.kind == "OSError":
        return OSError(error.errno, error.message, filename)
    if error.kind == "ParserError":
        return ParserError(error.message)
    return RecursionError(error.message) if error.kind == "RecursionError" else ValueError(error.message)


def _error_of(exc: Exception) -> _Error:
    """``exc`` as an :class:`_Error` (any kind but those :func:`_raised` knows: a
    :class:`~agentlog.adapters.base.ParserError` naming it)."""
    kind = "OSError" if isinstance(exc, OSError) else type(exc).__name__
    errno = exc.errno if isinstance(exc, OSError) else None
    message = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    if kind not in ("OSError", "RecursionError", "ValueError", "ParserError"):
        kind, message = "ParserError", f"{kind}: {message}"
    return _Error(kind=kind, errno=errno, message=message)


_DONE, _RAISED = b"D", b"E"
"""The first byte of the child's last message: done, or ``E`` + an :class:`_Error`.
No message ``produce`` yields may start with either (msgpack arrays and maps,
as :func:`~agentlog.packing.pack` makes of a struct, never do)."""


def _serve(receive: Connection, send: Connection, produce: Callable[[], Iterable[bytes]]) -> None:
    """The child of :func:`run_in_worker`: send each message as it is (no copy
    with a tag in front: a batch holding a 64 MiB record is sent from the bytes
    packed), then :data:`_DONE` or :data:`_RAISED` + an :class:`_Error`."""
    # The fork gave this process the read end too: close it, so that when the
    # parent is gone (even killed) the next write fails instead of blocking forever.
    receive.close()
    try:
        for data in produce():
            if data[:1] in (_DONE, _RAISED):
                raise ValueError("a worker message must not start with D or E")
            _send(send, data)
            del data
        _send(send, _DONE)
    except Exception as exc:  # any failure is the source's error, raised again in the parent
        with contextlib.suppress(OSError):  # the parent may be gone
            _send(send, _RAISED + msgspec.msgpack.encode(_error_of(exc)))
    finally:
        send.close()


def _batches(
    slug: str,
    ref: SourceRef,
    sidecars: dict[str, bytes],
    start: int,
    state: bytes | None,
    lines: int,
) -> Iterator[bytes]:
    """The child's side of :func:`parse_in_worker`: each batch as msgpack."""
    from agentlog.load import jsonl_batches

    adapter = get_adapter(slug)
    assert isinstance(adapter, JsonlAdapter)
    with gc_paused():
        for fragments, headers, end in jsonl_batches(adapter, ref, sidecars, start, state, lines):
            yield _packed(fragments, headers, end)


def _packed(
    fragments: list[tuple[str, Message | ToolOutput]],
    headers: list[Session],
    end: tuple[int, bytes] | None,
    source: int = 0,
) -> bytes:
    """One batch of :func:`agentlog.load.jsonl_batches` as a message."""
    batch = _Batch(
        kinds=bytes(isinstance(item, ToolOutput) for _, item in fragments),
        session_ids=[sid for sid, _ in fragments],
        messages=[item for _, item in fragments if isinstance(item, Message)],
        outputs=[item for _, item in fragments if isinstance(item, ToolOutput)],
        headers=headers,
        source=source,
    )
    if end is not None:
        batch.consumed, batch.state = end
    return pack(batch)


ParseJob = tuple[JsonlAdapter, SourceRef, int, bytes | None]
"""``(adapter, source, start byte, parser state to resume)``: one source for
:class:`SharedParse` (no sidecars: those are read by the parent)."""


class SharedParse:
    """Many small JSONL sources parsed one after another in one worker process,
    ahead of this process, which stores each as its batches arrive: with
    thousands of small sessions, parsing and storing then share both cores (one
    worker per source would cost a fork each).

    :meth:`batches` gives one job's batches, as :func:`parse_in_worker` does;
    jobs must be asked for in order, and those skipped (or not read to their end)
    are passed over.  A job's failure is raised by its own batches only, as
    :func:`run_in_worker` raises it; if the worker ends unexpectedly, that job
    raises ``OSError`` and :attr:`broken` is set (parse the rest here).  The
    pipe bounds how far ahead the worker runs (its peak memory: a batch).
    ``fresh``: the worker is a new interpreter (:func:`run_in_worker`), for jobs
    large enough to pay its start; else a fork of this process.
    Close it with :meth:`close` (or as a context manager)."""

    def __init__(self, jobs: list[ParseJob], lines: int = 25_000, *, fresh: bool = True) -> None:
        self._jobs = jobs
        self._stack = contextlib.ExitStack()
        produce = functools.partial(_parse_jobs, jobs, lines)
        self._stream = self._stack.enter_context(run_in_worker(produce, "the parser process", fresh=fresh))
        self._held: _Batch | None = None
        self.broken = False

    def batches(self, job: int) -> Iterator[_Decoded]:
        """The batches of job number ``job`` (an index into the jobs given)."""
        path = self._jobs[job][1].path
        while True:
            batch = self._next()
            if batch.source < job:
                continue  # a job passed over, or not read to its end
            if batch.source > job:  # never for a job the worker reached; kept for the next ask
                self._held = batch
                return
            if batch.error is not None:
                raise _raised(batch.error, path)
            decoded = _fragments(batch)
            del batch
            yield decoded
            if decoded[2] is not None:
                return

    def _next(self) -> _Batch:
        if self._held is not None:
            batch, self._held = self._held, None
            return batch
        try:
            data = next(self._stream)
        except StopIteration:
            self.broken = True
            raise OSError("the parser process ended before its last source") from None
        except OSError:
            self.broken = True
            raise
        return unpack(data, _Batch)

    def close(self) -> None:
        self._stack.close()

    def __enter__(self) -> SharedParse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _parse_jobs(jobs: list[ParseJob], lines: int) -> Iterator[bytes]:
    """The child's side of :class:`SharedParse`: each job's batches (its failure
    as a last batch holding the error), job after job."""
    from agentlog.load import jsonl_batches

    with gc_paused():
        for index, (adapter, ref, start, state) in enumerate(jobs):
            try:
                for fragments, headers, end in jsonl_batches(adapter, ref, {}, start, state, lines):
                    yield _packed(fragments, headers, end, index)
            except Exception as exc:  # this job's error, raised again by its batches alone
                yield pack(
                    _Batch(
                        kinds=b"", session_ids=[], messages=[], outputs=[], headers=[],
                        source=index, error=_error_of(exc),
                    )
                )  # fmt: skip
