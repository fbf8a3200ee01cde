"""Web viewer latency: figures printed, never asserted.

    python benchmarks/bench_web.py [--messages 50000] [--sessions 10000]

* the session page (first and last page) of one generated Claude Code session
  with at least ``--messages`` messages;
* the sessions page (newest first, by tokens, grouped by project, a deep page)
  over ``--sessions`` generated Codex rollouts.

Requests go through Flask's test client (no network); times are medians of 5.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
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
from agentlog.web.app import create_app  # noqa: E402


def index_home(home: Path, index: Path) -> float:
    start = time.perf_counter()
    conn = connect(index)
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    conn.close()
    return time.perf_counter() - start


def timed(client, url: str) -> float:
    times = []
    for _ in range(5):
        start = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - start)
        assert response.status_code == 200, (url, response.status_code)
    return statistics.median(times)


def bench_long_session(tmp: Path, messages: int) -> None:
    home = tmp / "long"
    path = home / ".claude/projects/-bench/long.jsonl"
    mb = 1.0
    while True:
        write_claude(path, mb, scale=0.05)
        index = tmp / f"long-{mb:g}.sqlite"
        seconds = index_home(home, index)
        (count,) = sqlite3.connect(index).execute("SELECT COUNT(*) FROM messages").fetchone()
        if count >= messages:
            break
        mb *= max(messages / max(count, 1) * 1.1, 1.5)
    client = create_app(index).test_client()
    visible = sqlite3.connect(index).execute("SELECT message_count FROM sessions").fetchone()[0]
    last = -(-visible // 200)
    print(f"long session: {count:,} messages ({visible:,} visible, {mb:.1f} MB, indexed in {seconds:.1f} s)")
    print(f"  session page 1:        {timed(client, '/session?key=claude_code:long') * 1000:7.0f} ms")
    print(
        f"  session page {last}:    {timed(client, f'/session?key=claude_code:long&page={last}') * 1000:7.0f} ms"
    )


def bench_many_sessions(tmp: Path, sessions: int) -> None:
    home = tmp / "many"
    write_codex_home(home / ".codex", sessions)
    seconds = index_home(home, tmp / "many.sqlite")
    client = create_app(tmp / "many.sqlite").test_client()
    print(f"{sessions:,} sessions (indexed in {seconds:.1f} s)")
    for url in ("/", "/?sort=tokens", "/?group=project", "/?page=150", "/?q=zzz", "/usage"):
        print(f"  {url:<18} {timed(client, url) * 1000:7.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--sessions", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bench_long_session(Path(tmp), args.messages)
        bench_many_sessions(Path(tmp), args.sessions)


if __name__ == "__main__":
    main()
