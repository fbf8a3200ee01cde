"""What a user types, turned into an SQLite FTS5 ``MATCH`` expression: the one
query translation every surface (CLI, viewer, Python API) goes through.

Literal by default: the text is split at white space and each piece is matched
as the words it contains, in order (``CLAUDE.md`` → the phrase ``"CLAUDE.md"``,
which FTS5's ``unicode61`` tokenizer reads as the adjacent words ``claude md``);
all pieces must match.  Punctuation is never syntax, so nothing a user types is
an error.  Operators count only when written explicitly:

- ``"a phrase"`` (balanced double quotes; an unbalanced quote is punctuation),
- ``OR``, ``AND``, ``NOT`` in upper case between two operands (elsewhere they
  are words: ``NOT`` alone finds, and marks, "not"),
- ``NEAR(a b)`` / ``NEAR(a b, 5)``,
- ``prefix*`` (a piece ending in ``*``).

Raw mode (``--fts``) hands the text to FTS5 as written (its whole syntax,
column filters included); when FTS5 cannot parse it, the search falls back to
the text as one phrase and says so (:attr:`Translation.note`).

Unspaced scripts and emoji (:func:`index_text`, applied to what is indexed and to
the query alike): ``unicode61`` reads a run of Chinese, Japanese or Korean
characters as one word (``最新のアップデート``) and drops emoji (symbols are
separators), so neither could be found inside a sentence.  Such a run is indexed
as its overlapping pairs of characters plus its last character (``最新 新の のア
…  ート ト``), the scheme of Lucene's ``CJKBigramFilter``, and a query word of two
characters or more as the phrase of its pairs: a substring of any length is found
wherever it occurs (one character: as a prefix of a pair).  Each emoji is indexed as
one word, a character of Unicode's supplementary private-use plane B (which
``unicode61`` keeps as a token character, :data:`EMOJI_BASE`).  Only text with such
characters is rewritten; text in Latin and other spaced scripts is indexed as
written.  Identifiers with dots, slashes and hyphens (``src/app.py``,
``claude-sonnet-4-5``) are words in order, so they match as a whole (the phrase) and
by any of their parts.

Source of the syntax: the SQLite FTS5 documentation, "Full-text Query Syntax"
(https://sqlite.org/fts5.html#full_text_query_syntax): strings in double quotes
are tokenized as phrases, ``"`` inside one is written twice, ``*`` after a phrase
makes its last token a prefix, ``NOT`` is binary, and the ``unicode61`` tokenizer
treats letters (``L*``), numbers (``N*``) and private-use characters (``Co``) as
token characters, everything else as separators.
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import lru_cache
from typing import Any

import msgspec

from agentlog.errors import UsageError
from agentlog.index.stored import stored, text_of
from agentlog.model import Part, ReasoningPart, TextPart, ToolCallPart

MAX_QUERY_CHARS = 1_000
"""A query longer than this is refused (it is a pasted file, not a search)."""
MAX_TERMS = 32
"""A query with more words than this is refused: each word, and a prefix above
all, costs a walk over its whole posting list."""

OPERATORS = frozenset({"OR", "AND", "NOT"})
_NEAR = re.compile(r"NEAR\(([^()]*)\)")
_STRING = re.compile(r'"((?:[^"]|"")*)"')
_NEAR_DISTANCE = re.compile(r",\s*(\d+)\s*$")
_RAW_SYNTAX = re.compile(
    r"(?<![^\s(])(?:AND|OR|NOT)(?![^\s()])|\bNEAR\(|,\s*\d+\s*\)|\b\w+\s*:(?!//)|[{][^{}]*[}]\s*:|[()^]"
)
"""What raw FTS5 syntax holds beside the words it matches: operators, ``NEAR(``
and its distance, column filters (``text:``, ``{a b}:``), grouping and ``^``."""


class Translation(msgspec.Struct, frozen=True, kw_only=True):
    """A query as FTS5 reads it: ``match`` (the ``MATCH`` expression; ``""`` when
    the text holds no word at all), ``terms`` (its words, lower case, in order,
    a prefix with a trailing ``*``: for highlighting), ``note`` (what the user should know about how the text was
    read, e.g. a fallback; ``None`` when it was read as typed), ``raw``."""

    match: str
    terms: tuple[str, ...] = ()
    note: str | None = None
    raw: bool = False
    literals: tuple[str, ...] = ()
    """The pieces of the query, as typed, that hold characters the index drops
    (punctuation and symbols: ``C++``, ``$HOME``, ``CLAUDE.md``; a prefix without its
    ``*``, a quoted phrase without its quotes, a piece without the quotes and
    clause marks around it: ``"Hello,`` is none), in order, each once: a page
    sorted by rank shows first the hits whose text holds them (:func:`literal_count`)."""


UNSPACED = (
    "\u1100-\u11ff\u3041-\u3096\u3099-\u309f\u30a1-\u30fa\u30fc-\u30ff\u3105-\u312f\u3131-\u318e"
    "\u31a0-\u31bf\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\uf900-\ufaff"
    "\uff66-\uff9f\U00020000-\U0003134f"
)
"""Characters of the unspaced scripts (Han, kana, Hangul, Bopomofo; iteration and
prolonged-sound marks included, punctuation such as ``・`` and ``。`` not)."""
_EMOJI = "\u2600-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff"
"""Emoji and pictographs (Miscellaneous Symbols, Dingbats, arrows and stars,
U+1F000–U+1FAFF); variation selectors and joiners are separators."""
_SPECIAL = re.compile(f"[{UNSPACED}]+|[{_EMOJI}]")
SPECIAL_ANY = re.compile(f"[{UNSPACED}{_EMOJI}]")
_ONE_EMOJI = re.compile(f"[{_EMOJI}]")
EMOJI_BASE = 0x100000
"""An emoji ``e`` is indexed as the character ``EMOJI_BASE + (ord(e) & 0xFFFF)`` (plane
16, private use; the BMP and plane-1 ranges of :data:`_EMOJI` do not overlap there).
Changing :func:`index_text` needs a migration that rebuilds ``parts_fts``."""


def _emoji_token(ch: str) -> str:
    return chr(EMOJI_BASE + (ord(ch) & 0xFFFF))


def _pairs(run: str, last: bool) -> list[str]:
    """The overlapping pairs of ``run``, and with ``last`` its last character."""
    found = [run[i : i + 2] for i in range(len(run) - 1)]
    return [*found, run[-1]] if last or len(run) == 1 else found


INDEXED_CHARS = 1 << 24
"""Characters of a part's search text the full-text index holds at most (16 Mi):
words after them are not found.  FTS5 holds a whole document's terms in memory
while it indexes it, ~2.3 bytes per character of text (measured: 146 MB for a
64 MiB text of one word repeated, 160 MB for 64 MiB of varied words), on top of
the text itself and SQLite's copy of it; a text this long is a pasted file or a
log, and its first 16 Mi characters are what a search can reach."""


def indexed_head(text: str) -> str:
    """The part of ``text`` the full-text index reads: all of it up to
    :data:`INDEXED_CHARS` characters, else its first ``INDEXED_CHARS`` cut after
    the last space, newline or tab among them (a word cut in two is left out
    whole) when there is one in the last 1,000."""
    if len(text) <= INDEXED_CHARS:
        return text
    space = max(text.rfind(ch, max(0, INDEXED_CHARS - 1_000), INDEXED_CHARS) for ch in " \n\t")
    return text[: space + 1 if space >= 0 else INDEXED_CHARS]


_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[0-~])")
"""A terminal escape sequence (ECMA-48): a CSI (``ESC [`` … final byte: colours,
``\x1b[31m``; cursor moves), an OSC (``ESC ]`` … BEL or ST: titles, hyperlinks) or
a two-character escape (``ESC 7``, ``ESC c``).  An OSC never ended is only its
``ESC ]``: the text after it stays searchable."""


def visible_text(text: str) -> str:
    """``text`` without its terminal escape sequences (:data:`_ESCAPE`): the text a
    terminal shows of coloured tool output, so ``\x1b[31mred\x1b[0m`` is the word
    ``red`` (not ``31mred``) to the index and to snippets.  ``text`` itself when it
    holds no ESC."""
    return _ESCAPE.sub("", text) if "\x1b" in text else text


def index_text(text: str) -> str:
    """``text`` (its :func:`indexed_head`, :func:`visible_text`) as the full-text
    index reads it (see the module docstring): each run of an unspaced script as
    its pairs and last character, each emoji as one word; the text itself when it
    has neither (any ASCII text)."""
    text = visible_text(indexed_head(text))
    if text.isascii() or not SPECIAL_ANY.search(text):
        return text
    return _SPECIAL.sub(_index_piece, text)


def _index_piece(found: re.Match[str]) -> str:
    piece = found.group()
    if _ONE_EMOJI.fullmatch(piece):
        return f" {_emoji_token(piece)} "
    return " " + " ".join(_pairs(piece, last=True)) + " "


def query_phrases(text: str, prefix: bool = False) -> list[tuple[str, bool]]:
    """``text`` (one phrase of a query) as FTS5 phrases ``(text, prefix)`` that all
    must match: a run of an unspaced script as its pairs, one character of one as a
    prefix (so a phrase ends after it), emoji as their words."""
    if text.isascii() or not SPECIAL_ANY.search(text):
        return [(text, prefix)]
    out: list[tuple[str, bool]] = []
    current: list[str] = []
    last = 0
    for found in _SPECIAL.finditer(text):
        current.append(text[last : found.start()])
        last = found.end()
        piece = found.group()
        if _ONE_EMOJI.fullmatch(piece):
            current.append(f" {_emoji_token(piece)} ")
        elif len(piece) > 1:
            current.append(" " + " ".join(_pairs(piece, last=False)) + " ")
        else:
            current.append(f" {piece}")
            out.append(("".join(current), True))
            current = []
    current.append(text[last:])
    tail = "".join(current)
    if words(tail):
        out.append((tail, prefix))
    elif out and prefix:
        out[-1] = (out[-1][0], True)
    return out


def is_token_char(ch: str) -> bool:
    """Whether ``unicode61`` keeps ``ch`` inside a word (letters, numbers, private use)."""
    category = unicodedata.category(ch)
    return category[0] in "LN" or category == "Co"


def words(text: str) -> list[str]:
    """The words ``unicode61`` finds in ``text``, lower case (diacritics kept), where
    a run of an unspaced script and each emoji are words of their own."""
    if not text.isascii() and SPECIAL_ANY.search(text):
        found: list[str] = []
        last = 0
        for special in _SPECIAL.finditer(text):
            found += words(text[last : special.start()])
            found.append(special.group())
            last = special.end()
        return found + words(text[last:])
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
    """``text`` as an FTS5 operand: one string (a phrase of its words; ``prefix`` adds
    ``*``), or for unspaced scripts the group of the strings of
    :func:`query_phrases`."""
    strings = [_string(t, p) for t, p in query_phrases(text, prefix)]
    return strings[0] if len(strings) == 1 else "(" + " ".join(strings) + ")"


def _string(text: str, prefix: bool) -> str:
    return '"' + text.replace('"', '""') + '"' + (" *" if prefix else "")


def fallback(text: str, reason: str) -> Translation:
    """``text`` searched as one phrase of its words, saying why."""
    found = words(text)
    note = f"{reason}; searched for the phrase {' '.join(found)!r} instead" if found else reason
    return Translation(
        match=phrase(" ".join(found)) if found else "", terms=tuple(dict.fromkeys(found)), note=note
    )


def translate(text: str, raw: bool = False) -> Translation:
    """The FTS5 expression for the query ``text`` (see the module docstring).

    Raises :class:`~agentlog.errors.UsageError` for an empty query, one longer
    than :data:`MAX_QUERY_CHARS` characters or whose operands match more than
    :data:`MAX_TERMS` words (:func:`_bounded`: operators are not counted)."""
    if not text.strip():
        raise UsageError("empty search query")
    if len(text) > MAX_QUERY_CHARS:
        raise UsageError(
            f"search query too long: {len(text):,} characters (at most {MAX_QUERY_CHARS:,}); "
            "search for a few distinctive words"
        )
    if raw:
        matched = _combine(_items(_RAW_SYNTAX.sub(" ", text)))[1]
        _bounded(matched)
        return Translation(match=raw_match(text), terms=tuple(dict.fromkeys(matched)), raw=True)
    literals: list[str] = []
    operands, terms = _combine(_items(text, literals))
    _bounded(terms)
    if not operands:
        return Translation(match="", note="the query holds no letters or digits to search for")
    return Translation(
        match=" ".join(operands), terms=tuple(dict.fromkeys(terms)), literals=tuple(dict.fromkeys(literals))
    )


def _dropped(piece: str) -> bool:
    """Whether ``piece`` holds a character the index drops (neither a token
    character, :func:`is_token_char`, nor white space)."""
    return any(not is_token_char(ch) and not ch.isspace() for ch in piece)


@lru_cache(maxsize=64)
def _literal_patterns(literals: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(re.escape(literal), re.IGNORECASE) for literal in literals)


def literal_count(text: str, literals: tuple[str, ...]) -> int:
    """How many of ``literals`` (:attr:`Translation.literals`) the search text ``text``
    holds as written, in any case, in what the index reads of it (its
    :func:`indexed_head`, :func:`visible_text`): ``C++`` is in "learning c++" but
    not in "C and C#", which the index finds alike (its words are ``c``)."""
    if not literals:
        return 0
    shown = visible_text(indexed_head(text))
    return sum(1 for pattern in _literal_patterns(literals) if pattern.search(shown))


def _bounded(matched: list[str]) -> None:
    """Refuse a query whose operands match more than :data:`MAX_TERMS` words
    (``matched``, repeats counted: each is a walk); the operators between them
    (``OR``, ``AND``, ``NOT``, ``NEAR``) and raw column names are not words."""
    if len(matched) > MAX_TERMS:
        raise UsageError(
            f"search query has {len(matched)} words (at most {MAX_TERMS}); search for a few distinctive words"
        )


def raw_match(text: str) -> str:
    """FTS5 syntax as written, with each run of an unspaced script as its pairs and
    each emoji as its word (:func:`index_text`'s rewriting, without last characters)."""
    if text.isascii() or not SPECIAL_ANY.search(text):
        return text
    return "".join(t for t, _ in query_phrases(text))


_Operand = tuple[str, list[str]]
"""An FTS5 operand and the words it matches (lower case, a prefix's last with ``*``)."""


def _items(text: str, literals: list[str] | None = None) -> list[_Operand | str]:
    """``text`` as FTS5 operands and operator words (``str``); each operand's text as
    typed that holds a character the index drops is added to ``literals``
    (:attr:`Translation.literals`) when given (``NEAR(…)``'s never)."""
    items: list[_Operand | str] = []
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
                items.append(_operand(text[i + 1 : close], prefix))
                _literal(text[i + 1 : close], literals)
            i = end + prefix
            continue
        end = i
        while end < len(text) and not text[end].isspace():
            end += 1
        piece = text[i:end]
        i = end
        if piece in OPERATORS:
            items.append(piece)
        elif words(piece):
            prefix = piece.endswith("*") and is_token_char(piece.rstrip("*")[-1:] or " ")
            items.append(_operand(piece.rstrip("*") if prefix else piece, prefix))
            _literal(piece.rstrip("*") if prefix else piece, literals)
    return items


_OPENING = "\"'"
_CLOSING = "\"',.;:!?"
"""What a literal piece is cut of at its start and end: quotes (an unbalanced one is
punctuation) and the marks that end a clause (``CLAUDE.md.`` is ``CLAUDE.md``)."""


def _literal(piece: str, literals: list[str] | None) -> None:
    """Add ``piece`` (an operand's text as typed, cut of :data:`_OPENING` and
    :data:`_CLOSING`) to ``literals`` when it still holds a character the index
    drops among its words."""
    if literals is None:
        return
    cut = piece.strip().lstrip(_OPENING).rstrip(_CLOSING)
    if _dropped(cut) and words(cut):
        literals.append(cut)


def _operand(text: str, prefix: bool) -> _Operand:
    """``text`` as one phrase operand and its words."""
    inside = words(text)
    if inside and prefix:
        inside[-1] += "*"
    return phrase(text, prefix), inside


def _near(inside: str) -> _Operand:
    """``NEAR(…)`` with each of its pieces a phrase (a trailing ``, N`` kept, and
    not a word it matches)."""
    distance = _NEAR_DISTANCE.search(inside)
    body = inside[: distance.start()] if distance else inside
    pieces = [phrase(p) for p in body.split() if words(p)]
    return f"NEAR({' '.join(pieces)}{f', {distance.group(1)}' if distance else ''})", words(body)


def _combine(items: list[_Operand | str]) -> tuple[list[str], list[str]]:
    """The operands with the operators that stand between two of them, and the
    words they match, in order; any other operator word is an operand, the word
    it is (``NOT`` alone finds and marks "not")."""
    out: list[str] = []
    terms: list[str] = []
    for n, item in enumerate(items):
        if isinstance(item, str):
            before = bool(out) and out[-1] not in OPERATORS
            after = n + 1 < len(items) and not isinstance(items[n + 1], str)
            if before and after:
                out.append(item)
                continue
            item = _operand(item, False)
        out.append(item[0])
        terms += item[1]
    return out, terms


def search_text(part: Part) -> str:
    """What full-text search indexes for a part (before :func:`index_text`): a text
    part's text, reasoning's text or summary, a tool call's name, input and output
    (file parts inside it, :mod:`agentlog.adapters._binary`, left out); nothing of
    other parts."""
    if isinstance(part, TextPart):
        return part.text
    if isinstance(part, ReasoningPart):
        return part.text or part.summary
    if isinstance(part, ToolCallPart):
        pieces = [part.tool, _flat(part.input)]
        if part.result is not None:
            pieces.append(_flat(part.result.output))
        return "\n".join(p for p in pieces if p)
    return ""


_JSON = msgspec.json.Encoder().encode


def _flat(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(
            b["text"] if isinstance(b, dict) and isinstance(b.get("text"), str) else _flat(b)
            for b in value
            if not (isinstance(b, dict) and b.get("type") == "file")
        )
    try:
        return _JSON(value).decode()
    except (TypeError, ValueError, OverflowError):  # not JSON-shaped (e.g. huge ints): still searchable
        return json.dumps(value, ensure_ascii=False, default=str)


def stored_text(text: str, data: bytes | None) -> str:
    """The search text of a stored part: its ``parts.text`` (a plain text part,
    ``data`` NULL) or :func:`search_text` of the part packed in ``data``."""
    return text_of(text) if data is None else search_text(stored(data, Part, "part"))  # type: ignore[arg-type]
