"""Prompt-only sessions from Claude Code's ``history.jsonl``: the prompts of a
session whose transcript is gone, never counted twice with a transcript."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

from click.testing import CliRunner

from agentlog.adapters.claude_history import parse_history
from agentlog.cli import main
from agentlog.model import Diagnostics, Message, Session, TextPart
from conftest import FIXTURES

TRANSCRIPT = "1af7fc5e-8455-4414-9ccd-011d40f70b2a"  # the id its records give (v1.0.98-session.jsonl)


def record(sid: str | None, display: str, ms: int, project: str = "/path/to/Demo", **extra: object) -> str:
    data: dict[str, object] = {"display": display, "pastedContents": {}, "timestamp": ms, "project": project}
    if sid is not None:
        data["sessionId"] = sid
    return json.dumps({**data, **extra})


def test_parse_history_gives_one_prompt_only_session_per_session_id():
    lines = [
        record("s1", "fix the flaky retry test", 1_759_105_062_139, "/home/me/repo"),
        record(None, "an old prompt, before sessionId was written", 1_700_000_000_000),
        "{not json",
        record(
            "s1",
            "and this one [Pasted text #1 +2 lines]",
            1_759_105_100_000,
            "/home/me/repo",
            pastedContents={"1": {"id": 1, "type": "text", "content": "a\nb"}},
        ),
        record("s2", "   ", 1_759_105_200_000),
        record("s2", "/init", 1_759_105_300_000),
        '{"display": "half a line',
    ]
    data = "\n".join(lines).encode()
    starts = [sum(len(line.encode()) + 1 for line in lines[:n]) for n in range(len(lines))]
    sessions, diagnostics = parse_history(data)
    first = datetime(2025, 9, 29, 0, 17, 42, 139000, tzinfo=UTC)
    second = datetime.fromtimestamp(1_759_105_100, UTC)
    third = datetime.fromtimestamp(1_759_105_300, UTC)
    assert sessions == [
        Session(
            key="claude_code:s1",
            agent="claude_code",
            id="s1",
            cwd="/home/me/repo",
            title="fix the flaky retry test",
            started_at=first,
            ended_at=second,
            message_count=2,
            prompt_only=True,
            messages=[
                Message(
                    id="history-0",
                    role="user",
                    timestamp=first,
                    parts=[TextPart(text="fix the flaky retry test")],
                ),
                Message(
                    id=f"history-{starts[3]}",
                    role="user",
                    timestamp=second,
                    parts=[TextPart(text="and this one [Pasted text #1 +2 lines]"), TextPart(text="a\nb")],
                ),
            ],
        ),
        Session(
            key="claude_code:s2",
            agent="claude_code",
            id="s2",
            cwd="/path/to/Demo",
            title="/init",
            started_at=third,
            ended_at=third,
            message_count=1,
            prompt_only=True,
            messages=[
                Message(
                    id=f"history-{starts[5]}", role="user", timestamp=third, parts=[TextPart(text="/init")]
                )
            ],
        ),
    ]
    later, _ = parse_history(data[starts[3] :], starts[3])  # read from a line start: the same ids
    assert [[m.id for m in s.messages] for s in later] == [[f"history-{starts[3]}"], [f"history-{starts[5]}"]]
    assert diagnostics == Diagnostics(
        records_total=6,
        records_used=3,
        skipped={"no_session_id": 1, "invalid_json": 1, "no_prompt": 1},
        incomplete_tail_bytes=len('{"display": "half a line'),
    )


def make_home(tmp_path: Path, lines: list[str]) -> tuple[Path, Path]:
    home = tmp_path / "home"
    project = home / ".claude/projects/-path-to-Demo"
    project.mkdir(parents=True)
    shutil.copy(FIXTURES / "claude_code/v1.0.98-session.jsonl", project / f"{TRANSCRIPT}.jsonl")
    (home / ".claude/history.jsonl").write_text("".join(line + "\n" for line in lines))
    return home, project


def cli(home: Path, *args: str) -> object:
    env = {
        "HOME": str(home),
        "AGENTLOG_INDEX": str(home.parent / "index.sqlite"),
        "CLAUDE_CONFIG_DIR": None,
        "XDG_CONFIG_HOME": None,
    }
    result = CliRunner().invoke(main, [*args, "--json"], env=env)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def hits(home: Path, words: str) -> list[dict]:
    """``search WORDS``: its hits."""
    found = cli(home, "search", words)
    assert isinstance(found, dict)
    return list(found["hits"])


def rows(home: Path) -> dict[str, tuple[bool, bool, int, str | None]]:
    """``sessions``: key → (prompt_only, archived, messages, title)."""
    listed = cli(home, "sessions")
    assert isinstance(listed, list)
    return {r["key"]: (r["prompt_only"], r["archived"], r["messages"], r["title"]) for r in listed}


HISTORY = [
    record(TRANSCRIPT, "Please analyze this codebase", 1_756_860_439_000),  # its transcript is here
    record("gone-1", "rename the weather module", 1_754_000_000_000),
    record("gone-1", "now run the zebra tests", 1_754_000_060_000),
]


def test_a_session_whose_transcript_is_gone_is_listed_with_its_prompts_only(tmp_path):
    home, _ = make_home(tmp_path, HISTORY)
    assert rows(home) == {
        f"claude_code:{TRANSCRIPT}": (False, False, 8, "/init"),
        "claude_code:gone-1": (True, False, 2, "rename the weather module"),
    }
    assert [(h["session_key"], h["role"]) for h in hits(home, "zebra")] == [("claude_code:gone-1", "user")]
    # the transcript's prompt, not also the history's copy
    assert {h["session_key"] for h in hits(home, "analyze")} == {f"claude_code:{TRANSCRIPT}"}
    shown = cli(home, "show", "gone-1")
    assert isinstance(shown, dict)
    assert (shown["prompt_only"], shown["cwd"], shown["resume_command"]) == (True, "/path/to/Demo", None)
    assert [m["parts"][0]["text"] for m in shown["messages"]] == [
        "rename the weather module",
        "now run the zebra tests",
    ]
    usage = cli(home, "usage", "session")
    assert isinstance(usage, dict) and [r["key"] for r in usage["rows"]] == [f"claude_code:{TRANSCRIPT}"]
    again = cli(home, "index")
    assert isinstance(again, dict) and again["unchanged"] == again["sources"] == 2


def test_new_prompts_are_added_and_a_transcript_that_appears_takes_over(tmp_path):
    home, project = make_home(tmp_path, HISTORY)
    cli(home, "index")
    with open(home / ".claude/history.jsonl", "a") as fh:
        fh.write(record("gone-1", "one more", 1_754_000_120_000) + "\n")
    assert rows(home)["claude_code:gone-1"] == (True, False, 3, "rename the weather module")
    transcript = (FIXTURES / "claude_code/usage-costUSD-minimal.jsonl").read_text()
    (project / "gone-1.jsonl").write_text(transcript.replace('"session-alpha"', '"gone-1"'))  # its records name it
    assert rows(home) == {
        f"claude_code:{TRANSCRIPT}": (False, False, 8, "/init"),
        "claude_code:gone-1": (False, False, 3, None),  # the transcript's three calls, no prompt added
    }
    assert hits(home, "zebra") == []


def test_a_pruned_transcript_comes_back_as_its_prompts(tmp_path):
    home, project = make_home(tmp_path, HISTORY)
    cli(home, "index")
    (project / f"{TRANSCRIPT}.jsonl").unlink()
    assert rows(home)[f"claude_code:{TRANSCRIPT}"] == (False, True, 8, "/init")  # archived: all of it kept
    pruned = cli(home, "prune")
    assert isinstance(pruned, dict) and [s["sessions"] for s in pruned["sources"]] == [
        [f"claude_code:{TRANSCRIPT}"]
    ]
    assert rows(home)[f"claude_code:{TRANSCRIPT}"] == (True, False, 1, "Please analyze this codebase")


def test_a_history_file_that_disappears_keeps_its_sessions_archived(tmp_path):
    home, _ = make_home(tmp_path, HISTORY)
    cli(home, "index")
    (home / ".claude/history.jsonl").unlink()
    synced = cli(home, "index")
    assert isinstance(synced, dict) and synced["archived"] == 1
    assert rows(home)["claude_code:gone-1"] == (True, True, 2, "rename the weather module")


def test_the_viewer_marks_archived_and_prompt_only_sessions(tmp_path):
    from agentlog.web.app import create_app

    home, project = make_home(tmp_path, HISTORY)
    cli(home, "index")
    (project / f"{TRANSCRIPT}.jsonl").unlink()
    cli(home, "index")
    client = create_app(home.parent / "index.sqlite").test_client()
    listing = client.get("/").get_data(as_text=True)
    assert (
        listing.count(
            '<span class="badge" title="its log is gone: kept by the index until agentlog prune">archived</span>'
        )
        == 1
    )
    assert listing.count(">prompts only</span>") == 1
    archived = client.get(f"/session?key=claude_code:{TRANSCRIPT}").get_data(as_text=True)
    assert (
        "archived: its log is gone (or cannot be read); kept by the index until <code>agentlog prune</code>"
        in archived
    )
    prompts = client.get("/session?key=claude_code:gone-1").get_data(as_text=True)
    assert (
        "prompts only: the transcript is gone; these are your prompts from the agent's prompt history"
        in prompts
    )
    assert "now run the zebra tests" in prompts


def test_an_appended_history_costs_its_new_lines_and_equals_a_fresh_read(tmp_path):
    home, _ = make_home(tmp_path, HISTORY)
    cli(home, "index")
    history = home / ".claude/history.jsonl"
    new = [
        record("gone-1", "third prompt", 1_754_000_120_000),
        record("gone-2", "a new session whose transcript is gone", 1_754_100_000_000),
        record(TRANSCRIPT, "another prompt of the transcript", 1_756_860_500_000),
    ]
    with open(history, "a") as fh:
        fh.write("".join(line + "\n" for line in new))
        fh.write('{"display": "half')  # written as the prompt is sent: read once complete
    synced = cli(home, "index")
    assert isinstance(synced, dict)
    assert (synced["appended"], synced["reparsed"], synced["bytes_parsed"]) == (
        1,
        0,
        sum(len(n) + 1 for n in new),
    )
    grown = rows(home)
    assert grown == {
        f"claude_code:{TRANSCRIPT}": (False, False, 8, "/init"),
        "claude_code:gone-1": (True, False, 3, "rename the weather module"),
        "claude_code:gone-2": (True, False, 1, "a new session whose transcript is gone"),
    }
    shown = cli(home, "show", "gone-1")
    assert isinstance(shown, dict)
    fresh_home = tmp_path / "fresh"
    shutil.copytree(home, fresh_home / "home")
    assert rows(fresh_home / "home") == grown
    fresh = cli(fresh_home / "home", "show", "gone-1")
    assert isinstance(fresh, dict) and fresh.pop("sources") == [
        str(fresh_home / "home/.claude/history.jsonl")
    ]
    assert shown.pop("sources") == [str(history)]
    assert fresh == shown  # the same message ids whether read whole or appended
    history.write_text(HISTORY[0] + "\n")  # rewritten shorter: read whole again
    synced = cli(home, "index")
    assert isinstance(synced, dict) and synced["reparsed"] == 1
    assert rows(home) == {f"claude_code:{TRANSCRIPT}": (False, False, 8, "/init")}


def test_reading_the_history_leaves_the_claude_folder_untouched(tmp_path):
    import hashlib
    import os

    home, project = make_home(tmp_path, HISTORY)

    def tree() -> dict[str, tuple[str, int, int]]:
        return {
            str(p): (hashlib.sha1(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns, p.stat().st_mode)
            for p in sorted((home / ".claude").rglob("*"))
            if p.is_file()
        }

    before = tree()
    cli(home, "index")
    cli(home, "index", "--full")
    (project / f"{TRANSCRIPT}.jsonl").unlink()
    del before[str(project / f"{TRANSCRIPT}.jsonl")]
    cli(home, "prune")
    cli(home, "index")
    assert tree() == before
    assert sorted(os.listdir(home / ".claude")) == ["history.jsonl", "projects"]
