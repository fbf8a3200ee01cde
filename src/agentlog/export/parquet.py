"""The Parquet export: the archive as a dataset for DuckDB, pandas, polars, Spark.

Four tables, each a folder of Parquet files partitioned Hive-style by
``agent=<slug>/month=<YYYY-MM>`` (``month=unknown`` without a time):

- ``sessions``: one row per session (its key, the header columns it shares with
  the Python API's table, :mod:`agentlog.session_columns`, and usage totals, in tokens);
- ``messages``: one row per message (``idx`` its place, its text parts joined,
  its usage buckets, ``null`` when it carried none), meta messages included
  and flagged;
- ``parts``: one row per part (``type``; text, tool call name, input as JSON,
  output as text, status);
- ``usage``: one row per usage record the usage reports count (the service's
  :func:`agentlog.service.usage.index_usage`: the same calls and totals as
  ``agentlog usage``), with its cost in USD.

Sessions, messages and parts are partitioned by the session's start month,
usage by the call's own month.  Rows are written in batches of :data:`BATCH`
rows or :data:`BATCH_CHARS` characters of text, so a large archive never sits
in memory; a huge text (:data:`~agentlog.export.HUGE`) is held once, as Arrow, while
written.  Read with e.g. DuckDB
``read_parquet('out/messages/**/*.parquet', hive_partitioning = true)`` or
``pyarrow.dataset.dataset('out/messages', partitioning='hive')``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from agentlog.errors import UsageError
from agentlog.export import HUGE, Transcript
from agentlog.export.target import Target, scratch_folder
from agentlog.model import Message, Session, TextPart, ToolCallPart, Usage
from agentlog.present import output_text
from agentlog.session_columns import session_fields, session_values
from agentlog.usage.pricing import PricedCall
from agentlog.usage.report import BUCKETS as REPORT_BUCKETS

BATCH = 10_000
"""Rows of one table gathered at most before they are written."""
BATCH_CHARS = 1 << 23
"""Characters of text (8 Mi) of one table's rows gathered at most before they are
written.  Batches of 50,000 rows (each table's gathered at once, as Python dicts,
then as an Arrow table) held 588 MB for a 315 MB session."""
MARKER = ".agentlog-parquet"
"""The file that marks a folder as an agentlog dataset (re-exporting replaces its tables)."""
TABLES = ("sessions", "messages", "parts", "usage")
BUCKETS = tuple(b for b in REPORT_BUCKETS if b.endswith("_tokens"))
"""The token buckets, as the usage reports name them."""


def month(stamp: datetime | None) -> str:
    """``YYYY-MM`` of an aware time (UTC), ``unknown`` without one."""
    return stamp.strftime("%Y-%m") if stamp else "unknown"


def _schemas() -> dict[str, Any]:
    import pyarrow as pa

    time = pa.timestamp("us", tz="UTC")
    tokens = [(b, pa.int64()) for b in BUCKETS]
    where = [("agent", pa.string()), ("month", pa.string())]
    return {
        "sessions": pa.schema(
            [
                ("key", pa.string()),
                *session_fields(pa),
                *tokens,
                *where,
            ]
        ),
        "messages": pa.schema(
            [
                ("session_key", pa.string()),
                ("idx", pa.int64()),
                ("id", pa.string()),
                ("role", pa.string()),
                ("timestamp", time),
                ("model", pa.string()),
                ("flags", pa.list_(pa.string())),
                ("text", pa.string()),
                ("parts", pa.int64()),
                *tokens,
                *where,
            ]
        ),
        "parts": pa.schema(
            [
                ("session_key", pa.string()),
                ("message_idx", pa.int64()),
                ("idx", pa.int64()),
                ("type", pa.string()),
                ("text", pa.string()),
                ("tool", pa.string()),
                ("raw_name", pa.string()),
                ("call_id", pa.string()),
                ("input", pa.string()),
                ("output", pa.string()),
                ("is_error", pa.bool_()),
                ("status", pa.string()),
                *where,
            ]
        ),
        "usage": pa.schema(
            [
                ("session_key", pa.string()),
                ("model", pa.string()),
                ("timestamp", time),
                ("calls", pa.int64()),
                *tokens,
                ("cost_usd", pa.float64()),
                ("cost_source", pa.string()),
                *where,
            ]
        ),
    }


def _buckets(usage: Usage | None) -> dict[str, int | None]:
    return {b: (getattr(usage, b) if usage is not None else None) for b in BUCKETS}


def session_row(s: Session) -> dict[str, Any]:
    """A ``sessions`` row."""
    return {
        "key": s.key,
        **session_values(s),
        **_buckets(s.usage),
        "agent": s.agent,
        "month": month(s.started_at),
    }


def message_row(s: Session, idx: int, m: Message) -> dict[str, Any]:
    """A ``messages`` row."""
    return {
        "session_key": s.key,
        "idx": idx,
        "id": m.id,
        "role": m.role,
        "timestamp": m.timestamp,
        "model": m.model,
        "flags": list(m.flags),
        "text": m.text,
        "parts": len(m.parts),
        **_buckets(m.usage),
        "agent": s.agent,
        "month": month(s.started_at),
    }


def part_rows(s: Session, idx: int, m: Message) -> Iterable[dict[str, Any]]:
    """The ``parts`` rows of message ``idx``."""
    for i, p in enumerate(m.parts):
        row: dict[str, Any] = {
            "session_key": s.key,
            "message_idx": idx,
            "idx": i,
            "type": str(p.__struct_config__.tag),
            "agent": s.agent,
            "month": month(s.started_at),
        }
        if isinstance(p, TextPart):
            row["text"] = p.text
        elif isinstance(p, ToolCallPart):
            row.update(
                tool=p.tool,
                raw_name=p.raw_name,
                call_id=p.call_id,
                input=json.dumps(p.input, ensure_ascii=False, default=str),
            )
            if p.result is not None:
                row.update(
                    output=output_text(p.result.output), is_error=p.result.is_error, status=p.result.status
                )
        else:
            row["text"] = getattr(p, "text", None) or getattr(p, "summary", None)
        yield row


def usage_row(priced: PricedCall) -> dict[str, Any]:
    """A ``usage`` row."""
    call = priced.call
    return {
        "session_key": call.session_key,
        "model": call.model,
        "timestamp": call.timestamp,
        "calls": call.calls,
        **_buckets(call.usage),
        "cost_usd": priced.cost_usd,
        "cost_source": priced.cost_source,
        "agent": call.agent,
        "month": month(call.timestamp),
    }


def _prepare(folder: Path, target: Target) -> Path:
    """``folder`` resolved, checked with each table's folder in it (``target``), and
    marked: an empty folder, a new one, or an earlier dataset (its tables are
    replaced at the end); else refused."""
    real = target.check(folder)
    if real.exists():
        if not real.is_dir():
            raise UsageError(f"{folder} is not a folder")
        if any(real.iterdir()) and not (real / MARKER).is_file():
            raise UsageError(
                f"{folder} is not empty and not an agentlog Parquet export: choose another folder"
            )
    for table in TABLES:
        target.check(real / table)
    target.folder(real)
    target.write_text(real / MARKER, lambda out: out.write(MARKER_TEXT))
    return real


MARKER_TEXT = "agentlog Parquet dataset: sessions, messages, parts, usage\n"


PARTITION = ("agent", "month")
"""The columns each table is partitioned by (folders, not columns of its files)."""
TEXT_COLUMNS = frozenset({"text", "input", "output"})
"""Columns of log text: no dictionary and no min/max statistics for them (a
value's statistics held two more copies of it while written: a 64 MiB prompt
took 947 MB), as the Parquet files' data pages of version 2, whose values are
not copied again beside their levels."""


def arrow_values(rows: Sequence[dict[str, Any]]) -> None:
    """Each text value (:data:`TEXT_COLUMNS`) of ``rows`` of
    :data:`~agentlog.export.HUGE` characters or more replaced, in
    place, by a one-value Arrow array: one array for each string, however many
    rows hold it (a message's text and its one text part's are the same string),
    so the string is freed once the caller lets go of the message."""
    import pyarrow as pa

    made: dict[int, tuple[str, Any]] = {}  # each string kept beside its array: its id stays its own
    for row in rows:
        for name, value in row.items():
            if name in TEXT_COLUMNS and isinstance(value, str) and len(value) >= HUGE:
                if id(value) not in made:
                    made[id(value)] = (value, pa.array([value], pa.string()))
                row[name] = made[id(value)][1]


def _column(values: list[Any], kind: Any) -> Any:
    """One column of a table: an Arrow array of ``values``, or a chunked array
    when some are one-value arrays (:func:`arrow_values`), put in place as they are."""
    import pyarrow as pa

    if not any(isinstance(v, pa.Array) for v in values):
        return pa.array(values, kind)
    chunks: list[Any] = []
    run: list[Any] = []
    for value in values:
        if isinstance(value, pa.Array):
            if run:
                chunks.append(pa.array(run, kind))
                run = []
            chunks.append(value)
        else:
            run.append(value)
    if run:
        chunks.append(pa.array(run, kind))
    return pa.chunked_array(chunks, kind)


class _Writer:
    """Rows of one table gathered and written in batches to its partitioned
    folder: one file per batch and partition, ``agent=<slug>/month=<YYYY-MM>/part-<batch>-0.parquet``."""

    def __init__(self, folder: Path, name: str, schema: Any) -> None:
        self.folder, self.name = folder / name, name
        self.schema = schema
        self.stored = [f for f in schema if f.name not in PARTITION]
        """The fields written in the files (the partition columns are their folders)."""
        self.rows: list[dict[str, Any]] = []
        self.chars = 0
        """Characters of the text values of :attr:`rows` (bytes of their Arrow ones)."""
        self.batches = 0
        self.count = 0

    def add(self, row: dict[str, Any]) -> None:
        import pyarrow as pa

        self.rows.append(row)
        self.chars += sum(
            len(v) if isinstance(v, str) else v.nbytes if isinstance(v, pa.Array) else 0 for v in row.values()
        )
        if len(self.rows) >= BATCH or self.chars >= BATCH_CHARS:
            self.flush()

    def flush(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        rows, self.rows = self.rows, []
        self.chars = 0
        if not rows:
            return
        self.count += len(rows)
        parts: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for row in rows:
            parts.setdefault((row["agent"], row["month"]), []).append(row)
        del rows
        plain = [f.name for f in self.stored if f.name not in TEXT_COLUMNS]
        while parts:
            (agent, when), batch = parts.popitem()
            columns = [_column([r.get(f.name) for r in batch], f.type) for f in self.stored]
            del batch  # the rows are not held beside their table while it is written
            table = pa.Table.from_arrays(columns, schema=pa.schema(self.stored))
            del columns
            folder = self.folder / f"agent={quote(agent, safe='')}" / f"month={quote(when, safe='')}"
            folder.mkdir(parents=True, exist_ok=True)
            pq.write_table(
                table,
                folder / f"part-{self.batches}-0.parquet",
                use_dictionary=plain,
                write_statistics=plain,
                data_page_version="2.0",
            )
            del table
        self.batches += 1


def write_dataset(
    transcripts: Iterable[Transcript], usage: Sequence[PricedCall], folder: Path, target: Target
) -> dict[str, int]:
    """The dataset of the transcripts (each with its exported children) and the
    ``usage`` records in ``folder``; returns the rows written per table.
    Raises :class:`~agentlog.errors.UsageError` for a folder that holds other
    files, or one ``target`` refuses (it or a table's folder in it).  The tables
    are written in a new folder of this export's inside ``folder``, then each
    moved into place (:meth:`~agentlog.export.target.Target.replace_folder`):
    pyarrow never writes through a link that was there."""
    real = _prepare(folder, target)
    scratch = scratch_folder(real)
    try:
        schemas = _schemas()
        writers = {name: _Writer(scratch, name, schemas[name]) for name in TABLES}
        for t in transcripts:
            for member in t.tree():
                s = member.session
                writers["sessions"].add(session_row(s))
                idx = 0  # not enumerate: it keeps the last message until the next
                for m in member.messages():
                    rows = [message_row(s, idx, m), *part_rows(s, idx, m)]
                    del m  # a huge text is then held by its rows alone, as Arrow once converted
                    arrow_values(rows)
                    writers["messages"].add(rows[0])
                    for row in rows[1:]:
                        writers["parts"].add(row)
                    del rows
                    idx += 1  # noqa: SIM113 (enumerate keeps the last message in its tuple)
        for priced in usage:
            writers["usage"].add(usage_row(priced))
        for writer in writers.values():
            writer.flush()
        for name in TABLES:
            target.replace_folder(scratch / name, real / name)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {name: w.count for name, w in writers.items()}
