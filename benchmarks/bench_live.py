"""Live surfaces (issue 13, #17 part 7): idle CPU of ``serve`` and ``watch``, the
latency from an appended line to ``tail``/``status``, and ``statusline`` warm times.

    python benchmarks/bench_live.py --files 5000 --idle 60
    python benchmarks/bench_live.py --before-src /work/main/src   # serve idle of another checkout too
    python benchmarks/bench_live.py --agentsview /tmp/av/bin/agentsview

The home: ``--files`` small Codex rollouts (``corpus.write_codex_home``) and one
Claude Code session that the latency runs append to.  Idle CPU is the process's
user + system time (``/proc/<pid>/stat``) over ``--idle`` seconds after its start-up
syncs, as a percentage of one core.  Figures, not timed tests.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))

from corpus import write_codex_home

from live_scripts import SCRIPTS

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its threads."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def agentlog(src: str | None) -> list[str]:
    """The command line that runs agentlog (from ``src`` when given)."""
    if src is None:
        return [sys.executable, "-m", "agentlog"]
    code = f"import sys; sys.path.insert(0, {src!r}); from agentlog._console import main; main()"
    return [sys.executable, "-c", code]


def idle(cmd: list[str], env: dict[str, str], seconds: float, settle: float, out: Path) -> float:
    """Percent of one core ``cmd`` uses over ``seconds`` after ``settle`` seconds."""
    with out.open("w") as log:
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        time.sleep(settle)
        if proc.poll() is not None:
            raise SystemExit(f"{cmd} ended: {out.read_text()[-500:]}")
        start = cpu_seconds(proc.pid)
        time.sleep(seconds)
        used = cpu_seconds(proc.pid) - start
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return 100 * used / seconds


def latency_tail(env: dict[str, str], home: Path, cwd: Path, runs: int) -> list[float]:
    """Seconds from an appended Claude line to its ``tail --json`` event."""
    script = SCRIPTS["claude_code"](home, cwd)
    script.steps[0].write()
    subprocess.run([*agentlog(None), "index"], env=env, check=True, capture_output=True)
    proc = subprocess.Popen(
        [*agentlog(None), "tail", script.key, "--json", "-n", "0"], env=env, stdout=subprocess.PIPE, text=True
    )
    out: list[float] = []
    try:
        proc.stdout.readline()  # the status line
        time.sleep(3)  # the watch is in place
        steps = [s for s in script.steps[1:] if "ago" not in s.name][: runs * 2]
        for step in steps[:runs]:
            started = time.monotonic()
            step.write()
            while True:
                event = json.loads(proc.stdout.readline())
                if event["event"] in ("message", "part"):
                    break
            out.append(time.monotonic() - started)
            time.sleep(0.3)
    finally:
        proc.terminate()
        proc.wait(10)
    return out


def latency_status(env: dict[str, str], home: Path, cwd: Path, runs: int) -> list[float]:
    """Seconds from an appended Codex line to a ``status --json`` (a new process,
    which syncs first) that shows the new status."""
    script = SCRIPTS["codex"](home, cwd)
    script.steps[0].write()
    out: list[float] = []
    for step in script.steps[1:6][:runs]:  # before the turn ends (no stand-in process here)
        started = time.monotonic()
        step.write()
        rows = json.loads(subprocess.run([*agentlog(None), "status", "--json"], env=env, capture_output=True, check=True).stdout)
        assert any(r["key"] == script.key and r["status"] == step.status for r in rows), step.name
        out.append(time.monotonic() - started)
    return out


def statusline(env: dict[str, str], home: Path, runs: int) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """(wall p50 ms, wall min ms, CPU ms per call) of a warm ``statusline``: with
    nothing new (its cache answers), and after each of the session's messages
    (a line appended to its transcript: the no-change sync of every other log
    and the figures read again)."""
    transcript = next((home / ".claude/projects").rglob("*.jsonl"))
    payload = json.dumps({"session_id": transcript.stem, "transcript_path": str(transcript), "model": {"id": "claude-sonnet-4-5"}})
    cmd = [str(Path(sys.executable).parent / "agentlog"), "statusline"]
    subprocess.run(cmd, input=payload, env=env, capture_output=True, text=True, check=True)  # warm the cache

    def timed(append: bool) -> tuple[float, float, float]:
        walls = []
        before = os.times()
        for _ in range(runs):
            if append:
                with transcript.open("a") as f:
                    f.write("\n")
            started = time.perf_counter()
            subprocess.run(cmd, input=payload, env=env, capture_output=True, text=True, check=True)
            walls.append(time.perf_counter() - started)
        after = os.times()
        cpu = (after.children_user - before.children_user + after.children_system - before.children_system) / runs
        return statistics.median(walls) * 1000, min(walls) * 1000, cpu * 1000

    return timed(False), timed(True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=5000, help="Codex rollouts in the home")
    parser.add_argument("--idle", type=float, default=60.0, help="seconds of idle measured")
    parser.add_argument("--before-src", help="another checkout's src/ to measure serve idle for (e.g. main)")
    parser.add_argument("--agentsview", help="agentsview executable: its serve idle on the same home")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", choices=["latency", "idle"], help="one part of the run")
    parser.add_argument("--settle", type=float, default=30.0, help="seconds each server gets for its start-up syncs")
    args = parser.parse_args()
    import agentlog

    for src in (Path(agentlog.__file__).parent, args.before_src):  # as an installed package is
        if src:
            compileall.compile_dir(src, quiet=1)
    tmp = Path(tempfile.mkdtemp(prefix="bench-live-"))
    try:
        home, cwd = tmp / "home", tmp / "project"
        cwd.mkdir(parents=True)
        write_codex_home(home / ".codex", args.files)
        env = {**os.environ, "HOME": str(home), "AGENTLOG_INDEX": str(tmp / "index.sqlite"), "NO_COLOR": "1"}
        if args.only != "idle":
            latencies(env, home, cwd, args.runs, args.files)
        if args.only != "latency":
            idles(args, env, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def latencies(env: dict[str, str], home: Path, cwd: Path, runs: int, files: int) -> None:
    """The appended line → tail and → status latencies, and statusline's warm time."""
    tails = latency_tail(env, home, cwd, runs)
    print(f"appended line → tail --json event: p50 {statistics.median(tails):.2f} s, max {max(tails):.2f} s ({len(tails)} runs, {files:,} rollouts)", flush=True)
    stats = latency_status(env, home, cwd, runs)
    print(f"appended line → status --json (a new process, sync included): p50 {statistics.median(stats):.2f} s, max {max(stats):.2f} s", flush=True)
    for name, (p50, low, cpu) in zip(("nothing new", "after a message"), statusline(env, home, 20), strict=True):
        print(f"statusline warm, {name}: wall p50 {p50:.0f} ms (min {low:.0f} ms), CPU {cpu:.0f} ms per call", flush=True)


def idles(args: argparse.Namespace, env: dict[str, str], tmp: Path) -> None:
    """Idle CPU of serve and watch (and of another checkout's serve, agentsview's),
    each after its start-up syncs (``settle`` seconds), on its own index, which an
    ``agentlog index`` builds first: a server's start-up sync then only checks the
    logs, so a slow first build under load is never counted as idle."""
    settle = args.settle
    runs = [
        ("serve (this checkout)", agentlog(None), ["serve", "--port", "0"], env),
        ("watch (this checkout)", agentlog(None), ["watch"], env),
    ]
    if args.before_src:
        before = {**env, "AGENTLOG_INDEX": str(tmp / "before.sqlite")}
        runs.append((f"serve (before: {args.before_src})", agentlog(args.before_src), ["serve", "--port", "0"], before))
    for _, program, _, run_env in runs:
        subprocess.run([*program, "index"], env=run_env, check=True, capture_output=True)
    if args.agentsview:
        av_env = {**env, "AGENTSVIEW_DATA_DIR": str(tmp / "av")}
        runs.append(("agentsview serve", [args.agentsview], ["serve", "--port", "0", "--no-browser", "--no-update-check"], av_env))
    for name, program, command, run_env in runs:
        used = idle([*program, *command], run_env, args.idle, settle, tmp / "out.txt")
        print(f"idle {name}: {used:.3f}% of a core over {args.idle:.0f} s", flush=True)


if __name__ == "__main__":
    main()
