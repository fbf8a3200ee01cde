"""The resident's watch vouching for the no-change sync (:mod:`agentlog.resident.fresh`),
with real residents: once a child checked the whole index and nothing changed
since, the next children check no file (``index --json`` ``checked`` 0: counted
by the check itself, not timed); a log appended, created or deleted just before
a command is synced by that command; an overflowed queue or a watch that cannot
be set up falls back to the whole check."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentlog.index.memo import RACY_NS
from agentlog.resident.watch import WATCHES_ENV
from test_resident import Resident, _alive, _env, _start, _wait

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="residents are Linux-only")

PROJECT = ".claude/projects/-tmp-project"


def _settled() -> None:
    """Past the memo's racy window: what was just written is trusted as listed."""
    time.sleep(RACY_NS / 1e9 + 0.2)


def _index(r: Resident, served: bool = True) -> dict:
    out = r.run("index", "--json", served=served)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _checks(r: Resident, runs: int) -> list[int | None]:
    return [_index(r)["checked"] for _ in range(runs)]


def _stopped(r: Resident) -> None:
    r.run("daemon", "stop")
    if not _wait(lambda: not _alive(r.pid), 10):
        os.kill(r.pid, 9)


@pytest.fixture
def settled(tmp_path: Path) -> Iterator[Resident]:
    """A resident whose index was built more than the racy window ago."""
    env = _env(tmp_path)
    _settled()
    r = _start(env, tmp_path)
    try:
        _settled()
        yield r
    finally:
        _stopped(r)


def _clean(r: Resident, new_watches: bool = True) -> int:
    """Bring ``r`` to vouching (after a change: settle, then a whole check, whose
    vouch the resident keeps unless it needs ``new_watches``: then once more);
    the number of paths a whole check ``stat``-s."""
    _settled()
    whole = _index(r, served=False)["checked"]
    if whole is None:  # a sync that recorded racy looks (a file changed within its tick)
        whole = _index(r, served=False)["checked"]
    assert isinstance(whole, int) and whole > 0
    assert _checks(r, 3 if new_watches else 2) == [whole] * (2 if new_watches else 1) + [0]
    return whole


def test_a_clean_index_checks_no_file(settled: Resident) -> None:
    whole = _clean(settled)
    assert _checks(settled, 2) == [0, 0]
    watch = settled.status()["watch"]
    assert (watch["clean"], watch["overflows"], watch["unavailable"]) == (1, 0, "")
    assert watch["watches"] > 0
    # the answers are those of an in-process run, which checks every file
    for args in (("usage", "daily", "--json", "-z", "UTC"), ("sessions", "--json")):
        served = settled.run(*args)
        alone = settled.run(*args, served=False)
        assert (served.returncode, served.stdout) == (alone.returncode, alone.stdout)
    assert _index(settled, served=False)["checked"] == whole


def _line(path: Path) -> str:
    return path.read_text().splitlines()[0]


def test_changes_just_before_a_command_are_synced(settled: Resident) -> None:
    home = Path(settled.env["HOME"])
    project = home / PROJECT
    first = sorted(project.glob("*.jsonl"))[0]
    _clean(settled)
    sources = _index(settled)["sources"]

    with first.open("a") as f:  # appended, then the command at once
        f.write(_line(first).replace('"uuid": "', '"uuid": "again-') + "\n")
    got = _index(settled)
    assert (got["checked"], got["appended"] + got["reparsed"], got["sources"]) == (None, 1, sources)

    _clean(settled, new_watches=False)
    shutil.copy(first, project / "created.jsonl")
    got = _index(settled)
    assert (got["checked"], got["sources"]) == (None, sources + 1)

    _clean(settled)  # the new file watched too
    (project / "created.jsonl").unlink()
    got = _index(settled)
    assert (got["checked"], got["sources"], got["archived"] + got["removed"]) == (None, sources, 1)

    _clean(settled, new_watches=False)
    first.chmod(0o600)  # only the ctime changes: the whole check reads it again too
    got = _index(settled)
    assert got["checked"] is None
    _clean(settled, new_watches=False)


def test_an_overflowed_queue_means_the_whole_check(settled: Resident) -> None:
    home = Path(settled.env["HOME"])
    project = home / PROJECT
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    a, b = project / "a.txt", project / "b.txt"
    a.write_text("")
    b.write_text("")
    whole = _clean(settled)
    for n in range(limit + 100):  # two names in turn: the kernel merges no two events
        os.utime(a if n % 2 else b, ns=(n, n))
    got = _index(settled)
    assert got["checked"] == whole
    assert settled.status()["watch"]["overflows"] == 1


def test_a_watch_that_cannot_be_set_up_means_the_whole_check(tmp_path: Path) -> None:
    env = {**_env(tmp_path), WATCHES_ENV: "3"}
    _settled()
    r = _start(env, tmp_path)
    try:
        _settled()
        whole = _index(r, served=False)["checked"]
        assert _checks(r, 3) == [whole, whole, whole]
        assert r.status()["watch"]["unavailable"] == f"more than 3 watches ({WATCHES_ENV})"
        first = sorted((Path(env["HOME"]) / PROJECT).glob("*.jsonl"))[0]
        with first.open("a") as f:
            f.write(_line(first).replace('"uuid": "', '"uuid": "again-') + "\n")
        got = _index(r)
        assert (got["checked"], got["appended"] + got["reparsed"]) == (None, 1)
    finally:
        _stopped(r)
