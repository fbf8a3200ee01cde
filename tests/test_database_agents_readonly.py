"""Loading the database- and folder-based agents (OpenCode, zcode, Kimi CLI, Kimi Code,
Hermes) never writes to their folders: no byte, no mtime, no ``-shm``/``-journal`` file."""

from __future__ import annotations

import os
import shutil

from agentlog.load import load_sessions
from conftest import build_sqlite, fixture
from test_contract import _tree_digest

KIMI_CODE_SESSION = "session_1bcbe023-4f7e-4971-9dc9-43b8756045b0"


def test_loading_never_writes(tmp_path):
    home = tmp_path
    build_sqlite(fixture("opencode/opencode-db.sql"), home / ".local/share/opencode/opencode.db")
    shutil.copytree(fixture("opencode/storage-v2-json"), home / ".local/share/opencode/storage")
    build_sqlite(fixture("zcode/db.sql"), home / ".zcode/cli/db/db.sqlite")
    build_sqlite(fixture("hermes/state-db.sql"), home / ".hermes/state.db")
    (home / ".hermes/sessions").mkdir()
    shutil.copy(fixture("hermes/s_diverted.jsonl"), home / ".hermes/sessions/s_diverted.jsonl")
    shutil.copytree(fixture("kimi/share"), home / ".kimi")
    agent = home / ".kimi-code/sessions/wd_project_ac3bb318f98e" / KIMI_CODE_SESSION / "agents/main"
    agent.mkdir(parents=True)
    shutil.copy(fixture("kimi_code/assistant_tools.jsonl"), agent / "wire.jsonl")
    before = _tree_digest(home)
    dir_mtimes = {d: os.stat(d).st_mtime_ns for d, _, _ in os.walk(home)}
    sessions = load_sessions(
        agents=["opencode", "zcode", "hermes", "kimi", "kimi_code"], env={"HOME": str(home)}, home=home
    )
    assert {s.agent for s in sessions} == {"opencode", "zcode", "hermes", "kimi", "kimi_code"}
    assert _tree_digest(home) == before
    assert {d: os.stat(d).st_mtime_ns for d, _, _ in os.walk(home)} == dir_mtimes
