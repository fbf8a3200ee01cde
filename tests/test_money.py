"""Exact money (:mod:`agentlog.usage.money`): costs are whole pico-dollars, so a
report's numbers do not depend on how its calls were grouped (single calls with
``--no-index``, 15-minute roll-up records through the index)."""

from __future__ import annotations

import json
import math
import random
import sqlite3
from decimal import Decimal

import pytest
from genai_prices.types import ModelPrice

from agentlog.usage.money import RECORDED_NANO_SQL, rate, recorded_nano, usd
from agentlog.usage.resolve import table_from
from test_cli import run
from test_usage import claude_line

# Recorded costs whose float sum depends on grouping: (a + b) + (c + d) is
# 0.026982500000000003 (prints 0.026983), ((a + b) + c) + d is 0.0269825 (0.026982).
GROUPED_APART = (0.00878718, 0.00037917, 0.00819414, 0.00962201)


def test_the_constructed_costs_did_differ_as_floats():
    a, b, c, d = GROUPED_APART
    assert round((a + b) + (c + d), 6) != round(((a + b) + c) + d, 6)


def _claude_home(tmp_path, costs_at):
    lines = []
    for n, (minute, cost) in enumerate(costs_at):
        usage = {"input_tokens": 10, "output_tokens": 5}
        line = claude_line(
            n, "claude-sonnet-4-5", usage, when=f"2026-11-02T10:{minute:02d}:00Z", costUSD=cost
        )
        line["sessionId"] = "recorded"
        lines.append(json.dumps(line))
    folder = tmp_path / "home/.claude/projects/-tmp-p"
    folder.mkdir(parents=True)
    (folder / "recorded.jsonl").write_text("\n".join(lines) + "\n")
    return {"HOME": str(tmp_path / "home"), "AGENTLOG_INDEX": str(tmp_path / "index.sqlite")}


@pytest.mark.parametrize("report", ["daily", "session", "model", "project", "agent", "blocks"])
def test_recorded_costs_summed_in_two_roll_ups_equal_the_per_call_sum(tmp_path, report):
    """Two calls in the 10:00 quarter hour, two in 10:15: the index sums (a+b) and
    (c+d) in SQL, ``--no-index`` adds one call after another; both print
    $0.026982 (26,982,500 nano-dollars, half to even)."""
    env = _claude_home(tmp_path, zip((0, 5, 20, 25), GROUPED_APART, strict=True))
    outputs = []
    for extra in ((), ("--no-index",)):
        code, out, err = run("usage", report, "--json", "-z", "UTC", "--since", "2026-11-01", *extra, env=env)
        assert code == 0, err
        outputs.append(json.loads(out))
    assert outputs[0] == outputs[1]
    rows = outputs[0].get("rows", outputs[0].get("blocks"))
    assert [(r["cost_usd"], r["cost_source"], r["calls"]) for r in rows] == [(0.026982, "recorded", 4)]


def _sql_nano(values):
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (n INTEGER, cost_usd REAL)")
    conn.executemany("INSERT INTO t VALUES (?, ?)", enumerate(values))
    sql = f"SELECT {RECORDED_NANO_SQL.format('cost_usd')} FROM t ORDER BY n"
    return [row[0] for row in conn.execute(sql)]


def test_sqlite_rounds_recorded_costs_as_python_does():
    rng = random.Random(7)
    values = [0.0, -0.0, 5e-10, -5e-10, 1.5e-9, 2.5e-9, -2.5e-9, 0.0269825, 1e-3, 9_007_199.0, 9_007_200.0]
    values += [math.inf, -math.inf, 1e300, -1e300]
    values += [rng.uniform(-2, 2) for _ in range(2000)]
    values += [round(rng.uniform(0, 1), rng.randint(6, 12)) for _ in range(2000)]
    values += [(rng.randint(0, 10**7) + 0.5) / 1e9 for _ in range(2000)]  # near a half nano-dollar
    assert [int(v) for v in _sql_nano(values)] == [recorded_nano(v) for v in values]
    assert [recorded_nano(v) for v in (5e-10, -5e-10, 0.0269825, 9_007_200.0, math.inf, math.nan)] == [
        1,
        -1,
        26_982_500,
        0,
        0,
        0,
    ]


def test_rates_are_exact_pico_dollars_per_token():
    assert rate(Decimal("3"), 10**6) == 3_000_000  # $3 / MTok
    assert rate(Decimal("0.003625"), 10**6) == 3_625  # DeepSeek's finest table price
    assert rate(Decimal("10"), 1000) == 10_000_000_000  # $10 per 1,000 web searches
    assert rate(Decimal("1.0399999999999998"), 10**6) == 1_040_000  # a float artefact in the table
    assert rate(Decimal("0.0000005"), 10**6) == 0 and rate(Decimal("0.0000015"), 10**6) == 2  # half to even
    table = table_from("m", "p", ModelPrice(input_mtok=Decimal("0.003625"), output_mtok=Decimal("15")))
    ((_, rates),) = table.tiers
    assert (rates.input, rates.cache_read, rates.cache_write_1h, rates.output) == (
        3_625,
        3_625,
        3_625,
        15_000_000,
    )


def test_usd_rounds_half_to_even_at_the_micro_dollar():
    assert [usd(n) for n in (26_982_500_000, 26_983_500_000, 1, 500_000, 1_500_000, -1_500_000)] == [
        0.026982,
        0.026984,
        0.0,
        0.0,
        2e-06,
        -2e-06,
    ]
    assert usd(123_456_789_012_345_678_901) == 123456789.012346
