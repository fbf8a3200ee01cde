"""``agentlog doctor``: an index never synced, the places a sync reads."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from agentlog.cli import main
from conftest import FIXTURES

AGENT_VARS = {"CLAUDE_CONFIG_DIR": None, "CODEX_HOME": None, "XDG_CONFIG_HOME": None}


def run(home: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), env={**AGENT_VARS, "HOME": str(home)})
    return result.exit_code, result.stdout, result.stderr


def claude_home(tmp_path: Path) -> Path:
    """A home with two Claude Code transcripts and a settings file that keeps them."""
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-p"
    project.mkdir(parents=True)
    for name in sorted((FIXTURES / "claude_code").glob("*.jsonl"))[:2]:
        shutil.copy(name, project / name.name)
    (home / ".claude" / "settings.json").write_text('{"cleanupPeriodDays": 3650}')
    return home


def test_no_sync_doctor_on_a_new_index_says_it_is_empty_and_what_a_sync_reads(tmp_path):
    home = claude_home(tmp_path)
    index = tmp_path / "index.sqlite"
    code, out, err = run(home, "--index", str(index), "--no-sync", "doctor")
    assert (code, err) == (0, "")
    assert out == (
        f"The index {index} is empty: it was never synced (or only where no agent's logs were). "
        "Run `agentlog index` (or this command without --no-sync) to read the logs.\n"
        "A sync reads:\n"
        "  claude_code: ~/.claude/projects (2 files)\n"
    )
    code, out, _ = run(home, "--index", str(index), "--no-sync", "doctor", "--json")
    report = json.loads(out)
    assert (code, report["synced"], report["agents"]) == (0, False, [])
    assert report["roots"] == [{"agent": "claude_code", "roots": [str(home / ".claude" / "projects")], "sources": 2}]


def test_no_sync_doctor_on_a_new_index_and_an_empty_home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    index = tmp_path / "index.sqlite"
    code, out, _ = run(home, "--index", str(index), "--no-sync", "doctor")
    assert code == 0
    assert out.splitlines() == [
        f"The index {index} is empty: it was never synced (or only where no agent's logs were). "
        "Run `agentlog index` (or this command without --no-sync) to read the logs.",
        "No agent's folder exists here (`agentlog agents --all` lists where agentlog looks).",
    ]
    code, out, _ = run(home, "--index", str(index), "doctor")  # synced now: nothing there
    assert (code, out) == (0, "No agent logs found (`agentlog agents --all` lists where agentlog looks).\n")


def test_doctor_reports_the_places_read_with_and_without_a_sync(tmp_path):
    home = claude_home(tmp_path)
    index = tmp_path / "index.sqlite"
    expected = [{"agent": "claude_code", "roots": [str(home / ".claude" / "projects")], "sources": 2}]
    code, out, _ = run(home, "--index", str(index), "doctor", "--json")
    synced = json.loads(out)
    assert (code, synced["synced"], synced["roots"]) == (0, True, expected)
    assert [a["agent"] for a in synced["agents"]] == ["claude_code"]
    code, out, _ = run(home, "--index", str(index), "--no-sync", "doctor", "--json")
    assert (code, json.loads(out)) == (0, synced)
    _, text, _ = run(home, "--index", str(index), "doctor")
    code, out, _ = run(home, "--index", str(index), "--no-sync", "doctor")
    assert (code, out) == (0, text)
    assert out.splitlines()[0] == "claude_code: 2 sessions, 31 records, 26 used"
