"""Golden tests for the GitHub Copilot CLI adapter.

``session-state/aaaabbbb-…/events.jsonl`` and ``legacy-flat-small.jsonl`` are
jazzyalex/agent-sessions fixtures (MIT); ``otel/copilot-otel.jsonl`` was written for
agentlog from the span shape ccusage reads (``adapter/copilot/parser.rs``).  Expected
values were counted with a throwaway script over the raw lines (record types,
``outputTokens`` sums, tool requests and completions) and by hand for the OTel spans.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from agentlog.adapters import get_adapter
from agentlog.cli import main
from agentlog.load import load_sessions
from agentlog.model import ReasoningPart
from conftest import fixture, parse_files, parse_one, shared_fixture

SID = "aaaabbbb-1111-2222-3333-ccccddddeeee"
EVENTS = f"copilot_cli/session-state/{SID}/events.jsonl"
OTEL = "copilot_cli/otel/copilot-otel.jsonl"
ENV_UNSET = {"COPILOT_HOME": None, "COPILOT_OTEL_FILE_EXPORTER_PATH": None}


def test_events_without_otel_count_output_tokens_only():
    session = parse_one("copilot_cli", fixture(EVENTS))
    assert session.key == f"copilot_cli:{SID}"
    assert (session.agent_version, session.cwd, session.git_branch) == ("1.0.11", "/tmp/project", "main")
    assert session.started_at.isoformat() == "2026-03-26T17:50:34.263000+00:00"
    assert [m.role for m in session.messages] == ["user", "assistant", "assistant"]
    assert [m.id for m in session.messages] == [f"{SID}:e2", f"{SID}:msg-0001", f"{SID}:msg-0002"]
    (call,) = session.tool_calls()
    assert (call.call_id, call.tool, call.input) == (
        "call_1",
        "bash",
        {"command": "ls", "description": "List files"},
    )
    assert (call.result.status, call.result.output) == ("completed", "file1\nfile2\n")
    assert (session.usage.input_tokens, session.usage.output_tokens) == (0, 26)  # 12 + 14
    assert all(m.flags == ["usage_partial"] for m in session.messages if m.usage)
    assert (session.status, session.status_evidence) == ("waiting_for_user", "assistant.turn_end")
    d = session.diagnostics
    assert (d.records_total, d.records_used) == (8, 5)
    assert d.skipped == {
        "ignored:assistant.turn_start": 1,
        "ignored:tool.execution_start": 1,
        "ignored:assistant.turn_end": 1,
    }
    assert session.resume_command == f"copilot --resume {SID}"


def test_otel_export_replaces_output_only_usage():
    (session,) = parse_files("copilot_cli", fixture(EVENTS), sidecars={fixture(EVENTS): (fixture(OTEL),)})
    usage = session.usage
    # two chat spans of this conversation; the invoke_agent roll-up and another session's span don't count
    assert (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_5m_tokens) == (700, 2500, 100)
    assert (usage.output_tokens, usage.reasoning_tokens) == (26, 5)
    assert not [m for m in session.messages if "usage_partial" in m.flags]
    spans = [m for m in session.messages if m.id.startswith(f"{SID}:otel:")]
    assert [m.id for m in spans] == [f"{SID}:otel:t1:s1", f"{SID}:otel:t1:s2"]
    assert [m.model for m in spans] == ["gpt-5-mini-2025-08-07", "gpt-5-mini"]
    assert spans[0].timestamp.isoformat() == "2026-03-26T17:50:36.500000+00:00"


def test_flat_file_with_every_event_type():
    session = parse_one("copilot_cli", fixture("copilot_cli/legacy-flat-small.jsonl"))
    assert session.id == "copilot_stage0_small" and session.agent_version == "1.0.77"
    # 32 records: 12 lifecycle/telemetry types ignored, the rest used
    d = session.diagnostics
    assert (d.records_total, d.records_used, sum(d.skipped.values())) == (32, 20, 12)
    assert session.usage.output_tokens == 15 and session.usage.input_tokens == 0
    assert len(session.tool_calls()) == 4
    first = session.tool_calls()[0]
    assert (first.call_id, first.tool, first.raw_name, first.input) == (
        "call-1",
        "bash",
        "shell",
        {"command": "ls"},
    )
    assert first.result.output == "a.txt\nb.txt\n"
    flags = [f for m in session.messages for f in m.flags if f != "usage_partial"]
    assert sorted(flags) == ["api_error", "interrupted", "meta"]
    m1 = next(m for m in session.messages if m.id.endswith(":m-1"))
    assert m1.model == "gpt-5-mini" and isinstance(m1.parts[0], ReasoningPart) and m1.parts[0].encrypted


def test_non_envelope_lines_are_counted():
    session = parse_one("copilot_cli", shared_fixture("copilot-cli/cass-truncated-resume.events.jsonl"))
    assert not session.messages
    assert session.diagnostics.skipped == {"malformed:envelope": 2, "invalid_json": 1}


def test_found_under_home_with_otel_and_rendered(tmp_path):
    base = tmp_path / ".copilot"
    (base / "session-state" / SID).mkdir(parents=True)
    shutil.copy(fixture(EVENTS), base / "session-state" / SID)
    shutil.copy(fixture("copilot_cli/legacy-flat-small.jsonl"), base / "session-state")
    (base / "otel").mkdir()
    shutil.copy(fixture(OTEL), base / "otel")
    sessions = {s.key: s for s in load_sessions(agents=["copilot_cli"], env={}, home=tmp_path)}
    assert sorted(sessions) == [f"copilot_cli:{SID}", "copilot_cli:copilot_stage0_small"]
    assert sessions[f"copilot_cli:{SID}"].usage.input_tokens == 700
    assert sessions["copilot_cli:copilot_stage0_small"].usage.output_tokens == 15
    exporter = tmp_path / "elsewhere.jsonl"
    shutil.move(base / "otel" / "copilot-otel.jsonl", exporter)
    moved = load_sessions(
        agents=["copilot_cli"], env={"COPILOT_OTEL_FILE_EXPORTER_PATH": str(exporter)}, home=tmp_path
    )
    assert {s.key: s.usage.input_tokens for s in moved}[f"copilot_cli:{SID}"] == 700
    result = CliRunner().invoke(main, ["show", SID[:8]], env={"HOME": str(tmp_path), **ENV_UNSET})
    assert result.exit_code == 0, result.output
    assert "The directory contains file1 and file2." in result.stdout and "⚙ bash ls" in result.stdout


def test_roots_and_sniff():
    adapter = get_adapter("copilot_cli")
    assert adapter.default_roots({}, Path("/h")) == [Path("/h/.copilot/session-state")]
    assert adapter.default_roots({"COPILOT_HOME": "/c"}, Path("/h")) == [Path("/c/session-state")]
    assert adapter.sniff("events.jsonl", fixture(EVENTS).read_bytes()) == 0.95
    assert adapter.sniff("x.jsonl", b'{"type":"user","message":{}}') == 0.0


def test_otel_usage_is_not_lost_when_the_first_lines_are_broken(tmp_path):
    events = tmp_path / SID / "events.jsonl"
    events.parent.mkdir()
    good = fixture(EVENTS).read_bytes()
    events.write_bytes(b'{"type":"session.start"}\n' + good)
    (session,) = parse_files("copilot_cli", events, sidecars={events: (fixture(OTEL),)})
    assert session.usage.input_tokens == 700 and session.diagnostics.skipped["malformed:envelope"] == 1
    events.write_bytes(
        b'{"type":"session.start"}\n'
    )  # nothing but a broken line: no usage invented, none lost later
    (alone,) = parse_files("copilot_cli", events, sidecars={events: (fixture(OTEL),)})
    assert not alone.messages and alone.diagnostics.skipped == {"malformed:envelope": 1}
