"""The no-change sync (:mod:`agentlog.index.memo`, #17 part 1) is the full check,
made cheap: after every kind of change to a home — files and folders added,
grown, shrunk, touched, deleted, renamed, replaced, made unreadable, links
retargeted, sidecars, prompt history and project files — a sync that starts from
the memo gives the same report and leaves the same index as one that runs the
whole discovery; and once nothing changed it answers from the memo, without
running discovery or importing an adapter."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from agentlog.adapters import all_adapters
from agentlog.index import archive, memo
from agentlog.index import sync as sync_module
from agentlog.index.db import connect
from agentlog.index.sync import SyncReport, sync
from test_archive import _without_dac


def _line(session: str, n: int, text: str, cwd: str) -> str:
    return msgspec.json.encode(
        {
            "type": "user",
            "sessionId": session,
            "uuid": f"{session}-u{n}",
            "timestamp": f"2026-10-01T10:{n // 60:02d}:{n % 60:02d}Z",
            "cwd": cwd,
            "message": {"role": "user", "content": text},
        }
    ).decode()


def _write(path: Path, session: str, count: int, cwd: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(_line(session, n, f"prompt {n} of {session}", str(cwd)) + "\n" for n in range(count))
    )


def _append(path: Path, session: str, n: int, cwd: Path) -> None:
    with open(path, "a") as fh:
        fh.write(_line(session, n, f"prompt {n} of {session}", str(cwd)) + "\n")


CODEX = Path(__file__).parent / "fixtures" / "codex" / "rollout-synthetic-tools.jsonl"
AIDER = Path(__file__).parent / "fixtures" / "aider" / "written-new-format.aider.chat.history.md"


def make_home(tmp_path: Path) -> Path:
    """Claude Code sessions in three project folders (one reached through a
    symbolic link, one with a subagent file), a Codex rollout, Claude's prompt
    history, and a project folder the sessions ran in (where Aider's file goes)."""
    home = tmp_path / "home"
    project = tmp_path / "work" / "app"
    project.mkdir(parents=True)
    projects = home / ".claude" / "projects"
    _write(projects / "-a" / "s1.jsonl", "s1", 3, project)
    _write(projects / "-a" / "s2.jsonl", "s2", 2, project)
    _write(projects / "-b" / "s3.jsonl", "s3", 4, project)
    _write(projects / "-b" / "agent-x1.jsonl", "s3", 1, project)
    _write(tmp_path / "elsewhere" / "s4.jsonl", "s4", 2, project)
    (projects / "-linked").symlink_to(tmp_path / "elsewhere")
    (projects / "-a" / "dangling.jsonl").symlink_to(tmp_path / "not-yet.jsonl")
    day = home / ".codex" / "sessions" / "2026" / "10" / "01"
    day.mkdir(parents=True)
    shutil.copy(CODEX, day / CODEX.name)
    history = home / ".claude" / "history.jsonl"
    history.write_text(
        json.dumps({"display": "an old prompt", "timestamp": 1759312800000, "sessionId": "old"}) + "\n"
    )
    return home


def _project(home: Path) -> Path:
    return home.parent / "work" / "app"


def _grow(home: Path) -> None:
    _append(home / ".claude/projects/-a/s1.jsonl", "s1", 3, _project(home))


def _shrink(home: Path) -> None:
    _write(home / ".claude/projects/-b/s3.jsonl", "s3", 2, _project(home))


def _touch(home: Path) -> None:
    path = home / ".claude/projects/-a/s2.jsonl"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def _rename_over(home: Path) -> None:  # same bytes, a new inode: an editor's save
    path = home / ".claude/projects/-a/s2.jsonl"
    shutil.copy2(path, path.with_suffix(".tmp"))
    os.replace(path.with_suffix(".tmp"), path)


def _fifo(home: Path) -> None:
    path = home / ".claude/projects/-a/s2.jsonl"
    path.unlink()
    os.mkfifo(path)


def _retarget(home: Path) -> None:
    link = home / ".claude/projects/-linked"
    other = home.parent / "other"
    _write(other / "s5.jsonl", "s5", 1, _project(home))
    link.unlink()
    link.symlink_to(other)


def _sidecar(home: Path) -> None:
    (home / ".claude/projects/-b/agent-x1.meta.json").write_text('{"agentType": "explorer"}')


def _history(home: Path) -> None:
    with open(home / ".claude/history.jsonl", "a") as fh:
        fh.write(
            json.dumps({"display": "another prompt", "timestamp": 1759316400000, "sessionId": "old2"}) + "\n"
        )


def _aider(home: Path) -> None:
    shutil.copy(AIDER, _project(home) / ".aider.chat.history.md")


def _codex(home: Path) -> None:
    day = home / ".codex/sessions/2026/10/02"
    day.mkdir(parents=True)
    shutil.copy(CODEX, day / "rollout-2026-10-02T10-00-00-another.jsonl")


def _not_utf8(home: Path) -> None:
    name = os.fsencode(home / ".claude/projects/-a") + b"/caf\xe9.jsonl"
    with open(name, "wb") as fh:
        fh.write((home / ".claude/projects/-a/s2.jsonl").read_bytes())


MUTATIONS: dict[str, Callable[[Path], None]] = {
    "nothing": lambda home: None,
    "file added": lambda home: _write(home / ".claude/projects/-a/s9.jsonl", "s9", 2, _project(home)),
    "folder added": lambda home: _write(home / ".claude/projects/-c/s9.jsonl", "s9", 2, _project(home)),
    "file grown": _grow,
    "file shrunk": _shrink,
    "file touched": _touch,
    "file chmod (ctime only)": lambda home: (home / ".claude/projects/-a/s1.jsonl").chmod(0o600),
    "file deleted": lambda home: (home / ".claude/projects/-a/s1.jsonl").unlink(),
    "folder deleted": lambda home: shutil.rmtree(home / ".claude/projects/-b"),
    "file renamed": lambda home: (home / ".claude/projects/-a/s1.jsonl").rename(
        home / ".claude/projects/-a/s7.jsonl"
    ),
    "folder renamed": lambda home: (home / ".claude/projects/-a").rename(home / ".claude/projects/-z"),
    "file replaced by a rename": _rename_over,
    "file replaced by a FIFO": _fifo,
    "file added behind a folder link": lambda home: _write(
        home.parent / "elsewhere" / "s6.jsonl", "s6", 1, _project(home)
    ),
    "folder link retargeted": _retarget,
    "dangling link now points at a log": lambda home: _write(
        home.parent / "not-yet.jsonl", "s8", 2, _project(home)
    ),
    "sidecar added": _sidecar,
    "prompt history appended": _history,
    "project file added (Aider)": _aider,
    "codex rollout in a new day folder": _codex,
    "file name that is not UTF-8": _not_utf8,
}


def _report(report: SyncReport) -> dict[str, object]:
    """Everything a sync reports but its duration and how many paths the memo's
    check looked at (the full sync runs no such check: ``None``)."""
    return {**msgspec.to_builtins(report, enc_hook=str), "seconds": 0, "checked": 0}


def _dump(conn: sqlite3.Connection) -> dict[str, list[tuple[object, ...]]]:
    """What the index holds (times of writing aside)."""
    return {
        "sources": conn.execute(
            """SELECT path, agent, size, mtime_ns, ctime_ns, inode, parsed_offset, tail_hash, parser_version,
                      parser_state, headers, sidecars, sidecar_sig, error, duplicate_of, archived_at IS NULL
               FROM sources ORDER BY path"""
        ).fetchall(),
        "sessions": conn.execute("SELECT key, title, cwd, prompt_only FROM sessions ORDER BY key").fetchall(),
        "messages": conn.execute(
            "SELECT session_key, id, timestamp FROM messages ORDER BY 1, 2, 3"
        ).fetchall(),
    }


class Discoveries:
    """Counts the full discoveries run (the memo answers without one)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = sync_module.discover_sources

        def counted(*args: object, **kwargs: object) -> object:
            self.count += 1
            return real(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(sync_module, "discover_sources", counted)


def _settle() -> None:
    """Wait past the file-system clock's tick, so what changes next has other times
    (the tests trust times at once: ``RACY_NS`` is 0 here)."""
    time.sleep(0.05)


SETTLE_SLOWLY = {"file name that is not UTF-8", "file replaced by a FIFO"}
"""Homes whose full sync runs each time: a name the memo cannot hold as text;
an archived source hidden by a problem (its reason is written again)."""
QUIET = ("appended", "reparsed", "archived", "restored", "removed", "duplicates", "failed")
OUTSIDE = {"prompt history appended"}
"""Changes the memo leaves to their own check, run on both paths: Claude's prompt
history (:func:`agentlog.index.history.sync_history`)."""


@pytest.mark.parametrize("mutation", list(MUTATIONS))
def test_a_sync_from_the_memo_equals_the_full_sync(tmp_path, monkeypatch, mutation):
    monkeypatch.setattr(memo, "RACY_NS", 0)
    home = make_home(tmp_path)
    env = {"HOME": str(home)}
    adapters = all_adapters()
    conn = connect(tmp_path / "memo.sqlite")
    first = sync(conn, adapters, env, home)
    assert first.reparsed == 7 and not first.failed  # 4 + 1 linked Claude files, Codex, history
    conn.execute("VACUUM INTO ?", (str(tmp_path / "full.sqlite"),))
    reference = connect(tmp_path / "full.sqlite")
    _settle()
    assert memo.unchanged(conn, adapters, env, home) is not None
    MUTATIONS[mutation](home)
    # The memo answers only when the full check would change nothing.
    assert (memo.unchanged(conn, adapters, env, home) is None) == (mutation not in ("nothing", *OUTSIDE))
    discoveries = Discoveries(monkeypatch)
    reports = []
    full_discoveries = 0  # those of the syncs that start from the memo
    for _ in range(2):  # the change, then nothing more
        reference.execute("DELETE FROM sync_memo")  # the full check, every time
        full = sync(reference, adapters, env, home)
        before = discoveries.count
        fast = sync(conn, adapters, env, home)
        full_discoveries += discoveries.count - before
        assert _report(fast) == _report(full)
        assert _dump(conn) == _dump(reference)
        reports.append(_report(fast))
        _settle()
    changed, settled = ({k: r[k] for k in QUIET} for r in reports)
    nothing = {
        "appended": 0,
        "reparsed": 0,
        "archived": 0,
        "restored": 0,
        "removed": 0,
        "duplicates": 0,
        "failed": [],
    }
    assert (changed == nothing) == (mutation == "nothing"), changed  # the change was seen
    if mutation in ("nothing", *OUTSIDE):
        assert full_discoveries == 0  # both syncs answered from the memo
    elif mutation not in SETTLE_SLOWLY:
        assert settled == nothing and full_discoveries == 1  # then the memo answers
    assert reports[1]["unchanged"] == reports[1]["sources"] - len(reports[1]["failed"])  # a skipped name is a failed source


def test_rows_the_index_changed_itself_are_seen(tmp_path, monkeypatch):
    """A row marked to be read again (``size = -1``: a copy whose original went),
    an archived source pruned, a parser version bumped: the full sync runs."""
    monkeypatch.setattr(memo, "RACY_NS", 0)
    home = make_home(tmp_path)
    env = {"HOME": str(home)}
    adapters = all_adapters()
    conn = connect(tmp_path / "index.sqlite")
    sync(conn, adapters, env, home)
    sync(conn, adapters, env, home)
    assert memo.unchanged(conn, adapters, env, home) is not None
    conn.execute("UPDATE sources SET size = -1 WHERE path LIKE '%/s2.jsonl'")
    assert memo.unchanged(conn, adapters, env, home) is None
    again = sync(conn, adapters, env, home)  # its stored bytes still end it: read on from there
    assert (again.appended, again.reparsed) == (1, 0)
    _settle()
    (home / ".claude/projects/-a/s1.jsonl").unlink()
    assert sync(conn, adapters, env, home).archived == 1
    assert memo.unchanged(conn, adapters, env, home) is not None  # archived, still gone: nothing to do
    assert [s.path for s in archive.prune(conn)] == [str(home / ".claude/projects/-a/s1.jsonl")]
    # The transcripts left are as they were; the prompt history prune had read again
    # is read by its own check.
    assert memo.unchanged(conn, adapters, env, home) is not None
    assert sync(conn, adapters, env, home).reparsed == 1
    claude = next(a for a in adapters if a.slug == "claude_code")
    monkeypatch.setattr(type(claude), "parser_version", claude.parser_version + 1)
    assert memo.unchanged(conn, adapters, env, home) is None
    assert sync(conn, adapters, env, home).reparsed == 4  # the Claude files left
    assert memo.unchanged(conn, adapters, env, home) is not None


def test_a_folder_changed_within_the_clock_tick_of_its_listing_is_listed_again(tmp_path):
    """Times under ``RACY_NS`` old are not trusted: a file added right after a
    sync, in a folder that sync listed, is found by the next one."""
    home = make_home(tmp_path)
    env = {"HOME": str(home)}
    adapters = all_adapters()
    conn = connect(tmp_path / "index.sqlite")
    sync(conn, adapters, env, home)
    _write(home / ".claude/projects/-a/s9.jsonl", "s9", 2, _project(home))
    assert memo.unchanged(conn, adapters, env, home) is None
    assert sync(conn, adapters, env, home).reparsed == 1


@pytest.mark.parametrize("what", ["folder", "file"])
def test_an_unreadable_folder_or_file_gives_what_the_full_sync_gives(tmp_path, what):
    prefix = _without_dac()
    home = make_home(tmp_path)
    target = home / ".claude/projects/-b" if what == "folder" else home / ".claude/projects/-a/s1.jsonl"
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", ""),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "COLUMNS": "100",
    }

    def index(name: str) -> dict[str, object]:
        done = subprocess.run(
            [*prefix, sys.executable, "-m", "agentlog", "index", "--json"],
            env={**env, "AGENTLOG_INDEX": str(tmp_path / name)},
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        return {**json.loads(done.stdout), "seconds": 0, "index": ""}

    index("memo.sqlite")
    shutil.copy(tmp_path / "memo.sqlite", tmp_path / "full.sqlite")
    time.sleep(memo.RACY_NS / 1e9 + 0.1)  # the memo's times become trusted
    target.chmod(0)
    try:
        for _ in range(3):  # unreadable, then unreadable still
            sqlite3.connect(tmp_path / "full.sqlite").execute("DELETE FROM sync_memo").connection.commit()
            full = index("full.sqlite")
            assert index("memo.sqlite") == full
            assert full["path_problems" if what == "folder" else "failed"]
    finally:
        target.chmod(0o755 if what == "folder" else 0o644)
    full = index("full.sqlite")
    assert index("memo.sqlite") == full and full["restored"] == (2 if what == "folder" else 1)
    for name in ("memo.sqlite", "full.sqlite"):
        conn = sqlite3.connect(tmp_path / name)
        conn.execute("DELETE FROM sync_memo")
        conn.commit()
    assert _dump(sqlite3.connect(tmp_path / "memo.sqlite")) == _dump(
        sqlite3.connect(tmp_path / "full.sqlite")
    )


NEVER = (
    "agentlog.worker",
    "agentlog.index.store",
    "agentlog.adapters.claude_code",
    "agentlog.adapters.codex",
)
"""Modules a no-change ``agentlog index`` of Claude and Codex logs needs none of."""


def test_a_no_change_index_imports_no_adapter_worker_or_store(tmp_path):
    home = make_home(tmp_path)
    env = {
        **os.environ,
        "HOME": str(home),
        "AGENTLOG_INDEX": str(tmp_path / "index.sqlite"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    code = (
        "import atexit, json, sys\n"
        "atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))\n"
        "from agentlog._console import main\nsys.argv[0] = 'agentlog'\nmain()\n"
    )

    def index() -> tuple[dict[str, object], set[str]]:
        done = subprocess.run(
            [sys.executable, "-c", code, "index", "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout), set(json.loads(done.stderr.splitlines()[-1]))

    first, loaded = index()
    assert first["reparsed"] == 7 and set(NEVER) <= loaded  # a full sync with parsing
    time.sleep(memo.RACY_NS / 1e9 + 0.1)
    index()  # records a memo whose times are trusted
    again, loaded = index()
    assert (again["sources"], again["unchanged"], again["reparsed"]) == (7, 7, 0)
    assert not set(NEVER) & loaded, sorted(set(NEVER) & loaded)
