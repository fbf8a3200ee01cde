"""`agentlog usage session --json --no-index` against ccusage on one generated
Claude Code file (default 300 MB): wall time per run, printed, never asserted.

    python benchmarks/bench_usage.py [--mb 300] [--runs 3] [--ccusage PATH]

ccusage is not a dependency: install it under a temporary prefix first, e.g.
``npm install --prefix /tmp/ccusage ccusage@20.0.24 @ccusage/ccusage-linux-x64@20.0.24``
and pass ``--ccusage /tmp/ccusage/node_modules/.bin/ccusage``.  Every run is a
fresh process (no warm state in either tool); the two tools alternate so both
see the same page cache.  Both print the same totals, which are compared.
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

from corpus import write_claude  # noqa: E402


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, dict]:
    start = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, check=True).stdout
    return time.perf_counter() - start, json.loads(out)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=float, default=300)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--ccusage", help="path to the ccusage executable")
    parser.add_argument("--keep", type=Path, help="reuse/keep the corpus in this folder")
    args = parser.parse_args()
    home = args.keep or Path(tempfile.mkdtemp(prefix="agentlog-bench-"))
    target = home / ".claude" / "projects" / "-home-bench-project" / "bench-session.jsonl"
    if not target.exists():
        size = write_claude(target, args.mb)
        print(f"corpus: {target} ({size / 1e6:.0f} MB)")
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME")}
    env.update(HOME=str(home), COLUMNS="80", TZ="UTC")
    agentlog = [sys.executable, "-m", "agentlog", "usage", "session", "--json", "--no-index", "-z", "UTC"]
    ccusage = (
        [args.ccusage, "claude", "session", "--json", "--offline", "--timezone", "UTC"]
        if args.ccusage
        else None
    )
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(args.runs):
        seconds, data = timed(agentlog, env)
        ours.append(seconds)
        if ccusage:
            seconds, ref = timed(ccusage, {**env, "CLAUDE_CONFIG_DIR": str(home / ".claude")})
            theirs.append(seconds)
    print(f"agentlog: runs {', '.join(f'{s:.2f}' for s in ours)} s; median {statistics.median(ours):.2f} s")
    print(f"agentlog totals: {json.dumps({k: data['totals'][k] for k in ('total_tokens', 'cost_usd')})}")
    if theirs:
        runs = ", ".join(f"{s:.2f}" for s in theirs)
        print(f"ccusage:  runs {runs} s; median {statistics.median(theirs):.2f} s")
        totals = ref.get("totals", {})
        print(f"ccusage totals: {json.dumps({k: totals.get(k) for k in ('totalTokens', 'totalCost')})}")
        print(f"ratio agentlog/ccusage: {statistics.median(ours) / statistics.median(theirs):.2f}")


if __name__ == "__main__":
    main()
