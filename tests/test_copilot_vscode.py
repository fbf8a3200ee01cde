"""Golden tests for GitHub Copilot Chat in VS Code (chat session JSON and mutation logs).

``session-01-today.json``/``session-04-twenty-days-ago.json`` are rajbos's v3-shaped
samples (MIT); ``7d3c1a52-….jsonl`` is a mutation log written for agentlog from
microsoft/vscode ``objectMutationLog.ts`` (every entry kind, a truncating push, a
delete, a bad path, a torn last line) and ``7d3c1a52-….json`` an older snapshot of
the same chat.  Expected values were derived by hand from the raw lines (replaying
the entries on paper) and, for the rajbos files, summed with a throwaway script
over ``requests[].result``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from agentlog.adapters import SourceRef, get_adapter
from agentlog.adapters.copilot_vscode import MutationLog, tool_name
from agentlog.cli import main
from agentlog.load import LoadReport, load_sessions, parse_source
from agentlog.model import Diagnostics, ReasoningPart, TextPart, ToolCallPart, UnknownPart
from conftest import fixture, parse_files, shared_fixture

SID = "7d3c1a52-9f0e-4b6e-a1d2-3c4b5a697887"
LOG = f"copilot_vscode/{SID}.jsonl"
SNAPSHOT = f"copilot_vscode/{SID}.json"
ENV_UNSET = {"VSCODE_USER_DIR": None, "XDG_CONFIG_HOME": None, "APPDATA": None}


def test_mutation_log_replays_to_the_final_state():
    (session,) = parse_files("copilot_vscode", fixture(LOG), sidecars={fixture(LOG): (fixture(SNAPSHOT),)})
    assert session.key == f"copilot_vscode:{SID}"
    assert session.title == "CI test failure"  # Set ["customTitle"]
    assert session.started_at.isoformat() == "2025-11-15T07:00:00+00:00"
    assert session.ended_at.isoformat() == "2025-11-15T07:02:20+00:00"  # Set ["lastMessageDate"]
    # request_1c2d was truncated away (Push with i=1) and replaced by request_2e3f
    assert [(m.id, m.role) for m in session.messages] == [
        ("request_0a1b", "user"),
        ("response_0a1b", "assistant"),
        ("request_2e3f", "user"),
        ("response_2e3f", "assistant"),
    ]
    first, answer, second, last = session.messages
    assert first.text == "Why does npm test fail on CI?" and second.text == "Run only the failing suite"
    assert answer.timestamp.isoformat() == "2025-11-15T07:00:11.500000+00:00"  # timestamp + firstProgress
    assert [type(p) for p in answer.parts] == [ReasoningPart, ToolCallPart, TextPart, ToolCallPart]
    assert answer.text == "The `api.spec.ts` suite fails because `fetch` is missing on Node 16."
    shell, edit = session.tool_calls()
    assert (shell.call_id, shell.tool, shell.raw_name, shell.input) == (
        "call_7Hq2",
        "bash",
        "run_in_terminal",
        "npm test",
    )
    assert shell.result.status == "completed"
    assert shell.result.output == [{"isText": True, "value": "1 failing: api.spec.ts"}]
    assert (edit.tool, edit.input["file_path"], edit.result.status) == (
        "edit",
        "/home/dev/webapp/package.json",
        "completed",
    )
    assert (answer.model, last.model) == ("claude-sonnet-4.5", "gpt-4.1")
    assert (session.usage.input_tokens, session.usage.output_tokens) == (5120, 310)
    assert "interrupted" not in last.flags  # isCanceled was set, then deleted
    assert isinstance(last.parts[-1], UnknownPart) and session.diagnostics.unknown_types == {
        "newFancyPart": 1
    }
    d = session.diagnostics
    # 16 lines: 14 applied, a path into a missing request, a torn line; then 8 response items
    assert (d.records_total, d.records_used) == (24, 21)
    assert d.skipped == {"malformed:path": 1, "invalid_json": 1, "ignored:prepareToolInvocation": 1}


def test_mutation_log_semantics():
    log = MutationLog(Diagnostics())
    for line in [
        b'{"kind":1,"k":["a"],"v":1}',  # before any Initial
        b'{"kind":0,"v":{"a":[1,2,3],"b":{"c":1}}}',
        b'{"kind":2,"k":["a"],"v":[9],"i":1}',
        b'{"kind":2,"k":["a"],"i":0}',
        b'{"kind":2,"k":["n"],"v":[5]}',
        b'{"kind":3,"k":["b","c"]}',
        b'{"kind":1,"k":["b","d"],"v":null}',
        b'{"kind":7}',
        b"[1]",
    ]:
        log.apply(line)
    assert log.state == {"a": [], "b": {"d": None}, "n": [5]}
    assert log.diagnostics.skipped == {"no_initial_entry": 1, "unknown_kind:7": 1, "not_an_object": 1}
    log.apply(b'{"kind":1,"k":[],"v":{"fresh":true}}')
    assert log.state == {"fresh": True}


def test_rajbos_v3_samples():
    session = parse_files("copilot_vscode", fixture("copilot_vscode/session-01-today.json"))[0]
    assert session.id == "session-01-today"  # no sessionId in the sample: the file name
    assert [m.role for m in session.messages] == ["user", "assistant"] * 5
    assert (session.usage.input_tokens, session.usage.output_tokens) == (226, 1983)
    assert session.models == ["claude-sonnet-4.5", "gpt-4o", "o3-mini"]
    assert session.title.startswith("Can you explain how the token estimation works")
    assert session.diagnostics.records_total == session.diagnostics.records_used == 10  # 5 requests + 5 items


def test_unrecognised_and_corrupt_documents(tmp_path):
    legacy = shared_fixture("copilot-vscode/cass-legacy-history.json")
    (session,) = parse_files("copilot_vscode", legacy)
    assert not session.messages and session.diagnostics.skipped == {"malformed:no_requests": 1}
    bad = tmp_path / "chatSessions" / "x.json"
    bad.parent.mkdir()
    bad.write_bytes(b'{"requests": [')
    parsed = parse_source(get_adapter("copilot_vscode"), SourceRef(agent="copilot_vscode", path=str(bad)))
    # the document is cut short inside its request list: that list is lost, counted
    skipped = parsed.headers[0].diagnostics.skipped
    assert skipped == {"invalid_json": 1, "malformed:no_requests": 1} and not parsed.fragments


def test_log_without_initial_falls_back_to_its_snapshot(tmp_path):
    log = tmp_path / f"{SID}.jsonl"
    log.write_text('{"kind":2,"k":["requests"],"v":[]}\n')
    (session,) = parse_files("copilot_vscode", log, sidecars={log: (fixture(SNAPSHOT),)})
    assert [m.text for m in session.messages] == ["Why does npm test fail on CI?", "(old snapshot)"]
    assert session.diagnostics.skipped == {"no_initial_entry": 1}
    assert session.diagnostics.errors == [f"{log}: no initial entry; read the .json snapshot instead"]


def _vscode_home(home: Path) -> Path:
    user = home / ".config" / "Code" / "User"
    chats = user / "workspaceStorage" / "a1b2c3" / "chatSessions"
    chats.mkdir(parents=True)
    (chats.parent / "workspace.json").write_text('{"folder": "file:///home/dev/webapp"}')
    shutil.copy(fixture(LOG), chats)
    shutil.copy(fixture(SNAPSHOT), chats)
    empty = user / "globalStorage" / "emptyWindowChatSessions"
    empty.mkdir(parents=True)
    shutil.copy(fixture("copilot_vscode/session-04-twenty-days-ago.json"), empty)
    server = home / ".vscode-server" / "data" / "User" / "workspaceStorage" / "ffee" / "chatSessions"
    server.mkdir(parents=True)
    shutil.copy(fixture("copilot_vscode/session-01-today.json"), server)
    return user


def test_jsonl_and_json_of_one_chat_are_one_session_under_home(tmp_path):
    _vscode_home(tmp_path)
    report = LoadReport()
    sessions = {
        s.key: s for s in load_sessions(agents=["copilot_vscode"], env={}, home=tmp_path, report=report)
    }
    assert sorted(sessions) == [
        f"copilot_vscode:{SID}",
        "copilot_vscode:session-01-today",
        "copilot_vscode:session-04-twenty-days-ago",
    ]
    chat = sessions[f"copilot_vscode:{SID}"]
    assert [m.id for m in chat.messages if m.role == "user"] == [
        "request_0a1b",
        "request_2e3f",
    ]  # final state
    assert chat.cwd == "/home/dev/webapp"
    assert sessions["copilot_vscode:session-04-twenty-days-ago"].cwd is None  # empty window
    assert report.sources["copilot_vscode"] == 3 and not report.errors and not report.duplicates
    result = CliRunner().invoke(main, ["show", SID[:8]], env={"HOME": str(tmp_path), **ENV_UNSET})
    assert result.exit_code == 0, result.output
    assert "CI test failure" in result.stdout and "⚙ bash npm test" in result.stdout


def test_roots_sniff_tool_names():
    adapter = get_adapter("copilot_vscode")
    roots = adapter.default_roots({}, Path("/h"))
    assert Path("/h/.config/Code - Insiders/User") in roots and Path("/h/.vscode-server/data/User") in roots
    assert Path("/h/.config/VSCodium/User") in roots
    assert adapter.default_roots({"VSCODE_USER_DIR": "/u"}, Path("/h")) == [Path("/u")]
    assert adapter.sniff("x.jsonl", fixture(LOG).read_bytes()[:4096]) == 0.9
    assert adapter.sniff("x.json", fixture("copilot_vscode/session-01-today.json").read_bytes()) == 0.7
    assert adapter.sniff("x.json", b'{"type":"user"}') == 0.0
    assert tool_name("copilot_readFile") == "read" and tool_name("run_in_terminal") == "bash"


def test_absurdly_deep_json_costs_only_itself(tmp_path):
    deep = b"[" * 100_000 + b"]" * 100_000
    log = tmp_path / "chatSessions" / "deep.jsonl"
    log.parent.mkdir()
    log.write_bytes(b'{"kind":0,"v":{"requests":[]}}\n' + deep + b"\n")
    (session,) = parse_files("copilot_vscode", log)
    assert session.diagnostics.skipped == {"nested_too_deep": 1}
    snapshot = tmp_path / "chatSessions" / "deep.json"
    snapshot.write_bytes(deep)
    (session,) = parse_files("copilot_vscode", snapshot)
    assert session.diagnostics.skipped == {"nested_too_deep": 1}
