"""Golden tests for the Hermes Agent adapter (exact values).

The legacy snapshots are jazzyalex/agent-sessions fixtures; ``state-db.sql`` and the
two ``.jsonl`` files are written for agentlog from the schema (formats.md §14.5).
Expected values are read off the raw rows by hand (comments in the SQL).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentlog.adapters import get_adapter
from agentlog.adapters.hermes import session_files, usage_of
from agentlog.cli import main
from agentlog.load import LoadReport, load_sessions
from agentlog.model import ReasoningPart, Session
from conftest import build_sqlite, fixture

ADAPTER = get_adapter("hermes")
DUMP = "request_dump_s_root_20260103_000000_000000.json"


def snapshots_home(home: Path) -> Path:
    sessions = home / ".hermes/sessions"
    sessions.mkdir(parents=True)
    for name, sid in (
        ("large", "20260429_hermes_large"),
        ("schema_drift", "20260429_hermes_schema_drift"),
        ("small", "20260429_hermes_small"),
    ):
        shutil.copy(fixture(f"hermes/legacy-session-{name}.json"), sessions / f"session_{sid}.json")
    return sessions


def database_home(home: Path) -> Path:
    root = home / ".hermes"
    (root / "sessions").mkdir(parents=True)
    build_sqlite(fixture("hermes/state-db.sql"), root / "state.db")
    for name in ("s_root.jsonl", "s_diverted.jsonl", DUMP):
        shutil.copy(fixture(f"hermes/{name}"), root / "sessions" / name)
    return root


def load(home: Path, report: LoadReport | None = None) -> dict[str, Session]:
    return {
        s.id: s for s in load_sessions(agents=["hermes"], env={"HOME": str(home)}, home=home, report=report)
    }


def buckets(session: Session) -> tuple[int, int, int, int]:
    u = session.usage
    return u.input_tokens, u.cache_read_tokens, u.cache_write_5m_tokens, u.output_tokens


def test_legacy_snapshots(tmp_path):
    snapshots_home(tmp_path)
    sessions = load(tmp_path)
    assert sorted(sessions) == [
        "20260429_hermes_large",
        "20260429_hermes_schema_drift",
        "20260429_hermes_small",
    ]
    large = sessions["20260429_hermes_large"]
    assert large.cwd == "~/Repository/Codex-History"  # model_config.cwd
    assert [m.role for m in large.messages] == ["user", "assistant", "assistant"]
    assert isinstance(large.messages[1].parts[0], ReasoningPart)
    (call,) = large.tool_calls()
    assert (call.tool, call.raw_name, call.input, call.result.output) == (
        "bash",
        "shell",
        {"command": "pwd"},
        "/Users/USER/Repository/Codex-History",
    )
    assert large.diagnostics.skipped == {"ignored:session_meta": 1}
    assert large.diagnostics.records_total == 6  # the snapshot + 5 messages
    assert large.models == ["gpt-5.2"]
    drift = sessions["20260429_hermes_schema_drift"]
    (call,) = drift.tool_calls()
    assert (call.tool, call.result.is_error, call.result.output) == ("memory", True, "No results.")
    small = sessions["20260429_hermes_small"]
    assert [m.text for m in small.messages] == [
        "Summarize this directory.",
        "This directory contains a small Hermes fixture.",
    ]
    assert small.started_at.isoformat() == "2026-04-29T20:00:00+00:00"


def test_state_db_stitches_compression_and_links_children(tmp_path):
    database_home(tmp_path)
    sessions = load(tmp_path)
    assert sorted(sessions) == ["s_branch", "s_deleg", "s_diverted", "s_root"]
    root = sessions["s_root"]
    assert (root.title, root.cwd, root.git_branch, root.kind) == ("Refactor parser", "/tmp/h", "main", "main")
    assert [m.text for m in root.messages if m.role == "user"] == ["refactor the parser", "continue"]
    assert [m.role for m in root.messages] == [
        "user",
        "assistant",
        "assistant",
        "system",
        "user",
        "assistant",
    ]
    assert root.messages[3].flags == ["meta"]  # display_kind hidden
    (call,) = root.tool_calls()
    assert (call.tool, call.input, call.result.output) == ("bash", {"command": "pytest"}, "3 passed")
    # Both rows' counters, each once: s_root 1000/5000/300/200 + s_cont 400/2000/0/100.
    assert buckets(root) == (1400, 7000, 300, 300)
    assert root.usage.cost_usd == pytest.approx(0.05 + 0.01)  # actual (s_root) + estimated (s_cont)
    assert (
        root.messages[2].usage.cost_source == "recorded" and root.messages[5].usage.cost_source == "estimated"
    )
    assert root.diagnostics.skipped == {"duplicate:state_db": 1, "orphan_message": 1}
    branch = sessions["s_branch"]
    assert (branch.kind, branch.parent_key) == ("fork", "hermes:s_root")
    assert buckets(branch) == (50, 0, 0, 10) and branch.usage.cost_usd is None  # $0 with cost_source none
    deleg = sessions["s_deleg"]
    assert (deleg.kind, deleg.parent_key) == ("subagent", "hermes:s_root")
    assert buckets(deleg) == (300, 0, 0, 60) and deleg.usage.reasoning_tokens == 20
    assert (root.resume_command, deleg.resume_command) == ("hermes --resume s_root", None)
    diverted = sessions["s_diverted"]
    assert [m.text for m in diverted.messages] == ["what changed?", "Only the parser."]
    assert (diverted.title, deleg.title) == ("what changed?", "summarize the module")  # first prompts


def test_request_dumps_are_never_read(tmp_path):
    root = database_home(tmp_path)
    dump = root / "sessions" / DUMP
    refs = list(ADAPTER.discover(root))
    assert [Path(r.path).name for r in refs] == ["state.db"]
    assert sorted(Path(p).name for p in refs[0].sidecars) == ["s_diverted.jsonl", "s_root.jsonl"]
    assert DUMP not in {p.name for p in session_files(root / "sessions")}
    os.chmod(dump, 0)  # reading it would now fail and be reported
    try:
        report = LoadReport()
        sessions = load(tmp_path, report)
    finally:
        os.chmod(dump, 0o644)
    assert report.errors == [] and not any(s.diagnostics.errors for s in sessions.values())
    texts = [p for s in sessions.values() for m in s.messages for p in [m.text]]
    assert not any("SECRET" in t for t in texts)
    assert ADAPTER.sniff(DUMP, dump.read_bytes()) == 0.0


def test_shown_by_the_cli(tmp_path):
    database_home(tmp_path)
    result = CliRunner().invoke(
        main, ["show", "hermes:s_root"], env={"HOME": str(tmp_path), "HERMES_HOME": None}
    )
    assert result.exit_code == 0, result.output
    assert "Tests pass; refactoring." in result.output


def test_roots_and_cost_rules():
    assert ADAPTER.default_roots({"HERMES_HOME": "/x"}, Path("/h")) == [Path("/x")]
    assert ADAPTER.default_roots({}, Path("/h")) == [Path("/h/.hermes")]
    assert usage_of({"actual_cost_usd": 0.0, "cost_source": ""}).cost_usd is None
    assert usage_of({"estimated_cost_usd": 0.0, "cost_source": "user_override"}).cost_usd == 0.0
    assert usage_of({"actual_cost_usd": 0.2, "estimated_cost_usd": 0.1}).cost_source == "recorded"
    assert ADAPTER.sniff("s_root.jsonl", fixture("hermes/s_root.jsonl").read_bytes()) == 0.2
    assert ADAPTER.sniff("session_x.json", fixture("hermes/legacy-session-small.json").read_bytes()) == 0.85


def test_a_session_in_two_files_keeps_the_richer_one(tmp_path):
    root = database_home(tmp_path)
    shutil.copy(fixture("hermes/s_root.jsonl"), root / "sessions/session_s_diverted.json")  # 1 message
    (root / "sessions/s_broken.jsonl").write_text("{not json\n")
    sessions = load(tmp_path)
    diverted = sessions["s_diverted"]
    assert [m.text for m in diverted.messages] == ["what changed?", "Only the parser."]
    # The poorer copy (a snapshot object without messages: 1 record) loses; the broken file
    # is counted on the first session of the source.
    assert diverted.diagnostics.skipped == {"duplicate:session_file": 1}
    assert sessions["s_root"].diagnostics.skipped["invalid_json"] == 1
