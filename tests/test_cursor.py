"""Golden tests for the Cursor IDE adapter (``state.vscdb``).

No public ``state.vscdb`` exists, so the databases are built (``vscdb.make_vscdb``)
from row descriptions: ``fixtures/cursor/global-state-rows.json`` (written for
agentlog from formats.md §10/§14.6; its numbers are the ones typed into it) and the
two cass composer fixtures (read from ``../shared/fixtures``; licence rider, not
copied).  Expected values were counted by hand from those rows.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentlog import readers
from agentlog.adapters import SourceRef, get_adapter
from agentlog.adapters.cursor import CursorAdapter, tool_name
from agentlog.cli import main
from agentlog.load import LoadReport, load_sessions, parse_source
from agentlog.model import ToolCallPart, UnknownPart
from conftest import fixture, parse_files, shared_fixture
from vscdb import make_vscdb

PARENT = "cursor:c0a1b2c3-0000-4000-8000-000000000001"
CHILD = "cursor:c0a1b2c3-0000-4000-8000-000000000002"
INLINE = "cursor:c0a1b2c3-0000-4000-8000-000000000003"
WORKSPACE_ID = "5f1e2d3c4b5a69788796a5b4c3d2e1f0"
ENV_UNSET = {"CURSOR_USER_DIR": None, "XDG_CONFIG_HOME": None, "APPDATA": None}


def rows() -> list[dict]:
    return json.loads(fixture("cursor/global-state-rows.json").read_text())["rows"]


@pytest.fixture
def global_db(tmp_path: Path) -> Path:
    return make_vscdb(tmp_path / "User" / "globalStorage" / "state.vscdb", rows())


def test_global_store_golden(global_db):
    sessions = {s.key: s for s in parse_files("cursor", global_db)}
    assert sorted(sessions) == [PARENT, CHILD, INLINE]
    parent = sessions[PARENT]
    assert parent.title == "Fix the flaky test" and parent.kind == "main"
    assert parent.cwd == "/home/dev/wrong-if-id-used"  # no workspace.json for the id: uri.fsPath
    assert [m.id for m in parent.messages] == ["b-u1", "b-a1", "b-t1", "b-t2", "b-a2"]
    assert [m.role for m in parent.messages] == ["user"] + ["assistant"] * 4
    assert parent.models == ["claude-4.5-sonnet"]
    read, shell = parent.tool_calls()
    assert (read.call_id, read.tool, read.raw_name, read.input) == (
        "toolu_01",
        "read",
        "read_file",
        {"targetFile": "tests/test_sync.py"},
    )
    assert read.result.status == "completed" and read.result.output == {"contents": "def test_sync(): ..."}
    assert (shell.tool, shell.result.status, shell.result.is_error) == ("bash", "error", True)
    assert shell.result.output == {"output": "1 failed", "exitCode": 1}
    # tokenCount only where non-zero: the turn-final bubble, context-inclusive
    assert [m.id for m in parent.messages if m.usage] == ["b-a2"]
    assert (parent.usage.input_tokens, parent.usage.output_tokens, parent.usage.cache_read_tokens) == (
        48211,
        912,
        0,
    )
    assert parent.messages[-1].flags == ["usage_context_inclusive"]
    # 1 composer + 5 bubbles used; b-missing is listed but absent; b-orphan (not in headers) and
    # bubbleId:lonely (composer gone) are orphans; the index entry of the ItemTable is ignored
    d = parent.diagnostics
    assert (d.records_total, d.records_used) == (9, 6)
    assert d.skipped == {"orphan_bubble": 2, "ignored:composer_index_entry": 1}

    child = sessions[CHILD]
    assert (child.kind, child.parent_key) == ("subagent", PARENT)
    assert child.models == ["gpt-5"]  # composer modelConfig, the bubble names none
    assert [m.role for m in child.messages] == ["user", "assistant"]

    inline = sessions[INLINE]
    assert [m.id for m in inline.messages] == ["l-u1", "l-a1", "l-x1"]
    assert inline.messages[2].flags == ["unknown"] and isinstance(inline.messages[2].parts[0], UnknownPart)
    assert inline.diagnostics.unknown_types == {"bubble_type:30": 1}
    assert (inline.usage.input_tokens, inline.usage.output_tokens) == (1200, 40)
    assert inline.models == []  # no modelInfo, no modelConfig


@pytest.mark.parametrize(
    ("name", "title", "cwd", "texts"),
    [
        (
            "headers_only_workspace_project_dir",
            "Cursor Headers Fixture",
            "/workspace/cursor-fixture",
            [("user", "User content from rawText"), ("assistant", "Assistant content from content")],
        ),
        (
            "headers_only_workspace_file_uri",
            "Cursor File URI Fixture",
            "/home/tester/cursor project",
            [("user", "Workspace from file URI")],
        ),
    ],
)
def test_cass_composer_rows(tmp_path, name, title, cwd, texts):
    spec = json.loads(shared_fixture(f"cursor/ide-composer-{name}.json").read_text())
    db_rows = [{"table": "cursorDiskKV", "key": spec["composer_key"], "value": spec["composer_data"]}]
    db_rows += [{"table": "cursorDiskKV", **row} for row in spec["bubble_rows"]]
    (session,) = parse_files("cursor", make_vscdb(tmp_path / "state.vscdb", db_rows))
    assert (session.title, session.cwd) == (title, cwd)
    known = [(m.role, m.text) for m in session.messages if "unknown" not in m.flags]
    assert known == texts
    # cass maps its bubble type 99 to an assistant message; agentlog keeps unknown types raw
    assert session.diagnostics.unknown_types == ({"bubble_type:99": 1} if len(texts) == 2 else {})


def _digest(folder: Path) -> dict[str, tuple[str, int]]:
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in folder.iterdir()
        if p.is_file()
    }


@pytest.mark.parametrize(("journal", "lock"), [("WAL", "BEGIN IMMEDIATE"), ("DELETE", "BEGIN EXCLUSIVE")])
def test_db_locked_by_a_running_editor_is_still_read(tmp_path, journal, lock):
    db = make_vscdb(tmp_path / "state.vscdb", rows())
    editor = sqlite3.connect(db, isolation_level=None)
    editor.execute(f"PRAGMA journal_mode={journal}")
    editor.execute("PRAGMA wal_autocheckpoint=0")
    committed = {"composerId": "late", "name": "Committed before the lock", "fullConversationHeadersOnly": []}
    editor.execute("INSERT INTO cursorDiskKV VALUES ('composerData:late', ?)", (json.dumps(committed),))
    editor.execute(lock)  # the editor holds the write lock, with a write in flight
    editor.execute("INSERT INTO cursorDiskKV VALUES ('composerData:uncommitted', '{}')")
    before = _digest(tmp_path)
    try:
        sessions = {s.key: s for s in parse_files("cursor", db)}
        assert _digest(tmp_path) == before  # nothing written, renamed or touched
    finally:
        editor.execute("ROLLBACK")
        editor.close()
    assert sorted(sessions) == sorted([PARENT, CHILD, INLINE, "cursor:late"])
    assert sessions["cursor:late"].title == "Committed before the lock"


def test_item_table_is_queried_only_by_the_needed_keys(global_db, monkeypatch):
    statements: list[str] = []
    connect = sqlite3.connect

    def traced(*args, **kwargs):
        conn = connect(*args, **kwargs)
        conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr(readers.sqlite3, "connect", traced)
    adapter = CursorAdapter()
    tables = readers.read_sqlite_tables(global_db, adapter.sqlite_tables, adapter.sqlite_queries)
    on_items = [s for s in statements if "ItemTable" in s]
    assert on_items == [
        "SELECT key, value FROM ItemTable WHERE key IN ('composer.composerData', "
        "'workbench.panel.aichat.view.aichat.chatdata')"
    ]
    assert "SECRET-TOKEN-MUST-NOT-BE-READ" not in json.dumps(tables)
    assert not any("checkpointId" in str(r["key"]) for r in tables["composers"] + tables["bubbles"])


def _cursor_home(home: Path) -> Path:
    user = home / ".config" / "Cursor" / "User"
    make_vscdb(user / "globalStorage" / "state.vscdb", rows())
    workspace = user / "workspaceStorage" / WORKSPACE_ID
    workspace.mkdir(parents=True)
    (workspace / "workspace.json").write_text(json.dumps({"folder": "file:///home/dev/web%20app"}))
    legacy = {
        "tabs": [
            {
                "tabId": "tab-1",
                "chatTitle": "Explain the router",
                "lastSendTime": 1690000000000,
                "bubbles": [
                    {"id": "q1", "type": "user", "text": "How does routing work?"},
                    {"id": "a1", "type": "ai", "text": "Routes are matched in order.", "modelType": "gpt-4"},
                ],
            }
        ]
    }
    make_vscdb(
        workspace / "state.vscdb",
        [{"table": "ItemTable", "key": "workbench.panel.aichat.view.aichat.chatdata", "value": legacy}],
    )
    broken = user / "workspaceStorage" / "broken"
    broken.mkdir()
    (broken / "state.vscdb").write_bytes(b"this is not a database at all" * 10)
    return user


def test_found_under_home_and_rendered(tmp_path):
    user = _cursor_home(tmp_path)
    report = LoadReport()
    sessions = {s.key: s for s in load_sessions(agents=["cursor"], env={}, home=tmp_path, report=report)}
    assert sorted(sessions) == sorted([PARENT, CHILD, INLINE, "cursor:tab-1"])
    assert sessions[PARENT].cwd == "/home/dev/web app"  # workspaceIdentifier.id → workspace.json
    tab = sessions["cursor:tab-1"]
    assert (tab.title, tab.cwd, [m.role for m in tab.messages]) == (
        "Explain the router",
        "/home/dev/web app",
        ["user", "assistant"],
    )
    # a corrupt store costs only its own sessions, and says why
    assert [path for path, _ in report.errors] == [str(user / "workspaceStorage" / "broken" / "state.vscdb")]
    assert "DatabaseError" in report.errors[0][1]
    env = {"HOME": str(tmp_path), **ENV_UNSET}
    result = CliRunner().invoke(main, ["show", PARENT], env=env)
    assert result.exit_code == 0, result.output
    assert "The test races on a shared temp dir; I gave each run its own." in result.stdout
    assert "⚙ bash pytest tests/test_sync.py" in result.stdout and "Explore temp dir usage" in result.stdout
    doctor = CliRunner().invoke(main, ["doctor"], env=env)
    assert "broken" in doctor.stdout


def test_roots_and_sniff():
    adapter = get_adapter("cursor")
    home = Path("/h")
    assert adapter.default_roots({"CURSOR_USER_DIR": "/x"}, home) == [Path("/x")]
    assert adapter.default_roots({"APPDATA": "C:/Users/me/AppData/Roaming"}, home) == [
        home / ".config/Cursor/User",
        home / "Library/Application Support/Cursor/User",
        Path("C:/Users/me/AppData/Roaming/Cursor/User"),
    ]
    assert adapter.sniff("state.vscdb", b"SQLite format 3\x00....cursorDiskKV") == 0.9
    assert adapter.sniff("x.json", b"{}") == 0.0
    assert (
        tool_name("Shell") == "bash"
        and tool_name("edit_file_v2") == "edit"
        and tool_name("new_tool") == "new_tool"
    )


def test_garbage_rows_are_counted(tmp_path):
    db = make_vscdb(
        tmp_path / "state.vscdb",
        [
            {"table": "cursorDiskKV", "key": "composerData:x", "value": "{not json"},
            {"table": "cursorDiskKV", "key": "composerData:ok", "value": {"name": "ok"}},
            {"table": "cursorDiskKV", "key": "bubbleId:ok:b", "value": "[1,2]"},
            {"table": "ItemTable", "key": "composer.composerData", "value": "7"},
        ],
    )
    parsed = parse_source(get_adapter("cursor"), SourceRef(agent="cursor", path=str(db)))
    (header,) = parsed.headers
    assert header.diagnostics.skipped == {"invalid_json": 2, "malformed:composer_index": 1}
    assert header.diagnostics.records_total == 4
    assert not parsed.fragments
    assert not [p for m in parsed.fragments for p in m[1].parts if isinstance(p, ToolCallPart)]
    assert os.listdir(tmp_path) == ["state.vscdb"]


def test_context_inclusive_counts_are_not_billed(global_db, tmp_path):
    """Cursor's tokenCount is a context size: shown on the message, never summed as calls."""
    from agentlog.adapters import all_adapters
    from agentlog.index import queries
    from agentlog.index.db import connect
    from agentlog.index.sync import sync
    from agentlog.index.usage import usage_records
    from agentlog.usage.calls import calls_from_sessions

    assert [c for c in calls_from_sessions(parse_files("cursor", global_db)) if c.session_key == PARENT] == []
    conn = connect(tmp_path / "index.sqlite")
    sync(conn, all_adapters(), {}, tmp_path / "no-home", extra_roots=[global_db.parents[1]])
    assert queries.get_session(conn, PARENT).usage.input_tokens == 48211  # still shown on the session
    assert [c for c in usage_records(conn) if c.session_key == PARENT] == []
