"""Read sources into sessions, without an index.

``parse_source`` runs one adapter over one file through the reader layer;
``load_sessions`` discovers every agent's sources, parses them, assembles the
sessions and links subagents/forks.  A source that cannot be read costs only
its own sessions: its error is recorded in :class:`LoadReport`.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from agentlog.adapters import (
    Adapter,
    Document,
    DocumentAdapter,
    JsonlAdapter,
    LazyAdapter,
    SourceRef,
    all_adapters,
    resolved,
)
from agentlog.adapters._json import DECODED_WITH_REPLACEMENT, take_replaced
from agentlog.adapters.base import Fragment, ParserError, reads_lines
from agentlog.collector import gc_paused
from agentlog.model import Diagnostics, Message, Session, ToolCallPart
from agentlog.probe import (
    PathProblem,
    Problems,
    collecting,
    identity,
    is_dir,
    is_file,
    is_root,
    problem,
    regular_stat,
    shown_path,
    stat_of,
)
from agentlog.readers import (
    DOCUMENT_LIMIT,
    LineReader,
    describe_error,
    read_head,
    read_small,
    read_sqlite_tables,
)
from agentlog.rules import (
    TOKENS_OUT_OF_RANGE,
    Signature,
    bounded_title,
    bounded_usage,
    copy_verdict,
    distinct_id,
    session_key,
    signature,
)


@dataclass
class ParsedSource:
    """What one parse of one source produced: session headers, fragments, the
    byte offset a later read resumes from, and the parser state to resume with."""

    ref: SourceRef
    headers: list[Session]
    fragments: list[Fragment]
    consumed: int
    state: bytes


Batch = tuple[list[Fragment], list[Session], tuple[int, bytes] | None]
"""``(fragments, headers so far, (consumed, parser state) on the last batch)``."""


def jsonl_batches(
    adapter: JsonlAdapter,
    ref: SourceRef,
    sidecars: Mapping[str, bytes],
    start: int,
    state: bytes | None,
    lines: int,
) -> Iterator[Batch]:
    """Parse a JSONL source from byte ``start`` in batches of up to ``lines`` lines
    (the first ones smaller, from 2,000 lines doubling, so a consumer in another
    process starts early and never waits long for the next one).  Each batch but
    the last ends where :func:`open_tail` says: the fragments of its open messages
    (at most :data:`CARRY_MAX`) start the next one."""
    try:
        parser = adapter.new_parser(ref, sidecars)
        if state is not None:
            parser.resume(state)
    except Exception as exc:  # the parser's bug or blind spot: this source's error
        raise ParserError(exc) from exc
    take_replaced()  # what an earlier source left uncounted is not this one's
    reader = LineReader(ref.path, start)  # its OSError / ValueError are the file's own
    out: list[Fragment] = []
    count = 0
    limit = min(lines, 2_000)
    for offset, line in reader:
        try:
            parser.feed(line, offset)
            out.extend(parser.drain())
            if count + 1 >= limit:
                headers = parser.headers()
                out.extend(parser.drain())  # what a parser emits on being asked (held fragments)
            else:
                headers = None
        except Exception as exc:
            raise ParserError(exc) from exc
        count += 1
        del line  # not held while a batch is sent on (a 64 MiB line, decoded)
        if headers is not None:
            cut = open_tail(out)
            ready, out = out[:cut], out[cut:]
            yield bound_usage(ready, parser.diagnostics), headers, None
            del ready
            count, limit = 0, min(lines, 2 * limit)
    try:
        parser.diagnostics.incomplete_tail_bytes = reader.tail_bytes
        if reader.oversized:
            parser.diagnostics.skip("line_too_long", reader.oversized)
        count_replaced(parser.diagnostics)  # texts decoded outside a line (a sidecar)
        parser.headers()  # a parser may emit what it held back when asked (Claude Code)
        out.extend(parser.drain())
        out = bound_usage(out, parser.diagnostics)  # counted before the state is saved
        end = parser.headers(), (reader.consumed, parser.snapshot())
    except Exception as exc:
        raise ParserError(exc) from exc
    yield out, *end


CARRY_MAX = 256
"""Fragments at the end of a batch :func:`open_tail` looks at (and carries at most)."""


def open_tail(fragments: Sequence[Fragment]) -> int:
    """Where a batch of ``fragments`` (not the source's last) ends, so that the next
    batch rarely changes a message this one stores: the fragments from there on are
    carried into the next batch (``len(fragments)``: none).

    Storing a message again (its parts deleted and written anew, its row updated)
    runs statements whose triggers write ``parts_fts``; each opens a statement
    savepoint, and FTS5 writes out its whole pending-terms buffer at every savepoint
    (``fts5SavepointMethod`` calls ``sqlite3Fts5StorageSync``, sqlite
    ``ext/fts5/fts5_main.c``): 0.1–1 s each on a 300 MB log.  A message is likely to
    change in the next lines when it is the batch's last (Claude Code writes one
    content block a line, under the message's id) or has a tool call no later
    fragment answers; so are the messages the fragments after them name (by id, or
    by a call they answer).  Among the last :data:`CARRY_MAX` fragments, the batch
    ends before the first such message; never before its first fragment (a batch
    holds something).  Batches may end anywhere (the sessions stored are the same):
    this only moves the end."""
    first = max(1, len(fragments) - CARRY_MAX)
    cut = len(fragments)
    named: set[tuple[str, str]] = set()
    """``(session id, message id)`` of the messages among ``fragments[cut:]``."""
    answers: set[str] = set()
    """Call ids the tool outputs among ``fragments[cut:]`` answer."""
    later: set[str] = set()
    """Call ids answered after the fragment looked at."""
    last = True
    for n in range(len(fragments) - 1, first - 1, -1):
        session_id, item = fragments[n]
        if not isinstance(item, Message):
            later.add(item.call_id)
            continue
        calls = [p.call_id for p in item.parts if isinstance(p, ToolCallPart) and p.result is None]
        if last or (session_id, item.id) in named or any(c in answers or c not in later for c in calls):
            for carried_session, carried in fragments[n:cut]:
                if isinstance(carried, Message):
                    named.add((carried_session, carried.id))
                else:
                    answers.add(carried.call_id)
            cut = n
        last = False
    return cut


def count_replaced(diagnostics: Diagnostics) -> int:
    """Count in ``diagnostics`` the JSON texts decoded with replacement characters
    since the last count (:func:`agentlog.adapters._json.take_replaced`), as
    ``invalid_values["decoded_with_replacement"]``; returns how many."""
    replaced = take_replaced()
    if replaced:
        diagnostics.invalid(DECODED_WITH_REPLACEMENT, replaced)
    return replaced


def bound_usage(fragments: list[Fragment], diagnostics: Diagnostics) -> list[Fragment]:
    """``fragments`` with every token count out of range set to 0
    (:func:`agentlog.rules.bounded_usage`), each counted in ``diagnostics``
    (``invalid_values["tokens_out_of_range"]``); changed in place, returned."""
    for _, item in fragments:
        if isinstance(item, Message) and item.usage is not None:
            item.usage, bad = bounded_usage(item.usage)
            if bad:
                diagnostics.invalid(TOKENS_OUT_OF_RANGE, bad)
    return fragments


class SourceParse:
    """One parse of one source, streamed: :meth:`batches` yields fragments in
    order; ``headers`` (current at every yield), ``consumed`` (the byte to resume
    from) and ``state`` (parser state to resume with) are final once it ends.

    A JSONL source is read from byte ``start``, resuming ``state`` when given; a
    document source is read whole.  Iterating raises ``OSError`` (or
    ``sqlite3.Error``, ``ValueError``) when the source itself cannot be read; a
    missing or unreadable sidecar is recorded in the diagnostics instead.
    """

    def __init__(
        self,
        adapter: Adapter,
        ref: SourceRef,
        start: int = 0,
        state: bytes | None = None,
        worker_min: int | None = None,
        parsed: Iterator[Batch] | None = None,
    ) -> None:
        self.adapter = adapter
        self.worker_min = worker_min
        """Parse a JSONL source of at least this many new bytes in a worker process
        (registered adapters only; ``None``: never)."""
        self.parsed = parsed
        """The batches of this JSONL source (no sidecars) as a worker already parses
        them from ``start`` (:class:`agentlog.worker.SharedParse`), else ``None``."""
        self.ref = ref
        self.start = start
        self.resume_state = state
        self.headers: list[Session] = []
        self.consumed = start
        self.state = b""

    def batches(self, lines: int = 25_000) -> Iterator[list[Fragment]]:
        sidecars: dict[str, bytes] = {}
        errors = []
        for path in self.ref.sidecars:
            try:
                sidecars[path] = read_small(path)
            except (OSError, ValueError) as exc:  # e.g. a FIFO: never opened
                errors.append(f"{path}: {describe_error(exc)}")
        with gc_paused():
            if reads_lines(self.adapter, self.ref):
                assert isinstance(self.adapter, JsonlAdapter)
                yield from self._jsonl(self.adapter, sidecars, lines)
            else:
                assert isinstance(self.adapter, DocumentAdapter)
                yield self._document(self.adapter, sidecars)
        if self.headers:
            self.headers[0].diagnostics.errors.extend(errors)

    def _jsonl(
        self, adapter: JsonlAdapter, sidecars: dict[str, bytes], lines: int
    ) -> Iterator[list[Fragment]]:
        from agentlog import worker  # multiprocessing: only when a log is parsed

        args = (self.ref, sidecars, self.start, self.resume_state, lines)
        stream: Iterator[Batch]
        if self.parsed is not None:
            stream = self.parsed
        elif (
            self.worker_min is not None
            and worker.available()
            and os.stat(self.ref.path).st_size - self.start >= self.worker_min
        ):  # a second process parses while this one stores
            stream = worker.parse_in_worker(adapter.slug, *args)
        else:
            stream = jsonl_batches(adapter, *args)
        for fragments, headers, end in stream:
            try:
                self.headers = self._finish(headers)
            except Exception as exc:  # a third-party resume_command's bug
                raise ParserError(exc) from exc
            if end is not None:
                self.consumed, self.state = end
            yield fragments
            del fragments  # not kept while the next batch is parsed or received

    def _document(self, adapter: DocumentAdapter, sidecars: dict[str, bytes]) -> list[Fragment]:
        if adapter.format_of(self.ref) == "sqlite":
            notes: list[str] = []
            tables = read_sqlite_tables(self.ref.path, adapter.sqlite_tables, adapter.sqlite_queries, notes)
            doc = Document(tables=tables, sidecars=sidecars, notes=notes)
        else:
            doc = Document(data=read_small(self.ref.path, DOCUMENT_LIMIT), sidecars=sidecars)
        take_replaced()
        try:
            result = adapter.parse_document(self.ref, doc)
            self.headers = self._finish(result.headers)
        except Exception as exc:  # the parser's bug or blind spot: this source's error
            raise ParserError(exc) from exc
        if doc.notes and self.headers:  # what the reader layer repaired
            self.headers[0].diagnostics.errors.extend(doc.notes)
        self.consumed = os.stat(self.ref.path).st_size
        diagnostics = result.headers[0].diagnostics if result.headers else Diagnostics()
        if count_replaced(diagnostics):  # a document is decoded whole: its messages holding U+FFFD
            for _, item in result.fragments:
                if isinstance(item, Message) and "\ufffd" in item.text:
                    item.flag("text_replaced")
        return bound_usage(list(result.fragments), diagnostics)

    def _finish(self, headers: list[Session]) -> list[Session]:
        for header in headers:
            header.title = bounded_title(header.title)  # every adapter's, on every path
            header.resume_command = header.resume_command or self.adapter.resume_command(header)
        return headers


def parse_source(
    adapter: Adapter, ref: SourceRef, start: int = 0, state: bytes | None = None
) -> ParsedSource:
    """Parse ``ref`` in one go (see :class:`SourceParse`)."""
    parse = SourceParse(adapter, ref, start, state)
    fragments = [fragment for batch in parse.batches() for fragment in batch]
    return ParsedSource(ref, parse.headers, fragments, parse.consumed, parse.state)


@dataclass
class LoadReport:
    """Per-run facts for ``agentlog agents``/``doctor``: roots searched per agent
    (with whether they exist), sources found, sources that failed, and the paths
    discovery could not look at.

    ``problems`` lists every path met while discovering (a root, a folder in one,
    a log, a sidecar, a project file under a recorded ``cwd``) that could not be
    looked at or is not what it must be — ``EACCES``, ``ENAMETOOLONG``, ``ELOOP``,
    a FIFO where a file is expected — as :class:`~agentlog.probe.PathProblem`
    ``(agent, path, error)``, once each.  Discovery never raises for them; the
    path is skipped and everything else is found as usual.  Whatever lies at or
    below such a path may still exist (:meth:`hides`): an index must keep the
    sessions it read from there, not take them as deleted.
    """

    roots: dict[str, list[tuple[Path, bool]]] = field(default_factory=dict)
    sources: dict[str, int] = field(default_factory=dict)
    errors: list[tuple[str, str]] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    problems: Problems = field(default_factory=Problems)

    def hides(self, path: str, agent: str | None = None) -> PathProblem | None:
        """The problem that hides ``path`` (a source found before) from this run,
        if any: one in :attr:`problems` whose path is ``path`` or a folder above
        it — so the source may still exist and its error says why it was not seen
        (e.g. to keep, or archive with that reason, its sessions).  With ``agent``,
        only problems met by that agent's discovery or under a ``--root`` count
        (another agent's FIFO says nothing of this one's files)."""
        return next(
            (p for p in self.problems if p.covers(path) and (agent is None or p.agent in (agent, None))), None
        )


def discover_sources(
    adapters: Iterable[Adapter | LazyAdapter],
    env: Mapping[str, str],
    home: Path,
    extra_roots: Iterable[Path] = (),
    report: LoadReport | None = None,
    stats: dict[str, os.stat_result] | None = None,
) -> list[tuple[Adapter, SourceRef]]:
    """Every source of ``adapters`` under their default roots and ``extra_roots``.

    ``stats``, when given, receives the ``os.stat`` each source was found with
    (by path): a sync compares them with what it stored, without a second
    ``stat`` per file.

    A file reached twice (overlapping roots, symlinks, hard links: the same
    :func:`~agentlog.probe.identity`) is listed once.  Under a
    user-given root any adapter may claim a file, so each file there goes to
    the adapter whose :meth:`~agentlog.adapters.Adapter.sniff` is most confident
    about its first bytes (none, if all say 0).

    ``adapters`` may be :class:`~agentlog.adapters.LazyAdapter` objects: each is
    imported only when one of its roots exists, and the sources carry the
    adapter itself.

    Never raises for the file system: a path that cannot be looked at
    (``OSError``), a FIFO or device where a file is expected, and any exception
    escaping an adapter's ``discover`` (a third-party bug) are recorded in
    ``report.problems`` (see :class:`LoadReport`) — the adapter's default-root
    problems under its slug, those under ``extra_roots`` with ``agent`` ``None``
    — and cost only that path: the sources found elsewhere are returned.
    """
    report = report if report is not None else LoadReport()
    adapters = list(adapters)
    found: list[tuple[Adapter, SourceRef]] = []
    seen: set[tuple[int, int] | str] = set()
    counts = dict.fromkeys((a.slug for a in adapters), 0)

    def add(adapter: Adapter, ref: SourceRef) -> None:
        path = ref.path
        if not path.isascii() and not _utf8(path):
            # A name that is not UTF-8 cannot be stored or shown faithfully: skip it, say so.
            report.errors.append((shown_path(path), "skipped: the file name is not valid UTF-8"))
            return
        st = stat_of(path, look=False)  # gone since it was listed, or not to be looked at (recorded)
        if st is None:
            return
        if (key := identity(path, st)) not in seen:
            seen.add(key)
            found.append((adapter, ref))
            counts[adapter.slug] += 1
            if stats is not None:
                stats[path] = st

    for listed in adapters:
        with collecting(listed.slug, report.problems):
            try:
                roots = listed.default_roots(env, home)
            except Exception as exc:  # a plugin's bug: this agent's logs may be anywhere at home
                problem(home, exc)
                roots = []
            report.roots[listed.slug] = [(r, is_dir(r) or is_file(r)) for r in roots]
            for root, present in report.roots[listed.slug]:
                if not present:
                    continue
                adapter = resolved(listed)  # its module imported only now: it has a folder here
                for ref in _discovered(adapter, root):
                    add(adapter, ref)
    for root in extra_roots:
        claims: dict[str, list[tuple[Adapter, SourceRef]]] = {}
        with collecting(None, report.problems):
            present = is_root(root)
            for listed in adapters:
                report.roots[listed.slug].append((root, present))
                adapter = resolved(listed)
                for ref in _discovered(adapter, root) if present else ():
                    claims.setdefault(ref.path, []).append((adapter, ref))
            for path, candidates in claims.items():
                best = _best_claim(path, candidates)
                if best is not None:
                    add(*best)
    report.sources.update(counts)
    return found


def _discovered(adapter: Adapter, root: Path) -> list[SourceRef]:
    """``adapter.discover(root)``, listed inside a :func:`~agentlog.probe.collecting`
    block: an exception escaping it (a probe an adapter makes itself, a plugin's
    bug) is a problem of ``root`` (or of the path the ``OSError`` names), and the
    sources listed before it are kept."""
    refs: list[SourceRef] = []
    try:
        refs.extend(adapter.discover(root))
    except Exception as exc:  # discovery of one agent must not stop the others
        where = exc.filename if isinstance(exc, OSError) and isinstance(exc.filename, str) else root
        problem(where, exc)
    return refs


def project_sources(
    adapters: Iterable[Adapter | LazyAdapter],
    cwds: Iterable[str],
    known: Iterable[str] = (),
    report: LoadReport | None = None,
    stats: Mapping[str, os.stat_result] | None = None,
) -> list[tuple[Adapter, SourceRef]]:
    """The sources agents keep inside projects (:attr:`~agentlog.adapters.Adapter.project_files`),
    looked for in each folder of ``cwds`` (the ``cwd`` other agents' sessions
    recorded) and in its parent folders: Aider writes its history at the repository
    root while a session may have started in a subfolder.

    Relative ``cwds`` are ignored; files in ``known`` (sources already found,
    compared by :func:`~agentlog.probe.identity`, so a link or a second path to
    one is no new file) are left out and each file is listed once.
    Only ``stat`` calls: nothing is opened (none for a file of ``known`` whose
    ``stat`` is in ``stats``; none at all when no adapter keeps project files).  A ``cwd`` is text from a log: one
    too long for the file system, inside a folder the user cannot enter, or
    holding a NUL is recorded in ``report.problems`` as a problem of that
    folder (the topmost one that fails covers those below it), never raised.
    """
    report = report if report is not None else LoadReport()
    wanted = [a for a in adapters if a.project_files]
    if not wanted:
        return []
    stats = stats or {}
    seen: set[tuple[int, int] | str] | None = None  # the known files' identities, once a file is found

    def new(path: Path, st: os.stat_result) -> bool:
        nonlocal seen
        if seen is None:
            seen = _identities(known, stats)
        key = identity(path, st)
        if key in seen:
            return False
        seen.add(key)
        return True

    folders: dict[Path, None] = {}
    for cwd in cwds if wanted else ():
        if os.path.isabs(cwd) and _utf8(cwd):
            folders.update(dict.fromkeys((Path(cwd), *Path(cwd).parents)))
    found: list[tuple[Adapter, SourceRef]] = []
    for folder in folders:
        for adapter in wanted:
            with collecting(adapter.slug, report.problems):
                for relative in adapter.project_files:
                    path = folder / relative
                    st = regular_stat(path, blame=folder)  # EACCES, ENAMETOOLONG: the folder's
                    if st is not None and new(path, st):
                        found.append((resolved(adapter), SourceRef(agent=adapter.slug, path=str(path))))
    return found


def _identities(paths: Iterable[str], stats: Mapping[str, os.stat_result]) -> set[tuple[int, int] | str]:
    """The :func:`~agentlog.probe.identity` of each of ``paths`` that is there (its
    ``stat`` from ``stats`` when given; a path not there is left out, unrecorded)."""
    found: set[tuple[int, int] | str] = set()
    for path in paths:
        try:
            st = stats.get(path) or os.stat(path)
        except (OSError, ValueError):
            continue
        found.add(identity(path, st))
    return found


def still_there(agent: str, path: str, report: LoadReport) -> bool:
    """Whether ``path``, a source of ``agent`` found by an earlier run (under a
    ``--root``, in a project folder), is still a regular file.  When it cannot be
    looked at, the problem is recorded in ``report.problems`` (so
    ``report.hides(path)`` is then true): never raises."""
    with collecting(agent, report.problems):
        return is_file(path)


def _utf8(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _best_claim(path: str, candidates: list[tuple[Adapter, SourceRef]]) -> tuple[Adapter, SourceRef] | None:
    try:
        head = read_head(path)
    except (OSError, ValueError):  # unreadable, corrupt compression: let parsing report it
        return candidates[0]
    name = os.path.basename(path)
    refs = {id(a): ref for a, ref in candidates}
    score, adapter = most_specific([(sniff(a, name, head), a) for a, _ in candidates])
    return (adapter, refs[id(adapter)]) if score > 0 else None


def most_specific(scored: list[tuple[float, Adapter]]) -> tuple[float, Adapter]:
    """The best ``(score, adapter)`` of a sniff: the highest score, and among
    adapters tied on it one that specialises another (its class a subclass of
    the other's: TRAE CLI's rollouts are Codex rollouts with more, so it is
    TRAE CLI whenever it ties with Codex), else the first.  ``scored`` is not
    empty."""
    top = max(score for score, _ in scored)
    tied = [a for score, a in scored if score == top]
    specific = [a for a in tied if not any(b is not a and isinstance(b, type(a)) for b in tied)]
    return top, specific[0]


def sniff(adapter: Adapter, name: str, head: bytes) -> float:
    """``adapter.sniff``, with a sniffer that fails on odd bytes counting as 0."""
    try:
        return adapter.sniff(name, head)
    except Exception:  # a third-party sniffer's bug must not stop discovery
        return 0.0


def signatures(fragments: Iterable[Fragment], session_id: str) -> list[Signature]:
    """:func:`~agentlog.rules.signature` of each message of session ``session_id`` among ``fragments``."""
    return [signature(item) for sid, item in fragments if sid == session_id and isinstance(item, Message)]


def rename_source(
    headers: list[Session], fragments: list[Fragment], path: str
) -> tuple[list[Session], list[Fragment]]:
    """The sessions of source ``path`` under :func:`~agentlog.rules.distinct_id`
    ids (keys, and parent keys naming one of them, follow); new header objects,
    the messages themselves shared."""
    ids = {h.id: distinct_id(h.id, path) for h in headers}
    keys = {h.key: session_key(h.agent, ids[h.id]) for h in headers}
    renamed = [
        msgspec.structs.replace(
            h,
            id=ids[h.id],
            key=keys[h.key],
            parent_key=keys.get(h.parent_key, h.parent_key) if h.parent_key else None,
        )
        for h in headers
    ]
    return renamed, [(ids.get(sid, sid), item) for sid, item in fragments]


def load_sessions(
    agents: Iterable[str] | None = None,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
    extra_roots: Iterable[Path] = (),
    report: LoadReport | None = None,
    progress: Callable[[SourceRef], None] | None = None,
    cwds: Iterable[str] = (),
) -> list[Session]:
    """Discover, parse and assemble every session of the selected agents.

    ``env`` and ``home`` default to the process environment and home folder.
    ``cwds`` are more folders sessions were recorded in (another agent's, read
    apart: the usage scanner's Claude sessions) to look for project sources in.
    Sessions are returned newest first (by ``started_at``).  Project folders the
    parsed sessions recorded as ``cwd`` are then searched for the sources agents
    keep inside projects (:func:`project_sources`).
    """
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home()) if home is None else home
    wanted = set(agents) if agents else None
    adapters = [a for a in all_adapters() if wanted is None or a.slug in wanted]
    report = report if report is not None else LoadReport()
    seen_cwds: set[str] = set(cwds)

    def parse_each(found: list[tuple[Adapter, SourceRef]]) -> Iterator[tuple[Adapter, ParsedSource]]:
        for adapter, ref in found:
            if progress:
                progress(ref)
            try:
                source = parse_source(adapter, ref)
            except (OSError, ValueError, RecursionError, sqlite3.Error) as exc:
                report.errors.append((ref.path, describe_error(exc)))
                continue
            seen_cwds.update(h.cwd for h in source.headers if h.cwd)
            yield adapter, source

    def parsed() -> Iterator[tuple[Adapter, ParsedSource]]:
        found = discover_sources(adapters, env, home, extra_roots, report)
        yield from parse_each(found)
        extra = project_sources(adapters, seen_cwds, (ref.path for _, ref in found), report)
        for adapter, _ in extra:
            report.sources[adapter.slug] = report.sources.get(adapter.slug, 0) + 1
        yield from parse_each(extra)

    sessions = build_sessions(parsed(), report)
    sessions.sort(key=lambda s: s.started_at.timestamp() if s.started_at else 0.0, reverse=True)
    return sessions


def build_sessions(
    parsed: Iterable[tuple[Adapter, ParsedSource]], report: LoadReport | None = None
) -> list[Session]:
    """Assemble parsed sources into linked sessions.

    The same session found in two files (e.g. Codex ``sessions/`` and
    ``archived_sessions/``; a Goose legacy file and the database it was imported
    into; a Claude Code session copied to another project folder) is kept from
    one file, judged by :func:`agentlog.rules.copy_verdict` on the first session
    of the later file: a ``"copy"`` (nothing the earlier file lacks) is skipped
    whole; a file that ``"supersedes"`` the earlier one (all of it and more)
    replaces it whole — the skipped path is listed in ``report.duplicates`` either
    way, so the longer copy is kept in any order.  A later file that
    ``"overlaps"`` (each has messages the other lacks) or is ``"different"`` is
    kept under :func:`~agentlog.rules.distinct_id` ids (:func:`rename_source`);
    a call in both then counts once, in the session :func:`~agentlog.rules.owner_rank`
    puts first.
    """
    report = report if report is not None else LoadReport()
    owners: dict[str, str] = {}
    headers: dict[str, list[Session]] = {}
    fragments: dict[str, list[Fragment]] = {}
    agent_of: dict[str, str] = {}
    renamed: set[str] = set()
    for adapter, source in parsed:
        path = source.ref.path
        source_headers, source_fragments = source.headers, source.fragments
        if source_headers:
            first = source_headers[0]
            owner = owners.setdefault(first.key, path)
            if owner != path and path not in renamed:
                held = signatures(fragments[owner], first.id)
                verdict = copy_verdict(held, signatures(source_fragments, first.id))
                if verdict == "copy":
                    report.duplicates.append(path)
                    continue
                if verdict == "supersedes":  # the longer copy wins: the earlier one is the copy
                    report.duplicates.append(owner)
                    for gone in (headers, fragments, agent_of):
                        gone.pop(owner, None)
                    for key in [k for k, held_by in owners.items() if held_by == owner]:
                        owners[key] = path
                else:
                    renamed.add(path)
            if path in renamed:
                source_headers, source_fragments = rename_source(source_headers, source_fragments, path)
                owners.setdefault(source_headers[0].key, path)
            for header in source_headers[1:]:  # a database's other sessions (as the index does)
                owners.setdefault(header.key, path)
        # A later read of the same source (resumed from its state) carries the
        # whole header state: it replaces the earlier headers; fragments add up.
        headers[path] = source_headers
        fragments.setdefault(path, []).extend(source_fragments)
        agent_of[path] = adapter.slug
    from agentlog.assemble import Assembler  # loaded when sessions are built: a sync never does
    from agentlog.link import link_sessions

    assembler = Assembler()
    for path, source_headers in headers.items():
        assembler.add_headers(source_headers)
        assembler.add_fragments(agent_of[path], fragments[path])
    return link_sessions(assembler.sessions())
