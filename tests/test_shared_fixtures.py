"""Every registered adapter over every file of the shared fixture tree: no traceback.

Skipped when ``../shared/fixtures`` (or ``$AGENTLOG_SHARED_FIXTURES``) is absent.
Each adapter parses each file (a wrong format may only be a source error the
loader reports, or counted diagnostics); the tree given as ``--root`` is read by
the CLI (``sessions``, ``show`` of every session, ``doctor``, ``search``), and each
file found there goes to the agent whose fixture folder holds it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from agent_checks import accounted, clean_env
from agentlog.adapters import SourceRef, all_adapters
from agentlog.cli import main
from agentlog.load import LoadReport, build_sessions, load_sessions, parse_source
from conftest import SHARED

pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="shared fixtures not present")

SOURCE_ERRORS = (OSError, ValueError, RecursionError, sqlite3.Error)
"""What the loader reports as an unreadable source (``load.load_sessions``)."""


def _files() -> list[Path]:
    return sorted(p for p in SHARED.rglob("*") if p.is_file() and p.name != "SOURCES.md")


@pytest.mark.parametrize("adapter", all_adapters(), ids=lambda a: a.slug)
def test_every_adapter_parses_every_file_without_a_traceback(adapter):
    for path in _files():
        try:
            parsed = parse_source(adapter, SourceRef(agent=adapter.slug, path=str(path)))
        except SOURCE_ERRORS:
            continue
        for session in build_sessions([(adapter, parsed)]):
            assert accounted(session), (adapter.slug, path)


def test_the_tree_as_a_root_goes_to_the_right_agents(tmp_path):
    report = LoadReport()
    sessions = load_sessions(env={"HOME": str(tmp_path)}, home=tmp_path, extra_roots=[SHARED], report=report)
    assert report.errors == [] and sessions
    for session in sessions:
        for source in session.sources:
            folder = Path(source).relative_to(SHARED).parts[0]
            assert session.agent.startswith(folder.replace("-", "_")), (session.agent, source)
    flat = SHARED / "copilot-cli" / "legacy-flat-small.jsonl"
    assert {s.agent for s in sessions if str(flat) in s.sources} == {"copilot_cli"}


def _cli(home: Path, *args: str) -> str:
    result = CliRunner().invoke(main, ["--root", str(SHARED), *args], env=clean_env(home))
    assert result.exit_code == 0 and result.exception is None, (args, result.output)
    return result.stdout


def test_cli_reads_the_whole_tree(tmp_path):
    listed = json.loads(_cli(tmp_path, "sessions", "--subagents", "--json"))
    assert listed
    doctor = json.loads(_cli(tmp_path, "doctor", "--json"))
    assert doctor["unreadable"] == []
    counted = {row["agent"]: row["sessions"] for row in doctor["agents"]}
    assert {row["agent"] for row in listed} <= set(counted)
    keys = [s.key for s in load_sessions(env={"HOME": str(tmp_path)}, home=tmp_path, extra_roots=[SHARED])]
    assert len(keys) == sum(counted.values())  # message-less sessions included
    for key in keys:
        assert key.split(":", 1)[1][:8] in _cli(tmp_path, "show", "--all", "--reasoning", "--no-sync", key)
    for words in ("README", '"read the"', "hello*", "bash OR grep"):
        _cli(tmp_path, "search", "--no-sync", words)
