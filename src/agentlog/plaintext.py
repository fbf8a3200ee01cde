"""A message as plain text: what the MCP server sends and what a summary's
prompt holds (not escaped for a terminal, not redacted: callers do that)."""

from __future__ import annotations

from agentlog.model import CompactionPart, FilePart, Message, TextPart, ToolCallPart
from agentlog.present import output_text, tool_summary

TOOL_OUTPUT_CHARS = 500
"""The most characters of one tool call's output inside a message's text."""


def message_text(message: Message, output_chars: int = TOOL_OUTPUT_CHARS) -> str:
    """``message`` as text: its text parts, each tool call as ``[tool] what it
    did`` (:func:`agentlog.present.tool_summary`) with ``[output]`` (or
    ``[error]``) and at most ``output_chars`` of its output, files and
    compactions as one line each; reasoning and unknown parts left out."""
    pieces: list[str] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            pieces.append(part.text)
        elif isinstance(part, ToolCallPart):
            line = f"[{part.tool}] {tool_summary(part.input)}"
            if part.result is not None:
                output = output_text(part.result.output)
                if len(output) > output_chars:
                    output = output[: output_chars - 1] + "…"
                line += f"\n[{'error' if part.result.is_error else 'output'}] {output}"
            pieces.append(line)
        elif isinstance(part, FilePart):
            pieces.append(f"[file] {part.name or part.media_type}")
        elif isinstance(part, CompactionPart):
            pieces.append(f"[compaction] {part.summary}")
    return "\n".join(p for p in pieces if p)
