"""Golden tests for the DeepSeek Harness adapter (exact values).

Expectations come from a throwaway script over the raw JSONL (events by ``type``,
``assistant/message.usage`` summed: input 2877+168, cache read 0+2816, output
90+25, reasoning 18+22).
"""

from __future__ import annotations

import shutil

from agent_checks import accounted, buckets, calls, found_and_shown, roles
from conftest import fixture, parse_one

HARNESS = "deepseek_harness"


def test_harness_turn():
    s = parse_one(HARNESS, fixture("deepseek_harness/bash-tool-turn.session.jsonl"))
    assert s.key == "deepseek_harness:e128dda9-ed11-4868-8266-0ef90d03c3d6"
    assert (s.cwd, s.title) == ("/home/u/proj", "Use the bash tool to")
    # The typed prompt and the plugin's runtime-context snapshot (meta).
    assert roles(s) == {"user": 1, "user*": 1, "assistant": 2}
    assert calls(s) == (1, 1)
    call = s.tool_calls()[0]
    assert (call.tool, call.input["command"]) == ("bash", "echo TERMINAL_OK")
    assert call.result is not None and call.result.output == [{"type": "text", "text": "TERMINAL_OK\n"}]
    assert buckets(s) == (3045, 2816, 0, 115, 40)
    assert s.models == ["deepseek-v4-flash"]
    assert (s.status, s.status_evidence) == ("waiting_for_user", "turn/end reason=completed")
    assert s.diagnostics.skipped == {
        "ignored:agent/inbox/spliced": 2,
        "ignored:turn/start": 1,
        "ignored:step/start": 2,
        "ignored:assistant/chunk": 14,
        "ignored:reasoning-chunks": 2,
        "ignored:tool-call-chunks": 1,
        "ignored:tool/call": 1,
        "ignored:step/end": 2,
    }
    assert s.diagnostics.records_total == 35 and accounted(s)


def test_found_under_home_and_shown(tmp_path):
    dsh = tmp_path / ".dsh" / "sessions" / "proj" / "e128dda9-ed11-4868-8266-0ef90d03c3d6"
    dsh.mkdir(parents=True)
    shutil.copy(fixture("deepseek_harness/bash-tool-turn.session.jsonl"), dsh / "session.jsonl")
    assert len(found_and_shown(HARNESS, tmp_path)) == 1
