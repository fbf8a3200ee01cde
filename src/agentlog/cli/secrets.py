"""``agentlog secrets``: the sessions whose logs hold API keys, tokens or passwords."""

from __future__ import annotations

from agentlog.cli import App, main
from agentlog.cli.indexing import open_index
from agentlog.cli.options import filter_options, json_option, pass_app
from agentlog.cli.render import print_json
from agentlog.present import clean, plural
from agentlog.service.filters import session_filter
from agentlog.service.secrets import sessions_with_secrets


@main.command("secrets")
@filter_options("sessions")
@json_option
@pass_app
def secrets_command(
    app: App,
    agent: str | None,
    project: str | None,
    since: str | None,
    until: str | None,
    as_json: bool,
) -> None:
    """List the sessions holding secrets: kinds and counts, never the secrets.

    Exports, search snippets and the viewer show them as [REDACTED:<kind>].
    """
    where = session_filter(agent, project, since, until)
    conn, _ = open_index(app)
    found = sessions_with_secrets(conn, where)
    if as_json:
        print_json(found)
        return
    if not found:
        app.err.print("no secrets found")
        return
    for s in found:
        kinds = ", ".join(f"{kind} {n}" for kind, n in s.kinds.items())
        started = (s.started_at or "")[:16].replace("T", " ")
        line = f"{started:16}  {s.key}  {kinds}  {s.title or ''}"
        app.console.print(clean(line, one_line=True), soft_wrap=True, highlight=False)
    app.err.print(f"{plural(len(found), 'session')}, {plural(sum(s.total for s in found), 'secret')}")
