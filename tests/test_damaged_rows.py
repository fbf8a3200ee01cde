"""A stored value the index cannot decode (``parts.data`` of one part of the demo's
weather session overwritten by bytes that are not msgpack) is the one "damaged
index" answer on every surface, never an internal error (exit 70, a raw
``DecodeError``, a 500)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

import agentlog
from agentlog.errors import IndexProblem
from agentlog.index import db
from agentlog.web.app import create_app
from test_cli import run

WEATHER = "claude_code:de70c1a0-7e57-4b1d-9a6e-5e551011f00d"
BAD = bytes.fromhex("81A474797065A2FFFE")
"""A msgpack map whose key is ``"type"`` and whose value is invalid UTF-8."""
WHY = "a stored part cannot be decoded: Invalid UTF-8 encoded string"


@pytest.fixture
def damaged_demo() -> Path:
    """The demo index (this test's own: ``$AGENTLOG_INDEX``'s folder) with the weather
    session's ``bash`` tool call (``pytest -q``) damaged."""
    code, _, err = run("--demo", "sessions")
    assert code == 0, err
    path = db.default_path(os.environ, demo=True)
    conn = sqlite3.connect(path)
    try:
        (rowid,) = conn.execute(
            "SELECT p.rowid FROM parts p JOIN messages m ON m.rowid = p.message_rowid "
            "WHERE m.session_key = ? AND p.tool = 'bash' ORDER BY p.rowid LIMIT 1",
            (WEATHER,),
        ).fetchone()
        conn.execute("UPDATE parts SET data = ? WHERE rowid = ?", (BAD, rowid))
        conn.commit()
    finally:
        conn.close()
    return path


def _line(path: Path) -> str:
    return f"the index {path} is damaged ({WHY}): it is a cache: delete it to rebuild"


@pytest.mark.parametrize(
    "args",
    [
        ["show", "de70"],
        ["show", "de70", "--json"],
        ["export", "de70"],
        ["search", "pytest"],
        ["search", "pytest", "--sort", "newest"],
    ],
)
def test_the_command_line_says_the_index_is_damaged(damaged_demo, args):
    code, _, err = run("--demo", "--no-sync", *args)
    assert (code, err.splitlines()[-1]) == (1, f"agentlog: {_line(damaged_demo)}")


def test_the_api_raises_index_problem(damaged_demo):
    with agentlog.open(demo=True, sync=False) as archive:
        for call in (lambda: archive.session("de70"), lambda: archive.search("pytest")):
            with pytest.raises(IndexProblem) as raised:
                call()
            assert str(raised.value) == _line(damaged_demo)
        assert [s.id[:8] for s in archive.sessions(agent="claude")] [:2] == ["de70c1a0", "5c0375b4"]  # the rest reads on


def test_mcp_says_it_as_the_tools_error(damaged_demo):
    pytest.importorskip("mcp")
    from mcp.client import Client

    from agentlog.mcp.server import Index, build_server

    index = Index(lambda: db.connect(damaged_demo), None)
    server = build_server(index)

    async def go(name: str, args: dict[str, Any]) -> tuple[bool, str]:
        async with Client(server) as client:
            result = await client.call_tool(name, args)
            return result.is_error, result.content[0].text  # type: ignore[union-attr]

    try:
        assert anyio.run(go, "get_messages", {"session_id": WEATHER}) == (
            True,
            f"Error executing tool get_messages: the index is damaged ({WHY}): it is a cache: delete it to rebuild",
        )
        assert anyio.run(go, "list_sessions", {"agent": "claude"})[0] is False  # what is sound reads on
    finally:
        index.close()


def test_the_viewer_answers_503_with_the_line(damaged_demo):
    client = create_app(damaged_demo).test_client()
    for route in (f"/session?key={WEATHER}", "/search?q=pytest"):
        response = client.get(route, headers={"Sec-Fetch-Site": "same-origin"})
        assert (response.status_code, response.get_data(as_text=True)) == (503, _line(damaged_demo)), route


def test_a_sync_that_must_delete_the_damaged_row_says_so(tmp_path):
    """Re-reading a source deletes its parts and their full-text entries, which
    SQLite asks :data:`agentlog.index.db.INDEX_TEXT_SQL` for: it cannot decode the
    damaged one (SQLite says only "user-defined function raised exception")."""
    from agentlog.demo import demo_home

    shutil.copytree(demo_home(), tmp_path / "home")
    env = {"HOME": str(tmp_path / "home"), "AGENTLOG_INDEX": str(tmp_path / "index.sqlite")}
    code, _, err = run("index", env=env)
    assert code == 0, err
    conn = sqlite3.connect(tmp_path / "index.sqlite")
    try:
        conn.execute(
            "UPDATE parts SET data = ? WHERE rowid = (SELECT p.rowid FROM parts p JOIN messages m "
            "ON m.rowid = p.message_rowid WHERE m.session_key = ? AND p.tool = 'bash' LIMIT 1)",
            (BAD, WEATHER),
        )
        conn.commit()
    finally:
        conn.close()
    code, _, err = run("index", "--full", env=env)
    assert (code, err.splitlines()[-1]) == (1, f"agentlog: {_line(tmp_path / 'index.sqlite')}")


COLUMNS = [
    ("UPDATE messages SET timestamp = 'not a time'", "message", "ValueError: Invalid isoformat string: 'not a time'"),
    ("UPDATE messages SET timestamp = 12345", "message", "ValueError: Invalid isoformat string: '12345'"),
    ("UPDATE messages SET flags = '{{{'", "message", "JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
    ("UPDATE messages SET role = 'wizard'", "message", "KeyError: 'wizard'"),
    ("UPDATE usage SET input_tokens = 'many'", "usage", "TypeError: '<' not supported between instances of 'int' and 'str'"),
    ("UPDATE usage SET input_tokens = -5", "usage", "TypeError: token counts are no counts"),
    ("UPDATE usage SET cost_usd = 'free'", "usage", "TypeError: the cost is no number"),
    ("UPDATE parts SET text = X'FFFE00' WHERE data IS NULL", "part", "TypeError: text stored as bytes"),
]  # fmt: skip
"""A column of the weather session's rows damaged, what it is read as, and the
error the one decoder (:func:`agentlog.index.stored.row_decoder`) names."""


@pytest.mark.parametrize(("sql", "what", "why"), COLUMNS)
@pytest.mark.parametrize("args", [["show", "de70"], ["show", "de70", "--json"], ["export", "de70", "-f", "md"]])
def test_a_damaged_column_is_the_damaged_index_line(sql, what, why, args):
    code, _, err = run("--demo", "sessions")
    assert code == 0, err
    path = db.default_path(os.environ, demo=True)
    conn = sqlite3.connect(path)
    scope = "SELECT rowid FROM messages WHERE session_key = ?"
    where = "message_rowid IN" if " usage " in sql or " parts " in sql else "rowid IN"
    conn.execute(f"{sql} {'AND' if 'WHERE' in sql else 'WHERE'} {where} ({scope})", (WEATHER,))
    conn.commit()
    conn.close()
    code, _, err = run("--demo", "--no-sync", *args)
    line = f"the index {path} is damaged (a stored {what} cannot be decoded: {why}): it is a cache: delete it to rebuild"
    assert (code, err.splitlines()[-1]) == (1, f"agentlog: {line}")


SESSIONS = [
    ("UPDATE sessions SET started_at = 'yesterday'", "ValueError: Invalid isoformat string: 'yesterday'"),
    ("UPDATE sessions SET models = 'x['", "JSONDecodeError: Expecting value: line 1 column 1 (char 0)"),
    ("UPDATE sessions SET status = 'zombie'", "KeyError: 'zombie'"),
]
"""A column of the weather session's ``sessions`` row damaged, and the error its
decoder (:func:`agentlog.index.store.session_from_row`) names."""


@pytest.mark.parametrize(("sql", "why"), SESSIONS)
def test_a_damaged_session_header_is_the_damaged_index_line(sql, why):
    code, _, err = run("--demo", "sessions")
    assert code == 0, err
    path = db.default_path(os.environ, demo=True)
    conn = sqlite3.connect(path)
    conn.execute(f"{sql} WHERE key = ?", (WEATHER,))
    conn.commit()
    conn.close()
    line = f"the index {path} is damaged (a stored session header cannot be decoded: {why}): it is a cache: delete it to rebuild"
    for args in (["sessions"], ["sessions", "--json"], ["show", "de70"]):
        code, _, err = run("--demo", "--no-sync", *args)
        assert (code, err.splitlines()[-1]) == (1, f"agentlog: {line}"), args


TABLES = {"message": "messages", "usage": "usage", "part": "parts", "session": "sessions"}
"""What a damaged row of :data:`COLUMNS` is read as, and its table."""


def _damage(sql: str | None, what: str) -> tuple[str, list[int], str]:
    """The demo index with the weather session damaged by ``sql`` (one of
    :data:`COLUMNS` or :data:`SESSIONS`; ``None``: the part of
    :func:`damaged_demo`): the table damaged, its rows damaged, the source."""
    code, _, err = run("--demo", "sessions")
    assert code == 0, err
    conn = sqlite3.connect(db.default_path(os.environ, demo=True))
    (source,) = conn.execute(
        "SELECT s.path FROM sources s JOIN sessions x ON x.source_id = s.id WHERE x.key = ?", (WEATHER,)
    ).fetchone()
    scope = "SELECT rowid FROM messages WHERE session_key = ?"
    table = TABLES[what]
    if sql is None:
        first = f"SELECT rowid FROM parts WHERE tool = 'bash' AND message_rowid IN ({scope}) ORDER BY rowid LIMIT 1"
        sql = f"UPDATE parts SET data = X'{BAD.hex()}' WHERE rowid = ({first})"
    elif table == "sessions":
        sql = f"{sql} WHERE key = ?"
    else:
        where = "rowid IN" if table == "messages" else "message_rowid IN"
        sql = f"{sql} {'AND' if 'WHERE' in sql else 'WHERE'} {where} ({scope})"
    key = "message_rowid" if table == "usage" else "rowid"
    rowids = sorted((r for (r,) in conn.execute(f"{sql} RETURNING {key}", (WEATHER,))), reverse=True)
    conn.commit()
    conn.close()
    return table, rowids, source


@pytest.mark.parametrize(
    ("sql", "what", "why"),
    [*COLUMNS, *((sql, "session", why) for sql, why in SESSIONS), (None, "part", WHY.split(": ", 1)[1])],
)
def test_doctor_deep_names_every_row_a_read_stops_at_and_no_other(sql, what, why):
    """Each damage of this module (a column of the weather session's rows, its
    session row, a part's bytes) is named by ``doctor --deep``: every damaged row,
    its table, session and source, with the line a read of it says; no other row."""
    table, rowids, source = _damage(sql, what)
    line = f"a stored {'session header' if what == 'session' else what} cannot be decoded: {why}"
    code, out, err = run("--demo", "--no-sync", "doctor", "--deep", "--json")
    rows = json.loads(out)["rows"]
    assert (code, rows["every_row"], rows["damaged_count"]) == (1, True, len(rowids)), err
    assert rows["damaged"] == [
        {"what": what, "rowid": r, "session": WEATHER, "path": source, "error": line, "table": table}
        for r in rowids
    ]
    code, _, err = run("--demo", "--no-sync", "show", "de70")
    path = db.default_path(os.environ, demo=True)
    said = f"agentlog: the index {path} is damaged ({line}): it is a cache: delete it to rebuild"
    assert (code, err.splitlines()[-1]) == (1, said)


@pytest.mark.parametrize("fmt", ["parquet", "md"])
def test_a_sources_sidecars_value_that_is_not_json_costs_only_itself(tmp_path, fmt):
    """The export's check that it writes no log reads each source's sidecars as
    JSON in SQL (``json_each``: "malformed JSON", exit 70, for the whole export):
    a damaged value is searched as text instead, so the export is written, and a
    path written in the damaged value is still refused."""
    code, _, err = run("--demo", "sessions")
    assert code == 0, err
    path = db.default_path(os.environ, demo=True)
    side = tmp_path / "side.json"
    conn = sqlite3.connect(path)
    damaged = f'["{side}", not json'
    conn.execute("UPDATE sources SET sidecars = ? WHERE path LIKE '%de70c1a0%'", (damaged,))
    conn.commit()
    found = conn.execute("SELECT count(*) FROM sources WHERE sidecars = ?", (damaged,)).fetchone()
    assert found == (2,)  # its subagent's log too
    conn.close()
    out = tmp_path / ("pq" if fmt == "parquet" else "weather.md")
    code, _, err = run("--demo", "--no-sync", "export", "de70", "-f", fmt, "-o", str(out))
    said = "2 sessions" if fmt == "parquet" else "1 session"
    # every message of the session and its subagent, the 2 hidden ones too (json, jsonl and parquet hold them)
    rows = " (2 sessions, 16 messages, 19 parts, 2 usage)" if fmt == "parquet" else ""
    assert (code, err) == (0, f"{said} exported to {out}{rows}\n")
    assert out.exists()
    code, _, err = run("--demo", "--no-sync", "export", "de70", "-f", "md", "-o", str(side))
    assert code == 2 and not side.exists(), err
