"""``agentlog search`` (the index's own commands, ``index`` and ``prune``, are
in :mod:`agentlog.cli.upkeep`)."""

from __future__ import annotations

from typing import Any

import click
import msgspec

from agentlog.cli import App, main
from agentlog.cli.options import filter_options
from agentlog.cli.render import print_json
from agentlog.cli.synced import open_index
from agentlog.index.search import MARK_END, MARK_START, SORTS, Hit, SearchSort
from agentlog.present import clean, local
from agentlog.query import SQL_INT_MAX
from agentlog.service.filters import search_filter
from agentlog.service.search import MAX_HITS, SearchPaging, search


@main.command("search", context_settings={"ignore_unknown_options": True})
@click.argument("words", nargs=-1, required=True)
@filter_options("messages")
@click.option(
    "--role",
    type=click.Choice(["user", "assistant", "system", "tool"], case_sensitive=False),
    help="Only this role (any case).",
)
@click.option("--tool", help="Only calls of this tool (normalised name, any case: bash, read, edit …).")
@click.option("--reasoning", is_flag=True, help="Also search reasoning.")
@click.option(
    "--limit",
    "-n",
    default=20,
    show_default=True,
    type=click.IntRange(min=1, max=MAX_HITS),
    help="At most this many hits.",
)
@click.option(
    "--offset",
    default=0,
    show_default=True,
    type=click.IntRange(min=0, max=SQL_INT_MAX),
    help="Skip this many hits first.",
)
@click.option(
    "--sessions", "by_session", is_flag=True, help="One line per session: its best hit and hit count."
)
@click.option(
    "--sort",
    type=click.Choice(SORTS),
    default="rank",
    show_default=True,
    help="Best match first, or newest/oldest message first.",
)
@click.option("--fts", "raw", is_flag=True, help="Read QUERY as SQLite FTS5 syntax (columns, NEAR, ^ …).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a list.")
@click.pass_obj
def search_command(
    app: App,
    words: tuple[str, ...],
    agent: str | None,
    project: str | None,
    since: str | None,
    until: str | None,
    role: str | None,
    tool: str | None,
    reasoning: bool,
    limit: int,
    offset: int,
    by_session: bool,
    sort: SearchSort,
    raw: bool,
    as_json: bool,
) -> None:
    """Search what was said and done: the WORDS as written, punctuation and all
    (CLAUDE.md, src/app.py, don't, C++, --force are found as typed; write `--`
    first when a word is one of the options below, e.g. `-- git push -n`).

    Operators only when written so: "a phrase", prefix*, OR, AND, NOT (upper
    case, between words), NEAR(a b); --fts reads the WORDS as FTS5 syntax.  Ranked by
    relevance (bm25); each hit names its session (open it with
    `agentlog show KEY`).
    """
    where = search_filter(agent, project, since, until, role, tool, reasoning)
    paging = SearchPaging(limit=limit, offset=offset, sort=sort, by_session=by_session, raw=raw)
    conn, _ = open_index(app)
    page = search(conn, " ".join(words), where, paging)
    if page.note:
        app.err.print(f"[yellow]{clean(page.note, one_line=True)}[/yellow]")
    if as_json:
        print_json(
            {
                "total": page.total,
                "total_exact": page.total_exact,
                "offset": page.offset,
                "next_offset": page.next_offset,
                "note": page.note,
                "hits": [{**_plain(h), "show": f"agentlog show {h.session_key}"} for h in page.hits],
            }
        )
        return
    if not page.hits:
        app.err.print("no matches" if not page.total else f"no hits past {offset} (of {page.total_text})")
        return
    for h in page.hits:
        role = h.role + (f" · {h.tool}" if h.tool else "")
        count = f" · {h.session_hits} hit{'s' if h.session_hits != 1 else ''}" if by_session else ""
        app.console.print(
            f"[cyan]{clean(h.session_key, one_line=True)}[/cyan] [dim]{local(h.timestamp)} · "
            f"{clean(role, one_line=True)}{count}[/dim]  {clean((h.session_title or '')[:60], one_line=True)}"
        )
        app.console.print("  " + highlight(h.snippet))
    unit = ("session" if by_session else "hit") + ("s" if page.total != 1 or not page.total_exact else "")
    last = offset + len(page.hits)
    whole = offset == 0 and last == page.total and page.total_exact
    shown = f"{page.total_text} {unit}" if whole else f"{offset + 1}–{last} of {page.total_text} {unit}"
    more = f" · next page: --offset {page.next_offset}" if page.next_offset is not None else ""
    app.err.print(f"[dim]{shown}{more} · open one with: agentlog show <key>[/dim]")


def highlight(snippet: str) -> str:
    """A search snippet as rich markup on one line: content cleaned (no control
    characters reach the terminal), the marked matches in bold yellow."""
    pieces = " ".join(snippet.split()).replace(MARK_END, MARK_START).split(MARK_START)
    return "".join(f"[bold yellow]{clean(p)}[/]" if i % 2 else clean(p) for i, p in enumerate(pieces))


def _plain(hit: Hit) -> dict[str, Any]:
    """A hit as JSON: the snippet's matches marked «like this»."""
    data: dict[str, Any] = msgspec.to_builtins(hit)
    data["snippet"] = hit.snippet.replace(MARK_START, "«").replace(MARK_END, "»")
    return data
