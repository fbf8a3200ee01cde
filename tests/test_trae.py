"""Golden tests for Trae (IDE ``state.vscdb`` memento) and TRAE CLI (Codex rollouts).

``fixtures/trae/icube-ai-agent-storage.json`` was written for agentlog from the
shape in formats.md §14.3 (no public Trae database exists); the database is built
from it.  ``fixtures/trae_cli/traex-cli-rollout-subagent.jsonl`` is agentsview's
de-identified TRAE CLI rollout (MIT).  Expected values were read off the raw JSON by
hand (turn order, clamped times) and, for the rollout, from its single
``token_count`` event (input 4200 ⊇ cached 3600, output 180 ⊇ reasoning 64).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgspec
from click.testing import CliRunner

from agentlog.adapters import get_adapter
from agentlog.adapters.trae import MEMENTO_KEY, TraeAdapter
from agentlog.cli import main
from agentlog.load import LoadReport, load_sessions
from agentlog.model import ReasoningPart, TextPart, ToolCallPart
from conftest import fixture, parse_files, parse_one
from vscdb import make_vscdb

FIRST = "trae:6901a2b3c4d5e6f708192a3b"
SECOND = "trae:6901a2b3c4d5e6f708192a3c"
ROLLOUT = "trae_cli/traex-cli-rollout-subagent.jsonl"
PARENT_ROLLOUT = "trae_cli/rollout-2026-08-01T18-06-58-019fbc4a-48b9-7472-a0da-6d92901383db.jsonl"
PARENT = "trae_cli:019fbc4a-48b9-7472-a0da-6d92901383db"
CHILD = "trae_cli:019fbcca-9fd4-7d20-83dc-0762b2f839b3"
ENV_UNSET = {"TRAE_USER_DIR": None, "XDG_CONFIG_HOME": None, "APPDATA": None, "TRAEX_HOME": None}


def _store(path: Path) -> Path:
    memento = fixture("trae/icube-ai-agent-storage.json").read_text()
    secret = {"table": "ItemTable", "key": "iCubeAuthInfo://icube.cloudide", "value": "SECRET"}
    return make_vscdb(path, [{"table": "ItemTable", "key": MEMENTO_KEY, "value": memento}, secret])


def test_memento_golden(tmp_path):
    sessions = {s.key: s for s in parse_files("trae", _store(tmp_path / "state.vscdb"))}
    assert sorted(sessions) == [FIRST, SECOND]
    first = sessions[FIRST]
    assert first.title == "Add a /health endpoint to the Flask app"
    assert first.started_at.isoformat() == "2025-10-29T01:06:40+00:00"
    assert [m.role for m in first.messages] == ["user", "assistant", "user", "assistant"]
    builder = first.messages[1]
    assert [type(p) for p in builder.parts] == [
        ReasoningPart,
        ReasoningPart,
        ToolCallPart,
        ReasoningPart,
        ToolCallPart,
        TextPart,
    ]
    assert builder.text == 'Added GET /health returning {"status": "ok"}.'  # the finish step
    assert [(c.tool, c.raw_name, c.result) for c in first.tool_calls()] == [
        ("read", "view_file", None),
        ("edit", "edit_file", None),
    ]
    assert builder.model == "Claude-Sonnet-4" and "timestamp_unreliable" in builder.flags
    # the second answer claims 10:01:35, before the question it answers (10:01:40 s-epoch): clamped
    assert [m.timestamp.isoformat() for m in first.messages[2:]] == ["2025-10-29T01:08:20+00:00"] * 2
    assert first.usage.total_tokens == 0
    d = first.diagnostics
    assert (d.records_total, d.records_used) == (7, 5)
    assert d.skipped == {"not_an_object": 1, "ignored:role:tool": 1}
    second = sessions[SECOND]
    assert second.messages[1].text == "One or more 'a' characters and nothing else."  # content wins
    assert second.models == []


def test_found_under_home_and_rendered(tmp_path):
    user = tmp_path / ".config" / "Trae" / "User"
    _store(user / "workspaceStorage" / "9f8e" / "state.vscdb")
    (user / "workspaceStorage" / "9f8e" / "workspace.json").write_text(
        '{"folder": "file:///home/dev/flask-app"}'
    )
    make_vscdb(
        user / "globalStorage" / "state.vscdb", [{"table": "ItemTable", "key": "other", "value": "{}"}]
    )
    rollouts = tmp_path / ".trae" / "cli" / "sessions" / "2026" / "08" / "01"
    rollouts.mkdir(parents=True)
    shutil.copy(fixture(ROLLOUT), rollouts / "rollout-2026-08-01T18-07-03-019fbcca.jsonl")
    shutil.copy(fixture(PARENT_ROLLOUT), rollouts)
    report = LoadReport()
    sessions = {
        s.key: s for s in load_sessions(agents=["trae", "trae_cli"], env={}, home=tmp_path, report=report)
    }
    assert sorted(sessions) == [FIRST, SECOND, PARENT, CHILD]
    assert sessions[CHILD].parent_tool_call_id == "call_spawn_root"  # linked by the spawn result's agent_id
    assert sessions[FIRST].cwd == "/home/dev/flask-app" and not report.errors
    env = {"HOME": str(tmp_path), **ENV_UNSET}
    result = CliRunner().invoke(main, ["show", "6901a2b3c4d5e6f708192a3b"], env=env)
    assert result.exit_code == 0, result.output
    assert "Added tests/test_health.py." in result.stdout and "timestamp_unreliable" in result.stdout
    result = CliRunner().invoke(main, ["sessions", "--agent", "trae_cli"], env=env)
    assert result.exit_code == 0 and "How is the parser" in result.stdout
    result = CliRunner().invoke(main, ["show", "019fbcca"], env=env)
    assert result.exit_code == 0 and "The provider facade owns discovery and parsing." in result.stdout


def test_trae_cli_is_the_codex_parser_under_its_own_name():
    (trae,) = parse_files("trae_cli", fixture(ROLLOUT))
    (codex,) = parse_files("codex", fixture(ROLLOUT))
    assert trae.key == "trae_cli:019fbcca-9fd4-7d20-83dc-0762b2f839b3"
    assert (trae.kind, trae.parent_key) == ("subagent", "trae_cli:019fbc4a-48b9-7472-a0da-6d92901383db")
    assert (trae.subagent_type, trae.cwd, trae.agent_version) == (
        "explorer",
        "/home/user/code/api",
        "0.200.19",
    )
    u = trae.usage
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens) == (600, 3600, 180, 64)
    assert [c.call_id for c in trae.tool_calls()] == ["call_spawn_1", "call_wait_1", "call_exec_1"]
    assert trae.resume_command is None
    # everything but the agent's name is the Codex parse
    assert msgspec.json.encode(trae.messages) == msgspec.json.encode(codex.messages)
    renamed = msgspec.structs.replace(
        codex, key=trae.key, agent="trae_cli", parent_key=trae.parent_key, resume_command=None
    )
    assert msgspec.json.encode(renamed) == msgspec.json.encode(trae)


def test_trae_cli_main_session():
    session = parse_one("trae_cli", fixture(PARENT_ROLLOUT))
    assert (session.key, session.kind, session.title) == (
        PARENT,
        "main",
        "How is the parser package organised?",
    )
    u = session.usage  # one token_count: input 2500 ⊇ cached 2048, output 95 ⊇ reasoning 32
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens) == (452, 2048, 95, 32)
    (spawn,) = session.tool_calls()
    assert (spawn.call_id, spawn.tool, spawn.raw_name) == ("call_spawn_root", "task", "spawn_agent")
    assert (session.status, session.resume_command) == ("waiting_for_user", None)


def test_roots_and_sniff():
    trae = TraeAdapter()
    assert Path("/h/.config/Trae CN/User") in trae.default_roots({}, Path("/h"))
    assert trae.default_roots({"TRAE_USER_DIR": "/t"}, Path("/h")) == [Path("/t")]
    cli = get_adapter("trae_cli")
    assert cli.default_roots({}, Path("/h")) == [
        Path("/h/.trae/cli/sessions"),
        Path("/h/.trae/cli/archived_sessions"),
    ]
    assert cli.default_roots({"TRAEX_SESSIONS_DIR": "/s"}, Path("/h"))[0] == Path("/s")
    head = fixture(ROLLOUT).read_bytes()[:4096]
    assert cli.sniff("rollout-x.jsonl", head) == 1.0
    assert (
        cli.sniff("rollout-x.jsonl", fixture("codex/rollout-legacy-flat-schema-drift.jsonl").read_bytes())
        == 0.0
    )


# -- detection: a specialised format never ties with its base (issue #12 rule 3) ----------

TRAEX_OWN = "trae_cli/rollout-2026-09-02T10-00-00-01a0e1b2-7c00-7000-8000-00000000aa01.jsonl"


def test_detect_names_trae_cli_not_its_base_codex():
    result = CliRunner().invoke(main, ["detect", str(fixture(TRAEX_OWN)), "--json"])
    data = json.loads(result.stdout)
    # both sniffers are sure (a rollout-* name, a session_meta first): the specialisation wins the tie
    assert (data["agent"], data["confidence"]) == ("trae_cli", 1.0)
    assert data["scores"]["codex"] == data["scores"]["trae_cli"] == 1.0


def test_under_root_a_traex_rollout_is_trae_cli_and_a_codex_one_codex(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(fixture(TRAEX_OWN), folder)
    shutil.copy(fixture("codex/rollout-synthetic-tools.jsonl"), folder)
    report = LoadReport()
    found = load_sessions(env={}, home=tmp_path / "nohome", extra_roots=[folder], report=report)
    got = {s.key: (s.agent, buckets_of(s)) for s in found}
    assert got == {
        "trae_cli:01a0e1b2-7c00-7000-8000-00000000aa01": ("trae_cli", (1_600, 4_800, 210, 64)),
        "codex:019ca9f0-1c00-7000-8000-0000000000aa": ("codex", (2_600, 9_900, 760, 270)),
    }


def buckets_of(s):
    u = s.usage
    return u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens
