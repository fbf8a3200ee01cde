"""Usage reports from sums per row (#17 part 6): :func:`report_usage` prices the
roll-up summed per local day, model, service tier, cost origin and UTC day for
the daily, weekly, monthly, model and agent reports; every document it gives
(rows, totals, costs to the pico-dollar, warnings) equals the one priced from
every roll-up record (:func:`index_usage`), on the demo home, on a home of
calls across the 200K tier, recorded costs, calls without a time, a duplicate
copy and an off-peak price, and on a generated multi-agent home; and
``--no-index`` agrees with both."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentlog.adapters import all_adapters
from agentlog.demo import demo_env
from agentlog.index.db import connect
from agentlog.index.grouped import day_sums
from agentlog.index.sync import sync
from agentlog.index.usage import usage_records
from agentlog.service.grouped import SUMMED, report_usage
from agentlog.service.reports import usage_document
from agentlog.service.usage import UsageQuery, index_usage
from agentlog.usage.report import zone
from test_usage import claude_line
from test_usage_rollup import busy_session

ADAPTERS = all_adapters()
ZONES = ["UTC", "America/New_York", "Asia/Kathmandu", "Australia/Lord_Howe"]


def _indexed(home: Path, index: Path, env: dict[str, str] | None = None):
    conn = connect(index)
    sync(conn, ADAPTERS, env or {"HOME": str(home)}, home)
    return conn


def _tricky_home(home: Path) -> Path:
    """Calls across the 200K tier in one quarter hour, a recorded cost, a call
    without a time (:func:`busy_session`), DeepSeek calls inside and outside
    its off-peak window on one UTC day, a model without a price, calls on both
    sides of New York's and Lord Howe's autumn clock changes, and a byte-for-byte copy
    of one session in another project folder (a duplicate source)."""
    busy_session(home / ".claude/projects/-tmp-busy/busy.jsonl")
    lines = []
    stamps = [
        "2025-03-01T10:00:00Z",
        "2025-03-01T17:00:00Z",  # DeepSeek's off-peak hours (16:30-00:30 UTC)
        "2026-11-01T05:50:00Z",  # 01:50 EDT, before New York's clocks go back
        "2026-11-01T06:10:00Z",  # 01:10 EST, after
        "2026-04-04T14:55:00Z",  # Lord Howe, half an hour back at 02:00 local
        "2026-04-04T15:05:00Z",
        "2026-11-02T18:20:00Z",  # Kathmandu's midnight is 18:15 UTC
        "2026-11-02T18:10:00Z",
    ]
    for n, when in enumerate(stamps):
        model = ("deepseek-chat" if n < 2 else "claude-haiku-4-5", "claude-mystery-9")[n == 5]
        usage = {"input_tokens": 1_000 + n, "output_tokens": 200 + n, "cache_read_input_tokens": 30_000 * n}
        lines.append(json.dumps(claude_line(100 + n, model, usage, when=when) | {"sessionId": "t0"}))
    path = home / ".claude/projects/-tmp-tricky/tricky.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(lines) + "\n")
    copy = home / ".claude/projects/-tmp-copy/busy.jsonl"
    copy.parent.mkdir(parents=True)
    shutil.copy(home / ".claude/projects/-tmp-busy/busy.jsonl", copy)
    return home


def _documents(conn, query: UsageQuery, report: str, tz_name: str) -> tuple[dict, dict]:
    tz = zone(tz_name)
    summed = usage_document(report_usage(conn, query, report, tz), report, tz, breakdown=True)
    each = usage_document(index_usage(conn, query), report, tz, breakdown=True)
    return summed, each


@pytest.mark.parametrize("tz_name", ZONES)
@pytest.mark.parametrize("mode", ["auto", "calculate", "recorded"])
def test_sums_give_the_documents_records_give(tmp_path, tz_name, mode):
    conn = _indexed(_tricky_home(tmp_path / "home"), tmp_path / "index.sqlite")
    duplicates = conn.execute("SELECT COUNT(*) FROM sources WHERE duplicate_of IS NOT NULL").fetchone()[0]
    assert duplicates == 1
    for agent in (None, "claude_code", "codex"):
        query = UsageQuery(agent=agent, cost_mode=mode)
        for report in (*sorted(SUMMED), "session", "blocks"):
            summed, each = _documents(conn, query, report, tz_name)
            assert summed == each, (report, agent)
            if agent != "codex":
                assert summed.get("rows") or summed.get("blocks")
    sums = day_sums(conn, zone(tz_name))
    assert sums is not None and len(sums.calls) < len(usage_records(conn))
    priced = report_usage(conn, UsageQuery(cost_mode=mode), "daily", zone(tz_name)).calls
    apart = {pc.call.session_key for pc in priced} - {""}  # priced record by record
    # the busy session's tier-straddling quarter hours, and DeepSeek's day (its price changes at 16:30)
    assert apart == (set() if mode == "recorded" else {"claude_code:busy", "claude_code:t0"})


def test_the_demo_home_gives_the_same_documents(tmp_path):
    env = demo_env(os.environ)
    home = Path(env["HOME"])
    conn = _indexed(home, tmp_path / "demo.sqlite", env)
    for report in sorted(SUMMED):
        for tz_name in ("UTC", "Asia/Tokyo"):
            summed, each = _documents(conn, UsageQuery(), report, tz_name)
            assert summed == each and summed["rows"], report


def test_a_generated_multi_agent_home_gives_the_same_documents(tmp_path):
    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    from home import HomeShape, write_home

    home = tmp_path / "home"
    write_home(home, HomeShape(claude=120, codex=30, opencode=2))
    conn = _indexed(home, tmp_path / "index.sqlite")
    records = usage_records(conn)
    assert len({r.agent for r in records}) == 3 and len(records) > 150
    for report in sorted(SUMMED):
        for tz_name in ("UTC", "America/New_York"):
            summed, each = _documents(conn, UsageQuery(), report, tz_name)
            assert summed == each and summed["rows"], report
            assert summed["totals"]["cost_usd"] > 0
    sums = day_sums(conn, zone("UTC"), by_agent=True)
    assert sums is not None and len(sums.calls) * 3 < len(records)


def test_a_read_only_index_with_stale_roll_ups_reads_the_records(tmp_path):
    home = _tricky_home(tmp_path / "home")
    conn = _indexed(home, tmp_path / "index.sqlite")
    conn.execute("DELETE FROM usage_rollup_state")  # as after a sync that added sessions
    readonly = connect(tmp_path / "index.sqlite", readonly=True)
    assert day_sums(readonly, zone("UTC")) is None
    got = usage_document(
        report_usage(readonly, UsageQuery(), "daily", zone("UTC")), "daily", zone("UTC"), breakdown=True
    )
    assert conn.execute("SELECT COUNT(*) FROM usage_rollup_state").fetchone() == (0,)
    assert got == _documents(conn, UsageQuery(), "daily", "UTC")[1]


def _cli(env: dict[str, str], *args: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "agentlog", *args], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def test_the_cli_without_the_index_agrees(tmp_path):
    home = _tricky_home(tmp_path / "home")
    env = {**os.environ, "HOME": str(home), "AGENTLOG_INDEX": str(tmp_path / "i.sqlite"), "TZ": "UTC"}
    env.pop("AGENTLOG_BACKGROUND_INDEX", None)
    for report in ("daily", "monthly", "model", "agent"):
        indexed = _cli(env, "usage", report, "--json", "-z", "America/New_York", "-b")
        direct = _cli(env, "usage", report, "--json", "-z", "America/New_York", "-b", "--no-index")
        assert indexed["rows"] and indexed == direct, report


def _spans(first: str, days: int) -> list[str]:
    from datetime import datetime, timedelta

    start = datetime.fromisoformat(first)
    return [f"{start + n * timedelta(minutes=15):%Y-%m-%dT%H:%M}" for n in range(days * 96)]


@pytest.mark.parametrize(
    "tz_name",
    ["UTC", "Europe/Paris", "America/St_Johns", "Asia/Kathmandu", "Australia/Lord_Howe", "Pacific/Chatham",
     "Pacific/Kiritimati", "Etc/GMT+12", "America/Sao_Paulo", "Pacific/Apia"],
)  # fmt: skip
def test_span_days_are_each_span_start_s_local_day(tz_name):
    """Every quarter hour of months holding both of a year's changes of offset
    (whole hours, half hours; Lord Howe's half-hour summer time; Apia's skipped day
    of 2011): the day each span's start converts to."""
    from datetime import UTC, datetime
    from zoneinfo import ZoneInfo

    from agentlog.index.grouped import span_days
    from agentlog.usage.report import local_day

    tz = ZoneInfo(tz_name)
    spans = [*_spans("2024-03-01T00:00", 45), *_spans("2024-09-20T00:00", 50), *_spans("2011-12-28T00:00", 5)]
    expected = {s: local_day(datetime.fromisoformat(s).replace(tzinfo=UTC), tz).isoformat() for s in spans}
    assert span_days(spans, tz) == expected
    assert len(set(expected.values())) > 90  # the days do move


def test_span_days_at_a_day_s_edges_and_of_odd_text():
    from zoneinfo import ZoneInfo

    from agentlog.index.grouped import span_days

    spans = ["2024-03-10T18:00", "2024-03-10T18:15", "2024-03-10T00:00"]
    assert span_days(spans, ZoneInfo("Asia/Kathmandu")) == {  # +5:45
        "2024-03-10T18:00": "2024-03-10",
        "2024-03-10T18:15": "2024-03-11",
        "2024-03-10T00:00": "2024-03-10",
    }
    assert span_days(["2024-03-10T02:30", "2024-03-10T02:30:00"], ZoneInfo("America/St_Johns")) == {  # -3:30
        "2024-03-10T02:30": "2024-03-09",
        "2024-03-10T02:30:00": "2024-03-09",  # not a span's form: converted as a time
    }
    with pytest.raises(ValueError):
        span_days(["2024-03-10T25:00"], ZoneInfo("UTC"))  # as the span's conversion raises
