"""``doctor``'s stored-row check (:func:`agentlog.index.damage.check_rows`) on an
index: wall time of the bounded check (the newest rows) and of ``--deep`` (every
row), in this process, read-only; printed, never asserted.

    python benchmarks/bench_doctor.py INDEX [--runs 3]

Run it with another checkout's ``src`` first on ``PYTHONPATH`` to compare two
versions on the same index in the same window (the machine's load drifts).
Open a copy of a shared index: the connection is read-only, but a copy keeps
the original out of any doubt.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import time

from agentlog.index.damage import SAMPLE_PARTS, check_rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("index")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    conn = sqlite3.connect(f"file:{args.index}?mode=ro", uri=True)
    for label, sample in (("bounded", SAMPLE_PARTS), ("deep", None)):
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            found = check_rows(conn, sample)
            times.append(time.perf_counter() - start)
        read = {
            f: getattr(found, f)
            for f in ("parts", "messages", "usage", "sessions", "headers")
            if hasattr(found, f)
        }
        print(
            f"{label:8} median {statistics.median(times):.3f} s of {args.runs} "
            f"(min {min(times):.3f}, max {max(times):.3f}); read {read}; damaged {found.damaged_count}"
        )
    conn.close()


if __name__ == "__main__":
    main()
