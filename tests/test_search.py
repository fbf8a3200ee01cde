"""Search as people type it (issue 16): exact hit sets for the everyday queries in
every surface (index, CLI, viewer, Python API), operators only when written,
filters any case, paging, grouping, sorting, bounded cost, cross-site refusal."""

from __future__ import annotations

import json
import re
import socket
import time
from html import unescape

import anyio
import pytest
from click.testing import CliRunner

import agentlog
from agentlog.cli import main
from agentlog.errors import UsageError
from agentlog.index import search as search_module
from agentlog.index.fts import MAX_QUERY_CHARS, MAX_TERMS, translate
from agentlog.index.search import Budget, SearchStopped, search
from agentlog.web.app import create_app
from search_home import write_home, write_prompts

CLAUDE_WORD = {"m_claude_md", "m_claude_word", "m_dot_claude", "m_model", "m_claude_beta"}
#: Every query issue 16 lists as failing, and the prompts it finds.  The index
#: keeps words (letters and digits), so punctuation narrows a query only by the
#: words around it: ``~/.claude`` finds every word "claude".
EVERYDAY = {
    "CLAUDE.md": {"m_claude_md"},
    "src/app.py": {"m_app"},
    "node.js": {"m_node"},
    "claude-sonnet-4-5": {"m_model"},
    "don't": {"m_dont"},
    "--force": {"m_force"},
    "git push -f": {"m_push_f"},
    "user@example.com": {"m_email"},
    "~/.claude": CLAUDE_WORD,
    "$HOME": {"m_home"},
    "#123": {"m_issue"},
    "C++": {"m_cpp"},
    "50%": {"m_percent"},
    "TODO:": {"m_todo"},
    "https://github.com/kenn-io/agentsview/issues/7": {"m_url"},
    "github.com/kenn-io/agentsview": {"m_url"},
    "http://github.com": set(),
    '"CLAUDE.md': {"m_claude_md"},
}
#: Operators, only when written explicitly.
OPERATORS = {
    "node.js OR user@example.com": {"m_node", "m_email"},
    "git NOT force": {"m_push_f"},
    '"git push"': {"m_force", "m_push_f"},
    "agents*": {"m_url"},
    "NEAR(git origin, 3)": {"m_force"},
    "git or force": set(),  # lower case: the word "or", which no prompt holds
    "OR": set(),
    "git NOT": set(),  # NOT without a right operand is the word "not"
}
#: Unspaced scripts, emoji and code (issue 16 part 2): substrings inside a sentence,
#: one character, emoji, identifiers as wholes and by their parts.
UNSPACED = {
    "最新": {"m_ja", "m_zh"},
    "アップデート": {"m_ja"},
    "最新のアップデート": {"m_ja"},
    "ドキュメント": {"m_ja"},
    "ト": {"m_ja"},
    "参照して": {"m_ja"},
    "搜索功能": {"m_zh"},
    "版本": {"m_zh"},
    "検索": set(),  # the Japanese form of 搜索: not in any prompt
    "검색": {"m_ko"},
    "입력": {"m_ko"},
    "🚀": {"m_emoji"},
    "✅": {"m_emoji"},
    "🚀 pass": {"m_emoji"},
    "🔥": set(),
    "rocket": {"m_rocket_word"},
    "agentlog.index.fts.translate": {"m_ident"},
    "fts.translate": {"m_ident"},
    "translate": {"m_ident"},
    "web/pages.py": {"m_ident"},
    "pages": {"m_ident"},
    "multi-word-name": {"m_ident"},
    "word-name": {"m_ident"},
    "name-word": set(),
}


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return write_home(tmp_path_factory.mktemp("search") / "home")


def ids(page) -> set[str]:
    return {h.message_id for h in page.hits}


def cli(index, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--index", str(index), "search", "--no-sync", *args])
    return result.exit_code, result.stdout, result.stderr


def web_ids(client, query: str, **args: str) -> set[str]:
    response = client.get("/search", query_string={"q": query, **args})
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    links = re.findall(r'class="hit-title" href="/message\?([^"]+)"', html)
    return {re.search(r"id=([^&]+)", unescape(link)).group(1) for link in links}


@pytest.mark.parametrize("query", [*EVERYDAY, *OPERATORS, *UNSPACED])
def test_each_query_finds_exactly_its_prompts_in_every_surface(query, conn, index, home, monkeypatch):
    expected = {**EVERYDAY, **OPERATORS, **UNSPACED}[query]
    page = search(conn, query)
    assert (ids(page), page.total, page.note) == (expected, len(expected), None)
    code, out, err = cli(index, "--json", "--", query)
    assert code == 0, err
    assert {h["message_id"] for h in json.loads(out)["hits"]} == expected
    code, out, err = cli(index, "--json", *query.split())  # unquoted, as typed at a shell
    assert code == 0, err
    assert {h["message_id"] for h in json.loads(out)["hits"]} == expected
    assert web_ids(create_app(index).test_client(), query) == expected
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    assert ids(agentlog.search(query, index=index, sync=False)) == expected


def test_the_translation_is_literal_unless_operators_are_written():
    assert translate("CLAUDE.md").match == '"CLAUDE.md"'
    assert translate("git push -f").match == '"git" "push" "-f"'
    assert translate('say "hello world" now').match == '"say" "hello world" "now"'
    assert translate("a OR b NOT c").match == '"a" OR "b" NOT "c"'
    assert translate("OR a").match == '"OR" "a"'
    assert translate("decorat*").match == '"decorat" *'
    assert translate("NEAR(foo bar, 3)").match == 'NEAR("foo" "bar", 3)'
    assert translate('foo"bar').match == '"foo""bar"'
    assert translate("src/app.py").terms == ("src", "app", "py")
    assert translate('decorat* "src app"* NOT x').terms == ("decorat*", "src", "app*", "x")
    assert translate("text:foo", raw=True).match == "text:foo"


def test_punctuation_alone_finds_nothing_and_says_so(conn, index):
    page = search(conn, "???")
    assert (page.hits, page.total, page.note) == ([], 0, "the query holds no letters or digits to search for")
    code, _, err = cli(index, "+++")
    assert code == 0 and "no letters or digits" in err and "no matches" in err


def test_raw_mode_reads_fts5_syntax_and_falls_back_to_a_phrase(conn, index):
    assert ids(search(conn, "claude NOT md", raw=True)) == CLAUDE_WORD - {"m_claude_md"}
    assert ids(search(conn, "text:node", raw=True)) == {"m_node"}
    page = search(conn, "compiled:node", raw=True)  # no such column: the words as a phrase
    assert (ids(page), page.match) == (set(), '"compiled node"')
    assert page.note == (
        "FTS5 cannot parse 'compiled:node' (no such column: compiled); "
        "searched for the phrase 'compiled node' instead"
    )
    page = search(conn, 'node "js', raw=True)
    assert (ids(page), page.match) == ({"m_node"}, '"node js"')
    code, out, _ = cli(index, "user:example", "--fts", "--json")
    assert code == 0 and json.loads(out)["note"].startswith("FTS5 cannot parse 'user:example'")


def test_tool_role_and_agent_filters_ignore_case(conn, index):
    assert ids(search(conn, "deploy")) == {"m_claude_beta", "m_bash"}
    for tool in ("BASH", "Bash", "bash"):
        assert ids(search(conn, "deploy", tool=tool)) == {"m_bash"}
    assert ids(search(conn, "deploy", role="USER")) == {"m_claude_beta"}
    for args in (["--tool", "BASH"], ["--role", "Assistant"], ["--agent", "CLAUDE"]):
        code, out, err = cli(index, "release", "--json", *args)
        assert code == 0, err
        assert [h["message_id"] for h in json.loads(out)["hits"]] == ["m_bash"]
    assert web_ids(create_app(index).test_client(), "deploy", tool="BASH") == {"m_bash"}


def test_offset_limit_total_and_sort(conn, index):
    oldest = ["m_claude_md", "m_claude_word", "m_dot_claude", "m_model", "m_claude_beta"]
    page = search(conn, "claude", sort="oldest", limit=2, offset=2)
    assert ([h.message_id for h in page.hits], page.total, page.next_offset) == (oldest[2:4], 5, 4)
    last = search(conn, "claude", sort="oldest", limit=2, offset=4)
    assert ([h.message_id for h in last.hits], last.next_offset) == (oldest[4:], None)
    past = search(conn, "claude", offset=10)
    assert (past.hits, past.total, past.next_offset) == ([], 5, None)
    newest = search(conn, "claude", sort="newest")
    assert [h.message_id for h in newest.hits] == oldest[::-1]
    ranked = search(conn, "claude")
    assert [h.rank for h in ranked.hits] == sorted(h.rank for h in ranked.hits)
    code, out, err = cli(index, "claude", "--sort", "oldest", "--limit", "2", "--offset", "2", "--json")
    data = json.loads(out)
    assert (code, [h["message_id"] for h in data["hits"]], data["total"], data["next_offset"]) == (
        0,
        oldest[2:4],
        5,
        4,
    )
    code, _, err = cli(index, "claude", "--limit", "2")
    assert "1–2 of 5 hits · next page: --offset 2" in " ".join(err.split())
    code, _, err = cli(index, "claude", "--limit", "2", "--offset", "4")
    assert "5–5 of 5 hits · open one" in " ".join(err.split())
    code, _, err = cli(index, "release")
    assert " ".join(err.split()).startswith("1 hit · open one")  # not "1–1 of 1 hits"
    client = create_app(index).test_client()
    count_line = re.compile(r'<p class="count-line">(.*?) for <q>')
    one = client.get("/search", query_string={"q": "release"}).get_data(as_text=True)
    many = client.get("/search", query_string={"q": "claude", "sessions": "1"}).get_data(as_text=True)
    assert count_line.search(one).group(1) == "1–1 of 1 hit"  # the viewer says it as the CLI does
    assert count_line.search(many).group(1).endswith(" sessions")
    with pytest.raises(UsageError, match="unknown sort"):
        search(conn, "claude", sort="best")  # type: ignore[arg-type]


def test_sessions_groups_hits_with_the_best_snippet_each(conn, index):
    page = search(conn, "claude", by_session=True, sort="oldest")
    assert [(h.session_key, h.session_hits) for h in page.hits] == [
        ("claude_code:alpha", 4),
        ("claude_code:beta", 1),
    ]
    assert page.total == 2
    # sorted by time, a session shows its first hit in that order (index.timeline)
    first = search(conn, "claude", agent="claude_code", project="/work/alpha", sort="oldest").hits[0]
    assert page.hits[0].message_id == first.message_id and page.hits[0].snippet == first.snippet
    best = search(conn, "claude", agent="claude_code", project="/work/alpha").hits[0]
    ranked = search(conn, "claude", by_session=True).hits
    alpha = next(h for h in ranked if h.session_key == "claude_code:alpha")
    assert alpha.message_id == best.message_id and alpha.snippet == best.snippet  # by rank: its best
    assert [h.session_key for h in search(conn, "claude", by_session=True, sort="newest").hits] == [
        "claude_code:beta",
        "claude_code:alpha",
    ]
    code, out, _ = cli(index, "claude", "--sessions", "--json")
    assert code == 0 and json.loads(out)["total"] == 2
    html = (
        create_app(index).test_client().get("/search?q=claude&sessions=1&sort=oldest").get_data(as_text=True)
    )
    assert re.findall(r'class="session-hits">(\d+ hits?) in', html) == ["4 hits", "1 hit"]
    assert "1–2 of 2 sessions" in html


def test_the_viewer_pages_and_highlights(index, monkeypatch):
    monkeypatch.setattr("agentlog.web.pages.HITS", 2)
    client = create_app(index).test_client()
    html = client.get("/search?q=claude&sort=oldest&page=2").get_data(as_text=True)
    assert re.findall(r"id=(m_[a-z_]+)", html) == ["m_dot_claude", "m_model"]
    assert "3–4 of 5 hits" in html and "page 2 of 3" in html
    assert "<mark>claude</mark>" in html
    target = client.get("/message?key=claude_code:alpha&id=m_app&hl=src+app+py")
    assert target.headers["Location"].startswith("/session?key=claude_code:alpha&page=1&hl=src+app+py#m")


@pytest.mark.parametrize(
    ("query", "marked"),
    [
        ("NOT", "do [not] push or merge and wait"),
        ("OR", "do not push [or] merge and wait"),
        ("AND", "…not push or merge [and] wait"),
    ],
)
def test_a_lone_operator_word_is_marked_where_it_matched_in_every_surface(
    query, marked, tmp_path, monkeypatch
):
    """Tester finding 6: ``NOT``, ``OR``, ``AND`` alone are the words they are, found
    and marked alike in the snippet (index, CLI, viewer, Python API, MCP) and in the
    viewer's link to the opened message (``hl``, what app.js marks there)."""
    from mcp.client import Client

    from agentlog.adapters import all_adapters
    from agentlog.index import db
    from agentlog.index.sync import sync
    from agentlog.mcp.server import Index, build_server

    def marks(start: str, end: str) -> str:
        return marked.replace("[", start).replace("]", end)

    home = write_prompts(tmp_path / "home", [("m_ops", "do not push or merge and wait")])
    index = tmp_path / "index.sqlite"
    with db.connect(index) as conn:
        sync(conn, all_adapters(), {"HOME": str(home)}, home)
        assert [(h.message_id, h.snippet) for h in search(conn, query).hits] == [
            ("m_ops", marks("\x02", "\x03"))
        ]
    code, out, err = cli(index, "--json", "--", query)
    assert (code, [h["snippet"] for h in json.loads(out)["hits"]]) == (0, [marks("«", "»")]), err
    html = create_app(index).test_client().get("/search", query_string={"q": query}).get_data(as_text=True)
    assert re.findall(r'class="snippet">(.*?)</p>', html) == [marks("<mark>", "</mark>")]
    assert re.findall(r'class="hit-title" href="/message\?[^"]*hl=(\w+)', html) == [query.lower()]
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    assert [h.snippet for h in agentlog.search(query, index=index, sync=False).hits] == [
        marks("\x02", "\x03")
    ]
    server = build_server(Index(lambda: db.connect(index, readonly=True), None))

    async def mcp_snippets() -> list[str]:
        async with Client(server) as client:
            found = await client.call_tool("search_sessions", {"query": query})
            return [r["snippet"] for r in found.structured_content["results"]]

    assert anyio.run(mcp_snippets) == [marks("«", "»")]


def test_highlighted_terms_are_the_words_matched_not_the_syntax():
    assert translate("git NOT").terms == ("git", "not")
    assert translate("a OR OR b").terms == ("a", "or", "b")  # the first OR is a word, the second the operator
    assert translate("a OR b NOT c").terms == ("a", "b", "c")
    assert translate("NEAR(foo bar, 3)").terms == ("foo", "bar")  # the distance is no word
    assert translate("claude NOT md", raw=True).terms == ("claude", "md")
    assert translate("NEAR(a b, 4) AND (text:c OR d*) NOTE", raw=True).terms == ("a", "b", "c", "d*", "note")
    assert translate("{text tool}: ^foo see https://x.com", raw=True).terms == (
        "foo",
        "see",
        "https",
        "x",
        "com",
    )


def test_a_query_over_the_caps_is_refused_with_a_clear_message(conn, index):
    with pytest.raises(UsageError, match=f"has {MAX_TERMS + 1} words \\(at most {MAX_TERMS}\\)"):
        search(conn, " ".join(["word"] * (MAX_TERMS + 1)))
    with pytest.raises(UsageError, match="search query too long"):
        search(conn, "x" * (MAX_QUERY_CHARS + 1))
    hostile = " ".join(f"{chr(97 + i % 26)}*" for i in range(300))
    start = time.monotonic()
    code, _, err = cli(index, hostile)
    assert code == 2 and "has 300 words (at most 32)" in err
    assert time.monotonic() - start < 1
    response = create_app(index).test_client().get("/search", query_string={"q": hostile})
    html = response.get_data(as_text=True)
    assert response.status_code == 400 and "has 300 words" in html
    assert '<input type="search" name="q" value="' in html  # the search box stays


def test_the_word_cap_counts_the_words_matched_not_the_operators_between_them():
    """``MAX_TERMS`` words joined by ``OR`` (and ``NEAR``'s distance, raw column names)
    are within the cap: only the words matched count, repeats included."""
    joined = " OR ".join(f"w{i}" for i in range(MAX_TERMS))
    assert len(translate(joined).terms) == MAX_TERMS
    assert translate(joined).match.count(" OR ") == MAX_TERMS - 1
    assert len(translate(joined, raw=True).terms) == MAX_TERMS
    columns = " OR ".join(f"text:w{i}" for i in range(MAX_TERMS))
    assert len(translate(columns, raw=True).terms) == MAX_TERMS
    near = f"NEAR({' '.join(f'w{i}' for i in range(MAX_TERMS))}, 10)"
    assert len(translate(near).terms) == MAX_TERMS
    with pytest.raises(UsageError, match=f"has {MAX_TERMS + 1} words"):
        translate(joined + " OR extra")
    with pytest.raises(UsageError, match=f"has {MAX_TERMS + 1} words"):
        translate(joined + " OR extra", raw=True)
    with pytest.raises(UsageError, match=f"has {MAX_TERMS + 1} words"):
        translate(" ".join(["same"] * (MAX_TERMS + 1)))  # each repeat is a walk
    assert translate("OR " * MAX_TERMS).terms == ("or",)  # operators with no operands are words


def test_a_search_past_its_time_limit_or_cancelled_stops(conn, monkeypatch):
    monkeypatch.setattr(search_module, "PROGRESS_STEPS", 1)
    with pytest.raises(SearchStopped, match="took longer than 0 s"):
        search(conn, "claude", budget=Budget(seconds=0))
    with pytest.raises(SearchStopped, match="was cancelled"):
        search(conn, "claude", budget=Budget(cancelled=lambda: True))
    assert ids(search(conn, "claude", budget=Budget(cancelled=lambda: False))) == CLAUDE_WORD


def test_a_search_past_its_time_limit_exits_1_with_its_hint(index, monkeypatch):
    """A stopped search is no bad argument (exit 2, HTTP 400): it exits 1 with one
    line that says why and what to do; the viewer answers 503 with the search box."""
    from functools import partial

    monkeypatch.setattr(search_module, "PROGRESS_STEPS", 1)
    monkeypatch.setattr(search_module, "Budget", partial(Budget, seconds=0))
    code, out, err = cli(index, "claude")
    assert (code, out) == (1, "")
    assert err.strip().splitlines() == [
        "agentlog: the search took longer than 0 s; search for rarer or fewer words, or narrow it with --agent/--since"
    ]
    from agentlog.web import pages

    monkeypatch.setattr(pages, "Budget", partial(Budget, seconds=0))
    response = create_app(index).test_client().get("/search", query_string={"q": "claude"})
    html = response.get_data(as_text=True)
    assert response.status_code == 503 and "the search took longer than 0 s" in html  # not a bad request
    assert '<input type="search" name="q" value="claude"' in html


def test_a_closed_client_connection_is_seen(index, monkeypatch):
    from agentlog.web.app import client_gone

    monkeypatch.setattr("agentlog.web.app.CHECK_EVERY_S", 0)
    app = create_app(index)
    ours, theirs = socket.socketpair()
    with app.test_request_context("/search?q=x", environ_overrides={"werkzeug.socket": ours}):
        gone = client_gone()
        assert gone() is False
        theirs.close()
        assert gone() is True
    ours.close()
    with app.test_request_context("/search?q=x"):
        assert client_gone()() is False  # a server that does not expose its socket


ROUTES = (
    "/",
    "/session?key=claude_code:alpha",
    "/message?key=claude_code:alpha&id=m_app",
    "/raw?key=claude_code:alpha&id=m_app",
    "/search?q=claude",
    "/usage",
    "/static/style.css",
    "/nope",
)


@pytest.mark.parametrize("route", ROUTES)
def test_cross_site_requests_are_refused_on_every_route(index, route):
    client = create_app(index).test_client()
    allowed = client.get(route).status_code
    assert allowed != 403
    for headers in (
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},  # another port on localhost is the same site
        {"Origin": "http://evil.example"},
        {"Origin": "http://localhost:9999"},
        {"Origin": "null"},
    ):
        response = client.get(route, headers=headers)
        assert response.status_code == 403, headers
    for headers in (
        {"Sec-Fetch-Site": "same-origin"},
        {"Sec-Fetch-Site": "none"},
        {"Origin": "http://localhost"},
    ):
        assert client.get(route, headers=headers).status_code == allowed, headers


@pytest.mark.parametrize(
    ("paging", "message"),
    [
        ({"limit": 0}, "limit 0 is not in 1…1000"),
        ({"limit": -1}, "limit -1 is not in 1…1000"),  # SQLite's LIMIT -1: every hit
        ({"limit": 10**30}, f"limit {10**30} is not in 1…1000"),  # was OverflowError
        ({"offset": -1}, "offset -1 is not in 0…9223372036854775787 (with limit 20)"),
        ({"offset": 2**63}, f"offset {2**63} is not in 0…9223372036854775787 (with limit 20)"),
        ({"offset": 2**63 - 6}, "offset 9223372036854775802 is not in 0…9223372036854775787 (with limit 20)"),
        (
            {"offset": 2**63 - 6, "limit": 10},
            "offset 9223372036854775802 is not in 0…9223372036854775797 (with limit 10)",
        ),
    ],
)
def test_the_python_api_bounds_a_page_as_the_command_line_does(paging, message, index, home, monkeypatch):
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    with pytest.raises(UsageError) as raised:
        agentlog.search("CLAUDE.md", index=index, sync=False, **paging)
    assert str(raised.value) == message
    assert ids(agentlog.search("CLAUDE.md", index=index, sync=False, limit=1000, offset=0))


LITERAL_PROMPTS = [
    ("m_c", "C and C and C: c"),  # the words c only, short: the best bm25
    ("m_csharp", "C# or C, said the C# guide"),
    ("m_cpp", "we could rewrite the whole parser in modern c++ templates one day, said the lead"),
    ("m_cpp_upper", "the C++ build of the parser is slow today, and the C build is not"),
]


def test_a_page_by_rank_shows_first_the_hits_holding_the_query_as_typed(tmp_path, monkeypatch):
    """Tester finding 4 of session 9: ``C++`` found the hit holding "C++" only 5th."""
    from agentlog.adapters import all_adapters
    from agentlog.index import db
    from agentlog.index.sync import sync

    home = write_prompts(tmp_path / "home", LITERAL_PROMPTS)
    index = tmp_path / "index.sqlite"
    with db.connect(index) as conn:
        sync(conn, all_adapters(), {"HOME": str(home)}, home)
        by_score = [h.message_id for h in search(conn, "c").hits]
        ranked = search(conn, "C++")
        newest = [h.message_id for h in search(conn, "C++", sort="newest").hits]
        pages = [[h.message_id for h in search(conn, "C++", limit=2, offset=n).hits] for n in (0, 2)]
    # the index reads C++ as the word c: bm25 alone puts the short hits of "C" first
    assert by_score == ["m_c", "m_csharp", "m_cpp_upper", "m_cpp"]
    # those holding "C++" (any case) first, each group in rank order; the ranks kept
    assert [h.message_id for h in ranked.hits] == ["m_cpp_upper", "m_cpp", "m_c", "m_csharp"]
    assert [h.rank for h in ranked.hits[2:]] == sorted(h.rank for h in ranked.hits[2:])
    assert newest == ["m_cpp_upper", "m_cpp", "m_csharp", "m_c"]  # a time sort stays by time
    # within each page: pages are the blocks' hits, never overlapping
    assert pages == [["m_c", "m_csharp"], ["m_cpp_upper", "m_cpp"]]
    expected = ["m_cpp_upper", "m_cpp", "m_c", "m_csharp"]
    code, out, err = cli(index, "--json", "--", "C++")
    assert (code, [h["message_id"] for h in json.loads(out)["hits"]]) == (0, expected), err
    assert web_order(create_app(index).test_client(), "C++") == expected
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    assert [h.message_id for h in agentlog.search("C++", index=index, sync=False).hits] == expected


def test_a_page_of_sessions_by_rank_shows_first_those_whose_hit_holds_the_query_as_typed(tmp_path, monkeypatch):
    """Grouped (the MCP tool's page): the sessions reordered by their shown hit, which
    stays each session's best-scored one."""
    from mcp.client import Client

    from agentlog.adapters import all_adapters
    from agentlog.index import db
    from agentlog.index.sync import sync
    from agentlog.mcp.server import Index, build_server
    from search_home import _line

    home = write_prompts(tmp_path / "home", LITERAL_PROMPTS[:2])  # session delta: "C" only
    rows = [_line("echo", uuid, n, {"role": "user", "content": text}, "user") for n, (uuid, text) in enumerate(LITERAL_PROMPTS[2:])]
    (home / ".claude/projects/-work/echo.jsonl").write_text("\n".join(rows) + "\n")
    index = tmp_path / "index.sqlite"
    with db.connect(index) as conn:
        sync(conn, all_adapters(), {"HOME": str(home)}, home)
        plain = [(h.session_key, h.message_id) for h in search(conn, "c", by_session=True).hits]
        grouped = [(h.session_key, h.message_id) for h in search(conn, "C++", by_session=True).hits]
    assert plain == [("claude_code:delta", "m_c"), ("claude_code:echo", "m_cpp_upper")]
    assert grouped == [("claude_code:echo", "m_cpp_upper"), ("claude_code:delta", "m_c")]
    server = build_server(Index(lambda: db.connect(index, readonly=True), None))

    async def mcp_sessions() -> list[str]:
        async with Client(server) as client:
            found = await client.call_tool("search_sessions", {"query": "C++", "include_active": True})
            return [r["session_id"] for r in found.structured_content["results"]]

    assert anyio.run(mcp_sessions) == ["claude_code:echo", "claude_code:delta"]


def web_order(client, query: str) -> list[str]:
    html = client.get("/search", query_string={"q": query}).get_data(as_text=True)
    links = re.findall(r'class="hit-title" href="/message\?([^"]+)"', html)
    return [re.search(r"id=([^&]+)", unescape(link)).group(1) for link in links]
