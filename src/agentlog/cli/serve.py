"""``agentlog serve``: the local web viewer (see :mod:`agentlog.web`)."""

from __future__ import annotations

import socket

import click

from agentlog.cli import App, main
from agentlog.cli.options import pass_app
from agentlog.cli.synced import open_index
from agentlog.errors import UsageError
from agentlog.index import db
from agentlog.loopback import is_loopback

DEFAULT_PORT = 8765


def access_token(host: str, explicit: bool) -> str | None:
    """The access token a bind to ``host`` needs: ``None`` on loopback, a fresh
    random one otherwise.  Raises :class:`UsageError` for a non-loopback address
    not given with ``--host`` on the command line (for example from the
    environment)."""
    if is_loopback(host):
        return None
    if not explicit:
        raise UsageError(f"refusing to listen on {host}: a non-loopback address needs --host {host}")
    import secrets  # with hashlib and OpenSSL: only for `serve`

    return secrets.token_urlsafe(24)


@main.command("serve")
@click.option(
    "--port", default=DEFAULT_PORT, show_default=True, type=click.IntRange(0, 65535), help="TCP port."
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    envvar="AGENTLOG_SERVE_HOST",
    help="Address to listen on; any non-loopback one requires this flag and an access token.",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the viewer in your browser.")
@click.option(
    "--interval", default=30.0, show_default=True, type=click.FloatRange(min=1), help="Seconds between syncs when file events are unavailable (no watchfiles: polling)."
)
@click.option(
    "--show-secrets",
    is_flag=True,
    help="Show API keys, tokens and passwords as logged (hidden as [REDACTED:kind] by default).",
)
@pass_app
@click.pass_context
def serve(
    ctx: click.Context,
    app: App,
    port: int,
    host: str,
    open_browser: bool,
    interval: float,
    show_secrets: bool,
) -> None:
    """A read-only web viewer of every session: transcripts, search, usage charts.

    Listens on 127.0.0.1 unless --host says otherwise; keeps the index current
    in the background from file-system events (a poll every --interval seconds
    without the `live` extra).  Stop it with Ctrl-C.
    """
    from werkzeug.serving import make_server

    from agentlog.web.app import create_app
    from agentlog.web.syncer import Syncer

    explicit = ctx.get_parameter_source("host") == click.core.ParameterSource.COMMANDLINE
    try:  # werkzeug prints a bare error and exits for an address it cannot use
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise UsageError(f"--host {host}: {getattr(exc, 'strerror', None) or exc}") from None
    token = access_token(host, explicit)
    conn, _ = open_index(app)  # creates and migrates the index, first sync
    conn.close()
    problem = db.diagnose(app.index_path)  # every page read once: never serve a damaged index
    if problem is not None:
        raise problem
    syncer = Syncer(app.index_path, app.env, app.home, app.roots, interval)
    server = make_server(host, port, create_app(app.index_path, token, syncer, redact=not show_secrets), threaded=True)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{server.server_port}/" + (f"?token={token}" if token else "")
    click.echo(f"agentlog viewer on {url}  (index {app.index_path}; Ctrl-C stops)")
    if token:
        click.echo("anyone who can reach this address and has the token can read your transcripts", err=True)
    if not app.no_sync:
        from agentlog.live.watch import MISSING, events_available

        if not events_available():
            click.echo(f"{MISSING}: every {interval:g} s", err=True)
        syncer.start()
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        syncer.stop()
        server.server_close()
