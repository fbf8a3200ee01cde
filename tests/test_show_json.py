"""``show --json`` is written one message at a time (#17 part 3) and is, byte for
byte, the JSON the whole session encodes to."""

from __future__ import annotations

import io
import sys

import msgspec
from click.testing import CliRunner

from agentlog.cli import main, render
from agentlog.cli.render import print_json, print_session_json
from agentlog.export.redaction import redact_header, redact_message
from agentlog.index import queries
from agentlog.index.db import connect
from agentlog.load import load_sessions
from agentlog.model import Message, Session
from agentlog.service import export, sessions
from agentlog.service.transcript import streamed_session
from secret_home import SESSION, TOKEN, secret_home
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
        streamed = _printed(lambda s: print_session_json(s, iter(s.messages)), session, monkeypatch)
        monkeypatch.setattr(render, "print_json", print_json)
        assert streamed == whole
        assert msgspec.json.decode(streamed) == msgspec.to_builtins(session)


def _indexed(home, tmp_path):
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": "", "CODEX_HOME": "", "XDG_CONFIG_HOME": ""}
    index = tmp_path / "index.sqlite"
    code = CliRunner().invoke(main, ["--index", str(index), "index"], env=env).exit_code
    assert code == 0
    return env, index


def test_show_json_reads_the_session_a_page_at_a_time_and_prints_it_whole(tmp_path, monkeypatch):
    """The command's output is the whole session encoded at once (redacted as
    ``show`` redacts it), though no more than a page of its messages is read at a
    time: each page is asked for after the one before was printed."""
    home = secret_home(make_home(tmp_path))
    env, index = _indexed(home, tmp_path)
    conn = connect(index)
    keys = [SESSION, *(k for (k,) in conn.execute("SELECT key FROM sessions ORDER BY key") if k != SESSION)]
    read: list[int] = []
    real = queries.messages_after

    def page_of_two(conn, key, after=0, limit=200, include_hidden=False):
        assert limit == 2 and include_hidden
        found, last = real(conn, key, after, limit, include_hidden)
        read.append(len(found))
        return found, last

    monkeypatch.setattr(export, "PAGE", 2)
    monkeypatch.setattr(export.stream_messages, "__defaults__", (False, 2))
    monkeypatch.setattr(queries, "messages_after", page_of_two)
    for key in keys:
        read.clear()
        found = sessions.session(conn, key).session
        whole = msgspec.structs.replace(redact_header(found), messages=[redact_message(m) for m in found.messages])
        expected = msgspec.json.format(msgspec.json.encode(whole), indent=2) + b"\n"
        result = CliRunner().invoke(
            main, ["--index", str(index), "show", "--no-sync", key, "--json"], env=env
        )
        assert result.exit_code == 0
        assert result.stdout_bytes == expected
        assert sum(read) == len(whole.messages) and max(read) <= 2 and read[-1] < 2
    shown = msgspec.json.decode(
        CliRunner()
        .invoke(main, ["--index", str(index), "show", "--no-sync", SESSION, "--json"], env=env)
        .stdout
    )
    assert TOKEN not in msgspec.json.encode(shown).decode() and len(shown["messages"]) == 2


def test_streamed_session_is_the_session_whole_and_its_messages_in_order(tmp_path):
    home = secret_home(make_home(tmp_path))
    _, index = _indexed(home, tmp_path)
    conn = connect(index)
    for (key,) in conn.execute("SELECT key FROM sessions").fetchall():
        whole = sessions.session(conn, key).session
        header, messages = streamed_session(conn, key, redact=False)
        streamed: list[Message] = list(messages)
        assert header == msgspec.structs.replace(whole, messages=[])
        assert streamed == whole.messages
    header, messages = streamed_session(conn, SESSION)
    texts = [m.text for m in messages]
    assert texts == ["push with token [REDACTED:github_token] please", "Pushing now."]
    assert header.title == "push with token [REDACTED:github_token] please"


def test_show_prints_the_transcript_of_the_whole_session_reading_a_page_at_a_time(tmp_path, monkeypatch):
    """Plain ``show`` prints what the transcript of the whole session (redacted)
    prints, with its subagents, while it reads two messages at a time and never
    loads the session whole (no summary is kept, so nothing needs it)."""
    from rich.console import Console

    from agentlog.cli.render import print_markup, render_transcript
    from agentlog.export.redaction import redact_header as redacted
    from agentlog.present import clean

    home = secret_home(make_home(tmp_path))
    env, index = _indexed(home, tmp_path)
    conn = connect(index)
    keys = [k for (k,) in conn.execute("SELECT key FROM sessions ORDER BY key")]
    expected: dict[str, str] = {}
    for key in keys:
        found = sessions.session(conn, key)
        whole = msgspec.structs.replace(redacted(found.session), messages=[])
        console = Console(file=io.StringIO(), width=80, color_system=None, highlight=False)
        render_transcript(console, whole, [redact_message(m) for m in found.session.messages])
        if found.children:
            print_markup(
                console,
                "\nsubagents",
                *(clean(f"  {c.key}  {c.subagent_type or c.kind}  {redacted(c).title or ''}"[:160], one_line=True) for c in found.children),
            )
        text = console.file.getvalue()  # type: ignore[attr-defined]
        expected[key] = text
    assert any(sessions.session(conn, k).children for k in keys)
    monkeypatch.setattr(export.stream_messages, "__defaults__", (False, 2))
    monkeypatch.setattr(queries, "get_session", None)  # the whole session is never loaded
    for key in keys:
        result = CliRunner().invoke(main, ["--index", str(index), "show", "--no-sync", key], env=env)
        assert result.exit_code == 0, result.output
        assert result.output == expected[key]
    assert TOKEN not in "".join(expected.values())
