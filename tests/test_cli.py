"""The command line, run in-process (click's runner) and once as a real process."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from agentlog.cli import main
from agentlog.cli.commands import agents_markdown
from agentlog.model import json_schema
from conftest import FIXTURES

ROOT = Path(__file__).parents[1]


AGENT_VARS = {"CLAUDE_CONFIG_DIR": None, "CODEX_HOME": None, "XDG_CONFIG_HOME": None}


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run the CLI in-process; the agents' own variables are unset so only HOME counts."""
    result = CliRunner().invoke(main, list(args), env={**AGENT_VARS, **(env or {})})
    return result.exit_code, result.stdout, result.stderr


def test_demo_overview_shows_real_sessions():
    code, out, _ = run("--demo")
    assert code == 0
    assert "Claude Code" in out and "Codex" in out
    assert "weather: fix" in out and "de70c1a0" in out and "019ab0d2" in out


def test_demo_sessions_json_lists_both_agents():
    code, out, _ = run("--demo", "sessions", "--json")
    assert code == 0
    rows = json.loads(out)
    assert {r["agent"] for r in rows} == {"claude_code", "codex"}
    weather = next(r for r in rows if r["id"].startswith("de70c1a0"))
    assert weather["subagents"] == 1
    assert weather["usage"]["cache_write_1h_tokens"] == 14210
    assert weather["resume_command"] == "claude --resume de70c1a0-7e57-4b1d-9a6e-5e551011f00d"


def test_show_json_is_the_model_and_validates_against_the_schema():
    code, out, _ = run("--demo", "show", "de70c1a0", "--json")
    assert code == 0
    data = json.loads(out)
    jsonschema.validate(data, json_schema())
    assert data["key"] == "claude_code:de70c1a0-7e57-4b1d-9a6e-5e551011f00d"
    assert data["title"] == "weather: fix daily_mean rounding"


def test_show_transcript_hides_meta_unless_all():
    code, out, _ = run("--demo", "show", "de70c1a0")
    assert code == 0
    assert "pytest -q tests/test_forecast.py" in out and "context compacted" in out
    assert "local-command-caveat" not in out and "2 meta/injected messages hidden" in out
    code, out, _ = run("--demo", "show", "de70c1a0", "--all")
    assert "local-command-caveat" in out


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("--demo", "show", "no-such-session"), 1, "no session matches 'no-such-session'"),
        (("--demo", "show", "claude"), 1, "is ambiguous"),
        (("--demo", "sessions", "--since", "yesterday"), 2, "not a date"),
        (("--demo", "sessions", "--agent", "nope"), 2, "unknown agent 'nope'"),
        (("detect", "/no/such/file"), 1, "no such file"),
        (("--demo", "sessions", "--limit", "abc"), 2, "agentlog sessions: Invalid value for '--limit'"),
        (("--bogus",), 2, "agentlog: No such option '--bogus'. (see `agentlog --help`)"),
        (("nosuch",), 2, "agentlog: No such command 'nosuch'."),
    ],
)
def test_bad_input_is_one_line_and_non_zero(args, code, message):
    exit_code, _, err = run(*args)
    assert exit_code == code
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_detect_by_content(tmp_path):
    claude = tmp_path / "anything.log"
    shutil.copy(FIXTURES / "claude_code/v1.0.98-session.jsonl", claude)
    code, out, _ = run("detect", str(claude), "--json")
    assert code == 0 and json.loads(out)["agent"] == "claude_code"
    plain = tmp_path / "notes.txt"
    plain.write_text("hello\n")
    code, out, _ = run("detect", str(plain))
    assert code == 1 and "not a format agentlog knows" in out
    code, out, _ = run("detect", str(plain), "--json")
    assert code == 1 and json.loads(out)["agent"] is None


def test_doctor_reports_skips_by_reason():
    code, out, _ = run("--root", str(FIXTURES / "claude_code"), "doctor", "--agent", "claude_code", "--json")
    assert code == 0
    report = json.loads(out)
    claude = next(a for a in report["agents"] if a["agent"] == "claude_code")
    assert claude["skipped"]["not_an_object"] == 3
    assert claude["unknown_types"] == {"<none>": 1}


def test_unreadable_file_costs_only_itself(tmp_path, monkeypatch):
    """A file that cannot be read is reported; every other session still loads."""
    import agentlog.load

    projects = tmp_path / ".claude/projects/-p"
    projects.mkdir(parents=True)
    shutil.copy(FIXTURES / "claude_code/v1.0.98-session.jsonl", projects / "a.jsonl")
    locked = projects / "b.jsonl"
    shutil.copy(FIXTURES / "claude_code/v1.0.17-real-session-with-tools.jsonl", locked)
    real_reader = agentlog.load.LineReader

    def reader(path, start=0):  # root ignores chmod 0, so deny the read here
        if str(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(path))
        return real_reader(path, start)

    monkeypatch.setattr(agentlog.load, "LineReader", reader)
    code, out, _ = run("doctor", "--json", env={"HOME": str(tmp_path)})
    assert code == 0
    assert json.loads(out)["unreadable"] == [
        {"path": str(locked), "error": "PermissionError: Permission denied"}
    ]
    code, out, _ = run("sessions", "--json", env={"HOME": str(tmp_path)})
    assert [r["id"] for r in json.loads(out)] == ["1af7fc5e-8455-4414-9ccd-011d40f70b2a"]  # a.jsonl: its records' id


def test_readme_agents_table_is_current():
    readme = (ROOT / "README.md").read_text()
    table = readme.split("<!-- agents:start -->\n")[1].split("<!-- agents:end -->")[0]
    assert table == agents_markdown()


def test_checked_in_schema_is_current():
    checked_in = json.loads((ROOT / "schema/session.schema.json").read_text())
    assert checked_in == json_schema(), "run: agentlog schema > schema/session.schema.json"


def test_fixtures_laid_out_like_the_agents_are_found_with_no_flags(tmp_path):
    """Acceptance: a temporary HOME with Claude Code and Codex folders, no flags."""
    home = tmp_path
    project = home / ".claude/projects/-Users-USER-dev-ai-music"
    project.mkdir(parents=True)
    shutil.copy(
        FIXTURES / "claude_code/v1.0.17-real-session-with-tools.jsonl",
        project / "ba79134d-b6e9-4867-af0c-6941038c9e4b.jsonl",
    )
    rollouts = home / ".codex/sessions/2026/11/21"
    rollouts.mkdir(parents=True)
    demo_rollout = next((ROOT / "src/agentlog/demo/home/.codex/sessions/2026/11/21").glob("rollout-*.jsonl"))
    shutil.copy(demo_rollout, rollouts / demo_rollout.name)
    env = {
        k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME")
    }
    env["HOME"] = str(home)
    proc = subprocess.run(
        [sys.executable, "-m", "agentlog", "sessions", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    rows = json.loads(proc.stdout)
    assert sorted(r["key"] for r in rows) == [
        "claude_code:ba79134d-b6e9-4867-af0c-6941038c9e4b",
        "codex:019ab0d2-4c1e-7f00-9d2a-5e551011c0de",
    ]
    claude = next(r for r in rows if r["agent"] == "claude_code")
    assert claude["usage"]["input_tokens"] == 91 and claude["usage"]["cache_read_tokens"] == 503769
    assert proc.stderr == ""


def _home_with(tmp_path: Path, name: str, data: bytes) -> dict[str, str]:
    project = tmp_path / ".claude/projects/-p"
    project.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / "claude_code/v1.0.98-session.jsonl", project / "good.jsonl")
    (project / name).write_bytes(data)
    return {"HOME": str(tmp_path)}


def test_deeply_nested_record_costs_only_itself(tmp_path):
    env = _home_with(tmp_path, "deep.jsonl", b"[" * 100_000 + b"]" * 100_000 + b"\n")
    code, out, _err = run("sessions", "--json", env=env)
    assert code == 0 and [r["id"] for r in json.loads(out)] == ["1af7fc5e-8455-4414-9ccd-011d40f70b2a"]  # v1.0.98-session.jsonl: its records' id
    code, out, _ = run("doctor", "--json", env=env)
    assert json.loads(out)["agents"][0]["skipped"]["nested_too_deep"] == 1


def test_detect_refuses_a_fifo_instead_of_hanging(tmp_path):
    fifo = tmp_path / "x.jsonl"
    os.mkfifo(fifo)
    code, _, err = run("detect", str(fifo))
    assert code == 1 and "not a regular file" in err


def test_a_prices_file_that_is_a_fifo_is_named_as_such(tmp_path):
    fifo = tmp_path / "prices.toml"
    os.mkfifo(fifo)
    code, _, err = run("--demo", "usage", "daily", "--prices", str(fifo))
    assert code == 1 and f"{fifo}: not a regular file" in err
    code, _, err = run("--demo", "usage", "daily", "--prices", str(tmp_path / "none.toml"))
    assert code == 1 and "none.toml: no such price file" in err


def test_control_characters_in_logs_never_reach_the_terminal(tmp_path):
    line = {
        "type": "user",
        "sessionId": "s",
        "uuid": "u1",
        "timestamp": "2026-01-01T00:00:00Z",
        "message": {"role": "user", "content": "hi \x1b[2J\x1b]0;PWNED\x07 \u202eevil"},
    }
    env = _home_with(tmp_path, "esc.jsonl", json.dumps(line).encode() + b"\n")
    code, out, _ = run("show", "s", env=env)  # its records' id
    assert code == 0 and "\x1b" not in out and "\u202e" not in out and "\x07" not in out
    assert "␛[2J" in out
    code, out, _ = run("sessions", env=env)
    assert "\x1b" not in out


def test_cli_search_and_index(tmp_path):
    env = _home_with(tmp_path, "other.jsonl", b"")
    code, out, _ = run("index", "--json", env=env)
    assert code == 0 and json.loads(out)["reparsed"] == 2
    code, out, _ = run("search", '"CLAUDE.md"', "--agent", "claude", "--json", env=env)
    hits = json.loads(out)["hits"]
    assert code == 0 and hits and {h["session_key"] for h in hits} == {"claude_code:1af7fc5e-8455-4414-9ccd-011d40f70b2a"}
    assert "«" in hits[0]["snippet"] and hits[0]["show"] == "agentlog show claude_code:1af7fc5e-8455-4414-9ccd-011d40f70b2a"
    code, _, err = run("search", '"unbalanced', "--fts", env=env)
    err = " ".join(err.split())
    assert code == 0 and "FTS5 cannot parse" in err and "searched for the phrase 'unbalanced'" in err
    code, out, _ = run("index", env=env)
    assert "2 sources: 2 unchanged" in out


def test_empty_files_are_not_listed_but_doctor_counts_them(tmp_path):
    env = _home_with(tmp_path, "empty.jsonl", b"")
    code, out, _ = run("sessions", "--json", env=env)
    assert code == 0 and [r["id"] for r in json.loads(out)] == ["1af7fc5e-8455-4414-9ccd-011d40f70b2a"]  # v1.0.98-session.jsonl: its records' id
    code, out, _ = run("doctor", "--json", env=env)
    assert code == 0
    assert json.loads(out)["agents"][0]["sessions"] == 2


def test_subagents_are_shown_by_a_short_id_that_show_accepts():
    code, out, _ = run("--demo", "sessions", "--subagents")
    assert "b7e1d2c3" in out and "agent-b7" not in out
    code, out, _ = run("--demo", "show", "b7e1d2c3")
    assert code == 0 and "Review rounding change" in out


def test_a_file_name_that_is_not_utf8_is_skipped_and_reported(tmp_path):
    env = _home_with(tmp_path, "ok.jsonl", b"")
    odd = os.fsencode(tmp_path / ".claude/projects/-p") + b"/\xff\xfename.jsonl"
    with open(odd, "wb") as fh:
        fh.write(b'{"type":"summary","summary":"x","leafUuid":"y"}\n')
    code, out, _ = run("sessions", "--json", env=env)
    assert code == 0 and [r["id"] for r in json.loads(out)] == ["1af7fc5e-8455-4414-9ccd-011d40f70b2a"]  # v1.0.98-session.jsonl: its records' id
    code, out, _ = run("doctor", "--json", env=env)
    assert code == 0
    assert [u["error"] for u in json.loads(out)["unreadable"]] == [
        "skipped: the file name is not valid UTF-8"
    ]
    # counted among the sources, as every failed one is: the summary adds up (tester finding)
    for _ in range(2):  # a first sync, then the no-change one
        code, out, _ = run("index", "--json", env=env)
        done = json.loads(out)
        assert code == 0 and done["sources"] == 3 and len(done["failed"]) == 1
        assert done["sources"] == sum(done[k] for k in ("unchanged", "appended", "reparsed", "duplicates")) + 1


def test_search_highlights_matches_without_leaking_markers():
    from agentlog.cli.indexing import highlight
    from agentlog.index.search import MARK_END, MARK_START

    assert (
        highlight(f"say {MARK_START}Hello{MARK_END}\n  world \x1b[2J")
        == "say [bold yellow]Hello[/] world ␛[2J"
    )
    code, out, _ = run("--demo", "search", "rounding")
    assert code == 0 and "rounding" in out and "␂" not in out and "\x02" not in out


def test_agents_lists_missing_folders_only_on_request(tmp_path):
    code, out, _ = run("agents", env={"HOME": str(tmp_path)})
    assert code == 0
    cline = out.split("Cline (cline): 0 files\n")[1].split("\n")[0]
    assert cline.strip().startswith("✗ none of ") and "(--all lists them)" in cline
    assert "saoudrizwan.claude-dev" not in out
    code, out, _ = run("agents", "--all", env={"HOME": str(tmp_path)})
    assert code == 0 and out.count("saoudrizwan.claude-dev") > 5


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("sessions", "--limit", "99999999999999999999999"), "'--limit' / '-n'"),
        (("overview", "--recent", "9223372036854775808"), "'--recent'"),
        (("search", "weather", "--offset", "9223372036854775808"), "'--offset'"),
    ],
)
def test_a_count_beyond_sqlite_integers_is_a_usage_error(args, option):
    """A row count SQLite cannot bind was an internal error (exit 70, OverflowError)."""
    code, _, err = run("--demo", *args)
    assert code == 2
    assert f"Invalid value for {option}: {args[-1]} is not in the range" in err
    assert "OverflowError" not in err


def test_a_resume_command_quotes_the_session_id_for_the_shell(tmp_path):
    """A session id comes from a log's file name or content; the resume line the user
    copies (``show``, ``sessions --json``, the viewer) must hand it to the agent as one
    argument, never run the ``$(…)`` or ``; …`` written in it."""
    sid = "$(touch PWNED);id"
    folder = tmp_path / "home/.claude/projects/-p"
    folder.mkdir(parents=True)
    record = {"type": "user", "sessionId": sid, "uuid": "u1", "timestamp": "2026-02-01T10:00:00Z"}
    (folder / f"{sid}.jsonl").write_text(
        json.dumps({**record, "message": {"role": "user", "content": "hi"}}) + "\n"
    )
    env = {"HOME": str(tmp_path / "home"), "AGENTLOG_INDEX": str(tmp_path / "index.sqlite")}
    code, out, _ = run("sessions", "--json", env=env)
    assert code == 0
    (row,) = json.loads(out)
    assert row["resume_command"] == "claude --resume '$(touch PWNED);id'"
    assert row["resume_command"].split(" ", 2)[2] == shlex.quote(sid)
    code, out, _ = run("show", f"claude_code:{sid}", env=env)
    assert code == 0 and "resume: claude --resume '$(touch PWNED);id'" in out


def test_an_id_that_reads_as_options_gets_no_resume_command(tmp_path):
    """An id that starts with ``-`` would be read by the agent as its own options
    whatever the quoting (``claude --resume -rf``, tester13 finding 14): no resume
    line is offered; the session is listed and shown all the same."""
    folder = tmp_path / "home/.claude/projects/-p"
    folder.mkdir(parents=True)
    record = {"type": "user", "sessionId": "-rf", "uuid": "u1", "timestamp": "2026-02-01T10:00:00Z"}
    (folder / "-rf.jsonl").write_text(json.dumps({**record, "message": {"role": "user", "content": "hi"}}) + "\n")
    env = {"HOME": str(tmp_path / "home"), "AGENTLOG_INDEX": str(tmp_path / "index.sqlite")}
    code, out, _ = run("sessions", "--json", env=env)
    (row,) = json.loads(out)
    assert (code, row["id"], row["resume_command"]) == (0, "-rf", None)
    code, out, _ = run("show", "claude_code:-rf", env=env)
    assert code == 0 and "hi" in out and "resume" not in out


def test_a_huge_model_id_is_printed_cut_in_headers_and_warnings(tmp_path):
    """A damaged log's 100,000-character model id was printed whole in usage's
    warning and show's header (tester13 finding 13); JSON keeps it whole."""
    model = "m" * 100_000
    folder = tmp_path / "home/.claude/projects/-p"
    folder.mkdir(parents=True)
    message = {"id": "msg1", "role": "assistant", "model": model, "content": [{"type": "text", "text": "hi"}],
               "usage": {"input_tokens": 10, "output_tokens": 5}}
    record = {"type": "assistant", "sessionId": "s1", "uuid": "u1", "timestamp": "2026-02-01T10:00:00Z",
              "requestId": "r1", "message": message}
    (folder / "s1.jsonl").write_text(json.dumps(record) + "\n")
    env = {"HOME": str(tmp_path / "home"), "AGENTLOG_INDEX": str(tmp_path / "index.sqlite")}
    shown = "m" * 199 + "…"
    code, out, err = run("usage", "daily", env=env)
    assert code == 0 and "total" in out and len(out) + len(err) < 1000
    assert " ".join(err.split()).replace(" ", "").startswith(f"warning:nopriceformodel'{shown}':15tokens")
    code, out, _ = run("show", "claude_code:s1", env=env)
    assert code == 0 and shown in out.replace("\n", "") and len(out) < 1000
    code, out, _ = run("sessions", "--json", env=env)
    assert json.loads(out)[0]["models"] == [model]


def test_show_full_prints_one_long_token_whole_without_highlighting(tmp_path):
    """Rich's automatic highlighter is off (its patterns are quadratic on one long
    token: a 50,000-character base64 line took 25 s); the token is printed whole."""
    from agentlog.cli import App

    token = "QmFzZTY0" * 2500  # 20,000 characters, no spaces
    folder = tmp_path / ".claude" / "projects" / "-big"
    folder.mkdir(parents=True)
    record = {
        "type": "user",
        "sessionId": "cccccccc-1111-2222-3333-444444444444",
        "uuid": "b1",
        "timestamp": "2026-11-22T10:00:00Z",
        "message": {"role": "user", "content": "hello " + token},
    }
    (folder / "cccccccc-1111-2222-3333-444444444444.jsonl").write_text(json.dumps(record) + "\n")
    code, out, err = run("show", "cccccccc", "--full", env={"HOME": str(tmp_path)})
    assert code == 0, err
    assert token in out.replace("\n", "")
    app = App(env={}, home=tmp_path, index_path=tmp_path / "i.sqlite")
    assert app.console._highlight is False and app.err._highlight is False


def test_show_full_prints_a_huge_prompt_whole_with_its_own_line_breaks(tmp_path):
    """rich's wrapping of one 10 MB prompt took minutes (2 MB: 5 s): whole text
    goes out as written, for the terminal to wrap."""
    prompt = "word " * 200_000 + "\nsecond [bold]line[/bold] \x1b[2J"
    folder = tmp_path / ".claude" / "projects" / "-big"
    folder.mkdir(parents=True)
    record = {
        "type": "user",
        "sessionId": "dddddddd-1111-2222-3333-444444444444",
        "uuid": "b1",
        "timestamp": "2026-11-22T10:00:00Z",
        "message": {"role": "user", "content": prompt},
    }
    (folder / "dddddddd-1111-2222-3333-444444444444.jsonl").write_text(json.dumps(record) + "\n")
    code, out, err = run("show", "dddddddd", "--full", env={"HOME": str(tmp_path)})
    lines = out.splitlines()
    assert code == 0 and "word " * 200_000 in lines, err
    assert "second [bold]line[/bold] ␛[2J" in lines


def test_serve_names_a_host_it_cannot_use():
    for host in ("a..b", "::::1::"):
        code, _, err = run("--demo", "serve", "--host", host, "--port", "18950")
        assert code == 2 and err.startswith(f"agentlog: --host {host}: ") and err.count("\n") == 1, err


def test_global_options_work_before_and_after_the_command(tmp_path):
    """``--no-sync``, ``--index``, ``--root``, ``--demo`` and ``--debug`` are one
    definition each, taken on either side of the command; the main ``--help``
    lists each once, a command's help does not repeat them."""
    projects = Path(__file__).parents[1] / "src" / "agentlog" / "demo" / "home" / ".claude" / "projects"
    env = {"HOME": str(tmp_path), "AGENTLOG_INDEX": None}
    index = str(tmp_path / "index.sqlite")
    where = ["--index", index, "--root", str(projects)]

    def ids(*args: str) -> list[str]:
        code, out, err = run(*args, env=env)
        assert code == 0, err
        return [row["id"][:8] for row in json.loads(out)]

    assert ids(*where, "--no-sync", "sessions", "--json") == []
    assert ids("sessions", "--json", *where, "--no-sync") == []
    assert ids("--no-sync", "sessions", "--json", *where) == []
    synced = ["de70c1a0", "5c0375b4", "1af7fc5e", "fed8ce56", "ba79134d"]
    assert ids("sessions", "--json", *where) == synced
    assert ids("--index", index, "sessions", "--no-sync", "--json") == synced  # the index as it is
    assert ids("sessions", "--json", "--no-sync", "--index", str(tmp_path / "other.sqlite")) == []
    demo = ids("--demo", "sessions", "--json")  # --demo: the bundled home and its own index, not --index's
    assert "019ab0d2" in demo and demo == ids("sessions", "--json", "--index", index, "--demo", "--no-sync")
    code, out, _ = run("--demo", "usage", "daily", "--json", env=env)
    assert (code, out) == run("usage", "daily", "--json", "--demo", env=env)[:2] and code == 0
    code, _, err = run("prices", "--no-sync", "show", "no-such-model", env=env)
    assert code == 1 and "no-such-model" in err
    _, help_text, _ = run("--help")
    for name in ("--demo", "--root", "--index", "--no-sync", "--debug"):
        assert help_text.count(name) == 1, name
    _, command_help, _ = run("sessions", "--help")
    assert "--no-sync" not in command_help and "--demo" not in command_help


def test_a_root_that_is_a_fifo_or_a_device_is_said_in_one_line_and_never_opened(tmp_path):
    """``--root`` at a FIFO (opening it would wait for a writer forever) or a
    device: one line on stderr, the command goes on, ``doctor`` names it."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    env = {"HOME": str(tmp_path), "AGENTLOG_INDEX": str(tmp_path / "index.sqlite")}
    for root, kind in ((fifo, "FIFO"), (Path("/dev/null"), "character device")):
        line = f"agentlog: --root {root}: not a folder ({kind}): nothing read from it (see `agentlog doctor`)\n"
        assert run("sessions", "--root", str(root), env=env) == (0, "", line + "no sessions found\n")
        code, out, err = run("--root", str(root), "doctor", "--json", env=env)
        assert (code, err) == (0, line)
        problem = {"agent": None, "path": str(root), "error": f"OSError: not a folder ({kind})"}
        assert json.loads(out)["path_problems"] == [problem]


def test_index_with_no_sync_is_refused_not_a_report_of_nothing(tmp_path):
    """``index --no-sync`` would print "0 sources" for an index full of them
    (tester finding 10, session 9): a bad combination of arguments, exit 2."""
    env = {"HOME": str(tmp_path), "AGENTLOG_INDEX": str(tmp_path / "index.sqlite")}
    for args in (("--no-sync", "index"), ("index", "--no-sync"), ("index", "--json", "--no-sync")):
        code, out, err = run(*args, env=env)
        assert (code, out) == (2, ""), args
        assert err == "agentlog: index is the sync that --no-sync skips: run it without --no-sync\n"
    assert not (tmp_path / "index.sqlite").exists()


def test_an_overview_with_no_sync_of_an_empty_index_says_the_logs_were_not_read(tmp_path):
    """``--no-sync`` on an index never synced: nothing was read, so it does not
    claim that no logs exist (they do here)."""
    project = tmp_path / "home/.claude/projects/-p"
    project.mkdir(parents=True)
    shutil.copy(FIXTURES / "claude_code/v1.0.98-session.jsonl", project)
    env = {"HOME": str(tmp_path / "home"), "AGENTLOG_INDEX": str(tmp_path / "index.sqlite")}
    code, out, _ = run("--no-sync", "overview", env=env)
    assert code == 0 and "No agent logs found" not in out
    assert " ".join(out.split()).endswith("(--no-sync: the logs were not read; `agentlog index` reads them).")
    code, out, _ = run("overview", env=env)
    assert code == 0 and "1 session" in out and "No sessions" not in out


@pytest.mark.parametrize(
    ("tz", "unknown"),
    [
        ("Nowhere/Invalid", True),
        ("garbage", True),
        ("/no/such/zone/file", True),
        ("Europe/Paris", False),
        (":Europe/Paris", False),
        ("UTC", False),
        ("CET-1CEST", False),
        ("<+03>-3", False),
        ("EST5EDT", False),
        ("", False),
        (None, False),
    ],
)
def test_unknown_tz_is_what_the_c_library_would_silently_read_as_utc(tz, unknown):
    from agentlog.usage.report import unknown_tz

    assert unknown_tz(tz) is unknown


def test_a_tz_that_names_no_zone_is_said_once_on_stderr():
    code, out, err = run("--demo", "--no-sync", "usage", "daily", env={"TZ": "Nowhere/[bold]x"})
    assert code == 0
    assert err.splitlines()[0] == "agentlog: TZ=Nowhere/[bold]x is not a time zone; local times are UTC"
    assert "TZ=" not in out
    _, _, err = run("--demo", "--no-sync", "usage", "daily", env={"TZ": "Europe/Paris"})
    assert "TZ=" not in err


def test_the_agent_column_never_shows_one_agent_by_another_agents_name():
    """``_code`` is dropped for a short column (``claude``), but ``kimi_code`` stays
    whole: ``kimi`` is Kimi CLI's slug, and ``--agent kimi`` lists other sessions."""
    from agentlog.adapters import registered
    from agentlog.present import agent_label

    labels = {a.slug: agent_label(a.slug) for a in registered()}
    assert labels["claude_code"] == "claude" and labels["kimi_code"] == "kimi_code" and labels["kimi"] == "kimi"
    assert len(set(labels.values())) == len(labels)  # one label an agent
    assert all(label == slug or label == slug.removesuffix("_code") for slug, label in labels.items())


def test_no_sync_on_an_index_that_holds_nothing_says_the_logs_were_not_read(tmp_path):
    """``--no-sync`` reads only the index: finding nothing there, ``sessions``, ``usage``
    and the overview say the logs were not read (they said "no sessions found")."""
    from agentlog.cli.synced import NOT_READ

    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "claude_code" / "v2.0.28-legacy-root-agent-file", home / ".claude" / "projects" / "-p")
    env = {"HOME": str(home), "AGENTLOG_INDEX": str(tmp_path / "index.sqlite"), "COLUMNS": "200"}
    assert run("--no-sync", "sessions", env=env) == (0, "", f"no sessions found ({NOT_READ})\n")
    assert run("--no-sync", "usage", "daily", env=env) == (0, "", f"no usage found ({NOT_READ})\n")
    assert f"({NOT_READ})" in run("--no-sync", env=env)[1]
    assert run("sessions", env=env)[0] == 0  # read: then found
    code, _, err = run("--no-sync", "sessions", "--since", "2099-01-01", env=env)
    assert (code, err) == (0, "no sessions match\n")  # the index holds sessions: none in the span


def test_a_tool_result_whose_text_is_not_a_string_is_shown(tmp_path):
    """A content block's ``text`` that is a number or ``null`` (tester13 finding 2)
    made ``show``, the exports, the viewer and MCP exit 70 (``str.join`` of an int):
    it is now shown as JSON text, by the one rule for a tool's output."""
    from agentlog.present import output_text

    assert output_text([{"type": "text", "text": 5}, {"type": "text", "text": None}, {"text": "ok"}, 7]) == "5\n\nok\n7"
    folder = tmp_path / "home" / ".claude" / "projects" / "-w"
    folder.mkdir(parents=True)
    base = {"sessionId": "inttext", "cwd": "/w", "version": "2.1.0", "isSidechain": False}
    lines = [
        {**base, "type": "user", "uuid": "u0", "parentUuid": None, "timestamp": "2026-11-01T11:00:00Z",
         "message": {"role": "user", "content": "run it"}},
        {**base, "type": "assistant", "uuid": "a0", "parentUuid": "u0", "timestamp": "2026-11-01T11:00:01Z",
         "requestId": "r0", "message": {"id": "m0", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
         "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "echo 5"}}],
         "usage": {"input_tokens": 10, "output_tokens": 5}}},
        {**base, "type": "user", "uuid": "u1", "parentUuid": "a0", "timestamp": "2026-11-01T11:00:02Z",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
         "content": [{"type": "text", "text": 5}, {"type": "text", "text": 6.5}]}]}},
    ]
    (folder / "t.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    env = {"HOME": str(tmp_path / "home"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    code, out, err = run("show", "inttext", "--full", env=env)
    assert code == 0, err
    assert "5\n" in out and "6.5" in out
    for fmt, shown in (("md", "6.5"), ("html", "6.5"), ("slim", "→ ok: 5")):
        code, out, err = run("export", "inttext", "--format", fmt, env=env)
        assert code == 0 and shown in out, (fmt, err)
