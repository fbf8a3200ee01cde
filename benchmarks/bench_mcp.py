"""MCP server and Python API benchmarks: figures printed, never asserted.

    python benchmarks/bench_mcp.py                         # build a corpus, index it, time
    python benchmarks/bench_mcp.py --home DIR --index FILE  # reuse both (built on the first run)

(agentlog keeps caches under ``$HOME/.cache``: set ``XDG_CACHE_HOME`` to time a home
nothing may write to.)

* ``agentlog.open()`` on an up-to-date index (the no-change sync included), p50 of 5,
  and the ``import agentlog.api`` it needs, in a fresh process;
* the MCP tools ``search_sessions`` (40 queries drawn as in ``bench_index.py``) and
  ``list_sessions`` (first page, a filtered page, a deep page), each call a full
  round trip through the SDK's in-process client (JSON-RPC, validation, shaping),
  p50/p95; and ``search_sessions`` through the real ``agentlog mcp`` process on stdio;
* ``Archive.usage("daily")`` against ``agentlog usage daily --json``.

The corpus: generated Claude Code files (``--claude-mb`` in 20 MB files of short
messages) and Codex rollouts (``--codex-files``), so the index has both many messages
and many sessions.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from corpus import WORDS, write_claude, write_codex_home  # noqa: E402


def build(home: Path, index: Path, claude_mb: float, codex_files: int) -> None:
    if not home.exists():
        for n in range(max(int(claude_mb // 20), 1)):
            write_claude(home / ".claude/projects/-bench" / f"s{n}.jsonl", 20, seed=n, scale=0.08)
        write_codex_home(home / ".codex", codex_files)
    start = time.perf_counter()
    env = {**os.environ, "HOME": str(home), "AGENTLOG_INDEX": str(index)}
    subprocess.run(
        [sys.executable, "-m", "agentlog", "index", "--json"], env=env, check=True, capture_output=True
    )
    print(f"index: built/synced in {time.perf_counter() - start:.0f} s")


def timed(fn: Callable[[], Any], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return sorted(out)


def line(label: str, times: list[float]) -> None:
    p95 = times[max(int(len(times) * 0.95) - 1, 0)]
    print(f"{label}: p50 {statistics.median(times):.1f} ms, p95 {p95:.1f} ms over {len(times)}")


def bench_open(home: Path, index: Path) -> None:
    os.environ["HOME"] = str(home)
    import agentlog

    def once() -> None:
        agentlog.open(index).close()

    once()
    line("agentlog.open() on an up-to-date index (sync included)", timed(once, 5))
    line("agentlog.open(sync=False)", timed(lambda: agentlog.open(index, sync=False).close(), 5))
    code = (
        "import time; s = time.perf_counter(); import agentlog.api; print((time.perf_counter() - s) * 1000)"
    )
    ms = float(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    )
    print(f"import agentlog.api in a fresh process: {ms:.0f} ms")
    with agentlog.open(index, sync=False) as archive:
        count = archive._conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
        sessions = archive._conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
        print(f"index: {count:,} messages, {sessions:,} sessions, {index.stat().st_size / 1e6:.0f} MB")
        line("Archive.usage('daily')", timed(lambda: archive.usage("daily"), 3))
    env = {**os.environ, "HOME": str(home), "AGENTLOG_INDEX": str(index)}
    cli = timed(
        lambda: subprocess.run(
            [sys.executable, "-m", "agentlog", "usage", "daily", "--json", "--no-sync"],
            env=env,
            capture_output=True,
        ),
        3,
    )
    line("agentlog usage daily --json --no-sync (process)", cli)


def query_classes() -> dict[str, list[str]]:
    """40 queries by class, drawn as in ``bench_search.py``."""
    rng = random.Random(7)
    return {
        "rare words": [rng.choice(WORDS[100:]) for _ in range(20)],
        "common words": [rng.choice(WORDS[:100]) for _ in range(8)],
        "phrases": [f'"{rng.choice(WORDS[:300])} {rng.choice(WORDS[:300])}"' for _ in range(8)],
        "prefixes": [rng.choice(WORDS[100:])[:4] + "*" for _ in range(4)],
    }


def queries() -> list[str]:
    return [q for qs in query_classes().values() for q in qs]


def bench_mcp(home: Path, index: Path) -> None:
    import anyio
    from mcp.client import Client
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from agentlog.index import db
    from agentlog.mcp.server import Index, build_server

    server = build_server(Index(lambda: db.connect(index), None))
    calls = [("search_sessions", {"query": q}) for q in queries()]
    lists = [
        ("list_sessions", {}),
        ("list_sessions", {"agent": "codex", "since": "2026-11-10"}),
        ("list_sessions", {"cursor": 2000, "limit": 100}),
    ] * 5

    async def run(pairs: list[tuple[str, dict[str, Any]]]) -> list[float]:
        out, stopped = [], 0
        async with Client(server) as client:
            for name, args in pairs:
                start = time.perf_counter()
                result = await client.call_tool(name, args)
                out.append((time.perf_counter() - start) * 1000)
                stopped += bool(result.is_error)  # a search past its time limit is the tool's error
        if stopped:
            print(f"  ({stopped} of {len(pairs)} calls answered with an error: the search time limit)")
        return sorted(out)

    line("MCP search_sessions (in-process SDK client)", anyio.run(run, calls))
    for name, qs in query_classes().items():
        line(f"  {name}", anyio.run(run, [("search_sessions", {"query": q}) for q in qs]))
    recency = [("search_sessions", {"query": q, "sort": "recency"}) for q in queries()]
    line("MCP search_sessions sort=recency (in-process SDK client)", anyio.run(run, recency))
    line("MCP list_sessions (in-process SDK client)", anyio.run(run, lists))

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agentlog", "mcp", "--no-sync"],
        env={"HOME": str(home), "AGENTLOG_INDEX": str(index), **_pythonpath()},
    )

    async def stdio() -> list[float]:
        out = []
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            for name, args in calls:
                start = time.perf_counter()
                await client.call_tool(name, args)
                out.append((time.perf_counter() - start) * 1000)
        return sorted(out)

    line("MCP search_sessions (agentlog mcp process, stdio)", anyio.run(stdio))
    print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


def _pythonpath() -> dict[str, str]:
    """``PYTHONPATH`` (to time another checkout's code) and ``XDG_CACHE_HOME`` (where
    agentlog keeps its caches: outside a corpus home shared read-only) passed on to
    the server process."""
    return {name: os.environ[name] for name in ("PYTHONPATH", "XDG_CACHE_HOME") if name in os.environ}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--home", type=Path, help="corpus home (made when missing)")
    parser.add_argument("--index", type=Path, help="index file (synced first)")
    parser.add_argument("--claude-mb", type=float, default=300)
    parser.add_argument("--codex-files", type=int, default=3000)
    parser.add_argument(
        "--only-mcp", action="store_true", help="time the MCP tools only (an index built before)"
    )
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="agentlog-bench-mcp-"))
    home = args.home or tmp / "home"
    index = args.index or tmp / "index.sqlite"
    if not args.only_mcp:
        build(home, index, args.claude_mb, args.codex_files)
        bench_open(home, index)
    bench_mcp(home, index)


if __name__ == "__main__":
    main()
