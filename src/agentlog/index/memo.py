"""The no-change sync: what discovery saw last time, and the check that nothing
it looked at, and no source, has changed since (then a sync does nothing).

A full sync (:func:`agentlog.index.sync.sync`) records every look discovery makes
through :mod:`agentlog.probe` (:func:`agentlog.probe.recording`: each ``stat`` and
each folder listed, with its ``stat``), and stores them in ``sync_memo`` with what
it found: the source paths it synced, the project folders it looked in, the
discovery report.  The next sync first re-``stat``\\s those paths
(:func:`unchanged`).  When every look returns what it returned then, discovery
would list the same sources with the same sidecars, so instead of running the
adapters' ``discover`` (importing their modules, a ``SourceRef`` per file) the
sync compares each known source's ``stat`` with its row, as the full check does,
in one query (index ``sources_known``) and one ``stat`` per file.  Anything else
— a look that differs, a source that grew, a row marked to be read again, one
archived that is back, ``--root`` folders, another agentlog or adapter version —
and the full sync runs, and records again.

Why a folder's ``stat`` stands for its listing: POSIX updates a folder's
modification (and change) time whenever an entry is created, removed or renamed
in it (https://pubs.opengroup.org/onlinepubs/9699919799/functions/rename.html,
``unlink``, ``open`` with ``O_CREAT``).  It does not say that a file in it grew
(Claude Code appends to its transcripts in place), so every source is
``stat``\\ed all the same; and it does not follow a symbolic link, so the target
of every link listed is a look of its own.  A time is only trusted once it is
:data:`RACY_NS` old: file-system clocks tick coarsely, and an entry added within
the tick of a listing would leave the folder's time as it was (git's "racy"
entries, https://git-scm.com/docs/racy-git).
"""

from __future__ import annotations

import errno
import hashlib
import json
import marshal
import os
import sqlite3
import stat
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from agentlog import _version
from agentlog.adapters import Adapter, LazyAdapter
from agentlog.index.db import conn_path
from agentlog.load import LoadReport
from agentlog.probe import Look, PathProblem, Problems, fingerprint
from agentlog.resident import fresh

MEMO_VERSION = 1
RACY_NS = 2_000_000_000
"""How old (ns) a look's modification and change times must be, at the start of
the sync that records it, to be trusted."""

_GONE = ([-errno.ENOENT], [-errno.ENOTDIR])
"""The fingerprints of a path that is not there."""


class Memo(msgspec.Struct, array_like=True):
    """What a full sync saw (stored as JSON in ``sync_memo``)."""

    key: str
    """Agentlog's version, the adapters (slug, parser version, module file) and
    the home: another key, another discovery."""
    roots: dict[str, list[tuple[str, bool]]]
    """:attr:`agentlog.load.LoadReport.roots`: each adapter's roots, whether present."""
    looks: list[Look]
    """Every path discovery looked at, with :func:`agentlog.probe.fingerprint`."""
    found: list[str]
    """The sources the sync handled (discovered, remembered, project files)."""
    cwds: list[str]
    """The folders project files were looked for in (``sessions.cwd``)."""
    counts: dict[str, int]
    errors: list[tuple[str, str]]
    duplicates: list[str]
    problems: list[PathProblem]


def key_of(adapters: Sequence[Adapter | LazyAdapter], home: Path) -> str:
    """The memo key of a sync of ``adapters`` (adapters or lazy ones) at ``home``."""
    from agentlog import load, probe
    from agentlog.index import sync

    code = [_file_stamp(m.__file__) for m in (load, probe, sync, sys.modules[__name__])]
    described = [[a.slug, a.parser_version, list(a.project_files), _adapter_stamp(a)] for a in adapters]
    return json.dumps([MEMO_VERSION, _version.__version__, str(home), code, described])


def _adapter_stamp(adapter: Adapter | LazyAdapter) -> list[object] | None:
    """``[file, size, mtime_ns]`` of the module that defines ``adapter``."""
    if isinstance(adapter, LazyAdapter):
        if adapter.stamp is not None:
            return adapter.stamp
        adapter = adapter.load()
    module = sys.modules.get(type(adapter).__module__)
    return _file_stamp(getattr(module, "__file__", None))


def _file_stamp(path: str | None) -> list[object] | None:
    if not path:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [path, st.st_size, st.st_mtime_ns]


def load_memo(conn: sqlite3.Connection) -> Memo | None:
    """The memo the last full sync stored, if any (and readable)."""
    return _loaded(conn)[0]


def _loaded(conn: sqlite3.Connection) -> tuple[Memo | None, bytes]:
    """The memo the last full sync stored (``None``: none, or unreadable) and its bytes."""
    row = conn.execute("SELECT data FROM sync_memo WHERE id = 1").fetchone()
    if row is None:
        return None, b""
    data = row[0] if isinstance(row[0], bytes) else str(row[0]).encode("utf-8", "surrogateescape")
    try:
        return msgspec.json.decode(data, type=Memo), data
    except msgspec.DecodeError:
        return None, data


def trusted(looks: Iterable[Look], started_ns: int) -> list[Look]:
    """``looks`` as a memo keeps them: a look whose times are under
    :data:`RACY_NS` older than ``started_ns`` (the recording sync's start, in
    ``time.time_ns``) is kept with an empty fingerprint, which nothing matches."""
    limit = started_ns - RACY_NS
    return [(path, fp if len(fp) < 6 or max(fp[4], fp[5]) < limit else []) for path, fp in looks]


class Outcome(msgspec.Struct):
    """What the no-change check found: the sources unchanged and the discovery
    report (as :func:`agentlog.load.discover_sources` and the project-file pass
    would have made it)."""

    sources: int
    checked: int
    """Paths ``stat``-ed to find nothing changed (none when a resident vouched: :mod:`agentlog.resident.fresh`)."""
    roots: dict[str, list[tuple[Path, bool]]]
    counts: dict[str, int]
    errors: list[tuple[str, str]]
    duplicates: list[str]
    problems: Problems


def unchanged(
    conn: sqlite3.Connection,
    adapters: Sequence[Adapter | LazyAdapter],
    env: Mapping[str, str],
    home: Path,
) -> Outcome | None:
    """The outcome of a sync of ``adapters`` at ``home`` (no ``--root``, not
    ``--full``) if it would change nothing, read from the memo; ``None`` when the
    full sync must run (something changed, or may have)."""
    memo, data = _loaded(conn)
    if memo is None or memo.key != key_of(adapters, home):
        return None
    roots: dict[str, list[tuple[Path, bool]]] = {}
    for adapter in adapters:
        slug = adapter.slug
        kept = memo.roots.get(slug)
        try:
            listed = adapter.default_roots(env, home)
        except Exception:  # a plugin's bug: its problem is recorded by the full sync
            return None
        if kept is None or [r for r, _ in kept] != [str(r) for r in listed]:
            return None
        roots[slug] = [(r, present) for r, (_, present) in zip(listed, kept, strict=True)]
    index = conn_path(conn)
    token = _token(index, data)
    vouched = fresh.vouched(token)
    if vouched is None:
        for path, fp in memo.looks:
            if fingerprint(path) != fp:
                return None
    if vouched is None or not fresh.settled(token):  # settled: no one wrote the rows since
        checked = _rows_unchanged(conn, adapters, memo, vouched)
        if checked is None:
            return None
        digest, looked = checked
        if vouched is None and fresh.serving():
            fresh.vouch(token, digest, [path for path, _ in memo.looks] + looked, index)
        elif vouched is not None and fresh.settles(index):
            fresh.vouch(token, digest, [], index)
    return Outcome(
        sources=len(memo.found),
        checked=0 if vouched is not None else len(memo.looks) + len(looked),
        roots=roots,
        counts=memo.counts,
        errors=memo.errors,
        duplicates=memo.duplicates,
        problems=Problems(memo.problems),
    )


def _token(index: str, data: bytes) -> str:
    """What a resident's vouch is for: this index file and this memo."""
    return json.dumps([index, hashlib.blake2b(data, digest_size=16).hexdigest()])


def _rows_unchanged(
    conn: sqlite3.Connection, adapters: Sequence[Adapter | LazyAdapter], memo: Memo, vouched: str | None = None
) -> tuple[str, list[str]] | None:
    """Whether every known source of ``adapters`` is as the full check would skip
    it: each found source's ``stat``, sidecars and parser version as stored and
    not archived; every other one archived, gone, and left as it is by
    :func:`agentlog.index.archive.archive_gone` (it holds sessions, no copy of it
    waits, no problem hides it).  One query (index ``sources_known``), one
    ``stat`` per source, no object made per source.  When so, the digest of what
    it read of the index and the paths it ``stat``-ed; ``None`` otherwise.

    ``vouched``: the digest a check that passed read, whose paths a resident
    vouches did not change (:mod:`agentlog.resident.fresh`): then only the index
    is read again, and compared with it (no ``stat``)."""
    versions = {a.slug: a.parser_version for a in adapters}
    marks = ", ".join("?" * len(versions))
    query = f"""SELECT path, agent, size, mtime_ns, ctime_ns, inode, parser_version, sidecar_sig, sidecars,
        archived_at, duplicate_of FROM sources WHERE agent IN ({marks})"""
    rows = conn.execute(query, list(versions)).fetchall()
    found = set(memo.found)
    gone = [row for row in rows if row[0] not in found]
    empty = None
    if gone:
        empty = conn.execute(
            f"""SELECT 1 FROM sources s WHERE agent IN ({marks}) AND archived_at IS NOT NULL
                AND NOT EXISTS (SELECT 1 FROM sessions WHERE source_id = s.id) LIMIT 1""",
            list(versions),
        ).fetchone()
    cwds = None
    if any(a.project_files for a in adapters):
        cwds = sorted(cwd for (cwd,) in conn.execute("SELECT DISTINCT cwd FROM sessions WHERE cwd IS NOT NULL"))
    digest = hashlib.blake2b(marshal.dumps((rows, empty, cwds)), digest_size=16).hexdigest()
    if vouched is not None:
        return (digest, []) if digest == vouched else None
    if not _rows_match(rows, versions, found, memo, empty, cwds):
        return None
    sidecars = [side for row in rows if row[8] != "[]" for side in json.loads(row[8])]
    return digest, [row[0] for row in rows] + sidecars


def _rows_match(
    rows: list[Any],
    versions: dict[str, int],
    found: set[str],
    memo: Memo,
    empty: tuple[int] | None,
    cwds: list[str] | None,
) -> bool:
    """The check of :func:`_rows_unchanged` on the rows it read: a ``stat`` each."""
    from agentlog.index.sync import _sidecar_sig_of

    matched = 0
    gone: list[tuple[str, str, str | None]] = []
    copies = set()
    isreg = stat.S_ISREG
    for (
        path,
        agent,
        size,
        mtime_ns,
        ctime_ns,
        inode,
        version,
        sig,
        sidecars,
        archived_at,
        copy_of,
    ) in rows:
        if copy_of is not None:
            copies.add(copy_of)
        if path not in found:
            gone.append((path, agent, archived_at))
            continue
        try:
            st = os.stat(path)
        except OSError:
            return False
        if not (
            size == st.st_size
            and mtime_ns == st.st_mtime_ns
            and ctime_ns == st.st_ctime_ns
            and inode == st.st_ino
            and isreg(st.st_mode)
            and archived_at is None
            and version == versions[agent]
            and sig == (_sidecar_sig_of(json.loads(sidecars)) if sidecars != "[]" else "")
        ):
            return False
        matched += 1
    if matched != len(found):
        return False
    if gone:
        hiding = LoadReport(problems=Problems(memo.problems))
        for path, agent, archived_at in gone:  # archive_gone would leave each as it is, and none is back
            if archived_at is None or path in copies or hiding.hides(path, agent):
                return False
            if fingerprint(path) not in _GONE:
                return False
        if empty is not None:  # archive_gone would remove it
            return False
    return cwds is None or cwds == memo.cwds


def record(
    conn: sqlite3.Connection,
    adapters: Sequence[Adapter | LazyAdapter],
    home: Path,
    looks: list[Look],
    started_ns: int,
    found: Iterable[str],
    cwds: Iterable[str],
    report: LoadReport,
) -> None:
    """Store what a full sync that started at ``started_ns`` saw: its ``looks``,
    the sources it handled, the project folders and the discovery ``report``.
    Paths that cannot be stored as text (not UTF-8) leave no memo, nor does an
    index that cannot be written: the next sync runs in full."""
    memo = Memo(
        key=key_of(adapters, home),
        roots={slug: [(str(r), present) for r, present in listed] for slug, listed in report.roots.items()},
        looks=trusted(looks, started_ns),
        found=sorted(set(found)),
        cwds=sorted(set(cwds)),
        counts=dict(report.sources),
        errors=list(report.errors),
        duplicates=list(report.duplicates),
        problems=list(report.problems),
    )
    try:
        data = msgspec.json.encode(memo)
    except (UnicodeEncodeError, msgspec.EncodeError):
        data = None
    try:
        if data is None:
            conn.execute("DELETE FROM sync_memo")
        else:
            conn.execute("INSERT OR REPLACE INTO sync_memo (id, data) VALUES (1, ?)", (data,))
    except sqlite3.OperationalError:  # a read-only index: the memo is only a shortcut
        pass


def clock_ns() -> int:
    """Now, as file times are kept (``time.time_ns``)."""
    return time.time_ns()
