"""A no-change sync without a ``stat`` per file: the resident vouches that nothing changed.

The no-change check of a sync (:func:`agentlog.index.memo.unchanged`) ``stat``\\s
every path the last discovery looked at and every known source.  In a child of
a resident it can skip those ``stat``\\s when the resident's inotify watch
(:mod:`agentlog.resident.watch`) saw no change since another child made the
whole check and found nothing changed:

1. a child that made the whole check, and passed it, tells the resident
   (:func:`vouch`, a connection of its own to the resident's socket) the
   *token* of what it checked (the index file and the memo's bytes), the
   *digest* of the rows the check read, the *generation* the resident was at
   when it forked the child, and every path the check looked at;
2. the resident (:class:`agentlog.resident.watch.Freshness`) watches each path — the path itself, and
   each folder above it for that one name, so a parent renamed or replaced
   counts too — and keeps the token as *clean* only if every path was already
   watched and no event came since that generation (a watch added now bumps the
   generation: what it would have seen before is unknown);
3. any event of interest, a lost event (queue overflow), a dropped watch bumps
   the generation and forgets every clean token;
4. the resident reads the queue just before it forks a child (the kernel queues
   an event in the system call that makes the change: a change made before the
   command started is seen), and the child inherits the generation and the clean
   tokens (:data:`CURRENT`); a child whose token is clean only reads the rows
   again and compares their digest (another process may have written the index).

Not watched, hence never clean: paths on a file system other machines write
(NFS, SMB, FUSE: :data:`agentlog.resident.watch.LOCAL_FILE_SYSTEMS`), more paths
than ``AGENTLOG_DAEMON_WATCHES`` (or than inotify's limit), a resident without
inotify.  A sync with ``--root``, ``--full``, or outside a resident's child, does
what it always did.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Snapshot:
    """What a child of a resident knows of its freshness (taken at the fork)."""

    generation: int
    clean: dict[str, str]
    sock_path: str
    identity: tuple[object, ...]
    watching: bool
    """Whether the resident can vouch at all (it has a working watch)."""


CURRENT: Snapshot | None = None
"""Set in a child of a resident (:meth:`agentlog.resident.server.Resident._become`);
``None`` in any other process."""


def vouched(token: str) -> str | None:
    """The digest of the rows a check of ``token`` read, if the resident vouches
    that no path it looked at changed since; else ``None`` (make the whole check)."""
    return CURRENT.clean.get(token) if CURRENT is not None else None


def serving() -> bool:
    """Whether this process is the child of a resident that can vouch (a check it
    passes is worth telling)."""
    return CURRENT is not None and CURRENT.watching


def vouch(token: str, digest: str, paths: list[str]) -> None:
    """Tell the resident that the whole check of ``token`` passed at this child's
    generation, having read rows of ``digest`` and looked at ``paths``.  Waits for
    its answer (a command run next is then served knowing it); a failure is only
    a lost shortcut."""
    if CURRENT is None:
        return
    import marshal
    import socket

    data = marshal.dumps(
        {
            "op": "fresh",
            "identity": CURRENT.identity,
            "token": token,
            "digest": digest,
            "generation": CURRENT.generation,
            "paths": paths,
        }
    )
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(5)
            sock.connect(CURRENT.sock_path)
            sock.sendall(len(data).to_bytes(4, "little") + data)
            sock.recv(16)
    except OSError:
        return
