"""`agentlog usage session --json` against ccusage on one generated Claude Code
file (default 300 MB): wall time per run, printed, never asserted.

* cold: ``--no-index`` (the fast scanner reads the file);
* warm: through an index that is up to date (``agentlog index`` run first; the
  first report after it also builds the usage roll-up and the price cache, and
  is shown apart).

    python benchmarks/bench_usage.py [--mb 300] [--runs 3] [--warm-runs 15] [--ccusage PATH]

The cold scan alone (:func:`agentlog.usage.source.collect_calls` of the Claude
Code files, in this process, no start-up or imports) is timed and printed too.

ccusage is not a dependency: install it under a temporary prefix first, e.g.
``npm install --prefix /tmp/ccusage ccusage@20.0.24 @ccusage/ccusage-linux-x64@20.0.24``
and pass ``--ccusage /tmp/ccusage/node_modules/.bin/ccusage``.  Every run is a
fresh process; the two tools alternate so both see the same page cache.  Both
print the same totals, which are compared.  agentlog's modules are compiled to
bytecode first, as an installed package is (an editable install under
``PYTHONDONTWRITEBYTECODE`` would otherwise compile every module on every start).
"""

from __future__ import annotations

import argparse
import compileall
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


def scan_seconds(home: Path) -> float:
    """Wall seconds of one in-process collect_calls over the Claude Code files in ``home``."""
    from agentlog.load import LoadReport
    from agentlog.usage.source import collect_calls

    start = time.perf_counter()
    collect_calls({"HOME": str(home)}, home, agents=["claude_code"], report=LoadReport())
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=float, default=300)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warm-runs", type=int, default=15)
    parser.add_argument("--ccusage", help="path to the ccusage executable")
    parser.add_argument("--keep", type=Path, help="reuse/keep the corpus in this folder")
    args = parser.parse_args()
    home = args.keep or Path(tempfile.mkdtemp(prefix="agentlog-bench-"))
    target = home / ".claude" / "projects" / "-home-bench-project" / "bench-session.jsonl"
    if not target.exists():
        size = write_claude(target, args.mb)
        print(f"corpus: {target} ({size / 1e6:.0f} MB)")
    import agentlog

    compileall.compile_dir(Path(agentlog.__file__).parent, quiet=1)
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME")}
    env.update(
        HOME=str(home), COLUMNS="80", TZ="UTC", AGENTLOG_INDEX=str(Path(tempfile.mkdtemp()) / "index.sqlite")
    )
    report = [sys.executable, "-m", "agentlog", "usage", "session", "--json", "-z", "UTC"]
    agentlog_cold = [*report, "--no-index"]
    ccusage = (
        [args.ccusage, "claude", "session", "--json", "--offline", "--timezone", "UTC"]
        if args.ccusage
        else None
    )
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(args.runs):
        seconds, data = timed(agentlog_cold, env)
        ours.append(seconds)
        if ccusage:
            seconds, ref = timed(ccusage, {**env, "CLAUDE_CONFIG_DIR": str(home / ".claude")})
            theirs.append(seconds)
    print(
        f"agentlog cold: runs {', '.join(f'{s:.2f}' for s in ours)} s; median {statistics.median(ours):.2f} s"
    )
    scans = [scan_seconds(home) for _ in range(args.runs)]
    print(f"agentlog cold, the scan alone: runs {', '.join(f'{s:.3f}' for s in scans)} s")
    warm = warm_runs(report, env, args.warm_runs)
    print(f"agentlog totals: {json.dumps({k: data['totals'][k] for k in ('total_tokens', 'cost_usd')})}")
    if theirs:
        runs = ", ".join(f"{s:.2f}" for s in theirs)
        print(f"ccusage:  runs {runs} s; median {statistics.median(theirs):.2f} s")
        totals = ref.get("totals", {})
        print(f"ccusage totals: {json.dumps({k: totals.get(k) for k in ('totalTokens', 'totalCost')})}")
        print(f"ratio cold agentlog/ccusage: {statistics.median(ours) / statistics.median(theirs):.3f}")
        print(f"ratio warm agentlog/ccusage: {statistics.median(warm) / statistics.median(theirs):.3f}")


def warm_runs(report: list[str], env: dict[str, str], runs: int) -> list[float]:
    """Index once, then time ``report`` through the index ``runs`` times."""
    start = time.perf_counter()
    subprocess.run([*report[:3], "index"], env=env, capture_output=True, check=True)
    print(f"agentlog index (first sync): {time.perf_counter() - start:.2f} s")
    first, _ = timed(report, env)
    print(f"agentlog first report after it (builds roll-up + price cache): {first * 1000:.0f} ms")
    warm = [timed(report, env)[0] for _ in range(runs)]
    print(
        f"agentlog warm: median {statistics.median(warm) * 1000:.1f} ms, "
        f"min {min(warm) * 1000:.1f} ms, max {max(warm) * 1000:.1f} ms over {runs} runs"
    )
    return warm


if __name__ == "__main__":
    main()
