"""The resident: agentlog's libraries imported once, a child forked for each command.

Started by :mod:`agentlog.resident.spawn` as ``python -c`` with the caller's
``sys.path``, it imports what commands use (:data:`PRELOAD`), notes the files it
imported (:func:`_sources`), takes its lock and listens.  It never opens a
database nor starts a thread, so a fork copies no SQLite connection and no lock
held by another thread (sqlite.org/howtocorrupt.html §2.6); before each fork it
checks there is still one thread.

A request is served only when the client runs as this user (``SO_PEERCRED``)
with the same group list, root folder and mount namespace, shares this
process's :func:`agentlog.resident.paths.identity`, and no file the resident
imported has changed since (an editable install being edited: the resident then
refuses, stops listening and exits once its children are done; the client runs
the command itself and starts a new resident at exit).

The child becomes the client's process as far as a command can tell
(:func:`_become`): the client's working folder, umask, environment (and time
zone), niceness, argv, ``__main__`` package (click's program name), signal
dispositions, and its standard streams rebuilt on the client's descriptors as
the interpreter builds them at start-up (``Python/pylifecycle.c``,
``create_stdio``).  It then runs the client's own entry point (:func:`_entry`)
and ends as
the interpreter's exit would (:func:`_finish`: threads joined, ``atexit``,
connections closed, streams flushed), its status reaped here and sent to the client; its CPU time (``wait4``) is added
to :attr:`Resident.children_cpu`, which ``agentlog daemon status --json`` shows
beside the resident's own (``cpu``).  It dies with the resident (``PR_SET_PDEATHSIG``), and is killed
when its client goes away without a word.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import fcntl
import importlib
import io
import marshal
import os
import selectors
import signal
import socket
import sqlite3
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, NoReturn

from agentlog.resident import fresh, paths
from agentlog.resident.watch import Freshness, Inotify, watch_limit

PRELOAD = (
    "agentlog.cli.commands",
    "agentlog.cli.usage",
    "agentlog.cli.upkeep",
    "agentlog.cli.indexing",
    "agentlog.cli.render",
    "agentlog.cli.consoles",
    "agentlog.service.usage",
    "agentlog.service.grouped",
    "agentlog.service.reports",
    "agentlog.service.sessions",
    "agentlog.service.transcript",
    "agentlog.service.search",
    "agentlog.service.index",
    "agentlog.service.first_run",
    "agentlog.index.sync",
    "agentlog.index.prices",
    "agentlog.adapters._common",
    "agentlog.index.memo",
    "agentlog.index.usage",
    "agentlog.index.grouped",
    "agentlog.index.queries",
    "agentlog.index.search",
    "agentlog.index.store",
    "agentlog.usage.report",
    "agentlog.usage.resolve",
    "agentlog.load",
    "agentlog.worker",
    "tzlocal",
    "rich.console",
    "rich.table",
    "difflib",
)
"""Modules imported before the first fork (beyond the command line and the
adapters, which :func:`agentlog._console.main` loads): what ``usage``,
``sessions``, ``show``, ``search`` and ``index`` import as they run (``difflib``:
click's parser first tries a short option such as ``-z`` as a long one, and the
``NoSuchOption`` it makes and drops imports it for its suggestions).  Each is
only imported, never called, so nothing it would read from the caller's
environment is read here."""

_ACCEPTED = b"A"
_REFUSED = b"R"
_EXITED = b"X"
_PR_SET_PDEATHSIG = 1


@dataclass
class _Child:
    pid: int
    pidfd: int
    conn: socket.socket | None


@dataclass
class Resident:
    """One resident's state: its socket, lock, children and the files it imported."""

    sock_path: str
    identity: tuple[object, ...] = ()
    sources: dict[str, tuple[int, int, int] | None] = field(default_factory=dict)
    pid: int = 0
    started: float = 0.0
    served: int = 0
    stopping: bool = False
    children: dict[int, _Child] = field(default_factory=dict)
    selector: selectors.BaseSelector | None = None
    listener: socket.socket | None = None
    lock: int = -1
    sock_ino: int = 0
    idle: float = paths.IDLE_SECONDS
    children_cpu: float = 0.0
    freshness: Freshness = field(default_factory=Freshness)
    code: Inotify | None = None
    """The folders of :attr:`sources`, watched for their names: a request with no
    event since checks no file (else each is ``stat``-ed, as without a watch)."""

    def serve(self) -> dict[str, Any] | None:
        """Listen until idle; ``None`` in the resident when it is done, the request
        in a child the resident forked (which then runs the command)."""
        self.pid = os.getpid()
        self.started = time.time()
        try:
            os.close(os.pidfd_open(self.pid))  # Linux 5.3: how each child is watched
        except OSError:
            return None
        if not self._take_lock():
            return None
        listener = self._listen()
        if listener is None:
            return None
        self.selector = selectors.DefaultSelector()
        self.selector.register(listener, selectors.EVENT_READ, None)
        self.code = _code_watch(list(_sources()))  # watched first: an edit meanwhile is an event
        self.sources = _sources()
        self.freshness.start()
        last = time.monotonic()
        while not (self.stopping and not self.children):
            timeout = None if self.children else last + self.idle - time.monotonic()
            if timeout is not None and timeout <= 0:
                break
            events = self.selector.select(timeout)
            if events:
                last = time.monotonic()
            for key, _ in events:
                if key.fileobj is self.listener:
                    request = self._accept()
                    if request is not None:
                        return request  # the child
                elif isinstance(key.data, _Child):
                    self._event(key.data, key.fileobj)
        self._close_listener()
        return None

    # -- the resident's side ----------------------------------------------

    def _take_lock(self) -> bool:
        lock = os.open(paths.lock_path(self.sock_path), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(lock)
            return False  # another resident of this identity lives
        os.ftruncate(lock, 0)
        os.write(lock, str(self.pid).encode())
        self.lock = lock
        return True

    def _listen(self) -> socket.socket | None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.sock_path)  # a dead resident's: the lock proves no one listens
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(self.sock_path)
            os.chmod(self.sock_path, 0o600)
            self.sock_ino = os.stat(self.sock_path).st_ino
            listener.listen(64)
        except OSError:
            listener.close()
            return None
        self.listener = listener
        return listener

    def _close_listener(self) -> None:
        """Stop listening: the socket removed (if still this resident's)."""
        if self.listener is None:
            return
        with contextlib.suppress(OSError):
            if os.stat(self.sock_path).st_ino == self.sock_ino:  # not a newer resident's
                os.unlink(self.sock_path)
        if self.selector is not None:
            self.selector.unregister(self.listener)
        self.listener.close()
        self.listener = None

    def _accept(self) -> dict[str, Any] | None:
        assert self.listener is not None
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return None
        fds: list[int] = []
        try:
            conn.settimeout(5)
            peer = _peer(conn)
            request, fds = _read_request(conn)
            reason = self._refusal(peer, request, len(fds))
            if reason:
                conn.sendall(_REFUSED + reason.encode())
                return None
            if request.get("op") in ("status", "stop"):
                self._manage(conn, request)
                return None
            if request.get("op") == "fresh":
                conn.sendall(b"K" if self.freshness.weigh(request) else b"N")
                return None
            return self._fork(conn, request, fds)
        except (OSError, ValueError, EOFError, TypeError, KeyError) as exc:
            with contextlib.suppress(OSError):
                conn.sendall(_REFUSED + f"bad request: {exc}".encode())
            return None
        finally:
            if os.getpid() == self.pid:
                for fd in fds:
                    os.close(fd)
                if not any(c.conn is conn for c in self.children.values()):
                    conn.close()

    def _refusal(self, peer: tuple[int, int, int], request: dict[str, Any], fds: int) -> str:
        """Why ``request`` from the process ``peer`` (pid, uid, gid) is not served, or ``""``."""
        pid, uid, _ = peer
        if uid != os.getuid():
            return "another user"
        if request.get("op") in ("status", "stop"):
            return ""
        if request.get("identity") != self.identity:
            return "another agentlog (executable, sys.path, version or start-up environment)"
        if request.get("op") == "fresh":
            return ""
        if self.stopping:
            return "stopping"
        if request.get("gid") != os.getgid() or request.get("groups") != sorted(os.getgroups()):
            return "other groups"
        if not _same_root(pid):
            return "another root folder or mount namespace"
        if request.get("nice", 0) < os.getpriority(os.PRIO_PROCESS, 0):
            return "a lower niceness than the resident's"
        if fds != 4:
            return "file descriptors missing"
        if self._code_changed():
            self.stopping = True
            self._close_listener()
            return "source files changed"
        if "threading" in sys.modules and sys.modules["threading"].active_count() != 1:
            self.stopping = True  # never fork beside a thread (should not happen: none is started)
            self._close_listener()
            return "a thread is running"
        return ""

    def _manage(self, conn: socket.socket, request: dict[str, Any]) -> None:
        """Answer ``agentlog daemon status`` or ``stop``."""
        if request["op"] == "stop":
            self.stopping = True
            self._close_listener()
        status = {
            "pid": self.pid,
            "executable": sys.executable,
            "version": self.identity[2] if self.identity else "",
            "started": self.started,
            "served": self.served,
            "running": len(self.children),
            "socket": self.sock_path,
            "idle_seconds": self.idle,
            "stopping": self.stopping,
            "cpu": time.process_time(),
            "children_cpu": self.children_cpu,
            "watch": self.freshness.state(),
        }
        conn.sendall(marshal.dumps(status))

    def _code_changed(self) -> bool:
        """Whether a file the resident imported changed (``stat``-ed only after an
        event in their folders, or without a watch)."""
        if self.code is not None and not self.code.drain():
            return False
        return _sources(self.sources) != self.sources

    def _fork(self, conn: socket.socket, request: dict[str, Any], fds: list[int]) -> dict[str, Any] | None:
        self.freshness.drain()  # every change made before the command started is queued by now
        # the client's signals held until the child has its handlers
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _FORWARDED)
        try:
            pid = os.fork()
        except OSError as exc:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            conn.sendall(_REFUSED + f"fork: {exc}".encode())
            return None
        if pid == 0:
            try:
                self._become(conn, request, fds)
            except BaseException:  # nothing has run: the client, told nothing, runs the command itself
                os._exit(1)
            conn.sendall(_ACCEPTED)  # the command starts now
            conn.close()
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            return request
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        self.served += 1
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:  # out of descriptors: the child is not let run unwatched
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise
        child = _Child(pid, pidfd, conn)
        self.children[pidfd] = child
        assert self.selector is not None
        self.selector.register(pidfd, selectors.EVENT_READ, child)
        conn.setblocking(False)
        self.selector.register(conn, selectors.EVENT_READ, child)
        return None

    def _event(self, child: _Child, fileobj: object) -> None:
        """The child ended (its pidfd is readable), or its client spoke or left."""
        assert self.selector is not None
        if fileobj == child.pidfd:
            _, status, usage = os.wait4(child.pid, 0)
            self.children_cpu += usage.ru_utime + usage.ru_stime
            self.selector.unregister(child.pidfd)
            os.close(child.pidfd)
            del self.children[child.pidfd]
            if child.conn is not None:
                self.selector.unregister(child.conn)
                with contextlib.suppress(OSError):
                    child.conn.setblocking(True)
                    child.conn.settimeout(1)
                    child.conn.sendall(_EXITED + status.to_bytes(4, "little", signed=True))
                child.conn.close()
            return
        assert child.conn is not None
        try:
            data = child.conn.recv(64)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:  # the client is gone: so is its command
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(child.pidfd, signal.SIGKILL)
            self.selector.unregister(child.conn)
            child.conn.close()
            child.conn = None
            return
        for sig in data:
            if sig in _FORWARDED or sig in (signal.SIGSTOP, signal.SIGCONT):
                with contextlib.suppress(OSError):
                    signal.pidfd_send_signal(child.pidfd, sig)

    # -- the child's side ----------------------------------------------------

    def _become(self, conn: socket.socket, request: dict[str, Any], fds: list[int]) -> None:
        """Turn this fresh child into the client's process (see the module)."""
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != self.pid:
            os._exit(1)  # the resident is already gone: the client runs the command itself
        for child in self.children.values():
            os.close(child.pidfd)
            if child.conn is not None:
                child.conn.close()
        if self.selector is not None:
            self.selector.close()
        if self.listener is not None:
            self.listener.close()
        os.close(self.lock)
        self.freshness.close_in_child()
        if self.code is not None:
            os.close(self.code.fd)
        fresh.CURRENT = self.freshness.snapshot(self.sock_path, self.identity)
        cwd, stdin, stdout, stderr = fds
        os.fchdir(cwd)
        for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
            os.dup2(fd, target)
        for fd in fds:
            os.close(fd)
        os.umask(request["umask"])
        os.environ.clear()
        for key, value in request["env"].items():
            os.environb[key] = value
        time.tzset()
        if request["nice"] != os.getpriority(os.PRIO_PROCESS, 0):
            os.setpriority(os.PRIO_PROCESS, 0, request["nice"])
        sys.argv = list(request["argv"])
        sys.orig_argv = list(request["orig_argv"])
        _standard_streams(request["streams"], unbuffered=request.get("unbuffered", False))
        _signals(set(request["ignored"]))
        importlib.invalidate_caches()  # files added since the resident's imports are found
        conn.setblocking(True)


_FORWARDED = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
_LIBC = ctypes.CDLL(None, use_errno=True)


def _peer(conn: socket.socket) -> tuple[int, int, int]:
    """The connected process's pid, uid and gid (``SO_PEERCRED``, socket(7))."""
    cred = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    return (
        int.from_bytes(cred[0:4], sys.byteorder),
        int.from_bytes(cred[4:8], sys.byteorder),
        int.from_bytes(cred[8:12], sys.byteorder),
    )


def _read_request(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """The client's request and the descriptors that came with it."""
    data, fds, flags, _ = socket.recv_fds(conn, 1 << 16, 8)
    if flags & socket.MSG_CTRUNC:
        for fd in fds:
            os.close(fd)
        raise ValueError("descriptors truncated")
    while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "little"):
        more = conn.recv(1 << 16)
        if not more:
            raise EOFError("request cut short")
        data += more
    request = marshal.loads(data[4 : 4 + int.from_bytes(data[:4], "little")])
    if not isinstance(request, dict):
        raise ValueError("not a request")
    return request, list(fds)


def _same_root(pid: int) -> bool:
    """Whether the process ``pid`` sees the same root folder and mounts as this one."""
    try:
        mine, theirs = os.stat("/"), os.stat(f"/proc/{pid}/root")
        return (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino) and os.readlink(
            "/proc/self/ns/mnt"
        ) == os.readlink(f"/proc/{pid}/ns/mnt")
    except OSError:
        return False


def _sources(
    known: dict[str, tuple[int, int, int] | None] | None = None,
) -> dict[str, tuple[int, int, int] | None]:
    """Each imported module's file (or those of ``known``) with its modification
    time, size and inode (``None``: gone)."""
    names = (
        known
        if known is not None
        else {
            f: None for m in list(sys.modules.values()) if isinstance(f := getattr(m, "__file__", None), str)
        }
    )
    found: dict[str, tuple[int, int, int] | None] = {}
    for name in names:
        try:
            st = os.stat(name)
        except OSError:
            found[name] = None
        else:
            found[name] = (st.st_mtime_ns, st.st_size, st.st_ino)
    return found


def _code_watch(files: list[str]) -> Inotify | None:
    """An inotify watch of the folders of ``files`` for their names (and of each
    folder above them), or ``None`` when one cannot be set up."""
    try:
        watch = Inotify()
    except OSError:
        return None
    for name in files:
        if watch.cover(name, whole=False):
            os.close(watch.fd)
            return None
    return watch


def _standard_streams(streams: list[tuple[str, str]], unbuffered: bool) -> None:
    """``sys.stdin``/``stdout``/``stderr`` made on descriptors 0, 1, 2 as Python
    makes them at start-up (``create_stdio``): buffered (unless ``-u``), line
    buffered on a terminal (stderr always), ``\\n`` newlines, the client's
    encoding and error handler."""
    made = []
    for fd, (name, mode), (encoding, errors) in zip(
        (0, 1, 2), (("<stdin>", "r"), ("<stdout>", "w"), ("<stderr>", "w")), streams, strict=True
    ):
        buffering = 0 if unbuffered and mode == "w" else -1
        buffer: Any = open(fd, mode + "b", buffering, closefd=False)  # noqa: SIM115  # the process's stream
        raw = buffer.raw if buffering else buffer
        raw.name = name
        line_buffering = not unbuffered and (raw.isatty() or fd == 2)
        stream = io.TextIOWrapper(
            buffer, encoding, errors, newline="\n", line_buffering=line_buffering, write_through=unbuffered
        )
        stream.mode = mode  # type: ignore[misc]
        made.append(stream)
    sys.stdin, sys.stdout, sys.stderr = made
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = made  # type: ignore[misc]


def _signals(ignored: set[int]) -> None:
    """Signal dispositions as the client's: those it ignored ignored, the rest at
    their defaults, SIGINT raising ``KeyboardInterrupt`` (Python's own)."""
    for sig in range(1, signal.NSIG):
        if sig in (signal.SIGKILL, signal.SIGSTOP):
            continue
        with contextlib.suppress(OSError, ValueError):
            if sig in ignored:
                signal.signal(sig, signal.SIG_IGN)
            elif sig == signal.SIGINT:
                signal.signal(sig, signal.default_int_handler)
            elif signal.getsignal(sig) != signal.SIG_DFL:
                signal.signal(sig, signal.SIG_DFL)


def preload() -> None:
    """Import the command line, the adapters and :data:`PRELOAD`, as the entry
    point does (collector paused, then frozen)."""
    import gc

    from agentlog.collector import gc_paused

    with gc_paused():
        from agentlog.adapters import registered
        from agentlog.cli import main as _cli  # noqa: F401

        registered()
        for name in PRELOAD:
            with contextlib.suppress(ImportError):  # an optional library absent
                importlib.import_module(name)
        gc.freeze()


def main() -> None:
    """The resident's process (``python -c`` of :data:`agentlog.resident.spawn.BOOT`):
    serve until idle; in each child, run the command."""
    os.chdir("/")
    preload()
    base = paths.folder()
    if not paths.safe_folder(base, create=True):
        return
    ident = paths.identity()
    resident = Resident(
        paths.socket_path(ident, base),
        ident,
        idle=paths.idle_seconds(os.environ),
        freshness=Freshness(limit=watch_limit(os.environ)),
    )
    request = resident.serve()
    if request is None:
        return
    del resident
    _entry(request["main"])


def _entry(main: tuple[str | None, str | None, str | None]) -> NoReturn:
    """Run the client's entry point as the interpreter ran it — ``python -m
    agentlog`` through :mod:`runpy`, the ``agentlog`` script as ``__main__`` — so
    click names the program alike and a traceback shows the same frames (an
    uncaught exception is printed without this function's frame), then end as
    the interpreter would (:func:`_finish`)."""
    import agentlog._console

    agentlog._console.OFFER = False
    _, spec_name, file = main
    code, interrupted = 0, False
    try:
        if spec_name == "agentlog.__main__":
            import runpy

            runpy._run_module_as_main("agentlog", alter_argv=False)  # type: ignore[attr-defined]
        elif file is not None:
            import builtins
            import types

            module = types.ModuleType("__main__")
            module.__file__ = file
            module.__builtins__ = builtins  # type: ignore[attr-defined]
            module.__cached__ = None  # type: ignore[attr-defined]
            sys.modules["__main__"] = module
            with open(file, "rb") as script:
                code_object = compile(script.read(), file, "exec")
            exec(code_object, module.__dict__)
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException as exc:
        tb = exc.__traceback__.tb_next if exc.__traceback__ else None
        sys.excepthook(type(exc), exc.with_traceback(tb), tb)
        code, interrupted = 1, isinstance(exc, KeyboardInterrupt)
    _finish(code, interrupted)


def _exit_code(exc: SystemExit) -> int:
    """The status ``exc`` ends a process with (``_Py_HandleSystemExit``: ``None``
    0, an int itself, anything else printed to stderr and 1)."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    with contextlib.suppress(Exception):
        if sys.stderr is not None:
            sys.stderr.write(f"{exc.code}\n")
    return 1


def _open_connections() -> list[sqlite3.Connection]:
    """The SQLite connections still open (found among the objects the garbage
    collector tracks: those the command made, the resident's being frozen), which
    the interpreter's teardown would close (the last to close checkpoints the
    WAL and removes it).  ``sqlite3.Connection`` takes no weak reference, and a
    strong one kept from the start would keep open what the command let go."""
    import gc

    return [obj for obj in gc.get_objects() if type(obj) is sqlite3.Connection]


def _finish(code: int, interrupted: bool) -> NoReturn:
    """End the command's process as ``Py_FinalizeEx`` would, what a process can
    see of it: threads joined, ``atexit`` handlers run, SQLite connections
    closed, stdout and stderr flushed (a failure: status 120, stdout's reported
    as "Exception ignored in"), death by SIGINT after an uncaught Ctrl-C
    (``exit_sigint``).  The rest — tearing down every module the resident
    imported — is skipped with ``os._exit``: in a forked child it costs ~40 ms
    of copy-on-write page faults, for nothing a caller can see once the
    connections are closed (an object kept alive to the end whose finaliser
    writes a file would differ: none is known in agentlog)."""
    threading = sys.modules.get("threading")
    if threading is not None:
        threading._shutdown()
    atexit._run_exitfuncs()
    for conn in _open_connections():
        with contextlib.suppress(Exception):
            conn.close()
    if not _flush_standard_streams():
        code = 120
    if interrupted:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 130
    os._exit(code if -(2**31) <= code < 2**31 else 255)


def _flush_standard_streams() -> bool:
    """``flush_std_files`` of ``Python/pylifecycle.c``: whether both flushed."""
    ok = True
    out, err = sys.stdout, sys.stderr
    if out is not None and not getattr(out, "closed", False):
        try:
            out.flush()
        except Exception as exc:
            ok = False
            with contextlib.suppress(Exception):  # as sys.unraisablehook prints it
                if err is not None:
                    err.write(f"Exception ignored in: {out!r}\n")
                    err.write("".join(traceback.format_exception_only(type(exc), exc)))
    if err is not None and not getattr(err, "closed", False):
        try:
            err.flush()
        except Exception:
            ok = False
    return ok
