"""Run one fuzz case: mutate the file in its laid-out home, load, sync, compare,
restore the file."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

from agentlog.model import Session
from fuzz import checks
from fuzz import mutators as mut
from fuzz.cases import Case, home

_ORACLES: dict[tuple[str, str, bytes], list[Session]] = {}


def _mutate(case: Case, path: Path, scratch: Path) -> bytes | Path | None:
    """Write the mutation to ``path``; return its oracle (bytes, a database, or None)."""
    kind, rng = case.spec[0], case.rng()
    if kind == "L":
        data, oracle = mut.mutate_line(
            mut.split_lines(path.read_bytes()), int(case.spec[1]), case.spec[2], rng
        )
    elif kind in ("E", "D"):
        data, oracle = mut.mutate_document(path.read_bytes(), case.spec[2], int(case.spec[1]), rng)
    else:
        copy = scratch / "oracle.db"
        shutil.copy(path, copy)
        return copy if mut.mutate_sqlite(path, copy, case.spec, rng) else None
    path.write_bytes(data)
    return oracle


def run_case(case: Case, scratch: Path) -> list[str]:
    """The contract's failures for ``case`` (empty when it holds); an exception that
    escapes loading or syncing propagates."""
    h = home(case.home)
    path = h.root / case.target
    original = path.read_bytes()
    problems: list[str] = []
    try:
        with checks.time_limit(checks.LIMIT):
            oracle = _mutate(case, path, scratch)
            mutated, _ = checks.load(case.agent, h.root)
            index = scratch / "index.sqlite"
            for leftover in (index, Path(f"{index}-wal"), Path(f"{index}-shm")):
                leftover.unlink(missing_ok=True)
            shutil.copy(h.index, index)
            conn = checks.synced(case.agent, h.root, index)
            try:
                in_index, index_calls = checks.index_view(conn), checks.index_calls_view(conn, case.agent)
            finally:
                conn.close()
            scanned = checks.scanner_view(h.root) if case.agent == "claude_code" else None
            expected = _oracle(case, path, oracle) if oracle is not None else None
    finally:
        path.write_bytes(original)
    in_memory = checks.memory_view(mutated)
    if in_index != in_memory:
        problems.append(f"index ≠ in-memory: {checks.first_difference(in_index, in_memory)}")
    memory_calls = checks.calls_view(mutated)
    if index_calls != memory_calls:
        problems.append(f"index calls ≠ in-memory calls: {_dict_diff(index_calls, memory_calls)}")
    if scanned is not None and scanned != index_calls:
        problems.append(f"fast scanner ≠ index: {_dict_diff(scanned, index_calls)}")
    if expected is not None and (lost := checks.survivors_kept(mutated, expected)):
        problems.append(f"{len(lost)} message(s) of other records lost, e.g. {lost[:2]!r:.300}")
    problems.extend(checks.rendering_failures(mutated))
    return problems


def _oracle(case: Case, path: Path, oracle: bytes | Path) -> list[Session]:
    data = oracle.read_bytes() if isinstance(oracle, Path) else oracle
    key = (case.home, case.target, hashlib.sha256(data).digest())
    if key not in _ORACLES:
        path.write_bytes(data)
        _ORACLES[key] = checks.load(case.agent, home(case.home).root)[0]
    return _ORACLES[key]


def _dict_diff(a: dict[Any, Any], b: dict[Any, Any]) -> str:
    keys = sorted((k for k in set(a) | set(b) if a.get(k) != b.get(k)), key=repr)
    return "; ".join(f"{k}: {a.get(k)} vs {b.get(k)}" for k in keys[:3]) + (
        f" (+{len(keys) - 3})" if len(keys) > 3 else ""
    )
