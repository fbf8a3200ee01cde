"""The viewer's live pages: the board (``/board``, the same rows as ``agentlog
status``) and Server-Sent Events (``/events``) that tell an open page to refresh.

``/events?key=K`` streams an ``update`` event whenever session ``K`` or one of
its subagents gains a message, a part or a tool result, or changes status
(:class:`agentlog.service.tail.SessionTail`); ``/events`` without a key streams
one whenever the board's rows change.  The stream waits on the background
follower (:class:`agentlog.service.follow.Follower`: woken right after a sync
commits), re-checks every :data:`RECHECK` seconds (the clock's statuses), sends a
comment every :data:`KEEPALIVE` seconds so a dead client is noticed, and sets
``retry`` so the browser reconnects by itself.  A burst of writes is one sync,
hence one event; the page then fetches itself again and
swaps in what is new (``static/app.js``), one fetch at a time (events arriving meanwhile are
coalesced into the next fetch).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, Response, current_app, render_template, request

from agentlog.index import db
from agentlog.query import SessionFilter
from agentlog.service.filters import session_filter
from agentlog.service.status import by_project, live_status
from agentlog.service.tail import SessionTail
from agentlog.web.app import connection

live = Blueprint("live", __name__)

RECHECK = 5.0
"""Seconds an event stream waits for a sync before it looks again anyway."""
KEEPALIVE = 15.0
"""Seconds between keep-alive comments on an idle event stream."""
RETRY_MS = 2000
"""The reconnection delay the browser is told (ms)."""


def _filter() -> SessionFilter:
    def arg(name: str) -> str | None:
        return request.args.get(name, "").strip() or None

    return session_filter(arg("agent"), arg("project"), arg("since"))


@live.get("/board")
def board() -> str:
    rows = live_status(connection(), _filter(), redact_secrets=bool(current_app.config.get("REDACT", True)))
    return render_template("board.html", rows=rows, groups=by_project(rows), now=datetime.now(UTC))


def _board_signature(rows: list[Any]) -> list[Any]:
    def flat(r: Any) -> list[Any]:
        return [(r.key, r.status, r.since, r.evidence, r.turn.total_tokens), *(x for c in r.children for x in flat(c))]

    return [x for r in rows for x in flat(r)]


@live.get("/events")
def events() -> Response:
    key = request.args.get("key", "").strip()
    where = _filter()
    path = current_app.config["INDEX_PATH"]
    state = current_app.config.get("SYNC_STATE")
    conn = db.connect(path, readonly=True)
    tail = SessionTail(conn, key, backlog=0) if key else None

    def look() -> bool:
        if tail is not None:
            return bool(tail.poll(conn))
        signature = _board_signature(live_status(conn, where, costs=True))
        changed: bool = signature != seen[0]
        seen[0] = signature
        return changed

    seen: list[Any] = [None]
    look()

    def stream() -> Iterator[str]:
        try:
            yield f"retry: {RETRY_MS}\n: agentlog live\n\n"
            version = getattr(state, "version", 0)
            quiet_since = time.monotonic()
            while not getattr(state, "stopped", False):  # the viewer is shutting down
                waiter = getattr(state, "wait", None)
                if callable(waiter):
                    version = waiter(version, RECHECK)
                else:
                    time.sleep(RECHECK)
                if look():
                    quiet_since = time.monotonic()
                    yield f"event: update\ndata: {json.dumps({'version': version})}\n\n"
                elif time.monotonic() - quiet_since > KEEPALIVE:
                    quiet_since = time.monotonic()
                    yield ": keep-alive\n\n"
        finally:
            conn.close()

    response = Response(stream(), mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Accel-Buffering"] = "no"
    return response
