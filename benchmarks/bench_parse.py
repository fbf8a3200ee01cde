"""Parse throughput without an index: MB/s and peak RSS, printed, never asserted.

    python benchmarks/bench_parse.py [--mb 50 150 300] [--files 2000]

Each measurement runs in a fresh process so peak RSS is that run's own.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from corpus import write_claude, write_codex_home  # noqa: E402


def _measure(kind: str, path: Path) -> None:
    """Child process: parse, then print one JSON line of figures."""
    from agentlog.adapters import get_adapter
    from agentlog.adapters.base import SourceRef
    from agentlog.load import build_sessions, load_sessions, parse_source

    start = time.perf_counter()
    if kind == "claude":
        adapter = get_adapter("claude_code")
        parsed = parse_source(adapter, SourceRef(agent="claude_code", path=str(path)))
        sessions = build_sessions([(adapter, parsed)])
        size = path.stat().st_size
    else:
        sessions = load_sessions(["codex"], env={"CODEX_HOME": str(path)}, home=path)
        size = sum(p.stat().st_size for p in path.rglob("*.jsonl"))
    seconds = time.perf_counter() - start
    messages = sum(len(s.messages) for s in sessions)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "seconds": seconds,
                "mb": size / 1e6,
                "messages": messages,
                "sessions": len(sessions),
                "rss_mb": rss,
            }
        )
    )


def _run(kind: str, path: Path) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(path)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, nargs="*", default=[50])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _measure(args.child[0], Path(args.child[1]))
        return
    with tempfile.TemporaryDirectory() as tmp:
        for mb in args.mb:
            path = Path(tmp) / f"claude-{mb:g}mb.jsonl"
            write_claude(path, mb)
            r = _run("claude", path)
            print(
                f"claude_code {r['mb']:.0f} MB: {r['seconds']:.2f} s, {r['mb'] / r['seconds']:.1f} MB/s, "
                f"{r['messages']:,} messages, peak RSS {r['rss_mb']:.0f} MB (no index: all in memory)"
            )
            path.unlink()
        if args.files:
            home = Path(tmp) / "codex"
            write_codex_home(home, args.files)
            r = _run("codex", home)
            print(
                f"codex {args.files:,} rollouts ({r['mb']:.1f} MB): {r['seconds']:.2f} s, "
                f"{r['sessions']:,} sessions, peak RSS {r['rss_mb']:.0f} MB"
            )


if __name__ == "__main__":
    main()
