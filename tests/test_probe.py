"""Probing paths (agentlog.probe) and opening only regular files (agentlog.readers):
every OSError is a problem of its path, never an exception; no FIFO is ever
waited on."""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentlog import probe
from agentlog.adapters import SourceRef, get_adapter
from agentlog.adapters.claude_code import ClaudeCodeAdapter
from agentlog.index import db
from agentlog.index.sync import sync
from agentlog.load import LoadReport, discover_sources, parse_source, project_sources
from agentlog.probe import PathProblem, Problems
from agentlog.readers import (
    LineReader,
    line_start_after,
    open_regular,
    read_blocks,
    read_head,
    read_lines_at,
    read_small,
    read_sqlite_tables,
)
from conftest import FIXTURES

FIFO = "OSError: not a regular file (FIFO)"
DENIED = "PermissionError: Permission denied"


def finishes(call: Callable[[], Any], seconds: float = 20.0) -> BaseException | None:
    """Run ``call`` in a daemon thread; fail if it is still running after
    ``seconds`` (it blocked, e.g. on a FIFO); return what it raised."""
    raised: list[BaseException | None] = [None]

    def target() -> None:
        try:
            call()
        except BaseException as exc:
            raised[0] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked"
    return raised[0]


def deny(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Act as a user without the ``x`` bit on ``folder`` (root ignores chmod):
    ``stat``/``scandir``/``open`` of anything inside it, and ``scandir`` of it, fail."""
    inside = str(folder) + "/"

    def wrap(call: Callable[..., Any], itself: bool = False) -> Callable[..., Any]:
        def guarded(path: Any, *args: Any, **kwargs: Any) -> Any:
            text = os.fspath(path) if not isinstance(path, int) else ""
            if text.startswith(inside) or (itself and text == str(folder)):
                raise PermissionError(errno.EACCES, "Permission denied", text)
            return call(path, *args, **kwargs)

        return guarded

    monkeypatch.setattr(os, "stat", wrap(os.stat))
    monkeypatch.setattr(os, "open", wrap(os.open))
    monkeypatch.setattr(os, "scandir", wrap(os.scandir, itself=True))


def problems_of(call: Callable[[], Any]) -> tuple[Any, list[tuple[str | None, str, str]]]:
    found = probe.Problems()
    with probe.collecting("agent", found):
        result = call()
    return result, [(p.agent, p.path, p.error) for p in found]


# -- probes -----------------------------------------------------------------


def test_walk_files_skips_and_names_fifos_loops_and_unreadable_folders(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "a/one.jsonl").write_text("{}\n")
    os.mkfifo(tmp_path / "a/pipe.jsonl")
    os.mkfifo(tmp_path / "a/pipe.txt")  # not a name looked for: not a problem
    (tmp_path / "a/loop.jsonl").symlink_to("loop.jsonl")
    (tmp_path / "a/dangling.jsonl").symlink_to("nowhere")  # a link to nothing: silently absent
    (tmp_path / "a/up").symlink_to("..")  # a cycle: walked once
    (tmp_path / "b/locked").mkdir(parents=True)
    (tmp_path / "b/locked/hidden.jsonl").write_text("{}\n")
    (tmp_path / "b/two.jsonl").write_text("{}\n")
    deny(monkeypatch, tmp_path / "b/locked")
    files, problems = problems_of(lambda: list(probe.walk_files(tmp_path, ".jsonl")))
    assert files == [tmp_path / "a/one.jsonl", tmp_path / "b/two.jsonl"]
    assert problems == [
        ("agent", str(tmp_path / "a/loop.jsonl"), "OSError: Too many levels of symbolic links"),
        ("agent", str(tmp_path / "a/pipe.jsonl"), FIFO),
        ("agent", str(tmp_path / "b/locked"), DENIED),
    ]


def test_a_missing_root_is_no_problem(tmp_path):
    (tmp_path / "file").write_text("x")
    for call in (
        lambda: list(probe.walk_files(tmp_path / "missing", ".jsonl")),
        lambda: list(probe.walk_files(tmp_path / "file", ".jsonl")),  # ENOTDIR
        lambda: probe.entries(tmp_path / "missing"),
        lambda: probe.is_file(tmp_path / "file/below"),
        lambda: probe.is_dir(tmp_path / "missing"),
    ):
        result, problems = problems_of(call)
        assert (result in ([], False), problems) == (True, [])


def test_probes_name_long_names_nuls_and_special_files(tmp_path):
    long = tmp_path / ("x" * 300) / "f"
    os.mkfifo(tmp_path / "pipe")
    assert problems_of(lambda: probe.is_file(long)) == (
        False,
        [("agent", str(long), "OSError: File name too long")],
    )
    assert problems_of(lambda: probe.exists("/tmp/a\x00b")) == (
        False,
        [("agent", "/tmp/a\x00b", "ValueError: embedded null byte")],
    )
    assert problems_of(lambda: probe.is_file(tmp_path / "pipe")) == (
        False,
        [("agent", str(tmp_path / "pipe"), FIFO)],
    )
    assert problems_of(lambda: probe.is_file(tmp_path)) == (False, [])  # a folder: a layout probe, no problem
    assert problems_of(lambda: probe.regular_files([tmp_path / "pipe", tmp_path / "none"])) == (
        (),
        [("agent", str(tmp_path / "pipe"), FIFO)],
    )
    assert probe.is_file(tmp_path / "pipe") is False  # outside collecting(): dropped, never raised


def test_a_folder_problem_says_all_below_it_once(tmp_path):
    found = probe.Problems()
    with probe.collecting("codex", found):
        probe.problem(tmp_path / "s/sessions", PermissionError(13, "Permission denied"))
        probe.problem(tmp_path / "s", PermissionError(13, "Permission denied"))
        probe.problem(tmp_path / "s/other", PermissionError(13, "Permission denied"))
        probe.problem(tmp_path / "s", PermissionError(13, "Permission denied"))
    with probe.collecting("claude_code", found):
        probe.problem(tmp_path / "s/x", "OSError: not a regular file (FIFO)")
    assert found == [
        PathProblem(agent="codex", path=str(tmp_path / "s"), error=DENIED),
        PathProblem(agent="claude_code", path=str(tmp_path / "s/x"), error=FIFO),
    ]


def test_load_report_hides_what_lies_below_a_problem():
    report = LoadReport(
        problems=Problems([PathProblem(agent="codex", path="/h/.codex/sessions", error=DENIED)])
    )
    assert report.hides("/h/.codex/sessions/2026/a.jsonl") == report.problems[0]
    assert report.hides("/h/.codex/sessions")
    assert not report.hides("/h/.codex/sessions-old/a.jsonl")
    assert not report.hides("/h/.codex/archived_sessions/a.jsonl")
    assert report.hides("/h/.codex/sessions/a.jsonl", "codex")
    assert not report.hides("/h/.codex/sessions/a.jsonl", "claude_code")  # codex's discovery met it
    under_root = LoadReport(problems=Problems([PathProblem(agent=None, path="/logs", error=DENIED)]))
    assert under_root.hides("/logs/a.jsonl", "claude_code") and under_root.hides("/logs/a.jsonl", "pi")


class _NoRoots(ClaudeCodeAdapter):
    slug = "no_roots"

    def default_roots(self, env, home):
        raise KeyError("PLUGIN_HOME")


def test_a_plugin_whose_default_roots_raise_costs_only_itself(tmp_path):
    claude_home(tmp_path)
    report = LoadReport()
    found = discover_sources([_NoRoots(), get_adapter("claude_code")], {}, tmp_path, (), report)
    assert [ref.path for _, ref in found] == [str(tmp_path / ".claude/projects/-p/good.jsonl")]
    assert report.problems == [
        PathProblem(agent="no_roots", path=str(tmp_path), error="KeyError: 'PLUGIN_HOME'")
    ]
    assert report.roots["no_roots"] == []


# -- discovery ----------------------------------------------------------------


def claude_home(tmp_path: Path) -> Path:
    projects = tmp_path / ".claude/projects/-p"
    projects.mkdir(parents=True)
    shutil.copy(FIXTURES / "claude_code/v1.0.98-session.jsonl", projects / "good.jsonl")
    return projects


def test_an_unreadable_agent_folder_costs_only_that_agent(tmp_path, monkeypatch):
    claude_home(tmp_path)
    rollouts = tmp_path / ".codex/sessions/2026"
    rollouts.mkdir(parents=True)
    (rollouts / "rollout-x.jsonl").write_text("{}\n")
    deny(monkeypatch, tmp_path / ".codex/sessions")
    report = LoadReport()
    found = discover_sources([get_adapter("claude_code"), get_adapter("codex")], {}, tmp_path, (), report)
    assert [ref.path for _, ref in found] == [str(tmp_path / ".claude/projects/-p/good.jsonl")]
    assert report.problems == [
        PathProblem(agent="codex", path=str(tmp_path / ".codex/sessions"), error=DENIED)
    ]
    assert report.sources == {"claude_code": 1, "codex": 0}


class _Broken(ClaudeCodeAdapter):
    slug = "broken"

    def discover(self, root: Path):
        yield SourceRef(agent="broken", path=str(root / "first.jsonl"))
        raise RuntimeError("plugin bug")


def test_an_exception_escaping_discover_is_a_problem_of_its_root(tmp_path):
    claude_home(tmp_path)
    (tmp_path / ".claude/projects/first.jsonl").write_text("{}\n")
    report = LoadReport()
    found = discover_sources([_Broken(), get_adapter("claude_code")], {}, tmp_path, (), report)
    assert [ref.path for _, ref in found] == [
        str(tmp_path / ".claude/projects/first.jsonl"),  # listed before the bug: kept
        str(tmp_path / ".claude/projects/-p/good.jsonl"),
    ]
    assert report.problems == [
        PathProblem(agent="broken", path=str(tmp_path / ".claude/projects"), error="RuntimeError: plugin bug")
    ]


def test_a_fifo_sidecar_is_left_out_and_named(tmp_path):
    projects = claude_home(tmp_path)
    shutil.copy(FIXTURES / "claude_code/v1.0.98-session.jsonl", projects / "agent-abc.jsonl")
    os.mkfifo(projects / "agent-abc.meta.json")
    report = LoadReport()
    found = discover_sources([get_adapter("claude_code")], {}, tmp_path, (), report)
    assert sorted((ref.path, ref.sidecars) for _, ref in found) == [
        (str(projects / "agent-abc.jsonl"), ()),
        (str(projects / "good.jsonl"), ()),
    ]
    assert report.problems == [
        PathProblem(agent="claude_code", path=str(projects / "agent-abc.meta.json"), error=FIFO)
    ]


def test_user_root_problems_belong_to_no_agent(tmp_path):
    root = tmp_path / "logs"
    root.mkdir()
    os.mkfifo(root / "x.jsonl")
    report = LoadReport()
    found = discover_sources(
        [get_adapter("claude_code"), get_adapter("pi")], {}, tmp_path / "h", [root], report
    )
    assert found == []
    assert report.problems == [PathProblem(agent=None, path=str(root / "x.jsonl"), error=FIFO)]


def test_project_sources_survive_hostile_cwds(tmp_path, monkeypatch):
    good = tmp_path / "repo"
    (good / "sub").mkdir(parents=True)
    shutil.copy(FIXTURES / "aider/written-new-format.aider.chat.history.md", good / ".aider.chat.history.md")
    (tmp_path / "locked/proj").mkdir(parents=True)
    deny(monkeypatch, tmp_path / "locked")
    long = f"{tmp_path}/{'y' * 300}"
    report = LoadReport()
    cwds = [str(good / "sub"), long, f"{tmp_path}/locked/proj", "/a\x00b", "/\udcff", "relative"]
    found = project_sources([get_adapter("aider")], cwds, (), report)
    assert [ref.path for _, ref in found] == [str(good / ".aider.chat.history.md")]
    # each the problem of the folder that could not be looked in; locked/ covers locked/proj/
    assert [(p.path, p.error) for p in report.problems] == [
        (long, "OSError: File name too long"),
        (f"{tmp_path}/locked", DENIED),
        ("/a\x00b", "ValueError: embedded null byte"),
    ]


# -- only regular files are opened ---------------------------------------------


@pytest.mark.parametrize(
    "read",
    [
        lambda p: list(LineReader(p)),
        lambda p: list(read_blocks(p)),
        lambda p: line_start_after(p, 5),
        lambda p: list(read_lines_at(p, [0])),
        read_head,
        read_small,
        lambda p: read_sqlite_tables(p, ["t"]),
        lambda p: open_regular(p).close(),
    ],
)
def test_no_reader_waits_on_a_fifo(tmp_path, read):
    fifo = tmp_path / "x.jsonl"
    os.mkfifo(fifo)
    raised = finishes(lambda: read(fifo))
    assert isinstance(raised, OSError) and raised.strerror == "not a regular file (FIFO)"


def test_a_database_with_a_fifo_wal_is_refused(tmp_path):
    path = tmp_path / "store.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    os.mkfifo(tmp_path / "store.db-wal")
    raised = finishes(lambda: read_sqlite_tables(path, ["t"]))
    assert isinstance(raised, OSError) and raised.strerror == "not a regular file (FIFO)"


def test_a_fifo_sidecar_handed_to_the_parser_is_an_error_of_its_session(tmp_path):
    """A sidecar remembered by the index may since have turned into a FIFO."""
    log = tmp_path / "agent-abc.jsonl"
    shutil.copy(FIXTURES / "claude_code/v1.0.98-session.jsonl", log)
    os.mkfifo(tmp_path / "agent-abc.meta.json")
    ref = SourceRef(agent="claude_code", path=str(log), sidecars=(str(tmp_path / "agent-abc.meta.json"),))
    parsed: list[Any] = []
    assert finishes(lambda: parsed.append(parse_source(get_adapter("claude_code"), ref))) is None
    (header,) = parsed[0].headers
    assert header.diagnostics.errors == [f"{tmp_path}/agent-abc.meta.json: {FIFO}"]
    assert len(parsed[0].fragments) > 0


# -- the index keeps what it could not look at ----------------------------------------------


def test_sync_keeps_sources_under_a_root_that_turned_unreadable(tmp_path, monkeypatch):
    root = tmp_path / "logs"
    root.mkdir()
    shutil.copy(FIXTURES / "claude_code/v1.0.98-session.jsonl", root / "kept.jsonl")
    conn = db.connect(tmp_path / "index.sqlite")
    adapters = [get_adapter("claude_code")]
    first = sync(conn, adapters, {}, tmp_path / "home", [root])
    assert (first.sources, first.reparsed) == (1, 1)
    deny(monkeypatch, root)
    again = sync(conn, adapters, {}, tmp_path / "home", [root])
    assert (again.removed, again.failed) == (0, [])
    assert again.roots.problems == [
        PathProblem(agent=None, path=str(root), error=DENIED),  # discovery under the --root
        PathProblem(
            agent="claude_code", path=str(root / "kept.jsonl"), error=DENIED
        ),  # the source it had found
    ]
    assert [k for (k,) in conn.execute("SELECT key FROM sessions")] == ["claude_code:kept"]


def test_a_file_reached_by_two_paths_is_listed_once(tmp_path):
    projects = claude_home(tmp_path)
    (projects / "link.jsonl").symlink_to("good.jsonl")
    os.link(projects / "good.jsonl", projects / "hard.jsonl")
    (tmp_path / ".claude/projects/-again").symlink_to("-p")
    report = LoadReport()
    found = discover_sources([get_adapter("claude_code")], {}, tmp_path, [projects], report)
    # "-again" sorts first: the file is listed by the first path it is reached by
    assert [ref.path for _, ref in found] == [str(tmp_path / ".claude/projects/-again/good.jsonl")]
    assert (report.sources, report.problems) == ({"claude_code": 1}, [])


def test_corrupt_zstandard_under_a_root_is_left_to_parsing(tmp_path):
    """Sniffing reads the head: corrupt compressed bytes must not stop discovery."""
    root = tmp_path / "logs"
    root.mkdir()
    (root / "x.jsonl").write_bytes(b"\x28\xb5\x2f\xfd" + b"garbage" * 4)
    report = LoadReport()
    found = discover_sources(
        [get_adapter("claude_code"), get_adapter("pi")], {}, tmp_path / "h", [root], report
    )
    assert [(a.slug, ref.path) for a, ref in found] == [("claude_code", str(root / "x.jsonl"))]
    assert report.problems == []


def test_identity_is_the_inode_or_the_resolved_path_where_there_is_none(tmp_path):
    (tmp_path / "f").write_text("x")
    (tmp_path / "link").symlink_to("f")
    st = os.stat(tmp_path / "link")
    assert (
        probe.identity(tmp_path / "link", st) == (st.st_dev, st.st_ino) == probe.identity(tmp_path / "f", st)
    )
    no_inode = os.stat_result((st.st_mode, 0, st.st_dev, 1, 0, 0, 1, 0, 0, 0))
    assert probe.identity(tmp_path / "link", no_inode) == str(tmp_path / "f")
