"""Search snippets cut from a part's own text: the words of a query marked where
they occur, with a few words around the best place.

``parts_fts`` keeps no copy of the text (its external content is computed from the
stored parts) and indexes unspaced scripts and emoji rewritten
(:func:`agentlog.index.fts.index_text`), so FTS5's ``snippet()`` would cut the
rewritten text: snippets are cut here from the text itself, marking what the
query's terms (:attr:`agentlog.index.fts.Translation.terms`) match by the index's
rules: a word as a whole word in any case (diacritics ignored when nothing else
matches, like ``remove_diacritics``), a prefix ``word*`` at a word's start, a run
of an unspaced script or an emoji anywhere.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from agentlog.index.fts import SPECIAL_ANY, indexed_head, visible_text
from agentlog.present import shown_as
from agentlog.redact import MARKER_CHARS, MARKERS

BEFORE_WORDS = 4
"""Words shown before the first mark."""
WORDS = 16
"""Words a snippet holds at most (as FTS5's ``snippet(…, 16)`` did)."""
MAX_CHARS = 200
"""Characters a snippet holds at most (a "word" of code may be long)."""
_SCAN = 500
"""Matches looked at to find the best place."""
SCAN_CHARS = 1 << 20
"""Characters of a text a snippet's terms are looked for in (1 Mi): its first, or
those around a term's first occurrence past them (:func:`_far`).  A pattern of
every term, in any case, reads ~10 MB/s: a whole 64 MiB tool output cost seconds
a hit, past the search's time limit."""


@lru_cache(maxsize=64)
def _pattern(terms: tuple[str, ...]) -> tuple[re.Pattern[str] | None, tuple[str, ...]]:
    """One pattern of every term (group ``n + 1``: ``terms[n]``, its ``*`` left out),
    and each term's kind: ``sub`` (matched anywhere), ``prefix`` or ``word`` (whole
    words: checked by :func:`_kept`, a pattern with Unicode word classes costs
    milliseconds to compile)."""
    alternatives, kinds = [], []
    for term in terms:
        kind = _kind(term)
        body = term[:-1] if kind == "prefix" else term
        if body:
            alternatives.append(f"({re.escape(body)})")
            kinds.append(kind)
    return (re.compile("|".join(alternatives), re.IGNORECASE) if alternatives else None), tuple(kinds)


def _kind(term: str) -> str:
    """How ``term`` matches: ``sub`` (anywhere: a term of an unspaced script),
    ``prefix`` (``word*``: words it starts) or ``word`` (whole words)."""
    return "sub" if SPECIAL_ANY.search(term) else "prefix" if term.endswith("*") else "word"


def _continues(text: str, at: int) -> bool:
    """Whether the character at ``at`` continues a word (a letter or digit, not of an
    unspaced script)."""
    return 0 <= at < len(text) and text[at].isalnum() and not SPECIAL_ANY.match(text, at)


def _matches(text: str, terms: tuple[str, ...], lo: int = 0, hi: int | None = None) -> list[tuple[int, int, int]]:
    """``(start, end, term number)`` of the first :data:`_SCAN` occurrences of
    ``terms`` in ``text[lo:hi]``, by the index's rules."""
    pattern, kinds = _pattern(terms)
    if pattern is None:
        return []
    out: list[tuple[int, int, int]] = []
    for found in pattern.finditer(text, lo, len(text) if hi is None else hi):
        group = (found.lastindex or 1) - 1
        first, after = found.span()
        kind = kinds[group]
        if kind != "sub" and _continues(text, first - 1):
            continue
        if kind == "prefix":
            while _continues(text, after):
                after += 1
        elif kind == "word" and _continues(text, after):
            continue
        out.append((first, after, group))
        if len(out) == _SCAN:
            break
    return out


def _far(text: str, terms: tuple[str, ...]) -> int:
    """Where the :data:`SCAN_CHARS` a snippet looks in start when none of ``terms``
    occurs in the first of them: half of them before the first place one occurs in
    the text as :func:`_matches` would match it (:func:`_first_at`), else 0 (none
    found, or lower case changes the text's length).  A term matched only without
    its diacritics (``cafe`` for ``café``) is looked for in the first
    ``SCAN_CHARS`` alone."""
    lower = text.lower()
    if len(lower) != len(text):
        return 0
    firsts = [at for term in terms if (at := _first_at(text, lower, term)) >= 0]
    return max(0, min(firsts) - SCAN_CHARS // 2) if firsts else 0


_FINDS = 10_000
"""Occurrences of a term inside other words :func:`_first_at` passes over at most
(each a few C finds and two character tests)."""


def _first_at(text: str, lower: str, term: str) -> int:
    """Where ``term`` first occurs in ``text`` (``lower``: it lower-cased, as long) by
    :func:`_matches`' rules: a whole word, a word's start (``word*``), anywhere for
    an unspaced script; one inside another word (``deploy`` in ``redeploy``) is
    passed over, at most :data:`_FINDS` of them.  ``-1``: not found."""
    kind = _kind(term)
    body = (term[:-1] if kind == "prefix" else term).lower()
    if not body:
        return -1
    at = lower.find(body)
    for _ in range(_FINDS):
        if at < 0 or kind == "sub":
            return at
        if not _continues(text, at - 1) and (kind == "prefix" or not _continues(text, at + len(body))):
            return at
        at = lower.find(body, at + 1)
    return -1


def _fold(text: str) -> str:
    """``text`` without diacritics, one character for one (so offsets hold)."""
    return "".join(unicodedata.normalize("NFD", ch)[0] if not ch.isascii() else ch for ch in text)


def snippet(text: str, terms: tuple[str, ...], start: str, end: str) -> str:
    """A few words of ``text`` (at most :data:`WORDS` words and :data:`MAX_CHARS`
    characters) around the place where most of ``terms`` occur, each occurrence
    between ``start`` and ``end``; ``…`` where text is left out.  The first words
    when no term occurs.  Cut from :func:`~agentlog.index.fts.visible_text`, as the
    index reads it; a ``start`` or ``end`` character the text holds itself is put
    as :func:`~agentlog.present.clean` shows it (``␂``), so every mark is the
    snippet's own."""
    text = visible_text(indexed_head(text))
    for mark in (start, end):
        if mark in text:
            text = text.replace(mark, shown_as(mark))
    lo = 0
    found = _matches(text, terms, 0, SCAN_CHARS)
    if not found and len(text) > SCAN_CHARS:
        lo = _far(text, terms)
        found = _matches(text, terms, lo, lo + SCAN_CHARS) if lo else []
    hi = lo + SCAN_CHARS
    if not found and not text[lo:hi].isascii():
        found = [(a + lo, b + lo, n) for a, b, n in _matches(_fold(text[lo:hi]), terms)]
    if not found:
        return _window(text, 0, 0, [], start, end)
    best, score = found[0], 0
    for n, (first, _, _) in enumerate(found):
        near = {term for at, _, term in found[n:] if at < first + MAX_CHARS // 2}
        if len(near) > score:
            best, score = found[n], len(near)
    return _window(text, best[0], best[1], found, start, end)


_LAST_WORDS = re.compile(rf"(?:\S+\s+){{0,{BEFORE_WORDS}}}\S*$")
_FIRST_WORDS = re.compile(rf"\s*(?:\S+\s+){{0,{WORDS - 1}}}\S*")
_SPACE = re.compile(r"\s")
_JOINER = re.compile(r"[^\w\s]{1,2}|_")
"""What may stand between two marked words for one mark to hold both."""


def _window(text: str, at: int, until: int, found: list[tuple[int, int, int]], start: str, end: str) -> str:
    """The snippet of ``text`` around ``at…until`` with ``found`` marked."""
    head = text[max(0, at - MAX_CHARS // 3) : at]
    lo = at - len(head) + _LAST_WORDS.search(head).start()  # type: ignore[union-attr]  # always matches
    if lo > 0 and not text[lo - 1].isspace():  # cut inside a word: start after it
        space = _SPACE.search(text, lo, at)
        lo = space.end() if space else at
    tail = text[lo : lo + MAX_CHARS]
    hi = lo + _FIRST_WORDS.match(tail).end()  # type: ignore[union-attr]  # always matches
    if hi < len(text) and hi == lo + MAX_CHARS and not text[hi].isspace():  # cut inside a word
        cut = tail.rfind(" ", until - lo)
        hi = max(lo + cut if cut > 0 else hi, until)
    lo, hi = _whole_markers(text, lo, hi)
    spans: list[list[int]] = []
    for first, after, _ in found:
        if first >= lo and after <= hi:
            if spans and _JOINER.fullmatch(text, spans[-1][1], first):
                spans[-1][1] = after  # words of one identifier (CLAUDE.md, daily_mean): one mark
            else:
                spans.append([first, after])
    pieces = ["…" if lo > 0 else ""]
    last = lo
    for first, after in spans:
        pieces += [text[last:first], start, text[first:after], end]
        last = after
    pieces += [text[last:hi].rstrip(), "…" if hi < len(text) else ""]
    return "".join(pieces)


def _whole_markers(text: str, lo: int, hi: int) -> tuple[int, int]:
    """``lo`` moved back to the start, and ``hi`` on to the end, of a redaction
    marker (``[REDACTED:kind]``, :data:`agentlog.redact.MARKERS`) either falls inside:
    a snippet shows such a marker whole, never ``…ACTED:api_key]``."""
    for edge in (lo, hi):
        for found in MARKERS.finditer(text, max(0, edge - MARKER_CHARS), edge + MARKER_CHARS):
            if found.start() < edge < found.end():
                lo, hi = min(lo, found.start()), max(hi, found.end())
    return lo, hi
