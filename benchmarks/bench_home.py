"""Every figure of issue #17, beside ccusage and agentsview in the same run.

    python benchmarks/bench_home.py                       # every part, default sizes
    python benchmarks/bench_home.py --only small startup  # some parts
    python benchmarks/bench_home.py --claude 3000 --log-mb 300 --record-mib 64 --runs 5

Parts (each prints ``figure: agentlog | peer | ratio (target)``):

* ``small``: a home of ``--claude`` small Claude Code sessions: no-change
  ``agentlog index`` against a bare Python ``os.walk`` + ``os.stat`` of the same
  files (both whole processes: ``python -m agentlog index`` and ``python -c`` of
  :data:`WALK`, each from its start to its exit), then the sync alone against the
  walk alone inside one process (:data:`IN_PROCESS`, CPU after the imports);
  first-run and warm ``usage daily`` against ``ccusage claude daily``;
* ``home``: the multi-agent home of :mod:`home` (Claude sessions with subagents,
  Codex rollouts with forks, OpenCode databases): first index (wall, CPU, peak
  RSS, index size / logs) against ``agentsview sync``; warm ``usage daily``
  against ``agentsview usage daily``; ``search`` with and without ``--no-sync``;
* ``log``: one ``--log-mb`` MB Claude Code file: first-run ``usage daily`` (fresh
  index) against ``ccusage claude daily``; full index against ``agentsview sync``;
  peak RSS of the index and of ``show --json``;
* ``record``: a session with one ``--record-mib`` MiB line: peak RSS of ``index``
  and ``search``;
* ``startup``: ``agentlog --version`` and a warm ``usage daily`` on one small file
  (``--json``, and the table), wall and CPU over ``--startup-runs`` runs, beside
  the floor under them (:data:`FLOOR`: ``python -c pass`` and the libraries
  every command imports).

The warm figures of ``small`` and ``startup`` are given twice: each command a
process of its own that pays Python's start-up (``AGENTLOG_NO_DAEMON=1``, as
every other figure), and served by a resident agentlog (:class:`Resident`),
where CPU is the client's own *plus* the resident's for that run (its own work
and the forked child's that ran the command).  The two, and the peer, run in
turn within one loop (:meth:`Bench.interleaved`), so both see the same load.
``--before <another src>`` adds, to that loop of ``small``, a resident of that
tree on its own copy of the index (an A/B of the resident figures: before and
after a change, side by side, the same rounds, one ccusage between them).

First runs are timed as at a terminal (``AGENTLOG_BACKGROUND_INDEX=1``: the
numbers first, the index built behind; the bench waits for it before going on).
``PYTHONPATH=<another src>`` times another agentlog tree (before/after).

Peers are optional (skipped when absent): ccusage
(``npm install --prefix /tmp/ccusage ccusage@20.0.24``; pointed at the home with
``HOME``, ``CLAUDE_CONFIG_DIR`` and ``CODEX_HOME``) and agentsview
(``pip install agentsview==0.46.1``; ``HOME`` and ``AGENTSVIEW_NO_DAEMON=1``, its
database in ``AGENTSVIEW_DATA_DIR`` outside the home).  Every run is a fresh
process; CPU time and peak RSS are the child's own (``os.wait4``).  On a noisy
machine compare the ratios, and CPU rather than wall time.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from corpus import big_session, write_record  # noqa: E402
from home import HomeShape, write_home  # noqa: E402

CCUSAGE = "/tmp/ccusage/node_modules/.bin/ccusage"
AGENTSVIEW = "/tmp/av/bin/agentsview"
WALK = "import os, sys\nfor d, _, fs in os.walk(sys.argv[1]):\n    for f in fs: os.stat(os.path.join(d, f))\n"
IN_PROCESS = """
import json, os, statistics, sys, time
from agentlog.index.db import connect
from agentlog.service.home import Home
from agentlog.service.index import update_index
from pathlib import Path

def cpu(work):
    start = time.process_time()
    work()
    return time.process_time() - start

def walk():
    for d, _, fs in os.walk(sys.argv[1]):
        for f in fs:
            os.stat(os.path.join(d, f))

conn = connect(Path(os.environ["AGENTLOG_INDEX"]))
home = Home.of(os.environ, (), False)
runs = int(sys.argv[2])
print(json.dumps({
    "sync": statistics.median(cpu(lambda: update_index(conn, home)) for _ in range(runs)),
    "walk": statistics.median(cpu(walk) for _ in range(runs)),
}))
"""
"""The no-change sync alone against the walk alone, both timed (CPU) inside one
process after its imports: what the whole-process ratio is made of."""


@dataclass
class Run:
    wall: float
    cpu: float
    rss_mb: float
    out: bytes
    code: int


class Resident:
    """A resident agentlog (:mod:`agentlog.resident`) serving the commands run
    with :meth:`env`: started as a command at a terminal starts one
    (``AGENTLOG_DAEMON=1``), in a runtime folder of the bench's own; its CPU is
    read from its status (``agentlog.service.residents``): its own CPU time plus
    that of every command it served, each reaped with ``wait4`` before the
    client is told the command ended — exact to the microsecond, where
    ``/proc/<pid>/stat`` counts in 10 ms ticks."""

    def __init__(self, agentlog: list[str], env: dict[str, str]) -> None:
        from agentlog.resident import paths

        self._env = {k: v for k, v in env.items() if k != paths.OFF_ENV}
        run([*agentlog, "--no-sync", "sessions", "--json"], {**self._env, paths.START_ENV: "1"})
        deadline = time.monotonic() + 60
        self.pid = 0
        while not self.pid and time.monotonic() < deadline:
            found = self._status()
            self.pid = int(found["pid"]) if found else 0
            time.sleep(0.05)
        if not self.pid:
            raise RuntimeError("no resident started")

    def env(self) -> dict[str, str]:
        return self._env

    def _status(self) -> dict | None:
        from agentlog.service.residents import residents

        found = residents(self._env)
        return found[0] if found else None

    def cpu(self) -> float:
        """CPU seconds of the resident and of the commands it served so far."""
        found = self._status()
        if found is None or int(found["pid"]) != self.pid:
            raise RuntimeError("the resident is gone")
        return float(found["cpu"]) + float(found["children_cpu"])

    def served(self) -> int:
        found = self._status()
        return int(found["served"]) if found else -1

    def stop(self) -> None:
        from agentlog.service.residents import stop

        stop(self._env)


def run(cmd: list[str], env: dict[str, str], timeout: float = 900, resident: Resident | None = None) -> Run:
    """Run ``cmd`` to its end (killed after ``timeout`` s: exit code -9); its wall
    and CPU seconds and peak RSS (its own); with ``resident``, run against it
    (its environment) and its CPU for the run (the resident's own and the
    command's child's) added, and checked served by it."""
    if resident is not None:
        env = resident.env()
        served, before = resident.served(), resident.cpu()
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.DEVNULL)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        data = out.read()
    cpu = usage.ru_utime + usage.ru_stime
    if resident is not None:
        cpu += resident.cpu() - before
        if resident.served() != served + 1:
            raise RuntimeError(f"not served by the resident: {cmd}")
    return Run(wall, cpu, usage.ru_maxrss / 1024, data, proc.returncode)


def median(runs: list[Run]) -> Run:
    """The run of median wall time (its CPU and RSS with it)."""
    return sorted(runs, key=lambda r: r.wall)[len(runs) // 2]


def show(
    figure: str, ours: Run | float, peer: Run | float | None = None, name: str = "", target: str = ""
) -> None:
    """Print one figure: ours, the peer's, the ratio of wall times (and CPU)."""

    def text(r: Run | float) -> str:
        if isinstance(r, Run):
            failed = f" (exit {r.code}{': killed' if r.code == -9 else ''})" if r.code else ""
            return f"{r.wall:.3f} s wall, {r.cpu:.3f} s CPU, {r.rss_mb:.0f} MB RSS{failed}"
        return f"{r:.3f}"

    line = f"{figure}: agentlog {text(ours)}"
    if peer is not None:
        line += f" | {name} {text(peer)}"
        if isinstance(ours, Run) and isinstance(peer, Run):
            line += f" | ratio {ours.wall / peer.wall:.2f} wall, {ours.cpu / max(peer.cpu, 1e-9):.2f} CPU"
        elif not isinstance(ours, Run) and not isinstance(peer, Run):
            line += f" | ratio {ours / peer:.2f}"
    if target:
        line += f" (target {target})"
    print(line, flush=True)


class Bench:
    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args = args
        self.work = work
        self.agentlog = [sys.executable, "-m", "agentlog"]
        self.runtime = work / "run"
        self.runtime.mkdir(mode=0o700, exist_ok=True)
        self.ccusage = args.ccusage if args.ccusage and Path(args.ccusage).exists() else None
        self.agentsview = args.agentsview if args.agentsview and Path(args.agentsview).exists() else None
        for name, exe in (("ccusage", self.ccusage), ("agentsview", self.agentsview)):
            if exe is None:
                print(f"({name} not found: its figures are skipped)")

    def fresh(self, index: Path) -> None:
        """Remove the index at ``index`` and agentsview's database beside it: a first run."""
        for path in index.parent.glob(f"{index.name}*"):
            path.unlink()
        shutil.rmtree(index.parent / f"{index.stem}-agentsview", ignore_errors=True)

    def env(self, home: Path, index: Path) -> dict[str, str]:
        keep = ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "VIRTUAL_ENV")
        env = {k: v for k, v in os.environ.items() if k in keep}
        return {
            **env,
            "HOME": str(home),
            "TZ": "UTC",
            "COLUMNS": "100",
            "AGENTLOG_INDEX": str(index),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "CODEX_HOME": str(home / ".codex"),
            "AGENTSVIEW_NO_DAEMON": "1",
            "AGENTSVIEW_DATA_DIR": str(index.parent / f"{index.stem}-agentsview"),
            "AGENTLOG_NO_DAEMON": "1",  # every process pays its start-up, unless run against a Resident
            "XDG_RUNTIME_DIR": str(self.runtime),
        }

    def first_run(self, cmd: list[str], env: dict[str, str], index: Path) -> Run:
        """``cmd`` on a new index as a person at a terminal runs it
        (``AGENTLOG_BACKGROUND_INDEX=1``: the index built in the background), then
        wait for that build to end (the next figures start from a built index)."""
        ran = run(cmd, {**env, "AGENTLOG_BACKGROUND_INDEX": "1"})
        marker = index.with_name(index.name + ".building")
        deadline = time.monotonic() + 3600
        while marker.exists() and time.monotonic() < deadline:
            try:
                os.kill(int(marker.read_text() or 0), 0)
            except (ProcessLookupError, ValueError, FileNotFoundError):
                break
            time.sleep(0.2)
        return ran

    def times(self, cmd: list[str], env: dict[str, str], runs: int | None = None) -> Run:
        return median([run(cmd, env) for _ in range(runs or self.args.runs)])

    def resident(self, env: dict[str, str]) -> Resident | None:
        """A resident for ``env`` (``None``, said once, when this agentlog has none)."""
        try:
            return Resident(self.agentlog, env)
        except (ImportError, RuntimeError) as exc:
            print(f"(no resident: {exc}; its figures are skipped)")
            return None

    def interleaved(
        self,
        cmds: dict[str, list[str]],
        env: dict[str, str],
        resident: Resident | None,
        runs: int,
        before: Resident | None = None,
    ) -> dict[str, Run]:
        """Each of ``cmds`` run ``runs`` times, one of each in turn (so load changes
        touch all alike): a name ending in ``+resident`` against ``resident``, one
        ending in ``+before`` against ``before``; each its medians (:func:`_median_of`)."""
        got: dict[str, list[Run]] = {name: [] for name in cmds}
        for _ in range(runs):
            for name, cmd in cmds.items():
                served = resident if name.endswith("+resident") else before if name.endswith("+before") else None
                if served is not None:
                    got[name].append(run(cmd, env, resident=served))
                elif not name.endswith(("+resident", "+before")):
                    got[name].append(run(cmd, env))
        return {name: _median_of(runs) for name, runs in got.items() if runs}

    def before(self, env: dict[str, str], index: Path) -> Resident | None:
        """A resident of the ``--before`` tree, on a copy of ``index`` (``None`` without the option)."""
        if self.args.before is None:
            return None
        copy = index.with_name(f"{index.stem}-before{index.suffix}")
        self.fresh(copy)
        shutil.copyfile(index, copy)
        runtime = self.runtime.with_name("run-before")  # its own folder: each Resident is the one there
        runtime.mkdir(mode=0o700, exist_ok=True)
        before = {
            **env,
            "PYTHONPATH": str(self.args.before.resolve()),
            "AGENTLOG_INDEX": str(copy),
            "XDG_RUNTIME_DIR": str(runtime),
        }
        run([*self.agentlog, "index"], before)  # its own memo recorded
        return self.resident(before)

    # -- parts ---------------------------------------------------------------

    def small(self) -> None:
        home = self.work / "small"
        if not home.exists():
            write_home(home, HomeShape(claude=self.args.claude, subagent_share=0.0, codex=0, opencode=0))
        files = sum(len(fs) for _, _, fs in os.walk(home / ".claude"))
        print(f"\n== small: {files:,} small Claude Code files ({_size(home) / 1e6:.0f} MB)")
        index = self.work / "small.sqlite"
        self.fresh(index)
        env = self.env(home, index)
        daily = [*self.agentlog, "usage", "daily", "--json", "-z", "UTC"]
        first = self.first_run(daily, env, index)
        peer = run([self.ccusage, "claude", "daily", "--json", "--offline"], env) if self.ccusage else None
        show("first-run usage daily", first, peer, "ccusage", "<= 1.0x")
        resident = self.resident(env)
        before = self.before(env, index)
        try:
            cmds = {
                "walk": [sys.executable, "-c", WALK, str(home)],
                "index": [*self.agentlog, "index"],
                "index+resident": [*self.agentlog, "index"],
                "index+before": [*self.agentlog, "index"],
                "daily": daily,
                "daily+resident": daily,
                "daily+before": daily,
                "no-sync": [*daily, "--no-sync"],
                "no-sync+resident": [*daily, "--no-sync"],
            }
            if self.ccusage:
                cmds["ccusage"] = [self.ccusage, "claude", "daily", "--json", "--offline"]
            got = self.interleaved(cmds, env, resident, self.args.runs, before)
        finally:
            for each in (resident, before):
                if each is not None:
                    each.stop()
        walk = got["walk"]
        show("no-change index (whole process)", got["index"], walk, "os.walk+os.stat", "<= 3x")
        if "index+resident" in got:
            show("no-change index, resident (client + resident CPU)", got["index+resident"], walk, "os.walk+os.stat", "<= 3x")
        if "index+before" in got:
            show("no-change index, resident of --before", got["index+before"], walk, "os.walk+os.stat", "<= 3x")
        inside = json.loads(run([sys.executable, "-c", IN_PROCESS, str(home), str(self.args.runs)], env).out)
        show("no-change sync alone, in process (CPU)", inside["sync"], inside["walk"], "os.walk+os.stat")
        peer = got.get("ccusage")
        show("warm usage daily", got["daily"], peer, "ccusage", "<= 0.10x")
        if "daily+resident" in got:
            show("warm usage daily, resident (client + resident CPU)", got["daily+resident"], peer, "ccusage", "<= 0.10x")
        if "daily+before" in got:
            show("warm usage daily, resident of --before", got["daily+before"], peer, "ccusage", "<= 0.10x")
        show("warm usage daily --no-sync", got["no-sync"], peer, "ccusage")
        if "no-sync+resident" in got:
            show("warm usage daily --no-sync, resident", got["no-sync+resident"], peer, "ccusage")

    def home(self) -> None:
        home = self.work / "home"
        if not home.exists():
            write_home(
                home, HomeShape(claude=self.args.claude, codex=self.args.codex, megabytes=self.args.home_mb)
            )
        logs = _size(home)
        files = sum(len(fs) for _, _, fs in os.walk(home))
        print(
            f"\n== home: {files:,} files, {logs / 1e6:.0f} MB (Claude + subagents, Codex + forks, OpenCode dbs)"
        )
        index = self.work / "home.sqlite"
        self.fresh(index)
        env = self.env(home, index)
        first = run([*self.agentlog, "index"], env)
        peer = run([self.agentsview, "sync"], env) if self.agentsview else None
        show("first index", first, peer, "agentsview sync", "<= 0.2x, RSS <= 300 MB")
        av_db = Path(env["AGENTSVIEW_DATA_DIR"]) / "sessions.db"
        ours_size = _size_of_index(index) / logs
        show(
            "index size / logs",
            ours_size,
            _size_of_index(av_db) / logs if av_db.exists() else None,
            "agentsview",
            "<= 1.0x",
        )
        daily = [*self.agentlog, "usage", "daily", "--json", "-z", "UTC"]
        run(daily, env)  # the roll-up and price cache are built once
        warm = self.times(daily, env)
        peer = (
            self.times([self.agentsview, "usage", "daily", "--all", "--json"], env)
            if self.agentsview
            else None
        )
        show("warm usage daily", warm, peer, "agentsview usage daily", "<= 0.5x")
        search = [*self.agentlog, "search", "refactor parser", "--json"]
        show("search", self.times(search, env), self.times([*search, "--no-sync"], env), "agentlog --no-sync")

    def log(self) -> None:
        home = self.work / "log"
        target = big_session(home, self.args.log_mb)
        print(f"\n== log: one Claude Code file of {target.stat().st_size / 1e6:.0f} MB")
        index = self.work / "log.sqlite"
        self.fresh(index)
        env = self.env(home, index)
        daily = [*self.agentlog, "usage", "daily", "--json", "-z", "UTC"]
        first = self.first_run(daily, env, index)
        peer = run([self.ccusage, "claude", "daily", "--json", "--offline"], env) if self.ccusage else None
        show("first-run usage daily", first, peer, "ccusage", "<= 1.0x")
        self.fresh(index)
        full = run([*self.agentlog, "index"], env)
        peer = run([self.agentsview, "sync"], env) if self.agentsview else None
        show("full index", full, peer, "agentsview sync", "<= 0.2x, RSS <= 300 MB")
        shown = run([*self.agentlog, "show", "big-session", "--json"], env)
        show("show --json", shown, target="RSS bounded")

    def record(self) -> None:
        home = self.work / "record"
        path = home / ".claude" / "projects" / "-p" / "huge-record.jsonl"
        if not path.exists():
            write_record(path, self.args.record_mib)
        print(f"\n== record: one line of {path.stat().st_size / (1 << 20):.0f} MiB")
        index = self.work / "record.sqlite"
        self.fresh(index)
        env = self.env(home, index)
        show("index", run([*self.agentlog, "index"], env), target="RSS <= 300 MB")
        found = run([*self.agentlog, "search", "word", "--json"], env, timeout=self.args.record_timeout)
        show("search", found, target="RSS <= 300 MB")

    def startup(self) -> None:
        home = self.work / "one"
        if not home.exists():
            write_home(home, HomeShape(claude=1, subagent_share=0.0, codex=0, opencode=0))
        print("\n== startup")
        index = self.work / "one.sqlite"
        self.fresh(index)
        env = self.env(home, index)
        n = self.args.startup_runs
        version = [run([*self.agentlog, "--version"], env) for _ in range(n)]
        show(f"--version (median of {n})", _median_of(version), target="< 0.1 s")
        daily = [*self.agentlog, "usage", "daily", "--json", "-z", "UTC"]
        table = [*self.agentlog, "usage", "daily", "-z", "UTC"]
        run(daily, env)
        resident = self.resident(env)
        try:
            cmds = {"json": daily, "json+resident": daily, "table": table, "table+resident": table}
            got = self.interleaved(cmds, env, resident, n)
        finally:
            if resident is not None:
                resident.stop()
        show(f"warm usage daily, one file (median of {n})", got["json"], target="< 0.1 s")
        if "json+resident" in got:
            show(f"warm usage daily, one file, resident (median of {n}; client + resident CPU)", got["json+resident"], target="< 0.1 s")
        show(f"warm usage daily, one file, table (median of {n})", got["table"], target="< 0.1 s")
        if "table+resident" in got:
            show(f"warm usage daily, one file, table, resident (median of {n})", got["table+resident"], target="< 0.1 s")
        for label, code in FLOOR:
            floor = _median_of([run([sys.executable, "-c", code], env) for _ in range(n)])
            show(f"floor, {label} (python -c {code!r})", floor)


FLOOR = [
    ("bare", "pass"),
    ("click", "import click"),
    ("msgspec", "import msgspec"),
    ("libraries", "import click, msgspec, platformdirs, sqlite3, zoneinfo, json, pathlib, datetime"),
]
"""What any warm report costs before agentlog's own code: the interpreter, and
the libraries every command imports (click, msgspec with typing_extensions,
platformdirs, sqlite3, zoneinfo)."""


def _median_of(runs: list[Run]) -> Run:
    """Median wall and median CPU (each its own), the largest RSS."""
    return Run(
        statistics.median(r.wall for r in runs),
        statistics.median(r.cpu for r in runs),
        max(r.rss_mb for r in runs),
        b"",
        0,
    )


def _size(root: Path) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs)


def _size_of_index(path: Path) -> int:
    """Bytes of a SQLite database with its WAL and shared-memory files."""
    return sum(p.stat().st_size for p in path.parent.glob(f"{path.name}*") if p.is_file())


PARTS = ["small", "home", "log", "record", "startup"]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", nargs="*", choices=PARTS, default=PARTS)
    parser.add_argument("--work", type=Path, help="keep (and reuse) the homes and indexes in this folder")
    parser.add_argument(
        "--claude", type=int, default=3000, help="Claude sessions in the small and multi-agent homes"
    )
    parser.add_argument("--codex", type=int, default=800, help="Codex rollouts in the multi-agent home")
    parser.add_argument("--home-mb", type=float, default=None, help="Claude MB of the multi-agent home")
    parser.add_argument("--log-mb", type=float, default=300)
    parser.add_argument("--record-mib", type=int, default=64)
    parser.add_argument(
        "--record-timeout", type=float, default=120, help="seconds before the record's search is killed"
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--startup-runs", type=int, default=20)
    parser.add_argument(
        "--before", type=Path, help="another agentlog src tree: its resident beside this one's in small (A/B)"
    )
    parser.add_argument("--ccusage", default=CCUSAGE)
    parser.add_argument("--agentsview", default=AGENTSVIEW)
    args = parser.parse_args()
    import agentlog

    compileall.compile_dir(Path(agentlog.__file__).parent, quiet=1)  # as an installed package is
    work = args.work or Path(tempfile.mkdtemp(prefix="agentlog-home-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    bench = Bench(args, work)
    try:
        for part in PARTS:
            if part in args.only:
                getattr(bench, part)()
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
