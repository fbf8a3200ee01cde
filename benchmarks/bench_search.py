"""Search benchmarks: figures printed, never asserted.

    python benchmarks/bench_search.py                     # latency on 1 M messages, then sizes
    python benchmarks/bench_search.py --only latency --messages 1000000 --cache /tmp/fts/bench
    python benchmarks/bench_search.py --only size --mb 50
    python benchmarks/bench_search.py --only latency --home DIR --index FILE   # bench_mcp.py's corpus

* latency: p50/p95 of :func:`agentlog.service.search.search` for rare words, common
  words, phrases, prefixes and words with punctuation (a page by rank looks for them as
  typed), as hit lists and grouped by session (``--sessions``), sorted by rank, then
  newest and oldest first, on an index of at least ``--messages`` messages (or the
  index ``--index`` of the logs under ``--home``, e.g. the corpus ``bench_mcp.py``
  builds: many sessions), its size per GB of those logs, and how long a 300-term
  prefix query takes to be answered or refused (bound: 1 s);
* size: the index's bytes per GB of logs on a generated Claude Code file of ``--mb`` MB
  (normal-length messages and tool results), the full-text tables apart;
* unspaced: the full-text index of ``--mb``/10 MB of unspaced Japanese text, with and
  without the rewriting into pairs of characters that finds substrings.

The corpus (generated Claude Code files, :mod:`corpus`) and its index are built once
under ``--cache`` and reused by later runs (delete the folder to rebuild them).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from corpus import WORDS, write_claude  # noqa: E402

from agentlog.adapters import all_adapters  # noqa: E402
from agentlog.errors import AgentlogError  # noqa: E402
from agentlog.index.db import connect  # noqa: E402
from agentlog.index.search import SearchStopped  # noqa: E402
from agentlog.index.sync import sync  # noqa: E402
from agentlog.service.search import SearchPaging, search  # noqa: E402

FILE_MB = 100


def build(cache: Path, messages: int, mb: float = FILE_MB, scale: float = 0.08) -> tuple[Path, float]:
    """An index of at least ``messages`` messages of generated Claude Code files under
    ``cache`` (reused when there); returns it and the seconds its syncs took."""
    home, index = cache / "home", cache / "index.sqlite"
    seconds, n = 0.0, 0
    while True:
        count = connect(index).execute("SELECT COUNT(*) FROM messages").fetchone()[0] if index.exists() else 0
        if count >= messages:
            return index, seconds
        path = home / ".claude/projects/-bench" / f"s{n}.jsonl"
        if not path.exists():
            write_claude(path, mb, seed=n, scale=scale)
            start = time.perf_counter()
            sync(connect(index), all_adapters(), {"HOME": str(home)}, home)
            seconds += time.perf_counter() - start
        n += 1


def _p(times: list[float], q: float) -> float:
    times = sorted(times)
    return times[max(0, int(len(times) * q + 0.5) - 1)]


def log_bytes(home: Path) -> int:
    """Bytes of the log files under ``home``."""
    return sum(p.stat().st_size for p in home.rglob("*") if p.is_file())


def latency(cache: Path, messages: int, rounds: int, home: Path | None, index: Path | None) -> None:
    if index is None:
        home = cache / "home"
        index, seconds = build(cache, messages)
    else:
        seconds = 0.0
    conn = connect(index)
    count = conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    sessions = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = index.stat().st_size
    if home is None:  # --index without --home: no size per GB of logs
        per_gb = "logs not given (--home)"
    else:
        logs = log_bytes(home)
        per_gb = f"for {logs / 1e6:.0f} MB of logs ({size / logs * 1000:.0f} MB per GB of logs)"
    print(
        f"index of {count:,} messages, {sessions:,} sessions: {size / 1e6:.0f} MB {per_gb}; "
        f"built in {seconds:.0f} s this run; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    search(conn, WORDS[150])  # the first search opens the tables: not timed
    rng = random.Random(7)
    kinds = {
        "rare words": [rng.choice(WORDS[100:]) for _ in range(20)],
        "common words": [rng.choice(WORDS[:100]) for _ in range(10)],
        "phrases": [f'"{rng.choice(WORDS[:300])} {rng.choice(WORDS[:300])}"' for _ in range(10)],
        "prefixes": [rng.choice(WORDS[100:])[:4] + "*" for _ in range(10)],
        "punctuation": [rng.choice(WORDS[:300]) + rng.choice(["++", ".py", "/", "()"]) for _ in range(10)],
    }
    for sort, grouped in (
        ("rank", False), ("rank", True), ("newest", False), ("oldest", False), ("newest", True), ("oldest", True)
    ):
        paging = SearchPaging(limit=20, by_session=grouped, sort=sort)  # type: ignore[arg-type]
        for name, queries in kinds.items():
            times, stopped = [], 0
            for _ in range(rounds):
                for q in queries:
                    start = time.perf_counter()
                    try:
                        search(conn, q, paging=paging)
                    except SearchStopped:
                        stopped += 1
                    times.append((time.perf_counter() - start) * 1000)
            print(
                f"  {name:<13}{' --sessions' if grouped else '           '} {sort:<6}: p50 {statistics.median(times):6.1f} ms"
                f"  p95 {_p(times, 0.95):6.1f} ms  ({len(times)} searches"
                f"{f', {stopped} stopped at the time limit' if stopped else ''})"
            )
    print(f"  (load average {os.getloadavg()[0]:.1f} at the end)")
    hostile = " ".join(f"{WORDS[i][:2]}*" for i in range(300))
    start = time.perf_counter()
    try:
        search(conn, hostile)
        answer = "answered"
    except AgentlogError as exc:
        answer = f"refused ({exc})"
    print(f"  300-term prefix query: {answer} in {(time.perf_counter() - start) * 1000:.1f} ms")


def size(cache: Path, mb: float) -> None:
    home, index = cache / f"size{mb:g}/home", cache / f"size{mb:g}/index.sqlite"
    log = home / ".claude/projects/-bench/s.jsonl"
    if not log.exists():
        write_claude(log, mb, seed=3)
    if not index.exists():
        sync(connect(index), all_adapters(), {"HOME": str(home)}, home)
    conn = connect(index)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    logs = log.stat().st_size
    total = index.stat().st_size
    rows = conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
    print(
        f"logs {logs / 1e6:.0f} MB → index {total / 1e6:.0f} MB: {total / logs:.2f}× ({total / logs * 1000:.0f} MB per GB of logs)"
    )
    for name, used in rows[:8]:
        print(f"  {name:<28}{used / 1e6:8.1f} MB  {used / logs:5.2f}×")


_JA = [
    "最新",
    "アップデート",
    "検索",
    "機能",
    "設定",
    "ファイル",
    "確認",
    "修正",
    "テスト",
    "実行",
    "エラー",
    "表示",
    "画面",
    "ボタン",
    "追加",
    "削除",
    "変更",
    "保存",
    "読み込み",
    "書き込み",
    "問題",
    "解決",
    "方法",
    "説明",
    "ドキュメント",
    "参照",
    "環境",
    "変数",
    "パス",
    "関数",
    "引数",
    "戻り値",
    "配列",
    "文字列",
]
_PARTICLES = ["は", "が", "を", "に", "で", "と", "の", "も", "から", "まで", "です", "ます", "した"]


def _japanese(rng: random.Random, words: int) -> str:
    """An unspaced Japanese sentence of ``words`` words and particles."""
    return "".join(rng.choice(_JA) + rng.choice(_PARTICLES) for _ in range(words // 2)) + "。"


def unspaced_size(megabytes: float) -> None:
    """Bytes of an FTS5 index of Japanese text with and without :func:`index_text`'s
    rewriting (pairs of characters), per MB of text."""
    import sqlite3

    from agentlog.index.fts import index_text

    rng = random.Random(5)
    texts, size = [], 0
    while size < megabytes * 1e6:
        texts.append(_japanese(rng, rng.randint(10, 80)))
        size += len(texts[-1].encode())
    sizes = {}
    for name, rewrite in (("as one word per run (unicode61)", str), ("as pairs (index_text)", index_text)):
        conn = sqlite3.connect(":memory:")
        conn.execute(
            "CREATE VIRTUAL TABLE f USING fts5(text, content='', tokenize='unicode61 remove_diacritics 2')"
        )
        conn.executemany(
            "INSERT INTO f (rowid, text) VALUES (?, ?)", ((n, rewrite(t)) for n, t in enumerate(texts))
        )
        conn.execute("INSERT INTO f (f) VALUES ('optimize')")
        sizes[name] = sum(len(b) for (b,) in conn.execute("SELECT block FROM f_data"))
    for name, used in sizes.items():
        print(
            f"Japanese text {size / 1e6:.0f} MB indexed {name}: {used / 1e6:.1f} MB ({used / size:.2f}× the text)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", choices=["latency", "size", "unspaced"])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3, help="times each query is run")
    parser.add_argument("--mb", type=float, default=50, help="log size for the size figures")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/agentlog-bench-search"))
    parser.add_argument("--home", type=Path, help="the logs of --index (for its size per GB; optional)")
    parser.add_argument("--index", type=Path, help="an index built before (not synced), instead of --cache's")
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    if args.only in (None, "latency"):
        latency(args.cache, args.messages, args.rounds, args.home, args.index)
    if args.only in (None, "size"):
        size(args.cache, args.mb)
    if args.only in (None, "unspaced"):
        unspaced_size(args.mb / 10)


if __name__ == "__main__":
    main()
