"""What every fuzz case must hold, and the views of a home the checks compare.

* no exception escapes loading (``agentlog.load.load_sessions``) or syncing an index,
  and neither takes longer than ``LIMIT`` seconds (:func:`time_limit`);
* the index — the home's index synced before the mutation, brought up to date after
  it (the path a real sync takes) — gives the same sessions (messages, parts, usage,
  links) and the same counted calls, costs included, as loading in memory (:func:`index_view`,
  :func:`memory_view`, :func:`calls_view`);
* records other than the damaged one survive (:func:`survivors_kept`): every
  ``(role, text)`` of a message loaded from the *oracle* — the file with the damaged
  record removed — is still loaded from the mutated file, whole.  Orphan tool
  results and usage carriers are left out (:func:`messages`), and so is usage:
  one call's usage may be written by another record (a Codex ``token_count`` event,
  the last of Claude's streamed copies), so a damaged record may rightly change it;
  the usage of every case is held by the index and scanner checks instead;
* for Claude Code, the fast usage scanner counts what the index counts
  (:func:`scanner_view`);
* every session loaded is shown and exported to every text format without an
  exception (:func:`rendering_failures`).
"""

from __future__ import annotations

import signal
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from agentlog.adapters import get_adapter
from agentlog.index import queries
from agentlog.index.db import connect
from agentlog.index.sync import sync
from agentlog.index.usage import members, usage_records
from agentlog.load import LoadReport, load_sessions
from agentlog.model import Session, usage_counts
from agentlog.usage.calls import Call, calls_from_sessions
from agentlog.usage.pricing import Pricer
from agentlog.usage.source import collect_calls

LIMIT = 20.0
"""Seconds one case may take (parsing a fixture takes milliseconds)."""


class Hang(Exception):
    """A case ran past :data:`LIMIT`."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`Hang` in the main thread after ``seconds`` (``SIGALRM``)."""

    def expire(_signum: int, _frame: Any) -> None:
        raise Hang(f"no result after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def load(agent: str, root: Path) -> tuple[list[Session], LoadReport]:
    report = LoadReport()
    return load_sessions([agent], {"HOME": str(root)}, root, report=report), report


def memory_view(sessions: list[Session]) -> list[bytes]:
    """Each session's whole model as JSON (its first source only: the index keeps one)."""
    out = []
    for session in sessions:
        copy = msgspec.structs.replace(session, sources=session.sources[:1])
        out.append(msgspec.json.encode(copy))
    return sorted(out)


def index_view(conn: sqlite3.Connection) -> list[bytes]:
    return sorted(
        msgspec.json.encode(queries.get_session(conn, s.key))
        for s in queries.list_sessions(conn, include_empty=True)
    )


_PRICER = Pricer()
"""One pricer over genai-prices' bundled table for every case (no user overrides)."""


def _call_totals(
    calls: Iterable[Call], conn: sqlite3.Connection | None = None
) -> dict[tuple[Any, ...], tuple[int, ...]]:
    """Counted calls summed by session, model and tier: ``(calls, buckets…, cost in
    pico-dollars, priced calls)``, priced as ``agentlog usage`` prices them (a
    roll-up record spanning price tiers by its members in ``conn``)."""
    out: dict[tuple[Any, ...], list[int]] = {}
    split = partial(members, conn) if conn is not None else None
    for pc in _PRICER.price_all(calls, members=split):
        c, u = pc.call, pc.call.usage
        row = out.setdefault((c.session_key, c.root_key, c.project, c.model, u.service_tier), [0] * 10)
        for i, v in enumerate(
            (
                c.calls,
                *usage_counts(u),
                pc.cost or 0,
                c.calls if pc.cost is not None else 0,
            )
        ):
            row[i] += v
    return {k: tuple(v) for k, v in out.items()}


def calls_view(sessions: list[Session]) -> dict[tuple[Any, ...], tuple[int, ...]]:
    return _call_totals(calls_from_sessions(sessions))


def index_calls_view(conn: sqlite3.Connection, agent: str) -> dict[tuple[Any, ...], tuple[int, ...]]:
    return _call_totals(usage_records(conn, agent), conn)


def scanner_view(root: Path) -> dict[tuple[Any, ...], tuple[int, ...]]:
    """What the Claude Code fast usage path counts (its public entry point)."""
    return _call_totals(collect_calls({"HOME": str(root)}, root, agents=["claude_code"], fast=True))


def synced(agent: str, root: Path, index: Path) -> sqlite3.Connection:
    """``index`` brought up to date with ``root`` for ``agent`` (the caller closes it)."""
    conn = connect(index)
    sync(conn, [get_adapter(agent)], {"HOME": str(root)}, root)
    return conn


def messages(sessions: list[Session]) -> Counter[tuple[str, str]]:
    """Every message as ``(role, text)``, hidden ones included, but orphan tool results
    and usage carriers (``meta`` system messages an adapter makes to hold usage no
    message holds: with the damaged record gone its usage may need one, with the record
    kept it does not)."""
    return Counter(
        (m.role, m.text)
        for session in sessions
        for m in session.messages
        if m.role != "tool" and not (m.role == "system" and "meta" in m.flags and m.usage is not None)
    )


def survivors_kept(mutated: list[Session], oracle: list[Session]) -> list[tuple[str, str]]:
    """The oracle's messages missing from the mutated load (empty: the contract holds).

    An oracle message ``(role, text)`` that occurs ``n`` times is kept when at least
    ``n`` mutated messages of that role contain its text whole: what the damaged record
    still held may be merged into a neighbour (a streamed copy, a duplicate), never
    taken from it."""
    have = messages(mutated)
    lost = []
    for (role, text), n in messages(oracle).items():
        found = have[(role, text)]
        if found < n:
            found += sum(c for (r, t), c in have.items() if r == role and t != text and text in t)
        if found < n:
            lost.append((role, text))
    return sorted(lost)


def first_difference(left: list[bytes], right: list[bytes]) -> str:
    """A short account of where two session views differ."""
    lkeys = {msgspec.json.decode(x)["key"]: x for x in left}
    rkeys = {msgspec.json.decode(x)["key"]: x for x in right}
    if set(lkeys) != set(rkeys):
        return f"sessions only in the index: {sorted(set(lkeys) - set(rkeys))}, only in memory: {sorted(set(rkeys) - set(lkeys))}"
    for key in sorted(lkeys):
        a, b = msgspec.json.decode(lkeys[key]), msgspec.json.decode(rkeys[key])
        if a != b:
            fields = sorted(f for f in set(a) | set(b) if a.get(f) != b.get(f))
            detail = ""
            if "messages" in fields:
                for i, (x, y) in enumerate(zip(a.get("messages", []), b.get("messages", []), strict=False)):
                    if x != y:
                        diff = sorted(f for f in set(x) | set(y) if x.get(f) != y.get(f))
                        detail = f"; message {i} differs in {diff}: index {[x.get(f) for f in diff]!r:.200} memory {[y.get(f) for f in diff]!r:.200}"
                        break
                else:
                    detail = f"; {len(a.get('messages', []))} messages in the index, {len(b.get('messages', []))} in memory"
            return f"session {key} differs in {fields}{detail}"
    return "equal"


def rendering_failures(sessions: list[Session]) -> list[str]:
    """What fails when each of ``sessions`` is shown as ``show --all --reasoning
    --full`` prints it and exported to every text format (Markdown, slim, one HTML
    page, JSON), its messages redacted as exports redact them: a damaged value the
    parser kept must cost only itself there too (a tool result's ``text`` that is
    a number made every one of these exit 70, tester13 finding 2)."""
    import io

    from rich.console import Console

    from agentlog.cli.render import render_transcript
    from agentlog.export import Transcript
    from agentlog.export.html import write_page
    from agentlog.export.jsonfmt import write_json
    from agentlog.export.markdown import write_markdown
    from agentlog.export.redaction import redact_message
    from agentlog.export.slim import write_slim

    failures = []
    for session in sessions:
        header = msgspec.structs.replace(session, messages=[])
        shown = [redact_message(m) for m in session.messages]

        def transcript(header: Session = header, shown: list[Any] = shown) -> list[Transcript]:
            return [Transcript(header, lambda: iter(shown))]

        renders = {
            "show": lambda header=header, messages=session.messages: render_transcript(
                Console(file=io.StringIO(), width=100), header, iter(messages), True, True, True
            ),
            "md": lambda: write_markdown(transcript(), io.StringIO()),
            "slim": lambda: write_slim(transcript(), io.StringIO(), None),
            "html": lambda: write_page(transcript(), io.StringIO(), redacted=True),
            "json": lambda: write_json(transcript(), io.BytesIO(), many=False),
        }
        for name, render in renders.items():
            try:
                render()
            except Exception as exc:  # the finding: any exception is one
                failures.append(f"{name} of {session.key}: {type(exc).__name__}: {exc}"[:300])
    return failures
