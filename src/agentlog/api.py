"""The Python API over the index: :func:`open` returns an :class:`Archive`.

For notebooks and scripts::

    import agentlog

    with agentlog.open() as archive:          # your home; demo=True: the sample corpus
        for s in archive.sessions(agent="claude", since="7d"):
            print(s.key, s.title, s.usage.total_tokens, s.usage.cost_usd)
        page = archive.search("flaky test", since="2026-11-01")
        df = archive.calls(since="30d").to_pandas()

Every method takes the command line's filter vocabulary (:mod:`agentlog.query`):
``agent`` a slug or a unique prefix, any case (``claude`` → ``claude_code``);
``project`` text the session's folder contains (any case); ``since``/``until``
a text ``--since`` takes (ISO time, date, ``30m``/``12h``/``7d``/``2w``), a
``date``, a ``datetime`` or a ``timedelta`` back from now
(:data:`agentlog.service.filters.TimeArg`; ``until`` exclusive, a date through
its end).  Bad filters raise :class:`agentlog.errors.UsageError`; an unknown
session :class:`agentlog.errors.NotFound`.  Every method reads through the
service layer (:mod:`agentlog.service`), as the CLI does.

The Arrow tables (:meth:`Archive.calls`, :meth:`Archive.sessions_table`) need
the ``parquet`` extra (``pip install 'agentlog[parquet]'``); ``.to_pandas()``
needs pandas, ``polars.from_arrow`` polars.
"""

from __future__ import annotations

import functools
import os
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar, get_args
from zoneinfo import ZoneInfo

from agentlog.errors import AgentlogError, UsageError
from agentlog.index import db
from agentlog.service.costed import with_costs
from agentlog.service.filters import TimeArg, search_filter, session_filter, span_of, zone_of
from agentlog.service.home import Home

if TYPE_CHECKING:
    import pyarrow

    from agentlog.index.search import HitPage
    from agentlog.model import Message, Session
    from agentlog.service.files import FileSession
    from agentlog.service.status import LiveSession
    from agentlog.service.usage import PricedUsage
    from agentlog.usage.pricing import CostMode

PARQUET_EXTRA = "pip install 'agentlog[parquet]'"
"""What to install for the Arrow tables."""

P = ParamSpec("P")
R = TypeVar("R")


def _explained(method: Callable[Concatenate[Archive, P], R]) -> Callable[Concatenate[Archive, P], R]:
    """``method`` raising a damaged or unusable index (a corrupt page, a stored value
    that cannot be decoded, a full disk) as the one line the command line says
    (:func:`agentlog.index.db.explain`), an :class:`~agentlog.errors.IndexProblem`."""

    @functools.wraps(method)
    def call(self: Archive, /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            problem = db.explain(exc, self.path)
            if problem is None:
                raise
            raise problem from exc

    return call


def _roots(roots: str | Path | Iterable[str | Path]) -> list[Path]:
    """``roots`` as folders: one path (text or ``Path``) or several."""
    if isinstance(roots, str | Path):
        return [Path(roots).expanduser()]
    return [Path(r).expanduser() for r in roots]


class Archive:
    """An open index: sessions, messages, search, usage reports and Arrow tables.

    Made by :func:`open`; a context manager (``close`` on exit).  Not thread-safe:
    one archive per thread."""

    def __init__(self, conn: sqlite3.Connection, path: Path, home: Home) -> None:
        self._conn = conn
        self.path = path
        """The index file."""
        self.home = home
        """Where its logs are read from."""

    def __enter__(self) -> Archive:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the index."""
        self._conn.close()

    @_explained
    def sessions(
        self,
        agent: str | None = None,
        project: str | None = None,
        since: TimeArg = None,
        until: TimeArg = None,
        *,
        subagents: bool = False,
        exec_runs: bool = False,
        status: str | None = None,
        text: str | None = None,
        limit: int | None = None,
        redact_secrets: bool = True,
    ) -> list[Session]:
        """Session headers (no messages: :meth:`messages` or :meth:`session`
        load them), newest first, as ``agentlog sessions`` lists them: main
        sessions only unless ``subagents``, non-interactive runs (``codex exec``)
        only with ``exec_runs``; ``status`` (``done``, ``working`` …),
        ``text`` (in title, id or folder, any case), at most ``limit``; titles
        with secrets replaced (``[REDACTED:<kind>]``) unless not
        ``redact_secrets``.  Each
        carries its usage totals and ``usage.cost_usd`` (USD, ``None`` when no
        call has a price) with ``usage.cost_source`` (the weakest of its calls':
        :func:`agentlog.service.costed.cost_source`)."""
        from agentlog.query import SQL_INT_MAX
        from agentlog.service.sessions import list_sessions

        if limit is not None and not 0 <= limit <= SQL_INT_MAX:
            raise UsageError(f"limit {limit} is not in 0…{SQL_INT_MAX}")
        where = session_filter(agent, project, since, until, subagents, status, text, exec_runs)
        return with_costs(self._conn, list_sessions(self._conn, where, limit, redact_secrets).sessions)

    @_explained
    def status(
        self,
        agent: str | None = None,
        project: str | None = None,
        since: TimeArg = None,
        until: TimeArg = None,
        redact_secrets: bool = True,
    ) -> list[LiveSession]:
        """The live board, as ``agentlog status --json`` gives it: the sessions
        written to in the span (default: the last 24 hours), ``needs_you`` first,
        each a :class:`agentlog.service.status.LiveSession` (status, since when,
        its evidence, whether inferred and why, the current turn's tokens and
        cost in USD, subagents under their parent; titles and evidence with
        secrets replaced unless not ``redact_secrets``).  Raises
        :class:`UsageError` for a bad agent or time."""
        from agentlog.service.status import live_status

        where = session_filter(agent, project, since, until, subagents=True)
        return live_status(self._conn, where, redact_secrets=redact_secrets)

    @_explained
    def session(self, key: str) -> Session:
        """The session ``key`` names (a key, an id or a unique prefix of one), in
        full: every message, its cost as in :meth:`sessions`.  Raises
        :class:`~agentlog.errors.NotFound` when none or several match."""
        from agentlog.service.sessions import session

        (found,) = with_costs(self._conn, [session(self._conn, key).session])
        return found

    @_explained
    def messages(
        self, key: str, offset: int = 0, limit: int | None = None, *, hidden: bool = False
    ) -> list[Message]:
        """The messages of session ``key`` in order, from ``offset``, at most
        ``limit`` (all when ``None``); meta, injected and replayed messages only
        with ``hidden``.  Raises :class:`~agentlog.errors.NotFound`."""
        from agentlog.query import SQL_INT_MAX
        from agentlog.service.transcript import message_slice

        if not 0 <= offset <= SQL_INT_MAX or (limit is not None and not 0 <= limit <= SQL_INT_MAX):
            raise UsageError(f"offset {offset} / limit {limit} not in 0…{SQL_INT_MAX}")
        return message_slice(self._conn, key, offset, -1 if limit is None else limit, hidden).messages

    @_explained
    def search(
        self,
        query: str,
        agent: str | None = None,
        project: str | None = None,
        since: TimeArg = None,
        until: TimeArg = None,
        *,
        role: str | None = None,
        tool: str | None = None,
        reasoning: bool = False,
        limit: int = 20,
        cursor: int = 0,
        by_session: bool = False,
        sort: str = "rank",
        fts: bool = False,
    ) -> HitPage:
        """One page of hits, as ``agentlog search`` finds them: ``query``'s words
        as written (``fts``: FTS5 syntax), filtered by the vocabulary plus
        ``role`` and ``tool``; ``limit`` (1…1000) hits from ``cursor`` (the
        next page's is ``page.next_offset``, ``None`` on the last);
        ``by_session`` for each session's best hit; ``sort`` ``rank``,
        ``newest`` or ``oldest``.  Returns a :class:`agentlog.index.search.HitPage`
        (``hits``, ``total``, ``total_exact``: false when ``total`` is a lower
        bound, :data:`agentlog.index.search.TOTAL_CAP`, ``note``); each hit's
        ``snippet`` marks its matches between ``MARK_START`` and ``MARK_END``
        (``\x02``, ``\x03``: the log's own are shown as ``␂``, ``␃``; the CLI's
        JSON and MCP print ``«`` and ``»``).  Raises :class:`UsageError` for a bad
        query or filter, :class:`agentlog.index.search.SearchStopped` past its
        time limit."""
        from agentlog.index.search import SORTS
        from agentlog.service.search import SearchPaging
        from agentlog.service.search import search as search_index

        if sort not in SORTS:
            raise UsageError(f"unknown sort {sort!r} (known: {', '.join(SORTS)})")
        where = search_filter(agent, project, since, until, role, tool, reasoning)
        paging = SearchPaging(limit=limit, offset=cursor, sort=sort, by_session=by_session, raw=fts)  # type: ignore[arg-type]
        return search_index(self._conn, query, where, paging)

    @_explained
    def touching(
        self,
        path: str,
        agent: str | None = None,
        project: str | None = None,
        since: TimeArg = None,
        until: TimeArg = None,
        *,
        limit: int = 20,
    ) -> list[FileSession]:
        """The sessions (subagents included) whose tool calls read, wrote or
        edited ``path`` (absolute, or its last components: ``stats.py``), the
        last to touch it first, at most ``limit`` (1…1000)
        (:func:`agentlog.service.files.sessions_touching`)."""
        from agentlog.service.files import sessions_touching
        from agentlog.service.search import MAX_HITS

        if not 1 <= limit <= MAX_HITS:
            raise UsageError(f"limit {limit} is not in 1…{MAX_HITS}")
        where = session_filter(agent, project, since, until, subagents=True)
        return sessions_touching(self._conn, path, where, limit)

    @_explained
    def usage(
        self,
        report: str = "daily",
        agent: str | None = None,
        project: str | None = None,
        since: TimeArg = None,
        until: TimeArg = None,
        *,
        timezone: str | None = None,
        cost: bool = True,
        cost_mode: CostMode = "auto",
        breakdown: bool = False,
        rollup: bool = True,
    ) -> dict[str, Any]:
        """The document ``agentlog usage REPORT … --json`` prints, the same rows
        and totals (:func:`agentlog.service.reports.usage_document`): ``report``
        ``daily``, ``weekly``, ``monthly``, ``session``, ``model``, ``project``,
        ``agent`` or ``blocks``; ``timezone`` an IANA name for days (default
        local); ``cost`` false for tokens only; ``cost_mode`` ``auto``,
        ``calculate`` or ``recorded``; ``breakdown`` per-model rows;
        ``rollup`` false: subagents apart in ``session``.  Timestamps are
        ``datetime``s where the JSON has ISO text."""
        from agentlog.service.reports import usage_document

        tz = zone_of(timezone)
        found = self._usage(report, agent, project, since, until, tz, cost_mode, summed=True)
        return usage_document(found, report, tz, with_cost=cost, breakdown=breakdown, rollup=rollup)

    def _usage(
        self,
        report: str,
        agent: str | None,
        project: str | None,
        since: TimeArg,
        until: TimeArg,
        tz: ZoneInfo | None,
        cost_mode: CostMode,
        summed: bool = False,
    ) -> PricedUsage:
        """The priced calls of ``report``: usage records, or with ``summed`` the
        sums :func:`agentlog.service.grouped.report_usage` prices for that report."""
        from agentlog.query import resolve_agent
        from agentlog.service.grouped import report_usage
        from agentlog.service.usage import BLOCKS_AGENT, UsageQuery, index_usage
        from agentlog.usage.pricing import CostMode as Modes

        if cost_mode not in get_args(Modes):
            raise UsageError(f"unknown cost_mode {cost_mode!r} (one of {', '.join(get_args(Modes))})")

        query = UsageQuery(
            agent=resolve_agent(agent) or (BLOCKS_AGENT if report == "blocks" else None),
            project=project,
            span=span_of(since, until, tz),
            cost_mode=cost_mode,
        )
        return report_usage(self._conn, query, report, tz) if summed else index_usage(self._conn, query)

    @_explained
    def calls(
        self,
        agent: str | None = None,
        project: str | None = None,
        since: TimeArg = None,
        until: TimeArg = None,
        *,
        cost_mode: CostMode = "auto",
    ) -> pyarrow.Table:
        """The priced calls a usage report covers, one row per usage record
        (a call, or the calls of one session, model and tier in a 15-minute
        span: ``calls`` counts them; :mod:`agentlog.index.usage`), as an Arrow
        table (:data:`agentlog.tables.CALL_COLUMNS`).  Raises
        :class:`~agentlog.errors.AgentlogError` without the ``parquet`` extra."""
        found = self._usage("daily", agent, project, since, until, None, cost_mode)
        return _tables().calls_table(found.calls)

    @_explained
    def sessions_table(
        self,
        agent: str | None = None,
        project: str | None = None,
        since: TimeArg = None,
        until: TimeArg = None,
        *,
        subagents: bool = False,
        exec_runs: bool = False,
        redact_secrets: bool = True,
    ) -> pyarrow.Table:
        """:meth:`sessions` as an Arrow table, one row per session
        (:data:`agentlog.tables.SESSION_COLUMNS`; titles redacted as there).  Raises
        :class:`~agentlog.errors.AgentlogError` without the ``parquet`` extra."""
        found = self.sessions(
            agent, project, since, until, subagents=subagents, exec_runs=exec_runs, redact_secrets=redact_secrets
        )
        return _tables().sessions_table(found)


def _tables() -> ModuleType:
    """:mod:`agentlog.tables`; raises :class:`AgentlogError` saying what to
    install when pyarrow is missing."""
    try:
        from agentlog import tables
    except ImportError as exc:
        if exc.name is not None and exc.name.split(".")[0] == "pyarrow":
            raise AgentlogError(f"Arrow tables need pyarrow: {PARQUET_EXTRA}") from None
        raise
    return tables


def open(
    index: str | Path | None = None,
    *,
    demo: bool = False,
    sync: bool = True,
    roots: str | Path | Iterable[str | Path] = (),
) -> Archive:
    """The archive in ``index`` (default ``$AGENTLOG_INDEX`` or the user cache's
    ``index.sqlite``; with ``demo`` the bundled sample corpus's own index),
    brought up to date with the logs first unless ``sync`` is false (then an
    index agentlog may only read is read as it is).  ``roots``: one extra folder
    to search for logs, or several (relative ones made absolute).  Raises
    :class:`~agentlog.errors.UsageError` for an index in an agent's folder (as
    ``--index`` is refused: :meth:`agentlog.service.home.Home.check_index`),
    :class:`~agentlog.errors.IndexProblem` for a file that is not an agentlog
    index or a damaged one."""
    from agentlog.service.index import update_index

    home = Home.of(os.environ, _roots(roots), demo)
    path = Path(index).expanduser() if index is not None and not demo else db.default_path(home.env, demo)
    if not demo:
        home.check_index(path)
    rebuilt = False
    if demo:  # only a cache: rebuilt when another build left it, then synced
        conn, rebuilt = db.connect_cache(path)
    else:
        conn = (None if sync else db.connect_current(path)) or db.connect(path)
    if sync or rebuilt:
        try:
            update_index(conn, home)
        except BaseException:
            conn.close()
            raise
    return Archive(conn, path, home)
