"""The viewer's pages: sessions, session, search and usage (GET only).

Each view reads through :mod:`agentlog.index.queries`, :mod:`agentlog.index.search`
and :mod:`agentlog.usage`; bad filter values show a message (HTTP 400), an
unknown session a 404.  Dates are days in the chosen IANA zone (``tz``, default
the machine's), as in ``agentlog usage``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from datetime import date, datetime, time, timedelta
from functools import partial
from typing import Any, get_args
from zoneinfo import ZoneInfo

from flask import Blueprint, abort, redirect, render_template, request, url_for
from werkzeug.wrappers import Response

from agentlog.cli.indexing import resolve_agent
from agentlog.cli.render import compact
from agentlog.cli.usage import parse_day
from agentlog.errors import AgentlogError, NotFound, UsageError
from agentlog.index import queries
from agentlog.index.prices import kept_pricer
from agentlog.index.search import search as index_search
from agentlog.index.usage import members, usage_records
from agentlog.model import Session, SessionStatus, ToolCallPart
from agentlog.usage.calls import Call
from agentlog.usage.pricing import PricedCall
from agentlog.usage.report import BUCKETS, build_rows, group_key, in_range, zone
from agentlog.web.app import connection
from agentlog.web.charts import stacked_bars
from agentlog.web.content import Output, snippet

pages = Blueprint("pages", __name__)

SESSIONS_PER_PAGE = 50
MESSAGES_PER_PAGE = 200
HITS = 50
TOP = 10
UNIT_GAP = timedelta(hours=24)
UNITS = {"daily": "day", "weekly": "week", "monthly": "month"}
COST_MODES = ("auto", "calculate", "recorded")


def _priced(conn: Any, calls: Iterable[Call], mode: str = "auto") -> list[PricedCall]:
    """``calls`` (roll-up records) priced as ``agentlog usage --cost-mode MODE`` prices them."""
    return list(kept_pricer(conn).price_all(calls, mode, partial(members, conn)))  # type: ignore[arg-type]


def _arg(name: str) -> str | None:
    value = request.args.get(name, "").strip()
    return value or None


def _zone() -> ZoneInfo | None:
    try:
        return zone(_arg("tz"))
    except (KeyError, ValueError):
        raise UsageError(f"unknown time zone {_arg('tz')!r} (use an IANA name like Europe/Berlin)") from None


def _start_of(day: date | None, tz: ZoneInfo | None) -> datetime | None:
    if day is None:
        return None
    start = datetime.combine(day, time())
    return start.replace(tzinfo=tz) if tz else start.astimezone()


def _page_number() -> int:
    try:
        return max(int(request.args.get("page", "1")), 1)
    except ValueError:
        return 1


def _with(**changes: Any) -> str:
    """This page's URL with some query arguments changed (``None`` removes one)."""
    args = {k: v for k, v in request.args.items() if k != "token"}
    args.update({k: v for k, v in changes.items() if v is not None})
    for k in [k for k, v in changes.items() if v is None]:
        args.pop(k, None)
    return url_for(request.endpoint or "pages.sessions", **args)


@pages.app_context_processor
def helpers() -> dict[str, Any]:
    return {"with_args": _with, "args": request.args}


@pages.app_errorhandler(AgentlogError)
def user_error(exc: AgentlogError) -> tuple[str, int]:
    status = 404 if isinstance(exc, NotFound) else 400
    return render_template("error.html", message=str(exc), status=status), status


def _costs(keys: list[str]) -> dict[str, tuple[float | None, set[str]]]:
    """Each session's cost (USD; ``None`` when no call has a price) and cost sources."""
    out: dict[str, tuple[float | None, set[str]]] = {}
    conn = connection()
    wanted = set(keys)
    records = [r for r in usage_records(conn) if r.session_key in wanted]
    for pc in _priced(conn, records):
        cost, sources = out.get(pc.call.session_key, (None, set()))
        if pc.cost_usd is not None:
            cost = (cost or 0.0) + pc.cost_usd
        out[pc.call.session_key] = (cost, sources | {pc.cost_source})
    return out


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
    tz = _zone()
    where = queries.SessionFilter(
        agent=resolve_agent(_arg("agent")),
        project=_arg("project"),
        since=_start_of(parse_day(_arg("since"), tz), tz),
        until=_start_of(d + timedelta(days=1) if (d := parse_day(_arg("until"), tz)) else None, tz),
        status=_arg("status"),
        has_children=bool(_arg("subagents")),
        text=_arg("q"),
        include_children=bool(_arg("children")),
    )
    sort = _arg("sort") or "started"
    if sort not in (*queries.SESSION_SORTS, "cost"):
        raise UsageError(f"unknown sort {sort!r} (known: {', '.join(queries.SESSION_SORTS)}, cost)")
    descending = _arg("dir") != "asc"
    group = _arg("group")
    first_by = {"project": ("project",), "unit": ("agent", "project")}.get(group or "", ())
    page = _page_number()
    conn = connection()
    if sort == "cost":
        rows, total = _by_cost(conn, where, descending, page, first_by)
    else:
        rows, total = queries.page_sessions(
            conn, where, sort, descending, (page - 1) * SESSIONS_PER_PAGE, SESSIONS_PER_PAGE, first_by
        )
    return render_template(
        "sessions.html",
        groups=_groups(rows, group),
        total=total,
        page=page,
        pages=max(math.ceil(total / SESSIONS_PER_PAGE), 1),
        sort=sort,
        descending=descending,
        agents=queries.agent_counts(conn),
        children=queries.child_counts(conn),
        costs=_costs([s.key for s in rows]),
        statuses=get_args(SessionStatus),
    )


def _by_cost(
    conn: Any, where: queries.SessionFilter, descending: bool, page: int, first_by: tuple[str, ...]
) -> tuple[list[Any], int]:
    """One page of sessions ordered by cost.  Costs come from the pricer, not from
    SQL, so every matching session is priced (sessions with no price last)."""
    everything, total = queries.page_sessions(conn, where, "started", True, 0, -1, first_by)
    costs = _costs([s.key for s in everything])
    priced = [s for s in everything if costs.get(s.key, (None, set()))[0] is not None]
    unpriced = [s for s in everything if costs.get(s.key, (None, set()))[0] is None]
    priced.sort(key=lambda s: costs[s.key][0], reverse=descending)
    ordered = priced + unpriced
    if first_by:  # keep the grouping: a stable sort by the group fields
        fields = {"project": lambda s: s.cwd or "", "agent": lambda s: s.agent}
        ordered.sort(key=lambda s: tuple(fields[f](s) for f in first_by))
    start = (page - 1) * SESSIONS_PER_PAGE
    return ordered[start : start + SESSIONS_PER_PAGE], total


@pages.get("/session")
def session() -> str:
    conn = connection()
    key = queries.resolve_key(conn, request.args.get("key", ""))
    (header,) = queries.list_sessions_by_keys(conn, [key])
    meta = bool(_arg("meta"))
    page = _page_number()
    messages, total = queries.message_page(
        conn, key, (page - 1) * MESSAGES_PER_PAGE, MESSAGES_PER_PAGE, include_hidden=meta
    )
    _, everything = queries.message_page(conn, key, 0, 0, include_hidden=True)
    kids = queries.children(conn, key)
    links = {c.parent_tool_call_id: c for c in kids if c.parent_tool_call_id}
    cost, sources = _costs([key]).get(key, (None, set()))
    tree = queries.session_tree(conn, key)
    return render_template(
        "session.html",
        s=header,
        messages=messages,
        total=total,
        hidden=everything - total if not meta else 0,
        meta=meta,
        page=page,
        pages=max(math.ceil(total / MESSAGES_PER_PAGE), 1),
        first=(page - 1) * MESSAGES_PER_PAGE,
        links=links,
        children=kids,
        tree=tree if len(tree) > 1 else [],
        parent=queries.list_sessions_by_keys(conn, [header.parent_key]) if header.parent_key else [],
        cost=cost,
        cost_sources=sorted(sources),
        Output=Output,
        ToolCallPart=ToolCallPart,
    )


@pages.get("/message")
def message() -> Response:
    """Redirect to the session page (and page) holding message ``id``, at its anchor."""
    conn = connection()
    key = queries.resolve_key(conn, request.args.get("key", ""))
    position = queries.message_position(conn, key, request.args.get("id", ""))
    if position is None:
        abort(404)
    page = position // MESSAGES_PER_PAGE + 1
    return redirect(url_for("pages.session", key=key, page=page) + f"#m{position}")


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
    return render_template(
        "raw.html", key=key, message_id=message_id, raw=found, records=[_record(line) for line in found.lines]
    )


def _record(line: str) -> Any:
    """A JSON line decoded (shown indented), or the text as it is when it is not JSON."""
    try:
        return json.loads(line)
    except ValueError:
        return line


@pages.get("/search")
def search() -> str:
    query = _arg("q")
    tz = _zone()
    hits = []
    if query:
        until = parse_day(_arg("until"), tz)
        hits = index_search(
            connection(),
            query,
            agent=resolve_agent(_arg("agent")),
            project=_arg("project"),
            since=_start_of(parse_day(_arg("since"), tz), tz),
            until=_start_of(until + timedelta(days=1) if until else None, tz),
            role=_arg("role"),
            tool=_arg("tool"),
            reasoning=bool(_arg("reasoning")),
            limit=HITS,
        )
    return render_template(
        "search.html",
        query=query or "",
        hits=hits,
        snippet=snippet,
        agents=queries.agent_counts(connection()),
    )


@pages.get("/usage")
def usage() -> str:
    tz = _zone()
    first, last = parse_day(_arg("since"), tz), parse_day(_arg("until"), tz)
    period = _arg("period") or "daily"
    if period not in ("daily", "weekly", "monthly"):
        raise UsageError(f"unknown period {period!r} (daily, weekly, monthly)")
    by = "model" if _arg("by") == "model" else "agent"
    mode = _arg("mode") or "auto"
    if mode not in COST_MODES:
        raise UsageError(f"unknown cost mode {mode!r} ({', '.join(COST_MODES)})")
    conn = connection()
    needle = (_arg("project") or "").lower()
    calls = [
        c
        for c in usage_records(conn, resolve_agent(_arg("agent")))
        if needle in (c.project or "").lower() and in_range(c, first, last, tz)
    ]
    priced = _priced(conn, calls, mode)
    days = sorted({group_key(pc, period, tz) for pc in priced})
    names = sorted({(pc.call.model if by == "model" else pc.call.agent) or "unknown" for pc in priced})
    cost = {n: [0.0] * len(days) for n in names}
    tokens = {n: [0.0] * len(days) for n in names}
    cache = {"cache read": [0.0] * len(days), "cache write": [0.0] * len(days), "input": [0.0] * len(days)}
    where = {d: i for i, d in enumerate(days)}
    for pc in priced:
        i = where[group_key(pc, period, tz)]
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
        titles={s.key: s.title or s.id for s in queries.list_sessions_by_keys(conn, [r.key for r in top])},
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
