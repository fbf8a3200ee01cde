"""Index benchmarks: figures printed, never asserted.

    python benchmarks/bench_index.py                  # everything below
    python benchmarks/bench_index.py --only sync      # one part: sync, resync, append
    python benchmarks/bench_index.py --agentsview /path/to/agentsview

* full sync of generated Claude Code files of 50/150/300 MB (MB/s, peak RSS);
* no-change resync of 5,000 small Codex rollouts;
* appending one line to the 300 MB file, then resyncing;
* (search latency and index size: ``benchmarks/bench_search.py``);
* optionally ``agentsview sync`` (PyPI ``agentsview==0.46.1``, run with
  ``HOME=<tmp> AGENTSVIEW_NO_DAEMON=1``) on the same 300 MB file.

Each sync runs in its own process, so peak RSS is that sync's own.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from corpus import write_claude, write_codex_home  # noqa: E402

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
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(home), str(index)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def claude_home(root: Path, name: str, mb: float, scale: float = 1.0) -> Path:
    home = root / name
    write_claude(home / ".claude/projects/-bench" / f"{name}.jsonl", mb, scale=scale)
    return home


def bench_sync(tmp: Path, sizes: list[float]) -> Path | None:
    last = None
    for mb in sizes:
        home = claude_home(tmp, f"sync{mb:g}", mb)
        r = run_sync(home, tmp / f"sync{mb:g}.sqlite")
        print(
            f"full sync {r['mb']:.0f} MB Claude Code: {r['seconds']:.2f} s, {r['mb'] / r['seconds']:.1f} MB/s, "
            f"peak RSS {r['rss_mb']:.0f} MB"
        )
        last = home
    return last


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
    write_codex_home(home / ".codex", files)
    index = tmp / "many.sqlite"
    first = run_sync(home, index)
    again = run_sync(home, index)
    print(
        f"{files:,} Codex rollouts: first sync {first['seconds']:.2f} s; no-change resync "
        f"{again['seconds'] * 1000:.0f} ms ({again['unchanged']:,} unchanged)"
    )


def bench_agentsview(tmp: Path, exe: str, home: Path) -> None:
    env = {**os.environ, "HOME": str(home), "AGENTSVIEW_NO_DAEMON": "1"}
    start = time.perf_counter()
    proc = subprocess.run([exe, "sync"], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    print(f"agentsview sync on the same file: {seconds:.2f} s (exit {proc.returncode})")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", choices=["sync", "append", "resync"])
    parser.add_argument("--mb", type=float, nargs="*", default=[50, 150, 300])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--agentsview", help="agentsview executable to time on the largest file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        if args.only in (None, "sync", "append"):
            home = bench_sync(tmp, args.mb if args.only != "append" else args.mb[-1:])
            if home and args.only in (None, "append"):
                bench_append(tmp, home)
            if home and args.agentsview:
                bench_agentsview(tmp, args.agentsview, home)
        if args.only in (None, "resync"):
            bench_resync(tmp, args.files)


if __name__ == "__main__":
    main()
