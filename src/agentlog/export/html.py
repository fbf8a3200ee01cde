"""The HTML export: one self-contained page, or a static site of them.

The page is rendered by the viewer's own renderer (``web/templates/transcript.html``
and :mod:`agentlog.web.content`), with the viewer's CSS and the highlighting
rules inlined.  It carries no script at all, and a Content-Security-Policy
``<meta>`` tag (https://www.w3.org/TR/CSP3/#meta-element) that allows only
that one inlined style (by its SHA-256) and ``data:`` images: nothing is
loaded from the network and nothing in a transcript can run.

A site (``--all``) is an ``index.html`` and a page per session under
``sessions/<agent>/``; a manifest (:data:`MANIFEST`) keeps each page's
fingerprint (the session's header as indexed — its end time, message count,
usage, sources — and the renderer's own files), so a re-export rewrites only
the pages of sessions that changed.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterable
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any, TextIO

import msgspec
from jinja2 import Environment, PackageLoader
from markupsafe import Markup

from agentlog.errors import UsageError
from agentlog.export import HUGE, Transcript, utc
from agentlog.export.target import Target
from agentlog.model import Message, Part, TextPart
from agentlog.present import PIECE, compact, project_name, tool_summary
from agentlog.web import content

MANIFEST = ".agentlog-site.json"
"""The site's manifest: ``{"renderer": hash, "pages": {session key: fingerprint}}``."""


@cache
def _environment() -> Environment:
    env = Environment(loader=PackageLoader("agentlog.web", "templates"), autoescape=True, finalize=content.inert)
    env.filters.update(
        content.FILTERS, compact=compact, project=project_name, summary=tool_summary, local=utc
    )
    env.globals.update(content.GLOBALS, raw_href=lambda _key, _id: None)
    return env


@cache
def stylesheet() -> str:
    """The viewer's CSS and the highlighting rules, as inlined in every page."""
    css = (files("agentlog.web") / "static" / "style.css").read_text(encoding="utf-8")
    return css + "\n" + content.highlight_css()


def policy(css: str) -> str:
    """The page's Content-Security-Policy: nothing but the inlined ``css`` and ``data:`` images."""
    digest = base64.b64encode(hashlib.sha256(css.encode()).digest()).decode()
    return (
        f"default-src 'none'; style-src 'sha256-{digest}'; img-src data:; base-uri 'none'; form-action 'none'"
    )


class _StandIns:
    """Prompts of :data:`~agentlog.export.HUGE` characters or more, each given to the template as
    a stand-in (a token no log can guess, which the renderer's escape leaves as
    it is) and written in its place, escaped a slice at a time
    (:func:`agentlog.web.content.inert`, which maps each character on its own):
    the page holds neither the escaped prompt whole nor a chunk made of it."""

    def __init__(self) -> None:
        self.seed = f"agentlog-prompt-{secrets.token_hex(16)}-"
        self.token = re.compile(re.escape(self.seed) + "[0-9]+")
        self.texts: dict[str, str] = {}

    def message(self, m: Message) -> Message:
        """``m`` with its huge prompts' texts (a text part of a message not the assistant's) as stand-ins."""
        if m.role == "assistant" or not any(isinstance(p, TextPart) and len(p.text) >= HUGE for p in m.parts):
            return m
        parts: list[Part] = []
        for p in m.parts:
            if isinstance(p, TextPart) and len(p.text) >= HUGE:
                token = f"{self.seed}{len(self.texts)}"
                self.texts[token] = p.text
                p = TextPart(text=token)
            parts.append(p)
        return msgspec.structs.replace(m, parts=parts)

    def write(self, chunk: str, out: TextIO) -> None:
        """``chunk`` of the page on ``out``, each stand-in in it written as its prompt, escaped."""
        while self.texts and (found := self.token.search(chunk)) is not None:
            out.write(chunk[: found.start()])
            text = self.texts.pop(found.group())
            for start in range(0, len(text), PIECE):
                out.write(content.inert(text[start : start + PIECE]))
            del text
            chunk = chunk[found.end() :]
        out.write(chunk)


class _Section:
    """One session on a page: its header, messages (huge prompts as stand-ins),
    anchor, links and the subagents no tool call of it started."""

    __slots__ = ("anchor", "links", "messages", "session", "unlinked")

    def __init__(self, t: Transcript, anchor: str, links: dict[str, Any], stand_ins: _StandIns) -> None:
        self.session = t.session
        self.messages = lambda: map(stand_ins.message, t.messages())
        self.anchor = anchor
        self.links = links
        self.unlinked = t.unlinked


def _render(template: str, out: TextIO, stand_ins: _StandIns | None = None, **values: Any) -> None:
    css = stylesheet()
    page = _environment().get_template(template)
    for chunk in page.generate(css=Markup(css), csp=policy(css), **values):
        if stand_ins is None:
            out.write(chunk)
        else:
            stand_ins.write(chunk, out)


def write_page(
    transcripts: Iterable[Transcript],
    out: TextIO,
    redacted: bool,
    href: Callable[[str], str | None] | None = None,
    home: str | None = None,
) -> None:
    """The transcripts (each with its exported children) as one page on ``out``.
    Links to a session go to its section on this page, else to ``href(key)``."""
    sections: list[_Section] = []
    anchors: dict[str, str] = {}
    stand_ins = _StandIns()
    for t in transcripts:
        for member in t.tree():
            anchor = f"s{len(sections)}"
            anchors[member.session.key] = f"#{anchor}"
            sections.append(_Section(member, anchor, t.links, stand_ins))

    def session_href(key: str) -> str | None:
        return anchors.get(key) or (href(key) if href else None)

    title = (sections[0].session.title or sections[0].session.id) if sections else "agentlog"
    _render(
        "export.html",
        out,
        stand_ins,
        sections=sections,
        session_href=session_href,
        title=title,
        home=home,
        redacted=redacted,
    )


def page_path(key: str) -> str:
    """A session's page in a site: ``sessions/<agent>/<id>.html``, the id's
    characters other than letters, digits, ``.``, ``_`` and ``-`` replaced
    (then a short hash of the key keeps two ids apart)."""
    agent, _, sid = key.partition(":")
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", sid)[:120]
    if safe != sid:
        safe += "-" + hashlib.sha256(key.encode()).hexdigest()[:8]
    return f"sessions/{re.sub(r'[^a-z0-9_]', '_', agent)}/{safe}.html"


@cache
def renderer_hash() -> str:
    """A hash of the templates and CSS: a new renderer rewrites every page."""
    digest = hashlib.sha256(stylesheet().encode())
    folder = files("agentlog.web") / "templates"
    for name in ("export.html", "transcript.html"):
        digest.update((folder / name).read_bytes())
    return digest.hexdigest()[:16]


def fingerprint(t: Transcript, redacted: bool, extra: str) -> str:
    """What a page depends on: its sessions' headers, the options, the renderer."""
    digest = hashlib.sha256(f"{redacted}:{extra}:{renderer_hash()}".encode())
    for member in t.tree():
        digest.update(msgspec.json.encode(member.session))
    return digest.hexdigest()[:32]


class SiteReport(msgspec.Struct, kw_only=True):
    """What a site export did: ``written`` pages (session keys), ``unchanged`` (kept
    as they were), ``removed`` (session keys: the pages an earlier export wrote of
    sessions this one does not export)."""

    written: list[str]
    unchanged: int
    removed: list[str] = msgspec.field(default_factory=list)


def _page_writer(t: Transcript, redacted: bool, in_site: dict[str, str], up: str) -> Callable[[TextIO], None]:
    """Writes ``t``'s page, ``up`` (``../``…) from the site's top, linking to ``in_site`` pages."""

    def href(key: str) -> str | None:
        return up + in_site[key] if key in in_site else None

    def write(out: TextIO) -> None:
        write_page([t], out, redacted, href, up + "index.html")

    return write


def write_site(
    transcripts: Iterable[Transcript], folder: Path, redacted: bool, target: Target, extra: str = ""
) -> SiteReport:
    """A static site in ``folder``: ``index.html`` and a page per transcript (its
    children on its page); a page whose :func:`fingerprint` is in the manifest
    and whose file exists is not rendered again.  The page an earlier export
    wrote (a session its manifest names) of a session not exported now (pruned,
    forgotten, filtered out, now a subagent on its parent's page) is removed
    (checked like every file; a regular file only: what is not one, a symlink
    too, this export did not put there), and its agent's folder when that is
    left empty; nothing else in ``folder`` is touched.  Every file goes through
    ``target`` (checked, then replaced whole: never half a page).  Raises
    :class:`~agentlog.errors.UsageError` for a folder that holds files but no
    manifest (the user's own files: never overwritten)."""
    folder = target.folder(folder)
    manifest_path = folder / MANIFEST
    try:
        old = json.loads(manifest_path.read_text(encoding="utf-8"))
        known: dict[str, str] = dict(old.get("pages", {}))
    except (OSError, ValueError, AttributeError):
        known = {}
    pages: dict[str, str] = {}
    written: list[str] = []
    unchanged = 0
    everything = list(transcripts)
    in_site: dict[str, str] = {}
    for t in everything:
        name = page_path(t.session.key)
        for i, member in enumerate(t.tree()):
            in_site.setdefault(member.session.key, name if i == 0 else f"{name}#s{i}")
    rows = [(m.session, in_site[m.session.key]) for t in everything for m in t.tree()]
    names = {page_path(t.session.key) for t in everything}
    tops = {t.session.key for t in everything}
    stale = {key: name for key in known if key not in tops and (name := page_path(key)) not in names}
    for name in (*names, *stale.values(), "index.html", MANIFEST):
        target.check(folder / name)  # every file refused or not before the first is written
    if not manifest_path.is_file() and any(folder.iterdir()):
        raise UsageError(f"{folder} is not empty and not an agentlog HTML site: choose another folder")
    for t in everything:
        key = t.session.key
        name = page_path(key)
        pages[key] = mark = fingerprint(t, redacted, extra)
        if known.get(key) == mark and (folder / name).is_file():
            unchanged += 1
            continue
        target.write_text(folder / name, _page_writer(t, redacted, in_site, "../" * name.count("/")))
        written.append(key)
    target.write_text(
        folder / "index.html", lambda out: _render("site_index.html", out, rows=rows, redacted=redacted)
    )
    removed = _remove_pages(folder, stale)  # before the manifest: one that fails is named by the old one still
    target.write_text(folder / MANIFEST, lambda out: json.dump({"renderer": renderer_hash(), "pages": pages}, out))
    return SiteReport(written=written, unchanged=unchanged, removed=removed)


def _remove_pages(folder: Path, stale: dict[str, str]) -> list[str]:
    """The pages ``stale`` names (session key: page, :func:`page_path`) removed from
    ``folder`` where each is a regular file, and each agent's folder left empty;
    the keys of those removed."""
    removed: list[str] = []
    if not stale:
        return removed
    for key, name in sorted(stale.items()):
        page = folder / name
        try:
            mode = os.lstat(page).st_mode
        except FileNotFoundError:
            continue
        if stat.S_ISREG(mode):
            page.unlink()
            removed.append(key)
    for parent in sorted({(folder / name).parent for name in stale.values()}):
        with contextlib.suppress(OSError):  # not empty, or gone: left as it is
            parent.rmdir()
    with contextlib.suppress(OSError):
        (folder / "sessions").rmdir()
    return removed
