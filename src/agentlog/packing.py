"""The binary form of what agentlog keeps between reads: msgpack, with JSON where
msgpack cannot hold a value.

Logs may hold integers msgpack cannot encode (outside ``-2**63 … 2**64-1``: a tool
input or a raw record with ``18446744073709551616``).  They are kept as they were
recorded — the in-memory loader never encodes them, so the index, the parse worker
and the saved parser state must keep them too — by writing such a value as JSON
(msgspec encodes and decodes any integer there).  :func:`unpack` tells the two apart
by the first byte: every packed value is a struct, list or dict, whose msgpack form
starts with a map or array header (``0x80``–``0x9f``, ``0xdc``–``0xdf``), never with
``{`` or ``[`` (``0x7b``, ``0x5b``: msgpack positive fixints).
"""

from __future__ import annotations

from functools import cache
from typing import Any, TypeVar

import msgspec

T = TypeVar("T")

_MSGPACK = msgspec.msgpack.Encoder()
_JSON = msgspec.json.Encoder()


def pack(value: Any) -> bytes:
    """``value`` (a struct, list or dict) as msgpack, or as JSON when it holds an
    integer msgpack cannot encode."""
    try:
        return _MSGPACK.encode(value)
    except OverflowError:
        return _JSON.encode(value)


def unpack(data: bytes | memoryview, kind: type[T]) -> T:
    """What :func:`pack` wrote, as a ``kind``.  Raises ``msgspec.DecodeError`` for
    bytes that are neither."""
    key: Any = kind
    msgpack, json = _decoders(key)
    value: T = (json if bytes(data[:1]) in (b"{", b"[") else msgpack).decode(data)
    return value


@cache
def _decoders(kind: Any) -> tuple[msgspec.msgpack.Decoder[Any], msgspec.json.Decoder[Any]]:
    """The msgpack and JSON decoders of ``kind``, made once."""
    return msgspec.msgpack.Decoder(kind), msgspec.json.Decoder(kind)
