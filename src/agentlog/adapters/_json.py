"""The one JSON decoder of the adapters, with the record-level rules.

Every JSON text agentlog reads — a JSONL line, a JSON document, a sidecar, a
SQLite cell holding JSON — is decoded here, and each way it can be unusable has
one reason code, counted in :class:`~agentlog.model.Diagnostics` ``skipped``:

``invalid_utf8``
    the bytes are not UTF-8 (msgspec reports it while decoding);
``invalid_json``
    anything else msgspec cannot decode (truncated, not JSON);
``nested_too_deep``
    arrays/objects nested deeper than the interpreter's recursion limit lets
    msgspec decode (~1,000 levels);
``not_an_object``
    a record that must be a JSON object is another value.

Damaged text inside a string is not a reason to lose a record: bytes that are not
UTF-8, and a lone UTF-16 surrogate escape (``"\\ud83d"``: what JavaScript's
``JSON.stringify`` writes for a string cut between the two halves of an emoji,
ECMA-262 §25.5.2.3 ``QuoteJSONString``; Node's ``fs`` writes invalid bytes as they
come), are each decoded as U+FFFD REPLACEMENT CHARACTER (the Unicode Standard
§3.9 "U+FFFD substitution of maximal subparts", Python's ``errors="replace"``)
and the record is kept.  Each text so repaired is counted (:func:`take_replaced`):
the loaders add the count to the source's diagnostics as
``invalid_values["decoded_with_replacement"]`` (:data:`DECODED_WITH_REPLACEMENT`),
which ``doctor`` shows; the messages a JSONL line made are flagged
``text_replaced``, and so are those of a JSON document (decoded whole) whose text
holds U+FFFD.  A leading byte-order mark (which RFC 8259 §8.1 forbids but lets
a parser ignore; Windows editors and PowerShell's ``Out-File`` write one) is
ignored and not counted.  Valid input never takes this path: the repair runs only
after msgspec has refused a text.

An integer of any size is kept: where msgpack cannot hold one, what is stored is
written as JSON (:mod:`agentlog.packing`).  (A record-level "integer out of range"
rule was measured first: finding such values in what each record carries cost
20 % of the parse time of a 50 MB Claude Code log, a byte-level check of each
line 11 %; keeping them costs nothing.)

A whole JSON document (a file holding many records) goes through
:func:`parse_document`: one damaged value in it costs only that value.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import msgspec

from agentlog import lazy

INVALID_UTF8 = "invalid_utf8"
INVALID_JSON = "invalid_json"
NESTED_TOO_DEEP = "nested_too_deep"
NOT_AN_OBJECT = "not_an_object"


DECODED_WITH_REPLACEMENT = "decoded_with_replacement"
"""The ``Diagnostics.invalid_values`` reason of a JSON text whose invalid UTF-8 or
lone surrogate escapes were decoded as U+FFFD."""

_DECODER = msgspec.json.Decoder()
_BOM = b"\xef\xbb\xbf"
_ESCAPE = lazy.pattern(
    rb"\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[dD][89a-fA-F][0-9a-fA-F]{2}"
)
"""An escaped backslash (kept, so the ``u`` after it is no escape), a surrogate
pair (kept), or a lone surrogate escape (replaced)."""
_SURROGATE = lazy.pattern("[\ud800-\udfff]")
"""A lone surrogate in a ``str`` (no UTF-8 encodes it)."""


class _Replaced(threading.local):
    count = 0


_REPLACED = _Replaced()


def take_replaced() -> int:
    """How many JSON texts this thread decoded with replacement characters since
    the last call (see the module docstring); resets the count."""
    n, _REPLACED.count = _REPLACED.count, 0
    return n


def add_replaced(n: int) -> None:
    """Count ``n`` texts decoded with replacement characters again (a cached
    decode of a sidecar that every source reading it must count)."""
    _REPLACED.count += n


@contextmanager
def replaced_apart() -> Iterator[list[int]]:
    """A block whose texts decoded with replacement characters are counted apart:
    yields a list that holds their count after the block; the running count
    (:func:`take_replaced`) is as it was before it."""
    held, _REPLACED.count = _REPLACED.count, 0
    found = [0]
    try:
        yield found
    finally:
        found[0], _REPLACED.count = _REPLACED.count, held


def _lone_surrogate(found: re.Match[bytes]) -> bytes:
    escape = found.group()
    return b"\\ufffd" if len(escape) == 6 else escape


def _repaired(data: Any) -> tuple[bytes, bool] | None:
    """``data`` without a leading byte-order mark and with each invalid UTF-8
    sequence and lone surrogate escape replaced by U+FFFD, and whether anything
    was replaced; ``None`` when ``data`` is not text."""
    if isinstance(data, str):
        raw = data.encode("utf-8", "surrogatepass")
        text = _SURROGATE.sub("\ufffd", data).encode("utf-8")
    elif isinstance(data, bytes | bytearray | memoryview):
        raw = bytes(data)
        text = raw.decode("utf-8", "replace").encode("utf-8")
    else:
        return None
    raw, text = raw.removeprefix(_BOM), text.removeprefix(_BOM)
    fixed = _ESCAPE.sub(_lone_surrogate, text) if b"\\u" in text else text
    return fixed, fixed != raw


class JsonError(ValueError):
    """A JSON text that is not a usable record; ``reason`` is its reason code."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def parse_json(data: Any) -> Any:
    """``data`` decoded; a leading byte-order mark ignored, invalid UTF-8 and lone
    surrogate escapes in strings decoded as U+FFFD (counted, :func:`take_replaced`).
    Raises :class:`JsonError` (``invalid_utf8`` — bytes outside strings that are not
    UTF-8 —, ``invalid_json`` — also for a value that is not text —,
    ``nested_too_deep``)."""
    try:
        return _DECODER.decode(data)
    except msgspec.DecodeError as exc:
        first = JsonError(INVALID_UTF8 if "UTF-8" in str(exc) else INVALID_JSON)
    except UnicodeEncodeError:  # a str holding a lone surrogate (a SQLite cell read with surrogateescape)
        first = JsonError(INVALID_UTF8)
    except RecursionError:
        raise JsonError(NESTED_TOO_DEEP) from None
    except TypeError:  # not text at all (a SQLite REAL or INTEGER where JSON text belongs)
        raise JsonError(INVALID_JSON) from None
    repaired = _repaired(data)
    if repaired is None:
        raise first
    fixed, replaced = repaired
    try:
        value = _DECODER.decode(fixed)
    except msgspec.DecodeError:
        raise first from None
    except RecursionError:
        raise JsonError(NESTED_TOO_DEEP) from None
    if replaced:
        _REPLACED.count += 1
    return value


def parse_object(data: Any) -> dict[str, Any]:
    """``data`` decoded, which must be a JSON object.  Raises :class:`JsonError`
    (the reasons of :func:`parse_json`, and ``not_an_object``)."""
    value = parse_json(data)
    if not isinstance(value, dict):
        raise JsonError(NOT_AN_OBJECT)
    return value


def json_value(value: Any) -> Any:
    """A JSON text (``str`` or ``bytes``) decoded; ``None`` when it is empty, not
    text, or not usable JSON (e.g. SQLite cells and tool arguments stored as text)."""
    if not value:
        return None
    try:
        return parse_json(value)
    except JsonError:
        return None


def json_object(value: Any) -> dict[str, Any] | None:
    """``value`` if it is a dict, else the object a JSON text (``str``/``bytes``)
    holds; ``None`` when it holds none."""
    if isinstance(value, dict):
        return value
    decoded = json_value(value)
    return decoded if isinstance(decoded, dict) else None


def json_or_text(text: Any) -> Any:
    """``text`` decoded when it is a JSON text (``str``), else ``text`` unchanged
    (tool arguments some agents store as JSON text and others as plain text)."""
    if isinstance(text, str):
        try:
            return parse_json(text)
        except JsonError:
            return text
    return text


def decode_record(data: Any, diagnostics: Any) -> dict[str, Any] | None:
    """One JSON object from ``data``; ``None`` when it is not one, counted in
    ``diagnostics`` (a :class:`~agentlog.model.Diagnostics`) under its reason."""
    try:
        return parse_object(data)
    except JsonError as exc:
        diagnostics.skip(exc.reason)
        return None


def parse_document(data: bytes, diagnostics: Any) -> Any:
    """A whole JSON document (a file holding many records) decoded, one damaged value
    costing only itself: when ``data`` does not decode as a whole, each element of
    its arrays and each member of its objects is decoded on its own, and a value
    that still fails — nested too deep, an invalid string (a lone surrogate escape,
    invalid UTF-8), a number out of range — becomes ``None``, counted in
    ``diagnostics`` (a :class:`~agentlog.model.Diagnostics`) under its reason.  The
    record holding it is then read without that value; its neighbours are read
    whole.  A document cut short keeps the values that are complete.

    Raises :class:`JsonError` when nothing can be read (not JSON at all).
    """
    try:
        return parse_json(data)
    except JsonError as exc:
        first = exc
    view = bytes(data)
    start = _skip_space(view, 0)
    if start >= len(view) or view[start] not in b"[{":
        raise first
    value, end = _salvage(view, start, diagnostics, 0)
    if value is _LOST or _skip_space(view, end) < len(view):
        diagnostics.skip(first.reason)  # the document's own end is damaged or followed by more
    return None if value is _LOST else value


def read_document(data: bytes, diagnostics: Any, as_object: bool = False) -> Any:
    """:func:`parse_document`, or ``None`` when nothing can be read — counted in
    ``diagnostics`` under its reason (``not_an_object`` too, with ``as_object``,
    for a document that must be a JSON object and is another value)."""
    try:
        value = parse_document(data, diagnostics)
    except JsonError as exc:
        diagnostics.skip(exc.reason)
        return None
    if as_object and not isinstance(value, dict):
        diagnostics.skip(NOT_AN_OBJECT)
        return None
    return value


_SALVAGE_DEPTH = 4
"""Containers this deep in a document are not split further while salvaging: a
value that fails there is lost whole (records sit one to three levels deep)."""
_LOST = object()
_STRING_END = lazy.pattern(rb'(?:[^"\\]|\\.)*"', re.S)
_SPACE = b" \t\r\n"


def _skip_space(data: bytes, at: int) -> int:
    while at < len(data) and data[at] in _SPACE:
        at += 1
    return at


def _value_end(data: bytes, at: int) -> int:
    """The end of the JSON value starting at ``at`` (bracket and string aware, not
    validating); ``len(data)`` when it is cut short."""
    depth = 0
    n = len(data)
    while at < n:
        byte = data[at]
        if byte == 0x22:  # "
            found = _STRING_END.match(data, at + 1)
            if found is None:
                return n
            at = found.end()
            if depth == 0:
                return at
            continue
        if byte in b"[{":
            depth += 1
        elif byte in b"]}":
            if depth == 0:
                return at
            depth -= 1
            if depth == 0:
                return at + 1
        elif depth == 0 and byte in b",:" + _SPACE:
            return at
        at += 1
    return n


def _salvage(data: bytes, at: int, diagnostics: Any, depth: int) -> tuple[Any, int]:
    """Decode the value at ``at`` piecewise (see :func:`parse_document`); returns it
    (``_LOST`` when it fails whole, counted) and where it ends."""
    end = _value_end(data, at)
    piece = data[at:end]
    try:
        return parse_json(piece), end
    except JsonError as exc:
        cut_short = end >= len(data) and depth > 0
        if piece[:1] not in (b"[", b"{") or depth >= _SALVAGE_DEPTH or cut_short:
            diagnostics.skip(exc.reason)
            return _LOST, end
    closing = b"]" if piece[:1] == b"[" else b"}"
    items: list[Any] = []
    members: dict[str, Any] = {}
    pos = _skip_space(data, at + 1)
    while pos < end and data[pos : pos + 1] != closing:
        key = None
        if closing == b"}":
            key_end = _value_end(data, pos)
            key = json_value(data[pos:key_end])
            pos = _skip_space(data, key_end)
            if not isinstance(key, str) or data[pos : pos + 1] != b":":
                diagnostics.skip(INVALID_JSON)  # not an object member: the rest of the object is lost
                break
            pos = _skip_space(data, pos + 1)
        value, pos = _salvage(data, pos, diagnostics, depth + 1)
        if value is not _LOST:
            if key is None:
                items.append(value)
            else:
                members[key] = value
        pos = _skip_space(data, pos)
        if data[pos : pos + 1] == b",":
            pos = _skip_space(data, pos + 1)
        elif data[pos : pos + 1] != closing:
            break
    return (members if closing == b"}" else items), end
