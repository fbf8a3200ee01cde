"""Copies of one Claude Code session in two project folders: one answer on every path.

The same session file in ``projects/-tmp-a`` and ``projects/-tmp-b``, one copy
holding more calls (a copy taken before the session went on), copies that went
on apart, and two different sessions whose files share a name.  The index (fresh,
built before a copy appeared, then ``index`` and ``index --full``), ``usage
--no-index`` (the Claude fast scanner), the in-memory model and the scanner's
entry point all give the same exact tokens, calls and cost
(:func:`agentlog.rules.copy_verdict`).  ccusage, which counts each message id +
request id once across files, gives 1,100 input tokens and $0.00333 on the first
home (ccusage 17, ``daily --json --offline``).
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agentlog.rules import copy_verdict
from fuzz import checks
from test_cli import run

SID = "cccccccc-0000-0000-0000-000000000003"
USER = {
    "type": "user",
    "sessionId": SID,
    "uuid": "u1",
    "parentUuid": None,
    "timestamp": "2026-11-01T00:00:00Z",
    "cwd": "/tmp/x",
    "message": {"role": "user", "content": "hi"},
}


def call(n: int, parent: str, input_tokens: int, sid: str = SID) -> dict:
    """Assistant line ``a<n>`` (message ``m<n>``, request ``r<n>``) at second ``n``."""
    return {
        "type": "assistant",
        "sessionId": sid,
        "uuid": f"a{n}",
        "parentUuid": parent,
        "timestamp": f"2026-11-01T00:00:{n:02d}Z",
        "requestId": f"r{n}",
        "message": {
            "id": f"m{n}",
            "model": "claude-sonnet-4-5",
            "role": "assistant",
            "content": [{"type": "text", "text": f"reply {n}"}],
            "usage": {"input_tokens": input_tokens, "output_tokens": 1},
        },
    }


A1, A2, A3 = call(1, "u1", 100), call(2, "a1", 1000), call(3, "a1", 2000)


def write(home: Path, folder: str, lines: list[dict]) -> Path:
    path = home / ".claude" / "projects" / folder / f"{SID}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def totals(env: dict[str, str], *args: str) -> tuple[int, int, float, int]:
    """``(input tokens, calls, cost in USD, sessions)``: ``usage --json`` (with
    ``args``) and the sessions ``sessions --json`` lists (the index), or, with
    ``--no-index``, that the in-memory model holds."""
    code, out, err = run("usage", "--json", "-z", "UTC", *args, env=env)
    assert code == 0, err
    t = json.loads(out)["totals"]
    if "--no-index" in args:
        count = len(checks.load("claude_code", Path(env["HOME"]))[0])
    else:
        code, out, err = run("sessions", "--json", env=env)
        assert code == 0, err
        count = len(json.loads(out))
    return t["input_tokens"], t["calls"], t["cost_usd"], count


def on_every_path(home: Path, tmp_path: Path) -> tuple[int, int, float, int]:
    """:func:`totals` after ``index``, once equal on the index and ``--no-index``, and
    the scanner's entry point ≡ a fresh index ≡ the in-memory model, session by session."""
    env = {"HOME": str(home)}
    index(env)
    got = totals(env)
    assert totals(env, "--no-index") == got
    sessions, _ = checks.load("claude_code", home)
    conn = checks.synced("claude_code", home, tmp_path / f"views-{len(list(tmp_path.glob('views-*')))}.sqlite")
    try:
        in_index = checks.index_calls_view(conn, "claude_code")
    finally:
        conn.close()
    assert checks.scanner_view(home) == in_index == checks.calls_view(sessions)
    return got


def index(env: dict[str, str], *args: str) -> None:
    code, _, err = run("index", *args, env=env)
    assert code == 0, err


# sonnet 4.5: $3 / MTok input, $15 / MTok output
LONGER = (1100, 2, 0.00333, 1)
"""m1 (100 in) and m2 (1000 in), one output token each; one session."""


@pytest.mark.parametrize(("short", "long"), [("-tmp-a", "-tmp-b"), ("-tmp-b", "-tmp-a")])
def test_the_longer_copy_wins_on_every_path_and_history(tmp_path, short, long):
    home = tmp_path / "home"
    write(home, short, [USER, A1])
    write(home, long, [USER, A1, A2])
    assert on_every_path(home, tmp_path) == LONGER
    # an index first built with the longer copy alone (the other one unreadable then,
    # or not there yet), then synced, then rebuilt
    env = {"HOME": str(home), "AGENTLOG_INDEX": str(tmp_path / "later" / "index.sqlite")}
    aside = tmp_path / "aside"
    shutil.move(home / ".claude" / "projects" / short, aside)
    index(env)
    assert totals(env) == LONGER
    shutil.move(aside, home / ".claude" / "projects" / short)
    index(env)
    assert totals(env) == LONGER
    index(env, "--full")
    assert totals(env) == LONGER


def test_the_shorter_copy_growing_past_the_other_takes_over(tmp_path):
    home = tmp_path / "home"
    write(home, "-tmp-a", [USER, A1, A2])
    write(home, "-tmp-b", [USER, A1])
    assert on_every_path(home, tmp_path) == LONGER
    write(home, "-tmp-b", [USER, A1, A2, call(3, "a2", 2000)])
    # m1, m2 and m3: 100 + 1000 + 2000 in, 3 out, in the one session
    assert on_every_path(home, tmp_path) == (3100, 3, 0.009345, 1)
    code, out, _ = run("sessions", "--json", env={"HOME": str(home)})
    assert code == 0
    assert [(s["id"], s["usage"]["input_tokens"]) for s in json.loads(out)] == [(SID, 3100)]


def test_copies_that_went_on_apart_count_every_distinct_call_once(tmp_path):
    home = tmp_path / "home"
    write(home, "-tmp-a", [USER, A1, A2])
    write(home, "-tmp-b", [USER, A1, A3])
    # m1 once, m2 and m3: 100 + 1000 + 2000 in, 3 out; each copy a session of its own
    assert on_every_path(home, tmp_path) == (3100, 3, 0.009345, 2)


def test_a_copy_holding_every_call_but_not_every_prompt_is_kept_apart_on_every_path(tmp_path):
    """Copy b holds both calls but not a's prompt (a damaged or rewritten line):
    the copies went on apart, by their messages, not only their calls, so the
    fast scanner keeps both as the index does (tester finding: it kept b alone,
    the per-session rows of `usage session --no-index` then differed)."""
    home = tmp_path / "home"
    write(home, "-tmp-a", [USER, A1])
    other_prompt = {**USER, "uuid": "u2", "timestamp": "2026-11-01T00:00:00.500Z"}
    write(home, "-tmp-b", [other_prompt, A1, A2])
    assert on_every_path(home, tmp_path) == (1100, 2, 0.00333, 2)


def test_different_sessions_sharing_a_name_are_both_counted(tmp_path):
    home = tmp_path / "home"
    write(home, "-tmp-a", [USER, A1])
    other_user = {**USER, "uuid": "v1", "timestamp": "2026-11-02T00:00:00Z"}
    other = call(9, "v1", 1000)
    other["uuid"], other["message"]["id"], other["timestamp"] = "b9", "n9", "2026-11-02T00:00:09Z"
    write(home, "-tmp-b", [other_user, other])
    assert on_every_path(home, tmp_path) == (1100, 2, 0.00333, 2)


def test_a_renamed_session_takes_its_plain_id_once_the_other_is_pruned(tmp_path):
    """Kept under ``{id}~{crc}`` beside another session of that id, then that one's
    file is deleted and pruned: the index reads it again under its plain id (as a
    fresh index and the in-memory model name it), and a later append is not split
    off into a second session."""
    home = tmp_path / "home"
    first = write(home, "-tmp-a", [USER, A1])
    other_user = {**USER, "uuid": "v1", "timestamp": "2026-11-02T00:00:00Z"}
    other = call(9, "v1", 1000)
    other["uuid"], other["message"]["id"], other["timestamp"] = "b9", "n9", "2026-11-02T00:00:09Z"
    second = write(home, "-tmp-b", [other_user, other])
    assert on_every_path(home, tmp_path) == (1100, 2, 0.00333, 2)
    env = {"HOME": str(home)}
    first.unlink()
    assert run("prune", env=env)[0] == 0
    more = call(10, "b9", 5000)
    more["timestamp"] = "2026-11-02T00:00:10Z"
    with second.open("a") as fh:
        fh.write(json.dumps(more) + "\n")
    # n9 and m10: 1000 + 5000 in, 2 out, in the one session
    assert on_every_path(home, tmp_path) == (6000, 2, 0.01803, 1)
    code, out, _ = run("sessions", "--json", env=env)
    assert code == 0
    assert [(s["id"], s["usage"]["input_tokens"]) for s in json.loads(out)] == [(SID, 6000)]


def test_an_exact_copy_is_one_session(tmp_path):
    home = tmp_path / "home"
    write(home, "-tmp-a", [USER, A1, A2])
    write(home, "-tmp-b", [USER, A1, A2])
    assert on_every_path(home, tmp_path) == LONGER


@pytest.mark.parametrize("order", [("-tmp-a", "-tmp-b"), ("-tmp-b", "-tmp-a")])
def test_the_index_judges_a_copy_on_all_of_its_batches(tmp_path, monkeypatch, order):
    """A source read in several batches is judged on all of them (its shared
    message and its extra call in different batches), then read again to be stored."""
    from agentlog.load import SourceParse

    batches = SourceParse.batches
    monkeypatch.setattr(SourceParse, "batches", lambda self, lines=1: batches(self, lines))
    home = tmp_path / "home"
    first, second = order
    write(home, first, [USER, A1])
    write(home, second, [USER, A1, A2])
    conn = checks.synced("claude_code", home, tmp_path / "index.sqlite")
    try:
        in_index = checks.index_calls_view(conn, "claude_code")
        stored = conn.execute("SELECT key, source_id FROM sessions").fetchall()
        owner = conn.execute("SELECT path FROM sources WHERE duplicate_of IS NULL").fetchall()
    finally:
        conn.close()
    sessions, report = checks.load("claude_code", home)
    assert in_index == checks.calls_view(sessions)
    assert [v[:2] for v in in_index.values()] == [(2, 1100)]
    assert [k for k, _ in stored] == [f"claude_code:{SID}"]
    longer = str(home / ".claude" / "projects" / second / f"{SID}.jsonl")
    assert owner == [(longer,)] and report.duplicates == [longer.replace(second, first)]


T0, T1, T2 = (datetime(2026, 11, 1, 0, 0, n, tzinfo=UTC) for n in range(3))


@pytest.mark.parametrize(
    ("held", "new", "verdict"),
    [
        ([("u1", "user", T0), ("m1", "assistant", T1)], [("u1", "user", T0)], "copy"),
        ([("u1", "user", T0)], [("u1", "user", T0)], "copy"),
        ([], [], "copy"),
        ([("u1", "user", T0)], [("u1", "user", T0), ("m2", "assistant", T2)], "supersedes"),
        ([("u1", "user", T0), ("m1", "assistant", T1)], [("u1", "user", T0), ("m2", "assistant", T2)], "overlaps"),
        ([("u1", "user", T0)], [("v1", "user", T1)], "different"),
        ([("u1", "user", T0)], [], "different"),
        ([], [("u1", "user", T0)], "different"),
        # Goose's import into sessions.db: new ids, the same role at the same instant
        ([("a", "user", T0), ("b", "assistant", T1)], [("x", "user", T0), ("y", "assistant", T1)], "copy"),
        ([("a", "user", T0)], [("x", "user", T0), ("y", "assistant", T1)], "supersedes"),
        ([("a", "user", None)], [("x", "user", None)], "different"),
    ],
)
def test_copy_verdict(held, new, verdict):
    assert copy_verdict(held, new) == verdict
