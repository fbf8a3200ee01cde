"""A Codex rollout moved by Codex's own archive (``~/.codex/sessions/Y/M/D`` to
``~/.codex/archived_sessions/``), or the copy left when the first of two is
deleted: the live file holds the session (not archived), as a fresh index says,
and ``prune`` removes nothing.  The rollout has tool results whose call it never
shows (the index keeps them as orphan ``tool`` messages): tester's finding 1,
session of 2026-12-01."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import FIXTURES
from test_cli import run

ROLLOUT = FIXTURES / "codex" / "rollout-v0.146-shape-catalog-trimmed.jsonl"


def _sessions(env: dict[str, str], *index: str) -> list[tuple[str, bool, int]]:
    code, out, err = run(*index, "sessions", "--json", env=env)
    assert code == 0, err
    return [(s["id"], s["archived"], s["messages"]) for s in json.loads(out)]


def _fresh(tmp_path: Path, env: dict[str, str]) -> list[tuple[str, bool, int]]:
    return _sessions(env, "--index", str(tmp_path / "fresh.sqlite"))


def test_a_rollout_moved_to_archived_sessions_is_live_there(tmp_path):
    home = tmp_path / "home"
    day, archive = home / ".codex/sessions/2025/11/25", home / ".codex/archived_sessions"
    day.mkdir(parents=True)
    archive.mkdir(parents=True)
    shutil.copy(ROLLOUT, day / "rollout-x.jsonl")
    env = {"HOME": str(home)}
    before = _sessions(env)
    assert [(archived, n) for _, archived, n in before] == [(False, 18)]
    shutil.move(day / "rollout-x.jsonl", archive / "rollout-x.jsonl")
    assert _sessions(env) == before == _fresh(tmp_path, env)
    code, _, err = run("prune", env=env)
    assert (code, err) == (0, "nothing archived\n")
    assert _sessions(env) == before
    code, out, _ = run("doctor", "--json", env=env)
    assert json.loads(out)["duplicates"] == []


def test_the_copy_left_of_two_holds_the_session(tmp_path):
    home = tmp_path / "home"
    first, second = home / ".codex/sessions/2025/11/25", home / ".codex/sessions/2025/12/01"
    env = {"HOME": str(home)}
    first.mkdir(parents=True)
    shutil.copy(ROLLOUT, first / "rollout-x.jsonl")
    before = _sessions(env)
    second.mkdir(parents=True)
    shutil.copy(ROLLOUT, second / "rollout-x.jsonl")
    assert _sessions(env) == before  # one session: the copy is a duplicate
    (first / "rollout-x.jsonl").unlink()
    assert _sessions(env) == before == _fresh(tmp_path, env)
    code, _, err = run("prune", env=env)
    assert (code, err, _sessions(env)) == (0, "nothing archived\n", before)
