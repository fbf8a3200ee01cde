"""``agentlog summarize`` and ``agentlog standup``: summaries through ``llm``
(:mod:`agentlog.summarize`).  The only commands that send log text anywhere,
and only when run: redacted first, the prompt shown by ``--dry-run``, each
summary kept in the index for the same content and model."""

from __future__ import annotations

import importlib.util
import sqlite3
from typing import TYPE_CHECKING, Any

import click

from agentlog.cli import App, main
from agentlog.cli.options import filter_options, json_option, pass_app
from agentlog.cli.render import print_json
from agentlog.cli.synced import open_index
from agentlog.errors import UsageError
from agentlog.present import clean
from agentlog.service.filters import session_filter

if TYPE_CHECKING:
    import llm

    from agentlog.summarize import Prompt

model_option = click.option(
    "--model", "-m", "model_name", help="The llm model (an id or alias; default: llm's default model)."
)
dry_run_option = click.option("--dry-run", is_flag=True, help="Print what would be sent; send nothing.")
refresh_option = click.option(
    "--refresh", is_flag=True, help="Ask the model again even when a summary of this content is kept."
)


def _model(name: str | None, dry_run: bool) -> llm.Model | None:
    """The model to ask; with ``dry_run`` only when llm is installed (its kept
    summaries shape a digest's prompt), resolved without writing, else ``None``."""
    from agentlog.summarize import resolve_model

    if dry_run and importlib.util.find_spec("llm") is None:
        return None
    return resolve_model(name, dry_run)


def _run(
    app: App,
    conn: sqlite3.Connection,
    prompts: list[Prompt],
    model: llm.Model | None,
    dry_run: bool,
    refresh: bool,
    as_json: bool,
) -> None:
    """Print each prompt (``dry_run``) or its summary, as text or JSON."""
    from agentlog.service.summaries import ask, kept_summary

    if dry_run:
        if as_json:
            print_json(
                [
                    {"subject": p.subject, "sha256": p.sha256, "system": p.system, "text": p.text}
                    for p in prompts
                ]
            )
            return
        for prompt in prompts:
            click.echo(clean(f"=== {prompt.subject} ===\n{prompt.shown()}", markup=False))
        return
    assert model is not None
    out: list[dict[str, Any]] = []
    for prompt in prompts:
        summary = None if refresh else kept_summary(conn, prompt, model.model_id)
        if summary is None:
            note = f"{prompt.subject}: sending {len(prompt.text):,} characters to {model.model_id}"
            click.echo(clean(note, one_line=True, markup=False), err=True)
            summary = ask(conn, prompt, model)
        if as_json:
            out.append(
                {
                    "subject": prompt.subject,
                    "model": summary.model,
                    "cached": summary.cached,
                    "created_at": summary.created_at,
                    "text": summary.text,
                }
            )
        else:
            kept = " (kept)" if summary.cached else ""
            click.echo(
                clean(f"=== {prompt.subject} · {summary.model}{kept} ===\n{summary.text}\n", markup=False)
            )
    if as_json:
        print_json(out)


@main.command("summarize")
@click.argument("session", required=False)
@filter_options("sessions")
@click.option(
    "--limit",
    "-n",
    type=click.IntRange(1, 100),
    default=10,
    show_default=True,
    help="With --since: at most this many sessions, newest first.",
)
@model_option
@dry_run_option
@refresh_option
@json_option
@pass_app
def summarize_command(
    app: App,
    session: str | None,
    agent: str | None,
    project: str | None,
    since: str | None,
    until: str | None,
    limit: int,
    model_name: str | None,
    dry_run: bool,
    refresh: bool,
    as_json: bool,
) -> None:
    """Summarise SESSION (or each main session active --since SPAN) with a model:
    what was done, decided and left open.  Sends the redacted transcript to the
    llm model (--dry-run shows it and sends nothing); summaries are kept in the
    index and shown by `agentlog show` and the viewer."""
    from agentlog.service.summaries import full_sessions, prompt_of
    from agentlog.summarize import resolve_model, session_prompt

    if (session is None) == (since is None):
        raise UsageError("give a SESSION or --since SPAN (one of them)")
    if session is not None and (agent or project or until):
        raise UsageError("--agent, --project and --until go with --since, not with a SESSION")
    conn, _ = open_index(app)
    if session is not None:
        prompts = [prompt_of(conn, session)]
    else:
        where = session_filter(agent, project, since, until)
        prompts = [session_prompt(s) for s in full_sessions(conn, where, limit)]
        if not prompts:
            app.err.print("no session in that span")
            return
    _run(app, conn, prompts, None if dry_run else resolve_model(model_name), dry_run, refresh, as_json)


@main.command("standup")
@filter_options("sessions")
@click.option(
    "--limit",
    "-n",
    type=click.IntRange(1, 200),
    default=50,
    show_default=True,
    help="At most this many sessions, newest first.",
)
@model_option
@dry_run_option
@refresh_option
@json_option
@pass_app
def standup_command(
    app: App,
    agent: str | None,
    project: str | None,
    since: str | None,
    until: str | None,
    limit: int,
    model_name: str | None,
    dry_run: bool,
    refresh: bool,
    as_json: bool,
) -> None:
    """A "what I did" digest of every agent's main sessions active --since (default
    1d), written by a model from each session's kept summary (`agentlog summarize`)
    or an excerpt.  --dry-run shows what would be sent and sends nothing."""
    from agentlog.service.summaries import digest_prompt, full_sessions

    since = since or "1d"
    where = session_filter(agent, project, since, until)
    conn, _ = open_index(app)
    sessions = full_sessions(conn, where, limit)
    if not sessions:
        app.err.print("no session in that span")
        return
    model = _model(model_name, dry_run)
    span = f"since {since}" + (f" until {until}" if until else "")
    prompt = digest_prompt(conn, sessions, model.model_id if model else None, span)
    _run(app, conn, [prompt], model, dry_run, refresh, as_json)
