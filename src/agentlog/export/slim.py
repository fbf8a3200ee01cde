"""The slim transcript: a session as compact text for another model to read.

Prompts and replies as they are (each cut at :data:`TEXT_CHARS`), one line per
tool call (its name, what it did, its status and the first line of its output
cut at :data:`OUTPUT_CHARS`), no reasoning, no meta messages — the "give
another agent the session without its huge tool bodies" recipe.  With a token
budget the opening prompt is kept and as many of the latest lines as fit;
tokens are estimated as :data:`CHARS_PER_TOKEN` characters each (OpenAI's rule
of thumb for English text, https://platform.openai.com/tokenizer), never
counted by a model's tokenizer.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TextIO

from agentlog.export import Transcript, utc
from agentlog.model import CompactionPart, Message, TextPart, ToolCallPart
from agentlog.present import output_text, tool_summary

TEXT_CHARS = 4_000
OUTPUT_CHARS = 120
CHARS_PER_TOKEN = 4
_WHO = {"user": "USER", "assistant": "ASSISTANT", "system": "SYSTEM", "tool": "TOOL"}


def tokens(text: str) -> int:
    """The estimated tokens of ``text``: its characters / :data:`CHARS_PER_TOKEN`, rounded up."""
    return -(-len(text) // CHARS_PER_TOKEN)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def call_line(part: ToolCallPart) -> str:
    """``  [bash] ls -la → ok: total 8`` — one line for a tool call."""
    result = part.result
    if result is None:
        outcome = "no result"
    else:
        first = next((line.strip() for line in output_text(result.output).splitlines() if line.strip()), "")
        outcome = ("error" if result.is_error else "ok") + (f": {_cut(first, OUTPUT_CHARS)}" if first else "")
    return f"  [{part.tool}] {tool_summary(part.input)} → {outcome}"


def message_lines(message: Message) -> Iterator[str]:
    """A message's lines: ``WHO: text`` blocks and one line per tool call."""
    for part in message.parts:
        if isinstance(part, TextPart) and part.text.strip():
            yield f"{_WHO.get(message.role, message.role.upper())}: {_cut(part.text.strip(), TEXT_CHARS)}"
        elif isinstance(part, ToolCallPart):
            yield call_line(part)
        elif isinstance(part, CompactionPart):
            yield "[context compacted]"


def session_lines(t: Transcript) -> list[str]:
    """A session's header line and the lines of its messages (and of its exported children)."""
    s = t.session
    lines = [f"# {s.title or s.id} ({s.agent}, {utc(s.started_at) or 'no time'}, {s.key})"]
    for message in t.messages():
        lines += message_lines(message)
    for child in t.children:
        lines.append(f"## subagent: {child.session.description or child.session.title or child.session.id}")
        lines += session_lines(child)[1:]
    return lines


def fit(lines: list[str], max_tokens: int) -> list[str]:
    """``lines`` within ``max_tokens`` (one token per newline counted too): the
    header and the first line (cut when it alone is over), a line saying how many were left out, then the
    latest lines that fit; all of them when they fit."""
    cost = [tokens(line) + 1 for line in lines]
    if sum(cost) <= max_tokens:
        return lines
    room = max(max_tokens - cost[0] - 14, 1) * CHARS_PER_TOKEN  # 12 for the "left out" line
    head = [lines[0], *(_cut(line, room) for line in lines[1:2])]
    budget = max_tokens - sum(tokens(line) + 1 for line in head) - 12
    tail: list[str] = []
    for line, c in zip(reversed(lines[2:]), reversed(cost[2:]), strict=True):
        if c > budget:
            break
        tail.append(line)
        budget -= c
    tail.reverse()
    left_out = len(lines) - len(head) - len(tail)
    return [*head, f"[… {left_out} lines left out to fit {max_tokens} tokens]", *tail]


def write_slim(transcripts: Iterable[Transcript], out: TextIO, max_tokens: int | None) -> None:
    """Each transcript as slim text, blank line between sessions; each fitted to ``max_tokens``."""
    for i, t in enumerate(transcripts):
        lines = session_lines(t)
        if max_tokens is not None:
            lines = fit(lines, max_tokens)
        out.write(("\n" if i else "") + "\n".join(lines) + "\n")
