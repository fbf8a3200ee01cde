"""The service layer and the filter vocabulary (issue 11, part 4): one time rule,
one agent resolver, one "folder contains text", one escape for the terminal, and
a web viewer that imports nothing from the CLI."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

import agentlog
from agentlog.adapters import all_adapters
from agentlog.errors import UsageError
from agentlog.index import db, queries
from agentlog.index.sync import sync
from agentlog.present import clean
from agentlog.query import (
    SessionFilter,
    Span,
    parse_day,
    parse_span,
    parse_time,
    resolve_agent,
    text_contains,
)
from agentlog.service.home import Home
from agentlog.service.sessions import logged_sessions
from test_cli import run

SRC = Path(__file__).parents[1] / "src" / "agentlog"
NOW = datetime(2026, 3, 10, 15, 30, tzinfo=UTC)
HOSTILE_CWD = "/tmp/[bold]x[/x]\x1b[31m"
HOSTILE_MODEL = "m[/x]\x1b[31m"
HOSTILE_TITLE = "[bold]hi[/x]\x1b[31m there"


# -- the time rule ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "end", "expected"),
    [
        ("2026-01-01T12:00:00Z", False, datetime(2026, 1, 1, 12, tzinfo=UTC)),
        ("2026-01-01T12:00:00Z", True, datetime(2026, 1, 1, 12, tzinfo=UTC)),
        ("2026-01-01 14:30+02:00", False, datetime(2026, 1, 1, 12, 30, tzinfo=UTC)),
        ("2026-01-01T12:00", False, datetime(2026, 1, 1, 3, tzinfo=UTC)),  # naive: in the zone (Tokyo)
        ("2026-01-01", False, datetime(2025, 12, 31, 15, tzinfo=UTC)),  # Tokyo midnight
        ("2026-01-01", True, datetime(2026, 1, 1, 15, tzinfo=UTC)),  # through the end of the day
        ("20260101", True, datetime(2026, 1, 1, 15, tzinfo=UTC)),
        ("30m", False, NOW - timedelta(minutes=30)),
        ("12h", True, NOW - timedelta(hours=12)),
        ("7D", False, NOW - timedelta(days=7)),
        ("2w", False, NOW - timedelta(weeks=2)),
    ],
)
def test_one_time_rule(text, end, expected):
    assert parse_time(text, ZoneInfo("Asia/Tokyo"), end=end, now=NOW) == expected


@pytest.mark.parametrize("text", ["yesterday", "2026-13-01", "5 minutes", "", "99999999999999999999d"])
def test_bad_times_are_usage_errors(text):
    with pytest.raises(UsageError, match="not a date"):
        parse_time(text, UTC, now=NOW)


def test_a_date_at_the_calendars_ends_is_the_calendars_end_in_any_zone():
    """Year 1 moved east of UTC (or year 9999 west of it) leaves the calendar: a
    bare date there is the calendar's first (or last) instant, in every command
    and zone (``sessions --since 0001-01-01`` was refused where ``usage`` took
    it: tester13 finding 14); an exact time out of range is a one-line usage
    error, not ValueError out of ``astimezone``."""
    assert parse_time("0001-01-01", UTC) == datetime(1, 1, 1, tzinfo=UTC)
    first, last = datetime.min.replace(tzinfo=UTC), datetime.max.replace(tzinfo=UTC)
    assert parse_time("0001-01-01", ZoneInfo("Asia/Tokyo")) == first
    assert parse_time("9999-12-31", ZoneInfo("America/New_York"), end=True) == last
    assert parse_time("9999-12-31", UTC, end=True) == last
    with pytest.raises(UsageError, match="out of range"):
        parse_time("0001-01-01T05:00", ZoneInfo("Asia/Tokyo"), now=NOW)


def test_empty_time_and_zone_options_are_refused_not_ignored():
    for args in (
        ["sessions", "--since", ""],
        ["search", "x", "--until", " "],
        ["usage", "-z", ""],
        ["status", "--since", ""],
    ):
        code, out, err = run("--demo", *args)
        assert (code, out, err.count("\n")) == (2, "", 1) and "is empty" in err, args


def test_span_is_half_open_and_ordered():
    span = parse_span("2026-01-01", "2026-01-01", UTC)
    assert span == Span(datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC))
    assert span.contains(datetime(2026, 1, 1, 23, 59, 59, tzinfo=UTC))
    assert not span.contains(datetime(2026, 1, 2, tzinfo=UTC))
    assert not span.contains(None) and Span().contains(None)
    with pytest.raises(UsageError, match="--since 2026-02-01 is after --until 2026-01-01"):
        parse_span("2026-02-01", "2026-01-01", UTC)


def test_parse_day_names_the_day_in_the_zone():
    tokyo = ZoneInfo("Asia/Tokyo")
    assert parse_day("20260101", tokyo).isoformat() == "2026-01-01"
    assert parse_day("2026-01-01T20:00:00Z", tokyo).isoformat() == "2026-01-02"


def test_every_time_option_says_the_one_rule():
    for command in (["sessions"], ["search"], ["usage"]):
        code, out, _ = run(*command, "--help")
        text = " ".join(out.split())
        assert code == 0 and "bare date counts through the end of that day" in text, command
        assert "span back from now (30m, 12h, 7d, 2w)" in text, command


# -- the agent resolver and "folder contains text" -------------------------------


def test_agent_resolver_takes_slugs_prefixes_any_case():
    assert resolve_agent("Claude") == "claude_code"
    assert resolve_agent("GEMINI-CLI") == "gemini_cli"
    assert resolve_agent(None) is None
    assert resolve_agent("cursor") == "cursor"  # a whole slug wins over longer ones it starts
    with pytest.raises(UsageError) as ambiguous:
        resolve_agent("Co")
    assert str(ambiguous.value) == "ambiguous agent 'Co': codewhale, codex, copilot_cli, copilot_vscode"
    with pytest.raises(UsageError, match=r"unknown agent 'nope' \(known: aider, ") as unknown:
        resolve_agent("nope")
    assert all(a.slug in str(unknown.value) for a in all_adapters())


def test_python_api_takes_agent_prefixes_and_spans():
    keys = [s.key for s in agentlog.sessions(agent="CLAUDE", demo=True)]
    assert keys and all(k.startswith("claude_code:") for k in keys)
    with pytest.raises(UsageError, match="unknown agent 'zz'"):
        agentlog.sessions(agent="zz", demo=True)
    assert agentlog.sessions(demo=True, until="2000-01-01") == []


def test_text_contains_folds_case_beyond_ascii():
    assert text_contains("/home/ÜRSULA/Straße", "ürsula/straße")
    assert text_contains("/home/ÜRSULA/Straße", "ürsula/STRASSE")  # Unicode case folding: ß ~ ss
    assert not text_contains("/home/ÜRSULA/Straße", "ursula")
    assert text_contains(None, "") and not text_contains(None, "x")


def _two_folder_home(tmp_path: Path) -> Path:
    """Two Claude sessions, in ``/home/ÜRSULA/proj`` and ``/srv/other``."""
    for n, cwd in ((1, "/home/ÜRSULA/proj"), (2, "/srv/other")):
        folder = tmp_path / ".claude" / "projects" / f"-p{n}"
        folder.mkdir(parents=True)
        line = {
            "type": "user",
            "sessionId": f"s{n}",
            "uuid": f"u{n}",
            "timestamp": f"2026-01-0{n}T10:00:00Z",
            "cwd": cwd,
            "message": {"role": "user", "content": f"prompt {n}"},
        }
        (folder / f"s{n}.jsonl").write_text(json.dumps(line) + "\n")
    return tmp_path


def test_folder_match_is_the_same_in_sql_and_in_memory(tmp_path):
    home = _two_folder_home(tmp_path)
    conn = db.connect(tmp_path / "index.sqlite")
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    for where in (
        SessionFilter(project="ürsula"),
        SessionFilter(project="OTHER"),
        SessionFilter(text="PROMPT 2"),
        SessionFilter(span=parse_span("2026-01-02", None, UTC)),
        SessionFilter(span=parse_span(None, "2026-01-01", UTC)),
    ):
        indexed = [s.key for s in queries.list_sessions(conn, where)]
        loaded = [s.key for s in logged_sessions(Home({"HOME": str(home)}, home), where)]
        assert indexed == loaded, where
    assert [s.key for s in queries.list_sessions(conn, SessionFilter(project="ürsula"))] == ["claude_code:s1"]
    code, out, _ = run("sessions", "--project", "ürsula", "--json", env={"HOME": str(home)})
    assert code == 0 and [r["key"] for r in json.loads(out)] == ["claude_code:s1"]
    code, out, _ = run("sessions", "--until", "2026-01-02T10:00:00Z", "--json", env={"HOME": str(home)})
    assert code == 0 and [r["key"] for r in json.loads(out)] == ["claude_code:s1"]  # until is exclusive
    code, out, _ = run("sessions", "--since", "2026-01-02T10:00:00Z", "--json", env={"HOME": str(home)})
    assert code == 0 and [r["key"] for r in json.loads(out)] == ["claude_code:s2"]


# -- usage: exact times, spans, the same rule through the index and the logs ------


def _calls_home(tmp_path: Path, stamps: list[datetime]) -> dict[str, str]:
    """One Claude session whose i-th call (at ``stamps[i]``) has 10^i input tokens,
    recorded with hostile folder, model and title."""
    folder = tmp_path / ".claude" / "projects" / "-tmp-x"
    folder.mkdir(parents=True)
    first = stamps[0] - timedelta(minutes=1)
    lines = [
        {
            "type": "user",
            "sessionId": "s1",
            "uuid": "u0",
            "timestamp": first.isoformat().replace("+00:00", "Z"),
            "cwd": HOSTILE_CWD,
            "message": {"role": "user", "content": HOSTILE_TITLE},
        }
    ]
    for n, stamp in enumerate(stamps, 1):
        lines.append(
            {
                "type": "assistant",
                "sessionId": "s1",
                "uuid": f"u{n}",
                "parentUuid": f"u{n - 1}",
                "cwd": HOSTILE_CWD,
                "timestamp": stamp.isoformat().replace("+00:00", "Z"),
                "message": {
                    "id": f"msg_{n}",
                    "role": "assistant",
                    "model": HOSTILE_MODEL,
                    "content": [{"type": "text", "text": f"reply {n}"}],
                    "usage": {"input_tokens": 10 ** (n - 1), "output_tokens": 0},
                },
            }
        )
    (folder / "s1.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return {"HOME": str(tmp_path)}


def _input_tokens(env: dict[str, str], *args: str) -> tuple[int, int]:
    """``usage --json`` input tokens through the index and with ``--no-index``."""
    out = []
    for extra in ((), ("--no-index",)):
        code, text, err = run("usage", *args, *extra, "--json", "--no-cost", env=env)
        assert code == 0, err
        out.append(json.loads(text)["totals"]["input_tokens"])
    return out[0], out[1]


NOON_CALLS = [datetime(2026, 1, 1, h, m, tzinfo=UTC) for h, m in ((11, 50), (12, 5), (12, 10))]


@pytest.mark.parametrize(
    ("args", "tokens"),
    [
        (("--since", "2026-01-01T12:00:00Z"), 110),
        (("--since", "2026-01-01T12:07:00Z"), 100),  # inside the 12:00 roll-up record
        (("--until", "2026-01-01T12:07:00Z"), 11),
        (("--since", "2026-01-01T12:05:00Z", "--until", "2026-01-01T12:10:00Z"), 10),
        (("--since", "2026-01-01T13:07:00+01:00"), 100),
        (("--until", "2026-01-01", "-z", "UTC"), 111),  # a bare date: through its end
        (("--until", "2025-12-31", "-z", "UTC"), 0),
        (("--until", "2026-01-01", "-z", "Asia/Tokyo"), 111),  # Tokyo's Jan 1 ends at 15:00 UTC
        (("--since", "2026-01-02", "-z", "Asia/Tokyo"), 0),  # Tokyo's Jan 2 starts at 15:00 UTC
        (("--since", "2026-01-01T21:07", "-z", "Asia/Tokyo"), 100),  # no offset: in the zone
    ],
)
def test_usage_counts_exactly_the_calls_in_the_span(tmp_path, args, tokens):
    env = _calls_home(tmp_path, NOON_CALLS)
    assert _input_tokens(env, *args) == (tokens, tokens)


def test_usage_since_a_span_counts_only_that_span(tmp_path):
    now = datetime.now(UTC)
    env = _calls_home(tmp_path, [now - timedelta(minutes=50), now - timedelta(minutes=2)])
    assert _input_tokens(env, "--since", "5m") == (10, 10)
    assert _input_tokens(env, "--since", "1h") == (11, 11)
    assert _input_tokens(env, "--until", "5m") == (1, 1)


def test_web_filters_use_the_same_rule(tmp_path):
    from agentlog.web.app import create_app

    env = _calls_home(tmp_path, NOON_CALLS)
    code, _, err = run("index", env=env)
    assert code == 0, err
    index = Path(__import__("os").environ["AGENTLOG_INDEX"])
    client = create_app(index).test_client()
    html = client.get("/usage?since=2026-01-01T12:07:00Z&tz=UTC").get_data(as_text=True)
    assert '<span class="big">100</span>' in html
    assert (
        client.get("/?since=2026-01-01T12:09:00Z&tz=UTC").get_data(as_text=True).count("/session?key=") == 1
    )
    assert (
        client.get("/?since=2026-01-01T12:11:00Z&tz=UTC").get_data(as_text=True).count("/session?key=") == 0
    )
    assert (
        client.get("/?until=2026-01-01T11:48:00Z&tz=UTC").get_data(as_text=True).count("/session?key=") == 0
    )
    assert client.get("/?agent=CLAU").status_code == 200
    assert client.get("/?since=yesterday").status_code == 400


# -- the one escape, in every table and line -------------------------------------


def test_clean_escapes_markup_and_control_characters():
    assert clean("[bold]a[/x]\x1b[31m\rb\x9b") == "\\[bold]a\\[/x]␛[31m␍b\ufffd"
    assert clean("a\tb\nc") == "a\tb\nc"
    assert clean("a\tb\nc", one_line=True) == "a b c"


SHOWN_CWD = "/tmp/[bold]x[/x]␛[31m"
SHOWN_MODEL = "m[/x]␛[31m"
SHOWN_TITLE = "[bold]hi[/x]␛[31m there"


def test_hostile_log_text_prints_as_written_everywhere(tmp_path):
    env = _calls_home(tmp_path, NOON_CALLS)
    outputs = {}
    for args in (
        (),
        ("sessions",),
        ("show", "s1"),
        ("search", "reply"),
        ("usage", "model"),
        ("usage", "project"),
        ("usage", "daily", "-b"),
        ("usage", "session", "-z", "UTC"),
        ("usage", "blocks", "-z", "UTC"),
        ("doctor",),
    ):
        code, out, err = run(*args, env=env)
        assert code == 0, (args, err)
        assert "\x1b" not in out + err, args
        outputs[args] = [line.rstrip() for line in out.splitlines()]
    title_cell = f"x]␛[31m  {SHOWN_TITLE}     4     111"  # project name, title, msgs, tokens
    assert any(line.endswith(title_cell) for line in outputs[("sessions",)])
    assert any(line.endswith(title_cell) for line in outputs[()])
    show = outputs[("show", "s1")]
    assert show[0] == SHOWN_TITLE and show[1] == f"claude_code:s1 · {SHOWN_CWD} · {SHOWN_MODEL}"
    assert outputs[("search", "reply")][0].endswith(f"· assistant  {SHOWN_TITLE}")
    assert f"{SHOWN_MODEL}    111       0         0         0    111" in outputs[("usage", "model")]
    assert f"{SHOWN_CWD}    111       0         0         0    111" in outputs[("usage", "project")]
    assert f"  {SHOWN_MODEL}    111       0         0         0    111" in outputs[("usage", "daily", "-b")]
    assert (
        "s1 x]␛[31m    111       0         0         0    111" in outputs[("usage", "session", "-z", "UTC")]
    )
    assert (
        outputs[("usage", "blocks", "-z", "UTC")][1]
        == f"2026-01-01 11:00              3     111        {SHOWN_MODEL}"
    )
    hostile_root = {"CLAUDE_CONFIG_DIR": f"{tmp_path}-[bold]c\x1b[31m"}
    code, out, _ = run("agents", "--all", env={**env, **hostile_root})
    assert code == 0 and f"  ✗ {tmp_path}-[bold]c␛[31m/projects" in out.splitlines()
    code, _, err = run("usage", "model", env=env)
    assert (
        f"warning: no price for model '{HOSTILE_MODEL[:-5]}\\x1b[31m': 111 tokens shown without cost" in err
    )


def test_doctor_and_index_escape_what_they_print(tmp_path):
    env = _calls_home(tmp_path, NOON_CALLS)
    log = next((tmp_path / ".claude" / "projects").glob("*/s1.jsonl"))
    with log.open("a") as f:
        f.write(json.dumps({"type": "[bold]kind\x1b[31m", "sessionId": "s1", "uuid": "zz"}) + "\n")
    code, out, err = run("doctor", env=env)
    assert code == 0, err
    assert "  kept raw      1  unknown type [bold]kind␛[31m" in out.splitlines()
    index = tmp_path / "[bold]i\x1b[31m.sqlite"
    code, out, err = run("--index", str(index), "index", env=env)
    assert code == 0, err
    assert out.splitlines()[-1] == f"index: {tmp_path}/[bold]i␛[31m.sqlite"


# -- the web viewer imports nothing from the CLI ---------------------------------


def test_no_web_module_imports_the_cli():
    """Directly (every import statement of every ``agentlog.web`` module) and
    through the import graph (a fresh interpreter loading the whole viewer)."""
    for path in sorted((SRC / "web").glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not any(n == "agentlog.cli" or n.startswith("agentlog.cli.") for n in names), path
    probe = (
        "import sys, agentlog.web.app, agentlog.web.pages, agentlog.web.syncer\n"
        "print(sorted(m for m in sys.modules if m.startswith('agentlog.cli')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_plain_lines_escape_control_characters_too(tmp_path):
    odd = tmp_path / "x\x1b[31m[bold].txt"
    odd.write_text("hello\n")
    code, out, _ = run("detect", str(odd))
    assert (code, out) == (1, f"{tmp_path}/x␛[31m[bold].txt: not a format agentlog knows\n")
    code, _, err = run("--index", str(odd), "sessions")
    assert code == 1 and "\x1b" not in err and f"{tmp_path}/x␛[31m[bold].txt" in err


def test_session_costs_equal_the_usage_session_report(tmp_path):
    """The viewer's per-session cost and ``usage session --no-rollup`` are the same numbers."""
    from agentlog.service.usage import UsageQuery, index_usage, session_costs
    from agentlog.usage.report import build_rows

    env = Home.of({}, demo=True).env
    conn = db.connect(tmp_path / "index.sqlite")
    sync(conn, all_adapters(), env, Path(env["HOME"]))
    rows, _ = build_rows(index_usage(conn, UsageQuery()).calls, "session", UTC, rollup=False)
    costs = session_costs(conn, [r.key for r in rows])
    assert len(rows) > 3 and set(costs) == {r.key for r in rows}
    for row in rows:
        assert costs[row.key].cost == (row.totals.cost if row.totals.priced else None), row.key
        assert costs[row.key].sources == row.totals.sources, row.key


def test_filters_are_built_by_one_constructor_for_every_surface():
    """service.filters builds the session and search filters the CLI, the web
    viewer, the API and MCP use: the same agent rule, span rule (dates in the
    zone given) and flags."""
    from datetime import UTC, datetime
    from zoneinfo import ZoneInfo

    from agentlog.query import SessionFilter, Span
    from agentlog.service.filters import search_filter, session_filter
    from agentlog.service.search import SearchFilter

    paris = ZoneInfo("Europe/Paris")
    day = Span(since=datetime(2026, 1, 1, tzinfo=paris), until=datetime(2026, 1, 2, tzinfo=paris))
    assert session_filter(
        "claude", "web", "2026-01-01", "2026-01-01", True, "done", "fix", True, has_children=True, tz=paris
    ) == SessionFilter(
        agent="claude_code",
        project="web",
        span=day,
        status="done",
        has_children=True,
        text="fix",
        include_children=True,
        include_exec=True,
    )
    assert search_filter("CODEX", "web", "2026-01-01", "2026-01-01", "user", "bash", True, tz=paris) == SearchFilter(
        agent="codex", project="web", span=day, role="user", tool="bash", reasoning=True
    )
    assert search_filter() == SearchFilter() and session_filter() == SessionFilter()
    assert search_filter(since=datetime(2026, 1, 1, 12, tzinfo=UTC)).span.since == datetime(2026, 1, 1, 12, tzinfo=UTC)


def test_a_very_long_session_reference_matches_none_on_every_surface(tmp_path):
    """60,000 characters passed SQLite's LIKE limit: an internal error (exit 70),
    a 503 in the viewer; now "no session matches", exit 1 / 404 / NotFound."""
    from agentlog.errors import NotFound
    from agentlog.web.app import create_app

    ref = "a" * 60_000
    for command in ("show", "tail", "export"):
        code, out, err = run("--demo", command, ref)
        assert (code, out, err.count("\n")) == (1, "", 1) and "no session matches" in err and "60,000" in err
    from web_helpers import demo_index

    index = demo_index(tmp_path / "demo.sqlite")
    client = create_app(index).test_client()
    assert [client.get(f"/{page}?key={ref}").status_code for page in ("session", "message", "raw")] == [404] * 3
    with pytest.raises(NotFound, match="no session matches"):
        agentlog.open(index, sync=False).session(ref)
