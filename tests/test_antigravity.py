"""Golden tests for the Antigravity adapter (exact values).

Expected values come from a throwaway script over the raw JSONL (steps by
``source``/``type``, ``tool_calls`` counted) and the pairing rule of the adapter's
docstring applied by hand (each tool step answers the oldest open call).
"""

from __future__ import annotations

import json
import shutil
import sqlite3

from click.testing import CliRunner

from agent_checks import accounted, calls, clean_env, found_and_shown, roles
from agentlog.adapters.antigravity import AntigravityAdapter
from agentlog.cli import main
from conftest import FIXTURES, fixture, parse_files, parse_one, shared_fixture

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


DB = "antigravity/conversations/aaaa1111-bbbb-2222-cccc-333344445555.db"


def test_conversation_database_is_found_and_reported_not_guessed(tmp_path):
    # The cass database: trajectory_meta has one row, steps none (sqlite3 CLI).
    root = tmp_path / ".gemini" / "antigravity"
    logs = root / "brain" / "aaaa1111-bbbb-2222-cccc-333344445555" / ".system_generated" / "logs"
    logs.mkdir(parents=True)
    shutil.copy(shared_fixture(BRAIN), logs)
    (root / "conversations").mkdir()
    shutil.copy(shared_fixture(DB), root / "conversations")
    # A second database with three (opaque) step rows, built here.
    con = sqlite3.connect(root / "conversations" / "bbbb.db")
    con.executescript(
        "CREATE TABLE trajectory_meta(trajectory_id TEXT, cascade_id TEXT, trajectory_type INTEGER,"
        " source INTEGER); CREATE TABLE steps(idx INTEGER PRIMARY KEY, step_type INTEGER,"
        " status INTEGER, step_payload BLOB); INSERT INTO trajectory_meta VALUES ('bbbb','c2',1,1);"
        " INSERT INTO steps VALUES (0,1,3,x'0a0568656c6c6f'),(1,2,3,x'00'),(2,5,3,NULL);"
    )
    con.commit()
    con.close()
    sessions = {s.key: s for s in found_and_shown(AG, tmp_path)}
    assert sorted(sessions) == [
        "antigravity:aaaa1111-bbbb-2222-cccc-333344445555",
        "antigravity:aaaa1111-bbbb-2222-cccc-333344445555:conversation-db",
        "antigravity:bbbb:conversation-db",
    ]
    db = sessions["antigravity:aaaa1111-bbbb-2222-cccc-333344445555:conversation-db"]
    assert (db.messages, db.diagnostics.skipped) == ([], {"undocumented_format": 1})
    assert "antigravity:aaaa1111-bbbb-2222-cccc-333344445555" in (db.description or "")
    assert sessions["antigravity:bbbb:conversation-db"].diagnostics.skipped == {
        "undocumented_format": 1,
        "undocumented_format:step": 3,
    }
    assert calls(sessions["antigravity:aaaa1111-bbbb-2222-cccc-333344445555"]) == (2, 2)
    doctor = CliRunner().invoke(main, ["doctor", "--agent", AG, "--json"], env=clean_env(tmp_path))
    assert doctor.exit_code == 0, doctor.output
    [report] = json.loads(doctor.stdout)["agents"]
    assert (report["sessions"], report["unknown_types"]) == (3, {})
    assert report["skipped"] == {
        "ignored:CONVERSATION_HISTORY": 1,  # the transcript's marker step
        "undocumented_format": 2,
        "undocumented_format:step": 3,
    }
    head = (root / "conversations" / "bbbb.db").read_bytes()[:65536]
    assert AntigravityAdapter().sniff("bbbb.db", head) == 0.9


def test_the_model_a_settings_change_selects_reaches_the_replies_after_it():
    """Issue #12 rule 13: Antigravity names its model only in a prompt's
    ``<USER_SETTINGS_CHANGE>`` wrapper; each reply takes the last one selected."""
    (session,) = parse_files("antigravity", fixture("antigravity/written-model-switch.jsonl"))
    replies = [(m.id, m.model) for m in session.messages if m.role == "assistant"]
    stem = session.id
    assert replies == [
        (f"{stem}@1", "gemini-3.1-pro"),
        (f"{stem}@3", "gemini-3.5-flash"),
        (f"{stem}@5", "gemini-3.5-flash"),
    ]
    assert session.models == ["gemini-3.1-pro", "gemini-3.5-flash"]
    assert [m.text for m in session.messages if m.role == "user" and not m.hidden] == [
        "summarise the README",
        "shorter please",
        "thanks",
    ]
