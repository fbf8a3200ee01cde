"""Peak memory of the commands of issue #17 part 3 (bounded memory): figures
printed, never asserted.

    python benchmarks/bench_memory.py                      # every part
    python benchmarks/bench_memory.py --only record show   # some parts
    python benchmarks/bench_memory.py --home-mb 2000 --only home

Inputs are generated once under ``--work`` (default ``/tmp/memory``) and kept
there (delete a folder to make it again); each index is built fresh:

* ``record``: a Claude Code session of one ``--record-mib`` MiB line (a 64 MiB
  prompt of repeated words): ``agentlog index``, then ``agentlog search word``
  (a query every word of that record matches), ``search --json``, and the
  commands of ``show`` on it;
* ``show``: one Claude Code session of ``--log-mib`` MiB (315 MB at 300):
  ``agentlog index`` (not counted), then ``show`` (cut, ``--full``,
  ``--json``) and ``export`` in html, md, json, jsonl (to files in the work
  folder) and parquet;
* ``home``: a multi-agent home of :mod:`home` of about ``--home-mb`` MB of
  Claude logs (plus Codex rollouts and OpenCode databases): its first
  ``agentlog index``, then ``agentsview sync`` of the same home (``--agentsview``,
  skipped when absent), with the ratios of wall and CPU.

Every figure is a fresh process tree (``python -m agentlog``); its peak RSS is
each process's own high-water mark (``VmHWM`` of ``/proc/<pid>/status``, read
every 20 ms while it runs, the last reading kept; the index's parse workers are
children, each a fresh interpreter, reported beside it), the largest sum of the
tree's current RSS seen at one reading (the target is checked on it: it bounds
each process's RSS and the PSS sum), and the largest sum of its PSS (every
100 ms: a page two processes share counts once, not in each, as in the RSS sum);
CPU seconds are the whole tree's.  ``PYTHONPATH=<another src>`` measures another
agentlog tree (before/after).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from corpus import big_session, write_record  # noqa: E402
from home import HomeShape, write_home  # noqa: E402


@dataclass
class Peak:
    """One command's run: wall seconds, exit code, each process's peak RSS (MB,
    ``"main"`` first, then ``"worker<n>"``s by start order: a sync starts one per
    large log) and the tree's."""

    wall: float
    code: int
    peaks: dict[str, float] = field(default_factory=dict)
    tree: float = 0.0
    """The largest sum of the tree's RSS at one reading: a page two processes
    share (a forked child's copy-on-write pages, a library's code) is counted in both."""
    tree_pss: float = 0.0
    """The largest sum of the tree's PSS (``Pss`` of ``/proc/<pid>/smaps_rollup``,
    a shared page divided among its sharers) at one reading: the memory the tree
    holds, each page once."""
    cpu: float = 0.0


def _status(pid: int) -> tuple[int, int, int] | None:
    """``(parent pid, VmHWM, VmRSS)`` in kB of a live process, ``None`` once gone."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            text = fh.read()
    except OSError:
        return None
    values = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    if "VmHWM" not in values:  # a zombie
        return None
    return (
        int(values["PPid"]),
        int(values["VmHWM"].split()[0]),
        int(values["VmRSS"].split()[0]),
    )


def _pss(pid: int) -> int:
    """``Pss`` in kB of a live process (0 once gone)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:
        return []


def measure(cmd: list[str], env: dict[str, str], timeout: float) -> Peak:
    """Run ``cmd`` (output to ``/dev/null``), sampling its process tree's memory;
    its CPU seconds (user + system of the tree: the processes it waited for) are
    the growth of this process's children's usage."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        proc = subprocess.Popen(cmd, env=env, stdout=sink, stderr=subprocess.DEVNULL)
    hwm: dict[int, int] = {}
    order: list[int] = []
    tree = tree_pss = 0
    readings = 0
    while proc.poll() is None:
        if time.perf_counter() - start > timeout:
            proc.kill()
            proc.wait()
            break
        pids = [proc.pid]
        total = pss = 0
        while pids:
            pid = pids.pop()
            status = _status(pid)
            if status is None:
                continue
            if pid not in hwm:
                order.append(pid)
            hwm[pid] = status[1]
            total += status[2]
            pss += _pss(pid) if readings % 5 == 0 else 0
            pids.extend(_children(pid))
        tree = max(tree, total)
        tree_pss = max(tree_pss, pss)
        readings += 1
        time.sleep(0.02)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    peak = Peak(
        time.perf_counter() - start, proc.returncode, tree=tree / 1024, tree_pss=tree_pss / 1024, cpu=cpu
    )
    for n, pid in enumerate(order):
        peak.peaks["main" if n == 0 else f"worker{n}"] = hwm[pid] / 1024
    return peak


def show(figure: str, peak: Peak, target: float | None = 300) -> None:
    """One line of figures; with ``target``, whether the peaks are within it."""
    workers = [mb for name, mb in peak.peaks.items() if name != "main"]
    procs = f"main {peak.peaks.get('main', 0):.0f} MB"
    if workers:
        procs += f", parse worker {max(workers):.0f} MB" + (
            f" (largest of {len(workers)})" if len(workers) > 1 else ""
        )
    top = max(peak.peaks.values(), default=0.0)
    code = f", exit {peak.code}{' (killed: time limit)' if peak.code == -9 else ''}" if peak.code else ""
    verdict = "ok" if target is not None and max(top, peak.tree_pss, peak.tree) <= target and not peak.code else "OVER"
    print(
        f"{figure:34} peak RSS {procs} | tree {peak.tree:.0f} MB (PSS {peak.tree_pss:.0f} MB)"
        f" | {peak.wall:6.1f} s, CPU {peak.cpu:.1f} s{code}"
        + (f"  [{verdict}: <= {target:.0f} MB]" if target is not None else ""),
        flush=True,
    )


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.work: Path = args.work
        self.agentlog = [sys.executable, "-m", "agentlog"]

    def env(self, home: Path, index: Path) -> dict[str, str]:
        keep = ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "VIRTUAL_ENV")
        return {
            **{k: v for k, v in os.environ.items() if k in keep},
            "HOME": str(home),
            "TZ": "UTC",
            "COLUMNS": "100",
            "AGENTLOG_INDEX": str(index),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "CODEX_HOME": str(home / ".codex"),
        }

    def fresh(self, index: Path) -> None:
        for path in index.parent.glob(f"{index.name}*"):
            path.unlink()

    def run(self, figure: str, args: list[str], env: dict[str, str]) -> Peak:
        peak = measure([*self.agentlog, *args], env, self.args.timeout)
        show(figure, peak)
        return peak

    def record(self) -> None:
        home = self.work / "record"
        path = home / ".claude" / "projects" / "-p" / "huge-record.jsonl"
        if not path.exists():
            write_record(path, self.args.record_mib)
        print(f"\n== record: one line of {path.stat().st_size / (1 << 20):.0f} MiB")
        index = self.work / "record.sqlite"
        self.fresh(index)
        env = self.env(home, index)
        self.run("index", ["index"], env)
        self.run("search word", ["search", "--no-sync", "word"], env)
        self.run("search word --json", ["search", "--no-sync", "word", "--json"], env)
        self.outputs("huge-record", env)

    def outputs(self, session: str, env: dict[str, str]) -> None:
        """``show`` (cut, ``--full``, ``--json``) and every export of ``session``
        (to files in the work folder, removed after)."""
        for figure, flags in (("show", []), ("show --full", ["--full"]), ("show --json", ["--json"])):
            self.run(figure, ["show", "--no-sync", session, *flags], env)
        out = self.work / "out"
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        for fmt in ("html", "md", "json", "jsonl"):
            self.run(
                f"export --format {fmt}",
                ["export", "--no-sync", session, "--format", fmt, "-o", str(out / f"export.{fmt}")],
                env,
            )
        self.run(
            "export --format parquet",
            ["export", "--no-sync", session, "--format", "parquet", "-o", str(out / "parquet")],
            env,
        )
        shutil.rmtree(out, ignore_errors=True)

    def show(self) -> None:
        home = self.work / "log"
        target = big_session(home, self.args.log_mib)
        print(f"\n== show: one Claude Code session of {target.stat().st_size / 1e6:.0f} MB")
        index = self.work / "log.sqlite"
        env = self.env(home, index)
        if not index.exists():
            self.run("index (building, for the rest)", ["index"], env)
        self.outputs("big-session", env)

    def home(self) -> None:
        home = self.work / f"home-{self.args.home_mb:g}"
        if not home.exists():
            began = time.perf_counter()
            stats = write_home(
                home, HomeShape(claude=self.args.claude, codex=self.args.codex, megabytes=self.args.home_mb)
            )
            print(f"(wrote {stats.files:,} files in {time.perf_counter() - began:.0f} s)")
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(home) for f in fs)
        files = sum(len(fs) for _, _, fs in os.walk(home))
        print(f"\n== home: {files:,} files, {size / 1e9:.2f} GB")
        index = self.work / f"home-{self.args.home_mb:g}.sqlite"
        self.fresh(index)
        ours = self.run("first index", ["index"], self.env(home, index))
        if self.args.agentsview and Path(self.args.agentsview).exists():
            self.peer(home, ours)

    def peer(self, home: Path, ours: Peak) -> None:
        """``agentsview sync`` of the same home (``HOME``, ``AGENTSVIEW_NO_DAEMON=1``,
        its database in the work folder, removed after), measured as ours, and the
        ratios of wall and CPU."""
        data = self.work / "agentsview"
        shutil.rmtree(data, ignore_errors=True)
        env = {**self.env(home, self.work / "unused.sqlite"), "AGENTSVIEW_NO_DAEMON": "1",
               "AGENTSVIEW_DATA_DIR": str(data)}  # fmt: skip
        theirs = measure([self.args.agentsview, "sync"], env, self.args.timeout)
        show("agentsview sync (same home)", theirs, target=None)
        shutil.rmtree(data, ignore_errors=True)
        print(
            f"{'ratio (agentlog / agentsview)':34} {ours.wall / max(theirs.wall, 1e-9):.2f} wall, "
            f"{ours.cpu / max(theirs.cpu, 1e-9):.2f} CPU (target <= 0.2x)",
            flush=True,
        )


PARTS = ["record", "show", "home"]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", nargs="*", choices=PARTS, default=PARTS)
    parser.add_argument("--work", type=Path, default=Path("/tmp/memory"))
    parser.add_argument("--record-mib", type=int, default=64)
    parser.add_argument("--log-mib", type=float, default=300)
    parser.add_argument("--home-mb", type=float, default=2000, help="Claude MB of the multi-agent home")
    parser.add_argument("--claude", type=int, default=6000, help="Claude sessions in the home")
    parser.add_argument("--codex", type=int, default=1200, help="Codex rollouts in the home")
    parser.add_argument(
        "--agentsview",
        default="/tmp/av/bin/agentsview",
        help="agentsview to sync the home after ours (skipped when absent or empty)",
    )
    parser.add_argument("--timeout", type=float, default=600, help="seconds before a command is killed")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    bench = Bench(args)
    for part in PARTS:
        if part in args.only:
            getattr(bench, part)()


if __name__ == "__main__":
    main()
