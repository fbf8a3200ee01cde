"""Usage and cost (issue 4): accounting, pricing, reports, the fast path.

Expected numbers come from outside agentlog: the issue's ccusage figures for the
Claude fixtures and the Codex 28-turn fixture, genai-prices' own ``calc_price``
(one call per whole request), and prices per MTok from Anthropic's/OpenAI's
tables as genai-prices 0.2.3 ships them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import msgspec
import pytest
from genai_prices import Usage as GUsage
from genai_prices import calc_price

from agentlog.adapters import get_adapter
from agentlog.errors import UsageError
from agentlog.load import discover_sources, load_sessions
from agentlog.model import Usage
from agentlog.usage import Call, Pricer, calls_from_sessions
from agentlog.usage.models import candidates, normalize
from agentlog.usage.pricing import PricedCall
from agentlog.usage.report import build_blocks, build_rows, group_key, zone
from agentlog.usage.scan import scan_calls
from conftest import FIXTURES, SHARED, shared_fixture
from test_cli import run

SONNET4 = "claude-sonnet-4-20250514"
TOOLS = "v1.0.17-real-session-with-tools.jsonl"
SIDECHAIN = "v1.0.108-inline-sidechain-task.jsonl"
CODEX28 = "v0.104-desktop-28turns-real-sanitized.jsonl"


def claude_home(tmp_path: Path, *files: Path) -> dict[str, str]:
    project = tmp_path / ".claude" / "projects" / "-home-me-proj"
    project.mkdir(parents=True)
    for f in files:
        shutil.copy(f, project / f.name)
    return {"HOME": str(tmp_path)}


def claude_line(n: int, model: str, usage: dict, when: str = "2026-11-02T10:00:00Z", **extra) -> dict:
    """One Claude Code assistant line of session ``s<n>`` (message ``msg_<n>``)."""
    message = {"id": f"msg_{n}", "role": "assistant", "model": model, "usage": usage}
    return {
        "type": "assistant",
        "sessionId": f"s{n}",
        "uuid": f"u{n}",
        "timestamp": when,
        "message": message,
        **extra,
    }


def usage_json(env: dict[str, str], *args: str) -> dict:
    code, out, err = run("usage", *args, "--json", env=env)
    assert code == 0, err
    return json.loads(out)


# -- acceptance: Claude fixtures laid out as a Claude home -----------------------


@pytest.mark.parametrize(
    ("name", "buckets", "cost"),
    [
        (TOOLS, (91, 2_266, 16_072, 503_769), 0.245664),
        (SIDECHAIN, (129, 3_629, 47_747, 324_259), 0.331151),
    ],
)
def test_claude_fixture_matches_ccusage(tmp_path, name, buckets, cost):
    env = claude_home(tmp_path, shared_fixture(f"claude-code/{name}"))
    totals = usage_json(env, "daily")["totals"]
    got = (
        totals["input_tokens"],
        totals["output_tokens"],
        totals["cache_write_5m_tokens"],
        totals["cache_read_tokens"],
    )
    assert got == buckets
    assert totals["cache_write_1h_tokens"] == 0
    assert totals["cost_source"] == "estimated"
    assert abs(totals["cost_usd"] - cost) <= 0.000001
    assert totals["models"] == [SONNET4]


def test_sidechain_rolls_up_to_parent_session_and_counts_once(tmp_path):
    env = claude_home(tmp_path, shared_fixture(f"claude-code/{SIDECHAIN}"))
    rolled = usage_json(env, "session")
    assert len(rolled["rows"]) == 1
    assert rolled["rows"][0]["key"] == "claude_code:5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
    assert len(rolled["rows"][0]["sessions"]) == 3  # the main session + 2 inline sidechains
    apart = usage_json(env, "session", "--no-rollup")
    assert len(apart["rows"]) == 3
    assert sum(r["total_tokens"] for r in apart["rows"]) == rolled["totals"]["total_tokens"] == 375_764


# -- acceptance: Codex 28-turn fixture ----------------------------------------------


def test_codex_28_turns_tokens_and_genai_prices_cost(tmp_path):
    sessions = tmp_path / ".codex" / "sessions" / "2026" / "02" / "23"
    sessions.mkdir(parents=True)
    shutil.copy(shared_fixture(f"codex/{CODEX28}"), sessions / f"rollout-2026-02-23T12-41-04-{'x' * 8}.jsonl")
    totals = usage_json({"HOME": str(tmp_path)}, "model", "--agent", "codex")["totals"]
    assert (totals["input_tokens"], totals["cache_read_tokens"], totals["output_tokens"]) == (
        99_460,
        1_651_968,
        14_600,
    )
    assert totals["reasoning_tokens"] == 4_293
    # genai-prices prices the whole request at once; gpt-5.3-codex has no context tier, so
    # the sum of the per-call costs equals one calc_price over the totals.
    expected = calc_price(
        GUsage(input_tokens=99_460 + 1_651_968, cache_read_tokens=1_651_968, output_tokens=14_600),
        "gpt-5.3-codex",
        provider_id="openai",
        genai_request_timestamp=datetime(2026, 2, 23, tzinfo=UTC),
    ).total_price
    assert expected == Decimal("0.6675494")
    assert abs(totals["cost_usd"] - float(expected)) <= 0.000001
    assert totals["models"] == ["gpt-5.3-codex"]


def codex_event(when: str, payload: dict) -> dict:
    return {"timestamp": when, "type": "event_msg", "payload": payload}


def codex_settings(when: str, tier: str) -> dict:
    """A ``thread_settings_applied`` event (shape: the 0.146 shape catalog fixture)."""
    settings = {"cwd": "/home/me/proj", "model": "gpt-5.3-codex", "model_provider_id": "openai"}
    return codex_event(
        when, {"type": "thread_settings_applied", "thread_settings": {**settings, "service_tier": tier}}
    )


def codex_total(when: str, inp: int, cached: int, out: int) -> dict:
    """A ``token_count`` event with the thread's cumulative totals."""
    total = {
        "input_tokens": inp,
        "cached_input_tokens": cached,
        "output_tokens": out,
        "reasoning_output_tokens": 0,
    }
    return codex_event(when, {"type": "token_count", "info": {"total_token_usage": total}})


def test_codex_thread_service_tier_prices_later_calls_until_changed(tmp_path):
    day = "2026-11-02T10:0"
    lines = [
        {"timestamp": f"{day}0:00Z", "type": "session_meta", "payload": {"id": "t1", "cwd": "/home/me/proj"}},
        {
            "timestamp": f"{day}0:01Z",
            "type": "turn_context",
            "payload": {"cwd": "/home/me/proj", "model": "gpt-5.3-codex"},
        },
        codex_settings(f"{day}0:02Z", "priority"),
        codex_event(f"{day}0:03Z", {"type": "user_message", "message": "fix it"}),
        codex_total(f"{day}0:04Z", 100_000, 60_000, 2_000),
        codex_total(f"{day}0:05Z", 150_000, 100_000, 3_000),
        codex_settings(f"{day}1:00Z", "default"),
        codex_event(f"{day}1:01Z", {"type": "user_message", "message": "and this"}),
        codex_total(f"{day}1:02Z", 180_000, 120_000, 3_500),
    ]
    folder = tmp_path / ".codex" / "sessions" / "2026" / "11" / "02"
    folder.mkdir(parents=True)
    (folder / "rollout-2026-11-02T10-00-00-t1.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    env = {"HOME": str(tmp_path)}

    calls = calls_from_sessions(load_sessions(["codex"], env, tmp_path))
    assert [c.service_tier for c in calls] == ["priority", "priority", None]

    def price(inp: int, cached: int, out: int, tier: str | None) -> float:
        return float(
            calc_price(
                GUsage(input_tokens=inp, cache_read_tokens=cached, output_tokens=out),
                "gpt-5.3-codex",
                provider_id="openai",
                genai_request_timestamp=datetime(2026, 11, 2, 10, tzinfo=UTC),
                price_context={"service_tier": tier} if tier else None,
            ).total_price
        )

    # priority: in 3.5, cached 0.35, out 28 per million; standard: 1.75, 0.175, 14
    priority, standard = price(150_000, 100_000, 3_000, "priority"), price(30_000, 20_000, 500, None)
    assert (priority, standard) == (pytest.approx(0.294), pytest.approx(0.0280))
    for mode in ((), ("--no-index",)):
        totals = usage_json(env, "daily", "--agent", "codex", *mode)["totals"]
        assert (totals["input_tokens"], totals["cache_read_tokens"], totals["output_tokens"]) == (
            60_000,
            120_000,
            3_500,
        )
        assert totals["cost_usd"] == pytest.approx(priority + standard, abs=1e-9)


def test_no_index_reads_the_remembered_roots_too(tmp_path):
    """``usage --no-index`` left out the logs of the ``--root`` folders the index
    remembers, which ``usage`` counts: two totals for one question (tester14
    finding 18)."""
    home, root = tmp_path / "home", tmp_path / "R"
    (home / ".claude/projects/-p").mkdir(parents=True)
    root.mkdir()
    (home / ".claude/projects/-p/s1.jsonl").write_text(json.dumps(claude_line(1, "claude-sonnet-4-5", {"input_tokens": 100})) + "\n")
    (root / "s2.jsonl").write_text(json.dumps(claude_line(2, "claude-sonnet-4-5", {"input_tokens": 2000})) + "\n")
    env = {"HOME": str(home), "AGENTLOG_INDEX": str(tmp_path / "index.sqlite")}
    assert run("--root", str(root), "index", env=env)[0] == 0
    for mode in ((), ("--no-index",)):
        assert usage_json(env, "daily", *mode)["totals"]["input_tokens"] == 2100, mode


def test_claude_fast_mode_is_priced_at_genai_prices_fast_rates(tmp_path):
    # claude-opus-5 (genai-prices 0.2.3): standard in 5 / out 25; speed "fast" in 10 / out 50 per million
    usage = {"input_tokens": 1_000_000, "output_tokens": 100_000}
    lines = [
        claude_line(1, "claude-opus-5", usage),
        claude_line(2, "claude-opus-5", {**usage, "speed": "fast"}),
    ]
    src = tmp_path / "fast.jsonl"
    src.write_text("".join(json.dumps(x) + "\n" for x in lines))
    env = claude_home(tmp_path, src)
    for mode in ((), ("--no-index",)):
        assert usage_json(env, "daily", *mode)["totals"]["cost_usd"] == pytest.approx((5 + 2.5) + (10 + 5.0))


def test_claude_tier_and_fast_speed_are_recorded_but_priced_at_the_table(tmp_path):
    usage = {"input_tokens": 1_000, "output_tokens": 100, "cache_read_input_tokens": 10_000}
    lines = [
        claude_line(1, SONNET4, {**usage, "service_tier": "standard"}),
        claude_line(2, SONNET4, {**usage, "service_tier": "priority"}),
        claude_line(3, SONNET4, {**usage, "service_tier": "standard", "speed": "fast"}),
    ]
    src = tmp_path / "tiers.jsonl"
    src.write_text("".join(json.dumps(x) + "\n" for x in lines))
    env = claude_home(tmp_path, src)
    full = sorted(
        calls_from_sessions(load_sessions(["claude_code"], env, tmp_path)), key=lambda c: c.session_key
    )
    assert [c.service_tier for c in full] == [None, "priority", "fast"]
    refs = [ref for _, ref in discover_sources([get_adapter("claude_code")], env, tmp_path)]
    assert sorted(scan_calls(refs), key=lambda c: c.session_key) == full
    # sonnet 4: in 3, cache read 0.3, out 15 per million, whatever the tier
    each = (1_000 * 3 + 10_000 * 0.3 + 100 * 15) / 1e6
    for mode in ((), ("--no-index",)):
        assert usage_json(env, "daily", *mode)["totals"]["cost_usd"] == pytest.approx(3 * each, abs=1e-9)


def test_codex_limits_report_latest_windows(tmp_path):
    sessions = tmp_path / ".codex" / "sessions"
    sessions.mkdir(parents=True)
    shutil.copy(shared_fixture(f"codex/{CODEX28}"), sessions / f"rollout-2026-02-23T12-41-04-{'x' * 8}.jsonl")
    latest = usage_json({"HOME": str(tmp_path)}, "limits")["latest"]
    # last token_count of the file: primary 6% of 300 min, resets 1771864834; secondary 2%
    assert latest["primary"] == {
        "used_percent": 6.0,
        "window_minutes": 300,
        "resets_at": "2026-02-23T16:40:34Z",
    }
    assert latest["secondary"]["used_percent"] == 2.0
    assert latest["secondary"]["resets_at"] == "2026-03-01T09:01:42Z"
    assert latest["observed_at"] == "2026-02-23T11:46:43.614000Z"


# -- pricing rules ----------------------------------------------------------------


def call(model: str, when: datetime | None = None, **tokens: int) -> Call:
    return Call(
        session_key="t:s",
        agent="t",
        model=model,
        timestamp=when or datetime(2026, 1, 5, 12, tzinfo=UTC),
        usage=Usage(**tokens),
        root_key="t:s",
    )


def test_long_context_tier_prices_the_whole_call_above_200k():
    """215,010 prompt tokens (10 input + 200,000 read + 15,000 written): all at the
    long rate; exactly 200,000 (195,000 read + 5,000 written): all at base."""
    # claude-sonnet-4-5: base in 3 / out 15 / 5m write 3.75 / read 0.30; > 200K: 6 / 22.50 / 7.50 / 0.60
    pricer = Pricer()
    long = pricer.price(
        call(
            "claude-sonnet-4-5",
            input_tokens=10,
            cache_read_tokens=200_000,
            cache_write_5m_tokens=15_000,
            output_tokens=1_000,
        )
    )
    assert long.cost_usd == pytest.approx(
        (10 * 6 + 200_000 * 0.6 + 15_000 * 7.5 + 1_000 * 22.5) / 1e6, abs=1e-12
    )
    at = pricer.price(
        call(
            "claude-sonnet-4-5",
            input_tokens=0,
            cache_read_tokens=195_000,
            cache_write_5m_tokens=5_000,
            output_tokens=1_000,
        )
    )
    assert at.cost_usd == pytest.approx((195_000 * 0.3 + 5_000 * 3.75 + 1_000 * 15) / 1e6, abs=1e-12)
    # and genai-prices agrees, given its inclusive input
    for pc, (inp, read, write) in ((long, (10, 200_000, 15_000)), (at, (0, 195_000, 5_000))):
        ref = calc_price(
            GUsage(
                input_tokens=inp + read + write,
                cache_read_tokens=read,
                cache_write_tokens=write,
                output_tokens=1_000,
            ),
            "claude-sonnet-4-5",
            provider_id="anthropic",
            genai_request_timestamp=datetime(2026, 1, 5, tzinfo=UTC),
        ).total_price
        assert pc.cost_usd == pytest.approx(float(ref), abs=1e-12)


def test_one_hour_writes_web_search_and_reasoning_once():
    # claude-opus-4-1: in 15, out 75, read 1.5, 5m write 18.75, 1h write 30, $10 per 1k searches
    pc = Pricer().price(
        call(
            "claude-opus-4-1",
            input_tokens=1_000,
            cache_write_5m_tokens=2_000,
            cache_write_1h_tokens=3_000,
            output_tokens=4_000,
            reasoning_tokens=3_000,
            web_search_requests=2,
        )
    )
    expected = (1_000 * 15 + 2_000 * 18.75 + 3_000 * 30 + 4_000 * 75) / 1e6 + 2 * 10 / 1000
    assert pc.cost_usd == pytest.approx(expected, abs=1e-12)


def test_price_in_force_at_the_call_timestamp():
    # claude-opus-4-6 had a > 200K surcharge until 2026-03-12 (genai-prices: removed 2026-03-13)
    before = Pricer().price(
        call("claude-opus-4-6", datetime(2026, 3, 12, 23, tzinfo=UTC), input_tokens=250_000)
    )
    after = Pricer().price(
        call("claude-opus-4-6", datetime(2026, 3, 13, 1, tzinfo=UTC), input_tokens=250_000)
    )
    assert before.cost_usd == pytest.approx(250_000 * 10 / 1e6)
    assert after.cost_usd == pytest.approx(250_000 * 5 / 1e6)


def test_priority_tier_variant():
    # gpt-5.3-codex: standard in 1.75 / out 14; priority (from 2026-10-12) in 3.5 / out 28
    c = call(
        "gpt-5.3-codex", datetime(2026, 11, 1, tzinfo=UTC), input_tokens=1_000_000, output_tokens=1_000_000
    )
    assert Pricer().price(c).cost_usd == pytest.approx(1.75 + 14)
    fast = msgspec.structs.replace(c, usage=msgspec.structs.replace(c.usage, service_tier="priority"))
    assert Pricer().price(fast).cost_usd == pytest.approx(3.5 + 28)


def test_unknown_model_is_unpriced_never_zero(tmp_path):
    usage = {"input_tokens": 7, "output_tokens": 5, "cache_read_input_tokens": 100}
    line = claude_line(1, "claude-mystery-9", usage, cwd="/home/me/proj")
    src = tmp_path / "s1.jsonl"
    src.write_text(json.dumps(line) + "\n")
    data = usage_json(claude_home(tmp_path, src), "daily")
    row = data["rows"][0]
    assert (row["input_tokens"], row["output_tokens"], row["cache_read_tokens"]) == (7, 5, 100)
    assert row["cost_usd"] is None and row["cost_source"] == "unpriced"
    assert any("claude-mystery-9" in w for w in data["warnings"])
    code, out, err = run("usage", env=claude_home(tmp_path / "b", src))
    assert code == 0 and "claude-mystery-9" in err and "$0" not in out


def test_override_file_prices_models_the_snapshot_lacks(tmp_path):
    prices = tmp_path / "prices.toml"
    prices.write_text(
        '[models."claude-mystery-9"]\ninput_mtok = 2.0\noutput_mtok = 10.0\ncache_read_mtok = 0.2\n'
        '[[models."claude-mystery-9".tiers]]\nstart = 100\ninput_mtok = 4.0\noutput_mtok = 20.0\n'
        "cache_read_mtok = 0.4\n"
    )
    pricer = Pricer(prices)
    small = pricer.price(call("claude-mystery-9", input_tokens=50, cache_read_tokens=50, output_tokens=10))
    big = pricer.price(call("claude-mystery-9", input_tokens=50, cache_read_tokens=51, output_tokens=10))
    assert small.cost_usd == pytest.approx((50 * 2 + 50 * 0.2 + 10 * 10) / 1e6)
    assert big.cost_usd == pytest.approx((50 * 4 + 51 * 0.4 + 10 * 20) / 1e6)
    assert small.cost_source == "estimated" and small.priced_as == "claude-mystery-9"
    assert not pricer.unpriced


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("input_mtok = nan", "input_mtok must be a number from 0 to 1,000,000"),
        ("input_mtok = inf", "input_mtok must be a number from 0 to 1,000,000"),
        ("input_mtok = 1e308", "input_mtok must be a number from 0 to 1,000,000"),
        ("input_mtok = -1", "input_mtok must be a number from 0 to 1,000,000"),
        ('input_mtok = "3"', "input_mtok must be a number from 0 to 1,000,000"),
        ("input_mtok = 1\ntiers = 5", "tiers must be a list of tables"),
        ("input_mtok = 1\ntiers = [{input_mtok = 2}]", "tiers needs a whole start >= 0"),
        ("input_mtok = 1\ntiers = [{start = 1.5, input_mtok = 2}]", "tiers needs a whole start >= 0"),
        ("input = 3", "models.claude-mystery-9: unknown key 'input' \\(known: input_mtok, "),
        ("input_mtok = 1\ntiers = [{start = 9, output = 2}]", "models.claude-mystery-9.tiers: unknown key 'output'"),
    ],
)
def test_a_bad_price_file_value_is_a_usage_error(tmp_path, body, message):
    """NaN crashed usage (exit 70), inf overflowed, 1e308 printed a 300-digit cost."""
    prices = tmp_path / "prices.toml"
    prices.write_text(f'[models."claude-mystery-9"]\n{body}\n')
    with pytest.raises(UsageError, match=message):
        Pricer(prices).price(call("claude-mystery-9", input_tokens=5))


def test_a_price_file_whose_models_is_not_a_table_is_a_usage_error(tmp_path):
    """``models = 3`` was an internal error (exit 70: 'int' object has no attribute 'items')."""
    prices = tmp_path / "prices.toml"
    prices.write_text("models = 3\n")
    with pytest.raises(UsageError, match=r"models must be a table of \[models\.\"<model id>\"\] entries"):
        Pricer(prices).price(call("claude-mystery-9", input_tokens=5))


def test_cost_modes_on_recorded_costs():
    path = FIXTURES / "claude_code" / "usage-costUSD-minimal.jsonl"
    calls = scan_calls([next(iter(_refs(path)))])
    pricer = Pricer()
    auto = [pricer.price(c, "auto") for c in calls]
    assert [p.cost_source for p in auto] == ["recorded"] * 3
    assert sum(p.cost_usd for p in auto) == pytest.approx(0.12 + 0.34 + 0.56)
    calc = [pricer.price(c, "calculate") for c in calls]
    sonnet = (100 * 3 + 50 * 15 + 25 * 3.75 + 10 * 0.3 + 300 * 3 + 125 * 15 + 40 * 0.3) / 1e6
    opus = (200 * 15 + 75 * 75 + 50 * 18.75 + 20 * 1.5) / 1e6
    assert sum(p.cost_usd for p in calc) == pytest.approx(sonnet + opus)
    assert {p.cost_source for p in calc} == {"estimated"}
    recorded = [pricer.price(call(SONNET4, input_tokens=5), "recorded")]
    assert recorded[0].cost_usd is None


def _refs(path: Path):
    from agentlog.adapters import SourceRef

    yield SourceRef(agent="claude_code", path=str(path))


@pytest.mark.parametrize(
    ("raw", "model", "provider"),
    [
        ("claude-sonnet-4-20250514", "claude-sonnet-4-20250514", "anthropic"),
        ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5", "anthropic"),
        ("openrouter/anthropic/claude-opus-4.1", "claude-opus-4.1", "anthropic"),
        ("claude-sonnet-4@20250514", "claude-sonnet-4-20250514", "anthropic"),
        ("vertex_ai/claude-opus-4@20250514", "claude-opus-4-20250514", "anthropic"),
        ("claude-sonnet-4-5@latest", "claude-sonnet-4-5", "anthropic"),
        ("us.anthropic.claude-sonnet-4-20250514-v1:0", "claude-sonnet-4-20250514", "anthropic"),
        ("bedrock/anthropic.claude-3-haiku-20240307-v1:0", "claude-3-haiku-20240307", "anthropic"),
        (
            "arn:aws:bedrock:us-east-1:123456789012:inference-profile/eu.anthropic.claude-3-5-sonnet-20240620-v1:0",
            "claude-3-5-sonnet-20240620",
            "anthropic",
        ),
        ("openai/gpt-5.3-codex", "gpt-5.3-codex", "openai"),
        ("openai:codex-auto-review", "gpt-5.6-luna", "openai"),
        ("google/gemini-2.5-pro", "gemini-2.5-pro", "google"),
        ("GPT-5.3-Codex ", "gpt-5.3-codex", None),
    ],
)
def test_model_id_normalisation(raw, model, provider):
    assert normalize(raw, datetime(2026, 11, 1, tzinfo=UTC)) == (model, provider)


def test_alias_follows_the_call_date_and_dated_suffix_fallback():
    assert normalize("codex-auto-review", datetime(2026, 6, 1, tzinfo=UTC))[0] == "gpt-5.4"
    assert normalize("codex-auto-review", datetime(2026, 8, 1, tzinfo=UTC))[0] == "gpt-5.6-luna"
    assert candidates("gpt-5-2025-08-07") == ["gpt-5-2025-08-07", "gpt-5"]
    assert candidates("claude-opus-4-1") == ["claude-opus-4-1"]
    assert (
        Pricer().price(call("us.anthropic.claude-sonnet-4-20250514-v1:0", input_tokens=1_000_000)).cost_usd
        == 3.0
    )


# -- reports ----------------------------------------------------------------------


def test_timezone_moves_2330_utc_into_the_next_day(tmp_path):
    stamp = datetime(2026, 11, 29, 23, 30, tzinfo=UTC)
    pc = PricedCall(call=call(SONNET4, stamp, input_tokens=1), cost=None, cost_source="unpriced")
    assert group_key(pc, "daily", zone("Asia/Tokyo")) == "2026-11-30"
    assert group_key(pc, "daily", zone("UTC")) == "2026-11-29"
    line = claude_line(2, SONNET4, {"input_tokens": 3}, "2026-11-29T23:30:00Z")
    src = tmp_path / "s2.jsonl"
    src.write_text(json.dumps(line) + "\n")
    env = claude_home(tmp_path, src)
    assert [r["key"] for r in usage_json(env, "daily", "--timezone", "Asia/Tokyo")["rows"]] == ["2026-11-30"]
    assert [r["key"] for r in usage_json(env, "daily", "-z", "UTC")["rows"]] == ["2026-11-29"]
    assert usage_json(env, "daily", "-z", "Asia/Tokyo", "--until", "2026-11-29")["rows"] == []
    assert usage_json(env, "monthly", "-z", "Asia/Tokyo")["rows"][0]["key"] == "2026-11"
    assert usage_json(env, "weekly", "-z", "Asia/Tokyo")["rows"][0]["key"] == "2026-11-30"  # a Monday
    code, _, err = run("usage", "-z", "Mars/Olympus", env=env)
    assert code != 0 and "Mars/Olympus" in err


def test_blocks_five_hour_windows_and_burn_rate():
    times = [
        datetime(2026, 5, 1, h, m, tzinfo=UTC) for h, m in ((10, 15), (11, 15), (14, 59), (15, 0), (15, 30))
    ]
    priced = [
        PricedCall(call=call(SONNET4, t, output_tokens=600), cost=500_000_000_000, cost_source="estimated")
        for t in times
    ]
    now = datetime(2026, 5, 1, 16, 0, tzinfo=UTC)
    blocks = build_blocks(priced, now)
    assert [(b.start.hour, b.totals.calls, b.active) for b in blocks] == [(10, 3, False), (15, 2, True)]
    burn = blocks[1].as_dict(now)["burn_rate"]
    assert burn["tokens_per_minute"] == 40.0  # 1,200 tokens over 30 minutes
    assert burn["cost_usd_per_hour"] == 2.0
    assert burn["remaining_minutes"] == 240
    assert burn["projected_total_tokens"] == 1_200 + 40 * 240


def test_breakdown_and_totals_shape(tmp_path):
    env = claude_home(tmp_path, shared_fixture(f"claude-code/{TOOLS}"))
    data = usage_json(env, "project", "--breakdown")
    row = data["rows"][0]
    keys = {
        "input_tokens",
        "cache_read_tokens",
        "cache_write_5m_tokens",
        "cache_write_1h_tokens",
        "output_tokens",
        "reasoning_tokens",
        "total_tokens",
        "cost_usd",
        "cost_source",
        "models",
    }
    assert keys <= set(row) and keys <= set(data["totals"])
    assert [b["model"] for b in row["breakdown"]] == [SONNET4]
    assert usage_json(env, "agent", "--no-cost")["totals"].get("cost_usd", "absent") == "absent"


def test_tables_fit_80_columns(tmp_path):
    env = claude_home(
        tmp_path, shared_fixture(f"claude-code/{TOOLS}"), shared_fixture(f"claude-code/{SIDECHAIN}")
    )
    for report in ("daily", "session", "model", "blocks"):
        code, out, _ = run("usage", report, "--breakdown", env={**env, "COLUMNS": "80"})
        assert code == 0
        assert max(len(line) for line in out.splitlines()) <= 80, report


def test_a_narrow_table_shrinks_its_labels_never_its_figures(tmp_path):
    """On a terminal too narrow for the table, the label column is cut or wrapped;
    every figure, and the cost above all, is printed whole."""
    env = claude_home(
        tmp_path, shared_fixture(f"claude-code/{TOOLS}"), shared_fixture(f"claude-code/{SIDECHAIN}")
    )
    data = usage_json(env, "session")
    costs = [f"${row['cost_usd']:,.2f}" for row in data["rows"]] + [f"${data['totals']['cost_usd']:,.2f}"]
    for columns in ("60", "50"):
        code, out, _ = run("usage", "session", env={**env, "COLUMNS": columns})
        assert code == 0 and "…" not in "".join(line[-30:] for line in out.splitlines())
        shown = [line.split()[-1] for line in out.splitlines() if line.rstrip().endswith(tuple("0123456789*"))]
        assert [c.rstrip("*") for c in shown if c.startswith("$")] == costs, columns


# -- the fast path equals the full model ----------------------------------------------


def test_fast_scanner_equals_full_model(tmp_path):
    home = _claude_home(tmp_path)
    env = {"HOME": str(home)}

    def key(c: Call):
        return (c.session_key, c.timestamp or datetime.min.replace(tzinfo=UTC), c.usage.total_tokens)

    full = sorted(calls_from_sessions(load_sessions(["claude_code"], env, home)), key=key)
    refs = [ref for _, ref in discover_sources([get_adapter("claude_code")], env, home)]
    fast = sorted(scan_calls(refs), key=key)
    assert len(full) > 40
    assert fast == full


def test_rows_group_by_session_root():
    a = call(SONNET4, input_tokens=1)
    child = Call(
        session_key="t:child",
        agent="t",
        model=SONNET4,
        timestamp=a.timestamp,
        usage=Usage(input_tokens=2),
        parent_key="t:s",
        root_key="t:s",
    )
    priced = [PricedCall(call=c, cost=None, cost_source="unpriced") for c in (a, child)]
    rows, total = build_rows(priced, "session", None)
    assert [(r.key, r.totals.tokens["input_tokens"]) for r in rows] == [("t:s", 3)]
    rows, _ = build_rows(priced, "session", None, rollup=False)
    assert sorted(r.key for r in rows) == ["t:child", "t:s"]
    assert total.tokens["input_tokens"] == 3
    assert date(2026, 1, 5).isoformat() == group_key(priced[0], "daily", zone("UTC"))


def test_read_blocks_whole_lines_long_lines_and_half_written_tail(tmp_path):
    from agentlog.readers import read_blocks

    lines = [b'{"a":%d}' % i for i in range(50)] + [b'{"long":"' + b"x" * 100 + b'"}']
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"\n".join(lines) + b'\n{"half":')
    got = b"".join(block[:end] for _, block, end in read_blocks(path, size=16))
    assert got == b"\n".join(lines) + b"\n"
    offsets = [off for off, _, _ in read_blocks(path, size=16)]
    assert offsets == sorted(offsets) and offsets[0] == 0
    path.write_bytes(b'{"a":1}\n{"b":2}')  # complete last line without a newline
    assert b"".join(b[:e] for _, b, e in read_blocks(path, size=4)) == b'{"a":1}\n{"b":2}'


def test_prices_update_keeps_a_loadable_table_and_usage_uses_it(tmp_path):
    from agentlog.errors import AgentlogError
    from agentlog.usage.snapshot import load_snapshot, update_prices

    table = [
        {
            "id": "anthropic",
            "name": "Anthropic",
            "api_pattern": "https://api\\.anthropic\\.com",
            "model_match": {"contains": "claude"},
            "models": [
                {
                    "id": "claude-test-1",
                    "match": {"equals": "claude-test-1"},
                    "prices": {"input_mtok": 7, "output_mtok": 11},
                }
            ],
        }
    ]
    path = tmp_path / "prices.json"
    assert update_prices(path, fetch=lambda url: json.dumps(table).encode()) == 1
    pricer = Pricer(snapshot_path=path)
    assert (
        pricer.price(call("claude-test-1", input_tokens=1_000_000, output_tokens=1_000_000)).cost_usd == 18.0
    )
    assert pricer.price(call(SONNET4, input_tokens=1)).cost_source == "unpriced"  # not in the fetched table
    with pytest.raises(AgentlogError):
        update_prices(path, fetch=lambda url: b"<html>")
    assert json.loads(path.read_bytes()) == table  # a bad download keeps the old copy
    assert load_snapshot(tmp_path / "missing.json").find_provider_model(SONNET4, None, "anthropic", None)


def test_prices_show(tmp_path):
    code, out, _ = run("prices", "show", "claude-sonnet-4-5", "--json", env={"HOME": str(tmp_path)})
    assert code == 0
    data = json.loads(out)
    assert data["priced_as"] == "claude-sonnet-4-5"
    assert [t["above_prompt_tokens"] for t in data["tiers"]] == [None, 200_000]
    assert data["tiers"][1]["input_mtok"] == 6.0 and data["tiers"][0]["cache_write_1h_mtok"] == 6.0
    code, _, err = run("prices", "show", "no-such-model", env={"HOME": str(tmp_path)})
    assert code == 1 and "no-such-model" in err


def test_prices_show_refuses_an_unknown_tier_naming_the_valid_ones(tmp_path):
    env = {"HOME": str(tmp_path)}
    code, out, err = run("prices", "show", "claude-sonnet-4-5", "--tier", "bogus", env=env)
    assert (code, out) == (2, "")
    assert err == "agentlog: --tier bogus: not a service tier (one of default, fast, flex, priority, standard)\n"
    code, out, _ = run("prices", "show", "gpt-5", "--tier", "Priority", "--json", env=env)
    assert code == 0 and json.loads(out)["tiers"][0]["input_mtok"] == 2.5


def test_root_keys_follow_subagent_chains():
    from agentlog.usage.calls import root_keys
    from conftest import parse_files

    family = sorted((SHARED / "codex" / "subagent-family").glob("*.jsonl"))
    if not family:
        pytest.skip("shared fixture codex/subagent-family not present")
    roots = root_keys(parse_files("codex", *family))
    # guardian was spawned by worker, worker by root (session_meta parent_thread_id)
    assert roots == {
        "codex:codex-guardian": "codex:codex-root",
        "codex:codex-worker": "codex:codex-root",
        "codex:codex-root": "codex:codex-root",
    }


def test_fast_scan_survives_bad_lines(tmp_path):
    good = claude_line(3, SONNET4, {"input_tokens": 9})
    odd = {
        **good,
        "uuid": "u4",
        "message": {**good["message"], "id": "msg_4", "usage": {"input_tokens": "12", "output_tokens": 2.0}},
    }
    deep = b'{"message":{"usage":{}},"x":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    src = tmp_path / "s3.jsonl"
    src.write_bytes(
        b"\n".join([json.dumps(good).encode(), deep, b'{"usage": broken', json.dumps(odd).encode()]) + b"\n"
    )
    calls = scan_calls(list(_refs(src)))
    # the typed decoder rejects the string/float counts; the adapter's own reading
    # (non-numeric → 0, float → int) applies, as in the full model
    assert sorted(c.usage.input_tokens for c in calls) == [0, 9]
    assert sum(c.usage.output_tokens for c in calls) == 2
    from conftest import parse_files

    plain = tmp_path / "s4.jsonl"  # without the deep line (the full parser here predates its fix)
    plain.write_bytes(b"\n".join([json.dumps(good).encode(), json.dumps(odd).encode()]) + b"\n")
    full = list(calls_from_sessions(parse_files("claude_code", plain)))
    assert sorted((c.usage.input_tokens, c.usage.output_tokens) for c in full) == [(0, 2), (9, 0)]


def test_usage_json_names_the_zone_rejects_reversed_ranges_and_empty_totals_have_no_source(tmp_path):
    env = {"HOME": str(tmp_path), "TZ": "Europe/Berlin", "AGENTLOG_INDEX": str(tmp_path / "i.sqlite")}
    out = subprocess.run(
        [sys.executable, "-m", "agentlog", "usage", "--json"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
    )
    data = json.loads(out.stdout)
    assert data["timezone"] == "Europe/Berlin"
    assert usage_json(env, "daily", "-z", "local")["rows"] == []  # what the JSON says when it cannot name it
    assert data["rows"] == [] and data["totals"]["cost_source"] is None and data["totals"]["calls"] == 0
    code, _, err = run("usage", "--since", "2026-02-01", "--until", "2026-01-01", env=env)
    assert code == 2 and "--since 2026-02-01 is after --until 2026-01-01" in err
    code, _, err = run("usage", "--since", "2026-01-02", "--until", "2026-01-01", env=env)
    assert code == 2 and "leave an empty span (a date counts through its end)" in err
    assert run("usage", "--since", "2026-01-01", "--until", "2026-01-01", env=env)[0] == 0  # that one day


# -- the fast path in two processes equals one pass -----------------------------------


def _claude_home(tmp_path: Path) -> Path:
    project = tmp_path / ".claude" / "projects"
    shutil.copytree(FIXTURES / "claude_code", project / "-fixtures")
    for name in (TOOLS, SIDECHAIN):
        src = SHARED / "claude-code" / name
        if src.exists():
            shutil.copy(src, project / "-fixtures" / name)
    return tmp_path


def _scan_both_ways(refs, monkeypatch) -> tuple[tuple[list[Call], list], tuple[list[Call], list]]:
    """``(calls, errors)`` of one pass in this process, then with a worker process
    (every file of more than one line cut in two)."""
    from agentlog.usage import scan

    out = []
    for parallel_min in (1 << 62, 0):
        monkeypatch.setattr(scan, "PARALLEL_MIN", parallel_min)
        errors: list[tuple[str, str]] = []
        out.append((scan_calls(refs, errors), errors))
    return out[0], out[1]


def _straddling_copies(n: int) -> list[bytes]:
    """``n`` messages streamed as Claude Code writes them: several lines per
    message id (one per content block) whose usage grows, repeats or shrinks."""
    lines = []
    for i in range(n):
        for j, output in enumerate((1, 5, 5, 3, 9)[: 2 + i % 4]):
            usage = {"input_tokens": 10 + i, "output_tokens": output * (i + 1), "cache_read_input_tokens": i}
            line = claude_line(i, SONNET4, usage, when=f"2026-11-02T10:{i:02d}:{j:02d}Z", cwd=f"/p{i}")
            line |= {"sessionId": "s", "uuid": f"u{i}-{j}", "costUSD": 0.001 * j if i % 3 == 0 else None}
            lines.append(json.dumps(line).encode())
        lines.append(json.dumps({"type": "user", "uuid": f"q{i}", "message": {"role": "user"}}).encode())
    return lines


def _one_pass_and_every_cut(path: Path) -> None:
    """Cut ``path`` at each line start: the head scanned here joined with the tail
    scanned on its own equals one pass over the file."""
    from agentlog.usage import scan

    whole = scan._found(scan._read(scan._Piece(0, str(path))))
    data = path.read_bytes()
    for cut in [i + 1 for i, byte in enumerate(data[:-1]) if byte == ord("\n")]:
        tail = scan._Piece(0, str(path), cut)
        head = scan._read(scan._Piece(0, str(path), 0, cut))
        joined = scan._settle(head, scan._found(scan._read(tail)), tail)
        assert scan._found(joined) == whole, (path.name, cut)


@pytest.mark.parametrize(
    "name",
    sorted(str(p.relative_to(FIXTURES / "claude_code")) for p in (FIXTURES / "claude_code").rglob("*.jsonl")),
)
def test_a_file_cut_anywhere_joins_into_one_pass(name):
    _one_pass_and_every_cut(FIXTURES / "claude_code" / name)


def test_a_message_whose_copies_straddle_the_cut_counts_once_as_one_pass_does(tmp_path, monkeypatch):
    import re

    from agentlog.usage import scan

    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(_straddling_copies(11)) + b"\n")
    _one_pass_and_every_cut(path)
    data = path.read_bytes()
    monkeypatch.setattr(scan, "PARALLEL_MIN", 0)
    cut = scan._cut(str(path), len(data))
    ids = re.compile(rb'"id": "(msg_\d+)"')
    assert ids.findall(data[:cut])[-1] == ids.findall(data[cut:])[0]  # the worker path's cut splits a message
    single, parallel = _scan_both_ways(list(_refs(path)), monkeypatch)
    assert parallel == single
    calls = single[0]
    assert [c.usage.output_tokens for c in calls] == [5, 10, 15, 36, 25, 30, 35, 72, 45, 50, 55]
    # the full model's rule: a later copy replaces the call unless its usage is smaller
    # (an equal copy with another costUSD too), keeping the first copy's time
    assert [calls[i].usage.cost_usd for i in (0, 3, 6, 9)] == [0.001, 0.004, 0.002, 0.002]
    assert calls[6].timestamp == datetime(2026, 11, 2, 10, 6, tzinfo=UTC)
    full = list(
        calls_from_sessions(load_sessions(["claude_code"], {"HOME": str(tmp_path)}, tmp_path, [tmp_path]))
    )
    assert sorted((c.timestamp, c.usage) for c in full) == sorted((c.timestamp, c.usage) for c in calls)


def test_the_worker_path_equals_one_pass_on_every_fixture(tmp_path, monkeypatch):
    from agentlog import worker

    if not worker.available():
        pytest.skip("no worker process on this platform")
    home = _claude_home(tmp_path)
    env = {"HOME": str(home)}
    refs = [ref for _, ref in discover_sources([get_adapter("claude_code")], env, home)]
    single, parallel = _scan_both_ways(refs, monkeypatch)
    assert len(single[0]) > 40
    assert parallel == single


def test_bad_lines_a_half_written_tail_and_unreadable_files_in_the_worker_path(tmp_path, monkeypatch):
    good = _straddling_copies(6)
    deep = b'{"message":{"usage":{}},"x":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    odd = claude_line(7, SONNET4, {"input_tokens": "12", "output_tokens": 2.0})
    lines = [*good[:8], b'{"usage": broken', deep, *good[8:], json.dumps(odd).encode()]
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"\n".join(lines) + b'\n{"type":"assistant","message":{"usage":{"input_tokens":')
    folder = tmp_path / "folder.jsonl"
    folder.mkdir()
    paths = [tmp_path / "missing.jsonl", src, folder, src]
    refs = [next(iter(_refs(p))) for p in paths]
    single, parallel = _scan_both_ways(refs, monkeypatch)
    assert parallel == single
    calls, errors = single
    assert [c.usage.input_tokens for c in calls] == [10, 11, 12, 13, 14, 15, 0]  # a repeated file counts once
    assert [(path, error.split(":")[0]) for path, error in errors] == [
        (str(paths[0]), "FileNotFoundError"),
        (str(folder), "IsADirectoryError"),
    ]


def test_read_blocks_of_a_range_and_lines_at_offsets(tmp_path):
    from agentlog.readers import line_start_after, read_blocks, read_lines_at

    path = tmp_path / "f.jsonl"
    path.write_bytes(b'{"a":1}\n{"bb":22}\r\n{"c":3}')
    assert [line_start_after(path, pos) for pos in (0, 1, 8, 9, 19, 20, 99)] == [0, 8, 8, 19, 19, 26, 26]
    assert [(o, b[:e]) for o, b, e in read_blocks(path, size=4, start=8, stop=19)] == [(8, b'{"bb":22}\r\n')]
    assert b"".join(b[:e] for _, b, e in read_blocks(path, start=19)) == b'{"c":3}'
    assert list(read_lines_at(path, [19, 0, 8])) == [b'{"c":3}', b'{"a":1}', b'{"bb":22}\r']


@pytest.mark.parametrize("path", ["index", "no-index"])
def test_unpriced_warning_counts_only_the_reported_range(tmp_path, path):
    lines = [
        claude_line(1, "mystery-model", {"input_tokens": 1_000}, when="2026-10-01T10:00:00Z"),
        claude_line(2, "mystery-model", {"input_tokens": 1_000}, when="2026-10-06T10:00:00Z"),
    ]
    src = tmp_path / "s.jsonl"
    src.write_text("".join(json.dumps(line) + "\n" for line in lines))
    env = {**claude_home(tmp_path, src), "AGENTLOG_INDEX": str(tmp_path / "i.sqlite")}
    extra = ["--no-index"] if path == "no-index" else []
    data = usage_json(env, "daily", "--since", "2026-10-05", "-z", "UTC", *extra)
    assert data["totals"]["input_tokens"] == 1_000
    assert data["warnings"] == ["no price for model 'mystery-model': 1,000 tokens shown without cost"]
    assert usage_json(env, "daily", "--since", "2027-01-01", *extra)["warnings"] == []


def test_a_file_saved_with_spaces_scans_like_the_full_model(tmp_path):
    """Claude Code writes compact JSON; a re-saved copy has ``"isSidechain": true``."""
    lines = shared_fixture(f"claude-code/{SIDECHAIN}").read_text().splitlines()
    spaced = tmp_path / SIDECHAIN
    spaced.write_text("".join(json.dumps(json.loads(line)) + "\n" for line in lines if line.strip()))
    assert '"isSidechain": true' in spaced.read_text()
    env = claude_home(tmp_path, spaced)
    full = list(calls_from_sessions(load_sessions(["claude_code"], env, tmp_path)))
    refs = [ref for _, ref in discover_sources([get_adapter("claude_code")], env, tmp_path)]
    fast = scan_calls(refs)
    assert len({c.session_key for c in full}) > 1  # the inline sidechain is a session of its own
    assert sorted(fast, key=repr) == sorted(full, key=repr)


def test_a_fifo_as_the_price_file_is_refused_not_waited_on(tmp_path):
    """``~/.config/agentlog/prices.toml`` as a FIFO made every ``usage`` (and
    ``prices show``, the viewer's usage page) wait forever for a writer."""
    home = tmp_path / "home"
    env = {**claude_home(home, FIXTURES / "claude_code/usage-costUSD-minimal.jsonl")}
    env["AGENTLOG_INDEX"] = str(tmp_path / "index.sqlite")
    (home / ".config/agentlog").mkdir(parents=True)
    os.mkfifo(home / ".config/agentlog/prices.toml")
    results: list[tuple[int, str, str]] = []
    worker = threading.Thread(
        target=lambda: results.append(run("usage", "--json", "--cost-mode", "calculate", env=env)),
        daemon=True,
    )
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), "usage waited on the FIFO"
    assert results == [
        (
            2,
            "",
            f"agentlog: {home}/.config/agentlog/prices.toml: cannot read price overrides "
            "(not a regular file (FIFO))\n",
        )
    ]


# -- prices.toml entries apply to every form of a model id (issue #12 rule 17) -------------

NORMALISED_PRICES = FIXTURES / "prices" / "prices-normalised-ids.toml"


@pytest.mark.parametrize(
    "recorded",
    [
        "claude-sonnet-4-5",
        "claude-sonnet-4-5-20250929",  # the bundled table prices this dated id: the user's entry wins
        "anthropic/claude-sonnet-4-5",
        "openrouter/anthropic/claude-sonnet-4-5",
        "claude-sonnet-4-5-latest",
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "CLAUDE-SONNET-4-5@20250929",
    ],
)
def test_an_override_applies_to_every_id_that_normalises_to_it(recorded):
    pricer = Pricer(NORMALISED_PRICES)
    priced = pricer.price(
        call(
            recorded,
            input_tokens=1_000,
            cache_read_tokens=10_000,
            cache_write_5m_tokens=2_000,
            output_tokens=500,
        )
    )
    # $1 / $0.1 / $1.5 / $2 per MTok
    assert priced.cost == (1_000 * 1_000_000 + 10_000 * 100_000 + 2_000 * 1_500_000 + 500 * 2_000_000)
    assert (priced.cost_source, priced.priced_as) == ("estimated", "claude-sonnet-4-5")
    assert pricer.table(recorded, None).provider == "override"


def test_override_keys_are_normalised_and_other_ids_keep_the_table():
    pricer = Pricer(NORMALISED_PRICES)
    codex = pricer.price(call("gpt-5-codex", input_tokens=1_000, output_tokens=100))
    assert (codex.cost, codex.priced_as) == (1_000 * 500_000 + 100 * 4_000_000, "gpt-5-codex")
    other = pricer.price(call("claude-sonnet-4-20250514", input_tokens=1_000_000))
    assert (
        other.cost_usd == pytest.approx(3.0) and pricer.table("claude-sonnet-4", None).provider != "override"
    )


def test_two_entries_for_one_model_are_refused(tmp_path):
    prices = tmp_path / "prices.toml"
    prices.write_text(
        '[models."claude-opus-4"]\ninput_mtok = 1\n[models."anthropic/claude-opus-4"]\ninput_mtok = 2\n'
    )
    with pytest.raises(UsageError, match="both price 'claude-opus-4'"):
        Pricer(prices).price(call("claude-opus-4", input_tokens=1))
