"""The fast path for Claude Code usage: decode only what usage needs.

``agentlog usage --no-index`` reads Claude Code files through the reader layer
(:func:`~agentlog.readers.read_blocks`, read-only) but, instead of building the
full model, finds the lines that can carry usage (``"usage"`` in the bytes) or
belong to an inline sidechain (``"isSidechain":true``) in whole blocks and decodes
only those, into small typed
msgspec structs that skip every other field.  A line whose fields have
unexpected types is decoded generically and read by the adapter's own
:func:`~agentlog.adapters.claude_code.usage_of`, so nothing is lost.

The result equals the full path's calls (:func:`agentlog.usage.calls_from_sessions`
over :func:`agentlog.load.load_sessions`), by the same rules
(``shared/cost.md`` §1, :mod:`agentlog.assemble`, :mod:`agentlog.link`):

* one call per ``message.id`` (the line's ``uuid`` when it has none) within a
  session: a later copy replaces an earlier one unless its total is smaller;
* ``model == "<synthetic>"`` lines carry no usage;
* a message id seen in several sessions counts once, in the first session by
  (main before subagent, earliest call, fewest calls, key) — the full path
  orders by the session's first message of any kind, which can differ only for
  a resumed file whose first line predates its copy's first usage line;
* sessions and subagents are keyed as the adapter keys them (file stem,
  ``agent-<id>``, inline ``sidechain-<uuid>`` chains), ``cwd`` from the lines.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import PurePath
from typing import Any

import msgspec

from agentlog.adapters import SourceRef
from agentlog.adapters._common import parse_time
from agentlog.adapters.claude_code import SLUG, file_session, usage_of
from agentlog.load import gc_paused
from agentlog.model import Usage
from agentlog.readers import describe_error, read_blocks
from agentlog.usage.calls import Call

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


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
    return Usage(
        input_tokens=raw.input_tokens,
        cache_read_tokens=raw.cache_read_input_tokens,
        cache_write_5m_tokens=w5m,
        cache_write_1h_tokens=w1h,
        output_tokens=raw.output_tokens,
        web_search_requests=raw.server_tool_use.web_search_requests if raw.server_tool_use else 0,
        cost_usd=line.costUSD,
        cost_source="recorded" if line.costUSD is not None else None,
    )


def _loose(data: bytes) -> tuple[_Line, Usage | None] | None:
    """A line with unexpected field types: decoded generically, read like the adapter does."""
    try:
        record = msgspec.json.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None
    if not isinstance(record, dict):
        return None
    message = record.get("message") if isinstance(record.get("message"), dict) else {}

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
    return line, usage_of(record, message.get("usage"))


@dataclass
class _Session:
    key: str
    kind: str
    parent_key: str | None
    cwd: str | None = None
    calls: dict[str, Call] = field(default_factory=dict)
    raw: dict[str, object] = field(default_factory=dict)
    first: datetime | None = None


@dataclass
class _File:
    """The sessions of one file: the main one (file stem or ``agent-<id>``) and
    inline sidechains."""

    main: _Session
    sessions: dict[str, _Session] = field(default_factory=dict)
    sidechains: dict[str, str] = field(default_factory=dict)


def _open_file(ref: SourceRef) -> _File:
    sid, kind, parent_key = file_session(PurePath(ref.path))
    main = _Session(key=f"{SLUG}:{sid}", kind=kind, parent_key=parent_key)
    return _File(main=main, sessions={main.key: main})


def _session_of(f: _File, line: _Line) -> _Session:
    main = f.main
    if line.isSidechain and main.kind == "main":
        sid = f.sidechains.get(line.parentUuid or "") or f"sidechain-{line.uuid or line.parentUuid}"
        if line.uuid:
            f.sidechains[line.uuid] = sid
        key = f"{SLUG}:{sid}"
        session = f.sessions.get(key)
        if session is None:
            session = f.sessions[key] = _Session(key=key, kind="subagent", parent_key=main.key)
        return session
    own_id = main.key.removeprefix(f"{SLUG}:")
    if main.kind == "subagent" and main.parent_key is None and line.sessionId not in (None, own_id):
        main.parent_key = f"{SLUG}:{line.sessionId}"
    return main


def _sidechain_lines(block: bytes, stop: int) -> Iterator[tuple[int, bytes]]:
    """``(offset in block, line)`` of every line before ``stop`` with usage or of an
    inline sidechain (whose ``parentUuid`` chains decide the sidechain of a call)."""
    start = 0
    for line in block[:stop].split(b"\n"):
        if b'"usage"' in line or b'"isSidechain":true' in line:
            yield start, line
        start += len(line) + 1


def scan_file(ref: SourceRef) -> list[_Session]:
    """The sessions of one Claude Code file with their calls (deduped within each).

    Raises ``OSError`` when the file cannot be read.
    """
    f = _open_file(ref)
    with gc_paused():
        for base, block, stop in read_blocks(ref.path):
            if block.find(b'"isSidechain":true', 0, stop) >= 0:
                for offset, data in _sidechain_lines(block, stop):
                    _decode_add(f, data, base + offset)
                continue
            # The hot loop: only the lines holding "usage", found without splitting.
            find, rfind = block.find, block.rfind
            pos = find(b'"usage"', 0, stop)
            while pos >= 0:
                start = rfind(b"\n", 0, pos) + 1
                end = find(b"\n", pos, stop)
                end = stop if end < 0 else end
                _decode_add(f, block[start:end], base + start)
                pos = find(b'"usage"', end, stop)
    return list(f.sessions.values())


def _decode_add(f: _File, data: bytes, offset: int) -> None:
    try:
        line = _DECODER.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        loose = _loose(data.rstrip(b"\r"))
        if loose is not None:
            _add(f, loose[0], loose[1], loose[1], offset)
        return
    _add(f, line, line.message.usage if line.message else None, None, offset)


def _add(f: _File, line: _Line, raw: _Usage | Usage | None, usage: Usage | None, offset: int) -> None:
    """Record one decoded line; ``raw`` identifies the usage copy, ``usage`` is
    its exclusive form when already known (else made from ``line`` if needed)."""
    main = f.main
    session = main if main.kind == "main" and not line.isSidechain else _session_of(f, line)
    if session.cwd is None:
        session.cwd = line.cwd
    message = line.message
    if message is None or raw is None or message.model == "<synthetic>":
        return
    if (message.role if line.type is None else line.type) != "assistant":
        return
    mid = message.id or line.uuid or f"{session.key}@{offset}"
    known = session.calls.get(mid)
    if known is not None:
        if raw == session.raw.get(mid):
            return  # the same usage copy again (one line per content block)
        usage = usage or _usage(line)
        if usage is not None and usage.total_tokens >= known.usage.total_tokens:
            session.calls[mid] = msgspec.structs.replace(known, usage=usage)
            session.raw[mid] = raw
        return
    usage = usage or _usage(line)
    if usage is None:
        return
    stamp = parse_time(line.timestamp)
    session.calls[mid] = Call(
        session_key=session.key, agent=SLUG, model=message.model, timestamp=stamp, usage=usage
    )
    session.raw[mid] = raw
    if stamp is not None and (session.first is None or stamp < session.first):
        session.first = stamp


def scan_calls(refs: list[SourceRef], errors: list[tuple[str, str]] | None = None) -> list[Call]:
    """Every deduplicated call of Claude Code sources ``refs`` (see the module rules).

    A file that cannot be read is skipped and listed in ``errors`` as ``(path, reason)``.
    """
    sessions: list[_Session] = []
    for ref in refs:
        try:
            sessions.extend(scan_file(ref))
        except OSError as exc:
            if errors is not None:
                errors.append((ref.path, describe_error(exc)))
    parent = {s.key: s.parent_key for s in sessions}
    order = sorted(sessions, key=lambda s: (s.kind != "main", s.first or _EPOCH, len(s.calls), s.key))
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
