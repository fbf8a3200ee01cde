"""The fast path for Claude Code usage: decode only what usage needs.

``agentlog usage --no-index`` reads Claude Code files through the reader layer
(:func:`~agentlog.readers.read_blocks`, read-only) but, instead of building the
full model, finds the lines that can carry usage (``"usage"`` in the bytes) or
belong to an inline sidechain (``"isSidechain": true``) within large blocks,
without splitting them, and decodes only those, into small typed msgspec structs
that skip every other field.  A line whose fields have unexpected types is
decoded generically and read by the adapter's own
:func:`~agentlog.adapters.claude_code.usage_of`, so nothing is lost.  From
:data:`PARALLEL_MIN` bytes on, a forked worker process scans part of the files
(the second half of a large one) while this one scans the rest, and the parts
are joined into what one pass finds (see :func:`_join`).

The result equals the full path's calls (:func:`agentlog.usage.calls_from_sessions`
over :func:`agentlog.load.load_sessions`) and the index's, by calling the same
rule functions (:mod:`agentlog.rules`; ``shared/cost.md`` §1):

* one call per ``message.id`` (the line's ``uuid`` when it has none) within a
  session: a later copy replaces an earlier one unless it is smaller
  (:func:`~agentlog.rules.keeps_new_copy`);
* ``model == "<synthetic>"`` lines carry no usage; a token count out of range
  counts as 0 (:func:`~agentlog.rules.bounded_usage`; ``doctor`` reports it from
  the index);
* a message id seen in several sessions counts once, in the session
  :func:`~agentlog.rules.owner_rank` puts first (main before subagent, earliest
  first call, fewest calls, key);
* sessions and subagents are keyed as the adapter keys them (the ``sessionId``
  of a main file's first decoded line, :func:`~agentlog.rules.recorded_session_id`,
  else its stem; ``agent-<id>``, inline ``sidechain-<uuid>`` chains,
  :func:`~agentlog.rules.session_key`);
  a file whose session key an earlier file holds is skipped when it adds no
  message to it, replaces it when it holds all of its messages and more, else is
  keyed apart (:func:`~agentlog.rules.copy_verdict`, :func:`~agentlog.rules.distinct_id`),
  judged on every message as the full path judges it: only for such a pair of
  files are both parsed whole (:func:`_verdict`);
* ``cwd`` is the session's first recorded one (:func:`~agentlog.rules.first_cwd`):
  lines holding ``"cwd"`` are decoded too until the main session has one.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import PurePath
from typing import Any

import msgspec

from agentlog import worker
from agentlog.adapters import SourceRef
from agentlog.adapters._json import JsonError, parse_json
from agentlog.adapters._values import service_tier
from agentlog.adapters.claude_code import SLUG, file_session, record_time, usage_of
from agentlog.collector import gc_paused
from agentlog.model import Usage
from agentlog.readers import describe_error, line_start_after, read_blocks, read_lines_at
from agentlog.rules import (
    CopyVerdict,
    Signature,
    bounded_usage,
    copy_verdict,
    distinct_id,
    first_cwd,
    keeps_new_copy,
    owner_rank,
    recorded_session_id,
    session_key,
)
from agentlog.usage.calls import Call


class _Split(msgspec.Struct, gc=False):
    ephemeral_5m_input_tokens: int = 0
    ephemeral_1h_input_tokens: int = 0


class _Server(msgspec.Struct, gc=False):
    web_search_requests: int = 0


class _Usage(msgspec.Struct, gc=False):
    input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    output_tokens: int = 0
    cache_creation: _Split | None = None
    server_tool_use: _Server | None = None
    service_tier: str | None = None
    speed: str | None = None


class _Message(msgspec.Struct, gc=False):
    id: str | None = None
    role: str | None = None
    model: str | None = None
    usage: _Usage | None = None


class _Line(msgspec.Struct, gc=False):
    type: str | None = None
    uuid: str | None = None
    parentUuid: str | None = None  # Claude Code's field names
    sessionId: str | None = None
    timestamp: str | None = None
    isSidechain: bool | None = None
    cwd: str | None = None
    message: _Message | None = None
    costUSD: float | None = None


_DECODER = msgspec.json.Decoder(_Line)


def _usage(line: _Line) -> Usage | None:
    raw = line.message.usage if line.message else None
    if raw is None:
        return None
    write = raw.cache_creation_input_tokens
    w5m, w1h = write, 0
    split = raw.cache_creation
    if split is not None and (
        split.ephemeral_5m_input_tokens + split.ephemeral_1h_input_tokens == write or write == 0
    ):
        w5m, w1h = split.ephemeral_5m_input_tokens, split.ephemeral_1h_input_tokens
    usage, _ = bounded_usage(
        Usage(
            input_tokens=raw.input_tokens,
            cache_read_tokens=raw.cache_read_input_tokens,
            cache_write_5m_tokens=w5m,
            cache_write_1h_tokens=w1h,
            output_tokens=raw.output_tokens,
            web_search_requests=raw.server_tool_use.web_search_requests if raw.server_tool_use else 0,
            cost_usd=line.costUSD,
            cost_source="recorded" if line.costUSD is not None else None,
            service_tier=service_tier(raw.service_tier, raw.speed),
        )
    )
    return usage


def _loose(data: bytes) -> tuple[_Line, Usage | None] | None:
    """A line with unexpected field types: decoded generically, read like the adapter does."""
    try:
        record = parse_json(data)
    except JsonError:
        return None
    if not isinstance(record, dict):
        return None
    found = record.get("message")
    message: dict[str, Any] = found if isinstance(found, dict) else {}

    def text(value: Any) -> str | None:
        return value if isinstance(value, str) and value else None

    line = _Line(
        type=text(record.get("type")),
        uuid=text(record.get("uuid")),
        parentUuid=text(record.get("parentUuid")),
        sessionId=text(record.get("sessionId")),
        timestamp=record.get("timestamp") if isinstance(record.get("timestamp"), str) else None,
        isSidechain=record.get("isSidechain") is True,
        cwd=text(record.get("cwd")),
        message=_Message(
            id=text(message.get("id")), role=text(message.get("role")), model=text(message.get("model"))
        ),
    )
    usage = usage_of(record, message.get("usage"))
    return line, None if usage is None else bounded_usage(usage)[0]


class _Session(msgspec.Struct, gc=False):
    """One session's calls so far (sent from the worker without ``raw``)."""

    key: str
    kind: str
    parent_key: str | None
    cwd: str | None = None
    calls: dict[str, Call] = msgspec.field(default_factory=dict)
    """Message id → its call, in the order the ids first came."""
    raw: dict[str, Any] = msgspec.field(default_factory=dict)
    """Message id → the usage copy its call was made from (a ``_Usage``, or the
    adapter's ``Usage`` for a loosely decoded line)."""


@dataclass
class _File:
    """The sessions of one file: the main one (file stem or ``agent-<id>``) and
    inline sidechains.  ``offsets`` (kept when asked for: a file's tail scanned on
    its own) lists the byte offset of every line that added to each message id."""

    main: _Session
    sessions: dict[str, _Session] = field(default_factory=dict)
    sidechains: dict[str, str] = field(default_factory=dict)
    offsets: dict[str, list[int]] | None = None
    recorded: str | None = None
    """The ``sessionId`` of the first main-session line decoded (see :func:`_found`)."""


def _open_file(path: str) -> _File:
    sid, kind, parent_key = file_session(PurePath(path))
    main = _Session(key=session_key(SLUG, sid), kind=kind, parent_key=parent_key)
    return _File(main=main, sessions={main.key: main})


def _session_of(f: _File, line: _Line) -> _Session:
    main = f.main
    if line.isSidechain and main.kind == "main":
        sid = f.sidechains.get(line.parentUuid or "") or f"sidechain-{line.uuid or line.parentUuid}"
        if line.uuid:
            f.sidechains[line.uuid] = sid
        key = session_key(SLUG, sid)
        session = f.sessions.get(key)
        if session is None:
            session = f.sessions[key] = _Session(key=key, kind="subagent", parent_key=main.key)
        return session
    own_id = main.key.removeprefix(f"{SLUG}:")
    if main.kind == "subagent" and main.parent_key is None and line.sessionId not in (None, own_id):
        main.parent_key = session_key(SLUG, line.sessionId)
    return main


def _sidechain(block: bytes, first: int, last: int) -> bool:
    """Whether the line at ``block[first:last]`` says ``"isSidechain": true``
    (Claude Code writes it compact; a re-saved file may have a space)."""
    at = block.find(b'"isSidechain"', first, last)
    return at >= 0 and block[at + 13 : at + 21].lstrip(b": \t").startswith(b"true")


def _scan_range(f: _File, path: str, start: int = 0, stop: int | None = None) -> None:
    """Add the lines of file ``path`` in bytes ``start`` to ``stop`` (line starts;
    ``None``: the end) that hold ``"usage"`` or ``"isSidechain": true`` to ``f``.

    Raises ``OSError`` when the file cannot be read.
    """
    for base, block, end in read_blocks(path, start=start, stop=stop):
        # The hot loop.  "usage" sits near the end of a line that has it, so
        # it is looked for from the end; lines are not split off (copied).
        find, rfind, view = block.find, block.rfind, memoryview(block)
        first = 0
        need_cwd = f.main.cwd is None  # lines holding "cwd" are decoded until the first one
        while first < end:
            last = find(b"\n", first, end)
            last = end if last < 0 else last
            if (
                rfind(b'"usage"', first, last) >= 0
                or _sidechain(block, first, last)
                or (need_cwd and find(b'"cwd"', first, last) >= 0)
            ):
                _decode_add(f, view[first:last], base + first)
                need_cwd = f.main.cwd is None
            first = last + 1


def _decode_add(f: _File, data: bytes | memoryview, offset: int) -> None:
    """Decode one line and :func:`_add` it.  msgspec does not check the strings of
    the fields a typed decode skips, so a line with invalid UTF-8 there is read
    as the parsers read it (decoded with replacement characters); one with it in a
    field the scan reads, a lone surrogate escape or a byte-order mark fails the
    typed decode and is read by :func:`_loose` through the adapters' decoder."""
    try:
        line = _DECODER.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        loose = _loose(bytes(data).rstrip(b"\r"))
        if loose is not None:
            _add(f, loose[0], loose[1], loose[1], offset)
        return
    _add(f, line, line.message.usage if line.message else None, None, offset)


def _add(f: _File, line: _Line, raw: _Usage | Usage | None, usage: Usage | None, offset: int) -> None:
    """Record one decoded line; ``raw`` identifies the usage copy, ``usage`` is
    its exclusive form when already known (else made from ``line`` if needed)."""
    main = f.main
    if f.recorded is None and main.kind == "main" and not line.isSidechain:
        f.recorded = line.sessionId
    session = main if main.kind == "main" and not line.isSidechain else _session_of(f, line)
    if session.cwd is None:
        session.cwd = first_cwd((line.cwd,))
    message = line.message
    if message is None or raw is None or message.model == "<synthetic>":
        return
    if (message.role if line.type is None else line.type) != "assistant":
        return
    mid = message.id or line.uuid or f"{session.key}@{offset}"
    if f.offsets is not None:
        f.offsets.setdefault(mid, []).append(offset)
    known = session.calls.get(mid)
    if known is not None:
        if raw == session.raw.get(mid) and line.costUSD == known.usage.cost_usd:
            return  # the same usage copy again (one line per content block)
        usage = usage or _usage(line)
        if keeps_new_copy(known.usage, usage):
            session.calls[mid] = msgspec.structs.replace(known, usage=usage)
            session.raw[mid] = raw
        return
    usage = usage or _usage(line)
    if usage is None:
        return
    session.calls[mid] = Call(
        session_key=session.key,
        agent=SLUG,
        model=message.model,
        timestamp=record_time(line.timestamp),
        usage=usage,
    )
    session.raw[mid] = raw


def scan_calls(
    refs: list[SourceRef], errors: list[tuple[str, str]] | None = None, cwds: set[str] | None = None
) -> list[Call]:
    """Every deduplicated call of Claude Code sources ``refs`` (see the module rules).

    A file that cannot be read is skipped and listed in ``errors`` as ``(path, reason)``;
    the cwd of every session scanned (with calls or not) is added to ``cwds``.
    """
    paths = [ref.path for ref in refs]
    by_path = {ref.path: ref for ref in refs}
    kept: dict[str, list[_Session]] = {}  # path -> its sessions, in the order read
    held: dict[str, str] = {}  # a file's first session key -> the path holding it
    with gc_paused():
        for path, found in zip(paths, _scan_files(paths), strict=True):
            if found.error is not None:
                if errors is not None:
                    errors.append((path, found.error))
                continue
            file_sessions = found.sessions
            main = file_sessions[0]
            owner = held.get(main.key)
            if owner is not None:  # as agentlog.load.build_sessions decides
                verdict = _verdict(by_path[owner], by_path[path], kept[owner][0], main)
                if verdict == "copy":
                    continue  # a copy of a file read before
                if verdict == "supersedes":
                    del kept[owner]  # the longer copy wins
                else:
                    file_sessions = _renamed(file_sessions, path)
            held[file_sessions[0].key] = path
            kept[path] = file_sessions
        sessions = [s for file_sessions in kept.values() for s in file_sessions]
        if cwds is not None:
            cwds.update(s.cwd for s in sessions if s.cwd)
        return _attribute(sessions)


def _verdict(held: SourceRef, new: SourceRef, held_session: _Session, new_session: _Session) -> CopyVerdict:
    """:func:`~agentlog.rules.copy_verdict` of source ``new`` whose first session
    (``new_session``) source ``held`` holds (``held_session``), judged as
    :func:`agentlog.load.build_sessions` judges it: on every message of the
    session in each file, prompts included (by calls alone, a copy holding every
    call but lacking a prompt of the other would replace it, where the index
    keeps both).  Two files holding one key are rare (a session copied to another
    project folder), so only then are both parsed whole, by the adapter's own
    parser; one that can no longer be read (gone since its scan) is judged by
    the calls scanned."""
    from agentlog.adapters import get_adapter
    from agentlog.load import parse_source, signatures

    adapter = get_adapter(SLUG)
    session_id = new_session.key.removeprefix(f"{SLUG}:")
    try:
        return copy_verdict(
            signatures(parse_source(adapter, held).fragments, session_id),
            signatures(parse_source(adapter, new).fragments, session_id),
        )
    except OSError:
        return copy_verdict(_signatures(held_session.calls), _signatures(new_session.calls))


def _signatures(calls: dict[str, Call]) -> list[Signature]:
    """:func:`~agentlog.rules.signature` of each call's message."""
    return [(mid, "assistant", call.timestamp) for mid, call in calls.items()]


def _renamed(sessions: list[_Session], path: str) -> list[_Session]:
    """The sessions of file ``path`` under :func:`~agentlog.rules.distinct_id`
    ids (see :func:`agentlog.load.rename_source`)."""
    keys = {s.key: session_key(SLUG, distinct_id(s.key.removeprefix(f"{SLUG}:"), path)) for s in sessions}
    return _rekeyed(sessions, keys)


def _rekeyed(sessions: list[_Session], keys: dict[str, str]) -> list[_Session]:
    """``sessions`` with each key in ``keys`` (old → new) replaced, in their
    calls and as a parent too."""
    return [
        msgspec.structs.replace(
            s,
            key=keys.get(s.key, s.key),
            parent_key=keys.get(s.parent_key, s.parent_key) if s.parent_key else None,
            calls={
                mid: msgspec.structs.replace(call, session_key=keys.get(s.key, s.key))
                for mid, call in s.calls.items()
            },
        )
        for s in sessions
    ]


def _attribute(sessions: list[_Session]) -> list[Call]:
    """The calls of ``sessions``, each message id in the first session that has it
    (main before subagent, earliest call, fewest calls, key), with its parent,
    tree root and project."""
    parent = {s.key: s.parent_key for s in sessions}
    order = sorted(sessions, key=lambda s: owner_rank(s.kind, _first(s), len(s.calls), s.key))
    owners: set[str] = set()
    out: list[Call] = []
    for session in order:
        root = session.key
        seen = {root}
        while parent.get(root) and parent[root] not in seen:
            root = parent[root]  # type: ignore[assignment]
            seen.add(root)
        for mid, call in session.calls.items():
            if mid in owners:
                continue
            owners.add(mid)
            out.append(
                msgspec.structs.replace(
                    call, parent_key=session.parent_key, root_key=root, project=session.cwd
                )
            )
    return out


def _first(session: _Session) -> datetime | None:
    """The earliest timestamp of a session's calls (:func:`~agentlog.rules.call_stats`)."""
    return min((c.timestamp for c in session.calls.values() if c.timestamp is not None), default=None)


# -- two processes: pieces of files scanned here and in a worker, then joined ---------


PARALLEL_MIN = 8 << 20
"""Bytes of logs from which a worker process scans part of them while this one
scans the rest; a file this large is cut in two (head here, tail there)."""

WORKER_SHARE = 0.46
"""The worker's share of the bytes: a little under half, as it also records
offsets and sends its calls back (on the 300 MB benchmark both sides then end
together: 6% less wall time than halves)."""


class _Piece(msgspec.Struct, frozen=True, gc=False):
    """Bytes ``start`` to ``stop`` (line starts; ``None``: the end) of the
    ``index``-th file, ``path``."""

    index: int
    path: str
    start: int = 0
    stop: int | None = None


class _Found(msgspec.Struct, gc=False):
    """What scanning a whole file or a tail found: its sessions (their ``raw``
    left out), for a tail the ``offsets`` of :class:`_File`; or why the file
    could not be read (``error``, as :func:`~agentlog.readers.describe_error`)."""

    sessions: list[_Session] = msgspec.field(default_factory=list)
    offsets: dict[str, list[int]] = msgspec.field(default_factory=dict)
    error: str | None = None
    recorded: str | None = None
    """:attr:`_File.recorded` (a head cut before its first main line takes the tail's)."""


_FOUND = msgspec.msgpack.Decoder(list[_Found])


def _scan_files(paths: list[str]) -> list[_Found]:
    """What each file of ``paths`` holds, in that order; with a worker process
    when there is enough to scan (see :func:`_plan`)."""
    here, there = _plan(paths)
    if not there:
        return [_found(_read(piece)) for piece in here]
    produce = functools.partial(_scan_in_worker, there)
    with worker.run_in_worker(produce, "the usage scan process") as messages:
        mine = [_read(piece) for piece in here]
        try:
            theirs = [found for data in messages for found in _FOUND.decode(data)]
        except OSError:  # the worker died: scan its pieces here
            theirs = [_found(_read(piece)) for piece in there]
    out: list[_Found] = [_Found() for _ in paths]
    heads: dict[int, _File | str] = {}
    for piece, result in zip(here, mine, strict=True):
        if piece.stop is None:
            out[piece.index] = _found(result)
        else:
            heads[piece.index] = result
    for piece, found in zip(there, theirs, strict=True):
        out[piece.index] = found if piece.start == 0 else _found(_settle(heads[piece.index], found, piece))
    return out


def _plan(paths: list[str]) -> tuple[list[_Piece], list[_Piece]]:
    """``(pieces to scan here, pieces for a worker)``.  With a worker available and
    :data:`PARALLEL_MIN` bytes in all, each file that large is cut in two at a
    line start (head here, tail there, :data:`WORKER_SHARE`) and the other files
    are shared out whole, largest first, to the side with less to do; else every
    file is scanned here, whole."""
    sizes = [_size(path) for path in paths]
    if sum(sizes) < PARALLEL_MIN or not worker.available():
        return [_Piece(index, path) for index, path in enumerate(paths)], []
    here: list[_Piece] = []
    there: list[_Piece] = []
    load = [0, 0]
    whole: list[int] = []
    for index, (path, size) in enumerate(zip(paths, sizes, strict=True)):
        cut = _cut(path, size)
        if cut is None:
            whole.append(index)
            continue
        here.append(_Piece(index, path, 0, cut))
        there.append(_Piece(index, path, cut))
        load[0] += cut
        load[1] += size - cut
    for index in sorted(whole, key=lambda i: -sizes[i]):
        side = 0 if load[0] * WORKER_SHARE <= load[1] * (1 - WORKER_SHARE) else 1
        (here, there)[side].append(_Piece(index, paths[index]))
        load[side] += sizes[index]
    return here, there


def _size(path: str) -> int:
    """A file's size in bytes (0 when it cannot be read: its scan says why)."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _cut(path: str, size: int) -> int | None:
    """Where to cut a file of ``size`` bytes in two: the first line start from
    :data:`WORKER_SHARE` before its end; ``None`` when it is smaller than
    :data:`PARALLEL_MIN` or has none."""
    if size < PARALLEL_MIN:
        return None
    try:
        cut = line_start_after(path, size - int(size * WORKER_SHARE))
    except OSError:
        return None
    return cut if cut < size else None


def _read(piece: _Piece) -> _File | str:
    """Scan ``piece``: its sessions (recording offsets when it is a tail), or why
    the file could not be read."""
    f = _open_file(piece.path)
    if piece.start:
        f.offsets = {}
    try:
        _scan_range(f, piece.path, piece.start, piece.stop)
    except OSError as exc:
        return describe_error(exc)
    return f


def _found(result: _File | str) -> _Found:
    if isinstance(result, str):
        return _Found(error=result)
    sessions = [msgspec.structs.replace(s, raw={}) for s in result.sessions.values()]
    main = result.main
    if main.kind == "main":  # named by its records, as the adapter names it
        sid = recorded_session_id(main.key.removeprefix(f"{SLUG}:"), result.recorded)
        sessions = _rekeyed(sessions, {main.key: session_key(SLUG, sid)})
    return _Found(sessions=sessions, offsets=result.offsets or {}, recorded=result.recorded)


def _scan_in_worker(pieces: list[_Piece]) -> Iterator[bytes]:
    """The worker's side: what ``pieces`` hold, as one msgpack message."""
    with gc_paused():
        yield msgspec.msgpack.encode([_found(_read(piece)) for piece in pieces])


def _settle(head: _File | str, tail: _Found, piece: _Piece) -> _File | str:
    """A cut file: its head scanned here continued with the ``tail`` found by the
    worker, or the first reason why a part could not be read."""
    if isinstance(head, str):
        return head
    if tail.error is not None:
        return tail.error
    try:
        if len(tail.sessions) > 1:
            # inline sidechains chain to lines before the cut: scan the tail again after the head
            _scan_range(head, piece.path, piece.start)
        else:
            _join(head, tail.sessions[0], tail.offsets, piece.path, tail.recorded)
    except OSError as exc:
        return describe_error(exc)
    return head


def _join(f: _File, tail: _Session, offsets: dict[str, list[int]], path: str, recorded: str | None) -> None:
    """Continue ``f`` (a head's state) with its file's ``tail`` (that piece's only
    session, found on its own), as one pass over both would: the tail's new
    message ids follow the head's, and the tail's lines of an id the head already
    has are read again and added to the head's call in file order."""
    main = f.main
    if f.recorded is None:
        f.recorded = recorded
    if main.cwd is None:
        main.cwd = tail.cwd
    if main.parent_key is None:
        main.parent_key = tail.parent_key
    again = sorted(o for mid, found in offsets.items() if mid in main.calls for o in found)
    for mid, call in tail.calls.items():
        main.calls.setdefault(mid, call)
    for offset, line in zip(again, read_lines_at(path, again), strict=True):
        _decode_add(f, line, offset)
