"""Golden tests for the zcode adapter (exact values).

zcode has no public source or database: ``fixtures/zcode/db.sql`` is written for
agentlog from the readers' schemas (formats.md §14.2).  Expected numbers are worked
out by hand from its rows (comments in the SQL): only ``status='completed'`` usage
rows, input made exclusive of both cache buckets.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from agentlog.adapters import get_adapter
from agentlog.adapters.zcode import usage_of
from agentlog.cli import main
from agentlog.load import load_sessions
from agentlog.model import CompactionPart, ReasoningPart, Session, UnknownPart
from conftest import build_sqlite, fixture

ADAPTER = get_adapter("zcode")


def build(home: Path) -> Path:
    return build_sqlite(fixture("zcode/db.sql"), home / ".zcode/cli/db/db.sqlite")


def load(home: Path) -> dict[str, Session]:
    build(home)
    return {s.id: s for s in load_sessions(agents=["zcode"], env={"HOME": str(home)}, home=home)}


def buckets(session: Session) -> tuple[int, int, int, int, int]:
    u = session.usage
    return u.input_tokens, u.cache_read_tokens, u.cache_write_5m_tokens, u.output_tokens, u.reasoning_tokens


def test_session_messages_tools_and_usage(tmp_path):
    sessions = load(tmp_path)
    assert sorted(sessions) == ["sess_0001", "sess_subagent_agent_0002"]
    main_s = sessions["sess_0001"]
    assert (main_s.title, main_s.cwd, main_s.agent_version) == ("Fix the build", "/tmp/z", "0.14.8")
    assert [(m.id, m.role) for m in main_s.messages] == [
        ("msg_a", "user"),
        ("msg_b", "assistant"),
        ("msg_d", "assistant"),
        ("msg_e", "system"),
        ("msg_f", "assistant"),
        ("sess_0001@usage:mu_4", "system"),
    ]
    # mu_1 + mu_2 + mu_4; mu_3 is still running.
    assert buckets(main_s) == (200 + 500 + 50, 600 + 4500, 200, 120 + 300 + 5, 20)
    assert main_s.messages[1].usage.total_tokens == 200 + 600 + 200 + 120
    assert main_s.messages[-1].flags == ["meta"]
    assert main_s.models == ["GLM-5.2"]
    calls = {c.call_id: c for c in main_s.tool_calls()}
    assert {k: (c.tool, c.result.status, c.result.output) for k, c in calls.items()} == {
        "call_1": ("bash", "error", "error: missing ;"),
        "call_2": ("edit", "completed", "ok"),
    }
    assert isinstance(main_s.messages[1].parts[0], ReasoningPart)
    compaction = main_s.messages[3].parts[0]
    assert isinstance(compaction, CompactionPart) and compaction.tokens_before == 120000
    assert isinstance(main_s.messages[4].parts[-1], UnknownPart)
    d = main_s.diagnostics
    assert d.skipped == {"ignored:timeline": 1, "ignored:model_usage:running": 1}
    assert d.unknown_types == {"widget": 1}
    assert d.records_total == 1 + 5 + 11 + 4  # session row, messages, parts, usage rows


def test_subagent(tmp_path):
    child = load(tmp_path)["sess_subagent_agent_0002"]
    assert (child.kind, child.parent_key) == ("subagent", "zcode:sess_0001")
    assert buckets(child) == (200, 100, 0, 30, 0)
    assert child.models == ["GLM-5.2-air"]


def test_shown_by_the_cli(tmp_path):
    build(tmp_path)
    env = {"HOME": str(tmp_path), "ZCODE_HOME": None, "ZCODE_DIR": None}
    result = CliRunner().invoke(main, ["show", "zcode:sess_0001"], env=env)
    assert result.exit_code == 0, result.output
    assert "The build fails on a missing semicolon." in result.output


def test_roots_and_conversion():
    assert ADAPTER.default_roots({"ZCODE_HOME": "/a,/b"}, Path("/h")) == [
        Path("/a/cli/db"),
        Path("/b/cli/db"),
    ]
    assert ADAPTER.default_roots({"ZCODE_DIR": "/d"}, Path("/h")) == [Path("/d")]
    assert ADAPTER.default_roots({}, Path("/h")) == [Path("/h/.zcode/cli/db")]
    # codeburn's check: 100 input = 36 fresh + 64 cached.
    usage = usage_of({"input_tokens": 100, "cache_read_input_tokens": 64, "output_tokens": 7})
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (36, 64, 7)
    assert ADAPTER.sniff("db.sqlite", b"SQLite format 3\x00") == 0.8
