"""A first run answers from the logs while the index is built in the background
(#17 part 2, :mod:`agentlog.service.first_run`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from agentlog.service import first_run
from conftest import FIXTURES


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "claude_code", home / ".claude/projects/-tmp-project")
    shutil.copytree(FIXTURES / "codex", home / ".codex/sessions/2025/11/25")
    return home


def _agentlog(home: Path, index: Path, *args: str, background: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "TZ": "UTC",
        "AGENTLOG_INDEX": str(index),
        first_run.ENV: background,
    }
    return subprocess.run(
        [sys.executable, "-m", "agentlog", *args], env=env, capture_output=True, text=True, timeout=120
    )


def _sources(index: Path) -> int:
    import sqlite3

    conn = sqlite3.connect(index)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM sources").fetchone()[0])
    finally:
        conn.close()


def test_a_first_usage_reads_the_logs_and_builds_the_index_behind(tmp_path):
    home, index = _home(tmp_path), tmp_path / "index.sqlite"
    direct = _agentlog(
        home, index.with_name("other.sqlite"), "usage", "daily", "--json", "--no-index", background="0"
    )
    first = _agentlog(home, index, "usage", "daily", "--json", background="1")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout) == json.loads(direct.stdout)
    assert first.stderr == "first run: read from the logs; the index is being built in the background\n"
    deadline = time.monotonic() + 60
    while first_run.build_state(index) == "running" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert first_run.build_state(index) != "running"
    assert not first_run.marker(index).exists()  # the build removed its marker
    again = _agentlog(home, index, "index", "--json", background="1")
    report = json.loads(again.stdout)
    assert report["sources"] > 0 and report["unchanged"] == report["sources"]
    warm = _agentlog(home, index, "usage", "daily", "--json", background="1")
    assert json.loads(warm.stdout) == json.loads(direct.stdout)
    assert warm.stderr == ""


def test_piped_without_the_setting_the_first_usage_builds_the_index_itself(tmp_path):
    home, index = _home(tmp_path), tmp_path / "index.sqlite"
    first = _agentlog(home, index, "usage", "daily", "--json", background="")
    assert first.returncode == 0 and first.stderr == ""
    assert not first_run.marker(index).exists()
    assert _sources(index) == len(list(home.rglob("*.jsonl")))


def test_read_commands_say_the_index_is_still_being_built(tmp_path):
    home, index = _home(tmp_path), tmp_path / "index.sqlite"
    assert _agentlog(home, index, "index", background="0").returncode == 0
    stored = _sources(index)
    late = home / ".claude/projects/-tmp-project/late.jsonl"
    shutil.copy(next((FIXTURES / "claude_code").glob("*.jsonl")), late)
    build = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        first_run.marker(index).write_text(str(build.pid))
        assert first_run.build_state(index) == "running"
        found = _agentlog(home, index, "search", "the", "--json", background="1")
        assert found.returncode == 0, found.stderr
        assert "still being built in the background" in found.stderr
        assert _sources(index) == stored  # read as it is: the build is the one writing
        quick = _agentlog(home, index, "--no-sync", "usage", "daily", "--json", background="1")
        assert quick.returncode == 0 and "still being built in the background" in quick.stderr
    finally:
        build.kill()
        build.wait()
    # a marker whose process is gone: the build was killed, the index holds part of the logs
    assert first_run.build_state(index) == "interrupted"
    for _ in range(2):  # said by each --no-sync command until a sync finishes the build
        partial = _agentlog(home, index, "--no-sync", "sessions", "--json", background="1")
        assert partial.returncode == 0 and " ".join(partial.stderr.split()) == (
            "the index's first build was interrupted: what it holds so far is shown "
            "(`agentlog index`, or any command without --no-sync, finishes it)"
        )
    synced = _agentlog(home, index, "search", "the", "--json", background="1")
    assert "being built" not in synced.stderr and "interrupted" not in synced.stderr
    assert _sources(index) == stored + 1
    assert first_run.build_state(index) is None  # the sync finished it: the marker is gone
    after = _agentlog(home, index, "--no-sync", "sessions", "--json", background="1")
    assert (after.returncode, after.stderr) == (0, "")


def test_a_background_build_that_fails_leaves_its_marker(tmp_path):
    """``index`` removes the marker of the build it is only once it has built the
    index: a build that fails (here its index is a folder) leaves it, so the index
    is known to be partial."""
    home, index = _home(tmp_path), tmp_path / "index.sqlite"
    index.mkdir()
    marker = first_run.marker(index)
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "AGENTLOG_INDEX": str(index), first_run.MARKER_ENV: str(marker)}
    build = subprocess.Popen([sys.executable, "-m", "agentlog", "index"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    marker.write_text(str(build.pid))
    _, err = build.communicate(timeout=60)
    assert build.returncode != 0 and err
    assert marker.read_text() == str(build.pid) and first_run.build_state(index) == "interrupted"


def test_the_background_build_runs_at_a_lower_priority(tmp_path, monkeypatch):
    """The build yields the cores to the command a person waits for."""
    import subprocess as sp

    from agentlog.service.home import Home

    started: list[sp.Popen[bytes]] = []
    real = sp.Popen

    def spy(command: list[str], **kwargs: object) -> sp.Popen[bytes]:
        # the same call, but a process that only reports its niceness
        probe = [sys.executable, "-c", "import os, sys; sys.stdout.write(str(os.nice(0)))"]
        kwargs["stdout"] = sp.PIPE
        proc = real(probe, **kwargs)  # type: ignore[call-overload]
        started.append(proc)
        return proc

    monkeypatch.setattr(sp, "Popen", spy)
    index = tmp_path / "index.sqlite"
    assert first_run.start_build(index, Home({"HOME": str(tmp_path)}, tmp_path))
    out, _ = started[0].communicate(timeout=60)
    assert int(out) == min(19, os.nice(0) + first_run.BUILD_NICENESS)
    assert first_run.marker(index).read_text() == str(started[0].pid)


def test_the_background_build_starts_once_the_command_has_answered(tmp_path, monkeypatch):
    """Nothing starts while the command works; at its exit the build starts and
    indexes every log."""
    from agentlog.service.home import Home

    at_exit: list[tuple[object, tuple[object, ...]]] = []
    monkeypatch.setattr(first_run.atexit, "register", lambda fn, *args: at_exit.append((fn, args)))
    home, index = _home(tmp_path), tmp_path / "index.sqlite"
    first_run.start_build_at_exit(index, Home({"HOME": str(home), "TZ": "UTC"}, home))
    assert not first_run.marker(index).exists() and not index.exists()
    assert [fn for fn, _ in at_exit] == [first_run._start_after_output]
    fn, args = at_exit[0]
    fn(*args)  # type: ignore[operator]
    assert first_run.build_state(index) == "running"
    deadline = time.monotonic() + 60
    while first_run.build_state(index) == "running" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not first_run.marker(index).exists()
    assert _sources(index) == len(list(home.rglob("*.jsonl")))


def test_the_first_run_note_is_dim_on_a_terminal_and_plain_with_no_color(monkeypatch, capsys):
    """Printed without rich (:func:`agentlog.cli.synced.first_run_note`), styled as
    the console would: dim on a terminal, plain with ``NO_COLOR`` (or piped, above)."""
    import click._compat

    from agentlog.cli.synced import first_run_note

    monkeypatch.setattr(click._compat, "isatty", lambda stream: True)
    text = "first run: read from the logs; the index is being built in the background"
    first_run_note({})
    assert capsys.readouterr().err == f"\x1b[2m{text}\x1b[0m\n"
    first_run_note({"NO_COLOR": "1"})
    assert capsys.readouterr().err == f"{text}\n"


def test_a_first_index_killed_in_the_foreground_is_known_to_be_partial(tmp_path, monkeypatch):
    """``agentlog index`` on a new index marks the build it runs itself: killed (here:
    its sync raises half-way), the marker stays, so reads say the index holds only part
    of the logs, as for a killed background build; a build that ends removes it, and
    a later sync is not marked (the index is no longer new)."""
    from click.testing import CliRunner

    from agentlog.cli import main, synced

    home, index = _home(tmp_path), tmp_path / "index.sqlite"
    env = {"HOME": str(home), "AGENTLOG_INDEX": str(index), first_run.ENV: "0"}
    real = synced._sync

    def killed(*args, **kwargs):
        assert first_run.marker(index).read_text() == str(os.getpid())  # marked while it runs
        raise KeyboardInterrupt

    monkeypatch.setattr(synced, "_sync", killed)
    assert CliRunner().invoke(main, ["index"], env=env).exit_code != 0
    assert first_run.build_state(index) == "running"  # its pid is this process: alive
    first_run.marker(index).write_text("999999999")  # as a killed process left it
    assert first_run.build_state(index) == "interrupted"
    result = CliRunner().invoke(main, ["--no-sync", "sessions"], env=env)
    assert "first build was interrupted" in result.stderr
    monkeypatch.setattr(synced, "_sync", real)
    assert CliRunner().invoke(main, ["index"], env=env).exit_code == 0
    assert first_run.build_state(index) is None and _sources(index) > 0
    new = tmp_path / "new.sqlite"
    assert CliRunner().invoke(main, ["index"], env={**env, "AGENTLOG_INDEX": str(new)}).exit_code == 0
    assert first_run.build_state(new) is None and not first_run.marker(new).exists()
