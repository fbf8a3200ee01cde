"""The thin client: hand this command to a resident, or say why it runs in-process.

It imports only builtin modules (``_socket``, ``_signal``, ``marshal``) and
:mod:`agentlog.resident.paths`, so trying costs ~1 ms.  Any failure before the
resident's child has started — no resident, a refused or unreadable socket, a
resident of other code — returns a reason and the command runs in-process as
it always did; nothing is printed.

The exchange (one Unix stream connection):

1. the client sends a 4-byte little-endian length and a ``marshal``-ed request
   (argv, environment, umask, identity, stream encodings, ``__main__``'s
   package), with its working folder and standard streams 0, 1, 2 as file
   descriptors (``SCM_RIGHTS``);
2. the resident answers ``R`` and a reason (refused: run in-process), or the
   child it forked answers ``A`` (accepted: the command has started);
3. every SIGINT, SIGTERM or SIGHUP the client receives is sent on as one byte
   (the signal's number), which the resident delivers to the child; Ctrl-Z
   (SIGTSTP) stops the child (SIGSTOP) and then the client, and continues the
   child when the client is continued;
4. the resident sends ``X`` and the child's 4-byte wait status when it ends; the
   client exits with that code, or by that signal.

If the connection ends after ``A`` without a status, the resident was killed
and took its child with it (``PR_SET_PDEATHSIG``): the client says so on
stderr and ends by SIGKILL, as the command's process did.
"""

from __future__ import annotations

import _socket
import os
import sys

from agentlog.resident import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal as _signal  # `_signal` (what runs) has no stubs; `signal` re-exports it
    from typing import NoReturn
else:
    import _signal  # not `signal`: it imports enum

IN_PROCESS_COMMANDS = frozenset({"serve", "watch", "mcp", "tail", "daemon"})
"""Commands that always run in-process: the viewer, the live board, the MCP
server and ``tail`` (a follow mode) run for minutes or hours (a resident gains them
nothing, and they would hold a child of it that long); ``daemon`` manages the
residents themselves.  Any argument equal to one of these names keeps the
command in-process (a false match only costs the start-up)."""

FORWARDED = (2, 15, 1)  # SIGINT, SIGTERM, SIGHUP (numbers: `signal` would import enum)
_SIGSTOP, _SIGTSTP, _SIGCONT = 19, 20, 18


def try_resident() -> str:
    """Run this process's command in a resident and exit as it did, or return why
    not: ``"off"`` (``AGENTLOG_NO_DAEMON``), ``"absent"`` (no resident listens:
    one may be started at exit), or another reason (the command runs in-process
    and no resident is started)."""
    if os.environ.get(paths.OFF_ENV, "") not in ("", "0"):
        return "off"
    reason = _unservable()
    if reason:
        return reason
    ident = paths.identity()
    base = paths.folder()
    if not paths.safe_folder(base):
        return "absent" if not os.path.lexists(base) else "unsafe folder"
    sock_path = paths.socket_path(ident, base)
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        try:
            sock.connect(sock_path)
        except (FileNotFoundError, ConnectionRefusedError):
            return "absent"
        except OSError as exc:
            return f"connect: {exc}"
        if not _peer_is_us(sock):
            return "socket of another user"
        return _run(sock, ident)
    finally:
        sock.close()


def _unservable() -> str:
    """Why this process's command is not handed over, or ``""``."""
    if sys.platform != "linux":
        return "not linux"
    argv = sys.argv[1:]
    if "--debug" in argv:
        return "--debug"  # its tracebacks show this process's frames
    if IN_PROCESS_COMMANDS.intersection(argv):
        return "long-running command"
    orig = sys.orig_argv
    started = (orig[1:2] == ["-m"] and orig[2:3] == ["agentlog"]) or (
        orig[1:2] and not orig[1].startswith("-")
    )
    if not started:
        return "interpreter options"  # -c, -X, -I...: the resident would run differently
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        if stream is None:
            return "closed stream"
    main = sys.modules["__main__"]
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name != "agentlog.__main__":
        return "another program"
    if spec is None and getattr(main, "__file__", None) is None:
        return "another program"
    if spec is None and not set(vars(main)) - _SCRIPT_NAMES <= {"re", "sys", "main"}:
        return "another program"  # a program of its own that calls main(): its code is not re-run
    return ""


_SCRIPT_NAMES = frozenset(
    {
        "__name__",
        "__doc__",
        "__package__",
        "__loader__",
        "__spec__",
        "__annotations__",
        "__builtins__",
        "__file__",
        "__cached__",
    }
)
"""The names of a script's own module; the ``agentlog`` script pip writes adds
``re``, ``sys`` and ``main``."""


def _peer_is_us(sock: _socket.socket) -> bool:
    """Whether the process listening on ``sock`` runs as this user (``SO_PEERCRED``)."""
    try:
        cred = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    except OSError:
        return False
    return int.from_bytes(cred[4:8], sys.byteorder) == os.getuid()


def _request(ident: tuple[object, ...]) -> bytes:
    import marshal

    umask = os.umask(0o022)
    os.umask(umask)
    main = sys.modules["__main__"]
    spec = getattr(main, "__spec__", None)
    streams = [(s.encoding, s.errors) for s in (sys.stdin, sys.stdout, sys.stderr)]
    request = {
        "op": "run",
        "identity": ident,
        "argv": sys.argv,
        "orig_argv": sys.orig_argv,
        "env": dict(os.environb),
        "umask": umask,
        "streams": streams,
        "main": (
            getattr(main, "__package__", None),
            spec.name if spec else None,
            getattr(main, "__file__", None),
        ),
        "groups": sorted(os.getgroups()),
        "gid": os.getgid(),
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "ignored": _ignored_signals(),
        "unbuffered": getattr(sys.stdout, "write_through", False),  # PYTHONUNBUFFERED
    }
    data = marshal.dumps(request)
    return len(data).to_bytes(4, "little") + data


def _ignored_signals() -> list[int]:
    """The signals this process ignores (inherited as ignored, as ``nohup`` leaves
    SIGHUP, or ignored by Python itself: SIGPIPE, SIGXFSZ)."""
    ignored = []
    for sig in range(1, _signal.NSIG):
        try:
            if _signal.getsignal(sig) == _signal.SIG_IGN:
                ignored.append(sig)
        except (OSError, ValueError):
            pass
    return ignored


def _run(sock: _socket.socket, ident: tuple[object, ...]) -> str:
    """Send the request; follow the command to its end (never returns) unless refused."""
    try:
        cwd = os.open(".", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return "no working folder"
    try:
        data = _request(ident)
        fds = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in (cwd, 0, 1, 2))
        try:
            sent = sock.sendmsg([data], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
            if sent < len(data):
                sock.sendall(data[sent:])
        except OSError as exc:
            return f"send: {exc}"
    finally:
        os.close(cwd)
    previous = {sig: _signal.getsignal(sig) for sig in FORWARDED}

    def forward(signum: int, frame: object) -> None:
        try:
            sock.send(bytes([signum]))
        except OSError:  # the resident is gone: the end of the connection says so
            return

    def suspend(signum: int, frame: object) -> None:
        """Ctrl-Z: the child stopped, then this process; both continued together."""
        forward(_SIGSTOP, frame)
        os.kill(os.getpid(), _SIGSTOP)
        forward(_SIGCONT, frame)  # here once the shell continues this process

    previous[_SIGTSTP] = _signal.getsignal(_SIGTSTP)
    for sig in FORWARDED:
        if previous[sig] != _signal.SIG_IGN:  # nohup's SIGHUP stays ignored, here and in the child
            _signal.signal(sig, forward)
    if previous[_SIGTSTP] == _signal.SIG_DFL:
        _signal.signal(_SIGTSTP, suspend)
    received = b""
    accepted = False
    while True:
        try:
            chunk = sock.recv(4096)
        except OSError:
            chunk = b""
        if not chunk:
            break
        received += chunk
        if not accepted and received[:1] == b"R":
            continue  # the reason follows until the resident closes
        if not accepted and received[:1] == b"A":
            accepted = True
            received = received[1:]
        if accepted and received[:1] == b"X" and len(received) >= 5:
            _exit(int.from_bytes(received[1:5], "little", signed=True))
    if not accepted:
        for sig, handler in previous.items():
            _signal.signal(sig, handler)
        if received[:1] == b"R":
            return "refused: " + received[1:].decode(errors="replace")
        return "resident ended before the command started"
    os.write(
        2,
        b"agentlog: the resident process serving this command was killed (AGENTLOG_NO_DAEMON=1 runs commands in-process)\n",
    )
    _die(9)


def _exit(status: int) -> NoReturn:
    """End this process as the child did: its exit code, or its signal."""
    if os.WIFSIGNALED(status):
        _die(os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status))


def _die(sig: int) -> NoReturn:
    if sig != 9:  # SIGKILL's disposition cannot be set
        _signal.signal(sig, _signal.SIG_DFL)
    os.kill(os.getpid(), sig)
    os._exit(128 + sig)  # a signal whose default is not to end the process
