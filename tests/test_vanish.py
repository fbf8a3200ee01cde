"""A log that vanishes while a sync runs (removed or moved between discovery and
reading) is gone, as the next sync calls it, not a failure: tester's finding 3,
session of 2026-12-01."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentlog.adapters import all_adapters
from agentlog.index import db
from agentlog.index import sync as sync_module
from agentlog.index.sync import sync
from conftest import FIXTURES

LOG = FIXTURES / "claude_code" / "v1.0.98-session.jsonl"


def _home(tmp_path: Path) -> tuple[Path, Path, Path]:
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-p"
    project.mkdir(parents=True)
    kept, vanishing = project / "kept.jsonl", project / "vanishing.jsonl"
    shutil.copy(LOG, kept)
    text = LOG.read_text().replace("1af7fc5e-8455-4414-9ccd-011d40f70b2a", "2af7fc5e-8455-4414-9ccd-011d40f70b2a")
    vanishing.write_text(text)
    return home, kept, vanishing


@pytest.fixture
def vanish_on_read(monkeypatch):
    """Remove the named files just before the sync reads them (after discovery)."""
    names: set[str] = set()
    real = sync_module._sync_one

    def sync_one(conn, adapter, ref, *args, **kwargs):
        if Path(ref.path).name in names:
            Path(ref.path).unlink()
        return real(conn, adapter, ref, *args, **kwargs)

    monkeypatch.setattr(sync_module, "_sync_one", sync_one)
    return names


def _sessions(conn) -> list[tuple[str, bool]]:
    return sorted(
        (key, archived is not None)
        for key, archived in conn.execute(
            "SELECT s.key, src.archived_at FROM sessions s JOIN sources src ON src.id = s.source_id"
        )
    )


def test_a_new_log_gone_before_it_is_read_is_no_failure(tmp_path, vanish_on_read):
    home, _, vanishing = _home(tmp_path)
    vanish_on_read.add(vanishing.name)
    conn = db.connect(tmp_path / "index.sqlite")
    report = sync(conn, all_adapters(), {"HOME": str(home)}, home)
    assert (report.failed, report.archived, report.removed, report.reparsed) == ([], 0, 1, 1)
    assert _sessions(conn) == [("claude_code:1af7fc5e-8455-4414-9ccd-011d40f70b2a", False)]
    assert [p for (p,) in conn.execute("SELECT path FROM sources")] == [str(home / ".claude/projects/-p/kept.jsonl")]


def test_a_known_log_gone_before_it_is_read_again_is_archived(tmp_path, vanish_on_read):
    home, _, vanishing = _home(tmp_path)
    conn = db.connect(tmp_path / "index.sqlite")
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    with vanishing.open("a") as f:  # changed: it is read again
        f.write(json.dumps({"type": "summary", "summary": "later"}) + "\n")
    vanish_on_read.add(vanishing.name)
    report = sync(conn, all_adapters(), {"HOME": str(home)}, home)
    assert (report.failed, report.archived, report.removed) == ([], 1, 0)
    assert _sessions(conn) == [
        ("claude_code:1af7fc5e-8455-4414-9ccd-011d40f70b2a", False),
        ("claude_code:2af7fc5e-8455-4414-9ccd-011d40f70b2a", True),  # kept, archived: as the next sync says
    ]
    again = sync(conn, all_adapters(), {"HOME": str(home)}, home)
    assert (again.failed, again.archived, _sessions(conn)[1][1]) == ([], 0, True)
