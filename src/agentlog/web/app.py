"""The Flask application: configuration, read-only index access and security.

Security rules (issue 7): only GET and HEAD are answered (405 otherwise); every
response carries a strict Content-Security-Policy (scripts and styles only from
this app's own ``/static/`` files, no inline script, no plugins, no framing),
``X-Content-Type-Options: nosniff`` and ``Referrer-Policy: no-referrer``; when
bound to a non-loopback address every request must carry the access token
(``?token=`` once, then an HttpOnly cookie); on loopback the ``Host`` header must
name a loopback host (DNS rebinding).  Cross-site requests are refused on every
route (403): a ``Sec-Fetch-Site`` other than ``same-origin`` or ``none`` (a
page on another site or another localhost port asking the viewer), or an
``Origin`` that is not this viewer's own (Fetch Metadata, W3C
https://www.w3.org/TR/fetch-metadata/; browsers that send neither are left to
the Host and token checks).  Static files are read from the package
once at start, by fixed name: no URL reaches the file system.
"""

from __future__ import annotations

import hmac
import select
import socket
import sqlite3
import time
from collections.abc import Callable
from datetime import UTC, datetime
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, Response, abort, current_app, g, request
from markupsafe import escape

from agentlog.errors import IndexProblem
from agentlog.index import db
from agentlog.loopback import is_loopback
from agentlog.present import compact, local, project_name, tool_summary
from agentlog.web import content

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
TOKEN_COOKIE = "agentlog_token"
STATIC_TYPES = {
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}


def _static_files() -> dict[str, tuple[bytes, str]]:
    """Every file in the package's ``static`` folder: name → (bytes, media type)."""
    folder = files("agentlog.web") / "static"
    return {
        entry.name: (entry.read_bytes(), STATIC_TYPES[Path(entry.name).suffix])
        for entry in folder.iterdir()
        if Path(entry.name).suffix in STATIC_TYPES
    }


def create_app(index_path: Path, token: str | None = None, state: Any = None, redact: bool = True) -> Flask:
    """The viewer over the index at ``index_path`` (opened read-only per request).

    ``token``: the access token every request must carry (``None`` for a loopback
    bind, which checks the ``Host`` header instead).  ``state``: an object with
    ``last`` (UTC datetime of the last background sync) shown in the footer.
    ``redact``: secrets in transcripts, titles and search hits are shown as
    ``[REDACTED:<kind>]`` (``agentlog serve --show-secrets`` turns it off)."""
    app = Flask("agentlog.web", static_folder=None)
    app.config.update(INDEX_PATH=index_path, TOKEN=token, SYNC_STATE=state, REDACT=redact)
    app.jinja_env.autoescape = True
    app.jinja_env.finalize = content.inert
    app.jinja_env.filters.update(
        compact=compact,
        local=local,
        project=project_name,
        summary=tool_summary,
        **content.FILTERS,
    )
    app.jinja_env.globals.update(content.GLOBALS)
    static = _static_files()

    @app.before_request
    def guard() -> Response | None:
        if request.method not in ("GET", "HEAD"):
            abort(405)
        if cross_site(request.headers.get("Sec-Fetch-Site"), request.headers.get("Origin"), request.host_url):
            abort(403, "this viewer does not answer requests from other sites")
        if token is None:
            if not is_loopback(urlsplit(f"//{request.host}").hostname):
                abort(403, "this viewer answers only to localhost")
            return None
        given = request.args.get("token") or request.cookies.get(TOKEN_COOKIE) or ""
        if not hmac.compare_digest(given.encode(), token.encode()):
            abort(403, "an access token is required (see the URL agentlog serve printed)")
        return None

    @app.after_request
    def headers(response: Response) -> Response:
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers.setdefault("Cache-Control", "no-store")
        if token is not None and request.args.get("token"):
            response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="Strict")
        return response

    @app.teardown_appcontext
    def close(_: BaseException | None) -> None:
        conn = g.pop("conn", None)
        if conn is not None:
            conn.close()

    @app.get("/static/<name>")
    def static_file(name: str) -> Response:
        if name not in static:
            abort(404)
        data, media_type = static[name]
        response = Response(data, mimetype=media_type.split(";")[0])
        response.headers["Content-Type"] = media_type
        response.headers["Cache-Control"] = "max-age=300"
        return response

    @app.context_processor
    def globals_() -> dict[str, Any]:
        last = getattr(state, "last", None)
        return {"synced_at": last, "now": datetime.now(UTC)}

    @app.errorhandler(sqlite3.DatabaseError)
    def index_unreadable(exc: sqlite3.DatabaseError) -> tuple[str, int]:
        problem = db.explain(exc, Path(current_app.config["INDEX_PATH"]))
        if problem is None and not isinstance(exc, sqlite3.OperationalError):
            raise exc  # a bug: Flask's own 500
        return str(escape(str(problem) if problem else f"the index cannot be read: {exc}")), 503

    @app.errorhandler(IndexProblem)
    def index_problem(exc: IndexProblem) -> tuple[str, int]:
        return str(escape(str(exc))), 503

    from agentlog.web.live import live
    from agentlog.web.pages import pages

    app.register_blueprint(pages)
    app.register_blueprint(live)
    return app


def cross_site(fetch_site: str | None, origin: str | None, host_url: str) -> bool:
    """Whether a request with these ``Sec-Fetch-Site`` and ``Origin`` headers came
    from a page that is not this viewer (``host_url``: ``http://host:port/``)."""
    if fetch_site is not None and fetch_site.strip().lower() not in ("same-origin", "none"):
        return True
    return origin is not None and origin.rstrip("/").lower() != host_url.rstrip("/").lower()


CHECK_EVERY_S = 0.05
"""Seconds between two looks at whether a search's client has gone away."""


def client_gone() -> Callable[[], bool]:
    """A check whether this request's client has closed its connection (a read
    on the socket would return end of file), asked by a long search at most every
    :data:`CHECK_EVERY_S` seconds; always ``False`` where the server does not
    expose its socket (``werkzeug.socket``: the development server does)."""
    sock = request.environ.get("werkzeug.socket")
    last = [time.monotonic()]

    def check() -> bool:
        now = time.monotonic()
        if sock is None or now - last[0] < CHECK_EVERY_S:
            return False
        last[0] = now
        try:
            readable, _, _ = select.select([sock], [], [], 0)
            return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    return check


def connection() -> sqlite3.Connection:
    """This request's read-only connection to the index (closed after the request)."""
    if "conn" not in g:
        g.conn = db.connect(current_app.config["INDEX_PATH"], readonly=True)
    conn: sqlite3.Connection = g.conn
    return conn
