"""Writing parse results into the index, and reading messages back.

Fragments are applied with the same :class:`~agentlog.assemble.SessionBuilder`
the in-memory loader uses, seeded with just the stored messages the new
fragments can touch (same message ids, the calls their results answer, orphan
results their calls claim), so an append costs only its own messages.
"""

from __future__ import annotations

import json
import operator
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec

from agentlog.adapters.base import Fragment, ToolOutput
from agentlog.assemble import SessionBuilder, role_id
from agentlog.index import runs
from agentlog.index.deferred import DeferredText
from agentlog.index.fts import index_text, search_text
from agentlog.index.stored import known, row_decoder, stored, stored_time, text_of
from agentlog.index.usage import USAGE_COLUMNS, store_rollups, usage_from
from agentlog.live.status import TAIL, log_status
from agentlog.model import (
    ROLES,
    SESSION_STATUSES,
    Diagnostics,
    Message,
    Part,
    RateLimits,
    Session,
    TextPart,
    ToolCallPart,
    Usage,
    usage_counts,
)
from agentlog.packing import pack
from agentlog.rules import (
    REPLAY_CANDIDATE,
    REPLAYED_PROMPT_AGENTS,
    CallTokens,
    Signature,
    counts_model,
    first_user_text,
    fork_title,
    owner_rank,
    prompt_as_title,
    replayed_prefix,
    session_key,
    spawning_call,
    title_after_replays,
)

_JSON = msgspec.json.Encoder().encode
_PROMPT_AGENTS = ", ".join(f"'{a}'" for a in sorted(REPLAYED_PROMPT_AGENTS))
_DEDUP_CANDIDATE = f"(u.message_rowid IS NOT NULL OR (m.role = 'user' AND s.agent IN ({_PROMPT_AGENTS})))"
"""SQL of :func:`~agentlog.rules.dedup_candidate` over ``messages m LEFT JOIN usage u``
and ``sessions s``."""
_STAMP = "CASE WHEN m.role = 'user' THEN m.timestamp END"
"""The part of :func:`~agentlog.rules.dedup_key` beyond agent, role and id: a prompt's time."""
_SAME_STAMP = "(m.role != 'user' OR o.timestamp IS m.timestamp)"
_CHUNK = 500
_ID, _ROLE = operator.attrgetter("id"), operator.attrgetter("role")
HEADER_COLUMNS = (
    "title", "cwd", "git_branch", "agent_version", "kind", "parent_key", "parent_tool_call_id",
    "subagent_type", "description", "status", "status_evidence", "resume_command",
)  # fmt: skip


def iso(stamp: datetime | None) -> str | None:
    """An aware datetime as sortable ISO 8601 UTC text."""
    return stamp.astimezone(UTC).isoformat(timespec="microseconds") if stamp else None


def encode_headers(headers: list[Session]) -> bytes:
    return pack(headers)


class Store:
    """Index writes for one connection; callers own the transaction."""

    def __init__(
        self, conn: sqlite3.Connection, fresh_source: bool = False, deferred: DeferredText | None = None
    ) -> None:
        self.conn = conn
        self._deferred = deferred
        """Where the ``parts_fts`` rows of the parts written wait for their batch's
        commit (:mod:`agentlog.index.deferred`), else ``None``: inserted at once."""
        self._ensured: set[str] = set()
        self.fresh_source = fresh_source
        """True while a source is written whole: then only what this store wrote
        exists, so look-ups are limited to the ids and call ids it remembers."""
        self._seen: dict[str, tuple[set[str], set[str]]] = {}
        self.written: list[int] = []
        self._titles: dict[str, str | None] = {}
        """Session key → the title its header gives, for the headers written here
        (a source's stored headers are updated after its sessions)."""
        """Rowids of messages written since the last :meth:`refresh_sessions`."""
        self._models: dict[str, list[str]] = {}
        """Session key → models of the messages written since then that name one
        (:func:`~agentlog.rules.counts_model`), in order."""
        self.cleared: set[str] = set()
        """Keys of the sessions of sources cleared since the last refresh."""
        self.recorded: dict[str, Session] = {}
        """Key → the header :meth:`put_headers` wrote last (its recorded status is
        the input of :func:`~agentlog.live.status.log_status`)."""
        self.orphans: set[tuple[str, str, str, str | None]] = set()
        """``(agent, message id)`` of counted calls removed with their source while
        copies remain elsewhere: ownership is decided again at the next refresh."""

    # -- sources --------------------------------------------------------------

    def clear_source(self, source_id: int) -> None:
        """Forget everything one source contributed (before re-reading it whole)."""
        self._forget_sessions(source_id)
        self._adopt_copies(source_id)
        self.conn.execute("DELETE FROM messages WHERE source_id = ?", (source_id,))
        self.conn.execute("DELETE FROM sessions WHERE source_id = ?", (source_id,))

    def remove_source(self, path: str) -> None:
        """Forget a source that vanished, with its sessions; copies of its calls in
        other sources are counted instead, and a source kept as a duplicate copy of
        it is read again by the next sync (it holds those sessions now: left marked,
        no sync read it again, tester14 finding 1)."""
        row = self.conn.execute("SELECT id FROM sources WHERE path = ?", (path,)).fetchone()
        if row is None:
            return
        self._forget_sessions(row[0])
        self._adopt_copies(row[0])
        self.conn.execute("DELETE FROM sources WHERE id = ?", (row[0],))
        self.conn.execute("UPDATE sources SET size = -1 WHERE duplicate_of = ?", (path,))
        self.refresh_sessions(())

    def _forget_sessions(self, source_id: int) -> None:
        """Remember the sessions of a source about to be cleared: their children
        are linked again at the next refresh (their spawning call may be gone)."""
        self.cleared.update(
            key for (key,) in self.conn.execute("SELECT key FROM sessions WHERE source_id = ?", (source_id,))
        )

    def _adopt_copies(self, source_id: int) -> None:
        self.orphans.update(
            self.conn.execute(
                f"""SELECT s.agent, m.id, m.role, {_STAMP} FROM messages m LEFT JOIN usage u ON u.message_rowid = m.rowid
                   JOIN sessions s ON s.key = m.session_key WHERE m.source_id = ? AND m.replayed = 0
                   AND {_DEDUP_CANDIDATE} AND EXISTS (SELECT 1 FROM messages o WHERE o.id = m.id
                   AND o.role = m.role AND o.source_id != m.source_id AND {_SAME_STAMP})""",
                (source_id,),
            )
        )

    def signatures(self, key: str) -> list[Signature]:
        """:func:`~agentlog.rules.signature` of each stored message of session ``key``."""
        return [
            (mid, role, datetime.fromisoformat(when) if when else None)
            for mid, role, when in self.conn.execute(
                "SELECT id, role, timestamp FROM messages WHERE session_key = ?", (key,)
            )
        ]

    def owner_of(self, key: str) -> int | None:
        row = self.conn.execute("SELECT source_id FROM sessions WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    # -- sessions -------------------------------------------------------------

    def put_headers(self, source_id: int, headers: Iterable[Session]) -> None:
        """Write the sessions a source defines; ``models`` adds to what is stored
        (an appended part's header knows only the models it saw)."""
        for h in headers:
            self.recorded[h.key] = h
            self._titles[h.key] = h.title
            values = [getattr(h, c) for c in HEADER_COLUMNS]
            row = self.conn.execute("SELECT models FROM sessions WHERE key = ?", (h.key,)).fetchone()
            models = json.loads(row[0]) if row else []
            models += [m for m in h.models if m not in models]
            self.conn.execute(
                f"""INSERT INTO sessions (key, agent, id, source_id, {", ".join(HEADER_COLUMNS)},
                        models, diagnostics, rate_limits, started_at, ended_at)
                    VALUES (?, ?, ?, ?, {", ".join("?" * len(HEADER_COLUMNS))}, ?, ?, ?, ?, ?)
                    ON CONFLICT(key) DO UPDATE SET
                        {", ".join(f"{c} = excluded.{c}" for c in HEADER_COLUMNS)},
                        models = excluded.models, diagnostics = excluded.diagnostics,
                        rate_limits = excluded.rate_limits,
                        started_at = excluded.started_at, ended_at = excluded.ended_at""",
                (
                    h.key,
                    h.agent,
                    h.id,
                    source_id,
                    *values,
                    json.dumps(models),
                    msgspec.json.encode(h.diagnostics).decode(),
                    msgspec.json.encode(h.rate_limits).decode() if h.rate_limits else None,
                    iso(h.started_at),
                    iso(h.ended_at),
                ),
            )

    def _ensure_session(self, key: str, agent: str, session_id: str, source_id: int) -> None:
        if key in self._ensured:
            return
        self.conn.execute(
            "INSERT OR IGNORE INTO sessions (key, agent, id, source_id, kind) VALUES (?, ?, ?, ?, 'main')",
            (key, agent, session_id, source_id),
        )
        self._ensured.add(key)

    # -- messages -------------------------------------------------------------

    def put_fragments(self, source_id: int, agent: str, fragments: Sequence[Fragment]) -> set[str]:
        """Apply fragments on top of what is stored; returns the touched keys."""
        groups: dict[str, list[Message | ToolOutput]] = {}
        for session_id, item in fragments:
            groups.setdefault(session_id, []).append(item)
        for session_id, items in groups.items():
            key = session_key(agent, session_id)
            self._ensure_session(key, agent, session_id, source_id)
            builder = SessionBuilder(Session(key=key, agent=agent, id=session_id))
            builder.seed(self._related(key, items))
            for item in items:
                builder.add(item)
            if builder.removed:
                self.conn.executemany(
                    "DELETE FROM messages WHERE session_key = ? AND id = ?",
                    [(key, m) for m in builder.removed],
                )
            self._write_messages(key, source_id, list(builder.touched.values()))
        return {session_key(agent, sid) for sid in groups}

    def _related(self, key: str, items: list[Message | ToolOutput]) -> list[Message]:
        """The stored messages of session ``key`` that ``items`` can touch: those of
        their ids (and their ids after a role collision, :func:`role_id`), and those
        holding the calls their results answer or whose orphan results their calls
        claim.  While a source is written whole, only what this store wrote is
        looked for: nothing at all in a session's first batch."""
        seen_ids, seen_calls = self._seen.get(key, (set(), set()))
        if self.fresh_source and not seen_ids:  # none written yet (calls are seen with their messages)
            return []
        messages = [item for item in items if not isinstance(item, ToolOutput)]
        calls = [item.call_id for item in items if isinstance(item, ToolOutput)]
        calls += [p.call_id for m in messages for p in m.parts if isinstance(p, ToolCallPart)]
        ids_of = map(_ID, messages)
        role_ids = map(role_id, map(_ID, messages), map(_ROLE, messages))
        if self.fresh_source:
            ids = seen_ids.intersection(ids_of)
            ids.update(seen_ids.intersection(role_ids))
            answered = seen_calls.intersection(calls)
        else:
            ids, answered = {*ids_of, *role_ids}, set(calls)
        rowids: set[int] = set()
        for chunk in _chunks(sorted(ids)):
            rowids.update(
                r[0]
                for r in self.conn.execute(
                    f"SELECT rowid FROM messages WHERE session_key = ? AND id IN ({_marks(chunk)})",
                    (key, *chunk),
                )
            )
        for chunk in _chunks(sorted(answered)):
            rowids.update(
                r[0]
                for r in self.conn.execute(
                    f"""SELECT m.rowid FROM parts p JOIN messages m ON m.rowid = p.message_rowid
                    WHERE m.session_key = ? AND p.call_id IN ({_marks(chunk)})""",
                    (key, *chunk),
                )
            )
        return self.messages_by_rowid(sorted(rowids), as_stored=True)

    def _write_messages(self, key: str, source_id: int, messages: list[Message]) -> None:
        """Insert new messages and replace changed ones (their parts and usage
        rewritten, and added to the full-text index)."""
        if not messages:
            return
        values = [
            (
                _message_row(m),
                [_part_row(p) for p in m.parts],
                None if m.usage is None else _usage_row(m.usage),
            )
            for m in messages
        ]
        existing = self._stored_rowids(key, messages)
        replayed: set[int] = set()
        if existing:
            stale = [(r,) for r in existing.values()]
            for chunk in _chunks(list(existing.values())):
                replayed.update(
                    r
                    for (r,) in self.conn.execute(
                        f"SELECT rowid FROM messages WHERE replayed = 1 AND rowid IN ({_marks(chunk)})", chunk
                    )
                )
            self.conn.executemany("DELETE FROM parts WHERE message_rowid = ?", stale)
            self.conn.executemany("DELETE FROM usage WHERE message_rowid = ?", stale)
        next_rowid = self.conn.execute("SELECT COALESCE(MAX(rowid), 0) + 1 FROM messages").fetchone()[0]
        first_part = part_rowid = self.conn.execute(
            "SELECT COALESCE(MAX(rowid), 0) + 1 FROM parts"
        ).fetchone()[0]
        message_rows: list[tuple[Any, ...]] = []
        update_rows: list[tuple[Any, ...]] = []
        part_rows: list[tuple[Any, ...]] = []
        huge_parts: list[tuple[Any, ...]] = []
        texts: list[tuple[int, str]] = []
        """``(part rowid, index text)`` of each part with search text (shown or not)."""
        index: list[tuple[int, str | None, str | None]] = []
        """``parts_fts`` rows of the searchable parts among them."""
        usage_rows: list[tuple[Any, ...]] = []
        models = self._models.setdefault(key, [])
        for m, (row, parts, usage) in zip(messages, values, strict=True):
            if counts_model(m) and m.model not in models:
                models.append(m.model)  # type: ignore[arg-type]  # counts_model: not None
            rowid = existing.get(m.id)
            if rowid is None:
                rowid = next_rowid
                next_rowid += 1
                message_rows.append((rowid, key, source_id, m.id, *row))
            else:
                update_rows.append((*row, rowid))
            self.written.append(rowid)
            shown = not m.hidden and rowid not in replayed
            for idx, (kind, tool, call_id, text, data, found) in enumerate(parts):
                column = searchable(kind) if shown and found else 0
                part = (part_rowid, rowid, idx, kind, tool, call_id, text, data, column)
                if len(text) >= HUGE_VALUE or (data is not None and len(data) >= HUGE_VALUE):
                    huge_parts.append(part)
                else:
                    part_rows.append(part)
                if found:
                    texts.append((part_rowid, found))
                    if column:
                        index.append(
                            (part_rowid, found, None) if column == SEARCHED else (part_rowid, None, found)
                        )
                part_rowid += 1
            if usage is not None:
                usage_rows.append((rowid, *usage))
        self.conn.executemany(
            """INSERT INTO messages (rowid, session_key, source_id, id, role, timestamp, model, flags,
                   is_sidechain, offset, hidden) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            message_rows,
        )
        self.conn.executemany(
            """UPDATE messages SET role = ?, timestamp = ?, model = ?, flags = ?, is_sidechain = ?,
                   offset = ?, hidden = ? WHERE rowid = ?""",
            update_rows,
        )
        self.conn.executemany("INSERT INTO usage VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", usage_rows)
        self.conn.executemany(_PARTS_SQL, part_rows)
        del part_rows
        _insert_apart(self.conn, _PARTS_SQL, huge_parts)
        del huge_parts
        runs.add(self.conn, first_part, part_rowid - 1, key)
        if self._deferred is not None:
            self._deferred.add(texts)
            return
        del texts
        huge = [row for row in index if len(row[1] or row[2] or "") >= HUGE_VALUE]
        self.conn.executemany(
            _FTS_SQL, [row for row in index if len(row[1] or row[2] or "") < HUGE_VALUE] if huge else index
        )
        _insert_apart(self.conn, _FTS_SQL, huge)  # one at a time

    def _stored_rowids(self, key: str, messages: list[Message]) -> dict[str, int]:
        """``{message id: rowid}`` of the ``messages`` already stored in session ``key``."""
        lookup = list(map(_ID, messages))
        if self.fresh_source:
            seen_ids, seen_calls = self._seen.setdefault(key, (set(), set()))
            lookup = [i for i in lookup if i in seen_ids] if seen_ids else []
            seen_ids.update(map(_ID, messages))
            seen_calls.update(p.call_id for m in messages for p in m.parts if isinstance(p, ToolCallPart))
        existing: dict[str, int] = {}
        for chunk in _chunks(lookup):
            existing.update(
                self.conn.execute(
                    f"SELECT id, rowid FROM messages WHERE session_key = ? AND id IN ({_marks(chunk)})",
                    (key, *chunk),
                )
            )
        return existing

    def messages_by_rowid(self, rowids: Sequence[int], as_stored: bool = False) -> list[Message]:
        """Messages (parts and usage included) in ``rowids`` order: as a reader
        sees them (a replayed copy flagged ``replayed``, without usage), or with
        ``as_stored`` as they were assembled (to merge new fragments into)."""
        out: dict[int, Message] = {}
        for chunk in _chunks(list(rowids)):
            marks = _marks(chunk)
            for row in self.conn.execute(
                f"""SELECT m.rowid, m.id, m.role, m.timestamp, m.model, m.flags, m.is_sidechain, m.offset,
                        m.replayed, {USAGE_COLUMNS}
                    FROM messages m LEFT JOIN usage u ON u.message_rowid = m.rowid
                    WHERE m.rowid IN ({marks})""",
                chunk,
            ):
                out[row[0]] = message_from(row, as_stored)
            for rowid, data, text in self.conn.execute(
                f"SELECT message_rowid, data, text FROM parts WHERE message_rowid IN ({marks}) ORDER BY message_rowid, idx",
                chunk,
            ):
                out[rowid].parts.append(part_from(data, text))
        return [out[r] for r in rowids if r in out]

    # -- derived columns and cross-session links ----------------------------------

    def refresh_sessions(self, keys: Iterable[str]) -> None:
        """Recompute derived session columns, replay ownership and subagent links
        for the sessions touched since the last call, and rebuild their usage
        roll-ups (:func:`~agentlog.index.usage.store_rollups`: a reader never finds
        them stale) (cost: the touched messages, plus index look-ups per session)."""
        keys = sorted(set(keys))
        written, self.written = self.written, []
        for key in keys:
            self.conn.execute(
                """UPDATE sessions SET
                       started_at = MIN(COALESCE(started_at, '9999'), COALESCE(
                           (SELECT MIN(timestamp) FROM messages WHERE session_key = :k), '9999')),
                       ended_at = MAX(COALESCE(ended_at, ''), COALESCE(
                           (SELECT MAX(timestamp) FROM messages WHERE session_key = :k), ''))
                   WHERE key = :k""",
                {"k": key},
            )
            self.conn.execute(
                "UPDATE sessions SET started_at = NULLIF(started_at, '9999'), ended_at = NULLIF(ended_at, '') "
                "WHERE key = ?",
                (key,),
            )
        forks = self._mark_fork_copies(sorted(set(keys) | self.cleared))
        remarked = self._mark_replays(written)
        for key in set(keys) | remarked | forks:
            self.conn.execute(
                """UPDATE sessions SET message_count = (SELECT COUNT(*) FROM messages
                       WHERE session_key = :k AND hidden = 0 AND replayed = 0) WHERE key = :k""",
                {"k": key},
            )
            if (
                key in remarked
                or self.conn.execute(
                    f"""SELECT 1 FROM messages m JOIN sessions s ON s.key = m.session_key WHERE m.session_key = ?
                    AND m.role = 'user' AND m.replayed = 1 AND s.agent IN ({_PROMPT_AGENTS}) LIMIT 1""",
                    (key,),
                ).fetchone()
            ):
                self._retitle(key)  # its header's title may name a replayed prompt
            self._store_status(key)
        self._add_models()
        store_rollups(self.conn, set(keys) | remarked | forks | self.cleared)
        cleared, self.cleared = self.cleared, set()
        self._link_children(sorted(set(keys) | cleared))

    def _store_status(self, key: str) -> None:
        """:func:`~agentlog.live.status.log_status` of session ``key`` from its
        source's recorded header and its last :data:`~agentlog.live.status.TAIL`
        messages (as the in-memory loader computes it)."""
        row = self.conn.execute(
            "SELECT s.agent, s.kind, src.headers FROM sessions s JOIN sources src ON src.id = s.source_id "
            "WHERE s.key = ?",
            (key,),
        ).fetchone()
        if row is None:
            return
        agent, kind, blob = row
        header = self.recorded.get(key) or _recorded_header(blob, key)
        rowids = [
            r[0]
            for r in self.conn.execute(
                "SELECT rowid FROM messages WHERE session_key = ? ORDER BY rowid DESC LIMIT ?", (key, TAIL)
            )
        ]
        tail = self.messages_by_rowid(rowids[::-1])
        facts = log_status(
            agent,
            kind,
            header.status if header else "unknown",
            header.status_evidence if header else None,
            tail,
        )
        self.conn.execute(
            """UPDATE sessions SET status = ?, status_evidence = ?, status_at = ?, status_since = ?,
                   status_inferred = ?, status_reason = ?, status_pending = ? WHERE key = ?""",
            (
                facts.status,
                facts.evidence,
                iso(facts.at),
                iso(facts.since),
                int(facts.inferred),
                facts.reason,
                json.dumps(list(facts.pending)),
                key,
            ),
        )

    def _add_models(self) -> None:
        found, self._models = self._models, {}
        for key, new in found.items():
            if not new:
                continue
            row = self.conn.execute("SELECT models FROM sessions WHERE key = ?", (key,)).fetchone()
            models = json.loads(row[0]) if row else []
            models += [m for m in new if m not in models]
            self.conn.execute("UPDATE sessions SET models = ? WHERE key = ?", (json.dumps(models), key))

    def _mark_replays(self, rowids: list[int]) -> set[str]:
        """A message id (of one role) with usage — or a Claude Code prompt,
        :func:`~agentlog.rules.dedup_candidate` — in several sessions of one agent
        counts once: in the session :func:`~agentlog.rules.owner_rank` puts first
        (among the copies left, for :attr:`orphans`).  Returns the keys of the
        sessions whose copies were (re)marked."""
        ids, self.orphans = self.orphans, set()
        changed: set[str] = set()
        for chunk in _chunks(rowids):
            ids.update(
                self.conn.execute(
                    f"""SELECT s.agent, m.id, m.role, {_STAMP} FROM messages m LEFT JOIN usage u ON u.message_rowid = m.rowid
                    JOIN sessions s ON s.key = m.session_key WHERE m.rowid IN ({_marks(chunk)})
                    AND {_DEDUP_CANDIDATE} AND EXISTS (SELECT 1 FROM messages o WHERE o.id = m.id
                    AND o.role = m.role AND o.rowid != m.rowid AND {_SAME_STAMP})""",
                    chunk,
                )
            )
        stats: dict[str, tuple[datetime | None, int]] = {}
        for agent, mid, role, stamp in ids:
            copies = self.conn.execute(
                f"""SELECT m.rowid, s.kind, s.key FROM messages m
                   LEFT JOIN usage u ON u.message_rowid = m.rowid JOIN sessions s ON s.key = m.session_key
                   WHERE m.id = ? AND m.role = ? AND s.agent = ? AND {_DEDUP_CANDIDATE}
                   AND (m.role != 'user' OR m.timestamp IS ?)""",
                (mid, role, agent, stamp),
            ).fetchall()
            for _, _, key in copies:
                if key not in stats:
                    stats[key] = self._call_stats(key)
            ranked = sorted(copies, key=lambda c: owner_rank(c[1], *stats[c[2]], c[2]))
            self.conn.executemany(
                "UPDATE messages SET replayed = ? WHERE rowid = ?",
                [(int(i > 0), c[0]) for i, c in enumerate(ranked)],
            )
            changed.update(c[2] for c in copies)
        return changed

    def _retitle(self, key: str) -> None:
        """:func:`~agentlog.rules.title_after_replays` of session ``key``: from the
        title its own header recorded and its user messages as now marked."""
        if key in self._titles:  # stored just now (its source's headers are written after)
            title = self._titles[key]
        else:
            row = self.conn.execute(
                "SELECT src.headers FROM sessions s JOIN sources src ON src.id = s.source_id WHERE s.key = ?",
                (key,),
            ).fetchone()
            title = _recorded_title(row[0] if row else None, key)
        rowids = [
            r
            for (r,) in self.conn.execute(
                "SELECT rowid FROM messages WHERE session_key = ? AND role = 'user' ORDER BY rowid", (key,)
            )
        ]
        self.conn.execute(
            "UPDATE sessions SET title = ? WHERE key = ?",
            (title_after_replays(title, self.messages_by_rowid(rowids)), key),
        )

    def _mark_fork_copies(self, keys: list[str]) -> set[str]:
        """:func:`~agentlog.rules.replayed_prefix` for the forks among ``keys`` and
        the children of ``keys`` that hold ``replay_candidate`` calls: the copied
        calls, and every message before the last of them, are marked ``replayed``
        (as :mod:`agentlog.link` flags them).  Returns the keys (re)marked."""
        rows: set[tuple[str, str]] = set()
        for chunk in _chunks(keys):
            marks = _marks(chunk)
            rows.update(
                self.conn.execute(
                    f"""SELECT key, parent_key FROM sessions s WHERE parent_key IS NOT NULL
                        AND (key IN ({marks}) OR parent_key IN ({marks}))
                        AND EXISTS (SELECT 1 FROM messages m WHERE m.session_key = s.key
                                    AND m.flags LIKE '%"{REPLAY_CANDIDATE}"%')""",
                    (*chunk, *chunk),
                ).fetchall()
            )
        changed: set[str] = set()
        for key, parent_key in sorted(rows):
            child = self._calls_of(key)
            if not any(candidate for _, _, candidate in child):
                continue
            theirs = [tokens for _, tokens, _ in self._calls_of(parent_key)]
            n = replayed_prefix(theirs, [(tokens, candidate) for _, tokens, candidate in child])
            cut = child[n - 1][0] if n else 0
            self.conn.execute(
                "UPDATE messages SET replayed = 1 WHERE session_key = ? AND rowid <= ?", (key, cut)
            )
            self.conn.execute(
                """UPDATE messages SET replayed = 0 WHERE session_key = ? AND rowid > ? AND replayed = 1
                   AND NOT EXISTS (SELECT 1 FROM messages o WHERE o.id = messages.id
                                   AND o.rowid != messages.rowid)""",
                (key, cut),
            )
            self._retitle_fork(key, cut)
            changed.add(key)
        return changed

    def _retitle_fork(self, key: str, cut: int) -> None:
        """:func:`~agentlog.rules.fork_title` of fork ``key`` whose copy ends at
        message ``cut`` (a rowid; 0: no copy), from the title its header
        recorded, as :mod:`agentlog.link` sets it."""
        if key in self._titles:
            title = self._titles[key]
        else:
            row = self.conn.execute(
                "SELECT src.headers FROM sessions s JOIN sources src ON src.id = s.source_id WHERE s.key = ?",
                (key,),
            ).fetchone()
            title = _recorded_title(row[0] if row else None, key)
        rowids = [
            r[0]
            for r in self.conn.execute(
                "SELECT rowid FROM messages WHERE session_key = ? AND role = 'user' ORDER BY rowid", (key,)
            )
        ]
        users = self.messages_by_rowid(rowids)
        copied = {prompt_as_title(m.text) for m, rowid in zip(users, rowids, strict=True) if rowid <= cut}
        own = Session(key=key, agent="", id="", messages=users)
        self.conn.execute(
            "UPDATE sessions SET title = ? WHERE key = ?",
            (fork_title(title, copied, first_user_text(own)), key),
        )

    def _calls_of(self, key: str) -> list[tuple[int, CallTokens, bool]]:
        """``(rowid, tokens, flagged replay_candidate)`` of each stored call of
        session ``key``, in the order its messages were first written."""
        return [
            (rowid, (t[0], t[1], t[2], t[3], t[4], t[5]), f'"{REPLAY_CANDIDATE}"' in flags)
            for rowid, flags, *t in self.conn.execute(
                """SELECT m.rowid, m.flags, u.input_tokens, u.cache_read_tokens, u.cache_write_5m_tokens,
                          u.cache_write_1h_tokens, u.output_tokens, u.reasoning_tokens
                   FROM messages m JOIN usage u ON u.message_rowid = m.rowid
                   WHERE m.session_key = ? ORDER BY m.rowid""",
                (key,),
            )
        ]

    def _call_stats(self, key: str) -> tuple[datetime | None, int]:
        """:func:`~agentlog.rules.call_stats` of session ``key`` as stored (the
        same figures, summed by SQLite: ISO UTC text sorts as time does)."""
        first, count = self.conn.execute(
            """SELECT MIN(m.timestamp), COUNT(*) FROM messages m JOIN usage u ON u.message_rowid = m.rowid
               WHERE m.session_key = ?""",
            (key,),
        ).fetchone()
        return (datetime.fromisoformat(first) if first else None), count

    def _link_children(self, keys: list[str]) -> None:
        """:func:`~agentlog.rules.spawning_call` for the children of ``keys`` (and
        the children among them) whose spawning call their own header does not
        name: a child whose parent changed is linked again, as loading in memory
        links it, even when its own source did not change (proof-10)."""
        rows: list[tuple[str, str, str]] = []
        for chunk in _chunks(keys):
            marks = _marks(chunk)
            rows += self.conn.execute(
                f"""SELECT key, id, parent_key FROM sessions WHERE parent_key IS NOT NULL
                    AND parent_tool_call_id IS NULL AND (key IN ({marks}) OR parent_key IN ({marks}))""",
                (*chunk, *chunk),
            ).fetchall()
            for key, sid, parent_key, blob in self.conn.execute(
                f"""SELECT s.key, s.id, s.parent_key, src.headers FROM sessions s
                    JOIN sources src ON src.id = s.source_id
                    WHERE s.parent_key IN ({marks}) AND s.key NOT IN ({marks})
                    AND s.parent_tool_call_id IS NOT NULL""",
                (*chunk, *chunk),
            ):
                if _recorded_call(blob, key) is None:  # linked by the rule, not by its header
                    rows.append((key, sid, parent_key))
        for key, sid, parent_key in rows:
            parent = Session(key=parent_key, agent="", id="")
            parent.messages = self.messages_by_rowid(
                [
                    r[0]
                    for r in self.conn.execute(
                        """SELECT DISTINCT m.rowid FROM messages m JOIN parts p ON p.message_rowid = m.rowid
                   WHERE m.session_key = ? AND p.type = 'tool_call' ORDER BY m.rowid""",
                        (parent_key,),
                    )
                ]
            )
            child = Session(key=key, agent="", id=sid)
            for (rowid,) in self.conn.execute(
                "SELECT rowid FROM messages WHERE session_key = ? AND role = 'user' AND hidden = 0 ORDER BY rowid",
                (key,),
            ).fetchall():
                child.messages = self.messages_by_rowid([rowid])
                if child.messages[0].text.strip():  # the first visible user text, as in memory
                    break
            self.conn.execute(
                "UPDATE sessions SET parent_tool_call_id = ? WHERE key = ?",
                (spawning_call(parent, child), key),
            )


def _recorded_header(headers: bytes | None, key: str) -> Session | None:
    """Session ``key``'s own header as its source's parse recorded it (``None``
    when none, or unknown)."""
    if not headers:
        return None
    for header in recorded_headers(headers):
        if header.key == key:
            return header
    return None


def _recorded_title(headers: bytes | None, key: str) -> str | None:
    """The title session ``key``'s own header recorded, from its source's stored
    headers (``None`` when none, or unknown)."""
    header = _recorded_header(headers, key)
    return header.title if header else None


def _recorded_call(headers: bytes | None, key: str) -> str | None:
    """The ``parent_tool_call_id`` session ``key``'s own header recorded, from its
    source's stored headers (``None`` when none, or unknown)."""
    header = _recorded_header(headers, key)
    return header.parent_tool_call_id if header else None


@row_decoder("message")
def message_from(row: tuple[Any, ...], as_stored: bool = False) -> Message:
    """A message (no parts) from the columns :meth:`Store.messages_by_rowid` selects."""
    flags = json.loads(row[5])
    if type(flags) is not list:
        raise TypeError("flags are no list")
    replayed = bool(row[8]) and not as_stored
    usage = usage_from(row[9:19]) if row[9] is not None and not replayed else None
    message = Message(
        id=row[1],
        role=known(row[2], ROLES),  # type: ignore[arg-type]
        timestamp=stored_time(row[3]),
        model=row[4],
        flags=flags,
        is_sidechain=bool(row[6]),
        offset=row[7],
        usage=usage,
    )
    if replayed:
        message.flag("replayed")
    return message


_PARTS_SQL = (
    "INSERT INTO parts (rowid, message_rowid, idx, type, tool, call_id, text, data, searchable) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_FTS_SQL = "INSERT INTO parts_fts (rowid, text, reasoning) VALUES (?, ?, ?)"

HUGE_VALUE = 1 << 20
"""Characters of a text (bytes of a packed part) from which its row is written
apart (:func:`_insert_apart`)."""


def _insert_apart(conn: sqlite3.Connection, sql: str, rows: list[tuple[Any, ...]]) -> None:
    """Run ``INSERT … VALUES`` statement ``sql`` for each of ``rows`` (each holding
    a :data:`HUGE_VALUE`), then let go of what it bound.

    SQLite copies a bound text (Python's ``sqlite3`` binds ``SQLITE_TRANSIENT``)
    and a cached statement keeps its last bindings until it is run again: after a
    64 MiB part, that copy stayed in memory through the full-text indexing that
    comes next (~150 MB more for a text of that size).  So each row is inserted as
    ``INSERT … SELECT ?, … WHERE ?`` (true), and the statement is run once more
    with NULLs and false, which inserts nothing and binds nothing large."""
    if not rows:
        return
    columns, values = sql.split(" VALUES ", 1)
    apart = f"{columns} SELECT {values.strip()[1:-1]} WHERE ?"
    for row in rows:
        conn.execute(apart, (*row, 1))
    conn.execute(apart, (*(None for _ in rows[0]), 0))


def _message_row(m: Message) -> tuple[Any, ...]:
    """``messages`` values from ``role`` to ``hidden``."""
    return (
        m.role,
        iso(m.timestamp),
        m.model,
        _JSON(m.flags).decode() if m.flags else "[]",
        int(m.is_sidechain),
        m.offset,
        int(m.hidden),
    )


SEARCHED, REASONING = 1, 2
"""``parts.searchable``: in ``parts_fts``'s ``text`` column (searched by default), in
its ``reasoning`` column (searched on request); 0: not in ``parts_fts`` (a hidden or
replayed message's part, or a part with no search text)."""


def searchable(part_type: str) -> int:
    """``parts.searchable`` of a visible message's part of type ``part_type``."""
    return REASONING if part_type == "reasoning" else SEARCHED


COPY_KEY = "\x00agentlog:output"
"""Stored in place of a string of a structured tool result that its output already
holds: ``{COPY_KEY: [start, end]}``, the output's ``[start:end]``."""
MIN_COPY = 64
"""Shorter strings of a structured result are stored as they are."""
_COPY_BYTES = COPY_KEY.encode()


def _lean(value: Any, output: str) -> Any:
    """``value`` (a structured result) with each string of at least :data:`MIN_COPY`
    characters that ``output`` contains as a reference to it (``value`` itself when
    there is none): Claude's ``toolUseResult`` repeats the output (``stdout``,
    ``content``), Codex's end events too."""
    if len(output) < MIN_COPY:
        return value  # no string it could hold
    return _leaner(value, output)


def _leaner(value: Any, output: str) -> Any:
    """:func:`_lean` of ``value`` once ``output`` is long enough to hold a copy: a
    new list or dict is made only once an item changes, and numbers and short
    strings are not looked into."""
    if isinstance(value, str):
        at = output.find(value) if len(value) >= MIN_COPY else -1
        return {COPY_KEY: [at, at + len(value)]} if at >= 0 else value
    if isinstance(value, list):
        return _lean_items(value, enumerate(value), output)
    if isinstance(value, dict) and COPY_KEY not in value:
        return _lean_items(value, iter(value.items()), output)
    return value


def _lean_items(
    value: list[Any] | dict[Any, Any], items: Iterator[tuple[Any, Any]], output: str
) -> list[Any] | dict[Any, Any]:
    """:func:`_leaner` of a list or dict given with its ``(index or key, item)``
    pairs: ``value`` itself, or a copy from the first item changed on."""
    for at, item in items:
        lean = item if _fixed(item) else _leaner(item, output)
        if lean is not item:
            copy = value.copy()
            copy[at] = lean
            for rest_at, rest in items:  # the items after it
                copy[rest_at] = _leaner(rest, output)
            return copy
    return value


_SCALARS = (int, float, bool, type(None))


def _fixed(value: Any) -> bool:
    """True for a value :func:`_leaner` would return as it is (a number, a bool,
    ``None``, a string shorter than :data:`MIN_COPY`)."""
    kind = type(value)
    return kind in _SCALARS or (kind is str and len(value) < MIN_COPY)


def _restore(value: Any, output: str) -> Any:
    """``value`` as it was before :func:`_lean`."""
    if isinstance(value, dict):
        span = value.get(COPY_KEY)
        if len(value) == 1 and isinstance(span, list):
            return output[span[0] : span[1]]
        return {k: _restore(v, output) for k, v in value.items()}
    if isinstance(value, list):
        return [_restore(v, output) for v in value]
    return value


def _packed(part: Part) -> bytes:
    """``part`` as ``parts.data``: a tool call's structured result without the text
    its output already holds (one copy of each tool result)."""
    if isinstance(part, ToolCallPart) and part.result is not None and isinstance(part.result.output, str):
        lean = _lean(part.result.structured, part.result.output)
        if lean is not part.result.structured:
            result = msgspec.structs.replace(part.result, structured=lean)
            return pack(msgspec.structs.replace(part, result=result))
    return pack(part)


def recorded_headers(headers: bytes) -> list[Session]:
    """A source's ``headers`` column: the session headers its parse recorded."""
    return stored(headers, list[Session], "session header")


def part_from(data: bytes | None, text: object) -> Part:
    """The part of a ``parts`` row's ``data`` and ``text``: a plain text part when
    ``data`` is NULL (:func:`_part_row`)."""
    return TextPart(text=text_of(text)) if data is None else stored_part(data)


def stored_part(data: bytes) -> Part:
    """The part :func:`_packed` stored as ``data``."""
    part: Part = stored(data, Part, "part")  # type: ignore[arg-type]
    if _COPY_BYTES not in data:
        return part
    if isinstance(part, ToolCallPart) and part.result is not None and isinstance(part.result.output, str):
        part.result.structured = _restore(part.result.structured, part.result.output)
    return part


def _part_row(part: Part) -> tuple[str, str | None, str | None, str, bytes | None, str]:
    """``parts`` values ``type, tool, call_id, text, data``, and what ``parts_fts``
    indexes for it (:func:`~agentlog.index.fts.index_text`).  ``text`` is a plain
    text part's text, else empty: the part is in ``data`` alone, once."""
    call = part if isinstance(part, ToolCallPart) else None
    text = part.text if type(part) is TextPart else None
    return (
        str(part.__struct_config__.tag),
        call.tool if call else None,
        call.call_id if call else None,
        text or "",
        None if text is not None else _packed(part),
        index_text(search_text(part)),
    )


def _usage_row(u: Usage) -> tuple[Any, ...]:
    """``usage`` values after ``message_rowid``, in :data:`USAGE_COLUMNS` order."""
    return (*usage_counts(u), u.cost_usd, u.cost_source, u.service_tier)


@row_decoder("session header")
def session_from_row(row: sqlite3.Row) -> Session:
    """A session header (no messages) from a ``sessions`` row with its source's
    ``archived`` column (:data:`agentlog.index.queries.ARCHIVED`)."""
    session = Session(
        key=row["key"],
        agent=row["agent"],
        id=row["id"],
        models=json.loads(row["models"]),
        diagnostics=msgspec.json.decode(row["diagnostics"], type=Diagnostics),
        started_at=stored_time(row["started_at"]),
        ended_at=stored_time(row["ended_at"]),
        rate_limits=msgspec.json.decode(row["rate_limits"], type=RateLimits) if row["rate_limits"] else None,
    )
    for column in HEADER_COLUMNS:
        setattr(session, column, row[column])
    known(session.status, SESSION_STATUSES)
    if type(session.models) is not list:
        raise TypeError("models are no list")
    session.status_at = stored_time(row["status_at"])
    session.status_since = stored_time(row["status_since"])
    session.status_inferred = bool(row["status_inferred"])
    session.status_reason = row["status_reason"]
    session.status_pending = json.loads(row["status_pending"])
    session.archived = bool(row["archived"])  # selected with queries.ARCHIVED
    session.prompt_only = bool(row["prompt_only"])
    return session


def _chunks(values: Sequence[Any]) -> Iterable[Sequence[Any]]:
    for i in range(0, len(values), _CHUNK):
        yield values[i : i + _CHUNK]


def _marks(chunk: Sequence[Any]) -> str:
    return ", ".join("?" * len(chunk))
