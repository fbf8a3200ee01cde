"""JSON and JSONL exports, written as the messages are read.

``json``: a session is its model (:class:`agentlog.model.Session` as msgspec
encodes it, the format ``schema/session.schema.json`` describes), its
``messages`` written one by one into the array; several sessions make a JSON
array of them.  ``jsonl``: one object per line, a ``{"type": "session", …}``
line (the session without its messages) then a ``{"type": "message",
"session_key": …, …}`` line per message (the message model with those two
fields first), for tools that stream.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import BinaryIO

import msgspec

from agentlog.export import Transcript

_ENCODER = msgspec.json.Encoder()
_EMPTY_TAIL = b'"messages":[]}'


def _head(t: Transcript) -> bytes:
    """The session's JSON without its closing ``[]}``: ``…,"messages":``."""
    encoded = _ENCODER.encode(msgspec.structs.replace(t.session, messages=[]))
    if not encoded.endswith(_EMPTY_TAIL):  # messages is the model's last field
        raise AssertionError("Session.messages must be its last field")
    return encoded[: -len(_EMPTY_TAIL)] + b'"messages":'


def write_session(t: Transcript, out: BinaryIO) -> None:
    """One session as its JSON model."""
    out.write(_head(t) + b"[")
    separator = b""
    for message in t.messages():  # each message's JSON written as encoded, never joined to more
        out.write(separator)
        out.write(_ENCODER.encode(message))
        separator = b","
    out.write(b"]}")


def write_json(transcripts: Iterable[Transcript], out: BinaryIO, many: bool) -> None:
    """Each transcript's sessions (with their children when exported) as JSON: one
    session object, or (``many``) an array of them; a final newline."""
    sessions = [s for t in transcripts for s in t.tree()]
    if not many and len(sessions) == 1:
        write_session(sessions[0], out)
    else:
        out.write(b"[")
        for i, s in enumerate(sessions):
            out.write(b",\n" if i else b"")
            write_session(s, out)
        out.write(b"]")
    out.write(b"\n")


def write_jsonl(transcripts: Iterable[Transcript], out: BinaryIO) -> None:
    """Every session of the transcripts as JSON lines: its session line, then its message lines."""
    for t in transcripts:
        for s in t.tree():
            out.write(
                b'{"type":"session",'
                + _ENCODER.encode(msgspec.structs.replace(s.session, messages=[]))[1:]
                + b"\n"
            )
            prefix = b'{"type":"message","session_key":' + _ENCODER.encode(s.session.key) + b","
            for message in s.messages():
                out.write(prefix)
                out.write(memoryview(_ENCODER.encode(message))[1:])  # a 64 MiB message copied no more
                out.write(b"\n")
