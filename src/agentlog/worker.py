"""Parsing a large JSONL source in a second process, so one core parses while
the other stores (the index sync of a 300 MB log is mostly both).

The worker runs :func:`agentlog.load.jsonl_batches` for a registered adapter
and streams its batches back over a pipe as msgpack; an error in the worker is
raised again in the caller as the same kind of exception (``OSError`` with its
errno, ``RecursionError``, else ``ValueError``).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Iterator, Mapping
from multiprocessing.connection import Connection

import msgspec

from agentlog.adapters import SourceRef, ToolOutput, get_adapter
from agentlog.adapters.base import JsonlAdapter
from agentlog.model import Message, Session


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


_BATCH = msgspec.msgpack.Decoder(_Batch)
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
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    process = ctx.Process(
        target=_work, args=(receive, send, slug, ref, dict(sidecars), start, state, lines), daemon=True
    )
    process.start()
    send.close()
    try:
        while True:
            try:
                data = receive.recv_bytes()
            except EOFError:
                raise OSError(f"the parser process for {ref.path} ended unexpectedly") from None
            if data[:1] == b"E":
                error = _ERROR.decode(data[1:])
                if error.kind == "OSError":
                    raise OSError(error.errno, error.message, ref.path)
                raise (
                    RecursionError(error.message)
                    if error.kind == "RecursionError"
                    else ValueError(error.message)
                )
            batch = _BATCH.decode(data[1:])
            messages, outputs = iter(batch.messages), iter(batch.outputs)
            fragments: list[tuple[str, Message | ToolOutput]] = [
                (sid, next(outputs) if kind else next(messages))
                for sid, kind in zip(batch.session_ids, batch.kinds, strict=True)
            ]
            done = data[:1] == b"D"
            yield fragments, batch.headers, (batch.consumed, batch.state) if done else None
            if done:
                return
    finally:
        receive.close()
        process.join(timeout=5)
        if process.is_alive():
            process.terminate()
            process.join()


def _work(
    receive: Connection,
    send: Connection,
    slug: str,
    ref: SourceRef,
    sidecars: dict[str, bytes],
    start: int,
    state: bytes | None,
    lines: int,
) -> None:
    from agentlog.load import gc_paused, jsonl_batches

    # The fork gave this process the read end too: close it, so that when the
    # parent is gone (even killed) the next write fails instead of blocking forever.
    receive.close()
    encode = msgspec.msgpack.Encoder().encode
    try:
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
                send.send_bytes((b"D" if end is not None else b"B") + encode(batch))
    except (OSError, ValueError, RecursionError) as exc:
        kind = "OSError" if isinstance(exc, OSError) else type(exc).__name__
        errno = exc.errno if isinstance(exc, OSError) else None
        message = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        with contextlib.suppress(OSError):  # the parent may be gone
            send.send_bytes(b"E" + encode(_Error(kind=kind, errno=errno, message=message)))
    finally:
        send.close()
