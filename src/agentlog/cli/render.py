"""Terminal rendering: tables and transcripts (rich, imported on first use, so
the JSON outputs never load it).  No I/O besides the console."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import msgspec

from agentlog import lazy
from agentlog.model import (
    CompactionPart,
    FilePart,
    Message,
    ReasoningPart,
    Session,
    TextPart,
    ToolCallPart,
    UnknownPart,
    Usage,
    short_id,
)
from agentlog.present import (
    agent_label,
    clean,
    clean_pieces,
    compact,
    cut,
    local,
    output_text,
    project_name,
    short_time,
    tool_summary,
)

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

OUTPUT_LINES = 6
TEXT_LINES = 300
"""A prompt or reply longer than this many lines is cut in the transcript (``--full`` shows all)."""
LINE_CHARS = 2000


def print_json(data: Any) -> None:
    """Indented JSON on stdout (msgspec encodes the model's structs directly)."""
    sys.stdout.buffer.write(msgspec.json.format(msgspec.json.encode(data), indent=2) + b"\n")
    sys.stdout.flush()


_RICH_CHANGES = lazy.pattern(r"[\t\\]|:\S*:")
"""What rich's ``Console.print`` (markup escaped, highlighting off, soft wrap)
does not print as written: a tab (expanded to spaces), a backslash (doubled
before an escaped bracket, or at the end), an ``:emoji:`` code (replaced)."""


def printed_as_written(line: str) -> bool:
    """Whether the CLI console prints ``line`` (its log text passed through
    :func:`~agentlog.present.clean` with ``markup=False``) exactly as written,
    so it can be written without loading rich (~30 ms of a start-up)."""
    return _RICH_CHANGES.search(line) is None


def print_lines(lines: Sequence[str]) -> None:
    """``lines`` on stdout, each ended by a newline, as :func:`print_json` writes
    (no rich: only for lines :func:`printed_as_written` accepts); a closed pipe
    ends the command quietly, as the console does (:func:`closed_pipe`)."""
    try:
        sys.stdout.buffer.write("".join(f"{line}\n" for line in lines).encode())
        sys.stdout.flush()
    except BrokenPipeError:
        closed_pipe()


def closed_pipe() -> NoReturn:
    """End successfully and quietly when stdout's reader went away
    (``agentlog show X | head``): stdout now goes nowhere, so nothing is
    written to the closed pipe again on the way out."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    raise SystemExit(0)


JSON_PIECE = 1 << 20
"""Bytes of a message's indented JSON indented again for the session at a time."""


def print_session_json(session: Session, messages: Iterable[Message]) -> None:
    """:func:`print_json` of ``session`` holding ``messages``, byte for byte,
    written one message at a time: a session of hundreds of MB is never encoded
    whole (the encoded and the indented copies were 2.5 times its JSON on top of
    the session itself), nor held whole (``messages`` may be a stream)."""
    out = sys.stdout.buffer
    found = iter(messages)
    first = next(found, None)
    head = msgspec.json.format(msgspec.json.encode(msgspec.structs.replace(session, messages=[])), indent=2)
    empty = b'\n  "messages": []'
    cut = head.find(empty)
    if first is None:  # no messages: the whole is small
        out.write(head + b"\n")
        sys.stdout.flush()
        return
    assert cut >= 0, "a session's JSON has its messages on a line of their own"
    out.write(head[:cut] + b'\n  "messages": [')
    message: Message | None = first
    del first
    separator = b""
    while message is not None:
        text = msgspec.json.format(msgspec.json.encode(message), indent=2)
        message = None  # not held while it is written, nor while the next is read
        out.write(separator + b"\n    ")
        for start in range(0, len(text), JSON_PIECE):  # indented in slices: never copied whole
            out.write(text[start : start + JSON_PIECE].replace(b"\n", b"\n    "))
        del text
        separator = b","
        message = next(found, None)
    out.write(b"\n  ]" + head[cut + len(empty) :] + b"\n")
    sys.stdout.flush()


def usage_line(usage: Usage) -> str:
    parts = [
        f"input {usage.input_tokens:,}",
        f"cache read {usage.cache_read_tokens:,}",
        f"cache write {usage.cache_write_tokens:,}",
        f"output {usage.output_tokens:,}",
    ]
    if usage.reasoning_tokens:
        parts.append(f"(reasoning {usage.reasoning_tokens:,})")
    if usage.cost_usd is not None:
        parts.append(f"${usage.cost_usd:,.2f} {usage.cost_source or ''}".rstrip())
    return " · ".join(parts)


def plain_table() -> Table:
    """A rich table without borders or edge padding, bold headers."""
    from rich.table import Table

    return Table(box=None, pad_edge=False, header_style="bold")


def sessions_table(sessions: list[Session], children: dict[str, int], width: int = 80) -> Table:
    """Sessions as a table that fits ``width`` columns: the title takes what is left."""
    table = plain_table()
    table.add_column("started", no_wrap=True, min_width=12)
    agents = [agent_label(s.agent) for s in sessions]
    projects = [project_name(s.cwd) for s in sessions]
    agent_width = min(10, max((len(a) for a in agents), default=5))
    project_width = min(12, max(7, *(len(p) for p in projects)) if projects else 7)
    table.add_column("agent", no_wrap=True, min_width=5, max_width=10, overflow="ellipsis")
    table.add_column("id", no_wrap=True, style="cyan", min_width=8)
    table.add_column("project", no_wrap=True, max_width=12, overflow="ellipsis")
    has_children = any(children.get(s.key) for s in sessions)
    # started 12, id 8, msgs 4, tokens 6 and six 2-character gaps: the title gets the rest.
    used = 12 + agent_width + 8 + project_width + 4 + 6 + 12
    table.add_column(
        "title (+N: subagents)" if has_children else "title",
        no_wrap=True,
        overflow="ellipsis",
        max_width=max(12, width - used - 1),
    )
    table.add_column("msgs", justify="right", no_wrap=True, min_width=4)
    table.add_column("tokens", justify="right", no_wrap=True, min_width=6)
    for n, s in enumerate(sessions):
        title = clean(("↳ " if s.parent_key else "") + (s.title or "")[:300], one_line=True)
        subs = children.get(s.key, 0)
        title = f"[dim]+{subs}[/dim] " + title if subs else title
        if s.prompt_only:
            title = "[yellow]prompts only[/yellow] " + title
        elif s.archived:
            title = "[yellow]archived[/yellow] " + title
        table.add_row(
            short_time(s.started_at),
            agents[n],
            clean(short_id(s.id), one_line=True),
            clean(projects[n], one_line=True),
            title,
            str(s.message_count),
            compact(s.usage.total_tokens),
        )
    return table


def session_row(s: Session, children: int) -> dict[str, Any]:
    """The JSON row of ``agentlog sessions --json`` (documented in the README)."""
    return {
        "key": s.key,
        "agent": s.agent,
        "id": s.id,
        "title": s.title,
        "cwd": s.cwd,
        "git_branch": s.git_branch,
        "started_at": s.started_at.isoformat() if s.started_at else None,
        "ended_at": s.ended_at.isoformat() if s.ended_at else None,
        "models": s.models,
        "kind": s.kind,
        "parent_key": s.parent_key,
        "subagents": children,
        "messages": s.message_count,
        "resume_command": s.resume_command,
        "archived": s.archived,
        "prompt_only": s.prompt_only,
        "usage": {
            "input_tokens": s.usage.input_tokens,
            "cache_read_tokens": s.usage.cache_read_tokens,
            "cache_write_5m_tokens": s.usage.cache_write_5m_tokens,
            "cache_write_1h_tokens": s.usage.cache_write_1h_tokens,
            "output_tokens": s.usage.output_tokens,
            "reasoning_tokens": s.usage.reasoning_tokens,
            "total_tokens": s.usage.total_tokens,
        },
    }


def render_transcript(
    console: Console,
    session: Session,
    messages: Iterable[Message],
    show_all: bool = False,
    reasoning: bool = False,
    full: bool = False,
) -> None:
    """Print the session whose header is ``session`` as a readable transcript of
    ``messages`` (in order; each printed as it comes, so a stream is never held whole)."""
    lines = [f"[bold]{clean(_cut_title(session.title or session.id))}[/bold]"]
    facts = [session.key, session.cwd or "", ", ".join(cut(m) for m in session.models)]
    lines.append("[dim]" + clean(" · ".join(f for f in facts if f), one_line=True) + "[/dim]")
    if session.parent_key:
        via = f" via {session.parent_tool_call_id}" if session.parent_tool_call_id else ""
        lines.append(f"[dim]{session.kind} of {clean(session.parent_key + via, one_line=True)}[/dim]")
    lines.append(
        f"[dim]{local(session.started_at)} → {local(session.ended_at)} · {usage_line(session.usage)}[/dim]"
    )
    if session.resume_command:
        lines.append(f"[dim]resume: {clean(session.resume_command, one_line=True)}[/dim]")
    if session.prompt_only:
        lines.append(f"[yellow]{PROMPT_ONLY_NOTE}[/yellow]")
    elif session.archived:
        lines.append(f"[yellow]{ARCHIVED_NOTE}[/yellow]")
    hidden = 0
    for message in messages:
        if message.hidden and not show_all:
            hidden += 1
            continue
        lines.append("")  # a blank line before each message
        _render_message(console, lines, message, reasoning, full)
        if len(lines) >= FLUSH_LINES or sum(map(len, lines)) >= FLUSH_CHARS:
            _flush(console, lines)
    if hidden:
        lines.append(f"\n[dim]{hidden} meta/injected messages hidden (--all shows them)[/dim]")
    _flush(console, lines)


ARCHIVED_NOTE = "archived: its log is gone (or cannot be read); kept by the index until `agentlog prune`"
PROMPT_ONLY_NOTE = (
    "prompts only: the transcript is gone; these are your prompts from the agent's prompt history"
)


def _cut_title(title: str) -> str:
    """A title on one line of at most 200 characters (a first prompt can be megabytes)."""
    return cut(" ".join(title[:1000].split()))


def _cut(text: str, full: bool) -> str:
    """At most :data:`TEXT_LINES` lines of :data:`LINE_CHARS` characters, saying what was cut."""
    if full:
        return text
    lines = text.splitlines()
    shown = [line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + " …" for line in lines[:TEXT_LINES]]
    if len(lines) > TEXT_LINES:
        shown.append(f"… {len(lines) - TEXT_LINES:,} more lines (--full shows them)")
    return "\n".join(shown)


FLUSH_LINES = 256
FLUSH_CHARS = 1 << 16
"""Lines and characters of a transcript gathered (whole messages) before they are
printed (:func:`_flush`)."""


def writes_plain(console: Console) -> bool:
    """Whether a transcript goes to ``console`` as plain lines, unwrapped: off a
    terminal and without colour (a file or a pipe), each line of the log is one
    line of the output, whole, for grep and editors (a pager wraps it), and rich's
    wrapping is skipped (half the time ``show`` of a 15,862-message session took)."""
    return not console.is_terminal and console.color_system is None


def _flush(console: Console, lines: list[str]) -> None:
    """Print ``lines`` (markup, each closing what it opens) as one string, and
    empty the list: rich costs about as much per ``print`` as per line it renders
    (printing whole messages up to :data:`FLUSH_LINES` lines or :data:`FLUSH_CHARS`
    characters at once made ``show`` of a 10,000-message session to a file 2.3x
    faster than a print per line), and a text of several lines prints the same.
    Where :func:`writes_plain`, the markup's text is written as rich would print it
    on a console too wide to wrap (tabs expanded, ``:emoji:`` codes replaced)."""
    if not lines:
        return
    if writes_plain(console):
        from rich.markup import render

        text = render("\n".join(lines))
        text.expand_tabs(TAB_SIZE)
        _write(console, text.plain + "\n")
    else:
        console.print("\n".join(lines))
    lines.clear()


def print_markup(console: Console, *lines: str) -> None:
    """Print ``lines`` (markup) after a transcript, as it prints its own (:func:`_flush`)."""
    _flush(console, list(lines))


def _write(console: Console, text: str) -> None:
    """``text`` on ``console``'s file; a closed pipe ends the command quietly
    (:func:`closed_pipe`), as the console's own prints do."""
    try:
        console.file.write(text)
        console.file.flush()
    except BrokenPipeError:
        closed_pipe()


def _print_text(console: Console, lines: list[str], text: str, full: bool, style: str = "") -> None:
    """Log text, stripped, cut unless ``full``, as a line of ``lines``.  Whole,
    it goes out at once (after ``lines``) as plain text with its own line breaks,
    for the terminal to wrap (rich's wrapping takes superlinear time: a 10 MB
    prompt took minutes), a piece at a time (:func:`~agentlog.present.clean_pieces`,
    tabs expanded as rich would expand them: :func:`expand_tabs`), never copied
    whole."""
    if full:
        from rich.text import Text

        _flush(console, lines)
        plain = writes_plain(console)
        for piece in expand_tabs(clean_pieces(text)):
            if plain:
                _write(console, piece)
            else:
                console.print(Text(piece, style=style), soft_wrap=True, end="")
        if plain:
            _write(console, "\n")
        else:
            console.print()
    else:
        text = text.strip()
        lines.append(f"[{style}]{clean(_cut(text, full))}[/]" if style else clean(_cut(text, full)))


TAB_SIZE = 8


def expand_tabs(pieces: Iterable[str]) -> Iterator[str]:
    """``pieces`` (of one text, in order) with each tab turned into the spaces up
    to the next multiple of :data:`TAB_SIZE` cells of its line (as rich's
    ``Text.expand_tabs`` does to a whole text), a line's cells carried from one
    piece to the next."""
    from rich.cells import cell_len

    column = 0
    for piece in pieces:
        lines = piece.split("\n")
        for n, line in enumerate(lines):
            if n:
                column = 0
            if "\t" in line:
                parts = line.split("\t")
                for i, part in enumerate(parts[:-1]):
                    column += cell_len(part + " ")
                    pad = -column % TAB_SIZE
                    column += pad
                    parts[i] = part + " " * (1 + pad)
                lines[n] = line = "".join(parts)
                column += cell_len(parts[-1]) if n == len(lines) - 1 else 0
            elif n == len(lines) - 1:  # the only line whose cells the next piece needs
                column += cell_len(line)
        yield "\n".join(lines) if len(lines) > 1 else lines[0]


def _render_message(console: Console, lines: list[str], message: Message, reasoning: bool, full: bool) -> None:
    """``message``'s lines (markup) added to ``lines``; a whole text (``full``)
    printed at once after them (:func:`_print_text`)."""
    stamp = local(message.timestamp, "%H:%M:%S")
    flags = f" [yellow]{' '.join(message.flags)}[/yellow]" if message.flags else ""
    style = {"user": "bold cyan", "assistant": "bold green", "system": "bold magenta", "tool": "bold blue"}
    label = "you" if message.role == "user" and not message.flags else message.role
    lines.append(f"[{style[message.role]}]{label}[/] [dim]{stamp}[/dim]{flags}")
    for part in message.parts:
        if isinstance(part, TextPart):
            _print_text(console, lines, part.text, full)
        elif isinstance(part, ReasoningPart):
            text = part.text or part.summary
            if reasoning and text:
                _print_text(console, lines, text, full, "dim italic")
            else:
                what = "encrypted" if part.encrypted and not text else f"{len(text):,} chars"
                lines.append(f"[dim]▸ reasoning ({what})[/dim]")
        elif isinstance(part, ToolCallPart):
            lines += _tool_lines(part)
        elif isinstance(part, CompactionPart):
            before = f", {part.tokens_before:,} tokens before" if part.tokens_before else ""
            trigger = clean(part.trigger or "unknown", one_line=True)
            lines.append(f"[magenta]— context compacted ({trigger}{before}) —[/]")
        elif isinstance(part, FilePart):
            lines.append(f"[dim]📎 {clean(f'{part.name or part.media_type} {part.ref}', one_line=True)}[/dim]")
        elif isinstance(part, UnknownPart):
            lines.append(f"[dim]{clean(tool_summary(part.raw))}[/dim]")


def _tool_lines(call: ToolCallPart) -> list[str]:
    """A tool call's lines (markup): what it did, its first output lines or status."""
    out = [f"[blue]⚙ {clean(call.tool, one_line=True)}[/blue] {clean(tool_summary(call.input))}"]
    result = call.result
    if result is None:
        return [*out, "  [dim]→ (no result recorded)[/dim]"]
    lines = output_text(result.output).strip("\n").splitlines()
    colour = "red" if result.is_error else "dim"
    status = clean(f" [{result.status}]") if result.status != "completed" else ""
    out += [f"  [{colour}]│ {clean(line[:200])}[/]" for line in lines[:OUTPUT_LINES]]
    if len(lines) > OUTPUT_LINES:
        out.append(f"  [dim]│ … {len(lines) - OUTPUT_LINES} more lines{status}[/dim]")
    elif status or not lines:
        out.append(f"  [{colour}]→ {status.strip() or '(empty)'}[/]")
    return out


def render_message(console: Console, message: Message, reasoning: bool = False, full: bool = False) -> None:
    """Print one message as :func:`render_transcript` prints it (``tail``)."""
    lines: list[str] = []
    _render_message(console, lines, message, reasoning, full)
    _flush(console, lines)
