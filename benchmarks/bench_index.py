"""Index benchmarks: figures printed, never asserted.

    python benchmarks/bench_index.py                  # everything below
    python benchmarks/bench_index.py --only sync      # one part: sync, resync, append
    python benchmarks/bench_index.py --agentsview /path/to/agentsview
    python benchmarks/bench_index.py --only floor --mb 300   # the floor beside both (bench_floor.py)

* full sync of generated Claude Code files of 50/150/300 MB (MB/s, peak RSS);
* no-change resync of 5,000 small Codex rollouts;
* appending one line to the 300 MB file, then resyncing;
* (search latency and index size: ``benchmarks/bench_search.py``);
* ``agentsview sync`` (PyPI ``agentsview==0.46.1``, run with
  ``HOME=<tmp> AGENTSVIEW_NO_DAEMON=1``, its database outside the home) on the
  same 300 MB file right after ours, with the ratios (skipped when absent);
* with ``--only floor``: agentlog's full index of the largest file, the floor of
  any design of ours (``benchmarks/bench_floor.py``: each step's CPU s) and
  agentsview's sync, one after the other, with the ratios; and whether the floor
  indexed what agentlog's index holds.

Each sync runs in its own process, so peak RSS is that sync's own; wall and CPU
are the whole process's (its parse worker included).  On a shared machine
compare the ratios of one run, and CPU as well as wall.  agentlog's modules are
compiled to bytecode first, as an installed package is (an editable install
under ``PYTHONDONTWRITEBYTECODE`` would otherwise compile every module in each
sync and in its parse worker: ~0.5-1 s of CPU no user pays).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from corpus import write_claude, write_codex_home  # noqa: E402

AGENTSVIEW = "/tmp/av/bin/agentsview"

CHILD = """
import json, resource, sys
from pathlib import Path
from agentlog.adapters import all_adapters
from agentlog.index.db import connect
from agentlog.index.sync import sync
home, index = Path(sys.argv[1]), Path(sys.argv[2])
report = sync(connect(index), all_adapters(), {"HOME": str(home)}, home)
print(json.dumps({"seconds": report.seconds, "mb": report.bytes_parsed / 1e6, "sources": report.sources,
                  "unchanged": report.unchanged, "appended": report.appended,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run_sync(home: Path, index: Path) -> dict:
    """One sync in its own process: its report, with ``wall`` and ``cpu`` seconds
    of the whole process (its parse worker included)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(home), str(index)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise RuntimeError(f"the sync of {home} failed")
    result: dict = json.loads(out)
    result["wall"] = time.perf_counter() - start
    result["cpu"] = usage.ru_utime + usage.ru_stime
    return result


def claude_home(root: Path, name: str, mb: float, scale: float = 1.0) -> Path:
    home = root / name
    if (home / ".claude/projects/-bench" / f"{name}.jsonl").exists():
        return home  # kept from an earlier run (--work)
    write_claude(home / ".claude/projects/-bench" / f"{name}.jsonl", mb, scale=scale)
    return home


def bench_sync(tmp: Path, sizes: list[float], agentsview: str | None = None) -> Path | None:
    """A full sync of each size; with ``agentsview``, its sync of the largest file
    right after ours (the same machine load), and the ratios."""
    last = None
    for n, mb in enumerate(sizes):
        home = claude_home(tmp, f"sync{mb:g}", mb)
        index = tmp / f"sync{mb:g}.sqlite"
        for path in tmp.glob(f"{index.name}*"):
            path.unlink()
        r = run_sync(home, index)
        print(
            f"full sync {r['mb']:.0f} MB Claude Code: {r['wall']:.2f} s wall, {r['cpu']:.2f} s CPU, "
            f"{r['mb'] / r['wall']:.1f} MB/s, peak RSS {r['rss_mb']:.0f} MB",
            flush=True,
        )
        if agentsview and n == len(sizes) - 1:
            wall, cpu, code = run_agentsview(tmp, agentsview, home)
            print(
                f"agentsview sync on the same file: {wall:.2f} s wall, {cpu:.2f} s CPU (exit {code}) | "
                f"ratio {r['wall'] / wall:.2f} wall, {r['cpu'] / max(cpu, 1e-9):.2f} CPU (target <= 0.2x)",
                flush=True,
            )
        last = home
    return last


def bench_floor(tmp: Path, mb: float, agentsview: str | None) -> None:
    """agentlog's full index of the generated ``mb`` MB file, the floor's
    (:func:`bench_floor.floor`, its own process) and ``agentsview sync``, in one
    run: each step's CPU s and the ratios."""
    from bench_floor import compare

    home = claude_home(tmp, f"sync{mb:g}", mb)
    index, floor_index = tmp / f"sync{mb:g}.sqlite", tmp / f"floor{mb:g}.sqlite"
    for path in [*tmp.glob(f"{index.name}*"), *tmp.glob(f"{floor_index.name}*")]:
        path.unlink()
    ours = run_sync(home, index)
    source = next((home / ".claude/projects/-bench").glob("*.jsonl"))
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "bench_floor.py"), str(source), str(floor_index)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise RuntimeError("the floor failed")
    steps: dict[str, float] = json.loads(out)
    floor_cpu, floor_wall = usage.ru_utime + usage.ru_stime, time.perf_counter() - start
    av = run_agentsview(tmp, agentsview, home) if agentsview else None
    print(f"{ours['mb']:.0f} MB Claude Code, load {os.getloadavg()[0]:.2f}:")
    print(f"  agentlog full index: {ours['cpu']:.2f} s CPU, {ours['wall']:.2f} s wall")
    print(
        f"  floor: {floor_cpu:.2f} s CPU ({steps['sum']:.2f} s in its steps: "
        + ", ".join(f"{name} {steps[name]:.2f}" for name in ("decode", "assemble", "fts", "rows", "commit"))
        + f"), {floor_wall:.2f} s wall; agentlog / floor {ours['cpu'] / floor_cpu:.2f}x CPU"
    )
    if av is not None:
        wall, cpu, code = av
        print(
            f"  agentsview sync: {cpu:.2f} s CPU, {wall:.2f} s wall (exit {code}) | agentlog {ours['cpu'] / cpu:.2f}x CPU, "
            f"{ours['wall'] / wall:.2f}x wall; floor {floor_cpu / cpu:.2f}x CPU, {floor_wall / wall:.2f}x wall"
            " (target <= 0.2x)"
        )
    differences = compare(floor_index, index)
    print("  the floor indexed what agentlog's index holds" if not differences else "  FLOOR DIFFERS: " + "; ".join(differences))


def bench_append(tmp: Path, home: Path) -> None:
    index = tmp / f"{home.name}.sqlite"
    path = next((home / ".claude/projects/-bench").glob("*.jsonl"))
    line = {
        "type": "user",
        "sessionId": "s",
        "uuid": "bench-append",
        "timestamp": "2026-12-01T00:00:00Z",
        "message": {"role": "user", "content": "one more line"},
    }
    with open(path, "a") as fh:
        fh.write(json.dumps(line, separators=(",", ":")) + "\n")
    r = run_sync(home, index)
    print(
        f"append one line to the {path.stat().st_size / 1e6:.0f} MB file, resync: {r['seconds'] * 1000:.1f} ms "
        f"({r['appended']} appended)"
    )


def bench_resync(tmp: Path, files: int) -> None:
    home = tmp / "many"
    if not home.exists():
        write_codex_home(home / ".codex", files)
    index = tmp / "many.sqlite"
    for path in tmp.glob(f"{index.name}*"):
        path.unlink()
    first = run_sync(home, index)
    again = run_sync(home, index)
    print(
        f"{files:,} Codex rollouts: first sync {first['seconds']:.2f} s; no-change resync "
        f"{again['seconds'] * 1000:.0f} ms ({again['unchanged']:,} unchanged)"
    )


def run_agentsview(tmp: Path, exe: str, home: Path) -> tuple[float, float, int]:
    """``agentsview sync`` of ``home`` (a fresh database outside it): wall and CPU
    seconds, exit code."""
    data = tmp / f"{home.name}-agentsview"
    shutil.rmtree(data, ignore_errors=True)
    env = {**os.environ, "HOME": str(home), "AGENTSVIEW_NO_DAEMON": "1", "AGENTSVIEW_DATA_DIR": str(data)}
    start = time.perf_counter()
    proc = subprocess.Popen([exe, "sync"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", choices=["sync", "append", "resync", "floor"])
    parser.add_argument("--mb", type=float, nargs="*", default=[50, 150, 300])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument(
        "--agentsview",
        default=AGENTSVIEW,
        help="agentsview to time on the largest file (skipped when absent)",
    )
    parser.add_argument("--work", type=Path, help="keep (and reuse) the generated logs in this folder")
    args = parser.parse_args()
    import agentlog

    compileall.compile_dir(Path(agentlog.__file__).parent, quiet=1)
    with tempfile.TemporaryDirectory() as name:
        tmp = args.work or Path(name)
        tmp.mkdir(parents=True, exist_ok=True)
        agentsview = args.agentsview if args.agentsview and Path(args.agentsview).exists() else None
        if args.only == "floor":
            bench_floor(tmp, args.mb[-1], agentsview)
        if args.only in (None, "sync", "append"):
            home = bench_sync(tmp, args.mb if args.only != "append" else args.mb[-1:], agentsview)
            if home and args.only in (None, "append"):
                bench_append(tmp, home)
        if args.only in (None, "resync"):
            bench_resync(tmp, args.files)


if __name__ == "__main__":
    main()
