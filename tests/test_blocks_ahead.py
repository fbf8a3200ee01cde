"""A 5-hour block of calls stamped ahead of now (a clock that ran ahead and was
set back) is not the active block: no "ACTIVE", no burn rate or projection, no
block in the status line; tester's finding 4, session of 2026-12-01."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from test_cli import run

SID = "ffffffff-0000-0000-0000-000000000001"


def _home(tmp_path: Path, start: datetime, model: str = "claude-sonnet-4-5") -> tuple[Path, Path]:
    folder = tmp_path / "home" / ".claude" / "projects" / "-z"
    folder.mkdir(parents=True)
    records = []
    for i in range(20):
        stamp = (start + timedelta(minutes=7 * i)).strftime("%Y-%m-%dT%H:%M:%SZ")
        line = {"sessionId": SID, "timestamp": stamp, "cwd": "/tmp/z"}
        records.append({**line, "type": "user", "uuid": f"u{i}", "message": {"role": "user", "content": f"q{i}"}})
        message = {
            "id": f"m{i}",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": "ok"}],
            "usage": {"input_tokens": 1000, "output_tokens": 100},
        }
        records.append({**line, "type": "assistant", "uuid": f"a{i}", "parentUuid": f"u{i}", "message": message})
    log = folder / "s.jsonl"
    log.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return tmp_path / "home", log


def _blocks(home: Path, *flags: str) -> list[dict]:
    code, out, err = run("usage", "blocks", "--json", *flags, env={"HOME": str(home)})
    assert code == 0, err
    return json.loads(out)["blocks"]


def test_a_block_ahead_of_now_is_not_active(tmp_path):
    ahead = datetime.now(UTC).replace(microsecond=0) + timedelta(days=30)
    home, log = _home(tmp_path, ahead)
    for flags in ((), ("--no-index",)):
        (block,) = _blocks(home, *flags)
        assert (block["active"], "burn_rate" in block, block["total_tokens"]) == (False, False, 22_000)
    code, out, _ = run("usage", "blocks", "-z", "UTC", env={"HOME": str(home)})
    assert code == 0 and "ACTIVE" not in out and "left" not in out
    status = json.dumps({"session_id": SID, "transcript_path": str(log), "model": {"id": "claude-sonnet-4-5"}})
    assert run_statusline(home, status) == "$0.09 session · $0.00 today · no block · ctx 0% (1k)\n"


def test_the_status_line_says_no_cost_only_where_calls_could_not_be_priced(tmp_path):
    """No call today is $0.00 today (it said ``$–``, tester12 finding 15); calls of a
    model with no price are ``$–``."""
    now = datetime.now(UTC).replace(microsecond=0)
    home, log = _home(tmp_path, now - timedelta(minutes=30), model="acme-unpriced-9")
    status = json.dumps({"session_id": SID, "transcript_path": str(log), "model": {"id": "acme-unpriced-9"}})
    line = run_statusline(home, status)
    assert re.fullmatch(r"\$– session · \$– today · block \$– \dh\d\dm left · ctx 0% \(1k\)\n", line), line
    code, out, _ = run("usage", "blocks", "-z", "UTC", env={"HOME": str(home)})
    assert code == 0 and "tokens/min; projected" in out and "$0.00" not in out  # no burn in USD
    (block,) = _blocks(home)
    assert (block["cost_usd"], block["burn_rate"]["cost_usd_per_hour"], block["burn_rate"]["projected_cost_usd"]) == (
        None, None, None
    )


def test_a_block_under_way_is_active(tmp_path):
    home, _ = _home(tmp_path, datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=20))
    (block,) = _blocks(home)
    assert block["active"] is True and 150 <= block["burn_rate"]["remaining_minutes"] <= 300


def run_statusline(home: Path, stdin: str) -> str:
    from click.testing import CliRunner

    from agentlog.cli import main
    from test_cli import AGENT_VARS

    result = CliRunner().invoke(main, ["statusline"], input=stdin, env={**AGENT_VARS, "HOME": str(home)})
    assert result.exit_code == 0, result.stderr
    return result.stdout


def test_the_status_line_and_usage_blocks_say_the_same_time_left():
    """``statusline`` floored the minutes left, ``usage blocks`` rounds them: in the
    first half of each minute they differed by one (tester14 finding 21)."""
    from agentlog.statusline import render
    from agentlog.usage.report import Block, Totals

    start = datetime(2026, 12, 1, 10, tzinfo=UTC)
    block = Block(start=start, totals=Totals(first=start, last=start + timedelta(minutes=30), calls=1), active=True)
    for seconds in range(0, 3600, 7):
        now = start + timedelta(minutes=40, seconds=seconds)
        minutes = block.as_dict(now)["burn_rate"]["remaining_minutes"]
        facts = {"block_start": start.isoformat(), "block_end": block.end.isoformat(), "block_cost_usd": 0.0}
        shown = render(facts, "{left}", "", now)
        assert shown == f"{minutes // 60}h{minutes % 60:02d}m left", (seconds, shown, minutes)
