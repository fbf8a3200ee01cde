"""Golden tests for the Amp adapter (exact values).

Both fixtures were written for agentlog from the shapes that ccusage and agentsview
parse (no public real thread exists); the expected numbers are sums worked out by hand
from their ``usage`` objects: input 12 + 8 + (0 + 2,000 folded for ``gpt-5``) = 2,020;
cache reads 9,000 + 14,100 + 12,000 = 35,100; cache writes 5,100 + 300 = 5,400; output
160 + 45 + 70 = 275.
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from agentlog.adapters.amp import AmpAdapter
from agentlog.cli import main
from agentlog.load import load_sessions
from agentlog.model import ReasoningPart
from conftest import fixture, parse_files, parse_one

THREAD = "T-019ca26f-0000-7000-8000-00000000a001"
LEGACY = "T-0000aaaa-0000-4000-8000-00000000legacy"


def test_thread_golden():
    s = parse_one("amp", fixture(f"amp/{THREAD}.json"))
    assert s.key == f"amp:{THREAD}"
    assert s.resume_command == f"amp threads continue {THREAD}"
    assert (s.title, s.cwd) == ("Fix flaky login test", "/home/dev/web app")
    assert (s.started_at.isoformat(), s.ended_at.isoformat()) == (
        "2026-01-01T00:00:00+00:00",
        "2026-01-01T00:00:09+00:00",
    )
    assert Counter(m.role + ("*" if m.hidden else "") for m in s.messages) == {
        "user": 1,
        "assistant": 4,
        "system*": 1,
    }
    assert s.diagnostics.unknown_types == {"info": 1}
    assert [(c.tool, c.raw_name, c.result.status) for c in s.tool_calls()] == [
        ("read", "Read", "completed"),
        ("bash", "Bash", "error"),
        ("edit", "edit_file", "interrupted"),
    ]
    assert s.tool_calls()[1].result.output == "exit code 1"
    assert s.tool_calls()[0].result.output["content"] == "await sleep(100)"
    u = s.usage
    assert (u.input_tokens, u.cache_read_tokens, u.cache_write_5m_tokens, u.output_tokens) == (
        2_020,
        35_100,
        5_400,
        275,
    )
    assert s.models == ["claude-sonnet-4-5-20250929", "gpt-5"]
    first = s.messages[1]
    assert (
        isinstance(first.parts[0], ReasoningPart)
        and first.timestamp.isoformat() == "2026-01-01T00:00:04+00:00"
    )


def test_legacy_ledger_usage():
    s = parse_one("amp", fixture(f"amp/{LEGACY}.json"))
    assert s.title == "hi"
    reply = next(m for m in s.messages if m.role == "assistant")
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (100, 20)
    carrier = s.messages[-1]
    assert (carrier.flags, carrier.usage.input_tokens, carrier.usage.output_tokens) == (
        ["meta", "synthetic"],
        50,
        5,
    )
    assert (s.usage.input_tokens, s.usage.output_tokens) == (150, 25)
    assert s.diagnostics.skipped == {"malformed:ledger_event": 1}


def test_found_under_home_and_shown(tmp_path):
    threads = tmp_path / ".local" / "share" / "amp" / "threads"
    threads.mkdir(parents=True)
    for name in (THREAD, LEGACY):
        shutil.copy(fixture(f"amp/{name}.json"), threads / f"{name}.json")
    (threads / "index.json").write_text("{}")  # not a thread: not listed
    sessions = load_sessions(agents=["amp"], env={}, home=tmp_path)
    assert sorted(s.id for s in sessions) == sorted([THREAD, LEGACY])
    result = CliRunner().invoke(
        main, ["show", f"amp:{THREAD}"], env={"HOME": str(tmp_path), "AMP_DATA_DIR": None}
    )
    assert result.exit_code == 0, result.output
    assert "The login test is flaky" in result.output and "Stopped as asked." in result.output


def test_roots_and_sniff():
    assert AmpAdapter().default_roots({"AMP_DATA_DIR": "/a"}, Path("/h")) == [Path("/a/threads")]
    assert AmpAdapter().default_roots({}, Path("/h")) == [Path("/h/.local/share/amp/threads")]
    head = fixture(f"amp/{THREAD}.json").read_bytes()
    assert AmpAdapter().sniff(f"{THREAD}.json", head) == 0.9
    assert AmpAdapter().sniff("x.json", b'{"messages":[]}') == 0.0


def test_a_ledger_event_with_only_a_total_is_kept_and_flagged_partial():
    """Issue #12 rule 12: ``tokens{total}`` without ``input``/``output`` is counted
    (as input, the split unknown) and flagged ``usage_partial``, on its message or
    on a carrier; an event with the split is read as before."""
    (session,) = parse_files("amp", fixture("amp/T-0000bbbb-0000-4000-8000-0000000total.json"))
    rows = [
        (
            m.id.split(":")[-1],
            m.role,
            m.flags,
            (m.usage.input_tokens, m.usage.output_tokens) if m.usage else None,
        )
        for m in session.messages
    ]
    assert rows == [
        ("0", "user", [], None),
        ("1", "assistant", ["usage_partial"], (1500, 0)),
        ("2", "user", [], None),
        ("3", "assistant", [], (400, 40)),
        (
            "T-0000bbbb-0000-4000-8000-0000000total@ledger2",
            "system",
            ["meta", "synthetic", "usage_partial"],
            (90, 0),
        ),
    ]
    assert (session.usage.input_tokens, session.usage.output_tokens) == (1990, 40)
    d = session.diagnostics
    assert d.skipped == {} and d.records_used == d.records_total
