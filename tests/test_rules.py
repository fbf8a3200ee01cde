"""One rule set (issue 11 part 1): every path — the in-memory loader, the index,
the Claude fast usage scanner, ``usage --json`` with and without the index —
derives the same facts from the same logs.

Each case is a home laid out as Claude Code lays it out; the assertions compare
whole results across paths, plus the exact expected values.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgspec
import pytest

from agentlog.adapters import all_adapters, get_adapter
from agentlog.index import queries
from agentlog.index.archive import prune
from agentlog.index.db import connect
from agentlog.index.sync import sync
from agentlog.index.usage import members, usage_records
from agentlog.load import discover_sources, load_sessions
from agentlog.rules import TITLE_CHARS, bounded_title, prompt_as_title
from agentlog.usage import Call, calls_from_sessions
from agentlog.usage.scan import scan_calls
from conftest import FIXTURES, SHARED
from homes import LAYOUTS
from test_cli import run

ADAPTERS = all_adapters()


def line(
    mid: str, role: str, cwd: str | None = None, usage: dict | None = None, when: str = "10:00:00", **extra
) -> dict:
    """One Claude Code user or assistant line of message ``mid``, written at ``when`` on 2 November 2026."""
    message: dict = {"role": role, "content": [{"type": "text", "text": f"text of {mid}"}]}
    if role == "assistant":
        message |= {"id": mid, "model": "claude-sonnet-4-20250514", "usage": usage or {"input_tokens": 1}}
    record = {"type": role, "uuid": f"u-{mid}", "timestamp": f"2026-11-02T{when}Z", "message": message}
    if cwd is not None:
        record["cwd"] = cwd
    return record | extra


def write_log(path: Path, *records: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def claude_project(home: Path, folder: str = "-p") -> Path:
    return home / ".claude" / "projects" / folder


def _summary(calls: list[Call]) -> list[tuple]:
    """Calls summed per session, project and model: what every path must agree on."""
    out: dict[tuple, list[int]] = {}
    for c in calls:
        u = c.usage
        row = out.setdefault((c.session_key, c.root_key, c.parent_key, c.project, c.model), [0] * 7)
        for i, v in enumerate(
            (c.calls, u.input_tokens, u.cache_read_tokens, u.cache_write_5m_tokens,
             u.cache_write_1h_tokens, u.output_tokens, u.web_search_requests)
        ):  # fmt: skip
            row[i] += v
    return sorted((*k, *v) for k, v in out.items())


def every_path(home: Path, tmp_path: Path) -> list[tuple]:
    """The calls of ``home`` by the in-memory loader, the fast scanner and the
    index (asserted equal); returns their summary."""
    env = {"HOME": str(home)}
    memory = _summary(list(calls_from_sessions(load_sessions(env=env, home=home))))
    refs = [ref for _, ref in discover_sources([get_adapter("claude_code")], env, home)]
    scanned = _summary(scan_calls(refs))
    conn = connect(tmp_path / "index.sqlite")
    sync(conn, ADAPTERS, env, home)
    records = usage_records(conn)
    indexed = _summary(records)
    singles = _summary([c for r in records for c in members(conn, r)])
    conn.close()
    assert memory == scanned
    assert memory == indexed
    assert memory == singles
    return memory


def cli_usage_both_ways(home: Path, tmp_path: Path, report: str = "session") -> dict:
    """``usage <report> --json`` through the index and with ``--no-index`` (asserted equal)."""
    env = {"HOME": str(home), "AGENTLOG_INDEX": str(tmp_path / "cli.sqlite")}
    outputs = []
    for extra in ((), ("--no-index",)):
        code, out, err = run("usage", report, "--json", "-z", "UTC", *extra, env=env)
        assert code == 0, err
        outputs.append(json.loads(out))
    assert outputs[0] == outputs[1]
    return outputs[0]


# -- a session's cwd ---------------------------------------------------------------


def test_a_session_whose_lines_record_different_cwds_is_in_its_first_cwd_on_every_path(tmp_path):
    """Claude Code stamps every line with the process's cwd at that moment and
    files the session under the folder it started in (``projects/<encoded cwd>``):
    the first recorded cwd is the session's project, whichever line type holds it."""
    home = tmp_path / "home"
    write_log(
        claude_project(home) / "s1.jsonl",
        {"type": "summary", "summary": "a title", "leafUuid": "u-m2"},
        line("m1", "user", cwd="/a"),
        line("m2", "assistant", cwd="/b", usage={"input_tokens": 10, "output_tokens": 5}),
        line("m3", "assistant", cwd="/c", usage={"input_tokens": 7}),
    )
    assert every_path(home, tmp_path) == [
        ("claude_code:s1", "claude_code:s1", None, "/a", "claude-sonnet-4-20250514", 2, 17, 0, 0, 0, 5, 0)
    ]
    data = cli_usage_both_ways(home, tmp_path)
    assert [r["project"] for r in data["rows"]] == ["/a"]
    env = {"HOME": str(home)}
    assert [s.cwd for s in load_sessions(env=env, home=home)] == ["/a"]


# -- token counts out of range -------------------------------------------------------


def test_token_counts_out_of_range_count_as_zero_on_every_path_and_doctor_reports_them(tmp_path):
    """Negative counts and counts from 10^12 on (as int, as float, beyond 2**64;
    2**53 − 1, the largest exact JSON integer, too: it priced one call at $27
    billion, tester14 finding 15) are one rule: 0, and one ``tokens_out_of_range``
    per value for ``doctor``."""
    home = tmp_path / "home"
    bad = {"input_tokens": -5, "cache_read_input_tokens": 2**70, "cache_creation_input_tokens": 1e20}
    write_log(
        claude_project(home) / "s1.jsonl",
        line("m1", "user", cwd="/a"),
        line("m2", "assistant", usage={**bad, "output_tokens": 9}),
        line("m3", "assistant", usage={"input_tokens": 2**53 - 1, "output_tokens": 10**12 - 1}),
        line("m4", "assistant", usage={"input_tokens": 3, "output_tokens": 4}),
    )
    assert every_path(home, tmp_path) == [
        (
            "claude_code:s1",
            "claude_code:s1",
            None,
            "/a",
            "claude-sonnet-4-20250514",
            3,
            3,
            0,
            0,
            0,
            10**12 - 1 + 13,
            0,
        )
    ]
    data = cli_usage_both_ways(home, tmp_path)
    assert data["totals"]["input_tokens"] == 3
    assert data["totals"]["output_tokens"] == 10**12 - 1 + 13
    env = {"HOME": str(home), "AGENTLOG_INDEX": str(tmp_path / "cli.sqlite")}
    code, out, err = run("doctor", "--json", env=env)
    assert code == 0, err
    (claude,) = [a for a in json.loads(out)["agents"] if a["agent"] == "claude_code"]
    assert claude["invalid_values"] == {"tokens_out_of_range": 4}
    code, out, _ = run("doctor", env=env)
    assert "zeroed        4  tokens_out_of_range" in out
    (session,) = load_sessions(env={"HOME": str(home)}, home=home)
    assert session.diagnostics.invalid_values == {"tokens_out_of_range": 4}


def test_an_index_holding_a_count_now_out_of_range_reads_its_source_again(tmp_path):
    """Counts up to 2**53 were believed; an index built then holds them until
    the source changes: the upgrade to the 10^12 bound has the next sync read
    every source holding one again (schema migration ``bounded``)."""
    from agentlog.index.schema import MIGRATIONS

    home = tmp_path / "home"
    write_log(
        claude_project(home) / "s1.jsonl",
        line("m1", "user", cwd="/a"),
        line("m2", "assistant", usage={"input_tokens": 2**53 - 1, "output_tokens": 9}),
    )
    path = tmp_path / "index.sqlite"
    conn = connect(path)
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    with conn:  # as the last release stored it, before the migration
        conn.execute("UPDATE usage SET input_tokens = ?", (2**53 - 1,))
        bounded = next(n for n, m in enumerate(MIGRATIONS) if ">= 1000000000000" in m)
        conn.execute(f"PRAGMA user_version = {bounded}")
    conn.close()
    conn = connect(path)
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    assert conn.execute("SELECT input_tokens, output_tokens FROM usage").fetchall() == [(0, 9)]
    # an archived source (its file gone) is never read again: the migration zeroes the count itself
    (claude_project(home) / "s1.jsonl").unlink()
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    assert conn.execute("SELECT archived_at IS NOT NULL FROM sources").fetchall() == [(1,)]
    with conn:
        conn.execute("UPDATE usage SET input_tokens = ?", (2**53 - 1,))
        conn.execute("DELETE FROM usage_rollup_state")  # its roll-ups as they were built then
        usage_records(conn)
        conn.execute(f"PRAGMA user_version = {bounded}")
    conn.close()
    conn = connect(path)
    assert conn.execute("SELECT input_tokens, output_tokens FROM usage").fetchall() == [(0, 9)]
    assert [(c.usage.input_tokens, c.usage.output_tokens) for c in usage_records(conn)] == [(0, 9)]
    conn.close()


# -- an append after a last line written without a newline ------------------------------


def _stored(conn) -> list[bytes]:
    return sorted(
        msgspec.json.encode(queries.get_session(conn, s.key))
        for s in queries.list_sessions(conn, include_empty=True)
    )


def test_an_append_after_a_last_line_without_newline_equals_a_fresh_index(tmp_path):
    """The complete last line was read; the append glued its first line to it,
    so both are one invalid line now, as a fresh read sees it."""
    home = tmp_path / "home"
    log = claude_project(home) / "s1.jsonl"
    first = json.dumps(line("m1", "user", cwd="/a")) + "\n"
    second = json.dumps(line("m2", "assistant", usage={"input_tokens": 10}))
    log.parent.mkdir(parents=True)
    log.write_text(first + second)
    env = {"HOME": str(home)}
    conn = connect(tmp_path / "incremental.sqlite")
    sync(conn, ADAPTERS, env, home)
    assert [m.id for m in queries.get_session(conn, "claude_code:s1").messages] == ["u-m1", "m2"]
    with log.open("a") as fh:
        fh.write(json.dumps(line("m3", "assistant", usage={"input_tokens": 7})) + "\n")
        fh.write(json.dumps(line("m4", "assistant", usage={"input_tokens": 5})) + "\n")
    sync(conn, ADAPTERS, env, home)
    fresh = connect(tmp_path / "fresh.sqlite")
    sync(fresh, ADAPTERS, env, home)
    assert _stored(conn) == _stored(fresh)
    (session,) = load_sessions(env=env, home=home)
    assert [m.id for m in session.messages] == ["u-m1", "m4"]
    assert session.diagnostics.skipped == {"invalid_json": 1}
    assert every_path(home, tmp_path) == [
        ("claude_code:s1", "claude_code:s1", None, "/a", "claude-sonnet-4-20250514", 1, 5, 0, 0, 0, 0, 0)
    ]


# -- two sources, one session key ----------------------------------------------------------


def test_two_sessions_whose_files_share_a_name_are_both_kept_and_a_copy_is_not(tmp_path):
    """Duplicates are judged by content: ``p1/nested/chat.jsonl`` and
    ``p2/nested/chat.jsonl`` hold different sessions (no message in common) and
    both count; ``p3/nested/chat.jsonl``, a copy of the first, counts once."""
    home = tmp_path / "home"
    projects = home / ".claude" / "projects"
    one = write_log(
        projects / "p1" / "nested" / "chat.jsonl",
        line("a1", "user", cwd="/one"),
        line("a2", "assistant", usage={"input_tokens": 10, "output_tokens": 1}),
    )
    write_log(
        projects / "p2" / "nested" / "chat.jsonl",
        line("b1", "user", cwd="/two", when="11:00:00"),
        line("b2", "assistant", usage={"input_tokens": 20, "output_tokens": 2}, when="11:00:01"),
    )
    (projects / "p3" / "nested").mkdir(parents=True)
    (projects / "p3" / "nested" / "chat.jsonl").write_bytes(one.read_bytes())
    summary = every_path(home, tmp_path)
    assert [row[3:] for row in summary] == [
        ("/one", "claude-sonnet-4-20250514", 1, 10, 0, 0, 0, 1, 0),
        ("/two", "claude-sonnet-4-20250514", 1, 20, 0, 0, 0, 2, 0),
    ]
    keys = sorted(row[0] for row in summary)
    assert keys[0] == "claude_code:chat" and keys[1].startswith("claude_code:chat~")
    data = cli_usage_both_ways(home, tmp_path, "daily")
    assert (data["totals"]["input_tokens"], data["totals"]["output_tokens"]) == (30, 3)
    env = {"HOME": str(home)}
    sessions = load_sessions(env=env, home=home)
    assert sorted((s.cwd, s.message_count) for s in sessions) == [("/one", 2), ("/two", 2)]


# -- title precedence ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("titles", "expected"),
    [
        ([], "text of m1"),
        ([("summary", "summary", "S1"), ("summary", "summary", "S2")], "S2"),
        ([("ai-title", "aiTitle", "A"), ("summary", "summary", "S")], "A"),
        (
            [
                ("custom-title", "customTitle", "C1"),
                ("ai-title", "aiTitle", "A"),
                ("custom-title", "customTitle", "C2"),
            ],
            "C2",
        ),
    ],
)
def test_title_precedence_is_the_same_in_memory_and_in_the_index(tmp_path, titles, expected):
    """custom-title > ai-title > summary > the first real prompt; a later title of
    the same rank replaces an earlier one, a later prompt never does."""
    home = tmp_path / "home"
    records = [line("m1", "user", cwd="/a"), line("m2", "assistant"), line("m3", "user")]
    records += [{"type": kind, field: text} for kind, field, text in titles]
    write_log(claude_project(home) / "s1.jsonl", *records)
    env = {"HOME": str(home)}
    (session,) = load_sessions(env=env, home=home)
    conn = connect(tmp_path / "index.sqlite")
    sync(conn, ADAPTERS, env, home)
    assert [s.title for s in queries.list_sessions(conn, include_empty=True)] == [session.title] == [expected]


# -- replayed copies -------------------------------------------------------------------------


def test_a_replayed_copy_that_grows_and_then_owns_its_call_equals_a_fresh_index(tmp_path):
    """A resumed file replays the original's call ``m2``; more of that response is
    appended to it, then the original is deleted: the copy left counts the call,
    in full, as a fresh index and the loader count it."""
    home = tmp_path / "home"
    project = claude_project(home)
    original = write_log(
        project / "a.jsonl",
        line("m1", "user", cwd="/a", when="09:00:00"),
        line("m2", "assistant", usage={"input_tokens": 10, "output_tokens": 1}, when="09:00:01"),
    )
    resumed = write_log(
        project / "b.jsonl",
        line("m1", "user", cwd="/a", when="09:00:00"),
        line("m2", "assistant", usage={"input_tokens": 10, "output_tokens": 1}, when="09:00:01"),
        line("m3", "assistant", usage={"input_tokens": 4}, when="09:30:00"),
    )
    env = {"HOME": str(home)}
    conn = connect(tmp_path / "incremental.sqlite")
    sync(conn, ADAPTERS, env, home)
    with resumed.open("a") as fh:
        fh.write(
            json.dumps(
                line("m2", "assistant", usage={"input_tokens": 10, "output_tokens": 8}, when="09:00:01")
            )
            + "\n"
        )
    sync(conn, ADAPTERS, env, home)
    original.unlink()
    sync(conn, ADAPTERS, env, home)
    # kept, archived, until pruned (logs are evidence): then the copy left owns the call
    assert [s.key for s in queries.list_sessions(conn) if s.archived] == ["claude_code:a"]
    prune(conn)
    fresh = connect(tmp_path / "fresh.sqlite")
    sync(fresh, ADAPTERS, env, home)
    assert _stored(conn) == _stored(fresh)
    assert every_path(home, tmp_path) == [
        ("claude_code:b", "claude_code:b", None, "/a", "claude-sonnet-4-20250514", 2, 14, 0, 0, 0, 8, 0)
    ]
    (session,) = queries.list_sessions(conn)
    assert (session.key, session.message_count, session.usage.output_tokens) == ("claude_code:b", 3, 8)


# -- every Claude fixture, laid out as Claude Code lays it out -----------------------------


def test_every_claude_fixture_gives_the_same_calls_and_report_on_every_path(tmp_path):
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "claude_code", claude_project(home, "-fixtures"))
    shared = claude_project(home, "-shared")
    shared.mkdir()
    for src in sorted((SHARED / "claude-code").glob("*.jsonl")):
        shutil.copy(src, shared / src.name)
    summary = every_path(home, tmp_path)
    assert len(summary) >= 10
    assert sum(row[5] for row in summary) >= 60  # calls
    for report in ("daily", "session", "model"):
        cli_usage_both_ways(home, tmp_path, report)


# -- subagent links ------------------------------------------------------------------------------


def test_a_subagent_link_follows_its_parent_when_only_the_parent_changes(tmp_path):
    """A Claude Code 2.0 subagent file (``agent-<id>.jsonl``) is linked to the
    parent's Task call whose prompt is its first prompt; when the parent's file
    loses that call, or goes away, the link goes too — in the index as in memory —
    though the child's file did not change."""
    home = tmp_path / "home"
    project = claude_project(home)
    task = {"type": "tool_use", "id": "toolu_1", "name": "Task", "input": {"prompt": "count the files"}}
    spawning = line("m2", "assistant", sessionId="s1")
    spawning["message"]["content"] = [task]
    parent = write_log(project / "s1.jsonl", line("m1", "user", cwd="/a", sessionId="s1"), spawning)
    child_first = line("c1", "user", cwd="/a", sessionId="s1", isSidechain=True)
    child_first["message"]["content"] = "count the files"
    write_log(
        project / "agent-x1.jsonl", child_first, line("c2", "assistant", sessionId="s1", isSidechain=True)
    )
    env = {"HOME": str(home)}
    conn = connect(tmp_path / "index.sqlite")

    def links() -> list[tuple[str, str | None, str | None]]:
        sync(conn, ADAPTERS, env, home)
        memory = sorted(
            (s.key, s.parent_key, s.parent_tool_call_id) for s in load_sessions(env=env, home=home)
        )
        stored = sorted(
            (s.key, s.parent_key, s.parent_tool_call_id)
            for s in queries.list_sessions(conn, include_empty=True)
        )
        assert stored == memory
        return memory

    assert links() == [
        ("claude_code:agent-x1", "claude_code:s1", "toolu_1"),
        ("claude_code:s1", None, None),
    ]
    write_log(parent, line("m1", "user", cwd="/a", sessionId="s1"), line("m2", "assistant", sessionId="s1"))
    assert links() == [("claude_code:agent-x1", "claude_code:s1", None), ("claude_code:s1", None, None)]
    write_log(parent, line("m1", "user", cwd="/a", sessionId="s1"), spawning)
    assert links()[0] == ("claude_code:agent-x1", "claude_code:s1", "toolu_1")
    parent.unlink()
    sync(conn, ADAPTERS, env, home)  # kept, archived, until pruned (logs are evidence)
    assert [s.key for s in queries.list_sessions(conn, include_empty=True) if s.archived] == [
        "claude_code:s1"
    ]
    prune(conn)
    assert links() == [("claude_code:agent-x1", "claude_code:s1", None)]


def test_an_append_to_a_message_whose_id_another_role_holds_merges_as_one_pass_does(tmp_path):
    """Damaged logs give a user and an assistant message one id; the assistant's
    is kept as ``<id>#assistant`` and a later copy of it, appended, merges into it."""
    home = tmp_path / "home"
    log = claude_project(home) / "s1.jsonl"
    user = line("x", "user", cwd="/a") | {"uuid": "x"}
    write_log(log, user, line("x", "assistant", usage={"input_tokens": 3, "output_tokens": 1}))
    env = {"HOME": str(home)}
    conn = connect(tmp_path / "incremental.sqlite")
    sync(conn, ADAPTERS, env, home)
    more = line("x", "assistant", usage={"input_tokens": 3, "output_tokens": 6})
    more["message"]["content"] = [{"type": "text", "text": "second block"}]
    with log.open("a") as fh:
        fh.write(json.dumps(more) + "\n")
    sync(conn, ADAPTERS, env, home)
    fresh = connect(tmp_path / "fresh.sqlite")
    sync(fresh, ADAPTERS, env, home)
    assert _stored(conn) == _stored(fresh)
    message = queries.get_session(conn, "claude_code:s1").messages[1]
    assert (message.id, message.text, message.usage.output_tokens) == (
        "x#assistant",
        "text of x\n\nsecond block",
        6,
    )


REPORTS = ["daily", "session", "model", "project", "agent", "blocks"]


def _both_paths(home: Path, index: Path, report: str) -> list[dict]:
    env = {"HOME": str(home), "AGENTLOG_INDEX": str(index)}
    outputs = []
    for extra in ((), ("--no-index",)):
        code, out, err = run("usage", report, "--json", "-z", "UTC", *extra, env=env)
        assert code == 0, err
        outputs.append(json.loads(out))
    return outputs


@pytest.mark.parametrize("report", REPORTS)
def test_usage_json_through_the_index_equals_no_index_on_the_claude_and_codex_fixtures(tmp_path, report):
    """Every row and total, costs included: the index prices 15-minute roll-up
    records, ``--no-index`` single calls, and costs are whole pico-dollars, so the
    grouping cannot move a printed number.  ``codex:019ca9f0…`` is the case that
    used to differ ($0.027798 through the index, $0.027797 without: float sums)."""
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "claude_code", home / ".claude/projects/-tmp-project")
    shutil.copytree(FIXTURES / "codex", home / ".codex/sessions/2025/11/25")
    indexed, scanned = _both_paths(home, tmp_path / "cli.sqlite", report)
    assert indexed == scanned
    rows = indexed.get("rows", indexed.get("blocks"))
    assert sum(r["total_tokens"] for r in rows) > 500_000 and any(r["cost_usd"] for r in rows)
    if report == "session":
        codex = [r["cost_usd"] for r in indexed["rows"] if r["key"].startswith("codex:019ca9f0")]
        assert codex == [0.027798]


@pytest.mark.parametrize("report", REPORTS)
def test_usage_json_through_the_index_equals_no_index_on_every_fixture_home(tmp_path, report):
    """Every agent's fixtures laid out in one home (``tests/homes.py``): the same
    rows and totals, costs included, through the index and with ``--no-index``."""
    home = tmp_path / "home"
    for layout in LAYOUTS.values():
        layout(home)
    indexed, scanned = _both_paths(home, tmp_path / "cli.sqlite", report)
    assert indexed == scanned and indexed.get("rows", indexed.get("blocks"))
    agents = {r["key"] for r in _both_paths(home, tmp_path / "cli.sqlite", "agent")[0]["rows"]}
    assert len(agents) >= 10


def test_usage_without_the_index_finds_project_sources_in_the_scanned_claude_folders(tmp_path):
    """Aider writes its history in the project; only a Claude session names that
    folder.  ``--no-index`` (Claude scanned, not parsed) looks there too, as a sync does."""
    home = tmp_path / "home"
    project = tmp_path / "work" / "proj"
    project.mkdir(parents=True)
    shutil.copy(
        FIXTURES / "aider" / "written-new-format.aider.chat.history.md", project / ".aider.chat.history.md"
    )
    write_log(
        claude_project(home) / "s1.jsonl", line("m1", "user", cwd=str(project)), line("m2", "assistant")
    )
    data = cli_usage_both_ways(home, tmp_path, "daily")
    env = {"HOME": str(home)}
    sessions = load_sessions(env=env, home=home)
    assert sorted({s.agent for s in sessions}) == ["aider", "claude_code"]
    aider = sum(c.usage.total_tokens for c in calls_from_sessions(sessions) if c.agent == "aider")
    assert aider > 0 and data["totals"]["total_tokens"] == aider + 1


def test_one_tuple_names_the_usage_counts_every_path_goes_over():
    """``USAGE_COUNTS`` is every recorded count of ``Usage`` (all but the derived
    total and the cost facts), and drives the range rule and the index's rows."""
    from agentlog.index.store import _usage_row
    from agentlog.index.usage import USAGE_COLUMNS
    from agentlog.model import USAGE_COUNTS, Usage
    from agentlog.rules import MAX_TOKENS, bounded_usage

    tokens = ("input_tokens", "cache_read_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens", "output_tokens")
    assert (*tokens, "reasoning_tokens", "web_search_requests") == USAGE_COUNTS
    counts = dict(zip(USAGE_COUNTS, (1, 2, 3, 4, 5, 6, 7), strict=True))
    usage = Usage(**counts, cost_usd=0.5, cost_source="recorded", service_tier="flex")
    assert _usage_row(usage) == (1, 2, 3, 4, 5, 6, 7, 0.5, "recorded", "flex")
    assert USAGE_COLUMNS.split(", ")[:7] == [f"u.{name}" for name in USAGE_COUNTS]
    assert bounded_usage(usage) == (usage, 0)
    for name in USAGE_COUNTS:  # each count out of range, alone: zeroed and counted
        for bad in (-1, MAX_TOKENS):
            fixed, n = bounded_usage(Usage(**{**counts, name: bad}, cost_usd=0.5, service_tier="flex"))
            assert (n, getattr(fixed, name), fixed.cost_usd, fixed.service_tier) == (1, 0, 0.5, "flex"), name
            assert fixed.total_tokens == sum(counts[k] for k in tokens if k != name)


def test_a_title_up_to_the_bound_is_kept_as_it_is():
    assert bounded_title(None) is None
    assert bounded_title("  fix the tests \n") == "  fix the tests \n"
    exact = "a" * TITLE_CHARS
    assert bounded_title(exact) is exact


def test_a_longer_title_is_its_head_and_an_ellipsis():
    assert bounded_title("x" * 1_500) == "x" * 999 + "…"
    assert bounded_title("\n  " + "word " * 300) == "word " * 199 + "word…"  # trailing space of the cut dropped
    assert bounded_title("  " + "a" * 998 + " " * 50) == "a" * 998  # longer only by white space: nothing cut
    for title in ("x" * 1_500, "word " * 300, "é" * 5_000):
        once = bounded_title(title)
        assert len(once) == TITLE_CHARS and bounded_title(once) == once


def test_a_prompt_as_a_title_is_stripped_then_bounded():
    assert prompt_as_title("  fix the tests \n") == "fix the tests"
    assert prompt_as_title(" \n ") == ""
    for text in ("\n" + "word " * 3_000, " " * 900 + "short" + " " * 900, "b" * 1_001):
        assert prompt_as_title(text) == bounded_title(text.strip())
    assert prompt_as_title(" " * 900 + "short" + " " * 900) == "short"


def test_as_int_keeps_counts_in_range_and_bounds_or_zeroes_the_rest():
    """The fast path for a plain ``int`` gives what the full tests give: in range
    as it is, at or beyond ±2**53 the bound, bools, non-numbers and NaN 0,
    floats truncated, an ``int`` subclass as a plain ``int``."""
    import math

    from agentlog.adapters._values import BOUND, as_int

    class Count(int):
        pass

    cases = [
        (0, 0), (7, 7), (-7, -7), (BOUND - 1, BOUND - 1), (BOUND, BOUND), (BOUND + 1, BOUND),
        (-BOUND + 1, -BOUND + 1), (-BOUND, -BOUND), (10**30, BOUND), (-(10**30), -BOUND),
        (True, 0), (False, 0), (None, 0), ("3", 0), ([], 0), (math.nan, 0), (math.inf, BOUND),
        (-math.inf, -BOUND), (2.9, 2), (-2.9, -2), (Count(5), 5), (Count(BOUND), BOUND),
    ]  # fmt: skip
    got = [(as_int(value), type(as_int(value))) for value, _ in cases]
    assert got == [(want, int) for _, want in cases]
