"""The floor benchmark (``benchmarks/bench_floor.py``) indexes what agentlog's index
holds: its figures are a floor of the same work, not of less."""

import sys
from pathlib import Path

from agentlog.adapters import all_adapters
from agentlog.index.db import connect
from agentlog.index.sync import sync

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))

from bench_floor import _census, compare, floor
from corpus import write_claude


def test_the_floor_indexes_what_the_index_holds(tmp_path: Path) -> None:
    home = tmp_path / "home"
    source = home / ".claude/projects/-bench/floor.jsonl"
    write_claude(source, 3)  # two batches (2,000 lines, then the rest): messages held across the cut
    conn = connect(tmp_path / "agentlog.sqlite")
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    conn.close()
    steps = floor(source, tmp_path / "floor.sqlite")
    assert set(steps) == {"decode", "assemble", "fts", "rows", "commit", "sum", "wall"}
    assert compare(tmp_path / "floor.sqlite", tmp_path / "agentlog.sqlite") == []
    census = _census(tmp_path / "agentlog.sqlite")
    assert census["messages"] > 600 and census["reasoning tokens"] > 0 and census["text tokens"] > 0
