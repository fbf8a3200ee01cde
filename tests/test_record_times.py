"""Recorded times: one rule (:func:`agentlog.adapters._values.known_time`) for a
time no zone can hold, one rule for Claude Code's ``timestamp`` field
(:func:`agentlog.adapters.claude_code.record_time`), the same on the loader, the
index and the fast usage scanner, on every surface."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agentlog.adapters._values import epoch_time, iso_time, known_time, later_time, parse_time
from agentlog.adapters.claude_code import record_time
from test_cli import run

SID = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
GOOD = "2026-11-20T09:00:00Z"
ODD_TIMES = ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", 1700000000, 1700000000000, 1.7e9]
"""Go's zero time, the calendar's last second, and epoch seconds / milliseconds /
a float: none of them a time Claude Code writes (it writes ISO strings)."""


def test_times_outside_the_believed_span_are_no_time():
    assert parse_time("0001-01-01T00:00:00Z") is None
    assert parse_time("9999-12-31T23:59:59Z") is None
    assert parse_time("0001-01-01T00:00:00+01:00") is None  # before year 1 in UTC: no OverflowError
    assert parse_time("9999-12-31T23:00:00-05:00") is None
    assert parse_time("0999-12-31T23:59:59Z") is None
    assert parse_time("1000-01-01T00:00:00Z") == datetime(1000, 1, 1, tzinfo=UTC)
    assert parse_time("8999-12-31T23:59:59Z") == datetime(8999, 12, 31, 23, 59, 59, tzinfo=UTC)
    assert parse_time("9000-01-01T00:00:00Z") is None
    assert parse_time(1700000000) == datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
    assert parse_time(1700000000000) == datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
    assert parse_time(1e15) is None  # 1e12 s: year 33658
    assert epoch_time(-62135596800) is None  # 0001-01-01
    assert known_time(datetime(1, 1, 1, tzinfo=UTC)) is None
    assert later_time(datetime(8999, 12, 31, tzinfo=UTC), days=1) is None
    assert later_time(datetime(2026, 1, 1, tzinfo=UTC), seconds=1e20) is None  # timedelta overflows
    assert later_time(datetime(2026, 1, 1, tzinfo=UTC), hours=5) == datetime(2026, 1, 1, 5, tzinfo=UTC)
    assert later_time(None, hours=5) is None


def test_claude_timestamps_are_iso_strings_only():
    assert record_time(GOOD) == datetime(2026, 11, 20, 9, tzinfo=UTC)
    assert [record_time(t) for t in ODD_TIMES] == [None] * len(ODD_TIMES)
    assert iso_time(1700000000) is None


def odd_times_home(root: Path, times: list[object]) -> dict[str, str]:
    """One Claude Code session: a prompt, then an assistant call per time in ``times``
    (``input_tokens`` 10, 20, …), then one at :data:`GOOD` (input 1000)."""
    folder = root / ".claude" / "projects" / "-p"
    folder.mkdir(parents=True)
    lines: list[dict[str, object]] = [
        {"type": "user", "sessionId": SID, "uuid": "u0", "timestamp": GOOD, "cwd": "/p",
         "message": {"role": "user", "content": "hello"}},
    ]  # fmt: skip
    for i, when in enumerate([*times, GOOD]):
        lines.append(
            {"type": "assistant", "sessionId": SID, "uuid": f"a{i}", "parentUuid": "u0", "timestamp": when,
             "cwd": "/p", "message": {"id": f"m{i}", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
             "content": [{"type": "text", "text": f"answer {i}"}],
             "usage": {"input_tokens": 1000 if when == GOOD else 10 * (i + 1), "output_tokens": 1}}}
        )  # fmt: skip
    (folder / f"{SID}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return {"HOME": str(root), "AGENTLOG_INDEX": str(root / "index.sqlite")}


@pytest.mark.parametrize("when", ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"])
def test_calendar_end_times_cost_only_themselves_on_every_command(tmp_path, when):
    env = odd_times_home(tmp_path, [when])
    code, out, err = run("usage", "blocks", "-z", "UTC", env=env)
    assert (code, err) == (0, "")
    assert [line.split()[:4] for line in out.splitlines()[1:]] == [["2026-11-20", "09:00", "1", "1.0k"]]
    code, out, err = run("show", "aaaa", env=env)
    assert code == 0, err
    assert "answer 0" in out and "answer 1" in out
    def local(*args: str) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-m", "agentlog", *args],
            env={**os.environ, **env, "TZ": "America/New_York", "COLUMNS": "120"},
            capture_output=True,
            text=True,
        )
        assert (done.returncode, done.stderr) == (0, "")
        return [line.rstrip() for line in done.stdout.splitlines()]

    assert local("sessions")[1].split() == ["Nov", "20", "04:00", "claude", "aaaaaaaa", "p", "hello", "3", "1.0k"]
    shown = local("show", "aaaa")
    assert shown[2] == "2026-11-20 04:00 → 2026-11-20 04:00 · input 1,010 · cache read 0 · cache write 0 · output 2"
    assert shown[-5:] == ["assistant", "answer 0", "", "assistant 04:00:00", "answer 1"]  # the odd one: no time
    assert local("usage", "-z", "Asia/Tokyo")[1:3] == [
        "2026-11-20  1,000       1         0         0  1,001  $0.00",
        "unknown        10       1         0         0     11  $0.00",
    ]


def test_a_page_past_what_sqlite_counts_is_a_usage_error_on_the_command_line():
    for args in (["weather"], ["weather", "--sessions"], ["weather", "--sort", "newest"]):
        code, _, err = run("--demo", "search", *args, "--offset", str(2**63 - 1))
        assert (code, err) == (2, "agentlog: offset 9223372036854775807 is not in 0…9223372036854775787 (with limit 20)\n")
    code, out, err = run("--demo", "search", "weather", "--offset", str(2**63 - 21))
    assert (code, out, err) == (0, "", "no hits past 9223372036854775787 (of 11)\n")


def test_the_demo_rate_limits_reset_inside_their_windows():
    """Codex writes ``resets_at`` as epoch seconds (openai/codex ``RateLimitWindow``);
    the demo rollout's were a year before the session (``resets 2025-11-21`` as of
    2026-11-21)."""
    code, out, err = run("--demo", "usage", "limits", "--json")
    assert code == 0, err
    latest = json.loads(out)["latest"]
    assert latest["observed_at"] == "2026-11-21T14:00:11.300000Z"
    assert (latest["primary"]["resets_at"], latest["secondary"]["resets_at"]) == (
        "2026-11-21T17:43:20Z",
        "2026-11-26T23:33:20Z",
    )
    seen = datetime.fromisoformat(latest["observed_at"])
    for window in (latest["primary"], latest["secondary"]):
        resets = datetime.fromisoformat(window["resets_at"])
        assert 0 < (resets - seen).total_seconds() <= window["window_minutes"] * 60


@pytest.mark.parametrize("when", ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"])
def test_calendar_end_times_cost_only_themselves_in_the_api_mcp_and_viewer(tmp_path, when, monkeypatch):
    """They raised OverflowError: ``Archive.usage``, MCP ``get_usage_summary`` with a
    zone, and the viewer's ``/``, ``/usage`` and ``/session`` (a 500)."""
    import agentlog
    from agentlog.web.app import create_app

    env = odd_times_home(tmp_path, [when])
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    with agentlog.open() as archive:
        for zone in ("Asia/Tokyo", "America/New_York"):
            rows = archive.usage("daily", timezone=zone)["rows"]
            assert [(r["key"], r["input_tokens"]) for r in rows] == [("2026-11-20", 1000), ("unknown", 10)]
        path = archive.path
    web = create_app(path).test_client()
    for route in ("/", "/usage?tz=Asia/Tokyo", "/usage?tz=America/New_York", f"/session?key=claude_code:{SID}"):
        response = web.get(route, headers={"Sec-Fetch-Site": "same-origin"})
        assert response.status_code == 200, route
    assert "answer 0" in web.get(f"/session?key=claude_code:{SID}").get_data(as_text=True)
    pytest.importorskip("mcp")
    import anyio
    from mcp.client import Client

    from agentlog.index import db
    from agentlog.mcp.server import Index, build_server

    index = Index(lambda: db.connect(path), None)

    async def summary(zone: str) -> object:
        async with Client(build_server(index)) as client:
            result = await client.call_tool("get_usage_summary", {"report": "daily", "timezone": zone})
            assert not result.is_error, result.content
            return [(r["key"], r["input_tokens"]) for r in result.structured_content["rows"]]  # type: ignore[index]

    try:
        for zone in ("Asia/Tokyo", "America/New_York"):
            assert anyio.run(summary, zone) == [("2026-11-20", 1000), ("unknown", 10)]
    finally:
        index.close()
