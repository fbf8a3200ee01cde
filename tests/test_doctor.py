"""``agentlog doctor``: an index never synced, the places a sync reads."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

from click.testing import CliRunner

from agentlog.cli import main
from agentlog.index.damage import DamagedAt, check_rows
from conftest import FIXTURES

AGENT_VARS = {"CLAUDE_CONFIG_DIR": None, "CODEX_HOME": None, "XDG_CONFIG_HOME": None}


def run(home: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), env={**AGENT_VARS, "HOME": str(home)})
    return result.exit_code, result.stdout, result.stderr


def claude_home(tmp_path: Path) -> Path:
    """A home with two Claude Code transcripts and a settings file that keeps them."""
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-p"
    project.mkdir(parents=True)
    for name in sorted((FIXTURES / "claude_code").glob("*.jsonl"))[:2]:
        shutil.copy(name, project / name.name)
    (home / ".claude" / "settings.json").write_text('{"cleanupPeriodDays": 3650}')
    return home


def test_no_sync_doctor_on_a_new_index_says_it_is_empty_and_what_a_sync_reads(tmp_path):
    home = claude_home(tmp_path)
    index = tmp_path / "index.sqlite"
    code, out, err = run(home, "--index", str(index), "--no-sync", "doctor")
    assert (code, err) == (0, "")
    assert out == (
        f"The index {index} is empty: it was never synced (or only where no agent's logs were). "
        "Run `agentlog index` (or this command without --no-sync) to read the logs.\n"
        "A sync reads:\n"
        "  claude_code: ~/.claude/projects (2 files)\n"
    )
    code, out, _ = run(home, "--index", str(index), "--no-sync", "doctor", "--json")
    report = json.loads(out)
    assert (code, report["synced"], report["agents"]) == (0, False, [])
    assert report["roots"] == [{"agent": "claude_code", "roots": [str(home / ".claude" / "projects")], "sources": 2}]


def test_no_sync_doctor_on_a_new_index_and_an_empty_home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    index = tmp_path / "index.sqlite"
    code, out, _ = run(home, "--index", str(index), "--no-sync", "doctor")
    assert code == 0
    assert out.splitlines() == [
        f"The index {index} is empty: it was never synced (or only where no agent's logs were). "
        "Run `agentlog index` (or this command without --no-sync) to read the logs.",
        "No agent's folder exists here (`agentlog agents --all` lists where agentlog looks).",
    ]
    code, out, _ = run(home, "--index", str(index), "doctor")  # synced now: nothing there
    assert (code, out) == (0, "No agent logs found (`agentlog agents --all` lists where agentlog looks).\n")


def test_doctor_reports_the_places_read_with_and_without_a_sync(tmp_path):
    home = claude_home(tmp_path)
    index = tmp_path / "index.sqlite"
    expected = [{"agent": "claude_code", "roots": [str(home / ".claude" / "projects")], "sources": 2}]
    code, out, _ = run(home, "--index", str(index), "doctor", "--json")
    synced = json.loads(out)
    assert (code, synced["synced"], synced["roots"]) == (0, True, expected)
    assert [a["agent"] for a in synced["agents"]] == ["claude_code"]
    code, out, _ = run(home, "--index", str(index), "--no-sync", "doctor", "--json")
    assert (code, json.loads(out)) == (0, synced)
    _, text, _ = run(home, "--index", str(index), "doctor")
    code, out, _ = run(home, "--index", str(index), "--no-sync", "doctor")
    assert (code, out) == (0, text)
    assert out.splitlines()[0] == "claude_code: 2 sessions, 31 records, 26 used"  # "1 session" for one (tester13)


def _damaged_index(tmp_path: Path) -> tuple[Path, Path, int, str, str]:
    """A synced index with its oldest part and one source's headers overwritten:
    ``(home, index, part rowid, its session, its source)``."""
    home = claude_home(tmp_path)
    index = tmp_path / "index.sqlite"
    code, _, err = run(home, "--index", str(index), "index")
    assert code == 0, err
    conn = sqlite3.connect(index)
    with conn:
        rowid, session, path = conn.execute(
            """SELECT p.rowid, m.session_key, s.path FROM parts p JOIN messages m ON m.rowid = p.message_rowid
               JOIN sources s ON s.id = m.source_id WHERE p.data IS NOT NULL ORDER BY p.rowid LIMIT 1"""
        ).fetchone()
        conn.execute("UPDATE parts SET data = x'c1' WHERE rowid = ?", (rowid,))
        conn.execute("UPDATE sources SET headers = x'07' WHERE path = ?", (path,))
    conn.close()
    return home, index, rowid, session, path


def test_doctor_names_the_rows_that_do_not_decode_and_what_to_do(tmp_path):
    home, index, rowid, session, path = _damaged_index(tmp_path)
    shown = path.replace(str(home), "~")
    code, out, err = run(home, "--index", str(index), "--no-sync", "doctor")
    assert code == 1
    assert out.splitlines()[-2:] == [
        f"damaged part (parts row {rowid}) of session {session} ({shown}): a stored part cannot be decoded: "
        "MessagePack data is malformed: invalid opcode '\\xc1' (byte 0)",
        f"damaged session header (sources row 1) ({shown}): a stored session header cannot be decoded: "
        "Expected `array`, got `int`",
    ]
    assert err == (
        f"agentlog: the index {index} is damaged (2 stored rows cannot be decoded): it is a cache: delete it to rebuild\n"
    )
    code, out, err = run(home, "--index", str(index), "--no-sync", "doctor", "--deep", "--json")
    rows = json.loads(out)["rows"]
    assert code == 1 and err.startswith(f"agentlog: the index {index} is damaged (2 stored rows")
    assert (rows["every_row"], rows["damaged_count"]) == (True, 2)
    assert [(d["what"], d["table"], d["rowid"], d["session"], d["path"]) for d in rows["damaged"]] == [
        ("part", "parts", rowid, session, path),
        ("session header", "sources", 1, None, path),
    ]
    conn = sqlite3.connect(index)
    counts = [conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("parts", "messages", "usage", "sessions")]
    conn.close()
    assert [rows[k] for k in ("parts", "messages", "usage", "sessions", "headers")] == [*counts, 2]


def test_a_bounded_check_reads_the_newest_parts_deep_reads_all(tmp_path):
    _, index, _, session, path = _damaged_index(tmp_path)
    conn = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    (parts,) = conn.execute("SELECT count(*) FROM parts").fetchone()
    header = "a stored session header cannot be decoded: Expected `array`, got `int`"
    bounded = check_rows(conn, sample=2)
    assert (bounded.parts, bounded.messages, bounded.usage, bounded.headers) == (2, 2, 2, 2)
    assert (bounded.every_row, bounded.damaged_count) == (False, 1)
    assert bounded.damaged == [DamagedAt("session header", 1, None, path, header, "sources")]
    every = check_rows(conn, sample=None)
    assert (every.parts, every.every_row, every.damaged_count, every.sessions_damaged) == (parts, True, 2, [session])
    assert check_rows(conn, sample=parts) == every  # the sample that reaches the oldest row is every row
    assert check_rows(conn, sample=None, limit=1).damaged == every.damaged[:1]
    conn.close()


def test_doctor_on_a_sound_index_says_which_rows_it_read(tmp_path):
    home = claude_home(tmp_path)
    index = tmp_path / "index.sqlite"
    code, out, _ = run(home, "--index", str(index), "doctor", "--deep")
    assert code == 0
    conn = sqlite3.connect(index)
    parts, messages, usage = (conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("parts", "messages", "usage"))
    conn.close()
    line = (
        f"index: every stored row decodes ({parts:,} parts, {messages:,} messages, {usage:,} usage rows, "
        "2 sessions, 2 session headers); PRAGMA quick_check: ok"
    )
    assert out.splitlines()[-1] == line


def test_doctor_names_the_root_folders_an_earlier_sync_was_given(tmp_path):
    """A ``--root`` folder stays synced without the flag (the index remembers it):
    ``doctor`` says which, in the text and in ``--json`` (real paths)."""
    home = tmp_path / "home"
    home.mkdir()
    logs = tmp_path / "logs"
    (logs / "-p").mkdir(parents=True)
    shutil.copy(sorted((FIXTURES / "claude_code").glob("*.jsonl"))[0], logs / "-p" / "s.jsonl")
    (tmp_path / "link").symlink_to(logs)
    index = tmp_path / "index.sqlite"
    code, out, _ = run(home, "--index", str(index), "doctor", "--json")
    assert (code, json.loads(out)["remembered_roots"]) == (0, [])
    assert run(home, "--index", str(index), "--root", str(tmp_path / "link"), "index")[0] == 0
    code, out, _ = run(home, "--index", str(index), "doctor", "--json")
    report = json.loads(out)
    assert (code, report["remembered_roots"]) == (0, [str(logs)])
    assert [(a["agent"], a["sessions"]) for a in report["agents"]] == [("claude_code", 1)]
    code, out, _ = run(home, "--index", str(index), "doctor")
    assert code == 0 and (
        f"--root folders of earlier syncs, their logs kept synced (read-only): {logs}"
        " (a new log there is found with --root again; `agentlog prune --forget-root FOLDER` forgets one)\n"
    ) in out


def test_prune_forget_root_stops_reading_a_root_folder_and_removes_its_sessions(tmp_path):
    """``--root`` is remembered by the index (tester12 finding 11: "forever"):
    ``prune --forget-root FOLDER`` forgets it and removes its logs' sessions, which no
    later sync (full or no-change) reads again; the home's own sessions stay."""
    home = tmp_path / "home"
    fixtures = sorted((FIXTURES / "claude_code").glob("*.jsonl"))
    (home / ".claude" / "projects" / "-h").mkdir(parents=True)
    shutil.copy(fixtures[0], home / ".claude" / "projects" / "-h" / "own.jsonl")
    logs = tmp_path / "logs"
    (logs / "-p").mkdir(parents=True)
    shutil.copy(fixtures[1], logs / "-p" / "s.jsonl")
    (tmp_path / "link").symlink_to(logs)
    index = tmp_path / "index.sqlite"

    def sessions() -> list[str]:
        code, out, err = run(home, "--index", str(index), "sessions", "--json")
        assert code == 0, err
        return sorted(s["key"] for s in json.loads(out))

    own = sessions()
    assert run(home, "--index", str(index), "--root", str(logs), "--root", str(logs / "-p"), "index")[0] == 0
    code, out, _ = run(home, "--index", str(index), "doctor", "--json")
    assert json.loads(out)["remembered_roots"] == [str(logs), str(logs / "-p")]
    both = sessions()
    assert len(own) == 1 and len(both) == 2 and set(own) < set(both)
    code, out, err = run(home, "--index", str(index), "prune", "--forget-root", str(tmp_path / "link"), "--dry-run", "--json")
    assert code == 0, err
    listed = json.loads(out)
    assert (listed["dry_run"], [(s["path"], s["archived_at"]) for s in listed["sources"]]) == (
        True, [(str(logs / "-p" / "s.jsonl"), None)]
    )
    assert sessions() == both  # nothing changed
    code, out, err = run(home, "--index", str(index), "prune", "--forget-root", str(logs))
    assert code == 0, err
    assert out == f"removed {logs / '-p' / 's.jsonl'}: 1 session\n"
    assert err == f"removed 1 source, 1 session\nforgot {logs}: later syncs do not read it\n"
    for _ in range(2):  # the sync after (full: the memo's sources changed), then a no-change one
        assert sessions() == own
    code, out, _ = run(home, "--index", str(index), "doctor", "--json")
    assert (code, json.loads(out)["remembered_roots"]) == (0, [])  # the one inside it too
    code, _, err = run(home, "--index", str(index), "prune", "--forget-root", str(logs))
    assert (code, err) == (1, f"agentlog: {logs} is not a folder the index remembers (agentlog doctor lists them)\n")
    code, _, err = run(home, "--index", str(index), "prune", "--forget-root", str(logs), "--agent", "claude")
    assert code == 2 and "takes no --agent" in err


def test_forget_root_given_through_a_symlink_removes_its_logs(tmp_path):
    """A ``--root`` given through a symlink is remembered by its real path, its logs
    by the path discovery found (through the link): ``--forget-root`` by either
    name removes them (tester13 finding 4: "no log under link", the logs kept and
    then never removable)."""
    home = tmp_path / "home"
    home.mkdir()
    logs = tmp_path / "r"
    (logs / "-p").mkdir(parents=True)
    shutil.copy(sorted((FIXTURES / "claude_code").glob("*.jsonl"))[0], logs / "-p" / "s.jsonl")
    link = tmp_path / "link"
    link.symlink_to(logs)
    index = tmp_path / "index.sqlite"
    assert run(home, "--index", str(index), "--root", str(link), "index")[0] == 0
    code, out, _ = run(home, "--index", str(index), "sessions", "--json")
    assert code == 0 and len(json.loads(out)) == 1
    code, out, err = run(home, "--index", str(index), "prune", "--forget-root", str(link))
    assert (code, out) == (0, f"removed {link / '-p' / 's.jsonl'}: 1 session\n"), err
    assert err == f"removed 1 source, 1 session\nforgot {link}: later syncs do not read it\n"
    code, out, _ = run(home, "--index", str(index), "sessions", "--json")
    assert code == 0 and json.loads(out) == []


def test_forget_root_keeps_the_logs_of_an_agents_own_folder_it_overlaps(tmp_path):
    """``--root ~/.claude/projects`` names Claude Code's own folder: forgetting it
    keeps its logs, an archived one too (a transcript Claude Code deleted is
    evidence only ``prune`` removes), and says so (tester13 finding 7: it removed
    the archived session and said later syncs would not read the folder)."""
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-p"
    project.mkdir(parents=True)
    fixtures = sorted((FIXTURES / "claude_code").glob("*.jsonl"))
    for name in fixtures[:2]:
        shutil.copy(name, project / name.name)
    (home / ".claude" / "settings.json").write_text('{"cleanupPeriodDays": 3650}')
    index = tmp_path / "index.sqlite"
    assert run(home, "--index", str(index), "--root", str(home / ".claude" / "projects"), "index")[0] == 0
    (project / fixtures[1].name).unlink()  # Claude Code's cleanup
    code, out, _ = run(home, "--index", str(index), "sessions", "--json")
    before = sorted((s["key"], s["archived"]) for s in json.loads(out))
    assert sorted(archived for _, archived in before) == [False, True]
    code, out, err = run(home, "--index", str(index), "prune", "--forget-root", str(home / ".claude" / "projects"), "--json")
    assert code == 0, err
    own = os.path.realpath(home / ".claude")  # the agent folder that holds them
    assert json.loads(out) == {"dry_run": False, "sources": [], "kept": 2, "kept_in": [{"folder": own, "logs": 2, "why": "agent_folder"}]}
    code, out, _ = run(home, "--index", str(index), "sessions", "--json")
    assert sorted((s["key"], s["archived"]) for s in json.loads(out)) == before
    code, out, _ = run(home, "--index", str(index), "doctor", "--json")
    assert json.loads(out)["remembered_roots"] == []


def test_forget_root_inside_another_remembered_root_keeps_its_logs(tmp_path):
    """Forgetting a root inside another one the index remembers keeps its logs: the
    outer root still holds them (tester13 finding 6: they were removed for good,
    since a remembered root is not searched again)."""
    home = tmp_path / "home"
    home.mkdir()
    logs = tmp_path / "logs"
    (logs / "-p").mkdir(parents=True)
    shutil.copy(sorted((FIXTURES / "claude_code").glob("*.jsonl"))[0], logs / "-p" / "s.jsonl")
    index = tmp_path / "index.sqlite"
    assert run(home, "--index", str(index), "--root", str(logs), "--root", str(logs / "-p"), "index")[0] == 0
    code, out, err = run(home, "--index", str(index), "prune", "--forget-root", str(logs / "-p"), "--json")
    kept_in = [{"folder": os.path.realpath(logs), "logs": 1, "why": "remembered_root"}]
    assert (code, json.loads(out)) == (0, {"dry_run": False, "sources": [], "kept": 1, "kept_in": kept_in}), err
    code, _, err = run(home, "--index", str(index), "--root", str(logs / "-p"), "prune", "--forget-root", str(logs / "-p"))
    said = " ".join(err.split())
    assert code == 0 and "1 log under it kept in " in said and "inside another remembered root, which holds them" in said  # tester14 finding 2
    code, out, _ = run(home, "--index", str(index), "doctor", "--json")
    assert json.loads(out)["remembered_roots"] == [str(logs)]
    for flags in ((), ("--full",)):
        assert run(home, "--index", str(index), "index", *flags)[0] == 0
        code, out, _ = run(home, "--index", str(index), "sessions", "--json")
        assert code == 0 and len(json.loads(out)) == 1


def test_forget_root_reads_again_a_kept_duplicate_of_a_removed_log(tmp_path):
    """A log in Claude Code's own folder that is a copy of one under the forgotten
    root stayed marked as its duplicate, so no later sync read it: its session was
    gone until ``index --full`` (tester14 finding 1).  The removed copy's duplicate
    is read again by the next sync and holds the session."""
    home = tmp_path / "home"
    backup = home / "bk"
    project = home / ".claude" / "projects" / "-p"
    backup.mkdir(parents=True)
    project.mkdir(parents=True)
    fixture = sorted((FIXTURES / "claude_code").glob("*.jsonl"))[0]
    shutil.copy(fixture, backup / "copy.jsonl")
    index = tmp_path / "index.sqlite"
    assert run(home, "--index", str(index), "--root", str(backup), "index")[0] == 0
    shutil.copy(fixture, project / "orig.jsonl")
    assert run(home, "--index", str(index), "index")[0] == 0
    code, out, _ = run(home, "--index", str(index), "sessions", "--json")
    (before,) = json.loads(out)
    code, out, err = run(home, "--index", str(index), "prune", "--forget-root", str(backup), "--dry-run")
    said = " ".join(out.split())
    assert code == 0 and f"(kept by its copy {project / 'orig.jsonl'}, read again by the next sync)" in said, err
    code, out, err = run(home, "--index", str(index), "prune", "--forget-root", str(backup), "--json")
    (removed,) = json.loads(out)["sources"]
    assert code == 0 and (removed["path"], removed["copies"]) == (str(backup / "copy.jsonl"), [str(project / "orig.jsonl")]), err
    code, out, _ = run(home, "--index", str(index), "sessions", "--json")
    (after,) = json.loads(out)
    assert (after["key"], after["messages"]) == (before["key"], before["messages"])
    code, out, _ = run(home, "--index", str(index), "doctor", "--json")
    assert "bk/copy.jsonl" not in out


def test_forget_root_keeps_a_project_file_other_sessions_lead_to(tmp_path):
    """Aider's history in a folder another agent's session ran in is read by every
    sync without a ``--root``: forgetting a root over that folder removed its 8
    sessions, said later syncs would not read them, and the next command read
    them back (tester14 finding 12).  It is kept, and said why."""
    home = tmp_path / "home"
    project = home / "proj"
    claude = home / ".claude" / "projects" / "-p"
    project.mkdir(parents=True)
    claude.mkdir(parents=True)
    shutil.copy(FIXTURES / "aider" / "aider-repo-chat-history-excerpt.md", project / ".aider.chat.history.md")
    record = {"type": "user", "sessionId": "c1", "uuid": "u1", "timestamp": "2026-02-01T10:00:00Z", "cwd": str(project),
              "message": {"role": "user", "content": "hi"}}
    (claude / "c1.jsonl").write_text(json.dumps(record) + "\n")
    index = tmp_path / "index.sqlite"
    before, found = _index_then_forget(home, index, project)
    assert found["sources"] == [] and found["kept_in"] == [
        {"folder": os.path.realpath(project), "logs": 1, "why": "project_file"}
    ]
    assert _session_keys(home, index) == before and len(before) > 1
    code, out, _ = run(home, "--index", str(index), "doctor", "--json")
    assert code == 0 and json.loads(out)["remembered_roots"] == []


def test_forget_root_keeps_an_agents_log_that_links_into_it(tmp_path):
    """A transcript in Claude Code's own folder that is a symlink to a file under
    the root was removed (its real path is under the root) and read back by the
    next command (tester14, a variant of finding 13): a source found in an
    agent's folder is kept whatever its link points to."""
    home = tmp_path / "home"
    root = home / "root"
    project = home / ".claude" / "projects" / "-p"
    root.mkdir(parents=True)
    project.mkdir(parents=True)
    shutil.copy(sorted((FIXTURES / "claude_code").glob("*.jsonl"))[0], root / "x.jsonl")
    (project / "linked.jsonl").symlink_to(root / "x.jsonl")
    index = tmp_path / "index.sqlite"
    before, found = _index_then_forget(home, index, root)
    assert found["sources"] == [] and found["kept"] == 1, found
    assert _session_keys(home, index) == before == [before[0]]


def _session_keys(home: Path, index: Path) -> list[str]:
    code, out, err = run(home, "--index", str(index), "sessions", "--json")
    assert code == 0, err
    return sorted(s["key"] for s in json.loads(out))


def _index_then_forget(home: Path, index: Path, root: Path) -> tuple[list[str], dict]:
    """Index ``home``, then again with ``--root root``, then forget ``root``:
    ``(the session keys before, the JSON of prune --forget-root)``."""
    assert run(home, "--index", str(index), "index")[0] == 0
    assert run(home, "--index", str(index), "--root", str(root), "index")[0] == 0
    before = _session_keys(home, index)
    code, out, err = run(home, "--index", str(index), "prune", "--forget-root", str(root), "--json")
    assert code == 0, err
    return before, json.loads(out)


def test_forget_root_with_a_damaged_source_row_costs_only_that_row(tmp_path):
    """A source row whose path holds a NUL (a damaged index) made ``prune
    --forget-root`` exit 70 (``os.path.realpath``: embedded null byte); it is
    judged by its path as stored (a dry run under --no-sync: a sync would drop
    the row, missing and holding no session)."""
    home = tmp_path / "home"
    root = tmp_path / "R"
    home.mkdir()
    root.mkdir()
    shutil.copy(sorted((FIXTURES / "claude_code").glob("*.jsonl"))[0], root / "s.jsonl")
    index = tmp_path / "index.sqlite"
    assert run(home, "--index", str(index), "--root", str(root), "index")[0] == 0
    conn = sqlite3.connect(index)
    with conn:
        conn.execute(
            "INSERT INTO sources (path, agent, archived_at) VALUES (?, 'claude_code', '2026-01-01T00:00:00+00:00')",
            (str(root / "a\x00b.jsonl"),),
        )
    conn.close()
    code, out, err = run(home, "--index", str(index), "--no-sync", "prune", "--forget-root", str(root), "--dry-run", "--json")
    assert code == 0, err
    assert sorted(s["path"] for s in json.loads(out)["sources"]) == sorted([str(root / "a\x00b.jsonl"), str(root / "s.jsonl")])
