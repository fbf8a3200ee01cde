"""Live status (issue 13): scripted sessions of seven agents written record by
record pass through the expected statuses in ``agentlog status --json``; the rules
of :mod:`agentlog.live.status`; ``tail --json``; ``statusline``; the follower."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentlog.cli import main
from agentlog.live.procs import ProcessTable, agent_of
from agentlog.live.status import PROMPT_AFTER, StatusFacts, log_status, refine
from agentlog.model import Message, TextPart, ToolCallPart, ToolResult
from live_scripts import SCRIPTS, Stand

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


class Home:
    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.home.mkdir()
        self.cwd = tmp_path / "project"
        self.cwd.mkdir()
        self.index = tmp_path / "index.sqlite"
        self.env = {"HOME": str(self.home), "AGENTLOG_INDEX": str(self.index), "NO_COLOR": "1"}

    def run(self, *args: str) -> str:
        result = CliRunner().invoke(main, list(args), env=self.env, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.stdout

    def board(self) -> dict[str, dict]:
        rows = json.loads(self.run("status", "--json", "--since", "1d"))
        flat: dict[str, dict] = {}
        stack = list(rows)
        while stack:
            row = stack.pop()
            flat[row["key"]] = row
            stack += row["children"]
        return flat


@pytest.mark.parametrize("agent", sorted(SCRIPTS))
def test_scripted_session_passes_through_the_statuses(agent, tmp_path):
    home = Home(tmp_path)
    script = SCRIPTS[agent](home.home, home.cwd)
    stand = Stand(script.program, home.cwd) if script.program else None
    seen: list[tuple[str, str, bool]] = []
    expected: list[tuple[str, str, bool]] = []
    try:
        for step in script.steps:
            if stand is not None and step.process == "start":
                stand.start()
            if stand is not None and step.process == "stop":
                stand.stop()
            step.write()
            row = home.board().get(script.key)
            assert row is not None, f"{step.name}: {script.key} not on the board"
            seen.append((step.name, row["status"], row["inferred"]))
            expected.append(
                (step.name, step.status, row["inferred"] if step.inferred is None else step.inferred)
            )
            assert row["evidence"] or row["status"] == "unknown"
    finally:
        if stand is not None:
            stand.stop()
    assert seen == expected


def test_status_table_puts_the_session_that_needs_you_first(tmp_path):
    home = Home(tmp_path)
    SCRIPTS["codex"](home.home, home.cwd).steps[1].write()  # a prompt: working
    claude = SCRIPTS["claude_code"](home.home, home.cwd)
    for step in claude.steps[:8]:  # ... up to the AskUserQuestion call
        step.write()
    lines = home.run("status", "--since", "1d").splitlines()
    statuses = [line.split()[0] for line in lines[1:] if line.startswith(" ")]
    assert statuses == ["needs_you", "working"]


def test_tail_json_prints_an_appended_message_as_one_line(tmp_path):
    home = Home(tmp_path)
    script = SCRIPTS["claude_code"](home.home, home.cwd)
    script.steps[0].write()
    home.run("index")
    env = {**os.environ, **home.env}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentlog", "tail", script.key, "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = [json.loads(proc.stdout.readline()) for _ in range(2)]  # the backlog: prompt, status
        assert [e["event"] for e in first] == ["message", "status"]
        assert first[0]["message"]["parts"] == [{"type": "text", "text": "fix the failing test"}]
        assert first[1]["status"]["status"] == "working"
        started = time.monotonic()
        script.steps[1].write()  # the Bash call
        events = [json.loads(proc.stdout.readline()) for _ in range(2)]
        latency = time.monotonic() - started
    finally:
        proc.terminate()
        proc.wait(10)
    assert [e["event"] for e in events] == ["message", "status"], [first, events]
    message = events[0]
    assert message["session"] == script.key and "parent" not in message  # a main session: no parent
    assert [(p["type"], p["tool"], p["raw_name"], p["input"]) for p in message["message"]["parts"]] == [
        ("tool_call", "bash", "Bash", {"command": "pytest -q"})
    ]
    status = next(e for e in events if e["event"] == "status")
    assert status["status"]["status"] == "running_tool" and status["status"]["pending"] == ["bash"]
    assert latency < 10


def test_statusline_prints_one_line_with_a_cost(tmp_path):
    home = Home(tmp_path)
    script = SCRIPTS["claude_code"](home.home, home.cwd)
    for step in script.steps[:3]:
        step.write()
    transcript = next((home.home / ".claude/projects").rglob("*.jsonl"))
    payload = json.dumps(
        {
            "session_id": script.key.split(":", 1)[1],
            "transcript_path": str(transcript),
            "model": {"id": "claude-sonnet-4-5-20250929", "display_name": "Sonnet 4.5"},
            "workspace": {"current_dir": str(home.cwd)},
        }
    )
    env = {**os.environ, **home.env}
    out = subprocess.run(
        [sys.executable, "-m", "agentlog", "statusline"], input=payload, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0
    # two calls of 10 input, 20 output and 1,000 cache-read tokens: the block opened
    # at this hour, the context of the last call is 1,010 tokens of 200,000 (0.5%, shown as 0%)
    assert re.fullmatch(r"\$0\.00 session · \$0\.00 today · block \$0\.00 \dh\d\dm left · ctx 0% \(1k\)\n", out.stdout), out.stdout
    again = subprocess.run(
        [sys.executable, "-m", "agentlog", "statusline", "--format", "{model}: {session} {context_tokens}"],
        input=payload, env=env, capture_output=True, text=True,
    )
    assert again.stdout == "Sonnet 4.5: $0.00 1k\n"
    broken = subprocess.run(
        [sys.executable, "-m", "agentlog", "statusline"], input="not json", env=env, capture_output=True, text=True
    )
    assert (broken.returncode, broken.stdout) == (0, "agentlog: – (JSONDecodeError)\n")
    known = "known: session, today, block, left, burn, context, context_tokens, model"
    for fmt, said in [
        ("{bogus}", f"unknown field {{bogus}} in --format; {known}"),
        ("{0}", f"unknown field {{0}} in --format; {known}"),
        ("{session.__class__}", f"unknown field {{session.__class__}} in --format; {known}"),
        ("{session", "expected '}' before end of string"),
        ("{session:{model.__class__.__mro__}}", f"unknown field {{model.__class__.__mro__}} in --format; {known}"),
        ("{session:{x}}", f"unknown field {{x}} in --format; {known}"),
    ]:
        bad = subprocess.run(
            [sys.executable, "-m", "agentlog", "statusline", "--format", fmt],
            input=payload, env=env, capture_output=True, text=True,
        )
        assert (bad.returncode, bad.stdout) == (0, f"agentlog: – ({said})\n")
    for odd in (123, ["/etc"], {"a": 1}):  # a transcript_path that is not a string costs only itself
        wrong = json.dumps({**json.loads(payload), "transcript_path": odd})
        out = subprocess.run([sys.executable, "-m", "agentlog", "statusline"], input=wrong, env=env, capture_output=True, text=True)
        assert re.fullmatch(r"\$0\.00 session · \$0\.00 today · block \$0\.00 \dh\d\dm left · ctx 0% \(1k\)\n", out.stdout), out.stdout
    empty = subprocess.run([sys.executable, "-m", "agentlog", "statusline"], input="", env=env, capture_output=True, text=True)
    assert empty.stdout == "agentlog: – (no statusLine JSON on standard input)\n"


def _claude_call(session_id: str, n: int, at: datetime, tokens: dict[str, int], sidechain: bool = False) -> str:
    return json.dumps({
        "type": "assistant", "sessionId": session_id, "uuid": f"{session_id}-{n}", "timestamp": at.isoformat(),
        "isSidechain": sidechain, "cwd": "/work/p", "requestId": f"req_{session_id}_{n}",
        "message": {"id": f"msg_{session_id}_{n}", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                    "content": [{"type": "text", "text": "done"}], "usage": tokens},
    }) + "\n"


def test_statusline_counts_subagents_and_other_sessions_as_usage_does(tmp_path):
    """Tester13 finding 3: a warm status line synced only the session's own
    transcript, so its subagents' calls and other sessions' calls today were
    missed.  Sonnet 4.5 at $3 per million input and $15 per million output tokens:
    the session $0.30 + its subagent $1.50, another session $0.30 today."""
    from agentlog.statusline import line

    home = Home(tmp_path)
    project = home.home / ".claude/projects/-work-p"
    project.mkdir(parents=True)
    now = datetime.now(UTC)
    transcript = project / "s-main.jsonl"
    transcript.write_text(_claude_call("s-main", 1, now - timedelta(minutes=3), {"input_tokens": 100_000}))
    payload = json.dumps({"session_id": "s-main", "transcript_path": str(transcript), "model": {"id": "claude-sonnet-4-5"}})
    fmt = "{session} {today}"
    env = {**os.environ, **home.env}
    assert line(payload, fmt, env) == "$0.30 $0.30"  # the first call builds the index
    (project / "s-main/subagents").mkdir(parents=True)
    (project / "s-main/subagents/agent-a1.jsonl").write_text(
        _claude_call("s-main", 2, now - timedelta(minutes=2), {"output_tokens": 100_000}, sidechain=True)
    )
    (project / "s-other.jsonl").write_text(_claude_call("s-other", 1, now - timedelta(minutes=2), {"input_tokens": 100_000}))
    with transcript.open("a") as f:  # the session's next call: the status line is asked again
        f.write(_claude_call("s-main", 3, now - timedelta(minutes=1), {"input_tokens": 10}))
    assert line(payload, fmt, env) == "$1.80 $2.10"
    daily = json.loads(home.run("usage", "daily", "--json", "--no-sync"))
    assert sum(row["cost_usd"] for row in daily["rows"]) == pytest.approx(2.10003)


def test_statusline_reads_a_transcript_outside_the_agents_folders(tmp_path):
    """Claude Code run with another ``CLAUDE_CONFIG_DIR`` than the status line
    sees hands it a transcript no sync reads: it said ``$0.00 session`` (tester14
    finding 3).  Its folder is read (and remembered, as a ``--root``), subagents
    included; a ``--format`` spec's padding is kept (finding 4)."""
    from agentlog.statusline import line

    home = Home(tmp_path)
    elsewhere = tmp_path / "other-config/projects/-work-p"
    (elsewhere / "s-out/subagents").mkdir(parents=True)
    now = datetime.now(UTC)
    transcript = elsewhere / "s-out.jsonl"
    transcript.write_text(_claude_call("s-out", 1, now - timedelta(minutes=3), {"input_tokens": 100_000}))
    (elsewhere / "s-out/subagents/agent-a1.jsonl").write_text(
        _claude_call("s-out", 2, now - timedelta(minutes=2), {"output_tokens": 100_000}, sidechain=True)
    )
    other = elsewhere.parent / "-other"  # another project of that config folder, today
    other.mkdir()
    (other / "s-two.jsonl").write_text(_claude_call("s-two", 1, now - timedelta(minutes=1), {"input_tokens": 100_000}))
    payload = json.dumps({"session_id": "s-out", "transcript_path": str(transcript), "model": {"id": "claude-sonnet-4-5"}})
    env = {**os.environ, **home.env}
    assert line(payload, "[{session:>7}] [{today:<7}]", env) == "[  $1.80] [$2.10  ]"  # finding 19: -other counted
    assert str(elsewhere.parent) in home.run("doctor")


@pytest.mark.parametrize(
    "named",
    ["/etc/hostname", "{home}/s-x.jsonl", "{other}/projects/-p/not-the-id.jsonl", "{other}/x/-p/s-x.jsonl", "{other}/projects/repo/s-x.jsonl"],
)
def test_statusline_reads_no_folder_for_a_file_that_is_not_a_transcript(tmp_path, named):
    """Any existing file named as ``transcript_path`` made its folder a remembered
    root scanned whole (``/etc``, ``/``: a five-minute call; tester14 finding 14):
    only ``<session_id>.jsonl`` in ``…/projects/<project>/`` is read, ``<project>``
    an encoded working folder (``~/projects/repo``: finding 24)."""
    from agentlog.index import db
    from agentlog.statusline import line

    home = Home(tmp_path)
    other = tmp_path / "other"
    for path in (home.home / "s-x.jsonl", other / "projects/-p/not-the-id.jsonl", other / "x/-p/s-x.jsonl", other / "projects/repo/s-x.jsonl"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_claude_call("s-x", 1, datetime.now(UTC), {"input_tokens": 100_000}))
    transcript = named.format(home=home.home, other=other)
    payload = json.dumps({"session_id": "s-x", "transcript_path": transcript})
    assert line(payload, "{session}", {**os.environ, **home.env}) == "$0.00"
    conn = db.connect(home.index)
    assert conn.execute("SELECT count(*) FROM roots").fetchone()[0] == 0
    conn.close()


def test_statusline_marks_a_cost_summed_over_only_some_calls(tmp_path):
    """A session with a call of a model no price table knows printed the priced
    calls' sum as its cost, unmarked (tester13 finding 14): it ends in ``*``, as
    ``agentlog usage`` marks such a sum."""
    from agentlog.statusline import line

    home = Home(tmp_path)
    project = home.home / ".claude/projects/-p"
    project.mkdir(parents=True)
    now = datetime.now(UTC)
    unknown = json.loads(_claude_call("s-1", 2, now - timedelta(minutes=1), {"input_tokens": 5}))
    unknown["message"]["model"] = "claude-mystery-9"
    (project / "s-1.jsonl").write_text(
        _claude_call("s-1", 1, now - timedelta(minutes=3), {"input_tokens": 100_000}) + json.dumps(unknown) + "\n"
    )
    payload = json.dumps({"session_id": "s-1"})
    assert line(payload, "{session} {today} {block}", {**os.environ, **home.env}).split(" ")[:4] == [
        "$0.30*", "$0.30*", "block", "$0.30*"
    ]


def test_statusline_takes_the_global_options(tmp_path):
    """``--demo statusline`` synced the user's own logs into the demo index (then
    shown by ``--demo sessions``), ``--no-sync`` synced, ``--root`` was ignored
    (tester14 finding 13)."""
    home = Home(tmp_path)
    project = home.home / ".claude/projects/-mine"
    project.mkdir(parents=True)
    now = datetime.now(UTC)
    (project / "s-mine.jsonl").write_text(_claude_call("s-mine", 1, now - timedelta(minutes=3), {"input_tokens": 100_000}))
    payload = json.dumps({"session_id": "s-mine"})
    env = {k: v for k, v in home.env.items() if k != "AGENTLOG_INDEX"}  # the demo index lies beside the default one
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")

    def statusline(*options: str) -> str:
        result = CliRunner().invoke(main, [*options, "statusline", "--format", "{session}"], input=payload, env=env)
        assert result.exit_code == 0, result.output
        return result.output.strip()

    assert statusline("--demo") == "$0.00"
    payload = json.dumps({"session_id": "s-mine", "transcript_path": str(project / "s-mine.jsonl")})
    assert statusline("--demo") == "$0.00"  # the transcript Claude Code names is not read either (finding 16)
    demo = CliRunner().invoke(main, ["--demo", "sessions", "--json", "--no-sync"], env=env)
    assert "s-mine" not in demo.output and json.loads(demo.output)
    assert statusline("--no-sync") == "$0.00"  # the index was never synced
    assert statusline() == "$0.30"
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "s-root.jsonl").write_text(_claude_call("s-root", 1, now - timedelta(minutes=2), {"input_tokens": 200_000}))
    payload = json.dumps({"session_id": "s-root"})
    assert statusline() == "$0.00"  # no --root: not read; and not the answer kept for --root below
    assert statusline("--root", str(other)) == "$0.60"


def test_statusline_answers_from_the_index_while_another_process_writes(tmp_path):
    """Another process's write lock (a long sync) held every status line call for
    the minute of the busy timeout, then printed ``agentlog: – (OperationalError)``
    (tester14 finding 20): it waits a second, answers from the index as it is, and
    does not keep that answer; opening an up-to-date index takes no write lock."""
    import sqlite3

    from agentlog.service.statusline import SYNC_WAIT_MS
    from agentlog.statusline import line

    home = Home(tmp_path)
    project = home.home / ".claude/projects/-p"
    project.mkdir(parents=True)
    transcript = project / "s-1.jsonl"
    now = datetime.now(UTC)
    transcript.write_text(_claude_call("s-1", 1, now - timedelta(minutes=3), {"input_tokens": 100_000}))
    payload = json.dumps({"session_id": "s-1", "transcript_path": str(transcript)})
    env = {**os.environ, **home.env}
    assert line(payload, "{session}", env) == "$0.30"
    with transcript.open("a") as f:
        f.write(_claude_call("s-1", 2, now - timedelta(minutes=1), {"input_tokens": 100_000}))
    writer = sqlite3.connect(home.index, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        assert line(payload, "{session}", env) == "$0.30"  # the index as it is
        assert time.monotonic() - started < SYNC_WAIT_MS / 1000 + 5
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert line(payload, "{session}", env) == "$0.60"  # not kept: this call synced


# --- the rules ------------------------------------------------------------------


def _call(call_id: str, tool: str, raw: str, done: bool = False) -> ToolCallPart:
    return ToolCallPart(call_id=call_id, tool=tool, raw_name=raw, result=ToolResult(output="ok") if done else None)


def _msg(mid: str, role: str, *parts, at: datetime = NOW, flags=()) -> Message:
    return Message(id=mid, role=role, timestamp=at, parts=list(parts), flags=list(flags))


def test_log_status_of_a_tail():
    prompt = _msg("u1", "user", TextPart(text="go"))
    pending = _msg("a1", "assistant", _call("c1", "edit", "Edit"), at=NOW + timedelta(seconds=1))
    assert log_status("claude_code", "main", "unknown", None, [prompt]) == StatusFacts(
        "working", "user message u1: the prompt is the last record", NOW, NOW
    )
    assert log_status("claude_code", "main", "unknown", None, [prompt, pending]) == StatusFacts(
        "running_tool",
        "assistant message a1: pending tool_call Edit c1",
        NOW + timedelta(seconds=1),
        NOW + timedelta(seconds=1),
        pending=("edit",),
    )
    reply = _msg("a2", "assistant", TextPart(text="done"))
    facts = log_status("claude_code", "subagent", "unknown", None, [prompt, reply])
    assert (facts.status, facts.inferred, facts.reason) == (
        "done",
        True,
        "the last record is the assistant's reply; the agent records no turn end",
    )
    # a call left pending before the last prompt does not count
    assert log_status("codex", "main", "working", "event_msg/task_started", [pending, prompt]).status == "working"
    # a recorded final status wins over the tail, a pending question over both
    assert log_status("codex", "main", "waiting_for_user", "event_msg/task_complete", [prompt, pending]).status == (
        "waiting_for_user"
    )
    question = _msg("a3", "assistant", _call("q1", "request_user_input", "request_user_input"))
    assert log_status("codex", "main", "waiting_for_user", "x", [prompt, question]).status == "needs_you"


def test_a_manual_compaction_leaves_the_agent_at_its_prompt_an_automatic_one_goes_on():
    """Claude's ``/compact``: a ``compact_boundary`` (trigger ``manual``) and the hidden
    summary end the log, and the agent waits at its prompt; an automatic compaction
    mid-turn is followed by more work (tester finding 3 of session 10)."""
    from agentlog.model import CompactionPart

    prompt = _msg("u1", "user", TextPart(text="go"))
    reply = _msg("a1", "assistant", TextPart(text="done"))
    summary = _msg("u2", "user", TextPart(text="This session is being continued…"), flags=("compaction_summary",))
    for trigger, status in (("manual", "waiting_for_user"), ("auto", "working")):
        boundary = _msg("s1", "system", CompactionPart(trigger=trigger, tokens_before=150_000))
        facts = log_status("claude_code", "main", "unknown", None, [prompt, reply, boundary, summary])
        assert facts.status == status, trigger
        alone = log_status("claude_code", "main", "unknown", None, [prompt, reply, boundary])
        assert alone.status == ("waiting_for_user" if trigger == "manual" else "unknown"), trigger
    manual = _msg("s1", "system", CompactionPart(trigger="manual"))
    facts = log_status("claude_code", "main", "unknown", None, [prompt, reply, manual, summary])
    assert (facts.evidence, facts.inferred, facts.reason) == (
        "user message u2: a manual compaction ends the log",
        True,
        "a compaction the user asked for (/compact) leaves the agent at its prompt",
    )
    later = _msg("u3", "user", TextPart(text="now the tests"))
    assert log_status("claude_code", "main", "unknown", None, [manual, summary, later]).status == "working"


def test_refine_adds_the_clock_and_the_processes():
    running = StatusFacts("running_tool", "e", NOW, NOW, pending=("edit",))
    later = NOW + PROMPT_AFTER + timedelta(seconds=1)
    prompt = refine(running, "claude_code", last_write=NOW, now=later)
    assert (prompt.status, prompt.inferred, prompt.reason) == (
        "needs_you",
        True,
        "a edit call pending for 9 s with no write: claude_code records nothing while a permission prompt waits",
    )
    assert refine(running, "kimi", last_write=NOW, now=later).status == "running_tool"  # Kimi records approvals
    bash = StatusFacts("running_tool", "e", NOW, NOW, pending=("bash",))
    assert refine(bash, "claude_code", last_write=NOW, now=later).status == "running_tool"  # a long command
    hour = NOW + timedelta(hours=1)
    assert refine(bash, "claude_code", last_write=NOW, now=hour).status == "stale"
    assert refine(bash, "claude_code", last_write=NOW, now=hour, alive=True).status == "running_tool"
    ended = StatusFacts("waiting_for_user", "e", NOW, NOW)
    assert refine(ended, "claude_code", last_write=NOW, now=hour).status == "waiting_for_user"
    assert refine(ended, "claude_code", last_write=NOW, now=hour, alive=False).status == "done"
    assert refine(ended, "claude_code", last_write=NOW, now=NOW + timedelta(hours=3)).status == "done"
    spawn = StatusFacts("waiting_for_subagents", "e", NOW, NOW, pending=("task",))
    assert refine(spawn, "claude_code", last_write=NOW, now=NOW, children=["working"]).status == "waiting_for_subagents"
    assert refine(spawn, "claude_code", last_write=NOW, now=NOW, children=["done"]).status == "working"


def test_process_table():
    assert agent_of(["node", "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js"]) == "claude_code"
    assert agent_of(["/home/me/.local/bin/codex", "resume"]) == "codex"
    assert agent_of(["/home/pi/bin/python3", "x.py"]) is None
    table = ProcessTable({"claude_code": {"/work/app/src"}})
    assert table.alive("claude_code", "/work/app") is True
    assert table.alive("claude_code", "/work/other") is False
    assert table.alive("cline", "/work/app") is None  # runs in an editor: unknown


def test_follower_syncs_an_appended_line(tmp_path):
    from agentlog.index import db
    from agentlog.service.follow import Follower
    from agentlog.service.home import Home as LogHome
    from agentlog.service.status import live_status

    home = Home(tmp_path)
    script = SCRIPTS["claude_code"](home.home, home.cwd)
    script.steps[0].write()
    follower = Follower(home.index, LogHome(home.env, home.home, []), debounce=50)
    follower.start()
    try:
        version = follower.wait(0, 30)  # the first sync
        assert follower.error is None
        time.sleep(0.5)  # the watch is set up
        script.steps[1].write()
        version = follower.wait(version, 30)
        assert follower.mode == "events"
        conn = db.connect(home.index, readonly=True)
        try:
            rows = live_status(conn, procs=None, costs=False)
        finally:
            conn.close()
    finally:
        follower.stop()
        follower.join(5)
    assert [(r.key, r.status, r.pending) for r in rows] == [(script.key, "running_tool", ["bash"])]
    assert not follower.is_alive()


def test_an_unknown_changed_file_is_ignored_after_one_whole_sync(tmp_path):
    from agentlog.service.follow import Follower
    from agentlog.service.home import Home as LogHome

    home = Home(tmp_path)
    SCRIPTS["claude_code"](home.home, home.cwd).steps[0].write()
    noise = home.home / ".claude/projects/-live-project/notes.txt"
    noise.write_text("x")
    follower = Follower(home.index, LogHome(home.env, home.home, []))
    follower.sync_round()
    follower.sync_round({str(noise)})
    assert follower.ignored == {str(noise)}


def mid_turn_home(tmp_path: Path) -> Home:
    """A home of four agents' sessions, each four records into a turn, indexed."""
    home = Home(tmp_path)
    for name in ("claude_code", "codex", "kimi", "cline"):
        for step in SCRIPTS[name](home.home, home.cwd).steps[:4]:
            step.write()
    home.run("index")
    return home


def test_index_and_memory_give_the_same_board(tmp_path):
    """The board read from the index equals the board read from the logs (the same
    rules on both paths), for a Claude session in the middle of a turn."""
    from agentlog.index import db
    from agentlog.service.home import Home as LogHome
    from agentlog.service.status import live_status, logged_live_status

    home = mid_turn_home(tmp_path)
    now = datetime.now(UTC)
    conn = db.connect(home.index, readonly=True)
    try:
        indexed = live_status(conn, now=now, procs=None, costs=False)
    finally:
        conn.close()
    logged = logged_live_status(LogHome(home.env, home.home, []), now=now, procs=None)
    assert len(indexed) == 4 and indexed == logged


def test_a_board_refined_later_from_an_earlier_read_is_the_board_then(tmp_path):
    """``watch`` redraws a quiet board from its last read of the index
    (:func:`read_live`) refined by the clock alone: while no log changes that is
    exactly the board read anew, here across the clock's status changes (a turn
    going stale, a prompt waiting past its delay)."""
    from agentlog.index import db
    from agentlog.service.status import board, live_status, read_live

    home = mid_turn_home(tmp_path)
    read_at = datetime.now(UTC)
    conn = db.connect(home.index, readonly=True)
    try:
        read = read_live(conn, now=read_at)
        seen = set()
        for later in (timedelta(0), PROMPT_AFTER * 2, timedelta(minutes=30), timedelta(hours=3)):
            now = read_at + later
            again = live_status(conn, now=now, procs=None)
            assert board(read.sessions, read.turns, read.writes, now, None) == again
            seen |= {r.status for r in again}
    finally:
        conn.close()
    assert len(again) == 4 and len(seen) >= 2, seen


def test_watch_board_opens_a_tail_and_exits_on_ctrl_c(tmp_path):
    """``watch`` on a terminal (a pseudo-terminal here): the board, a row number +
    Enter opens that session's tail, Ctrl-C goes back to the board, Ctrl-C again
    exits with status 0."""
    import pty
    import select
    import signal

    home = Home(tmp_path)
    script = SCRIPTS["claude_code"](home.home, home.cwd)
    for step in script.steps[:2]:  # a prompt and a pending Bash call
        step.write()
    env = {**os.environ, **home.env, "COLUMNS": "120", "LINES": "40", "TERM": "xterm"}
    pid, fd = pty.fork()
    if pid == 0:  # the child: agentlog watch on the terminal
        os.execve(sys.executable, [sys.executable, "-m", "agentlog", "watch"], env)
    seen = b""

    def until(text: bytes, timeout: float = 30) -> None:
        nonlocal seen
        deadline = time.monotonic() + timeout
        while text not in seen and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.2)[0]:
                try:
                    seen += os.read(fd, 65536)
                except OSError:
                    break
        assert text in seen, seen[-2000:]

    try:
        until(b"agentlog watch")
        until(b"running_tool")
        assert b"a row number + Enter" in seen
        os.write(fd, b"1\n")
        until(b"tail of " + script.key.encode())
        until(b"pytest -q")  # the Bash call, rendered by the tail
        os.kill(pid, signal.SIGINT)
        seen = b""
        until(b"agentlog watch")  # back on the board
        os.kill(pid, signal.SIGINT)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_subagent_sits_under_its_parent_on_the_board_and_in_tail(tmp_path):
    """A Claude Task call whose subagent (``<session>/subagents/agent-<id>.jsonl``)
    is working: the parent waits for it; once the subagent's turn ends it is done
    and the parent is working again (inferred); ``tail`` of the parent shows the
    subagent's messages under it."""
    from agentlog.index import db
    from agentlog.service.tail import SessionTail
    from live_scripts import append, iso

    home = Home(tmp_path)
    script = SCRIPTS["claude_code"](home.home, home.cwd)
    for step in script.steps[:4]:  # ... the pending Task call
        step.write()
    sid = script.key.split(":", 1)[1]
    child = home.home / ".claude/projects/-live-project" / sid / "subagents/agent-c0ffee01.jsonl"
    (child.parent / "agent-c0ffee01.meta.json").parent.mkdir(parents=True)
    (child.parent / "agent-c0ffee01.meta.json").write_text(json.dumps({"agentType": "explore", "description": "explore", "toolUseId": "toolu_2"}))
    base = {"isSidechain": True, "sessionId": sid, "agentId": "c0ffee01", "cwd": str(home.cwd), "version": "2.0.30"}
    append(child, {**base, "type": "user", "uuid": "s1", "timestamp": iso(), "message": {"role": "user", "content": "look around"}})
    board = home.board()
    assert (board[script.key]["status"], board["claude_code:agent-c0ffee01"]["status"]) == ("waiting_for_subagents", "working")
    assert [c["key"] for c in json.loads(home.run("status", "--json", "--since", "1d"))[0]["children"]] == ["claude_code:agent-c0ffee01"]
    conn = db.connect(home.index, readonly=True)
    try:
        follow = SessionTail(conn, script.key, backlog=0)
        follow.poll(conn)
        reply = {"id": "msg_s2", "role": "assistant", "model": "claude-haiku-4-5", "content": [{"type": "text", "text": "found it"}], "stop_reason": "end_turn"}
        append(child, {**base, "type": "assistant", "uuid": "s2", "timestamp": iso(), "message": reply})
        board = home.board()
        events = follow.poll(conn)
    finally:
        conn.close()
    assert (board["claude_code:agent-c0ffee01"]["status"], board[script.key]["status"], board[script.key]["inferred"]) == ("done", "working", True)
    assert [(e.event, e.session, e.parent) for e in events] == [
        ("message", "claude_code:agent-c0ffee01", script.key),
        ("status", script.key, None),
        ("status", "claude_code:agent-c0ffee01", script.key),
    ]


BOARD_80 = """\
status         for  agent   session                                         turn
/home/demo/src/weather
 interrupted   11d  claude  de70c1a0 weather: fix daily_mean rounding       2.3k
  done         11d  claude  └ b7e1d2c3 Review rounding change               8.7k
 done           9d  codex   019ab0d2 Add type hints to weather/units.py…   36.0k
/Users/USER/dev/ai-music
 done         538d  claude  fed8ce56 AI Music Generation: Diverse Embed…   31.7k
 done         541d  claude  ba79134d /init                                 78.6k
/path/to/Demo
 done         450d  claude  5c0375b4 /orchestrator @CLAUDE.md を最新の …  218.4k
  done        450d  claude  └ 6340ddef Examine the package.json file(s)…   39.7k
  done        450d  claude  └ 83e2917c Analyze the current project stru…  117.7k
 done         454d  claude  1af7fc5e /init                                117.0k
"""
BOARD_120 = """\
status         for  agent   session                                 turn  evidence
/home/demo/src/weather
 interrupted   11d  claude  de70c1a0 weather: fix daily_m…    2.3k $0.01  user message u11: flagged interrupted
  done         11d  claude  └ b7e1d2c3 Review rounding ch…    8.7k $0.01  assistant message msg_demo_s2: turn_end
 done           9d  codex   019ab0d2 Add type hints to we…   36.0k $0.02  ~ the turn ended and no write for 9 d
/Users/USER/dev/ai-music
 done         538d  claude  fed8ce56 AI Music Generation:…   31.7k $0.02  ~ the turn ended and no write for 538 d
 done         541d  claude  ba79134d /init                   78.6k $0.02  ~ the turn ended and no write for 541 d
/path/to/Demo
 done         450d  claude  5c0375b4 /orchestrator @CLAUD…  218.4k $0.19  ~ the turn ended and no write for 450 d
  done        450d  claude  └ 6340ddef Examine the packag…   39.7k $0.07  assistant message msg_01CHVXQb6qDihpHcDpuqvJz…
  done        450d  claude  └ 83e2917c Analyze the curren…  117.7k $0.08  ~ the last record is the assistant's reply; t…
 done         454d  claude  1af7fc5e /init                  117.0k $0.09  ~ the turn ended and no write for 454 d
"""


def test_the_board_fits_80_and_120_columns(tmp_path):
    """Project lines never widen the status column; below 100 columns the evidence
    and the turn's cost are dropped so the session keeps its title."""
    import shutil

    from rich.console import Console

    from agentlog.cli.board import board_table
    from agentlog.demo import demo_home
    from agentlog.index import db
    from agentlog.query import SessionFilter, parse_span
    from agentlog.service.status import live_status
    from web_helpers import build_index

    now = datetime(2026, 12, 1, 12, tzinfo=UTC)
    home = Path(shutil.copytree(demo_home(), tmp_path / "home"))
    for log in (p for p in home.rglob("*") if p.is_file()):  # last written at its last record, not at checkout
        stamps = re.findall(r'"timestamp": ?"([^"]+)"', log.read_text(errors="replace"))
        last = max((datetime.fromisoformat(t.replace("Z", "+00:00")) for t in stamps), default=now)
        os.utime(log, (last.timestamp(), last.timestamp()))
    conn = db.connect(build_index(tmp_path / "demo.sqlite", home), readonly=True)
    rows = live_status(conn, SessionFilter(span=parse_span("2000-01-01", None)), now=now, procs=None)
    conn.close()
    for width, expected in ((80, BOARD_80), (120, BOARD_120)):
        console = Console(width=width, record=True, file=io.StringIO())
        console.print(board_table(rows, now, console.width))
        assert console.export_text() == expected, width
    for columns in ("80", "120"):  # the command, at the terminal width COLUMNS says
        result = CliRunner().invoke(main, ["--demo", "status", "--since", "2000-01-01"], env={"COLUMNS": columns})
        lines = result.stdout.splitlines()
        assert result.exit_code == 0 and max(len(line) for line in lines) <= int(columns)
        assert lines[0].split() == ["status", "for", "agent", "session", "turn", *(["evidence"] if columns == "120" else [])]
        assert lines[1] == "/home/demo/src/weather"


def test_the_missing_live_extra_hint_keeps_its_brackets(monkeypatch, tmp_path, capsys):
    """rich read ``[live]`` in the hint as markup: it printed ``pip install 'agentlog'``."""
    import agentlog.cli.live as cli_live
    import agentlog.live.watch as watch
    from agentlog.cli import App

    class Idle:
        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

        def start(self) -> None:
            pass

    monkeypatch.setattr(watch, "events_available", lambda: False)
    monkeypatch.setattr(cli_live, "Follower", Idle)
    cli_live._follower(App(env={}, home=tmp_path, index_path=tmp_path / "i.sqlite"))
    assert "pip install 'agentlog[live]' (polling instead)" in capsys.readouterr().err


def test_a_folder_name_that_is_not_utf8_costs_only_its_own_events(tmp_path, caplog):
    """The watcher cannot decode a name that is not UTF-8 and gave up on every
    root (30 s polling for all); now the folders holding one are polled (a change
    there reads as "anything may have changed") and the rest keep their events."""
    import threading

    from agentlog.live.watch import UNKNOWN, LogWatcher, watchable

    projects = tmp_path / "projects"
    (projects / "clean").mkdir(parents=True)
    (projects / "other").mkdir()
    os.mkdir(os.fsencode(projects) + b"/-tmp-\xff")
    log = projects / "clean" / "s.jsonl"
    log.write_text("{}\n")
    bad = projects / os.fsdecode(b"-tmp-\xff")
    watched, left_out = watchable([projects])
    assert (sorted(watched), left_out) == ([projects / "clean", projects / "other"], [projects, bad])
    assert watchable([projects / "clean"]) == ([projects / "clean"], [])
    assert watchable([bad]) == ([], [bad])

    watcher = LogWatcher([projects], debounce=50, poll=0.5, tick=0.5)
    seen: list[set[str]] = []

    def collect() -> None:
        for changes in watcher:
            seen.append(changes)
            if str(log) in changes:
                watcher.stop()

    thread = threading.Thread(target=collect, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not seen and time.monotonic() < deadline:  # the first tick: the watch is in place
        time.sleep(0.05)
    with log.open("a") as f:
        f.write("{}\n")
    thread.join(timeout=20)
    watcher.stop()
    assert watcher.mode == "events"
    assert seen[0] == set(UNKNOWN)  # a tick polls the folder left out
    assert str(log) in seen[-1]
    # said once, the name's bytes escaped (it printed a list of PosixPath reprs, tester13 finding 9)
    assert [r.getMessage() for r in caplog.records if r.name == "agentlog.live.watch"] == [
        f"a name that is not UTF-8: polling what lies directly in {projects} and all of {projects}/-tmp-\\xff "
        "every 0.5 s (file-system events for everything else)"  # tester14 finding 9: it read as all of them polled
    ]


def test_tail_says_a_status_once_while_only_its_reason_ticks(tmp_path):
    """A session gone quiet mid-turn turns stale once; ``tail`` does not print it
    again each minute as its reason's "no write for N min" grows (tester finding 7
    of session 10: a deleted log printed a stale line every minute, forever)."""
    from agentlog.index import db
    from agentlog.service.tail import SessionTail

    home = Home(tmp_path)
    script = SCRIPTS["claude_code"](home.home, home.cwd)
    script.steps[0].write()  # the prompt: working
    home.run("index")
    conn = db.connect(home.index, readonly=True)
    try:
        follow = SessionTail(conn, script.key, backlog=0)
        start = datetime.now(UTC)
        said = [
            [(e.status.status, e.status.reason) for e in follow.poll(conn, now=start + timedelta(minutes=m)) if e.status]
            for m in (1, 40, 41, 55, 90)
        ]
    finally:
        conn.close()
    assert [len(events) for events in said] == [1, 1, 0, 0, 0]
    assert said[0][0][0] == "working" and said[1][0][0] == "stale"


def test_tail_says_when_its_log_is_removed_truncated_or_back(tmp_path):
    """A log removed, cut shorter or written again is one ``log`` event each (tester
    finding 7 of session 10: the removal went unsaid); the index keeps the messages."""
    from agentlog.index import db
    from agentlog.index.live import last_messages
    from agentlog.service.tail import SessionTail, log_change

    assert [log_change(*sizes) for sizes in [(-1, None), (-1, 5), (5, 5), (5, 9), (5, None), (None, 3), (9, 5)]] == [
        None, None, None, None, "removed", "back", "truncated",
    ]  # fmt: skip
    home = Home(tmp_path)
    script = SCRIPTS["claude_code"](home.home, home.cwd)
    script.steps[0].write()
    home.run("index")
    log = Path(db.connect(home.index, readonly=True).execute("SELECT path FROM sources").fetchone()[0])
    text = log.read_bytes()
    conn = db.connect(home.index, readonly=True)
    try:
        follow = SessionTail(conn, script.key, backlog=1)

        def logs() -> list[tuple[str | None, str | None]]:
            return [(e.log, e.path) for e in follow.poll(conn) if e.event == "log"]

        said = [logs()]
        log.unlink()
        said += [logs(), logs()]
        log.write_bytes(text)
        said.append(logs())
        log.write_bytes(text[: len(text) // 2])
        said += [logs(), logs()]
        kept = [m.id for m in last_messages(conn, script.key, 10)]
    finally:
        conn.close()
    path = str(log)
    assert said == [[], [("removed", path)], [], [("back", path)], [("truncated", path)], []]
    assert len(kept) == 1  # the prompt, still in the index


def test_tail_prints_a_log_event_as_one_escaped_line():
    from types import SimpleNamespace

    from rich.console import Console

    from agentlog.cli.live import _print_event
    from agentlog.service.tail import TailEvent

    out = io.StringIO()
    app = SimpleNamespace(console=Console(file=out, width=200, color_system=None))
    for change in ("removed", "back", "truncated"):
        _print_event(app, "k", TailEvent(event="log", session="k", log=change, path="/h/[bold]x.jsonl"))  # type: ignore[arg-type]
    assert out.getvalue().splitlines() == [
        "● log removed /h/[bold]x.jsonl (the index keeps what it read)",
        "● log back /h/[bold]x.jsonl",
        "● log truncated /h/[bold]x.jsonl (the index keeps what it read)",
    ]


def test_tail_says_once_when_a_log_holding_a_subagent_too_is_removed(tmp_path):
    """A real Claude Code file holding a session and its sidechain subagent: one
    ``log`` event for the file, under the session (not one for each session)."""
    import shutil

    from agentlog.index import db
    from agentlog.service.tail import SessionTail
    from conftest import FIXTURES

    project = tmp_path / ".claude" / "projects" / "-p"
    project.mkdir(parents=True)
    log = project / "s.jsonl"
    shutil.copy(FIXTURES / "claude_code" / "v2.0.28-legacy-root-agent-file" / "agent-test-hash-123.jsonl", log)
    index = tmp_path / "index.sqlite"
    result = CliRunner().invoke(main, ["--index", str(index), "index"], env={"HOME": str(tmp_path)})
    assert result.exit_code == 0, result.output
    conn = db.connect(index, readonly=True)
    try:
        assert conn.execute("SELECT key, kind FROM sessions ORDER BY key").fetchall() == [
            ("claude_code:s", "main"),
            ("claude_code:sidechain-a1111111-1111-4111-a111-111111111111", "subagent"),
        ]
        follow = SessionTail(conn, "claude_code:s", backlog=0)
        follow.poll(conn)
        log.unlink()
        gone = [(e.session, e.log, e.path) for e in follow.poll(conn) if e.event == "log"]
    finally:
        conn.close()
    assert gone == [("claude_code:s", "removed", str(log))]


def test_the_board_prints_markup_in_log_text_as_written_without_escapes(tmp_path):
    """A folder ``/w/[red]evil[/red]`` and a prompt ``[bold red]HELLO[/]`` print as
    written: the board's cells are rich ``Text`` (never read as markup), so the
    markup-escaped ``clean`` printed ``/w/\\[red]evil\\[/red]``."""
    now = datetime.now(UTC)
    project = tmp_path / "home" / ".claude" / "projects" / "-w-evil"
    project.mkdir(parents=True)
    stamp = now.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    line = {
        "type": "user", "sessionId": "s1", "uuid": "u1", "timestamp": stamp, "cwd": "/w/[red]evil[/red]",
        "message": {"role": "user", "content": "[bold red]HELLO[/] \x1b[31mx"},
    }
    (project / "s1.jsonl").write_text(json.dumps(line) + "\n")
    env = {"HOME": str(tmp_path / "home"), "AGENTLOG_INDEX": str(tmp_path / "index.sqlite"), "COLUMNS": "120"}
    result = CliRunner().invoke(main, ["status", "--since", "1d"], env=env)
    assert result.exit_code == 0, result.output
    assert "/w/[red]evil[/red]" in result.stdout and "[bold red]HELLO[/] ␛[31mx" in result.stdout
    assert "\\[" not in result.stdout


def test_watch_off_a_terminal_prints_each_board_that_changed():
    """Off a terminal rich's ``Live`` printed only its last frame, when ``watch`` exited:
    a board is printed whole first and after each sync that changed it."""
    from rich.console import Console
    from rich.text import Text

    from agentlog.cli import live as cli_live

    out = io.StringIO()
    bodies = iter(["a", "a", "b"])

    class Syncs:
        version = 0

        def wait(self, version: int, timeout: float) -> int:
            return version + 1

    def frame(changed: bool):
        body = next(bodies, None)
        if body is None:
            raise KeyboardInterrupt
        return Text(f"head {changed}"), Text(body)

    with pytest.raises(KeyboardInterrupt):
        cli_live._printed(Console(file=out, width=40), frame, Syncs())  # type: ignore[arg-type]
    assert out.getvalue() == "head True\na\nhead True\nb\n"


def test_watch_into_a_file_writes_the_board_while_it_runs(tmp_path):
    out = tmp_path / "board.txt"
    env = {**os.environ, "AGENTLOG_NO_DAEMON": "1", "HOME": str(tmp_path)}
    with out.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentlog", "--demo", "watch", "--since", "2000-01-01"],
            stdout=sink, stderr=subprocess.DEVNULL, env=env,
        )
        try:
            deadline = time.monotonic() + 60
            while "de70c1a0" not in out.read_text() and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.2)
            text = out.read_text()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    assert text.startswith("agentlog watch ") and "/home/demo/src/weather" in text and "de70c1a0" in text
