"""Waking the live surfaces when a log changes: file-system events through
`watchfiles <https://watchfiles.helpmanual.io/>`_ (inotify on Linux, FSEvents on
macOS, ReadDirectoryChangesW on Windows; the ``live`` extra), else polling.

:class:`LogWatcher` yields sets of changed paths, bursts coalesced (``debounce``
milliseconds); with no event it sleeps in the kernel — idle costs no CPU.  When
watchfiles is missing, or the watch cannot be set up (too many folders for
inotify's limit, a root that is not a local file system), it falls back to a
poll every ``poll`` seconds that yields :data:`UNKNOWN` (something may have
changed: sync everything).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

log = logging.getLogger(__name__)

UNKNOWN: frozenset[str] = frozenset({""})
"""The change set that means "anything may have changed" (the polling fallback)."""


STEP = 250
"""Milliseconds between the watcher's looks at its stop flag and signals (each takes
Python's lock: a 50 ms step kept an idle ``serve`` at 0.12% of a core); a change is
reported after this much quiet (or ``debounce``), so it also bounds the latency."""

MISSING = "file-system events need the live extra: pip install 'agentlog[live]' (polling instead)"
"""The one line a live command says when watchfiles is not installed."""


def events_available() -> bool:
    """Whether watchfiles (the ``live`` extra) is installed."""
    from importlib.util import find_spec

    return find_spec("watchfiles") is not None


def roots_to_watch(env: dict[str, str], home: Path, extra: Iterable[Path] = ()) -> list[Path]:
    """Every registered agent's log folders that exist, and ``extra`` (``--root``),
    without folders inside another one of them.  Project folders are left out —
    the home folder itself and its visible children (``~/src``, ``~/code`` …),
    where Aider and Crush keep their logs inside each project: watching them would
    watch all of the user's code (and hit inotify's limit); their logs are read by
    the whole syncs (a new file anywhere watched, ``agentlog index``)."""
    from agentlog.adapters import all_adapters

    found: list[Path] = []
    for adapter in all_adapters():
        for root in adapter.default_roots(env, home):
            if root == home or (root.parent == home and not root.name.startswith(".")):
                continue
            try:
                if root.is_dir():
                    found.append(root)
            except OSError:
                continue
    found += [Path(p) for p in extra]
    unique = sorted({p.absolute() for p in found}, key=lambda p: len(p.parts))
    out: list[Path] = []
    for p in unique:
        if not any(p == q or q in p.parents for q in out):
            out.append(p)
    return out


class LogWatcher:
    """Changed paths under ``roots`` until :meth:`stop` (thread-safe).

    ``debounce`` (ms) groups a burst into one set; ``poll`` (s) is the fallback
    interval; ``force_polling`` skips file-system events (tests, network mounts).
    With events, an empty set comes after each ``tick`` seconds without a change
    (the first one tells the watch is in place: what was written before it was
    set up needs one catch-up sync).  :attr:`mode` says which is in use:
    ``events`` or ``polling``."""

    def __init__(
        self,
        roots: list[Path],
        debounce: int = STEP,
        poll: float = 2.0,
        force_polling: bool = False,
        tick: float = 60.0,
    ) -> None:
        self.roots, self.debounce, self.poll, self.force_polling = roots, debounce, poll, force_polling
        self.tick = tick
        self._stop = threading.Event()
        self.mode = "polling"

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def __iter__(self) -> Iterator[set[str]]:
        roots = [r for r in self.roots if r.exists()]
        if roots and not self.force_polling:
            try:
                import watchfiles
            except ImportError:
                log.info("watchfiles is not installed: polling every %s s", self.poll)
            else:
                watched, left_out = watchable(roots)
                if left_out:
                    log.warning("%s", polled_notice(left_out, self.poll))
                try:
                    if watched:
                        self.mode = "events"
                        # in the kernel until an event, a tick or stop; with folders left out, a tick polls them
                        tick = self.poll if left_out else self.tick
                        for changes in watchfiles.watch(
                            *watched,
                            debounce=self.debounce,
                            step=STEP,
                            stop_event=self._stop,
                            rust_timeout=int(tick * 1000),
                            yield_on_timeout=True,
                            watch_filter=None,
                            raise_interrupt=False,
                            ignore_permission_denied=True,
                        ):
                            yield {path for _, path in changes} or (set(UNKNOWN) if left_out else set())
                        return
                except (OSError, RuntimeError) as exc:  # e.g. the inotify watch limit
                    log.warning("cannot watch %s (%s): polling every %s s", _listed(roots), exc, self.poll)
        self.mode = "polling"
        while not self._stop.wait(self.poll):
            yield set(UNKNOWN)


def polled_notice(left_out: list[Path], poll: float) -> str:
    """What the watcher says of the folders :func:`watchable` left out: a folder
    whose own name is UTF-8 is polled only for what lies directly in it (its
    subfolders keep their events), one whose name is not, whole."""
    direct = [f for f in left_out if _decodable(f)]
    whole = [f for f in left_out if not _decodable(f)]
    said = [f"what lies directly in {_listed(direct)}"] if direct else []
    said += [f"all of {_listed(whole)}"] if whole else []
    return (
        f"a name that is not UTF-8: polling {' and '.join(said)} every {poll:g} s "
        "(file-system events for everything else)"
    )


def _listed(folders: list[Path]) -> str:
    """``folders`` as one printable line: names that are not UTF-8 keep their
    bytes as ``\\xNN`` escapes, control characters are shown as symbols."""
    from agentlog.present import clean
    from agentlog.probe import shown_path

    return ", ".join(clean(shown_path(f), one_line=True, markup=False) for f in folders)


def watchable(roots: Iterable[Path]) -> tuple[list[Path], list[Path]]:
    """``roots`` as file-system events can watch them, and the folders left out.

    The watcher cannot decode a name that is not UTF-8 (``Unable to decode path``:
    it gives up on every root), so a root whose tree holds one is replaced by its
    subfolders, each judged the same way, down to the names themselves; the
    folders replaced (what they hold directly, new subfolders included) are left
    out, for the caller to poll.  Symbolic links are not followed."""
    watched: list[Path] = []
    left_out: list[Path] = []
    for root in roots:
        if _decodable(root) and _decodable_tree(root):
            watched.append(root)
            continue
        left_out.append(root)
        if _decodable(root):
            inner, missed = watchable(_subfolders(root))
            watched += inner
            left_out += missed
    return watched, left_out


def _decodable(path: Path) -> bool:
    """Whether ``path``'s name came from UTF-8 bytes (Python keeps other bytes as lone surrogates)."""
    try:
        path.name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _decodable_tree(root: Path) -> bool:
    """Whether every name under ``root`` (unreadable folders skipped) came from UTF-8 bytes."""
    for _, folders, files in os.walk(root):
        for name in (*folders, *files):
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:
                return False
    return True


def _subfolders(root: Path) -> list[Path]:
    """The folders directly in ``root`` (not links to folders), none when it cannot be read."""
    try:
        return [p for p in root.iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError:
        return []
