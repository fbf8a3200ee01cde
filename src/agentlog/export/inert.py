"""Log text made inert for a Markdown document: it keeps its Markdown (emphasis,
lists, tables, code) but no raw HTML, so a permissive viewer runs nothing.

CommonMark passes raw HTML through (https://spec.commonmark.org/0.31.2/#raw-html,
#html-blocks): GitHub sanitises it, many previewers do not.  Like markdown-it
with ``html: false`` (the viewer's own renderer, :mod:`agentlog.web.content`),
every ``<`` outside code is written ``&lt;`` (an entity, shown as ``<``), so
no tag, comment, or autolink (``<javascript:…>``) is ever opened; code blocks
and code spans are kept to the letter, since a renderer shows their text as
text.  A reply whose fence is left open at its end gets its closing fence, so
the rest of the transcript is not swallowed into its code block.  The result
is parsed back (markdown-it, CommonMark with tables, HTML on): in the rare
case where it still holds HTML (e.g. escaping changed which lines are a link
reference definition), the whole text is fenced as code instead.
"""

from __future__ import annotations

import re
from functools import cache

from markdown_it import MarkdownIt
from markdown_it.token import Token

from agentlog.export import fence

_BACKTICKS = re.compile(r"`+")
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_HTML = frozenset({"html_block", "html_inline"})


@cache
def _blocks() -> MarkdownIt:
    """Block structure only (inline content is not parsed), HTML off."""
    return MarkdownIt("commonmark", {"html": False}).enable("table").disable("inline")


@cache
def _check() -> MarkdownIt:
    """Every inline rule that can open or hide raw HTML (emphasis cannot)."""
    return MarkdownIt("commonmark", {"html": True}).enable("table").disable("emphasis")


def _inline(text: str) -> str:
    """``<`` escaped outside code spans (https://spec.commonmark.org/0.31.2/#code-spans:
    a run of n backticks opens a span closed by the next run of exactly n; unclosed,
    the run is literal; a backslash escapes outside spans only)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text) and text[i + 1] in _PUNCTUATION:
            out.append(text[i : i + 2])
            i += 2
        elif c == "`":
            run = _BACKTICKS.match(text, i)
            assert run is not None
            n = len(run.group())
            end = next((m.end() for m in _BACKTICKS.finditer(text, run.end()) if len(m.group()) == n), None)
            out.append(text[i:end] if end is not None else run.group())
            i = end if end is not None else run.end()
        else:
            out.append("&lt;" if c == "<" else c)
            i += 1
    return "".join(out)


def _has_html(tokens: list[Token]) -> bool:
    return any(t.type in _HTML or (t.children and _has_html(t.children)) for t in tokens)


def _closing_fence(tokens: list[Token], lines: list[str]) -> str:
    """The fence closing a top-level code block left open at the end (else "")."""
    last = next((t for t in reversed(tokens) if t.level == 0 and t.map), None)
    if last is None or last.type != "fence" or last.map is None:
        return ""
    start, end = last.map
    if any(line.strip() for line in lines[end:]):
        return ""
    close = lines[end - 1].strip()
    closed = end - start >= 2 and set(close) == {last.markup[0]} and len(close) >= len(last.markup)
    return "" if closed else last.markup


def inert_markdown(text: str) -> str:
    """``text`` (Markdown written by an agent or a user) with no raw HTML left:
    ``<`` outside code written ``&lt;``, code kept verbatim, an open fence at the
    end closed (see the module docstring); the same text fenced as code when
    that is not enough."""
    if "<" not in text and "`" not in text and "~" not in text:
        return text
    lines = text.split("\n")
    code = [False] * len(lines)
    paragraphs: dict[int, int] = {}  # first line -> end of each inline block
    tokens = _blocks().parse(text)
    for t in tokens:
        if t.map is not None and t.type in ("fence", "code_block"):
            code[t.map[0] : t.map[1]] = [True] * (t.map[1] - t.map[0])
        elif t.map is not None and t.type == "inline":
            paragraphs[t.map[0]] = t.map[1]
    out: list[str] = []
    i = 0
    while i < len(lines):
        end = paragraphs.get(i, i + 1)
        if code[i]:
            out.append(lines[i])
        elif i in paragraphs:
            out.append(_inline("\n".join(lines[i:end])))
        else:
            out.append(lines[i].replace("<", "&lt;"))
        i = end if not code[i] else i + 1
    result = "\n".join(out)
    closing = _closing_fence(tokens, lines)
    if closing:
        result = result.rstrip("\n") + "\n" + closing
    if "<" in result and _has_html(_check().parse(result)):
        return fenced(text)
    return result


def fenced(text: str) -> str:
    """``text`` as a fenced code block, fence longer than any backtick run in it."""
    f = fence(text)
    return f"{f}\n{text}\n{f}"


def code_span(text: str) -> str:
    """``text`` (one line: a path, a branch) as a code span whose backtick run is
    longer than any in it, padded when it starts or ends with a backtick."""
    ticks = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"

