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
"""

from __future__ import annotations

import ctypes
import errno
import os
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
        self.lost: list[str] = []
        """Paths whose watch the kernel dropped since :attr:`lost` was emptied."""
        """(folder, name) watched for that name (and so every folder above it)."""

    def watch(self, path: str, names: set[str] | None) -> int:
        """Watch ``path`` (a folder or a file, links followed) for every event
        (``names`` ``None``) or for those about ``names`` in it; 0, or the error
        number of why not (``ENOSPC``: over the limit)."""
        wd = self.wds.get(path)
        if wd is None:
            if self.limit is not None and len(self.wds) >= self.limit:
                return errno.ENOSPC
            wd = self._libc.inotify_add_watch(self.fd, os.fsencode(path), MASK)
            if wd < 0:
                return ctypes.get_errno() or errno.EIO
            self.wds[path] = wd  # the same inode by two paths: one wd, interests merged
        kept = self.interest.get(wd, set())
        if kept is None or names is None:
            self.interest[wd] = None
        else:
            self.interest[wd] = kept | names
        return 0

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
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return ""
        except OSError as exc:
            return f"{path}: {exc.strerror}"
        if self.devices is None or st.st_dev not in self.devices:
            return f"{path}: not on a local file system"
        error = self.watch(path, names)
        if error == errno.ENOENT:
            return ""  # removed since the stat: its name's event is on the folder above
        if error == errno.ENOSPC and self.limit is not None and len(self.wds) >= self.limit:
            return f"more than {self.limit} watches ({WATCHES_ENV})"
        return f"{path}: {os.strerror(error)}" if error else ""

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
                    interest = self.interest.get(wd, None)
                    if interest is None or not name or os.fsdecode(name) in interest:
                        changed = True

    def _forget(self, wd: int) -> None:
        """A watch the kernel removed (its path deleted, or unmounted): watched no more."""
        self.dropped += 1
        self.interest.pop(wd, None)
        for path in [p for p, w in self.wds.items() if w == wd]:
            del self.wds[path]
            self.lost.append(path)
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
    generation and clean tokens."""

    limit: int | None = None
    watch: Inotify | None = None
    generation: int = 0
    clean: dict[str, str] = field(default_factory=dict)
    covered: set[str] = field(default_factory=set)
    """Paths whose watches (the path and the folders above it) are in place."""
    broken: str = ""
    """Why nothing is vouched for any more (no inotify, a watch that could not be added)."""

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
        lost = set(self.watch.lost)  # walked again at their next vouch: a file replaced alone,
        self.watch.lost.clear()  # else (a folder, a resolved path) every one
        if lost <= self.covered:
            self.covered -= lost
        elif lost:
            self.covered.clear()

    def _bump(self) -> None:
        self.generation += 1
        self.clean.clear()

    def snapshot(self, sock_path: str, identity: tuple[object, ...]) -> Snapshot:
        return Snapshot(
            self.generation, dict(self.clean), sock_path, identity, self.watch is not None and not self.broken
        )

    def weigh(self, request: dict[str, object]) -> bool:
        """Keep a child's vouch (:func:`agentlog.resident.fresh.vouch`) if every
        path was watched since before that child's fork and nothing changed
        since; whether it was kept."""
        self.drain()
        paths, token, digest = request.get("paths"), request.get("token"), request.get("digest")
        if self.watch is None or self.broken:
            return False
        if not (isinstance(paths, list) and isinstance(token, str) and isinstance(digest, str)):
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
                return False
            self.covered.add(path)
        if len(self.watch.wds) != watches:
            self._bump()  # what the new watches would have seen before now is unknown
            return False
        if request.get("generation") != self.generation:
            return False
        self.clean[token] = digest
        return True

    def state(self) -> dict[str, object]:
        """What ``agentlog daemon status --json`` shows of it."""
        return {
            "watches": len(self.watch.wds) if self.watch is not None else 0,
            "generation": self.generation,
            "clean": len(self.clean),
            "overflows": self.watch.overflows if self.watch is not None else 0,
            "unavailable": self.broken,
        }

    def close_in_child(self) -> None:
        """A forked child's copy of the descriptor closed (the resident's stays)."""
        if self.watch is not None:
            os.close(self.watch.fd)
