"""A home folder laid out as the agents lay it out, plus every path discovery
must survive: an unreadable agent folder, a FIFO log, a FIFO sidecar, a FIFO
database, a FIFO Goose legacy file, a symbolic-link loop, a recorded ``cwd``
longer than ``NAME_MAX`` and one inside a folder the user cannot enter.

Tests run as root, whom permission bits do not stop.  "Cannot enter" is made
real by ``chmod 000`` and a child process without ``CAP_DAC_OVERRIDE``/
``CAP_DAC_READ_SEARCH`` (see ``test_hostile_home.Hostile``), and, where that
is not possible, simulated: :data:`DENY_PRELUDE` (run first in a child
process, with ``AGENTLOG_TEST_DENY`` naming the folders) makes the ``os`` calls
behave for everything inside those folders as they do for a user without the
``x`` bit: ``EACCES`` from ``stat``, ``lstat``, ``scandir``, ``listdir`` and
``open``, the folder itself still ``stat``-able.  Both give the same results
(checked by running the suite's home both ways, and once as user ``nobody``).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from conftest import FIXTURES

ROOT = Path(__file__).parents[1]
CODEX_ROLLOUT = next((ROOT / "src/agentlog/demo/home/.codex/sessions/2026/11/21").glob("rollout-*.jsonl"))
SUBAGENTS = FIXTURES / "claude_code/v2.1-subagents-layout"
PARENT_ID = "0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f"
LONG_NAME = "x" * 300  # above NAME_MAX (255 bytes)

DENY_PRELUDE = r"""
import builtins, errno, io, os
_DENIED = [d.rstrip("/") + "/" for d in os.environ["AGENTLOG_TEST_DENY"].split(os.pathsep) if d]

def _denied(path, inside_only=True):
    try:
        text = os.fsdecode(path) if not isinstance(path, int) else ""
    except TypeError:
        return False
    text = os.path.abspath(text) if text else text
    return any(text.startswith(d) or (not inside_only and text + "/" == d) for d in _DENIED)

def _wrap(call, inside_only=True):
    def guarded(path, *args, **kwargs):
        if _denied(path, inside_only):
            raise PermissionError(errno.EACCES, "Permission denied", os.fsdecode(path))
        return call(path, *args, **kwargs)
    return guarded

os.stat = _wrap(os.stat)
os.lstat = _wrap(os.lstat)
os.open = _wrap(os.open)
os.scandir = _wrap(os.scandir, inside_only=False)
os.listdir = _wrap(os.listdir, inside_only=False)
builtins.open = io.open = _wrap(io.open)
"""


def session_line(session_id: str, cwd: str, text: str = "hello") -> bytes:
    """One Claude Code user line recording ``cwd``."""
    record = {
        "type": "user",
        "sessionId": session_id,
        "uuid": f"{session_id}-u1",
        "timestamp": "2026-01-01T00:00:00Z",
        "cwd": cwd,
        "message": {"role": "user", "content": text},
    }
    return json.dumps(record).encode() + b"\n"


def build(tmp: Path) -> dict[str, Path]:
    """Lay out the hostile home under ``tmp``; returns the paths the tests name."""
    home = tmp / "home"
    projects = home / ".claude/projects/-p"
    projects.mkdir(parents=True)
    shutil.copy(FIXTURES / "claude_code/v1.0.98-session.jsonl", projects / "good.jsonl")
    # a subagent whose .meta.json sidecar is a FIFO
    shutil.copytree(SUBAGENTS, projects, dirs_exist_ok=True)
    meta = projects / PARENT_ID / "subagents/agent-a0ad4f44468bdf20d.meta.json"
    meta.unlink()
    os.mkfifo(meta)
    os.mkfifo(projects / "fifo.jsonl")  # a FIFO where a log is expected
    (projects / "loop.jsonl").symlink_to("loop.jsonl")  # ELOOP
    (projects / "up").symlink_to("..")  # a cycle, walked once
    # sessions recording a cwd too long to exist, and one inside a folder nobody may enter
    locked = tmp / "locked"
    (locked / "proj").mkdir(parents=True)
    project = tmp / "work/proj"
    project.mkdir(parents=True)
    shutil.copy(
        FIXTURES / "aider/written-new-format.aider.chat.history.md", project / ".aider.chat.history.md"
    )
    (projects / "long.jsonl").write_bytes(session_line("long", f"{tmp}/{LONG_NAME}/sub"))
    (projects / "inlocked.jsonl").write_bytes(session_line("inlocked", f"{locked}/proj"))
    (projects / "inproject.jsonl").write_bytes(session_line("inproject", str(project)))
    # Codex: its sessions folder is the unreadable one
    rollouts = home / ".codex/sessions/2026/11/21"
    rollouts.mkdir(parents=True)
    shutil.copy(CODEX_ROLLOUT, rollouts / CODEX_ROLLOUT.name)
    # Goose: a FIFO where a legacy session file is expected; zcode: a FIFO database
    goose = home / ".local/share/goose/sessions"
    goose.mkdir(parents=True)
    os.mkfifo(goose / "20260101_1.jsonl")
    zcode = home / ".zcode/cli/db"
    zcode.mkdir(parents=True)
    os.mkfifo(zcode / "db.sqlite")
    return {
        "home": home,
        "projects": projects,
        "meta": meta,
        "codex_sessions": home / ".codex/sessions",
        "locked": locked,
        "project": project,
    }
