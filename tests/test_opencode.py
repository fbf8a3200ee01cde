"""Golden tests for the OpenCode adapter (exact values).

Expected numbers were worked out by hand from the raw records: the JSON fixtures
(jazzyalex/agent-sessions, tokscale) and ``fixtures/opencode/opencode-db.sql``
(written for agentlog from the drizzle schema; its comments give the intent of
each row).  Usage: message ``tokens`` (exclusive input; reasoning added to output
except for OpenAI), step-finish parts only for a message without tokens.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentlog.adapters import get_adapter
from agentlog.adapters.opencode import openai_counts, tool_name
from agentlog.cli import main
from agentlog.load import build_sessions, load_sessions, parse_source
from agentlog.model import CompactionPart, Session, ToolCallPart, UnknownPart
from conftest import build_sqlite, fixture, shared_fixture

ADAPTER = get_adapter("opencode")
AGENT_VARS = {"OPENCODE_DATA_DIR": None, "XDG_DATA_HOME": None}


def build_db(path: Path) -> Path:
    return build_sqlite(fixture("opencode/opencode-db.sql"), path)


def load_root(root: Path) -> dict[str, Session]:
    refs = list(ADAPTER.discover(root))
    return {s.id: s for s in build_sessions((ADAPTER, parse_source(ADAPTER, r)) for r in refs)}


def parts_of(session: Session) -> list[list[str]]:
    return [[type(p).__name__ for p in m.parts] for m in session.messages]


def buckets(session: Session) -> tuple[int, int, int, int, int]:
    u = session.usage
    return u.input_tokens, u.cache_read_tokens, u.cache_write_5m_tokens, u.output_tokens, u.reasoning_tokens


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    root = tmp_path / "opencode"
    root.mkdir()
    build_db(root / "opencode.db")
    shutil.copytree(fixture("opencode/storage-v2-json"), root / "storage")
    return root


def test_storage_v2_json_tree_is_one_source():
    refs = list(ADAPTER.discover(fixture("opencode/storage-v2-json")))
    assert len(refs) == 1 and refs[0].path.endswith("session/proj_test/ses_s_stage0_large.json")
    assert len(refs[0].sidecars) == 21  # 22 files in the tree minus the path; `migration` is not JSON
    sessions = load_root(fixture("opencode/storage-v2-json"))
    assert sorted(sessions) == ["s_stage0_large", "s_stage0_small"]
    large = sessions["s_stage0_large"]
    assert (large.title, large.cwd, large.agent_version) == ("OpenCode Large", "/tmp/large", "1.3.17")
    assert [m.role for m in large.messages] == ["user", "assistant", "user", "assistant"]
    # Parts in file order; step-start and patch are bookkeeping, step-finish is not added
    # to the message's own tokens.
    assert parts_of(large)[1] == ["ToolCallPart", "TextPart", "FilePart", "ReasoningPart", "CompactionPart"]
    assert large.messages[1].flags == ["interrupted"]  # MessageAbortedError
    assert buckets(large) == (120, 0, 0, 16, 0)
    assert large.usage.cost_usd is None  # `cost` is an object here, not USD
    call = large.messages[1].parts[0]
    assert isinstance(call, ToolCallPart) and call.tool == "bash" and call.result is not None
    assert call.result.is_error and call.result.status == "completed"  # metadata.exit == 1
    assert large.diagnostics.skipped == {"ignored:step-start": 1, "ignored:patch": 1}
    assert large.diagnostics.records_total == 16  # 1 session + 4 messages + 11 parts (large)
    small = sessions["s_stage0_small"]
    assert [m.text for m in small.messages] == ["Hello", "Found 2 files."]
    assert small.tool_calls()[0].result.output == "a.txt\nb.txt\n"


def test_legacy_flat_parts_and_success_status():
    sessions = load_root(fixture("opencode/storage-legacy-json"))
    drift = sessions["s_stage0_drift"]
    assert drift.title == "OpenCode Drift" and drift.agent_version == "0.1"
    # The user prompt survives only as summary.title in this old layout.
    assert [m.text for m in drift.messages] == ["Open README", "Read README and extracted the title."]
    (call,) = drift.tool_calls()
    assert (call.call_id, call.result.status, call.result.output) == (
        "call_legacy_1",
        "completed",
        "# Title\n\nBody\n",
    )
    assert [m.model for m in drift.messages] == ["gpt-4o-mini", "gpt-4o-mini"]


def test_message_without_session_file(tmp_path):
    folder = tmp_path / "storage/message/ses_test001"
    folder.mkdir(parents=True)
    shutil.copy(fixture("opencode/tokscale-message.json"), folder / "msg_test001.json")
    session = load_root(tmp_path)["ses_test001"]
    # anthropic: reasoning 0, input exclusive, cache write → 5m tier
    assert buckets(session) == (1000, 200, 100, 500, 0)
    assert session.models == ["claude-3-5-sonnet-20241022"]


def test_database_session_subagent_compaction_abort(data_dir):
    sessions = load_root(data_dir)
    main_s, child = sessions["ses_0a1"], sessions["ses_0b2"]
    assert (main_s.title, main_s.cwd, main_s.agent_version) == ("List files and review", "/tmp/p", "1.2.10")
    assert [m.role for m in main_s.messages] == ["user", "assistant"] * 3
    assert parts_of(main_s)[1] == [
        "ReasoningPart",
        "ToolCallPart",
        "ToolCallPart",
        "ToolCallPart",
        "TextPart",
        "UnknownPart",
    ]
    # msg_02 + msg_04 tokens + msg_06's step-finish; the session rollup columns are not used.
    assert buckets(main_s) == (1200 + 500 + 10, 8000 + 100, 400, 350 + 100 + 2, 50)
    assert main_s.usage.cost_usd == pytest.approx(0.0123 + 0.002 + 0.0001)
    assert main_s.usage.cost_source == "recorded"
    calls = {c.call_id: c for c in main_s.tool_calls()}
    assert {k: (c.tool, c.result.status) for k, c in calls.items()} == {
        "toolu_ls": ("bash", "completed"),
        "toolu_task": ("task", "completed"),
        "toolu_grep": ("grep", "error"),
        "toolu_test": ("bash", "interrupted"),
    }
    assert calls["toolu_grep"].result.output == "ripgrep not found"
    assert (
        isinstance(main_s.messages[2].parts[0], CompactionPart)
        and main_s.messages[2].parts[0].trigger == "auto"
    )
    assert main_s.messages[3].flags == ["compaction_summary"]
    assert main_s.messages[4].text == "now run the tests"  # the ignored synthetic part is skipped
    assert main_s.messages[5].flags == ["interrupted"]
    assert main_s.diagnostics.skipped == {"ignored:step-start": 1, "ignored:text": 1}
    assert main_s.diagnostics.unknown_types == {"hologram": 1}
    assert isinstance(main_s.messages[1].parts[-1], UnknownPart)
    assert (child.kind, child.parent_key, child.parent_tool_call_id) == (
        "subagent",
        "opencode:ses_0a1",
        "toolu_task",
    )
    # OpenAI: output already includes reasoning.
    assert buckets(child) == (300, 0, 0, 80, 40)
    assert ADAPTER.resume_command(main_s) == "opencode -s ses_0a1" and ADAPTER.resume_command(child) is None


def test_database_and_json_copy_of_one_session_are_one_session(data_dir):
    """Acceptance: a session in opencode.db and in the legacy JSON tree is ONE session, DB winning."""
    refs = list(ADAPTER.discover(data_dir))
    assert [Path(r.path).name for r in refs] == ["opencode.db"]
    sessions = load_root(data_dir)
    assert sorted(sessions) == ["s_stage0_large", "s_stage0_small", "ses_0a1", "ses_0b2"]
    small = sessions["s_stage0_small"]
    assert small.title == "OpenCode Small (db)"
    assert [m.id for m in small.messages] == ["m_user_small", "m_assistant_small"]
    # The tool part exists only in JSON, the text part in both: the DB text wins.
    assert parts_of(small) == [["TextPart"], ["ToolCallPart", "TextPart"]]
    assert small.messages[1].text == "Found 2 files (db)."
    assert buckets(small) == (50, 0, 0, 5, 0)


def test_found_under_home_and_shown_by_the_cli(tmp_path):
    data = tmp_path / ".local/share/opencode"
    data.mkdir(parents=True)
    build_db(data / "opencode.db")
    sessions = load_sessions(agents=["opencode"], env={"HOME": str(tmp_path)}, home=tmp_path)
    assert sorted(s.key for s in sessions) == [
        "opencode:s_stage0_small",
        "opencode:ses_0a1",
        "opencode:ses_0b2",
    ]
    moved = load_sessions(
        agents=["opencode"], env={"XDG_DATA_HOME": str(tmp_path / ".local/share")}, home=tmp_path / "x"
    )
    assert len(moved) == 3
    result = CliRunner().invoke(main, ["show", "opencode:ses_0a1"], env={**AGENT_VARS, "HOME": str(tmp_path)})
    assert result.exit_code == 0, result.output
    assert "list the files, then have a subagent review the diff" in result.output


def test_which_models_count_reasoning_inside_output():
    assert openai_counts({"providerID": "openai", "modelID": "gpt-5"})
    assert openai_counts({"providerID": "openrouter", "modelID": "openai/o3-mini"})
    assert openai_counts({"providerID": "azure", "modelID": "my-deployment"})
    assert not openai_counts({"providerID": "anthropic", "modelID": "claude-sonnet-4-5"})
    assert not openai_counts({"providerID": "google", "modelID": "gemini-2.5-pro"})


def test_sniff_and_names():
    assert ADAPTER.sniff("opencode.db", b"SQLite format 3\x00rest") == 0.9
    assert ADAPTER.sniff("state.db", b"SQLite format 3\x00rest") == 0.0
    head = fixture("opencode/storage-v2-json/session/proj_test/ses_s_stage0_small.json").read_bytes()
    assert ADAPTER.sniff("ses_s_stage0_small.json", head) == 0.8
    assert ADAPTER.sniff("x.jsonl", b'{"type":"user"}') == 0.0
    assert (tool_name("webfetch"), tool_name("todowrite"), tool_name("github_create_issue")) == (
        "web_fetch",
        "todo",
        "github_create_issue",
    )
    assert ADAPTER.default_roots({"OPENCODE_DATA_DIR": "/a,/b"}, Path("/h")) == [Path("/a"), Path("/b")]
    assert ADAPTER.default_roots({}, Path("/h")) == [Path("/h/.local/share/opencode")]


def test_malformed_records_cost_only_themselves(tmp_path):
    storage = tmp_path / "storage"
    shutil.copytree(fixture("opencode/storage-v2-json"), storage)
    # A message whose `time` is a list (skipped), a part whose `state` is a list (a call
    # without input or result) and a part file that is not JSON.
    (storage / "message/s_stage0_small/msg_0003.json").write_text(
        '{"id":"m_bad","sessionID":"s_stage0_small","role":"user","time":[1]}'
    )
    (storage / "part/m_assistant_large_2/002.json").write_text(
        '{"id":"p_bad","messageID":"m_assistant_large_2","type":"tool","tool":"bash","state":[1]}'
    )
    (storage / "part/m_assistant_large_2/003.json").write_text("{not json")
    sessions = load_root(tmp_path)
    small, large = sessions["s_stage0_small"], sessions["s_stage0_large"]
    assert [m.id for m in small.messages] == ["m_user_small", "m_assistant_small"]
    assert [m.id for m in large.messages][-1] == "m_assistant_large_2"
    assert [p.call_id for p in large.messages[-1].parts if isinstance(p, ToolCallPart)] == ["p_bad"]
    skipped = {
        k: v
        for s in sessions.values()
        for k, v in s.diagnostics.skipped.items()
        if "malformed" in k or "json" in k
    }
    assert skipped == {"malformed:wrong_type": 1, "invalid_json": 1}  # the message with `time: [1]`


def test_an_id_that_is_not_a_string_names_no_session(tmp_path):
    """A message whose ``sessionID`` is an object made a session keyed by its
    repr, ``opencode:{'a': [1]}`` (tester14 finding 22): the folder that holds
    the message names its session, as when the field is missing; a part's
    ``messageID`` and a session's ``parentID`` likewise."""
    storage = tmp_path / "storage"
    shutil.copytree(fixture("opencode/storage-v2-json"), storage)
    first = storage / "message/s_stage0_small/msg_0001.json"
    first.write_text(first.read_text().replace('"sessionID":"s_stage0_small"', '"sessionID":{"a":[1]}'))
    sessions = load_root(tmp_path)
    assert sorted(sessions) == ["s_stage0_large", "s_stage0_small"]
    assert [m.id for m in sessions["s_stage0_small"].messages] == ["m_user_small", "m_assistant_small"]


def test_cass_tree_with_part_ids_reused_across_messages():
    """cass fixture (licence rider: read from shared fixtures, not copied)."""
    session = load_root(shared_fixture("opencode/cass-storage-json"))["ses_test1"]
    assert (session.title, session.cwd) == ("OpenCode JSON Session", "/tmp/test-project")
    assert [(m.role, m.text) for m in session.messages] == [
        ("user", "Hello, can you help me with Rust?"),
        ("assistant", "Of course! I'd be happy to help you with Rust. What would you like to know?"),
    ]
    assert session.models == ["claude-3-opus"] and session.usage.total_tokens == 0
