"""The adapter contract: one small interface every agent format implements.

An adapter knows where its agent keeps logs (:meth:`Adapter.default_roots`), how
to list its sources under a root (:meth:`Adapter.discover`, which may list
folders but never parses), how to recognise its files by content
(:meth:`Adapter.sniff`), and how to parse them: append-only JSONL through a
resumable :class:`LineParser` (:class:`JsonlAdapter`), documents rewritten in
place — JSON files, SQLite databases — whole (:class:`DocumentAdapter`, most
through a :class:`DocumentParser`).

A bad record costs only itself: :meth:`LineParser.feed` and
:meth:`DocumentParser.guard` (a :class:`RecordGuard`) undo and count a record
whose shape defies the adapter, under the decoder's reason codes
(:mod:`agentlog.adapters._json`) or ``malformed:<exception>``.  Anything that
still escapes a parser is a :class:`ParserError`: the error of that one source.

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

import shlex
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, TypeVar

import msgspec

from agentlog.adapters._json import DECODED_WITH_REPLACEMENT, JsonError, parse_object, take_replaced
from agentlog.model import Diagnostics, Message, Session, ToolResult
from agentlog.packing import pack, unpack


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

EMPTY_OBJECT = "empty_object"
"""The reason a JSONL line that is ``{}`` is skipped: it holds nothing to keep (a
million of them, kept raw as messages, took 52 s to index for a 3 MB file)."""

MALFORMED = (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError, ArithmeticError)
"""What converting a record whose shape defies its format raises (a ``say`` that is
an object where a string was expected, ``float()`` of an integer too large…).  The
per-record guards (:meth:`LineParser.feed`, :meth:`DocumentParser.guard`) count it
as skipped under :func:`malformed_reason`; a :class:`~agentlog.adapters._json.JsonError`
raised for a record counts under its own reason."""
_MALFORMED_REASONS: tuple[tuple[type[BaseException], str], ...] = (
    (KeyError, "missing_field"),
    (IndexError, "missing_item"),
    (TypeError, "wrong_type"),
    (AttributeError, "wrong_type"),
    (RecursionError, "nested_too_deep"),
    (ArithmeticError, "number_out_of_range"),
    (UnicodeError, "bad_text"),
    (ValueError, "bad_value"),
)


def malformed_reason(exc: BaseException) -> str:
    """The reason a record that raised ``exc`` (one of :data:`MALFORMED`) is
    counted under, said for the user, not in Python's words:
    ``malformed:missing_field`` (a key the format has was absent),
    ``malformed:missing_item``, ``malformed:wrong_type`` (an object where text was
    expected…), ``malformed:nested_too_deep``, ``malformed:number_out_of_range``,
    ``malformed:bad_text``, ``malformed:bad_value``."""
    what = next((reason for kind, reason in _MALFORMED_REASONS if isinstance(exc, kind)), "bad_value")
    return f"malformed:{what}"


class ParserError(ValueError):
    """An exception that escaped an adapter's parser (``parse_document``, a SQL
    mapping, a :class:`LineParser`): the error of that one source, recorded as its
    diagnostic like an unreadable file — never the run's.  The message names the
    original exception: ``TypeError: unhashable type: 'dict'`` (``exc`` itself when
    it is that message already, as a parse worker sends it back)."""

    def __init__(self, exc: BaseException | str) -> None:
        super().__init__(exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}")


Mark = tuple[int, int, int]
"""Where a record began: ``(fragments emitted, records_total, records_used)``."""


def reject(diagnostics: Diagnostics, out: list[Fragment], mark: Mark, reason: str) -> None:
    """Undo what one record did since ``mark`` — its fragments and its count — and
    count it as skipped ``reason``.  A record that had already counted itself as
    skipped under another reason (``skip`` before failing) stays counted there, so
    ``records_total == records_used + sum(skipped)`` always holds."""
    emitted, total, used = mark
    del out[emitted:]
    already = (diagnostics.records_total - total) - (diagnostics.records_used - used)
    diagnostics.records_used = used
    if already > 0:
        diagnostics.records_total = total + already
        return
    diagnostics.records_total = total
    diagnostics.skip(reason)


class LineParser(ABC, Generic[StateT]):
    """Incremental parser of one append-only source (JSONL).

    Feed it complete lines in order (:meth:`feed`), collect what it emitted with
    :meth:`drain`, and read the session headers (sessions without messages) with
    :meth:`headers`.  ``snapshot()`` → bytes and ``resume(bytes)`` let a later
    read continue after the last fed line: parsing a file in one go or in two
    halves (snapshot/resume between) yields the same sessions.
    """

    state_type: ClassVar[type[msgspec.Struct]]

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
        The first one owns the source's diagnostics.  It may emit fragments it
        held back until now (Claude Code's, before its session id is known):
        :meth:`drain` after it."""

    # -- shared machinery ---------------------------------------------------

    @property
    def diagnostics(self) -> Diagnostics:
        return self.state.diagnostics  # type: ignore[attr-defined,no-any-return]

    def feed(self, line: bytes, offset: int) -> None:
        """Decode one complete line (without its newline) and hand it to :meth:`handle`.
        Blank lines are ignored; an empty object (``{}``) is counted as skipped
        (:data:`EMPTY_OBJECT`), never handled; a corrupt line, or one :meth:`handle` fails on, is
        counted by reason (:mod:`agentlog.adapters._json`, :func:`malformed_reason`)
        and costs only itself, never raised.  A line whose text was decoded with
        replacement characters is counted (``invalid_values["decoded_with_replacement"]``)
        and the messages it made are flagged ``text_replaced``."""
        if not line.strip():
            return
        diagnostics = self.diagnostics
        earlier = take_replaced()  # decoded before this line (a sidecar): counted, flags nothing
        if earlier:
            diagnostics.invalid(DECODED_WITH_REPLACEMENT, earlier)
        try:
            record = parse_object(line)
        except JsonError as exc:
            diagnostics.skip(exc.reason)
            return
        if not record:  # `{}`: nothing to keep, counted (kept raw, each cost a message: ~50 µs)
            diagnostics.skip(EMPTY_OBJECT)
            return
        out = self._out
        mark, total, used = len(out), diagnostics.records_total, diagnostics.records_used
        try:
            self.handle(record, offset)
        except MALFORMED as exc:
            # A record whose shape defies the adapter costs only itself.
            reject(diagnostics, out, (mark, total, used), malformed_reason(exc))
        replaced = take_replaced()
        if replaced:  # the line held text decoded as U+FFFD: counted, its messages flagged
            diagnostics.invalid(DECODED_WITH_REPLACEMENT, replaced)
            for _, item in out[mark:]:
                if isinstance(item, Message):
                    item.flag("text_replaced")

    def emit(self, session_id: str, item: Message | ToolOutput) -> None:
        self._out.append((session_id, item))

    def drain(self) -> list[Fragment]:
        """Fragments emitted since the last call, in order."""
        out, self._out = self._out, []
        return out

    def snapshot(self) -> bytes:
        """The parser state, serialised (:func:`agentlog.packing.pack`: msgpack, or
        JSON when it kept an integer msgpack cannot hold)."""
        return pack(self.state)

    def resume(self, blob: bytes) -> None:
        """Continue from a :meth:`snapshot` of a parser for the same source."""
        self.state = unpack(blob, self.state_type)  # type: ignore[assignment]


class Document(msgspec.Struct, kw_only=True):
    """A whole source as the reader layer hands it to a :class:`DocumentAdapter`:
    ``data`` (the file's bytes, for ``json`` sources), ``tables`` (for ``sqlite``
    sources: every row of each table named in ``sqlite_tables`` that exists, and
    the rows of each ``sqlite_queries`` entry, as ``{column: value}``; a missing
    table has no key), ``sidecars`` (path → bytes) and ``notes`` (what the reader
    layer had to repair — cells that are not UTF-8 —, which the loader adds to the
    source's diagnostics ``errors``)."""

    data: bytes = b""
    tables: dict[str, list[dict[str, Any]]] = msgspec.field(default_factory=dict)
    sidecars: dict[str, bytes] = msgspec.field(default_factory=dict)
    notes: list[str] = msgspec.field(default_factory=list)


class DocumentResult(msgspec.Struct, kw_only=True):
    """What a whole-source parse produced: session headers (each with its own
    diagnostics) and fragments, as a :class:`LineParser` would have emitted them."""

    headers: list[Session]
    fragments: list[tuple[str, Message | ToolOutput]]


class RecordGuard:
    """The per-record guard of :meth:`DocumentParser.guard`, for one record whose
    fragments go to ``out`` and whose count to ``diagnostics`` (usable on its own
    by a converter that keeps its own fragment list): a record that raises a
    :data:`MALFORMED` exception or a :class:`~agentlog.adapters._json.JsonError`
    is undone and counted as skipped (:func:`reject`); other exceptions pass."""

    __slots__ = ("diagnostics", "mark", "out", "rejected")

    def __init__(self, out: list[Fragment], diagnostics: Diagnostics) -> None:
        self.out = out
        self.diagnostics = diagnostics
        self.mark: Mark = (0, 0, 0)
        self.rejected = False
        """Whether the record was undone (after the ``with`` block)."""

    def __enter__(self) -> None:
        self.mark = (len(self.out), self.diagnostics.records_total, self.diagnostics.records_used)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> bool:
        if exc is None:
            return False
        if isinstance(exc, JsonError):
            reason = exc.reason
        elif isinstance(exc, MALFORMED):
            reason = malformed_reason(exc)
        else:
            return False
        reject(self.diagnostics, self.out, self.mark, reason)
        self.rejected = True
        return True


class DocumentParser(ABC):
    """Parser of one whole source (a JSON document, a SQLite database), the
    counterpart of :class:`LineParser` for :class:`DocumentAdapter`.

    Subclasses implement :meth:`parse` (read ``self.doc``, :meth:`emit` fragments,
    count records in a :class:`~agentlog.model.Diagnostics`) and :meth:`headers`.
    Each record — an entry of a message list, a database row — is handled inside
    ``with self.guard():`` so that one whose shape defies the adapter (any
    :data:`MALFORMED` exception, a :class:`~agentlog.adapters._json.JsonError`)
    costs only itself: its fragments are dropped and it is counted as skipped, as
    :meth:`LineParser.feed` does for a line.  :meth:`result` runs the parse; what still escapes it is the source's
    error (the reader layer records it).
    """

    def __init__(self, ref: SourceRef, doc: Document) -> None:
        self.ref = ref
        self.doc = doc
        self.diagnostics = Diagnostics()
        """The source's own counts (the first header's, unless a subclass says otherwise)."""
        self.fragments: list[Fragment] = []

    @abstractmethod
    def parse(self) -> None:
        """Read ``self.doc`` whole, emitting fragments."""

    @abstractmethod
    def headers(self) -> list[Session]:
        """The sessions of this source, without messages; the first one owns the
        source-wide diagnostics."""

    def emit(self, session_id: str, item: Message | ToolOutput) -> None:
        self.fragments.append((session_id, item))

    def guard(self, diagnostics: Diagnostics | None = None) -> RecordGuard:
        """A context for one record, counted in ``diagnostics`` (default: the
        source's): a record that fails costs only itself (see the class docstring)."""
        return RecordGuard(self.fragments, self.diagnostics if diagnostics is None else diagnostics)

    def result(self) -> DocumentResult:
        """:meth:`parse`, then the headers and fragments it produced."""
        self.parse()
        return DocumentResult(headers=self.headers(), fragments=self.fragments)


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
    project_owned: ClassVar[tuple[str, ...]] = ()
    """Names (``fnmatch`` patterns) of the files and folders this agent keeps inside
    the projects it runs in: a path with a component so named is the agent's
    (Crush's ``.crush``), and agentlog never writes it
    (:meth:`agentlog.service.home.Home.guard`)."""

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
        """The shell command that resumes ``session`` in its agent, if any (built
        with :func:`resume_line`)."""
        return None


def resume_line(command: str, session_id: str) -> str | None:
    """The shell line ``command`` followed by ``session_id`` quoted for a POSIX shell
    (:func:`shlex.quote`): an id is read from a log or its file name, and a line
    the user copies from ``show`` or the viewer must not run ``$(…)`` or ``; …``
    written there.  A plain id (letters, digits, ``-_.:/``…) is left as it is.
    ``None`` for an empty id or one that starts with ``-``: quoting cannot stop
    the agent reading it as its own options (``claude --resume -rf``)."""
    if not session_id or session_id.startswith("-"):
        return None
    return f"{command} {shlex.quote(session_id)}"


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
