"""Export and redaction speed: figures printed, never asserted.

    python benchmarks/bench_export.py [--messages 50000] [--sessions 5000] [--mb 32]

* one generated Claude Code session with at least ``--messages`` messages
  exported to HTML and Markdown by ``agentlog export`` in a child process: wall
  time and the child's peak memory (RSS), beside a session a tenth as long (a
  streamed export's memory does not grow with the session);
* redaction throughput (``agentlog.redact.redact``) on ``--mb`` MB of that
  session's text, without secrets and with one secret per 10 kB;
* ``export --all --format html`` of ``--sessions`` generated Codex rollouts,
  then again unchanged, then after one session grew: pages written each time.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from corpus import write_claude, write_codex_home  # noqa: E402

from agentlog.adapters import all_adapters  # noqa: E402
from agentlog.index.db import connect  # noqa: E402
from agentlog.index.sync import sync  # noqa: E402

CHILD = """
import os, resource, sys, time, tracemalloc
from agentlog.cli import main
heap = os.environ.get("BENCH_HEAP") == "1"
if heap:
    tracemalloc.start()
start = time.perf_counter()
try:
    main(sys.argv[1:], standalone_mode=False)
finally:
    peak = tracemalloc.get_traced_memory()[1] // 1024 if heap else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    sys.stderr.write(f"\\nBENCH {time.perf_counter() - start:.3f} {peak}\\n")
"""


def index_home(home: Path, index: Path) -> int:
    conn = connect(index)
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    (count,) = conn.execute("SELECT COUNT(*) FROM messages").fetchone()
    conn.close()
    return int(count)


def export(index: Path, home: Path, *args: str, heap: bool = False) -> tuple[float, int, str]:
    """``agentlog export ARGS`` in a child: (seconds, peak RSS in MB — or, with
    ``heap``, the peak of Python's allocations, traced, in MB —, stderr).  RSS
    counts the index's memory-mapped pages and SQLite's page cache too."""
    env = {**os.environ, "HOME": str(home), "AGENTLOG_INDEX": str(index), "BENCH_HEAP": "1" if heap else "0"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, "export", *args], env=env, capture_output=True, text=True, check=True
    )
    line = next(x for x in done.stderr.splitlines() if x.startswith("BENCH "))
    _, seconds, peak_kb = line.split()
    return float(seconds), int(peak_kb) // 1024, done.stderr


def long_session(tmp: Path, messages: int, name: str) -> tuple[Path, Path, int]:
    home = tmp / name
    path = home / ".claude/projects/-bench" / f"{name}.jsonl"
    mb = max(messages / 25_000, 0.2)
    while True:
        write_claude(path, mb, scale=0.05)
        index = tmp / f"{name}.sqlite"
        index.unlink(missing_ok=True)
        count = index_home(home, index)
        if count >= messages:
            return home, index, count
        mb *= max(messages / max(count, 1) * 1.1, 1.5)


def bench_long(tmp: Path, messages: int) -> Path:
    for size in (messages // 10, messages):
        home, index, count = long_session(tmp, size, f"long{size}")
        print(f"session of {count:,} messages:")
        for fmt in ("html", "md", "slim"):
            out = tmp / f"out-{size}.{fmt}"
            seconds, peak, _ = export(
                index, home, f"claude_code:long{size}", "-f", fmt, "-o", str(out), "--no-sync"
            )
            print(
                f"  {fmt:5} {seconds:6.1f} s  peak RSS {peak:4d} MB  {out.stat().st_size / 1e6:6.1f} MB written"
            )
        out = tmp / f"heap-{size}.html"
        _, heap, _ = export(
            index, home, f"claude_code:long{size}", "-f", "html", "-o", str(out), "--no-sync", heap=True
        )
        print(f"  html  peak Python heap (tracemalloc) {heap} MB")
    return tmp / f"out-{messages}.md"


def bench_redaction(text_file: Path, mb: float) -> None:
    from agentlog.redact import redact

    base = text_file.read_text()
    text = (base * (int(mb * 1e6 / max(len(base), 1)) + 1))[: int(mb * 1e6)]
    secret = " AKIAZ3QWERTY2TYUIOPA ghp_aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4 "
    salted = "".join(text[i : i + 10_000] + secret for i in range(0, len(text), 10_000))
    for label, sample in (("no secrets", text), ("a secret per 10 kB", salted)):
        start = time.perf_counter()
        redacted = redact(sample)
        seconds = time.perf_counter() - start
        print(
            f"redaction, {label}: {len(sample) / 1e6 / seconds:6.1f} MB/s ({len(sample) / 1e6:.0f} MB, "
            f"{redacted.count('[REDACTED:')} redacted)"
        )


def bench_site(tmp: Path, sessions: int) -> None:
    home = tmp / "many"
    write_codex_home(home / ".codex", sessions)
    index = tmp / "many.sqlite"
    index_home(home, index)
    site = tmp / "site"
    for label in ("first", "unchanged", "one grown"):
        if label == "one grown":
            log = sorted((home / ".codex").rglob("*.jsonl"))[0]
            last = json.loads(log.read_text().splitlines()[-1])
            log.write_text(
                log.read_text() + json.dumps(last | {"timestamp": "2030-01-01T00:00:00.000Z"}) + "\n"
            )
        seconds, peak, err = export(index, home, "--all", "-f", "html", "-o", str(site))
        pages = next(x for x in err.splitlines() if "exported to" in x).split("(")[-1].rstrip(")")
        print(f"site of {sessions:,} sessions, {label}: {seconds:6.1f} s, {pages}, peak RSS {peak} MB")
    (count,) = sqlite3.connect(index).execute("SELECT COUNT(*) FROM sessions").fetchone()
    assert count >= sessions


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--sessions", type=int, default=5_000)
    parser.add_argument("--mb", type=float, default=32.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        text = bench_long(Path(tmp), args.messages)
        bench_redaction(text, args.mb)
        bench_site(Path(tmp), args.sessions)


if __name__ == "__main__":
    main()
