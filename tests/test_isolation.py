"""A bad record costs only itself; what escapes a parser costs only its source.

Each case of issue #11 ("Why": isolation holds for JSONL lines only) is reproduced on
the adapter's own fixture with one value damaged, and checked exactly: the messages
other than the damaged record's are the undamaged parse's, and the diagnostics count
the damaged record under the reason the decoder or the per-record guard gives it.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import msgspec
import pytest

from agentlog.adapters import SourceRef, get_adapter
from agentlog.adapters._json import JsonError, json_value, parse_object
from agentlog.adapters.base import Document, DocumentParser, ParserError, RecordGuard, ToolOutput
from agentlog.index.db import connect
from agentlog.index.queries import get_session
from agentlog.index.sync import sync
from agentlog.load import LoadReport, load_sessions, parse_source
from agentlog.model import Diagnostics, Message, Session, TextPart, ToolCallPart
from agentlog.readers import read_sqlite_tables
from conftest import FIXTURES, build_sqlite, parse_files

DEEP = "[" * 1200 + "]" * 1200
DEEP_LIST: list[object] = []
for _ in range(1200):  # built without recursion; encoding it recurses past the limit
    DEEP_LIST = [DEEP_LIST]


def encoded(sessions: list[Session]) -> list[bytes]:
    return [msgspec.json.encode(m) for s in sessions for m in s.messages]


def skipped(session: Session) -> dict[str, int]:
    return dict(session.diagnostics.skipped)


def plus(counts: dict[str, int], reason: str, n: int = 1) -> dict[str, int]:
    out = dict(counts)
    out[reason] = out.get(reason, 0) + n
    return out


# --- the one decoder ----------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b'{"a": 1', "invalid_json"),
        (b'{"a": "caf\xe9"', "invalid_utf8"),  # cut short, and not UTF-8: the first reason found
        (DEEP.encode(), "nested_too_deep"),
        (b"[1, 2]", "not_an_object"),
        (1.5, "invalid_json"),  # a SQLite REAL where JSON text belongs
    ],
)
def test_decoder_reason_codes(data, reason):
    with pytest.raises(JsonError) as caught:
        parse_object(data)
    assert caught.value.reason == reason
    assert json_value(data) is None or reason == "not_an_object"


def test_record_guard_undoes_the_record_and_keeps_the_count_balanced():
    out: list[tuple[str, Message | ToolOutput]] = [("s", Message(id="kept", role="user"))]
    diagnostics = Diagnostics()
    diagnostics.use()
    with RecordGuard(out, diagnostics):
        out.append(("s", Message(id="half", role="user")))
        diagnostics.use()
        raise TypeError("unhashable type: 'dict'")
    with RecordGuard(out, diagnostics):  # counted itself skipped, then failed: stays so counted
        diagnostics.skip("ignored:x")
        raise KeyError("k")
    guard = RecordGuard(out, diagnostics)
    with guard:
        raise JsonError("nested_too_deep")
    assert guard.rejected
    with pytest.raises(RuntimeError), RecordGuard(out, diagnostics):  # not a record's problem: it passes
        raise RuntimeError("bug")
    assert [item.id for _, item in out if isinstance(item, Message)] == ["kept"]
    assert (diagnostics.records_total, diagnostics.records_used) == (4, 1)
    assert diagnostics.skipped == {"malformed:wrong_type": 1, "ignored:x": 1, "nested_too_deep": 1}


# --- documents ------------------------------------------------------------------


def _cline_task(tmp_path: Path) -> Path:
    folder = tmp_path / "tasks" / "1750000000000"
    shutil.copytree(FIXTURES / "cline/vscode-task-written/1750000000000", folder)
    return folder


def _parse_task(folder: Path) -> Session:
    path = folder / "api_conversation_history.json"
    sidecars = tuple(p for p in sorted(folder.iterdir()) if p != path)
    (session,) = parse_files("cline", path, sidecars={path: sidecars})
    return session


def test_cline_ui_row_whose_say_is_an_object_costs_only_itself(tmp_path):
    folder = _cline_task(tmp_path)
    before = _parse_task(folder)
    ui = json.loads((folder / "ui_messages.json").read_text())
    ui.insert(1, {"ts": 1750000000001, "type": "say", "say": {"not": "a string"}})
    (folder / "ui_messages.json").write_text(json.dumps(ui))
    after = _parse_task(folder)
    assert encoded([after]) == encoded([before])
    assert skipped(after) == plus(skipped(before), "malformed:wrong_type")
    assert after.diagnostics.records_total == before.diagnostics.records_total + 1


def test_a_big_integer_in_a_document_is_kept_in_memory_and_in_the_index(tmp_path):
    home = tmp_path / "home"
    folder = home / ".cline/data/tasks/1750000000000"
    shutil.copytree(FIXTURES / "cline/vscode-task-written/1750000000000", folder)
    history = json.loads((folder / "api_conversation_history.json").read_text())
    entry = next(
        e
        for e in history
        if e["role"] == "assistant" and any(b.get("type") == "tool_use" for b in e["content"])
    )
    block = next(b for b in entry["content"] if b.get("type") == "tool_use")
    block["input"] = {"n": 1 << 70, "m": -(1 << 65)}
    (folder / "api_conversation_history.json").write_text(json.dumps(history))
    env = {"HOME": str(home)}
    (session,) = load_sessions(["cline"], env=env, home=home)
    calls = [
        p
        for m in session.messages
        for p in m.parts
        if isinstance(p, ToolCallPart) and p.call_id == block["id"]
    ]
    assert [c.input for c in calls] == [{"n": 1 << 70, "m": -(1 << 65)}]
    conn = connect(tmp_path / "index.db")
    assert sync(conn, [get_adapter("cline")], env, home).failed == []
    stored = get_session(conn, session.key)
    assert [m.parts for m in stored.messages] == [m.parts for m in session.messages]


def test_copilot_response_kind_that_is_a_list_costs_its_request(tmp_path):
    doc = json.loads((FIXTURES / "copilot_vscode/session-01-today.json").read_text())
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(doc))
    (before,) = parse_files("copilot_vscode", path)
    doc["requests"][0]["response"].insert(0, {"kind": ["markdownContent"]})
    path.write_text(json.dumps(doc))
    (after,) = parse_files("copilot_vscode", path)
    rid = doc["requests"][0]["requestId"]
    assert encoded([after]) == [msgspec.json.encode(m) for m in before.messages if not m.id.startswith(rid)]
    assert len(after.messages) < len(before.messages)
    assert skipped(after) == plus(skipped(before), "malformed:wrong_type")


def test_codewhale_messages_that_is_a_number(tmp_path):
    path = tmp_path / "4f1c2b3a.json"
    path.write_text('{"messages": 1}')
    (session,) = parse_files("codewhale", path)
    assert (session.key, session.messages) == ("codewhale:4f1c2b3a", [])
    assert session.diagnostics.skipped == {"not_a_message_list": 1}


def test_kimi_work_dirs_that_is_a_number_loses_only_the_cwd(tmp_path):
    share = tmp_path / "share"
    shutil.copytree(FIXTURES / "kimi/share", share)
    env = {"KIMI_SHARE_DIR": str(share)}
    before = load_sessions(["kimi"], env=env, home=tmp_path)
    (share / "kimi.json").write_text('{"work_dirs": 7}')
    after = load_sessions(["kimi"], env=env, home=tmp_path)
    assert [s.key for s in after] == [s.key for s in before]
    assert {s.cwd for s in before} != {None} and {s.cwd for s in after} == {None}
    assert encoded(after) == encoded(before)


def test_vibe_manifest_that_is_a_list(tmp_path):
    root = tmp_path / "vibe/logs/session"
    shutil.copytree(FIXTURES / "mistral_vibe", root)
    env = {"VIBE_HOME": str(tmp_path / "vibe")}
    before = {s.key: s for s in load_sessions(["mistral_vibe"], env=env, home=tmp_path)}
    manifest = root / "unified/child-0001/generations/0000000000000001/manifest.json"
    manifest.write_text("[1, 2, 3]")
    after = {s.key: s for s in load_sessions(["mistral_vibe"], env=env, home=tmp_path)}
    damaged = "mistral_vibe:child-0001"
    assert set(after) == set(before) and damaged in after
    for key in set(before) - {damaged}:
        assert encoded([after[key]]) == encoded([before[key]])
    assert "manifest: not_an_object" in after[damaged].diagnostics.errors


def test_aider_header_with_a_date_that_does_not_exist(tmp_path):
    text = (FIXTURES / "aider/written-new-format.aider.chat.history.md").read_text()
    first = text.index("# aider chat started at ")
    stamp = text[first + len("# aider chat started at ") :].split("\n", 1)[0]
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(text)
    before = parse_files("aider", path)
    path.write_text(text.replace(stamp, "2024-13-45 99:61:00", 1))
    after = parse_files("aider", path)
    assert len(after) == len(before) and after[0].started_at is None and before[0].started_at is not None
    assert [[m.parts for m in s.messages] for s in after] == [[m.parts for m in s.messages] for s in before]


# --- SQLite sources -----------------------------------------------------------------


def _crush(tmp_path: Path) -> Path:
    path = tmp_path / "proj" / ".crush" / "crush.db"
    path.parent.mkdir(parents=True)
    return build_sqlite(FIXTURES / "crush/crush.sql", path)


def test_crush_parts_stored_as_real_costs_its_row(tmp_path):
    db = _crush(tmp_path)
    before = parse_files("crush", db)
    victim = before[0].messages[0].id
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE messages SET parts = 2.5 WHERE id = ?", (victim,))
    conn.close()
    after = parse_files("crush", db)
    assert [s.key for s in after] == [s.key for s in before]
    assert encoded(after) == [msgspec.json.encode(m) for s in before for m in s.messages if m.id != victim]
    assert skipped(after[0]) == plus(skipped(before[0]), "malformed:message_row")


def _opencode(tmp_path: Path) -> Path:
    return build_sqlite(FIXTURES / "opencode/opencode-db.sql", tmp_path / "opencode" / "opencode.db")


def test_opencode_one_cell_nested_too_deep_costs_its_row(tmp_path):
    db = _opencode(tmp_path)
    before = parse_files("opencode", db)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE part SET data = ? WHERE id = 'prt_01'", (f'{{"type": "text", "deep": {DEEP}}}',))
    conn.close()
    after = parse_files("opencode", db)
    assert [s.key for s in after] == [s.key for s in before]
    first = {s.key: s for s in before}["opencode:ses_0a1"]
    kept = {s.key: s for s in after}["opencode:ses_0a1"]
    assert [m.id for m in kept.messages] == [m.id for m in first.messages]
    assert kept.messages[0].parts == []  # prt_01 was the user message's only part
    assert kept.messages[1:] == first.messages[1:]
    assert skipped(after[0]) == plus(skipped(before[0]), "nested_too_deep")


def test_sqlite_text_that_is_not_utf8_is_read_with_replacement_and_said_so(tmp_path):
    db = tmp_path / "x.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (id INTEGER, text TEXT)")
        conn.execute("INSERT INTO t VALUES (1, 'fine'), (2, CAST(X'6361666500ff' AS TEXT)), (3, 'also fine')")
    conn.close()
    notes: list[str] = []
    assert read_sqlite_tables(db, ["t"], notes=notes) == {
        "t": [{"id": 1, "text": "fine"}, {"id": 2, "text": "cafe\x00\ufffd"}, {"id": 3, "text": "also fine"}]
    }
    assert notes == ["1 TEXT cell(s) not valid UTF-8, read with U+FFFD"]


def test_crush_session_title_not_utf8_keeps_the_session(tmp_path):
    db = _crush(tmp_path)
    before = parse_files("crush", db)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE sessions SET title = CAST(X'4275696c6420ff' AS TEXT) WHERE id = 's1'")
    conn.close()
    after = parse_files("crush", db)
    assert [s.key for s in after] == [s.key for s in before] and after[0].key == "crush:s1"
    assert (before[0].title, after[0].title) == ("Build failure", "Build \ufffd")
    assert encoded(after) == encoded(before)
    assert after[0].diagnostics.errors == ["1 TEXT cell(s) not valid UTF-8, read with U+FFFD"]


def test_hermes_tool_calls_nested_too_deep_costs_its_row(tmp_path):
    root = tmp_path / ".hermes"
    db = build_sqlite(FIXTURES / "hermes/state-db.sql", root / "state.db")
    before = parse_files("hermes", db)
    with sqlite3.connect(db) as conn:
        (victim,) = conn.execute(
            "SELECT id FROM messages WHERE session_id = 's_cont' AND role = 'user'"
        ).fetchone()
        conn.execute("UPDATE messages SET tool_calls = ? WHERE id = ?", (DEEP, victim))
    conn.close()
    after = parse_files("hermes", db)
    assert [s.key for s in after] == [s.key for s in before]
    lost = [m.id for s in before for m in s.messages if m.id.endswith(f"@{victim}")]
    assert len(lost) == 1
    assert encoded(after) == [msgspec.json.encode(m) for s in before for m in s.messages if m.id not in lost]
    key = next(s.key for s in before if any(m.id == lost[0] for m in s.messages))
    owner, first = ({s.key: s for s in sessions}[key] for sessions in (after, before))
    assert skipped(owner) == plus(skipped(first), "nested_too_deep")


# --- JSONL, sidecars, compressed logs ---------------------------------------------


def test_a_big_integer_in_a_jsonl_tool_input_is_kept_in_memory_in_the_index_and_in_the_worker(tmp_path):
    from agentlog import worker

    home = tmp_path / "home"
    project = home / ".claude/projects/-tmp-p"
    project.mkdir(parents=True)
    lines = (FIXTURES / "claude_code/representative-messages.jsonl").read_text().splitlines()
    at = next(n for n, line in enumerate(lines) if '"tool_use"' in line)
    record = json.loads(lines[at])
    block = next(b for b in record["message"]["content"] if b.get("type") == "tool_use")
    block["input"] = {"count": 1 << 70}
    lines[at] = json.dumps(record)
    path = project / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    env = {"HOME": str(home)}
    (session,) = load_sessions(["claude_code"], env=env, home=home)
    assert [
        p.input
        for m in session.messages
        for p in m.parts
        if isinstance(p, ToolCallPart) and p.call_id == block["id"]
    ] == [{"count": 1 << 70}]
    conn = connect(tmp_path / "index.db")
    report = sync(conn, [get_adapter("claude_code")], env, home)
    assert report.failed == [] and report.reparsed == 1
    (count,) = conn.execute("SELECT count(*) FROM messages").fetchone()
    assert count == len(session.messages)
    if worker.available():
        ref = SourceRef(agent="claude_code", path=str(path))
        batches = list(worker.parse_in_worker("claude_code", ref, {}, 0, None, 25_000))
        fragments = [f for batch, _, _ in batches for f in batch]
        assert msgspec.json.encode(fragments) == msgspec.json.encode(
            parse_source(get_adapter("claude_code"), ref).fragments
        )


def test_claude_meta_sidecar_that_is_not_json(tmp_path):
    layout = tmp_path / "p"
    shutil.copytree(FIXTURES / "claude_code/v2.1-subagents-layout", layout)
    (meta,) = layout.rglob("*.meta.json")
    transcript = meta.with_name(meta.name.replace(".meta.json", ".jsonl"))
    (before,) = parse_files("claude_code", transcript, sidecars={transcript: (meta,)})
    meta.write_bytes(b"{this is not json")
    (after,) = parse_files("claude_code", transcript, sidecars={transcript: (meta,)})
    assert before.subagent_type is not None and after.subagent_type is None
    assert after.diagnostics.errors == ["meta.json: invalid_json"]
    assert encoded([after]) == encoded([before])


def test_corrupt_zstd_under_a_root_is_that_file_s_error(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    bad = root / "session.jsonl.zstd"
    bad.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00garbage" * 64)
    good = root / "rollout-2026-01-01T00-00-00-x.jsonl"
    shutil.copy(FIXTURES / "codex/rollout-synthetic-tools.jsonl", good)
    report = LoadReport()
    sessions = load_sessions(env={}, home=tmp_path / "nohome", extra_roots=[root], report=report)
    assert [s.agent for s in sessions] == ["codex"]
    assert [path for path, _ in report.errors] == [str(bad)]
    assert "corrupt Zstandard data" in report.errors[0][1]


# --- what escapes a parser is its source's error, on every path ----------------------


class _Exploding(DocumentParser):
    def parse(self) -> None:
        raise RuntimeError("a bug in the adapter")

    def headers(self) -> list[Session]:
        return []


def test_an_exception_escaping_parse_document_is_that_source_s_error(tmp_path, monkeypatch):
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "codewhale/sessions", home / ".codewhale/sessions")
    shutil.copytree(FIXTURES / "codex", home / ".codex/sessions")
    adapter = get_adapter("codewhale")
    monkeypatch.setattr(type(adapter), "parse_document", lambda self, ref, doc: _Exploding(ref, doc).result())
    env = {"HOME": str(home)}
    report = LoadReport()
    sessions = load_sessions(["codewhale", "codex"], env=env, home=home, report=report)
    assert {s.agent for s in sessions} == {"codex"}
    assert [error for _, error in report.errors] == ["ParserError: RuntimeError: a bug in the adapter"]
    conn = connect(tmp_path / "index.db")
    synced = sync(conn, [adapter, get_adapter("codex")], env, home)
    assert [error for _, error in synced.failed] == ["ParserError: RuntimeError: a bug in the adapter"]


def test_an_exception_escaping_a_line_parser_is_that_source_s_error_in_the_worker(tmp_path):
    """The parser's bug in a (fresh) worker process: that source's ``ParserError``
    there as here; the adapter goes to the worker pickled (a job of
    :class:`~agentlog.worker.SharedParse`), so the bug is its class's, importable."""
    from agentlog import worker
    from worker_probes import BoomAdapter

    if not worker.available():
        pytest.skip("no worker process on this platform")
    path = tmp_path / "s.jsonl"
    shutil.copy(FIXTURES / "claude_code/representative-messages.jsonl", path)
    ref = SourceRef(agent="claude_code", path=str(path))
    good = SourceRef(agent="claude_code", path=str(FIXTURES / "claude_code/representative-messages.jsonl"))
    with worker.SharedParse([(BoomAdapter(), ref, 0, None), (get_adapter("claude_code"), good, 0, None)]) as shared:
        with pytest.raises(ParserError, match=r"^LookupError: boom$"):
            list(shared.batches(0))
        ((fragments, _, _),) = list(shared.batches(1))  # the next source is not touched by it
    assert msgspec.json.encode(fragments) == msgspec.json.encode(parse_source(get_adapter("claude_code"), good).fragments)
    with pytest.raises(ParserError, match="LookupError: boom"):
        parse_source(BoomAdapter(), ref)


def test_document_result_is_parse_then_headers():
    class Two(DocumentParser):
        def parse(self) -> None:
            for text in ("a", 7, "b"):
                with self.guard():
                    self.diagnostics.use()
                    self.emit("s", Message(id=text + "!", role="user", parts=[TextPart(text=text)]))  # type: ignore[operator]

        def headers(self) -> list[Session]:
            return [Session(key="x:s", agent="x", id="s", diagnostics=self.diagnostics)]

    result = Two(SourceRef(agent="x", path="/x"), Document()).result()
    assert [m.id for _, m in result.fragments] == ["a!", "b!"]  # type: ignore[union-attr]
    assert result.headers[0].diagnostics.skipped == {"malformed:wrong_type": 1}


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (DEEP, "nested_too_deep"),
        ("1e400", "invalid_json"),  # a number out of range
    ],
)
def test_one_damaged_value_in_a_json_document_costs_only_its_record(tmp_path, damage, reason):
    source = FIXTURES / "codewhale/sessions/4f1c2b3a-5d6e-4f70-8a91-b2c3d4e5f607.json"
    path = tmp_path / source.name
    shutil.copy(source, path)
    (before,) = parse_files("codewhale", path)
    doc = json.loads(source.read_text())
    doc["messages"][2]["damaged"] = "@DAMAGE@"
    path.write_text(json.dumps(doc).replace('"@DAMAGE@"', damage))
    (after,) = parse_files("codewhale", path)
    assert encoded([after]) == encoded([before])  # the value was not one the adapter reads
    assert skipped(after) == plus(skipped(before), reason)


def test_a_document_cut_short_keeps_its_complete_records(tmp_path):
    source = FIXTURES / "cline/vscode-task-written/1750000000000/api_conversation_history.json"
    history = json.loads(source.read_text())
    folder = tmp_path / "tasks" / "1"
    folder.mkdir(parents=True)
    cut = json.dumps(history[:-1])[:-1] + ", " + json.dumps(history[-1])[:10]
    (folder / "api_conversation_history.json").write_text(cut)
    (after,) = parse_files("cline", folder / "api_conversation_history.json")
    (folder / "api_conversation_history.json").write_text(json.dumps(history[:-1]))
    (shorter,) = parse_files("cline", folder / "api_conversation_history.json")
    assert encoded([after]) == encoded([shorter])
    assert skipped(after) == plus(skipped(shorter), "invalid_json")


def test_a_parser_state_holding_a_big_integer_is_saved_and_resumed_with_it(tmp_path):
    source = FIXTURES / "antigravity/cli-small.jsonl"
    lines = source.read_text().splitlines()
    record = json.loads(lines[-1])
    record["step_index"] = 1 << 70
    lines[-1] = json.dumps(record)
    path = tmp_path / "transcript.jsonl"
    path.write_text("\n".join(lines) + "\n")
    adapter = get_adapter("antigravity")
    ref = SourceRef(agent="antigravity", path=str(path))
    parsed = parse_source(adapter, ref)
    assert parsed.state[:1] == b"{" and 1 << 70 in json.loads(parsed.state)["steps"]
    resumed = parse_source(adapter, ref, start=parsed.consumed, state=parsed.state)
    assert resumed.fragments == [] and resumed.state == parsed.state


def test_doctor_names_the_file_of_a_skipped_record_in_words_not_exception_names(tmp_path):
    """A record inside a JSON document that defies its format: ``doctor`` counts it
    under a reason for the user (``malformed:wrong_type``, never ``TypeError``) and
    names the file it is in (``--json``: every file, by reason)."""
    from click.testing import CliRunner

    from agentlog.adapters.base import malformed_reason
    from agentlog.cli import main

    home = tmp_path / "home"
    folder = home / ".cline/data/tasks/1750000000000"
    shutil.copytree(FIXTURES / "cline/vscode-task-written/1750000000000", folder)
    ui = json.loads((folder / "ui_messages.json").read_text())
    ui.insert(1, {"ts": 1750000000001, "type": "say", "say": {"not": "a string"}})
    (folder / "ui_messages.json").write_text(json.dumps(ui))
    env = {"HOME": str(home), "AGENTLOG_INDEX": str(tmp_path / "index.sqlite")}
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        env[var] = None  # type: ignore[assignment]
    result = CliRunner().invoke(main, ["doctor", "--json"], env=env)
    assert result.exit_code == 0, result.stderr
    (cline,) = json.loads(result.stdout)["agents"]
    history = str(folder / "api_conversation_history.json")
    assert cline["skipped_in"] == [{"path": history, "skipped": cline["skipped"]}]
    assert cline["skipped"]["malformed:wrong_type"] == 1 and not [r for r in cline["skipped"] if "Error" in r]
    text = CliRunner().invoke(main, ["doctor", "--no-sync"], env={**env, "COLUMNS": "300"}).stdout
    counts = ", ".join(f"{n} {r}" for r, n in sorted(cline["skipped"].items(), key=lambda kv: -kv[1]))
    assert f"    in ~/.cline/data/tasks/1750000000000/api_conversation_history.json: {counts}\n" in text
    assert [malformed_reason(e) for e in (KeyError("k"), IndexError(), AttributeError(), RecursionError())] == [
        "malformed:missing_field",
        "malformed:missing_item",
        "malformed:wrong_type",
        "malformed:nested_too_deep",
    ]
    assert [malformed_reason(e) for e in (OverflowError(), UnicodeDecodeError("utf-8", b"", 0, 1, "x"), ValueError())] == [
        "malformed:number_out_of_range",
        "malformed:bad_text",
        "malformed:bad_value",
    ]
