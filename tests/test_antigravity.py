"""Golden tests for the Antigravity adapter (exact values).

Expected values come from a throwaway script over the raw JSONL (steps by
``source``/``type``, ``tool_calls`` counted) and the pairing rule of the adapter's
docstring applied by hand (each tool step answers the oldest open call).
"""

from __future__ import annotations

import shutil

from agent_checks import accounted, calls, found_and_shown, roles
from conftest import FIXTURES, fixture, parse_one, shared_fixture

AG = "antigravity"
BRAIN = "antigravity/brain/aaaa1111-bbbb-2222-cccc-333344445555/.system_generated/logs/transcript.jsonl"


def test_cli_small_steps():
    s = parse_one(AG, fixture("antigravity/cli-small.jsonl"))
    assert s.title == "List the files."
    # 2 user inputs (+1 injected settings text, meta); 3 planner responses + 7 tool
    # steps with no open call; checkpoint + 2 system messages + 1 trimmed unknown.
    assert roles(s) == {"user": 2, "user*": 1, "assistant": 10, "system*": 4}
    # list_dir answered by LIST_DIRECTORY, write_file by CODE_ACTION; the other 7
    # model steps stand as calls of their own (the trimmed GENERIC one is unknown).
    assert calls(s) == (9, 9)
    assert [c.raw_name for c in s.tool_calls()][:3] == ["list_dir", "VIEW_FILE", "RUN_COMMAND"]
    assert s.diagnostics.skipped == {"ignored:CONVERSATION_HISTORY": 1}
    assert s.diagnostics.unknown_types == {"GENERIC": 1}
    assert s.diagnostics.records_total == 19 and accounted(s)


def test_drift_and_brain_transcript():
    drift = parse_one(AG, fixture("antigravity/cli-schema-drift.jsonl"))
    assert roles(drift) == {"user": 1, "assistant": 2}
    assert [c.tool for c in drift.tool_calls()] == ["browser_navigate"]
    brain = parse_one(AG, shared_fixture(BRAIN))
    assert brain.id == "aaaa1111-bbbb-2222-cccc-333344445555"
    assert brain.messages[0].text == "Search the codebase for the FLYWHEEL marker and summarize it."
    assert calls(brain) == (2, 2)
    assert [c.tool for c in brain.tool_calls()] == ["read", "grep"]


def test_found_under_home_and_shown(tmp_path):
    logs = tmp_path / ".gemini" / "antigravity" / "brain" / "0123abcd" / ".system_generated" / "logs"
    logs.mkdir(parents=True)
    shutil.copy(FIXTURES / "antigravity" / "cli-small.jsonl", logs / "transcript.jsonl")
    [s] = found_and_shown(AG, tmp_path)
    assert s.id == "0123abcd"
