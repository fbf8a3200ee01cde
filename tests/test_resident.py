"""The resident process (:mod:`agentlog.resident`) with real processes: a command
it serves prints the same bytes to stdout and stderr, and ends with the same
status, as the same command run in-process (``AGENTLOG_NO_DAEMON=1``); signals,
pipes, stdin, a killed resident or client, unsafe folders, changed source files,
concurrent clients and the idle exit.  Every test starts its own resident in
its own ``XDG_RUNTIME_DIR`` and stops it (killing it if need be) at the end;
that it served a command is read from the resident's own count, so a fallback
in-process run cannot pass for a served one."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentlog.resident import paths, server
from test_index import make_home

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="residents are Linux-only")

AGENTLOG = [sys.executable, "-m", "agentlog"]


@dataclass
class Resident:
    env: dict[str, str]
    cwd: Path
    pid: int

    def run(
        self, *args: str, served: bool = True, input: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        env = self.env if served else {**self.env, paths.OFF_ENV: "1"}
        return subprocess.run(
            [*AGENTLOG, *args], env=env, cwd=self.cwd, input=input, capture_output=True, timeout=60
        )

    def status(self) -> dict:
        out = self.run("daemon", "status", "--json")
        found = json.loads(out.stdout)
        assert [r["pid"] for r in found] == [self.pid]
        return found[0]

    def served(self) -> int:
        return int(self.status()["served"])

    def children(self) -> list[int]:
        return _children(self.pid)

    def same(self, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        """Run ``args`` in-process and through the resident: equal bytes and status
        (the resident's count proves it served the second)."""
        alone = self.run(*args, served=False, input=input)
        before = self.served()
        through = self.run(*args, input=input)
        assert self.served() == before + 1
        assert (through.returncode, through.stdout, through.stderr) == (
            alone.returncode,
            alone.stdout,
            alone.stderr,
        )
        return through


def _env(tmp_path: Path) -> dict[str, str]:
    home = make_home(tmp_path)
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = {
        **os.environ,
        "HOME": str(home),
        "AGENTLOG_INDEX": str(tmp_path / "index.sqlite"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_RUNTIME_DIR": str(runtime),
        "COLUMNS": "100",
        "TZ": "UTC",
    }
    for name in (paths.OFF_ENV, paths.START_ENV, "AGENTLOG_BACKGROUND_INDEX"):
        env.pop(name, None)
    return env


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait(condition, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def _reading(pid: int) -> bool:
    """Whether ``pid`` is blocked in ``read`` (``/proc/<pid>/syscall``)."""
    try:
        number = Path(f"/proc/{pid}/syscall").read_text().split()[0]
    except (OSError, IndexError):
        return False
    return number == ("0" if os.uname().machine == "x86_64" else "63")


def _start(env: dict[str, str], cwd: Path) -> Resident:
    """A resident started as a command at a terminal starts one (``AGENTLOG_DAEMON=1``)."""
    started = subprocess.run(
        [*AGENTLOG, "index"], env={**env, paths.START_ENV: "1"}, cwd=cwd, capture_output=True, timeout=120
    )
    assert started.returncode == 0, started.stderr
    base = Path(env["XDG_RUNTIME_DIR"]) / "agentlog"
    assert _wait(lambda: any(base.glob("r-*.sock")) and any(p.read_text() for p in base.glob("r-*.lock")))
    (lock,) = base.glob("r-*.lock")
    resident = Resident(env, cwd, int(lock.read_text()))
    assert _wait(lambda: json.loads(resident.run("daemon", "status", "--json").stdout) != [])
    return resident


@pytest.fixture
def resident(tmp_path: Path) -> Iterator[Resident]:
    env = _env(tmp_path)
    started: list[int] = []
    try:
        r = _start(env, tmp_path)
        started.append(r.pid)
        yield r
    finally:
        subprocess.run([*AGENTLOG, "daemon", "stop"], env=env, cwd=tmp_path, capture_output=True, timeout=60)
        base = Path(env["XDG_RUNTIME_DIR"]) / "agentlog"
        started += [int(p.read_text() or 0) for p in base.glob("r-*.lock") if p.read_text()]
        for pid in started:
            if not _wait(lambda pid=pid: not _alive(pid), 5):
                os.kill(pid, signal.SIGKILL)


def test_outputs_are_those_of_an_in_process_run(resident: Resident) -> None:
    daily = resident.same("usage", "daily", "--json", "-z", "UTC")
    assert json.loads(daily.stdout)  # a real report, not an empty answer
    listed = resident.same("sessions", "--json")
    key = json.loads(listed.stdout)[0]["key"]
    assert resident.same("sessions").stdout
    assert resident.same("show", key).stdout
    assert resident.same("sessions", "--no-such-option").returncode == 2
    missing = resident.same("show", "no-such-session")
    assert missing.returncode == 1 and missing.stderr
    helped = resident.same("--help")
    assert helped.stdout.startswith(b"Usage: python -m agentlog ")  # click's name for it, from __main__


def test_stdin_is_the_clients(resident: Resident) -> None:
    payload = json.dumps({"session_id": "x", "model": {"display_name": "Opus"}}).encode()
    assert resident.same("statusline", input=b"not json").stdout
    assert resident.same("statusline", "--format", "{model}!", input=payload).stdout == b"Opus!\n"


def _closed_pipe(resident: Resident, served: bool) -> tuple[int, bytes]:
    env = resident.env if served else {**resident.env, paths.OFF_ENV: "1"}
    proc = subprocess.Popen(
        [*AGENTLOG, "sessions", "--json"],
        env=env,
        cwd=resident.cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # as `| head` that has already left
    err = proc.stderr.read()
    return proc.wait(timeout=60), err


def test_a_closed_pipe_ends_it_as_in_process(resident: Resident) -> None:
    before = resident.served()
    assert _closed_pipe(resident, served=True) == _closed_pipe(resident, served=False)
    assert resident.served() == before + 1


def _statusline(resident: Resident, *args: str, served: bool = True, **env: str) -> subprocess.Popen[bytes]:
    """``agentlog statusline ARGS`` started with every stream a pipe (it waits for its stdin)."""
    base = resident.env if served else {**resident.env, paths.OFF_ENV: "1"}
    return subprocess.Popen(
        [*AGENTLOG, "statusline", *args],
        env={**base, **env},
        cwd=resident.cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _served_child(resident: Resident) -> int:
    """The one command the resident runs, once it waits in ``read``."""
    assert _wait(lambda: _reading(next(iter(resident.children()), 0)))
    (child,) = resident.children()
    return child


def _unflushed(resident: Resident, served: bool) -> tuple[int, bytes]:
    """``statusline`` (its line left in stdout's buffer until the exit) into a
    pipe closed before it ends: the flush at exit fails."""
    proc = _statusline(resident, "--format", "{model}", served=served, PYTHONUNBUFFERED="")
    assert proc.stdout is not None and proc.stderr is not None and proc.stdin is not None
    proc.stdout.close()
    proc.stdin.write(b"{}")
    proc.stdin.close()
    err = proc.stderr.read()
    return proc.wait(timeout=60), err


def test_a_failed_flush_at_exit_is_reported_as_in_process(resident: Resident) -> None:
    served = _unflushed(resident, served=True)
    assert served == _unflushed(resident, served=False)
    assert served[0] == 120 and served[1].startswith(
        b"Exception ignored in: <_io.TextIOWrapper name='<stdout>'"
    )


def test_the_index_is_left_as_in_process(resident: Resident) -> None:
    index = Path(resident.env["AGENTLOG_INDEX"])

    def files() -> list[str]:
        return sorted(p.name for p in index.parent.iterdir() if p.name.startswith(index.name))

    resident.run("usage", "daily", "--json", served=False)
    alone = files()
    before = resident.served()
    resident.run("usage", "daily", "--json")
    assert resident.served() == before + 1
    assert files() == alone  # the WAL checkpointed and removed when the connection closed


def _interrupted(resident: Resident, served: bool) -> tuple[int, bytes, bytes]:
    proc = _statusline(resident, served=served)
    if served:
        _served_child(resident)
    else:
        assert _wait(lambda: _reading(proc.pid))
    proc.send_signal(signal.SIGINT)
    return _ended(proc)


def _ended(proc: subprocess.Popen[bytes]) -> tuple[int, bytes, bytes]:
    """``proc``'s status, stdout and stderr once it ends, its stdin left open
    (only a signal ends it, never the end of its input)."""
    proc.wait(timeout=60)
    assert proc.stdout is not None and proc.stderr is not None and proc.stdin is not None
    out, err = proc.stdout.read(), proc.stderr.read()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        stream.close()
    return proc.returncode, out, err


def test_sigint_is_forwarded(resident: Resident) -> None:
    served = _interrupted(resident, served=True)
    assert served == _interrupted(resident, served=False)
    assert served[0] == -signal.SIGINT  # died of the signal, as Python does on an uncaught KeyboardInterrupt
    assert _wait(lambda: resident.children() == [])


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_ctrl_z_stops_and_continues_the_command(resident: Resident) -> None:
    proc = _statusline(resident, "--format", "{model}")
    child = _served_child(resident)
    proc.send_signal(signal.SIGTSTP)
    assert _wait(lambda: _state(child) == "T" and _state(proc.pid) == "T")
    proc.send_signal(signal.SIGCONT)
    assert _wait(lambda: _state(child) != "T" and _state(proc.pid) != "T")
    out, err = proc.communicate(json.dumps({"model": {"display_name": "Opus"}}).encode(), timeout=60)
    assert (proc.returncode, out, err) == (0, b"Opus\n", b"")


def test_a_killed_resident_takes_its_command_with_it(resident: Resident) -> None:
    proc = _statusline(resident)
    child = _served_child(resident)
    os.kill(resident.pid, signal.SIGKILL)
    code, out, err = _ended(proc)
    assert code == -signal.SIGKILL
    assert out == b""
    assert err.startswith(b"agentlog: the resident process serving this command was killed")
    assert _wait(lambda: not _alive(child))
    # the next command runs in-process, as if there had never been a resident
    assert (
        resident.run("sessions", "--json").stdout == resident.run("sessions", "--json", served=False).stdout
    )


def test_a_killed_client_stops_its_command(resident: Resident) -> None:
    proc = _statusline(resident)
    child = _served_child(resident)
    proc.kill()
    proc.communicate(timeout=10)
    assert _wait(lambda: not _alive(child))
    assert resident.status()["running"] == 0


def test_an_unsafe_folder_is_not_used(resident: Resident) -> None:
    base = Path(resident.env["XDG_RUNTIME_DIR"]) / "agentlog"
    before = resident.served()
    expected = resident.run("sessions", "--json", served=False)
    base.chmod(0o750)
    try:
        got = resident.run("sessions", "--json")
    finally:
        base.chmod(0o700)
    assert (got.returncode, got.stdout, got.stderr) == (expected.returncode, expected.stdout, expected.stderr)
    assert resident.served() == before
    if os.geteuid() == 0:  # another user's folder
        os.chown(base, 65534, 65534)
        try:
            got = resident.run("sessions", "--json")
        finally:
            os.chown(base, 0, 0)
        assert got.stdout == expected.stdout
        assert resident.served() == before


def test_a_socket_that_hangs_up_means_in_process(tmp_path: Path) -> None:
    env = _env(tmp_path)
    base = Path(env["XDG_RUNTIME_DIR"]) / "agentlog"
    base.mkdir(mode=0o700)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    target = _client_socket(env, tmp_path)
    listener.bind(target)
    listener.listen(8)
    accepted: list[int] = []

    def hang_up() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            accepted.append(1)
            conn.close()

    thread = threading.Thread(target=hang_up, daemon=True)
    thread.start()
    try:
        got = subprocess.run(
            [*AGENTLOG, "sessions", "--json"], env=env, cwd=tmp_path, capture_output=True, timeout=60
        )
        alone = subprocess.run(
            [*AGENTLOG, "sessions", "--json"],
            env={**env, paths.OFF_ENV: "1"},
            cwd=tmp_path,
            capture_output=True,
        )
    finally:
        listener.close()
    assert accepted  # the client did ask it
    assert (got.returncode, got.stdout, got.stderr) == (alone.returncode, alone.stdout, alone.stderr)


def _client_socket(env: dict[str, str], cwd: Path) -> str:
    """The socket ``python -m agentlog`` run in ``cwd`` connects to (its sys.path[0] is ``cwd``)."""
    code = (
        "import sys; sys.path[0] = sys.argv[1]\n"
        "from agentlog.resident import paths\n"
        "print(paths.socket_path(paths.identity(), paths.folder()))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, str(cwd)], env=env, cwd=cwd, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_changed_source_is_never_served_by_the_old_code(tmp_path: Path) -> None:
    import agentlog

    src = tmp_path / "src"
    shutil.copytree(
        Path(agentlog.__file__).parent, src / "agentlog", ignore=shutil.ignore_patterns("__pycache__")
    )
    env = {**_env(tmp_path), "PYTHONPATH": str(src)}
    r = _start(env, tmp_path)
    try:
        assert b"newest first" in r.run("sessions", "--help").stdout
        before = r.served()
        commands = src / "agentlog" / "cli" / "commands.py"
        text = commands.read_text()
        commands.write_text(
            text.replace("List sessions active in the time span, newest first.", "CHANGED HELP.")
        )
        got = r.run("sessions", "--help")
        assert b"CHANGED HELP." in got.stdout and b"newest first" not in got.stdout
        assert _wait(lambda: not _alive(r.pid))  # refused, stopped listening, gone
        assert before == 1  # the first help was served; the changed one could not be
    finally:
        if _alive(r.pid):
            os.kill(r.pid, signal.SIGKILL)


def test_concurrent_clients(resident: Resident) -> None:
    expected = resident.run("usage", "daily", "--json", "-z", "UTC", served=False)
    before = resident.served()
    results: list[subprocess.CompletedProcess[bytes]] = []
    threads = [
        threading.Thread(target=lambda: results.append(resident.run("usage", "daily", "--json", "-z", "UTC")))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [(r.returncode, r.stdout, r.stderr) for r in results] == [
        (expected.returncode, expected.stdout, expected.stderr)
    ] * 4
    assert resident.served() == before + 4


def test_off_means_in_process(resident: Resident) -> None:
    before = resident.served()
    resident.run("sessions", "--json", served=False)
    resident.run("--version")  # answered at once, in-process
    assert resident.served() == before


def test_idle_exit(tmp_path: Path) -> None:
    env = {**_env(tmp_path), paths.IDLE_ENV: "1"}
    r = _start(env, tmp_path)
    try:
        base = Path(env["XDG_RUNTIME_DIR"]) / "agentlog"
        assert _wait(lambda: not _alive(r.pid))
        assert list(base.glob("r-*.sock")) == []
    finally:
        if _alive(r.pid):
            os.kill(r.pid, signal.SIGKILL)


def test_the_resident_holds_none_of_its_starters_pipes(tmp_path: Path) -> None:
    env = {**_env(tmp_path), paths.START_ENV: "1"}
    read, write = os.pipe()
    os.set_inheritable(write, True)
    try:
        subprocess.run(
            [*AGENTLOG, "sessions", "--json"],
            env=env,
            cwd=tmp_path,
            pass_fds=(write,),
            capture_output=True,
            timeout=60,
        )
        os.close(write)
        base = Path(env["XDG_RUNTIME_DIR"]) / "agentlog"
        assert _wait(lambda: any(p.read_text() for p in base.glob("r-*.lock")))
        (lock,) = base.glob("r-*.lock")
        pid = int(lock.read_text())
        try:
            assert _alive(pid)
            os.set_blocking(read, False)
            assert (
                os.read(read, 1) == b""
            )  # at its end (not BlockingIOError): no process holds the write side
        finally:
            os.kill(pid, signal.SIGKILL)
    finally:
        os.close(read)


def test_no_resident_is_started_off_a_terminal(tmp_path: Path) -> None:
    env = _env(tmp_path)
    out = subprocess.run(
        [*AGENTLOG, "sessions", "--json"], env=env, cwd=tmp_path, capture_output=True, timeout=60
    )
    assert out.returncode == 0
    time.sleep(0.5)
    assert not (Path(env["XDG_RUNTIME_DIR"]) / "agentlog").exists()


def test_daemon_status_and_stop(tmp_path: Path) -> None:
    env = _env(tmp_path)
    r = _start(env, tmp_path)
    try:
        shown = r.run("daemon", "status").stdout.decode()
        assert shown.startswith(f"pid {r.pid}: agentlog ")
        assert ", 0 served, 0 running, socket " in shown
        assert r.run("daemon", "stop").stdout == b"stopped 1 resident\n"
        assert _wait(lambda: not _alive(r.pid))
        assert r.run("daemon", "status").stdout == b"no resident\n"
        assert r.run("daemon", "stop").stdout == b"stopped 0 residents\n"
    finally:
        if _alive(r.pid):
            os.kill(r.pid, signal.SIGKILL)


def test_safe_folder(tmp_path: Path) -> None:
    made = tmp_path / "made"
    assert paths.safe_folder(str(made), create=True)
    assert made.stat().st_mode & 0o777 == 0o700
    open_one = tmp_path / "open"
    open_one.mkdir(mode=0o755)
    open_one.chmod(0o755)
    assert not paths.safe_folder(str(open_one))
    link = tmp_path / "link"
    link.symlink_to(made)
    assert not paths.safe_folder(str(link))
    assert paths.folder({"XDG_RUNTIME_DIR": "/run/user/7"}) == "/run/user/7/agentlog"
    assert paths.folder({"XDG_RUNTIME_DIR": "relative"}) == f"/tmp/agentlog-{os.getuid()}"


def test_preloaded_modules_exist() -> None:
    import importlib.util

    assert [name for name in server.PRELOAD if importlib.util.find_spec(name) is None] == []
