"""Presentation helpers every surface shares (the CLI and the web viewer):
numbers, times, folder names, tool-call summaries, tool output as text, and
:func:`clean`, the one escape for log text printed to a terminal.

Pure string functions; nothing here draws or imports a surface.
"""

from __future__ import annotations

import functools
import json
import re
import shlex
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from agentlog import lazy

# Control characters from a log would drive the terminal (clear it, retitle it,
# hide text); bidi overrides can disguise text.  Shown as visible symbols.
_VISIBLE: dict[int, int | str] = {c: 0x2400 + c for c in range(0x20) if c not in (0x09, 0x0A)}
_VISIBLE.update({0x7F: 0x2421, **{c: 0xFFFD for c in range(0x80, 0xA0)}})
_VISIBLE.update({c: 0xFFFD for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))})
_ONE_LINE = {**_VISIBLE, 0x09: " ", 0x0A: " "}
_IN_HTML = {c: v for c, v in _VISIBLE.items() if c != 0x0D}
_UNSAFE_IN_HTML = lazy.pattern("[" + "".join(re.escape(chr(c)) for c in _IN_HTML) + "]")

SUMMARY_KEYS = ("command", "cmd", "file_path", "path", "pattern", "url", "query", "description", "prompt")
INPUT_CHARS = 160


def shown_as(char: str) -> str:
    """What :func:`clean` shows ``char`` as: its symbol (``\x02`` → ``␂``), or
    ``char`` itself when it prints as written."""
    return char.translate(_VISIBLE)


def clean(text: str, one_line: bool = False, markup: bool = True) -> str:
    """Log text (a title, folder, model or tool name, a snippet, a path, an
    error) made safe to print on a terminal: C0 and C1 control characters shown
    as symbols (ESC → ``␛``, CR → ``␍``; newline and tab kept, or turned into
    spaces with ``one_line``, for a table cell or a one-line entry), bidi
    overrides as ``�``, and rich markup escaped (``[bold]`` prints as written;
    ``markup=False`` for text printed without rich).  Every piece of log text
    the CLI prints goes through here."""
    safe = text.translate(_ONE_LINE if one_line else _VISIBLE)
    if not markup:
        return safe
    from rich.markup import escape

    return escape(safe)


PIECE = 1 << 16
"""Characters of log text :func:`clean_pieces` cleans at a time."""
_NOT_SPACE = lazy.pattern(r"\S")


def clean_pieces(text: str, size: int | None = None) -> Iterator[str]:
    """``clean(text.strip(), markup=False)`` in pieces of at most ``size``
    (:data:`PIECE`) characters, each cut after the last line break of its second half when
    there is one: joined, they are that string, which is never made whole
    (``show --full`` of a 64 MiB prompt held it five times).  :func:`clean`
    maps each character on its own, so a piece's edge changes nothing."""
    size = size or PIECE
    found = _NOT_SPACE.search(text)
    if found is None:
        return
    start, end = found.start(), len(text)
    while text[end - 1].isspace():
        end -= 1
    while start < end:
        stop = min(start + size, end)
        if stop < end:
            brk = text.rfind("\n", start + size // 2, stop)
            stop = brk + 1 if brk >= 0 else stop
        yield clean(text[start:stop], markup=False)
        start = stop


def inert_html_text(text: str) -> str:
    """``text`` (log text, or HTML made from it) with the characters :func:`clean`
    shows as symbols shown the same way, carriage returns kept: the C0 and C1
    control characters other than tab, newline and CR — not allowed in HTML text
    (https://html.spec.whatwg.org/multipage/syntax.html#text) — and bidi
    overrides.  A page saved from a log then holds nothing a terminal would run
    (``cat page.html``) or a reader would see disguised."""
    return text.translate(_IN_HTML) if _UNSAFE_IN_HTML.search(text) else text


LABEL_CHARS = 200
"""The longest a name read from a log (a model id, a title) is printed in a
header or a warning: a damaged log's 100,000-character model id filled the screen."""


def cut(text: str, limit: int = LABEL_CHARS) -> str:
    """``text`` whole when it has at most ``limit`` characters, else its first
    ``limit - 1`` and ``…``."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


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


def tilde(path: str, home: str) -> str:
    """``/home/me/.claude/projects`` → ``~/.claude/projects`` when under ``home``
    (``home`` itself → ``~``)."""
    base = home.rstrip("/")
    if home and (path == base or path.startswith(base + "/")):
        return "~" + path[len(base) :]
    return path


def agent_label(slug: str) -> str:
    """Agent ``slug`` as a table's agent column shows it: without ``_code``
    (``claude_code`` → ``claude``), unless that is another agent's slug
    (``kimi_code`` stays whole: ``kimi`` is Kimi CLI)."""
    short = slug.removesuffix("_code")
    return slug if short != slug and short in _slugs() else short


@functools.cache
def _slugs() -> frozenset[str]:
    from agentlog.adapters import registered

    return frozenset(a.slug for a in registered())


def project_name(cwd: str | None) -> str:
    """A folder's last name (``/home/me/src/weather``, ``C:\\src\\weather`` →
    ``weather``; blank when unknown): :func:`agentlog.rules.project_name`."""
    from agentlog import rules  # only here: the status line cleans text without loading msgspec

    return rules.project_name(cwd)


def tool_summary(value: Any, limit: int = INPUT_CHARS) -> str:
    """One line of at most ``limit`` characters that says what a tool call did:
    its command, path, pattern, URL… (a Codex ``["bash", "-lc", script]`` shows
    the script); a checklist (Claude's TodoWrite ``todos``, Codex's update_plan
    ``plan``) as its counts by status; other inputs as compact JSON."""
    if isinstance(value, dict):
        items = value.get("todos", value.get("plan"))
        if isinstance(items, list) and items and all(isinstance(x, dict) for x in items):
            return checklist_counts(items)
        for key in SUMMARY_KEYS:
            field = value.get(key)
            if isinstance(field, list) and field and all(isinstance(x, str) for x in field):
                field = field[2] if len(field) == 3 and field[1] in ("-lc", "-c") else shlex.join(field)
            if isinstance(field, str):
                value = field
                break
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def checklist_counts(items: list[dict[str, Any]]) -> str:
    """``"4 items: 1 completed, 3 pending"``: a checklist's size and its items
    counted by ``status`` (in order of first appearance; ``?`` for none)."""
    counts: dict[str, int] = {}
    for item in items:
        status = item.get("status")
        key = status.replace("_", " ") if isinstance(status, str) and status else "?"
        counts[key] = counts.get(key, 0) + 1
    noun = "item" if len(items) == 1 else "items"
    return f"{len(items)} {noun}: " + ", ".join(f"{n} {status}" for status, n in counts.items())


def output_text(output: Any) -> str:
    """A tool result's output as text: a string as it is, content blocks' texts
    one per line (a block's ``text`` that is not a string, as a log may hold, by
    this same rule), anything else as JSON (``None`` → empty)."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "\n".join(output_text(b.get("text")) if isinstance(b, dict) else output_text(b) for b in output)
    return "" if output is None else json.dumps(output, ensure_ascii=False)
