"""Adapters are imported only when their files are found (#17 part 6): the
registry cache knows every adapter's slug, parser version, project files and the
roots its ``default_roots`` gives for the variables it reads."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import FIXTURES

CHILD = """
import json, sys
from pathlib import Path
from agentlog.adapters import registered, save_registry
from agentlog.index.db import connect
from agentlog.index.sync import sync
home = Path(sys.argv[1])
env = json.loads(sys.argv[3])
report = sync(connect(Path(sys.argv[2])), registered(), env, home)
save_registry()
print(json.dumps({
    "modules": sorted(m.rsplit(".", 1)[1] for m in sys.modules
                      if m.startswith("agentlog.adapters.") and not m.rsplit(".", 1)[1].startswith("_")
                      and m.rsplit(".", 1)[1] != "base"),
    "sources": report.sources, "unchanged": report.unchanged,
    "roots": {slug: [str(r) for r, _ in roots] for slug, roots in report.roots.roots.items()},
}))
"""


def _sync(home: Path, index: Path, cache: Path, **env: str) -> dict:
    variables = {"HOME": str(home), **env}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(home), str(index), json.dumps(variables)],
        env={"PATH": os.environ["PATH"], "HOME": str(home), "XDG_CACHE_HOME": str(cache)},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(out.stdout)


def test_a_warm_sync_imports_only_the_adapters_whose_folders_exist(tmp_path):
    home, cache = tmp_path / "home", tmp_path / "cache"
    shutil.copytree(FIXTURES / "claude_code", home / ".claude/projects/-tmp-project")
    first = _sync(home, tmp_path / "index.sqlite", cache)
    assert len(first["modules"]) >= 25  # a new cache: every adapter looked at once
    warm = _sync(home, tmp_path / "index.sqlite", cache)
    # Claude Code's, and those few whose roots are folders any home has (Aider's
    # projects, under home itself); never Codex, Gemini, OpenCode… with no folder here.
    assert "claude_code" in warm["modules"] and len(warm["modules"]) <= 5, warm["modules"]
    assert not {"codex", "gemini_cli", "opencode", "cursor", "cline"} & set(warm["modules"])
    assert (warm["sources"], warm["unchanged"]) == (first["sources"], first["sources"])
    assert warm["roots"] == first["roots"]
    # The roots follow the variables an adapter reads: the cache is keyed by their values.
    elsewhere = tmp_path / "codex-home"
    shutil.copytree(FIXTURES / "codex", elsewhere / "sessions/2025/11/25")
    moved = _sync(home, tmp_path / "index.sqlite", cache, CODEX_HOME=str(elsewhere))
    assert moved["roots"]["codex"] and all(r.startswith(str(elsewhere)) for r in moved["roots"]["codex"])
    assert not any(r.startswith(str(elsewhere)) for r in warm["roots"]["codex"])
    assert "codex" in moved["modules"]
    assert moved["sources"] == first["sources"] + len(list(elsewhere.rglob("rollout-*.jsonl")))
