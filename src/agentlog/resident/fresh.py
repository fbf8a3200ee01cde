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
   again and compares their digest (another process may have written the index);
5. the resident also watches the index's own files for writes by any process
   (:meth:`agentlog.resident.watch.Inotify.cover_index`); a vouch made with no
   index write since the child's fork (and the index watched since before it)
   *settles* the token, and a child whose token is settled does not read the
   rows at all (:func:`settled`).  Any index write unsettles every token (not
   the clean ones: the next child reads the rows and, finding the same digest,
   vouches again with no paths, which settles its token again); any change of
   step 3 forgets the settled tokens with the clean ones.

Not watched, hence never clean: paths on a file system other machines write
(NFS, SMB, FUSE: :data:`agentlog.resident.watch.LOCAL_FILE_SYSTEMS`), more paths
than ``AGENTLOG_DAEMON_WATCHES`` (or than inotify's limit), a resident without
inotify; and never settled, an index whose files cannot be watched so, or
whose ``-wal`` holds frames (a connection held open, as ``serve``'s: see
:meth:`agentlog.resident.watch.Freshness.weigh`): its rows are read by every
child.  A sync with ``--root``, ``--full``, or outside a resident's child, does
what it always did.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Snapshot:
    """What a child of a resident knows of its freshness (taken at the fork)."""

    generation: int
    clean: dict[str, str]
    sock_path: str
    identity: tuple[object, ...]
    watching: bool
    """Whether the resident can vouch at all (it has a working watch)."""
    writes: int = 0
    """The index writes the resident had seen at the fork."""
    settled: set[str] = field(default_factory=set)
    """Clean tokens whose rows no process wrote since they were read."""
    unsettled: set[str] = field(default_factory=set)
    """Databases a vouch cannot settle a token of now: their files cannot be
    watched, or their ``-wal`` held frames at a vouch and nothing happened to
    their files since."""


CURRENT: Snapshot | None = None
"""Set in a child of a resident (:meth:`agentlog.resident.server.Resident._become`);
``None`` in any other process."""


def vouched(token: str) -> str | None:
    """The digest of the rows a check of ``token`` read, if the resident vouches
    that no path it looked at changed since; else ``None`` (make the whole check)."""
    return CURRENT.clean.get(token) if CURRENT is not None else None


def settled(token: str) -> bool:
    """Whether the resident vouches that no path a check of ``token`` looked at
    changed, and that no process wrote the index, since that check read the
    rows (then the rows need not be read again)."""
    return CURRENT is not None and token in CURRENT.settled and token in CURRENT.clean


def settles(index: str) -> bool:
    """Whether a vouch could settle a token of the database ``index`` (else a
    child whose token is clean does not vouch again)."""
    return CURRENT is not None and CURRENT.watching and index not in CURRENT.unsettled


def serving() -> bool:
    """Whether this process is the child of a resident that can vouch (a check it
    passes is worth telling)."""
    return CURRENT is not None and CURRENT.watching


def vouch(token: str, digest: str, paths: list[str], index: str) -> None:
    """Tell the resident that the whole check of ``token`` passed at this child's
    generation, having read rows of ``digest`` from the database ``index`` and
    looked at ``paths`` (none: a clean token's rows read again, of the same
    digest).  Waits for its answer (a command run next is then served knowing
    it); a failure is only a lost shortcut."""
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
            "writes": CURRENT.writes,
            "paths": paths,
            "index": index,
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
