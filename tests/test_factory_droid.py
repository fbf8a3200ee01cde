"""Golden tests for the Factory Droid adapter (exact values, read off the raw lines
and the settings sidecar by hand: each fixture has two or three messages)."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from agentlog.adapters import SourceRef
from agentlog.adapters.factory_droid import FactoryDroidAdapter
from agentlog.cli import main
from agentlog.load import build_sessions, load_sessions, parse_source
from agentlog.model import ToolCallPart
from conftest import fixture, parse_files

SMALL = "factory_droid/session_store_small.jsonl"
SETTINGS = "factory_droid/session_store_small.settings.json"
DRIFT = "factory_droid/session_store_schema_drift.jsonl"


def test_small_session_with_settings_totals():
    (s,) = parse_files("factory_droid", fixture(SMALL), sidecars={fixture(SMALL): (fixture(SETTINGS),)})
    assert (s.title, s.cwd, s.agent_version) == ("Stage0 Droid Small", "/tmp", "0.81.0")
    assert [(m.id, m.role) for m in s.messages if not m.hidden] == [
        ("session_store_small:m1", "user"),
        ("session_store_small:m2", "assistant"),
    ]
    (call,) = s.tool_calls()
    assert isinstance(call, ToolCallPart)
    assert (call.tool, call.raw_name, call.call_id, call.input) == (
        "bash",
        "Execute",
        "tu1",
        {"command": "ls /nope"},
    )
    assert call.result.output.startswith("Error: Command failed (exit code: 1)")
    u = s.usage
    assert (
        u.input_tokens,
        u.cache_read_tokens,
        u.cache_write_5m_tokens,
        u.output_tokens,
        u.reasoning_tokens,
    ) == (
        1_520,
        12_288,
        4_096,
        310,
        120,
    )
    (carrier,) = [m for m in s.messages if m.usage]
    assert (carrier.id, carrier.flags, carrier.parts) == (
        "session_store_small@session-totals",
        ["meta", "synthetic"],
        [],
    )
    assert s.models == ["claude-sonnet-4-5-20250929"]
    assert s.started_at.isoformat() == "2025-12-26T23:50:00+00:00"
    assert (s.diagnostics.records_total, s.diagnostics.records_used) == (4, 4)


def test_drift_session_without_settings():
    (s,) = parse_files("factory_droid", fixture(DRIFT))
    assert (s.title, s.agent_version) == ("Stage0 Droid Drift", None)  # version 2 is a number
    assert [m.role for m in s.messages] == ["user", "assistant"]
    assert s.messages[0].text.endswith("Do the thing")
    assert s.usage.total_tokens == 0


def test_unknown_record_kept_and_totals_once_per_read(tmp_path):
    src = tmp_path / "s1.jsonl"
    lines = fixture(SMALL).read_bytes() + b'{"type":"todo_state","todos":[]}\n'
    src.write_bytes(lines)
    settings = tmp_path / "s1.settings.json"
    shutil.copy(fixture(SETTINGS), settings)
    adapter = FactoryDroidAdapter()
    ref = SourceRef(agent="factory_droid", path=str(src), sidecars=(str(settings),))
    cut = lines.index(b"\n", len(lines) // 2) + 1
    src.write_bytes(lines[:cut])
    first = parse_source(adapter, ref)
    src.write_bytes(lines)
    second = parse_source(adapter, ref, start=first.consumed, state=first.state)
    (s,) = build_sessions([(adapter, first), (adapter, second)])
    assert s.usage.total_tokens == 1_520 + 12_288 + 4_096 + 310  # not counted twice
    assert s.diagnostics.unknown_types == {"todo_state": 1}
    assert "unknown" in s.messages[-1].flags


def test_found_under_home_and_shown(tmp_path):
    folder = tmp_path / ".factory" / "sessions" / "-tmp"
    folder.mkdir(parents=True)
    shutil.copy(fixture(SMALL), folder / "droid_s1.jsonl")
    shutil.copy(fixture(SETTINGS), folder / "droid_s1.settings.json")
    (s,) = load_sessions(agents=["factory_droid"], env={}, home=tmp_path)
    assert s.key == "factory_droid:droid_s1" and s.usage.output_tokens == 310
    assert s.resume_command == "droid --resume droid_s1"
    result = CliRunner().invoke(
        main, ["show", s.key], env={"HOME": str(tmp_path), "DROID_SESSIONS_DIR": None}
    )
    assert result.exit_code == 0, result.output
    assert "Run a command" in result.output


def test_roots_and_sniff():
    assert FactoryDroidAdapter().default_roots({"DROID_SESSIONS_DIR": "/d"}, Path("/h")) == [Path("/d")]
    assert FactoryDroidAdapter().default_roots({}, Path("/h")) == [Path("/h/.factory/sessions")]
    assert FactoryDroidAdapter().sniff("x.jsonl", fixture(SMALL).read_bytes()) == 0.9
    assert FactoryDroidAdapter().sniff("x.jsonl", b'{"type":"user","sessionId":"s"}') == 0.0
