"""Golden tests for the Aider adapter (exact values).

Expected numbers come from a throwaway script over the raw Markdown, independent of
the adapter: the file split with ``re.split`` at ``# aider chat started at``, ``####``
blocks counted per run, and the ``Tokens: … sent, … received. Cost: $…`` lines summed
per run.  The written fixture's numbers were worked out by hand from its text.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentlog.adapters import get_adapter
from agentlog.adapters.aider import AiderAdapter, tokens
from agentlog.cli import main
from agentlog.load import load_sessions, project_sources
from agentlog.model import Session
from conftest import build_sqlite, fixture, parse_files

REAL = "aider/aider-repo-chat-history-excerpt.md"
WRITTEN = "aider/written-new-format.aider.chat.history.md"


def local(stamp: str) -> datetime:
    """A run header's local time as UTC (the adapter's documented reading)."""
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S").astimezone(UTC)


def roles(session: Session) -> dict[str, int]:
    out: Counter[str] = Counter()
    for m in session.messages:
        out[m.role + ("*" if m.hidden else "") + ("~" if "approximate" in m.flags else "")] += 1
    return dict(out)


def by_start(sessions: list[Session]) -> dict[str, Session]:
    return {s.id.split("-", 1)[1]: s for s in sessions}


def test_real_history_golden():
    runs = by_start(parse_files("aider", fixture(REAL)))
    # 12 run headers; 4 are empty (Aider started and quit) and are skipped.
    assert sorted(runs) == [
        "20240805T193302",
        "20240805T193332",
        "20240805T203959",
        "20240805T204010",
        "20240805T204033",
        "20240805T204115",
        "20240805T204231",
        "20240806T084710",
    ]
    first = runs["20240805T193302"]
    assert first.diagnostics.skipped == {"no_run_header": 1, "empty_run": 4}
    spinner = runs["20240805T193332"]
    assert spinner.started_at == local("2024-08-05 19:33:32")
    assert spinner.title == "Use the Spinner instead of the inlined custom spinner"
    assert (spinner.agent_version, spinner.models) == ("0.47.2-dev", ["claude-3-5-sonnet-20240620"])
    assert roles(spinner) == {"system": 2, "user": 3, "assistant~": 1}
    u = spinner.usage
    assert (u.input_tokens, u.output_tokens, u.cost_usd) == (5_244, 604, 0.02)
    reply = next(m for m in spinner.messages if m.role == "assistant")
    assert ">>>>>>> REPLACE" in reply.text  # the SEARCH/REPLACE block stays in the reply
    assert runs["20240805T203959"].models == ["gpt-4o-mini"]
    assert runs["20240805T203959"].usage.output_tokens == 84
    long = runs["20240806T084710"]
    assert [m.role for m in long.messages].count("user") == 20
    assert long.models == ["claude-3-5-sonnet-20240620", "openrouter/anthropic/claude-3.5-sonnet"]
    assert [m.usage.output_tokens for m in long.messages if m.usage] == [
        883,
        2375,
        188,
        144,
        104,
        349,
        224,
        165,
    ]
    assert (long.usage.input_tokens, long.usage.output_tokens) == (110_478, 4_432)
    assert long.usage.cost_usd == pytest.approx(0.40)
    assert long.cwd == str(fixture(REAL).parent)
    for s in runs.values():
        d = s.diagnostics
        assert d.records_total == d.records_used + sum(d.skipped.values())


def test_new_token_line_with_cache_and_two_runs_in_one_second():
    first, second = parse_files("aider", fixture(WRITTEN))
    assert first.id.endswith("-20250310T091500") and second.id == first.id + "-2"
    assert first.title == "Rename `foo` to `bar` in utils.py.\nKeep the old name as an alias."
    assert first.models == ["anthropic/claude-3-7-sonnet-20250219"]
    assert roles(first) == {"system": 4, "user": 3, "assistant~": 2}
    u = first.usage
    # 12k sent − 1.2k cache write − 3.4k cache hit = 7,400 uncached; plus 9.8k sent.
    assert (u.input_tokens, u.cache_read_tokens, u.cache_write_5m_tokens, u.output_tokens) == (
        17_200,
        3_400,
        1_200,
        619,
    )
    assert u.cost_usd == pytest.approx(0.0231)
    # A token line with no reply before it: a hidden carrier keeps the usage.
    assert roles(second) == {"system*~": 1, "system": 1}
    assert (second.usage.input_tokens, second.usage.output_tokens, second.usage.cost_usd) == (
        1_500_000,
        2_048,
        None,
    )


def test_token_numbers():
    assert [tokens(t) for t in ("604", "5,244", "1.2k", "12k", "1.5M")] == [604, 5244, 1200, 12000, 1_500_000]


def test_found_in_projects_and_shown(tmp_path):
    repo = tmp_path / "projects" / "utils"
    repo.mkdir(parents=True)
    shutil.copy(fixture(WRITTEN), repo / ".aider.chat.history.md")
    hidden = tmp_path / "projects" / ".cache" / "x"
    hidden.mkdir(parents=True)
    shutil.copy(fixture(WRITTEN), hidden / ".aider.chat.history.md")
    deep = tmp_path / "projects" / "a" / "b" / "c"
    deep.mkdir(parents=True)
    shutil.copy(fixture(WRITTEN), deep / ".aider.chat.history.md")
    sessions = load_sessions(agents=["aider"], env={}, home=tmp_path)
    assert {s.sources[0] for s in sessions} == {str(repo / ".aider.chat.history.md")}
    assert len(sessions) == 2
    key = next(s.key for s in sessions if s.title)
    result = CliRunner().invoke(main, ["show", key], env={"HOME": str(tmp_path)})
    assert result.exit_code == 0, result.output
    assert "Keep the old name as an alias." in result.output
    assert "I'll rename the function" in result.output


def _claude_session_in(home: Path, cwd: Path) -> None:
    """A real Claude Code session (29 records) rewritten to have run in ``cwd``."""
    lines = fixture("claude_code/v1.0.98-session.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    for record in records:
        record["cwd"] = str(cwd)
    folder = home / ".claude" / "projects" / "-elsewhere-repo-pkg"
    folder.mkdir(parents=True)
    (folder / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records)
    )


def test_found_in_the_project_another_agent_ran_in(tmp_path):
    # The repository is outside every default root; Claude Code ran in a subfolder
    # of it; Aider's history and Crush's database sit at the repository root.
    home, repo = tmp_path / "home", tmp_path / "elsewhere" / "repo"
    (repo / "pkg").mkdir(parents=True)
    shutil.copy(fixture(WRITTEN), repo / ".aider.chat.history.md")
    build_sqlite(fixture("crush/crush.sql"), repo / ".crush" / "crush.db")
    _claude_session_in(home, repo / "pkg")
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": None, "XDG_CONFIG_HOME": None}

    def listed(agent: str) -> list[tuple[str, str | None]]:
        result = CliRunner().invoke(main, ["sessions", "--agent", agent, "--json"], env=env)
        assert result.exit_code == 0, result.output
        return sorted(
            (row["id"].partition("-")[2] or row["id"], row["cwd"]) for row in json.loads(result.stdout)
        )

    # The written history holds two runs; the Crush database sessions s1 (main) and s2.
    assert listed("aider") == [("20250310T091500", str(repo)), ("20250310T091500-2", str(repo))]
    assert listed("crush") == [("s1", str(repo))]
    result = CliRunner().invoke(main, ["index", "--json"], env=env)
    assert json.loads(result.stdout)["unchanged"] == 3  # remembered: Claude + history + database
    # The loader does the same with the cwds of the sessions it parsed.
    loaded = load_sessions(env={"HOME": str(home)}, home=home)
    assert sorted(s.agent for s in loaded if s.agent != "claude_code") == ["aider", "aider", "crush", "crush"]
    assert load_sessions(agents=["aider"], env={"HOME": str(home)}, home=home) == []


def test_project_sources_are_listed_once(tmp_path):
    repo = tmp_path / "repo"
    (repo / "a").mkdir(parents=True)
    history = repo / ".aider.chat.history.md"
    history.write_text("")
    (tmp_path / "link").symlink_to(repo)
    adapters = [get_adapter("claude_code"), get_adapter("aider")]
    cwds = [str(repo / "a"), str(repo), "repo", str(tmp_path / "link")]  # a relative cwd is ignored
    found = project_sources(adapters, cwds)
    assert [(a.slug, ref.path) for a, ref in found] == [("aider", str(history))]
    assert project_sources(adapters, cwds, [str(tmp_path / "link" / ".aider.chat.history.md")]) == []


def test_roots_and_sniff():
    roots = AiderAdapter().default_roots({}, Path("/h"))
    assert roots[0] == Path("/h") and Path("/h/projects") in roots
    assert AiderAdapter().sniff(".aider.chat.history.md", b"") == 1.0
    assert AiderAdapter().sniff("notes.md", b"\n# aider chat started at 2024-01-01 00:00:00\n") == 0.9
    assert AiderAdapter().sniff("notes.md", b"# Notes\n") == 0.0
