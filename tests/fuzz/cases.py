"""The fuzz cases: every fixture file an agent reads in its laid-out home
(:mod:`homes`), each with its candidate mutations, deterministically sampled.

A case id names everything needed to reproduce it —
``agent:file-in-home:spec`` with the spec ``L<line>:<kind>`` (a line),
``E<element>:<kind>`` or ``D<seed>:<kind>`` (a JSON document) or
``T<table>[.<column>[@<rowid>:<kind>]]`` (a database) — and the random choices inside
a mutation come from ``random.Random(crc32(id) ^ seed)``.

``AGENTLOG_FUZZ=long`` takes every candidate (about 54,000, most of an hour), each
with ``AGENTLOG_FUZZ_SEEDS`` seeds (default 1; seed 0 has no ``:s<seed>`` suffix, so
the default cases are among them); otherwise (CI) about ``CI_CASES`` cases are
sampled, the same ones on every run, plus every table and column drop and every cell
mutation of one JSON cell per database column.
"""

from __future__ import annotations

import atexit
import json
import os
import random
import shutil
import sqlite3
import tempfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentlog.adapters import get_adapter
from agentlog.index.db import connect
from agentlog.index.sync import sync
from agentlog.load import discover_sources, load_sessions, project_sources
from fuzz import mutators as mut
from homes import LAYOUTS, SHARED_FOLDERS, shared_layout

CI_CASES = 1_800
LONG = os.environ.get("AGENTLOG_FUZZ") == "long"
SEEDS = int(os.environ.get("AGENTLOG_FUZZ_SEEDS", "1")) if LONG else 1
SQLITE_HEADER = b"SQLite format 3\x00"


@dataclass(frozen=True)
class Case:
    """One mutation of one file of one agent's home."""

    id: str
    agent: str
    home: str
    """The name of the laid-out home (``<agent>`` or ``<agent>+shared``)."""
    target: str
    """The file, relative to the home."""
    fixture: str
    spec: tuple[str, ...]
    seed: int

    def rng(self) -> random.Random:
        return random.Random(zlib.crc32(self.id.encode()) ^ self.seed)


@dataclass
class Home:
    """One agent's laid-out home, with its index synced once (each case starts from a
    copy of it, so only the mutated file is read again)."""

    agent: str
    root: Path
    index: Path
    placed: dict[str, str] = field(default_factory=dict)
    """``{file relative to the home: fixture}`` for every file the agent reads."""


_HOMES: dict[str, Home] = {}
PREFIX = "agentlog-fuzz-"
STALE_AFTER = 12 * 3600
"""Seconds after which a folder of the old naming (no process id) is taken as left."""
_base_path: list[Path] = []


def base() -> Path:
    """Where the homes are laid out, ``<tmp>/agentlog-fuzz-<pid>-…``: made when the
    first case is (at collection, before any ``tmp_path`` exists) and removed when
    the process ends (``atexit``).  A run killed before it could remove its own
    (``SIGTERM``, ``SIGKILL``) leaves it behind: the next run removes the folders
    whose process is gone (:func:`prune`), so none pile up."""
    if not _base_path:
        prune()
        _base_path.append(Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-")))
        atexit.register(shutil.rmtree, _base_path[0], ignore_errors=True)
    return _base_path[0]


def prune() -> list[Path]:
    """Remove the homes folders of runs that are gone: those named by a process
    id no process has, and those of the old naming (no id) not touched for
    :data:`STALE_AFTER`.  The folders removed."""
    import time

    removed = []
    for folder in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
        pid, _, rest = folder.name[len(PREFIX) :].partition("-")
        try:
            if pid.isdigit() and rest:
                if _alive(int(pid)):
                    continue
            elif time.time() - folder.stat().st_mtime < STALE_AFTER:
                continue
        except OSError:
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def home(name: str) -> Home:
    """The laid-out home ``name`` (built once per process)."""
    if name not in _HOMES:
        agent, _, shared = name.partition("+")
        root = base() / name / "home"
        root.mkdir(parents=True)
        placed = shared_layout(agent, root) if shared else LAYOUTS[agent](root)
        adapter = get_adapter(agent)
        env = {"HOME": str(root)}
        read: set[str] = set()
        for _, ref in discover_sources([adapter], env, root):
            read.update((ref.path, *ref.sidecars))
        cwds = [s.cwd for s in load_sessions([agent], env, root) if s.cwd]
        read.update(ref.path for _, ref in project_sources([adapter], cwds))
        index = base() / name / "index.sqlite"
        conn = connect(index)
        try:
            sync(conn, [adapter], env, root)
        finally:
            conn.close()
        _HOMES[name] = Home(
            agent,
            root,
            index,
            {str(p.relative_to(root)): rel for p, rel in placed.items() if str(p) in read},
        )
    return _HOMES[name]


def home_names() -> list[str]:
    names = sorted(LAYOUTS)
    names += [f"{slug}+shared" for slug in sorted(SHARED_FOLDERS) if shared_layout_present(slug)]
    return names


def shared_layout_present(slug: str) -> bool:
    from conftest import SHARED

    return (SHARED / SHARED_FOLDERS[slug][0]).is_dir()


def file_format(path: Path) -> str:
    """``sqlite``, ``document`` (one JSON value) or ``lines``."""
    data = path.read_bytes()
    if data.startswith(SQLITE_HEADER):
        return "sqlite"
    if path.suffix == ".json":
        return "document"
    return "lines"


def _line_specs(path: Path) -> list[tuple[str, ...]]:
    lines = mut.split_lines(path.read_bytes())
    return [("L", str(i), kind) for i in range(len(lines)) for kind in mut.LINE_KINDS]


def _document_specs(path: Path) -> list[tuple[str, ...]]:
    data = path.read_bytes()
    specs: list[tuple[str, ...]] = [
        ("D", str(n), kind) for n in range(4) for kind in mut.DOCUMENT_KINDS if kind not in mut.VALUE_KINDS
    ]
    try:
        document = json.loads(data)
    except ValueError:
        return specs
    where = mut.record_list(document)
    if where is not None:
        records = document
        for key in where:
            records = records[key]
        specs += [("E", str(k), kind) for k in range(len(records)) for kind in mut.VALUE_KINDS]
    return specs


def _sqlite_specs(path: Path) -> list[tuple[str, ...]]:
    specs: list[tuple[str, ...]] = []
    for table, columns in mut.tables(path).items():
        specs.append(("drop_table", table))
        specs += [("drop_column", table, name) for name, _ in columns]
        for rowid in mut.rowids(path, table):
            for name, _ in columns:
                specs += [
                    ("cell", table, name, str(rowid), kind) for kind in (*mut.CELL_KINDS, *mut.VALUE_KINDS)
                ]
    return specs


def _spec_text(spec: tuple[str, ...]) -> str:
    if spec[0] in ("L", "E", "D"):
        return f"{spec[0]}{spec[1]}:{spec[2]}"
    if spec[0] == "drop_table":
        return f"T{spec[1]}:drop_table"
    if spec[0] == "drop_column":
        return f"T{spec[1]}.{spec[2]}:drop_column"
    return f"T{spec[1]}.{spec[2]}@{spec[3]}:{spec[4]}"


def applicable(case: Case, path: Path) -> bool:
    """Whether the mutation has something to act on (dry run on the bytes)."""
    kind = case.spec[0]
    try:
        if kind == "L":
            mut.mutate_line(mut.split_lines(path.read_bytes()), int(case.spec[1]), case.spec[2], case.rng())
        elif kind in ("E", "D"):
            mut.mutate_document(path.read_bytes(), case.spec[2], int(case.spec[1]), case.rng())
        elif kind == "cell":
            scratch = base() / "scratch.db"
            shutil.copy(path, scratch)
            mut.mutate_sqlite(scratch, None, case.spec, case.rng())
    except (mut.NotApplicable, ValueError):
        return False
    return True


STRUCTURAL = ("drop_table", "drop_column")
"""Database mutations of a whole table or column (no row to blame)."""


def _json_cells(path: Path) -> set[tuple[str, str, str]]:
    """``(table, column, rowid)`` of the first row of each column holding JSON text
    (``parts``, ``data``, ``value`` …): where a wrong-typed cell hurts most."""
    out = set()
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        for table, columns in mut.tables(path).items():
            for name, _ in columns:
                try:
                    rows = conn.execute(f'SELECT rowid, "{name}" FROM "{table}"').fetchall()
                except sqlite3.OperationalError:
                    continue
                for rowid, value in rows:
                    if isinstance(value, str | bytes) and value[:1] in ("{", "[", b"{", b"["):
                        out.add((table, name, str(rowid)))
                        break
    finally:
        conn.close()
    return out


def _always(path: Path) -> Callable[[tuple[str, ...]], bool]:
    """Which specs of a file run in CI whatever the sample: table and column drops,
    and every cell mutation of one JSON cell per column (few, and the likeliest to
    find something)."""
    cells = _json_cells(path) if file_format(path) == "sqlite" else set()
    return lambda spec: spec[0] in STRUCTURAL or (spec[0] == "cell" and tuple(spec[1:4]) in cells)


SPECS = {"lines": _line_specs, "document": _document_specs, "sqlite": _sqlite_specs}


def all_cases() -> list[Case]:
    """Every case of this run (see the module docstring)."""
    per_file: list[tuple[list[Case], Callable[[tuple[str, ...]], bool]]] = []
    for name in home_names():
        h = home(name)
        for target, fixture in sorted(h.placed.items()):
            path = h.root / target
            specs = SPECS[file_format(path)](path)
            cases = [
                Case(
                    id=f"{name}:{target}:{_spec_text(spec)}" + (f":s{seed}" if seed else ""),
                    agent=h.agent,
                    home=name,
                    target=target,
                    fixture=fixture,
                    spec=spec,
                    seed=seed,
                )
                for spec in specs
                for seed in range(SEEDS)
            ]
            random.Random(zlib.crc32(f"{name}:{target}".encode())).shuffle(cases)
            per_file.append((cases, _always(path)))
    quota = len(per_file) and max(8, CI_CASES // len(per_file))
    out: list[Case] = []
    for cases, always in per_file:
        taken: list[Case] = []
        for case in cases:
            if not LONG and len(taken) >= quota and not always(case.spec):
                continue
            if applicable(case, home(case.home).root / case.target):
                taken.append(case)
        out.extend(taken)
    return out
