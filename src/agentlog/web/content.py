"""Transcript content as safe HTML: Markdown, tool inputs and outputs, snippets.

Everything returned as :class:`~markupsafe.Markup` is escaped or sanitised here;
templates escape everything else (Jinja autoescape).
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from typing import Any

import msgspec
import nh3
import pygments
from markdown_it import MarkdownIt
from markupsafe import Markup, escape
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.util import ClassNotFound

from agentlog.index.search import MARK_END, MARK_START
from agentlog.model import FilePart, ToolCallPart
from agentlog.present import cut, inert_html_text, output_text

#: Lines and characters of a tool output shown before "show all".
PREVIEW_LINES = 12
PREVIEW_CHARS = 2_000
#: Beyond this many characters even "show all" is cut (the page must stay usable).
FULL_CHARS = 200_000

_SCHEMES = {"http", "https", "mailto"}
_TAGS = set(nh3.ALLOWED_TAGS) - {"img"}
"""Tags Markdown may produce: nh3's defaults without images (an image in a reply
would load from the network; inline images come from tool results only)."""
_ATTRIBUTES = {**nh3.ALLOWED_ATTRIBUTES, "span": {"class"}, "code": {"class"}}


def _fenced(code: str, language: str, _attrs: Any) -> str:
    """A fenced code block's body highlighted when its info string names a pygments lexer."""
    return str(highlight(code, language=language or None)) if language else ""


_MARKDOWN = MarkdownIt("commonmark", {"html": False, "highlight": _fenced}).enable(["table", "strikethrough"])


_MARKUP = re.compile(
    r"[*_`#\[\]<>!|~\\&:=]|[^\S \n]|^ *(?:[-+]|\d+[.)])(?: |$)|^ *-[- ]*$|^ {4}| {2,}$", re.MULTILINE
)
"""Anything CommonMark could read as markup (emphasis, code, links, HTML, entities,
autolinks, headings and setext underlines, lists, indented code, hard breaks)
or whitespace other than spaces and newlines;
text without any is plain paragraphs."""


def _paragraphs(text: str) -> str:
    """Plain ``text`` as CommonMark renders it: ``<p>`` per blank-line-separated
    block, lines stripped (a test holds it equal to the full renderer)."""
    blocks = re.split(r"\n *\n", text)
    return "".join(
        "<p>" + "\n".join(line.strip(" ") for line in block.strip(" \n").split("\n")) + "</p>\n"
        for block in blocks
        if block.strip(" \n")
    )


def markdown(text: str) -> Markup:
    """``text`` rendered as CommonMark (raw HTML disabled, so it shows as text),
    fenced code highlighted, and sanitised with nh3 (only http/https/mailto
    links, no images, scripts or handlers; ``class`` kept on ``span``/``code``).
    Text with no markup character at all is cut into paragraphs directly (the
    parser and sanitiser cost a millisecond a message)."""
    if not _MARKUP.search(text):
        return Markup(_paragraphs(text))
    html = _MARKDOWN.render(text)
    return Markup(
        nh3.clean(
            html,
            tags=_TAGS,
            attributes=_ATTRIBUTES,
            url_schemes=_SCHEMES,
            link_rel="noopener noreferrer nofollow",
        )
    )


def inert(value: Any) -> Markup:
    """The one way a value reaches a page (the renderer's Jinja ``finalize``, in
    the viewer and the HTML export): escaped unless it is already
    :class:`~markupsafe.Markup` (made here), then its control characters shown as
    symbols (:func:`agentlog.present.inert_html_text`): an escape sequence from a
    log (``ESC ]0;…BEL``) is written neither to a file nor to standard output."""
    return Markup(inert_html_text(str(escape(value))))


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


# --- edits as diffs, todo lists, images, highlighting ---------------------------

#: Files of a Codex ``apply_patch`` envelope (``*** Add File: p`` / ``Update`` / ``Delete``),
#: https://github.com/openai/codex codex-rs/apply-patch/apply_patch_tool_instructions.md.
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.MULTILINE)
_DIFF_CONTEXT = 3
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""Media types shown inline (never SVG, which can carry script)."""
_BASE64 = re.compile(r"[A-Za-z0-9+/\r\n]+={0,2}")


class FileEdit(msgspec.Struct, frozen=True):
    """One file a tool call changed: its ``path`` and the change as a unified
    ``diff`` (``---``/``+++`` headers, ``@@`` hunks)."""

    path: str
    diff: str


def _side(side: str, path: str) -> str:
    """``a/src/x.py`` for a relative path, ``a/home/me/x.py`` for an absolute one (git's names)."""
    return side + path if path.startswith("/") else f"{side}/{path}"


def _unified(path: str, old: str, new: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        _side("a", path),
        _side("b", path),
        n=_DIFF_CONTEXT,
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _patch_text(value: Any) -> str | None:
    """The ``apply_patch`` envelope in a tool input (a string, ``{"input": …}``,
    ``{"patch": …}`` or a ``["apply_patch", …]`` command; the Codex adapter's
    one-file ``{"file_path", "patch"}`` pieces hold ``*** Update File:`` and
    their hunks), else ``None``."""
    candidates = [value]
    if isinstance(value, dict):
        candidates += [value.get("input"), value.get("patch"), value.get("command")]
    for c in candidates:
        if isinstance(c, list):
            c = next((x for x in c if isinstance(x, str) and "*** Begin Patch" in x), None)
        if isinstance(c, str) and ("*** Begin Patch" in c or _PATCH_FILE.search(c)):
            return c
    return None


def _patch_edits(patch: str) -> list[FileEdit]:
    """A Codex patch envelope as one unified diff per file (its hunks as written)."""
    edits: list[FileEdit] = []
    for line in patch.splitlines():
        found = _PATCH_FILE.match(line)
        if found:
            verb, path = found.groups()
            old = "/dev/null" if verb == "Add" else _side("a", path)
            new = "/dev/null" if verb == "Delete" else _side("b", path)
            head = f"--- {old}\n+++ {new}\n"
            edits.append(FileEdit(path, head))
        elif edits and not line.startswith("*** "):
            edits[-1] = FileEdit(edits[-1].path, edits[-1].diff + line + "\n")
    return edits


def file_edits(part: ToolCallPart) -> list[FileEdit]:
    """The files a tool call changes, as diffs: Claude Code ``Edit`` (``file_path``,
    ``old_string``, ``new_string``), ``MultiEdit`` (``edits``), ``Write``/Gemini
    ``write_file``/Cline ``write_to_file`` (``content``: a diff from nothing),
    Codex ``apply_patch`` (its envelope); empty for any other call."""
    value = part.input
    patch = _patch_text(value)
    if patch is not None:
        return _patch_edits(patch)
    if part.tool not in ("edit", "write") or not isinstance(value, dict):
        return []
    path = _text(value.get("file_path")) or _text(value.get("path")) or _text(value.get("filePath")) or "file"
    if isinstance(value.get("edits"), list):
        pieces = [e for e in value["edits"] if isinstance(e, dict)]
        diff = "".join(_unified(path, _text(e.get("old_string")), _text(e.get("new_string"))) for e in pieces)
        return [FileEdit(path, diff)] if diff else []
    if "old_string" in value or "new_string" in value:
        diff = _unified(path, _text(value.get("old_string")), _text(value.get("new_string")))
        return [FileEdit(path, diff)] if diff else []
    if isinstance(value.get("content"), str):
        return [FileEdit(path, _unified(path, "", value["content"]))]
    return []


class Todo(msgspec.Struct, frozen=True):
    """One item of a todo list: its ``text`` and ``status`` (``pending``,
    ``in_progress``, ``completed``)."""

    text: str
    status: str


def todos(part: ToolCallPart) -> list[Todo]:
    """A todo tool call's list: Claude Code ``TodoWrite`` (``todos``: ``content``,
    ``status``), Codex ``update_plan`` (``plan``: ``step``, ``status``); empty otherwise."""
    if part.tool != "todo" or not isinstance(part.input, dict):
        return []
    items = part.input.get("todos") or part.input.get("plan") or []
    return [
        Todo(_text(i.get("content")) or _text(i.get("step")) or _text(i.get("text")), _text(i.get("status")))
        for i in (items if isinstance(items, list) else [])
        if isinstance(i, dict)
    ]


def images(output: Any) -> list[str]:
    """``data:`` URIs of the images in a tool output's content blocks (Anthropic
    ``{"type": "image", "source": {"type": "base64", "media_type", "data"}}``), only
    for :data:`IMAGE_TYPES` and data that is base64."""
    found: list[str] = []
    for block in output if isinstance(output, list) else []:
        source = block.get("source") if isinstance(block, dict) and block.get("type") == "image" else None
        if not isinstance(source, dict) or source.get("type") != "base64":
            continue
        media, data = source.get("media_type"), source.get("data")
        if media in IMAGE_TYPES and isinstance(data, str) and _BASE64.fullmatch(data):
            found.append(f"data:{media};base64,{''.join(data.split())}")
    return found


def file_image(part: FilePart) -> str | None:
    """A file part's ``ref`` when it is an inline image (``data:`` URI of an :data:`IMAGE_TYPES` type)."""
    head, _, data = part.ref.partition(",")
    if head.startswith("data:") and head.removeprefix("data:").removesuffix(";base64") in IMAGE_TYPES:
        return part.ref if head.endswith(";base64") and _BASE64.fullmatch(data) else None
    return None


_FORMATTER = HtmlFormatter(nowrap=True, cssclass="hl")
HIGHLIGHT_CHARS = 100_000
"""Longer texts are shown plain (highlighting them would cost more than it helps)."""


def highlight(code: str, path: str | None = None, language: str | None = None) -> Markup:
    """``code`` as HTML highlighted by pygments (classes styled by :func:`highlight_css`),
    the lexer chosen by ``language`` (a pygments alias, e.g. ``diff``) or the
    file name ``path``; escaped plain text when neither names a lexer or the text
    is longer than :data:`HIGHLIGHT_CHARS`."""
    lexer = None
    if len(code) <= HIGHLIGHT_CHARS:
        lexer = (
            _lexer(language, None) if language else _lexer(None, path.rsplit("/", 1)[-1]) if path else None
        )
    if lexer is None:
        return escape(code)
    return Markup(pygments.highlight(code, lexer, _FORMATTER))


@functools.lru_cache(maxsize=256)
def _lexer(language: str | None, name: str | None) -> Lexer | None:
    """The pygments lexer named ``language`` or for the file ``name`` (cached), or ``None``."""
    try:
        if language:
            return get_lexer_by_name(language)
        return get_lexer_for_filename(name) if name else None
    except ClassNotFound:
        return None


def highlight_css() -> str:
    """The pygments rules for ``.hl`` code: a light style, and a dark one under
    ``prefers-color-scheme: dark``."""
    light = HtmlFormatter(style="default").get_style_defs(".hl")  # type: ignore[no-untyped-call]
    dark = HtmlFormatter(style="monokai").get_style_defs(".hl")  # type: ignore[no-untyped-call]
    return f"{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n"


def input_text(value: Any) -> str:
    """A tool input for reading: a string as it is; an object as indented JSON
    except that multi-line string values are shown as their lines under their key."""
    if not isinstance(value, dict):
        return pretty(value)
    lines: list[str] = []
    for key, field in value.items():
        if isinstance(field, str) and "\n" in field:
            lines.append(f"{key}:")
            lines += ["  " + line for line in field.split("\n")]
        else:
            shown = field if isinstance(field, str) else json.dumps(field, ensure_ascii=False, default=str)
            lines.append(f"{key}: {shown}")
    return "\n".join(lines)


def capped(text: Any) -> str:
    """A message's text (a prompt, a reply, reasoning, a summary, a tool input)
    as a page shows it: its first :data:`FULL_CHARS` characters (a 60-million-character
    prompt was sent to the browser whole); :func:`cut_note` says what was left out."""
    return (text if isinstance(text, str) else str(text or ""))[:FULL_CHARS]


def cut_note(text: Any) -> Markup:
    """The line under a :func:`capped` text saying how much was cut (empty when nothing was)."""
    n = len(text) if isinstance(text, str) else 0
    if n <= FULL_CHARS:
        return Markup("")
    return Markup(f'<p class="dim cut">(cut at {FULL_CHARS:,} of {n:,} characters)</p>')


FILTERS: dict[str, Any] = {
    "capped": capped,
    "cut_note": cut_note,
    "cut": cut,
    "markdown": markdown,
    "kind": kind,
    "pretty": pretty,
    "input_text": input_text,
    "file_edits": file_edits,
    "todos": todos,
    "images": images,
    "file_image": file_image,
    "highlight": highlight,
}
"""The renderer's Jinja filters (the viewer and the HTML export register the same)."""
GLOBALS: dict[str, Any] = {"Output": Output, "ToolCallPart": ToolCallPart}
"""The renderer's Jinja globals."""
