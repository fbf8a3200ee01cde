"""The MCP tools of two checkouts timed against each other, call by call: figures
printed, never asserted.

    python benchmarks/ab_mcp.py --home DIR --a /work/main/src --a-index A.sqlite \\
        --b src --b-index B.sqlite [--kind list|search|recency] [--rounds 25]

Each side is a process running that checkout's code (``PYTHONPATH``) with the SDK's
in-process client over its own copy of the index (a newer schema would be refused by
the older code).  The calls of :mod:`bench_mcp` go to both sides alternately, the
order swapped each call, so both see the same machine load: on a shared machine
only such a ratio means anything.  Each side keeps its caches in its own
``XDG_CACHE_HOME`` under ``--cache`` (nothing is written into ``--home``).  Printed:
p50/p95 over every call, and over every call after the first round (a server's
first calls import what it needs), with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from bench_mcp import queries  # noqa: E402

LISTS = [
    ("list_sessions", {}),
    ("list_sessions", {"agent": "codex", "since": "2026-11-10"}),
    ("list_sessions", {"cursor": 2000, "limit": 100}),
]


def calls(kind: str) -> list[tuple[str, dict]]:
    search = [("search_sessions", {"query": q}) for q in queries()]
    return {
        "list": LISTS,
        "search": search,
        "recency": [(name, {**args, "sort": "recency"}) for name, args in search],
    }[kind]


def serve(index: Path) -> None:
    """The worker: reads ``name<TAB>json arguments`` lines, answers ``ms error``."""
    import anyio
    from mcp.client import Client

    from agentlog.index import db
    from agentlog.mcp.server import Index, build_server

    async def run() -> None:
        server = build_server(Index(lambda: db.connect(index), None))
        async with Client(server) as client:
            while line := await anyio.to_thread.run_sync(sys.stdin.readline):
                name, args = line.rstrip("\n").split("\t")
                start = time.perf_counter()
                result = await client.call_tool(name, json.loads(args))
                print(f"{(time.perf_counter() - start) * 1000:.3f} {int(result.is_error)}", flush=True)

    anyio.run(run)


def p95(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[max(int(len(ordered) * 0.95 + 0.5) - 1, 0)]


def main() -> None:
    if sys.argv[1:2] == ["--serve"]:  # a worker (started below)
        return serve(Path(sys.argv[2]))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, required=True)
    for side in ("a", "b"):
        parser.add_argument(f"--{side}", required=True, help=f"side {side}: a checkout's src folder")
        parser.add_argument(f"--{side}-index", type=Path, required=True, help=f"side {side}'s index copy")
    parser.add_argument("--kind", choices=("list", "search", "recency"), default="list")
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--cache", type=Path, help="where each side keeps its caches (default: a new temp folder)")
    args = parser.parse_args()
    cache = args.cache or Path(tempfile.mkdtemp(prefix="agentlog-ab-"))
    sides = {"a": (args.a, args.a_index), "b": (args.b, args.b_index)}
    workers = {}
    for side, (src, index) in sides.items():
        env = {
            **os.environ,
            "HOME": str(args.home),
            "PYTHONPATH": str(Path(src).resolve()),
            "XDG_CACHE_HOME": str(cache / side),
        }
        workers[side] = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(Path(index).resolve())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
    times: dict[str, list[float]] = {side: [] for side in sides}
    errors = dict.fromkeys(sides, 0)
    order = list(sides)
    todo = calls(args.kind)
    for _ in range(args.rounds):
        for name, call_args in todo:
            order.reverse()
            for side in order:
                worker = workers[side]
                assert worker.stdin and worker.stdout
                worker.stdin.write(f"{name}\t{json.dumps(call_args)}\n")
                worker.stdin.flush()
                ms, error = worker.stdout.readline().split()
                times[side].append(float(ms))
                errors[side] += int(error)
    for worker in workers.values():
        assert worker.stdin
        worker.stdin.close()
        worker.wait()
    n = len(todo)
    for side, (src, _) in sides.items():
        every, warm = times[side], times[side][n:]
        line = f"{args.kind} {side} ({src}): p50 {statistics.median(every):.1f} ms, p95 {p95(every):.1f} ms"
        line += f" over {len(every)} ({errors[side]} errors)"
        if warm:
            line += f"; after the first round p50 {statistics.median(warm):.1f}, p95 {p95(warm):.1f}"
        print(line)
    print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
