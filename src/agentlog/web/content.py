"""Transcript content as safe HTML: Markdown, tool inputs and outputs, snippets.

Everything returned as :class:`~markupsafe.Markup` is escaped or sanitised here;
templates escape everything else (Jinja autoescape).
"""

from __future__ import annotations

import json
from typing import Any

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup, escape

from agentlog.index.search import MARK_END, MARK_START
from agentlog.present import output_text

#: Lines and characters of a tool output shown before "show all".
PREVIEW_LINES = 12
PREVIEW_CHARS = 2_000
#: Beyond this many characters even "show all" is cut (the page must stay usable).
FULL_CHARS = 200_000

_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
_SCHEMES = {"http", "https", "mailto"}


def markdown(text: str) -> Markup:
    """``text`` rendered as CommonMark (raw HTML disabled, so it shows as text)
    and sanitised with nh3 (only http/https/mailto links, no scripts or handlers)."""
    html = _MARKDOWN.render(text)
    return Markup(nh3.clean(html, url_schemes=_SCHEMES, link_rel="noopener noreferrer nofollow"))


def snippet(text: str) -> Markup:
    """A search snippet escaped, with its match markers as ``<mark>``."""
    escaped = str(escape(" ".join(text.split())))
    return Markup(escaped.replace(MARK_START, "<mark>").replace(MARK_END, "</mark>"))


class Output:
    """A tool output split into a preview and (when longer) the full text.

    ``text`` is the full text (cut at :data:`FULL_CHARS`), ``preview`` its first
    :data:`PREVIEW_LINES` lines / :data:`PREVIEW_CHARS` characters, ``lines`` the
    number of lines, ``cut`` whether even ``text`` was shortened."""

    def __init__(self, output: Any) -> None:
        text = output_text(output).strip("\n")
        self.lines = text.count("\n") + 1 if text else 0
        self.cut = len(text) > FULL_CHARS
        self.text = text[:FULL_CHARS]
        self.preview = "\n".join(text[:PREVIEW_CHARS].split("\n")[:PREVIEW_LINES])
        self.truncated = self.preview != self.text


def kind(part: Any) -> str:
    """A part's type tag (``text``, ``reasoning``, ``tool_call``, ``file``, ``compaction``, ``unknown``)."""
    return str(part.__struct_config__.tag)


def pretty(value: Any) -> str:
    """A tool input or raw record as indented JSON (strings as they are)."""
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False, default=str)
