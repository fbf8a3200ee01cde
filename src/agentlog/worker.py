"""Work in a second process, so both cores are busy: parsing a large JSONL
source while this process stores it (the index sync of a 300 MB log is mostly
both), or scanning half of the usage logs (:mod:`agentlog.usage.scan`).

:func:`run_in_worker` forks a child and streams back the bytes it produces over
a pipe; an error in the child is raised again in the caller as the same kind of
exception (``OSError`` with its errno, ``RecursionError``, a
:class:`~agentlog.adapters.base.ParserError` for any other failure of the parser,
else ``ValueError``).
:func:`parse_in_worker` runs :func:`agentlog.load.jsonl_batches` for a
registered adapter that way, its batches sent packed (:mod:`agentlog.packing`).
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from multiprocessing.connection import Connection

import msgspec

from agentlog.adapters import SourceRef, ToolOutput, get_adapter
from agentlog.adapters.base import JsonlAdapter, ParserError
from agentlog.collector import gc_paused
from agentlog.model import Message, Session
from agentlog.packing import pack, unpack


class _Batch(msgspec.Struct, array_like=True, gc=False):
    kinds: bytes
    """One byte per fragment: 0 a message, 1 a tool output (their order)."""
    session_ids: list[str]
    messages: list[Message]
    outputs: list[ToolOutput]
    headers: list[Session]
    consumed: int = -1
    state: bytes = b""


class _Error(msgspec.Struct, array_like=True):
    kind: str
    errno: int | None
    message: str


_ERROR = msgspec.msgpack.Decoder(_Error)


def available() -> bool:
    """A worker needs ``fork`` (POSIX): the child starts with everything loaded and
    never re-imports ``__main__``.  It touches no open database of the parent."""
    return "fork" in multiprocessing.get_all_start_methods() and (os.cpu_count() or 1) > 1


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
    with run_in_worker(produce, f"the parser process for {ref.path}", ref.path) as stream:
        for data in stream:
            item = _decoded(data)
            del data  # hold no batch while the next one is read: peak memory is one batch
            yield item
            del item


def _decoded(
    data: memoryview,
) -> tuple[list[tuple[str, Message | ToolOutput]], list[Session], tuple[int, bytes] | None]:
    """A batch message back as ``(fragments, headers, (consumed, state) on the last)``."""
    batch = unpack(data, _Batch)
    messages, outputs = iter(batch.messages), iter(batch.outputs)
    fragments: list[tuple[str, Message | ToolOutput]] = [
        (sid, next(outputs) if kind else next(messages))
        for sid, kind in zip(batch.session_ids, batch.kinds, strict=True)
    ]
    return fragments, batch.headers, (batch.consumed, batch.state) if batch.consumed >= 0 else None


@contextlib.contextmanager
def run_in_worker(
    produce: Callable[[], Iterable[bytes]], name: str, filename: str | None = None
) -> Iterator[Iterator[memoryview]]:
    """Start ``produce()`` in a forked child process at once; the context is an
    iterator over the messages it yields, in order, as they arrive.

    An error in the child is raised again by that iterator as the same kind of exception
    (``OSError`` with its errno and ``filename``, ``RecursionError``,
    :class:`~agentlog.adapters.base.ParserError`, else ``ValueError``); a child that ends without finishing (killed) raises
    ``OSError`` saying ``name`` ended unexpectedly.  The child dies with this
    process (see :func:`_serve`) and is reaped when the context ends.
    """
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    _widen(receive)
    process = ctx.Process(target=_serve, args=(receive, send, produce), daemon=True)
    process.start()
    send.close()
    try:
        yield _messages(receive, name, filename)
    finally:
        receive.close()
        process.join(timeout=5)
        if process.is_alive():
            process.terminate()
            process.join()


def _widen(receive: Connection) -> None:
    """On Linux, a 1 MB pipe instead of 64 KB: 16 times fewer reads and writes."""
    import fcntl  # POSIX only, as fork is

    if hasattr(fcntl, "F_SETPIPE_SZ"):
        with contextlib.suppress(OSError):
            fcntl.fcntl(receive.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)


def _messages(receive: Connection, name: str, filename: str | None) -> Iterator[memoryview]:
    """The messages :func:`_serve` sends, up to ``D`` (done) or ``E`` (raised)."""
    while True:
        try:
            data = receive.recv_bytes()
        except EOFError:
            raise OSError(f"{name} ended unexpectedly") from None
        if data[:1] == _DONE:
            return
        if data[:1] == _RAISED:
            error = _ERROR.decode(data[1:])
            if error.kind == "OSError":
                raise OSError(error.errno, error.message, filename)
            if error.kind == "ParserError":
                raise ParserError(error.message)
            raise (
                RecursionError(error.message) if error.kind == "RecursionError" else ValueError(error.message)
            )
        held = [data]
        del data
        yield memoryview(held.pop())  # not kept here while the caller stores it (a 64 MiB batch)


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
            send.send_bytes(data)
            del data
        send.send_bytes(_DONE)
    except Exception as exc:  # any failure is the source's error, raised again in the parent
        kind = "OSError" if isinstance(exc, OSError) else type(exc).__name__
        errno = exc.errno if isinstance(exc, OSError) else None
        message = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        if kind not in ("OSError", "RecursionError", "ValueError", "ParserError"):
            kind, message = "ParserError", f"{kind}: {message}"
        with contextlib.suppress(OSError):  # the parent may be gone
            send.send_bytes(_RAISED + msgspec.msgpack.encode(_Error(kind=kind, errno=errno, message=message)))
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
            batch = _Batch(
                kinds=bytes(isinstance(item, ToolOutput) for _, item in fragments),
                session_ids=[sid for sid, _ in fragments],
                messages=[item for _, item in fragments if isinstance(item, Message)],
                outputs=[item for _, item in fragments if isinstance(item, ToolOutput)],
                headers=headers,
            )
            if end is not None:
                batch.consumed, batch.state = end
            yield pack(batch)
