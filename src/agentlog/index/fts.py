"""What a user types, turned into an SQLite FTS5 ``MATCH`` expression: the one
query translation every surface (CLI, viewer, Python API) goes through.

Literal by default: the text is split at white space and each piece is matched
as the words it contains, in order (``CLAUDE.md`` → the phrase ``"CLAUDE.md"``,
which FTS5's ``unicode61`` tokenizer reads as the adjacent words ``claude md``);
all pieces must match.  Punctuation is never syntax, so nothing a user types is
an error.  Operators count only when written explicitly:

- ``"a phrase"`` (balanced double quotes; an unbalanced quote is punctuation),
- ``OR``, ``AND``, ``NOT`` in upper case between two operands (elsewhere they
  are words: ``NOT`` alone finds "not"),
- ``NEAR(a b)`` / ``NEAR(a b, 5)``,
- ``prefix*`` (a piece ending in ``*``).

Raw mode (``--fts``) hands the text to FTS5 as written (its whole syntax,
column filters included); when FTS5 cannot parse it, the search falls back to
the text as one phrase and says so (:attr:`Translation.note`).

Source of the syntax: the SQLite FTS5 documentation, "Full-text Query Syntax"
(https://sqlite.org/fts5.html#full_text_query_syntax): strings in double quotes
are tokenized as phrases, ``"`` inside one is written twice, ``*`` after a phrase
makes its last token a prefix, ``NOT`` is binary, and the ``unicode61`` tokenizer
treats letters (``L*``), numbers (``N*``) and private-use characters (``Co``) as
token characters, everything else as separators.
"""

from __future__ import annotations

import re
import unicodedata

import msgspec

from agentlog.errors import UsageError

MAX_QUERY_CHARS = 1_000
"""A query longer than this is refused (it is a pasted file, not a search)."""
MAX_TERMS = 32
"""A query with more words than this is refused: each word, and a prefix above
all, costs a walk over its whole posting list."""

OPERATORS = frozenset({"OR", "AND", "NOT"})
_NEAR = re.compile(r"NEAR\(([^()]*)\)")
_STRING = re.compile(r'"((?:[^"]|"")*)"')
_NEAR_DISTANCE = re.compile(r",\s*(\d+)\s*$")


class Translation(msgspec.Struct, frozen=True, kw_only=True):
    """A query as FTS5 reads it: ``match`` (the ``MATCH`` expression; ``""`` when
    the text holds no word at all), ``terms`` (its words, lower case, in order,
    a prefix with a trailing ``*``: for highlighting), ``note`` (what the user should know about how the text was
    read, e.g. a fallback; ``None`` when it was read as typed), ``raw``."""

    match: str
    terms: tuple[str, ...] = ()
    note: str | None = None
    raw: bool = False


def is_token_char(ch: str) -> bool:
    """Whether ``unicode61`` keeps ``ch`` inside a word (letters, numbers, private use)."""
    category = unicodedata.category(ch)
    return category[0] in "LN" or category == "Co"


def words(text: str) -> list[str]:
    """The words ``unicode61`` finds in ``text``, lower case (diacritics kept)."""
    out: list[str] = []
    current: list[str] = []
    for ch in text:
        if is_token_char(ch):
            current.append(ch)
        elif current:
            out.append("".join(current).lower())
            current = []
    if current:
        out.append("".join(current).lower())
    return out


def phrase(text: str, prefix: bool = False) -> str:
    """``text`` as one FTS5 string (a phrase of its words); ``prefix`` adds ``*``."""
    return '"' + text.replace('"', '""') + '"' + (" *" if prefix else "")


def fallback(text: str, reason: str) -> Translation:
    """``text`` searched as one phrase of its words, saying why."""
    found = words(text)
    note = f"{reason}; searched for the phrase {' '.join(found)!r} instead" if found else reason
    return Translation(match=phrase(" ".join(found)) if found else "", terms=tuple(found), note=note)


def translate(text: str, raw: bool = False) -> Translation:
    """The FTS5 expression for the query ``text`` (see the module docstring).

    Raises :class:`~agentlog.errors.UsageError` for an empty query, one longer
    than :data:`MAX_QUERY_CHARS` characters or with more than :data:`MAX_TERMS`
    words."""
    if not text.strip():
        raise UsageError("empty search query")
    if len(text) > MAX_QUERY_CHARS:
        raise UsageError(
            f"search query too long: {len(text):,} characters (at most {MAX_QUERY_CHARS:,}); "
            "search for a few distinctive words"
        )
    found = words(text)
    if len(found) > MAX_TERMS:
        raise UsageError(
            f"search query has {len(found)} words (at most {MAX_TERMS}); search for a few distinctive words"
        )
    if raw:
        return Translation(match=text, terms=tuple(found), raw=True)
    operands = _combine(_items(text))
    if not operands:
        return Translation(match="", note="the query holds no letters or digits to search for")
    match = " ".join(operands)
    return Translation(match=match, terms=tuple(_terms(match)))


def _items(text: str) -> list[str | tuple[str]]:
    """``text`` as FTS5 operands (strings) and operator words (1-tuples)."""
    items: list[str | tuple[str]] = []
    i = 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        near = _NEAR.match(text, i)
        if near and words(near.group(1)):
            items.append(_near(near.group(1)))
            i = near.end()
            continue
        if text[i] == '"' and (close := text.find('"', i + 1)) > 0:
            end = close + 1
            prefix = text.startswith("*", end)
            if words(text[i + 1 : close]):
                items.append(phrase(text[i + 1 : close], prefix))
            i = end + prefix
            continue
        end = i
        while end < len(text) and not text[end].isspace():
            end += 1
        piece = text[i:end]
        i = end
        if piece in OPERATORS:
            items.append((piece,))
        elif words(piece):
            prefix = piece.endswith("*") and is_token_char(piece.rstrip("*")[-1:] or " ")
            items.append(phrase(piece.rstrip("*") if prefix else piece, prefix))
    return items


def _terms(match: str) -> list[str]:
    """The words of the quoted strings in an FTS5 expression, each once, in order;
    the last word of a prefix phrase ends in ``*`` (``decorat*``)."""
    found: list[str] = []
    for quoted in _STRING.finditer(match):
        inside = words(quoted.group(1).replace('""', '"'))
        if inside and match.startswith(" *", quoted.end()):
            inside[-1] += "*"
        found.extend(inside)
    return list(dict.fromkeys(found))


def _near(inside: str) -> str:
    """``NEAR(…)`` with each of its pieces a phrase (a trailing ``, N`` kept)."""
    distance = _NEAR_DISTANCE.search(inside)
    body = inside[: distance.start()] if distance else inside
    pieces = [phrase(p) for p in body.split() if words(p)]
    return f"NEAR({' '.join(pieces)}{f', {distance.group(1)}' if distance else ''})"


def _combine(items: list[str | tuple[str]]) -> list[str]:
    """Operands with the operators that stand between two of them; any other
    operator word is searched as a word."""
    out: list[str] = []
    for n, item in enumerate(items):
        if isinstance(item, str):
            out.append(item)
            continue
        before = bool(out) and out[-1] not in OPERATORS
        after = n + 1 < len(items) and isinstance(items[n + 1], str)
        out.append(item[0] if before and after else phrase(item[0]))
    return out
