"""Issue #12 rule 16: Windows paths in recorded cwds — project names, ``--project``
filters and grouping work with both separators (one rule: :mod:`agentlog.rules`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentlog.load import load_sessions
from agentlog.query import SessionFilter
from agentlog.rules import folder_contains, project_folder, project_name
from conftest import FIXTURES
from test_cli import run

WINDOWS = ("written-windows-cwd-1.jsonl", "written-windows-cwd-2.jsonl", "written-windows-space.jsonl")


@pytest.mark.parametrize(
    ("cwd", "folder", "name"),
    [
        ("C:\\Users\\me\\weather", "C:/Users/me/weather", "weather"),
        ("c:/Users/me/weather/", "C:/Users/me/weather", "weather"),
        ("D:\\Work Space\\app\\", "D:/Work Space/app", "app"),
        ("\\\\server\\share\\proj", "//server/share/proj", "proj"),
        ("C:\\", "C:/", "C:"),
        ("/home/me/src/weather/", "/home/me/src/weather", "weather"),
        ("/", "/", ""),
        ("/srv/odd\\name", "/srv/odd\\name", "odd\\name"),  # a POSIX name may hold a backslash
        (None, None, ""),
    ],
)
def test_project_folder_and_name(cwd, folder, name):
    assert project_folder(cwd) == folder
    assert project_name(cwd) == name


@pytest.mark.parametrize(
    ("cwd", "text", "found"),
    [
        ("D:\\Work Space\\app", "work space/app", True),
        ("D:\\Work Space\\app", "Work Space\\APP", True),
        ("/home/me/src/app", "src\\app", True),
        ("C:\\Users\\me\\weather", "users/them", False),
        (None, "x", False),
        (None, "", True),
    ],
)
def test_folder_contains_either_separator(cwd, text, found):
    assert folder_contains(cwd, text) is found


def _home(tmp_path: Path) -> dict[str, str]:
    project = tmp_path / ".claude/projects/-w"
    project.mkdir(parents=True)
    for name in WINDOWS:
        shutil.copy(FIXTURES / "claude_code" / name, project / name)
    return {"HOME": str(tmp_path)}


@pytest.mark.parametrize("index", [[], ["--no-index"]])
def test_usage_groups_one_windows_folder_written_two_ways(tmp_path, index):
    code, out, err = run("usage", "project", *index, "--json", env=_home(tmp_path))
    assert code == 0, err
    rows = [(r["key"], r["calls"], r["input_tokens"], r["output_tokens"]) for r in json.loads(out)["rows"]]
    assert rows == [("C:/Users/me/weather", 2, 200, 30), ("D:/Work Space/app", 1, 100, 30)]


@pytest.mark.parametrize("index", [[], ["--no-index"]])
@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("work space/app", ["0c0d0000-0000-4000-8000-000000000003"]),
        ("work space\\app", ["0c0d0000-0000-4000-8000-000000000003"]),
        (
            "users\\me\\weather",
            ["0c0d0000-0000-4000-8000-000000000002", "0c0d0000-0000-4000-8000-000000000001"],
        ),
        ("c:/users", ["0c0d0000-0000-4000-8000-000000000002", "0c0d0000-0000-4000-8000-000000000001"]),
    ],
)
def test_project_filter_matches_either_separator(tmp_path, index, text, ids):
    env = _home(tmp_path)
    if not index:
        code, out, err = run("sessions", "--project", text, "--json", env=env)
        assert code == 0, err
        assert [r["id"] for r in json.loads(out)] == ids
    else:  # the in-memory filter
        sessions = load_sessions(["claude_code"], env, tmp_path)
        kept = [s.id for s in sessions if SessionFilter(project=text).matches(s)]
        assert sorted(kept) == sorted(ids)
    code, out, err = run("usage", "session", *index, "--project", text, "--json", env=env)
    assert code == 0, err
    assert sorted(r["key"] for r in json.loads(out)["rows"]) == sorted(f"claude_code:{i}" for i in ids)


def test_listing_names_windows_projects(tmp_path):
    code, out, _ = run("sessions", env=_home(tmp_path))
    assert code == 0
    lines = [line.split() for line in out.splitlines()[1:]]
    assert [line[5] for line in lines] == ["app", "weather", "weather"]  # after "Mar 07 10:00 claude <id>"
