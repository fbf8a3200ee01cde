"""Shared test helpers.

Fixtures whose licence allows it are copied under ``tests/fixtures/<agent>/``
(origins in ``tests/fixtures/SOURCES.md``).  Real files with no visible licence
are read from ``../shared/fixtures`` when that folder is present (it is on the
developers' machines and in CI), never copied; tests on them skip elsewhere.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentlog.adapters import SourceRef, all_adapters, get_adapter
from agentlog.load import build_sessions, parse_source
from agentlog.model import Session

os.environ["AGENTLOG_NO_DAEMON"] = "1"  # no test's `agentlog` process uses or starts a resident (tests/test_resident.py does, on purpose)

FIXTURES = Path(__file__).parent / "fixtures"
SHARED = Path(os.environ.get("AGENTLOG_SHARED_FIXTURES", Path(__file__).parents[2] / "shared" / "fixtures"))


def fixture(rel: str) -> Path:
    path = FIXTURES / rel
    assert path.exists(), path
    return path


def shared_fixture(rel: str) -> Path:
    path = SHARED / rel
    if not path.exists():
        pytest.skip(f"shared fixture {rel} not present")
    return path


def build_sqlite(sql: Path, db: Path) -> Path:
    """A SQLite database at ``db`` built from the SQL fixture ``sql`` (for agents whose
    store is a database: the fixture stays reviewable text)."""
    db.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(db)
    try:
        con.executescript(sql.read_text())
        con.commit()
    finally:
        con.close()
    return db


def parse_files(
    agent: str, *paths: Path, sidecars: dict[Path, tuple[Path, ...]] | None = None
) -> list[Session]:
    """Parse files with one adapter and build sessions exactly as the loader does."""
    adapter = get_adapter(agent)
    refs = [
        SourceRef(agent=agent, path=str(p), sidecars=tuple(str(x) for x in (sidecars or {}).get(p, ())))
        for p in paths
    ]
    return build_sessions((adapter, parse_source(adapter, ref)) for ref in refs)


def parse_one(agent: str, path: Path) -> Session:
    sessions = [s for s in parse_files(agent, path) if s.kind == "main"]
    assert len(sessions) == 1, [s.key for s in sessions]
    return sessions[0]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="rewrite tests/golden/ from the current model output instead of comparing with it",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    """Whether ``--update-golden`` was given (or ``AGENTLOG_UPDATE_GOLDEN=1`` is set)."""
    return (
        bool(request.config.getoption("--update-golden")) or os.environ.get("AGENTLOG_UPDATE_GOLDEN") == "1"
    )


@pytest.fixture(autouse=True)
def private_index(tmp_path_factory, monkeypatch):
    """Every test gets its own index file (never the user's cache), built by the
    command that needs it (never in the background, whatever the shell says)."""
    monkeypatch.setenv("AGENTLOG_INDEX", str(tmp_path_factory.mktemp("index") / "index.sqlite"))
    monkeypatch.delenv("AGENTLOG_BACKGROUND_INDEX", raising=False)


@pytest.fixture(scope="module")
def index(home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The index of the module's own ``home`` fixture (the search tests': a home
    of prompts, :mod:`search_home`, or of rockets), synced once a module."""
    from agentlog.index import db
    from agentlog.index.sync import sync  # here: conftest's own imports stay light

    path = tmp_path_factory.mktemp("index") / "index.sqlite"
    conn = db.connect(path)
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    conn.close()
    return path


@pytest.fixture
def conn(index: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to :func:`index`, closed after the test."""
    from agentlog.index import db

    conn = db.connect(index, readonly=True)
    yield conn
    conn.close()
