"""Terminal rendering: tables and transcripts (rich, imported on first use, so
the JSON outputs never load it).  No I/O besides the console."""

from __future__ import annotations

import json
import shlex
import sys
from datetime import datetime
from typing import TYPE_CHECKING, Any

import msgspec

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

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

OUTPUT_LINES = 6
TEXT_LINES = 300
"""A prompt or reply longer than this many lines is cut in the transcript (``--full`` shows all)."""
LINE_CHARS = 2000
SUMMARY_KEYS = ("command", "cmd", "file_path", "path", "pattern", "url", "query", "description", "prompt")
INPUT_CHARS = 160


# Control characters from a log would drive the terminal (clear it, retitle it,
# hide text); bidi overrides can disguise text.  Show them as visible symbols.
_VISIBLE = {c: 0x2400 + c for c in range(0x20) if c not in (0x09, 0x0A)}
_VISIBLE.update({0x7F: 0x2421, **{c: 0xFFFD for c in range(0x80, 0xA0)}})
_VISIBLE.update({c: 0xFFFD for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))})


def clean(text: str) -> str:
    """``text`` safe for a terminal and for rich markup: control characters shown
    as symbols (ESC → ␛), bidi overrides as �, ``[`` escaped."""
    from rich.markup import escape

    return escape(text.translate(_VISIBLE))


def print_json(data: Any) -> None:
    """Indented JSON on stdout (msgspec encodes the model's structs directly)."""
    sys.stdout.buffer.write(msgspec.json.format(msgspec.json.encode(data), indent=2) + b"\n")
    sys.stdout.flush()


def plural(n: int, word: str) -> str:
    """``1 session``, ``2 sessions``."""
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def compact(n: int) -> str:
    """``1234567`` → ``1.2M``; ``5300`` → ``5.3k``; small numbers as they are."""
    for size, suffix in ((1_000_000_000, "B"), (1_000_000, "M"), (1_000, "k")):
        if n >= size:
            return f"{n / size:.1f}{suffix}"
    return str(n)


def local(stamp: datetime | None, fmt: str = "%Y-%m-%d %H:%M") -> str:
    """An aware UTC time shown in the local zone (blank when unknown)."""
    return stamp.astimezone().strftime(fmt) if stamp else ""


def short_time(stamp: datetime | None) -> str:
    """``Nov 29 19:54`` this year, ``2025 Dec 16`` before (local zone)."""
    if stamp is None:
        return ""
    here = stamp.astimezone()
    return here.strftime("%b %d %H:%M" if here.year == datetime.now().year else "%Y %b %d")


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


def tilde(path: str, home: str) -> str:
    """``/home/me/.claude/projects`` → ``~/.claude/projects`` when under ``home``
    (``home`` itself → ``~``)."""
    base = home.rstrip("/")
    if home and (path == base or path.startswith(base + "/")):
        return "~" + path[len(base) :]
    return path


def project_name(cwd: str | None) -> str:
    return cwd.rstrip("/").rsplit("/", 1)[-1] if cwd else ""


def plain_table() -> Table:
    """A rich table without borders or edge padding, bold headers."""
    from rich.table import Table

    return Table(box=None, pad_edge=False, header_style="bold")


def sessions_table(sessions: list[Session], children: dict[str, int], width: int = 80) -> Table:
    """Sessions as a table that fits ``width`` columns: the title takes what is left."""
    table = plain_table()
    table.add_column("started", no_wrap=True, min_width=12)
    agents = [s.agent.replace("_code", "") for s in sessions]
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
        title = ("↳ " if s.parent_key else "") + (s.title or "").replace("\n", " ")[:300]
        subs = children.get(s.key, 0)
        title = f"[dim]+{subs}[/dim] " + clean(title) if subs else clean(title)
        if s.prompt_only:
            title = "[yellow]prompts only[/yellow] " + title
        elif s.archived:
            title = "[yellow]archived[/yellow] " + title
        table.add_row(
            short_time(s.started_at),
            agents[n],
            short_id(s.id),
            clean(projects[n]),
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


def _short(value: Any, limit: int = INPUT_CHARS) -> str:
    """One line that says what a tool call did: its command, path, pattern, URL…"""
    if isinstance(value, dict):
        for key in SUMMARY_KEYS:
            field = value.get(key)
            if isinstance(field, list) and field and all(isinstance(x, str) for x in field):
                # Codex shell calls: ["bash", "-lc", "<script>"] shows the script.
                field = field[2] if len(field) == 3 and field[1] in ("-lc", "-c") else shlex.join(field)
            if isinstance(field, str):
                value = field
                break
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "\n".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in output)
    return "" if output is None else json.dumps(output, ensure_ascii=False)


def render_transcript(
    console: Console, session: Session, show_all: bool = False, reasoning: bool = False, full: bool = False
) -> None:
    """Print ``session`` as a readable transcript."""
    console.print(f"[bold]{clean(_cut_title(session.title or session.id))}[/bold]")
    facts = [session.key, session.cwd or "", ", ".join(session.models)]
    console.print("[dim]" + clean(" · ".join(f for f in facts if f)) + "[/dim]")
    if session.parent_key:
        via = f" via {session.parent_tool_call_id}" if session.parent_tool_call_id else ""
        console.print(f"[dim]{session.kind} of {clean(session.parent_key)}{clean(via)}[/dim]")
    console.print(
        f"[dim]{local(session.started_at)} → {local(session.ended_at)} · {usage_line(session.usage)}[/dim]"
    )
    if session.resume_command:
        console.print(f"[dim]resume: {clean(session.resume_command)}[/dim]")
    if session.prompt_only:
        console.print(f"[yellow]{PROMPT_ONLY_NOTE}[/yellow]")
    elif session.archived:
        console.print(f"[yellow]{ARCHIVED_NOTE}[/yellow]")
    hidden = 0
    for message in session.messages:
        if message.hidden and not show_all:
            hidden += 1
            continue
        console.print()
        _render_message(console, message, reasoning, full)
    if hidden:
        console.print(f"\n[dim]{hidden} meta/injected messages hidden (--all shows them)[/dim]")


ARCHIVED_NOTE = "archived: its log is gone (or cannot be read); kept by the index until `agentlog prune`"
PROMPT_ONLY_NOTE = (
    "prompts only: the transcript is gone; these are your prompts from the agent's prompt history"
)


def _cut_title(title: str) -> str:
    """A title on one line of at most 200 characters (a first prompt can be megabytes)."""
    line = " ".join(title[:1000].split())
    return line if len(line) <= 200 else line[:199] + "…"


def _cut(text: str, full: bool) -> str:
    """At most :data:`TEXT_LINES` lines of :data:`LINE_CHARS` characters, saying what was cut."""
    if full:
        return text
    lines = text.splitlines()
    shown = [line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + " …" for line in lines[:TEXT_LINES]]
    if len(lines) > TEXT_LINES:
        shown.append(f"… {len(lines) - TEXT_LINES:,} more lines (--full shows them)")
    return "\n".join(shown)


def _render_message(console: Console, message: Message, reasoning: bool, full: bool) -> None:
    stamp = local(message.timestamp, "%H:%M:%S")
    flags = f" [yellow]{' '.join(message.flags)}[/yellow]" if message.flags else ""
    style = {"user": "bold cyan", "assistant": "bold green", "system": "bold magenta", "tool": "bold blue"}
    label = "you" if message.role == "user" and not message.flags else message.role
    console.print(f"[{style[message.role]}]{label}[/] [dim]{stamp}[/dim]{flags}")
    for part in message.parts:
        if isinstance(part, TextPart):
            console.print(clean(_cut(part.text.strip(), full)))
        elif isinstance(part, ReasoningPart):
            text = part.text or part.summary
            if reasoning and text:
                console.print(f"[dim italic]{clean(_cut(text.strip(), full))}[/]")
            else:
                what = "encrypted" if part.encrypted and not text else f"{len(text):,} chars"
                console.print(f"[dim]▸ reasoning ({what})[/dim]")
        elif isinstance(part, ToolCallPart):
            _render_tool(console, part)
        elif isinstance(part, CompactionPart):
            before = f", {part.tokens_before:,} tokens before" if part.tokens_before else ""
            console.print(f"[magenta]— context compacted ({part.trigger or 'unknown'}{before}) —[/]")
        elif isinstance(part, FilePart):
            console.print(f"[dim]📎 {clean(part.name or part.media_type)} {clean(part.ref)}[/dim]")
        elif isinstance(part, UnknownPart):
            console.print(f"[dim]{clean(_short(part.raw))}[/dim]")


def _render_tool(console: Console, call: ToolCallPart) -> None:
    console.print(f"[blue]⚙ {clean(call.tool)}[/blue] {clean(_short(call.input))}")
    result = call.result
    if result is None:
        console.print("  [dim]→ (no result recorded)[/dim]")
        return
    lines = _output_text(result.output).strip("\n").splitlines()
    colour = "red" if result.is_error else "dim"
    status = f" [{result.status}]" if result.status != "completed" else ""
    for line in lines[:OUTPUT_LINES]:
        console.print(f"  [{colour}]│ {clean(line[:200])}[/]")
    if len(lines) > OUTPUT_LINES:
        console.print(f"  [dim]│ … {len(lines) - OUTPUT_LINES} more lines{status}[/dim]")
    elif status or not lines:
        console.print(f"  [{colour}]→ {clean(status.strip() or '(empty)')}[/]")
