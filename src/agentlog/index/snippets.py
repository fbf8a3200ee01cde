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
from itertools import islice

from agentlog.index.fts import SPECIAL_ANY, UNSPACED

BEFORE_WORDS = 4
"""Words shown before the first mark."""
WORDS = 16
"""Words a snippet holds at most (as FTS5's ``snippet(…, 16)`` did)."""
MAX_CHARS = 200
"""Characters a snippet holds at most (a "word" of code may be long)."""
_SCAN = 500
"""Matches looked at to find the best place."""
_WORD = f"[^\\W_{UNSPACED}]"
"""A character that continues a word (letters, digits, not an unspaced script)."""


@lru_cache(maxsize=64)
def _pattern(terms: tuple[str, ...]) -> re.Pattern[str] | None:
    alternatives = []
    for term in terms:
        if SPECIAL_ANY.search(term):
            alternatives.append(f"({re.escape(term)})")
        elif term.endswith("*"):
            alternatives.append(f"(?<!{_WORD})({re.escape(term[:-1])}{_WORD}*)")
        elif term:
            alternatives.append(f"(?<!{_WORD})({re.escape(term)})(?!{_WORD})")
    return re.compile("|".join(alternatives), re.IGNORECASE) if alternatives else None


def _fold(text: str) -> str:
    """``text`` without diacritics, one character for one (so offsets hold)."""
    return "".join(unicodedata.normalize("NFD", ch)[0] if not ch.isascii() else ch for ch in text)


def snippet(text: str, terms: tuple[str, ...], start: str, end: str) -> str:
    """A few words of ``text`` (at most :data:`WORDS` words and :data:`MAX_CHARS`
    characters) around the place where most of ``terms`` occur, each occurrence
    between ``start`` and ``end``; ``…`` where text is left out.  The first words
    when no term occurs."""
    pattern = _pattern(terms)
    found = list(islice(pattern.finditer(text), _SCAN)) if pattern else []
    if pattern and not found and not text.isascii():
        found = list(islice(pattern.finditer(_fold(text)), _SCAN))
    if not found:
        return _window(text, 0, 0, [], start, end)
    best, score = found[0], 0
    for n, match in enumerate(found):
        near = {m.lastindex for m in found[n:] if m.start() < match.start() + MAX_CHARS // 2}
        if len(near) > score:
            best, score = match, len(near)
    return _window(text, best.start(), best.end(), found, start, end)


_LAST_WORDS = re.compile(rf"(?:\S+\s+){{0,{BEFORE_WORDS}}}\S*$")
_FIRST_WORDS = re.compile(rf"\s*(?:\S+\s+){{0,{WORDS - 1}}}\S*")
_SPACE = re.compile(r"\s")
_JOINER = re.compile(r"[^\w\s]{1,2}|_")
"""What may stand between two marked words for one mark to hold both."""


def _window(text: str, at: int, until: int, found: list[re.Match[str]], start: str, end: str) -> str:
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
    spans: list[list[int]] = []
    for match in found:
        if match.start() >= lo and match.end() <= hi:
            if spans and _JOINER.fullmatch(text, spans[-1][1], match.start()):
                spans[-1][1] = match.end()  # words of one identifier (CLAUDE.md, daily_mean): one mark
            else:
                spans.append([match.start(), match.end()])
    pieces = ["…" if lo > 0 else ""]
    last = lo
    for first, after in spans:
        pieces += [text[last:first], start, text[first:after], end]
        last = after
    pieces += [text[last:hi].rstrip(), "…" if hi < len(text) else ""]
    return "".join(pieces)
