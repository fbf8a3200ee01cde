"""The resident's inotify watch (inotify(7), through ``ctypes``: no thread, no library).

Its descriptor is never put on the resident's loop: it is only read (drained,
non-blocking) when a request arrives, so a busy home (an agent writing its log
all day) costs the resident nothing until a command runs.  Why that is enough:
the kernel queues an event inside the system call that makes the change
(``fsnotify`` is called before ``write``, ``rename`` … return), so a change made
before a command started is in the queue when the resident drains it for that
command.  A queue that overflowed (``IN_Q_OVERFLOW``: events were lost) and a
watch the kernel dropped (``IN_IGNORED``: its folder is gone) both count as a
change.

Each watch has its *interest*: every event (``None``), or only the events about
some names in it (an ancestor folder watched for the one child on the way to a
watched path: ``$HOME`` for ``.claude``, not for ``.bash_history``).

The index's own files are watched apart (:meth:`Inotify.cover_index`): not for
any change, but for a *write* by any process (:meth:`Inotify._file_event`), so
that a child can also skip reading the index's rows when no one wrote it since
they were last read (:mod:`agentlog.resident.fresh`).  Every read of a WAL
database creates its ``-wal`` (and ``-shm``) and the last connection's close
removes them: those are no writes.  What SQLite writes — a transaction's frames
appended to the ``-wal``, a checkpoint or a rollback-mode commit to the file
itself — is always a ``write`` (an ``IN_MODIFY``; SQLite never writes through a
memory map unless built with ``SQLITE_MMAP_READWRITE``), and any other event
about the database's name (replaced, moved, removed, its attributes changed),
about its ``-journal``, or a ``-wal`` moved into place, counts as a write too.
A ``-wal`` that appears is a write unless it is empty (``stat``-ed when its
event is read), and one that goes unless it was empty when the rows were last
vouched for (SQLite removes it only after a checkpoint copied every frame into
the database: a write of its own; removed by hand, its frames are lost).  A
token settles only while the ``-wal`` holds no frame (:meth:`Freshness.weigh`).
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import struct
from dataclasses import dataclass, field

from agentlog.resident.fresh import Snapshot

WATCHES_ENV = "AGENTLOG_DAEMON_WATCHES"
"""The most inotify watches a resident adds (default: inotify's own limit)."""


def watch_limit(env: dict[str, str] | os._Environ[str]) -> int | None:
    """The watch limit of a resident started with ``env`` (:data:`WATCHES_ENV`)."""
    try:
        return max(0, int(env.get(WATCHES_ENV, "")))
    except ValueError:
        return None


IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = os.O_CLOEXEC

MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
)
"""What changes a ``stat`` or a listing: contents (size, mtime), attributes
(ctime: a ``chmod``, ``utime``), entries added, removed or renamed, the watched
path itself removed or moved (an open for writing without a write changes nothing)."""

_FILES = (("", "db"), ("-wal", "wal"), ("-journal", "journal"))
"""The files of a SQLite database watched for its writes: the name's tail, its role."""

_EVENT = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then the name)

LOCAL_FILE_SYSTEMS = frozenset(
    {"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "f2fs", "jfs", "reiserfs", "zfs", "bcachefs", "overlay"}
)
"""File systems whose every change inotify reports (not NFS, SMB, FUSE or 9p:
another machine's writes never reach this kernel's ``fsnotify``)."""


class Inotify:
    """One inotify instance: watches with their interest, and :meth:`drain`."""

    def __init__(self, limit: int | None = None) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        fd = self._libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
        self.fd: int = fd
        self.limit = limit
        self.interest: dict[int, set[str] | None] = {}
        self.wds: dict[str, int] = {}
        self.overflows = 0
        self.dropped = 0
        self.devices = local_devices()
        self.above: set[tuple[str, str]] = set()
        """(folder, name) watched for that name (and so every folder above it)."""
        self.lost: list[str] = []
        """Paths whose watch the kernel dropped since :attr:`lost` was emptied."""
        self.files: dict[int, dict[str, tuple[str, str, str]]] = {}
        """Watches of an index's files (:meth:`cover_index`): each name watched in
        it (``""``: the watched file itself) with its database, its role
        (``db``, ``wal``, ``journal``) and its path."""
        self.written: set[str] = set()
        """Databases written since it was emptied (:meth:`_file_event`)."""
        self.wal_made: set[str] = set()
        """``-wal`` paths created since it was emptied (with their database: :attr:`wal_of`)."""
        self.wal_gone: set[str] = set()
        """Databases whose ``-wal`` was removed or moved away since it was emptied."""
        self.wal_of: dict[str, str] = {}
        self.lost_files: list[str] = []
        """Paths of an index's watches (:attr:`files`) the kernel dropped since it was emptied."""

    def watch(self, path: str, names: set[str] | None) -> int:
        """Watch ``path`` (a folder or a file, links followed) for every event
        (``names`` ``None``) or for those about ``names`` in it; 0, or the error
        number of why not (``ENOSPC``: over the limit)."""
        wd = self._wd(path)
        if wd < 0:
            return -wd
        kept = self.interest.get(wd, set())
        if kept is None or names is None:
            self.interest[wd] = None
        else:
            self.interest[wd] = kept | names
        return 0

    def _wd(self, path: str) -> int:
        """The watch of ``path`` (added if new), or minus the error number of why not."""
        wd = self.wds.get(path)
        if wd is None:
            if self.limit is not None and len(self.wds) >= self.limit:
                return -errno.ENOSPC
            wd = self._libc.inotify_add_watch(self.fd, os.fsencode(path), MASK)
            if wd < 0:
                return -(ctypes.get_errno() or errno.EIO)
            self.wds[path] = wd  # the same inode by two paths: one wd, interests merged
        return wd

    def cover_index(self, database: str) -> str:
        """Watch the SQLite database ``database`` for writes (see the module): the
        file itself, its folder for its name, its ``-wal`` and ``-journal``, and each
        folder above for the one name on the way (any event there is a change), as
        given and as resolved; why not, or ``""``."""
        for each in {database, os.path.realpath(database)}:
            folder, base = os.path.split(each)
            names = {"": ("db", each)}
            inside = {base + tail: (role, os.path.join(folder, base + tail)) for tail, role in _FILES}
            for path, roles in ((each, names), (folder, inside)):
                why, _ = self._local(path)
                if why:
                    return why
                wd = self._wd(path)
                if wd < 0:
                    return self._refused(path, -wd)
                kept = self.files.setdefault(wd, {})
                for name, (role, full) in roles.items():
                    kept[name] = (database, role, full)
                    if role == "wal":
                        self.wal_of[full] = database
            why = self.cover(folder, whole=False)
            if why:
                return why
        return ""

    def cover(self, path: str, whole: bool = True) -> str:
        """Watch ``path`` itself (unless not ``whole``) and each folder above it
        for the one name on the way, for the path as given and as resolved (a
        parent renamed or replaced is a change too); why not, or ``""``."""
        for each in {path, os.path.realpath(path)}:
            why = self._add(each, None) if whole else ""
            child, parent = os.path.basename(each), os.path.dirname(each)
            while child and not why and (parent, child) not in self.above:
                why = self._add(parent, {child})
                if not why:
                    self.above.add((parent, child))
                child, parent = os.path.basename(parent), os.path.dirname(parent)
            if why:
                return why
        return ""

    def _add(self, path: str, names: set[str] | None) -> str:
        """Watch ``path`` (nothing when it is not there: the folder above is
        watched for its name); why it cannot be, or ``""``."""
        why, missing = self._local(path)
        if missing or why:
            return "" if missing else why
        error = self.watch(path, names)
        if error == errno.ENOENT:
            return ""  # removed since the stat: its name's event is on the folder above
        return self._refused(path, error) if error else ""

    def _local(self, path: str) -> tuple[str, bool]:
        """Why ``path`` cannot be watched as it is (it cannot be ``stat``-ed, or is
        not on a local file system: ``""`` when it can), and whether it is missing
        (not there, or a name under a file)."""
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError) as exc:
            return f"{path}: {exc.strerror}", True
        except OSError as exc:
            return f"{path}: {exc.strerror}", False
        if self.devices is None or st.st_dev not in self.devices:
            return f"{path}: not on a local file system", False
        return "", False

    def _refused(self, path: str, error: int) -> str:
        """Why the watch of ``path`` was refused with ``error`` (an errno): the
        :data:`WATCHES_ENV` cap once it is reached, else the error."""
        if error == errno.ENOSPC and self.limit is not None and len(self.wds) >= self.limit:
            return f"more than {self.limit} watches ({WATCHES_ENV})"
        return f"{path}: {os.strerror(error)}"

    def drain(self) -> bool:
        """Read every queued event (without waiting); whether any is one of interest."""
        changed = False
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return changed
            except OSError as exc:
                if exc.errno == errno.EINTR:
                    continue
                raise
            offset = 0
            while offset < len(data):
                wd, mask, _, length = _EVENT.unpack_from(data, offset)
                name = data[offset + _EVENT.size : offset + _EVENT.size + length].rstrip(b"\0")
                offset += _EVENT.size + length
                if mask & IN_Q_OVERFLOW:
                    self.overflows += 1
                    changed = True
                elif mask & IN_IGNORED:
                    self._forget(wd)
                    changed = True
                else:
                    files = self.files.get(wd)
                    if files is not None:
                        self._file_event(files, os.fsdecode(name), mask)
                    if wd in self.interest or files is None:
                        interest = self.interest.get(wd, None)
                        if interest is None or not name or os.fsdecode(name) in interest:
                            changed = True

    def _file_event(self, files: dict[str, tuple[str, str, str]], name: str, mask: int) -> None:
        """Note an event about an index's file (see the module)."""
        if not name:  # about the watched file, or the watched folder itself
            for database, _, _ in files.values():
                self.written.add(database)
            return
        found = files.get(name)
        if found is None:
            return
        database, role, path = found
        if role != "wal":
            self.written.add(database)
        elif mask & IN_CREATE:
            self.wal_made.add(path)
        elif mask & (IN_DELETE | IN_MOVED_FROM):
            self.wal_gone.add(database)
        elif not mask & IN_ATTRIB:  # written, truncated, or moved into place
            self.written.add(database)

    def _forget(self, wd: int) -> None:
        """A watch the kernel removed (its path deleted, or unmounted): watched no more."""
        self.dropped += 1
        logs, files = wd in self.interest, self.files.pop(wd, None) is not None
        self.interest.pop(wd, None)
        for path in [p for p, w in self.wds.items() if w == wd]:
            del self.wds[path]
            if logs or not files:
                self.lost.append(path)
            if files:
                self.lost_files.append(path)
            inside = path.rstrip("/") + "/"
            self.above = {(d, n) for d, n in self.above if d != path and not d.startswith(inside)}

    def close(self) -> None:
        os.close(self.fd)


def local_devices() -> set[int] | None:
    """The devices (``st_dev``) of this process's mounts on a file system of
    :data:`LOCAL_FILE_SYSTEMS` (``/proc/self/mountinfo``); ``None`` when unknown."""
    found: set[int] = set()
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as mounts:
            for line in mounts:
                fields = line.split()
                if " - " not in line or len(fields) < 3:
                    continue
                fstype = line.split(" - ", 1)[1].split()[0]
                if fstype in LOCAL_FILE_SYSTEMS:
                    major, minor = fields[2].split(":")
                    found.add(os.makedev(int(major), int(minor)))
    except (OSError, ValueError):
        return None
    return found


@dataclass
class Freshness:
    """The resident's side of :mod:`agentlog.resident.fresh`: its watch,
    generation and clean tokens, and the index writes (:attr:`writes`) and
    settled tokens."""

    limit: int | None = None
    watch: Inotify | None = None
    generation: int = 0
    clean: dict[str, str] = field(default_factory=dict)
    covered: set[str] = field(default_factory=set)
    """Paths whose watches (the path and the folders above it) are in place."""
    broken: str = ""
    """Why nothing is vouched for any more (no inotify, a watch that could not be added)."""
    writes: int = 0
    """Index writes seen (any database): a settled token is one no write came after."""
    settled: set[str] = field(default_factory=set)
    """Clean tokens whose rows, as their digest says, no process wrote since."""
    indexes: dict[str, bool] = field(default_factory=dict)
    """Databases whose files are watched (:meth:`Inotify.cover_index`), each with
    whether its ``-wal`` has been empty (or absent) since a token of it was settled."""
    unwatched: dict[str, str] = field(default_factory=dict)
    """Databases whose files cannot be watched, and why: their tokens never settle."""
    framed: set[str] = field(default_factory=set)
    """Databases whose ``-wal`` held frames at a vouch, with no event of their
    files since: a vouch would not settle their tokens now."""
    vouches: int = 0
    """Vouches received (kept or not)."""

    def start(self) -> None:
        try:
            self.watch = Inotify(self.limit)
        except OSError as exc:
            self.broken = f"inotify: {exc}"
            return

    def drain(self) -> None:
        """Read the queued events (before a fork, before a vouch is weighed)."""
        if self.watch is None:
            return
        if self.watch.drain():
            self._bump()
        self._index_writes()
        if self.watch.lost_files:  # set up again at the next vouch
            self.watch.lost_files.clear()
            self.indexes.clear()
        lost = set(self.watch.lost)  # walked again at their next vouch: a file replaced alone,
        self.watch.lost.clear()  # else (a folder, a resolved path) every one
        if lost <= self.covered:
            self.covered -= lost
        elif lost:
            self.covered.clear()

    def _index_writes(self) -> None:
        """Count the index writes the last drain read (see the module)."""
        assert self.watch is not None
        watch = self.watch
        written = set(watch.written)
        written.update(db for db in watch.wal_gone if not self.indexes.get(db, False))
        written.update(watch.wal_of[wal] for wal in watch.wal_made if not _empty(wal))
        if watch.written or watch.wal_gone or watch.wal_made:
            self.framed.clear()
        watch.written.clear()
        watch.wal_gone.clear()
        watch.wal_made.clear()
        if written:
            self.writes += 1
            self.settled.clear()
            for db in written:
                if db in self.indexes:
                    self.indexes[db] = False

    def _bump(self) -> None:
        self.generation += 1
        self.clean.clear()
        self.settled.clear()

    def snapshot(self, sock_path: str, identity: tuple[object, ...]) -> Snapshot:
        return Snapshot(
            self.generation,
            dict(self.clean),
            sock_path,
            identity,
            self.watch is not None and not self.broken,
            self.writes,
            set(self.settled),
            {*self.unwatched, *self.framed},
        )

    def weigh(self, request: dict[str, object]) -> bool:
        """Keep a child's vouch (:func:`agentlog.resident.fresh.vouch`) if every
        path was watched since before that child's fork and nothing changed
        since; settle its token too if its index was watched since then, no one
        wrote it, and its ``-wal`` holds no frame; whether the vouch was kept.

        Why no frame: a commit to a WAL database writes its frames (an event),
        then makes them visible in the WAL index, in the ``-shm`` through a
        memory map (no event); a read that began between the two did not see
        that commit, though its events came before the child's fork.  When the
        ``-wal`` is empty now, and no event came since the fork, every byte the
        child read was in the database file, as it is now.

        A vouch with no paths (a child whose token was clean, that read the rows
        again and found the same digest) only settles the token."""
        self.drain()
        self.vouches += 1
        paths, token, digest = request.get("paths"), request.get("token"), request.get("digest")
        index = request.get("index")
        if self.watch is None or self.broken:
            return False
        if not (isinstance(paths, list) and isinstance(token, str) and isinstance(digest, str)):
            return False
        if not isinstance(index, str):
            return False
        watches = len(self.watch.wds)
        for path in paths:
            if not isinstance(path, str):
                return False
            if path in self.covered:
                continue
            why = self.watch.cover(path)
            if why:
                self.broken = why
                self.clean.clear()
                self.settled.clear()
                return False
            self.covered.add(path)
        new = len(self.watch.wds) != watches
        index_new = self._watch_index(index)  # even now: the next vouch can settle
        if new:
            self._bump()  # what the new watches would have seen before now is unknown
            return False
        if request.get("generation") != self.generation:
            return False
        if paths:
            self.clean[token] = digest
        elif self.clean.get(token) != digest:
            return False  # only a clean token settles without its paths
        if not index_new and index in self.indexes and request.get("writes") == self.writes:
            if all(_empty(p + "-wal") for p in {index, os.path.realpath(index)}):
                self.settled.add(token)
                self.indexes[index] = True
            else:
                self.framed.add(index)  # until an event of its files: no child vouches for it
        return True

    def _watch_index(self, index: str) -> bool:
        """Watch the files of the database ``index`` unless they are; whether any
        watch was added now (what it would have seen before is unknown) or it
        cannot be watched."""
        assert self.watch is not None
        if index in self.indexes:
            return False
        if index in self.unwatched:
            return True
        watches = len(self.watch.wds)
        why = self.watch.cover_index(index) if index else "no file (a database in memory)"
        if why:
            self.unwatched[index] = why
            return True
        self.indexes[index] = False
        return len(self.watch.wds) != watches

    def state(self) -> dict[str, object]:
        """What ``agentlog daemon status --json`` shows of it."""
        return {
            "watches": len(self.watch.wds) if self.watch is not None else 0,
            "generation": self.generation,
            "clean": len(self.clean),
            "overflows": self.watch.overflows if self.watch is not None else 0,
            "unavailable": self.broken,
            "writes": self.writes,
            "settled": len(self.settled),
            "vouches": self.vouches,
            "unwatched": dict(self.unwatched),
            "framed": len(self.framed),
        }

    def close_in_child(self) -> None:
        """A forked child's copy of the descriptor closed (the resident's stays)."""
        if self.watch is not None:
            os.close(self.watch.fd)


def _empty(path: str) -> bool:
    """Whether the file ``path`` is absent or an empty regular file."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size == 0
