"""The MCP server (``agentlog mcp``): the SDK's own client against the real
process on stdio, and in-process for the rest of each tool's contract."""

from __future__ import annotations

import json
import os
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from click.testing import CliRunner
from mcp.client import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from agentlog.cli import main
from agentlog.cli.mcp import http_address
from agentlog.errors import UsageError
from agentlog.index import db
from agentlog.mcp.server import PAGE_CHARS, Index, build_server
from agentlog.service.home import Home
from agentlog.service.index import update_index
from secret_home import SESSION, TOKEN, secret_home

TOOLS = {
    "list_sessions",
    "search_sessions",
    "get_session_overview",
    "get_messages",
    "get_usage_summary",
    "find_sessions_by_file",
    "get_live_status",
}
WEATHER = "claude_code:de70c1a0-7e57-4b1d-9a6e-5e551011f00d"
REVIEW = "claude_code:agent-b7e1d2c3"
CODEX = "codex:019ab0d2-4c1e-7f00-9d2a-5e551011c0de"


def _cli_json(*args: str) -> Any:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_the_sdk_client_drives_the_real_agentlog_demo_mcp_process():
    script = Path(sys.executable).with_name("agentlog")  # the console script pip installed
    assert script.is_file()
    params = StdioServerParameters(
        command=str(script), args=["--demo", "mcp"], env={"AGENTLOG_INDEX": os.environ["AGENTLOG_INDEX"]}
    )

    async def session() -> tuple[set[str], dict[str, Any], dict[str, Any]]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            listed = await client.list_tools()
            for tool in listed.tools:
                assert tool.annotations is not None and tool.annotations.read_only_hint is True
            found = await client.call_tool("search_sessions", {"query": "rounding"})
            sessions = await client.call_tool("list_sessions", {"limit": 2})
            assert not found.is_error and not sessions.is_error
            assert found.structured_content is not None and sessions.structured_content is not None
            return {t.name for t in listed.tools}, found.structured_content, sessions.structured_content

    names, found, sessions = anyio.run(session)
    assert names == TOOLS
    assert found["total"] == 2 and found["next_cursor"] is None
    assert [(r["session_id"], r["match_ordinal"], r["session_hits"]) for r in found["results"]] == [
        (WEATHER, 4, 2),
        (REVIEW, 0, 1),
    ]
    assert found["results"][1]["snippet"] == (
        "Review the «rounding» change in weather/stats.py for other callers that expect full precision."
    )
    assert sessions["total"] == 6 and sessions["next_cursor"] == 2
    assert [(s["session_id"], s["message_count"], s["total_tokens"]) for s in sessions["sessions"]] == [
        (CODEX, 5, 35960),
        (WEATHER, 11, 92349),
    ]


@pytest.fixture
def call():
    """Call one tool of an in-process server over the demo index: ``(is_error, result)``."""
    home = Home.of(os.environ, (), demo=True)
    path = db.default_path(home.env, demo=True)
    index = Index(lambda: db.connect(path), lambda conn: update_index(conn, home))
    server = build_server(index)

    def run(name: str, args: dict[str, Any]) -> tuple[bool, Any]:
        async def go() -> tuple[bool, Any]:
            async with Client(server) as client:
                result = await client.call_tool(name, args)
                if result.is_error:
                    return True, result.content[0].text  # type: ignore[union-attr]
                return False, result.structured_content

        return anyio.run(go)

    yield run
    index.close()


def test_the_help_names_every_tool():
    out = CliRunner().invoke(main, ["mcp", "--help"]).stdout
    named = set(re.findall(r"\b(?:list|search|get|find)_[a-z_]+", " ".join(out.split())))
    assert named == TOOLS


def test_list_sessions_pages_with_a_cursor_and_filters_like_the_cli(call):
    _, first = call("list_sessions", {"limit": 4})
    _, rest = call("list_sessions", {"limit": 4, "cursor": 4})
    keys = [s["session_id"] for s in first["sessions"] + rest["sessions"]]
    cli = [s["key"] for s in _cli_json("--demo", "sessions", "--json")]
    assert keys == cli and first["next_cursor"] == 4 and rest["next_cursor"] is None
    _, codex = call("list_sessions", {"agent": "CODEX"})
    assert [s["session_id"] for s in codex["sessions"]] == [CODEX]
    assert codex["sessions"][0]["cost_usd"] == 0.018469
    _, with_children = call(
        "list_sessions", {"include_subagents": True, "since": "2026-11-20", "until": "2026-11-20"}
    )
    assert [s["session_id"] for s in with_children["sessions"]] == [REVIEW, WEATHER]


def test_get_messages_pages_cuts_and_filters_roles(call):
    _, page = call("get_messages", {"session_id": "de70c1a0", "limit": 2, "max_chars_per_message": 100})
    assert page["session_id"] == WEATHER and page["total"] == 11 and page["next_from"] == 2
    first, second = page["messages"]
    assert first == {
        "ordinal": 0,
        "role": "user",
        "timestamp": "2026-11-20T09:00:01Z",
        "model": None,
        "content": "The forecast test fails since the rounding change. Can you fix it? Run the tests first.",
        "full_length": 87,
        "truncated": False,
        "has_tool_use": False,
    }
    assert second["content"] == (
        "I'll run the test suite first.\n[bash] pytest -q tests/test_forecast.py\n[error] F.\n=== FAILURES ===\n…"
    )
    assert (len(second["content"]), second["full_length"], second["truncated"]) == (100, 234, True)
    _, users = call("get_messages", {"session_id": WEATHER, "limit": 100, "roles": ["user"]})
    assert [m["ordinal"] for m in users["messages"]] == [0, 8, 10]
    assert users["filtered"] == 8 and users["next_from"] is None
    _, end = call("get_messages", {"session_id": WEATHER, "from_ordinal": 10})
    assert [m["ordinal"] for m in end["messages"]] == [10] and end["next_from"] is None
    assert PAGE_CHARS == 100_000


def test_the_session_overview_reads_the_processes_once_and_equals_its_parts(call, monkeypatch):
    """``get_session_overview`` is one service call (:func:`session_overview`):
    ``/proc`` is read once for every status it gives, and its header, messages and
    subagents are those of :func:`message_slice` and :func:`subagents`."""
    from agentlog.live import procs
    from agentlog.service.costed import with_costs
    from agentlog.service.transcript import message_slice, session_overview, subagents

    call("get_session_overview", {"session_id": "de70c1a0"})  # the demo index synced
    home = Home.of(os.environ, (), demo=True)
    conn = db.connect(db.default_path(home.env, demo=True), readonly=True)
    scans = []
    real = procs.scan
    monkeypatch.setattr(procs, "scan", lambda: scans.append(1) or real())
    try:
        seen = session_overview(conn, "de70c1a0", last=3, scanned=20, children=20)
        assert len(scans) == 1
        first = message_slice(conn, "de70c1a0", 0, 20)
        tail = message_slice(conn, WEATHER, first.total - 3, 3)
        assert seen.header == with_costs(conn, [first.header])[0]
        assert seen.opening == (0, first.messages[0]) and first.messages[0].role == "user"
        assert seen.last == [(tail.offset + i, m) for i, m in enumerate(tail.messages)]
        assert seen.total == first.total == 11
        assert seen.subagents == with_costs(conn, subagents(conn, WEATHER)) and seen.subagents[0].key == REVIEW
    finally:
        conn.close()


def test_overview_search_and_file_tools_give_exact_values(call):
    _, overview = call("get_session_overview", {"session_id": "de70c1a0"})
    assert overview["session"]["name"] == "weather: fix daily_mean rounding"
    assert overview["resume_command"] == "claude --resume de70c1a0-7e57-4b1d-9a6e-5e551011f00d"
    assert overview["usage"]["total_tokens"] == 92349 and overview["usage"]["cache_write_tokens"] == 17502
    assert [s["session_id"] for s in overview["subagents"]] == [REVIEW]
    assert overview["first_message"]["ordinal"] == 0 and overview["message_count"] == 11
    assert [m["ordinal"] for m in overview["last_messages"]] == [8, 9, 10]
    assert overview["summary"] is None  # none made (agentlog summarize)
    _, newest = call("search_sessions", {"query": "rounding", "sort": "recency", "limit": 1})
    assert [r["session_id"] for r in newest["results"]] == [REVIEW] and newest["next_cursor"] == 1
    _, touched = call("find_sessions_by_file", {"path": "weather/stats.py"})
    (weather,) = touched["sessions"]
    assert weather["session_id"] == WEATHER and weather["touch_count"] == 2
    assert [(t["tool"], t["path"], t["ordinal"]) for t in weather["touches"]] == [
        ("edit", "/home/demo/src/weather/weather/stats.py", 3),
        ("read", "/home/demo/src/weather/weather/stats.py", 2),
    ]
    _, relative = call("find_sessions_by_file", {"path": "weather/units.py"})
    assert [(s["session_id"], s["touches"][0]["path"]) for s in relative["sessions"]] == [
        (CODEX, "/home/demo/src/weather/weather/units.py")
    ]
    _, none = call("find_sessions_by_file", {"path": "/elsewhere/stats.py"})
    assert none == {"sessions": []}


def test_usage_summary_equals_the_usage_command(call):
    for report in ("daily", "agent", "session"):
        _, summary = call("get_usage_summary", {"report": report, "timezone": "UTC"})
        cli = _cli_json("--demo", "usage", report, "--json", "--timezone", "UTC")
        assert summary["rows_omitted"] == 0
        assert summary["rows"] == cli["rows"] and summary["totals"] == cli["totals"]


@pytest.mark.parametrize(
    ("name", "args", "error"),
    [
        ("get_messages", {"session_id": "nope"}, "no session matches 'nope'"),
        ("list_sessions", {"agent": "zz"}, "unknown agent 'zz'"),
        ("list_sessions", {"since": "yesterday"}, "not a date: 'yesterday'"),
        ("list_sessions", {"limit": 101}, "less than or equal to 100"),
        ("search_sessions", {"query": ""}, "at least 1 character"),
        (
            "get_messages",
            {"session_id": WEATHER, "max_chars_per_message": 10},
            "greater than or equal to 100",
        ),
        ("get_usage_summary", {"report": "blocks"}, "Input should be 'daily'"),
        ("list_sessions", {"since": ""}, "since is empty (leave it out for no bound)"),
        ("list_sessions", {"until": " "}, "until is empty (leave it out for no bound)"),
        ("search_sessions", {"query": "weather", "since": ""}, "since is empty"),
        ("get_usage_summary", {"timezone": ""}, "timezone is empty (leave it out for the local zone)"),
        ("search_sessions", {"query": "weather", "cursor": 2**63 - 6}, "less than or equal to 2147483648"),
    ],
)
def test_bad_inputs_are_the_tools_errors(call, name, args, error):
    failed, text = call(name, args)
    assert failed and error in text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8085", ("127.0.0.1", 8085)),
        (":8085", ("127.0.0.1", 8085)),
        ("[::1]:9", ("::1", 9)),
        ("localhost:80", ("localhost", 80)),
    ],
)
def test_http_binds_to_loopback(text, expected):
    assert http_address(text) == expected


@pytest.mark.parametrize("text", ["0.0.0.0:8085", "192.168.1.2:80", "example.com:80", "99999", "x"])
def test_http_refuses_other_addresses(text):
    with pytest.raises(UsageError):
        http_address(text)


def test_without_the_sdk_the_command_says_what_to_install(monkeypatch):
    for name in [m for m in sys.modules if m == "mcp" or m.startswith("mcp.")]:
        monkeypatch.setitem(sys.modules, name, None)
    for name in [m for m in sys.modules if m.startswith("agentlog.mcp.")]:
        monkeypatch.delitem(sys.modules, name)
    result = CliRunner().invoke(main, ["--demo", "mcp"])
    assert result.exit_code == 1
    assert result.stderr == "agentlog: agentlog mcp needs the MCP SDK: pip install 'agentlog[mcp]'\n"
    assert not Path(os.environ["AGENTLOG_INDEX"]).with_name("demo.sqlite").exists()


def test_log_text_is_redacted_in_every_tool(tmp_path):
    home = Home({"HOME": str(tmp_path / "home")}, secret_home(tmp_path / "home"))
    index = Index(lambda: db.connect(tmp_path / "index.sqlite"), lambda conn: update_index(conn, home))
    server = build_server(index)

    async def go() -> list[Any]:
        async with Client(server) as client:
            out = []
            for name, args in [
                ("search_sessions", {"query": "push"}),
                ("list_sessions", {}),
                ("get_session_overview", {"session_id": "5ec7e700"}),
                ("get_messages", {"session_id": "5ec7e700"}),
                ("get_live_status", {"since": "2000-01-01"}),
            ]:
                result = await client.call_tool(name, args)
                assert not result.is_error, result.content
                out.append(result.structured_content)
            return out

    try:
        found, listed, overview, messages, live = anyio.run(go)
    finally:
        index.close()
    everything = json.dumps([found, listed, overview, messages, live])
    assert TOKEN not in everything and "A1b2C3d4E5" not in everything
    assert listed["sessions"][0]["name"] == "push with token [REDACTED:github_token] please"
    assert live["sessions"][0]["name"] == listed["sessions"][0]["name"]
    assert [m["content"] for m in messages["messages"]] == [
        "push with token [REDACTED:github_token] please",
        "Pushing now.\n[bash] git push https://[REDACTED:github_token]@github.com/o/r",
    ]
    assert found["results"][0]["snippet"].count("[REDACTED:github_token]") == 1


def test_search_leaves_out_the_sessions_active_now(tmp_path):
    """The client's own conversation is recorded too: it is not found unless asked for."""
    start = datetime.now(UTC) - timedelta(minutes=2)
    home = Home({"HOME": str(tmp_path / "home")}, secret_home(tmp_path / "home", start))
    index = Index(lambda: db.connect(tmp_path / "index.sqlite"), lambda conn: update_index(conn, home))
    server = build_server(index)

    async def go(args: dict[str, Any]) -> Any:
        async with Client(server) as client:
            return (await client.call_tool("search_sessions", args)).structured_content

    try:
        hidden = anyio.run(go, {"query": "push"})
        shown = anyio.run(go, {"query": "push", "include_active": True})
    finally:
        index.close()
    assert (hidden["results"], hidden["excluded_active"], hidden["total"]) == ([], 1, 1)
    assert [r["session_id"] for r in shown["results"]] == [SESSION] and shown["excluded_active"] == 0


def test_live_status_is_the_status_commands_board(call):
    cli = _cli_json("--demo", "status", "--json", "--since", "2026-11-01")
    _, board = call("get_live_status", {"since": "2026-11-01"})
    assert [(r["session_id"], r["status"], r["inferred"], r["evidence"]) for r in board["sessions"]] == [
        (r["key"], r["status"], r["inferred"], r["evidence"]) for r in cli
    ]
    assert [(r["session_id"], r["status"]) for r in board["sessions"]] == [
        (WEATHER, "interrupted"),
        (CODEX, "done"),
    ]
    assert [c["session_id"] for c in board["sessions"][0]["subagents"]] == [REVIEW] and board["total"] == 2
    assert board["sessions"][0]["turn"] == cli[0]["turn"]
    _, one = call("get_live_status", {"since": "2026-11-01", "agent": "codex", "limit": 1})
    assert [r["session_id"] for r in one["sessions"]] == [CODEX]
    error, text = call("get_live_status", {"since": "yesterday-ish"})
    assert error and "yesterday-ish" in text


def test_every_surface_gives_a_session_the_boards_status(call):
    """One status rule (the log's, refined by the clock and the processes) on every
    path: the board (`status`), MCP's listing and overview, the Python API's
    listing and its status filter (tester finding: MCP and the API gave the stored,
    log-only status, `waiting_for_user` for sessions the board calls `done`)."""
    import agentlog

    def flat(rows: list[dict[str, Any]]) -> dict[str, str]:
        return {k: v for r in rows for k, v in [(r["key"], r["status"]), *flat(r.get("children", [])).items()]}

    board = flat(_cli_json("--demo", "status", "--json", "--since", "2000-01-01"))
    assert len(board) == 9 and set(board.values()) == {"done", "interrupted"}
    _, listed = call("list_sessions", {"include_subagents": True, "since": "2000-01-01", "limit": 100})
    assert {s["session_id"]: s["status"] for s in listed["sessions"]} == board
    for key, status in board.items():
        _, overview = call("get_session_overview", {"session_id": key})
        assert overview["session"]["status"] == status
    with agentlog.open(demo=True) as archive:
        assert {s.key: s.status for s in archive.sessions(subagents=True)} == board
        assert {s.key for s in archive.sessions(subagents=True, status="interrupted")} == {
            k for k, v in board.items() if v == "interrupted"
        }
