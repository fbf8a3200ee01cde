"""A resident agentlog: commands that do not pay for Python's start-up (#17 parts 1 and 6).

A warm report spends ~0.11 s importing Python's and agentlog's libraries before
its own ~0.03 s of work.  A *resident* process (:mod:`agentlog.resident.server`)
imports them once and waits on a Unix socket; each command is then served by a
child the resident forks (the "zygote" pattern of Android, nailgun's for the
JVM), which runs the very same entry point, :func:`agentlog._console.main`, with
the caller's argv, environment, working folder, umask and its own standard
streams (passed over the socket, ``SCM_RIGHTS``), so the answer is the one an
in-process run gives.  The ``agentlog`` command first runs the thin client
(:mod:`agentlog.resident.client`, a few builtin modules), which falls back to the
ordinary in-process run whenever no resident can serve it.

Lifecycle: a command that finds no resident runs in-process and, when it exits,
starts one (:mod:`agentlog.resident.spawn`) — at a terminal, or always with
``AGENTLOG_DAEMON=1`` — detached from the caller (``setsid``, standard streams
on ``/dev/null``).  It exits after :data:`agentlog.resident.paths.IDLE_SECONDS`
without a command, or when a source file it imported changed.
Its inotify watch (:mod:`agentlog.resident.watch`) lets a child skip the
``stat`` of every log when nothing changed (:mod:`agentlog.resident.fresh`).
``AGENTLOG_NO_DAEMON=1`` turns all of it off; ``agentlog daemon status|stop``
shows and stops residents.  Linux only (``SO_PEERCRED``, pidfds, ``prctl``).

This package's ``__init__`` imports nothing: the client starts from it.
"""
