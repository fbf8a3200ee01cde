"""The index's SQLite schema and its numbered migrations.

A user can open the index with ``sqlite3`` or datasette.  Tables:

``sources``
    One row per log file (or database) read: ``path``, ``agent``, the ``size``,
    ``mtime_ns``, ``ctime_ns`` and ``inode`` seen at the last sync, ``parsed_offset`` (bytes
    consumed; a half-written last line is not), ``tail_hash`` (SHA-1 of the 64
    bytes before ``parsed_offset``: an appended file must still end with them),
    ``parser_version``, ``parser_state`` (msgpack, to resume an append-only
    parse), ``headers`` (msgpack of the sessions it defined), ``sidecars`` (JSON
    list of the small files read with it) and ``sidecar_sig`` (their sizes and
    mtimes: a changed sidecar means a whole re-read), ``error`` (why it
    could not be read; retried when it changes), ``duplicate_of`` (a copy of a
    session another source already holds), ``archived_at`` (ISO 8601 UTC time a sync
    first found the source gone — deleted, or in a folder that cannot be read — or
    unreadable: its sessions are kept, listed, searched and counted, until
    ``agentlog prune``; NULL while it is there).
``sessions``
    One row per session: ``key`` (``agent:id``), agent, id, title, cwd, git
    branch, times (ISO 8601 UTC text), ``models`` (JSON list), subagent/fork links
    (``parent_key``, ``parent_tool_call_id``, ``kind``), status, resume command,
    ``diagnostics`` (JSON), ``rate_limits`` (JSON: the last subscription rate-limit
    snapshot the agent recorded, Codex), ``prompt_only`` (1: a session whose transcript
    is gone, known from the agent's prompt history: its prompts only, see
    :mod:`agentlog.index.history`), and derived ``message_count`` / ``started_at`` /
    ``ended_at`` kept current from its messages (``message_count`` counts the
    visible ones).
``messages``
    One row per message in session order (``rowid``): ``session_key``, the
    message ``id``, ``role``, ``timestamp``, ``model``, ``flags`` (JSON list),
    ``is_sidechain``, ``offset`` (byte offset of its first record in the source),
    ``hidden`` (meta/injected/unknown: not shown by default),
    ``replayed`` (1 on a copy of a call first recorded in another session: its
    usage row is kept but not counted).
``parts``
    The message's parts in order (``idx``): ``type`` (text, reasoning, tool_call,
    file, compaction, unknown), ``tool`` and ``call_id`` for tool calls, ``text``
    (a plain text part's text, else empty) and ``data`` (msgpack of the part, tool
    result merged in, a structured result without the strings its output holds;
    NULL for a plain text part, which is ``text`` alone): each part is stored once.
    ``searchable``: 1 (in ``parts_fts``'s ``text`` column), 2 (reasoning: its
    ``reasoning`` column) or 0 (not indexed: a hidden or replayed message's part,
    or one without search text).
``usage``
    One row per billed call (message): the exclusive token buckets
    (``input_tokens``, ``cache_read_tokens``, ``cache_write_5m_tokens``,
    ``cache_write_1h_tokens``, ``output_tokens``, ``reasoning_tokens``),
    ``web_search_requests``, ``cost_usd``, ``cost_source``, ``service_tier`` (the
    recorded tier when not the standard one: ``priority``, ``flex``, ``fast`` …).
    Totals skip rows whose message is ``replayed``.
``parts_fts``
    FTS5 (columns ``text`` and ``reasoning``, see ``parts.searchable``) over each searchable part's search text (:func:`agentlog.index.fts.search_text`:
    text, reasoning, tool name + input + output) as rewritten by
    :func:`agentlog.index.fts.index_text` for unspaced scripts and emoji.  Its
    external content is the view ``parts_search`` (``rowid``, ``text``), computed
    by the SQL function ``agentlog_index_text(parts.text, parts.data)`` that
    agentlog registers on its connections (a plain ``sqlite3`` shell can ``MATCH``
    but not read the view).  Rows are added in bulk right after their parts are
    written, removed by a delete trigger; FTS5 ``hashsize`` 16 MB.
``usage_rollup``
    Counted usage summed per session, ``model``, ``service_tier``, 15-minute
    ``bucket`` (UTC ``YYYY-MM-DDTHH:MM`` of its start; NULL for calls without a
    time) and ``recorded`` (1: the agent wrote the cost, summed in
    ``recorded_nano_usd``: whole nano-dollars, :mod:`agentlog.usage.money`): ``calls``,
    the token buckets, ``first_at``/``last_at`` (the first and last call's time)
    and ``min_prompt``/``max_prompt`` (the smallest and largest whole prompt,
    input + cache read + cache writes, of one call: a price tier boundary between
    them means the calls are priced one by one).  A cache of ``usage``: a sync
    rebuilds the roll-ups of the sessions it touches before it commits; those of a
    session listed nowhere in ``usage_rollup_state`` (deleted messages, an index
    an older agentlog synced) are rebuilt by the next usage report, or summed for
    one read on a read-only connection.
``session_usage``
    Each session's header totals (``Session.usage``: the sum of its calls not
    ``replayed``; the token buckets, ``web_search_requests``, ``cost_usd``, the one
    ``cost_source`` of its calls or NULL, and ``total_tokens``), a row per session
    with usage: kept with its roll-ups, fresh while its ``usage_rollup_state`` row is.
``part_runs``
    Each session's runs of part rowids: parts ``first_rowid`` to ``last_rowid``
    (inclusive) are ``session_key``'s, or deleted (:mod:`agentlog.index.runs`); kept
    by the store as it writes parts.
``price_cache``
    Price tables resolved from genai-prices and the user's overrides (JSON per
    ``model``, UTC ``day`` and ``service_tier``), valid while ``fingerprint`` (the
    files they came from) is unchanged: a usage report on an unchanged index does
    not load the price library at all.
"""

from __future__ import annotations

APPLICATION_ID = 0x41474C47
"""``PRAGMA application_id`` of an agentlog index (ASCII ``AGLG``), stored at
offset 68 of the database header (https://sqlite.org/fileformat.html §1.3.13):
what tells an index apart from any other SQLite file without opening it."""

MIGRATIONS: list[str] = [
    # 1: the first schema
    """
    CREATE TABLE sources (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        agent TEXT NOT NULL,
        size INTEGER NOT NULL DEFAULT 0,
        mtime_ns INTEGER NOT NULL DEFAULT 0,
        inode INTEGER NOT NULL DEFAULT 0,
        parsed_offset INTEGER NOT NULL DEFAULT 0,
        tail_hash BLOB,
        parser_version INTEGER,
        parser_state BLOB,
        headers BLOB,
        sidecars TEXT NOT NULL DEFAULT '[]',
        sidecar_sig TEXT NOT NULL DEFAULT '',
        error TEXT,
        duplicate_of TEXT,
        synced_at TEXT
    );
    CREATE TABLE sessions (
        key TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        id TEXT NOT NULL,
        source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
        title TEXT,
        cwd TEXT,
        git_branch TEXT,
        agent_version TEXT,
        kind TEXT NOT NULL,
        parent_key TEXT,
        parent_tool_call_id TEXT,
        subagent_type TEXT,
        description TEXT,
        status TEXT,
        status_evidence TEXT,
        resume_command TEXT,
        models TEXT NOT NULL DEFAULT '[]',
        diagnostics TEXT NOT NULL DEFAULT '{}',
        message_count INTEGER NOT NULL DEFAULT 0,
        started_at TEXT,
        ended_at TEXT
    );
    CREATE INDEX sessions_agent ON sessions(agent, started_at);
    CREATE INDEX sessions_parent ON sessions(parent_key);
    CREATE INDEX sessions_source ON sessions(source_id);
    CREATE TABLE messages (
        rowid INTEGER PRIMARY KEY,
        session_key TEXT NOT NULL,
        source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
        id TEXT NOT NULL,
        role TEXT NOT NULL,
        timestamp TEXT,
        model TEXT,
        flags TEXT NOT NULL DEFAULT '[]',
        is_sidechain INTEGER NOT NULL DEFAULT 0,
        offset INTEGER,
        hidden INTEGER NOT NULL DEFAULT 0,
        replayed INTEGER NOT NULL DEFAULT 0,
        UNIQUE (session_key, id)
    );
    CREATE INDEX messages_id ON messages(id);
    CREATE INDEX messages_time ON messages(session_key, timestamp);
    CREATE INDEX messages_visible ON messages(session_key, hidden, replayed);
    CREATE INDEX messages_source ON messages(source_id);
    CREATE TABLE parts (
        rowid INTEGER PRIMARY KEY,
        message_rowid INTEGER NOT NULL REFERENCES messages(rowid) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        type TEXT NOT NULL,
        tool TEXT,
        call_id TEXT,
        text TEXT NOT NULL DEFAULT '',
        data BLOB
    );
    CREATE INDEX parts_message ON parts(message_rowid, idx);
    CREATE INDEX parts_call ON parts(call_id) WHERE call_id IS NOT NULL;
    CREATE TABLE usage (
        message_rowid INTEGER PRIMARY KEY REFERENCES messages(rowid) ON DELETE CASCADE,
        input_tokens INTEGER NOT NULL,
        cache_read_tokens INTEGER NOT NULL,
        cache_write_5m_tokens INTEGER NOT NULL,
        cache_write_1h_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        reasoning_tokens INTEGER NOT NULL,
        web_search_requests INTEGER NOT NULL,
        cost_usd REAL,
        cost_source TEXT
    );
    CREATE VIRTUAL TABLE parts_fts USING fts5(
        text, content='parts', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER parts_ai AFTER INSERT ON parts BEGIN
        INSERT INTO parts_fts(rowid, text) VALUES (new.rowid, new.text);
    END;
    CREATE TRIGGER parts_ad AFTER DELETE ON parts BEGIN
        INSERT INTO parts_fts(parts_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    END;
    """,
    # 2: subscription rate limits an agent recorded (Codex), JSON
    """
    ALTER TABLE sessions ADD COLUMN rate_limits TEXT;
    """,
    # 3: parts are added to the full-text index in bulk after each write (one
    # INSERT … SELECT is ~5x cheaper than a trigger per row); deletions keep a trigger
    """
    DROP TRIGGER IF EXISTS parts_ai;
    """,
    # 4: the ctime of each source, so a permission change is noticed
    """
    ALTER TABLE sources ADD COLUMN ctime_ns INTEGER NOT NULL DEFAULT 0;
    """,
    # 5: usage summed per session, model and 15 minutes (built lazily, dropped
    # when a sync touches the session), and resolved price tables
    """
    CREATE TABLE usage_rollup (
        session_key TEXT NOT NULL REFERENCES sessions(key) ON DELETE CASCADE,
        model TEXT,
        bucket TEXT,
        recorded INTEGER NOT NULL,
        calls INTEGER NOT NULL,
        input_tokens INTEGER NOT NULL,
        cache_read_tokens INTEGER NOT NULL,
        cache_write_5m_tokens INTEGER NOT NULL,
        cache_write_1h_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        reasoning_tokens INTEGER NOT NULL,
        web_search_requests INTEGER NOT NULL,
        cost_usd REAL,
        first_at TEXT,
        last_at TEXT,
        min_prompt INTEGER NOT NULL,
        max_prompt INTEGER NOT NULL
    );
    CREATE INDEX usage_rollup_session ON usage_rollup(session_key);
    CREATE TABLE usage_rollup_state (
        session_key TEXT PRIMARY KEY REFERENCES sessions(key) ON DELETE CASCADE
    );
    CREATE TRIGGER messages_ad_rollup AFTER DELETE ON messages BEGIN
        DELETE FROM usage_rollup_state WHERE session_key = old.session_key;
    END;
    CREATE TABLE price_cache (
        fingerprint TEXT NOT NULL,
        model TEXT NOT NULL,
        day TEXT NOT NULL,
        service_tier TEXT NOT NULL,
        price TEXT,
        PRIMARY KEY (model, day, service_tier)
    );
    """,
    # 6: FTS5 keeps up to 16 MB of new terms in memory before writing a segment (the
    # default, 1 MB, makes many small segments that are merged again and again: a
    # 300 MB log was indexed in 40% more time)
    """
    INSERT INTO parts_fts (parts_fts, rank) VALUES ('hashsize', 16777216);
    """,
    # 7: the service tier of each call, and roll-ups per tier (a cache: dropped and
    # rebuilt by the next usage report)
    """
    ALTER TABLE usage ADD COLUMN service_tier TEXT;
    DROP TABLE usage_rollup;
    DROP TABLE usage_rollup_state;
    CREATE TABLE usage_rollup (
        session_key TEXT NOT NULL REFERENCES sessions(key) ON DELETE CASCADE,
        model TEXT,
        service_tier TEXT,
        bucket TEXT,
        recorded INTEGER NOT NULL,
        calls INTEGER NOT NULL,
        input_tokens INTEGER NOT NULL,
        cache_read_tokens INTEGER NOT NULL,
        cache_write_5m_tokens INTEGER NOT NULL,
        cache_write_1h_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        reasoning_tokens INTEGER NOT NULL,
        web_search_requests INTEGER NOT NULL,
        cost_usd REAL,
        first_at TEXT,
        last_at TEXT,
        min_prompt INTEGER NOT NULL,
        max_prompt INTEGER NOT NULL
    );
    CREATE INDEX usage_rollup_session ON usage_rollup(session_key);
    CREATE TABLE usage_rollup_state (
        session_key TEXT PRIMARY KEY REFERENCES sessions(key) ON DELETE CASCADE
    );
    """,
    # 8: the index says it is agentlog's (an index made before this has the id 0)
    f"""
    PRAGMA application_id = {APPLICATION_ID};
    """,
    # 9: logs are evidence: a source gone (deleted, its folder unreadable) keeps its
    # sessions, marked with the time it was found gone, until `agentlog prune`; the
    # prompts of a session whose transcript is gone, from the prompt history
    """
    ALTER TABLE sources ADD COLUMN archived_at TEXT;
    ALTER TABLE sessions ADD COLUMN prompt_only INTEGER NOT NULL DEFAULT 0;
    """,
    # 10: recorded costs summed in whole nano-dollars, so a roll-up's sum is the
    # per-call sum (a cache: emptied, rebuilt by the next usage report)
    """
    DELETE FROM usage_rollup;
    DELETE FROM usage_rollup_state;
    ALTER TABLE usage_rollup RENAME COLUMN cost_usd TO recorded_nano_usd;
    """,
    # codex: roll-ups keep calls priced at an inferred model (flagged model_inferred)
    # apart, so a report can say which calls used a fallback (a cache: rebuilt)
    """
    DELETE FROM usage_rollup;
    DELETE FROM usage_rollup_state;
    ALTER TABLE usage_rollup ADD COLUMN model_inferred INTEGER NOT NULL DEFAULT 0;
    """,
    # fts: one copy of each part: ``parts.text`` only for plain text parts (a tool call's
    # input and output, reasoning, are in ``data`` alone); ``parts_fts`` indexes the
    # search text rewritten for unspaced scripts and emoji (agentlog.index.fts), only
    # of the parts a search may find (``parts.searchable``: 1 in column text, 2 in
    # column reasoning), its external content the view ``parts_search`` (SQL function
    # agentlog_index_text); a message hidden or replayed takes its parts out
    """
    DROP TRIGGER IF EXISTS parts_ad;
    DROP TRIGGER IF EXISTS parts_au_search;
    DROP TRIGGER IF EXISTS messages_au_search;
    DROP TABLE IF EXISTS parts_fts;
    DROP VIEW IF EXISTS parts_search;
    ALTER TABLE parts ADD COLUMN searchable INTEGER NOT NULL DEFAULT 0;
    UPDATE parts SET searchable = CASE WHEN type = 'reasoning' THEN 2 ELSE 1 END
        WHERE message_rowid IN (SELECT rowid FROM messages WHERE hidden = 0 AND replayed = 0);
    CREATE VIEW parts_search AS SELECT rowid,
        CASE searchable WHEN 1 THEN agentlog_index_text(text, data) END AS text,
        CASE searchable WHEN 2 THEN agentlog_index_text(text, data) END AS reasoning
        FROM parts WHERE searchable != 0;
    CREATE VIRTUAL TABLE parts_fts USING fts5(
        text, reasoning, content='parts_search', content_rowid='rowid',
        tokenize='unicode61 remove_diacritics 2'
    );
    INSERT INTO parts_fts (parts_fts, rank) VALUES ('hashsize', 16777216);
    INSERT INTO parts_fts (parts_fts) VALUES ('rebuild');
    UPDATE parts SET text = '' WHERE data IS NOT NULL AND text != '';
    CREATE TRIGGER parts_ad AFTER DELETE ON parts WHEN old.searchable != 0 BEGIN
        INSERT INTO parts_fts (parts_fts, rowid, text, reasoning) VALUES ('delete', old.rowid,
            CASE old.searchable WHEN 1 THEN agentlog_index_text(old.text, old.data) END,
            CASE old.searchable WHEN 2 THEN agentlog_index_text(old.text, old.data) END);
    END;
    CREATE TRIGGER parts_au_search AFTER UPDATE OF searchable ON parts
    WHEN old.searchable != new.searchable BEGIN
        INSERT INTO parts_fts (parts_fts, rowid, text, reasoning) SELECT 'delete', old.rowid,
            CASE old.searchable WHEN 1 THEN agentlog_index_text(old.text, old.data) END,
            CASE old.searchable WHEN 2 THEN agentlog_index_text(old.text, old.data) END
            WHERE old.searchable != 0;
        INSERT INTO parts_fts (rowid, text, reasoning) SELECT new.rowid,
            CASE new.searchable WHEN 1 THEN agentlog_index_text(new.text, new.data) END,
            CASE new.searchable WHEN 2 THEN agentlog_index_text(new.text, new.data) END
            WHERE new.searchable != 0;
    END;
    CREATE TRIGGER messages_au_search AFTER UPDATE OF hidden, replayed ON messages
    WHEN (old.hidden OR old.replayed) != (new.hidden OR new.replayed) BEGIN
        UPDATE parts SET searchable = CASE
            WHEN new.hidden OR new.replayed OR agentlog_index_text(text, data) = '' THEN 0
            WHEN type = 'reasoning' THEN 2 ELSE 1 END
        WHERE message_rowid = new.rowid;
    END;
    """,
    # summaries a model wrote (`agentlog summarize`, `standup`): of a session (its
    # key) or a digest (`standup`), keyed by the prompt sent (its SHA-256: the
    # session's content as sent) and the model; no foreign key, so a summary
    # outlives a re-read of its session and is found again when the content is the same
    """
    CREATE TABLE IF NOT EXISTS summaries (
        subject TEXT NOT NULL,
        prompt_sha256 TEXT NOT NULL,
        model TEXT NOT NULL,
        text TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (subject, prompt_sha256, model)
    );
    """,
    # live status: the evidence's time, when the status began, whether it is
    # inferred and why, the pending calls' tools (agentlog.live.status); a session
    # stored before keeps its recorded status until its source changes (a live one does)
    """
    ALTER TABLE sessions ADD COLUMN status_at TEXT;
    ALTER TABLE sessions ADD COLUMN status_since TEXT;
    ALTER TABLE sessions ADD COLUMN status_inferred INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE sessions ADD COLUMN status_reason TEXT;
    ALTER TABLE sessions ADD COLUMN status_pending TEXT NOT NULL DEFAULT '[]';
    """,
    # firstrun: a sync batch inserts the full-text rows of its small sources at once
    # before it commits (agentlog.index.deferred); the full-text triggers leave a part
    # whose row still waits alone (SQL function agentlog_fts_pending): the same
    # triggers otherwise
    """
    DROP TRIGGER IF EXISTS parts_ad;
    DROP TRIGGER IF EXISTS parts_au_search;
    CREATE TRIGGER parts_ad AFTER DELETE ON parts
    WHEN old.searchable != 0 AND NOT agentlog_fts_pending(old.rowid) BEGIN
        INSERT INTO parts_fts (parts_fts, rowid, text, reasoning) VALUES ('delete', old.rowid,
            CASE old.searchable WHEN 1 THEN agentlog_index_text(old.text, old.data) END,
            CASE old.searchable WHEN 2 THEN agentlog_index_text(old.text, old.data) END);
    END;
    CREATE TRIGGER parts_au_search AFTER UPDATE OF searchable ON parts
    WHEN old.searchable != new.searchable AND NOT agentlog_fts_pending(old.rowid) BEGIN
        INSERT INTO parts_fts (parts_fts, rowid, text, reasoning) SELECT 'delete', old.rowid,
            CASE old.searchable WHEN 1 THEN agentlog_index_text(old.text, old.data) END,
            CASE old.searchable WHEN 2 THEN agentlog_index_text(old.text, old.data) END
            WHERE old.searchable != 0;
        INSERT INTO parts_fts (rowid, text, reasoning) SELECT new.rowid,
            CASE new.searchable WHEN 1 THEN agentlog_index_text(new.text, new.data) END,
            CASE new.searchable WHEN 2 THEN agentlog_index_text(new.text, new.data) END
            WHERE new.searchable != 0;
    END;
    """,
    # sync: the no-change check of every known source reads this index alone, not the
    # rows (their headers and parser state: 2.2 KB a source at 1M messages, 40 ms for
    # 3,095 sources; agentlog.index.sync._known), and the project folders a sync looks
    # in for Aider's and Crush's files come from an index of cwd, not a scan of sessions;
    # sync_memo keeps what the last full sync's discovery saw (agentlog.index.memo)
    """
    CREATE INDEX IF NOT EXISTS sources_known ON sources(agent, path, id, size, mtime_ns, ctime_ns, inode, parser_version,
        sidecar_sig, sidecars, archived_at, duplicate_of);
    CREATE INDEX IF NOT EXISTS sessions_cwd ON sessions(cwd);
    CREATE TABLE IF NOT EXISTS sync_memo (id INTEGER PRIMARY KEY CHECK (id = 1), data BLOB NOT NULL);
    """,
    # list: each session's header totals (Session.usage: its calls not replayed),
    # kept with its roll-ups (fresh while its usage_rollup_state row is there): a
    # listing reads a page's totals, and sorts by tokens, without summing usage rows;
    # and the few duplicate sources indexed, so a listing leaves out their sessions
    # without reading every source's row (2.7 KB each at 1M messages)
    """
    CREATE INDEX IF NOT EXISTS sources_duplicates ON sources(id) WHERE duplicate_of IS NOT NULL;
    DROP TABLE IF EXISTS session_usage;
    CREATE TABLE session_usage (
        session_key TEXT PRIMARY KEY REFERENCES sessions(key) ON DELETE CASCADE,
        input_tokens INTEGER NOT NULL,
        cache_read_tokens INTEGER NOT NULL,
        cache_write_5m_tokens INTEGER NOT NULL,
        cache_write_1h_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        reasoning_tokens INTEGER NOT NULL,
        web_search_requests INTEGER NOT NULL,
        cost_usd REAL,
        cost_source TEXT,
        total_tokens INTEGER NOT NULL
    ) WITHOUT ROWID;
    INSERT INTO session_usage SELECT m.session_key,
        COALESCE(SUM(u.input_tokens), 0), COALESCE(SUM(u.cache_read_tokens), 0),
        COALESCE(SUM(u.cache_write_5m_tokens), 0), COALESCE(SUM(u.cache_write_1h_tokens), 0),
        COALESCE(SUM(u.output_tokens), 0), COALESCE(SUM(u.reasoning_tokens), 0),
        COALESCE(SUM(u.web_search_requests), 0), SUM(u.cost_usd),
        CASE WHEN COUNT(DISTINCT u.cost_source) = 1 THEN MIN(u.cost_source) END,
        COALESCE(SUM(u.input_tokens + u.cache_read_tokens + u.cache_write_5m_tokens
            + u.cache_write_1h_tokens + u.output_tokens), 0)
        FROM messages m JOIN usage u ON u.message_rowid = m.rowid
        WHERE m.replayed = 0 AND m.session_key IN (SELECT session_key FROM usage_rollup_state)
        GROUP BY m.session_key;
    """,
    # timesort: messages in time order, so a search sorted newest or oldest first walks
    # them from one end and stops once its page is full (agentlog.index.timeline)
    """
    CREATE INDEX IF NOT EXISTS messages_timestamp ON messages(timestamp);
    """,
    # grouped: each session's runs of part rowids (agentlog.index.runs), so a search
    # grouped by session knows a thousand hits' sessions from a few rows, not by looking
    # up each hit's part and message; made here from the parts (a session whose parts
    # have consecutive rowids, as a store writes them, is one run; others are cut at
    # each gap), then kept by the store as it writes parts
    """
    CREATE TABLE IF NOT EXISTS part_runs (
        first_rowid INTEGER PRIMARY KEY,
        last_rowid INTEGER NOT NULL,
        session_key TEXT NOT NULL
    );
    DELETE FROM part_runs;
    CREATE TEMP TABLE part_spans AS
        SELECT m.session_key AS session_key, min(p.rowid) AS first_rowid, max(p.rowid) AS last_rowid, count(*) AS parts
        FROM messages m JOIN parts p ON p.message_rowid = m.rowid GROUP BY m.session_key;
    INSERT INTO part_runs SELECT first_rowid, last_rowid, session_key FROM part_spans
        WHERE last_rowid - first_rowid + 1 = parts;
    INSERT INTO part_runs SELECT min(rowid_), max(rowid_), session_key FROM (
        SELECT p.rowid AS rowid_, m.session_key AS session_key,
               p.rowid - row_number() OVER (PARTITION BY m.session_key ORDER BY p.rowid) AS run
        FROM part_spans s JOIN messages m ON m.session_key = s.session_key JOIN parts p ON p.message_rowid = m.rowid
        WHERE s.last_rowid - s.first_rowid + 1 != s.parts)
        GROUP BY session_key, run;
    DROP TABLE part_spans;
    """,
    # the folders given with --root to a sync: their sources are kept fresh by every
    # later sync (remembered as sources), so they stay agents' folders that nothing
    # of agentlog's may write into (an export's -o: Home.guard) after the flag is gone
    """
    CREATE TABLE IF NOT EXISTS roots (path TEXT PRIMARY KEY);
    """,
    # fts: the search text is what a terminal shows (agentlog.index.fts.visible_text: no
    # escape sequences, so coloured output's ``\x1b[31mred`` is the word ``red``); the
    # full-text index is rebuilt from its content, read by the new rule
    """
    INSERT INTO parts_fts (parts_fts) VALUES ('rebuild');
    """,
    # bounded: token counts from 10^12 on are out of range (agentlog.rules.MAX_TOKENS, was
    # 2**53): the sources holding one are read again whole by the next sync; an archived
    # one (its file gone, never read again) has those counts set to 0 here, and its
    # sessions' roll-ups rebuilt by the next read
    """
    CREATE TEMP TABLE unbounded AS
        SELECT m.rowid AS message_rowid, m.session_key AS session_key, m.source_id AS source_id
        FROM messages m JOIN usage u ON u.message_rowid = m.rowid
        WHERE max(u.input_tokens, u.cache_read_tokens, u.cache_write_5m_tokens, u.cache_write_1h_tokens,
                  u.output_tokens, u.reasoning_tokens) >= 1000000000000;
    UPDATE sources SET size = -1, parser_state = NULL WHERE id IN (SELECT source_id FROM unbounded);
    UPDATE usage SET
        input_tokens = CASE WHEN input_tokens >= 1000000000000 THEN 0 ELSE input_tokens END,
        cache_read_tokens = CASE WHEN cache_read_tokens >= 1000000000000 THEN 0 ELSE cache_read_tokens END,
        cache_write_5m_tokens = CASE WHEN cache_write_5m_tokens >= 1000000000000 THEN 0 ELSE cache_write_5m_tokens END,
        cache_write_1h_tokens = CASE WHEN cache_write_1h_tokens >= 1000000000000 THEN 0 ELSE cache_write_1h_tokens END,
        output_tokens = CASE WHEN output_tokens >= 1000000000000 THEN 0 ELSE output_tokens END,
        reasoning_tokens = CASE WHEN reasoning_tokens >= 1000000000000 THEN 0 ELSE reasoning_tokens END
        WHERE message_rowid IN (SELECT message_rowid FROM unbounded
            WHERE source_id IN (SELECT id FROM sources WHERE archived_at IS NOT NULL));
    DELETE FROM usage_rollup_state WHERE session_key IN (SELECT session_key FROM unbounded);
    DROP TABLE unbounded;
    """,
]
"""Numbered migrations: ``MIGRATIONS[n]`` takes ``PRAGMA user_version`` from n to n+1."""
