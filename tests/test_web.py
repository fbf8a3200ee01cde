"""Route tests for the web viewer (Flask test client) over the demo corpus and a
hostile transcript.

Expected values come from the raw demo logs (src/agentlog/demo/home), read by
hand: 5 Claude Code main sessions + 1 Codex session; subagents: 1 in the weather
session (subagents/agent-b7e1d2c3.jsonl, "Review rounding change", spawned by
toolu_demo_04) and 2 sidechain roots in 5c0375b4; the weather session has 6
tool_use blocks, one tool_result with is_error true, one compact_boundary
(manual, preTokens 15402).  Days with billed calls (UTC): 2025-06-08,
2025-06-10, 2025-09-03, 2025-09-07, 2026-11-20, 2026-11-21.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from html import unescape
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner

from agentlog.cli import main
from agentlog.cli.serve import access_token
from agentlog.demo import demo_home
from agentlog.errors import UsageError
from agentlog.index import db, queries
from agentlog.loopback import is_loopback
from agentlog.web import content
from agentlog.web.app import CSP, connection, create_app
from agentlog.web.charts import fold_small, stacked_bars
from conftest import FIXTURES
from web_helpers import HOSTILE_ID, build_index, demo_index, hostile_home

WEATHER = "claude_code:de70c1a0-7e57-4b1d-9a6e-5e551011f00d"
ORCHESTRATOR = "claude_code:5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
STARTED_ASC = ["ba79134d", "fed8ce56", "1af7fc5e", "5c0375b4", "de70c1a0", "019ab0d2"]
USAGE_DAYS = ["2025-06-08", "2025-06-10", "2025-09-03", "2025-09-07", "2026-11-20", "2026-11-21"]


@pytest.fixture(scope="module")
def demo_path(tmp_path_factory):
    return demo_index(tmp_path_factory.mktemp("web") / "demo.sqlite")


@pytest.fixture
def client(demo_path):
    return create_app(demo_path).test_client()


@pytest.fixture(scope="module")
def hostile_client(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile")
    path = build_index(base / "index.sqlite", hostile_home(base / "home"))
    return create_app(path).test_client()


class Tags(HTMLParser):
    """Every start tag a browser would build from a page, with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))


def session_links(html: str) -> list[str]:
    """The session keys the sessions table links to, in order."""
    return re.findall(r'<td class="title"><a href="/session\?key=([^"]+)"', html)


def text(response) -> str:
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    return response.get_data(as_text=True)


# --- sessions ------------------------------------------------------------------


def test_sessions_lists_top_level_sessions_newest_first(client):
    keys = session_links(text(client.get("/")))
    assert [k.split(":")[1][:8] for k in keys] == STARTED_ASC[::-1]


def test_sessions_sort_and_children(client):
    keys = session_links(text(client.get("/?sort=started&dir=asc")))
    assert [k.split(":")[1][:8] for k in keys] == STARTED_ASC
    assert len(session_links(text(client.get("/?children=1")))) == 9


def test_sessions_sort_by_cost(client):
    """Highest cost first, as `agentlog usage session --no-rollup` prices each session."""
    from click.testing import CliRunner

    from agentlog.cli import main

    out = CliRunner().invoke(main, ["--demo", "usage", "session", "--no-rollup", "--json"]).stdout
    rows = [r for r in json.loads(out)["rows"] if r["cost_usd"] is not None]
    expected = [r["key"] for r in sorted(rows, key=lambda r: -r["cost_usd"])]
    top_level = session_links(text(client.get("/")))
    keys = session_links(text(client.get("/?sort=cost")))
    assert keys == [k for k in expected if k in top_level]
    assert session_links(text(client.get("/?sort=cost&dir=asc"))) == keys[::-1]


def test_sessions_filters(client):
    assert session_links(text(client.get("/?agent=codex"))) == ["codex:019ab0d2-4c1e-7f00-9d2a-5e551011c0de"]
    weather = session_links(text(client.get("/?project=weather")))
    assert sorted(k.split(":")[0] for k in weather) == ["claude_code", "codex"]
    recent = session_links(text(client.get("/?since=2026-01-01&tz=UTC")))
    assert [k.split(":")[1][:8] for k in recent] == ["019ab0d2", "de70c1a0"]
    old = session_links(text(client.get("/?until=2025-06-10&tz=UTC")))
    assert [k.split(":")[1][:8] for k in old] == ["fed8ce56", "ba79134d"]
    assert session_links(text(client.get("/?subagents=1&sort=started&dir=asc"))) == [ORCHESTRATOR, WEATHER]
    assert session_links(text(client.get("/?q=rounding"))) == [WEATHER]
    # the board's status (agentlog.live.status): the demo's turns ended long ago (done),
    # the weather session's last turn was interrupted
    interrupted = text(client.get("/?status=interrupted"))
    assert session_links(interrupted) == [WEATHER]
    assert "<option selected>interrupted</option>" in interrupted
    assert session_links(text(client.get("/?status=waiting_for_user"))) == []


def test_sessions_grouped_by_project(client):
    html = text(client.get("/?group=project"))
    groups = re.findall(r'<tr class="group"><th colspan="9">([^<]+) <span', html)
    assert groups == ["/Users/USER/dev/ai-music", "/home/demo/src/weather", "/path/to/Demo"]


def test_bad_filter_is_a_400_with_a_message(client):
    response = client.get("/?sort=nope")
    assert response.status_code == 400
    assert "unknown sort" in response.get_data(as_text=True)


def test_page_sessions_pages_and_counts(demo_path):
    conn = db.connect(demo_path, readonly=True)
    where = queries.SessionFilter(include_children=True)
    first, total = queries.page_sessions(conn, where, "started", False, 0, 4)
    second, again = queries.page_sessions(conn, where, "started", False, 4, 4)
    third, _ = queries.page_sessions(conn, where, "started", False, 8, 4)
    assert (total, again, len(first), len(second), len(third)) == (9, 9, 4, 4, 1)
    assert len({s.key for s in first + second + third}) == 9


# --- session -------------------------------------------------------------------


def test_session_page_transcript(client):
    html = text(client.get(f"/session?key={WEATHER}"))
    assert html.count('<details class="tool') == 6
    assert html.count('<details class="tool error"') == 1
    assert "context compacted (manual) · 15,402 tokens before" in html
    assert "claude --resume de70c1a0-7e57-4b1d-9a6e-5e551011f00d" in html
    assert 'data-copy="resume"' in html
    link = '<a href="/session?key=claude_code:agent-b7e1d2c3">'
    assert html.count(link) >= 2  # in the Task card and in the subagent tree
    assert "Review rounding change" in html
    assert '<details class="reasoning">' in html


def test_subagent_page_links_back_and_tree(client):
    html = text(client.get("/session?key=claude_code:agent-b7e1d2c3"))
    assert f'of <a href="/session?key={WEATHER}">' in html
    tree = text(client.get(f"/session?key={ORCHESTRATOR}"))
    assert "Subagent tree (2)" in tree
    assert tree.count('class="depth-1"') == 2


def test_session_short_id_and_unknown(client):
    assert "Review rounding change" in text(client.get("/session?key=de70c1a0"))
    missing = client.get("/session?key=nothing-like-this")
    assert missing.status_code == 404
    assert "no session matches" in missing.get_data(as_text=True)


def test_message_paging_queries(demo_path):
    conn = db.connect(demo_path, readonly=True)
    key = "claude_code:ba79134d-b6e9-4867-af0c-6941038c9e4b"
    everything, total = queries.message_page(conn, key, 0, 10_000)
    pages = [queries.message_page(conn, key, start, 7)[0] for start in range(0, total, 7)]
    assert [m.id for page in pages for m in page] == [m.id for m in everything]
    assert len(pages) == -(-total // 7)
    middle = everything[total // 2]
    assert queries.message_position(conn, key, middle.id) == total // 2
    assert queries.message_position(conn, key, "no-such-message") is None


def test_meta_toggle_shows_more(client):
    html = text(client.get(f"/session?key={WEATHER}"))
    shown = html.count('<li id="m')
    hidden = int(re.search(r"(\d+) meta/injected hidden", html).group(1))
    with_meta = text(client.get(f"/session?key={WEATHER}&meta=1"))
    assert with_meta.count('<li id="m') == shown + hidden


def test_raw_records_are_the_source_lines(client):
    raw_file = (
        demo_home() / ".claude/projects/-home-demo-src-weather/de70c1a0-7e57-4b1d-9a6e-5e551011f00d.jsonl"
    )
    lines = raw_file.read_text().splitlines()
    first_user = next(i for i, line in enumerate(lines) if json.loads(line).get("uuid") == "u1")
    html = text(client.get(f"/raw?key={WEATHER}&id=u1"))
    records = [
        json.loads(unescape(block)) for block in re.findall(r'<pre class="raw">(.*?)</pre>', html, re.S)
    ]
    # u1 is followed directly by a1, the next message
    assert records == [json.loads(lines[first_user])]
    # msg_demo_01 was written as three lines, one per content block (a1, a2, a3)
    html = text(client.get(f"/raw?key={WEATHER}&id=msg_demo_01"))
    uuids = [
        json.loads(unescape(b)).get("uuid") for b in re.findall(r'<pre class="raw">(.*?)</pre>', html, re.S)
    ]
    assert uuids[:3] == ["a1", "a2", "a3"]
    assert f"/raw?key={WEATHER}&amp;id=u1" in text(client.get(f"/session?key={WEATHER}"))
    assert client.get(f"/raw?key={WEATHER}&id=nope").status_code == 404


# --- search --------------------------------------------------------------------


def test_search_hits_link_to_message_anchor(client):
    html = text(client.get("/search?q=daily_mean"))
    links = re.findall(r'class="hit-title" href="(/message\?[^"]+)"', html)
    assert links
    assert "<mark>daily_mean</mark>" in html
    target = client.get(links[0].replace("&amp;", "&"))
    assert target.status_code == 302
    location = target.headers["Location"]
    assert re.match(r"/session\?key=[^&]+&page=1&hl=daily\+mean#m\d+$", location)
    anchor = location.rsplit("#", 1)[1]
    assert f'id="{anchor}"' in text(client.get(location.split("#")[0]))


def test_search_filters_and_bad_query(client):
    html = text(client.get("/search?q=weather&agent=codex"))
    agents = set(re.findall(r'<span class="agent agent-([a-z_]+)">', html.split('<ol class="hits"')[1]))
    assert agents == {"codex"}


# --- usage ---------------------------------------------------------------------


def test_usage_charts(client):
    html = text(client.get("/usage?tz=UTC"))
    assert html.count('<svg class="chart"') == 3
    cost_chart = html.split('<svg class="chart"')[1]
    labels = re.findall(r'text-anchor="end" transform="rotate[^>]+>([^<]+)</text>', cost_chart)
    assert labels == USAGE_DAYS
    legend = re.findall(r'class="legend">([^<]+)<', cost_chart)
    assert legend == ["claude_code", "codex"]
    by_model = text(client.get("/usage?tz=UTC&by=model&period=monthly"))
    recorded = text(client.get("/usage?tz=UTC&mode=recorded"))
    assert (
        "$" not in recorded.split('<section class="totals">')[1].split("</section>")[0]
    )  # the demo records no costs
    assert client.get("/usage?mode=guess").status_code == 400
    months = re.findall(r"rotate[^>]+>([^<]+)</text>", by_model.split('<svg class="chart"')[1])
    assert months == ["2025-06", "2025-09", "2026-11"]


def test_usage_totals_match_the_cli(client, tmp_path):
    runner = CliRunner()
    result = runner.invoke(
        main, ["--demo", "--index", str(tmp_path / "i.sqlite"), "usage", "agent", "--json", "-z", "UTC"]
    )
    assert result.exit_code == 0, result.output
    total = json.loads(result.output)["totals"]
    html = text(client.get("/usage?tz=UTC"))
    assert f"${total['cost_usd']:,.2f}" in html.split('<section class="totals">')[1].split("</section>")[0]


# --- security ------------------------------------------------------------------


def test_hostile_transcript_is_escaped(hostile_client):
    for url in (
        "/",
        f"/session?key=claude_code:{HOSTILE_ID}",
        "/search?q=alert",
        "/usage",
        "/?group=project",
    ):
        response = hostile_client.get(url)
        html = text(response)
        assert response.headers["Content-Security-Policy"] == CSP
        tags = Tags()
        tags.feed(html)
        assert [a for t, a in tags.found if t == "script"] == [{"src": "/static/app.js", "defer": None}]
        assert not [t for t, _ in tags.found if t in ("img", "iframe", "object", "embed")]
        assert not [(t, k) for t, a in tags.found for k in a if k.startswith("on")]
        urls = [v for _, a in tags.found for k, v in a.items() if k in ("href", "src", "action")]
        assert not [u for u in urls if u and u.strip().lower().startswith(("javascript:", "data:"))]
        assert "<script>" not in html
    page = text(hostile_client.get(f"/session?key=claude_code:{HOSTILE_ID}"))
    assert "&lt;script&gt;alert(&#39;prompt&#39;)&lt;/script&gt;" in page
    assert page.count('<script src="/static/app.js" defer></script>') == 1


def test_a_huge_prompt_and_reply_are_sent_cut(tmp_path):
    """A 60-million-character prompt was sent to the browser whole (tester13
    finding 12): a page holds the first 200,000 characters of each text and says
    how many there were; reasoning and tool inputs alike."""
    folder = tmp_path / "home/.claude/projects/-p"
    folder.mkdir(parents=True)
    big = "word " * 100_000  # 500,000 characters
    stamp = "2026-02-01T10:00:00Z"
    records = [
        {"type": "user", "sessionId": "s1", "uuid": "u1", "timestamp": stamp, "message": {"role": "user", "content": big}},
        {"type": "assistant", "sessionId": "s1", "uuid": "a1", "parentUuid": "u1", "timestamp": stamp, "requestId": "r1",
         "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5", "content": [
             {"type": "thinking", "thinking": big, "signature": ""},
             {"type": "text", "text": big},
             {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": big}},
         ], "usage": {"input_tokens": 1, "output_tokens": 1}}},
    ]
    (folder / "s1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    client = create_app(build_index(tmp_path / "index.sqlite", tmp_path / "home")).test_client()
    page = text(client.get("/session?key=claude_code:s1"))
    assert page.count("(cut at 200,000 of 500,000 characters)") == 4  # prompt, reasoning, reply, command
    assert len(page) < 4 * 200_000 * 1.2


def test_csp_and_headers_on_every_page(client):
    for url in ("/", f"/session?key={WEATHER}", "/search?q=x", "/usage", "/static/style.css", "/nope"):
        response = client.get(url)
        assert response.headers["Content-Security-Policy"] == CSP
        assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert "'unsafe-inline'" not in CSP and "script-src 'self'" in CSP


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
def test_only_get_and_head(client, method):
    for url in ("/", f"/session?key={WEATHER}", "/static/app.js"):
        assert client.open(url, method=method).status_code == 405
    assert client.head("/").status_code == 200


def test_static_files_by_name_only(client):
    assert client.get("/static/app.js").headers["Content-Type"].startswith("text/javascript")
    for name in ("../app.py", "..%2Fapp.py", "app.py", "%2Fetc%2Fpasswd"):
        assert client.get(f"/static/{name}").status_code == 404


def test_index_is_read_only(demo_path):
    app = create_app(demo_path)
    with app.app_context(), pytest.raises(sqlite3.OperationalError, match="readonly"):
        connection().execute("DELETE FROM sessions")


def test_loopback_checks_host_header(client):
    assert client.get("/", headers={"Host": "evil.example:8765"}).status_code == 403
    for host in ("127.0.0.1:8765", "localhost", "[::1]:8765", "127.0.0.2:8765", "LOCALHOST"):
        assert client.get("/", headers={"Host": host}).status_code == 200
    # a name resolving to loopback is what DNS rebinding sends: only literals pass
    for host in ("127.0.0.1.nip.io", "localhost.evil.example", "0.0.0.0:8765", "[::2]:8765"):
        assert client.get("/", headers={"Host": host}).status_code == 403


def test_token_required_off_loopback(demo_path):
    client = create_app(demo_path, token="s3cret").test_client()
    assert client.get("/").status_code == 403
    assert client.get("/?token=wrong").status_code == 403
    first = client.get("/?token=s3cret")
    assert first.status_code == 200
    cookie = first.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert client.get("/usage").status_code == 200  # the cookie now carries it


def test_bind_rules():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")
    assert access_token("127.0.0.1", explicit=False) is None
    with pytest.raises(UsageError, match="needs --host"):
        access_token("0.0.0.0", explicit=False)
    token = access_token("0.0.0.0", explicit=True)
    assert token and len(token) >= 24


def test_serve_refuses_non_loopback_from_environment(tmp_path):
    result = CliRunner().invoke(
        main, ["--index", str(tmp_path / "i.sqlite"), "serve"], env={"AGENTLOG_SERVE_HOST": "0.0.0.0"}
    )
    assert result.exit_code == 2
    assert "needs --host 0.0.0.0" in result.output
    assert not (tmp_path / "i.sqlite").exists()


# --- content helpers -----------------------------------------------------------


def test_markdown_keeps_safe_links_and_drops_script():
    html = str(content.markdown("**bold** [ok](https://example.com) [bad](javascript:alert(1)) <b>x</b>"))
    assert "<strong>bold</strong>" in html
    assert 'href="https://example.com"' in html
    assert "javascript" not in html.split("[bad]")[0] and 'href="javascript' not in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html


def test_stacked_bars_scale_and_escape():
    svg = str(stacked_bars("t<", ["d1", "d2"], {"a": [1.0, 3.0], "<b>": [1.0, 0.0]}, str))
    heights = [float(h) for h in re.findall(r'<rect x="[^"]+" y="[^"]+" width="[^"]+" height="([^"]+)"', svg)]
    # axis top is 5 (next round number above 4); plot height 300 - 34 - 64 = 202
    assert heights[:3] == [
        pytest.approx(202 / 5),
        pytest.approx(202 / 5),
        pytest.approx(202 * 3 / 5, abs=0.1),
    ]
    assert "<b>" not in svg and "&lt;b&gt;" in svg and "t&lt;" in svg


# --- background sync -----------------------------------------------------------


def test_syncer_shows_new_sessions_without_restart(tmp_path):
    from agentlog.web.syncer import Syncer

    home = hostile_home(tmp_path / "home")
    path = build_index(tmp_path / "index.sqlite", home)
    client = create_app(path).test_client()
    assert len(session_links(text(client.get("/")))) == 1
    demo_claude = next(iter(sorted((demo_home() / ".claude" / "projects").glob("-home-demo*/*.jsonl"))))
    target = home / ".claude" / "projects" / "-home-demo-src-weather"
    target.mkdir(parents=True)
    (target / demo_claude.name).write_bytes(demo_claude.read_bytes())
    Syncer(path, {"HOME": str(home)}, home, [], interval=60).sync_once()
    assert len(session_links(text(client.get("/")))) == 2
    conn = sqlite3.connect(path)  # and the usage roll-ups are ready for the usage page
    assert conn.execute(
        "SELECT COUNT(*) FROM sessions WHERE key NOT IN (SELECT session_key FROM usage_rollup_state)"
    ).fetchone() == (0,)


HUGE_PAGE = "99999999999999999999999"


@pytest.mark.parametrize(
    ("url", "row"),
    [
        ("/?page={}", '<td class="title"><a href="/session?key='),
        (f"/session?key={WEATHER}&page={{}}", 'class="raw-link"'),
        ("/search?q=weather&page={}", 'class="hit-title"'),
    ],
)
def test_a_page_number_beyond_sqlite_integers_is_an_empty_page(client, url, row):
    """A page number whose first row SQLite cannot bind (``OverflowError``) was a 500;
    it is a page past the last one: no rows."""
    assert row in text(client.get(url.format(1)))
    assert row not in text(client.get(url.format(HUGE_PAGE)))


def test_series_beyond_the_palette_fold_into_one_grey_others_series():
    series = {f"agent{n}": [float(n), 1.0] for n in range(14)}  # 14 agents, 10 colours
    folded = fold_small(series, 10)
    assert list(folded) == [f"agent{n}" for n in range(5, 14)] + ["5 others"]
    assert folded["5 others"] == [0.0 + 1 + 2 + 3 + 4, 5.0]
    svg = str(stacked_bars("t", ["d1", "d2"], series, str))
    fills = re.findall(r'<rect x="\d+" y="[\d.]+" width="12" height="12" fill="(#\w+)"', svg)
    assert len(fills) == 10 and len(set(fills)) == 10  # one legend entry and colour each
    assert fold_small({"a": [1.0]}, 10) == {"a": [1.0]}


def test_codex_exec_runs_are_listed_only_when_asked(tmp_path):
    day = tmp_path / "home/.codex/sessions/2026/03/01"
    day.mkdir(parents=True)
    shutil.copy(FIXTURES / "codex/rollout-synthetic-tools.jsonl", day)  # session_meta source "exec"
    web = create_app(build_index(tmp_path / "index.sqlite", tmp_path / "home")).test_client()
    assert session_links(text(web.get("/"))) == []
    assert session_links(text(web.get("/?exec=1"))) == ["codex:019ca9f0-1c00-7000-8000-0000000000aa"]
