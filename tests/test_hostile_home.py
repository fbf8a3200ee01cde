"""Acceptance of issue #11 (isolation of discovery and the file system): with a
hostile home — an unreadable agent folder, a FIFO log, a FIFO sidecar, a FIFO
database and Goose legacy file, a symbolic-link loop, a recorded ``cwd`` too
long to exist and one in a folder nobody may enter — every command exits 0 in
a real process (no hang: each has a timeout), the other agents' sessions are
all there, and ``doctor``/``agents`` name each bad path with its error."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hostile_home import DENY_PRELUDE, LONG_NAME, PARENT_ID, build

TIMEOUT = 120  # seconds; a FIFO opened for reading would block forever

MAIN_SESSIONS = [
    "aider:*-20250310T091500",  # Aider ids start with a hash of the history file's path
    "aider:*-20250310T091500-2",
    f"claude_code:{PARENT_ID}",
    "claude_code:1af7fc5e-8455-4414-9ccd-011d40f70b2a",  # good.jsonl: its records' id
    "claude_code:inlocked",
    "claude_code:inproject",
    "claude_code:long",
]
CODEX = "codex:019ab0d2-4c1e-7f00-9d2a-5e551011c0de"
FIFO = "OSError: not a regular file (FIFO)"
DENIED = "PermissionError: Permission denied"
TOO_LONG = "OSError: File name too long"


class Hostile:
    """The hostile home of :func:`hostile_home.build`, and ``agentlog`` run on it
    in a child process, its two folders denied (:meth:`deny`, the start) or not
    (:meth:`allow`).

    ``real``: the folders are ``chmod 000`` and the child runs as root without the
    capabilities that let root ignore permission bits (``setpriv --bounding-set
    -dac_override,-dac_read_search``), so the kernel itself says ``EACCES``;
    else the child's ``os`` calls are denied inside them (:data:`DENY_PRELUDE`)."""

    def __init__(self, tmp_path: Path, real: bool) -> None:
        self.paths = build(tmp_path)
        self.real = real
        self.denied = [self.paths["codex_sessions"], self.paths["locked"]]
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME")
        }
        self.env = env | {"HOME": str(self.paths["home"]), "AGENTLOG_INDEX": str(tmp_path / "index.sqlite")}
        self.deny()

    def deny(self) -> None:
        for folder in self.denied:
            if self.real:
                folder.chmod(0)
        self.env["AGENTLOG_TEST_DENY"] = "" if self.real else os.pathsep.join(map(str, self.denied))

    def allow(self) -> None:
        for folder in self.denied:
            folder.chmod(0o755)
        self.env["AGENTLOG_TEST_DENY"] = ""

    def run(self, *args: str, code: str | None = None) -> subprocess.CompletedProcess[str]:
        """``agentlog ARGS`` (or the Python ``code``) in the child process."""
        code = DENY_PRELUDE + (
            code
            or "\nimport sys\nsys.argv = ['agentlog', *sys.argv[1:]]\nfrom agentlog._console import main\nmain()\n"
        )
        prefix = [SETPRIV, "--bounding-set=-dac_override,-dac_read_search"] if self.real else []
        return subprocess.run(
            [*prefix, sys.executable, "-c", code, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )

    def json(self, *args: str):
        proc = self.run(*args)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)


SETPRIV = shutil.which("setpriv") or "setpriv"


def _can_drop_capabilities() -> bool:
    try:
        done = subprocess.run(
            [SETPRIV, "--bounding-set=-dac_override,-dac_read_search", "true"], capture_output=True
        )
    except OSError:
        return False
    return done.returncode == 0 and os.geteuid() == 0


@pytest.fixture(params=["simulated", "real"])
def hostile(request, tmp_path):
    if request.param == "real" and not _can_drop_capabilities():
        pytest.skip("cannot run as root without CAP_DAC_OVERRIDE here (setpriv)")
    home = Hostile(tmp_path, real=request.param == "real")
    yield home
    home.allow()  # so the temporary folder can be cleaned up by anyone


def keys(rows: list[dict]) -> list[str]:
    """The sorted session keys of ``sessions --json`` rows, Aider's path hash as ``*``."""
    return sorted(re.sub(r"^aider:[0-9a-f]{8}-", "aider:*-", r["key"]) for r in rows)


def expected_problems(paths: dict[str, Path]) -> list[dict[str, str | None]]:
    projects, tmp = paths["projects"], paths["home"].parent
    long = f"{tmp}/{LONG_NAME}"
    rows = [
        ("claude_code", projects / "fifo.jsonl", FIFO),
        ("claude_code", projects / "loop.jsonl", "OSError: Too many levels of symbolic links"),
        ("claude_code", paths["meta"], FIFO),
        ("codex", paths["codex_sessions"], DENIED),
        ("goose", paths["home"] / ".local/share/goose/sessions/20260101_1.jsonl", FIFO),
        ("zcode", paths["home"] / ".zcode/cli/db/db.sqlite", FIFO),
    ]
    projects_rows = [  # the folder that could not be looked in; the topmost covers those below
        ("aider", paths["locked"], DENIED),
        ("crush", paths["locked"], DENIED),
        ("aider", long, TOO_LONG),
        ("crush", long, TOO_LONG),
    ]
    return [{"agent": a, "path": str(p), "error": e} for a, p, e in rows + projects_rows]


def test_every_command_survives_a_hostile_home(hostile):
    paths = hostile.paths
    index = hostile.json("index", "--json")
    assert (index["sources"], index["reparsed"], index["removed"], index["failed"]) == (7, 7, 0, [])
    assert index["path_problems"] == expected_problems(paths)
    text = hostile.run("index")
    assert text.returncode == 0 and text.stdout.endswith(
        "10 paths could not be looked at (see `agentlog doctor`)\n"
    )

    assert keys(hostile.json("sessions", "--json")) == MAIN_SESSIONS
    with_subagents = keys(hostile.json("sessions", "--json", "--subagents"))
    assert with_subagents == sorted([*MAIN_SESSIONS, "claude_code:agent-a0ad4f44468bdf20d"])

    usage = hostile.json("usage", "--json")
    assert [(r["key"], r["calls"]) for r in usage["rows"]] == [("2025-09-03", 7), ("unknown", 3)]
    fast = hostile.json("usage", "--json", "--no-index", "--agent", "claude_code")
    assert [(r["key"], r["calls"]) for r in fast["rows"]] == [("2025-09-03", 7)]

    hits = hostile.json("search", "hello", "--json")["hits"]
    assert sorted(h["session_key"] for h in hits) == [
        "claude_code:inlocked",
        "claude_code:inproject",
        "claude_code:long",
    ]

    doctor = hostile.json("doctor", "--json")
    assert [(a["agent"], a["sessions"]) for a in doctor["agents"]] == [("claude_code", 6), ("aider", 2)]
    assert doctor["path_problems"] == expected_problems(paths)
    assert doctor["unreadable"] == []

    agents = hostile.json("agents", "--json")  # discovery only: no project folders from cwds
    assert agents["path_problems"] == expected_problems(paths)[:6]
    found = {row["agent"]: row["sources"] for row in agents["agents"] if row["sources"]}
    assert found == {"claude_code": 6}

    text = hostile.run("doctor")
    assert text.returncode == 0
    assert "cannot look at codex: ~/.codex/sessions: PermissionError: Permission denied" in text.stdout
    assert "cannot look at goose: ~/.local/share/goose/sessions/20260101_1.jsonl: " + FIFO in text.stdout
    overview = hostile.run()
    assert (
        overview.returncode == 0
        and "10 paths could not be looked at (see `agentlog doctor`)" in overview.stdout
    )
    assert hostile.json("overview", "--json")["path_problems"] == expected_problems(paths)
    table = hostile.run("agents")
    assert table.returncode == 0
    assert "  cannot look at ~/.claude/projects/-p/fifo.jsonl: " + FIFO in table.stdout


def test_a_folder_that_turns_unreadable_keeps_its_sessions(hostile):
    """Synced while readable, then ``~/.codex/sessions`` is denied: the next sync
    cannot look there, so its session is not taken as deleted."""
    hostile.allow()
    assert keys(hostile.json("sessions", "--json")) == sorted([*MAIN_SESSIONS, CODEX])
    hostile.deny()
    index = hostile.json("index", "--json")
    assert (index["removed"], index["failed"]) == (0, [])
    assert keys(hostile.json("sessions", "--json")) == sorted([*MAIN_SESSIONS, CODEX])
    usage = hostile.json("usage", "--json")
    assert ("2026-11-21", 4) in [(r["key"], r["calls"]) for r in usage["rows"]]


def test_background_sync_of_the_viewer_survives_a_hostile_home(hostile):
    """``serve``'s syncer (web/syncer.py) completes its rounds: no error, every
    other agent's session stored."""
    code = (
        "\nimport os, time\nfrom pathlib import Path\nfrom agentlog.web.syncer import Syncer\n"
        "s = Syncer(Path(os.environ['AGENTLOG_INDEX']), os.environ, Path(os.environ['HOME']), [], 0.05)\n"
        "s.start()\n"
        "deadline = time.monotonic() + 60\n"
        "while s.last is None and time.monotonic() < deadline:\n"
        "    time.sleep(0.05)\n"
        "s.stop()\n"
        "print(s.last is not None, s.error)\n"
    )
    proc = hostile.run(code=code)
    assert (proc.returncode, proc.stdout) == (0, "True None\n"), proc.stderr
    stored = hostile.json("sessions", "--json", "--no-sync")
    assert keys(stored) == MAIN_SESSIONS


def test_problems_under_a_user_root_belong_to_no_agent(hostile, tmp_path):
    root = tmp_path / "extra"
    (root / "loop").mkdir(parents=True)
    os.mkfifo(root / "pipe.jsonl")
    (root / "loop/self").symlink_to("self")
    found = hostile.json("--root", str(root), "agents", "--json")["path_problems"]
    assert [p for p in found if p["agent"] is None] == [
        {
            "agent": None,
            "path": str(root / "loop/self"),
            "error": "OSError: Too many levels of symbolic links",
        },
        {"agent": None, "path": str(root / "pipe.jsonl"), "error": FIFO},
    ]
    text = hostile.run("--root", str(root), "agents")
    assert text.returncode == 0
    assert f"under --root\n  cannot look at {root}/loop/self: OSError: Too many levels" in text.stdout
