"""The Python API (:mod:`agentlog.api`): ``agentlog.open`` and its archive, and
the ``agentlog.sessions`` shortcut, against the command line's own answers."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

import agentlog
from agentlog.cli import main
from agentlog.errors import AgentlogError, IndexProblem, NotFound, UsageError
from secret_home import SESSION, secret_home

WEATHER = "claude_code:de70c1a0-7e57-4b1d-9a6e-5e551011f00d"
REVIEW = "claude_code:agent-b7e1d2c3"
CODEX = "codex:019ab0d2-4c1e-7f00-9d2a-5e551011c0de"


def _cli_json(*args: str) -> object:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def archive():
    with agentlog.open(demo=True) as opened:
        yield opened


@pytest.mark.parametrize("report", ["daily", "weekly", "session", "model", "project", "agent"])
def test_usage_is_the_usage_commands_json(archive, report):
    mine = json.loads(msgspec.json.encode(archive.usage(report, timezone="UTC", breakdown=True)))
    assert mine == _cli_json("--demo", "usage", report, "--json", "--timezone", "UTC", "--breakdown")


def test_usage_daily_totals_equal_the_cli_in_the_local_zone(archive):
    cli = _cli_json("--demo", "usage", "daily", "--json")
    assert json.loads(msgspec.json.encode(archive.usage("daily")))["totals"] == cli["totals"]  # type: ignore[index]
    assert archive.usage("daily", agent="codex", since="2026-11-21")["totals"]["total_tokens"] == 35960


def test_calls_is_a_table_of_the_reports_calls(archive):
    calls = archive.calls()
    totals = archive.usage("daily")["totals"]
    assert calls.num_rows > 0
    assert sum(calls.column("calls").to_pylist()) == totals["calls"] == 68
    assert sum(calls.column("total_tokens").to_pylist()) == totals["total_tokens"] == 1212869
    frame = archive.calls(agent="codex").to_pandas()
    assert set(frame["session_key"]) == {CODEX} and int(frame["output_tokens"].sum()) == 660
    assert str(frame["timestamp"].dtype) == "datetime64[us, UTC]"


def test_sessions_table_matches_sessions(archive):
    table = archive.sessions_table()
    rows = archive.sessions()
    assert (
        table.column("key").to_pylist()
        == [s.key for s in rows]
        == [
            s["key"]
            for s in _cli_json("--demo", "sessions", "--json")  # type: ignore[union-attr]
        ]
    )
    assert table.column("cost_usd").to_pylist() == [s.usage.cost_usd for s in rows]
    frame = archive.sessions_table(subagents=True).to_pandas()
    assert REVIEW in set(frame["key"]) and frame.shape[0] == 9


def test_sessions_are_headers_with_cost_and_the_cli_filters(archive):
    found = archive.sessions(agent="CLAUDE", since=date(2026, 11, 1))
    assert [s.key for s in found] == [WEATHER]
    (weather,) = found
    assert weather.messages == [] and weather.message_count == 11
    assert (weather.usage.total_tokens, weather.usage.cost_usd, weather.usage.cost_source) == (
        92349,
        0.129632,
        "estimated",
    )
    assert [s.key for s in archive.sessions(since="2026-11-20", until="2026-11-20", subagents=True)] == [
        REVIEW,
        WEATHER,
    ]
    assert [s.key for s in archive.sessions(since=datetime(2026, 11, 21, tzinfo=UTC))] == [CODEX]
    assert archive.sessions(since=timedelta(days=365 * 50)) == archive.sessions()
    assert len(archive.sessions(limit=2)) == 2
    with pytest.raises(UsageError, match="ambiguous agent 'c'"):
        archive.sessions(agent="c")
    with pytest.raises(UsageError, match="not a time"):
        archive.sessions(since=3)  # type: ignore[arg-type]


def test_session_costs_equal_the_usage_session_report(archive):
    rows = {r["key"]: r for r in archive.usage("session", rollup=False)["rows"]}
    for s in archive.sessions(subagents=True):
        assert s.usage.cost_usd == rows[s.key]["cost_usd"]


def test_session_and_messages_load_on_demand(archive):
    full = archive.session("de70c1a0")
    assert full.key == WEATHER and len(full.messages) == 13 and full.usage.cost_usd == 0.129632
    every = [m.id for m in full.messages]
    assert [m.id for m in archive.messages(WEATHER, hidden=True)] == every
    assert [m.id for m in archive.messages(WEATHER, 2, 3, hidden=True)] == every[2:5]
    shown = archive.messages(WEATHER)  # meta and injected messages left out, as `show` does
    assert len(shown) == 11 and [m.id for m in archive.messages(WEATHER, 9)] == [m.id for m in shown[9:]]
    with pytest.raises(NotFound):
        archive.session("nope")


def test_search_pages_with_a_cursor_like_the_cli(archive):
    cli = _cli_json("--demo", "search", "rounding", "--json")
    first = archive.search("rounding", limit=2)
    rest = archive.search("rounding", limit=2, cursor=first.next_offset or 0)
    assert first.total == cli["total"] == 3  # type: ignore[index]
    assert [h.message_id for h in first.hits + rest.hits] == [h["message_id"] for h in cli["hits"]]  # type: ignore[index]
    assert rest.next_offset is None
    assert [h.session_key for h in archive.search("rounding", by_session=True).hits] == [WEATHER, REVIEW]
    with pytest.raises(UsageError):
        archive.search("rounding", limit=0)


def test_touching_finds_the_sessions_that_edited_a_file(archive):
    (found,) = archive.touching("weather/stats.py")
    assert found.session.key == WEATHER
    assert [(t.tool, t.path) for t in found.touches] == [
        ("edit", "/home/demo/src/weather/weather/stats.py"),
        ("read", "/home/demo/src/weather/weather/stats.py"),
    ]
    assert archive.touching("stats.py", agent="codex") == []


def test_the_sessions_shortcut_fixes_its_old_bugs(tmp_path):
    mains = agentlog.sessions(demo=True)
    assert [s.key for s in mains] == [s.key for s in agentlog.open(demo=True).sessions()]
    assert REVIEW not in {s.key for s in mains}  # subagents apart, as on the command line
    assert REVIEW in {s.key for s in agentlog.sessions(demo=True, subagents=True)}
    weather = next(s for s in mains if s.key == WEATHER)
    assert len(weather.messages) == 13 and weather.usage.cost_usd == 0.129632
    assert [s.key for s in agentlog.sessions(demo=True, since=date(2026, 11, 21))] == [CODEX]
    root = secret_home(tmp_path / "extra") / ".claude" / "projects"
    extra = agentlog.sessions(demo=True, roots=str(root))  # one folder as a string, not its letters
    assert [s.key for s in extra] == [SESSION] + [s.key for s in mains]


def test_open_refuses_a_file_that_is_not_an_index(tmp_path):
    other = tmp_path / "notes.sqlite"
    other.write_bytes(b"not a database at all" * 10)
    with pytest.raises(IndexProblem):
        agentlog.open(other)
    assert other.read_bytes() == b"not a database at all" * 10


def test_open_without_sync_reads_the_index_as_it_is(tmp_path):
    path = tmp_path / "index.sqlite"
    agentlog.open(path, sync=False).close()
    with agentlog.open(path, sync=False) as empty:
        assert empty.sessions() == [] and empty.path == Path(path)


def test_without_pyarrow_the_tables_say_what_to_install(archive, monkeypatch):
    import sys

    for name in [m for m in sys.modules if m == "pyarrow" or m.startswith("pyarrow.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "agentlog.tables", raising=False)
    monkeypatch.delattr(agentlog, "tables", raising=False)
    with pytest.raises(
        AgentlogError, match=r"^Arrow tables need pyarrow: pip install 'agentlog\[parquet\]'$"
    ):
        archive.calls()
    assert [s.key for s in archive.sessions(limit=1)] == [CODEX]  # the rest works without it


def test_exec_runs_are_listed_only_when_asked_as_on_the_command_line(tmp_path, monkeypatch):
    from conftest import fixture

    day = tmp_path / "home" / ".codex/sessions/2026/03/01"
    day.mkdir(parents=True)
    for rel in ("codex/rollout-synthetic-tools.jsonl", "codex/rollout-exec-json-stream.jsonl"):
        shutil.copy(fixture(rel), day)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(main, ["sessions", "--exec", "--json"], env={"HOME": str(tmp_path / "home")})
    cli = [row["key"] for row in json.loads(result.stdout)]
    with agentlog.open() as archive:
        assert archive.sessions() == []
        assert [s.key for s in archive.sessions(exec_runs=True)] == cli and len(cli) == 2
        assert all(s.kind == "exec" for s in archive.sessions(exec_runs=True))


def test_status_is_the_status_commands_board(archive):
    cli = _cli_json("--demo", "status", "--json", "--since", "2026-11-01")
    rows = archive.status(since=date(2026, 11, 1))
    assert msgspec.json.decode(msgspec.json.encode(rows)) == cli
    assert [(r.key, r.status, [c.key for c in r.children]) for r in rows] == [
        (WEATHER, "interrupted", [REVIEW]),
        (CODEX, "done", []),
    ]
    assert archive.status(agent="codex", since="2026-11-01")[0].key == CODEX
    with pytest.raises(UsageError):
        archive.status(agent="no-such-agent")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda a: a.sessions(limit=10**30), "limit 10"),
        (lambda a: a.sessions(limit=-1), "limit -1"),
        (lambda a: a.sessions(status="bogus"), "unknown status 'bogus' (one of working, running_tool, "),
        (lambda a: a.search("weather", role="bogus"), "unknown role 'bogus' (one of user, assistant, system, tool)"),
        (lambda a: a.usage(cost_mode="bogus"), "unknown cost_mode 'bogus' (one of auto, calculate, recorded)"),
        (lambda a: a.calls(cost_mode="bogus"), "unknown cost_mode 'bogus'"),
        (lambda a: a.sessions(until=""), "until is empty (leave it out for no bound)"),
        (lambda a: a.search("weather", since=" "), "since is empty (leave it out for no bound)"),
        (lambda a: a.usage("daily", timezone=""), "timezone is empty (leave it out for the local zone)"),
        (lambda a: a.calls(until=""), "until is empty"),
        (lambda a: a.search("rare", cursor=2**63 - 6), "offset 9223372036854775802 is not in 0…9223372036854775787"),
        (
            lambda a: a.search("rare", cursor=2**63 - 6, by_session=True, limit=10),
            "offset 9223372036854775802 is not in 0…9223372036854775797 (with limit 10)",
        ),
    ],
)
def test_bad_values_are_usage_errors_as_on_the_command_line(archive, call, message):
    """They raised OverflowError, or were taken: no sessions, no hits, a report."""
    with pytest.raises(UsageError) as raised:
        call(archive)
    assert str(raised.value).startswith(message)


def test_a_role_in_any_case_is_the_role(archive):
    upper = archive.search("weather", role="USER")
    assert upper.hits and [(h.session_key, h.message_id) for h in upper.hits] == [
        (h.session_key, h.message_id) for h in archive.search("weather", role="user").hits
    ]


def test_every_surface_gives_a_session_the_same_status(archive):
    """The board status (the log's, refined by the clock and the processes) is what
    a session's header says everywhere: ``touching`` and exports gave the stored
    log status (``waiting_for_user`` for a two-year-old session the rest call ``done``)."""
    statuses = {s.key: s.status for s in archive.sessions(subagents=True)}
    touched = [f.session for name in ("CLAUDE.md", "stats.py", "README.md") for f in archive.touching(name)]
    assert touched and all(s.status == statuses[s.key] for s in touched), [(s.key, s.status) for s in touched]
    assert any(s.key.startswith("claude_code:5c0375b4") for s in touched)
    for key, status in statuses.items():
        assert archive.session(key).status == status
    exported = _cli_json("--demo", "export", "--all", "--format", "json")
    found = {s["key"]: s["status"] for s in exported}  # type: ignore[union-attr]
    assert len(found) == 6 and all(statuses[key] == status for key, status in found.items()), found
