"""A token in a session's folder, git branch and tool names (not only in its text)
is redacted on every surface: the CLI's commands and exports, Parquet, the MCP
tools, the viewer's pages and the Python API; with redaction off (``--no-redact``,
``redact=False``, ``redact_secrets=False``) it is shown as the logs hold it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp.client import Client

import agentlog
from agentlog.cli import main
from agentlog.index import db
from agentlog.mcp.server import Index, build_server
from agentlog.service.home import Home
from agentlog.service.index import update_index
from agentlog.web.app import create_app
from meta_secret_home import CWD, EVIL, MANGLED, SESSION, TOKEN, meta_secret_home

RED = "[REDACTED:github_token]"
PENDING = [f"mcp__gh__{RED}", f"evil_svg_onload_alert_1_{RED}"]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    base = tmp_path_factory.mktemp("meta")
    home = meta_secret_home(base / "home")
    env = {"HOME": str(home), "AGENTLOG_INDEX": str(base / "index.sqlite")}
    env |= {"CLAUDE_CONFIG_DIR": None, "CODEX_HOME": None, "XDG_CONFIG_HOME": None}  # type: ignore[dict-item]
    assert CliRunner().invoke(main, ["index"], env=env).exit_code == 0
    return env


def run(env: dict[str, str], *args: str) -> str:
    result = CliRunner().invoke(main, [*args, "--no-sync"] if args[0] != "summarize" else list(args), env=env)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def hidden(text: str) -> None:
    """Neither the token nor the snake case an older normaliser made of it."""
    assert TOKEN not in text and MANGLED not in text.lower()


COMMANDS = [
    ("show", "eeeeeeee"),
    ("show", "eeeeeeee", "--json"),
    ("sessions", "--json"),
    ("status", "--json", "--since", "400d"),
    ("usage", "session", "--json"),
    ("usage", "project", "--json"),
    ("export", "eeeeeeee", "--format", "md"),
    ("export", "eeeeeeee", "--format", "html"),
    ("export", "eeeeeeee", "--format", "json"),
    ("export", "eeeeeeee", "--format", "jsonl"),
    ("export", "eeeeeeee", "--format", "slim"),
    ("secrets",),
    ("search", "svg", "--json"),
    ("search", "svg"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a) for a in COMMANDS])
def test_no_command_shows_the_token(hostile, args):
    hidden(run(hostile, *args))


def test_summarize_prompt_holds_no_token(hostile):
    out = run(hostile, "summarize", "eeeeeeee", "--dry-run", "--model", "x")
    hidden(out)
    assert f"Folder: /tmp/clone-{RED}\nBranch: fix/{RED}\n" in out
    assert f"[mcp__gh__{RED}] {{\"q\": \"x\"}}\n[evil_svg_onload_alert_1_{RED}] {{\"q\": \"y\"}}" in out


def test_the_header_fields_are_redacted_like_the_title(hostile):
    (row,) = json.loads(run(hostile, "sessions", "--json"))
    assert (row["title"], row["cwd"], row["git_branch"]) == (f"hi {RED}", f"/tmp/clone-{RED}", f"fix/{RED}")
    (live,) = json.loads(run(hostile, "status", "--json", "--since", "400d"))
    assert (live["cwd"], live["pending"]) == (f"/tmp/clone-{RED}", PENDING)
    assert live["evidence"] == f"assistant message ma2: pending tool_call Evil<svg onload=alert(1)>{RED} t2"
    (usage,) = json.loads(run(hostile, "usage", "session", "--json"))["rows"]
    assert usage["project"] == f"/tmp/clone-{RED}"
    (project,) = json.loads(run(hostile, "usage", "project", "--json"))["rows"]
    assert project["key"] == f"/tmp/clone-{RED}"
    exported = json.loads(run(hostile, "export", "eeeeeeee", "--format", "json"))
    assert exported["sources"] == [
        f"{Path(hostile['HOME'])}/.claude/projects/-tmp-clone-{RED}/{SESSION[12:]}.jsonl"
    ]
    calls = [
        (p["tool"], p["raw_name"])
        for m in exported["messages"]
        for p in m["parts"]
        if p["type"] == "tool_call"
    ][1:]
    assert calls == [(PENDING[0], f"mcp__gh__{RED}"), (PENDING[1], f"Evil<svg onload=alert(1)>{RED}")]
    assert exported["status_pending"] == PENDING


def test_no_redact_shows_the_fields_as_logged(hostile):
    exported = json.loads(run(hostile, "export", "eeeeeeee", "--format", "json", "--no-redact"))
    assert (exported["cwd"], exported["git_branch"]) == (CWD, f"fix/{TOKEN}")
    calls = [
        (p["tool"], p["raw_name"])
        for m in exported["messages"]
        for p in m["parts"]
        if p["type"] == "tool_call"
    ][1:]
    assert calls == [(f"mcp__gh__{TOKEN}", f"mcp__gh__{TOKEN}"), (f"evil_svg_onload_alert_1_{TOKEN}", EVIL)]
    assert f"⚙ mcp__gh__{TOKEN}" in run(hostile, "show", "eeeeeeee", "--no-redact")


def test_parquet_sessions_and_parts_hold_no_token(hostile, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    run(hostile, "export", "eeeeeeee", "--format", "parquet", "-o", str(tmp_path / "pq"))
    files = sorted((tmp_path / "pq").rglob("*.parquet"))
    tables = {f.relative_to(tmp_path / "pq").parts[0] for f in files}
    assert {"sessions", "parts"} <= tables
    text = json.dumps([pq.read_table(f).to_pylist() for f in files], default=str)
    hidden(text)
    assert f"/tmp/clone-{RED}" in text and PENDING[1] in text


def test_mcp_tools_hold_no_token(hostile):
    home = Home({"HOME": hostile["HOME"]}, Path(hostile["HOME"]))
    index = Index(lambda: db.connect(Path(hostile["AGENTLOG_INDEX"])), lambda conn: update_index(conn, home))

    async def go() -> list[Any]:
        async with Client(build_server(index)) as client:
            out = []
            for name, args in [
                ("list_sessions", {"since": "2000-01-01"}),
                ("get_session_overview", {"session_id": "eeeeeeee"}),
                ("get_messages", {"session_id": "eeeeeeee"}),
                ("get_live_status", {"since": "2000-01-01"}),
                ("find_sessions_by_file", {"path": "app.py"}),
                ("search_sessions", {"query": "svg", "include_active": True}),
            ]:
                result = await client.call_tool(name, args)
                assert not result.is_error, result.content
                out.append(result.structured_content)
            return out

    try:
        listed, overview, messages, live, touched, found = anyio.run(go)
    finally:
        index.close()
    hidden(json.dumps([listed, overview, messages, live, touched, found]))
    assert [hit["tool"] for hit in found["results"]] == [PENDING[1]]
    (row,) = listed["sessions"]
    assert (row["project"], row["git_branch"]) == (f"/tmp/clone-{RED}", f"fix/{RED}")
    (by_file,) = touched["sessions"]
    assert (by_file["project"], by_file["touches"][0]["path"]) == (
        f"/tmp/clone-{RED}",
        f"/tmp/clone-{RED}/app.py",
    )


@pytest.mark.parametrize("path", ["/", f"/session?key={SESSION}", "/usage", "/board", "/search?q=hi", "/search?q=svg"])
def test_viewer_pages_hold_no_token(hostile, path):
    client = create_app(Path(hostile["AGENTLOG_INDEX"])).test_client()
    page = client.get(path)
    assert page.status_code == 200
    hidden(page.get_data(as_text=True))


def test_viewer_without_redaction_shows_the_folder(hostile):
    client = create_app(Path(hostile["AGENTLOG_INDEX"]), redact=False).test_client()
    assert CWD in client.get(f"/session?key={SESSION}").get_data(as_text=True)


def test_api_sessions_and_status(hostile, monkeypatch):
    monkeypatch.setenv("HOME", hostile["HOME"])
    with agentlog.open(hostile["AGENTLOG_INDEX"], sync=False) as archive:
        (shown,) = archive.sessions()
        (raw,) = archive.sessions(redact_secrets=False)
        (live,) = archive.status(since="400d")
        (live_raw,) = archive.status(since="400d", redact_secrets=False)
        (hit,) = archive.search("svg").hits
    assert (shown.cwd, shown.git_branch, raw.cwd, raw.git_branch) == (
        f"/tmp/clone-{RED}",
        f"fix/{RED}",
        CWD,
        f"fix/{TOKEN}",
    )
    assert (live.pending, live_raw.pending) == (
        PENDING,
        [f"mcp__gh__{TOKEN}", f"evil_svg_onload_alert_1_{TOKEN}"],
    )
    assert hit.tool == PENDING[1]


def test_markdown_header_model_is_inert():
    from agentlog.export.markdown import header
    from agentlog.model import Session

    s = Session(
        key="claude_code:x",
        agent="claude_code",
        id="x",
        title="t",
        models=["claude-<img src=x onerror=alert(1)>"],
    )
    assert "- **model**: claude-&lt;img src=x onerror=alert(1)>\n" in header(s)
    assert "- **model**: –\n" in header(Session(key="claude_code:y", agent="claude_code", id="y"))


PASSWORD, API_TOKEN = "Tr0ub4dor&3horsebattery", "q8Zr2LmN5vX1pQ7sT4wY"


@pytest.fixture(scope="module")
def quoted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A home whose one session writes a file of quoted secrets (tester14 finding 7):
    a search snippet of that tool input is cut from its JSON text, quotes escaped."""
    base = tmp_path_factory.mktemp("quoted")
    folder = base / "home" / ".claude" / "projects" / "-w-sec"
    folder.mkdir(parents=True)
    sid = "ffffffff-2222-3333-4444-555555555555"
    common = {"sessionId": sid, "cwd": "/w/sec", "version": "2.1.100", "isSidechain": False}
    content = f'db_password = "{PASSWORD}"\napi_token = "{API_TOKEN}"\n'
    lines = [
        {**common, "type": "user", "uuid": "u0", "parentUuid": None, "timestamp": "2026-01-01T11:00:00Z",
         "message": {"role": "user", "content": "set config"}},
        {**common, "type": "assistant", "uuid": "u1", "parentUuid": "u0", "timestamp": "2026-01-01T11:01:00Z",
         "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-20250514", "content": [
             {"type": "tool_use", "id": "t1", "name": "Write",
              "input": {"file_path": "/w/sec/config.py", "content": content}}]}},
    ]  # fmt: skip
    (folder / f"{sid}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    env = {"HOME": str(base / "home"), "AGENTLOG_INDEX": str(base / "index.sqlite")}
    env |= {"CLAUDE_CONFIG_DIR": None, "CODEX_HOME": None, "XDG_CONFIG_HOME": None}  # type: ignore[dict-item]
    assert CliRunner().invoke(main, ["index"], env=env).exit_code == 0
    return env


QUOTED = (
    'write\n{"file_path":"/w/sec/config.py","content":"{S}db_password{E} = \\"[REDACTED:password]\\"'
    '\\napi_token = \\"[REDACTED:password]\\"\\n"}'
)


def test_search_snippets_of_a_json_tool_input_redact_its_quoted_values(quoted, monkeypatch):
    """The snippet is the tool input's JSON text (``\\"…\\"``): its quoted password and
    token are redacted as the md export redacts them, on every surface."""
    from mcp.client import Client

    def marked(start: str, end: str) -> str:
        return QUOTED.replace("{S}", start).replace("{E}", end)

    assert 'db_password = "[REDACTED:password]"\n+api_token = "[REDACTED:password]"' in run(
        quoted, "export", "ffffffff", "--format", "md"
    )
    hits = json.loads(run(quoted, "search", "db_password", "--json"))["hits"]
    assert [h["snippet"] for h in hits] == [marked("«", "»")]
    text = run(quoted, "search", "db_password")
    assert PASSWORD not in text and API_TOKEN not in text and text.count("[REDACTED:password]") == 2
    index = Path(quoted["AGENTLOG_INDEX"])
    html = create_app(index).test_client().get("/search", query_string={"q": "db_password"}).get_data(as_text=True)
    assert PASSWORD not in html and API_TOKEN not in html and html.count("[REDACTED:password]") == 2
    monkeypatch.setenv("HOME", quoted["HOME"])
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    found = agentlog.search("db_password", index=index, sync=False).hits
    assert [h.snippet for h in found] == [marked("\x02", "\x03")]
    server = build_server(Index(lambda: db.connect(index, readonly=True), None))

    async def mcp_snippets() -> list[str]:
        async with Client(server) as client:
            result = await client.call_tool("search_sessions", {"query": "db_password", "include_active": True})
            return [r["snippet"] for r in result.structured_content["results"]]

    assert anyio.run(mcp_snippets) == [marked("«", "»")]
