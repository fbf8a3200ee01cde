"""The reader's named read-only queries (``DocumentAdapter.sqlite_queries``)."""

from __future__ import annotations

import sqlite3

import pytest

from agentlog.readers import read_sqlite_tables


def test_queries_read_only_the_rows_asked_for(tmp_path):
    db = tmp_path / "state.vscdb"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE ItemTable (key TEXT, value TEXT)")
    conn.executemany("INSERT INTO ItemTable VALUES (?, ?)", [("wanted", "1"), ("auth/token", "secret")])
    conn.commit()
    conn.close()
    queries = {
        "items": ("SELECT key, value FROM ItemTable WHERE key = ?", ("wanted",)),
        "absent": ("SELECT * FROM NoSuchTable", ()),
    }
    assert read_sqlite_tables(db, (), queries) == {"items": [{"key": "wanted", "value": "1"}]}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.vscdb"]
    with pytest.raises(sqlite3.OperationalError):
        read_sqlite_tables(db, (), {"bad": ("SELEC nonsense", ())})
    with pytest.raises(sqlite3.OperationalError):  # the connection is read-only
        read_sqlite_tables(db, (), {"write": ("DELETE FROM ItemTable", ())})
