"""``agentlog mcp``: the MCP server over the index (:mod:`agentlog.mcp.server`),
on stdio, or on streamable HTTP bound to the loopback interface."""

from __future__ import annotations

import sqlite3

import click

from agentlog.cli import App, main
from agentlog.cli.options import pass_app
from agentlog.errors import AgentlogError, UsageError
from agentlog.loopback import is_loopback

MCP_EXTRA = "agentlog mcp needs the MCP SDK: pip install 'agentlog[mcp]'"


def http_address(text: str) -> tuple[str, int]:
    """``PORT``, ``:PORT`` or ``HOST:PORT`` (``[::1]:PORT``) as ``(host, port)``,
    the host ``127.0.0.1`` when not given.  Raises :class:`UsageError` for a bad
    port or a host that is not a loopback address (the server has no
    authentication: it must not be reachable from another machine)."""
    host, _, port = text.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--http {text!r}: not a port (use PORT, :PORT or 127.0.0.1:PORT)")
    if not is_loopback(host):
        raise UsageError(f"--http {text!r}: the MCP server binds to loopback only (127.0.0.1, ::1)")
    return host, int(port)


@main.command("mcp")
@click.option(
    "--http",
    "http",
    metavar="[HOST:]PORT",
    help="Serve streamable HTTP at http://HOST:PORT/mcp (loopback only) instead of stdio.",
)
@pass_app
def mcp_command(app: App, http: str | None) -> None:
    """Serve read-only tools over your sessions to an MCP client (stdio by default).

    Tools: list_sessions, search_sessions, get_session_overview, get_messages,
    get_usage_summary, get_live_status, find_sessions_by_file.  Add it to a client as the command
    `agentlog mcp` (see the README)."""
    address = http_address(http) if http is not None else None
    try:
        from agentlog.mcp.server import Index, build_server
    except ImportError as exc:
        if exc.name is not None and exc.name.split(".")[0] in ("mcp", "pydantic"):
            raise AgentlogError(MCP_EXTRA) from None
        raise
    from agentlog.cli.synced import say_upgrade
    from agentlog.index import db
    from agentlog.service.index import update_index

    home = app.where

    def connect() -> sqlite3.Connection:
        with db.telling_upgrades(lambda line: say_upgrade(app, line)):
            if app.demo:  # only a cache: rebuilt when another build left it
                return db.connect_cache(app.index_path)[0]
            return (db.connect_current(app.index_path) if app.no_sync else None) or db.connect(app.index_path)

    index = Index(connect, None if app.no_sync else lambda conn: update_index(conn, home))
    server = build_server(index)
    try:
        if address is None:
            server.run("stdio")
        else:
            host, port = address
            app.err.print(f"agentlog mcp: streamable HTTP at http://{host}:{port}/mcp")
            server.run("streamable-http", host=host, port=port)
    finally:
        index.close()
