"""Logs are evidence: the index keeps the sessions of a log that is gone (deleted,
or its folder unreadable), archived, listed, searchable and costed, until
``agentlog prune``; a log rewritten with other content still replaces them."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentlog.cli import main
from agentlog.index import db, queries
from agentlog.index.schema import MIGRATIONS
from conftest import FIXTURES
from test_fts import downgrade_live_status, downgrade_search_index

MINIMAL = "usage-costUSD-minimal.jsonl"  # 3 calls, costs recorded by Claude Code: $0.12 + $0.34 + $0.56
DEMO = "v1.0.98-session.jsonl"  # "/init" in /path/to/Demo: 7 calls, priced
MINIMAL_USAGE = {
    "input_tokens": 600,
    "cache_read_tokens": 70,
    "cache_write_5m_tokens": 75,
    "cache_write_1h_tokens": 0,
    "output_tokens": 250,
    "reasoning_tokens": 0,
    "total_tokens": 995,
}


def make_home(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    project = home / ".claude/projects/-path-to-Demo"
    project.mkdir(parents=True)
    for name in (MINIMAL, DEMO):
        shutil.copy(FIXTURES / "claude_code" / name, project / name)
    return home, project


def run(home: Path, *args: str) -> tuple[int, str, str]:
    env = {
        "HOME": str(home),
        "AGENTLOG_INDEX": str(home.parent / "index.sqlite"),
        "CLAUDE_CONFIG_DIR": None,
        "CODEX_HOME": None,
        "XDG_CONFIG_HOME": None,
    }
    result = CliRunner().invoke(main, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def as_json(home: Path, *args: str) -> object:
    code, out, err = run(home, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def by_key(rows: object) -> dict[str, dict]:
    assert isinstance(rows, list)
    return {r["key"]: r for r in rows}


def session_usage(home: Path) -> dict[str, tuple[int, float | None, int]]:
    """``usage session``: (total tokens, cost, calls) per session."""
    report = as_json(home, "usage", "session")
    assert isinstance(report, dict)
    return {r["key"]: (r["total_tokens"], r["cost_usd"], r["calls"]) for r in report["rows"]}


def test_a_deleted_log_stays_listed_searchable_and_costed_until_prune(tmp_path):
    home, project = make_home(tmp_path)
    before = as_json(home, "index")
    assert isinstance(before, dict) and (before["reparsed"], before["archived"]) == (2, 0)
    costs = session_usage(home)
    assert costs == {
        "claude_code:session-alpha": (995, 1.02, 3),
        "claude_code:1af7fc5e-8455-4414-9ccd-011d40f70b2a": (116963, 0.093157, 7),
    }
    (project / MINIMAL).unlink()
    (project / DEMO).unlink()  # both gone, as Claude Code's 30-day cleanup leaves them
    synced = as_json(home, "index")
    assert isinstance(synced, dict)
    assert (synced["sources"], synced["archived"], synced["removed"], synced["failed"]) == (0, 2, 0, [])
    rows = by_key(as_json(home, "sessions"))
    assert set(rows) == {"claude_code:session-alpha", "claude_code:1af7fc5e-8455-4414-9ccd-011d40f70b2a"}
    assert all(r["archived"] for r in rows.values())
    assert rows["claude_code:session-alpha"]["usage"] == MINIMAL_USAGE
    assert rows["claude_code:session-alpha"]["messages"] == 3
    assert session_usage(home) == costs  # still costed, to the cent
    shown = as_json(home, "show", "1af7fc5e-8455-4414-9ccd-011d40f70b2a")
    assert isinstance(shown, dict) and shown["archived"] is True and shown["title"] == "/init"
    found = as_json(home, "search", "CLAUDE.md")
    assert isinstance(found, dict) and {h["session_key"] for h in found["hits"]} == {
        "claude_code:1af7fc5e-8455-4414-9ccd-011d40f70b2a"
    }
    code, out, _ = run(home, "sessions")
    assert code == 0 and out.count("archived") == 2
    code, out, _ = run(home, "show", "1af7fc5e-8455-4414-9ccd-011d40f70b2a")
    assert (
        "archived: its log is gone (or cannot be read); kept by the index until `agentlog prune`"
        in " ".join(out.split())
    )

    # another sync keeps them (and says nothing new); a dry run changes nothing
    again = as_json(home, "index")
    assert isinstance(again, dict) and (again["archived"], again["removed"]) == (0, 0)
    index = home.parent / "index.sqlite"
    files = sorted(index.parent.glob("index.sqlite*"))
    sums = [hashlib.sha1(f.read_bytes()).hexdigest() for f in files]
    dry = as_json(home, "prune", "--dry-run", "--no-sync")
    assert isinstance(dry, dict) and dry["dry_run"] is True
    gone = [(s["path"], s["agent"], s["error"], s["sessions"]) for s in dry["sources"]]
    assert gone == [
        (str(project / MINIMAL), "claude_code", None, ["claude_code:session-alpha"]),
        (str(project / DEMO), "claude_code", None, ["claude_code:1af7fc5e-8455-4414-9ccd-011d40f70b2a"]),
    ]
    assert [hashlib.sha1(f.read_bytes()).hexdigest() for f in files] == sums
    assert session_usage(home) == costs

    pruned = as_json(home, "prune")
    assert isinstance(pruned, dict) and pruned["dry_run"] is False
    assert [s["sessions"] for s in pruned["sources"]] == [s for *_, s in gone]
    assert as_json(home, "sessions") == []
    assert session_usage(home) == {}
    assert as_json(home, "prune")["sources"] == []  # type: ignore[index]


def test_prune_text_and_one_agent(tmp_path):
    home, project = make_home(tmp_path)
    run(home, "index")
    (project / MINIMAL).unlink()
    code, out, err = run(home, "prune", "--dry-run", "--agent", "codex")
    assert (code, out, err) == (0, "", "nothing archived\n")
    code, out, err = run(home, "prune", "-n", "--agent", "claude")
    assert code == 0 and out.startswith(f"would remove {project / MINIMAL}: 1 session, archived ")
    assert err == "would remove 1 archived source, 1 session\n"
    code, out, err = run(home, "prune")
    assert code == 0 and out.startswith(f"removed {project / MINIMAL}: 1 session,")
    assert set(session_usage(home)) == {"claude_code:1af7fc5e-8455-4414-9ccd-011d40f70b2a"}


def test_a_log_rewritten_with_other_content_still_replaces_its_sessions(tmp_path):
    home, project = make_home(tmp_path)
    run(home, "index")
    log = project / MINIMAL
    log.write_text(log.read_text().splitlines()[0] + "\n")  # shorter: its first call only
    synced = as_json(home, "index")
    assert isinstance(synced, dict) and (synced["reparsed"], synced["archived"]) == (1, 0)
    row = by_key(as_json(home, "sessions"))["claude_code:session-alpha"]
    assert (row["archived"], row["messages"], row["usage"]["total_tokens"]) == (False, 1, 185)
    assert session_usage(home)["claude_code:session-alpha"] == (185, 0.12, 1)
    assert as_json(home, "prune", "--dry-run")["sources"] == []  # type: ignore[index]


def test_a_log_that_comes_back_is_no_longer_archived(tmp_path):
    home, project = make_home(tmp_path)
    run(home, "index")
    away = tmp_path / "away.jsonl"
    (project / MINIMAL).rename(away)
    assert by_key(as_json(home, "sessions"))["claude_code:session-alpha"]["archived"] is True
    away.rename(project / MINIMAL)
    synced = as_json(home, "index")
    assert isinstance(synced, dict) and synced["restored"] == 1
    assert not any(r["archived"] for r in by_key(as_json(home, "sessions")).values())
    assert session_usage(home)["claude_code:session-alpha"] == (995, 1.02, 3)
    conn = db.connect(home.parent / "index.sqlite")
    assert conn.execute("SELECT COUNT(*) FROM sources WHERE archived_at IS NOT NULL").fetchone() == (0,)


def test_a_session_moved_to_another_path_is_handed_over_not_archived(tmp_path):
    """Codex moves a finished session from ``sessions/`` to ``archived_sessions/``."""
    home = tmp_path / "home"
    day = home / ".codex/sessions/2025/11/25"
    day.mkdir(parents=True)
    shutil.copy(FIXTURES / "codex/rollout-synthetic-tools.jsonl", day)
    run(home, "index")
    (rows,) = as_json(home, "sessions", "--exec")  # type: ignore[misc]  # a `codex exec` run
    moved = home / ".codex/archived_sessions/rollout-synthetic-tools.jsonl"
    moved.parent.mkdir(parents=True)
    (day / "rollout-synthetic-tools.jsonl").rename(moved)
    run(home, "index")
    (after,) = as_json(home, "sessions", "--exec")  # type: ignore[misc]
    assert after == rows  # the same session, not archived, not a duplicate
    shown = as_json(home, "show", rows["key"])
    assert isinstance(shown, dict) and shown["sources"] == [str(moved)]
    assert as_json(home, "prune", "--dry-run")["sources"] == []  # type: ignore[index]


def test_a_duplicate_copy_takes_over_when_the_original_goes(tmp_path):
    home = tmp_path / "home"
    day = home / ".codex/sessions/2025/11/25"
    copy = home / ".codex/archived_sessions"
    day.mkdir(parents=True)
    copy.mkdir(parents=True)
    shutil.copy(FIXTURES / "codex/rollout-synthetic-tools.jsonl", day)
    shutil.copy(FIXTURES / "codex/rollout-synthetic-tools.jsonl", copy)
    synced = as_json(home, "index")
    assert isinstance(synced, dict) and synced["duplicates"] == 1
    (rows,) = as_json(home, "sessions", "--exec")  # type: ignore[misc]  # a `codex exec` run
    (day / "rollout-synthetic-tools.jsonl").unlink()
    run(home, "index")
    assert as_json(home, "sessions", "--exec") == [rows]
    shown = as_json(home, "show", rows["key"])
    assert isinstance(shown, dict) and shown["sources"] == [str(copy / "rollout-synthetic-tools.jsonl")]


def _without_dac() -> list[str]:
    """A command prefix that runs as root without the capabilities that let root
    ignore permission bits (so a ``chmod 000`` folder really cannot be read)."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv is not installed")
    prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search"]
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot drop capabilities here: {probe.stderr.decode().strip()}")
    return prefix


def test_an_unreadable_projects_folder_keeps_claudes_sessions(tmp_path):
    prefix = _without_dac()
    home, _ = make_home(tmp_path)
    env = {
        "HOME": str(home),
        "AGENTLOG_INDEX": str(tmp_path / "index.sqlite"),
        "PATH": os.environ.get("PATH", ""),
    }

    def cli(*args: str) -> dict:
        done = subprocess.run(
            [*prefix, sys.executable, "-m", "agentlog", *args, "--json"],
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    cli("index")
    costs = {r["key"]: (r["total_tokens"], r["cost_usd"]) for r in cli("usage", "session")["rows"]}
    projects = home / ".claude/projects"
    projects.chmod(0)
    try:
        synced = cli("index")
        assert (synced["archived"], synced["removed"]) == (2, 0)  # never "2 removed"
        rows = cli("sessions")
        assert sorted((r["key"], r["archived"]) for r in rows) == [
            ("claude_code:1af7fc5e-8455-4414-9ccd-011d40f70b2a", True),
            ("claude_code:session-alpha", True),
        ]
        assert {
            r["key"]: (r["total_tokens"], r["cost_usd"]) for r in cli("usage", "session")["rows"]
        } == costs
        why = f"{projects} cannot be looked at: PermissionError: Permission denied"
        assert [(s["path"], s["error"]) for s in cli("prune", "--dry-run")["sources"]] == [
            (str(home / ".claude/projects/-path-to-Demo" / name), why) for name in sorted((MINIMAL, DEMO))
        ]
    finally:
        projects.chmod(0o755)
    synced = cli("index")
    assert (synced["restored"], synced["reparsed"]) == (2, 0)
    assert not any(r["archived"] for r in cli("sessions"))


def test_an_index_of_schema_8_upgrades_and_keeps_its_sessions(tmp_path):
    home, project = make_home(tmp_path)
    run(home, "index")
    index = home.parent / "index.sqlite"
    conn = sqlite3.connect(index)  # back to schema 8: no archived_at, no prompt_only, roll-ups in USD
    conn.execute("ALTER TABLE usage_rollup RENAME COLUMN recorded_nano_usd TO cost_usd")
    conn.execute("ALTER TABLE usage_rollup DROP COLUMN model_inferred")  # the codex migration
    downgrade_live_status(conn)  # and the live status columns
    conn.execute("DROP INDEX sources_known")  # the sync memo's migration indexes archived_at
    conn.execute("ALTER TABLE sources DROP COLUMN archived_at")
    conn.execute("ALTER TABLE sessions DROP COLUMN prompt_only")
    downgrade_search_index(conn)  # and the search tables as schema 8 had them
    conn.execute("PRAGMA user_version = 8")
    conn.commit()
    conn.close()
    (project / MINIMAL).unlink()
    synced = as_json(home, "index")
    assert isinstance(synced, dict) and synced["archived"] == 1
    upgraded = db.connect(index)
    assert upgraded.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)
    assert db.schema_matches(index)
    assert [s.key for s in queries.list_sessions(upgraded) if s.archived] == [
        "claude_code:session-alpha"
    ]


def test_what_says_a_source_cannot_be_read_rather_than_changed(tmp_path):
    from agentlog.index.sync import _unreadable

    try:
        sqlite3.connect(f"file:{tmp_path / 'missing.db'}?mode=ro", uri=True).execute("SELECT 1")
    except sqlite3.OperationalError as exc:
        cannot_open = exc
    assert cannot_open.sqlite_errorname == "SQLITE_CANTOPEN"
    assert _unreadable(cannot_open) and _unreadable(PermissionError(13, "Permission denied"))
    malformed = sqlite3.DatabaseError("database disk image is malformed")
    assert not _unreadable(malformed) and not _unreadable(ValueError("not JSON"))


def test_index_says_the_sources_an_earlier_sync_could_not_read(tmp_path):
    """A source that failed is not tried again until it changes, so a later
    ``index`` has no failure of its own: it still says the index holds one it
    could not read (tester finding 8, session 9), until it can be read."""
    prefix = _without_dac()
    home, project = make_home(tmp_path)
    locked = project / "locked.jsonl"
    shutil.copy(FIXTURES / "claude_code" / MINIMAL, locked)
    locked.chmod(0)
    env = {"HOME": str(home), "AGENTLOG_INDEX": str(tmp_path / "index.sqlite"), "PATH": os.environ.get("PATH", "")}

    def index(*args: str) -> str:
        done = subprocess.run(
            [*prefix, sys.executable, "-m", "agentlog", "index", *args], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    first = json.loads(index("--json"))
    assert ([f["path"] for f in first["failed"]], first["still_unreadable"]) == ([str(locked)], 0)
    later = json.loads(index("--json"))
    assert (later["failed"], later["still_unreadable"], later["unchanged"]) == ([], 1, 3)
    assert "  1 source an earlier sync could not read, unchanged since (see `agentlog doctor`)\n" in index()
    locked.chmod(0o644)
    os.utime(locked)  # readable again, and changed: read
    again = json.loads(index("--json"))
    assert (again["failed"], again["still_unreadable"]) == ([], 0), again
    assert (again["sources"], again["unchanged"], again["duplicates"]) == (3, 2, 1), again  # read: a copy of another
