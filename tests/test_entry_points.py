"""The entry-point cache (``agentlog.adapters.entry_point_values``): a folder on
``sys.path`` whose mtime keeps changing (the working folder ``python -m agentlog``
puts first) does not defeat it; a distribution installed, removed or installed
again there is still seen."""

from __future__ import annotations

import importlib.metadata
import json
import os
import sys
from pathlib import Path

import pytest

from agentlog.adapters import entry_point_values

FAKE = [("fake", "agentlog.adapters.pi:PiAdapter")]
"""What the tests put in the cache in place of the scan: returned only from the cache."""


@pytest.fixture
def cwd(tmp_path, monkeypatch) -> Path:
    """A folder first on ``sys.path``, as the working folder is for ``python -m agentlog``."""
    folder = tmp_path / "cwd"
    folder.mkdir()
    monkeypatch.setattr(sys, "path", [str(folder), *sys.path])
    return folder


def _real() -> list[tuple[str, str]]:
    return [(ep.name, ep.value) for ep in importlib.metadata.entry_points(group="agentlog.adapters")]


def _poisoned(cache: Path) -> None:
    """The cached scan's entry points replaced by :data:`FAKE`."""
    kept = json.loads(cache.read_text())
    kept["scans"][0]["entry_points"] = [list(e) for e in FAKE]
    cache.write_text(json.dumps(kept))


def _moved(folder: Path) -> None:
    """``folder``'s mtime changed by a file that comes and goes (no distribution)."""
    before = os.stat(folder).st_mtime_ns
    (folder / "notes.txt").write_text("x")
    (folder / "notes.txt").unlink()
    os.utime(folder, ns=(before + 10**9, before + 10**9))


def _plugin(folder: Path, entry: str) -> Path:
    """A distribution's metadata in ``folder`` declaring the adapter entry point ``entry``."""
    info = folder / "agentlog_test_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: agentlog-test-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[agentlog.adapters]\n{entry}\n")
    return info


def test_a_folder_whose_mtime_moves_keeps_the_cache(tmp_path, cwd, monkeypatch):
    cache = tmp_path / "entry-points.json"
    assert entry_point_values(cache) == _real()
    _poisoned(cache)
    _moved(cwd)

    def scanned(**_: object) -> None:
        raise AssertionError("importlib.metadata was scanned")

    monkeypatch.setattr(importlib.metadata, "entry_points", scanned)
    kept = cache.read_bytes()
    assert entry_point_values(cache) == FAKE  # kept: the same distributions everywhere
    assert cache.read_bytes() == kept  # not written again


def test_a_distribution_put_in_removed_from_or_reinstalled_in_that_folder_is_seen(tmp_path, cwd):
    cache = tmp_path / "entry-points.json"
    entry_point_values(cache)
    _poisoned(cache)
    info = _plugin(cwd, "extra = agentlog.adapters.pi:PiAdapter")
    values = entry_point_values(cache)  # scanned again: the new distribution's entry point
    assert values == _real() and ("extra", "agentlog.adapters.pi:PiAdapter") in values
    _poisoned(cache)
    for name in os.listdir(info):
        (info / name).unlink()
    info.rmdir()
    _plugin(cwd, "again = agentlog.adapters.amp:AmpAdapter")  # the same name, installed again
    os.utime(info, ns=(1, 1))  # its mtime another than the one kept, whatever the clock's grain
    values = entry_point_values(cache)
    assert values == _real() and ("again", "agentlog.adapters.amp:AmpAdapter") in values
    assert ("extra", "agentlog.adapters.pi:PiAdapter") not in values
    _poisoned(cache)
    for name in os.listdir(info):
        (info / name).unlink()
    info.rmdir()
    assert entry_point_values(cache) == _real()  # removed: scanned again, gone
    assert all(name not in ("again", "extra") for name, _ in _real())
