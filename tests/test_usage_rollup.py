"""The usage roll-up (index table ``usage_rollup``) and the price cache: reports
from summed records equal reports from single calls, roll-ups follow every
change, and a warm report does not load genai-prices or scan entry points."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

import msgspec
import pytest

from agentlog.adapters import all_adapters, entry_point_values
from agentlog.index.db import connect
from agentlog.index.prices import load_prices
from agentlog.index.sync import sync
from agentlog.index.usage import members, usage_records
from agentlog.load import load_sessions
from agentlog.usage import Pricer, calls_from_sessions
from agentlog.usage.report import GROUPS, build_blocks, build_rows, row_dict, zone
from test_index import make_home
from test_usage import claude_line

ADAPTERS = all_adapters()
SONNET45 = "claude-sonnet-4-5"
START = datetime(2026, 11, 2, 9, 58, tzinfo=UTC)


def _stamp(minutes: float) -> str:
    return (START + timedelta(minutes=minutes)).isoformat().replace("+00:00", "Z")


def busy_session(path: Path) -> None:
    """One Claude session of 40 calls over 100 minutes in two models, with
    prompts on both sides of the 200K tier inside one quarter hour, a recorded
    cost, and a call without a time."""
    lines = []
    for n in range(40):
        prompt = 150_000 if n % 3 else 250_000
        usage = {
            "input_tokens": 10 + n,
            "cache_read_input_tokens": prompt - 10 - n,
            "cache_creation_input_tokens": 0,
            "output_tokens": 100 + n,
        }
        model = SONNET45 if n % 4 else "claude-opus-4-1"
        line = claude_line(n, model, usage, when=_stamp(n * 2.5))
        line["sessionId"] = "busy"
        if n == 7:
            line["costUSD"] = 0.5
        if n == 11:
            del line["timestamp"]
        lines.append(json.dumps(line))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def home_index(tmp_path):
    home = make_home(tmp_path)
    busy_session(home / ".claude/projects/-tmp-busy/busy.jsonl")
    conn = connect(tmp_path / "index.sqlite")
    sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    return home, conn


def _key(call) -> tuple:
    return (call.session_key, call.model, call.timestamp, msgspec.to_builtins(call.usage))


def _singles(conn: sqlite3.Connection) -> list:
    return [m for r in usage_records(conn) for m in members(conn, r)]


def test_records_hold_exactly_the_calls_parsing_counts(home_index):
    home, conn = home_index
    records = usage_records(conn)
    singles = _singles(conn)
    assert sum(r.calls for r in records) == len(singles) > len(records)
    parsed = list(calls_from_sessions(load_sessions(env={"HOME": str(home)}, home=home)))
    assert sorted(map(_key, singles), key=repr) == sorted(map(_key, parsed), key=repr)
    busy = [r for r in records if r.session_key == "claude_code:busy"]
    assert sum(r.calls for r in busy) == 40
    assert [r.calls for r in busy if r.timestamp is None] == [1]


@pytest.mark.parametrize("tz_name", ["UTC", "Asia/Tokyo", "Asia/Kathmandu", "America/St_Johns"])
@pytest.mark.parametrize("mode", ["auto", "calculate", "recorded"])
def test_reports_from_records_equal_reports_from_single_calls(home_index, tz_name, mode):
    _, conn = home_index
    tz = zone(tz_name)
    records = usage_records(conn)
    singles = _singles(conn)
    for group in GROUPS:
        got_rows, got_total = build_rows(Pricer().price_all(records, mode, partial(members, conn)), group, tz)
        want_rows, want_total = build_rows(Pricer().price_all(singles, mode), group, tz)
        got = [row_dict(r, group, True, True) for r in got_rows]
        want = [row_dict(r, group, True, True) for r in want_rows]
        assert len(got) == len(want) and len(got) > 0
        assert [*got, got_total.as_dict()] == [*want, want_total.as_dict()]  # costs too: whole pico-dollars
        assert got_total.cost == want_total.cost
    now = START + timedelta(hours=1)
    got_blocks = build_blocks(Pricer().price_all(records, mode, partial(members, conn)), now)
    want_blocks = build_blocks(Pricer().price_all(singles, mode), now)
    assert len(got_blocks) == len(want_blocks) > 1
    assert [b.as_dict(now) for b in got_blocks] == [b.as_dict(now) for b in want_blocks]


def test_a_record_across_the_200k_tier_is_priced_call_by_call(home_index):
    _, conn = home_index
    (record,) = [
        r
        for r in usage_records(conn)
        if r.session_key == "claude_code:busy"
        and r.model == SONNET45
        and r.prompt_tokens[0] < 200_000 < r.prompt_tokens[1]
    ][:1]
    assert record.calls > 1
    with pytest.raises(ValueError, match="span price tiers"):
        list(Pricer().price_all([record]))
    whole = sum(pc.cost or 0 for pc in Pricer().price_all([record], members=partial(members, conn)))
    single = [Pricer().price(c) for c in members(conn, record)]
    assert whole == sum(pc.cost or 0 for pc in single)
    long_rate = [pc for pc in single if pc.call.prompt_tokens[0] > 200_000]
    assert long_rate and all(
        pc.cost  # pico-dollars: $6, $0.60 and $22.50 per million tokens
        == pc.call.usage.input_tokens * 6_000_000
        + pc.call.usage.cache_read_tokens * 600_000
        + pc.call.usage.output_tokens * 22_500_000
        for pc in long_rate
    )


def test_roll_ups_follow_appends_rewrites_and_removals(home_index):
    from agentlog.index.archive import prune

    home, conn = home_index
    path = home / ".claude/projects/-tmp-busy/busy.jsonl"
    total = lambda: sum(r.usage.output_tokens for r in usage_records(conn))  # noqa: E731
    before = total()
    assert conn.execute("SELECT COUNT(*) FROM usage_rollup_state").fetchone()[0] > 0
    with open(path, "a") as fh:
        line = claude_line(99, SONNET45, {"input_tokens": 1, "output_tokens": 1_000}, when=_stamp(3))
        line["sessionId"] = "busy"
        fh.write(json.dumps(line) + "\n")
    sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    assert _stored(conn) == _rebuilt(conn)  # the sync stored them: nothing stale for a reader
    assert total() == before + 1_000
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:10]) + "\n")  # shorter: re-read whole
    sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    busy = [r for r in usage_records(conn) if r.session_key == "claude_code:busy"]
    assert sum(r.calls for r in busy) == 10
    path.unlink()
    sync(conn, ADAPTERS, {"HOME": str(home)}, home)  # gone: archived, still counted
    assert sum(r.calls for r in usage_records(conn) if r.session_key == "claude_code:busy") == 10
    prune(conn)
    assert [r for r in usage_records(conn) if r.session_key == "claude_code:busy"] == []
    assert conn.execute(
        "SELECT COUNT(*) FROM usage_rollup WHERE session_key = 'claude_code:busy'"
    ).fetchone() == (0,)


def _stored(conn: sqlite3.Connection) -> list[tuple]:
    """Every stored roll-up row and roll-up state, in one order."""
    rows = conn.execute("SELECT * FROM usage_rollup ORDER BY session_key, model, service_tier, bucket, recorded")
    states = conn.execute("SELECT session_key FROM usage_rollup_state ORDER BY session_key")
    return [*rows, ("state", *(key for (key,) in states))]


def _rebuilt(conn: sqlite3.Connection) -> list[tuple]:
    """:func:`_stored` after every roll-up is dropped and built again by a report."""
    conn.execute("DELETE FROM usage_rollup_state")
    usage_records(conn)
    return _stored(conn)


def test_a_sync_stores_the_roll_ups_it_changes(home_index, tmp_path):
    home, conn = home_index
    assert conn.execute("SELECT COUNT(*) FROM usage_rollup").fetchone()[0] > 0
    stored = _stored(conn)
    assert stored[-1] == ("state", *(k for (k,) in conn.execute("SELECT key FROM sessions ORDER BY key")))
    assert stored == _rebuilt(conn)
    line = claude_line(500, SONNET45, {"input_tokens": 7, "output_tokens": 70}, when=_stamp(1))
    line["sessionId"] = "fresh"
    (home / ".claude/projects/-tmp-fresh/fresh.jsonl").parent.mkdir(parents=True)
    (home / ".claude/projects/-tmp-fresh/fresh.jsonl").write_text(json.dumps(line) + "\n")
    readonly = connect(tmp_path / "index.sqlite", readonly=True)
    sync(conn, ADAPTERS, {"HOME": str(home)}, home)  # a new session, added after the reader opened
    after = _stored(conn)
    assert "claude_code:fresh" in after[-1]
    assert [r[0] for r in after if r[0] == "claude_code:fresh"] == ["claude_code:fresh"]
    got = [r for r in usage_records(readonly) if r.session_key == "claude_code:fresh"]
    assert [(r.calls, r.usage.input_tokens, r.usage.output_tokens) for r in got] == [(1, 7, 70)]
    assert _stored(readonly) == after  # it read them: it wrote nothing
    assert after == _rebuilt(conn)


def test_a_read_only_connection_sums_without_writing(home_index, tmp_path):
    _, conn = home_index
    conn.execute("DELETE FROM usage_rollup_state")  # stale, as an index an older agentlog synced
    readonly = connect(tmp_path / "index.sqlite", readonly=True)
    got = usage_records(readonly)
    assert conn.execute("SELECT COUNT(*) FROM usage_rollup_state").fetchone() == (0,)
    assert sorted(map(_key, got), key=repr) == sorted(map(_key, usage_records(conn)), key=repr)


def test_a_page_of_sessions_sums_only_its_own_stale_calls(home_index, tmp_path):
    _, conn = home_index
    keys = [k for (k,) in conn.execute("SELECT key FROM sessions ORDER BY key")]
    everything = sorted(map(_key, usage_records(conn)), key=repr)
    other = min(k[0] for k in everything if k[0] != "claude_code:busy")
    page = ["claude_code:busy", other, "nobody:missing", "claude_code:busy"]
    want = sorted((k for k in everything if k[0] in page), key=repr)
    assert len({k[0] for k in want}) == 2 and len({k[0] for k in everything}) > 2
    conn.execute("DELETE FROM usage_rollup_state WHERE session_key != ?", (other,))
    readonly = connect(tmp_path / "index.sqlite", readonly=True)
    assert sorted(map(_key, usage_records(readonly, keys=page)), key=repr) == want
    assert sorted(map(_key, usage_records(readonly, keys=[])), key=repr) == []
    assert conn.execute("SELECT COUNT(*) FROM usage_rollup_state").fetchone() == (1,)
    assert sorted(map(_key, usage_records(conn, keys=page)), key=repr) == want  # stored, then read
    assert conn.execute("SELECT COUNT(*) FROM usage_rollup_state").fetchone() == (len(keys),)


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """The CLI in a fresh process, printing which heavy modules it loaded."""
    code = (
        "import sys\nfrom agentlog.cli import main\nmain(sys.argv[1:])\n"
        "print(json.dumps(sorted(m for m in ('genai_prices', 'rich', 'importlib.metadata') if m in sys.modules)),"
        " file=sys.stderr)"
    )
    return subprocess.run(
        [sys.executable, "-c", "import json\n" + code, *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )


def test_a_warm_report_loads_no_price_library_and_no_rich(tmp_path):
    home = make_home(tmp_path)
    env = {
        **os.environ,
        "HOME": str(home),
        "AGENTLOG_INDEX": str(tmp_path / "i.sqlite"),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
    }
    env.pop("XDG_CACHE_HOME", None)
    first = _cli(env, "usage", "session", "--json")
    assert "genai_prices" in first.stderr
    conn = sqlite3.connect(tmp_path / "i.sqlite")
    assert conn.execute("SELECT COUNT(*) FROM price_cache").fetchone()[0] > 0
    second = _cli(env, "usage", "session", "--json")
    assert json.loads(second.stderr.splitlines()[-1]) == []
    assert json.loads(second.stdout) == json.loads(first.stdout)


def test_changed_overrides_are_never_served_from_the_cache(tmp_path):
    home = tmp_path / "home"
    line = claude_line(1, "claude-mystery-9", {"input_tokens": 1_000_000, "output_tokens": 0})
    (home / ".claude/projects/-p").mkdir(parents=True)
    (home / ".claude/projects/-p/s.jsonl").write_text(json.dumps(line) + "\n")
    prices = tmp_path / "cfg" / "agentlog" / "prices.toml"
    prices.parent.mkdir(parents=True)
    env = {
        **os.environ,
        "HOME": str(home),
        "AGENTLOG_INDEX": str(tmp_path / "i.sqlite"),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
    }
    costs = []
    for rate in (2.0, 3.0):
        prices.write_text(f'[models."claude-mystery-9"]\ninput_mtok = {rate}\noutput_mtok = 1.0\n')
        os.utime(prices, ns=(int(rate * 1e9), int(rate * 1e9)))
        costs.append(json.loads(_cli(env, "usage", "--json").stdout)["totals"]["cost_usd"])
    assert costs == [2.0, 3.0]
    conn = sqlite3.connect(tmp_path / "i.sqlite")
    assert conn.execute("SELECT COUNT(DISTINCT fingerprint) FROM price_cache").fetchone() == (1,)


def test_price_cache_round_trip(home_index):
    _, conn = home_index
    pricer = Pricer()
    table = pricer.table(SONNET45, START)
    missing = pricer.table("no-such-model", START)
    assert missing is None and set(pricer.resolved) == {
        (SONNET45, "2026-11-02", ""),
        ("no-such-model", "2026-11-02", ""),
    }
    from agentlog.index.prices import save_prices

    save_prices(conn, "fp", pricer.resolved)
    assert load_prices(conn, "fp") == {
        (SONNET45, "2026-11-02", ""): table,
        ("no-such-model", "2026-11-02", ""): None,
    }
    assert load_prices(conn, "other") == {}


def test_entry_points_are_cached_by_the_folders_they_come_from(tmp_path, monkeypatch):
    from importlib.metadata import entry_points

    cache = tmp_path / "entry-points.json"
    want = [(ep.name, ep.value) for ep in entry_points(group="agentlog.adapters")]
    assert entry_point_values(cache) == want
    kept = json.loads(cache.read_text())
    kept["scans"][0]["entry_points"] = [["fake", "agentlog.adapters.pi:PiAdapter"]]
    cache.write_text(json.dumps(kept))
    assert entry_point_values(cache) == [("fake", "agentlog.adapters.pi:PiAdapter")]  # same folders: kept
    folder = tmp_path / "site"
    folder.mkdir()
    path = list(sys.path)
    monkeypatch.setattr(sys, "path", [*path, str(folder)])
    assert entry_point_values(cache) == want  # a new folder on sys.path: scanned again
    monkeypatch.setattr(sys, "path", path)  # the first sys.path is still remembered
    assert entry_point_values(cache) == [("fake", "agentlog.adapters.pi:PiAdapter")]
    cache.write_text("{broken")
    assert entry_point_values(cache) == want


def test_no_sync_reads_the_index_without_writing(tmp_path):
    home = make_home(tmp_path)
    env = {**os.environ, "HOME": str(home), "AGENTLOG_INDEX": str(tmp_path / "i.sqlite")}
    subprocess.run([sys.executable, "-m", "agentlog", "index"], env=env, check=True, capture_output=True)
    conn = sqlite3.connect(tmp_path / "i.sqlite", isolation_level=None)
    assert conn.execute("SELECT COUNT(*) FROM usage_rollup_state").fetchone()[0] > 0  # the sync stored them
    conn.execute("DELETE FROM usage_rollup_state")  # stale, as an index an older agentlog synced
    before = (tmp_path / "i.sqlite").stat().st_mtime_ns
    read = _cli(env, "usage", "--no-sync", "--json")
    assert conn.execute("SELECT COUNT(*) FROM usage_rollup_state").fetchone() == (0,)  # summed, not stored
    assert (tmp_path / "i.sqlite").stat().st_mtime_ns == before
    assert json.loads(read.stdout) == json.loads(_cli(env, "usage", "--json").stdout)


def test_tilde_shows_home_itself_as_tilde():
    from agentlog.present import tilde

    assert (
        tilde("/home/me", "/home/me/"),
        tilde("/home/me/x", "/home/me"),
        tilde("/home/meow", "/home/me"),
    ) == (
        "~",
        "~/x",
        "/home/meow",
    )


def test_roll_ups_summed_in_usd_by_an_older_index_are_rebuilt_in_nano_dollars(home_index, tmp_path):
    """Migration 10: an index whose roll-ups summed recorded costs in USD (column
    ``cost_usd``) has them emptied on opening and rebuilt by the next report."""
    from agentlog.index.schema import MIGRATIONS
    from test_fts import downgrade_live_status, downgrade_search_index

    _, conn = home_index
    want = [(r.session_key, r.calls, Pricer().price(r).cost) for r in usage_records(conn) if r.recorded_nano]
    assert ("claude_code:busy", 1, 500_000_000_000) in want and len(want) > 1  # busy's recorded $0.50
    conn.execute("ALTER TABLE usage_rollup RENAME COLUMN recorded_nano_usd TO cost_usd")
    conn.execute("UPDATE usage_rollup SET cost_usd = cost_usd / 1e9")
    conn.execute("ALTER TABLE usage_rollup DROP COLUMN model_inferred")  # added by a later migration
    downgrade_live_status(conn)  # and the live status columns
    downgrade_search_index(conn)  # and the search tables, as before the later migrations
    nano = next(i for i, m in enumerate(MIGRATIONS) if "TO recorded_nano_usd" in m)
    conn.execute(f"PRAGMA user_version = {nano}")
    conn.close()
    upgraded = connect(tmp_path / "index.sqlite")
    assert upgraded.execute("SELECT COUNT(*) FROM usage_rollup_state").fetchone() == (0,)
    got = [
        (r.session_key, r.calls, Pricer().price(r).cost) for r in usage_records(upgraded) if r.recorded_nano
    ]
    assert got == want
