"""One worker parsing many small sources ahead of the store
(:class:`agentlog.worker.SharedParse`): each job's batches as parsing it here
gives them, a job's failure raised by that job alone, jobs passed over or left
half read skipped."""

from __future__ import annotations

import errno
import functools
import os
import sys
from pathlib import Path

import msgspec
import pytest

import worker_probes
from agentlog import worker
from agentlog.adapters import SourceRef, get_adapter
from agentlog.adapters.base import JsonlAdapter
from agentlog.load import jsonl_batches
from conftest import FIXTURES

pytestmark = pytest.mark.skipif(not worker.available(), reason="needs fork and a second core")

CLAUDE = get_adapter("claude_code")
assert isinstance(CLAUDE, JsonlAdapter)


def _jobs(tmp_path: Path) -> list[worker.ParseJob]:
    files = sorted((FIXTURES / "claude_code").glob("*.jsonl"))[:3]
    missing = tmp_path / "gone.jsonl"
    paths = [files[0], missing, files[1], files[2]]
    return [(CLAUDE, SourceRef(agent="claude_code", path=str(p)), 0, None) for p in paths]


def _here(job: worker.ParseJob, lines: int) -> bytes:
    adapter, ref, start, state = job
    return msgspec.msgpack.encode(list(jsonl_batches(adapter, ref, {}, start, state, lines)))


def _there(batches: object) -> bytes:
    return msgspec.msgpack.encode(list(batches))  # type: ignore[call-overload]


def test_each_job_as_parsed_here_and_a_failure_costs_its_job_alone(tmp_path):
    jobs = _jobs(tmp_path)
    with worker.SharedParse(jobs, lines=3) as shared:
        assert _there(shared.batches(0)) == _here(jobs[0], 3)
        with pytest.raises(OSError) as failed:
            list(shared.batches(1))
        assert failed.value.errno == errno.ENOENT and failed.value.filename == jobs[1][1].path
        assert _there(shared.batches(2)) == _here(jobs[2], 3)
        assert _there(shared.batches(3)) == _here(jobs[3], 3)
        assert not shared.broken


def test_jobs_passed_over_or_half_read_are_skipped(tmp_path):
    jobs = _jobs(tmp_path)
    assert len(list(jsonl_batches(*jobs[0][:2], {}, 0, None, 3))) > 1  # several batches to leave
    with worker.SharedParse(jobs, lines=3) as shared:
        first = next(iter(shared.batches(0)))  # one batch of job 0, the rest left
        assert msgspec.msgpack.encode(first) == msgspec.msgpack.encode(
            next(iter(jsonl_batches(*jobs[0][:2], {}, 0, None, 3)))
        )
        assert _there(shared.batches(3)) == _here(jobs[3], 3)  # 1 and 2 passed over


def _workers() -> list[int]:
    """The process ids of this process's fresh workers (Linux: ``/proc``)."""
    me = os.getpid()
    children = [
        int(pid) for task in Path(f"/proc/{me}/task").iterdir() for pid in (task / "children").read_text().split()
    ]
    return [pid for pid in children if b"agentlog.worker" in Path(f"/proc/{pid}/cmdline").read_bytes()]


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="finds the worker in /proc (Linux)")
def test_a_worker_killed_fails_the_job_it_was_on_and_says_so(tmp_path):
    import signal

    big = max(sorted((FIXTURES / "claude_code").glob("*.jsonl")), key=lambda p: p.stat().st_size)
    jobs: list[worker.ParseJob] = [(CLAUDE, SourceRef(agent="claude_code", path=str(big)), 0, None)] * 400
    with worker.SharedParse(jobs, lines=3) as shared:
        assert _there(shared.batches(0)) == _here(jobs[0], 3)
        (child,) = _workers()
        os.kill(child, signal.SIGKILL)
        with pytest.raises(OSError, match="ended"):
            for job in range(1, len(jobs)):  # what reached the pipe before the kill, then the failure
                list(shared.batches(job))
        assert shared.broken


def test_a_message_cut_short_by_the_workers_death_says_it_ended():
    """A worker killed while writing a message leaves half of it in the pipe: the
    reader says the process ended, as for a kill between messages (the wording
    the test above matches, whichever the kill hits)."""
    import multiprocessing
    import os

    receive, send = multiprocessing.Pipe(duplex=False)
    os.write(send.fileno(), worker._SIZE.pack(100) + b"x" * 10)  # a header for 100 bytes, 10 sent
    send.close()
    with pytest.raises(OSError, match=r"^the parser ended unexpectedly \(in the middle of a message\)$"):
        next(worker._messages(receive, "the parser", None))
    receive.close()


def test_messages_arrive_whole_and_in_order_and_a_cut_header_says_it_ended():
    """:func:`worker._send` and :func:`worker._receive` carry messages of any size
    (empty, one byte, many pipe buffers) byte for byte; a pipe that ends inside
    a header is a message cut short, one that ends between messages the end."""
    import multiprocessing
    import os
    import random
    import threading

    rng = random.Random(7)
    sent = [b"", b"\x90", rng.randbytes(3 << 20), rng.randbytes(70_000), b"D"]
    receive, send = multiprocessing.Pipe(duplex=False)
    writer = threading.Thread(target=lambda: [worker._send(send, data) for data in sent])
    writer.start()
    got = [bytes(worker._receive(receive)) for _ in sent]
    writer.join()
    send.close()
    assert got == sent
    with pytest.raises(EOFError):
        worker._receive(receive)
    receive.close()
    receive, send = multiprocessing.Pipe(duplex=False)
    os.write(send.fileno(), worker._SIZE.pack(5)[:3])
    send.close()
    with pytest.raises(OSError, match=r"^the parser ended unexpectedly \(in the middle of a message\)$"):
        next(worker._messages(receive, "the parser", None))
    receive.close()


def test_a_parse_worker_is_a_fresh_interpreter_and_ends_with_its_context(monkeypatch):
    """Parse workers are new interpreters, not forks of this process (whose pages a
    fork would count again in its RSS): one has imported what its work needs, not
    what this process has (pytest, this module), and it is gone when its context ends."""
    names = ["agentlog.worker", "pytest", "test_shared_parse", "worker_probes"]
    assert all(name in sys.modules for name in names)
    produce = functools.partial(worker_probes.loaded, names)
    with worker.run_in_worker(produce, "the probe", fresh=True) as messages:
        assert [msgspec.msgpack.decode(m) for m in messages] == [["agentlog.worker", "worker_probes"]]
        if Path("/proc/self/task").exists():
            assert len(_workers()) <= 1  # it may have ended already
    if Path("/proc/self/task").exists():
        assert _workers() == []
    import threading

    monkeypatch.setattr(threading, "active_count", lambda: 1)  # threads other tests left: it would not fork
    with worker.run_in_worker(produce, "the probe") as messages:  # forked: this process's modules
        assert [msgspec.msgpack.decode(m) for m in messages] == [
            ["agentlog.worker", "pytest", "test_shared_parse", "worker_probes"]
        ]


@pytest.mark.parametrize(("threads", "small", "much"), [(1, [False], [False, True]), (2, [], [True])])
def test_a_sync_forks_its_shared_worker_for_little_and_starts_a_fresh_one_for_much(
    tmp_path, monkeypatch, threads, small, much
):
    """Two changed small sessions: a fork (a warm report's sync, where ~0.1-0.3 s
    of an interpreter's start would be most of its time); as many new bytes as
    a large source's: a fresh worker, as that source's own.  In a process with
    other threads (``serve``'s) a fork is not safe: the small sessions get no
    shared worker, the many new bytes a fresh one.  The rows are the same."""
    import shutil
    import threading

    from agentlog.index import sync as sync_module
    from agentlog.index.db import connect

    files = sorted((FIXTURES / "claude_code").glob("*.jsonl"))[:2]
    project = tmp_path / "home" / ".claude" / "projects" / "-p"
    project.mkdir(parents=True)
    for path in files:
        shutil.copy(path, project / path.name)
    started: list[bool] = []
    real = worker.SharedParse

    def spy(jobs: list[worker.ParseJob], lines: int = 25_000, *, fresh: bool = True) -> worker.SharedParse:
        started.append(fresh)
        return real(jobs, lines, fresh=fresh)

    monkeypatch.setattr(worker, "SharedParse", spy)
    monkeypatch.setattr(threading, "active_count", lambda: threads)  # not the threads other tests left
    env = {"HOME": str(tmp_path / "home")}
    report = sync_module.sync(connect(tmp_path / "a.db"), [CLAUDE], env, tmp_path / "home")
    assert (report.reparsed, report.failed, started) == (2, [], small)
    monkeypatch.setattr(sync_module, "WORKER_MIN", max(p.stat().st_size for p in files) + 1)
    report = sync_module.sync(connect(tmp_path / "b.db"), [CLAUDE], env, tmp_path / "home")
    assert (report.reparsed, report.failed, started) == (2, [], much)
    keys = "SELECT key, message_count FROM sessions ORDER BY key"
    assert (
        connect(tmp_path / "a.db").execute(keys).fetchall()
        == connect(tmp_path / "b.db").execute(keys).fetchall()
    )


def test_with_other_threads_a_worker_is_fresh_or_its_work_runs_here(monkeypatch):
    """Where a fork is not safe, a worker asked to fork is a fresh interpreter, and
    one whose work does not pickle runs in this process: the same messages."""
    import threading

    monkeypatch.setattr(threading, "active_count", lambda: 2)
    names = ["agentlog.worker", "pytest", "worker_probes"]
    produce = functools.partial(worker_probes.loaded, names)
    with worker.run_in_worker(produce, "the probe") as messages:  # not forked: not this process's modules
        assert [msgspec.msgpack.decode(m) for m in messages] == [["agentlog.worker", "worker_probes"]]

    def here() -> object:  # a local function: it does not pickle
        yield msgspec.msgpack.encode(["here"])
        yield msgspec.msgpack.encode([len(_workers())])

    with worker.run_in_worker(here, "the probe", fresh=True) as messages:
        got = [msgspec.msgpack.decode(m) for m in messages]
    assert got[0] == ["here"]
    if Path("/proc/self/task").exists():
        assert got[1] == [0]  # no worker process ran it


def test_jobs_that_do_not_pickle_are_parsed_in_a_fork():
    """A third-party adapter whose state does not pickle (a lambda here) cannot go
    to a fresh interpreter: its jobs are parsed in a forked worker all the same."""
    from agentlog.adapters.claude_code import ClaudeCodeAdapter

    adapter = ClaudeCodeAdapter()
    adapter.hook = lambda: None  # type: ignore[attr-defined]
    files = sorted((FIXTURES / "claude_code").glob("*.jsonl"))[:2]
    jobs: list[worker.ParseJob] = [(adapter, SourceRef(agent="claude_code", path=str(p)), 0, None) for p in files]
    with worker.SharedParse(jobs, lines=3) as shared:
        if Path("/proc/self/task").exists():
            assert _workers() == []  # forked: not an agentlog.worker command line
        assert [_there(shared.batches(n)) for n in range(2)] == [_here(job, 3) for job in jobs]


def test_ctrl_c_is_left_to_the_process_that_started_the_worker():
    """A fresh worker ignores ``SIGINT`` (a Ctrl-C reaches the whole process group):
    the process that reads it decides, and the worker ends with the pipe."""
    with worker.run_in_worker(worker_probes.interrupted, "the probe", fresh=True) as messages:
        assert [msgspec.msgpack.decode(m) for m in messages] == [True]
