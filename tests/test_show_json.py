"""``show --json`` is written one message at a time (#17 part 3) and is, byte for
byte, the JSON the whole session encodes to."""

from __future__ import annotations

import io
import sys

import msgspec

from agentlog.cli import render
from agentlog.cli.render import print_json, print_session_json
from agentlog.load import load_sessions
from agentlog.model import Session
from test_index import make_home


def _printed(write, session: Session, monkeypatch) -> bytes:
    buffer = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(buffer))
    write(session)
    return buffer.getvalue()


def test_streamed_session_json_equals_the_whole_encoded_at_once(tmp_path, monkeypatch):
    home = make_home(tmp_path)
    sessions = load_sessions(env={"HOME": str(home)}, home=home)
    assert sum(len(s.messages) for s in sessions) > 50
    empty = msgspec.structs.replace(sessions[0], messages=[])
    for session in [*sessions, empty]:
        whole = _printed(print_json, session, monkeypatch)
        if session.messages:  # streamed, never encoded whole
            monkeypatch.setattr(render, "print_json", None)
        streamed = _printed(print_session_json, session, monkeypatch)
        monkeypatch.setattr(render, "print_json", print_json)
        assert streamed == whole
        assert msgspec.json.decode(streamed) == msgspec.to_builtins(session)
