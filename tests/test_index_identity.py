"""The index is agentlog's own: other files are refused before a byte is written,
a damaged index always gets the delete-to-rebuild answer, and an up-to-date
index on read-only storage is read with ``--no-sync`` (WAL mode or not)."""

from __future__ import annotations

import gc
import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentlog.cli import main
from agentlog.errors import REBUILD_HINT
from agentlog.index import db
from agentlog.index.schema import APPLICATION_ID, MIGRATIONS
from conftest import FIXTURES, build_sqlite

COMMANDS = [
    [],
    ["overview", "--no-sync"],
    ["sessions", "--json"],
    ["sessions", "--json", "--no-sync"],
    ["usage", "--json"],
    ["usage", "--json", "--no-sync"],
    ["search", "the", "--no-sync"],
    ["show", "1af7fc5e-8455-4414-9ccd-011d40f70b2a", "--no-sync"],
    ["doctor", "--no-sync"],
    ["index"],
    ["serve", "--no-sync", "--port", "0"],
]


def run(*args: str, index: Path, home: Path) -> tuple[int, str, str]:
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": None, "CODEX_HOME": None, "XDG_CONFIG_HOME": None}
    result = CliRunner().invoke(main, ["--index", str(index), *args], env=env)
    return result.exit_code, result.stdout, result.stderr


def claude_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "claude_code", home / ".claude/projects/-tmp-project")
    return home


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with the SHA-1 of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha1(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def agent_database(tmp_path: Path, name: str) -> Path:
    """An agent's own database as its agent leaves it: OpenCode and Crush keep
    theirs in WAL mode; checkpointed, no ``-wal``/``-shm`` while the agent is closed."""
    sql = {"opencode": FIXTURES / "opencode/opencode-db.sql", "crush": FIXTURES / "crush/crush.sql"}[name]
    path = build_sqlite(sql, tmp_path / "agent" / f"{name}.db")
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode = WAL").fetchone() == ("wal",)
    conn.close()
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
    return path


@pytest.mark.parametrize("name", ["opencode", "crush"])
@pytest.mark.parametrize("args", [["sessions"], ["sessions", "--no-sync"], ["index", "--json"]])
def test_an_agents_database_is_refused_and_left_byte_for_byte(tmp_path, name, args):
    path = agent_database(tmp_path, name)
    before = snapshot(path.parent)
    code, out, err = run(*args, index=path, home=claude_home(tmp_path))
    assert code == 1 and out == ""
    tables = {"opencode": "message, part, session", "crush": "messages, sessions"}[name]
    assert err == (
        f"agentlog: {path} is not an agentlog index (an SQLite database with other tables: {tables}); "
        f"nothing was written to it: choose another file with --index; only if this file was agentlog's own "
        f"index (never another program's) is it damaged: {REBUILD_HINT}\n"
    )
    assert snapshot(path.parent) == before  # no table, no WAL switch, no -wal/-shm left behind


def test_an_agents_database_with_its_write_ahead_log_open_is_refused_untouched(tmp_path):
    path = agent_database(tmp_path, "opencode")
    agent = sqlite3.connect(path, isolation_level=None)  # the agent runs: -wal and -shm exist
    agent.execute(
        "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('m9', 's', 1, 1, '{}')"
    )
    before = snapshot(path.parent)
    assert {f"{path.name}-wal", f"{path.name}-shm"} <= set(before)
    with pytest.raises(Exception, match="not an agentlog index"):
        db.connect(path)
    with pytest.raises(Exception, match="not an agentlog index"):
        db.connect(path, readonly=True)
    assert snapshot(path.parent) == before
    agent.close()


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b'{"not": "sqlite"}\n', "not an SQLite database"),
        (b"SQLite format 3\x00" + bytes(84) + b"\x00" * 4000, "an SQLite database of another application"),
    ],
)
def test_a_file_that_is_not_an_index_is_refused_unchanged(tmp_path, content, why):
    path = tmp_path / "notes.json"
    if b"SQLite" in content:  # another application's database: its own application_id
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA application_id = 1196444487")  # "GPKG", a GeoPackage
        conn.execute("CREATE TABLE features (id INTEGER)")
        conn.commit()
        conn.close()
    else:
        path.write_bytes(content)
    before = snapshot(tmp_path)
    code, out, err = run("sessions", index=path, home=tmp_path / "home")
    assert code == 1 and out == ""
    assert err.startswith(f"agentlog: {path} is not an agentlog index ({why}") and err.count("\n") == 1
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_fifo_or_a_device_is_refused_without_being_opened(tmp_path, kind):
    import os

    path = tmp_path / "index.sqlite"
    if kind == "fifo":
        os.mkfifo(path)  # opening it to read would block until a writer comes
    else:
        path = Path("/dev/null")
    code, out, err = run("sessions", "--no-sync", index=path, home=tmp_path / "home")
    assert (code, out) == (1, "")
    assert err.startswith(
        f"agentlog: {path} is not an agentlog index (not a regular file); nothing was written"
    )


@pytest.mark.parametrize("kind", ["missing", "empty file", "empty SQLite database"])
def test_a_missing_or_empty_file_becomes_a_new_index(tmp_path, kind):
    path = tmp_path / "index.sqlite"
    if kind == "empty file":
        path.write_bytes(b"")
    elif kind == "empty SQLite database":
        sqlite3.connect(path).execute("PRAGMA user_version = 0").fetchall()
    code, _out, err = run("index", "--json", index=path, home=claude_home(tmp_path))
    assert code == 0, err
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)
    assert conn.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)
    assert path.read_bytes()[68:72] == b"AGLG"  # in the main file: identified without opening it


def test_an_index_made_before_the_application_id_is_still_recognised_and_stamped(tmp_path):
    path = tmp_path / "old.sqlite"
    old = sqlite3.connect(path, isolation_level=None)
    old.execute("PRAGMA journal_mode = WAL")
    for number, migration in enumerate(MIGRATIONS[:7]):
        for statement in db._statements(migration):
            old.execute(statement)
        old.execute(f"PRAGMA user_version = {number + 1}")
    old.close()
    assert db.check_index(path) is True
    code, _, err = run("sessions", "--json", index=path, home=claude_home(tmp_path))
    assert code == 0, err
    assert path.read_bytes()[68:72] == b"AGLG"
    assert db.schema_matches(path)


@pytest.fixture
def built_index(tmp_path) -> tuple[Path, Path]:
    home = claude_home(tmp_path)
    index = tmp_path / "index.sqlite"
    code, _, err = run("index", index=index, home=home)
    assert code == 0, err
    gc.collect()  # the in-process CLI's connections are closed
    conn = sqlite3.connect(index)  # everything in the main file, as after the last agentlog closed
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return index, home


def _truncate(index: Path) -> None:
    index.write_bytes(index.read_bytes()[: 2 * db.PAGE_SIZE])  # the schema stays, the tables' pages go


def _garbage_pages(index: Path) -> None:
    data = bytearray(index.read_bytes())
    page = db.PAGE_SIZE
    for start in range(page, len(data), 2 * page):  # every other page after the header's
        data[start : start + page] = bytes((i * 7 + 3) % 256 for i in range(page))
    index.write_bytes(bytes(data))


def _wrong_schema(index: Path) -> None:
    conn = sqlite3.connect(index)
    conn.execute("ALTER TABLE sessions DROP COLUMN title")
    conn.execute("DROP TABLE usage_rollup")
    conn.commit()
    conn.close()


def _header_garbage(index: Path) -> None:
    data = bytearray(index.read_bytes())
    data[:100] = b"\xff" * 100
    index.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", [_truncate, _garbage_pages, _wrong_schema, _header_garbage])
@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a) or "(overview)")
def test_a_damaged_index_always_gets_the_delete_to_rebuild_line(built_index, damage, args):
    index, home = built_index
    damage(index)
    code, _out, err = run(*args, index=index, home=home)
    assert (code, "internal error" in err) == (1, False), err
    assert err.count("\n") == 1 and err.rstrip().endswith(REBUILD_HINT), err
    assert err.startswith(f"agentlog: the index {index} is damaged (") or err.startswith(
        f"agentlog: {index} is not an agentlog index ("
    )


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a) or "(overview)")
def test_an_index_whose_tables_its_schema_number_does_not_fit_says_delete_it(built_index, args):
    """Another build (a branch with other migrations) wrote it: a migration fails
    on its tables.  It said "cannot open the index …: no such column" with no
    advice, and the API raised a raw sqlite3.OperationalError."""
    import agentlog
    from agentlog.errors import IndexProblem

    index, home = built_index
    conn = sqlite3.connect(index)
    conn.execute("PRAGMA user_version = 0")  # its first migration creates tables it already has
    conn.close()
    before = index.read_bytes()
    code, _out, err = run(*args, index=index, home=home)
    assert (code, err.count("\n")) == (1, 1), err
    assert err.startswith(f"agentlog: the index {index} cannot be upgraded from schema 0 (table sources already exists")
    assert err.rstrip().endswith(f"another build of agentlog wrote it; {REBUILD_HINT}") and index.read_bytes() == before
    with pytest.raises(IndexProblem, match="cannot be upgraded from schema 0"):
        agentlog.open(index, sync=False)


def test_the_explanation_of_an_error_names_its_cause(built_index):
    index, _ = built_index
    assert db.explain(sqlite3.OperationalError("no such column: x"), index) is None  # our tables: a bug
    locked = sqlite3.connect(index)
    try:
        locked.execute("SELECT nothing FROM sessions")
    except sqlite3.OperationalError as exc:
        assert db.explain(exc, index) is None
    try:
        sqlite3.connect(f"file:{index}?mode=ro", uri=True).execute("CREATE TABLE x (y)")
    except sqlite3.OperationalError as exc:
        assert str(db.explain(exc, index)) == (
            f"cannot update the index {index}: attempt to write a readonly database (--no-sync reads it as it is)"
        )


@pytest.fixture
def read_only_folder(tmp_path):
    """A folder that really denies writes, to root too: a read-only bind mount."""
    source, target = tmp_path / "rw", tmp_path / "ro"
    source.mkdir()
    target.mkdir()
    mounted = subprocess.run(["mount", "--bind", str(source), str(target)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot bind-mount here: {mounted.stderr.decode().strip()}")
    remounted = subprocess.run(["mount", "-o", "remount,bind,ro", str(target)], capture_output=True)
    try:
        if remounted.returncode != 0:
            pytest.skip(f"cannot remount read-only here: {remounted.stderr.decode().strip()}")
        yield source, target
    finally:
        if subprocess.run(["umount", str(target)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(target)], check=True)


@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_an_index_on_read_only_storage_is_read_with_no_sync(built_index, read_only_folder, journal):
    index, home = built_index
    source, target = read_only_folder
    conn = sqlite3.connect(index)
    assert conn.execute(f"PRAGMA journal_mode = {journal}").fetchone() == (journal,)
    conn.close()
    shutil.copy(index, source / "index.sqlite")
    assert sorted(p.name for p in source.iterdir()) == ["index.sqlite"]
    expected = run("sessions", "--json", "--no-sync", index=index, home=home)
    assert expected[0] == 0 and len(expected[1]) > 100
    before = snapshot(source)
    assert run("sessions", "--json", "--no-sync", index=target / "index.sqlite", home=home) == expected
    usage = run("usage", "--json", "--no-sync", index=target / "index.sqlite", home=home)
    assert usage == run("usage", "--json", "--no-sync", index=index, home=home)
    from agentlog.web.app import create_app

    page = create_app(target / "index.sqlite").test_client().get("/")  # the viewer of `serve --no-sync`
    assert page.status_code == 200 and "1af7fc5e" in page.get_data(as_text=True)
    gc.collect()
    assert snapshot(source) == before  # nothing made beside it
    code, _, err = run("sessions", index=target / "index.sqlite", home=home)  # a sync must write
    assert code == 1 and err.endswith("(--no-sync reads it as it is)\n"), err


def test_agentlog_index_in_the_environment_is_refused_the_same(tmp_path):
    path = agent_database(tmp_path, "crush")
    before = snapshot(path.parent)
    env = {"HOME": str(tmp_path / "home"), "AGENTLOG_INDEX": str(path)}
    result = CliRunner().invoke(main, ["usage", "--json"], env=env)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith(
        f"agentlog: {path} is not an agentlog index (an SQLite database with other"
    )
    assert snapshot(path.parent) == before


def test_the_background_sync_of_a_damaged_index_says_delete_it(built_index):
    from agentlog.web.syncer import Syncer

    index, home = built_index
    _truncate(index)
    syncer = Syncer(index, {"HOME": str(home)}, home, [], interval=3600)
    syncer.sync_round()
    assert syncer.error is not None and syncer.error.startswith(f"the index {index} is damaged (")
    assert syncer.error.endswith(REBUILD_HINT) and "\n" not in syncer.error


WITHOUT_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
"""Root without the capabilities that let it ignore permission bits: the
kernel then refuses it what the bits refuse (the venv stays readable, which a
switch to another user does not promise: CI's venv is in a private folder)."""


def test_a_wal_index_in_a_folder_the_user_may_not_write_is_read_with_no_sync(built_index):
    """A read-only folder (not a read-only mount) fails the ``-shm`` with
    ``SQLITE_READONLY_DIRECTORY``, not ``SQLITE_CANTOPEN``: ``--no-sync`` then fell
    through to opening for writing and gave "cannot update the index"."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run agentlog without its permission-bit override")
    probe = subprocess.run([*WITHOUT_DAC, "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot drop capabilities here: {probe.stderr.strip()}")
    index, home = built_index
    conn = sqlite3.connect(index)
    assert conn.execute("PRAGMA journal_mode = wal").fetchone() == ("wal",)
    conn.close()
    folder = Path(tempfile.mkdtemp(dir="/tmp"))  # every folder above it may be entered by anyone
    try:
        shutil.copy(index, folder / "index.sqlite")
        (folder / "index.sqlite").chmod(0o444)
        folder.chmod(0o555)
        expected = run("sessions", "--json", "--no-sync", index=index, home=home)
        assert expected[0] == 0 and len(expected[1]) > 100
        args = ["--index", str(folder / "index.sqlite"), "sessions", "--json", "--no-sync"]
        unprivileged = subprocess.run(
            [*WITHOUT_DAC, sys.executable, "-m", "agentlog", *args],
            capture_output=True,
            text=True,
            timeout=60,
            env={"HOME": str(folder), "PATH": os.environ["PATH"], "PYTHONPATH": ":".join(sys.path)},
        )
        assert (unprivileged.returncode, unprivileged.stdout, unprivileged.stderr) == expected
        assert sorted(p.name for p in folder.iterdir()) == ["index.sqlite"]
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder)


def test_an_empty_database_with_another_programs_schema_version_is_refused(tmp_path):
    """No table yet, but a ``user_version`` set: another program's database (its
    migrations numbered), not a blank file to make an index of; it was written
    (WAL switch, agentlog's header) and then failed "no such table: sources"."""
    path = tmp_path / "agent" / "state.db"
    path.parent.mkdir()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 7")
    conn.close()
    before = snapshot(path.parent)
    code, out, err = run("sessions", index=path, home=tmp_path / "home")
    assert (code, out) == (1, "")
    assert err == (
        f"agentlog: {path} is not an agentlog index (an SQLite database of another program (user_version 7)); "
        f"nothing was written to it: choose another file with --index; only if this file was agentlog's own "
        f"index (never another program's) is it damaged: {REBUILD_HINT}\n"
    )
    assert snapshot(path.parent) == before


LAST_CLOSE = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
conn.execute("SELECT count(*) FROM sources").fetchall()
conn.close()  # the last connection (by the locks it can take) checkpoints and deletes the -wal
"""


@pytest.mark.parametrize("check", [db.check_index, db._stamped, db.diagnose])
def test_checking_the_file_keeps_this_process_sqlite_locks(tmp_path, check):
    """Reading the index's header while this process has it open must not drop
    SQLite's locks (closing any descriptor of a file drops all of a process's POSIX
    locks on it): another process closing its connection then took itself for the
    last one and deleted the ``-wal`` under this one's open transaction, which
    corrupted the index (``tail`` connecting each round while ``status`` synced)."""
    path = tmp_path / "index.sqlite"
    conn = db.connect(path)
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute("INSERT INTO roots (path) VALUES ('/nowhere')")  # frames in the -wal
    conn.execute("BEGIN")
    assert conn.execute("SELECT count(*) FROM roots").fetchone() == (1,)  # a read transaction: locks held
    wal = Path(f"{path}-wal")
    assert wal.stat().st_size > 0
    check(path)
    subprocess.run([sys.executable, "-c", LAST_CLOSE, str(path)], check=True)
    assert wal.exists() and wal.stat().st_size > 0  # not taken for the last connection
    conn.execute("COMMIT")
    conn.execute("INSERT INTO roots (path) VALUES ('/elsewhere')")
    assert conn.execute("PRAGMA quick_check").fetchone() == ("ok",)
    conn.close()
    assert sqlite3.connect(path).execute("SELECT count(*) FROM roots").fetchone() == (2,)
