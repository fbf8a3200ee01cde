"""Seeded mutations of one fixture file, each paired with its *oracle*.

A mutation damages one record — a JSONL line, an element of a JSON document's record
list, a row of a database table — and its oracle is the same file with that record
removed.  The contract checked against it (:func:`fuzz.checks.survivors_kept`): a
damaged record costs at most what its absence costs.  Mutations with no record to
blame (a dropped table, a truncated document, a damaged header) have no oracle
(``None``).

Text files are mutated as bytes (:func:`mutate_text`); databases in place
(:func:`mutate_sqlite`).  Every choice comes from the ``random.Random`` passed in, so a
case is reproduced by its id alone.
"""

from __future__ import annotations

import json
import random
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

DEEP = 1_000
HUGE = ("18446744073709551623", "-18446744073709551623", "-3", "1000000000000000000000000000000", "1e400")
"""Numbers above 2^64, negative, and a float that overflows to infinity."""
UNKNOWN_TYPE = "fuzz_unknown_record_type"
DISCRIMINATORS = ("type", "kind", "event", "role", "say", "ask")
_TOKEN = "__agentlog_fuzz_raw__"
_NOT_JSON = object()

LINE_KINDS = (
    "truncate_line",
    "truncate_mid",
    "duplicate",
    "swap",
    "invalid_utf8",
    "nul",
    "lone_surrogate",
    "type_swap",
    "huge_number",
    "deep_nesting",
    "missing_key",
    "unknown_type",
)
"""Mutations of one line of a JSONL (or other line-based) file."""
VALUE_KINDS = ("lone_surrogate", "type_swap", "huge_number", "deep_nesting", "missing_key", "unknown_type")
"""Mutations inside one JSON value (a line's record, a document's element, a cell)."""
DOCUMENT_KINDS = (*VALUE_KINDS, "truncate_bytes", "invalid_utf8", "nul", "header_type_swap")
"""Mutations of a JSON document: inside one element of its record list, or of the whole."""
CELL_KINDS = ("real", "integer", "blob", "invalid_utf8", "null", "huge_text", "deep_text")
"""Wrong-typed and undecodable values for one cell of a database row."""


class NotApplicable(Exception):
    """The mutation has nothing to act on in this record (e.g. no string to damage)."""


# --- JSON values ---------------------------------------------------------------------


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    out = [(path, value)]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_nodes(v, (*path, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_nodes(v, (*path, i)))
    return out


def _set(root: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    parent = root
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = new
    return root


def _swapped(value: Any, rng: random.Random) -> Any:
    """A value of another JSON type than ``value``."""
    if isinstance(value, bool) or value is None:
        choices: list[Any] = ["true", {"x": 1}, [0]]
    elif isinstance(value, str):
        choices = [12345, {"text": value[:20]}, [value[:20]], None, True]
    elif isinstance(value, int | float):
        choices = [str(value), [value], {"value": value}, None]
    elif isinstance(value, dict):
        choices = [[], "x", 7, None, [dict(value)]]
    else:
        choices = [{}, "x", 7, None]
    return rng.choice(choices)


def mutate_value(value: Any, kind: str, rng: random.Random) -> str:
    """``value`` (parsed JSON) with one ``kind`` mutation, as JSON text."""
    raw: str | None = None
    nodes = _nodes(value)
    if kind == "type_swap":
        path, node = rng.choice(nodes[1:] or nodes)
        value = _set(value, path, _swapped(node, rng))
    elif kind == "huge_number":
        numbers = [(p, n) for p, n in nodes if isinstance(n, int | float) and not isinstance(n, bool)]
        path, _ = rng.choice(numbers or nodes[1:] or nodes)
        value, raw = _set(value, path, _TOKEN), rng.choice(HUGE)
    elif kind == "deep_nesting":
        path, _ = rng.choice(nodes[1:] or nodes)
        opener, closer = rng.choice((("[", "]"), ('{"a":', "}")))
        value, raw = _set(value, path, _TOKEN), opener * DEEP + "1" + closer * DEEP
    elif kind == "missing_key":
        dicts = [(p, n) for p, n in nodes if isinstance(n, dict) and n]
        if not dicts:
            raise NotApplicable(kind)
        _, node = rng.choice(dicts)
        del node[rng.choice(sorted(node))]
    elif kind == "lone_surrogate":
        strings = [(p, n) for p, n in nodes if isinstance(n, str)]
        if not strings:
            raise NotApplicable(kind)
        path, node = rng.choice(strings)
        cut = rng.randint(0, len(node))
        value, raw = (
            _set(value, path, _TOKEN),
            '"' + json.dumps(node[:cut])[1:-1] + "\\ud800" + json.dumps(node[cut:])[1:-1] + '"',
        )
    elif kind == "unknown_type":
        if not isinstance(value, dict):
            raise NotApplicable(kind)
        key = next((k for k in DISCRIMINATORS if k in value), "type")
        value[key] = UNKNOWN_TYPE
    else:
        raise ValueError(kind)
    text = json.dumps(value, ensure_ascii=False)
    return text.replace(json.dumps(_TOKEN), raw) if raw is not None else text


# --- line files ----------------------------------------------------------------------


def split_lines(data: bytes) -> list[bytes]:
    """Lines with their ending (the last one may have none)."""
    return data.splitlines(keepends=True)


def _ending(line: bytes) -> tuple[bytes, bytes]:
    body = line.rstrip(b"\r\n")
    return body, line[len(body) :]


def _insert(body: bytes, junk: bytes, rng: random.Random) -> bytes:
    cut = rng.randint(0, len(body))
    return body[:cut] + junk + body[cut:]


def mutate_line(lines: list[bytes], i: int, kind: str, rng: random.Random) -> tuple[bytes, bytes | None]:
    """``(mutated file, oracle)`` for the ``kind`` mutation of line ``i``.  A line that
    is not a JSON value (Aider's Markdown) is not a record: no oracle."""
    body, end = _ending(lines[i])
    try:
        record = json.loads(body)
    except ValueError:
        record = _NOT_JSON
    drop = b"".join(lines[:i] + lines[i + 1 :]) if record is not _NOT_JSON else None
    before, after = b"".join(lines[:i]), b"".join(lines[i + 1 :])
    if kind == "truncate_line":
        return before, None
    if kind == "truncate_mid":
        if len(body) < 2:
            raise NotApplicable(kind)
        return before + body[: rng.randint(1, len(body) - 1)], before if drop is not None else None
    if kind == "duplicate":  # the copy is the damaged record: its twin may be taken for it
        return before + lines[i] + (b"\n" if not end else b"") + lines[i] + after, drop
    if kind == "swap":
        if i + 1 >= len(lines):
            raise NotApplicable(kind)
        nxt_body, nxt_end = _ending(lines[i + 1])
        swapped = nxt_body + (end or b"\n") + body + nxt_end
        both = b"".join(lines[:i] + lines[i + 2 :]) if drop is not None else None
        return before + swapped + b"".join(lines[i + 2 :]), both
    if kind == "invalid_utf8":
        damaged = _insert(body, rng.choice((b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80")), rng)
        return before + damaged + end + after, _replaced(before, damaged, end, after, drop)
    if kind == "nul":
        return before + _insert(body, b"\x00", rng) + end + after, drop
    if record is _NOT_JSON:
        raise NotApplicable(f"{kind}: not a JSON line")
    damaged = mutate_value(record, kind, rng).encode()
    if kind == "lone_surrogate":
        return before + damaged + end + after, _replaced(before, damaged, end, after, drop)
    return before + damaged + end + after, drop


def _replaced(before: bytes, damaged: bytes, end: bytes, after: bytes, drop: bytes | None) -> bytes | None:
    """The oracle of a line whose text is damaged (invalid UTF-8, a lone surrogate
    escape): the line decoded with U+FFFD in place of the damage, as every reader
    keeps it (``agentlog.adapters._json``), when that is JSON; else the line dropped."""
    fixed = damaged.decode("utf-8", "replace").replace("\\ud800", "\ufffd")
    try:
        json.loads(fixed)
    except ValueError:
        return drop
    return before + fixed.encode() + end + after


# --- JSON documents --------------------------------------------------------------------


def record_list(document: Any) -> tuple[Any, ...] | None:
    """The path of the document's longest list of objects (its records), if any."""
    best: tuple[int, tuple[Any, ...]] | None = None
    for path, node in _nodes(document):
        records = isinstance(node, list) and any(isinstance(x, dict) for x in node)
        if records and (best is None or len(node) > best[0]):
            best = (len(node), path)
    return best[1] if best else None


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def mutate_document(data: bytes, kind: str, k: int, rng: random.Random) -> tuple[bytes, bytes | None]:
    """``(mutated document, oracle)``: a ``VALUE_KINDS`` mutation inside element ``k`` of
    the record list (oracle: the element removed), or a whole-document mutation."""
    if kind == "truncate_bytes":
        return data[: rng.randint(0, len(data) - 1)], None
    if kind in ("invalid_utf8", "nul"):
        junk = b"\x00" if kind == "nul" else rng.choice((b"\xff", b"\xc3\x28", b"\xed\xa0\x80"))
        return _insert(data, junk, rng), None
    document = json.loads(data)
    if kind == "header_type_swap":
        if not isinstance(document, dict) or not document:
            raise NotApplicable(kind)
        key = rng.choice(sorted(document))
        document[key] = _swapped(document[key], rng)
        return json.dumps(document, ensure_ascii=False).encode(), None
    path = record_list(document)
    if path is None:
        raise NotApplicable(f"{kind}: no record list")
    records = _at(document, path)
    if k >= len(records):
        raise NotApplicable(f"{kind}: no element {k}")
    oracle = json.loads(data)
    del _at(oracle, path)[k]
    element = records[k]
    records[k] = _TOKEN
    text = json.dumps(document, ensure_ascii=False).replace(
        json.dumps(_TOKEN), mutate_value(element, kind, rng)
    )
    if kind == "lone_surrogate":  # decoded with U+FFFD and kept (agentlog.adapters._json)
        return text.encode(), text.replace("\\ud800", "\ufffd").encode()
    return text.encode(), json.dumps(oracle, ensure_ascii=False).encode()


# --- databases -------------------------------------------------------------------------


def tables(db: Path) -> dict[str, list[tuple[str, str]]]:
    """``{table: [(column, declared type)]}`` of a database (SQLite's own tables left out)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        names = [
            n
            for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            if not n.startswith("sqlite_")
        ]
        return {n: [(c[1], c[2].upper()) for c in conn.execute(f'PRAGMA table_info("{n}")')] for n in names}
    finally:
        conn.close()


def rowids(db: Path, table: str) -> list[int]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [r for (r,) in conn.execute(f'SELECT rowid FROM "{table}" ORDER BY rowid')]
    except sqlite3.OperationalError:  # a WITHOUT ROWID table
        return []
    finally:
        conn.close()


def _cell_value(kind: str, old: Any, rng: random.Random) -> tuple[str, tuple[Any, ...]]:
    """``(SQL expression, parameters)`` of the new cell value."""
    if kind == "real":
        return "?", (1.5,)
    if kind == "integer":
        return "?", (9223372036854775807,)
    if kind == "blob":
        return "?", (b"\x00\xff\x01",)
    if kind == "invalid_utf8":
        return "CAST(? AS TEXT)", (b'{"text": "caf\xc3\x28 \xff"}',)
    if kind == "null":
        return "NULL", ()
    if kind == "huge_text":
        return "?", (rng.choice(HUGE),)
    if kind == "deep_text":
        return "?", ("[" * DEEP + "]" * DEEP,)
    if kind in VALUE_KINDS:
        text = old.decode("utf-8", "replace") if isinstance(old, bytes) else old
        try:
            value = json.loads(text) if isinstance(text, str) else None
        except ValueError:
            value = None
        if not isinstance(value, dict | list):
            raise NotApplicable(f"{kind}: not a JSON cell")
        return "?", (mutate_value(value, kind, rng),)
    raise ValueError(kind)


def _retype_to_blob(db: Path, table: str, column: str) -> None:
    """Declare ``column`` BLOB in the table's schema, data untouched, so a REAL or an
    INTEGER written to it stays one (a TEXT column turns numbers into text: only a
    writer with another schema, or none, leaves a number in a text column)."""
    conn = sqlite3.connect(db)
    try:
        (sql,) = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
        retyped = re.sub(
            rf'(\b{re.escape(column)}\b["`\]]?\s+)[A-Za-z]+(\([^)]*\))?', r"\1BLOB", sql, count=1
        )
        (version,) = conn.execute("PRAGMA schema_version").fetchone()
        conn.execute("PRAGMA writable_schema = ON")
        conn.execute("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?", (retyped, table))
        conn.execute(f"PRAGMA schema_version = {version + 1}")
        conn.execute("PRAGMA writable_schema = OFF")
        conn.commit()
    finally:
        conn.close()


def _text_affinity(declared: str) -> bool:
    return any(word in declared for word in ("CHAR", "CLOB", "TEXT"))  # SQLite's affinity rule 2


def _edit(db: Path, statements: Callable[[sqlite3.Connection], None]) -> None:
    conn = sqlite3.connect(db)
    try:
        statements(conn)
        conn.commit()
    finally:
        conn.close()


def mutate_sqlite(db: Path, oracle: Path | None, spec: tuple[str, ...], rng: random.Random) -> bool:
    """Apply ``spec`` to ``db`` in place: ``("drop_table", T)``, ``("drop_column", T, C)``
    or ``("cell", T, C, rowid, kind)``.  For a cell, ``oracle`` (a copy of the database)
    gets the row deleted; returns whether there is an oracle."""
    kind, table = spec[0], spec[1]
    if kind == "drop_table":
        _edit(db, lambda c: c.execute(f'DROP TABLE "{table}"'))
        return False
    if kind == "drop_column":
        keep = [f'"{name}"' for name, _ in tables(db)[table] if name != spec[2]]
        if not keep:
            raise NotApplicable("the table's only column")

        def rebuild(c: sqlite3.Connection) -> None:
            c.execute(f'CREATE TABLE "_fuzz" AS SELECT {", ".join(keep)} FROM "{table}"')
            c.execute(f'DROP TABLE "{table}"')
            c.execute(f'ALTER TABLE "_fuzz" RENAME TO "{table}"')

        _edit(db, rebuild)
        return False
    column, rowid, cell = spec[2], int(spec[3]), spec[4]
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        (old,) = conn.execute(f'SELECT "{column}" FROM "{table}" WHERE rowid = ?', (rowid,)).fetchone()
    finally:
        conn.close()
    expr, params = _cell_value(cell, old, rng)
    declared = dict(tables(db)[table])[column]
    if cell in ("real", "integer") and _text_affinity(declared):
        _retype_to_blob(db, table, column)
    try:
        _edit(
            db,
            lambda c: c.execute(
                f'UPDATE "{table}" SET "{column}" = {expr} WHERE rowid = ?', (*params, rowid)
            ),
        )
    except sqlite3.IntegrityError as exc:  # the schema refuses it: no writer can store it either
        raise NotApplicable(str(exc)) from None
    if oracle is not None:
        _edit(oracle, lambda c: c.execute(f'DELETE FROM "{table}" WHERE rowid = ?', (rowid,)))
    return oracle is not None
