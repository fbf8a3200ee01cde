"""Binary payloads in tool results (base64 images, documents, files) as file parts
(issue 12 rule 15): they never reach the search index or transcript text.

Shapes, as the providers' APIs define the content agents record:

- Anthropic Messages API content blocks (Claude Code, Cline, Roo, Kilo, Factory
  Droid): ``{"type": "image" | "document", "source": {"type": "base64",
  "media_type": "image/png", "data": "<base64>"}}``; Claude Code's ``toolUseResult``
  of a Read of an image: ``{"type": "image", "file": {"base64": "<base64>",
  "type": "image/png", "originalSize": …}}``;
- OpenAI Responses/Chat API (Codex, OpenCode …): ``{"type": "input_image",
  "image_url": "data:image/png;base64,<base64>"}``, ``{"type": "image_url",
  "image_url": {"url": "data:…"}}``;
- Gemini API parts (Gemini CLI, Qwen): ``{"inlineData": {"mimeType": "image/png",
  "data": "<base64>"}}``.

Rather than trusting a type name, any string of at least :data:`MIN_PAYLOAD`
base64 characters mixing upper and lower case and digits (or a ``data:…;base64,``
URI) is a payload: a content block
(an item of a list) holding one becomes a file part (the JSON of
:class:`~agentlog.model.FilePart`: ``{"type": "file", "media_type": …, "name": …,
"size": <decoded bytes>}``), a payload elsewhere (Claude's ``file.base64``) is
replaced by that file part, its neighbours (``originalSize``, ``dimensions``) kept, and a data URI inside
a longer text by ``[<media type>, <n> bytes]``.  The media type is the one recorded
beside the payload, else read from its first bytes (PNG, JPEG, GIF, WebP, PDF), else
``application/octet-stream``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from typing import Any

import msgspec

from agentlog import lazy
from agentlog.model import FilePart, ToolResult

MIN_PAYLOAD = 256
"""The fewest base64 characters a payload has (192 bytes: shorter strings, hashes and
ids among them, are kept as text)."""
_BASE64 = lazy.pattern(r"[A-Za-z0-9+/]+={0,2}")
_BASE64_LINES = lazy.pattern(r"[A-Za-z0-9+/\r\n]*[A-Za-z0-9+/][\r\n]*(?:=[\r\n]*){0,2}")
""":data:`_BASE64` once its line ends (``\\r``, ``\\n``) are taken out."""
_DATA_URI = lazy.pattern(r"data:([\w.+-]+/[\w.+-]+)?(?:;[\w.+-]+=[\w.+-]+)*;base64,([A-Za-z0-9+/_-]+={0,2})")
_BLOCK_TYPES = frozenset({"image", "document", "file", "input_image", "input_file", "image_url"})
_MEDIA_KEYS = ("media_type", "mediaType", "mimeType", "mime_type", "type")
_NAME_KEYS = ("name", "filename", "file_name", "path", "filePath")
_MAGIC = (
    (b"\x89PNG", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF8", "image/gif"),
    (b"%PDF", "application/pdf"),
)


def payload_size(payload: str) -> int:
    """Bytes a base64 ``payload`` decodes to (padding and line breaks not counted)."""
    body = "".join(payload.split())
    return len(body) * 3 // 4 - (len(body) - len(body.rstrip("=")))


def inline_size(source: dict[str, Any]) -> int | None:
    """Bytes of the payload an Anthropic image/document ``source`` holds inline
    (``{"type": "base64", "data": …}``), ``None`` when it names a URL or file or its
    data is not base64 (a fixture's placeholder)."""
    data = source.get("data")
    if source.get("type") != "base64" or not isinstance(data, str):
        return None
    body = "".join(data.split())
    return payload_size(body) if _BASE64.fullmatch(body) or not body else None


def _sniff(payload: str) -> str:
    try:
        head = base64.b64decode(payload[:24] + "=" * (-len(payload[:24]) % 4), altchars=b"-_")
    except (binascii.Error, ValueError):
        return "application/octet-stream"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return next((kind for magic, kind in _MAGIC if head.startswith(magic)), "application/octet-stream")


def _payload(value: str) -> tuple[str, str] | None:
    """``(media type or "", base64)`` when ``value`` is a payload, else ``None``."""
    if len(value) < MIN_PAYLOAD:
        return None
    uri = _DATA_URI.fullmatch(value)
    if uri:
        return uri.group(1) or "", uri.group(2)
    if not _BASE64_LINES.fullmatch(value):  # before copying the text without its line ends
        return None
    body = value.replace("\n", "").replace("\r", "")
    if len(body) < MIN_PAYLOAD:
        return None
    sample = body[
        :MIN_PAYLOAD
    ]  # encoded bytes mix upper and lower case and digits; a rule of dashes, a word do not
    mixed = (
        any(c.isupper() for c in sample)
        and any(c.islower() for c in sample)
        and any(c.isdigit() for c in sample)
    )
    return ("", body) if mixed else None


def _media(holder: dict[str, Any]) -> str:
    for key in _MEDIA_KEYS:
        kind = holder.get(key)
        if isinstance(kind, str) and "/" in kind:
            return kind
    return ""


def _file(media_type: str, payload: str, name: str = "") -> dict[str, Any]:
    """The JSON of the file part of ``payload``."""
    part = FilePart(media_type=media_type or _sniff(payload), name=name, size=payload_size(payload))
    return msgspec.to_builtins(part)  # type: ignore[no-any-return]


def _found(value: Any) -> tuple[str, str] | None:
    """The first payload inside ``value`` (a block's contents), with the media type
    recorded beside it."""
    if isinstance(value, str):
        return _payload(value)
    if isinstance(value, dict):
        for item in value.values():
            inner = _found(item)
            if inner is not None:
                return inner[0] or _media(value), inner[1]
    if isinstance(value, list):
        for item in value:
            inner = _found(item)
            if inner is not None:
                return inner
    return None


def without_binary(value: Any, media_hint: str = "", block: bool = False, clean: str | None = None) -> Any:
    """``value`` (a tool result's output or structured result, any JSON value) with
    each payload as a file part (see the module docstring); ``value`` itself when it
    holds none.  ``block``: ``value`` is an item of a list (a content block, which
    becomes one file part as a whole).  ``clean``: a text known to hold none (what
    this returned as it is), so that a string equal to it is not scanned again (a
    structured result repeats its output: Claude's ``toolUseResult.stdout``)."""
    if isinstance(value, str):
        if value == clean:
            return value
        found = _payload(value)
        if found is not None:
            return _file(found[0] or media_hint, found[1])
        if len(value) >= MIN_PAYLOAD and "base64," in value:
            return _DATA_URI.sub(
                lambda m: f"[{m.group(1) or _sniff(m.group(2))}, {payload_size(m.group(2))} bytes]", value
            )
        return value
    if isinstance(value, list):
        return _changed(value, enumerate(value), "", True, clean)
    if isinstance(value, dict):
        if block and (value.get("type") in _BLOCK_TYPES or "source" in value or "inlineData" in value):
            found = _found(value)
            if found is not None:
                name = next((v for k in _NAME_KEYS if isinstance(v := value.get(k), str) and v), "")
                return _file(found[0] or _media(value), found[1], name)
        return _changed(value, iter(value.items()), _media(value), False, clean)
    return value


def _changed(
    value: list[Any] | dict[Any, Any], items: Iterator[tuple[Any, Any]], hint: str, block: bool, clean: str | None
) -> list[Any] | dict[Any, Any]:
    """:func:`without_binary` of each item of a list or dict given with its ``(index
    or key, item)`` pairs: ``value`` itself when none changes, else a copy from the
    first item changed on (numbers and strings too short for a payload are not
    looked into)."""
    for at, item in items:
        kind = type(item)
        if kind in _SCALARS or (kind is str and len(item) < MIN_PAYLOAD):
            continue  # without_binary returns it as it is
        free = without_binary(item, hint, block, clean)
        if free is not item:
            copy = value.copy()
            copy[at] = free
            for rest_at, rest in items:  # the items after it
                copy[rest_at] = without_binary(rest, hint, block, clean)
            return copy
    return value


_SCALARS = (int, float, bool, type(None))


def binary_free(result: ToolResult) -> ToolResult:
    """``result`` with the payloads of its output and structured result as file parts
    (changed in place; returned for convenience)."""
    output = without_binary(result.output)
    clean = output if type(output) is str and output is result.output else None  # it holds none
    result.output = output
    result.structured = without_binary(result.structured, clean=clean)
    return result
