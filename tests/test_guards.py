"""Read-only, always, on every path that writes: an export's every file (through
hardlinks and symlinks, every format), the index the Python API opens, the index
in use, project-local agent folders (Crush's ``.crush``, Aider's ``.aider*``);
relative ``--root`` folders made absolute; HTML exports free of control characters."""

from __future__ import annotations

import io
import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

import agentlog
from agentlog.cli import main
from agentlog.errors import UsageError
from agentlog.export import ExportOptions, Transcript
from agentlog.index import db
from agentlog.model import Message, Session, TextPart
from agentlog.service.export import export_sessions
from agentlog.service.home import Home

FIXTURES = Path(__file__).parent / "fixtures"
SESSION = "1af7fc5e-8455-4414-9ccd-011d40f70b2a"
"""The session of ``claude_code/v1.0.98-session.jsonl`` (its records' id)."""
CLEAN_ENV = {"CLAUDE_CONFIG_DIR": None, "CODEX_HOME": None, "XDG_CONFIG_HOME": None, "XDG_CACHE_HOME": None}
FORMATS = ("md", "json", "jsonl", "slim", "html")


def run(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), env={**CLEAN_ENV, "AGENTLOG_INDEX": None, **env})
    return result.exit_code, result.stdout, result.stderr


def _home(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A home with one Claude Code transcript: ``(home, transcript, env)``."""
    home = tmp_path / "home"
    folder = home / ".claude" / "projects" / "-tmp-x"
    folder.mkdir(parents=True)
    log = folder / f"{SESSION}.jsonl"
    shutil.copy(FIXTURES / "claude_code" / "v1.0.98-session.jsonl", log)
    return home, log, {"HOME": str(home)}


def _files(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("linked", ["transcript", "settings"])
def test_an_export_onto_a_hardlink_of_a_file_in_an_agents_folder_is_refused(tmp_path, linked):
    """``-o`` a hard link to a transcript, or to any file in an agent's folder:
    refused in one line, exit 2, before a byte is written (the target keeps its
    inode and bytes, no temporary file is made), in every format."""
    home, log, env = _home(tmp_path)
    settings = home / ".claude" / "settings.json"
    settings.write_text('{"cleanupPeriodDays": 3650}')
    source = log if linked == "transcript" else settings
    before = _files(home / ".claude")
    out = tmp_path / "x" / "out"
    out.parent.mkdir()
    os.link(source, out)
    for fmt in FORMATS:
        code, stdout, err = run("export", SESSION[:8], "-f", fmt, "-o", str(out), env=env)
        assert (code, stdout) == (2, ""), fmt
        assert err == (
            f"agentlog: {out} is a hard link to {source}, a file in an agent's folder: "
            "agentlog never writes there; give another -o\n"
        )
        assert os.path.samefile(out, source) and os.stat(source).st_nlink == 2
        assert _files(home / ".claude") == before
        assert sorted(p.name for p in out.parent.iterdir()) == ["out"]  # no temporary file made


def test_an_export_onto_a_hardlink_elsewhere_leaves_the_other_name_whole(tmp_path):
    """Every format is written to a temporary file beside the target and renamed
    into place: a file the target was a hard link of (outside agents' folders)
    keeps its bytes (its inode), the target holds the export."""
    env = _home(tmp_path)[2]
    mine = tmp_path / "mine.txt"
    mine.write_text("my own notes\n")
    out = tmp_path / "x" / "out"
    out.parent.mkdir()
    for fmt in FORMATS:
        out.unlink(missing_ok=True)
        os.link(mine, out)
        code, _, err = run("export", SESSION[:8], "-f", fmt, "-o", str(out), env=env)
        assert code == 0, err
        assert mine.read_text() == "my own notes\n" and os.stat(mine).st_nlink == 1, fmt
        code, expected, _ = run("export", SESSION[:8], "-f", fmt, env=env)
        assert out.read_text() == expected, fmt
    assert sorted(p.name for p in out.parent.iterdir()) == ["out"]  # no temporary file left


def test_an_export_through_a_symlinked_folder_into_an_agents_folder_is_refused(tmp_path):
    """A site or dataset folder whose ``sessions`` is a symlink into an agent's
    folder, or a file that is a symlink to a transcript: refused before a byte
    is written, there or anywhere."""
    home, log, env = _home(tmp_path)
    agent_folder = log.parent
    before = _files(home / ".claude")
    site = tmp_path / "site"
    site.mkdir()
    (site / "sessions").symlink_to(agent_folder)
    code, _, err = run("export", "--all", "-f", "html", "-o", str(site), env=env)
    assert code == 2 and "is inside an agent's folder" in err and "never writes there" in err, err
    assert sorted(p.name for p in site.iterdir()) == ["sessions"]
    pq = tmp_path / "pq"
    pq.mkdir()
    (pq / ".agentlog-parquet").write_text("agentlog Parquet dataset\n")
    (pq / "messages").symlink_to(agent_folder)
    code, _, err = run("export", "--all", "-f", "parquet", "-o", str(pq), env=env)
    assert code == 2 and "is inside an agent's folder" in err, err
    assert sorted(p.name for p in pq.iterdir()) == [".agentlog-parquet", "messages"]
    (tmp_path / "link.md").symlink_to(log)
    code, _, err = run("export", SESSION[:8], "-o", str(tmp_path / "link.md"), env=env)
    assert code == 2 and "is inside an agent's folder" in err, err
    assert _files(home / ".claude") == before


def test_a_parquet_export_replaces_a_symlinked_table_folder_not_what_it_names(tmp_path):
    """A table folder that is a symlink elsewhere (not an agent's) is replaced by
    the dataset's own folder; the folder it named is left as it was."""
    pytest.importorskip("pyarrow")
    _, _, env = _home(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("mine")
    pq = tmp_path / "pq"
    pq.mkdir()
    (pq / ".agentlog-parquet").write_text("agentlog Parquet dataset\n")
    (pq / "sessions").symlink_to(elsewhere)
    code, _, err = run("export", "--all", "-f", "parquet", "-o", str(pq), env=env)
    assert code == 0, err
    assert _files(elsewhere) == {elsewhere / "keep.txt": b"mine"}
    assert not (pq / "sessions").is_symlink()
    assert [p.name for p in (pq / "sessions").rglob("*.parquet")] == ["part-0-0.parquet"]
    assert sorted(p.name for p in pq.iterdir()) == [".agentlog-parquet", "messages", "parts", "sessions", "usage"]


def test_the_python_api_refuses_an_index_in_an_agents_folder_as_the_cli_does(tmp_path, monkeypatch):
    """``agentlog.open(index=…)``, ``AGENTLOG_INDEX`` and the shortcuts' ``index=``
    raise the CLI's ``--index`` refusal, before any file is made."""
    home, _, env = _home(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("AGENTLOG_INDEX", raising=False)
    for name in CLEAN_ENV:
        monkeypatch.delenv(name, raising=False)
    before = sorted(home.rglob("*"))
    inside = home / ".claude" / "projects" / "x.sqlite"
    code, _, cli_err = run("--index", str(inside), "sessions", env=env)
    assert code == 2
    with pytest.raises(UsageError) as refused:
        agentlog.open(inside)
    assert f"agentlog: {refused.value}\n" == cli_err
    assert str(refused.value) == (
        f"--index {inside} is inside an agent's folder ({home / '.claude'}): "
        "agentlog never writes there; choose another file"
    )
    with pytest.raises(UsageError, match="never writes there"):
        agentlog.search("w", index=home / ".codex" / "sessions" / "s.sqlite")
    with pytest.raises(UsageError, match="never writes there"):
        agentlog.sessions(index=str(inside))
    monkeypatch.setenv("AGENTLOG_INDEX", str(home / ".codex" / "sessions" / "env.sqlite"))
    with pytest.raises(UsageError, match=r"--index .*env\.sqlite is inside an agent's folder"):
        agentlog.open()
    assert sorted(home.rglob("*")) == before
    monkeypatch.delenv("AGENTLOG_INDEX")
    with agentlog.open(tmp_path / "mine.sqlite") as archive:
        assert [s.id for s in archive.sessions()] == [SESSION]


def test_an_export_onto_the_index_in_use_or_its_sidecars_is_refused(tmp_path):
    """``-o`` at the index (or its ``-wal``, ``-shm``, ``-journal``) is refused
    before a byte is written: the index reads the same afterwards."""
    _, _, env = _home(tmp_path)
    index = tmp_path / "cache" / "i.sqlite"
    index.parent.mkdir()
    code, _, err = run("--index", str(index), "index", env=env)
    assert code == 0, err
    def files() -> dict[str, bytes | int]:
        """Each file's bytes; the ``-shm``'s size (any reader updates its wal-index header)."""
        return {p.name: p.stat().st_size if p.name.endswith("-shm") else p.read_bytes() for p in index.parent.iterdir()}

    before = files()
    for suffix in ("", "-wal", "-shm", "-journal"):
        args = ("--index", str(index), "--no-sync", "export", SESSION[:8], "-o", f"{index}{suffix}")
        code, out, err = run(*args, env=env)  # no sync: only the export could change the files
        assert (code, out) == (2, ""), err
        said = "is agentlog's index in use" if not suffix else f"is a file of agentlog's index in use ({index})"
        assert err == f"agentlog: {index}{suffix} {said}: agentlog never writes there; give another -o\n"
    assert files() == before
    conn = db.connect(index, readonly=True)
    assert conn.execute("SELECT count(*) FROM sessions").fetchone() == (1,)
    conn.close()


OWN = {
    "status-line cache": (
        "cache/statusline.json",
        "is agentlog's status-line cache ({cache}/statusline.json)",
    ),
    "index": ("cache/index.sqlite", "is agentlog's index ({cache}/index.sqlite)"),
    "index wal": ("cache/index.sqlite-wal", "is agentlog's index ({cache}/index.sqlite)"),
    "index shm": ("cache/index.sqlite-shm", "is agentlog's index ({cache}/index.sqlite)"),
    "demo index": ("cache/demo.sqlite", "is agentlog's demo index ({cache}/demo.sqlite)"),
    "registry cache": ("cache/adapters.json", "is inside agentlog's cache folder ({cache})"),
    "config": ("config/prices.toml", "is inside agentlog's config folder ({config})"),
    "resident socket": ("run/r-0badc0de.sock", "is inside agentlog's resident folder ({run})"),
    "resident lock": ("run/r-0badc0de.lock", "is inside agentlog's resident folder ({run})"),
    "status line beside the index in use": (
        "idx/statusline.json",
        "is agentlog's status-line cache ({idx}/statusline.json)",
    ),
}


@pytest.mark.parametrize("kind", OWN)
def test_an_export_onto_agentlogs_own_files_is_refused(tmp_path, kind):
    """Tester finding 7: ``-o`` at one of agentlog's own files (its index and
    sidecars, the status line's cache, the cache and config folders, the
    resident's socket and lock) is refused in one line, exit 2, before a byte
    is written, in every format; a file beside them is written."""
    _, _, env = _home(tmp_path)
    folders = {
        "cache": tmp_path / "home/.cache/agentlog",
        "config": tmp_path / "home/.config/agentlog",
        "run": tmp_path / "run/agentlog",
        "idx": tmp_path / "idx",
    }
    for folder in folders.values():
        folder.mkdir(parents=True)
    env = {**env, "XDG_RUNTIME_DIR": str(tmp_path / "run")}
    index = folders["idx"] / "i.sqlite"
    code, _, err = run("--index", str(index), "index", env=env)
    assert code == 0, err
    where, said = OWN[kind]
    top, name = where.split("/")
    out = folders[top] / name
    out.write_bytes(b"agentlog's own")
    for fmt in FORMATS:
        code, stdout, err = run(
            "--index", str(index), "--no-sync", "export", SESSION[:8], "-f", fmt, "-o", str(out), env=env
        )
        assert (code, stdout) == (2, ""), fmt
        reason = said.format(**folders)
        assert err == f"agentlog: {out} {reason}: agentlog never writes there; give another -o\n"
        assert out.read_bytes() == b"agentlog's own"
        assert sorted(p.name for p in out.parent.iterdir() if p.name.startswith(name)) == [
            name
        ]  # no temporary file
    beside = folders["cache"].parent / "notes.md"  # ~/.cache itself is not agentlog's
    code, _, err = run("--index", str(index), "--no-sync", "export", SESSION[:8], "-o", str(beside), env=env)
    assert (code, err) == (0, f"1 session exported to {beside}\n")


def test_the_index_named_by_agentlog_index_is_agentlogs_own_but_not_its_folder(tmp_path):
    """With ``AGENTLOG_INDEX``, that file, its sidecars and the status-line cache
    beside it are agentlog's; other files in its folder are the user's."""
    _, _, env = _home(tmp_path)
    alt = tmp_path / "alt"
    alt.mkdir()
    index = tmp_path / "idx" / "i.sqlite"
    index.parent.mkdir()
    code, _, err = run("--index", str(index), "index", env=env)
    assert code == 0, err
    env = {**env, "AGENTLOG_INDEX": str(alt / "mine.sqlite")}
    for name, what in [
        ("mine.sqlite-wal", "index (" + str(alt / "mine.sqlite")),
        ("statusline.json", "status-line cache (" + str(alt / "statusline.json")),
    ]:
        code, _, err = run(
            "--index", str(index), "--no-sync", "export", SESSION[:8], "-o", str(alt / name), env=env
        )
        assert (code, err) == (
            2,
            f"agentlog: {alt / name} is agentlog's {what}): agentlog never writes there; give another -o\n",
        )
    code, _, err = run(
        "--index", str(index), "--no-sync", "export", SESSION[:8], "-o", str(alt / "notes.md"), env=env
    )
    assert (code, err) == (0, f"1 session exported to {alt / 'notes.md'}\n")
    assert sorted(p.name for p in alt.iterdir()) == ["notes.md"]


def test_the_index_in_use_is_refused_without_a_home_too(tmp_path):
    """The service's export refuses its own connection's file even when no home is given."""
    index = tmp_path / "i.sqlite"
    conn = db.connect(index)
    transcript = Transcript(Session(key="claude_code:s1", agent="claude_code", id="s1"), lambda: iter([]))
    with pytest.raises(UsageError, match="is a file of agentlog's index in use"):
        export_sessions(conn, "md", [transcript], ExportOptions(), Path(f"{index}-shm"), io.BytesIO())
    conn.close()
    assert sqlite3.connect(index).execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_project_local_agent_folders_are_agents_folders(tmp_path):
    """Crush's ``.crush`` in a project and Aider's ``.aider*`` files are an agent's,
    as ``~/.claude`` is: neither an export nor an index is written there."""
    home, _, env = _home(tmp_path)
    crush = home / "projA" / ".crush"
    crush.mkdir(parents=True)
    (home / "projB").mkdir()
    before = _files(home / "projA")
    for target in ("crush.db-wal", "out.md", "logs/x.md"):
        code, _, err = run("export", SESSION[:8], "-o", str(crush / target), env=env)
        assert code == 2 and err == (
            f"agentlog: {crush / target} is inside an agent's folder ({crush}): "
            "agentlog never writes there; give another -o\n"
        ), err
    for name in (".aider.input.history", ".aider.chat.history.md", ".aider.tags.cache.v4"):
        code, _, err = run("export", SESSION[:8], "-o", str(home / "projB" / name), env=env)
        assert code == 2 and "is an agent's log file" in err, err
    code, _, err = run("--index", str(crush / "x.sqlite"), "sessions", env=env)
    assert code == 2 and err == (
        f"agentlog: --index {crush / 'x.sqlite'} is inside an agent's folder ({crush}): "
        "agentlog never writes there; choose another file\n"
    )
    assert _files(home / "projA") == before and not list((home / "projB").iterdir())
    assert Home.of({"HOME": str(home)}).guards(home / "projA" / "crush-notes.md") is None


def test_a_relative_root_is_kept_absolute(tmp_path, monkeypatch):
    """``--root rootY`` read in one folder names the same files from any other:
    the sessions are not archived, and the API's ``roots=`` does the same."""
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "t"
    (work / "rootY" / "-p").mkdir(parents=True)
    shutil.copy(FIXTURES / "claude_code" / "v1.0.98-session.jsonl", work / "rootY" / "-p" / "s.jsonl")
    env = {"HOME": str(home)}
    monkeypatch.chdir(work)
    code, _, err = run("--root", "rootY", "index", env=env)
    assert code == 0, err
    monkeypatch.chdir(tmp_path)
    code, out, err = run("sessions", "--json", env=env)
    assert code == 0, err
    assert [(s["id"], s["archived"]) for s in json.loads(out)] == [(SESSION, False)]
    index = home / ".cache" / "agentlog" / "index.sqlite"
    (path,) = sqlite3.connect(index).execute("SELECT path FROM sources").fetchone()
    assert path == str(work / "rootY" / "-p" / "s.jsonl")
    monkeypatch.chdir(work)
    assert Home.of(env, ["rootY"]).roots == [work / "rootY"]
    monkeypatch.setenv("HOME", str(home))
    with agentlog.open(tmp_path / "api.sqlite", roots="rootY") as archive:
        assert archive.home.roots == [work / "rootY"]
        assert [s.id for s in archive.sessions()] == [SESSION]


def test_a_root_an_earlier_sync_was_given_stays_an_agents_folder(tmp_path):
    """After ``--root extra index``, later syncs read extra's sources without the
    flag, so an export into extra (or a new folder in it) is refused without it
    too, in every format (tester finding: it was written, the guard knowing only
    the command line's roots); a folder beside it is still written."""
    home = tmp_path / "home"
    home.mkdir()
    extra = tmp_path / "extra"
    (extra / "-p").mkdir(parents=True)
    shutil.copy(FIXTURES / "claude_code" / "v1.0.98-session.jsonl", extra / "-p" / "s.jsonl")
    env = {"HOME": str(home)}
    code, _, err = run("--root", str(extra), "index", env=env)
    assert code == 0, err
    before = _files(extra)
    for fmt in FORMATS:
        for target in (extra / f"o.{fmt}", extra / "sub" / f"new.{fmt}"):
            code, _, err = run("export", SESSION, "-f", fmt, "-o", str(target), env=env)
            assert code == 2 and "agent's folder" in err and str(extra) in err, err
    assert _files(extra) == before and not (extra / "sub").exists()
    index = home / ".cache" / "agentlog" / "index.sqlite"
    with sqlite3.connect(index) as conn:  # a damaged row costs only itself
        conn.execute("INSERT INTO roots (path) VALUES (x'00ff'), (7)")
    code, _, err = run("export", SESSION, "-f", "md", "-o", str(extra / "o.md"), env=env)
    assert code == 2 and "agent's folder" in err, err
    code, _, err = run("export", SESSION, "-f", "md", "-o", str(tmp_path / "beside" / "o.md"), env=env)
    assert code == 0 and (tmp_path / "beside" / "o.md").read_text().startswith("# "), err


CONTROLS = [chr(c) for c in (*range(0x20), *range(0x7F, 0xA0)) if chr(c) not in "\t\n\r"]


def test_an_html_export_writes_no_control_character_from_a_log(tmp_path):
    """ESC, BEL and every other C0/C1 control character (tab, newline, CR kept)
    in a prompt, a title or a code block reach neither standard output nor a
    file: they are written as the symbols the terminal shows (``␛``)."""
    hostile = "\u001b]0;pwned\u0007\u001b[2J"
    every = "".join(CONTROLS)
    messages = [
        Message(id="m1", role="user", parts=[TextPart(text=f"{hostile} and *all*: {every}")]),
        Message(id="m2", role="assistant", parts=[TextPart(text=f"```python\nx = '{hostile}'\n```")]),
    ]
    header = Session(key="claude_code:s1", agent="claude_code", id="s1", title=f"t {hostile}", cwd=f"/p{hostile}")
    conn = db.connect(tmp_path / "i.sqlite")
    out = io.BytesIO()
    transcript = Transcript(header, lambda: iter(messages))
    export_sessions(conn, "html", [transcript], ExportOptions(), None, out)
    page = out.getvalue().decode()
    assert [c for c in CONTROLS if c in page] == []
    assert page.count("␛]0;pwned␇␛[2J") >= 4  # the title (twice), the folder, the prompt, the code
    export_sessions(conn, "html", [transcript], ExportOptions(), tmp_path / "p.html", io.BytesIO())
    assert (tmp_path / "p.html").read_text() == page
    conn.close()


def test_a_failed_write_leaves_the_old_file_and_a_new_one_keeps_its_mode(tmp_path):
    """A file is replaced only once it is written whole: a writer that fails
    half-way leaves the old file as it was and no temporary file beside it; a
    file replaced keeps its permission bits (one kept private stays so)."""
    from agentlog.export.target import Target

    old = tmp_path / "out.md"
    old.write_text("old export")

    def half(out: io.BufferedIOBase) -> None:
        out.write(b"half a")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        Target().write_bytes(old, half)  # type: ignore[arg-type]
    assert _files(tmp_path) == {old: b"old export"}
    old.chmod(0o600)
    Target().write_bytes(old, lambda out: out.write(b"new export"))
    assert _files(tmp_path) == {old: b"new export"} and old.stat().st_mode & 0o777 == 0o600


def test_an_export_to_a_device_writes_into_it_and_leaves_it_a_device(tmp_path):
    """``-o /dev/null`` (a device, as a FIFO or a pipe) is written in place, never
    replaced by a regular file (as root a rename would)."""
    import stat

    _, _, env = _home(tmp_path)
    code, _, err = run("export", SESSION[:8], "-o", os.devnull, env=env)
    assert (code, err) == (0, f"1 session exported to {os.devnull}\n")
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


GUARD_CHILD = """
import json, sys
from pathlib import Path
from agentlog.adapters import save_registry
from agentlog.service.home import Home
home = Path(sys.argv[1])
why = Home.of({"HOME": str(home)}).guards(home / "projA" / ".crush" / "crush.db-wal")
if sys.argv[2] == "warm":
    save_registry()
print(json.dumps({"why": why, "modules": sorted(
    m for m in sys.modules if m in ("agentlog.adapters.crush", "agentlog.adapters.aider"))}))
"""


def test_the_registry_cache_knows_what_agents_own_in_projects(tmp_path):
    """With the registry cache warm, the guard knows Crush's ``.crush`` without
    importing an adapter module."""
    import subprocess
    import sys

    home, cache = tmp_path / "home", tmp_path / "cache"
    home.mkdir()
    said = []
    for step in ("warm", "read"):
        out = subprocess.run(
            [sys.executable, "-c", GUARD_CHILD, str(home), step],
            env={"PATH": os.environ["PATH"], "HOME": str(home), "XDG_CACHE_HOME": str(cache)},
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        said.append(json.loads(out.stdout))
    wal = home / "projA" / ".crush" / "crush.db-wal"
    assert said[1] == {"why": f"{wal} is inside an agent's folder ({wal.parent})", "modules": []}
    assert said[0]["why"] == said[1]["why"]


def test_an_export_onto_a_hardlink_of_an_agents_file_in_a_project_is_refused(tmp_path):
    """Aider's history lies in a project, in no log folder: a hard link to it
    under another name is known by the inode the index keeps of each source."""
    home, _, env = _home(tmp_path)
    history = home / "projB" / ".aider.chat.history.md"
    history.parent.mkdir()
    shutil.copy(FIXTURES / "aider" / "written-new-format.aider.chat.history.md", history)
    code, out, err = run("sessions", "--agent", "aider", "--json", env=env)
    assert code == 0 and len(json.loads(out)) >= 1, err
    before = history.read_bytes()
    out_path = tmp_path / "x" / "notes.md"
    out_path.parent.mkdir()
    os.link(history, out_path)
    code, stdout, err = run("export", SESSION[:8], "-o", str(out_path), env=env)
    assert (code, stdout, err) == (
        2,
        "",
        f"agentlog: {out_path} is an agent's log file: agentlog never writes there; give another -o\n",
    )
    assert history.read_bytes() == before and os.path.samefile(history, out_path)


@pytest.mark.parametrize("linked", ["file", "folder"])
def test_an_export_onto_a_log_reached_through_a_symlink_in_a_log_folder_is_refused(tmp_path, linked):
    """A transcript kept outside ``~/.claude`` and reached through a symlink inside it
    (the file, or a project folder): ``-o`` its real path overwrote the log, and the
    next sync dropped its session (tester13 finding 1).  It is the same file as the
    source by device and inode: refused, the log untouched.  A project folder that
    is a symlink is a folder logs are read from: its target is an agent's folder,
    nothing is written in it (tester14 finding 8); a file beside a symlinked log is
    the user's."""
    home = tmp_path / "home"
    data = tmp_path / "data"
    data.mkdir()
    log = data / "edge-cases.jsonl"
    shutil.copy(FIXTURES / "claude_code" / "edge-cases.jsonl", log)
    projects = home / ".claude" / "projects"
    projects.mkdir(parents=True)
    if linked == "file":
        (projects / "-p").mkdir()
        (projects / "-p" / log.name).symlink_to(log)
    else:
        (projects / "-q").symlink_to(data)
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    code, out, err = run("sessions", "--json", env=env)
    assert code == 0 and [s["id"] for s in json.loads(out)] == ["edge_cases"], err
    before = log.read_bytes()
    code, stdout, err = run("export", "edge_cases", "--format", "md", "-o", str(log), env=env)
    why = "is an agent's log file" if linked == "file" else f"is inside an agent's folder ({data})"
    assert (code, stdout, err) == (2, "", f"agentlog: {log} {why}: agentlog never writes there; give another -o\n")
    assert log.read_bytes() == before
    code, _, err = run("export", "edge_cases", "--format", "md", "-o", str(data / "notes.md"), env=env)
    if linked == "file":  # beside it: a file of the user's
        assert code == 0, err
    else:
        assert (code, err) == (
            2,
            f"agentlog: {data / 'notes.md'} is inside an agent's folder ({data}): agentlog never writes there;"
            " give another -o\n",
        )
        assert sorted(p.name for p in data.iterdir()) == ["edge-cases.jsonl"]


def test_an_export_onto_the_deleted_target_of_a_symlinked_transcript_is_refused(tmp_path):
    """A transcript that is a symlink whose target was deleted lives on in the
    index alone (archived); ``-o`` the target's path was accepted, the link then
    named the export, and the next sync read it as the transcript: the session
    was gone (tester14 finding 23).  Refused; the session stays."""
    home = tmp_path / "home"
    logs = tmp_path / "logs"
    logs.mkdir()
    target = logs / "r.jsonl"
    shutil.copy(FIXTURES / "claude_code" / "edge-cases.jsonl", target)
    (home / ".claude" / "projects" / "-w").mkdir(parents=True)
    (home / ".claude" / "projects" / "-w" / "edge-cases.jsonl").symlink_to(target)
    (home / ".claude" / "settings.json").write_text('{"cleanupPeriodDays": 3650}')
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert run("index", env=env)[0] == 0
    target.unlink()
    code, out, _ = run("sessions", "--json", env=env)
    assert [(s["id"], s["archived"]) for s in json.loads(out)] == [("edge_cases", True)]
    index = sqlite3.connect(tmp_path / "cache" / "agentlog" / "index.sqlite")
    with index:  # damaged archived rows: a path with a NUL, a path that is a number — each costs only itself
        index.executemany(
            "INSERT INTO sources (path, agent, archived_at) VALUES (?, 'claude_code', '2026-01-01T00:00:00+00:00')",
            [("/x/a\x00b.jsonl",), (42,), (str(home / ".claude" / "projects" / "x\x00y" / "z.jsonl"),)],
        )
    index.close()
    # (--no-sync: a sync would drop these rows, missing and holding no session; it was exit 70)
    assert run("--no-sync", "export", "edge_cases", "--format", "md", "-o", str(tmp_path / "mine.md"), env=env)[0] == 0
    code, _, err = run("export", "edge_cases", "--format", "md", "-o", str(target), env=env)
    assert (code, err) == (2, f"agentlog: {target} is an agent's log file: agentlog never writes there; give another -o\n")
    assert not target.exists()
    code, out, _ = run("sessions", "--json", env=env)
    assert [(s["id"], s["archived"]) for s in json.loads(out)] == [("edge_cases", True)]


ALL_FORMATS = (*FORMATS, "parquet", "site")


def test_a_log_folder_reached_through_a_symlink_is_an_agents_folder_in_every_format(tmp_path):
    """Tester14 finding 8: ``~/.claude/projects -> ~/store`` and ``~/.codex/sessions
    -> ~/cx`` (logs moved elsewhere), and a Codex day folder inside it that is a
    symlink (``2026 -> ~/days``): the real folders logs are read from are agents'
    folders.  Every format, ``--index`` too, refused in one line (exit 2) before a
    byte is written there; a file beside them, in the home folder, is written."""
    home = tmp_path / "home"
    store, cx, days = home / "store", home / "cx", tmp_path / "days"
    (store / "-w-a").mkdir(parents=True)
    shutil.copy(FIXTURES / "claude_code" / "v1.0.98-session.jsonl", store / "-w-a" / f"{SESSION}.jsonl")
    (days / "12" / "03").mkdir(parents=True)
    shutil.copy(FIXTURES / "codex" / "rollout-synthetic-tools.jsonl", days / "12" / "03" / "rollout-x.jsonl")
    (home / ".claude").mkdir()
    (home / ".claude" / "projects").symlink_to(store)
    (home / ".codex").mkdir()
    (home / ".codex" / "sessions").symlink_to(cx)
    cx.mkdir()
    (cx / "2026").symlink_to(days)
    env = {"HOME": str(home), "AGENTLOG_INDEX": str(tmp_path / "index.sqlite")}
    code, out, err = run("sessions", "--json", "--subagents", env=env)
    assert code == 0 and sorted(s["agent"] for s in json.loads(out)) == ["claude_code", "codex"], err
    before = {folder: _files(folder) for folder in (store, cx, days)}
    targets = [
        (store / "-w-a" / "bbbbbbbb-2222-3333-4444-555555555555.jsonl", store),
        (store / "notes.md", store),
        (cx / "pq", cx),
        (days / "12" / "out.md", days),
    ]
    for target, real in targets:
        for fmt in ALL_FORMATS:
            args = ["--all", "-f", "html"] if fmt == "site" else ["--all", "-f", fmt]
            code, stdout, err = run("export", *args, "-o", str(target), env=env)
            assert (code, stdout, err) == (
                2,
                "",
                f"agentlog: {target} is inside an agent's folder ({real}): agentlog never writes there;"
                " give another -o\n",
            ), (target, fmt)
    code, _, err = run("--index", str(store / "i.sqlite"), "sessions", env=env)
    assert (code, err) == (
        2,
        f"agentlog: --index {store / 'i.sqlite'} is inside an agent's folder ({store}): agentlog never writes"
        " there; choose another file\n",
    )
    assert {folder: _files(folder) for folder in (store, cx, days)} == before
    assert run("export", "--all", "-f", "md", "-o", str(home / "notes.md"), env=env)[0] == 0
    assert (home / "notes.md").is_file()
