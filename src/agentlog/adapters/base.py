"""The adapter contract: one small interface every agent format implements.

An adapter knows where its agent keeps logs (:meth:`Adapter.default_roots`), how
to list its sources under a root (:meth:`Adapter.discover`, which may list
folders but never parses), how to recognise its files by content
(:meth:`Adapter.sniff`), and how to parse them: append-only JSONL through a
resumable :class:`LineParser` (:class:`JsonlAdapter`), documents rewritten in
place — JSON files, SQLite databases — whole (:class:`DocumentAdapter`).

Parsing is pure: a :class:`LineParser` is fed complete lines (bytes) and never
opens a file; the reader layer (:mod:`agentlog.readers`) does all I/O.  A parser
emits *fragments* as it goes — :class:`~agentlog.model.Message` objects and
:class:`ToolOutput` patches, each tagged with the session id it belongs to — and
keeps only a small state (session headers, counters, a few maps), which
:meth:`LineParser.snapshot` serialises so a later read can resume at the byte
where this one stopped.  :mod:`agentlog.assemble` turns headers + fragments
into full :class:`~agentlog.model.Session` objects; an index can store the same
fragments incrementally.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, TypeVar

import msgspec

from agentlog.model import Diagnostics, Message, Session, ToolResult


class SourceRef(msgspec.Struct, frozen=True, kw_only=True):
    """One source file of one agent: ``path`` plus ``sidecars``, small files the
    parser also needs (e.g. Claude's ``agent-<id>.meta.json``)."""

    agent: str
    path: str
    sidecars: tuple[str, ...] = ()


class ToolOutput(msgspec.Struct, kw_only=True):
    """A tool result to merge into the tool call ``call_id`` of the same session.

    If no such call exists when the session is assembled, the result is kept as
    a ``tool`` role message at the place it was recorded (``timestamp``,
    ``offset``), holding a tool call part named ``unknown``.
    """

    call_id: str
    result: ToolResult
    timestamp: datetime | None = None
    offset: int | None = None


Fragment = tuple[str, Message | ToolOutput]
"""``(session_id, item)`` as emitted by a parser."""

StateT = TypeVar("StateT", bound=msgspec.Struct)


class LineParser(ABC, Generic[StateT]):
    """Incremental parser of one append-only source (JSONL).

    Feed it complete lines in order (:meth:`feed`), collect what it emitted with
    :meth:`drain`, and read the session headers (sessions without messages) with
    :meth:`headers`.  ``snapshot()`` → bytes and ``resume(bytes)`` let a later
    read continue after the last fed line: parsing a file in one go or in two
    halves (snapshot/resume between) yields the same sessions.
    """

    state_type: ClassVar[type[msgspec.Struct]]
    _decoder: ClassVar[msgspec.json.Decoder[Any]] = msgspec.json.Decoder()

    def __init__(self, ref: SourceRef, sidecars: Mapping[str, bytes]) -> None:
        self.ref = ref
        self.sidecars = dict(sidecars)
        self.state: StateT = self.initial_state()
        self._out: list[Fragment] = []

    # -- the contract -------------------------------------------------------

    @abstractmethod
    def initial_state(self) -> StateT:
        """The state before the first line."""

    @abstractmethod
    def handle(self, record: dict[str, Any], offset: int) -> None:
        """Use one decoded JSON object that starts at byte ``offset``: update the
        state, :meth:`emit` fragments, and count it in ``self.diagnostics``."""

    @abstractmethod
    def headers(self) -> list[Session]:
        """The sessions this source has produced so far, without messages.
        The first one owns the source's diagnostics."""

    # -- shared machinery ---------------------------------------------------

    @property
    def diagnostics(self) -> Diagnostics:
        return self.state.diagnostics  # type: ignore[attr-defined,no-any-return]

    def feed(self, line: bytes, offset: int) -> None:
        """Decode one complete line (without its newline) and hand it to :meth:`handle`.
        Blank lines are ignored; corrupt ones are counted by reason, never raised."""
        if not line.strip():
            return
        try:
            record = self._decoder.decode(line)
        except msgspec.DecodeError as exc:
            self.diagnostics.skip("invalid_utf8" if "UTF-8" in str(exc) else "invalid_json")
            return
        except RecursionError:
            self.diagnostics.skip("nested_too_deep")
            return
        if not isinstance(record, dict):
            self.diagnostics.skip("not_an_object")
            return
        try:
            self.handle(record, offset)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
            # A record whose shape defies the adapter costs only itself.
            self.diagnostics.skip(f"malformed:{type(exc).__name__}")

    def emit(self, session_id: str, item: Message | ToolOutput) -> None:
        self._out.append((session_id, item))

    def drain(self) -> list[Fragment]:
        """Fragments emitted since the last call, in order."""
        out, self._out = self._out, []
        return out

    def snapshot(self) -> bytes:
        """The parser state, serialised (msgpack)."""
        return msgspec.msgpack.encode(self.state)

    def resume(self, blob: bytes) -> None:
        """Continue from a :meth:`snapshot` of a parser for the same source."""
        self.state = msgspec.msgpack.decode(blob, type=self.state_type)  # type: ignore[assignment]


class Document(msgspec.Struct, kw_only=True):
    """A whole source as the reader layer hands it to a :class:`DocumentAdapter`:
    ``data`` (the file's bytes, for ``json`` sources), ``tables`` (for ``sqlite``
    sources: every row of each table named in ``sqlite_tables`` that exists, and
    the rows of each ``sqlite_queries`` entry, as ``{column: value}``; a missing
    table has no key) and ``sidecars`` (path → bytes)."""

    data: bytes = b""
    tables: dict[str, list[dict[str, Any]]] = msgspec.field(default_factory=dict)
    sidecars: dict[str, bytes] = msgspec.field(default_factory=dict)


class DocumentResult(msgspec.Struct, kw_only=True):
    """What a whole-source parse produced: session headers (each with its own
    diagnostics) and fragments, as a :class:`LineParser` would have emitted them."""

    headers: list[Session]
    fragments: list[tuple[str, Message | ToolOutput]]


class Adapter(ABC):
    """One agent format.  Subclass :class:`JsonlAdapter` (append-only JSONL, parsed
    incrementally) or :class:`DocumentAdapter` (a JSON file or SQLite database
    that is rewritten in place, parsed whole) — or both, when an agent keeps
    some sources of each kind (:func:`reads_lines` tells which way a source goes)."""

    slug: ClassVar[str]
    """Adapter id, e.g. ``claude_code``: session keys, ``--agent`` values."""
    display_name: ClassVar[str]
    parser_version: ClassVar[int]
    """Bump when parsing changes so an index re-parses this agent's sources."""
    env_vars: ClassVar[tuple[str, ...]] = ()
    """Environment variables that move the agent's data (for ``agentlog agents``)."""
    project_files: ClassVar[tuple[str, ...]] = ()
    """Paths, relative to a project folder, of the sources this agent writes inside
    the projects it runs in (Aider's ``.aider.chat.history.md``).  Each folder other
    agents' sessions recorded as ``cwd`` (and its parent folders) is looked at for
    them: see :func:`agentlog.load.project_sources`."""

    @abstractmethod
    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """Where this agent keeps its logs, from the environment and home folder.
        Pure: no file-system access."""

    @abstractmethod
    def discover(self, root: Path) -> Iterator[SourceRef]:
        """List the sources under ``root`` (may list folders; never parses)."""

    @abstractmethod
    def sniff(self, name: str, head: bytes) -> float:
        """Confidence 0..1 that a file called ``name`` starting with ``head`` is this format."""

    def resume_command(self, session: Session) -> str | None:
        """The shell command that resumes ``session`` in its agent, if any."""
        return None


class JsonlAdapter(Adapter):
    """An append-only JSONL format: parsed line by line, resumable."""

    @abstractmethod
    def new_parser(self, ref: SourceRef, sidecars: Mapping[str, bytes]) -> LineParser[Any]:
        """A fresh parser for ``ref``; ``sidecars`` maps each sidecar path to its bytes."""


class DocumentAdapter(Adapter):
    """A format whose sources are rewritten in place (a JSON document, a SQLite
    database): each change re-parses the whole source."""

    source_format: ClassVar[Literal["json", "sqlite"]]
    sqlite_tables: ClassVar[tuple[str, ...]] = ()
    """For ``sqlite`` sources: the tables the reader layer reads whole (read-only)."""
    sqlite_queries: ClassVar[Mapping[str, tuple[str, tuple[Any, ...]]]] = {}
    """For ``sqlite`` sources: named read-only ``SELECT`` statements ``name → (sql,
    params)`` whose rows land in ``Document.tables[name]`` — for tables of which
    only some rows may be read (a query on a missing table has no key)."""

    def format_of(self, ref: SourceRef) -> Literal["json", "sqlite", "jsonl"]:
        """How the reader layer reads ``ref``: :attr:`source_format`, unless an agent
        that keeps both a database and JSON files (OpenCode, Hermes) says otherwise.
        ``"jsonl"``: line by line, for an adapter that is also a :class:`JsonlAdapter`
        (an append-only log beside older documents: Qwen Code, Antigravity)."""
        return self.source_format

    @abstractmethod
    def parse_document(self, ref: SourceRef, doc: Document) -> DocumentResult:
        """Parse one whole source.  Pure: never raises on bad content (count it in
        the headers' diagnostics instead)."""


def reads_lines(adapter: Adapter, ref: SourceRef) -> bool:
    """Whether ``ref`` is parsed line by line (resumable) rather than whole: true for
    a :class:`JsonlAdapter`, unless it is also a :class:`DocumentAdapter` whose
    :meth:`~DocumentAdapter.format_of` names a document format for ``ref``."""
    if not isinstance(adapter, JsonlAdapter):
        return False
    return not isinstance(adapter, DocumentAdapter) or adapter.format_of(ref) == "jsonl"
