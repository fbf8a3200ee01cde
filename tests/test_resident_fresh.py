"""The resident's watch vouching for the no-change sync (:mod:`agentlog.resident.fresh`),
with real residents: once a child checked the whole index and nothing changed
since, the next children check no file (``index --json`` ``checked`` 0: counted
by the check itself, not timed); a log appended, created or deleted just before
a command is synced by that command; an overflowed queue or a watch that cannot
be set up falls back to the whole check.  The index's own files are watched
for writes too: once a child read the rows and no process wrote the index
since, the next children do not read them (they send the resident no vouch, and
``checked`` is 0); a write by another process — through SQLite, a hard link, a
file renamed over it, a connection held open as ``serve`` holds one — is seen
by the next command."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentlog.index.memo import RACY_NS
from agentlog.resident.watch import WATCHES_ENV, Freshness
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


def _watch(r: Resident) -> dict:
    return r.status()["watch"]


def _answers_as_in_process(r: Resident) -> None:
    for args in (("usage", "daily", "--json", "-z", "UTC"), ("sessions", "--json")):
        served = r.run(*args)
        alone = r.run(*args, served=False)
        assert (served.returncode, served.stdout) == (alone.returncode, alone.stdout)
        assert json.loads(served.stdout)


def test_a_settled_index_reads_no_row(settled: Resident) -> None:
    assert settled.run("usage", "daily", served=False).returncode == 0  # its roll-up written
    whole = _clean(settled)  # the first vouch watched the index too: the second settled
    before = _watch(settled)
    assert (before["vouches"], before["settled"], before["clean"], before["unwatched"]) == (2, 1, 1, {})
    assert _checks(settled, 3) == [0, 0, 0]
    # a child that reads the rows of a clean token vouches again: none did, none saw a write
    # (each child's own -wal and -shm, made and removed, are not one)
    assert _watch(settled) == before
    _answers_as_in_process(settled)
    assert _watch(settled) == before

    db = sqlite3.connect(settled.env["AGENTLOG_INDEX"])  # a write of no row the check reads
    db.execute("CREATE TABLE scratch (x)")
    db.execute("DROP TABLE scratch")
    db.commit()
    db.close()
    assert _checks(settled, 1) == [0]  # clean still: the rows read again, the same digest
    after = _watch(settled)
    assert (after["vouches"], after["writes"], after["settled"]) == (3, before["writes"] + 1, 1)
    assert _checks(settled, 2) == [0, 0]
    assert _watch(settled) == after
    assert _index(settled, served=False)["checked"] == whole


def _grown(db_path: str, path: Path) -> None:
    """The index's row of the log ``path`` says it is one byte longer, as another
    process writing the index with SQLite would (the log itself unchanged)."""
    db = sqlite3.connect(db_path)
    db.execute("UPDATE sources SET size = size + 1 WHERE path = ?", (str(path),))
    assert db.total_changes == 1
    db.commit()
    db.close()


def _resettled(r: Resident) -> None:
    """After an index write alone (no log changed): the next children check no
    file (the rows read again have the same digest), the token settles again, and
    then a child neither reads the rows nor vouches."""
    assert _checks(r, 2) == [0, 0]
    watch = _watch(r)
    assert watch["settled"] == 1
    assert _checks(r, 1) == [0]
    assert _watch(r) == watch


def test_an_index_written_by_another_process_is_seen(settled: Resident, tmp_path: Path) -> None:
    home = Path(settled.env["HOME"])
    first = sorted((home / PROJECT).glob("*.jsonl"))[0]
    index = settled.env["AGENTLOG_INDEX"]
    _clean(settled)
    sources = _index(settled)["sources"]

    def synced_again() -> None:  # the row no longer matches the log: read whole again, as in-process
        got = _index(settled)
        assert (got["checked"], got["reparsed"], got["appended"], got["sources"]) == (None, 1, 0, sources)
        _answers_as_in_process(settled)

    _grown(index, first)  # through SQLite: its -wal written
    synced_again()
    _resettled(settled)

    elsewhere = tmp_path / "elsewhere"  # a hard link: its own -wal, unwatched; the close's checkpoint
    elsewhere.mkdir()  # writes the file itself
    os.link(index, elsewhere / "index.sqlite")
    _grown(str(elsewhere / "index.sqlite"), first)
    assert not (elsewhere / "index.sqlite-wal").exists()
    synced_again()
    (elsewhere / "index.sqlite").unlink()
    _resettled(settled)

    copy = tmp_path / "copy.sqlite"  # another file renamed over the index
    source = sqlite3.connect(index)
    target = sqlite3.connect(copy)
    source.backup(target)
    source.close()
    target.close()
    _grown(str(copy), first)
    os.replace(copy, index)  # the old file's watch dropped: a change of every kind
    got = _index(settled)
    assert (got["checked"], got["reparsed"], got["appended"], got["sources"]) == (None, 1, 0, sources)
    _clean(settled, new_watches=False)  # its vouch watches the new file: the next one settles
    _resettled(settled)

    held = sqlite3.connect(index)  # a connection held open, as serve's: its -wal stays
    held.execute("SELECT count(*) FROM sources").fetchone()
    assert _checks(settled, 1) == [0]
    _grown(index, first)
    synced_again()
    # frames in the -wal: a commit may be written but not yet visible, so no token settles;
    # each child reads the rows (the same digest, checked 0); one vouches, and finding the
    # frames the resident tells the next ones not to until an event of the index's files
    assert _checks(settled, 2) == [0, 0]
    watch = _watch(settled)
    assert (watch["settled"], watch["framed"]) == (0, 1)
    assert _checks(settled, 2) == [0, 0]
    assert _watch(settled) == watch
    held.close()  # the last connection: checkpointed, its -wal removed
    _resettled(settled)


def test_reads_of_an_index_are_no_writes(tmp_path: Path) -> None:
    """The watch of an index's files with real SQLite connections: reads (each
    making and removing the -wal and -shm) are no writes; a commit, a
    checkpoint's, a -wal removed that held frames are."""
    index = str(tmp_path / "i.sqlite")
    db = sqlite3.connect(index)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    fresh = Freshness()
    fresh.start()
    assert fresh._watch_index(index) and not fresh._watch_index(index)
    fresh.drain()

    def writes(action) -> int:
        before = fresh.writes
        action()
        fresh.drain()
        return fresh.writes - before

    def read() -> None:
        reader = sqlite3.connect(index)
        assert reader.execute("SELECT count(*) FROM t").fetchone() == (0,)
        reader.close()

    def write(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO t VALUES (1)")
        conn.commit()
        conn.execute("DELETE FROM t")
        conn.commit()

    fresh.indexes[index] = True  # as settled with an empty -wal
    assert writes(read) == 0
    assert not os.path.exists(index + "-wal")
    held = sqlite3.connect(index)
    assert writes(lambda: write(held)) == 1
    assert writes(read) == 0  # the -wal held open stays, with its frames
    fresh.indexes[index] = False  # as settled with frames in the -wal
    assert writes(held.close) == 1  # their checkpoint, and the -wal removed
    fresh.indexes[index] = False
    writer = sqlite3.connect(index)
    write(writer)
    fresh.drain()
    fresh.indexes[index] = os.path.getsize(index + "-wal") == 0
    assert fresh.indexes[index] is False
    os.unlink(index + "-wal")  # frames removed by hand (SQLite removes a -wal only after a checkpoint)
    assert writes(lambda: None) == 1
    writer.close()
    fresh.watch.close()  # type: ignore[union-attr]
