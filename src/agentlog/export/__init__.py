"""Exports of sessions: JSON (the model), JSONL, Markdown, self-contained HTML,
a slim transcript for another model, and a Parquet dataset.

Each format is one module writing to a text or binary stream (or a folder:
the HTML site, the Parquet dataset) from sessions whose messages come as an
iterator, so a long session is written as it is read.  Surfaces reach these
through :mod:`agentlog.service.export`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Literal, get_args

import msgspec

from agentlog.model import Message, Part, Session, TextPart

HUGE = 1 << 20
"""Characters of a text that an export writes in slices or converts on its own
(a prompt on an HTML page, a Parquet value), never copying it whole."""

Format = Literal["json", "jsonl", "md", "html", "slim", "parquet"]
FORMATS: tuple[str, ...] = get_args(Format)


DATA_FORMATS: tuple[Format, ...] = ("json", "jsonl", "parquet")
"""The formats whose exports hold every message, the hidden ones with their flags
(as ``show --json``): data to filter, where a transcript to read hides them."""


class ExportOptions(msgspec.Struct, kw_only=True, frozen=True):
    """What an export holds: ``focused`` (only prompts and replies: no reasoning,
    no tool calls, no meta messages), ``subagents`` (each session's subagents and
    forks too), ``redact`` (secrets replaced, :mod:`agentlog.redact`; on by
    default), ``max_tokens`` (the slim transcript's budget, in estimated
    tokens; ``None``: no limit), ``hidden`` (the messages a transcript hides too:
    meta, compaction summaries, replayed and abandoned copies, unknown records,
    each with its ``flags``)."""

    focused: bool = False
    subagents: bool = False
    redact: bool = True
    max_tokens: int | None = None
    hidden: bool = False


class Transcript:
    """One session to export: its ``session`` header (``messages`` left empty),
    ``messages()`` (a fresh iterator over its messages, in order, each time it is
    called, so a long session is never held whole), the ``children`` to export
    with it (subagents and forks, when asked for), ``links`` (the subagents
    of the whole tree by the tool call that started them) and ``unlinked`` (this
    session's subagents and forks that no tool call of it started: named in its
    header, as ``show`` lists them)."""

    __slots__ = ("children", "links", "messages", "session", "unlinked")

    def __init__(
        self,
        session: Session,
        messages: Callable[[], Iterator[Message]],
        children: list[Transcript] | None = None,
        links: dict[str, Session] | None = None,
        unlinked: list[Session] | None = None,
    ) -> None:
        self.session = session
        self.messages = messages
        self.children = children or []
        self.links = links or {}
        self.unlinked = unlinked or []

    def tree(self) -> Iterator[Transcript]:
        """This transcript, then its children's trees, depth first."""
        yield self
        for child in self.children:
            yield from child.tree()


def focus(messages: Iterable[Message]) -> Iterator[Message]:
    """Only prompts and replies: user and assistant messages, only their text
    parts; messages left without any are skipped.  (A filter, not a generator:
    nothing keeps the last message once the next is asked for.)"""
    return filter(None, map(_focused, messages))


def _focused(m: Message) -> Message | None:
    """``m`` with only its text parts, ``None`` when it keeps none or is no prompt or reply."""
    if m.role not in ("user", "assistant"):
        return None
    texts: list[Part] = [p for p in m.parts if isinstance(p, TextPart) and p.text.strip()]
    return msgspec.structs.replace(m, parts=texts) if texts else None


def fence(text: str, char: str = "`") -> str:
    """A Markdown code fence longer than any run of ``char`` in ``text`` (at least three)."""
    longest = max((len(run) for run in re.findall(f"{re.escape(char)}+", text)), default=0)
    return char * max(3, longest + 1)


def utc(stamp: datetime | None, fmt: str = "%Y-%m-%d %H:%M") -> str:
    """An aware time in UTC, ``fmt`` then `` UTC`` (blank when unknown): exports
    are read elsewhere, so they never show the exporting machine's zone."""
    return stamp.astimezone(UTC).strftime(fmt) + " UTC" if stamp else ""
