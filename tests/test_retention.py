"""``doctor`` warns when Claude Code's transcript cleanup (``cleanupPeriodDays``)
would delete logs: unset (30 days), 0, short, or not a number."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentlog.cli import main
from agentlog.retention import RetentionWarning, claude_cleanup_warnings

KEEP = 'set "cleanupPeriodDays" in {} to keep them longer (e.g. 3650)'


def claude_home(tmp_path: Path, settings: object | None = None, raw: str | None = None) -> Path:
    home = tmp_path / "home"
    (home / ".claude/projects").mkdir(parents=True)
    if settings is not None or raw is not None:
        (home / ".claude/settings.json").write_text(raw if raw is not None else json.dumps(settings))
    return home


def test_no_claude_code_no_warning(tmp_path):
    assert claude_cleanup_warnings({}, tmp_path) == []


@pytest.mark.parametrize(
    ("settings", "days", "message"),
    [
        (
            None,
            None,
            "Claude Code deletes transcripts inactive for 30 days (cleanupPeriodDays unset: its default); "
            "agentlog keeps only those it indexed before; " + KEEP,
        ),
        (
            {"model": "opus"},
            None,
            "Claude Code deletes transcripts inactive for 30 days (cleanupPeriodDays unset: its default); "
            "agentlog keeps only those it indexed before; " + KEEP,
        ),
        (
            {"cleanupPeriodDays": 7},
            7,
            "Claude Code deletes transcripts inactive for 7 days (cleanupPeriodDays); " + KEEP,
        ),
        (
            {"cleanupPeriodDays": 0},
            0,
            "cleanupPeriodDays is 0: Claude Code before 2.1.89 then writes no transcript and deletes the existing "
            "ones (2.1.89 and later reject it); " + KEEP,
        ),
        (
            {"cleanupPeriodDays": "365"},
            None,
            'cleanupPeriodDays is "365", not a whole number of days; ' + KEEP,
        ),
        ({"cleanupPeriodDays": True}, None, "cleanupPeriodDays is true, not a whole number of days; " + KEEP),
    ],
)
def test_a_cleanup_that_deletes_logs_is_warned_about(tmp_path, settings, days, message):
    home = claude_home(tmp_path, settings)
    path = home / ".claude/settings.json"
    assert claude_cleanup_warnings({}, home) == [
        RetentionWarning(
            agent="claude_code", path=str(path), cleanup_period_days=days, message=message.format(path)
        )
    ]


@pytest.mark.parametrize("days", [90, 3650, 99999])
def test_a_long_cleanup_is_not_warned_about(tmp_path, days):
    assert claude_cleanup_warnings({}, claude_home(tmp_path, {"cleanupPeriodDays": days})) == []


def test_unreadable_settings_are_said_once_and_nothing_blocks(tmp_path):
    home = claude_home(tmp_path, raw="{not json")
    path = home / ".claude/settings.json"
    (warning,) = claude_cleanup_warnings({}, home)
    assert warning.message.startswith(f"cannot read {path} (JSONDecodeError: ")
    path.unlink()
    os.mkfifo(path)  # opening it would block forever
    (warning,) = claude_cleanup_warnings({}, home)
    assert warning.message == (
        f"cannot read {path} (OSError: not a regular file): Claude Code's transcript cleanup is not known"
    )


def test_claude_config_dir_is_honoured_for_each_folder(tmp_path):
    first, second = tmp_path / "work", tmp_path / "personal"
    (first / "projects").mkdir(parents=True)
    (second / "projects").mkdir(parents=True)
    (first / "settings.json").write_text(json.dumps({"cleanupPeriodDays": 3650}))
    (second / "settings.json").write_text(json.dumps({"cleanupPeriodDays": 14}))
    home = claude_home(tmp_path)  # ~/.claude is not read when CLAUDE_CONFIG_DIR is set
    warnings = claude_cleanup_warnings({"CLAUDE_CONFIG_DIR": f"{first},{second / 'projects'}"}, home)
    assert [(w.path, w.cleanup_period_days) for w in warnings] == [(str(second / "settings.json"), 14)]


def test_doctor_prints_the_warning_and_lists_it_in_json(tmp_path):
    home = claude_home(tmp_path, {"cleanupPeriodDays": 7})
    env = {"HOME": str(home), "AGENTLOG_INDEX": str(tmp_path / "index.sqlite"), "CLAUDE_CONFIG_DIR": None}
    result = CliRunner().invoke(main, ["doctor", "--json"], env=env)
    assert result.exit_code == 0, result.output
    path = home / ".claude/settings.json"
    assert json.loads(result.stdout)["retention"] == [
        {
            "agent": "claude_code",
            "path": str(path),
            "cleanup_period_days": 7,
            "message": "Claude Code deletes transcripts inactive for 7 days (cleanupPeriodDays); "
            + KEEP.format(path),
        }
    ]
    text = CliRunner().invoke(main, ["doctor"], env=env)
    assert "warning: Claude Code deletes transcripts inactive for 7 days" in " ".join(text.stdout.split())
    other = CliRunner().invoke(main, ["doctor", "--json", "--agent", "codex"], env=env)
    assert json.loads(other.stdout)["retention"] == []
