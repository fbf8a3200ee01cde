"""Build VS Code-style ``state.vscdb`` test databases (no public one exists) from
row descriptions: ``{"table": "ItemTable"|"cursorDiskKV", "key": ..., "value": ...}``
(a non-string value is stored as its JSON text, as the editors do)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def make_vscdb(path: Path, rows: Iterable[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    conn.execute("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    for row in rows:
        value = row["value"] if isinstance(row["value"], str) else json.dumps(row["value"])
        conn.execute(f"INSERT INTO {row['table']} VALUES (?, ?)", (row["key"], value))
    conn.commit()
    conn.close()
    return path
