"""The viewer's pages: sessions, session, search and usage (GET only).

Each view asks the service layer (:mod:`agentlog.service`) and renders what it
returns; filters are parsed by :mod:`agentlog.query` as on the command line
(``since``/``until`` by the one time rule, dates and times without an offset in
the chosen IANA zone ``tz``, default the machine's; ``agent`` a slug or unique
prefix).  Bad filter values show a message (HTTP 400), an unknown session a 404.
"""

from __future__ import annotations

import json
import math
from datetime import timedelta
from typing import Any, cast, get_args
from zoneinfo import ZoneInfo

from flask import Blueprint, abort, current_app, redirect, render_template, request, url_for
from werkzeug.wrappers import Response

from agentlog.errors import AgentlogError, NotFound, UsageError
from agentlog.index import queries
from agentlog.index.search import SORTS, Budget, SearchSort, SearchStopped
from agentlog.model import Session, SessionStatus
from agentlog.present import compact
from agentlog.query import SQL_INT_MAX, Span, parse_span, parse_zone, resolve_agent
from agentlog.service import sessions as session_service
from agentlog.service.filters import search_filter, session_filter
from agentlog.service.search import SearchPaging
from agentlog.service.search import search as search_index
from agentlog.service.secrets import redacted_headers, redacted_page, redacted_records, redacted_title
from agentlog.service.summaries import latest_summary
from agentlog.service.usage import UsageQuery, index_usage
from agentlog.usage.pricing import CostMode
from agentlog.usage.report import BUCKETS, Group, build_rows, group_key
from agentlog.web.app import client_gone, connection
from agentlog.web.charts import stacked_bars
from agentlog.web.content import snippet

pages = Blueprint("pages", __name__)

SESSIONS_PER_PAGE = 50
MESSAGES_PER_PAGE = 200
HITS = 50
PAGE_SIZES = (SESSIONS_PER_PAGE, MESSAGES_PER_PAGE, HITS)
TOP = 10
UNIT_GAP = timedelta(hours=24)
UNITS = {"daily": "day", "weekly": "week", "monthly": "month"}
COST_MODES = ("auto", "calculate", "recorded")


def _arg(name: str) -> str | None:
    value = request.args.get(name, "").strip()
    return value or None


def _zone() -> ZoneInfo | None:
    return parse_zone(_arg("tz"))


def _span(tz: ZoneInfo | None) -> Span:
    """The ``since``/``until`` arguments by the one time rule (:mod:`agentlog.query`)."""
    return parse_span(_arg("since"), _arg("until"), tz)


def _page_number() -> int:
    """The ``page`` argument, 1 when absent or not a number; at most the page whose first
    row SQLite can still skip to (a page past the last one is empty)."""
    try:
        return min(max(int(request.args.get("page", "1")), 1), SQL_INT_MAX // max(PAGE_SIZES))
    except ValueError:
        return 1


def _with(**changes: Any) -> str:
    """This page's URL with some query arguments changed (``None`` removes one)."""
    args: dict[str, Any] = {k: v for k, v in request.args.items() if k != "token"}
    args.update({k: v for k, v in changes.items() if v is not None})
    for k in [k for k, v in changes.items() if v is None]:
        args.pop(k, None)
    return url_for(request.endpoint or "pages.sessions", **args)


@pages.app_context_processor
def helpers() -> dict[str, Any]:
    return {
        "with_args": _with,
        "args": request.args,
        "session_href": lambda key: url_for("pages.session", key=key),
        "raw_href": lambda key, message_id: url_for("pages.raw", key=key, id=message_id),
        "hide_secrets": lambda text: redacted_title(text) if _redacting() else text,
        "redacting": _redacting(),
    }


def _redacting() -> bool:
    """Whether secrets are hidden (the default; ``agentlog serve --show-secrets`` shows them)."""
    return bool(current_app.config.get("REDACT", True))


@pages.app_errorhandler(AgentlogError)
def user_error(exc: AgentlogError) -> tuple[str, int]:
    status = 404 if isinstance(exc, NotFound) else 400
    return render_template("error.html", message=str(exc), status=status), status


def _groups(sessions: list[Session], group: str | None) -> list[tuple[str, list[Session]]]:
    """Rows split into groups: by project folder, or by work unit (same agent and
    folder, less than 24 h between sessions); one unnamed group otherwise."""
    if group not in ("project", "unit"):
        return [("", sessions)]
    out: list[tuple[str, list[Session]]] = []
    previous: Session | None = None
    for s in sessions:
        same = previous is not None and previous.cwd == s.cwd
        if group == "unit" and same and previous is not None:
            same = previous.agent == s.agent and _gap(previous, s) < UNIT_GAP
        if not same:
            label = s.cwd or "(no folder)"
            out.append((f"{s.agent} · {label}" if group == "unit" else label, []))
        out[-1][1].append(s)
        previous = s
    return out


def _gap(a: Session, b: Session) -> timedelta:
    """Time between two sessions (either order); 0 when a time is missing or they overlap."""
    if a.started_at is None or b.started_at is None or a.ended_at is None or b.ended_at is None:
        return timedelta(0)
    first, second = (a, b) if a.started_at <= b.started_at else (b, a)
    return max(second.started_at - first.ended_at, timedelta(0))  # type: ignore[operator]


@pages.get("/")
def sessions() -> str:
    where = session_filter(
        _arg("agent"),
        _arg("project"),
        _arg("since"),
        _arg("until"),
        subagents=bool(_arg("children")),
        status=_arg("status"),
        text=_arg("q"),
        exec_runs=bool(_arg("exec")),
        has_children=bool(_arg("subagents")),
        tz=_zone(),
    )
    sort = _arg("sort") or "started"
    if sort not in session_service.SORTS:
        raise UsageError(f"unknown sort {sort!r} (known: {', '.join(session_service.SORTS)})")
    descending = _arg("dir") != "asc"
    group = _arg("group")
    first_by = {"project": ("project",), "unit": ("agent", "project")}.get(group or "", ())
    page = _page_number()
    conn = connection()
    order = session_service.SessionOrder(sort, descending, first_by)
    found = session_service.page_sessions(conn, where, order, (page - 1) * SESSIONS_PER_PAGE, SESSIONS_PER_PAGE)
    return render_template(
        "sessions.html",
        groups=_groups(redacted_headers(found.sessions) if _redacting() else found.sessions, group),
        total=found.total,
        page=page,
        pages=max(math.ceil(found.total / SESSIONS_PER_PAGE), 1),
        sort=sort,
        descending=descending,
        agents=queries.agent_counts(conn),
        children=found.children,
        costs=found.costs,
        statuses=get_args(SessionStatus),
    )


@pages.get("/session")
def session() -> str:
    meta = bool(_arg("meta"))
    page = _page_number()
    first = (page - 1) * MESSAGES_PER_PAGE
    view = session_service.transcript_page(
        connection(), request.args.get("key", ""), first, MESSAGES_PER_PAGE, include_hidden=meta
    )
    if _redacting():
        view = redacted_page(view)
    return render_template(
        "session.html",
        s=view.header,
        summary=latest_summary(connection(), view.header.key),
        messages=view.messages,
        total=view.total,
        hidden=view.hidden,
        meta=meta,
        page=page,
        pages=max(math.ceil(view.total / MESSAGES_PER_PAGE), 1),
        first=first,
        links=view.links,
        children=view.children,
        tree=view.tree,
        parent=view.parent,
        cost=view.cost.cost_usd,
        cost_sources=sorted(view.cost.sources),
    )


@pages.get("/message")
def message() -> Response:
    """Redirect to the session page (and page) holding message ``id``, at its
    anchor; ``hl`` (words to highlight, from a search) is passed on."""
    conn = connection()
    key = queries.resolve_key(conn, request.args.get("key", ""))
    position = queries.message_position(conn, key, request.args.get("id", ""))
    if position is None:
        abort(404)
    page = position // MESSAGES_PER_PAGE + 1
    return redirect(url_for("pages.session", key=key, page=page, hl=_arg("hl")) + f"#m{position}")


@pages.get("/raw")
def raw() -> str:
    """The records message ``id`` of session ``key`` was read from, as written."""
    conn = connection()
    key = queries.resolve_key(conn, request.args.get("key", ""))
    message_id = request.args.get("id", "")
    try:
        found = queries.raw_records(conn, key, message_id)
    except OSError as exc:
        raise NotFound(f"the log file cannot be read now: {exc}") from None
    if found is None:
        raise NotFound(f"no raw records for message {message_id!r} (documents and databases have none)")
    records = [_record(line) for line in found.lines]
    return render_template(
        "raw.html",
        key=key,
        message_id=message_id,
        raw=found,
        records=redacted_records(records) if _redacting() else records,
    )


def _record(line: str) -> Any:
    """A JSON line decoded (shown indented), or the text as it is when it is not JSON."""
    try:
        return json.loads(line)
    except ValueError:
        return line


@pages.get("/search")
def search() -> tuple[str, int]:
    """Search hits, a page at a time (``page``), optionally one per session
    (``sessions=1``), sorted by ``sort``; ``fts=1`` reads ``q`` as FTS5 syntax.
    A query that cannot run is said on this page, with the search box kept: HTTP
    400 for one it refuses (too long, too many words), 503 for one stopped at its
    time limit."""
    query = _arg("q")
    page = _page_number()
    by_session = bool(_arg("sessions"))
    sort = _arg("sort") or "rank"
    found, error, status = None, None, 200
    if query:
        where = search_filter(
            _arg("agent"),
            _arg("project"),
            _arg("since"),
            _arg("until"),
            _arg("role"),
            _arg("tool"),
            bool(_arg("reasoning")),
            tz=_zone(),
        )
        if sort not in SORTS:
            raise UsageError(f"unknown sort {sort!r} (known: {', '.join(SORTS)})")
        paging = SearchPaging(
            limit=HITS,
            offset=(page - 1) * HITS,
            sort=cast(SearchSort, sort),
            by_session=by_session,
            raw=bool(_arg("fts")),
        )
        try:
            found = search_index(
                connection(),
                query,
                where,
                paging,
                Budget(cancelled=client_gone()),
                redact_secrets=_redacting(),
            )
        except SearchStopped as exc:  # the query was fine: the server could not answer it in time
            error, status = str(exc), 503
        except AgentlogError as exc:
            error, status = str(exc), 400
    return render_template(
        "search.html",
        query=query or "",
        found=found,
        error=error,
        page=page,
        pages=max(math.ceil(found.total / HITS), 1) if found else 1,
        by_session=by_session,
        sort=sort,
        sorts=SORTS,
        snippet=snippet,
        agents=queries.agent_counts(connection()),
    ), status


@pages.get("/usage")
def usage() -> str:
    tz = _zone()
    period = _arg("period") or "daily"
    if period not in UNITS:
        raise UsageError(f"unknown period {period!r} (daily, weekly, monthly)")
    unit = cast(Group, period)
    by = "model" if _arg("by") == "model" else "agent"
    mode = _arg("mode") or "auto"
    if mode not in COST_MODES:
        raise UsageError(f"unknown cost mode {mode!r} ({', '.join(COST_MODES)})")
    conn = connection()
    query = UsageQuery(
        agent=resolve_agent(_arg("agent")),
        project=_arg("project"),
        span=_span(tz),
        cost_mode=cast(CostMode, mode),
    )
    priced = index_usage(conn, query).calls
    days = sorted({group_key(pc, unit, tz) for pc in priced})
    names = sorted({(pc.call.model if by == "model" else pc.call.agent) or "unknown" for pc in priced})
    cost = {n: [0.0] * len(days) for n in names}
    tokens = {n: [0.0] * len(days) for n in names}
    cache = {"cache read": [0.0] * len(days), "cache write": [0.0] * len(days), "input": [0.0] * len(days)}
    where = {d: i for i, d in enumerate(days)}
    for pc in priced:
        i = where[group_key(pc, unit, tz)]
        name = (pc.call.model if by == "model" else pc.call.agent) or "unknown"
        u = pc.call.usage
        cost[name][i] += pc.cost_usd or 0.0
        tokens[name][i] += u.total_tokens
        cache["cache read"][i] += u.cache_read_tokens
        cache["cache write"][i] += u.cache_write_tokens
        cache["input"][i] += u.input_tokens
    share = {
        name: [100 * v / t if (t := sum(s[i] for s in cache.values())) else 0.0 for i, v in enumerate(values)]
        for name, values in cache.items()
    }
    projects, total = build_rows(priced, "project", tz)
    top_sessions, _ = build_rows(priced, "session", tz)
    by_cost = lambda r: (r.totals.cost_usd, r.totals.tokens["total_tokens"])  # noqa: E731
    top = sorted(top_sessions, key=by_cost, reverse=True)[:TOP]
    return render_template(
        "usage.html",
        cost_chart=stacked_bars(
            f"Cost per {UNITS[period]} (USD) by {by}", days, cost, lambda v: f"${v:,.2f}"
        ),
        token_chart=stacked_bars(f"Tokens per {UNITS[period]} by {by}", days, tokens, _tokens_label),
        cache_chart=stacked_bars(
            "Prompt tokens: cache share (%)", days, share, lambda v: f"{v:.0f}%", maximum=100
        ),
        projects=sorted(projects, key=by_cost, reverse=True)[:TOP],
        sessions=top,
        titles={
            s.key: s.title or s.id
            for s in (redacted_headers if _redacting() else list)(
                queries.list_sessions_by_keys(conn, [r.key for r in top])
            )
        },
        total=total,
        buckets=BUCKETS,
        agents=queries.agent_counts(conn),
        period=period,
        by=by,
        mode=mode,
        modes=COST_MODES,
    )


def _tokens_label(value: float) -> str:
    return compact(int(value))
