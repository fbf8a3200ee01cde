"""The full-text index (issue 16 parts 2 and 5, issue 17 part 4): unspaced scripts
and emoji as the index reads them, snippets cut from the stored parts, each part
stored once, and an index of the schema before migrated."""

from __future__ import annotations

import json
import sqlite3

import pytest

from agentlog.adapters import all_adapters
from agentlog.index import fts
from agentlog.index.db import connect
from agentlog.index.fts import (
    EMOJI_BASE,
    index_text,
    query_phrases,
    stored_text,
    translate,
    visible_text,
    words,
)
from agentlog.index.schema import MIGRATIONS
from agentlog.index.search import MARK_END, MARK_START, search
from agentlog.index.snippets import snippet
from agentlog.index.sync import sync
from search_home import write_home, write_prompts
from test_index import index_sessions, memory_sessions

VISIBLE_TEXT = max(n for n, m in enumerate(MIGRATIONS) if "('rebuild')" in m)
"""The schema before the migration that indexed the text again by the visible-text rule."""
ROCKET = chr(EMOJI_BASE + 0xF680)
CHECK = chr(EMOJI_BASE + 0x2705)


def test_unspaced_runs_are_indexed_as_pairs_and_emoji_as_words():
    assert index_text("最新のアップデート。") == " 最新 新の のア アッ ップ プデ デー ート ト 。"
    assert index_text("ship 🚀 done✅") == f"ship  {ROCKET}  done {CHECK} "
    assert index_text("검색어") == " 검색 색어 어 "
    text = "plain café and src/app.py"  # spaced scripts are indexed as written, the same object
    assert index_text(text) is text


def test_a_query_reads_unspaced_runs_as_pairs_and_one_character_as_a_prefix():
    assert query_phrases("アップデート") == [(" アッ ップ プデ デー ート ", False)]
    assert query_phrases("v2の") == [("v2 の", True)]
    assert query_phrases("ト") == [(" ト", True)]
    assert translate("最新 fix").match == '" 最新 " "fix"'
    assert translate("新x").match == '(" 新" * "x")'
    assert translate("🚀").match == f'" {ROCKET} "'
    assert translate("最新のアップデート 🚀 app*").terms == ("最新のアップデート", "🚀", "app*")
    assert translate("最新 OR 🚀", raw=True).match == f" 最新  OR  {ROCKET} "
    assert words("これは最新の🚀 fix") == ["これは最新の", "🚀", "fix"]


def test_snippets_mark_substrings_words_and_prefixes_in_the_text_itself():
    ja = "これは最新のアップデートです。詳細はドキュメントを参照してください。"
    assert (
        snippet(ja, ("アップデート",), "[", "]")
        == "これは最新の[アップデート]です。詳細はドキュメントを参照してください。"
    )
    assert snippet("ship it 🚀 now", ("🚀",), "[", "]") == "ship it [🚀] now"
    assert snippet("decorators decorate Decor", ("decor*",), "[", "]") == "[decorators] [decorate] [Decor]"
    assert snippet("a café here", ("cafe",), "[", "]") == "a [café] here"  # remove_diacritics
    long = (
        " ".join(f"w{i}" for i in range(40)) + " the CLAUDE.md file " + " ".join(f"x{i}" for i in range(40))
    )
    assert (
        snippet(long, ("claude", "md"), "[", "]")
        == "…w37 w38 w39 the [CLAUDE.md] file x0 x1 x2 x3 x4 x5 x6 x7 x8 x9…"
    )
    assert snippet("nothing matches here", ("zebra",), "[", "]") == "nothing matches here"
    assert snippet("python最新版 pythonic", ("python", "最新"), "[", "]") == "[python][最新]版 pythonic"
    # the place where most terms occur wins over the first occurrence
    text = "alpha " + "filler " * 30 + "alpha beta gamma"
    assert (
        snippet(text, ("alpha", "beta", "gamma"), "[", "]")
        == "…filler filler filler filler [alpha] [beta] [gamma]"
    )


def test_a_snippet_looks_for_its_terms_in_a_bounded_part_of_a_long_text(monkeypatch):
    """A snippet reads at most ``SCAN_CHARS`` of a text: its first, else those around
    a term's first occurrence (a 64 MiB tool output cost ~5-10 s a hit, past the
    search's time limit); the marks and words are those of the whole-text scan."""
    from agentlog.index import snippets

    filler = "lorem ipsum " * 50
    deep = filler + "the Deepword is here " + filler
    cases = [
        ("Needle here " + filler, ("needle",)),
        (deep, ("deepword",)),
        (deep, ("deep*",)),
        ("un café " + filler, ("cafe",)),  # folded, in the first region (past it: not found, as documented)
        (deep, ("zebra",)),  # none: the first words
        ("we redeploy " + filler + "then deploy it " + filler, ("deploy",)),  # not the one inside a word
        ("REDEPLOY! " + filler + "Redeployed, deployable " + filler, ("deploy*",)),  # a word's start only
    ]
    whole = [snippet(text, terms, "[", "]") for text, terms in cases]  # every text within SCAN_CHARS
    monkeypatch.setattr(snippets, "SCAN_CHARS", 64)
    assert [snippet(text, terms, "[", "]") for text, terms in cases] == whole
    assert whole[1] == "…ipsum lorem ipsum the [Deepword] is here lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem…"
    assert "[café]" in whole[3] and "[" not in whole[4]
    assert "then [deploy] it" in whole[5] and "[deployable]" in whole[6]


def test_a_snippet_never_cuts_a_redaction_marker_the_text_holds():
    """A ``[REDACTED:kind]`` in the log itself, glued to a long word, used to be cut at a
    snippet's start (``…<api_key>]``) or end (``[REDACT…``): it is now shown whole."""
    start = "x" * 300 + "[REDACTED:api_key]" + "y" * 10 + " the end"
    assert snippet(start, ("api_key",), "<", ">") == "…[REDACTED:<api_key>]yyyyyyyyyy the end"
    assert snippet(start, ("redacted",), "<", ">") == "…[<REDACTED>:api_key]yyyyyyyyyy the end"
    end = "hit" + "q" * 190 + "[REDACTED:github_token]rest of it"
    assert snippet(end, ("hit*",), "<", ">") == "<hit" + "q" * 190 + ">[REDACTED:github_token]…"
    plain = "hit" + "q" * 190 + "[REDACTEDgithub_token]rest of it"  # no marker: cut as before
    assert snippet(plain, ("hit*",), "<", ">") == "<hit" + "q" * 190 + ">[REDACT…"


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return write_home(tmp_path_factory.mktemp("fts") / "home")


def test_search_snippets_come_from_the_stored_parts(home, tmp_path):
    conn = connect(tmp_path / "index.sqlite")
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    (ja,) = search(conn, "アップデート").hits
    assert (
        ja.snippet
        == f"これは最新の{MARK_START}アップデート{MARK_END}です。詳細はドキュメントを参照してください"
    )
    (call,) = search(conn, "release").hits  # a tool call: name, input and output, from parts.data
    assert call.snippet == f'bash\n{{"command":"ls /srv/deploy"}}\n{MARK_START}release{MARK_END}.tar'
    grouped = search(conn, "最新", by_session=True).hits
    assert [(h.session_key, h.session_hits, h.snippet) for h in grouped] == [
        (
            "claude_code:gamma",
            2,
            f"我们发布了{MARK_START}最新{MARK_END}版本的搜索功能",
        )  # the shorter, best ranked
    ]


def test_each_part_is_stored_once(home, tmp_path):
    """``parts.text`` holds only plain text parts; every other part is in ``data``
    alone and its search text is computed from it, for the index and snippets alike."""
    conn = connect(tmp_path / "index.sqlite")
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    rows = conn.execute("SELECT type, text, data FROM parts ORDER BY rowid").fetchall()
    assert {(t, d is None) for t, text, d in rows if text} == {("text", True)}
    (call,) = [(text, d) for t, text, d in rows if t == "tool_call"]
    assert stored_text(*call) == 'bash\n{"command":"ls /srv/deploy"}\nrelease.tar'
    view = conn.execute("SELECT text FROM parts_search ORDER BY rowid").fetchall()
    assert view == [(index_text(stored_text(text, d)),) for _, text, d in rows]
    conn.execute("INSERT INTO parts_fts (parts_fts, rank) VALUES ('integrity-check', 1)")


def downgrade_search_index(conn: sqlite3.Connection) -> None:
    """The search tables as the schema before ``parts_search`` had them: the search
    text in ``parts.text`` for every part, ``parts_fts`` over ``parts`` itself, no
    ``parts.searchable``; ``user_version`` is the caller's to set."""
    conn.create_function("old_text", 2, stored_text)
    conn.executescript(
        """DROP TRIGGER parts_ad; DROP TRIGGER parts_au_search; DROP TRIGGER messages_au_search;
        DROP TABLE parts_fts; DROP VIEW parts_search; ALTER TABLE parts DROP COLUMN searchable;
        UPDATE parts SET text = old_text(text, data);
        CREATE VIRTUAL TABLE parts_fts USING fts5(
            text, content='parts', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2');
        INSERT INTO parts_fts (parts_fts) VALUES ('rebuild');
        CREATE TRIGGER parts_ad AFTER DELETE ON parts BEGIN
            INSERT INTO parts_fts(parts_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
        END;"""
    )


LIVE_COLUMNS = ("status_at", "status_since", "status_inferred", "status_reason", "status_pending")
"""The columns the live status migration adds to ``sessions``."""


def downgrade_live_status(conn: sqlite3.Connection) -> None:
    """``sessions`` as before the live status migration."""
    for column in LIVE_COLUMNS:
        conn.execute(f"ALTER TABLE sessions DROP COLUMN {column}")


def without_live(sessions: list[bytes]) -> list[dict]:
    """Sessions (JSON) without the live status facts (``status`` and its evidence too)."""
    out = []
    for data in sessions:
        session = json.loads(data)
        for field in (*LIVE_COLUMNS, "status", "status_evidence"):
            session.pop(field, None)
        out.append(session)
    return out


def test_an_index_of_the_schema_before_is_migrated(home, tmp_path):
    before = next(n for n, m in enumerate(MIGRATIONS) if "parts_search" in m)
    path = tmp_path / "index.sqlite"
    conn = connect(path)
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    want = index_sessions(conn)
    downgrade_search_index(conn)
    downgrade_live_status(conn)  # the live status migration comes after this one
    conn.execute(f"PRAGMA user_version = {before}")
    assert conn.execute("SELECT COUNT(*) FROM parts_fts WHERE parts_fts MATCH '最新'").fetchone() == (0,)
    conn.close()
    conn = connect(path)
    assert conn.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)
    assert conn.execute("SELECT COUNT(*) FROM parts WHERE data IS NOT NULL AND text != ''").fetchone() == (0,)
    assert {h.message_id for h in search(conn, "最新").hits} == {"m_ja", "m_zh"}
    assert {h.message_id for h in search(conn, "release").hits} == {"m_bash"}
    conn.execute("INSERT INTO parts_fts (parts_fts, rank) VALUES ('integrity-check', 1)")
    # the live status facts of a session stored before their migration come with its next parse
    assert without_live(index_sessions(conn)) == without_live(want) == without_live(memory_sessions(home))
    sync(conn, all_adapters(), {"HOME": str(home)}, home, full=True)  # every part deleted and written again
    conn.execute("INSERT INTO parts_fts (parts_fts, rank) VALUES ('integrity-check', 1)")
    assert index_sessions(conn) == want == memory_sessions(home)


COLOURED = "build \x1b[1;31mFAILED\x1b[0m in \x1b]8;;https://ci.example/7\x1b\\job7\x1b]8;;\x1b\\ at step\x1b7x\x1b8"
"""A coloured line of tool output: SGR colours, an OSC 8 hyperlink, ``ESC 7``/``ESC 8``."""


def test_the_index_and_snippets_read_the_text_a_terminal_shows():
    assert visible_text(COLOURED) == "build FAILED in job7 at stepx"
    assert index_text(COLOURED) == "build FAILED in job7 at stepx"
    assert visible_text("lone \x1b and [31m") == "lone \x1b and [31m"  # no sequence: kept
    assert visible_text("\x1b]0;title, never ended: the words after it") == "0;title, never ended: the words after it"
    assert visible_text(text := "no escape") is text
    assert snippet(COLOURED, ("failed",), "[", "]") == "build [FAILED] in job7 at stepx"


def test_a_texts_own_mark_characters_never_pass_for_marks(tmp_path):
    """A log holding the snippet markers (``\x02``, ``\x03``) cannot make a highlight
    of its own: they are put as the symbols ``clean`` shows, and only the match is
    marked, in the index's snippets, the CLI's JSON and the viewer alike."""
    assert snippet("a \x02fake\x03 and real", ("real",), "\x02", "\x03") == "a ␂fake␃ and \x02real\x03"
    home = write_prompts(tmp_path / "home", [("m_spoof", "see \x02fake highlight\x03 then the real word")])
    conn = connect(tmp_path / "index.sqlite")
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    (hit,) = search(conn, "real").hits
    assert hit.snippet == f"…␂fake highlight␃ then the {MARK_START}real{MARK_END} word"


def test_coloured_output_indexed_before_escapes_were_left_out_is_found_after_the_migration(tmp_path, monkeypatch):
    """An index built when ``\x1b[1;31mFAILED`` was the word ``31mFAILED`` is rebuilt
    by its migration: the word is found, marked, and the index stays consistent as
    its parts are deleted and written again."""
    home = write_prompts(tmp_path / "home", [("m_coloured", COLOURED), ("m_plain", "nothing failed here")])
    path = tmp_path / "index.sqlite"
    with monkeypatch.context() as before:
        before.setattr(fts, "visible_text", lambda text: text)  # the rule before the migration
        conn = connect(path)
        sync(conn, all_adapters(), {"HOME": str(home)}, home)
        assert {h.message_id for h in search(conn, "failed").hits} == {"m_plain"}
        assert {h.message_id for h in search(conn, "31mFAILED").hits} == {"m_coloured"}
        conn.execute(f"PRAGMA user_version = {VISIBLE_TEXT}")
        conn.close()
    conn = connect(path)
    assert conn.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)
    hits = {h.message_id: h.snippet for h in search(conn, "failed").hits}
    assert hits == {
        "m_coloured": f"build {MARK_START}FAILED{MARK_END} in job7 at stepx",
        "m_plain": f"nothing {MARK_START}failed{MARK_END} here",
    }
    assert search(conn, "31mFAILED").hits == []
    assert {h.message_id for h in search(conn, "job7").hits} == {"m_coloured"}
    conn.execute("INSERT INTO parts_fts (parts_fts, rank) VALUES ('integrity-check', 1)")
    sync(conn, all_adapters(), {"HOME": str(home)}, home, full=True)  # every part deleted and written again
    conn.execute("INSERT INTO parts_fts (parts_fts, rank) VALUES ('integrity-check', 1)")
    assert {h.message_id for h in search(conn, "failed").hits} == {"m_coloured", "m_plain"}


def test_a_tool_result_is_stored_once_and_read_back_whole(tmp_path):
    """Claude's ``toolUseResult`` repeats the output (``stdout``): the index keeps the
    output once and a reference in its place, and gives back the same sessions."""
    import sys
    from pathlib import Path

    from agentlog.index.store import COPY_KEY, stored_part

    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    from corpus import write_claude

    home = tmp_path / "home"
    write_claude(home / ".claude/projects/-bench/s.jsonl", 0.3)
    conn = connect(tmp_path / "index.sqlite")
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    calls = [(d, stored_part(d)) for (d,) in conn.execute("SELECT data FROM parts WHERE type = 'tool_call'")]
    assert len(calls) > 50
    for data, call in calls:
        output = call.result.output
        assert call.result.structured == {"stdout": output, "stderr": "", "interrupted": False}
        assert data.count(output.encode()) == 1 and COPY_KEY.encode() in data
    assert index_sessions(conn) == memory_sessions(home)


def test_lean_replaces_each_long_copy_and_keeps_what_it_does_not_change():
    """Every string of at least MIN_COPY characters the output holds, at any depth,
    becomes a reference; keys keep their order; a value with no copy (or any value,
    when the output is shorter than MIN_COPY) is returned itself, not a copy."""
    from agentlog.index.store import COPY_KEY, MIN_COPY, _lean, _restore

    long_a, long_b = "a" * MIN_COPY, "b" * (MIN_COPY + 1)
    output = f"{long_a}-{long_b}"
    value = {
        "n": 1,
        "short": "a",
        "items": [None, 2.5, long_b, [long_a, True], "c" * MIN_COPY],
        "copy": long_a,
        "after": {"x": long_b, COPY_KEY: 0},
        "ref": {COPY_KEY: [0, 1]},
    }
    lean = _lean(value, output)
    assert lean == {
        "n": 1,
        "short": "a",
        "items": [
            None,
            2.5,
            {COPY_KEY: [MIN_COPY + 1, 2 * MIN_COPY + 2]},
            [{COPY_KEY: [0, MIN_COPY]}, True],
            "c" * MIN_COPY,
        ],
        "copy": {COPY_KEY: [0, MIN_COPY]},
        "after": {"x": long_b, COPY_KEY: 0},
        "ref": {COPY_KEY: [0, 1]},
    }
    assert list(lean) == list(value) and lean["after"] is value["after"] and lean["ref"] is value["ref"]
    del lean["ref"], value["ref"]  # a reference already (read back as the text it names)
    assert _restore(lean, output) == value
    unchanged = {"k": ["c" * MIN_COPY, {"d": 3}], "e": "a"}
    assert _lean(unchanged, output) is unchanged
    assert _lean(value, long_a[:-1]) is value


def test_a_message_hidden_or_replayed_leaves_the_index_and_comes_back(home, tmp_path):
    conn = connect(tmp_path / "index.sqlite")
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    check = "INSERT INTO parts_fts (parts_fts, rank) VALUES ('integrity-check', 1)"
    assert search(conn, "アップデート").total == 1
    for column in ("replayed", "hidden"):
        conn.execute(f"UPDATE messages SET {column} = 1 WHERE id = 'm_ja'")
        conn.execute(check)
        assert search(conn, "アップデート").total == 0
        assert conn.execute(
            "SELECT searchable FROM parts p JOIN messages m ON m.rowid = p.message_rowid WHERE m.id = 'm_ja'"
        ).fetchall() == [(0,)]
        conn.execute(f"UPDATE messages SET {column} = 0 WHERE id = 'm_ja'")
        conn.execute(check)
        assert [h.message_id for h in search(conn, "アップデート").hits] == ["m_ja"]


def test_a_common_word_is_ranked_among_its_newest_hits_and_counted_whole(home, tmp_path, monkeypatch):
    from agentlog.index import search as search_module

    conn = connect(tmp_path / "index.sqlite")
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    whole = search(conn, "claude")
    assert (whole.total, whole.note) == (5, None)
    monkeypatch.setattr(search_module, "RANK_WINDOW", 2)
    page = search(conn, "claude", limit=2)
    newest_two = {"m_claude_beta", "m_model"}  # the last two written of the five
    assert ({h.message_id for h in page.hits}, page.total) == (newest_two, 5)
    assert page.note == "ranked within each 2 newest hits of 5"
    grouped = search(conn, "claude", limit=1, by_session=True)
    assert grouped.note == "ranked within each 2 newest hits of 5"
    assert (grouped.total, grouped.total_exact) == (2, False)  # the sessions of the two newest hits
    filtered = search(conn, "claude", limit=2, agent="claude_code")  # counted through the filter
    assert (filtered.total, filtered.note) == (5, "ranked within each 2 newest hits of 5")
    newest = search(conn, "claude", limit=2, sort="newest")  # sorted by time: every hit
    assert (newest.total, newest.note) == (5, None)
    deep = search(conn, "claude", limit=2, offset=3)  # a page past the first block: the same total and note
    assert (deep.total, deep.note) == (5, "ranked within each 2 newest hits of 5")


def test_an_upgrade_that_indexes_the_text_again_says_so_first(tmp_path):
    """The command that upgrades an index by a migration rebuilding ``parts_fts``
    says so on stderr before it starts (it takes a minute on a large index); a new
    index and an index already current say nothing."""
    from click.testing import CliRunner

    from agentlog.cli import main
    from agentlog.index.db import upgrade_notice

    home = write_prompts(tmp_path / "home", [("m_1", "build FAILED in job7")])
    path = tmp_path / "index.sqlite"
    env = {"HOME": str(home), "AGENTLOG_INDEX": str(path), "AGENTLOG_NO_DAEMON": "1"}

    def stderr_of(*args: str) -> str:
        result = CliRunner().invoke(main, list(args), env=env)
        assert result.exit_code == 0, result.output
        return result.stderr

    assert "upgrading" not in stderr_of("search", "failed")  # a new index
    assert "upgrading" not in stderr_of("search", "failed")  # current
    conn = connect(path)
    conn.execute(f"PRAGMA user_version = {VISIBLE_TEXT}")
    conn.close()
    notice = (
        f"upgrading the index {path} (schema {VISIBLE_TEXT} to {len(MIGRATIONS)}): its search "
        "text is indexed again, once; on a large index this takes a minute"
    )
    said = " ".join(stderr_of("search", "failed").split())
    assert said == f"{notice} 1 hit · open one with: agentlog show <key>"  # before the command's own
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)
    assert "upgrading" not in stderr_of("search", "failed")
    assert upgrade_notice(str(path), 0) is None  # a new index: its tables are empty
    assert upgrade_notice(str(path), 1) == notice.replace(f"schema {VISIBLE_TEXT} ", "schema 1 ")


def test_the_pieces_a_page_by_rank_looks_for_as_typed_are_those_holding_what_the_index_drops(monkeypatch):
    query = 'C++ cache "a + b" $HOME.x* NEAR(a.b c) OR CLAUDE.md C++ 🚀 最新 plain* don\'t'
    assert translate(query).literals == ("C++", "a + b", "$HOME.x", "CLAUDE.md", "🚀", "don't")
    assert translate("cache plain* OR 最新").literals == ()  # words only: nothing to reorder
    assert translate('"Hello, Alice').literals == ()  # an unbalanced quote and a comma: punctuation around words
    assert translate("fix 'CLAUDE.md'. now, (src/app.py)").literals == ("CLAUDE.md", "(src/app.py)")
    assert translate("C++", raw=True).literals == ()  # raw syntax: nothing read as typed
    text = "Learning C++ and c++, with $home.x\x1b[31m set"
    assert [fts.literal_count(text, lits) for lits in [("c++",), ("C++", "$HOME.x"), ("C#",), ("set",), ()]] == [
        1,
        2,
        0,
        1,
        0,
    ]
    assert fts.literal_count("x\x1b[0m++", ("x++",)) == 1  # the text a terminal shows, as the index reads it
    monkeypatch.setattr(fts, "INDEXED_CHARS", 12)
    assert [fts.literal_count("c++ at first, then c# much later", (lit,)) for lit in ("c++", "c#")] == [1, 0]
