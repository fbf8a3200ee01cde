"""The Markdown export: a readable transcript for an issue, a wiki or a chat.

Prompts and replies as text; reasoning, tool calls and compaction summaries
each folded in a ``<details>`` block (GitHub-flavoured Markdown renders them,
https://github.github.com/gfm/#html-blocks); edits and writes as unified diffs
(the shared renderer's :func:`agentlog.web.content.file_edits`), todo lists
as task lists; long outputs cut at :data:`OUTPUT_CHARS`.  Text inside a
``<summary>`` is escaped as HTML, code is fenced with a fence longer than any
in it, and text written as Markdown (replies, reasoning, summaries) is made
inert by :func:`agentlog.export.inert.inert_markdown`: no raw HTML from a log
reaches the document.  Subagents are linked at the call that started them and, when exported
with their parent, follow it as sections of their own.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from html import escape
from typing import TextIO

from agentlog.export import Transcript, fence, utc
from agentlog.export.inert import code_span, inert_markdown
from agentlog.model import (
    CompactionPart,
    FilePart,
    Message,
    Part,
    ReasoningPart,
    Session,
    TextPart,
    ToolCallPart,
    UnknownPart,
)
from agentlog.present import PIECE, output_text, tool_summary
from agentlog.web.content import file_edits, input_text, pretty, todos

OUTPUT_CHARS = 20_000
"""Characters of a tool output kept (the rest is said to be cut)."""
_ROLES = {"user": "You", "assistant": "Assistant", "system": "System", "tool": "Tool"}
_CHECK = {"completed": "x", "in_progress": "-"}


def _code(text: str, language: str = "") -> str:
    f = fence(text)
    return f"{f}{language}\n{text}\n{f}\n"


def _details(summary: str, body: str) -> str:
    return f"<details><summary>{escape(summary)}</summary>\n\n{body}\n</details>\n"


def _one_line(text: str) -> str:
    """Log text shown inline (a title, a todo item, a model): one line, inert."""
    return inert_markdown(" ".join(text.split()))


def _cut(text: str) -> str:
    if len(text) <= OUTPUT_CHARS:
        return text
    return text[:OUTPUT_CHARS] + f"\n… ({len(text) - OUTPUT_CHARS:,} more characters cut)"


def tool_call(part: ToolCallPart, links: dict[str, Session]) -> str:
    """A tool call as a ``<details>`` block: its input (diffs for edits, a task
    list for todos, readable text otherwise) and its output."""
    status = ""
    if part.result is None:
        status = " (no result)"
    elif part.result.is_error:
        status = " (error)"
    body: list[str] = []
    edits = file_edits(part)
    items = todos(part)
    if edits:
        body += [f"{code_span(e.path)}\n\n" + _code(e.diff.rstrip("\n"), "diff") for e in edits]
    elif items:
        body.append("\n".join(f"- [{_CHECK.get(i.status, ' ')}] {_one_line(i.text)}" for i in items) + "\n")
    elif part.input not in (None, {}, ""):
        body.append(_code(input_text(part.input)))
    if part.result is not None:
        output = output_text(part.result.output).strip("\n")
        body.append("Output:\n\n" + (_code(_cut(output)) if output else "(empty)\n"))
    child = links.get(part.call_id)
    if child is not None:
        body.append(f"→ subagent **{_child_name(child)}** ({code_span(child.key)})\n")
    return _details(f"{part.tool}: {tool_summary(part.input)}{status}", "\n".join(body))


def part_markdown(part: Part, role: str, links: dict[str, Session]) -> Iterator[str]:
    """One part as Markdown (a block ending in a newline), in pieces (a prompt's
    text in slices: :func:`_code_pieces`)."""
    if isinstance(part, TextPart) and role != "assistant":
        yield from _code_pieces(part.text)
    else:
        yield _part_block(part, links)


def _part_block(part: Part, links: dict[str, Session]) -> str:
    """A part other than a prompt's text as one Markdown block."""
    if isinstance(part, TextPart):
        return inert_markdown(part.text.rstrip()) + "\n"
    if isinstance(part, ReasoningPart):
        text = part.text or part.summary
        return _details("reasoning" + ("" if text else " (encrypted)"), inert_markdown(text))
    if isinstance(part, ToolCallPart):
        return tool_call(part, links)
    if isinstance(part, CompactionPart):
        trigger = f" ({part.trigger})" if part.trigger else ""
        if not part.summary:
            return f"*context compacted{trigger}*\n"
        return _details(f"context compacted{trigger}", inert_markdown(part.summary))
    if isinstance(part, FilePart):
        kind = "image" if part.media_type.startswith("image") else "file"
        return f"*{kind}: {escape(part.name or part.media_type or '(no name recorded)')}*\n"
    assert isinstance(part, UnknownPart)
    return _details("unknown record", _code(pretty(part.raw)))


def message_markdown(message: Message, number: int, links: dict[str, Session]) -> Iterator[str]:
    """A message: a ``###`` heading (number, who, time, model) and its parts, in
    pieces to write one after the other (:func:`part_markdown`)."""
    who = _ROLES.get(message.role, message.role)
    when = f" · {utc(message.timestamp, '%Y-%m-%d %H:%M:%S')}" if message.timestamp else ""
    model = f" · {_one_line(message.model)}" if message.model else ""
    yield f"### {number}. {who}{when}{model}\n\n"
    for i, p in enumerate(message.parts):
        if i:
            yield "\n"
        yield from part_markdown(p, message.role, links)
    yield "\n"


def _code_pieces(text: str) -> Iterator[str]:
    """:func:`_code` of ``text`` without its trailing line breaks, its text in
    slices of :data:`~agentlog.present.PIECE` characters: a 64 MiB prompt is
    never copied whole (the fence's search reads it in place)."""
    end = len(text)
    while end and text[end - 1] == "\n":
        end -= 1
    f = fence(text)
    yield f"{f}\n"
    for start in range(0, end, PIECE):
        yield text[start : min(start + PIECE, end)]
    yield f"\n{f}\n"


def header(s: Session, level: int = 1, unlinked: Sequence[Session] = ()) -> str:
    """The session's title and facts; ``unlinked``: its subagents and forks that no
    tool call of it started (:attr:`Transcript.unlinked`)."""
    title = s.title or s.id
    facts = [
        ("agent", f"{s.agent} {s.agent_version or ''}".strip()),
        ("model", _one_line(", ".join(s.models)) if s.models else "–"),
        ("folder", code_span(s.cwd) if s.cwd else "–"),
        ("branch", code_span(s.git_branch) if s.git_branch else "–"),
        ("started", utc(s.started_at) or "–"),
        ("session", code_span(s.key)),
        (
            "tokens",
            f"{s.usage.total_tokens:,} (input {s.usage.input_tokens:,}, cache read "
            f"{s.usage.cache_read_tokens:,}, cache write {s.usage.cache_write_tokens:,}, output {s.usage.output_tokens:,})",
        ),
    ]
    if s.parent_key:
        facts.insert(
            0, (s.kind, f"of {code_span(s.parent_key)}" + (f" ({s.subagent_type})" if s.subagent_type else ""))
        )
    if unlinked:
        facts.append(("subagents", "; ".join(_child(c) for c in unlinked)))
    lines = "\n".join(f"- **{k}**: {v}" for k, v in facts)
    return f"{'#' * level} {_one_line(title)}\n\n{lines}\n\n"


def _child(c: Session) -> str:
    return f"{code_span(c.key)} ({c.subagent_type or c.kind}) {_child_name(c)}"


def _child_name(c: Session) -> str:
    """What a subagent or fork is called: its description, title or id, on one line."""
    return _one_line(c.description or c.title or c.id)


def write_markdown(transcripts: Iterable[Transcript], out: TextIO) -> None:
    """Each transcript (and its exported children, as sections after it) as Markdown."""
    first = True
    for t in transcripts:
        for s in t.tree():
            if not first:
                out.write("\n---\n\n")
            first = False
            out.write(header(s.session, 1 if s is t else 2, s.unlinked))
            number = 0  # not enumerate: it keeps the last message while the next is read
            for message in s.messages():
                number += 1  # noqa: SIM113
                for piece in message_markdown(message, number, t.links):
                    out.write(piece)
                del message
